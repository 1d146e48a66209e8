# starroute's everyday commands. Each sets up .venv itself when it is missing or stale (tools/venv.sh: python3 -m venv,
# pip install -c constraints.txt -e ., pip check) and runs inside it -- nothing to activate. `make` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help
.PHONY: help run test bench lint image venv venv-dev

ARGS ?=
PYTEST_ARGS ?= -q
BENCH_ARGS ?=
IMAGE ?= starroute:latest
GRAPH := graphs/monaco-car
# what `. .venv/bin/activate` would do, for one command
IN_VENV := PATH="$(CURDIR)/.venv/bin:$$PATH" VIRTUAL_ENV="$(CURDIR)/.venv"

help:
	@echo "make run     set up .venv, then serve the bundled Monaco map at http://127.0.0.1:5000/ (ARGS='--port 5001'"
	@echo "             passes options to starroute serve; Ctrl-C stops it)"
	@echo "make test    set up .venv with the test tools, then python3 -m pytest -q (PYTEST_ARGS='-q tests/http/test_api.py')"
	@echo "make bench   bench/query.py on Monaco: every algorithm vs networkx (BENCH_ARGS='--pairs 5000' for its options)"
	@echo "make lint    ruff check, ruff format --check, mypy (as .ci/run)"
	@echo "make image   the Docker image $(IMAGE): docker build, or ../shared/tools/build_image.sh without a daemon"
	@echo ".venv is made afresh when constraints.txt or pyproject.toml change; rm -rf .venv forces it. The starroute"
	@echo "command is .venv/bin/starroute (. .venv/bin/activate puts it on your PATH)."

venv:
	@tools/venv.sh

venv-dev:
	@tools/venv.sh dev

# exec: the server replaces the shell, so Ctrl-C reaches it directly and it stops quietly (status 0). First, when
# your PATH does not lead to this clone's `starroute`, where the command is (make finds it in .venv/bin)
run: venv
	@[[ "$$(command -v starroute)" == "$(CURDIR)/.venv/bin/starroute" ]] || echo "make run: the starroute command is" \
	  ".venv/bin/starroute (. .venv/bin/activate puts it on your PATH), e.g. .venv/bin/starroute route $(GRAPH)" \
	  "--from 7.4190,43.7318 --to 7.4290,43.7400"
	@$(IN_VENV) exec starroute serve $(ARGS)

# the README's test command, in the venv
test: venv-dev
	@$(IN_VENV) exec python3 -m pytest $(PYTEST_ARGS)

bench: venv-dev
	@$(IN_VENV) starroute info $(GRAPH) >/dev/null 2>&1 || { echo "bench: building $(GRAPH)"; \
	  $(IN_VENV) starroute preprocess data/monaco.osm.pbf --force --quiet; }
	@$(IN_VENV) exec python3 bench/query.py $(GRAPH) $(BENCH_ARGS)

lint: venv-dev
	@$(IN_VENV) ruff check . && $(IN_VENV) ruff format --check app floor preprocessing starroute && $(IN_VENV) exec mypy

image:
	@if docker info >/dev/null 2>&1; then \
	  echo "docker build -t $(IMAGE) ."; exec docker build -t $(IMAGE) .; \
	elif [[ -f ../shared/tools/build_image.sh ]]; then \
	  echo "no Docker daemon: ../shared/tools/build_image.sh $(IMAGE) (buildah)"; exec bash ../shared/tools/build_image.sh $(IMAGE); \
	else \
	  echo "make image: no Docker daemon and no ../shared/tools/build_image.sh; start Docker and retry" >&2; exit 1; \
	fi

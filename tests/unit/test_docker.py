"""The deployment files: Dockerfile conventions, the compose topology, and `docker compose config` validation.

The validation needs only the docker CLI (its compose plugin, or the standalone `docker-compose`), no daemon; it
is skipped where neither is installed. The static checks always run.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _compose_cli() -> list[str] | None:
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, timeout=60)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_compose_config_validates() -> None:
    cli = _compose_cli()
    if cli is None:
        pytest.skip("no docker compose CLI installed")
    r = subprocess.run([*cli, "config", "-q"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    full = subprocess.run([*cli, "config"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert full.returncode == 0, full.stderr
    resolved = yaml.safe_load(full.stdout)
    assert resolved["services"]["api"]["depends_on"]["preprocess"]["condition"] == "service_completed_successfully"


def test_compose_topology() -> None:
    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = spec["services"]
    assert set(services) == {"preprocess", "api", "lb"}
    pre, api, lb = services["preprocess"], services["api"], services["lb"]
    # one-shot preprocess of the extract in data/ into the graph volume
    assert pre.get("restart") == "no"
    assert pre["command"][0] == "preprocess" and any("/data/" in str(c) for c in pre["command"])
    assert "./data:/data:ro" in pre["volumes"] and "graph:/graph" in pre["volumes"]
    # api waits for it to succeed, mounts the graph read-only, and can be scaled
    assert api["depends_on"]["preprocess"]["condition"] == "service_completed_successfully"
    assert "graph:/graph:ro" in api["volumes"]
    assert api["command"][0] == "serve"
    assert "container_name" not in api, "a fixed container name prevents --scale"
    for port in api.get("ports", []):
        host = str(port).rsplit(":", 1)[0]
        assert "-" in host or host.count(":") == 0, f"{port}: a single fixed host port prevents --scale"
        assert str(port).startswith("127.0.0.1:"), "publish on loopback by default"
    assert "graph" in spec["volumes"]
    # nginx in front of the replicas, the only published port, with the config the load-balancer test runs
    assert lb["depends_on"]["api"]["condition"] == "service_healthy"
    assert "./deploy/nginx/nginx.conf:/etc/nginx/nginx.conf:ro" in lb["volumes"]
    assert [str(p).startswith("127.0.0.1:") for p in lb["ports"]] == [True]
    assert "api:5000" in (ROOT / "deploy" / "nginx" / "nginx.conf").read_text()


def test_dockerfile_conventions() -> None:
    text = (ROOT / "Dockerfile").read_text()
    stages = re.findall(r"^FROM\s+(\S+)", text, flags=re.M)
    assert len(stages) >= 2, "multi-stage build"
    assert all("slim" in s for s in stages), stages
    users = re.findall(r"^USER\s+(\S+)", text, flags=re.M)
    assert users and users[-1] not in ("root", "0"), "runs as a non-root user"
    assert re.search(r"^HEALTHCHECK\b.*?/health", text, flags=re.M | re.S)
    assert re.search(r"^ENTRYPOINT\s+\[\"starroute\"\]", text, flags=re.M)
    ignore = (ROOT / ".dockerignore").read_text().split()
    assert ".git" in ignore and "graphs" in ignore


def test_image_installs_the_tested_versions_and_ships_compiled_kernels() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "-c constraints.txt" in text, "the image installs the versions the tests passed with"
    assert "'.[dask]'" in text, "with the extra `starroute matrix` needs (it said 'Dask is not installed' inside)"
    assert re.search(r"NUMBA_CACHE_DIR=/var/cache/numba\s+\S*starroute compile", text), "kernels compiled at build"
    assert "COPY --from=build --chown=starroute:starroute /var/cache/numba" in text
    period = re.search(r"--start-period=(\d+)s", text)
    assert period and 30 <= int(period.group(1)) <= 120, "the start period fits a cold compile, not minutes more"


def _ignored(path: str, patterns: list[str]) -> bool:
    """Whether .dockerignore's patterns leave `path` (or a folder above it) out of the build context (Go's
    filepath.Match with `**`, as Docker reads it; no `!` exceptions are used in the shipped file)."""

    def regex(pattern: str) -> re.Pattern[str]:
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            elif pattern[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif pattern[i] == "?":
                out, i = out + "[^/]", i + 1
            else:
                out, i = out + re.escape(pattern[i]), i + 1
        return re.compile(out + r"\Z")

    parts = path.split("/")
    prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))]
    return any(regex(p.strip("/")).match(q) for p in patterns for q in prefixes)


def test_the_image_holds_every_package_the_wheel_holds() -> None:
    """The build stage installs what pyproject.toml's package list finds (the wheel's list): every package and its
    data files are in the build context and copied into the build stage (`starroute/` was missing, so `starroute
    matrix` failed inside the image)."""
    import fnmatch
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = project["tool"]["setuptools"]["packages"]["find"]["include"]
    inits = [i.parent.relative_to(ROOT).parts for i in ROOT.glob("*/**/__init__.py")]
    found = [".".join(parts) for parts in inits if not parts[0].startswith(".")]
    packages = sorted(p for p in found if any(fnmatch.fnmatchcase(p, pattern) for pattern in include))
    assert {"app", "preprocessing", "starroute"} <= set(packages)
    patterns = [
        line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip()[:1] not in ("", "#")
    ]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    context = {f for f in tracked if not _ignored(f, patterns)}
    build = re.split(r"^FROM\s", (ROOT / "Dockerfile").read_text(), flags=re.M)[1]  # the first (build) stage
    sources = [s for line in re.findall(r"^COPY\s+(?!--from)(.+)$", build, flags=re.M) for s in line.split()[:-1]]
    copied = {f for f in context if any(s == "." or f == s or f.startswith(s.rstrip("/") + "/") for s in sources)}
    wanted = [p.replace(".", "/") + "/__init__.py" for p in packages]
    wanted += [f for f in tracked if f.startswith("app/static/")]  # package data
    wanted += ["pyproject.toml", "README.md", "constraints.txt"]
    missing = [f for f in wanted if f not in copied]
    assert not missing, f"not in the image's build stage: {missing[:10]}"
    assert not any(f.startswith(("tests/", "data/", "bench/", "harness/", ".git/")) for f in copied)

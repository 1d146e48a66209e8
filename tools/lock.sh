#!/usr/bin/env bash
# Refresh constraints.txt, the tested versions of every runtime and dev dependency: resolve pyproject.toml's ranges
# afresh in an empty virtualenv and freeze the result. Then run the tests in a fresh venv before committing it:
#   tools/lock.sh && .ci/run
# The lock is for CPython 3.11 on Linux x86_64 (this project's machines and its Docker image).
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[dev]'
{
  echo "# Tested versions of starroute's runtime and dev dependencies (CPython $(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])'), Linux)."
  echo "# Install with:  pip install -c constraints.txt -e '.[dev]'      Refresh with:  tools/lock.sh"
  "$work/venv/bin/python" -m pip freeze --exclude-editable --disable-pip-version-check | grep -iv '^starroute'
} > constraints.txt
echo "wrote constraints.txt ($(grep -vc '^#' constraints.txt) pins)"

"""What a message tells someone to install: starroute is not published on PyPI, it is installed from its clone, so an
extra (`dask`, `geo`, ...) is `pip install -c constraints.txt -e '.[EXTRA]'` there, into the Python running now."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the clone, for an editable install (`make`, the README's commands)


def _short(path: Path) -> str:
    """`path` relative to the current directory when it lies below it, else absolute."""
    absolute = Path(os.path.abspath(path))  # not resolved: a venv's python is a link out of it
    return os.path.relpath(absolute) if absolute.is_relative_to(Path.cwd()) else str(absolute)


def install_extra(extra: str) -> str:
    """The command that adds the extra `extra` to the running Python, e.g. `.venv/bin/python -m pip install -c
    constraints.txt -e '.[dask]'` in the clone."""
    if not (ROOT / "pyproject.toml").is_file():  # installed from a built package: no clone beside it
        return f"pip install -c constraints.txt -e '.[{extra}]' in a clone of starroute (it is not on PyPI)"
    python = _short(Path(sys.executable))
    return f"{python} -m pip install -c {_short(ROOT / 'constraints.txt')} -e '{_short(ROOT)}[{extra}]'"

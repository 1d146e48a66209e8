"""Filesystem helpers for outputs that must appear whole or not at all: parent folders made, and taken back."""

from __future__ import annotations

import os
from pathlib import Path


def make_parents(path: Path) -> list[Path]:
    """`mkdir -p path`; returns the folders it created, outermost first, for `remove_created` on failure."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    path.mkdir(parents=True, exist_ok=True)
    return list(reversed(missing))


def remove_created(created: list[Path]) -> None:
    """Remove folders `make_parents` made, innermost first, as long as they are empty."""
    for d in reversed(created):
        try:
            d.rmdir()
        except OSError:
            break


def umask() -> int:
    """The process umask (read without changing it for longer than a call)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask

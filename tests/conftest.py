"""Shared fixtures: where the real extracts live (../shared/data/osm beside the project root)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTRACTS = (ROOT.parent / "shared" / "data" / "osm").resolve()


def extract(name: str) -> Path:
    """Path of a real extract in ../shared/data/osm; skips the test when the shared folder is absent."""
    p = EXTRACTS / name
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p

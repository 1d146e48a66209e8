"""The test session's graph builds of the real extracts, run in the session's process or ahead of time in a
background process (conftest's `graph_cache`): one function both can call, importing nothing of pytest."""

from __future__ import annotations

import os
from pathlib import Path

Key = tuple[str, str, bool, int]  # (extract name under shared/data/osm, profile, ch, landmarks)


def out_dir(base: Path, key: Key) -> Path:
    """Where the graph of `key` is built under the session's graph folder."""
    name, profile, ch, landmarks = key
    return base / f"{name.replace('/', '_')}-{profile}-{int(ch)}-{landmarks}"


def build(extracts: Path, base: Path, key: Key) -> Path:
    """Preprocess one extract as the tests use it. No background layer (the map page's, not routing's; it costs a
    pass). The real extracts run car on its edge-based graph; bike and foot node-based (`--no-turns`), which keeps
    that mode tested and the suite's time: their edge-based graphs take 2.4x as long to build, and the ASCII-map
    tables run them."""
    from preprocessing.pipeline import preprocess

    name, profile, ch, landmarks = key
    return preprocess(
        extracts / name, out_dir(base, key), profile=profile, ch=ch, landmarks=landmarks, force=True, quiet=True,
        basemap=False, turns=None if profile == "car" else False,
    )  # fmt: skip


def lower_priority() -> None:
    """The ahead-of-time builder's initializer: nice 10, so the tests running meanwhile keep their core."""
    os.nice(10)

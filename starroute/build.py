"""`starroute.preprocess`: an OSM extract into a graph directory, as `starroute preprocess` does."""

from __future__ import annotations

import os
from pathlib import Path


def preprocess(
    extract: str | os.PathLike[str],
    output: str | os.PathLike[str],
    profile: str = "car",
    *,
    ch: bool = True,
    landmarks: int = 16,
    turns: bool | None = None,
    force: bool = False,
    quiet: bool = True,
) -> Path:
    """Build the graph of `extract` (.osm.pbf, .osm, ...) for `profile` ("car", "bike", "foot") into `output` and
    return its path: the contraction hierarchy (`ch`), `landmarks` ALT landmarks, turn costs as the profile says
    (`turns`). An existing `output` needs `force`. Bad input raises `starroute.PreprocessError` with the reason."""
    from preprocessing.pipeline import preprocess as run

    return run(extract, output, profile=profile, ch=ch, landmarks=landmarks, force=force, quiet=quiet, turns=turns)

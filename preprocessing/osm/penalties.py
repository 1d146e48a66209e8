"""Where the profile charges a node penalty worth announcing (a gate: 60 s for a car), for the route steps.

Node penalties are added to the durations of the arcs passing the node (`preprocessing.build`); the graph keeps no
trace of where. These arrays keep the places of the large ones (at least `MIN_DS`: gates and other passable
barriers, not traffic signals), so the steps can say "+1 min: gate" instead of a silent minute
(`app.api.osrm.steps`). Declared once in `ARRAYS`; written under the `pen_` prefix.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from floor.format.arrays import ARRAYS as FORMAT_ARRAYS

MIN_DS = 100  # 10 s: gates (60 s) yes, traffic signals (2 s) and stop signs no

ARRAYS: tuple[tuple[str, str, str], ...] = tuple(  # this stage's arrays, as the format declares them
    (a.name, a.dtype, a.meaning) for a in FORMAT_ARRAYS if a.stage == "preprocessing.osm.penalties"
)


def penalty_arrays(nodes: Any) -> dict[str, np.ndarray]:
    """The `pen_*` arrays from the node table read for the graph (`preprocessing.osm.read.NodeTable`)."""
    pen = np.asarray(nodes.penalty_ds)
    big = np.flatnonzero((pen >= MIN_DS) & ~np.asarray(nodes.barrier, dtype=bool))
    lon, lat = np.asarray(nodes.lon)[big], np.asarray(nodes.lat)[big]
    order = np.lexsort((lat, lon))
    return {
        "pen_lon": lon[order].astype(np.int32),
        "pen_lat": lat[order].astype(np.int32),
        "pen_ds": pen[big][order].astype(np.int32),
    }

"""The road graph as guidance reads it: names, refs, modes, roundabouts, the bearings of the roads at a junction.

It sits beside the search graph and reads the same arrays (geometry chains, names, classes, flags); the API reaches
it only through the facade (`Router.roads`), so the search graph can change shape underneath.
"""

from __future__ import annotations

import math

import numpy as np

from preprocessing.artifacts import Graph
from preprocessing.units import COORD_SCALE, FLAG_FERRY, FLAG_ROUNDABOUT


def bearing(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Initial great-circle bearing from point 1 to point 2 in degrees, 0 = north, clockwise, in [0, 360)."""
    p1 = math.radians(lat1)
    p2 = math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return math.degrees(math.atan2(y, x)) % 360.0


class RoadGraph:
    """What step building reads of a loaded graph (app.api.steps.RoadView); thread-safe, caches are plain dicts."""

    def __init__(self, graph: Graph, mode: str = "driving") -> None:
        self.g = graph
        self.mode = mode
        self._names: dict[int, str] = {}
        self._junctions: dict[int, tuple[list[int], list[bool]]] = {}

    def name(self, string_id: int) -> str:
        """A graph string (street name or ref), cached."""
        s = self._names.get(string_id)
        if s is None:
            s = self._names[string_id] = self.g.string(int(string_id)) if string_id else ""
        return s

    def road(self, arc: int) -> tuple[str, str, str, bool]:
        g = self.g
        flags = int(g.arc_flags[arc])
        mode = "ferry" if flags & FLAG_FERRY else self.mode
        return self.name(int(g.arc_name[arc])), self.name(int(g.arc_ref[arc])), mode, bool(flags & FLAG_ROUNDABOUT)

    def head(self, arc: int) -> int:
        return int(self.g.arc_head[arc])

    def _arc_bearing(self, arc: int, at_tail: bool) -> float:
        """Bearing pointing away from the arc's tail (at_tail) or its head, along the arc's geometry."""
        g = self.g
        code = int(g.arc_geom[arc])
        chain, rev = code >> 1, code & 1
        lo, hi = int(g.geom_first[chain]), int(g.geom_first[chain + 1])
        if hi - lo < 2:
            return 0.0
        # points in travel order: lo..hi-1 unless reversed
        first, second, last, before_last = (hi - 1, hi - 2, lo, lo + 1) if rev else (lo, lo + 1, hi - 1, hi - 2)
        a, b = (first, second) if at_tail else (last, before_last)
        lon, lat = g.geom_lon, g.geom_lat
        s = COORD_SCALE
        return bearing(lon[a] / s, lat[a] / s, lon[b] / s, lat[b] / s)

    def junction(self, node: int) -> tuple[list[int], list[bool]]:
        cached = self._junctions.get(node)
        if cached is not None:
            return cached
        g = self.g
        entry: dict[int, bool] = {}
        for arc in range(int(g.first_out[node]), int(g.first_out[node + 1])):
            entry[int(round(self._arc_bearing(arc, True))) % 360] = True
        for k in range(int(g.in_first_out[node]), int(g.in_first_out[node + 1])):
            entry.setdefault(int(round(self._arc_bearing(int(g.in_arc[k]), False))) % 360, False)
        keys = sorted(entry)
        out = (keys, [entry[k] for k in keys])
        self._junctions[node] = out
        return out

    def is_roundabout_exit(self, node: int) -> bool:
        g = self.g
        flags = g.arc_flags[int(g.first_out[node]) : int(g.first_out[node + 1])]
        return bool(np.any((flags & FLAG_ROUNDABOUT) == 0))

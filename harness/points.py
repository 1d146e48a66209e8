"""Seeded points on a graph's streets for requests that every engine snaps alike (the trip tests, `bench/trip.py`)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from floor.format.graph import Graph, load_graph
from floor.format.units import COORD_SCALE, FLAG_FERRY, FLAG_ROUNDABOUT, ROAD_CLASS_CODE
from floor.kernels.geometry import haversine_m

STREETS = (
    "motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link", "secondary", "secondary_link",
    "tertiary", "tertiary_link", "unclassified", "residential", "living_street",
)  # fmt: skip
MIN_SEGMENT_M = 10.0


def road_points(graph: Graph | Path, n: int, seed: int) -> list[tuple[float, float]]:
    """`n` seeded points on named-street segments of the largest component, each inside the middle half of a
    segment at least 10 m long (so every engine snaps it to that segment); degrees, 6 decimals."""
    g = load_graph(graph) if isinstance(graph, Path) else graph
    rng = random.Random(seed)
    comp = np.asarray(g.node_component)
    codes = np.array([ROAD_CLASS_CODE[c] for c in STREETS])
    flags = np.asarray(g.arc_flags)
    ok = (
        np.isin(np.asarray(g.arc_class), codes)
        & (comp[np.asarray(g.arc_tail)] == 0)
        & (comp[np.asarray(g.arc_head)] == 0)
        & ((flags & (FLAG_FERRY | FLAG_ROUNDABOUT)) == 0)
    )
    arcs = np.flatnonzero(ok)
    gf, glon, glat = np.asarray(g.geom_first), np.asarray(g.geom_lon), np.asarray(g.geom_lat)
    out: list[tuple[float, float]] = []
    while len(out) < n:
        chain = int(g.arc_geom[int(arcs[rng.randrange(arcs.shape[0])])]) >> 1
        i = rng.randrange(int(gf[chain]), int(gf[chain + 1]) - 1)
        a = (float(glon[i]) / COORD_SCALE, float(glat[i]) / COORD_SCALE)
        b = (float(glon[i + 1]) / COORD_SCALE, float(glat[i + 1]) / COORD_SCALE)
        if float(haversine_m(a[0], a[1], b[0], b[1])) < MIN_SEGMENT_M:
            continue
        t = rng.uniform(0.25, 0.75)
        out.append((round(a[0] + t * (b[0] - a[0]), 6), round(a[1] + t * (b[1] - a[1]), 6)))
    return out

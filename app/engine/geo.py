"""Great-circle helpers (numba) and the per-graph tables behind the A* / ALT straight-line bound.

The straight-line bound of a node v towards a point p is `gc_m(v, p) * scale` deciseconds with
`scale = 10 / vmax` (`heuristic_scale`). `vmax` is the larger of the manifest's measured `max_speed_mps` and the
largest great-circle-length/weight ratio over all arcs, times (1 + 1e-6): then every arc satisfies
`w(u, v) >= gc(u, v) * scale * (1 + 1e-6)`, so the bound is consistent on every arc even where `arc_dist` was
rounded below the straight line, with a margin that absorbs floating-point noise in the haversine. The searches
floor the bound to whole deciseconds, which keeps it consistent for integer weights. Nodes are stored as unit
vectors, so a bound costs one sqrt and one asin (`gc = 2R asin(|a - b| / 2)`, the same great-circle distance as the
haversine formula).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.engine.data import derived
from floor.format.graph import Graph
from floor.format.units import COORD_SCALE, EARTH_RADIUS_M
from floor.kernels.jit import kernel
from floor.kernels.measure import measured_max_speed_mps

SPEED_MARGIN = 1e-6  # relative: vmax is inflated by this so the bound stays consistent under rounding


@kernel(inline="always")
def haversine_rad(lat1: float, lon1: float, cos1: float, lat2: float, lon2: float, cos2: float) -> float:
    """Great-circle distance in metres between two points given in radians, with their latitudes' cosines."""
    s1 = math.sin((lat2 - lat1) * 0.5)
    s2 = math.sin((lon2 - lon1) * 0.5)
    a = s1 * s1 + cos1 * cos2 * s2 * s2
    if a > 1.0:
        a = 1.0
    return 2.0 * EARTH_RADIUS_M * math.asin(math.sqrt(a))


@kernel
def gc_distance_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Great-circle distance in metres between two points in degrees (lon, lat order)."""
    r1 = math.radians(lat1)
    r2 = math.radians(lat2)
    return haversine_rad(r1, math.radians(lon1), math.cos(r1), r2, math.radians(lon2), math.cos(r2))


@kernel(inline="always")
def gc_unit_m(ax: float, ay: float, az: float, bx: float, by: float, bz: float) -> float:
    """Great-circle metres between two points given as unit vectors: 2R asin(chord / 2), no other trigonometry."""
    dx = ax - bx
    dy = ay - by
    dz = az - bz
    h = 0.5 * math.sqrt(dx * dx + dy * dy + dz * dz)
    if h > 1.0:
        h = 1.0
    return 2.0 * EARTH_RADIUS_M * math.asin(h)


@kernel
def _arc_gc_speed(tail: np.ndarray, head: np.ndarray, weight: np.ndarray, xyz: np.ndarray) -> float:
    """max over arcs of gc(tail, head) / (weight / 10) in m/s; inf when a zero-weight arc spans a distance."""
    best = 0.0
    for a in range(tail.shape[0]):
        u = tail[a]
        v = head[a]
        d = gc_unit_m(xyz[u, 0], xyz[u, 1], xyz[u, 2], xyz[v, 0], xyz[v, 1], xyz[v, 2])
        if d <= 0.0:
            continue
        w = weight[a]
        if w <= 0:
            return np.inf
        s = d * 10.0 / w
        if s > best:
            best = s
    return best


@dataclass(frozen=True)
class NodeGeo:
    """Per-graph tables for straight-line bounds: node unit vectors (one 24-byte row per node) and the scale."""

    xyz: np.ndarray  # float64 [n, 3] unit vectors (x towards 0E 0N, z towards the north pole)
    scale: float  # deciseconds per great-circle metre (0 disables the bound)
    vmax_mps: float


def node_geo(graph: Graph) -> NodeGeo:
    """The `NodeGeo` of a graph, computed once (O(n + m), vectorised) and cached for the graph's lifetime."""
    return derived(graph, "node_geo", lambda: _node_geo(graph))


def _node_geo(graph: Graph) -> NodeGeo:
    xyz = unit_vectors(
        np.asarray(graph.node_lon, dtype=np.float64) / COORD_SCALE,
        np.asarray(graph.node_lat, dtype=np.float64) / COORD_SCALE,
    )
    vm = graph.meta.max_speed_mps
    if vm is None:
        vm = measured_max_speed_mps(graph.arrays)
    vm = float(vm)
    if not math.isfinite(vm):
        vm = 0.0
    gc_speed = float(
        _arc_gc_speed(np.asarray(graph.arc_tail), np.asarray(graph.arc_head), np.asarray(graph.arc_weight), xyz)
    )
    vmax = max(vm, gc_speed) * (1.0 + SPEED_MARGIN)
    scale = 0.0 if (not math.isfinite(vmax) or vmax <= 0.0) else 10.0 / vmax
    xyz.flags.writeable = False
    return NodeGeo(xyz, scale, vmax)


def heuristic_scale(graph: Graph) -> float:
    """Deciseconds per great-circle metre of the graph's straight-line bound (10 / vmax; see the module docstring)."""
    return node_geo(graph).scale


def unit_vectors(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """float64 [k, 3] unit vectors of points in degrees (vectorised)."""
    la = np.radians(lat)
    lo = np.radians(lon)
    c = np.cos(la)
    return np.ascontiguousarray(np.stack([c * np.cos(lo), c * np.sin(lo), np.sin(la)], axis=1))

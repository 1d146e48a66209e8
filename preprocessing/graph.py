"""Graph assembly: arcs -> CSR forward/backward adjacency, strongly connected components, the core array set.

`finalize_arrays` is the single place where the core arrays of the format are put together, both for graphs built
from OSM (`preprocessing.build`) and for synthetic graphs in tests (`arrays_from_arcs`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from floor.format.arrays import SPECS
from floor.format.units import COORD_SCALE
from floor.kernels.geometry import csr_offsets
from floor.kernels.jit import kernel


def strong_components(n: int, tail: np.ndarray, head: np.ndarray) -> np.ndarray:
    """SCC id per node (int32), renumbered so 0 is the largest component and ids follow decreasing size."""
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    order = np.argsort(tail, kind="stable")
    first = csr_offsets(np.asarray(tail)[order], n)
    labels = _tarjan(first, np.ascontiguousarray(np.asarray(head)[order], dtype=np.int32))
    sizes = np.bincount(labels)
    rank_order = np.lexsort((np.arange(len(sizes)), -sizes))  # by size desc, then label
    rank = np.empty_like(rank_order)
    rank[rank_order] = np.arange(len(rank_order))
    return rank[labels].astype(np.int32)


@kernel
def _tarjan(first: np.ndarray, head: np.ndarray) -> np.ndarray:  # pragma: no cover - numba
    """Tarjan's strongly connected components, iterative (explicit call stack); labels in order of completion."""
    n = first.shape[0] - 1
    index = np.full(n, -1, dtype=np.int64)
    low = np.zeros(n, dtype=np.int64)
    on_stack = np.zeros(n, dtype=np.bool_)
    labels = np.full(n, -1, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)  # Tarjan's node stack
    call = np.empty(n, dtype=np.int64)  # DFS path: node
    edge = np.empty(n, dtype=np.int64)  # DFS path: next arc to look at
    sp = 0
    counter = 0
    comp = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        depth = 0
        call[0] = root
        edge[0] = first[root]
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        on_stack[root] = True
        while depth >= 0:
            v = call[depth]
            e = edge[depth]
            if e < first[v + 1]:
                edge[depth] = e + 1
                w = head[e]
                if index[w] < 0:
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    stack[sp] = w
                    sp += 1
                    on_stack[w] = True
                    depth += 1
                    call[depth] = w
                    edge[depth] = first[w]
                elif on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
                continue
            if low[v] == index[v]:  # v is a component's root: pop it
                while True:
                    sp -= 1
                    w = stack[sp]
                    on_stack[w] = False
                    labels[w] = comp
                    if w == v:
                        break
                comp += 1
            depth -= 1
            if depth >= 0:
                u = call[depth]
                if low[v] < low[u]:
                    low[u] = low[v]
    return labels


def pack_strings(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 blob + int64 offsets for a string table whose entry 0 must be ""."""
    assert strings and strings[0] == "", "string 0 must be the empty string"
    enc = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in enc], out=offsets[1:])
    blob = np.frombuffer(b"".join(enc), dtype=np.uint8).copy()
    return offsets, blob


# the core arrays by part, in the order they are stored, and the per-arc arrays a caller may leave out
NODE_ARRAYS = ("node_lon", "node_lat", "node_osm_id")
ARC_ARRAYS = (
    "arc_tail", "arc_head", "arc_weight", "arc_duration", "arc_dist", "arc_geom", "arc_name", "arc_ref", "arc_class",
    "arc_flags", "arc_lanes", "arc_signs", "arc_lane_count", "arc_way", "arc_head_penalty",
)  # fmt: skip
GEOM_ARRAYS = ("geom_first", "geom_lon", "geom_lat", "geom_osm_id")
ZERO_WHEN_ABSENT = ("arc_lanes", "arc_signs", "arc_lane_count", "arc_head_penalty")


def finalize_arrays(
    nodes: Mapping[str, np.ndarray],
    arcs: Mapping[str, np.ndarray],
    geometry: Mapping[str, np.ndarray],
    strings: list[str],
) -> dict[str, np.ndarray]:
    """Sort arcs by (tail, head, weight, geometry), build both CSRs and the SCC labels: the core array dict.

    Each part maps the format's array names to values (`NODE_ARRAYS`, `ARC_ARRAYS`, `GEOM_ARRAYS`), cast to the
    format's dtypes. Arcs may leave out the guidance attributes `arc_lanes` (turn:lanes string id of the arc's
    direction), `arc_signs` (signage string id), `arc_lane_count` (OSRM's number of lanes), and `arc_head_penalty`
    (the obstacle at the arc's head the turns out of it charge, `preprocessing.build`): 0, none; `arc_way` (the OSM
    way id turn restrictions name): arc i is way i + 1; `arc_duration` (the travel time when the weight is not,
    routability): the weight. `geom_osm_id` (the OSM node id of each shape point) absent is 0, unknown (synthetic
    graphs). Any other per-arc array (the encoded values, `preprocessing.osm.way_values`) is sorted with the arcs and
    stored as given."""
    n = len(nodes["node_lon"])
    m = len(arcs["arc_tail"])
    arcs = dict(arcs)
    arcs.setdefault("arc_duration", arcs["arc_weight"])
    arcs.setdefault("arc_way", np.arange(1, m + 1, dtype=np.int64))
    for name in ZERO_WHEN_ABSENT:
        arcs.setdefault(name, np.zeros(m, dtype=SPECS[name].dtype))
    geometry = dict(geometry)
    geometry.setdefault("geom_osm_id", np.zeros(len(geometry["geom_lon"]), dtype=np.int64))
    assert set(nodes) == set(NODE_ARRAYS) and set(geometry) == set(GEOM_ARRAYS), (sorted(nodes), sorted(geometry))
    order = np.lexsort(tuple(arcs[k] for k in ("arc_geom", "arc_weight", "arc_head", "arc_tail")))
    tail = np.asarray(arcs["arc_tail"], dtype=np.int32)[order]
    head = np.asarray(arcs["arc_head"], dtype=np.int32)[order]
    arrays: dict[str, np.ndarray] = {k: np.asarray(nodes[k], dtype=SPECS[k].dtype) for k in NODE_ARRAYS}
    arrays["node_component"] = strong_components(n, tail, head)
    arrays["first_out"] = csr_offsets(tail, n)
    for k in ARC_ARRAYS:
        arrays[k] = np.asarray(arcs[k], dtype=SPECS[k].dtype)[order]
    arrays.update({k: np.asarray(geometry[k], dtype=SPECS[k].dtype) for k in GEOM_ARRAYS})
    for name, values in arcs.items():
        if name in ARC_ARRAYS:
            continue
        assert name not in arrays and len(values) == m, f"{name}: a new array, one value per arc"
        arrays[name] = np.asarray(values)[order]
    in_arc = np.lexsort((np.arange(len(head)), head)).astype(np.int32)
    arrays["in_arc"] = in_arc
    arrays["in_first_out"] = csr_offsets(head[in_arc], n)
    arrays["str_offsets"], arrays["str_bytes"] = pack_strings(strings)
    return arrays


def arrays_from_arcs(
    tail: npt.ArrayLike,
    head: npt.ArrayLike,
    weight: npt.ArrayLike,
    dist: npt.ArrayLike | None = None,
    lon: np.ndarray | None = None,
    lat: np.ndarray | None = None,
    n: int | None = None,
) -> dict[str, np.ndarray]:
    """Core arrays for a synthetic graph (tests): one straight two-point geometry chain per arc.

    `lon`/`lat` are degrees (default: nodes on a small line near 0,0); `dist` decimetres (default: 0).
    """
    tail = np.asarray(tail, dtype=np.int64)
    head = np.asarray(head, dtype=np.int64)
    if n is None:
        n = int(max(tail.max(initial=-1), head.max(initial=-1)) + 1)
    m = len(tail)
    if lon is None:
        lon = np.arange(n, dtype=np.float64) * 1e-4
    if lat is None:
        lat = np.zeros(n, dtype=np.float64)
    ilon = np.round(np.asarray(lon, dtype=np.float64) * COORD_SCALE).astype(np.int32)
    ilat = np.round(np.asarray(lat, dtype=np.float64) * COORD_SCALE).astype(np.int32)
    if dist is None:
        dist = np.zeros(m, dtype=np.int32)
    geom_first = np.arange(0, 2 * m + 1, 2, dtype=np.int64)
    glon = np.empty(2 * m, dtype=np.int32)
    glat = np.empty(2 * m, dtype=np.int32)
    glon[0::2], glon[1::2] = ilon[tail], ilon[head]
    glat[0::2], glat[1::2] = ilat[tail], ilat[head]
    nodes: dict[str, np.ndarray] = {"node_lon": ilon, "node_lat": ilat, "node_osm_id": np.arange(n, dtype=np.int64) + 1}
    arcs: dict[str, np.ndarray] = {
        "arc_tail": tail,
        "arc_head": head,
        "arc_weight": np.asarray(weight),
        "arc_dist": np.asarray(dist),
        "arc_geom": (2 * np.arange(m)).astype(np.int32),
        "arc_name": np.zeros(m, dtype=np.int32),
        "arc_ref": np.zeros(m, dtype=np.int32),
        "arc_class": np.zeros(m, dtype=np.uint8),
        "arc_flags": np.zeros(m, dtype=np.uint8),
    }
    return finalize_arrays(nodes, arcs, {"geom_first": geom_first, "geom_lon": glon, "geom_lat": glat}, [""])

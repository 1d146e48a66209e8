"""Isochrones: what a one-to-all search with a cutoff reaches, as line pieces, then as contour polygons.

The search is the core's `MODE_ALL` from a snapped point's seeds (forward: "where can I get within", or backward over
in-arcs with `reverse`: "who gets here within"), on travel time or, for distance contours, on a copy of the core's
graph view whose weights are the arc distances. For a limit L, every arc leaving a node settled at d <= L is reached
over the fraction min(1, (L - d) / w) of its length from its tail (backward: arriving at the node, over that
fraction ending at its head), its geometry chain cut exactly there; the snapped point's own chain is reached from
the point on the same rule. `app.engine.contours` turns the pieces into polygons with holes.
"""

from __future__ import annotations

import numpy as np

from preprocessing.artifacts import Graph
from preprocessing.jit import kernel
from preprocessing.units import COORD_SCALE

from .geo import gc_distance_m


@kernel
def _pieces(
    dist, done_mask, limit, forward, first, adj, arc_tail, arc_head, arc_geom, weight, gf, glon, glat
):  # fmt: skip  # pragma: no cover - numba
    """(lon0, lat0, lon1, lat1) degrees of every reached piece of arc geometry (module docstring)."""
    n = dist.shape[0]
    cap = 1024
    out = np.empty((cap, 4), dtype=np.float64)
    k = 0
    pts = np.empty((256, 2), dtype=np.float64)
    for u in range(n):
        if not done_mask[u] or dist[u] > limit:
            continue
        for i in range(first[u], first[u + 1]):
            a = i if forward else adj[i]
            w = weight[a]
            left = limit - dist[u]
            frac = 1.0 if w <= left else left / w
            if frac <= 0.0:
                continue
            c = arc_geom[a] >> 1
            rev = arc_geom[a] & 1
            p0 = gf[c]
            p1 = gf[c + 1]
            m = p1 - p0
            if m > pts.shape[0]:
                pts = np.empty((2 * m, 2), dtype=np.float64)
            # the chain in the order the search covers it: from the settled node outwards
            from_start = (rev == 0) if forward else (rev == 1)
            for j in range(m):
                idx = p0 + j if from_start else p1 - 1 - j
                pts[j, 0] = glon[idx] / COORD_SCALE
                pts[j, 1] = glat[idx] / COORD_SCALE
            total = 0.0
            for j in range(m - 1):
                total += gc_distance_m(pts[j, 0], pts[j, 1], pts[j + 1, 0], pts[j + 1, 1])
            reach = frac * total
            acc = 0.0
            for j in range(m - 1):
                seg = gc_distance_m(pts[j, 0], pts[j, 1], pts[j + 1, 0], pts[j + 1, 1])
                if k + 1 >= out.shape[0]:
                    bigger = np.empty((2 * out.shape[0], 4), dtype=np.float64)
                    for r in range(k):
                        for col in range(4):
                            bigger[r, col] = out[r, col]
                    out = bigger
                x0, y0 = pts[j, 0], pts[j, 1]
                if acc + seg <= reach or frac >= 1.0:
                    x1, y1 = pts[j + 1, 0], pts[j + 1, 1]
                else:
                    t = (reach - acc) / seg if seg > 0.0 else 0.0
                    x1 = x0 + t * (pts[j + 1, 0] - x0)
                    y1 = y0 + t * (pts[j + 1, 1] - y0)
                out[k, 0] = x0
                out[k, 1] = y0
                out[k, 2] = x1
                out[k, 3] = y1
                k += 1
                acc += seg
                if acc >= reach and frac < 1.0:
                    break
    result = np.empty((k, 4), dtype=np.float64)
    for r in range(k):
        for col in range(4):
            result[r, col] = out[r, col]
    return result


def reached_pieces(
    graph: Graph, dist: np.ndarray, settled: np.ndarray, limit: int, forward: bool, weight: np.ndarray
) -> np.ndarray:
    """float64 [k, 4] (lon0, lat0, lon1, lat1) of the arc geometry reached within `limit` (same unit as `weight`)
    from the labels `dist` of the nodes `settled` (bool [n]) of a one-to-all search."""
    g = graph
    first = g.first_out if forward else g.in_first_out
    return _pieces(
        np.ascontiguousarray(dist, dtype=np.int64), np.ascontiguousarray(settled, dtype=np.bool_), int(limit), forward,
        first, g.in_arc, g.arc_tail, g.arc_head, g.arc_geom, weight, g.geom_first, g.geom_lon, g.geom_lat,
    )  # fmt: skip


def point_pieces(coords: np.ndarray, reach_m: float) -> np.ndarray:
    """float64 [k, 4] pieces of a polyline (lon, lat [m, 2], degrees) from its first point over `reach_m` metres."""
    out = []
    acc = 0.0
    for j in range(len(coords) - 1):
        x0, y0 = coords[j]
        x1, y1 = coords[j + 1]
        seg = float(gc_distance_m(float(x0), float(y0), float(x1), float(y1)))
        if acc + seg > reach_m:
            t = (reach_m - acc) / seg if seg > 0 else 0.0
            out.append((x0, y0, x0 + t * (x1 - x0), y0 + t * (y1 - y0)))
            break
        out.append((x0, y0, x1, y1))
        acc += seg
    return np.array(out, dtype=np.float64).reshape(-1, 4)


def arc_starts(
    labels: np.ndarray, labelled: np.ndarray, node_arc: np.ndarray, weight: np.ndarray, forward: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per road arc, from the labels of an edge-based one-to-all search (`app.engine.edges`): when the search reaches
    the arc's tail (forward: the label, which includes the whole arc, minus the arc; backward: the label, the cost
    from the arc's end), minimised over the arc's search nodes, and whether it is known. A forward label below
    the cutoff plus the arc is exact even if its node was not settled: its best predecessor was."""
    m = int(weight.shape[0])
    val = labels.astype(np.int64) - (weight[node_arc].astype(np.int64) if forward else 0)
    best = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, node_arc[labelled], val[labelled])
    return best, best < np.iinfo(np.int64).max


def reached_arc_pieces(
    graph: Graph, start: np.ndarray, known: np.ndarray, limit: int, forward: bool, weight: np.ndarray
) -> np.ndarray:
    """`reached_pieces` over road arcs each with its own start (`arc_starts`): the edge-based graph's isochrone."""
    g = graph
    m = int(weight.shape[0])
    each = np.arange(m + 1, dtype=np.int32)
    return _pieces(
        np.ascontiguousarray(start, dtype=np.int64), np.ascontiguousarray(known, dtype=np.bool_), int(limit), forward,
        each, each[:m], g.arc_tail, g.arc_head, g.arc_geom, weight, g.geom_first, g.geom_lon, g.geom_lat,
    )  # fmt: skip

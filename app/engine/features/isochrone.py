"""Isochrones: what a one-to-all search with a cutoff reaches, as line pieces, then as contour polygons.

The search is the core's `MODE_ALL` from a snapped point's seeds (forward: "where can I get within", or backward over
in-arcs with `reverse`: "who gets here within"), on travel time or, for distance contours, on a copy of the core's
graph view whose weights are the arc distances. For a limit L, every arc leaving a node settled at d <= L is reached
over the fraction min(1, (L - d) / w) of its length from its tail (backward: arriving at the node, over that
fraction ending at its head), its geometry chain cut exactly there; the snapped point's own chain is reached from
the point on the same rule. `app.engine.features.contours` turns the pieces into polygons with holes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.engine.geo import gc_distance_m
from app.engine.route.space import SearchSpace
from app.engine.search.searches import Searcher
from app.engine.types import Phantom, SearchOptions, Seeds
from floor.format.graph import Graph
from floor.format.units import COORD_SCALE
from floor.kernels.geometry import haversine_m
from floor.kernels.jit import kernel


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
    """Per road arc, from the labels of an edge-based one-to-all search (`app.engine.route.edges`): when the search
    reaches
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


def reached(
    space: SearchSpace,
    searcher: Searcher,
    phantom: Phantom,
    limits: Sequence[int],
    metric: str,
    timed: bool,
    reverse: bool = False,
    exclude_flags: int = 0,
) -> tuple[list[np.ndarray], int]:
    """The network reached from (or, with `reverse`, reaching) `phantom` within each limit (ds of travel time, or
    dm of distance with `metric` "distance"): per limit, float64 [k, 4] pieces (lon0, lat0, lon1, lat1); and the
    number of nodes the search settled. One search with the largest limit as its cutoff, by `searcher` (whose
    metric is the weight, the travel time where `timed`, or the distance)."""
    g = space.graph
    ss = space.seeds(phantom, not reverse)
    seeds = ss.seeds
    if metric != "duration" or timed:
        seed_cost = seeds.duration_array() if timed else seeds.dists
        seeds = Seeds(seeds.nodes, seed_cost, seeds.dists, seeds.lon, seeds.lat)
    opts = SearchOptions(exclude_flags=exclude_flags, cutoff=int(max(limits)))
    q = searcher.one_to_many(seeds, np.zeros(0, dtype=np.int32), forward=not reverse, options=opts)
    dist, settled = searcher.settled(q)
    if metric == "duration":
        weight = g.arc_duration if timed else g.arc_weight
    else:
        weight = g.arc_dist
    node_arc = getattr(space.search, "node_arc", None) if space.edge_based else None
    if node_arc is not None:  # per road arc: when the search reaches its start
        start, known = arc_starts(dist, searcher.labelled(q), np.asarray(node_arc), weight, not reverse)
        if not reverse:  # the source's own arcs: from the point on (`own_chain`), not from their tails
            known[np.asarray(node_arc)[seeds.nodes]] = False
    own = own_chain(g, phantom, reverse, metric, exclude_flags)
    out = []
    for limit in limits:
        if node_arc is None:
            parts = [reached_pieces(g, dist, settled, int(limit), not reverse, weight)]
        else:
            parts = [reached_arc_pieces(g, start, known, int(limit), not reverse, weight)]
        for coords, cost in own:
            share = 1.0 if cost <= 0 else min(1.0, float(limit) / cost)
            parts.append(point_pieces(coords, share * _length_m(coords)))
        out.append(np.concatenate(parts))
    return out, int(searcher.out[2])


def own_chain(
    graph: Graph, ph: Phantom, reverse: bool, metric: str, exclude_flags: int
) -> list[tuple[np.ndarray, int]]:
    """The snapped point's own chain as (polyline from the point, its cost in the metric) per usable direction:
    leaving the point (forward search) or arriving at it (reverse)."""
    g = graph
    gf = g.geom_first
    p0, p1 = int(gf[ph.chain]), int(gf[ph.chain + 1])
    chain = np.stack([g.geom_lon[p0:p1], g.geom_lat[p0:p1]], axis=1) / COORD_SCALE
    point = np.array([[ph.lon, ph.lat]])
    head = np.concatenate([point, chain[ph.segment + 1 :]])  # from the point towards the chain's last point
    tail = np.concatenate([point, chain[ph.segment :: -1]])  # from the point towards its first point
    dist = metric != "duration"
    fb, fa, bb, ba = ph.times()  # travel times (the weights where the weight is the travel time)
    out = []
    for arc, after, before, ahead, behind in (
        (ph.fwd_arc, ph.fwd_dist_after if dist else fa, ph.fwd_dist_before if dist else fb, head, tail),
        (ph.bwd_arc, ph.bwd_dist_after if dist else ba, ph.bwd_dist_before if dist else bb, tail, head),
    ):  # fmt: skip
        if arc < 0 or (int(g.arc_flags[arc]) & exclude_flags):
            continue
        out.append((behind, before) if reverse else (ahead, after))
    return out


def _length_m(coords: np.ndarray) -> float:
    if len(coords) < 2:
        return 0.0
    return float(haversine_m(coords[:-1, 0], coords[:-1, 1], coords[1:, 0], coords[1:, 1]).sum())

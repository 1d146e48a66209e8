"""Snapping: any lon/lat to the nearest point of the nearest road segment (OSRM's phantom nodes).

The index is a packed R-tree (OSRM's `StaticRTree`): every geometry-chain segment some arc runs on, sorted along a
Hilbert curve by bounding-box centre, 16 per leaf, 16 children per inner node, boxes in the graph's own int32
fixed-point coordinates. Queries are best-first (Hjaltason & Samet): a heap of tree nodes keyed by their box's
distance and of segments keyed by their exact point-to-segment distance, both measured in one equirectangular frame
centred on the query point. A segment popped from the heap is therefore exactly the nearest remaining one, whatever
the segment lengths; k-nearest, radius limits and filters come for free. A waypoint's nearest is then OSRM's on
near-ties (`_nearest_osrm`: OSRM orders segments by a distance rounded to 1e-6 degrees in Web Mercator).

Components as OSRM treats them. Two trees split the snappable segments (ferries are no start points, as in OSRM's
profiles): those of *big* strongly connected components (at least `min_component_size` nodes, OSRM's default 1000;
the largest one too is tiny below that, as in OSRM) and those of *tiny* ones. `candidates` finds a point's nearest
segment of any kind and its nearest big one; `choose` applies OSRM's rule over all points of a request
(`SnapPhantomNodes`): when every point's nearest segment lies in one and the same tiny component, the request runs
there; otherwise each point whose nearest segment is tiny moves to its nearest big one (where there is none, as on a
small map whose components are all tiny, it stays). So a route inside an island stays on the island, a point next to
a car park still reaches the main network, and on a small map a point on a one-way dead end is routed to where it
is.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.engine.data import ChainIndex, chain_index, no_start_arcs
from app.engine.errors import InvalidValue, NoSegment
from app.engine.geo import gc_distance_m
from app.engine.snap.osrm_snap import _chain_offset, _osrm_pick, _phantom_figures, chain_end_kind
from app.engine.snap.snap_input import check_bearing, check_coordinate, check_radius
from app.engine.types import HotPath, Phantom, new_phantom
from floor.format.graph import Graph
from floor.format.units import COORD_SCALE, EARTH_RADIUS_M
from floor.kernels.geometry import hilbert_index, osrm_fixed
from floor.kernels.heap import heap_pop, heap_push
from floor.kernels.jit import kernel

FANOUT = 16  # entries per leaf and children per inner node
OSRM_NEAR_CHAINS = 8  # chains a point's nearest is chosen from in OSRM's order (`_nearest_osrm`)
OSRM_SLACK_M = 0.5  # ... those within this of the nearest: OSRM's 1e-6 rounding moves a distance by ~0.16 m at most
MIN_COMPONENT_SIZE = 1000  # OSRM's default (osrm-extract --small-component-size): smaller SCCs are tiny
_DEG = math.pi / 180.0
_KY = EARTH_RADIUS_M * _DEG / COORD_SCALE  # metres per fixed-point unit of latitude


_Found = tuple[float, int, Phantom, list[tuple[int, int, float]]]  # a tree's hit: distance m, tree, phantom, others


def _human_m(d: float) -> str:
    return f"{d / 1000:.1f} km" if d >= 10_000 else f"{d:.0f} m"


haversine = gc_distance_m  # great-circle metres between two degree coordinates (the one implementation, app.engine.geo)


# -- numba kernels -----------------------------------------------------------------------------------------------------


@kernel(inline="always")
def _seg_d2(s, qx, qy, kx, ky, glon, glat):  # pragma: no cover - numba
    """Squared local distance (m^2) from fixed-point (qx, qy) to segment s (points s, s+1) and the parameter t."""
    ax = (glon[s] - qx) * kx
    ay = (glat[s] - qy) * ky
    ex = (glon[s + 1] - qx) * kx - ax
    ey = (glat[s + 1] - qy) * ky - ay
    ee = ex * ex + ey * ey
    t = 0.0
    if ee > 0.0:
        t = min(max(-(ax * ex + ay * ey) / ee, 0.0), 1.0)
    px = ax + t * ex
    py = ay + t * ey
    return px * px + py * py, t


@kernel
def _project(segs, qlon, qlat, glon, glat):  # pragma: no cover - numba
    """Squared local distance (m^2) and parameter t of the projection of (qlon, qlat) on each segment (brute force)."""
    qx, qy = qlon * COORD_SCALE, qlat * COORD_SCALE
    ky = _KY
    kx = ky * math.cos(qlat * math.pi / 180.0)
    d2 = np.empty(segs.shape[0], dtype=np.float64)
    tt = np.empty(segs.shape[0], dtype=np.float64)
    for j in range(segs.shape[0]):
        d2[j], tt[j] = _seg_d2(segs[j], qx, qy, kx, ky, glon, glat)
    return d2, tt


@kernel(inline="always")
def _bearing_ok(b, bearing, brange):  # pragma: no cover - numba
    d = abs(b - bearing) % 360.0
    return min(d, 360.0 - d) <= brange


@kernel(nrt=False)
def _directions(s, c, kx, ky, glon, glat, chain_fwd, chain_bwd, bearing, brange):  # pragma: no cover - numba
    """Bit 1: travel along the chain through segment s matches the bearing filter, bit 2: against it.

    Only directions some arc allows count; without a filter (bearing < 0) every allowed direction does.
    """
    fwd = chain_fwd[c] >= 0
    bwd = chain_bwd[c] >= 0
    if bearing < 0.0:
        return (1 if fwd else 0) | (2 if bwd else 0)
    bx = (glon[s + 1] - glon[s]) * kx
    by = (glat[s + 1] - glat[s]) * ky
    if bx == 0.0 and by == 0.0:
        return 0
    b = math.atan2(bx, by) * 180.0 / math.pi
    if b < 0.0:
        b += 360.0
    out = 0
    if fwd and _bearing_ok(b, bearing, brange):
        out |= 1
    if bwd and _bearing_ok((b + 180.0) % 360.0, bearing, brange):
        out |= 2
    return out


@kernel(nrt=False)
def segment_directions(s, c, qlat, glon, glat, chain_fwd, chain_bwd, bearing, brange):  # pragma: no cover - numba
    """`_directions` in the local frame of latitude `qlat` (for the phantom of a filtered search)."""
    ky = _KY
    kx = ky * math.cos(qlat * math.pi / 180.0)
    return _directions(s, c, kx, ky, glon, glat, chain_fwd, chain_bwd, bearing, brange)


@kernel
def _search(
    minx, miny, maxx, maxy, level_start, entry_seg, entry_chain, glon, glat, qlon, qlat, want, max_d2, out_seg, out_d2,
    out_t, chain_fwd, chain_bwd, bearing, brange, check_dirs, near_slack,
):  # fmt: skip  # pragma: no cover - numba
    """Best-first search: the `want` nearest segments on distinct chains within sqrt(max_d2) local metres; with
    `near_slack` >= 0, only those within that many metres of the nearest (and maybe a few beyond, never fewer).

    With `bearing` >= 0 only segments travelled within `brange` degrees of it (in a direction an arc allows) count;
    with `check_dirs`, segments with no arc in `chain_fwd`/`chain_bwd` (directions an excluded class removed) neither.

    Heap ids: inner/leaf nodes by their global index (>= 0), segment entries p as p - len(entry_seg) (< 0), so on
    equal keys segments pop first. Returns how many were found (written to out_*).
    """
    n_entries = entry_seg.shape[0]
    if n_entries == 0:
        return 0
    qx, qy = qlon * COORD_SCALE, qlat * COORD_SCALE
    ky = _KY
    kx = ky * math.cos(qlat * math.pi / 180.0)
    levels = level_start.shape[0] - 1
    cap = 1024
    keys = np.empty(cap, dtype=np.float64)
    ids = np.empty(cap, dtype=np.int32)
    size = heap_push(keys, ids, 0, 0.0, level_start[levels - 1])  # the root
    found = 0
    while size > 0 and found < want:
        key, g, size = heap_pop(keys, ids, size)
        if key > max_d2:
            break
        if g < 0:
            p = g + n_entries
            c = entry_chain[p]
            dup = False
            for j in range(found):
                if entry_chain[out_seg[j]] == c:
                    dup = True
                    break
            if dup:
                continue
            d2, t = _seg_d2(entry_seg[p], qx, qy, kx, ky, glon, glat)
            out_seg[found] = p
            out_d2[found] = d2
            out_t[found] = t
            found += 1
            if found == 1 and near_slack >= 0.0:  # the rest lie within the slack of this one (a hair more: rounding)
                b = (math.sqrt(d2) + near_slack) * (1.0 + 1e-9)
                max_d2 = min(max_d2, b * b)
            continue
        if size + FANOUT > cap:
            cap *= 2
            nk = np.empty(cap, dtype=np.float64)
            ni = np.empty(cap, dtype=np.int32)
            for i in range(size):  # written out: numba's slice assignment costs seconds of compile time
                nk[i] = keys[i]
                ni[i] = ids[i]
            keys, ids = nk, ni
        lvl = 0
        while g >= level_start[lvl + 1]:
            lvl += 1
        local = g - level_start[lvl]
        if lvl == 0:
            for p in range(local * FANOUT, min((local + 1) * FANOUT, n_entries)):
                if bearing >= 0.0 or check_dirs:
                    if (
                        _directions(
                            entry_seg[p], entry_chain[p], kx, ky, glon, glat, chain_fwd, chain_bwd, bearing, brange
                        )
                        == 0
                    ):
                        continue
                d2, _t = _seg_d2(entry_seg[p], qx, qy, kx, ky, glon, glat)
                size = heap_push(keys, ids, size, d2, p - n_entries)
        else:
            below = level_start[lvl - 1]
            count = level_start[lvl] - below
            for j in range(local * FANOUT, min((local + 1) * FANOUT, count)):
                h = below + j
                dx = max(minx[h] - qx, 0.0, qx - maxx[h]) * kx
                dy = max(miny[h] - qy, 0.0, qy - maxy[h]) * ky
                size = heap_push(keys, ids, size, dx * dx + dy * dy, h)
    return found


@kernel
def _nearest_osrm(
    minx, miny, maxx, maxy, level_start, entry_seg, entry_chain, glon, glat, gf, qlon, qlat, want, max_d2, chain_fwd,
    chain_bwd, bearing, brange, check_dirs, slack,
):  # fmt: skip  # pragma: no cover - numba
    """`_search` for the `want` nearest segments, then `_osrm_pick`'s choice among them, in one call: (how many
    were found, the chosen segment, its chain, local distance m and OSRM ratio, and the other chains' segments,
    chains and ratios at the same point); nothing chosen when none was found."""
    out_p = np.empty(want, dtype=np.int64)
    out_d2 = np.empty(want, dtype=np.float64)
    out_t = np.empty(want, dtype=np.float64)
    k = _search(
        minx, miny, maxx, maxy, level_start, entry_seg, entry_chain, glon, glat, qlon, qlat, want, max_d2, out_p,
        out_d2, out_t, chain_fwd, chain_bwd, bearing, brange, check_dirs, slack,
    )  # fmt: skip
    none_i = np.zeros(0, dtype=np.int64)
    if k == 0:
        return 0, -1, -1, 0.0, 0.0, none_i, none_i, np.zeros(0, dtype=np.float64)
    s = np.empty(k, dtype=np.int64)
    c = np.empty(k, dtype=np.int64)
    d = np.empty(k, dtype=np.float64)
    for j in range(k):
        s[j] = entry_seg[out_p[j]]
        c[j] = entry_chain[out_p[j]]
        d[j] = math.sqrt(out_d2[j])
    i, seg, ratio, o_seg, o_chain, o_ratio = _osrm_pick(s, c, d, gf, glon, glat, qlon, qlat, slack)
    return k, seg, c[i], d[i], ratio, o_seg, o_chain, o_ratio


@kernel(nrt=False)
def _osrm_vertex(glon, glat, gf, osrm_flip, seg, chain, t):  # pragma: no cover - numba
    """(segment, t) of a point OSRM sees on an inner point of a chain (equal at 1e-6 degrees): the segment OSRM
    keeps of the two that meet there. It keeps the one first along its edge (`MakeAlternativeBigCandidates`,
    "pick e1"), which says whether an obstacle on that point lies before or after the phantom; its edges run a
    oneway's way and a two-way road's from the end of its compressed edge with the lower OSM id (`osrm_flip`,
    `road_classification.osrm_edge_flip`)."""
    p0 = gf[chain]
    p1 = gf[chain + 1] - 1
    x0, y0 = glon[seg] / COORD_SCALE, glat[seg] / COORD_SCALE
    x1, y1 = glon[seg + 1] / COORD_SCALE, glat[seg + 1] / COORD_SCALE
    ax, ay = osrm_fixed(x0 + t * (x1 - x0)), osrm_fixed(y0 + t * (y1 - y0))
    if seg > p0 and ax == osrm_fixed(x0) and ay == osrm_fixed(y0):
        vertex = seg  # the point is on the segment's first point, an inner one
    elif seg + 1 < p1 and ax == osrm_fixed(x1) and ay == osrm_fixed(y1):
        vertex = seg + 1
    else:
        return seg, t
    return (vertex, 0.0) if osrm_flip[chain] else (vertex - 1, 1.0)


@kernel(inline="always")
def _figures_at(
    glon, glat, gf, fwd_arc, bwd_arc, first_node, last_node, component, osrm_flip, arc_weight, arc_dist, arc_name,
    node_osm_id, arc_time, seg_weight, seg_time, sg, c, t, qlon, qlat, at_vertex, osrm_point,
):  # fmt: skip  # pragma: no cover - numba
    """(global segment, `_phantom_figures`) of a hit at parameter t of segment `sg` of chain `c`, on the segment OSRM
    keeps at an inner point of the chain first when `at_vertex` (`_osrm_vertex`)."""
    if at_vertex:
        sg, t = _osrm_vertex(glon, glat, gf, osrm_flip, sg, c, t)
    r = _phantom_figures(
        glon, glat, gf, fwd_arc, bwd_arc, first_node, last_node, component, osrm_flip, arc_weight, arc_dist, arc_name,
        node_osm_id, c, sg - gf[c], t, qlon, qlat, arc_time, seg_weight, seg_time, osrm_point,
    )  # fmt: skip
    return sg, r


@kernel(inline="always")
def _put_figures(f_fig, i_fig, k, r):  # pragma: no cover - numba
    """Row k of `_phantom_figures`' figures `r`: its 3 floats into `f_fig`, its 18 ints into `i_fig`."""
    f_fig[k, 0], f_fig[k, 1], f_fig[k, 2] = r[0], r[1], r[2]
    i_fig[k, 0], i_fig[k, 1], i_fig[k, 2], i_fig[k, 3], i_fig[k, 4] = r[3], r[4], r[5], r[6], r[7]
    i_fig[k, 5], i_fig[k, 6], i_fig[k, 7], i_fig[k, 8], i_fig[k, 9] = r[8], r[9], r[10], r[11], r[12]
    i_fig[k, 10], i_fig[k, 11], i_fig[k, 12], i_fig[k, 13] = r[13], r[14], r[15], r[16]
    i_fig[k, 14], i_fig[k, 15], i_fig[k, 16], i_fig[k, 17] = r[17], r[18], r[19], r[20]


@kernel
def _snap_point(
    b_minx, b_miny, b_maxx, b_maxy, b_level, b_seg, b_chain, t_minx, t_miny, t_maxx, t_maxy, t_level, t_seg, t_chain,
    glon, glat, gf, fwd_arc, bwd_arc, first_node, last_node, component, osrm_flip, arc_weight, arc_dist, arc_name,
    node_osm_id, arc_time, seg_weight, seg_time, qlon, qlat, want, limit, radius, chain_fwd, chain_bwd, bearing, brange,
    check_dirs, slack, at_vertex, yes,
):  # fmt: skip  # pragma: no cover - numba
    """The kernel work of `Snapper.candidates` in one call, in its order: the big tree's nearest as OSRM picks it
    (`_nearest_osrm` within `limit` m), its phantom's figures (`_osrm_vertex` first when `at_vertex`, then
    `_phantom_figures` at OSRM's point), then the same in the tiny tree within the big one's distance when that one
    lies within `radius` (< 0: any). Returns (found per tree, local distance m, chain, global segment, the figures
    [2, 3] float and [2, 18] int, the other chains at the point [k, 3] = segment, chain, ratio with the big tree's
    first `nb` rows, nb). `yes` is True from Python: a literal would compile `_phantom_figures` a second time."""
    found = np.zeros(2, dtype=np.bool_)
    dist = np.zeros(2)
    chain = np.full(2, -1, dtype=np.int64)
    seg = np.full(2, -1, dtype=np.int64)
    f_fig = np.zeros((2, 3))
    i_fig = np.zeros((2, 18), dtype=np.int64)
    others = np.zeros((0, 3))
    nb = 0
    for k in range(2):
        if k == 1 and found[0]:  # a tiny segment matters only where it is no farther than the big one
            limit = min(limit, dist[0] * (1 + 1e-9) + 1e-9)
        n, sg, c, d, ratio, o_seg, o_chain, o_ratio = _nearest_osrm(  # one call site: one copy of it to compile
            (b_minx, t_minx)[k], (b_miny, t_miny)[k], (b_maxx, t_maxx)[k], (b_maxy, t_maxy)[k],
            (b_level, t_level)[k], (b_seg, t_seg)[k], (b_chain, t_chain)[k], glon, glat, gf, qlon, qlat, want,
            limit * limit, chain_fwd, chain_bwd, bearing, brange, check_dirs, slack,
        )  # fmt: skip
        if n == 0:
            continue
        sg, r = _figures_at(
            glon, glat, gf, fwd_arc, bwd_arc, first_node, last_node, component, osrm_flip, arc_weight, arc_dist,
            arc_name, node_osm_id, arc_time, seg_weight, seg_time, sg, c, ratio, qlon, qlat, at_vertex, yes,
        )  # fmt: skip
        if radius >= 0.0 and r[2] > radius:
            continue
        found[k] = True
        dist[k] = d
        chain[k] = c
        seg[k] = sg
        _put_figures(f_fig, i_fig, k, r)
        m = o_seg.shape[0]
        more = np.empty((others.shape[0] + m, 3))
        for j in range(others.shape[0]):
            more[j, 0], more[j, 1], more[j, 2] = others[j, 0], others[j, 1], others[j, 2]
        for j in range(m):
            q = others.shape[0] + j
            more[q, 0], more[q, 1], more[q, 2] = o_seg[j], o_chain[j], o_ratio[j]
        others = more
        if k == 0:
            nb = m
    return found, dist, chain, seg, f_fig, i_fig, others, nb


@kernel
def _nearest_point(
    b_minx, b_miny, b_maxx, b_maxy, b_level, b_seg, b_chain, t_minx, t_miny, t_maxx, t_maxy, t_level, t_seg, t_chain,
    glon, glat, gf, fwd_arc, bwd_arc, first_node, last_node, component, osrm_flip, arc_weight, arc_dist, arc_name,
    node_osm_id, arc_time, seg_weight, seg_time, qlon, qlat, want, limit, chain_fwd, chain_bwd, bearing, brange,
    check_dirs, at_vertex, no,
):  # fmt: skip  # pragma: no cover - numba
    """The kernel work of `Snapper.nearest` in one call: each tree's `want` nearest segments on distinct chains
    within `limit` m (the tiny tree's only up to the big one's `want`-th: none farther can come first), ordered by
    (distance, chain, segment, t) as `nearest` sorts them, and the first `want`'s phantom figures (`_osrm_vertex`
    first when `at_vertex`). Returns (count, global segments, chains, figures [k, 3] float and [k, 18] int). `no`
    is False from Python (a literal would compile `_phantom_figures` once more)."""
    hs = np.empty(2 * want, dtype=np.int64)
    hc = np.empty(2 * want, dtype=np.int64)
    hd = np.empty(2 * want)
    ht = np.empty(2 * want)
    out_p = np.empty(want, dtype=np.int64)
    out_d2 = np.empty(want)
    out_t = np.empty(want)
    max_d2 = limit * limit
    n = 0
    for k in range(2):
        found = _search(  # one call site: one copy of it to compile
            (b_minx, t_minx)[k], (b_miny, t_miny)[k], (b_maxx, t_maxx)[k], (b_maxy, t_maxy)[k], (b_level, t_level)[k],
            (b_seg, t_seg)[k], (b_chain, t_chain)[k], glon, glat, qlon, qlat, want, max_d2, out_p, out_d2, out_t,
            chain_fwd, chain_bwd, bearing, brange, check_dirs, -1.0,
        )  # fmt: skip
        entry_seg = (b_seg, t_seg)[k]
        entry_chain = (b_chain, t_chain)[k]
        for j in range(found):
            hs[n] = entry_seg[out_p[j]]
            hc[n] = entry_chain[out_p[j]]
            hd[n] = math.sqrt(out_d2[j])
            ht[n] = out_t[j]
            n += 1
        if found == want:  # found nearest first: the last is the farthest (a hair more: equal distances tie on chain)
            max_d2 = min(max_d2, out_d2[found - 1] * (1.0 + 1e-9))
    order = np.arange(n)
    for i in range(1, n):  # insertion sort by (distance, chain, segment, t)
        j = i
        while j > 0:
            a, b = order[j - 1], order[j]
            if (hd[a], hc[a], hs[a], ht[a]) <= (hd[b], hc[b], hs[b], ht[b]):
                break
            order[j - 1], order[j] = b, a
            j -= 1
    m = min(n, want)
    segs = np.empty(m, dtype=np.int64)
    chains = np.empty(m, dtype=np.int64)
    f_fig = np.empty((m, 3))
    i_fig = np.empty((m, 18), dtype=np.int64)
    for i in range(m):
        h = order[i]
        c = hc[h]
        sg, r = _figures_at(
            glon, glat, gf, fwd_arc, bwd_arc, first_node, last_node, component, osrm_flip, arc_weight, arc_dist,
            arc_name, node_osm_id, arc_time, seg_weight, seg_time, hs[h], c, ht[h], qlon, qlat, at_vertex, no,
        )  # fmt: skip
        segs[i] = sg
        chains[i] = c
        _put_figures(f_fig, i_fig, i, r)
    return m, segs, chains, f_fig, i_fig


class _Tree:
    """A packed Hilbert R-tree over a set of segments (global ids = index of their first point)."""

    def __init__(self, segs: np.ndarray, seg_chain: np.ndarray, glon: np.ndarray, glat: np.ndarray) -> None:
        a_lon, b_lon = glon[segs], glon[segs + 1]
        a_lat, b_lat = glat[segs], glat[segs + 1]
        x0, x1 = np.minimum(a_lon, b_lon), np.maximum(a_lon, b_lon)
        y0, y1 = np.minimum(a_lat, b_lat), np.maximum(a_lat, b_lat)
        if len(segs):
            cx = (x0.astype(np.float64) + x1) / 2
            cy = (y0.astype(np.float64) + y1) / 2
            gx = ((cx - float(x0.min())) * (65535.0 / max(float(x1.max() - x0.min()), 1.0))).astype(np.int64)
            gy = ((cy - float(y0.min())) * (65535.0 / max(float(y1.max() - y0.min()), 1.0))).astype(np.int64)
            order = np.lexsort((segs, hilbert_index(gx, gy, 16)))
        else:
            order = np.zeros(0, dtype=np.int64)
        self.entry_seg = np.ascontiguousarray(segs[order], dtype=np.int64)
        self.entry_chain = np.ascontiguousarray(seg_chain[order], dtype=np.int32)
        boxes = [x0[order], y0[order], x1[order], y1[order]]
        levels: list[list[np.ndarray]] = []
        count = len(segs)
        while count > 0:
            starts = np.arange(0, count, FANOUT)
            boxes = [
                np.minimum.reduceat(boxes[0], starts),
                np.minimum.reduceat(boxes[1], starts),
                np.maximum.reduceat(boxes[2], starts),
                np.maximum.reduceat(boxes[3], starts),
            ]
            levels.append(boxes)
            count = len(starts)
            if count == 1:
                break
        self.level_start = np.zeros(len(levels) + 1, dtype=np.int64)
        np.cumsum([len(lv[0]) for lv in levels], out=self.level_start[1:])
        cat = [np.concatenate([lv[i] for lv in levels]) if levels else np.zeros(0) for i in range(4)]
        self.minx, self.miny, self.maxx, self.maxy = (np.ascontiguousarray(c, dtype=np.float64) for c in cat)

    @property
    def size(self) -> int:
        return int(self.entry_seg.shape[0])

    def search(
        self,
        glon: np.ndarray,
        glat: np.ndarray,
        lon: float,
        lat: float,
        want: int,
        max_d: float,
        dir_arcs: tuple[np.ndarray, np.ndarray, bool],
        bearing: tuple[float, float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(segments, chains, local distances m, t) of the `want` nearest segments on distinct chains within `max_d`.

        `dir_arcs` = (arc along each chain, arc against it, whether some are masked out) from `Snapper._dir_arcs`."""
        out_p = np.empty(want, dtype=np.int64)
        out_d2 = np.empty(want, dtype=np.float64)
        out_t = np.empty(want, dtype=np.float64)
        k = _search(
            self.minx, self.miny, self.maxx, self.maxy, self.level_start, self.entry_seg, self.entry_chain,
            glon, glat, lon, lat, want, max_d * max_d, out_p, out_d2, out_t, dir_arcs[0], dir_arcs[1],
            -1.0 if bearing is None else bearing[0], 180.0 if bearing is None else bearing[1], dir_arcs[2], -1.0,
        )  # fmt: skip
        p = out_p[:k]
        return self.entry_seg[p], self.entry_chain[p], np.sqrt(out_d2[:k]), out_t[:k]


@dataclass(frozen=True)
class Candidates:
    """What snapping found for one point: its nearest segment, and its nearest segment in a big component.

    `big` is `nearest` itself when that is big, None when no big segment lies within the radius.
    """

    nearest: Phantom
    big: Phantom | None
    alternatives: tuple[Phantom, ...] = ()  # `nearest`'s point on other chains (OSRM's candidates at that point)

    @property
    def tiny(self) -> bool:
        return self.big is not self.nearest


def choose(cands: Sequence[Candidates]) -> list[Phantom]:
    """OSRM's rule for a whole request: the nearest segments when all lie in one tiny component (or no point has a
    big one), else each point's big-component segment where it has one."""
    if not cands:
        return []
    comps = {c.nearest.component for c in cands}
    same_tiny = len(comps) == 1 and cands[0].tiny
    if same_tiny or all(c.big is None for c in cands):
        chosen = [c.nearest for c in cands]
    else:
        chosen = [c.big if c.big is not None else c.nearest for c in cands]
    return _onto_next_chain(chosen, cands)


def _onto_next_chain(chosen: list[Phantom], cands: Sequence[Candidates]) -> list[Phantom]:
    """Each point with a candidate on the next point's chain moves onto it: OSRM takes every segment at a point as
    a candidate, so a leg from a junction to a point on one of its roads runs along that road alone."""
    out = list(chosen)
    for i in range(len(out) - 1):
        if out[i] is not cands[i].nearest or out[i].chain == out[i + 1].chain:
            continue
        alt = next((a for a in cands[i].alternatives if a.chain == out[i + 1].chain), None)
        if alt is not None:
            out[i] = alt
    return out


class Snapper:
    """Spatial index over every snappable geometry-chain segment; immutable and thread-safe once built.

    `min_component_size`: strongly connected components with fewer nodes are tiny (the largest too, as in OSRM).

    >>> ph = Snapper(graph).snap(7.4200, 43.7350)  # doctest: +SKIP
    """

    def __init__(
        self, graph: Graph, chains: ChainIndex | None = None, min_component_size: int = MIN_COMPONENT_SIZE,
        hot_path: HotPath | None = None,
    ) -> None:  # fmt: skip
        t0 = time.perf_counter()
        self.graph = graph
        # one kernel call per point (`_snap_point`, `_nearest_point`) or step by step (`_steps`): the router's switch
        self.hot_path = hot_path if hot_path is not None else HotPath()
        self.chains = chains if chains is not None else chain_index(graph)
        self.min_component_size = int(min_component_size)
        self._glon = graph.geom_lon
        self._arc_time = graph.arc_duration
        none = np.zeros((0, 4), dtype=np.int32)  # graphs built before the per-segment values: split by length
        self._seg_weight = graph.geom_seg_weight if graph.has("geom_seg_weight") else none
        self._seg_time = graph.geom_seg_duration if graph.has("geom_seg_duration") else none
        self._glat = graph.geom_lat
        gf = np.asarray(graph.geom_first, dtype=np.int64)
        self._gf = gf
        ch = self.chains
        # OSRM's rule, with no exception for the largest component: where every component is tiny (a small map),
        # no point has a big alternative and each stays on its nearest segment
        self.big_chain = ch.snappable & (ch.component_size >= self.min_component_size)
        nseg = np.maximum(np.diff(gf) - 1, 0)
        nseg[~ch.snappable] = 0
        seg_chain = np.repeat(np.arange(len(nseg), dtype=np.int64), nseg)
        local = np.arange(seg_chain.shape[0], dtype=np.int64) - np.repeat(np.cumsum(nseg) - nseg, nseg)
        seg = gf[:-1][seg_chain] + local
        big = self.big_chain[seg_chain]
        self._big, self._tiny = (_Tree(seg[mask], seg_chain[mask], self._glon, self._glat) for mask in (big, ~big))
        b, t = self._big, self._tiny
        # the one-call kernels' first arguments: the trees, the geometry and the chains (`_kernel_arrays`)
        self._index_arrays = (
            b.minx, b.miny, b.maxx, b.maxy, b.level_start, b.entry_seg, b.entry_chain, t.minx, t.miny, t.maxx, t.maxy,
            t.level_start, t.entry_seg, t.entry_chain, self._glon, self._glat, gf, ch.fwd_arc, ch.bwd_arc,
            ch.first_node, ch.last_node, ch.component, ch.osrm_flip,
        )  # fmt: skip
        self.num_segments = int(seg.shape[0])
        self._no_start = no_start_arcs(graph)  # private service roads: no waypoint, but map matching
        self._masked: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray, bool]] = {}
        if self._no_start is None:
            self._masked[(0, True)] = (ch.fwd_arc, ch.bwd_arc, False)
        self._masked[(0, False)] = (ch.fwd_arc, ch.bwd_arc, False)
        self._closed: np.ndarray | None = None  # bool per arc: roads a custom model closed (`with_metric`)
        self.build_seconds = time.perf_counter() - t0

    def with_metric(self, graph: Graph, closed: np.ndarray | None) -> Snapper:
        """This snapper over `graph` (other weights, same shape): the same index, phantoms priced on the new arrays,
        and no point snapped onto a `closed` road arc (bool per arc, a custom model's closed roads)."""
        s = copy.copy(self)
        s.graph = graph
        s._arc_time = graph.arc_duration
        if graph.has("geom_seg_weight") and graph.has("geom_seg_duration"):  # a phantom's part of its segment
            s._seg_weight, s._seg_time = graph.geom_seg_weight, graph.geom_seg_duration
        s._closed = closed
        s._masked = {k: v for k, v in self._masked.items() if not v[2]} if closed is None else {}
        return s

    def _kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """The one-call kernels' array arguments (`_snap_point`, `_nearest_point`): the index, built once, then the
        metric's arrays, read now (a copy for another metric, `with_metric`, has its own)."""
        g = self.graph
        return (
            *self._index_arrays, g.arc_weight, g.arc_dist, g.arc_name, g.node_osm_id, self._arc_time, self._seg_weight,
            self._seg_time,
        )  # fmt: skip

    def _dir_arcs(self, exclude_mask: int, starts: bool = True) -> tuple[np.ndarray, np.ndarray, bool]:
        """The chain -> arc tables with arcs of excluded classes (`arc_flags & exclude_mask`), roads a custom model
        closed and, for waypoints (`starts`), roads that refuse them (`data.no_start_arcs`), replaced by -1."""
        got = self._masked.get((exclude_mask, starts))
        if got is None:
            flags = np.asarray(self.graph.arc_flags)
            out = []
            for arcs in (self.chains.fwd_arc, self.chains.bwd_arc):
                bad = (arcs >= 0) & ((flags[np.maximum(arcs, 0)] & exclude_mask) != 0)
                if self._closed is not None:
                    bad |= (arcs >= 0) & self._closed[np.maximum(arcs, 0)]
                if starts and self._no_start is not None:
                    bad |= (arcs >= 0) & self._no_start[np.maximum(arcs, 0)]
                out.append(np.where(bad, -1, arcs).astype(np.int32))
            got = self._masked[(exclude_mask, starts)] = (out[0], out[1], True)
        return got

    # -- queries ---------------------------------------------------------------------------------------------------

    def candidates(
        self,
        lon: float,
        lat: float,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
        any_edge: bool = False,
    ) -> Candidates:
        """The nearest segment within `radius_m` metres (None = unlimited) and the nearest big-component one.

        `bearing` = (degrees clockwise from north 0..360, tolerance 0..180) keeps only segments travelled that way
        (OSRM's `bearings`), and the phantom then allows only the matching direction(s). `NoSegment` when nothing lies
        within the radius; its message gives the distance to the nearest road when a radius excluded it. With
        `exclude_mask`, arcs whose `arc_flags` meet it are no roads here (excluded classes, as OSRM's nearest);
        `any_edge` (OSRM's `snapping=any`): roads that refuse waypoints are candidates too (`data.no_start_arcs`).
        """
        qlon, qlat = check_coordinate(lon, lat)
        radius = check_radius(radius_m)
        bearing = check_bearing(bearing)
        limit = math.inf if radius is None else radius * 1.01 + 1.0  # local frame vs haversine slack
        dirs = self._dir_arcs(exclude_mask, not any_edge)
        found = (self._one_call if self.hot_path.fused else self._steps)(qlon, qlat, radius, limit, bearing, dirs)
        if not found:
            raise NoSegment(self._no_segment_message(qlon, qlat, radius, bearing, dirs))
        best = min(found, key=lambda x: (x[0], x[2].chain))
        nearest, alternatives = self._with_others(best[2], best[3], qlon, qlat, bearing, dirs)
        big = next((f[2] for f in found if f[1] == 0), None)
        if best[1] == 0:
            big = nearest
        return Candidates(nearest, big, alternatives)

    def _one_call(
        self,
        qlon: float,
        qlat: float,
        radius: float | None,
        limit: float,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool],
    ) -> list[_Found]:
        """`candidates`' hits, big tree first (distance, tree, phantom, other chains there), in one kernel call."""
        got_k, dist, chain, seg, f_fig, i_fig, o_rows, nb = _snap_point(
            *self._kernel_arrays(), qlon, qlat, OSRM_NEAR_CHAINS, limit, -1.0 if radius is None else radius,
            dirs[0], dirs[1], -1.0 if bearing is None else bearing[0], 180.0 if bearing is None else bearing[1],
            dirs[2], OSRM_SLACK_M, bearing is None, True,
        )  # fmt: skip
        found: list[_Found] = []
        rows = o_rows.tolist()
        for k in (0, 1):
            if got_k[k]:
                r = f_fig[k].tolist() + i_fig[k].tolist()
                ph = self._finish(qlon, qlat, int(seg[k]), int(chain[k]), r, bearing, dirs)
                part = rows[:nb] if k == 0 else rows[nb:]
                found.append((float(dist[k]), k, ph, [(int(a), int(b), c) for a, b, c in part]))
        return found

    def _steps(
        self,
        qlon: float,
        qlat: float,
        radius: float | None,
        limit: float,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool],
    ) -> list[_Found]:
        """`_one_call`'s hits from its kernels called one by one (a first start serves so until `_snap_point` is
        compiled)."""
        found: list[_Found] = []
        for k, tree in enumerate((self._big, self._tiny)):
            if found:  # a tiny segment matters only where it is no farther than the big one (ties: chain order)
                limit = min(limit, found[0][0] * (1 + 1e-9) + 1e-9)
            n, seg, chain, d, ratio, o_seg, o_chain, o_ratio = _nearest_osrm(
                tree.minx, tree.miny, tree.maxx, tree.maxy, tree.level_start, tree.entry_seg, tree.entry_chain,
                self._glon, self._glat, self._gf, qlon, qlat, OSRM_NEAR_CHAINS, limit * limit, dirs[0], dirs[1],
                -1.0 if bearing is None else bearing[0], 180.0 if bearing is None else bearing[1], dirs[2],
                OSRM_SLACK_M,
            )  # fmt: skip
            if n > 0:
                ph = self._phantom(qlon, qlat, int(seg), int(chain), float(ratio), bearing, dirs, True)
                if radius is None or ph.distance_m <= radius:
                    others = list(zip(o_seg.tolist(), o_chain.tolist(), o_ratio.tolist(), strict=True))
                    found.append((float(d), k, ph, others))
        return found

    def warm(self) -> None:
        """Load (or compile) `_snap_point` and `_nearest_point`: one point snapped, and its nearest, in one call
        each, whatever the switch (`hot_path`) says."""
        if self._glon.shape[0]:
            lon, lat = float(self._glon[0]) / COORD_SCALE, float(self._glat[0]) / COORD_SCALE
            self._one_call(lon, lat, None, math.inf, None, self._dir_arcs(0))
            self._nearest_one_call(lon, lat, 1, math.inf, None, self._dir_arcs(0))

    def _at_chain_end(self, ph: Phantom) -> bool:
        """Whether the phantom is on its chain's first or last point at 1e-6 degrees (as `SearchSpace.at_chain_end`)."""
        return chain_end_kind(self._glon, self._glat, self._gf, ph.chain, ph.lon, ph.lat) != 0

    def _with_others(
        self,
        ph: Phantom,
        others: list[tuple[int, int, float]],
        qlon: float,
        qlat: float,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool],
    ) -> tuple[Phantom, tuple[Phantom, ...]]:
        """A phantom on a chain end node with the chains OSRM takes as candidates there (`Phantom.at_chains`: the
        junction rule leaves or reaches the node by those roads only), and its other candidates as phantoms."""
        ch = self.chains
        if ph.fwd_arc != ch.fwd_arc[ph.chain] or ph.bwd_arc != ch.bwd_arc[ph.chain] or bearing is not None:
            return ph, ()  # a bearing restricted its directions: no junction rule
        if not others and not self._at_chain_end(ph):
            return ph, ()  # inside its chain, the only candidate there
        chains = tuple(sorted({ph.chain, *(o[1] for o in others)}))
        ph = replace(ph, at_chains=chains)
        alts = tuple(
            replace(self._phantom(qlon, qlat, seg, chain, r, None, dirs, True), at_chains=chains)
            for seg, chain, r in others
        )
        return ph, alts

    def snap(
        self,
        lon: float,
        lat: float,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
    ) -> Phantom:
        """The phantom at the nearest snappable segment within `radius_m` metres (None = unlimited), any component.

        Routes between several points should snap them together (`choose` over `candidates`), so that a point next
        to a tiny component still reaches the main network.
        """
        return self.candidates(lon, lat, radius_m, bearing, exclude_mask).nearest

    def nearest_distance_m(
        self,
        lon: float,
        lat: float,
        bearing: tuple[float, float] | None = None,
        dirs: tuple[np.ndarray, np.ndarray, bool] | None = None,
    ) -> float | None:
        """Metres from a point to the nearest snappable segment, whatever the distance (None: the graph has none)."""
        best = None
        dirs = dirs or self._dir_arcs(0)
        for tree in (self._big, self._tiny):
            s, c, d, t = tree.search(self._glon, self._glat, lon, lat, 1, math.inf, dirs, bearing)
            if len(s):
                ph = self._phantom(lon, lat, int(s[0]), int(c[0]), float(t[0]), bearing, dirs)
                best = ph.distance_m if best is None else min(best, ph.distance_m)
        return best

    def _no_segment_message(
        self,
        lon: float,
        lat: float,
        radius: float | None,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool] | None = None,
    ) -> str:
        what = "no road segment" + ("" if bearing is None else f" travelled at bearing {bearing[0]:g}±{bearing[1]:g}")
        if radius is None:
            return f"{what} in the graph for ({lon}, {lat})"
        d = self.nearest_distance_m(lon, lat, bearing, dirs)
        tail = "" if d is None else f"; the nearest is {_human_m(d)} away"
        if abs(lon) <= 90 and (lat, lon) != (lon, lat):  # the other order lands on the map: say so
            swapped = self.nearest_distance_m(lat, lon, None, None)
            if swapped is not None and swapped <= radius:
                tail += f"; did you swap them? ({lat}, {lon}) is {_human_m(swapped)} from a road (order: lon,lat)"
        return f"{what} within {radius:g} m of ({lon}, {lat}){tail}"

    def nearest(
        self,
        lon: float,
        lat: float,
        number: int = 1,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
    ) -> list[Phantom]:
        """Up to `number` phantoms on distinct chains, nearest first (any component), within `radius_m` if given;
        never on roads that refuse waypoints (osrm-routed's nearest has no `snapping=any`)."""
        qlon, qlat = check_coordinate(lon, lat)
        radius = check_radius(radius_m)
        bearing = check_bearing(bearing)
        if not isinstance(number, (int, np.integer)) or isinstance(number, bool) or number < 1:
            raise InvalidValue(f"number must be an integer >= 1, not {number!r}")
        limit = math.inf if radius is None else radius * 1.01 + 1.0
        dirs = self._dir_arcs(exclude_mask)
        if self.hot_path.fused:
            out = self._nearest_one_call(qlon, qlat, int(number), limit, bearing, dirs)
        else:
            hits: list[tuple[float, int, int, float]] = []
            for tree in (self._big, self._tiny):
                s, c, d, t = tree.search(self._glon, self._glat, qlon, qlat, int(number), limit, dirs, bearing)
                hits.extend((float(d[i]), int(c[i]), int(s[i]), float(t[i])) for i in range(len(s)))
            hits.sort()
            out = [self._phantom(qlon, qlat, h[2], h[1], h[3], bearing, dirs) for h in hits[: int(number)]]
        out = [p for p in out if radius is None or p.distance_m <= radius]
        if not out:
            raise NoSegment(self._no_segment_message(qlon, qlat, radius, bearing, dirs))
        return out

    def _nearest_one_call(
        self,
        qlon: float,
        qlat: float,
        number: int,
        limit: float,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool],
    ) -> list[Phantom]:
        """`nearest`'s phantoms (before the radius check) from `_nearest_point`: the steps' in one kernel call."""
        m, segs, chains, f_fig, i_fig = _nearest_point(
            *self._kernel_arrays(), qlon, qlat, number, limit, dirs[0], dirs[1],
            -1.0 if bearing is None else bearing[0], 180.0 if bearing is None else bearing[1], dirs[2], bearing is None,
            False,
        )  # fmt: skip
        segs_l, chains_l, f_l, i_l = segs.tolist(), chains.tolist(), f_fig.tolist(), i_fig.tolist()
        if bearing is None and not dirs[2]:  # both directions as they are: `_finish`'s Phantoms, built at once
            local, string = (segs - self._gf[chains]).tolist(), self.graph.string
            return [
                new_phantom(qlon, qlat, *f_l[i], chains_l[i], local[i], *i_l[i][:11], string(i_l[i][11]),
                            (i_l[i][12], i_l[i][13]), *i_l[i][14:])
                for i in range(int(m))
            ]  # fmt: skip
        return [self._finish(qlon, qlat, segs_l[i], chains_l[i], f_l[i] + i_l[i], bearing, dirs) for i in range(int(m))]

    def offset_m(self, ph: Phantom) -> float:
        """Metres along the phantom's chain from its first point to the snapped point."""
        p0, p1 = int(self._gf[ph.chain]), int(self._gf[ph.chain + 1])
        return _chain_offset(self._glon, self._glat, p0, p1, ph.segment, ph.lon, ph.lat)[0]

    def at_end(self, qlon: float, qlat: float, chain: int, last: bool) -> Phantom:
        """The phantom of a point on `chain`'s first (or `last`) point, on that road alone: OSRM's candidate there."""
        seg = int(self._gf[chain + 1]) - 2 if last else int(self._gf[chain])
        return replace(self._phantom(qlon, qlat, seg, chain, 1.0 if last else 0.0), at_chains=())

    # -- internals -------------------------------------------------------------------------------------------------

    def _phantom(
        self,
        qlon: float,
        qlat: float,
        seg: int,
        chain: int,
        t: float,
        bearing: tuple[float, float] | None = None,
        dirs: tuple[np.ndarray, np.ndarray, bool] | None = None,
        osrm_point: bool = False,
    ) -> Phantom:
        """The phantom at parameter t of segment `seg` (a global point index) of `chain`; with `osrm_point`, t is
        OSRM's ratio (`osrm_rank`) and the point is OSRM's."""
        g, ch = self.graph, self.chains
        if bearing is None:  # on an inner point of the chain: the segment OSRM keeps there
            seg, t = _osrm_vertex(self._glon, self._glat, self._gf, ch.osrm_flip, seg, chain, t)
        r = _phantom_figures(
            self._glon, self._glat, self._gf, ch.fwd_arc, ch.bwd_arc, ch.first_node, ch.last_node, ch.component,
            ch.osrm_flip, g.arc_weight, g.arc_dist, g.arc_name, g.node_osm_id, chain, seg - int(self._gf[chain]), t,
            qlon, qlat, self._arc_time, self._seg_weight, self._seg_time, osrm_point,
        )  # fmt: skip
        return self._finish(qlon, qlat, seg, chain, r, bearing, dirs)

    def _finish(
        self,
        qlon: float,
        qlat: float,
        seg: int,
        chain: int,
        r: Sequence[Any],
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool] | None,
    ) -> Phantom:
        """The Phantom of `_phantom_figures`' figures `r` at global segment `seg` of `chain`, with only the
        directions the bearing and the excluded classes allow."""
        g, ch = self.graph, self.chains
        masked = dirs is not None and dirs[2]
        if bearing is not None or masked:  # only the direction(s) the bearing and the excluded classes allow
            fwd, bwd = (dirs[0], dirs[1]) if masked else (ch.fwd_arc, ch.bwd_arc)  # type: ignore[index]
            b = bearing if bearing is not None else (-1.0, 180.0)
            allowed = segment_directions(seg, chain, qlat, self._glon, self._glat, fwd, bwd, *b)
            r = list(r)
            if not allowed & 1:
                r[3], r[5], r[6], r[7], r[8], r[17], r[18] = -1, 0, 0, 0, 0, 0, 0
            if not allowed & 2:
                r[4], r[9], r[10], r[11], r[12], r[19], r[20] = -1, 0, 0, 0, 0, 0, 0
        return new_phantom(
            qlon, qlat, r[0], r[1], r[2], chain, seg - int(self._gf[chain]), r[3], r[4], r[5], r[6], r[7], r[8],
            r[9], r[10], r[11], r[12], r[13], g.string(r[14]), (r[15], r[16]), r[17], r[18], r[19], r[20],
        )  # fmt: skip

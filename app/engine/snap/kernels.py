"""The snapping kernels: a waypoint's nearest segment as OSRM picks it, and a point's nearest ones, each in one call.

`_snap_point` (`Snapper.candidates`) and `_nearest_point` (`Snapper.nearest`) take the index and the metric as two
NamedTuples (`app.engine.snap.index.SnapIndex`, `SnapMetric`, built once per graph and per metric) and the query's
scalars; `_nearest_osrm` and `_osrm_vertex` are the steps a first start calls one by one until those are compiled.
"""

from __future__ import annotations

import math

import numpy as np

from app.engine.snap.index import _search
from app.engine.snap.osrm_snap import _osrm_pick, _phantom_figures
from floor.format.units import COORD_SCALE
from floor.kernels.geometry import osrm_fixed
from floor.kernels.jit import kernel


@kernel
def _nearest_osrm(
    tree, glon, glat, gf, qlon, qlat, want, max_d2, chain_fwd, chain_bwd, bearing, brange, check_dirs, slack,
):  # fmt: skip  # pragma: no cover - numba
    """`_search` for the `want` nearest segments, then `_osrm_pick`'s choice among them, in one call: (how many
    were found, the chosen segment, its chain, local distance m and OSRM ratio, and the other chains' segments,
    chains and ratios at the same point); nothing chosen when none was found."""
    out_p = np.empty(want, dtype=np.int64)
    out_d2 = np.empty(want, dtype=np.float64)
    out_t = np.empty(want, dtype=np.float64)
    k = _search(
        tree, glon, glat, qlon, qlat, want, max_d2, out_p, out_d2, out_t, chain_fwd, chain_bwd, bearing, brange,
        check_dirs, slack,
    )  # fmt: skip
    entry_seg, entry_chain = tree.entry_seg, tree.entry_chain
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
def _figures_at(ix, mt, sg, c, t, qlon, qlat, at_vertex, osrm_point):  # pragma: no cover - numba
    """(global segment, `_phantom_figures`) of a hit at parameter t of segment `sg` of chain `c`, on the segment OSRM
    keeps at an inner point of the chain first when `at_vertex` (`_osrm_vertex`); `ix` a `SnapIndex`, `mt` a
    `SnapMetric`."""
    gf = ix.gf
    if at_vertex:
        sg, t = _osrm_vertex(ix.glon, ix.glat, gf, ix.osrm_flip, sg, c, t)
    r = _phantom_figures(ix, mt, c, sg - gf[c], t, qlon, qlat, osrm_point)
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
    ix, mt, qlon, qlat, want, limit, radius, chain_fwd, chain_bwd, bearing, brange, check_dirs, slack, at_vertex, yes,
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
            (ix.big, ix.tiny)[k], ix.glon, ix.glat, ix.gf, qlon, qlat, want, limit * limit, chain_fwd, chain_bwd,
            bearing, brange, check_dirs, slack,
        )  # fmt: skip
        if n == 0:
            continue
        sg, r = _figures_at(ix, mt, sg, c, ratio, qlon, qlat, at_vertex, yes)
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
    ix, mt, qlon, qlat, want, limit, chain_fwd, chain_bwd, bearing, brange, check_dirs, at_vertex, no,
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
        tree = (ix.big, ix.tiny)[k]
        found = _search(  # one call site: one copy of it to compile
            tree, ix.glon, ix.glat, qlon, qlat, want, max_d2, out_p, out_d2, out_t, chain_fwd, chain_bwd, bearing,
            brange, check_dirs, -1.0,
        )  # fmt: skip
        entry_seg = tree.entry_seg
        entry_chain = tree.entry_chain
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
        sg, r = _figures_at(ix, mt, hs[h], c, ht[h], qlon, qlat, at_vertex, no)
        segs[i] = sg
        chains[i] = c
        _put_figures(f_fig, i_fig, i, r)
    return m, segs, chains, f_fig, i_fig

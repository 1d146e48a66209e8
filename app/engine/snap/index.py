"""The snapping index: packed Hilbert R-trees over geometry-chain segments and their best-first search.

`Tree` builds one tree (OSRM's `StaticRTree`: 16 per leaf, 16 children per inner node, boxes in the graph's int32
fixed-point coordinates) and holds its arrays as one `TreeArrays`; `_search` finds a point's nearest segments in it
(see `app.engine.snap.snapper` for the order and the frame). `SnapIndex` (both trees, the geometry and the chains:
built once per graph) and `SnapMetric` (the arrays a phantom's figures read that depend on the weights: built once
per metric) are what the snapping kernels (`app.engine.snap.kernels`) take instead of some thirty arrays each.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from floor.format.units import COORD_SCALE, EARTH_RADIUS_M
from floor.kernels.geometry import hilbert_index
from floor.kernels.heap import heap_pop, heap_push
from floor.kernels.jit import kernel

FANOUT = 16  # entries per leaf and children per inner node
_DEG = math.pi / 180.0
_KY = EARTH_RADIUS_M * _DEG / COORD_SCALE  # metres per fixed-point unit of latitude


class TreeArrays(NamedTuple):
    """One packed R-tree as `_search` reads it: the boxes of every tree node level by level, then its entries."""

    minx: np.ndarray  # float64 [nodes] box per tree node (fixed-point)
    miny: np.ndarray
    maxx: np.ndarray
    maxy: np.ndarray
    level_start: np.ndarray  # int64 [levels + 1]: the first node of each level (leaves first)
    entry_seg: np.ndarray  # int64 [entries] global segment (its first point's index)
    entry_chain: np.ndarray  # int32 [entries] its chain


class SnapIndex(NamedTuple):
    """What snapping reads that no metric changes (built once per graph, `Snapper`): both trees, the geometry and
    the chains (`app.engine.data.ChainIndex`)."""

    big: TreeArrays  # segments of big components
    tiny: TreeArrays  # ... of tiny ones
    glon: np.ndarray  # int32 geometry points (fixed-point)
    glat: np.ndarray
    gf: np.ndarray  # int64 [chains + 1] first point of each chain
    fwd_arc: np.ndarray  # per chain: its arc along it (-1: none)
    bwd_arc: np.ndarray  # ... against it
    first_node: np.ndarray
    last_node: np.ndarray
    component: np.ndarray
    osrm_flip: np.ndarray


class SnapMetric(NamedTuple):
    """The arrays a phantom's figures read that a metric (a custom model, a reloaded metric) changes: built once
    per metric (`Snapper`, `Snapper.with_metric`)."""

    arc_weight: np.ndarray
    arc_dist: np.ndarray
    arc_name: np.ndarray
    node_osm_id: np.ndarray
    arc_time: np.ndarray
    seg_weight: np.ndarray  # per segment (graphs before them: [0, 4], split by length)
    seg_time: np.ndarray


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
    tree, glon, glat, qlon, qlat, want, max_d2, out_seg, out_d2, out_t, chain_fwd, chain_bwd, bearing, brange,
    check_dirs, near_slack,
):  # fmt: skip  # pragma: no cover - numba
    """Best-first search: the `want` nearest segments on distinct chains within sqrt(max_d2) local metres; with
    `near_slack` >= 0, only those within that many metres of the nearest (and maybe a few beyond, never fewer).

    With `bearing` >= 0 only segments travelled within `brange` degrees of it (in a direction an arc allows) count;
    with `check_dirs`, segments with no arc in `chain_fwd`/`chain_bwd` (directions an excluded class removed) neither.

    Heap ids: inner/leaf nodes by their global index (>= 0), segment entries p as p - len(entry_seg) (< 0), so on
    equal keys segments pop first. Returns how many were found (written to out_*). `tree` is a `TreeArrays`.
    """
    minx, miny, maxx, maxy, level_start, entry_seg, entry_chain = tree
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


class Tree:
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
        self.arrays = TreeArrays(
            self.minx, self.miny, self.maxx, self.maxy, self.level_start, self.entry_seg, self.entry_chain
        )

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
            self.arrays, glon, glat, lon, lat, want, max_d * max_d, out_p, out_d2, out_t, dir_arcs[0], dir_arcs[1],
            -1.0 if bearing is None else bearing[0], 180.0 if bearing is None else bearing[1], dir_arcs[2], -1.0,
        )  # fmt: skip
        p = out_p[:k]
        return self.entry_seg[p], self.entry_chain[p], np.sqrt(out_d2[:k]), out_t[:k]

"""The states of map matching: per trace point its road candidates, as flat arrays
(`app.engine.features.hmm.Candidates`).

Per point, every snappable chain within its search radius (3 standard deviations, OSRM's `RADIUS_MULTIPLIER`), any
component, at most `MAX_CANDIDATES`, at its nearest point: both R-trees of the snapper searched and the figures
computed in one kernel call for the whole trace (`_hits`), as `Snapper.nearest` would give them one by one. A two-way
chain gives two candidates, one per direction, unless the trace turns sharply at the point (45 degrees or less
between the previous and the next point, a possible u-turn: OSRM's `filterCandidates`). Then each candidate's seeds
as the searches take them (`_seeds`): as a source and as a target (`app.engine.route.space`), and on an edge-based graph
as a target through its own arc. Phantom objects are made only for the candidates a matching keeps (`phantom`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from app.engine.features.hmm import OWN_ARC, Candidates, emission_log_p
from app.engine.route.edges import SeedArrays, _edge_seeds
from app.engine.route.space import EdgeSpace, _seeds
from app.engine.snap.index import _search, segment_directions
from app.engine.snap.osrm_snap import _chain_offset, _phantom_figures
from app.engine.types import Phantom, new_phantom
from floor.format.units import COORD_SCALE
from floor.kernels.jit import kernel

if TYPE_CHECKING:
    from app.engine.router import Router

MAX_CANDIDATES = 32  # chains per point (OSRM keeps every chain in range; 3 x 30 m in a city centre can hold 50)
UTURN_ANGLE = 45.0  # OSRM: a turn this sharp (or sharper) at a point keeps its candidates two-way


def uturn_allowed(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Per point OSRM's test: the angle between the previous and the next point, measured in Web Mercator at this
    one, is at most 45 degrees (or at least 315): the trace may turn back here. Never at the ends, nor where a
    neighbour coincides with the point (OSRM: 180 degrees)."""
    n = len(lon)
    out = np.zeros(n, dtype=bool)
    if n < 3:
        return out
    y = np.degrees(np.log(np.tan(np.pi / 4 + np.radians(lat) / 2)))
    x0, x1, x2 = lon[:-2], lon[1:-1], lon[2:]
    y0, y1, y2 = y[:-2], y[1:-1], y[2:]
    same = ((x0 == x1) & (lat[:-2] == lat[1:-1])) | ((x1 == x2) & (lat[1:-1] == lat[2:]))
    angle = np.degrees(np.arctan2(y2 - y1, x2 - x1) - np.arctan2(y0 - y1, x0 - x1)) % 360.0
    out[1:-1] = ~same & ((angle <= UTURN_ANGLE) | (angle >= 360.0 - UTURN_ANGLE))
    return out


class CandidateSet:
    """The candidates of a trace's points: the arrays the model reads (`arrays`), and what making a `Phantom` of
    one needs (the figures of `_phantom_figures`, the segment, the input point)."""

    def __init__(self, router: Router, lon: np.ndarray, lat: np.ndarray, radius: np.ndarray, sigma: np.ndarray,
                 bearings: Sequence[tuple[float, float] | None] | None, exclude_mask: int) -> None:  # fmt: skip
        snapper = router.snapper
        fwd_arcs, bwd_arcs, masked = snapper._dir_arcs(exclude_mask, starts=False)  # OSRM matches on every edge
        n = len(lon)
        bearing = np.full(n, -1.0)
        brange = np.full(n, 180.0)
        for i, b in enumerate(bearings or ()):
            if b is not None:
                bearing[i], brange[i] = b
        point, chain, seg, fig, offset, at = _hits(
            snapper.index, snapper.metric, fwd_arcs, bwd_arcs, masked, np.ascontiguousarray(lon, dtype=np.float64),
            np.ascontiguousarray(lat, dtype=np.float64), np.ascontiguousarray(radius, dtype=np.float64), bearing,
            brange, MAX_CANDIDATES,
        )  # fmt: skip
        # one candidate per direction of a two-way chain, unless the trace may turn back at its point
        both = (fig[:, 3] >= 0) & (fig[:, 4] >= 0) & ~uturn_allowed(lon, lat)[point]
        rows = np.repeat(np.arange(len(point)), np.where(both, 2, 1))
        second = np.zeros(len(rows), dtype=bool)
        second[1:] = rows[1:] == rows[:-1]
        fig = fig[rows].copy()
        fwd_only = both[rows] & ~second
        bwd_only = both[rows] & second
        fig[fwd_only, 4] = -1
        fig[np.ix_(fwd_only, [9, 10, 11, 12, 19, 20])] = 0
        fig[bwd_only, 3] = -1
        fig[np.ix_(bwd_only, [5, 6, 7, 8, 17, 18])] = 0
        point, chain, seg, offset, at = point[rows], chain[rows], seg[rows], offset[rows], at[rows]
        at[both[rows]] = -1  # a one-way copy of a two-way chain is no longer on its end node in every direction
        order = np.lexsort((np.arange(len(point)), fig[:, 2], point))  # per point nearest first, forward first
        self.point, self.chain, self.seg = point[order], chain[order], seg[order]
        self.fig, self.offset, self.at = fig[order], offset[order], at[order]
        self.input_lon, self.input_lat = lon, lat
        self.first = np.searchsorted(self.point, np.arange(n + 1)).astype(np.int64)
        self.router = router
        self.sigma = sigma

    def __len__(self) -> int:
        return int(self.point.shape[0])

    def counts(self) -> np.ndarray:
        """Candidates per point."""
        return np.diff(self.first)

    def subset(self, points: np.ndarray) -> CandidateSet:
        """The candidates of `points` only (increasing indices), renumbered 0..len(points)-1."""
        out = object.__new__(CandidateSet)
        keep = np.concatenate([np.arange(self.first[p], self.first[p + 1]) for p in points]).astype(np.int64)
        remap = np.full(len(self.first) - 1, -1, dtype=np.int64)
        remap[points] = np.arange(len(points))
        out.point = remap[self.point[keep]]
        out.chain, out.seg, out.fig = self.chain[keep], self.seg[keep], self.fig[keep]
        out.offset, out.at = self.offset[keep], self.at[keep]
        out.input_lon, out.input_lat = self.input_lon[points], self.input_lat[points]
        out.first = np.searchsorted(out.point, np.arange(len(points) + 1)).astype(np.int64)
        out.router = self.router
        out.sigma = self.sigma[points]
        return out

    def arrays(self) -> Candidates:
        """The model's view: emissions, positions, directions, seeds."""
        r, f = self.router, self.fig
        space = r.space
        kind = f[:, 3:5].astype(np.int64)
        before = np.stack([f[:, 5], f[:, 7], f[:, 17], f[:, 9], f[:, 11], f[:, 19]], axis=1).astype(np.int64)
        after = np.stack([f[:, 6], f[:, 8], f[:, 18], f[:, 10], f[:, 12], f[:, 20]], axis=1).astype(np.int64)
        at_kind = np.where(self.at >= 0, np.where(self.at_first(), 2, 3), 0).astype(np.int64)
        g = r.graph
        if isinstance(space, EdgeSpace):
            e = space.edges
            graph_args = (True, e.seed_arrays, g.arc_head, g.arc_tail)
        else:
            z32, z64 = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int64)
            none = SeedArrays(z32, z32, z32, g.arc_weight, g.arc_dist, g.arc_duration, z64, z32, False, z32, z32, z32,
                              z32, z32)  # fmt: skip
            graph_args = (False, none, g.arc_head, g.arc_tail)
        seeds = _seeds_all(np.ascontiguousarray(kind[:, 0]), np.ascontiguousarray(kind[:, 1]), before, after, self.at,
                           at_kind, *graph_args)  # fmt: skip
        em = emission_log_p(f[:, 2].astype(np.float64), self.sigma[self.point])
        lon = np.ascontiguousarray(f[:, 0])
        lat = np.ascontiguousarray(f[:, 1])
        return Candidates(self.first, em, lon, lat, self.chain, self.offset, np.ascontiguousarray(kind[:, 0]),
                          np.ascontiguousarray(kind[:, 1]), before, *seeds)  # fmt: skip

    def at_first(self) -> np.ndarray:
        """Whether a candidate on a chain end node sits on the chain's first node (else its last)."""
        return self.at == self.router.snapper.chains.first_node[self.chain]

    def phantoms(self, ks: Sequence[int]) -> list[Phantom]:
        """Candidates `ks` as Phantoms (what legs and the answer take)."""
        idx = np.asarray(ks, dtype=np.int64)
        chain = self.chain[idx]
        seg = (self.seg[idx] - self.router.snapper._gf[chain]).tolist()
        floats = self.fig[idx, :3].tolist()
        ints = self.fig[idx, 3:].astype(np.int64).tolist()
        lon, lat = self.input_lon[self.point[idx]].tolist(), self.input_lat[self.point[idx]].tolist()
        string = self.router.graph.string
        names = {i: string(i) for i in set(self.fig[idx, 14].astype(np.int64).tolist())}
        out = []
        for i, c in enumerate(chain.tolist()):
            (x, y, d), f = floats[i], ints[i]
            out.append(new_phantom(
                lon[i], lat[i], x, y, d, c, seg[i], f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10],
                names[f[11]], (f[12], f[13]), f[14], f[15], f[16], f[17],
            ))  # fmt: skip
        return out


@kernel
def _hits(ix, mt, dir_fwd, dir_bwd, masked, qlon, qlat, radius, bearing, brange, want):  # pragma: no cover - numba
    """Per point the `want` nearest chains within `radius` m of both trees (as `Snapper.nearest`): (point, chain,
    segment, figures [k, 21] as float64, metres along the chain, the chain end node it sits on or -1). `ix` and `mt`
    are the snapper's `SnapIndex` and `SnapMetric`."""
    glon, glat, gf, chain_fwd, chain_bwd = ix.glon, ix.glat, ix.gf, ix.fwd_arc, ix.bwd_arc
    first_node, last_node = ix.first_node, ix.last_node
    b_seg, b_chain, t_seg, t_chain = ix.big.entry_seg, ix.big.entry_chain, ix.tiny.entry_seg, ix.tiny.entry_chain
    n = qlon.shape[0]
    cap = n * want
    point = np.empty(cap, dtype=np.int64)
    chain = np.empty(cap, dtype=np.int64)
    seg = np.empty(cap, dtype=np.int64)
    fig = np.empty((cap, 21), dtype=np.float64)
    offset = np.empty(cap, dtype=np.float64)
    at = np.empty(cap, dtype=np.int64)
    o_seg = np.empty(2 * want, dtype=np.int64)
    o_d2 = np.empty(2 * want, dtype=np.float64)
    o_t = np.empty(2 * want, dtype=np.float64)
    o_chain = np.empty(2 * want, dtype=np.int64)
    k = 0
    for i in range(n):
        limit = radius[i] * 1.01 + 1.0  # the local frame against the haversine check below
        nb = _search(ix.big, glon, glat, qlon[i], qlat[i], want, limit * limit, o_seg, o_d2, o_t, dir_fwd, dir_bwd,
                     bearing[i], brange[i], masked, -1.0)  # fmt: skip
        for j in range(nb):
            o_chain[j] = b_chain[o_seg[j]]
            o_seg[j] = b_seg[o_seg[j]]
        nt = _search(ix.tiny, glon, glat, qlon[i], qlat[i], want, limit * limit, o_seg[nb:], o_d2[nb:], o_t[nb:],
                     dir_fwd, dir_bwd, bearing[i], brange[i], masked, -1.0)  # fmt: skip
        for j in range(nb, nb + nt):
            o_chain[j] = t_chain[o_seg[j]]
            o_seg[j] = t_seg[o_seg[j]]
        m = nb + nt
        for a in range(1, m):  # by distance, then chain (insertion: a few dozen hits)
            b = a
            while b > 0 and (o_d2[b - 1] > o_d2[b] or (o_d2[b - 1] == o_d2[b] and o_chain[b - 1] > o_chain[b])):
                o_d2[b - 1], o_d2[b] = o_d2[b], o_d2[b - 1]
                o_t[b - 1], o_t[b] = o_t[b], o_t[b - 1]
                o_seg[b - 1], o_seg[b] = o_seg[b], o_seg[b - 1]
                o_chain[b - 1], o_chain[b] = o_chain[b], o_chain[b - 1]
                b -= 1
        for j in range(min(m, want)):
            c = o_chain[j]
            s = o_seg[j]
            r = _phantom_figures(ix, mt, c, s - gf[c], o_t[j], qlon[i], qlat[i], False)
            if r[2] > radius[i]:
                continue
            fig[k, 0], fig[k, 1], fig[k, 2], fig[k, 3], fig[k, 4] = r[0], r[1], r[2], r[3], r[4]
            fig[k, 5], fig[k, 6], fig[k, 7], fig[k, 8], fig[k, 9] = r[5], r[6], r[7], r[8], r[9]
            fig[k, 10], fig[k, 11], fig[k, 12], fig[k, 13], fig[k, 14] = r[10], r[11], r[12], r[13], r[14]
            fig[k, 15], fig[k, 16], fig[k, 17], fig[k, 18], fig[k, 19] = r[15], r[16], r[17], r[18], r[19]
            fig[k, 20] = r[20]
            if bearing[i] >= 0.0 or masked:  # only the direction(s) the bearing and the excluded classes allow
                f_arcs = dir_fwd if masked else chain_fwd
                b_arcs = dir_bwd if masked else chain_bwd
                allowed = segment_directions(s, c, qlat[i], glon, glat, f_arcs, b_arcs, bearing[i], brange[i])
                if not allowed & 1:
                    fig[k, 3] = -1
                    for x in (5, 6, 7, 8, 17, 18):
                        fig[k, x] = 0
                if not allowed & 2:
                    fig[k, 4] = -1
                    for x in (9, 10, 11, 12, 19, 20):
                        fig[k, x] = 0
            offset[k] = _chain_offset(glon, glat, gf[c], gf[c + 1], s - gf[c], r[0], r[1])[0]
            at[k] = -1
            if fig[k, 3] == chain_fwd[c] and fig[k, 4] == chain_bwd[c]:
                p0, p1 = gf[c], gf[c + 1] - 1
                if r[0] == glon[p0] / COORD_SCALE and r[1] == glat[p0] / COORD_SCALE:
                    at[k] = first_node[c]
                elif r[0] == glon[p1] / COORD_SCALE and r[1] == glat[p1] / COORD_SCALE:
                    at[k] = last_node[c]
            point[k] = i
            chain[k] = c
            seg[k] = s
            k += 1
    return point[:k].copy(), chain[:k].copy(), seg[:k].copy(), fig[:k].copy(), offset[:k].copy(), at[:k].copy()


@kernel
def _seeds_all(
    fwd, bwd, before, after, at, at_kind, edge_based, seed_arrays, arc_head, arc_tail
):  # fmt: skip  # pragma: no cover - numba
    """Every candidate's seeds as `app.engine.route.space` gives them: as a source, as a target through its own arc
    (on a
    node-based graph, or on a junction node: its target seeds), as a target by its seeds. CSR per kind; each seed's
    values: weight, dist, time, kind (FWD, BWD, AT_FIRST, AT_LAST; an own arc OWN_ARC + FWD/BWD), turn weight and
    time. `seed_arrays` is the `EdgeMap`'s `SeedArrays` (on a node-based graph: stand-ins but for the road
    figures)."""
    (road_first_out, road_in_first, road_in_arc, road_weight, road_dist, road_time, copies_first, copies, has_copies,
     in_first, in_arc, s_tail, arc_turn, arc_turn_time) = seed_arrays  # fmt: skip
    k = fwd.shape[0]
    firsts = [np.zeros(k + 1, dtype=np.int64) for _ in range(3)]
    nodes = [np.empty(16 * k + 16, dtype=np.int32) for _ in range(3)]
    vals = [np.empty((16 * k + 16, 6), dtype=np.int64) for _ in range(3)]
    used = [0, 0, 0]
    for c in range(k):
        for kind in range(3):
            as_source = kind == 0
            if kind == 1 and edge_based and at[c] < 0:  # the own arcs: minus the part after the point
                cnt = 0
                for side in range(2):
                    arc = fwd[c] if side == 0 else bwd[c]
                    if arc < 0:
                        continue
                    cnt += (copies_first[arc + 1] - copies_first[arc]) if has_copies else 1
                e_nodes = np.empty(cnt, dtype=np.int32)
                e_vals = np.zeros((cnt, 6), dtype=np.int64)
                cnt = 0
                for side in range(2):
                    arc = fwd[c] if side == 0 else bwd[c]
                    if arc < 0:
                        continue
                    lo, hi = (copies_first[arc], copies_first[arc + 1]) if has_copies else (0, 1)
                    for x in range(lo, hi):
                        e_nodes[cnt] = copies[x] if has_copies else arc
                        for v in range(3):
                            e_vals[cnt, v] = -after[c, 3 * side + v]
                        e_vals[cnt, 3] = OWN_ARC + side
                        cnt += 1
            else:
                fig = after[c] if as_source else before[c]
                if edge_based:
                    e_nodes, rows = _edge_seeds(
                        as_source, at[c], at_kind[c], fwd[c], fig[0], fig[1], fig[2], bwd[c], fig[3], fig[4],
                        fig[5], seed_arrays,
                    )  # fmt: skip
                    e_vals = rows.copy()
                else:
                    e_nodes, ws, ds, kinds = _seeds(as_source, fwd[c], bwd[c], fig[0], fig[1], fig[3], fig[4],
                                                    arc_head, arc_tail, at[c], at_kind[c])  # fmt: skip
                    e_vals = np.zeros((e_nodes.shape[0], 6), dtype=np.int64)
                    for x in range(e_nodes.shape[0]):
                        e_vals[x, 0], e_vals[x, 1], e_vals[x, 3] = ws[x], ds[x], kinds[x]
                        e_vals[x, 2] = fig[2] if kinds[x] == 0 else (fig[5] if kinds[x] == 1 else 0)
            cnt = e_nodes.shape[0]
            if used[kind] + cnt > nodes[kind].shape[0]:
                grow = max(2 * nodes[kind].shape[0], used[kind] + cnt)
                nn = np.empty(grow, dtype=np.int32)
                nv = np.empty((grow, 6), dtype=np.int64)
                for x in range(used[kind]):
                    nn[x] = nodes[kind][x]
                    for v in range(6):
                        nv[x, v] = vals[kind][x, v]
                nodes[kind] = nn
                vals[kind] = nv
            for x in range(cnt):
                nodes[kind][used[kind] + x] = e_nodes[x]
                for v in range(6):
                    vals[kind][used[kind] + x, v] = e_vals[x, v]
            used[kind] += cnt
            firsts[kind][c + 1] = used[kind]
    return (
        firsts[0], nodes[0][: used[0]].copy(), vals[0][: used[0]].copy(),
        firsts[1], nodes[1][: used[1]].copy(), vals[1][: used[1]].copy(),
        firsts[2], nodes[2][: used[2]].copy(), vals[2][: used[2]].copy(),
    )  # fmt: skip


def search_radii(sigmas: np.ndarray, multiplier: float) -> np.ndarray:
    """The search radius of each point: `multiplier` standard deviations (OSRM: 3)."""
    return np.asarray(sigmas, dtype=np.float64) * multiplier

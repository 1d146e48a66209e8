"""Many-to-many CH table with the bucket algorithm (Knopp et al.; OSRM's `/table`).

For every target, a complete backward upward search (stall-on-demand) drops (target, weight, dist) into the bucket of
each node it settles without stalling; then for every source a complete forward upward search scans the buckets of
the nodes it settles without stalling. The one-direction kernel is `app.engine.ch.settle_next`, the one `CHSearch`
uses, and candidates are compared as (weight, dist) pairs: every entry equals `CHSearch(graph).run(s, t)`'s weight and
`.distance` exactly (see the tie-break note in app.engine.ch).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .ch import INF, _lt, _Side, ch_arrays, init_seeds, seed_arrays, settle_next
from .types import Seeds

_STAMP_MAX = (2**31 - 1) // 3 - 2


@nb.njit(cache=True, nogil=True)
def _table(
    up_first: np.ndarray,
    up_head: np.ndarray,
    up_w: np.ndarray,
    up_d: np.ndarray,
    dn_first: np.ndarray,
    dn_tail: np.ndarray,
    dn_w: np.ndarray,
    dn_d: np.ndarray,
    s_ranks: np.ndarray,
    s_w: np.ndarray,
    s_d: np.ndarray,
    s_off: np.ndarray,
    t_ranks: np.ndarray,
    t_w: np.ndarray,
    t_d: np.ndarray,
    t_off: np.ndarray,
    lw: np.ndarray,
    ld: np.ndarray,
    state: np.ndarray,
    parc: np.ndarray,
    hw: np.ndarray,
    hd: np.ndarray,
    hn: np.ndarray,
    cur: int,
    counters: np.ndarray,
    out_w: np.ndarray,
    out_d: np.ndarray,
) -> tuple[int, int]:
    """Fill out_w/out_d [S, T]; returns (status, last stamp used). status -1 = the heap is full."""
    nup = up_head.shape[0]
    n_t = t_off.shape[0] - 1
    n_s = s_off.shape[0] - 1
    cap = 1024
    e_node = np.empty(cap, dtype=np.int32)
    e_t = np.empty(cap, dtype=np.int32)
    e_w = np.empty(cap, dtype=np.int64)
    e_d = np.empty(cap, dtype=np.int64)
    ne = 0
    for t in range(n_t):
        cur += 1
        base = 3 * cur
        lo, hi = t_off[t], t_off[t + 1]
        size = init_seeds(t_ranks[lo:hi], t_w[lo:hi], t_d[lo:hi], lw, ld, state, parc, hw, hd, hn, base)
        if size < 0:
            return -1, cur
        while True:
            size, v, status = settle_next(
                dn_first,
                dn_tail,
                dn_w,
                dn_d,
                nup,
                up_first,
                up_head,
                up_w,
                lw,
                ld,
                state,
                parc,
                hw,
                hd,
                hn,
                size,
                base,
                counters,
            )
            if status < 0:
                return -1, cur
            if status == 0:
                break
            if status == 1:
                if ne == cap:
                    cap *= 2
                    a = np.empty(cap, dtype=np.int32)
                    a[:ne] = e_node[:ne]
                    e_node = a
                    a = np.empty(cap, dtype=np.int32)
                    a[:ne] = e_t[:ne]
                    e_t = a
                    b = np.empty(cap, dtype=np.int64)
                    b[:ne] = e_w[:ne]
                    e_w = b
                    b = np.empty(cap, dtype=np.int64)
                    b[:ne] = e_d[:ne]
                    e_d = b
                e_node[ne] = v
                e_t[ne] = t
                e_w[ne] = lw[v]
                e_d[ne] = ld[v]
                ne += 1
    order = np.argsort(e_node[:ne], kind="mergesort")
    bn = e_node[:ne][order]
    bt = e_t[:ne][order]
    bw = e_w[:ne][order]
    bd = e_d[:ne][order]
    for s in range(n_s):
        cur += 1
        base = 3 * cur
        lo, hi = s_off[s], s_off[s + 1]
        size = init_seeds(s_ranks[lo:hi], s_w[lo:hi], s_d[lo:hi], lw, ld, state, parc, hw, hd, hn, base)
        if size < 0:
            return -1, cur
        while True:
            size, v, status = settle_next(
                up_first,
                up_head,
                up_w,
                up_d,
                0,
                dn_first,
                dn_tail,
                dn_w,
                lw,
                ld,
                state,
                parc,
                hw,
                hd,
                hn,
                size,
                base,
                counters,
            )
            if status < 0:
                return -1, cur
            if status == 0:
                break
            if status == 1:
                i = np.searchsorted(bn, v)
                fw = lw[v]
                fd = ld[v]
                while i < ne and bn[i] == v:
                    t = bt[i]
                    cw = fw + bw[i]
                    cd = fd + bd[i]
                    if _lt(cw, cd, out_w[s, t], out_d[s, t]):
                        out_w[s, t] = cw
                        out_d[s, t] = cd
                    i += 1
    return 0, cur


def _flatten(seeds: list[Seeds], rank: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    parts = [seed_arrays(s, rank) for s in seeds]
    off = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(p[0]) for p in parts], out=off[1:])
    if parts:
        r = np.concatenate([p[0] for p in parts]).astype(np.int32)
        w = np.concatenate([p[1] for p in parts]).astype(np.int64)
        d = np.concatenate([p[2] for p in parts]).astype(np.int64)
    else:
        r, w, d = np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return r, w, d, off


class CHTable:
    """One worker's many-to-many table object: `CHTable(graph).run(sources, targets) -> (weights, dists)`."""

    def __init__(self, graph: object) -> None:
        a = ch_arrays(graph)
        self._rank = a["ch_rank"]
        self._g = (
            a["ch_up_first"],
            a["ch_up_head"],
            a["ch_up_weight"],
            a["ch_up_dist"],
            a["ch_down_first"],
            a["ch_down_tail"],
            a["ch_down_weight"],
            a["ch_down_dist"],
        )
        self._side = _Side(int(len(self._rank)))
        self._cur = 0
        self.counters = np.zeros(2, dtype=np.int64)  # settled, relaxed of the last run

    def run(self, sources: list[Seeds], targets: list[Seeds]) -> tuple[np.ndarray, np.ndarray]:
        """int64 weights (ds) and distances (dm) [S, T]; INF_WEIGHT in both where a pair is unreachable."""
        s_r, s_w, s_d, s_off = _flatten(sources, self._rank)
        t_r, t_w, t_d, t_off = _flatten(targets, self._rank)
        side = self._side
        while True:
            if self._cur + len(sources) + len(targets) + 1 > _STAMP_MAX:
                side.state.fill(0)
                self._cur = 0
            out_w = np.full((len(sources), len(targets)), INF, dtype=np.int64)
            out_d = np.full((len(sources), len(targets)), INF, dtype=np.int64)
            self.counters[:] = 0
            status, self._cur = _table(
                *self._g,
                s_r,
                s_w,
                s_d,
                s_off,
                t_r,
                t_w,
                t_d,
                t_off,
                side.lw,
                side.ld,
                side.state,
                side.parc,
                side.hw,
                side.hd,
                side.hn,
                self._cur,
                self.counters,
                out_w,
                out_d,
            )
            if status == 0:
                return out_w, out_d
            side.grow(2 * len(side.hw))

"""The CCH customization: a metric on the search graph's arcs -> a contraction hierarchy in the `ch_*` layout.

A kernel module on the floor (like `heap`): a pure function of the format's arrays, which the engine
(`app.engine.search.cch`) and the offline tools (bench, a `customize` command) call alike. Input: the metric-independent
structure (`preprocessing.cch`: `cch_rank`, `cch_first`, `cch_head`, `cch_arc_of`) and per search arc a weight
(ds), distance (dm) and duration (ds), plus an optional mask of forbidden arcs (an excluded class set). Steps, all
over flat arrays:

1. **initial metric**: each CCH arc's up (lower -> higher rank) and down weight is its cheapest search arc that way
   (lexicographic (weight, dist), the smallest arc id on ties), INF where none;
2. **basic customization** (RoutingKit's order): for every arc x-y in order of its lower end x, for every upper
   triangle x < y < z (arcs x-z and y-z, a merge of the two sorted rows), relax y -> z through y -> x -> z and
   z -> y through z -> x -> y, recording the two halves for unpacking. When x is reached every lower triangle of
   x-y and x-z is done, so one pass makes each arc the shortest path through lower ranks;
3. **perfect customization** (optional): arcs in reverse order, every upper triangle relaxing the bottom and middle
   arc through the top; an arc that gets cheaper is no shortest path through lower ranks alone, and is dropped
   (so are INF arcs). The arcs its unpacking uses are never dropped (they are shortest paths themselves).
4. **layout**: the kept arcs as `ch_up_first`/`ch_up_arcs` (by lower rank: higher rank, weight, dist, duration),
   `ch_down_first`/`ch_down_arcs` (by lower rank: the higher rank it comes from, ...), `ch_unpack` (a search arc and
   -1, or the down CH arc and the up CH arc of the two halves), `ch_rank`, `ch_order`: what `CHSearch` and
   `CHTable` read, so every CH feature runs on any customized metric unchanged.

Labels are (weight, dist) compared lexicographically with the duration carried, like every hierarchy here. Weights
are stored int32 with `INF32` for "no path"; sums are formed in int64 and refused if they leave int32.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np
from numba import types as nt

from floor.kernels.jit import BOOL, I32, NONE, U8, arr, kernel

INF32 = np.int32(2**31 - 1)  # "no arc this way" in the customized weights

_RO32 = arr(I32, readonly=True)
_V32 = arr(I32)
_RO8 = arr(U8, readonly=True)


@kernel(NONE(_RO32, _RO32, _RO32, _RO32, _RO32, _RO32, _RO32, _RO8, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32))
def _initial(rank, arc_of, tail, head, w, d, t, forbidden, fw, fd, ft, fa, bw, bd, bt, ba):  # pragma: no cover
    """Step 1: the cheapest search arc each way of each CCH arc (`fa`/`ba`: its id), the first on ties."""
    nf = forbidden.shape[0]
    for e in range(arc_of.shape[0]):
        c = arc_of[e]
        if c < 0 or (nf > 0 and forbidden[e] != 0):
            continue
        if rank[tail[e]] < rank[head[e]]:
            if w[e] < fw[c] or (w[e] == fw[c] and d[e] < fd[c]):
                fw[c] = w[e]
                fd[c] = d[e]
                ft[c] = t[e]
                fa[c] = e
        else:
            if w[e] < bw[c] or (w[e] == bw[c] and d[e] < bd[c]):
                bw[c] = w[e]
                bd[c] = d[e]
                bt[c] = t[e]
                ba[c] = e


@kernel(BOOL(_RO32, _RO32, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32))
def _basic(first, head, fw, fd, ft, fa, fb, bw, bd, bt, ba, bb, inf):  # pragma: no cover - numba
    """Step 2 in place; `fa`/`fb` (`ba`/`bb`) get the halves of each improved up (down) arc: the CCH arc taken
    down, then the one taken up. Returns False when a sum leaves int32 (nothing is then usable)."""
    big = inf[0]
    n = first.shape[0] - 1
    ok = True
    for x in range(n):
        end_x = first[x + 1]
        for xy in range(first[x], end_x):
            if fw[xy] == big and bw[xy] == big:
                continue  # every relaxation below goes through x-y one way or the other
            y = head[xy]
            i = xy + 1
            j = first[y]
            end_y = first[y + 1]
            while i < end_x and j < end_y:
                hi = head[i]
                hj = head[j]
                if hi < hj:
                    i += 1
                elif hi > hj:
                    j += 1
                else:  # z = hi: x-z is arc i, y-z is arc j
                    if bw[xy] != big and fw[i] != big:  # y -> x -> z
                        nw = np.int64(bw[xy]) + fw[i]
                        nd = np.int64(bd[xy]) + fd[i]
                        if nw < fw[j] or (nw == fw[j] and nd < fd[j]):
                            nt = np.int64(bt[xy]) + ft[i]
                            if nw >= big or nd >= big or nt >= big:
                                ok = False
                            fw[j] = nw
                            fd[j] = nd
                            ft[j] = nt
                            fa[j] = xy
                            fb[j] = i
                    if bw[i] != big and fw[xy] != big:  # z -> x -> y
                        nw = np.int64(bw[i]) + fw[xy]
                        nd = np.int64(bd[i]) + fd[xy]
                        if nw < bw[j] or (nw == bw[j] and nd < bd[j]):
                            nt = np.int64(bt[i]) + ft[xy]
                            if nw >= big or nd >= big or nt >= big:
                                ok = False
                            bw[j] = nw
                            bd[j] = nd
                            bt[j] = nt
                            ba[j] = i
                            bb[j] = xy
                    i += 1
                    j += 1
    return ok


@kernel(NONE(_RO32, _RO32, _V32, _V32, _V32, _V32, _V32, arr(U8), arr(U8)))
def _perfect(first, head, fw, fd, bw, bd, inf, keep_f, keep_b):  # pragma: no cover - numba
    """Step 3 in place: perfect weights, and `keep_*` cleared for every arc they make cheaper (and INF ones)."""
    big = inf[0]
    n = first.shape[0] - 1
    tail_of = np.empty(head.shape[0], dtype=np.int32)
    for x in range(n):
        for e in range(first[x], first[x + 1]):
            tail_of[e] = x
    for e in range(head.shape[0]):
        keep_f[e] = 1 if fw[e] != big else 0
        keep_b[e] = 1 if bw[e] != big else 0
    for xy in range(head.shape[0] - 1, -1, -1):
        x = tail_of[xy]
        y = head[xy]
        i = xy + 1  # x-z
        end_x = first[x + 1]
        j = first[y]  # y-z
        end_y = first[y + 1]
        while i < end_x and j < end_y:
            hi = head[i]
            hj = head[j]
            if hi < hj:
                i += 1
            elif hi > hj:
                j += 1
            else:
                if fw[i] != big and bw[j] != big:  # x -> y via x -> z -> y
                    nw = np.int64(fw[i]) + bw[j]
                    nd = np.int64(fd[i]) + bd[j]
                    if nw < fw[xy] or (nw == fw[xy] and nd < fd[xy]):
                        fw[xy] = nw
                        fd[xy] = nd
                        keep_f[xy] = 0
                if fw[j] != big and bw[i] != big:  # y -> x via y -> z -> x
                    nw = np.int64(fw[j]) + bw[i]
                    nd = np.int64(fd[j]) + bd[i]
                    if nw < bw[xy] or (nw == bw[xy] and nd < bd[xy]):
                        bw[xy] = nw
                        bd[xy] = nd
                        keep_b[xy] = 0
                if fw[xy] != big and fw[j] != big:  # x -> z via x -> y -> z
                    nw = np.int64(fw[xy]) + fw[j]
                    nd = np.int64(fd[xy]) + fd[j]
                    if nw < fw[i] or (nw == fw[i] and nd < fd[i]):
                        fw[i] = nw
                        fd[i] = nd
                        keep_f[i] = 0
                if bw[j] != big and bw[xy] != big:  # z -> x via z -> y -> x
                    nw = np.int64(bw[j]) + bw[xy]
                    nd = np.int64(bd[j]) + bd[xy]
                    if nw < bw[i] or (nw == bw[i] and nd < bd[i]):
                        bw[i] = nw
                        bd[i] = nd
                        keep_b[i] = 0
                i += 1
                j += 1


def _ro(a: Any, dtype: type) -> np.ndarray:
    out = np.ascontiguousarray(a, dtype=dtype).view(np.ndarray)
    out.flags.writeable = False
    return out


def customize_arrays(
    structure: Any,
    tail: np.ndarray,
    head: np.ndarray,
    weight: np.ndarray,
    dist: np.ndarray,
    duration: np.ndarray,
    forbidden: np.ndarray | None = None,
    perfect: bool = True,
    seconds: dict[str, float] | None = None,
) -> dict[str, np.ndarray]:
    """The hierarchy (`ch_*` arrays, see the module docstring) of the metric (`weight` ds, `dist` dm, `duration` ds
    per search arc, `tail`/`head` its search nodes) on the CCH `structure` (a mapping or object with the `cch_*`
    arrays). `forbidden` (bool or uint8 per search arc): arcs left out, e.g. an excluded class set. `perfect`:
    drop the arcs perfect customization shows are no shortest paths (fewer arcs for the queries to relax).
    `seconds`, when given, receives the time of each step.

    >>> ch = customize_arrays(graph.arrays, g.arc_tail, g.arc_head, w, d, t)  # doctest: +SKIP
    """
    sec = {} if seconds is None else seconds
    get = structure.__getitem__ if isinstance(structure, dict) else lambda k: getattr(structure, k)
    rank = _ro(get("cch_rank"), np.int32)
    first = _ro(get("cch_first"), np.int32)
    chead = _ro(get("cch_head"), np.int32)
    arc_of = _ro(get("cch_arc_of"), np.int32)
    t0 = time.perf_counter()
    w32, d32, t32 = (_ro(a, np.int32) for a in (weight, dist, duration))
    if len(w32) and (w32.min() < 0 or d32.min() < 0 or t32.min() < 0):
        raise ValueError("arc weights, distances and durations must be >= 0")
    forb = _ro(np.zeros(0) if forbidden is None else forbidden, np.uint8)
    a = len(chead)
    fw, fd, ft, bw, bd, bt = (np.full(a, INF32, dtype=np.int32) for _ in range(6))
    fa, fb, ba, bb = (np.full(a, -1, dtype=np.int32) for _ in range(4))
    tail32, head32 = _ro(tail, np.int32), _ro(head, np.int32)
    _initial(rank, arc_of, tail32, head32, w32, d32, t32, forb, fw, fd, ft, fa, bw, bd, bt, ba)
    inf = np.full(1, INF32, dtype=np.int32)
    sec["initial"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if not _basic(first, chead, fw, fd, ft, fa, fb, bw, bd, bt, ba, bb, inf):
        raise ValueError("a customized weight or distance exceeds int32: the metric's weights are implausibly large")
    sec["basic"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    keep_f = np.empty(a, dtype=np.uint8)
    keep_b = np.empty(a, dtype=np.uint8)
    if perfect:  # in place: an arc is kept only if perfect customization never lowered it, so it keeps basic's value
        _perfect(first, chead, fw, fd, bw, bd, inf, keep_f, keep_b)
    else:
        keep_f[:] = fw != INF32
        keep_b[:] = bw != INF32
    sec["perfect"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    fwd, bwd = Side(fw, fd, ft, fa, fb), Side(bw, bd, bt, ba, bb)
    out = _layout(rank, first, chead, fwd, bwd, keep_f.view(bool), keep_b.view(bool))
    sec["layout"] = time.perf_counter() - t0
    return out


class Side(NamedTuple):
    """One direction's arcs of the customized hierarchy, per CCH arc: weight, distance, duration, and what it unpacks
    into (an original arc id and -1, or the two halves' CCH arc ids)."""

    weight: np.ndarray
    dist: np.ndarray
    time: np.ndarray
    first: np.ndarray
    second: np.ndarray


class Layout(NamedTuple):
    """The `ch_*` rows step 4 fills: upward arcs, downward arcs, unpacking."""

    up_arcs: np.ndarray
    down_arcs: np.ndarray
    unpack: np.ndarray


_SIDE = nt.NamedUniTuple(_V32, 5, Side)
_ROWS = nt.NamedUniTuple(arr(I32, 2), 3, Layout)
_LAYOUT_SIG = NONE(_RO32, _RO32, _SIDE, _SIDE, _RO8, _RO8, _ROWS, _V32, _V32, _V32)


@kernel(_LAYOUT_SIG)
def _fill_layout(first, chead, fwd, bwd, keep_f, keep_b, rows, up_id, down_id, bad):  # pragma: no cover - numba
    """Step 4's one pass: the kept arcs' rows and unpacking (`up_id`/`down_id` already numbered); `bad[0]` = 1 when a
    kept arc would unpack into one that was dropped."""
    fw, fd, ft, fa, fb = fwd
    bw, bd, bt, ba, bb = bwd
    up_arcs, down_arcs, unpack = rows
    n = first.shape[0] - 1
    nup = up_arcs.shape[0]
    for x in range(n):
        for c in range(first[x], first[x + 1]):
            if keep_f[c]:
                i = up_id[c]
                up_arcs[i, 0] = chead[c]
                up_arcs[i, 1] = fw[c]
                up_arcs[i, 2] = fd[c]
                up_arcs[i, 3] = ft[c]
                if fb[c] >= 0:  # a shortcut: the down half x' -> x ... then the up half
                    unpack[i, 0] = down_id[fa[c]]
                    unpack[i, 1] = up_id[fb[c]]
                    if unpack[i, 0] < 0 or unpack[i, 1] < 0:
                        bad[0] = 1
                else:
                    unpack[i, 0] = fa[c]
                    unpack[i, 1] = -1
            if keep_b[c]:
                j = down_id[c]
                down_arcs[j - nup, 0] = chead[c]
                down_arcs[j - nup, 1] = bw[c]
                down_arcs[j - nup, 2] = bd[c]
                down_arcs[j - nup, 3] = bt[c]
                if bb[c] >= 0:
                    unpack[j, 0] = down_id[ba[c]]
                    unpack[j, 1] = up_id[bb[c]]
                    if unpack[j, 0] < 0 or unpack[j, 1] < 0:
                        bad[0] = 1
                else:
                    unpack[j, 0] = ba[c]
                    unpack[j, 1] = -1


@kernel(NONE(_RO32, _RO8, _RO8, _V32, _V32, _V32, _V32))
def _number_layout(first, keep_f, keep_b, up_first, down_first, up_id, down_id):  # pragma: no cover - numba
    """Step 4's counts: CSR offsets of the kept arcs each way by lower rank, and each kept arc's row (down rows
    after the up ones, as `ch_unpack` numbers them); -1 for a dropped arc."""
    n = first.shape[0] - 1
    nu = 0
    for x in range(n):
        up_first[x] = nu
        for c in range(first[x], first[x + 1]):
            if keep_f[c]:
                up_id[c] = nu
                nu += 1
            else:
                up_id[c] = -1
    up_first[n] = nu
    nd = 0
    for x in range(n):
        down_first[x] = nd
        for c in range(first[x], first[x + 1]):
            if keep_b[c]:
                down_id[c] = nu + nd
                nd += 1
            else:
                down_id[c] = -1
    down_first[n] = nd


def _layout(
    rank: np.ndarray, first: np.ndarray, chead: np.ndarray, fwd: Side, bwd: Side, keep_f: np.ndarray, keep_b: np.ndarray
) -> dict[str, np.ndarray]:
    """Step 4: the kept arcs in the `ch_*` layout (CSR by lower rank both ways, already sorted by higher rank), in
    two kernel passes: numbering, then the rows."""
    n = len(first) - 1
    kf, kb = keep_f.view(np.uint8), keep_b.view(np.uint8)
    kf.flags.writeable = kb.flags.writeable = False
    up_first = np.empty(n + 1, dtype=np.int32)
    down_first = np.empty(n + 1, dtype=np.int32)
    up_id = np.empty(len(chead), dtype=np.int32)
    down_id = np.empty(len(chead), dtype=np.int32)
    _number_layout(first, kf, kb, up_first, down_first, up_id, down_id)
    nup, ndown = int(up_first[-1]), int(down_first[-1])
    up_arcs = np.empty((nup, 4), dtype=np.int32)
    down_arcs = np.empty((ndown, 4), dtype=np.int32)
    unpack = np.empty((nup + ndown, 2), dtype=np.int32)
    bad = np.zeros(1, dtype=np.int32)
    _fill_layout(first, chead, fwd, bwd, kf, kb, Layout(up_arcs, down_arcs, unpack), up_id, down_id, bad)
    assert bad[0] == 0, "a kept arc unpacks into kept arcs"
    order = np.empty(n, dtype=np.int32)
    order[rank] = np.arange(n, dtype=np.int32)
    return {
        "ch_rank": np.asarray(rank, dtype=np.int32),
        "ch_order": order,
        "ch_up_first": up_first,
        "ch_up_arcs": up_arcs,
        "ch_down_first": down_first,
        "ch_down_arcs": down_arcs,
        "ch_unpack": unpack,
    }

"""The CCH customization: a metric on the search graph's arcs -> a contraction hierarchy in the `ch_*` layout.

A kernel module on the floor (like `heap`): a pure function of the format's arrays, which the engine
(`app.engine.search.cch`) and the offline tools (bench, a `customize` command) call alike. Input: the metric-independent
structure (`preprocessing.cch`: `cch_rank`, `cch_first`, `cch_head`, `cch_arc_of`) and per search arc a weight
(ds), distance (dm) and duration (ds), plus an optional mask of forbidden arcs (an excluded class set). Steps, all
over flat arrays:

1. **initial metric**: each CCH arc's up (lower -> higher rank) and down weight is its cheapest search arc that way
   (lexicographic (weight, dist), the smallest arc id on ties), INF where none;
2. **basic customization**: for every arc x-y, the cheapest path through lower ranks: node by node upwards, each
   arc x-z of x's row relaxed through its lower triangles y < x (arcs y-x and y-z; the clique of y's upper
   neighbours puts every z to relax in y's row after y-x), recording the two halves for unpacking. When x is
   reached every lower node's row is final, so one pass makes each arc the shortest path through lower ranks (the
   relaxations and their order per arc are RoutingKit's, which pushes them from each arc x-y to its upper triangles);
3. **perfect customization** (optional): arcs in reverse order, every upper triangle relaxing the bottom and middle
   arc through the top; an arc that gets cheaper is no shortest path through lower ranks alone, and is dropped
   (so are INF arcs). The arcs its unpacking uses are never dropped (they are shortest paths themselves).
   Steps 2 and 3 run on two threads over disjoint groups of whole elimination subtrees (`split_tree`), step 4's
   rows in two node ranges; the result is the same for any number of threads;
4. **layout**: the kept arcs as `ch_up_first`/`ch_up_arcs` (by lower rank: higher rank, weight, dist, duration),
   `ch_down_first`/`ch_down_arcs` (by lower rank: the higher rank it comes from, ...), `ch_unpack` (a search arc and
   -1, or the down CH arc and the up CH arc of the two halves), `ch_rank`, `ch_order`: what `CHSearch` and
   `CHTable` read, so every CH feature runs on any customized metric unchanged.

Labels are (weight, dist) compared lexicographically with the duration carried, like every hierarchy here. Weights
are stored int32 with `INF32` for "no path"; sums are formed in int64 and refused if they leave int32.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import types as nt

from floor.kernels.jit import BOOL, I32, I64, NONE, U8, arr, kernel

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


@kernel(NONE(_RO32, _RO32, _V32, _V32, _V32))
def _lower_neighbours(first, head, down_first, down_arc, down_tail):  # pragma: no cover - numba
    """Every node's lower neighbours y (arcs y-x, CSR by x, y rising): `down_first` [n + 1], the arc ids `down_arc`
    and their tails `down_tail` [arcs]."""
    n = first.shape[0] - 1
    down_first[:] = 0
    for e in range(head.shape[0]):
        down_first[head[e] + 1] += 1
    for x in range(n):
        down_first[x + 1] += down_first[x]
    fill = down_first[:n].copy()
    for y in range(n):
        for e in range(first[y], first[y + 1]):
            k = fill[head[e]]
            down_arc[k] = e
            down_tail[k] = y
            fill[head[e]] = k + 1


_DOWN = nt.UniTuple(_RO32, 3)  # `_lower_neighbours`' three arrays


@kernel(BOOL(_RO32, _RO32, _DOWN, _RO32, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32, _V32))
def _basic(first, head, down, nodes, at, fw, fd, ft, fa, fb, bw, bd, bt, ba, bb, inf):  # pragma: no cover - numba
    """Step 2 in place for the rows of `nodes` (rising; with every lower neighbour of each done before, or among
    them); `fa`/`fb` (`ba`/`bb`) get the halves of each improved up (down) arc: the CCH arc taken down, then the
    one taken up. `at` is this call's own marks (n, all -1, and so left). Returns False when a sum leaves int32
    (nothing is then usable).

    Pulled, node by node: each arc x-z of x's row is relaxed through every lower triangle y < x, z (arcs y-x and
    y-z), the lower neighbours y rising, so each arc sees the relaxations the module docstring's order (by lower end)
    gives it, in that order, and ends with the same figures and halves. The upper neighbours of y form a clique (the
    CCH is chordal), so y's row after y-x holds exactly the z to relax: every step is a triangle (Porto: 10.9 M),
    where pushing from x-y scans y's whole row for x's marks (34 M steps)."""
    down_first, down_arc, down_tail = down
    big = inf[0]
    ok = True
    for x in nodes:
        start_x = first[x]
        end_x = first[x + 1]
        for e in range(start_x, end_x):
            at[head[e]] = e
        for k in range(down_first[x], down_first[x + 1]):
            yx = down_arc[k]  # y-x
            if fw[yx] == big and bw[yx] == big:
                continue  # every relaxation below goes through y-x one way or the other
            for yz in range(yx + 1, first[down_tail[k] + 1]):
                xz = at[head[yz]]
                if xz < 0:
                    continue  # not chordal: no triangle
                if bw[yx] != big and fw[yz] != big:  # x -> y -> z
                    nw = np.int64(bw[yx]) + fw[yz]
                    nd = np.int64(bd[yx]) + fd[yz]
                    if nw < fw[xz] or (nw == fw[xz] and nd < fd[xz]):
                        nt_ = np.int64(bt[yx]) + ft[yz]
                        if nw >= big or nd >= big or nt_ >= big:
                            ok = False
                        fw[xz] = nw
                        fd[xz] = nd
                        ft[xz] = nt_
                        fa[xz] = yx
                        fb[xz] = yz
                if bw[yz] != big and fw[yx] != big:  # z -> y -> x
                    nw = np.int64(bw[yz]) + fw[yx]
                    nd = np.int64(bd[yz]) + fd[yx]
                    if nw < bw[xz] or (nw == bw[xz] and nd < bd[xz]):
                        nt_ = np.int64(bt[yz]) + ft[yx]
                        if nw >= big or nd >= big or nt_ >= big:
                            ok = False
                        bw[xz] = nw
                        bd[xz] = nd
                        bt[xz] = nt_
                        ba[xz] = yz
                        bb[xz] = yx
        for e in range(start_x, end_x):
            at[head[e]] = -1
    return ok


@kernel(NONE(_RO32, _RO32, _RO32, _V32, _V32, _V32, _V32, _V32, _V32, arr(U8), arr(U8)))
def _perfect(first, head, nodes, at, fw, fd, bw, bd, inf, keep_f, keep_b):  # pragma: no cover - numba
    """Step 3 in place for the rows of `nodes` (falling; with every upper neighbour of each done before, or among
    them): perfect weights, and `keep_*` cleared for every arc they make cheaper (set beforehand: 1 where not INF).
    Each node's row backwards, each arc's upper triangles found by marking the row (`at`, as `_basic`'s) and
    scanning the middle node's."""
    big = inf[0]
    for x in nodes:
        start_x = first[x]
        end_x = first[x + 1]
        for e in range(start_x, end_x):
            at[head[e]] = e
        for xy in range(end_x - 1, start_x - 1, -1):
            y = head[xy]
            for j in range(first[y], first[y + 1]):  # y-z
                i = at[head[j]]  # x-z
                if i < 0:
                    continue
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
        for e in range(start_x, end_x):
            at[head[e]] = -1


@kernel(arr(I64)(_RO32, _RO32))
def _subtree_work(first, parent):  # pragma: no cover - numba
    """Per node, the work of steps 2 and 3 in its elimination subtree: each row of d arcs counts 1 + d(d+1)/2 (its
    triangles, about). Parents rank above their children, so one rising pass adds each subtree into its parent."""
    n = first.shape[0] - 1
    work = np.empty(n, dtype=np.int64)
    for v in range(n):
        d = np.int64(first[v + 1] - first[v])
        work[v] = 1 + d * (d + 1) // 2
    for v in range(n):
        if parent[v] >= 0:
            work[parent[v]] += work[v]
    return work


@kernel(NONE(_RO32, arr(nt.int8)))
def _inherit_part(parent, part):  # pragma: no cover - numba
    """Every node without a part (-1) takes its parent's: one falling pass (parents rank above their children)."""
    for v in range(parent.shape[0] - 1, -1, -1):
        if part[v] < 0 and parent[v] >= 0:
            part[v] = part[parent[v]]


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
    threads: int | None = None,
) -> dict[str, np.ndarray]:
    """The hierarchy (`ch_*` arrays, see the module docstring) of the metric (`weight` ds, `dist` dm, `duration` ds
    per search arc, `tail`/`head` its search nodes) on the CCH `structure` (a mapping or object with the `cch_*`
    arrays). `forbidden` (bool or uint8 per search arc): arcs left out, e.g. an excluded class set. `perfect`:
    drop the arcs perfect customization shows are no shortest paths (fewer arcs for the queries to relax).
    `seconds`, when given, receives the time of each step. `threads`: how many run steps 2 and 3 (default: the
    CPUs this process may use, at most `MAX_THREADS`); the result is the same for any number.

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
    parts = _split_of(get("cch_first"), get("cch_head"), first, chead, threads)
    if not _basic_on(parts, first, chead, (fw, fd, ft, fa, fb), (bw, bd, bt, ba, bb), inf):
        raise ValueError("a customized weight or distance exceeds int32: the metric's weights are implausibly large")
    sec["basic"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    keep_f = (fw != INF32).view(np.uint8)
    keep_b = (bw != INF32).view(np.uint8)
    if perfect:  # in place: an arc is kept only if perfect customization never lowered it, so it keeps basic's value
        _on_threads(
            lambda nodes, at: _perfect(first, chead, nodes, at, fw, fd, bw, bd, inf, keep_f, keep_b),
            [_falling(p) for p in parts.below],
            _falling(parts.top),
            len(first) - 1,
            top_first=True,
        )
    sec["perfect"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    fwd, bwd = Side(fw, fd, ft, fa, fb), Side(bw, bd, bt, ba, bb)
    out = _layout(rank, first, chead, fwd, bwd, keep_f.view(bool), keep_b.view(bool), len(parts.below))
    sec["layout"] = time.perf_counter() - t0
    return out


MAX_THREADS = 2  # steps 2 and 3 on at most this many threads (an elimination tree split in two halves)
MIN_THREADED_ARCS = 200_000  # below this many CCH arcs one thread does it all (a thread costs more than it saves)


def elimination_parent(first: np.ndarray, head: np.ndarray) -> np.ndarray:
    """The CCH elimination tree: per rank its lowest upward CCH neighbour (`cch_head` rows ascend), -1 for a root."""
    first = np.asarray(first, dtype=np.int64)
    n = len(first) - 1
    parent = np.full(n, -1, dtype=np.int32)
    has = first[1:] > first[:-1]
    parent[has] = np.asarray(head)[first[:-1][has]]
    return parent


class TreeSplit(NamedTuple):
    """The elimination tree cut for threads: `below` one rising node list per thread (whole subtrees, disjoint, so no
    row one thread writes is read by another), `top` the rising rest (their ancestors, done alone); read-only."""

    below: list[np.ndarray]
    top: np.ndarray


def split_tree(first: np.ndarray, head: np.ndarray, threads: int | None = None) -> TreeSplit:
    """Cut the CCH's elimination tree (a node's parent: its lowest upper neighbour) into `threads` groups of whole
    subtrees of about equal work (`_subtree_work`) and the top: the heaviest subtree is opened (its root goes to
    the top, its children become subtrees) until the heaviest is no more than a group's share, then the subtrees go
    to the lightest group, heaviest first. Step 2 works up (groups at once, then the top), step 3 down (the top,
    then the groups): a node's lower neighbours are its descendants, its upper ones its ancestors."""
    import heapq
    import os

    n = len(first) - 1
    if threads is None:
        threads = min(MAX_THREADS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    if threads < 2 or len(head) < MIN_THREADED_ARCS:
        return TreeSplit([_frozen(np.arange(n, dtype=np.int32))], _frozen(np.zeros(0, dtype=np.int32)))
    parent = elimination_parent(first, head)
    parent.flags.writeable = False
    work = _subtree_work(first, parent)
    order = np.argsort(parent, kind="stable")  # children grouped by parent (roots, parent -1, first)
    starts = np.searchsorted(parent[order], np.arange(-1, n + 1))
    kids = lambda v: order[starts[v + 1] : starts[v + 2]]  # noqa: E731 - v's children; v = -1: the roots
    heap = [(-int(work[v]), int(v)) for v in kids(-1)]
    heapq.heapify(heap)
    total = sum(-w for w, _ in heap)
    top: list[int] = []
    while heap and -heap[0][0] * threads > total and len(top) < n // 100 + 64:
        w, v = heapq.heappop(heap)
        top.append(v)
        total -= int(work[v]) - sum(int(work[c]) for c in kids(v))  # the root's own row leaves the groups
        for c in kids(v):
            heapq.heappush(heap, (-int(work[c]), int(c)))
    part = np.full(n, -1, dtype=np.int8)
    loads = [0] * threads
    for w, v in sorted(heap):  # heaviest first, each to the lightest group
        g = loads.index(min(loads))
        loads[g] -= w
        part[v] = g
    part[np.asarray(top, dtype=np.int64)] = threads  # the top: no group
    _inherit_part(parent, part)
    below = [_frozen(np.flatnonzero(part == g).astype(np.int32)) for g in range(threads)]
    return TreeSplit(below, _frozen(np.flatnonzero(part == threads).astype(np.int32)))


_SPLITS: dict[tuple[int, int, int | None], tuple[TreeSplit, Any, Any]] = {}  # see `_split_of`


def _split_of(first_in: Any, head_in: Any, first: np.ndarray, head: np.ndarray, threads: int | None) -> TreeSplit:
    """`split_tree` of a structure's `cch_first`/`cch_head` as given (`*_in`), kept per those objects (held, so their
    ids stay theirs): the split depends on the structure alone, and a server customizes one structure again and again
    (Porto: 17 ms of a customization)."""
    key = (id(first_in), id(head_in), threads)
    got = _SPLITS.get(key)
    if got is None:
        if len(_SPLITS) >= 8:
            _SPLITS.clear()
        got = _SPLITS[key] = (split_tree(first, head, threads), first_in, head_in)
    return got[0]


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _falling(nodes: np.ndarray) -> np.ndarray:
    return _frozen(np.ascontiguousarray(nodes[::-1]))


def _basic_on(parts: TreeSplit, first: np.ndarray, head: np.ndarray, fwd: tuple, bwd: tuple, inf: np.ndarray) -> bool:
    """Step 2 on `parts` (`_on_threads`), with the lower neighbours it reads built for it and freed after it; False
    when a sum left int32."""
    down = tuple(np.empty(k, dtype=np.int32) for k in (len(first), len(head), len(head)))
    _lower_neighbours(first, head, *down)
    for x in down:
        x.flags.writeable = False
    return all(
        _on_threads(lambda nodes, at: _basic(first, head, down, nodes, at, *fwd, *bwd, inf), parts.below, parts.top,
                    len(first) - 1)
    )  # fmt: skip


def _on_threads(
    run: Callable[[np.ndarray, np.ndarray], Any],
    below: list[np.ndarray],
    top: np.ndarray,
    n: int,
    top_first: bool = False,
) -> list[Any]:
    """`run(nodes, at)` on every group of `below` at once (a thread each: the kernels release the GIL) and on `top`
    alone, before them (`top_first`) or after; `at` is a call's own marks. The calls' results."""
    from concurrent.futures import ThreadPoolExecutor

    ats = [np.full(n, -1, dtype=np.int32) for _ in below]
    out = []
    if top_first and len(top):
        out.append(run(top, ats[0]))
    if len(below) == 1:
        out.append(run(below[0], ats[0]))
    else:
        with ThreadPoolExecutor(len(below), thread_name_prefix="starroute-customize") as pool:
            out.extend(pool.map(run, below, ats))
    if not top_first and len(top):
        out.append(run(top, ats[0]))
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
_LAYOUT_SIG = NONE(_RO32, _RO32, _SIDE, _SIDE, _RO8, _RO8, _ROWS, _V32, _V32, _V32, I64, I64)


@kernel(_LAYOUT_SIG)
def _fill_layout(first, chead, fwd, bwd, keep_f, keep_b, rows, up_id, down_id, bad, lo, hi):  # pragma: no cover
    """Step 4's one pass over the rows of nodes `lo`..`hi`-1: the kept arcs' rows and unpacking (`up_id`/`down_id`
    already numbered); `bad[0]` = 1 when a kept arc would unpack into one that was dropped."""
    fw, fd, ft, fa, fb = fwd
    bw, bd, bt, ba, bb = bwd
    up_arcs, down_arcs, unpack = rows
    nup = up_arcs.shape[0]
    for x in range(lo, hi):
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
    rank: np.ndarray,
    first: np.ndarray,
    chead: np.ndarray,
    fwd: Side,
    bwd: Side,
    keep_f: np.ndarray,
    keep_b: np.ndarray,
    threads: int = 1,
) -> dict[str, np.ndarray]:
    """Step 4: the kept arcs in the `ch_*` layout (CSR by lower rank both ways, already sorted by higher rank), in
    two kernel passes: numbering, then the rows (on `threads`, at most two)."""
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
    rows = Layout(up_arcs, down_arcs, unpack)
    # rows of disjoint node ranges, on two threads when the arcs are many (half the arcs each)
    cut = int(np.searchsorted(first, len(chead) // 2)) if threads > 1 and len(chead) >= MIN_THREADED_ARCS else n
    spans = [(0, cut), (cut, n)] if 0 < cut < n else [(0, n)]
    bads = [np.zeros(1, dtype=np.int32) for _ in spans]

    def fill(span: tuple[int, int], bad: np.ndarray) -> None:
        _fill_layout(first, chead, fwd, bwd, kf, kb, rows, up_id, down_id, bad, span[0], span[1])

    if len(spans) == 1:
        fill(spans[0], bads[0])
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(spans), thread_name_prefix="starroute-customize") as pool:
            list(pool.map(fill, spans, bads))
    assert not any(b[0] for b in bads), "a kept arc unpacks into kept arcs"
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

"""The CCH's point-to-point query without a heap: an elimination-tree walk (Bauer, Buchhold, Dibbelt and Strasser).

On a customized hierarchy (`app.engine.search.cch.customize`: its ranks are the CCH's nested-dissection order) every
node an upward search from `s` reaches is an ancestor of `s` in the CCH's elimination tree (the tree whose parent of
a node is its lowest-ranked upward CCH neighbour). So instead of a Dijkstra on a heap the query walks each source
seed's ancestors in rank order relaxing every upward arc of each (a topological order of the upward graph, so a
node's label is final when it comes), and the target seeds' along the downward arcs, the two walks merged in rank
order: a node both walks reach is a meeting candidate (the lexicographic minimum of forward + backward label
wins), and a node whose label is no cheaper than the best candidate so far relaxes nothing (RoutingKit's pruning).
A walk gives each rank it reaches "no label" first and marks it; the marks along the walked paths are cleared
after the query, so the arrays take memory only where queries walked. The path is unpacked as `CHSearch` does
(`ch._expand`), so the answer has the same weight and distance (the lexicographic minimum; on an exact tie of both
the two may return different paths of that cost).

The parent array (`cch_parent`, int32 per rank, -1 for a root) is built from the CCH structure when the hierarchy is
customized (`elimination_parent`, a numpy pass), never stored. A hierarchy without it (the witness CH, whose order
has no such tree) is queried by `CHSearch`.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np
from numba.core import types as nbt
from numba.extending import overload

from app.engine.search.ch import (
    D_MASK,
    MAX_SEED_W,
    CHArrays,
    CHSearch,
    CHSeeds,
    _owner,
    _pick_seed,
    _run,
    ch_seeds,
    expand_chain,
    untouched_zeros,
)
from app.engine.types import INF_WEIGHT, SearchOptions, SearchResult, SearchStats, Seeds
from floor.kernels.cch_customize import elimination_parent as elimination_parent  # the tree the walk climbs
from floor.kernels.jit import kernel

PARENT = "cch_parent"  # the elimination tree's parent per rank, in a customized hierarchy's arrays


def has_tree(graph: object) -> bool:
    """Whether `graph` is a hierarchy the elimination-tree query can run on (a customized CCH with its tree)."""
    has = getattr(graph, "has", None)
    return has is not None and bool(has(PARENT))


L_W, L_D, L_PAR = 0, 1, 2  # label columns: weight, dist, the CH arc it came by (-1: a seed)
FWD_BIT, BWD_BIT = 1, 2  # `mark` bits: walked by the forward / the backward search


class ETState(NamedTuple):
    """One thread's query arrays: per direction per rank a label row (`L_*`; "no label" = INF_WEIGHT weight), per
    rank a mark (`*_BIT`), per direction the ranks walked. A walk sets the label of each rank it reaches first to
    "none" and marks it; after the query the marks along the walk are cleared. Four arrays: each array of a kernel
    call's arguments costs its unboxing, a microsecond per few."""

    f_lab: np.ndarray
    b_lab: np.ndarray
    mark: np.ndarray
    lists: np.ndarray


def new_state(n: int) -> ETState:
    """`ETState` over `n` ranks in fresh anonymous memory (`ch.untouched_zeros`): a query writes only the rows of the
    ranks it walks, so a thread's state takes the pages its queries touched, not 24 bytes a rank per direction."""
    m = max(n, 1)
    return ETState(
        untouched_zeros((m, 3), np.int64),
        untouched_zeros((m, 3), np.int64),
        untouched_zeros(m, np.uint8),
        untouched_zeros((2, m), np.int32),
    )


@kernel
def _walk(rank, parent, nodes, sw, sd, lab, mark, bit, lst):  # pragma: no cover - numba
    """Label one direction's seeds (lexicographic minimum per node, first index on ties) and list the union of their
    ancestors in rank order: how many, -2 for a bad seed (nothing labelled or listed then)."""
    n = rank.shape[0]
    for i in range(nodes.shape[0]):
        w = sw[i]
        d = sd[i]
        if nodes[i] < 0 or nodes[i] >= n or (w < INF_WEIGHT and (w < 0 or w >= MAX_SEED_W or d < 0 or d > D_MASK)):
            return -2
    cnt = 0
    seeded = 0
    for i in range(nodes.shape[0]):
        w = sw[i]
        d = sd[i]
        if w >= INF_WEIGHT:
            continue
        v = rank[nodes[i]]
        seeded += 1
        x = v
        while x >= 0 and (mark[x] & bit) == 0:  # a rank first walked: its label "none"
            mark[x] |= bit
            lab[x, L_W] = INF_WEIGHT
            lab[x, L_D] = INF_WEIGHT
            lab[x, L_PAR] = -1
            lst[cnt] = x
            cnt += 1
            x = parent[x]
        if w < lab[v, L_W] or (w == lab[v, L_W] and d < lab[v, L_D]):
            lab[v, L_W] = w
            lab[v, L_D] = d
            lab[v, L_PAR] = -1
    if seeded > 1:
        lst[:cnt].sort()  # several paths up the tree: their union in rank order
    return cnt


@kernel(inline="always")
def _relax(first, arcs, arc_base, lab, x, counters):  # pragma: no cover - numba
    """Relax every arc of rank `x` (`first`/`arcs`: by lower rank, to higher ranks) from its label."""
    w = lab[x, L_W]
    d = lab[x, L_D]
    lo = first[x]
    hi = first[x + 1]
    counters[0] += 1
    counters[1] += hi - lo
    for e in range(lo, hi):
        y = arcs[e, 0]
        nw = w + arcs[e, 1]
        nd = d + arcs[e, 2]
        if nw < lab[y, L_W] or (nw == lab[y, L_W] and nd < lab[y, L_D]):
            lab[y, L_W] = nw
            lab[y, L_D] = nd
            lab[y, L_PAR] = arc_base + e


@kernel
def _reset(mark, lst, cnt):  # pragma: no cover - numba
    """The walked ranks' marks cleared (their labels are set afresh when a walk reaches them again)."""
    for k in range(cnt):
        mark[lst[k]] = 0


@kernel
def _et_run(ch, parent, seeds, st, counters):  # pragma: no cover - numba
    """(status, weight, dist, arcs, source seed, target seed) of the elimination-tree query; status -2 = bad seed."""
    rank, up_first, up_arcs, down_first, down_arcs, unpack = ch
    s_nodes, s_w, s_d, _, t_nodes, t_w, t_d, _ = seeds
    f_lab, b_lab, mark, lists = st
    f_list = lists[0]
    b_list = lists[1]
    none = np.zeros(0, dtype=np.int32)
    nup = up_arcs.shape[0]
    fc = _walk(rank, parent, s_nodes, s_w, s_d, f_lab, mark, FWD_BIT, f_list)
    if fc < 0:
        return -2, INF_WEIGHT, INF_WEIGHT, none, -1, -1
    bc = _walk(rank, parent, t_nodes, t_w, t_d, b_lab, mark, BWD_BIT, b_list)
    if bc < 0:
        _reset(mark, f_list, fc)
        return -2, INF_WEIGHT, INF_WEIGHT, none, -1, -1
    best_w = INF_WEIGHT
    best_d = INF_WEIGHT
    meet = -1
    i = 0
    j = 0
    while i < fc or j < bc:  # both walks merged in rank order: a rank's labels are final when it comes
        if j >= bc or (i < fc and f_list[i] <= b_list[j]):
            x = f_list[i]
            i += 1
            fwd = True
            bwd = j < bc and b_list[j] == x
            if bwd:
                j += 1
        else:
            x = b_list[j]
            j += 1
            fwd = False
            bwd = True
        fw = f_lab[x, L_W]
        bw = b_lab[x, L_W]
        if fwd and bwd and fw < INF_WEIGHT and bw < INF_WEIGHT:  # a common ancestor: a meeting candidate
            cw = fw + bw
            cd = f_lab[x, L_D] + b_lab[x, L_D]
            if cw < best_w or (cw == best_w and cd < best_d):
                best_w = cw
                best_d = cd
                meet = x
        # a label no cheaper than the best path (weights and distances are >= 0) cannot lead to a cheaper one
        if fwd and fw < INF_WEIGHT and (fw < best_w or (fw == best_w and f_lab[x, L_D] < best_d)):
            _relax(up_first, up_arcs, 0, f_lab, x, counters)
        if bwd and bw < INF_WEIGHT and (bw < best_w or (bw == best_w and b_lab[x, L_D] < best_d)):
            _relax(down_first, down_arcs, nup, b_lab, x, counters)
    counters[3] = meet
    arcs = none
    src = -1
    dst = -1
    if meet >= 0:
        k = 0  # CH arcs on the path: up from the source, then down to the target
        v = meet
        while f_lab[v, L_PAR] >= 0:
            k += 1
            v = _owner(up_first, f_lab[v, L_PAR])
        src = v
        kf = k
        v = meet
        while b_lab[v, L_PAR] >= 0:
            k += 1
            v = _owner(down_first, b_lab[v, L_PAR] - nup)
        dst = v
        chain = np.empty(k, dtype=np.int64)
        i = kf - 1
        v = meet
        while f_lab[v, L_PAR] >= 0:
            chain[i] = f_lab[v, L_PAR]
            i -= 1
            v = _owner(up_first, f_lab[v, L_PAR])
        i = kf
        v = meet
        while b_lab[v, L_PAR] >= 0:
            chain[i] = b_lab[v, L_PAR]
            i += 1
            v = _owner(down_first, b_lab[v, L_PAR] - nup)
        arcs = expand_chain(chain, unpack)
    _reset(mark, f_list, fc)
    _reset(mark, b_list, bc)
    if meet < 0:
        return 0, INF_WEIGHT, INF_WEIGHT, none, -1, -1
    si = _pick_seed(rank, s_nodes, s_w, s_d, src)
    ti = _pick_seed(rank, t_nodes, t_w, t_d, dst)
    return 0, best_w, best_d, arcs, si, ti


class ETLabels(NamedTuple):
    """What a kernel that runs the query inside (`app.engine.route.ch_leg`) takes in place of `CHLabels`: the tree
    and one thread's `ETState`."""

    parent: np.ndarray
    state: ETState


def leg_search(ch, seeds, labels, base, counters, trace):  # type: ignore[no-untyped-def]  # pragma: no cover
    """In a kernel: `ch._run` for `CHLabels`, the tree walk `_et_run` for `ETLabels` (picked at compile time)."""
    raise NotImplementedError("a kernel's helper: call it from numba")


@overload(leg_search)
def _leg_search(ch, seeds, labels, base, counters, trace):  # type: ignore[no-untyped-def]  # pragma: no cover
    if isinstance(labels, nbt.BaseNamedTuple) and labels.instance_class is ETLabels:

        def tree(ch, seeds, labels, base, counters, trace):  # type: ignore[no-untyped-def]
            return _et_run(ch, labels.parent, seeds, labels.state, counters)

        return tree

    def heap(ch, seeds, labels, base, counters, trace):  # type: ignore[no-untyped-def]
        return _run(ch, seeds, labels, base, counters, trace)

    return heap


def warm() -> None:
    """Compile (or load) the tree walk for the types a `CCHSearch` holds, on stand-in arrays (nothing runs)."""
    import numba

    one = np.zeros(1, dtype=np.int32)
    arcs = np.zeros((1, 4), dtype=np.int32)
    pairs = np.zeros((1, 2), dtype=np.int32)
    for a in (one, arcs, pairs):
        a.setflags(write=False)
    z32, z64 = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int64)
    args = (CHArrays(one, one, arcs, one, arcs, pairs), one, CHSeeds(z32, z64, z64, z64, z32, z64, z64, z64),
            new_state(1), z64)  # fmt: skip
    sig = tuple(numba.typeof(a) for a in args)
    if sig not in _et_run.overloads:
        _et_run.compile(sig)


class CCHSearch(CHSearch):
    """`CHSearch` on a customized CCH (a hierarchy with `cch_parent`), its queries by the elimination-tree walk; a
    traced query (the map's search spaces) runs `CHSearch`'s heap search, whose settled nodes it records."""

    def __init__(self, graph: Any, prefix: str = "ch_", exclude_flags: int = 0) -> None:
        super().__init__(graph, prefix, exclude_flags)
        self._parent = np.asarray(graph.arrays[PARENT])
        self._state = new_state(len(self._parent))
        self._et_entry: Any = None
        self._et_labels = ETLabels(self._parent, self._state)
        self._pair: CHSeeds | None = None  # `weight_between`'s seeds, its two nodes overwritten per query

    @property
    def labels(self) -> ETLabels:  # type: ignore[override]
        """The tree and this object's query arrays (a kernel that runs the query inside, `app.engine.route.ch_leg`,
        picks the tree walk by their type)."""
        return self._et_labels

    def _et(self, seeds: CHSeeds) -> tuple:
        """`_et_run` through its compiled entry point (as `CHSearch._query`: no per-call typing of the tuples)."""
        args = (self._g, self._parent, seeds, self._state, self._counters)
        if self._et_entry is None:
            import numba

            sig = tuple(numba.typeof(a) for a in args)
            if sig not in _et_run.overloads:
                _et_run.compile(sig)
            self._et_entry = _et_run.overloads[sig].entry_point
        return self._et_entry(*args)  # type: ignore[no-any-return]

    def weight_between(self, source: int, target: int) -> int:
        """The weight (ds) of a shortest path from search node `source` to `target` (INF_WEIGHT: none), on seed
        arrays this object keeps (alternatives' T-tests: no arrays to build per query)."""
        seeds = self._pair
        if seeds is None:
            zero = np.zeros(1, dtype=np.int64)
            seeds = self._pair = CHSeeds(
                np.zeros(1, dtype=np.int32), zero, zero, zero, np.zeros(1, dtype=np.int32), zero, zero, zero
            )
        seeds.s_nodes[0] = source
        seeds.t_nodes[0] = target
        self._counters.fill(0)
        status, w, _, _, _, _ = self._et(seeds)
        if status == -2:
            raise ValueError("seed node id out of range")
        return int(w)

    def run(self, sources: Seeds, targets: Seeds, options: SearchOptions | None = None) -> SearchResult:
        """As `CHSearch.run` (same options, same weight and distance), by the elimination-tree walk."""
        if options is not None and options.trace:
            return super().run(sources, targets, options)
        if options is not None:
            self.check(options)
        t0 = time.perf_counter()
        self._counters.fill(0)
        status, w, d, arcs, si, ti = self._et(ch_seeds(sources, targets))
        if status == -2:
            raise ValueError("seed node id out of range")
        self.distance = int(d)
        c = self._counters
        stats = SearchStats("ch", int(c[0]), int(c[1]), (time.perf_counter() - t0) * 1e6)
        return SearchResult(int(w), arcs, int(si), int(ti), stats, None)

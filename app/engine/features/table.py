"""Many-to-many CH table with the bucket algorithm (Knopp et al.; OSRM's `/table`).

For every target, a complete backward upward search (stall-on-demand) drops (target, weight, dist) into the bucket of
each node it settles without stalling; then for every source a complete forward upward search scans the buckets of
the nodes it settles without stalling. The one-direction kernel is `app.engine.search.ch.settle_next`, the one
`CHSearch`
uses, and candidates are compared as (weight, dist) pairs: every entry equals `CHSearch(graph).run(s, t)`'s weight and
`.distance` exactly (see the tie-break note in app.engine.search.ch).

A caller that asks the same targets again (a matrix's blocks down one column range) can have the grouped buckets
kept (`reuse=True`): the table object keeps the last `KEEP_BUCKETS` target sets' buckets, keyed by the digest of
their flat seeds, so those targets' backward searches run once per table object, not once per block.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from app.engine.route.edges import FlatSeeds
from app.engine.route.legs import Legs
from app.engine.route.space import flat_seeds
from app.engine.search.ch import (
    CH_ARRAYS,
    L_D,
    L_T,
    L_W,
    CHArrays,
    ch_arrays,
    ch_heap,
    fresh_stamps,
    init_seeds,
    new_labels,
    row_of,
    settle_next,
    untouched_zeros,
)
from app.engine.search.core import path_dists
from app.engine.search.searches import Searcher
from app.engine.types import Phantom, SearchOptions, Seeds, Table
from floor.format.units import CLOSED_DS, DIST_PER_METRE, INF_WEIGHT, WEIGHT_PER_SECOND
from floor.kernels.jit import kernel

AT_MASK = (1 << 32) - 1  # `_group`'s packing of a node's bucket rows (fewer than 2**31 entries)
KEEP_BUCKETS = 4  # target sets whose buckets a table object keeps for `reuse` (a matrix's column ranges in turn)


@kernel
def _buckets(ch, targets, t_lo, t_hi, slot, lab, keys, hnodes, cur, counters):  # pragma: no cover - numba
    """The backward upward searches of targets t_lo..t_hi-1 (`targets` a `FlatSeeds`): (status, last stamp used,
    bucket entries [ne, 5] = node, target, weight, dist, duration, in the order found); status -1 heap full, -2 bad
    seed."""
    rank, up_first, up_arcs, down_first, down_arcs, _ = ch
    t_nodes, t_w, t_d, t_t, t_off = targets
    nup = up_arcs.shape[0]
    cap = 1024
    bucket = np.empty((cap, 5), dtype=np.int64)
    ne = 0
    for t in range(t_lo, t_hi):
        cur += 1
        base = 3 * cur
        lo, hi = t_off[t], t_off[t + 1]
        size = init_seeds(rank, t_nodes[lo:hi], t_w[lo:hi], t_d[lo:hi], t_t[lo:hi], slot, lab, keys, hnodes, base)
        if size < 0:
            return size, cur, bucket[:0]
        while True:
            size, v, status = settle_next(
                down_first, down_arcs, nup, up_first, up_arcs, slot, lab, keys, hnodes, size, base, counters
            )
            if status < 0:
                return -1, cur, bucket[:0]
            if status == 0:
                break
            if status == 1:
                if ne == cap:
                    cap *= 2
                    bigger = np.empty((cap, 5), dtype=np.int64)
                    for i in range(ne):
                        for j in range(5):
                            bigger[i, j] = bucket[i, j]
                    bucket = bigger
                r = row_of(slot, v)
                bucket[ne, 0] = v
                bucket[ne, 1] = t
                bucket[ne, 2] = lab[r, L_W]
                bucket[ne, 3] = lab[r, L_D]
                bucket[ne, 4] = lab[r, L_T]
                ne += 1
    return 0, cur, bucket[:ne]


@kernel
def _group(bucket, at):  # pragma: no cover - numba
    """The bucket entries grouped by node (a counting sort over the nodes that have entries, stable): (entries
    [ne, 4] = target, weight, dist, duration, the nodes with entries). Node v's entries are rows `at[v] >> 32` to
    `at[v] & AT_MASK` (exclusive); `at` is 0 at every other node, as it must be on the way in (`_clear` puts it
    back). So grouping costs the entries' count, not the graph's nodes (an array of them per table, before)."""
    ne = bucket.shape[0]
    nodes = np.empty(ne, dtype=np.int64)
    k = 0
    for i in range(ne):  # count per node, nodes in order of first appearance
        v = bucket[i, 0]
        if at[v] == 0:
            nodes[k] = v
            k += 1
        at[v] += 1
    start = 0
    for j in range(k):  # each node's range: start in the high half, the next row to fill in the low one
        v = nodes[j]
        count = at[v]
        at[v] = (start << 32) | start
        start += count
    grouped = np.empty((ne, 4), dtype=np.int64)
    for i in range(ne):
        v = bucket[i, 0]
        row = at[v] & AT_MASK
        at[v] += 1
        for j in range(4):
            grouped[row, j] = bucket[i, j + 1]
    return grouped, nodes[:k]


@kernel(nrt=False)
def _clear(at, nodes):  # pragma: no cover - numba
    """`at` back to 0 at the nodes `_group` wrote."""
    for j in range(nodes.shape[0]):
        at[nodes[j]] = 0


@kernel(nrt=False)
def _restore(at, nodes, packed):  # pragma: no cover - numba
    """`at` as `_group` left it for kept buckets: `packed[j]` at `nodes[j]` (`_clear` undoes it)."""
    for j in range(nodes.shape[0]):
        at[nodes[j]] = packed[j]


class Buckets(NamedTuple):
    """One target set's grouped bucket entries [ne, 4] (target, weight, dist, duration), the nodes that have entries,
    and `at`'s packed rows at those nodes."""

    grouped: np.ndarray
    nodes: np.ndarray
    packed: np.ndarray


def seeds_key(targets: FlatSeeds) -> bytes:
    """A digest of a flat seed set: equal seeds, equal key (the kept buckets' key)."""
    h = hashlib.blake2b(digest_size=20)
    for a in targets:
        arr = np.ascontiguousarray(a)
        h.update(str((arr.dtype.str, arr.shape)).encode())
        h.update(arr.tobytes())
    return h.digest()


@kernel(nrt=False)
def _scan(
    ch, sources, s_lo, s_hi, slot, lab, keys, hnodes, cur, counters, at, grouped, out_w, out_d, out_t
):  # fmt: skip  # pragma: no cover - numba
    """The forward upward searches of sources s_lo..s_hi-1 (`sources` a `FlatSeeds`) over the grouped buckets,
    filling rows s_lo..s_hi-1 of out_w/out_d/out_t (preset to INF_WEIGHT; out_t the duration of the chosen path):
    (status, last stamp used)."""
    rank, up_first, up_arcs, down_first, down_arcs, _ = ch
    s_nodes, s_w, s_d, s_t, s_off = sources
    for s in range(s_lo, s_hi):
        cur += 1
        base = 3 * cur
        lo, hi = s_off[s], s_off[s + 1]
        size = init_seeds(rank, s_nodes[lo:hi], s_w[lo:hi], s_d[lo:hi], s_t[lo:hi], slot, lab, keys, hnodes, base)
        if size < 0:
            return size, cur
        while True:
            size, v, status = settle_next(
                up_first, up_arcs, 0, down_first, down_arcs, slot, lab, keys, hnodes, size, base, counters
            )
            if status < 0:
                return -1, cur
            if status == 0:
                break
            if status == 1:
                r = row_of(slot, v)
                fw = lab[r, L_W]
                fd = lab[r, L_D]
                ft = lab[r, L_T]
                a = at[v]
                for k in range(a >> 32, a & AT_MASK):
                    t = grouped[k, 0]
                    cw = fw + grouped[k, 1]
                    cd = fd + grouped[k, 2]
                    if cw < out_w[s, t] or (cw == out_w[s, t] and cd < out_d[s, t]):
                        out_w[s, t] = cw
                        out_d[s, t] = cd
                        out_t[s, t] = ft + grouped[k, 3]
    return 0, cur


class _Half:
    """The labels, heap and stamp of one thread's half of a table."""

    def __init__(self, n: int) -> None:
        self.lab = new_labels(n)
        self.heap = ch_heap()
        self.cur = 0
        self.counters = np.zeros(3, dtype=np.int64)


_helper: ThreadPoolExecutor | None = None
_helper_lock = threading.Lock()


def _helper_thread() -> ThreadPoolExecutor:
    """The one thread per process that runs the second half of large tables (the kernels release the GIL)."""
    global _helper
    with _helper_lock:
        if _helper is None:
            _helper = ThreadPoolExecutor(1, thread_name_prefix="starroute-table")
        return _helper


def stop_helper() -> None:
    """End the helper thread after its work (a process about to fork; the next large table starts a new one)."""
    global _helper
    with _helper_lock:
        if _helper is not None:
            _helper.shutdown(wait=True)
            _helper = None


def _forget_helper() -> None:
    """In a forked child: the parent's helper thread does not exist here, so its pool must not be used."""
    global _helper, _helper_lock
    _helper = None
    _helper_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_helper)


class CHTable:
    """One worker's many-to-many table object: `CHTable(graph).run(sources, targets) -> (weights, dists)`.

    A table of at least `split_cells` cells runs its two phases (the targets' backward searches, then the sources'
    forward searches) in two halves each, one on the calling thread and one on a helper thread."""

    def __init__(self, graph: object, prefix: str = "ch_", split_cells: int = 2500) -> None:
        a = ch_arrays(graph, prefix)
        self._g = CHArrays(*(a[name] for name in CH_ARRAYS))
        self._n = int(len(a["ch_rank"]))
        self._halves = [_Half(self._n)]
        self._at = untouched_zeros(max(self._n, 1), np.int64)  # `_group`'s node -> bucket rows, 0 between tables
        self.split_cells = split_cells
        self.counters = np.zeros(3, dtype=np.int64)  # settled nodes, relaxed arcs of the last run
        self._kept: OrderedDict[bytes, Buckets] = OrderedDict()  # `reuse`'s buckets, least recently used first

    def run(self, sources: list[Seeds], targets: list[Seeds]) -> tuple[np.ndarray, np.ndarray]:
        """int64 weights (ds) and distances (dm) [S, T]; INF_WEIGHT in both where a pair is unreachable."""
        w, d, _ = self.run_with_durations(sources, targets)
        return w, d

    def _phase(self, h: _Half, run: Callable[[_Half], tuple[int, int]]) -> None:
        """Run one half of one phase, growing the heap and rerunning it when it fills."""
        while True:
            h.cur = fresh_stamps(h.cur, h.lab)
            status, h.cur = run(h)
            if status == 0:
                return
            if status == -2:
                raise ValueError("seed node id out of range")
            h.heap = ch_heap(2 * len(h.heap[0]))

    def _both(self, split: bool, jobs: list[Callable[[], None]]) -> None:
        if not split:
            for job in jobs:
                job()
            return
        other = _helper_thread().submit(jobs[1])
        try:
            jobs[0]()
        finally:
            other.result()

    def run_with_durations(
        self, sources: list[Seeds], targets: list[Seeds]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """int64 weights (ds), distances (dm) and durations (ds, of the same paths) [S, T]; INF_WEIGHT where a pair
        is unreachable."""
        return self.run_flat(flat_seeds(sources), flat_seeds(targets))

    def run_flat(
        self, sources: FlatSeeds, targets: FlatSeeds, reuse: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`run_with_durations` on seed sets already flattened (`SearchSpace.seeds_many`). `reuse`: take the
        targets' buckets from the last `KEEP_BUCKETS` kept here when the same seeds were asked before, and keep
        them otherwise (the same entries either way: only the backward searches are saved)."""
        S, T = len(sources.off) - 1, len(targets.off) - 1
        split = S * T >= self.split_cells and min(S, T) >= 2
        if split and len(self._halves) == 1:
            self._halves.append(_Half(self._n))
        halves = self._halves[: 1 + split]
        for h in halves:
            h.counters.fill(0)
        key = seeds_key(targets) if reuse else b""
        kept = self._kept.get(key) if reuse else None
        if kept is not None:
            self._kept.move_to_end(key)
            _restore(self._at, kept.nodes, kept.packed)
            grouped, with_entries = kept.grouped, kept.nodes
        else:
            grouped, with_entries = self._backward(targets, T, split, halves)
            if reuse:
                self._kept[key] = Buckets(grouped, with_entries, self._at[with_entries])
                while len(self._kept) > KEEP_BUCKETS:
                    self._kept.popitem(last=False)
        cuts_s = [0, S // 2, S] if split else [0, S]
        out_w = np.full((S, T), INF_WEIGHT, dtype=np.int64)
        out_d = np.full((S, T), INF_WEIGHT, dtype=np.int64)
        out_t = np.full((S, T), INF_WEIGHT, dtype=np.int64)

        def forward(i: int) -> Callable[[], None]:
            def job() -> None:
                def run(h: _Half) -> tuple[int, int]:
                    for out in (out_w, out_d, out_t):  # a rerun after the heap grew starts from nothing
                        out[cuts_s[i] : cuts_s[i + 1]] = INF_WEIGHT
                    return _scan(  # type: ignore[no-any-return]
                        self._g, sources, cuts_s[i], cuts_s[i + 1], *h.lab, *h.heap, h.cur, h.counters, self._at,
                        grouped, out_w, out_d, out_t,
                    )  # fmt: skip

                self._phase(halves[i], run)

            return job

        try:
            self._both(split, [forward(i) for i in range(len(halves))])
        finally:  # `at` is 0 again for the next table, whatever happened
            _clear(self._at, with_entries)
        self.counters[:] = sum(h.counters for h in halves)
        return out_w, out_d, out_t

    def _backward(self, targets: FlatSeeds, T: int, split: bool, halves: list[_Half]) -> tuple[np.ndarray, np.ndarray]:
        """The targets' backward searches, their entries grouped by node into `at`: (grouped, nodes with entries)."""
        cuts_t = [0, T // 2, T] if split else [0, T]
        found: list[np.ndarray] = [np.zeros((0, 5), np.int64)] * len(halves)

        def backward(i: int) -> Callable[[], None]:
            def job() -> None:
                def run(h: _Half) -> tuple[int, int]:
                    status, cur, found[i] = _buckets(
                        self._g, targets, cuts_t[i], cuts_t[i + 1], *h.lab, *h.heap, h.cur, h.counters
                    )
                    return status, cur

                self._phase(halves[i], run)

            return job

        self._both(split, [backward(i) for i in range(len(halves))])
        grouped, with_entries = _group(np.concatenate(found) if split else found[0], self._at)
        return grouped, with_entries


def table(
    legs: Legs,
    ch_table: CHTable | None,
    searcher: Searcher,
    sources: Sequence[Phantom],
    destinations: Sequence[Phantom],
    exclude_flags: int = 0,
    reuse_buckets: bool = False,
) -> Table:
    """Durations (s) and distances (m) for every source x destination; NaN where unreachable (`table_units` in
    seconds and metres)."""
    w, d, t = table_units(legs, ch_table, searcher, sources, destinations, exclude_flags, reuse_buckets)
    unreachable = w >= CLOSED_DS  # INF_WEIGHT, or only over a road a speed file closed
    durations = np.where(unreachable, np.nan, t / WEIGHT_PER_SECOND)
    distances = np.where(unreachable, np.nan, d / DIST_PER_METRE)
    return Table(durations, distances, list(sources), list(destinations))


def table_units(
    legs: Legs,
    ch_table: CHTable | None,
    searcher: Searcher,
    sources: Sequence[Phantom],
    destinations: Sequence[Phantom],
    exclude_flags: int = 0,
    reuse_buckets: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """int64 weights (ds), distances (dm) and durations (ds, of the least-weight paths) [S, T]; INF_WEIGHT in all
    three where a pair is unreachable. What `table` reports, in the integers a solver works on
    (`app.engine.features.trip`).

    With `ch_table` (the hierarchy without the excluded classes) the CH bucket table (`reuse_buckets`: its kept
    buckets, `CHTable.run_flat`), else one Dijkstra per source over all destination seeds; pairs on one chain take
    the direct stretch where it is cheaper.
    """
    space = legs.space
    S, T = len(sources), len(destinations)
    if S == 0 or T == 0:
        w = np.zeros((S, T), dtype=np.int64)
        d = np.zeros((S, T), dtype=np.int64)
        t = np.zeros((S, T), dtype=np.int64)
    elif ch_table is not None:
        w, d, t = ch_table.run_flat(
            space.seeds_many(sources, True), space.seeds_many(destinations, False), reuse_buckets
        )
    else:
        src = [space.seeds(p, True).seeds for p in sources]
        dst = [space.seeds(p, False).seeds for p in destinations]
        w, d, t = many_to_many(searcher, src, dst, exclude_flags)
    # pairs on one chain: the direct stretch may beat any path through the network
    by_chain: dict[int, list[int]] = {}
    for j, p in enumerate(destinations):
        by_chain.setdefault(p.chain, []).append(j)
    for i, p in enumerate(sources):
        for j in by_chain.get(p.chain, ()):
            dr = legs.direct(p, destinations[j])
            if dr is not None and dr[0] <= w[i, j]:
                w[i, j], d[i, j], t[i, j] = dr[0], dr[1], dr[3]
    return w, d, t


def many_to_many(
    searcher: Searcher, src: list[Seeds], dst: list[Seeds], exclude_flags: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One core one-to-many search per source, until every destination seed node is settled: (weights, dists,
    durations of the same paths), int64 [S, T], INF_WEIGHT where unreachable."""
    g = searcher.graph
    owner = np.concatenate([np.full(len(s.nodes), j) for j, s in enumerate(dst)])
    nodes = np.ascontiguousarray(np.concatenate([s.nodes for s in dst]), dtype=np.int32)
    tw = np.concatenate([s.weights for s in dst])
    td = np.concatenate([s.dists for s in dst])
    tt = np.concatenate([s.duration_array() for s in dst])
    T = len(dst)
    w = np.full((len(src), T), INF_WEIGHT, dtype=np.int64)
    d = np.full((len(src), T), INF_WEIGHT, dtype=np.int64)
    t = np.full((len(src), T), INF_WEIGHT, dtype=np.int64)
    opts = SearchOptions(exclude_flags=exclude_flags) if exclude_flags else None
    for i, s in enumerate(src):
        q = searcher.one_to_many(s, nodes, options=opts)
        ow = searcher.settled_weights(q)[nodes]
        ok = ow < INF_WEIGHT
        od = np.zeros(len(nodes), dtype=np.int64)
        ot = np.zeros(len(nodes), dtype=np.int64)
        reached = np.ascontiguousarray(nodes[ok])
        if len(reached):
            part = np.empty(len(reached), dtype=np.int64)
            path_dists(searcher.lab.pred, g.arc_tail, g.arc_dist, reached, np.asarray(s.dists, dtype=np.int64), part)
            od[ok] = part
            path_dists(searcher.lab.pred, g.arc_tail, g.arc_duration, reached, s.duration_array(), part)
            ot[ok] = part
        tot_w = np.where(ok, ow + tw, INF_WEIGHT)
        tot_d = np.where(ok, od + td, INF_WEIGHT)
        tot_t = np.where(ok, ot + tt, INF_WEIGHT)
        # per destination: the cheapest of its seeds (ties: the shorter)
        order = np.lexsort((tot_d, tot_w, owner))
        first = np.unique(owner[order], return_index=True)[1]
        w[i] = tot_w[order][first]
        d[i] = tot_d[order][first]
        t[i] = tot_t[order][first]
    return w, d, t

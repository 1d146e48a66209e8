"""Contraction hierarchies: node ordering, bounded witness searches, shortcuts that unpack into original arcs.

`build_ch(graph)` contracts nodes in rounds: each round takes the independent set of nodes whose priority is
below all their neighbours' (ties on the smaller id), re-checks each with its contraction witness searches (a lazy
update: a node that got more expensive than a neighbour waits for the next round), contracts them one after another,
then re-estimates each neighbour of the round once. The priority is RoutingKit's
`level + added/removed arcs + added/removed hops` (edge difference as a ratio, hop counts as a tie-break; `level`,
the depth of contracted neighbours below a node, spreads contraction evenly). Witness searches are Dijkstra bounded
by a settled-node count and by the longest path to witness; a missed witness only adds a shortcut, it never changes a
distance. Everything that touches the graph runs in numba over flat arrays: a dynamic adjacency (per node one out- and
one in-list in a shared pool), and a lazy-deletion witness heap whose distance rows are reset by timestamps.

Input arcs: self-loops are dropped, parallel arcs (u, v) become one CH arc that keeps the minimum weight and unpacks to
the original arc of that weight with the smallest arc id. Zero weights, unreachable parts and isolated nodes are fine.

Arrays returned (every name starts with `ch_`; n nodes, U upward arcs, D downward arcs; "rank" = contraction order,
0 first; searches run on ranks, `ch_rank`/`ch_order` translate at the boundary):

| name | dtype | shape | meaning |
|---|---|---|---|
| `ch_rank` | int32 | [n] | node id -> rank |
| `ch_order` | int32 | [n] | rank -> node id (inverse of `ch_rank`) |
| `ch_up_first` | int32 | [n+1] | CSR offsets by rank of the upward graph (forward search): arcs `r -> higher rank` |
| `ch_up_arcs` | int32 | [U, 4] | per upward arc: head rank (> tail rank, ascending per tail), weight, dist, duration |
| `ch_down_first` | int32 | [n+1] | CSR offsets by rank of the downward graph (backward search): arcs `higher -> r` |
| `ch_down_arcs` | int32 | [D, 4] | per downward arc: tail rank (> head rank, ascending per head), weight, dist, time |
| `ch_unpack` | int32 | [U+D, 2] | per CH arc id: (original arc id, -1) or (first half, second half) as CH arc ids |

Weights (ds), distances (dm) and durations (ds, `arc_duration`) are those of the arc's fully unpacked path; the
durations are summed over the unpacking table after contraction. CH arc ids: `g < U` is upward arc `g`, `g >= U` is
downward arc `g - U`. A shortcut `u -> x` via middle node `v` (lower rank than both) unpacks into the arc `u -> v` (a
downward arc of `v`) followed by the arc `v -> x` (an upward arc of `v`); recursing until the second column is -1 yields
the exact original arc ids in path order. Rows are interleaved (one cache line per arc) for the searches.

Metadata: node/arc/shortcut counts, `shortcuts_per_arc`, witness limits, `seconds` per phase, search counters."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from floor.format.graph import Graph
from floor.kernels.jit import kernel
from floor.memory import trim_heap
from preprocessing.ch_kernels import (
    P_NB,
    PRIORITY_SETTLE_LIMIT,
    R_A,
    R_B,
    R_COLS,
    R_D,
    R_HEAD,
    R_HOPS,
    R_POS,
    R_TAIL,
    R_W,
    ST_DONE,
    ST_DOWN,
    ST_LAZY,
    ST_LEFT,
    ST_LEN,
    ST_NREC,
    ST_OVERFLOW,
    ST_POOL_END,
    ST_RELAXED,
    ST_ROUNDS,
    ST_SEARCHES,
    ST_SETTLED,
    ST_STAMP,
    ST_UP,
    WITNESS_HEAP_CAPACITY,
    WITNESS_SETTLE_LIMIT,
    _commit,
    _evaluate,
    _finalize_node,
    _init_lists,
    _init_priorities,
    _is_local_min,
    _priority,
)

RECORDS_PER_BASE_ARC = 4  # the record table's first capacity, base arcs and shortcuts (untouched rows are free)


class Lists(NamedTuple):
    """The dynamic adjacency's per-list rows in the pool: first slot, length, capacity (2 lists per node)."""

    start: np.ndarray
    length: np.ndarray
    cap: np.ndarray


class Order(NamedTuple):
    """The contraction order's state: per node its level and priority, the uncontracted nodes, contracted = -1."""

    level: np.ndarray
    prio: np.ndarray
    remaining: np.ndarray
    flag: np.ndarray


class Witness(NamedTuple):
    """A witness search's rows (distances and stamps), heap keys and heap nodes, reused by every search."""

    dist: np.ndarray
    keys: np.ndarray
    nodes: np.ndarray


class Ranks(NamedTuple):
    """What the contraction writes per node: its rank, and the CSR offsets of its upward and downward arcs."""

    rank: np.ndarray
    up_first: np.ndarray
    down_first: np.ndarray


@kernel
def _contract_rounds(
    max_nodes: int,
    lim_c: int,
    lim_s: int,
    pool: np.ndarray,
    rec: np.ndarray,
    pend: np.ndarray,
    st: np.ndarray,
    batch: np.ndarray,
    lists: Lists,
    order: Order,
    witness: Witness,
    out: Ranks,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contract rounds of independent nodes until `max_nodes` more are done; returns (pool, rec, pend).

    A round takes every uncontracted node whose priority is below all its neighbours' (an independent set), re-checks
    it with the contraction's own witness searches (lazy update: a node that is no longer a local minimum waits for
    the next round), contracts it, and finally re-estimates each neighbour of the round once.
    `remaining[:st[ST_LEFT]]` lists the uncontracted nodes; `flag` is -1 for contracted nodes.
    """
    lst_start, lst_len, lst_cap = lists
    level, prio, remaining, flag = order
    wd, wk, wn = witness
    rank, up_first, down_first = out
    goal = st[ST_DONE] + max_nodes
    while st[ST_LEFT] > 0 and st[ST_DONE] < goal:
        nrem = st[ST_LEFT]
        nbatch = 0
        for i in range(nrem):
            v = remaining[i]
            if _is_local_min(v, prio[v], prio, pool, lst_start, lst_len):
                batch[nbatch] = v
                nbatch += 1
        st[ST_STAMP] += 1
        mark = st[ST_STAMP]
        for i in range(nbatch):
            v = batch[i]
            added, hops, npend, pend = _evaluate(v, lim_c, True, pool, lst_start, lst_len, rec, wd, wk, wn, st, pend)
            p = _priority(v, added, hops, pool, lst_start, lst_len, rec, level)
            if p > prio[v] and not _is_local_min(v, p, prio, pool, lst_start, lst_len):
                prio[v] = p
                st[ST_LAZY] += 1
                continue
            pool, rec = _commit(npend, pend, pool, lst_start, lst_len, lst_cap, rec, st)
            lv = level[v] + 1
            for lid in (2 * v, 2 * v + 1):
                s = lst_start[lid]
                for e in range(s, s + lst_len[lid]):
                    y = pool[e, P_NB]
                    if level[y] < lv:
                        level[y] = lv
                    flag[y] = mark
            _finalize_node(v, pool, lst_start, lst_len, lst_cap, rec, st, rank, up_first, down_first)
            flag[v] = -1
        k = 0
        for i in range(nrem):
            v = remaining[i]
            if flag[v] == -1:
                continue
            remaining[k] = v
            k += 1
            if flag[v] == mark:
                a, h, _, pend = _evaluate(v, lim_s, False, pool, lst_start, lst_len, rec, wd, wk, wn, st, pend)
                prio[v] = _priority(v, a, h, pool, lst_start, lst_len, rec, level)
        st[ST_LEFT] = k
        st[ST_ROUNDS] += 1
    return pool, rec, pend


def _base_records(graph: Graph, exclude_mask: int = 0) -> tuple[np.ndarray, int]:
    """One record per distinct (tail, head), tail != head: the min-weight arc, ties on the smallest arc id; arcs whose
    flags meet `exclude_mask` are left out."""
    tail = np.asarray(graph.arc_tail)  # the graph's own arrays (int32), no copies: this runs beside the others
    head = np.asarray(graph.arc_head)
    weight = np.asarray(graph.arc_weight)
    dist = np.asarray(graph.arc_dist)
    keep = tail != head
    if exclude_mask:
        keep &= (np.asarray(graph.arc_flags).astype(np.int64) & exclude_mask) == 0
    ids = np.flatnonzero(keep)
    del keep
    order = ids[np.lexsort((ids, weight[ids], head[ids], tail[ids]))]
    if len(order):
        t, h = tail[order], head[order]
        first = np.ones(len(order), dtype=bool)
        first[1:] = (t[1:] != t[:-1]) | (h[1:] != h[:-1])
        order = order[first]
    b = len(order)
    if b and (weight[order].min() < 0 or dist[order].min() < 0):
        raise ValueError("arc weights and distances must be >= 0")
    # room for the shortcuts too (road graphs: 1.8-1.9 per base arc, so 2.9 records per base arc): growing the
    # table copies it, old and new both resident at the contraction's peak, while rows never written take no memory
    rec = np.zeros((max(RECORDS_PER_BASE_ARC * b + 16, 64), R_COLS), dtype=np.int32)
    rec[:b, R_TAIL] = tail[order]
    rec[:b, R_HEAD] = head[order]
    rec[:b, R_W] = weight[order]
    rec[:b, R_D] = dist[order]
    rec[:b, R_A] = order
    rec[:b, R_B] = -1
    rec[:b, R_HOPS] = 1
    return rec, b


def build_ch(
    graph: Graph,
    progress: Callable[[int, int], None] | None = None,
    *,
    witness_settle_limit: int = WITNESS_SETTLE_LIMIT,
    priority_settle_limit: int = PRIORITY_SETTLE_LIMIT,
    exclude_mask: int = 0,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Contract `graph` into a contraction hierarchy: (`ch_*` arrays, metadata); see the module docstring.

    With `exclude_mask`, the arcs whose `arc_flags` meet it are left out: the hierarchy of the graph without them
    (OSRM's per-exclude metric), whose shortcuts still unpack into the original arc ids.

    `progress(done, total)` is called with contracted-node counts (`seconds["prepare"]` includes loading the numba
    kernels from their cache). The witness limits bound the settled nodes of each witness search when a node is
    contracted / when its priority is estimated; smaller limits build faster and add more shortcuts.
    """
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    n = graph.num_nodes
    m = graph.num_arcs
    rec, nbase = _base_records(graph, exclude_mask)
    lst_start = np.zeros(2 * n, dtype=np.int64)
    lst_len = np.zeros(2 * n, dtype=np.int32)
    lst_cap = np.zeros(2 * n, dtype=np.int32)
    pool = _init_lists(n, rec, nbase, lst_start, lst_len, lst_cap)
    st = np.zeros(ST_LEN, dtype=np.int64)
    st[ST_POOL_END] = int(lst_cap.sum())
    st[ST_NREC] = nbase
    level = np.zeros(n, dtype=np.int32)
    prio = np.zeros(n, dtype=np.float64)
    wd = np.zeros((n, 4), dtype=np.int64)
    wk = np.empty(WITNESS_HEAP_CAPACITY, dtype=np.int64)
    wn = np.empty(WITNESS_HEAP_CAPACITY, dtype=np.int32)
    rank = np.full(n, -1, dtype=np.int32)
    up_first = np.zeros(n + 1, dtype=np.int32)
    down_first = np.zeros(n + 1, dtype=np.int32)
    pend = np.empty((64, 7), dtype=np.int64)
    remaining = np.arange(n, dtype=np.int32)
    flag = np.zeros(n, dtype=np.int64)
    batch = np.empty(max(n, 1), dtype=np.int32)
    seconds["prepare"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    chunk = max(2000, n // 100)
    for lo in range(0, n, 4 * chunk):
        hi = min(n, lo + 4 * chunk)
        _init_priorities(
            lo, hi, priority_settle_limit, pool, lst_start, lst_len, rec, level, prio, wd, wk, wn, st, pend
        )
    st[ST_LEFT] = n
    seconds["initial_priorities"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    if progress is not None:
        progress(0, n)
    lists = Lists(lst_start, lst_len, lst_cap)
    order = Order(level, prio, remaining, flag)
    witness = Witness(wd, wk, wn)
    out = Ranks(rank, up_first, down_first)
    while st[ST_DONE] < n:
        pool, rec, pend = _contract_rounds(
            chunk, witness_settle_limit, priority_settle_limit, pool, rec, pend, st, batch, lists, order, witness, out
        )
        if progress is not None:
            progress(int(st[ST_DONE]), n)
    if st[ST_OVERFLOW]:
        raise ValueError("a shortcut's weight or distance exceeds int32: the graph's weights are implausibly large")
    seconds["contract"] = time.perf_counter() - t0
    peak_pool = int(pool.shape[0])
    max_level = int(level.max()) if n else 0
    # the finalize is the contraction's peak (3 M nodes: 865 MiB against 770 in the rounds): only the records, the
    # ranks and the CSR offsets go on; the lists, the witness rows and the order's state (the tuples hold them too,
    # some 110 MiB there) go first
    del pool, lists, lst_start, lst_len, lst_cap, witness, wd, wk, wn, order, level, prio, remaining, flag, batch, out
    trim_heap()  # those under malloc's mmap threshold were heap pages: handed back, not kept for later

    t0 = time.perf_counter()
    arrays = _finalize(
        n, rec[: int(st[ST_NREC])], rank, up_first, down_first, int(st[ST_UP]), int(st[ST_DOWN]), graph.arc_duration
    )
    del rec
    seconds["finalize"] = time.perf_counter() - t0

    shortcuts = int(np.count_nonzero(arrays["ch_unpack"][:, 1] >= 0))
    ch_arcs = int(len(arrays["ch_unpack"]))
    meta: dict[str, Any] = {
        "nodes": n,
        "input_arcs": m,
        "base_arcs": int(nbase),
        "ch_arcs": ch_arcs,
        "up_arcs": int(st[ST_UP]),
        "down_arcs": int(st[ST_DOWN]),
        "shortcuts": shortcuts,
        "shortcuts_per_arc": round(shortcuts / m, 4) if m else 0.0,
        "max_level": max_level,
        "witness_settle_limit": int(witness_settle_limit),
        "priority_settle_limit": int(priority_settle_limit),
        "witness_searches": int(st[ST_SEARCHES]),
        "witness_settled": int(st[ST_SETTLED]),
        "rounds": int(st[ST_ROUNDS]),
        "lazy_deferrals": int(st[ST_LAZY]),
        "witness_relaxed": int(st[ST_RELAXED]),
        "pool_entries": peak_pool,
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
    }
    return arrays, meta


def _finalize(
    n: int,
    rec: np.ndarray,
    rank: np.ndarray,
    up_first: np.ndarray,
    down_first: np.ndarray,
    nup: int,
    ndown: int,
    arc_duration: np.ndarray,
) -> dict[str, np.ndarray]:
    """Records -> rank-indexed upward/downward CSR graphs (head/tail, weight, dist, duration) and the unpacking table.

    Everything is int32 (record and arc ids fit: the records hold them as int32) and each temporary goes once spent:
    this runs at the contraction's peak, beside the records."""
    assert nup + ndown == len(rec), "every arc record must be final once all nodes are contracted"
    pos = rec[:, R_POS]
    is_up = pos >= 0
    up_rec = np.empty(nup, dtype=np.int32)
    up_rec[pos[is_up]] = np.flatnonzero(is_up)
    is_up ^= True  # now: is down
    down_rec = np.empty(ndown, dtype=np.int32)
    down_rec[-pos[is_up] - 1] = np.flatnonzero(is_up)
    del is_up
    # within a rank, sort upward arcs by head rank and downward arcs by tail rank (locality, determinism)
    up_rec = up_rec[np.lexsort((rank[rec[up_rec, R_HEAD]], rank[rec[up_rec, R_TAIL]]))]
    down_rec = down_rec[np.lexsort((rank[rec[down_rec, R_TAIL]], rank[rec[down_rec, R_HEAD]]))]
    unpack = np.empty((nup + ndown, 2), dtype=np.int32)
    for col, field in ((0, R_A), (1, R_B)):
        unpack[:nup, col] = rec[up_rec, field]
        unpack[nup:, col] = rec[down_rec, field]
    glob = np.empty(len(rec), dtype=np.int32)  # record id -> CH arc id
    glob[up_rec] = np.arange(nup, dtype=np.int32)
    glob[down_rec] = np.arange(nup, nup + ndown, dtype=np.int32)
    sc = np.flatnonzero(unpack[:, 1] >= 0)
    unpack[sc, 0] = glob[unpack[sc, 0]]
    unpack[sc, 1] = glob[unpack[sc, 1]]
    del glob, sc
    dur = _durations(unpack, arc_duration)
    order = np.empty(n, dtype=np.int32)
    order[rank] = np.arange(n, dtype=np.int32)
    up = np.empty((nup, 4), dtype=np.int32)
    up[:, 0] = rank[rec[up_rec, R_HEAD]]
    up[:, 1] = rec[up_rec, R_W]
    up[:, 2] = rec[up_rec, R_D]
    up[:, 3] = dur[:nup]
    del up_rec
    down = np.empty((ndown, 4), dtype=np.int32)
    down[:, 0] = rank[rec[down_rec, R_TAIL]]
    down[:, 1] = rec[down_rec, R_W]
    down[:, 2] = rec[down_rec, R_D]
    down[:, 3] = dur[nup:]
    return {
        "ch_rank": rank.astype(np.int32),
        "ch_order": order,
        "ch_up_first": up_first.astype(np.int32),
        "ch_up_arcs": up,
        "ch_down_first": down_first.astype(np.int32),
        "ch_down_arcs": down,
        "ch_unpack": unpack,
    }


def _durations(unpack: np.ndarray, arc_duration: np.ndarray) -> np.ndarray:
    """int32 per CH arc: its duration, the sum over its unpacked original arcs (a fixed point over the unpacking
    table `unpack`, one pass per level of shortcut nesting)."""
    first, second = unpack[:, 0], unpack[:, 1]
    base = second < 0
    dur = np.full(len(unpack), -1, dtype=np.int64)
    dur[base] = np.asarray(arc_duration)[first[base]]
    todo = np.flatnonzero(~base)
    del base
    while len(todo):
        d1, d2 = dur[first[todo]], dur[second[todo]]
        ready = (d1 >= 0) & (d2 >= 0)
        if not ready.any():
            raise ValueError("the unpacking table has a cycle")
        dur[todo[ready]] = d1[ready] + d2[ready]
        todo = todo[~ready]
    if len(dur) and int(dur.max()) >= 2**31:
        raise ValueError("a shortcut's duration exceeds int32")
    return dur.astype(np.int32)

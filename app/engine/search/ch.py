"""Contraction-hierarchy point-to-point queries: bidirectional upward search with stall-on-demand, path unpacking.

The graph's `ch_*` arrays (see `preprocessing.contract`) are read-only and shared; a `CHSearch` owns its per-query
arrays (allocated once, reset by a timestamp, never cleared per query) and serves one thread at a time.

Labels are (weight ds, distance dm) pairs ordered lexicographically, heap ties on the smaller rank, so each direction
is a deterministic function of its seeds. The heap is the one binary heap (`floor.kernels.heap`) with int64 keys
`weight * 2**31 + dist`: lexicographic as long as a label's distance is below 2**31 dm (214,748 km) and its weight
below 2**32 ds (13 years), which `init_seeds` checks for the seeds and every road path satisfies. The result is the
lexicographic minimum of forward + backward label over the meeting nodes that both directions settle without
stalling; a direction stops once its smallest key is not below the best candidate. Stalling compares weights only
(strictly), so the weight is always Dijkstra's; the distance is that of the returned path. `CHTable`
(app.engine.features.table) runs the same one-direction kernel over the same candidate set, so its weights *and*
distances
equal `CHSearch`'s.

Labels (`new_labels`), per direction: `slot`, one int64 per node (and one more), and `lab`, int64 rows of weight,
dist, parent CH arc and duration. A node's slot holds its state stamp in the high 32 bits and its row in the low
ones; `stamp - 3*cur` is 0 (labelled), 1 (settled) or 2 (stalled), anything smaller means "not reached in this
query" (the stamp scheme of app.engine.search.core). A query hands out rows in the order it labels nodes (`slot[n]`
counts
them, reset by `init_seeds`), so it writes as many rows as it labels, side by side, and one slot per node it reaches.
Before, each node had its own 40-byte row: over many queries a worker wrote all of them, 16 MB per direction on a
400 k-node hierarchy, copied into every forked worker; now a direction's slots take 3 MB there and its rows a few
hundred kilobytes. A settled node's slot says so without a look at its row.
"""

from __future__ import annotations

import mmap
import time
from typing import Any, NamedTuple

import numpy as np
from numba import types as nt

from app.engine.errors import GraphError
from app.engine.types import INF_WEIGHT, SearchOptions, SearchResult, SearchStats, SearchTrace, Seeds, refuse_options
from floor.format.arrays import CH_PREFIX, ch_names
from floor.kernels.heap import heap_pop, heap_push, new_heap
from floor.kernels.jit import I32, I64, NONE, arr, kernel, tup

NO_CH_MESSAGE = "graph has no contraction hierarchy: re-run `starroute preprocess` without --no-ch"
CH_ARRAYS = ("ch_rank", "ch_up_first", "ch_up_arcs", "ch_down_first", "ch_down_arcs", "ch_unpack")  # what it reads
HEAP_START = 1024
D_BITS = 31  # heap key = weight << D_BITS | dist
D_MASK = (1 << D_BITS) - 1
MAX_SEED_W = 1 << 32

# label row columns
L_W = 0
L_D = 1
L_PARC = 2
L_T = 3  # the label's duration (ds): carried along, never compared (tables report it)
L_COLS = 4
ROW_BITS = 32  # a slot: state stamp << ROW_BITS | row
ROW_MASK = (1 << ROW_BITS) - 1
STAMP_LIMIT = (1 << 31) // 3 - (1 << 24)  # `cur` beyond which the slots are cleared (`fresh_stamps`)


def ch_arrays(graph: object, prefix: str = CH_PREFIX) -> dict[str, np.ndarray]:
    """The CH arrays of `graph` (`prefix`: "ch_", or "chx{i}_" for a hierarchy without an excluded class set), by
    their `ch_*` names; raises GraphError when it has none."""
    has = getattr(graph, "has", None)
    names = {name: stored for name, stored in ch_names(prefix).items() if name in CH_ARRAYS}
    if has is None or not all(has(stored) for stored in names.values()):
        raise GraphError(NO_CH_MESSAGE)
    from app.engine.data import freeze

    freeze(graph)  # type: ignore[arg-type]
    return {name: getattr(graph, stored) for name, stored in names.items()}


class CHArrays(NamedTuple):
    """A hierarchy as the kernels read it (read-only, shared): built once per hierarchy (`CHSearch.hierarchy`)."""

    rank: np.ndarray  # int32 [n] node id -> rank
    up_first: np.ndarray  # int32 [n+1]
    up_arcs: np.ndarray  # int32 [m_up, 4] head rank, weight, dist, duration
    down_first: np.ndarray  # int32 [n+1]
    down_arcs: np.ndarray  # int32 [m_down, 4] tail rank, weight, dist, duration
    unpack: np.ndarray  # int32 [m_up + m_down, 2] the two halves of a shortcut (-1: an original arc)


class CHLabels(NamedTuple):
    """One thread's bidirectional query state: both directions' labels (`new_labels`) and heaps (`ch_heap`), built
    once per query object and again when the heaps grow."""

    f_slot: np.ndarray
    f_lab: np.ndarray
    b_slot: np.ndarray
    b_lab: np.ndarray
    f_keys: np.ndarray
    f_nodes: np.ndarray
    b_keys: np.ndarray
    b_nodes: np.ndarray


class CHSeeds(NamedTuple):
    """A query's seeds, both ends: node ids (int32), weights, dists, durations (int64)."""

    s_nodes: np.ndarray
    s_w: np.ndarray
    s_d: np.ndarray
    s_t: np.ndarray
    t_nodes: np.ndarray
    t_w: np.ndarray
    t_d: np.ndarray
    t_t: np.ndarray


_RO_I32 = arr(I32, readonly=True)
_RO_ARCS = arr(I32, 2, readonly=True)  # [*, 4] head/tail rank, weight, dist, duration (unpack: [*, 2])
_LAB = arr(I64, 2)  # [n, L_COLS] label rows
_VI32, _VI64 = arr(I32), arr(I64)
_CH_T = nt.NamedTuple([_RO_I32, _RO_I32, _RO_ARCS, _RO_I32, _RO_ARCS, _RO_ARCS], CHArrays)
_LABELS_T = nt.NamedTuple([_VI64, _LAB, _VI64, _LAB, _VI64, _VI32, _VI64, _VI32], CHLabels)
_SEEDS_T = nt.NamedTuple([_VI32, _VI64, _VI64, _VI64, _VI32, _VI64, _VI64, _VI64], CHSeeds)


# --------------------------------------------------------------------------------------------------------------------
# label rows


@kernel(inline="always")
def state_of(slot, v):  # pragma: no cover - numba
    """Node v's state stamp (`3*cur` + 0, 1 or 2 when reached in this query, less otherwise)."""
    return slot[v] >> ROW_BITS


@kernel(inline="always")
def row_of(slot, v):  # pragma: no cover - numba
    """Node v's label row (v was reached in this query)."""
    return slot[v] & ROW_MASK


@kernel(inline="always")
def set_state(slot, v, stamp):  # pragma: no cover - numba
    """Give node v (reached in this query) the state `stamp`."""
    slot[v] = (stamp << ROW_BITS) | (slot[v] & ROW_MASK)


@kernel(inline="always")
def add_row(slot, v, stamp):  # pragma: no cover - numba
    """A new label row for node v, not reached in this query before, with the state `stamp`."""
    last = slot.shape[0] - 1
    r = slot[last]
    slot[last] = r + 1
    slot[v] = (stamp << ROW_BITS) | r
    return r


@kernel(inline="always")
def parent_arc(slot, lab, v):  # pragma: no cover - numba
    """The CH arc node v was labelled through (-1: a seed); v was reached in this query."""
    return lab[slot[v] & ROW_MASK, L_PARC]


# --------------------------------------------------------------------------------------------------------------------
# one search direction


@kernel(I64(_RO_I32, _VI32, _VI64, _VI64, _VI64, _VI64, _LAB, _VI64, _VI32, I64), nrt=False)
def init_seeds(rank, nodes, sw, sd, st, slot, lab, keys, hnodes, base):  # pragma: no cover - numba
    """Start a query of one direction (no rows handed out) and label the seeds (node ids, mapped to ranks):
    lexicographic minimum per node, first index on ties.

    Returns the heap size, -1 when the heap is full, -2 when a node id is out of range or a seed too large.
    """
    size = 0
    n = rank.shape[0]
    slot[n] = 0
    for i in range(nodes.shape[0]):
        if nodes[i] < 0 or nodes[i] >= n:
            return -2
        v = rank[nodes[i]]
        w = sw[i]
        d = sd[i]
        if w >= INF_WEIGHT:
            continue
        if w < 0 or w >= MAX_SEED_W or d < 0 or d > D_MASK:
            return -2
        reached = state_of(slot, v) >= base
        r = row_of(slot, v)
        if not reached or w < lab[r, L_W] or (w == lab[r, L_W] and d < lab[r, L_D]):
            if size == keys.shape[0]:
                return -1
            if not reached:
                r = add_row(slot, v, base)
            lab[r, L_W] = w
            lab[r, L_D] = d
            lab[r, L_PARC] = -1
            lab[r, L_T] = st[i]
            size = heap_push(keys, hnodes, size, (w << D_BITS) | d, v)
    return size


@kernel(
    tup(I64, I64, I64)(_RO_I32, _RO_ARCS, I64, _RO_I32, _RO_ARCS, _VI64, _LAB, _VI64, _VI32, I64, I64, _VI64), nrt=False
)
def settle_next(g_first, g_arcs, arc_base, s_first, s_arcs, slot, lab, keys, hnodes, size, base, counters):  # noqa: E501 # pragma: no cover
    """Settle the next node of one direction: (new heap size, node, status).

    status 1 = settled and relaxed along the search graph `g_*`; 2 = stalled (a labelled higher node reaches it
    strictly cheaper along the stall graph `s_*`); 0 = heap exhausted; -1 = heap full (grow it and rerun the query).
    The label of a node reached through search-graph arc `e` records the CH arc id `arc_base + e`.
    counters[0] += settled nodes, counters[1] += relaxed arcs.
    """
    cap = keys.shape[0]
    while size > 0:
        key, v, size = heap_pop(keys, hnodes, size)
        w = key >> D_BITS
        d = key & D_MASK
        rv = row_of(slot, v)  # a node on the heap was reached
        if state_of(slot, v) != base or w != lab[rv, L_W] or d != lab[rv, L_D]:
            continue
        counters[0] += 1
        for e in range(s_first[v], s_first[v + 1]):
            x = s_arcs[e, 0]
            if state_of(slot, x) >= base and lab[row_of(slot, x), L_W] + s_arcs[e, 1] < w:
                set_state(slot, v, base + 2)
                return size, v, 2
        set_state(slot, v, base + 1)
        tv = lab[rv, L_T]
        lo = g_first[v]
        hi = g_first[v + 1]
        counters[1] += hi - lo
        for e in range(lo, hi):
            x = g_arcs[e, 0]
            sx = state_of(slot, x)
            if sx > base:
                continue
            rx = row_of(slot, x)
            nw = w + g_arcs[e, 1]
            nd = d + g_arcs[e, 2]
            if sx < base or nw < lab[rx, L_W] or (nw == lab[rx, L_W] and nd < lab[rx, L_D]):
                if size == cap:
                    return size, v, -1
                if sx < base:
                    rx = add_row(slot, x, base)
                lab[rx, L_W] = nw
                lab[rx, L_D] = nd
                lab[rx, L_PARC] = arc_base + e
                lab[rx, L_T] = tv + g_arcs[e, 3]
                size = heap_push(keys, hnodes, size, (nw << D_BITS) | nd, x)
        return size, v, 1
    return size, -1, 0


# --------------------------------------------------------------------------------------------------------------------
# bidirectional query and unpacking


@kernel(I64(_RO_I32, I64), nrt=False)
def _owner(first, e):  # pragma: no cover - numba
    """The rank r with first[r] <= e < first[r+1] (binary search)."""
    lo = 0
    hi = first.shape[0] - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if first[mid] <= e:
            lo = mid
        else:
            hi = mid
    return lo


@kernel(I64(_RO_I32, _VI32, _VI64, _VI64, I64), nrt=False)
def _pick_seed(rank, nodes, sw, sd, r):  # pragma: no cover - numba
    """The seed whose label starts at rank `r` (lexicographic minimum there, first index on ties; as init_seeds)."""
    best = -1
    for i in range(nodes.shape[0]):
        if rank[nodes[i]] == r and sw[i] < INF_WEIGHT:
            if best < 0 or sw[i] < sw[best] or (sw[i] == sw[best] and sd[i] < sd[best]):
                best = i
    return best


@kernel(tup(I64, I64, I64, I64)(I64, _VI64, _LAB, _VI64, _LAB, _RO_I32, _RO_I32), nrt=False)
def _chain_ends(meet, f_slot, f_lab, b_slot, b_lab, up_first, down_first):  # pragma: no cover - numba
    """(CH arcs on the path through `meet`, how many of them upward, source rank, target rank) from the two parent
    chains (allocation-free: no reference counting per parent step)."""
    nup = up_first[up_first.shape[0] - 1]
    k = 0
    v = meet
    while parent_arc(f_slot, f_lab, v) >= 0:
        k += 1
        v = _owner(up_first, parent_arc(f_slot, f_lab, v))
    src = v
    kf = k
    v = meet
    while parent_arc(b_slot, b_lab, v) >= 0:
        k += 1
        v = _owner(down_first, parent_arc(b_slot, b_lab, v) - nup)
    return k, kf, src, v


@kernel(NONE(I64, _VI64, _LAB, _VI64, _LAB, _RO_I32, _RO_I32, I64, _VI64), nrt=False)
def _fill_chain(meet, f_slot, f_lab, b_slot, b_lab, up_first, down_first, kf, chain):  # pragma: no cover - numba
    """Write the CH arcs of the path through `meet` into `chain` in path order (`kf` of them upward)."""
    nup = up_first[up_first.shape[0] - 1]
    i = kf - 1
    v = meet
    while parent_arc(f_slot, f_lab, v) >= 0:  # meet -> source along upward arcs, written backwards
        chain[i] = parent_arc(f_slot, f_lab, v)
        i -= 1
        v = _owner(up_first, parent_arc(f_slot, f_lab, v))
    i = kf
    v = meet
    while parent_arc(b_slot, b_lab, v) >= 0:  # meet -> target along downward arcs
        chain[i] = parent_arc(b_slot, b_lab, v)
        i += 1
        v = _owner(down_first, parent_arc(b_slot, b_lab, v) - nup)


@kernel(I64(_VI64, _RO_ARCS, _VI64, _VI64), nrt=False)
def _expand(chain, unpack, out, stack):  # pragma: no cover - numba
    """Write the original arcs of the CH arcs `chain` into `out` (depth first along `unpack`): how many, or -1 when
    `out` or `stack` is too small."""
    no = 0
    for j in range(chain.shape[0]):
        stack[0] = chain[j]
        sp = 1
        while sp > 0:
            sp -= 1
            g = stack[sp]
            if unpack[g, 1] < 0:
                if no == out.shape[0]:
                    return -1
                out[no] = unpack[g, 0]
                no += 1
            else:
                if sp + 2 > stack.shape[0]:
                    return -1
                stack[sp] = unpack[g, 1]
                stack[sp + 1] = unpack[g, 0]
                sp += 2
    return no


@kernel(tup(_VI32, I64, I64)(I64, _VI64, _LAB, _VI64, _LAB, _RO_I32, _RO_I32, _RO_ARCS))
def unpack_path(meet, f_slot, f_lab, b_slot, b_lab, up_first, down_first, unpack):  # pragma: no cover - numba
    """(original arc ids of the path through `meet`, source rank, target rank) from the two parent chains."""
    k, kf, src, dst = _chain_ends(meet, f_slot, f_lab, b_slot, b_lab, up_first, down_first)
    chain = np.empty(k, dtype=np.int64)
    _fill_chain(meet, f_slot, f_lab, b_slot, b_lab, up_first, down_first, kf, chain)
    return expand_chain(chain, unpack), src, dst


@kernel
def expand_chain(chain, unpack):  # pragma: no cover - numba
    """The original arcs (int32) of the CH arcs `chain`, `_expand`'s buffers grown until they hold them."""
    out = np.empty(max(32 * chain.shape[0], 512), dtype=np.int64)  # a CH arc stands for 12 arcs (median on Porto)
    stack = np.empty(64, dtype=np.int64)
    no = _expand(chain, unpack, out, stack)
    while no < 0:  # a buffer was too small: grow both, expand again
        out = np.empty(4 * out.shape[0], dtype=np.int64)
        stack = np.empty(2 * stack.shape[0], dtype=np.int64)
        no = _expand(chain, unpack, out, stack)
    arcs = np.empty(no, dtype=np.int32)
    for j in range(no):
        arcs[j] = out[j]
    return arcs


@kernel(tup(I64, I64, I64, I64)(_CH_T, _SEEDS_T, _LABELS_T, I64, _VI64, _VI32), nrt=False)
def _meet(ch, seeds, labels, base, counters, trace):  # pragma: no cover - numba
    """The bidirectional search of `_run`: (status, weight, dist, meeting rank (-1: none)). Allocation-free, so it
    compiles without reference counting: the loop's helper calls then cost no atomic array reference updates."""
    rank, up_first, up_arcs, down_first, down_arcs, _ = ch
    s_nodes, s_w, s_d, s_t, t_nodes, t_w, t_d, t_t = seeds
    f_slot, f_lab, b_slot, b_lab, f_keys, f_nodes, b_keys, b_nodes = labels
    nup = up_arcs.shape[0]
    fsize = init_seeds(rank, s_nodes, s_w, s_d, s_t, f_slot, f_lab, f_keys, f_nodes, base)
    bsize = init_seeds(rank, t_nodes, t_w, t_d, t_t, b_slot, b_lab, b_keys, b_nodes, base)
    if fsize < 0 or bsize < 0:
        return min(fsize, bsize), INF_WEIGHT, INF_WEIGHT, -1
    best_w = INF_WEIGHT
    best_d = INF_WEIGHT
    best = INF_WEIGHT  # as a heap key: (best_w, best_d)
    meet = -1
    f_on = True
    b_on = True
    ntrace = 0
    tcap = trace.shape[0]
    while True:
        if f_on and (fsize == 0 or f_keys[0] >= best):
            f_on = False
        if b_on and (bsize == 0 or b_keys[0] >= best):
            b_on = False
        if not f_on and not b_on:
            break
        if f_on and (not b_on or b_keys[0] >= f_keys[0]):
            fsize, v, status = settle_next(
                up_first, up_arcs, 0, down_first, down_arcs, f_slot, f_lab, f_keys, f_nodes, fsize, base, counters
            )
            other_st = state_of(b_slot, v) if v >= 0 else 0
            side = 0
        else:
            bsize, v, status = settle_next(
                down_first, down_arcs, nup, up_first, up_arcs, b_slot, b_lab, b_keys, b_nodes, bsize, base, counters
            )
            other_st = state_of(f_slot, v) if v >= 0 else 0
            side = 1
        if status < 0:
            return -1, INF_WEIGHT, INF_WEIGHT, -1
        if status > 0 and ntrace < tcap:  # stalled nodes too: popped and counted as settled, like the rest
            trace[ntrace] = 2 * v + side
            ntrace += 1
        if status == 1 and other_st == base + 1:
            rf = row_of(f_slot, v)
            rb = row_of(b_slot, v)
            cw = f_lab[rf, L_W] + b_lab[rb, L_W]
            cd = f_lab[rf, L_D] + b_lab[rb, L_D]
            if cw < best_w or (cw == best_w and cd < best_d):
                best_w = cw
                best_d = cd
                best = (cw << D_BITS) | cd if cw < MAX_SEED_W and cd <= D_MASK else INF_WEIGHT
                meet = v
    counters[2] = ntrace
    counters[3] = meet
    return 0, best_w, best_d, meet


@kernel
def _run(ch, seeds, labels, base, counters, trace):  # pragma: no cover - numba
    """(status, weight, dist, arcs, source seed, target seed); status -1 = a heap is full, -2 = bad seed node.

    `trace` (int32, may be empty) records settled ranks (stalled ones included, as in counters[0]) as
    `2 * rank + direction`; counters[2] counts them, counters[3] is the meeting rank (-1: none)."""
    none = np.zeros(0, dtype=np.int32)
    status, best_w, best_d, meet = _meet(ch, seeds, labels, base, counters, trace)
    if status < 0 or meet < 0:
        return status, INF_WEIGHT, INF_WEIGHT, none, -1, -1
    rank, up_first, _, down_first, _, unpack = ch
    s_nodes, s_w, s_d, _, t_nodes, t_w, t_d, _ = seeds
    f_slot, f_lab, b_slot, b_lab = labels[0], labels[1], labels[2], labels[3]
    arcs, src, dst = unpack_path(meet, f_slot, f_lab, b_slot, b_lab, up_first, down_first, unpack)
    return 0, best_w, best_d, arcs, _pick_seed(rank, s_nodes, s_w, s_d, src), _pick_seed(rank, t_nodes, t_w, t_d, dst)


# --------------------------------------------------------------------------------------------------------------------


def untouched_zeros(shape: int | tuple[int, ...], dtype: type | np.dtype) -> np.ndarray:
    """A zero array in fresh anonymous memory: only the pages written take memory. (`np.zeros` may recycle heap
    memory that malloc then clears, touching every page.) Private: a forked worker writes its own copy of a page,
    never its siblings' (`mmap`'s default, MAP_SHARED, would share one query object's labels among the workers)."""
    count = int(np.prod(shape))
    size = max(count * np.dtype(dtype).itemsize, 1)
    return np.frombuffer(mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE), dtype=dtype, count=count).reshape(shape)


def new_labels(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The labels of one search direction over `n` nodes: (slots, rows), see the module's docstring."""
    return untouched_zeros(n + 1, np.int64), untouched_zeros((max(n, 1), L_COLS), np.int64)


def fresh_stamps(cur: int, *labels: tuple[np.ndarray, np.ndarray]) -> int:
    """`cur`, or 0 with the slots of `labels` cleared once it nears the slots' 31 bits of stamp (every ~7e8
    queries): the stamp of the next query is `3 * (cur + 1)`."""
    if cur < STAMP_LIMIT:
        return cur
    for slot, _ in labels:
        slot.fill(0)
    return 0


def ch_heap(cap: int = HEAP_START) -> tuple[np.ndarray, np.ndarray]:
    """int64 keys and int32 rank arrays of one heap of `cap` entries (the one heap, `floor.kernels.heap`)."""
    return new_heap(cap, np.int64)


def _column(x: object, dtype: type) -> np.ndarray:
    """`x` as a C-contiguous writable array of `dtype` (`CHSeeds`' one type), copied only when it is not one."""
    if isinstance(x, np.ndarray) and x.dtype == dtype and x.flags.c_contiguous and x.flags.writeable:
        return x
    return np.array(x, dtype=dtype)


def seed_arrays(seeds: Seeds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nodes int32, weights int64, dists int64) of a seed set, converted only when needed."""
    return _column(seeds.nodes, np.int32), _column(seeds.weights, np.int64), _column(seeds.dists, np.int64)


def ch_seeds(sources: Seeds, targets: Seeds) -> CHSeeds:
    """A query's `CHSeeds`, always of the one type `_meet` takes."""
    return CHSeeds(
        *seed_arrays(sources), _column(sources.duration_array(), np.int64),
        *seed_arrays(targets), _column(targets.duration_array(), np.int64),
    )  # fmt: skip


_PLAIN = SearchOptions()


class CHSearch:
    """One worker's CH query object over a shared graph: `CHSearch(graph).run(sources, targets)`.

    After `run`, `distance` holds the distance (dm, seed distances included) of the returned path, or INF_WEIGHT.
    """

    def __init__(self, graph: object, prefix: str = CH_PREFIX, exclude_flags: int = 0) -> None:
        a = ch_arrays(graph, prefix)
        self.exclude_flags = exclude_flags  # the arc_flags bits the hierarchy under `prefix` was contracted without
        self._g = CHArrays(*(a[name] for name in CH_ARRAYS))
        n = int(len(a["ch_rank"]))
        self._labels = CHLabels(*new_labels(n), *new_labels(n), *ch_heap(), *ch_heap())
        self._entry: tuple[CHLabels | None, Any] = (None, None)  # (labels, `_run`'s entry point): see `_query`
        self._cur = 0
        self._counters = np.zeros(4, dtype=np.int64)
        self._order = np.asarray(getattr(graph, ch_names(prefix)["ch_order"]))
        self.distance = INF_WEIGHT
        self._trace = np.zeros(0, dtype=np.int32)

    def weight_between(self, source: int, target: int) -> int:
        """The weight (ds) of a shortest path from search node `source` to `target` (INF_WEIGHT: none): `run`'s query
        without seed arrays, statistics or result objects to build (alternatives' T-tests)."""
        zero = np.zeros(1, dtype=np.int64)
        seeds = CHSeeds(
            np.array([source], dtype=np.int32), zero, zero, zero, np.array([target], dtype=np.int32), zero, zero, zero
        )
        while True:
            self._cur = self._fresh() + 1
            status, w, _, _, _, _ = self._query(seeds, 3 * self._cur, self._trace[:0])
            if status == 0:
                return int(w)
            if status == -2:
                raise ValueError("seed node id out of range")
            self.grow_heaps()

    def _query(self, seeds: CHSeeds, base: int, trace: np.ndarray) -> tuple:
        """`_run` through its compiled entry point, without numba's per-call typing of each argument (it types a
        named tuple in Python, element by element: 3 us of a 10 us Monaco query for the three structs). The types
        are fixed: the hierarchy's, `ch_seeds`', the labels' (the entry is looked up again when they are rebuilt),
        a Python int, int64 counters and an int32 trace."""
        labels = self._labels
        if self._entry[0] is not labels:
            import numba

            args = (self._g, seeds, labels, base, self._counters, trace)
            sig = tuple(numba.typeof(a) for a in args)
            if sig not in _run.overloads:  # each thread's searcher asks once: compile (or load) only the first time
                _run.compile(sig)
            self._entry = (labels, _run.overloads[sig].entry_point)
        return self._entry[1](self._g, seeds, labels, base, self._counters, trace)  # type: ignore[no-any-return]

    @property
    def labels(self) -> CHLabels:
        """Both directions' labels and heaps (a kernel that runs the query inside, `app.engine.route.ch_leg`)."""
        return self._labels

    def _fresh(self) -> int:
        lab = self._labels
        return fresh_stamps(self._cur, (lab.f_slot, lab.f_lab), (lab.b_slot, lab.b_lab))

    def next_base(self) -> int:
        """The state stamp base of the next query (`fresh_stamps`), its counters cleared."""
        self._cur = self._fresh() + 1
        self._counters.fill(0)
        return 3 * self._cur

    @property
    def counters(self) -> np.ndarray:
        """The last query's counters: settled, relaxed, trace entries, meeting rank."""
        return self._counters

    def grow_heaps(self) -> None:
        """Double both heaps (a query found one full: status -1)."""
        lab = self._labels
        f_keys, f_nodes = ch_heap(2 * len(lab.f_keys))
        b_keys, b_nodes = ch_heap(2 * len(lab.b_keys))
        self._labels = lab._replace(f_keys=f_keys, f_nodes=f_nodes, b_keys=b_keys, b_nodes=b_nodes)

    @property
    def hierarchy(self) -> CHArrays:
        """The arrays the kernels read (read-only, shared)."""
        return self._g

    def check(self, options: SearchOptions) -> None:
        """`InvalidValue` naming an option a hierarchy cannot honour (all but `trace` and its own exclusion)."""
        refuse_options(options, "ch", self.exclude_flags)

    def run(self, sources: Seeds, targets: Seeds, options: SearchOptions | None = None) -> SearchResult:
        """Best path from any source seed to any target seed (weights ds include the seeds' initial weights).

        Of `options` the hierarchy honours `trace` and the `exclude_flags` it was contracted without; areas to
        avoid (`forbidden`), `epsilon` and a `cutoff` are refused with `InvalidValue`.
        """
        opts = _PLAIN if options is None else options
        if opts is not _PLAIN:
            self.check(opts)
        trace_on = opts.trace
        t0 = time.perf_counter()
        seeds = ch_seeds(sources, targets)
        counters = self._counters
        if trace_on and self._trace.shape[0] != opts.trace_limit:
            self._trace = np.zeros(opts.trace_limit, dtype=np.int32)
        trace = self._trace if trace_on else self._trace[:0]
        while True:
            base = self.next_base()
            status, w, d, arcs, si, ti = self._query(seeds, base, trace)
            if status == 0:
                break
            if status == -2:
                raise ValueError("seed node id out of range")
            self.grow_heaps()
        self.distance = int(d)
        stats = SearchStats("ch", int(counters[0]), int(counters[1]), (time.perf_counter() - t0) * 1e6)
        tr = None
        if trace_on:
            k = int(counters[2])
            entries = trace[:k]
            nodes = self._order[entries >> 1].astype(np.int32)  # ranks -> node ids
            meet = int(self._order[counters[3]]) if counters[3] >= 0 else -1
            tr = SearchTrace((nodes << 1) | (entries & 1), meet, k >= trace.shape[0])
        return SearchResult(int(w), arcs, int(si), int(ti), stats, tr)

"""A hierarchy leg in one kernel call: seeds, search, road path and leg figures (the route hot path).

`Legs.leg` answers a plain leg (the contraction hierarchy on the edge-based graph, no trace, no direction forced at
a via point, both phantoms seeded by `EdgeMap.seeds` alone) here instead of step by step. `_ch_leg` calls the
kernels the steps call, in the same order and with the same values: `_edge_seeds` and `_seed_columns` for both
phantoms (`EdgeMap.seeds`), the lower bound that lets a direct stretch skip the search (`Legs.leg`), `ch._run`
(`CHSearch.run`; on a customized CCH `CCHSearch`'s tree walk instead, `cch_query.leg_search`), `_road_path` with
the seed's whole arc in front when the leg starts on a node (`EdgeSpace.road_path`), and `_leg_parts` with the
figures `Assembler.search_leg` picks by how the leg leaves and enters its phantoms. So the leg is the same to the
bit; what goes is the Python between the steps (the seed and result objects, a dozen kernel dispatches): about a
fifth of an in-process route request on Porto.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from app.engine.route.assemble import AT_FIRST, AT_LAST, BWD, FWD, Assembler, LegEnd, _leg_parts
from app.engine.route.edges import EdgeMap, _edge_seeds, _road_path, _seed_columns, seed_figures
from app.engine.search.cch_query import ETLabels, leg_search, new_state
from app.engine.search.ch import CHArrays, CHLabels, CHSearch, CHSeeds, ch_heap, new_labels
from app.engine.types import Phantom
from floor.format.units import CLOSED_DS, INF_WEIGHT
from floor.kernels.jit import Entries, kernel

# `_ch_leg`'s status (after `ch._run`'s own: -1 a heap is full, -2 a bad seed node)
LEG = 0  # the leg's figures follow
DIRECT_FIRST = 1  # the direct stretch is no dearer than the cheapest seeds: no search ran
DIRECT = 2  # the search ran; the direct stretch is no dearer than its path
NO_ROUTE = 3  # the search found no path (or only one over a closed road)


class PhantomSide(NamedTuple):
    """A phantom as `_ch_leg` seeds and assembles it: its `EdgeSpace.plain_place` (node, kind), `seed_figures` (the
    source's after its point, the target's before), point, chain and segment; float64 and int64 fields."""

    at: int
    at_kind: int
    fwd: int
    fw: int
    fd: int
    ft: int
    bwd: int
    bw: int
    bd: int
    bt: int
    lon: float
    lat: float
    chain: int
    seg: int


def phantom_side(ph: Phantom, place: tuple[int, int], as_source: bool) -> PhantomSide:
    """`ph`'s `PhantomSide` (`place` its `EdgeSpace.plain_place`)."""
    fwd, fw, fd, ft, bwd, bw, bd, bt = (int(x) for x in seed_figures(ph, as_source))
    return PhantomSide(int(place[0]), int(place[1]), fwd, fw, fd, ft, bwd, bw, bd, bt, float(ph.lon), float(ph.lat),
                       int(ph.chain), int(ph.segment))  # fmt: skip


@kernel
def _ch_leg(
    src, tgt, direct_w, seed_arrays, path_arrays, ch, labels, base, counters, trace, geometry, yes, no
):  # fmt: skip  # pragma: no cover - numba
    """(status, weight, dist, the kind the leg enters its target by, and `_leg_parts`' figures; None unless the
    status is LEG). `src` and `tgt` are `PhantomSide`s: the source's figures are those after its point, the
    target's those before (as seeds); `direct_w` is the direct stretch's weight (-1: none); then the `EdgeMap`'s
    `SeedArrays` and `PathArrays`, the hierarchy's `CHArrays`, the search's `CHLabels`, stamp base, counters and
    trace, and the `Assembler`'s `LegGeometry`. `yes` and `no` are True and False from Python: a literal argument
    would compile the kernels called with it once more (numba specialises on literals)."""
    s_at, s_at_kind, s_fwd, s_fw, s_fd, s_ft, s_bwd, s_bw, s_bd, s_bt, s_lon, s_lat, s_chain, s_seg = src
    t_at, t_at_kind, t_fwd, t_fw, t_fd, t_ft, t_bwd, t_bw, t_bd, t_bt, t_lon, t_lat, t_chain, t_seg = tgt
    s_nodes, s_rows = _edge_seeds(yes, s_at, s_at_kind, s_fwd, s_fw, s_fd, s_ft, s_bwd, s_bw, s_bd, s_bt, seed_arrays)
    t_nodes, t_rows = _edge_seeds(no, t_at, t_at_kind, t_fwd, t_fw, t_fd, t_ft, t_bwd, t_bw, t_bd, t_bt, seed_arrays)
    sw, sd, st, s_kinds, _s_turns = _seed_columns(s_rows)
    tw, td, tt, t_kinds, t_turns = _seed_columns(t_rows)
    status = LEG
    w = INF_WEIGHT
    d = INF_WEIGHT
    t_kind = -1
    arcs = np.zeros(0, dtype=np.int32)
    si = ti = -1
    lower_s = INF_WEIGHT
    for i in range(sw.shape[0]):
        lower_s = min(lower_s, sw[i])
    lower_t = INF_WEIGHT
    for i in range(tw.shape[0]):
        lower_t = min(lower_t, tw[i])
    if direct_w >= 0 and direct_w <= lower_s + lower_t:
        status = DIRECT_FIRST
    else:
        seeds = CHSeeds(s_nodes, sw, sd, st, t_nodes, tw, td, tt)
        status, w, d, path, si, ti = leg_search(ch, seeds, labels, base, counters, trace)
        if status == 0:
            if direct_w >= 0 and direct_w < CLOSED_DS and (w >= CLOSED_DS or direct_w <= w):
                status = DIRECT
            elif w >= CLOSED_DS:
                status = NO_ROUTE
            else:
                status = LEG
                arcs = path
    if status != LEG:
        return status, w, d, t_kind, None
    road, turns = _road_path(arcs, path_arrays)
    s_kind = s_kinds[si]
    n = road.shape[0]
    lead = 1 if s_kind == AT_FIRST or s_kind == AT_LAST else 0  # started on the seed's whole arc: it goes first
    road_arcs = np.empty(n + lead, dtype=np.int32)
    turn_w = np.zeros(n + lead, dtype=np.int64)
    turn_t = np.zeros(n + lead, dtype=np.int64)
    if lead:
        road_arcs[0] = path_arrays.node_arc[s_nodes[si]]
    for i in range(n):
        road_arcs[lead + i] = road[i]
        turn_w[lead + i] = turns[i, 0]
        turn_t[lead + i] = turns[i, 1]
    if s_kind == FWD:
        s_arc, s_w, s_d, s_t = s_fwd, s_fw, s_fd, s_ft
    elif s_kind == BWD:
        s_arc, s_w, s_d, s_t = s_bwd, s_bw, s_bd, s_bt
    else:
        s_arc, s_w, s_d, s_t = (s_fwd if s_fwd >= 0 else s_bwd), 0, 0, 0
    t_kind = t_kinds[ti]
    if t_kind == FWD:
        t_arc, t_w, t_d, t_t = t_fwd, t_fw, t_fd, t_ft
    elif t_kind == BWD:
        t_arc, t_w, t_d, t_t = t_bwd, t_bw, t_bd, t_bt
    else:
        t_arc, t_w, t_d, t_t = (t_fwd if t_fwd >= 0 else t_bwd), 0, 0, 0
    s_end = LegEnd(s_lon, s_lat, s_chain, s_seg, s_kind, s_arc, s_w, s_d, s_t)
    t_end = LegEnd(t_lon, t_lat, t_chain, t_seg, t_kind, t_arc, t_w, t_d, t_t)
    parts = _leg_parts(road_arcs, geometry, s_end, t_end, no, turn_w, turn_t, t_turns[ti, 0], t_turns[ti, 1], yes)
    return status, w, d, t_kind, parts


def ch_leg(
    search: CHSearch,
    edges: EdgeMap,
    assembler: Assembler,
    src: Phantom,
    src_place: tuple[int, int],
    tgt: Phantom,
    tgt_place: tuple[int, int],
    direct_w: int,
) -> tuple[int, int, int, int, tuple | None, float]:
    """`_ch_leg` on `search`'s query arrays, its heaps grown until they suffice: (status, weight, dist, target
    kind, `_leg_parts`' figures (None unless the status is LEG), microseconds). `*_place` are the phantoms'
    `EdgeSpace.plain_place`."""
    t0 = time.perf_counter()
    while True:
        query = (search.hierarchy, search.labels, search.next_base(), search.counters, _NO_TRACE)
        args = _arguments(edges, assembler, query, src, src_place, tgt, tgt_place, direct_w)
        status, w, d, kind, parts = _entry(args)(*args)
        if status == -2:
            raise ValueError("seed node id out of range")
        if status != -1:
            break
        search.grow_heaps()
    if status != DIRECT_FIRST:
        search.distance = int(d)
    return status, int(w), int(d), int(kind), parts, (time.perf_counter() - t0) * 1e6


def _arguments(
    edges: EdgeMap,
    assembler: Assembler,
    query: tuple,
    src: Phantom,
    src_place: tuple[int, int],
    tgt: Phantom,
    tgt_place: tuple[int, int],
    direct_w: int,
) -> tuple:
    """`_ch_leg`'s arguments; `query` is the hierarchy's `CHArrays`, a search's `CHLabels`, the stamp base,
    counters, trace."""
    return (
        phantom_side(src, src_place, True), phantom_side(tgt, tgt_place, False), int(direct_w), edges.seed_arrays,
        edges.path_arrays, *query, assembler.geometry, True, False,
    )  # fmt: skip


# `_ch_leg` called without numba's per-call typing of each argument (the 7 structs of a call cost more than the 73
# flat arguments did): every argument's type is fixed but for the graph's structs (`SeedArrays`, `PathArrays`,
# `CHArrays`, `CHLabels`, `LegGeometry`), by whose ids its entry point is kept
_ENTRIES = Entries(_ch_leg)


def _entry(args: tuple) -> Any:
    """`_ch_leg`'s compiled entry point for `args` (`_ENTRIES`)."""
    return _ENTRIES.get(args, (args[3], args[4], args[5], args[6], args[10]))


def warm(edges: EdgeMap, assembler: Assembler) -> None:
    """Compile (or load) `_ch_leg` for the arrays of a graph that has no hierarchy yet: the hierarchy's and the
    query's arrays are stand-ins of the types a `CHSearch` holds, nothing runs. A first start's compile job warms
    it on its sample graph while the graph the server will serve is still being built (`app.warmup`)."""
    import numba

    def frozen(a: np.ndarray) -> np.ndarray:
        a.setflags(write=False)
        return a

    one = frozen(np.zeros(1, dtype=np.int32))
    arcs = frozen(np.zeros((1, 4), dtype=np.int32))
    pairs = frozen(np.zeros((1, 2), dtype=np.int32))
    hierarchy = CHArrays(one, one, arcs, one, arcs, pairs)
    heap = CHLabels(*new_labels(1), *new_labels(1), *ch_heap(2), *ch_heap(2))
    tree = ETLabels(one, new_state(1))  # a customized CCH's `CCHSearch`: the elimination-tree walk
    ph = Phantom(0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    for labels in (heap, tree):
        query = (hierarchy, labels, 0, np.zeros(4, dtype=np.int64), _NO_TRACE)
        args = _arguments(edges, assembler, query, ph, (0, 0), ph, (0, 0), 0)
        _ch_leg.compile(tuple(numba.typeof(a) for a in args))


_NO_TRACE = np.zeros(0, dtype=np.int32)

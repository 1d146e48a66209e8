"""Contraction hierarchies: CH == Dijkstra on random graphs, exact unpacking, seeds, table == single queries.

Random graphs come from a numpy seed drawn by hypothesis (printed in every failure message and in the falsifying
example): directed arcs with self-loops, parallel arcs, zero weights and disconnected parts. The oracle is a plain
heapq Dijkstra over the original arcs.
"""

from __future__ import annotations

import heapq
import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from app.engine.data import search_graph  # the graph the searches run on (edge-based where turns are on)
from app.engine.errors import GraphError
from app.engine.features.table import CHTable
from app.engine.search.ch import NO_CH_MESSAGE, CHSearch
from app.engine.types import INF_WEIGHT, Seeds
from floor.format.graph import Graph, graph_in_memory
from preprocessing.contract import build_ch
from preprocessing.graph import arrays_from_arcs
from tests.conftest import all_extracts

INF = int(INF_WEIGHT)
# the graphs these tests ask `graph_cache` for, built ahead by conftest's background builder
GRAPHS = [("andorra.osm.pbf", "car", True, 8)]  # and each parametrized extract's default build
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_graph(seed: int, n: int, m: int, zero_share: float = 0.2) -> Graph:
    """Random directed graph: two node blocks (rarely linked), self-loops, parallel arcs, some zero weights."""
    rng = np.random.default_rng(seed)
    split = int(rng.integers(0, n + 1))
    tail = rng.integers(0, n, m)
    head = rng.integers(0, n, m)
    # keep most arcs inside their block so the graph has separate parts
    same = (tail < split) == (head < split)
    keep = same | (rng.random(m) < 0.1)
    tail, head = tail[keep], head[keep]
    k = len(tail)
    dup = rng.integers(0, k, k // 6) if k else np.zeros(0, dtype=np.int64)  # explicit parallel copies
    loops = rng.integers(0, n, 2)  # and self-loops
    tail = np.concatenate([tail, tail[dup], loops])
    head = np.concatenate([head, head[dup], loops])
    k = len(tail)
    weight = rng.integers(1, 30, k)
    weight[rng.random(k) < zero_share] = 0
    dist = rng.integers(0, 500, k)
    return graph_in_memory(arrays_from_arcs(tail, head, weight, dist, n=n))


def with_ch(graph: Graph, **kw: int) -> Graph:
    arrays, _ = build_ch(graph, **kw)
    graph.arrays.update(arrays)
    return graph


def dijkstra(graph: Graph, seeds: list[tuple[int, int]]) -> list[int]:
    """Multi-source Dijkstra over the original arcs; `seeds` are (node, initial weight); INF where unreachable."""
    n = graph.num_nodes
    first, head, weight = graph.first_out, graph.arc_head, graph.arc_weight
    dist = [INF] * n
    pq = []
    for v, w in seeds:
        if w < dist[v]:
            dist[v] = w
            heapq.heappush(pq, (w, v))
    while pq:
        d, u = heapq.heappop(pq)
        if d > dist[u]:
            continue
        for a in range(first[u], first[u + 1]):
            nd = d + int(weight[a])
            v = int(head[a])
            if nd < dist[v]:
                dist[v] = nd
                heapq.heappush(pq, (nd, v))
    return dist


def seeds(nodes: list[int], weights: list[int] | None = None, dists: list[int] | None = None) -> Seeds:
    k = len(nodes)
    return Seeds(
        np.asarray(nodes, dtype=np.int32),
        np.asarray(weights if weights is not None else [0] * k, dtype=np.int64),
        np.asarray(dists if dists is not None else [0] * k, dtype=np.int64),
        0.0,
        0.0,
    )


def check_path(graph: Graph, res, src: Seeds, dst: Seeds, distance: int, where: str) -> None:
    """The arcs are a real chain from the chosen source seed node to the chosen target one, summing to the cost."""
    arcs = res.arcs
    assert arcs.dtype == np.int32, where
    s_node = int(src.nodes[res.source_seed])
    t_node = int(dst.nodes[res.target_seed])
    if len(arcs) == 0:
        assert s_node == t_node, where
    else:
        assert int(graph.arc_tail[arcs[0]]) == s_node, where
        assert int(graph.arc_head[arcs[-1]]) == t_node, where
        assert np.array_equal(graph.arc_head[arcs[:-1]], graph.arc_tail[arcs[1:]]), where
    w = int(src.weights[res.source_seed]) + int(graph.arc_weight[arcs].sum()) + int(dst.weights[res.target_seed])
    d = int(src.dists[res.source_seed]) + int(graph.arc_dist[arcs].sum()) + int(dst.dists[res.target_seed])
    assert w == res.weight, f"{where}: arcs sum to {w}, search says {res.weight}"
    assert d == distance, f"{where}: arc distances sum to {d}, search says {distance}"


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 28),
    density=st.floats(0.5, 4.0),
    limits=st.sampled_from([(300, 60), (1, 1), (2, 1), (5, 3)]),
)
def test_ch_equals_dijkstra_all_pairs(seed: int, n: int, density: float, limits: tuple[int, int]) -> None:
    note(f"seed={seed} n={n} density={density} limits={limits}")
    g = with_ch(
        random_graph(seed, n, int(n * density)), witness_settle_limit=limits[0], priority_settle_limit=limits[1]
    )
    q = CHSearch(g)
    for s in range(n):
        expect = dijkstra(g, [(s, 0)])
        for t in range(n):
            src, dst = seeds([s]), seeds([t])
            res = q.run(src, dst)
            where = f"seed={seed} n={n} density={density} limits={limits} pair=({s},{t})"
            assert res.weight == expect[t], f"{where}: CH {res.weight}, Dijkstra {expect[t]}"
            if expect[t] == INF:
                assert len(res.arcs) == 0 and res.source_seed == -1 and res.target_seed == -1, where
                assert q.distance == INF, where
            else:
                check_path(g, res, src, dst, q.distance, where)
            assert res.stats.algorithm == "ch" and res.stats.settled >= 0 and res.stats.micros > 0


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40))
def test_multi_seed_with_offsets(seed: int, n: int) -> None:
    note(f"seed={seed} n={n}")
    g = with_ch(random_graph(seed, n, 3 * n))
    rng = np.random.default_rng(seed + 1)
    q = CHSearch(g)
    for trial in range(25):
        ks, kt = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        src = seeds(list(rng.integers(0, n, ks)), list(rng.integers(0, 40, ks)), list(rng.integers(0, 90, ks)))
        dst = seeds(list(rng.integers(0, n, kt)), list(rng.integers(0, 40, kt)), list(rng.integers(0, 90, kt)))
        dist = dijkstra(g, [(int(v), int(w)) for v, w in zip(src.nodes, src.weights, strict=True)])
        expect = min(
            (dist[int(v)] + int(w) if dist[int(v)] < INF else INF) for v, w in zip(dst.nodes, dst.weights, strict=True)
        )
        res = q.run(src, dst)
        where = f"seed={seed} n={n} trial={trial}"
        assert res.weight == expect, f"{where}: CH {res.weight}, Dijkstra {expect}"
        if expect < INF:
            check_path(g, res, src, dst, q.distance, where)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_table_equals_single_queries(seed: int, n: int) -> None:
    note(f"seed={seed} n={n}")
    g = with_ch(random_graph(seed, n, 3 * n, zero_share=0.4))
    rng = np.random.default_rng(seed + 2)

    def some() -> list[Seeds]:
        out = []
        for _ in range(int(rng.integers(0, 7))):
            k = int(rng.integers(1, 3))
            out.append(seeds(list(rng.integers(0, n, k)), list(rng.integers(0, 20, k)), list(rng.integers(0, 50, k))))
        return out

    srcs, dsts = some(), some()
    w, d = CHTable(g).run(srcs, dsts)
    assert w.shape == d.shape == (len(srcs), len(dsts)) and w.dtype == d.dtype == np.int64
    split = CHTable(g, split_cells=0)  # each phase in two halves, one on the helper thread
    for _ in range(2):  # and again on the same labels (stamps carry on)
        ws, ds, ts = split.run_with_durations(srcs, dsts)
        assert ws.tolist() == w.tolist() and ds.tolist() == d.tolist(), f"seed={seed} n={n}: split table differs"
        assert ts.tolist() == CHTable(g).run_with_durations(srcs, dsts)[2].tolist()
        assert not split._at.any(), "the node -> bucket rows map must be clear between tables"
    q = CHSearch(g)
    for i, s in enumerate(srcs):
        for j, t in enumerate(dsts):
            res = q.run(s, t)
            where = f"seed={seed} n={n} cell=({i},{j})"
            assert w[i, j] == res.weight, f"{where}: table {w[i, j]}, single {res.weight}"
            assert d[i, j] == q.distance, f"{where}: table distance {d[i, j]}, single {q.distance}"


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_kept_buckets_give_the_same_table(seed: int, n: int) -> None:
    """`reuse=True` (a matrix's blocks): tables over target sets asked in turn, some again after others pushed them
    out of the kept ones, equal a fresh table object's cell for cell (weights, distances, durations), split or not,
    with `at` clear between tables."""
    from app.engine.features.table import KEEP_BUCKETS
    from app.engine.route.space import flat_seeds

    note(f"seed={seed} n={n}")
    g = with_ch(random_graph(seed, n, 3 * n, zero_share=0.4))
    rng = np.random.default_rng(seed + 3)

    def some(lo: int) -> list[Seeds]:
        out = []
        for _ in range(int(rng.integers(lo, 7))):
            k = int(rng.integers(1, 3))
            out.append(seeds(list(rng.integers(0, n, k)), list(rng.integers(0, 20, k)), list(rng.integers(0, 50, k))))
        return out

    targets = [flat_seeds(some(0)) for _ in range(KEEP_BUCKETS + 2)]
    order = [0, 0, 1, 0, *range(2, KEEP_BUCKETS + 2), 0, 1, 1]  # hits, and 0 and 1 asked again after eviction
    for split_cells in (2500, 0):
        kept = CHTable(g, split_cells=split_cells)
        for k in order:
            srcs = flat_seeds(some(0))
            got = kept.run_flat(srcs, targets[k], reuse=True)
            want = CHTable(g, split_cells=split_cells).run_flat(srcs, targets[k])
            for name, a, b in zip(("weights", "dists", "durations"), got, want, strict=True):
                assert a.tolist() == b.tolist(), f"seed={seed} n={n} targets {k}: {name} differ"
            assert not kept._at.any(), "the node -> bucket rows map must be clear between tables"
        assert len(kept._kept) <= KEEP_BUCKETS


def test_unreachable_is_prompt_and_empty() -> None:
    # 0 -> 1 -> 2 and a separate 3 <-> 4; 2 cannot reach anything
    g = with_ch(graph_in_memory(arrays_from_arcs([0, 1, 3, 4], [1, 2, 4, 3], [5, 5, 1, 1], [50, 50, 10, 10])))
    q = CHSearch(g)
    for s, t in ((0, 3), (2, 0), (4, 1)):
        res = q.run(seeds([s]), seeds([t]))
        assert res.weight == INF and len(res.arcs) == 0 and (res.source_seed, res.target_seed) == (-1, -1)
        assert res.stats.settled <= 5
    res = q.run(seeds([0]), seeds([2]))
    assert res.weight == 10 and list(res.arcs) == [0, 1] and q.distance == 100
    w, d = CHTable(g).run([seeds([0]), seeds([3])], [seeds([2]), seeds([4])])
    assert w.tolist() == [[10, INF], [INF, 1]] and d.tolist() == [[100, INF], [INF, 10]]


def test_same_node_and_seed_weights() -> None:
    g = with_ch(graph_in_memory(arrays_from_arcs([0, 1], [1, 0], [4, 4], [40, 40])))
    q = CHSearch(g)
    res = q.run(seeds([1], [3], [30]), seeds([1], [2], [20]))
    assert res.weight == 5 and len(res.arcs) == 0 and q.distance == 50
    # a seed behind its node: source 0 at +7 vs source 1 at +1 towards target 1
    res = q.run(seeds([0, 1], [0, 7]), seeds([1]))
    assert res.weight == 4 and res.source_seed == 0 and list(res.arcs) == [0]


def test_parallel_arcs_unpack_to_min_weight_smallest_id() -> None:
    # arcs are stored sorted by (tail, head, weight, ...): ids 0..3 are 0->1 with weights 3, 3, 7 and 1->1 loop
    g = with_ch(graph_in_memory(arrays_from_arcs([0, 0, 0, 1, 1], [1, 1, 1, 1, 2], [7, 3, 3, 0, 2], [9, 5, 6, 0, 1])))
    assert g.arc_weight.tolist() == [3, 3, 7, 0, 2]
    res = CHSearch(g).run(seeds([0]), seeds([2]))
    assert res.weight == 5 and list(res.arcs) == [0, 4]


def test_long_line_unpacks_past_the_first_buffer() -> None:
    # 0 -> 1 -> ... -> 2999 and back: a route end to end is few CH arcs standing for thousands, more than the
    # unpacking's first buffer holds (32 per CH arc, 512 at least), so it is expanded again into a larger one
    n = 3000
    fwd = np.arange(n - 1)
    tail = np.concatenate([fwd, fwd + 1])
    head = np.concatenate([fwd + 1, fwd])
    k = len(tail)
    g = with_ch(graph_in_memory(arrays_from_arcs(tail, head, np.full(k, 3), np.full(k, 10))))
    q = CHSearch(g)
    for s, t in ((0, n - 1), (n - 1, 0), (17, 2911)):
        src, dst = seeds([s]), seeds([t])
        res = q.run(src, dst)
        assert res.weight == 3 * abs(t - s) and len(res.arcs) == abs(t - s)
        check_path(g, res, src, dst, q.distance, f"line {s} -> {t}")


def test_expand_refuses_buffers_too_small() -> None:
    from app.engine.search.ch import _expand

    # arcs 0..3 are original; 4 = (0, 1), 5 = (4, 2), 6 = (5, 3): CH arc 6 stands for 0, 1, 2, 3
    unpack = np.array([[0, -1], [1, -1], [2, -1], [3, -1], [0, 1], [4, 2], [5, 3]], dtype=np.int32)
    unpack.flags.writeable = False
    chain = np.array([6], dtype=np.int64)
    out = np.zeros(4, dtype=np.int64)
    assert _expand(chain, unpack, out, np.zeros(64, dtype=np.int64)) == 4 and out.tolist() == [0, 1, 2, 3]
    assert _expand(chain, unpack, np.zeros(3, dtype=np.int64), np.zeros(64, dtype=np.int64)) == -1
    assert _expand(chain, unpack, np.zeros(4, dtype=np.int64), np.zeros(2, dtype=np.int64)) == -1


def test_zero_weight_cycle_and_isolated_nodes() -> None:
    # a zero-weight cycle 0 -> 1 -> 2 -> 0, an exit 2 -> 3, isolated nodes 4, 5
    g = with_ch(graph_in_memory(arrays_from_arcs([0, 1, 2, 2], [1, 2, 0, 3], [0, 0, 0, 4], [1, 1, 1, 1], n=6)))
    q = CHSearch(g)
    src, dst = seeds([1]), seeds([3])
    res = q.run(src, dst)
    assert res.weight == 4
    check_path(g, res, src, dst, q.distance, "zero-weight cycle")
    assert q.run(seeds([4]), seeds([5])).weight == INF
    assert q.run(seeds([5]), seeds([5])).weight == 0


def test_missing_ch_is_a_graph_error() -> None:
    g = graph_in_memory(arrays_from_arcs([0], [1], [1]))
    for cls in (CHSearch, CHTable):
        with pytest.raises(GraphError) as exc:
            cls(g)
        assert str(exc.value) == NO_CH_MESSAGE


def test_bad_seed_node_raises() -> None:
    g = with_ch(graph_in_memory(arrays_from_arcs([0], [1], [1])))
    with pytest.raises(ValueError):
        CHSearch(g).run(seeds([0]), seeds([2]))
    with pytest.raises(ValueError):
        CHTable(g).run([seeds([-1])], [seeds([0])])


def test_arrays_and_metadata() -> None:
    g = random_graph(11, 60, 200)
    calls: list[tuple[int, int]] = []
    arrays, meta = build_ch(g, progress=lambda done, total: calls.append((done, total)))
    n = g.num_nodes
    assert all(name.startswith("ch_") for name in arrays)
    assert all(a.dtype == np.int32 for a in arrays.values())
    rank, order = arrays["ch_rank"], arrays["ch_order"]
    assert np.array_equal(np.sort(rank), np.arange(n)) and np.array_equal(order[rank], np.arange(n))
    up_first, down_first = arrays["ch_up_first"], arrays["ch_down_first"]
    up, down, unpack = arrays["ch_up_arcs"], arrays["ch_down_arcs"], arrays["ch_unpack"]
    nup, ndown = int(up_first[-1]), int(down_first[-1])
    assert up.shape == (nup, 4) and down.shape == (ndown, 4) and unpack.shape == (nup + ndown, 2)
    up_tail = np.repeat(np.arange(n), np.diff(up_first))
    down_head = np.repeat(np.arange(n), np.diff(down_first))
    assert np.all(up[:, 0] > up_tail) and np.all(down[:, 0] > down_head)
    # every CH arc unpacks into a chain of original arcs with its weight and distance, between its end nodes
    tails = np.concatenate([up_tail, down[:, 0]])
    heads = np.concatenate([up[:, 0], down_head])
    weights = np.concatenate([up[:, 1], down[:, 1]])
    dists = np.concatenate([up[:, 2], down[:, 2]])
    times = np.concatenate([up[:, 3], down[:, 3]])
    a, b = unpack[:, 0], unpack[:, 1]

    def unpack_arc(gid: int) -> list[int]:
        return [int(a[gid])] if b[gid] < 0 else unpack_arc(int(a[gid])) + unpack_arc(int(b[gid]))

    for gid in range(nup + ndown):
        arcs = np.asarray(unpack_arc(gid))
        assert order[tails[gid]] == g.arc_tail[arcs[0]] and order[heads[gid]] == g.arc_head[arcs[-1]]
        assert np.array_equal(g.arc_head[arcs[:-1]], g.arc_tail[arcs[1:]])
        assert g.arc_weight[arcs].sum() == weights[gid] and g.arc_dist[arcs].sum() == dists[gid]
        assert g.arc_duration[arcs].sum() == times[gid]
    assert meta["shortcuts"] == int(np.count_nonzero(b >= 0))
    assert meta["ch_arcs"] == nup + ndown and meta["input_arcs"] == g.num_arcs
    assert meta["shortcuts_per_arc"] == pytest.approx(meta["shortcuts"] / g.num_arcs, abs=1e-4)
    assert {"contract", "initial_priorities"} <= set(meta["seconds"])
    assert calls and calls[0] == (0, n) and calls[-1] == (n, n)


def test_empty_graph() -> None:
    arrays, meta = build_ch(graph_in_memory(arrays_from_arcs(np.zeros(0), np.zeros(0), np.zeros(0), n=0)))
    assert meta["nodes"] == 0 and arrays["ch_up_first"].tolist() == [0]
    g = graph_in_memory(arrays_from_arcs(np.zeros(0), np.zeros(0), np.zeros(0), n=3))
    with_ch(g)
    assert CHSearch(g).run(seeds([0]), seeds([2])).weight == INF
    w, _ = CHTable(g).run([], [seeds([1])])
    assert w.shape == (0, 1)


# --------------------------------------------------------------------------------------------------------------------
# real extracts (graphs built through the preprocess pipeline)


def _landmarks() -> int:
    """Share the graph cache with test_extracts (8 landmarks) once the landmarks stage exists."""
    return 8 if importlib.util.find_spec("preprocessing.landmarks") is not None else 0


def check_real_graph(g: Graph, pairs: int, seed: int = 5) -> None:
    from app.engine.search.reference import dijkstra_weights  # the oracle (checked against networkx elsewhere)

    n = g.num_nodes
    rng = np.random.default_rng(seed)
    n_src = max(1, pairs // 50)
    sources = rng.integers(0, n, n_src)
    targets = rng.integers(0, n, (n_src, 50))
    ref = np.stack([dijkstra_weights(g, int(s)) for s in sources]).astype(np.float64)
    ref[ref >= INF] = np.inf
    q = CHSearch(g)
    for i, s in enumerate(sources):
        for t in targets[i]:
            src, dst = seeds([int(s)]), seeds([int(t)])
            res = q.run(src, dst)
            where = f"{g.path} pair=({s},{t})"
            expect = INF if np.isinf(ref[i, t]) else int(ref[i, t])
            assert res.weight == expect, f"{where}: CH {res.weight}, Dijkstra {expect}"
            if expect < INF:
                check_path(g, res, src, dst, q.distance, where)
    pts = [seeds([int(v)]) for v in rng.integers(0, n, 25)]
    w, d = CHTable(g).run(pts, pts)
    for i in range(len(pts)):
        for j in range(len(pts)):
            res = q.run(pts[i], pts[j])
            assert (w[i, j], d[i, j]) == (res.weight, q.distance)


def test_real_extract_andorra(graph_cache) -> None:  # type: ignore[no-untyped-def]
    from floor.format.graph import load_graph

    g = search_graph(load_graph(graph_cache("andorra.osm.pbf", "car", ch=True, landmarks=_landmarks())))
    meta = g.manifest["ch"]
    assert meta["shortcuts"] > 0 and meta["nodes"] == g.num_nodes
    check_real_graph(g, pairs=2000)


@pytest.mark.extracts
@pytest.mark.slow
@pytest.mark.parametrize("profile", ("car", "foot"))
@pytest.mark.parametrize("name", all_extracts())
def test_real_extracts_2000_pairs(graph_cache, name: str, profile: str) -> None:  # type: ignore[no-untyped-def]
    from floor.format.graph import load_graph

    check_real_graph(search_graph(load_graph(graph_cache(name, profile, ch=True, landmarks=_landmarks()))), pairs=2000)


def test_stamps_start_again_without_changing_answers() -> None:
    """Near the slots' 31 bits of stamp, the query objects clear their slots and count from 0 again
    (`fresh_stamps`): queries before and after the wrap answer as a fresh object does, in point-to-point queries,
    tables (whose kernels count one stamp per search) and via-node candidates (whose marks restart too)."""
    from app.engine.search.ch import STAMP_LIMIT
    from app.engine.search.via_alternatives import ViaSearch

    g = with_ch(random_graph(7, 40, 120, zero_share=0.2))
    rng = np.random.default_rng(7)
    pairs = [(seeds([int(a)]), seeds([int(b)])) for a, b in rng.integers(0, 40, (30, 2))]
    fresh = CHSearch(g)
    expect = [(fresh.run(s, t).weight, fresh.distance) for s, t in pairs]
    old = CHSearch(g)
    old._cur = STAMP_LIMIT - 10
    got = [(old.run(s, t).weight, old.distance) for s, t in pairs]
    assert got == expect and old._cur < 30
    srcs, dsts = [p[0] for p in pairs[:12]], [p[1] for p in pairs[:12]]
    want = CHTable(g).run_with_durations(srcs, dsts)
    table = CHTable(g)
    for h in table._halves:
        h.cur = STAMP_LIMIT - 5
    for _ in range(2):
        assert all(a.tolist() == b.tolist() for a, b in zip(table.run_with_durations(srcs, dsts), want, strict=True))
    assert table._halves[0].cur < 100
    plain, wrapped = ViaSearch(g, g), ViaSearch(g, g)
    wrapped._cur = STAMP_LIMIT - 1  # the first request's stamps are the last before the wrap
    for s, t in pairs[:10]:
        a = [(c[0].tolist(), c[1:]) for c in plain.candidates(s, t, 1.25)]
        b = [(c[0].tolist(), c[1:]) for c in wrapped.candidates(s, t, 1.25)]
        assert a == b
    assert wrapped._cur < 1000


def test_label_memory_is_private_to_a_forked_worker() -> None:
    """A worker forked from the supervisor writes its own copy of an inherited query object's labels: a child's
    writes never reach the parent (nor a sibling)."""
    import os

    from app.engine.search.ch import new_labels

    slot, rows = new_labels(1000)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        slot[:] = 7
        rows[:] = 7
        os._exit(0)
    os.waitpid(pid, 0)
    assert not slot.any() and not rows.any()

"""The customizable hierarchy: structure invariants, and every customized metric exact against Dijkstra.

Random graphs (tests.unit.test_ch's: self-loops, parallel arcs, zero weights, separate parts; the seed in every message)
are customized with their own weights, with new random weights, and with a random set of arcs forbidden, basic and
perfect; routes (`CHSearch`, path and distance included) and tables (`CHTable`) on the result are compared with a
plain Dijkstra on the same metric, and the (weight, dist) labels with the witness CH's. On Monaco (edge-based, turns
on) the router serves a new metric swapped in between requests; on Andorra the excluded class sets are customized
on the CCH.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.data import excludable, load, search_graph
from app.engine.errors import GraphError
from app.engine.features.table import CHTable
from app.engine.search.cch import Metric, customize, has_cch
from app.engine.search.ch import CHSearch
from app.engine.search.reference import DijkstraSearch
from app.engine.types import INF_WEIGHT
from floor.format.arrays import FormatError
from floor.format.checks import check_cch
from floor.format.graph import Graph, graph_in_memory
from floor.kernels import cch_customize
from floor.kernels.cch_customize import customize_arrays, split_tree
from preprocessing.cch import build_cch, chordal_supergraph, undirected
from preprocessing.contract import build_ch
from preprocessing.graph import arrays_from_arcs
from tests.unit.test_ch import check_path, random_graph, seeds

SEEDS = range(60)
# the graphs these tests ask `graph_cache` for, built ahead by conftest's background builder
GRAPHS = [("monaco.osm.gz", "car", True, 0), ("andorra.osm.pbf", "car", True, 8)]


def with_cch(graph: Graph) -> Graph:
    arrays, _ = build_cch(graph)
    graph.arrays.update(arrays)
    return graph


def reweighted(graph: Graph, weight: np.ndarray, dist: np.ndarray, keep: np.ndarray | None = None) -> Graph:
    """The same nodes with new arc weights and distances (and only the `keep` arcs): what the oracle searches."""
    keep = np.ones(graph.num_arcs, dtype=bool) if keep is None else keep
    arrays = arrays_from_arcs(
        np.asarray(graph.arc_tail)[keep], np.asarray(graph.arc_head)[keep], weight[keep], dist[keep], n=graph.num_nodes
    )
    return graph_in_memory(arrays)


def lex_dijkstra(graph: Graph, source: int) -> list[tuple[int, int]]:
    """(weight, dist) of the lexicographically least path from `source` to every node; (INF, INF) unreachable."""
    import heapq

    inf = (int(INF_WEIGHT), int(INF_WEIGHT))
    best = [inf] * graph.num_nodes
    best[source] = (0, 0)
    pq = [(0, 0, source)]
    first, head, weight, dist = graph.first_out, graph.arc_head, graph.arc_weight, graph.arc_dist
    while pq:
        w, d, u = heapq.heappop(pq)
        if (w, d) > best[u]:
            continue
        for a in range(first[u], first[u + 1]):
            cand = (w + int(weight[a]), d + int(dist[a]))
            v = int(head[a])
            if cand < best[v]:
                best[v] = cand
                heapq.heappush(pq, (*cand, v))
    return best


def same_ids(graph: Graph, weight: np.ndarray, dist: np.ndarray) -> Graph:
    """`graph` (same arc ids) with new arc weights and distances: what the paths are checked on."""
    return graph_in_memory({**graph.arrays, "arc_weight": weight.astype(np.int32), "arc_dist": dist.astype(np.int32)})


def check_all_pairs(
    graph: Graph, oracle: Graph, hierarchy: Graph, where: str, witness: Graph | None = None, paths: Graph | None = None
) -> None:
    """CHSearch and CHTable on `hierarchy` against Dijkstra on `oracle` (the metric's graph, same node ids), every
    pair, in (weight, dist) lexicographically; the paths are real chains of `paths`' arcs (default `graph`: the arc
    ids the hierarchy unpacks into); weights equal the witness CH's when given (its distance is only that of the
    path it returns: its stalls compare weights alone)."""
    paths = graph if paths is None else paths
    n = graph.num_nodes
    search = CHSearch(hierarchy)
    wit = CHSearch(witness) if witness is not None else None
    table_w, table_d = CHTable(hierarchy).run([seeds([u]) for u in range(n)], [seeds([v]) for v in range(n)])
    for u in range(n):
        ref = lex_dijkstra(oracle, u)
        for v in range(n):
            res = search.run(seeds([u]), seeds([v]))
            msg = f"{where} {u}->{v}"
            want = ref[v][0]
            assert res.weight == want, f"{msg}: cch {res.weight} != dijkstra {want}"
            assert table_w[u, v] == want, f"{msg}: table {table_w[u, v]} != dijkstra {want}"
            if want < INF_WEIGHT:
                check_path(paths, res, seeds([u]), seeds([v]), search.distance, msg)
                assert search.distance == ref[v][1], f"{msg}: cch dist {search.distance} != dijkstra {ref[v][1]}"
                assert table_d[u, v] == search.distance, msg
            if wit is not None:
                wr = wit.run(seeds([u]), seeds([v]))
                assert wr.weight == res.weight, f"{msg}: witness CH differs"


@pytest.mark.parametrize("perfect", [False, True])
def test_customized_equals_dijkstra_own_new_and_forbidden(perfect: bool) -> None:
    for seed in SEEDS:
        rng = np.random.default_rng(seed + 1000)
        n = int(rng.integers(1, 26))
        g = with_cch(random_graph(seed, n, int(n * rng.uniform(0.5, 4.0))))
        m = g.num_arcs
        witness = graph_in_memory(build_ch(g)[0])
        check_all_pairs(g, g, customize(g, perfect=perfect), f"seed {seed} own", witness)
        # a new metric on the same structure: random weights (zeros too) and distances
        w = rng.integers(0, 50, m)
        d = rng.integers(0, 900, m)
        oracle = reweighted(g, w, d)
        new = customize(g, weight=w, dist=d, duration=w + 1, perfect=perfect)
        wit = graph_in_memory(build_ch(same_ids(g, w, d))[0])
        check_all_pairs(g, oracle, new, f"seed {seed} reweighted", wit, same_ids(g, w, d))
        # the arcs of a class forbidden (an exclude): Dijkstra on the graph without them
        forbidden = rng.random(m) < 0.3
        ex = customize(g, w, d, w, forbidden, perfect)
        check_all_pairs(g, reweighted(g, w, d, ~forbidden), ex, f"seed {seed} ex", None, same_ids(g, w, d))
        up_down = np.concatenate([ex.ch_unpack[:, 0][ex.ch_unpack[:, 1] < 0]])
        assert not forbidden[up_down].any(), f"seed {seed}: a forbidden arc in the hierarchy"


def _customized(g: Graph, threads: int, forbidden: np.ndarray | None = None, perfect: bool = True) -> dict:
    return customize_arrays(
        g.arrays, g.arc_tail, g.arc_head, g.arc_weight, g.arc_dist, g.arc_duration, forbidden, perfect, threads=threads
    )


def _check_split(g: Graph, threads: int) -> None:
    """Every node in one place; each group closed under descendants (a node's parent in its group or the top), the
    top under ancestors; every list rising."""
    first, head = np.asarray(g.cch_first), np.asarray(g.cch_head)
    split = split_tree(first, head, threads)
    n = len(first) - 1
    where = np.full(n, -1)
    for k, nodes in enumerate([*split.below, split.top]):
        assert (np.diff(nodes) > 0).all()
        assert (where[nodes] == -1).all()
        where[nodes] = k
    assert (where >= 0).all()
    top = len(split.below)
    for v in range(n):
        if first[v + 1] > first[v]:  # its parent: the lowest upper neighbour
            p = int(head[first[v]])
            assert where[p] in (where[v], top), f"node {v} in {where[v]}, its parent {p} in {where[p]}"


@pytest.mark.parametrize("threads", [2, 3])
def test_customization_on_threads_is_the_same(threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps 2 and 3 on an elimination tree split into groups of whole subtrees (`split_tree`) give the one-thread
    arrays bit for bit, on random graphs (forests, separate parts) with and without forbidden arcs, basic and
    perfect: the one-thread result is the one the tests above check against Dijkstra."""
    monkeypatch.setattr(cch_customize, "MIN_THREADED_ARCS", 0)
    for seed in range(25):
        rng = np.random.default_rng(seed + 2000)
        n = int(rng.integers(1, 60))
        g = with_cch(random_graph(seed, n, int(n * rng.uniform(0.5, 4.0))))
        _check_split(g, threads)
        forbidden = rng.random(g.num_arcs) < 0.2
        for perfect in (False, True):
            for forb in (None, forbidden):
                one, many = _customized(g, 1, forb, perfect), _customized(g, threads, forb, perfect)
                assert one.keys() == many.keys()
                for k in one:
                    assert np.array_equal(one[k], many[k]), f"seed {seed} {k} perfect={perfect}"


def test_durations_are_those_of_the_chosen_paths() -> None:
    """The 4th column carries each arc's duration: the unpacked path's durations sum to the table's."""
    for seed in range(10):
        g = with_cch(random_graph(seed, 18, 50))
        dur = np.random.default_rng(seed).integers(0, 100, g.num_arcs)
        h = customize(g, duration=dur)
        search = CHSearch(h)
        _, _, t = CHTable(h).run_with_durations([seeds([u]) for u in range(18)], [seeds([v]) for v in range(18)])
        for u in range(18):
            for v in range(18):
                res = search.run(seeds([u]), seeds([v]))
                if res.weight < INF_WEIGHT:
                    assert t[u, v] == int(dur[res.arcs].sum()), f"seed {seed} {u}->{v}"


def test_structure_is_chordal_and_checked() -> None:
    """Every pair of a node's upper neighbours is an arc (the elimination game's fill); `check_cch` refuses damage."""
    g = with_cch(random_graph(3, 30, 90))
    first, head = g.cch_first, g.cch_head
    pairs = {(x, int(y)) for x in range(30) for y in head[first[x] : first[x + 1]]}
    for x in range(30):
        up = head[first[x] : first[x + 1]]
        for i, y in enumerate(up):
            for z in up[i + 1 :]:
                assert (int(y), int(z)) in pairs, f"{x}: {y}-{z} missing"
    check_cch(g.arrays, "", 30)
    bad = dict(g.arrays)
    bad["cch_head"] = g.cch_head[::-1].copy()
    with pytest.raises(FormatError, match="cch_head"):
        check_cch(bad, "", 30)
    bad = dict(g.arrays)
    arc_of = g.cch_arc_of.copy()
    i = int(np.flatnonzero(arc_of >= 0)[0])
    arc_of[i] = (arc_of[i] + 1) % len(head)
    bad["cch_arc_of"] = arc_of
    with pytest.raises(FormatError, match="cch_arc_of"):
        check_cch(bad, "", 30)


def test_undirected_is_the_simple_symmetric_graph() -> None:
    """The int32 kernel's CSR is the symmetric graph without loops and repeats, rows ascending: the (tail, head)
    pairs np.unique gives (the former int64 build), on a multigraph with loops, parallels and both directions."""
    rng = np.random.default_rng(7)
    n, m = 300, 2000
    tail = rng.integers(0, n, m).astype(np.int32)
    head = np.where(rng.random(m) < 0.05, tail, rng.integers(0, n, m)).astype(np.int32)
    head[:50], tail[:50] = tail[50:100], head[50:100]  # some arcs in both directions, some repeated
    xadj, adjncy = undirected(n, tail, head)
    keep = tail != head
    pairs = np.unique(np.stack([np.r_[tail[keep], head[keep]], np.r_[head[keep], tail[keep]]], axis=1), axis=0)
    assert xadj.dtype == np.int64 and adjncy.dtype == np.int32
    assert np.array_equal(xadj, np.r_[0, np.cumsum(np.bincount(pairs[:, 0], minlength=n))])
    assert np.array_equal(adjncy, pairs[:, 1])
    ro = tail.copy(), head.copy()  # the graph's arrays are read-only
    for a in ro:
        a.setflags(write=False)
    assert np.array_equal(undirected(n, *ro)[1], adjncy)


def test_a_path_order_makes_no_fill() -> None:
    """A path ranked end to end needs no arcs beyond its own; ranked middle-first it needs no more either."""
    n = 6
    xadj, adjncy = undirected(n, np.arange(n - 1), np.arange(1, n))
    first, head, parent, max_deg = chordal_supergraph(n, xadj, adjncy, np.arange(n, dtype=np.int32))
    assert len(head) == n - 1 and max_deg == 1 and list(parent) == [1, 2, 3, 4, 5, -1]


def test_no_structure_no_customization() -> None:
    g = random_graph(1, 5, 8)
    assert not has_cch(g)
    with pytest.raises(GraphError, match="customizable"):
        customize(g)


@pytest.fixture(scope="module")
def monaco(graph_cache) -> Graph:  # type: ignore[no-untyped-def]
    return load(graph_cache("monaco.osm.gz", "car", ch=True, landmarks=0))


def test_monaco_customized_metrics_equal_dijkstra(monaco: Graph) -> None:
    """Edge-based with turns: the graph's own metric equals the witness CH; a random re-weighting equals Dijkstra."""
    g = search_graph(monaco)
    assert g.manifest["search_graph"] == "edge" and has_cch(g)
    rng = np.random.default_rng(5)
    nodes = rng.choice(np.flatnonzero(np.asarray(g.node_component) == 0), 40)
    own = CHSearch(customize(g))
    witness = CHSearch(g)
    w = np.asarray(g.arc_weight) * rng.uniform(0.5, 3.0, g.num_arcs)
    w = np.maximum(w.astype(np.int64), 1)
    new = CHSearch(customize(g, weight=w))
    oracle = DijkstraSearch(graph_in_memory({**g.arrays, "arc_weight": w.astype(np.int32)}))
    for s, t in zip(nodes[:20], nodes[20:], strict=True):
        a, b = seeds([int(s)]), seeds([int(t)])
        assert own.run(a, b).weight == witness.run(a, b).weight, f"{s}->{t}"
        assert own.distance == witness.distance, f"{s}->{t}"
        assert new.run(a, b).weight == oracle.run(a, b).weight, f"reweighted {s}->{t}"


def test_monaco_router_swaps_metric_and_customizes_excludes(monaco: Graph) -> None:
    """A metric served from the next request on (the old query object finishes on the old one)."""
    from app.engine.router import Router

    r = Router(monaco)
    g = r.search_graph
    assert all(e.prefix is None or e.prefix == "ch_" for e in excludable(monaco))  # no chx* hierarchies on disk
    rng = np.random.default_rng(9)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    a, b = (int(v) for v in rng.choice(main, 2))
    q = r.query()
    before = q.route([r.snap(*_lonlat(monaco, g, a)), r.snap(*_lonlat(monaco, g, b))], "ch")
    # the graph's own weights customized on the CCH (the assembler re-adds the graph's weights along the path, so a
    # metric with other weights comes with a graph carrying them)
    metric = Metric.customized_on(g, name="own")
    old_search = q._search("ch")
    r.set_metric(metric)
    after = q.route([r.snap(*_lonlat(monaco, g, a)), r.snap(*_lonlat(monaco, g, b))], "ch")
    assert q._search("ch") is not old_search and r.metric is metric
    # equal weight; the distance never longer: the CCH's is the lexicographic minimum, the witness CH's the distance
    # of the path it found (its stalls compare weights alone)
    assert after.weight == before.weight and after.distance_m <= before.distance_m


def test_andorra_customized_on_two_threads_as_on_one(graph_cache) -> None:  # type: ignore[no-untyped-def]
    """A real extract's tree split in two (as a country's): the same hierarchy as one thread makes, excluded sets
    included."""
    road = load(graph_cache("andorra.osm.pbf", "car", ch=True, landmarks=8))
    g = search_graph(road)
    _check_split(g, 2)
    split = split_tree(np.asarray(g.cch_first), np.asarray(g.cch_head), 2)
    if len(g.cch_head) >= cch_customize.MIN_THREADED_ARCS:
        assert len(split.below) == 2 and min(map(len, split.below)) > 0
    flags = np.asarray(g.arc_flags)
    for forb in (None, *((flags & e.mask) != 0 for e in excludable(road))):
        one, two = _customized(g, 1, forb), _customized(g, 2, forb)
        for k in one:
            assert np.array_equal(one[k], two[k]), k


def test_andorra_excludes_are_customized_and_equal_dijkstra(graph_cache) -> None:  # type: ignore[no-untyped-def]
    """Each excludable set a road carries is the CCH customized without it (no chx* hierarchy on disk), equal to
    Dijkstra on the graph without its arcs; no path takes one of them."""
    road = load(graph_cache("andorra.osm.pbf", "car", ch=True, landmarks=8))
    g = search_graph(road)
    sets = [e for e in excludable(road) if e.prefix is None]
    assert sets and not any(name.startswith("chx") for name in road.arrays)
    rng = np.random.default_rng(11)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    flags = np.asarray(g.arc_flags)
    for e in sets:
        hierarchy, prefix = Metric.stored(g).hierarchy(e)
        ch = CHSearch(hierarchy, prefix)
        oracle = DijkstraSearch(reweighted_same(g, (flags & e.mask) == 0))
        for _ in range(15):
            s, t = (int(v) for v in rng.choice(main, 2))
            res = ch.run(seeds([s]), seeds([t]))
            assert res.weight == oracle.run(seeds([s]), seeds([t])).weight, f"exclude {sorted(e.classes)} {s}->{t}"
            assert not (flags[res.arcs] & e.mask).any()


def _lonlat(road: Graph, g: Graph, v: int) -> tuple[float, float]:
    arc = int(g.node_arc[v])
    tail = int(road.arc_tail[arc])
    return float(road.node_lon[tail]) / 1e7, float(road.node_lat[tail]) / 1e7


def reweighted_same(g: Graph, keep: np.ndarray) -> Graph:
    return reweighted(g, np.asarray(g.arc_weight, dtype=np.int64), np.asarray(g.arc_dist, dtype=np.int64), keep)

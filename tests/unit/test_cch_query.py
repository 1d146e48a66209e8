"""The CCH's elimination-tree query (`app.engine.search.cch_query.CCHSearch`) against Dijkstra and `CHSearch`.

Random graphs (tests.unit.test_ch's: self-loops, parallel arcs, zero weights, separate parts, so unreachable pairs;
the seed in every message), customized basic and perfect with their own weights, new ones and a random share of arcs
closed: every pair's weight and distance equal a lexicographic Dijkstra's, the path is a real chain summing to them;
several seeds per side with initial weights against the best seed pair by Dijkstra. Monaco and Andorra (edge-based,
turns on): a re-weighted metric with closed roads against the reference Dijkstra on the graph without them, single
seeds and several seeds per side (phantoms mid-edge: both directions of a road, each with its part of the arc).
"""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.data import load, search_graph
from app.engine.search.cch import Metric, customize
from app.engine.search.cch_query import CCHSearch, elimination_parent, has_tree
from app.engine.search.ch import CHSearch
from app.engine.search.reference import DijkstraSearch
from app.engine.types import INF_WEIGHT, Seeds
from floor.format.graph import Graph, graph_in_memory
from floor.format.units import CLOSED_DS
from preprocessing.cch import chordal_supergraph, undirected
from tests.unit.test_cch import lex_dijkstra, reweighted, reweighted_same, same_ids, with_cch
from tests.unit.test_ch import check_path, random_graph, seeds

GRAPHS = [("monaco.osm.gz", "car", True, 0), ("andorra.osm.pbf", "car", True, 8)]


def check_pairs(graph: Graph, oracle: Graph, hierarchy: Graph, paths: Graph, where: str) -> None:
    """Every pair: `CCHSearch` equals lexicographic Dijkstra on `oracle` (weight, dist) and `CHSearch` on the same
    hierarchy; its path is a chain of `paths`' arcs summing to them; unreachable pairs give INF and no arcs."""
    n = graph.num_nodes
    et, ch = CCHSearch(hierarchy), CHSearch(hierarchy)
    for u in range(n):
        ref = lex_dijkstra(oracle, u)
        for v in range(n):
            res = et.run(seeds([u]), seeds([v]))
            msg = f"{where} {u}->{v}"
            assert res.weight == ref[v][0], f"{msg}: tree walk {res.weight} != dijkstra {ref[v][0]}"
            assert res.weight == ch.run(seeds([u]), seeds([v])).weight, msg
            assert et.weight_between(u, v) == ref[v][0], msg
            if res.weight < INF_WEIGHT:
                assert et.distance == ref[v][1] == ch.distance, f"{msg}: dist {et.distance} != {ref[v][1]}"
                check_path(paths, res, seeds([u]), seeds([v]), et.distance, msg)
            else:
                assert len(res.arcs) == 0 and et.distance == INF_WEIGHT, msg


def check_multi(
    graph: Graph, oracle: Graph, hierarchy: Graph, paths: Graph, rng: np.random.Generator, where: str
) -> None:
    """Several seeds per side with initial weights and distances: the lexicographic best over seed pairs."""
    n = graph.num_nodes
    et = CCHSearch(hierarchy)
    table = [lex_dijkstra(oracle, u) for u in range(n)]

    def side() -> Seeds:
        k = int(rng.integers(1, 4))
        return seeds(list(rng.integers(0, n, k)), list(rng.integers(0, 40, k)), list(rng.integers(0, 99, k)))

    for k in range(30):
        s, t = side(), side()
        best = (int(INF_WEIGHT), int(INF_WEIGHT))
        for i, a in enumerate(s.nodes):
            for j, b in enumerate(t.nodes):
                w, d = table[int(a)][int(b)]
                if w < INF_WEIGHT:
                    best = min(best, (int(s.weights[i]) + w + int(t.weights[j]), int(s.dists[i]) + d + int(t.dists[j])))
        res = et.run(s, t)
        msg = f"{where} multi {k}"
        assert (res.weight, et.distance) == best, f"{msg}: {(res.weight, et.distance)} != {best}"
        if best[0] < INF_WEIGHT:
            check_path(paths, res, s, t, et.distance, msg)


@pytest.mark.parametrize("perfect", [False, True])
def test_tree_walk_equals_dijkstra_own_new_and_closed(perfect: bool) -> None:
    for seed in range(40):
        rng = np.random.default_rng(seed + 2000)
        n = int(rng.integers(1, 24))
        g = with_cch(random_graph(seed, n, int(n * rng.uniform(0.5, 4.0))))
        m = g.num_arcs
        own = customize(g, perfect=perfect)
        assert has_tree(own)
        check_pairs(g, g, own, g, f"seed {seed} own")
        check_multi(g, g, own, g, rng, f"seed {seed} own")
        w = rng.integers(0, 50, m)
        d = rng.integers(0, 900, m)
        closed = rng.random(m) < 0.25  # closed roads (a speed file's CLOSED_DS): no path takes them
        w_closed = np.where(closed, CLOSED_DS, w)
        h = Metric.customized_on(g, weight=w_closed, dist=d, duration=w + 1, perfect=perfect).hierarchy(None)[0]
        oracle = reweighted(g, w, d, ~closed)
        check_pairs(g, oracle, h, same_ids(g, w, d), f"seed {seed} closed")
        check_multi(g, oracle, h, same_ids(g, w, d), rng, f"seed {seed} closed")


def test_parent_is_the_lowest_upward_neighbour() -> None:
    """The tree of a path ranked end to end is the path; of any graph, each node's parent is its lowest upward CCH
    neighbour, the one `chordal_supergraph` reports."""
    n = 6
    xadj, adjncy = undirected(n, np.arange(n - 1), np.arange(1, n))
    first, head, parent, _ = chordal_supergraph(n, xadj, adjncy, np.arange(n, dtype=np.int32))
    assert list(elimination_parent(first, head)) == [1, 2, 3, 4, 5, -1] == list(parent)
    g = with_cch(random_graph(7, 40, 120))
    par = elimination_parent(g.cch_first, g.cch_head)
    for x in range(40):
        row = g.cch_head[g.cch_first[x] : g.cch_first[x + 1]]
        assert par[x] == (row.min() if len(row) else -1)


def test_bad_seed_is_refused_and_leaves_nothing_behind() -> None:
    g = with_cch(random_graph(3, 12, 40))
    h = customize(g)
    et = CCHSearch(h)
    with pytest.raises(ValueError, match="out of range"):
        et.run(seeds([0, 99]), seeds([1]))
    check_pairs(g, g, h, g, "after a bad seed")  # the walked labels were reset


def _multi_seeds(nodes: np.ndarray, w: np.ndarray, rng: np.random.Generator, g: Graph) -> list:
    """Phantoms mid-edge as the snapper seeds them: a node and the one of the reverse road arc, each with part of it."""
    out = []
    for v in nodes:
        arcs = np.flatnonzero(np.asarray(g.arc_tail) == v)
        other = int(g.arc_head[arcs[0]]) if len(arcs) else int(v)
        share = rng.uniform(0.1, 0.9)
        out.append(
            seeds([int(v), other], [int(rng.integers(0, 300)), int(share * 300)], [int(rng.integers(0, 900)), 5])
        )
    return out


@pytest.mark.parametrize("name", ["monaco.osm.gz", "andorra.osm.pbf"])
def test_real_graphs_reweighted_with_closed_roads(graph_cache, name: str) -> None:  # type: ignore[no-untyped-def]
    """A random metric with 3 % of the roads closed, on the CCH: the tree walk equals the reference Dijkstra on the
    graph without them (one seed per side, and several), and `CHSearch` on the same hierarchy."""
    road = load(graph_cache(name, "car", ch=True, landmarks=0 if name.startswith("monaco") else 8))
    g = search_graph(road)
    rng = np.random.default_rng(17)
    w = np.maximum((np.asarray(g.arc_weight) * rng.uniform(0.5, 3.0, g.num_arcs)).astype(np.int64), 1)
    closed = rng.random(g.num_arcs) < 0.03
    h = Metric.customized_on(g, weight=np.where(closed, CLOSED_DS, w)).hierarchy(None)[0]
    oracle_g = graph_in_memory({**g.arrays, "arc_weight": w.astype(np.int32)})
    oracle = DijkstraSearch(reweighted_same(oracle_g, ~closed))
    et, ch = CCHSearch(h), CHSearch(h)
    nodes = rng.integers(0, g.num_nodes, 80)  # any component: unreachable pairs too
    unreachable = 0
    for s, t in zip(nodes[:40], nodes[40:], strict=True):
        a, b = seeds([int(s)]), seeds([int(t)])
        want = oracle.run(a, b).weight
        res = et.run(a, b)
        assert res.weight == want == ch.run(a, b).weight, f"{name} {s}->{t}"
        assert et.distance == ch.distance, f"{name} {s}->{t}"
        assert not closed[res.arcs].any(), f"{name} {s}->{t}: a closed road"
        unreachable += want >= INF_WEIGHT
    srcs = _multi_seeds(nodes[:20], w, rng, g)
    dsts = _multi_seeds(nodes[20:40], w, rng, g)
    for a, b in zip(srcs, dsts, strict=True):
        want = oracle.run(a, b).weight
        res = et.run(a, b)
        assert res.weight == want == ch.run(a, b).weight, f"{name} multi {a.nodes}->{b.nodes}"
        assert et.distance == ch.distance, f"{name} multi {a.nodes}->{b.nodes}"
    assert unreachable < 40


def test_router_serves_a_customized_metric_by_the_tree_walk(graph_cache, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A metric applied to the router (and an exclude customized on the CCH) is queried by the tree walk, in the
    one-call leg too; every route weighs what the heap search on the same hierarchy gives, at the same distance."""
    from app.engine import router as router_module
    from app.engine.errors import NoRoute
    from app.engine.route import ch_leg, legs
    from app.engine.router import Router
    from app.engine.types import RouteOptions
    from tests.unit.test_ch_leg import _waypoints

    r = Router(load(graph_cache("andorra.osm.pbf", "car", ch=True, landmarks=8)))
    r.hot_path.fused = True  # as after a server's warm-up
    rng = np.random.default_rng(23)
    # the graph's own weights customized (the assembler re-adds the graph's weights along a path: a metric with other
    # weights comes with a graph carrying them)
    r.set_metric(Metric.customized_on(r.search_graph, name="test"))
    pts = _waypoints(r, 60, 29)
    pairs = [(pts[i], pts[j]) for i, j in rng.integers(0, len(pts), (60, 2))]
    calls = [0]
    one_call = ch_leg.ch_leg

    def counted(*args: object, **kw: object) -> object:
        calls[0] += 1
        return one_call(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(legs, "ch_leg", counted)

    def routes(options: RouteOptions) -> list[tuple[int, float] | None]:
        out: list[tuple[int, float] | None] = []
        q = r.query()
        q._searches.clear()  # this thread's query objects: built again with the class the router names now
        for a, b in pairs:
            phantoms = r.snap_waypoints([a, b])
            try:
                best = q.routes(phantoms, options).best
            except NoRoute:
                out.append(None)
                continue
            out.append((best.weight, round(best.distance_m, 3)))
        assert isinstance(q._search("ch"), CCHSearch) == (router_module.CCHSearch is CCHSearch)
        return out

    for exclude in (None, frozenset({"motorway"})):
        options = RouteOptions(exclude=exclude)
        tree = routes(options)
        assert sum(x is not None for x in tree) >= len(pairs) // 2, f"exclude {exclude}: routes found"
        assert calls[0] >= len(pairs) // 4, "the one-call leg ran the tree walk"
        with monkeypatch.context() as m:
            m.setattr(router_module, "CCHSearch", CHSearch)
            heap = routes(options)
        assert tree == heap, f"exclude {exclude}"
        calls[0] = 0


def test_customize_hands_its_step_arrays_back(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A customization frees tens of megabytes of step arrays (Porto: resident 80 -> 29 MiB above the graph with the
    heap trimmed, `bench/routingkit.py`): `customize` trims the heap once, after them, and times it."""
    from app.engine.search import cch

    calls: list[int] = []

    def trim() -> bool:
        calls.append(1)
        return True

    monkeypatch.setattr(cch, "trim_heap", trim)
    h = customize(with_cch(random_graph(4, 20, 60)))
    assert calls == [1] and "trim" in h.manifest["customize_seconds"]


def test_alternatives_t_tests_on_a_customized_metric_by_the_tree_walk(graph_cache, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Via-node alternatives on a customized metric run their T-tests (`weight_between`) by the tree walk; the
    routes found are those the heap search's T-tests give."""
    from app.engine.errors import NoRoute
    from app.engine.router import Router
    from app.engine.search import via_alternatives
    from app.engine.types import RouteOptions
    from tests.unit.test_ch_leg import _waypoints

    road = load(graph_cache("andorra.osm.pbf", "car", ch=True, landmarks=8))
    g = search_graph(road)
    assert isinstance(via_alternatives.ViaSearch(Metric.customized_on(g).hierarchy(None)[0], g).ch, CCHSearch)
    assert not isinstance(via_alternatives.ViaSearch(g, g).ch, CCHSearch)  # the witness CH: no tree

    def alternatives() -> list[list[tuple[int, float]]]:
        r = Router(road)
        r.set_metric(Metric.customized_on(r.search_graph))  # own weights: see the router test
        pts = _waypoints(r, 30, 37)
        out = []
        for i in range(0, 30, 2):
            try:
                res = r.query().routes(r.snap_waypoints([pts[i], pts[i + 1]]), RouteOptions(alternatives=2))
            except NoRoute:
                out.append([])
                continue
            out.append([(x.weight, round(x.distance_m, 3)) for x in res.routes])
        return out

    tree = alternatives()
    assert sum(len(x) > 1 for x in tree) >= 2, "some pairs have alternatives"
    monkeypatch.setattr(via_alternatives, "CCHSearch", CHSearch)
    assert tree == alternatives()


def test_a_query_writes_only_the_ranks_it_walks() -> None:
    """The query arrays are written only along the walks (a thread's state takes the pages its queries touched, not
    24 bytes a rank per direction up front); the marks are cleared after each query."""
    g = with_cch(random_graph(5, 60, 200))
    h = customize(g)
    et = CCHSearch(h)
    st = et.labels.state
    assert not st.f_lab.any() and not st.b_lab.any()  # nothing written before a query
    parent = np.asarray(h.cch_parent)
    rank = np.asarray(h.ch_rank)

    def walk(v: int) -> set[int]:
        out, x = set(), int(rank[v])
        while x >= 0:
            out.add(x)
            x = int(parent[x])
        return out

    et.run(seeds([3]), seeds([7]))
    written_f = set(np.flatnonzero(st.f_lab.any(axis=1)).tolist())
    written_b = set(np.flatnonzero(st.b_lab.any(axis=1)).tolist())
    assert written_f == walk(3) and written_b == walk(7)
    assert not st.mark.any()

"""Per-request options against the reference Dijkstra on the *changed* graph: excluded classes and forbidden arcs
(every core algorithm, the table fallback, the hierarchy contracted without a class), traces, weighted A*.

The changed graph is built anew from the arcs that remain (`filtered`), so the oracle never sees a filter at all;
networkx on its export checks the oracle once more. Seeds are in the failure messages.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine.search.cch import Metric
from app.engine.search.ch import CHSearch
from app.engine.search.reference import DijkstraSearch
from app.engine.search.searches import CoreSearch, SearchOptions
from app.engine.types import INF_WEIGHT, Seeds
from floor.format.graph import Graph, graph_in_memory
from floor.format.units import FLAG_FERRY, FLAG_MOTORWAY, FLAG_TOLL
from preprocessing.contract import build_ch
from preprocessing.export import to_networkx
from preprocessing.graph import arrays_from_arcs
from tests.unit.test_search import check_path, nx_seeded_weight, random_graph, random_seeds

CORE = ("dijkstra", "bidirectional-dijkstra", "astar", "bidirectional-astar", "alt")
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CLASSES = (FLAG_FERRY, FLAG_TOLL, FLAG_MOTORWAY)


def with_flags(graph: Graph, rng: np.random.Generator) -> Graph:
    """The graph with random class flags on a third of its arcs (landmarks kept: they stay lower bounds)."""
    arrays = dict(graph.arrays)
    m = graph.num_arcs
    flags = np.zeros(m, dtype=np.uint8)
    pick = rng.random(m) < 0.35
    flags[pick] = rng.choice(np.array(CLASSES, dtype=np.uint8), int(pick.sum()))
    arrays["arc_flags"] = flags
    return graph_in_memory(arrays, graph.manifest)


def filtered(graph: Graph, keep: np.ndarray) -> Graph:
    """A new graph of the kept arcs only (same nodes and positions): what the oracle sees."""
    arrays = arrays_from_arcs(
        np.asarray(graph.arc_tail)[keep],
        np.asarray(graph.arc_head)[keep],
        np.asarray(graph.arc_weight)[keep],
        np.asarray(graph.arc_dist)[keep],
        np.asarray(graph.node_lon) / 1e7,
        np.asarray(graph.node_lat) / 1e7,
        n=graph.num_nodes,
    )
    return graph_in_memory(arrays, graph.manifest)


@SETTINGS
@given(graph_seed=st.integers(0, 2**32 - 1))
def test_excluded_classes_and_forbidden_arcs_equal_dijkstra_on_the_changed_graph(graph_seed: int) -> None:
    rg = random_graph(graph_seed)
    rng = np.random.default_rng(graph_seed)
    g = with_flags(rg.graph, rng)
    m = g.num_arcs
    searches = {name: CoreSearch(g, name) for name in CORE}
    for q in range(4):
        mask = int(rng.choice([0, FLAG_FERRY, FLAG_TOLL | FLAG_MOTORWAY, FLAG_FERRY | FLAG_TOLL | FLAG_MOTORWAY]))
        forbidden = np.flatnonzero(rng.random(m) < 0.15).astype(np.int32) if q % 2 else None
        keep = (np.asarray(g.arc_flags) & mask) == 0
        if forbidden is not None:
            keep[forbidden] = False
        oracle_graph = filtered(g, keep)
        oracle = DijkstraSearch(oracle_graph)
        sources, targets = random_seeds(rg), random_seeds(rg)
        want = oracle.run(sources, targets).weight
        if q == 0:  # the oracle itself, once more, against networkx
            assert want == nx_seeded_weight(to_networkx(oracle_graph), sources, targets), f"seed={graph_seed}"
        opts = SearchOptions(exclude_flags=mask, forbidden=forbidden)
        for name, s in searches.items():
            res = s.run(sources, targets, opts)
            msg = f"seed={graph_seed} q={q} {name} mask={mask}: {res.weight} != dijkstra on the changed graph {want}"
            assert res.weight == want, msg
            check_path(g, res, sources, targets, msg)
            if res.weight < INF_WEIGHT:
                assert not (np.asarray(g.arc_flags)[res.arcs] & mask).any(), msg
                if forbidden is not None:
                    assert not np.isin(res.arcs, forbidden).any(), msg
        # the next query without options sees the whole graph again
        plain = DijkstraSearch(g).run(sources, targets).weight
        assert searches["alt"].run(sources, targets).weight == plain, f"seed={graph_seed} q={q}: options leaked"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_seed=st.integers(0, 2**32 - 1))
def test_hierarchy_without_a_class_equals_dijkstra_on_the_changed_graph(graph_seed: int) -> None:
    rg = random_graph(graph_seed, landmarks=0)
    rng = np.random.default_rng(graph_seed)
    g = with_flags(rg.graph, rng)
    for mask in (FLAG_TOLL, FLAG_MOTORWAY | FLAG_FERRY):
        arrays, meta = build_ch(g, exclude_mask=mask)
        gx = graph_in_memory({**g.arrays, **{"chx0_" + k[3:]: v for k, v in arrays.items()}}, g.manifest)
        ch = CHSearch(gx, "chx0_")
        oracle = DijkstraSearch(filtered(g, (np.asarray(g.arc_flags) & mask) == 0))
        for q in range(5):
            sources, targets = random_seeds(rg), random_seeds(rg)
            want = oracle.run(sources, targets).weight
            res = ch.run(sources, targets)
            msg = f"seed={graph_seed} mask={mask} q={q}: CH {res.weight} != dijkstra on the changed graph {want}"
            assert res.weight == want, msg
            if want < INF_WEIGHT:
                check_path(g, res, sources, targets, msg)
                assert not (np.asarray(g.arc_flags)[res.arcs] & mask).any(), msg


def line_graph() -> Graph:
    """0 -> 1 -> 2 -> 3 along a line, plus a slow bypass 0 -> 3."""
    arrays = arrays_from_arcs([0, 1, 2, 0], [1, 2, 3, 3], [10, 10, 10, 100], [100, 100, 100, 900], n=4)
    return graph_in_memory(arrays, {"max_speed_mps": 10.0})


def seeds(v: int, g: Graph) -> Seeds:
    return Seeds(np.array([v], np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), g.node_lon[v] / 1e7, 0.0)


def test_traces_list_the_settled_nodes_in_order() -> None:
    g = line_graph()
    for name in ("dijkstra", "bidirectional-dijkstra", "astar", "bidirectional-astar"):
        s = CoreSearch(g, name)
        res = s.run(seeds(0, g), seeds(3, g), SearchOptions(trace=True))
        assert res.trace is not None and res.weight == 30, name
        assert len(res.trace.entries) == res.stats.settled, name
        assert res.trace.meeting in (1, 2, 3) and not res.trace.truncated, name
        assert set(res.trace.directions.tolist()) <= ({0, 1} if "bidirectional" in name else {0}), name
        if name == "dijkstra":
            assert res.trace.nodes.tolist()[:3] == [0, 1, 2]  # settle order is weight order
        cut = s.run(seeds(0, g), seeds(3, g), SearchOptions(trace=True, trace_limit=1))
        assert cut.trace is not None and cut.trace.truncated and len(cut.trace.entries) == 1
        assert s.run(seeds(0, g), seeds(3, g)).trace is None


@pytest.mark.parametrize("name", ["astar", "bidirectional-astar"])
def test_weighted_astar_is_within_epsilon_and_settles_less(graph_cache_free_grid: Graph, name: str) -> None:
    g = graph_cache_free_grid
    rng = np.random.default_rng(3)
    exact, fast = CoreSearch(g, name), CoreSearch(g, name)
    oracle = DijkstraSearch(g)
    settled_exact = settled_fast = 0
    for q in range(60):
        s, t = (int(v) for v in rng.integers(0, g.num_nodes, 2))
        want = oracle.run(seeds(s, g), seeds(t, g)).weight
        a = exact.run(seeds(s, g), seeds(t, g))
        b = fast.run(seeds(s, g), seeds(t, g), SearchOptions(epsilon=1.5))
        assert a.weight == want, f"q={q}"
        assert want <= b.weight <= 1.5 * want, f"q={q}: {b.weight} not within 1.5 x {want}"
        settled_exact += a.stats.settled
        settled_fast += b.stats.settled
    assert settled_fast < settled_exact, (settled_fast, settled_exact)


@pytest.fixture(scope="module")
def graph_cache_free_grid() -> Graph:
    """A 40 x 40 street grid with random speeds (so A* has room to cut corners), degrees near the equator."""
    rng = np.random.default_rng(11)
    k = 40
    idx = np.arange(k * k).reshape(k, k)
    tail, head = [], []
    for a, b in ((idx[:, :-1], idx[:, 1:]), (idx[:-1, :], idx[1:, :])):
        tail += [a.ravel(), b.ravel()]
        head += [b.ravel(), a.ravel()]
    tail, head = np.concatenate(tail), np.concatenate(head)
    lon = (idx % k).ravel() * 0.001
    lat = (idx // k).ravel() * 0.001
    dist = np.full(len(tail), 1112, dtype=np.int64)  # ~111 m in dm
    speed = rng.uniform(5, 20, len(tail))  # m/s
    weight = np.ceil(dist / 10 / speed * 10).astype(np.int64)
    arrays = arrays_from_arcs(tail, head, weight, dist, lon, lat, n=k * k)
    return graph_in_memory(arrays, {"max_speed_mps": 20.0})


@pytest.mark.parametrize("name", ["andorra.osm.pbf", "porto_portugal.osm.pbf"])
def test_real_extracts_exclude_equals_dijkstra_on_the_changed_graph(graph_cache, name: str) -> None:  # type: ignore[no-untyped-def]
    """Every excludable class of the car profile: the hierarchy without it (customized on the CCH), ALT and the table
    fallback filter."""
    from app.engine.data import excludable, load, search_graph

    g = search_graph(load(graph_cache(name, "car", ch=True, landmarks=8)))
    rng = np.random.default_rng(7)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    sets = excludable(g)
    assert [sorted(e.classes) for e in sets] == [["toll"], ["motorway"], ["ferry"]]
    flags = np.asarray(g.arc_flags)
    for e in sets:
        oracle = DijkstraSearch(filtered(g, (flags & e.mask) == 0))
        ch = CHSearch(*Metric.stored(g).hierarchy(e))  # a witness hierarchy, or the CCH customized without e
        alt = CoreSearch(g, "alt")
        opts = SearchOptions(exclude_flags=e.mask)
        for _ in range(60):
            s, t = (int(v) for v in rng.choice(main, 2))
            want = oracle.run(seeds_at(g, s), seeds_at(g, t)).weight
            for label, res in (("ch", ch.run(seeds_at(g, s), seeds_at(g, t))),
                               ("alt", alt.run(seeds_at(g, s), seeds_at(g, t), opts))):  # fmt: skip
                msg = f"{name} exclude {sorted(e.classes)} {label} {s}->{t}: {res.weight} != dijkstra {want}"
                assert res.weight == want, msg
                if want < INF_WEIGHT:
                    assert not (flags[res.arcs] & e.mask).any(), msg


def seeds_at(g: Graph, v: int) -> Seeds:
    return Seeds(
        np.array([v], np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), g.node_lon[v] / 1e7, g.node_lat[v] / 1e7
    )

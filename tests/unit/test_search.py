"""Every search returns exactly the reference Dijkstra's cost; Dijkstra equals networkx; paths are real arc chains.

Random graphs are directed, with disconnected parts, zero-weight arcs (between coincident nodes), parallel arcs and
self-loops; weights are at least the straight-line time at the graph's top speed, so A* bounds are valid. Each
hypothesis example is one integer seed: the failure message prints it, and `random_graph(seed)` rebuilds the graph.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine.search.reference import DijkstraSearch, dijkstra_weights
from app.engine.search.searches import CoreSearch
from app.engine.types import INF_WEIGHT, SearchResult, Seeds
from floor.format.graph import Graph, graph_in_memory
from floor.kernels.geometry import haversine_m
from preprocessing.export import to_networkx
from preprocessing.graph import arrays_from_arcs
from preprocessing.landmarks import build_landmarks
from tests.conftest import all_extracts

SPEED_MPS = 20.0
CORE = ("dijkstra", "bidirectional-dijkstra", "astar", "bidirectional-astar", "alt")


def _core(name: str):  # type: ignore[no-untyped-def]
    def make(graph: Graph) -> CoreSearch:
        return CoreSearch(graph, name)

    make.__name__ = name
    return make


# the reference first, then every algorithm of the core
ALGORITHMS = (DijkstraSearch, *(_core(name) for name in CORE))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass
class RandomGraph:
    graph: Graph
    lon: np.ndarray  # degrees
    lat: np.ndarray
    rng: np.random.Generator


def random_graph(seed: int, max_nodes: int = 40, landmarks: int = 4) -> RandomGraph:
    """A small random directed graph (see the module docstring), with landmark tables, rebuilt from `seed`."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, max_nodes + 1))
    parts = int(rng.integers(1, 4))
    part = rng.integers(0, parts, n)
    lon = rng.uniform(0.0, 0.02, n) + part * 0.05
    lat = rng.uniform(0.0, 0.02, n)
    dup = rng.random(n) < 0.15  # some nodes coincide with node 0 of their part -> zero-weight arcs are legal
    for v in np.flatnonzero(dup):
        same = np.flatnonzero(part == part[v])
        lon[v], lat[v] = lon[same[0]], lat[same[0]]
    m = int(rng.integers(0, 4 * n + 1))
    tail = rng.integers(0, n, m)
    head = rng.integers(0, n, m)
    cross = rng.random(m) < 0.9  # mostly keep arcs inside a part: several components
    for i in np.flatnonzero(cross):
        same = np.flatnonzero(part == part[tail[i]])
        head[i] = same[rng.integers(len(same))]
    if m and rng.random() < 0.5:  # parallel arcs and self-loops
        k = int(rng.integers(1, m + 1))
        loops = tail[:2]
        tail = np.concatenate([tail, tail[:k], loops])
        head = np.concatenate([head, head[:k], loops])
    m = len(tail)
    gc = haversine_m(lon[tail], lat[tail], lon[head], lat[head])
    dist = np.ceil(gc * 10.0 * (1 + rng.random(m) * 0.3)).astype(np.int64)  # dm, >= the straight line
    weight = np.ceil(dist / 10.0 / SPEED_MPS * 10.0).astype(np.int64) + rng.integers(0, 30, m) * (rng.random(m) < 0.7)
    zero = (gc == 0) & (rng.random(m) < 0.6)
    weight[zero] = 0
    dist[zero] = 0
    arrays = arrays_from_arcs(tail, head, weight, dist, lon, lat, n=n)
    w = arrays["arc_weight"].astype(np.float64)
    d = arrays["arc_dist"].astype(np.float64) / 10.0
    vmax = float(np.max(d[w > 0] / (w[w > 0] / 10.0), initial=1.0))
    graph = graph_in_memory(arrays, {"max_speed_mps": max(vmax, 1.0)})
    if landmarks:
        lm, _ = build_landmarks(graph, count=landmarks, method=("avoid", "farthest")[seed % 2], seed=seed)
        graph.arrays.update(lm)
    return RandomGraph(graph, lon, lat, rng)


def random_seeds(rg: RandomGraph, max_seeds: int = 3) -> Seeds:
    """1..max_seeds seed nodes with random offsets; the point sits on the first seed node (or near it)."""
    rng = rg.rng
    n = rg.graph.num_nodes
    k = int(rng.integers(1, max_seeds + 1))
    nodes = rng.integers(0, n, k).astype(np.int32)
    weights = rng.integers(0, 40, k).astype(np.int64)
    jitter = rng.normal(0, 1e-4, 2) if rng.random() < 0.5 else np.zeros(2)
    return Seeds(
        nodes, weights, np.zeros(k, np.int64), float(rg.lon[nodes[0]] + jitter[0]), float(rg.lat[nodes[0]] + jitter[1])
    )


def check_path(graph: Graph, res: SearchResult, sources: Seeds, targets: Seeds, msg: str) -> None:
    """The result's arcs chain from its source seed node to its target seed node and sum (with seeds) to its weight."""
    if res.weight >= INF_WEIGHT:
        assert res.weight == INF_WEIGHT and len(res.arcs) == 0, msg
        assert res.source_seed == -1 and res.target_seed == -1, msg
        return
    arcs = np.asarray(res.arcs, dtype=np.int64)
    s = int(sources.nodes[res.source_seed])
    t = int(targets.nodes[res.target_seed])
    if len(arcs) == 0:
        assert s == t, msg
    else:
        assert graph.arc_tail[arcs[0]] == s and graph.arc_head[arcs[-1]] == t, msg
        assert np.array_equal(graph.arc_head[arcs[:-1]], graph.arc_tail[arcs[1:]]), msg
    total = (
        int(sources.weights[res.source_seed])
        + int(graph.arc_weight[arcs].sum())
        + int(targets.weights[res.target_seed])
    )
    assert total == res.weight, msg


def nx_seeded_weight(G, sources: Seeds, targets: Seeds) -> int:  # type: ignore[no-untyped-def]
    """networkx's answer with virtual nodes S -> s_i (seed weight) and t_j -> T (seed weight)."""
    import networkx as nx

    H = G.copy()
    for v, w in zip(sources.nodes.tolist(), sources.weights.tolist(), strict=True):
        H.add_edge("S", v, weight=w)
    for v, w in zip(targets.nodes.tolist(), targets.weights.tolist(), strict=True):
        H.add_edge(v, "T", weight=w)
    try:
        return int(nx.dijkstra_path_length(H, "S", "T", weight="weight"))
    except nx.NetworkXNoPath:
        return int(INF_WEIGHT)


@SETTINGS
@given(graph_seed=st.integers(0, 2**32 - 1))
def test_all_algorithms_equal_dijkstra(graph_seed: int) -> None:
    seed = graph_seed
    rg = random_graph(seed)
    g = rg.graph
    searches = [cls(g) for cls in ALGORITHMS]
    for q in range(6):
        sources, targets = random_seeds(rg), random_seeds(rg)
        results = [s.run(sources, targets) for s in searches]
        ref = results[0].weight
        for s, res in zip(searches, results, strict=True):
            msg = f"seed={seed} query={q} algorithm={s.algorithm}: {res.weight} != dijkstra {ref}"
            assert res.weight == ref, msg
            check_path(g, res, sources, targets, msg)
            assert res.stats.algorithm == s.algorithm and res.stats.settled >= 0


@settings(max_examples=40, deadline=None)
@given(graph_seed=st.integers(0, 2**32 - 1))
def test_dijkstra_equals_networkx(graph_seed: int) -> None:
    seed = graph_seed
    rg = random_graph(seed, landmarks=0)
    g = rg.graph
    G = to_networkx(g)
    import networkx as nx

    src = int(rg.rng.integers(0, g.num_nodes))
    ours = dijkstra_weights(g, src)
    theirs = nx.single_source_dijkstra_path_length(G, src, weight="weight")
    expect = np.full(g.num_nodes, INF_WEIGHT, dtype=np.int64)
    for v, d in theirs.items():
        expect[v] = d
    assert np.array_equal(ours, expect), f"seed={seed} source={src}"
    search = DijkstraSearch(g)
    for q in range(3):
        sources, targets = random_seeds(rg), random_seeds(rg)
        assert search.run(sources, targets).weight == nx_seeded_weight(G, sources, targets), f"seed={seed} q={q}"


def test_digraph_export_keeps_lightest_arc() -> None:
    arrays = arrays_from_arcs([0, 0, 0, 1], [1, 1, 1, 1], [7, 3, 5, 0])
    g = graph_in_memory(arrays, {"max_speed_mps": 10.0})
    multi = to_networkx(g)
    assert multi.number_of_edges() == 4 and multi.has_edge(1, 1)
    simple = to_networkx(g, multigraph=False)
    assert simple.number_of_edges() == 2 and simple[0][1]["weight"] == 3
    assert g.arc_weight[simple[0][1]["arc"]] == 3


def _seeds(nodes: list[int], weights: list[int], lonlat: tuple[float, float] = (0.0, 0.0)) -> Seeds:
    k = len(nodes)
    return Seeds(np.array(nodes, np.int32), np.array(weights, np.int64), np.zeros(k, np.int64), *lonlat)


@pytest.mark.parametrize("cls", ALGORITHMS)
def test_edge_cases(cls: type) -> None:
    # 0 -> 1 -> 2 (and a zero-weight self-loop and parallel arcs), 3 -> 4 is another component
    arrays = arrays_from_arcs([0, 0, 1, 1, 3, 0], [1, 1, 2, 1, 4, 0], [5, 9, 4, 0, 1, 0], n=6)
    g = graph_in_memory(arrays, {"max_speed_mps": 10.0})
    lm, _ = build_landmarks(g, count=2)
    g.arrays.update(lm)
    s = cls(g)
    res = s.run(_seeds([0], [0]), _seeds([2], [0]))
    assert res.weight == 9 and [int(g.arc_weight[a]) for a in res.arcs] == [5, 4]
    # unreachable: other component, wrong direction, isolated node, empty seeds
    for src, dst in (([0], [4]), ([2], [0]), ([5], [0]), ([], [1]), ([0], [])):
        res = s.run(_seeds(src, [0] * len(src)), _seeds(dst, [0] * len(dst)))
        assert res.weight == INF_WEIGHT and len(res.arcs) == 0 and res.source_seed == res.target_seed == -1
    # the same node as source and target: no arcs, weight = both offsets
    res = s.run(_seeds([1], [3]), _seeds([1], [4]))
    assert res.weight == 7 and len(res.arcs) == 0 and res.source_seed == res.target_seed == 0
    # several seeds: the best combination wins, seed indices report which
    res = s.run(_seeds([0, 1], [20, 2]), _seeds([0, 2], [0, 10]))
    assert res.weight == 16 and (res.source_seed, res.target_seed) == (1, 1)
    # the timestamp wrap clears the stamp arrays and the next query is still right
    s.query = (1 << 30) - 2
    assert s.run(_seeds([0], [0]), _seeds([2], [0])).weight == 9
    assert s.run(_seeds([0], [0]), _seeds([1], [0])).weight == 5


# ------------------------------------------------------------------------------------------------- real extracts

PAIRS = int(os.environ.get("STARROUTE_TEST_PAIRS", "2000"))
# Work cap per graph (pairs x nodes) to keep CI on 2 cores within minutes: graphs above WORK / PAIRS nodes get
# fewer pairs (at least 200) unless STARROUTE_TEST_PAIRS_FULL=1 asks for PAIRS everywhere.
WORK = float(os.environ.get("STARROUTE_TEST_WORK", "6e6"))
FULL = os.environ.get("STARROUTE_TEST_PAIRS_FULL") == "1"


def real_graph(graph_cache, name: str, profile: str) -> Graph:  # type: ignore[no-untyped-def]
    """The graph the extract's searches run on (edge-based where the profile has turns), built once per session (the
    same build test_extracts uses: CH + 8 landmarks)."""
    from app.engine.data import load, search_graph

    return search_graph(load(graph_cache(name, profile, ch=True, landmarks=8)))


def node_seeds(graph: Graph, v: int) -> Seeds:
    lon = float(graph.node_lon[v]) / 1e7
    lat = float(graph.node_lat[v]) / 1e7
    return Seeds(np.array([v], np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), lon, lat)


@pytest.mark.extracts
@pytest.mark.slow
@pytest.mark.parametrize("profile", ("car", "foot"))
@pytest.mark.parametrize("name", all_extracts())
def test_real_pairs_equal_dijkstra(graph_cache, name: str, profile: str) -> None:  # type: ignore[no-untyped-def]
    g = real_graph(graph_cache, name, profile)
    n = g.num_nodes
    pairs = PAIRS if FULL else max(200, min(PAIRS, int(WORK / max(n, 1))))
    rng = np.random.default_rng(zlib.crc32(f"{name}/{profile}".encode()))
    # pairs = sources x targets, so the oracle is one one-to-all Dijkstra per source; 90% of the nodes are drawn
    # from the largest SCC, the rest anywhere (unreachable pairs included)
    n_src = max(1, int(np.sqrt(pairs) / 2))
    n_tgt = -(-pairs // n_src)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    oracle = DijkstraSearch(g)
    reference = DijkstraSearch(g)
    searches = [cls(g) for cls in ALGORITHMS[1:]]
    done = 0
    for _ in range(n_src):
        s = int(rng.choice(main)) if rng.random() < 0.9 else int(rng.integers(n))
        ref = oracle.one_to_all(s)
        for t in rng.integers(0, n, n_tgt).tolist():
            if done >= pairs:
                break
            if rng.random() < 0.9:
                t = int(main[t % len(main)])
            done += 1
            S, T = node_seeds(g, s), node_seeds(g, t)
            # DijkstraSearch.run is the oracle's own kernel: a sample suffices
            run = searches + [reference] if done % 10 == 0 else searches
            for search in run:
                res = search.run(S, T)
                msg = f"{name} {profile} {search.algorithm} {s}->{t}: {res.weight} != dijkstra {ref[t]}"
                assert res.weight == ref[t], msg
                if done % 25 == 0:
                    check_path(g, res, S, T, msg)
    assert done == pairs

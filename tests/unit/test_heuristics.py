"""The A* / ALT bounds are admissible and consistent; landmark tables are exact and their bounds consistent.

Consistency is checked on every arc (`pi_t(u) <= w(u, v) + pi_t(v)`, `pi_s(v) <= w(u, v) + pi_s(u)`) and on the
virtual seed arcs (`pi_t(t_j) <= tw_j`, `pi_s(s_i) <= sw_i`), admissibility against one-to-all Dijkstra weights.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.geo import gc_distance_m, node_geo
from app.engine.search.reference import DijkstraSearch, dijkstra_weights
from app.engine.search.searches import CoreSearch
from app.engine.types import INF_WEIGHT, Seeds
from floor.format.graph import Graph, graph_in_memory
from floor.kernels.geometry import haversine_m
from preprocessing.graph import arrays_from_arcs
from preprocessing.landmarks import LM_NONE, build_landmarks
from tests.conftest import all_extracts
from tests.unit.test_search import random_graph, random_seeds, real_graph


def reversed_graph(g: Graph) -> Graph:
    """The same graph with every arc turned round (for weights *to* a node set)."""
    a = g.arrays
    lon = np.asarray(a["node_lon"], dtype=np.float64) / 1e7
    lat = np.asarray(a["node_lat"], dtype=np.float64) / 1e7
    arrays = arrays_from_arcs(a["arc_head"], a["arc_tail"], a["arc_weight"], a["arc_dist"], lon, lat, n=g.num_nodes)
    return graph_in_memory(arrays, g.manifest)


def check_consistent(g: Graph, pi_t: np.ndarray, pi_s: np.ndarray, sources: Seeds, targets: Seeds, msg: str) -> None:
    """Both bounds consistent on every arc and on the virtual seed arcs."""
    u = np.asarray(g.arc_tail)
    v = np.asarray(g.arc_head)
    w = np.asarray(g.arc_weight, dtype=np.float64)
    bad = np.flatnonzero(pi_t[u] > w + pi_t[v])
    assert bad.size == 0, f"{msg}: pi_t inconsistent on arcs {bad[:5]}"
    bad = np.flatnonzero(pi_s[v] > w + pi_s[u])
    assert bad.size == 0, f"{msg}: pi_s inconsistent on arcs {bad[:5]}"
    assert np.all(pi_t[targets.nodes] <= targets.weights), f"{msg}: pi_t above a target seed weight"
    assert np.all(pi_s[sources.nodes] <= sources.weights), f"{msg}: pi_s above a source seed weight"
    assert np.all(pi_t >= 0) and np.all(pi_s >= 0) and np.all(pi_t == np.floor(pi_t)), msg


@settings(max_examples=60, deadline=None)
@given(graph_seed=st.integers(0, 2**32 - 1))
def test_bounds_admissible_and_consistent(graph_seed: int) -> None:
    rg = random_graph(graph_seed)
    g = rg.graph
    rev = DijkstraSearch(reversed_graph(g))
    fwd = DijkstraSearch(g)
    searches = (
        CoreSearch(g, "bidirectional-astar"),
        CoreSearch(g, "alt", active_landmarks=2),
        CoreSearch(g, "alt", active_landmarks=8),
    )
    astar = CoreSearch(g, "astar")
    for q in range(4):
        sources, targets = random_seeds(rg), random_seeds(rg)
        to_t = rev.one_to_all(targets)  # d(v, T)
        from_s = fwd.one_to_all(sources)  # d(S, v)
        for s in searches:
            msg = f"seed={graph_seed} query={q} {s.algorithm}"
            pi_t, pi_s = s.bounds(sources, targets)
            check_consistent(g, pi_t, pi_s, sources, targets, msg)
            ok = to_t < INF_WEIGHT
            assert np.all(pi_t[ok] <= to_t[ok]), f"{msg}: pi_t not admissible"
            ok = from_s < INF_WEIGHT
            assert np.all(pi_s[ok] <= from_s[ok]), f"{msg}: pi_s not admissible"
        assert np.array_equal(astar.bounds(sources, targets)[0], searches[0].bounds(sources, targets)[0])


@settings(max_examples=40, deadline=None)
@given(graph_seed=st.integers(0, 2**32 - 1))
def test_landmark_tables_exact(graph_seed: int) -> None:
    rg = random_graph(graph_seed, landmarks=0)
    g = rg.graph
    method = ("avoid", "farthest")[graph_seed % 2]
    arrays, meta = build_landmarks(g, count=5, method=method, seed=graph_seed)
    k = meta["count"]
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    assert k == min(5, len(main)) and meta["method"] == method and meta["bytes"] > 0
    lm = arrays["lm_nodes"]
    assert len(set(lm.tolist())) == k and np.all(np.asarray(g.node_component)[lm] == 0)
    assert arrays["lm_from"].dtype == np.uint32 and arrays["lm_from"].shape == (g.num_nodes, k)
    rg_rev = reversed_graph(g)
    for i, node in enumerate(lm.tolist()):
        for table, graph in ((arrays["lm_from"], g), (arrays["lm_to"], rg_rev)):
            d = dijkstra_weights(graph, node)
            expect = np.where(d >= INF_WEIGHT, int(LM_NONE), d).astype(np.uint32)
            assert np.array_equal(table[:, i], expect), f"seed={graph_seed} landmark {i}"


def test_great_circle_helpers() -> None:
    # one degree of latitude on the mean-radius sphere; and the vectorised haversine agrees
    assert gc_distance_m(0.0, 0.0, 0.0, 1.0) == pytest.approx(6_371_008.8 * np.pi / 180, rel=1e-12)
    a = gc_distance_m(1.5, 42.5, 1.6, 42.55)
    assert a == pytest.approx(float(haversine_m(np.array(1.5), np.array(42.5), np.array(1.6), np.array(42.55))))
    # the bound's top speed covers every arc's straight line, also where arc_dist is short of it
    arrays = arrays_from_arcs([0], [1], [10], [5], [0.0, 0.001], [0.0, 0.0])  # 111 m in 1 s, arc_dist says 0.5 m
    g = graph_in_memory(arrays, {"max_speed_mps": 0.5})
    geo = node_geo(g)
    assert geo.vmax_mps >= 111.0 and geo.scale * 111.19 <= 10
    # a zero-weight arc spanning a distance switches the straight-line bound off
    g0 = graph_in_memory(arrays_from_arcs([0], [1], [0], [0], [0.0, 0.001], [0.0, 0.0]), {"max_speed_mps": 10.0})
    assert node_geo(g0).scale == 0.0


# ------------------------------------------------------------------------------------------------- real extracts


@pytest.mark.extracts
@pytest.mark.parametrize("profile", ("car", "foot"))
@pytest.mark.parametrize("name", all_extracts())
def test_real_bounds_consistent(graph_cache, name: str, profile: str) -> None:  # type: ignore[no-untyped-def]
    g = real_graph(graph_cache, name, profile)
    n = g.num_nodes
    u = np.asarray(g.arc_tail)
    v = np.asarray(g.arc_head)
    w = np.asarray(g.arc_weight).astype(np.int64)
    # landmark tables: consistent on every arc (d(L, v) <= d(L, u) + w and d(u, L) <= w + d(v, L))
    lm_from = np.asarray(g.lm_from).astype(np.int64)
    lm_to = np.asarray(g.lm_to).astype(np.int64)
    none = int(LM_NONE)
    fu, fv = lm_from[u], lm_from[v]
    assert np.all((fu == none) | (fv <= fu + w[:, None])), f"{name} {profile}: lm_from inconsistent"
    tu, tv = lm_to[u], lm_to[v]
    assert np.all((tv == none) | (tu <= tv + w[:, None])), f"{name} {profile}: lm_to inconsistent"
    # one landmark column is exact
    lm0 = int(g.lm_nodes[0])
    d = dijkstra_weights(g, lm0)
    assert np.array_equal(np.where(d >= INF_WEIGHT, none, d), lm_from[:, 0])
    # straight-line and ALT bounds for random queries (nodes, and points between nodes with seed offsets)
    rng = np.random.default_rng(zlib.crc32(f"{name}/{profile}".encode()))
    bi = CoreSearch(g, "bidirectional-astar")
    alt = CoreSearch(g, "alt")
    lon = np.asarray(g.node_lon) / 1e7
    lat = np.asarray(g.node_lat) / 1e7
    wf = w.astype(np.float64)
    for q in range(6):
        ends = []
        for _ in range(2):
            a = int(rng.integers(g.num_arcs))
            f = float(rng.random())
            # the point on arc a at fraction f: seeds are its tail (back along the arc) and head (on along it)
            plon = lon[u[a]] + f * (lon[v[a]] - lon[u[a]])
            plat = lat[u[a]] + f * (lat[v[a]] - lat[u[a]])
            nodes = np.array([u[a], v[a]], np.int32)
            ends.append((nodes, plon, plat, w[a], f))
        (sn, slon, slat, sw, sf), (tn, tlon, tlat, tw, tf) = ends
        # leaving the source point: to the head costs the rest of the arc; reaching the target point from the tail
        # costs the part before it (integer ds rounded down, as a snapper might)
        sources = Seeds(sn[1:], np.array([int(sw * (1 - sf))]), np.zeros(1, np.int64), slon, slat)
        targets = Seeds(tn[:1], np.array([int(tw * tf)]), np.zeros(1, np.int64), tlon, tlat)
        for s in (bi, alt):
            pi_t, pi_s = s.bounds(sources, targets)
            check_consistent(g, pi_t, pi_s, sources, targets, f"{name} {profile} q={q} {s.algorithm}")
        # with zero-offset node seeds the straight-line bound needs no shift: it is the plain floored bound
        t = int(rng.integers(n))
        node_t = Seeds(np.array([t], np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), lon[t], lat[t])
        pi_t = CoreSearch(g, "astar").bounds(node_t, node_t)[0] if q == 0 else bi.bounds(node_t, node_t)[0]
        bad = np.flatnonzero(pi_t[u] > wf + pi_t[v])
        assert bad.size == 0, f"{name} {profile}: straight-line bound inconsistent on arcs {bad[:5]}"
        assert pi_t[t] == 0

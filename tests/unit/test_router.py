"""The engine facade: routes between phantoms equal an independent oracle, geometry and pieces are consistent,
same-chain legs in both directions, via points, tables, unreachable pairs, the algorithm registry, loading.

The oracle is networkx Dijkstra on a copy of the graph in which every phantom is a real node splitting its arcs
with the phantom's own partial weights, so it shares nothing with the router's seed logic. Routes are computed with
a small pure-Python Dijkstra plugged in as the search kernel, and with every real kernel the build provides.
"""

from __future__ import annotations

import heapq
import math
import threading
from itertools import pairwise
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from app.engine.data import load
from app.engine.errors import GraphError, InvalidValue, NoRoute
from app.engine.router import Router
from app.engine.search.algorithms import ALGORITHMS
from app.engine.types import INF_WEIGHT, Leg, Phantom, Route, SearchResult, SearchStats, Seeds
from floor.format.graph import Graph, save_graph
from floor.format.units import COORD_SCALE
from floor.kernels.geometry import osrm_distance_m
from tests.unit.test_snap import at, build_map, to_lonlat

INF = int(INF_WEIGHT)
# the graphs these tests ask `graph_cache` for, built ahead by conftest's background builder
GRAPHS = [("monaco.osm.gz", "car", True, 8)]


class RefDijkstra:
    """Pure-Python multi-source multi-target Dijkstra with the search-kernel interface (the stand-in)."""

    def __init__(self, graph: Graph) -> None:
        self.g = graph

    def run(self, sources: Seeds, targets: Seeds, options: object = None) -> SearchResult:
        g = self.g
        dist: dict[int, int] = {}
        pred: dict[int, int] = {}  # node -> arc, or -1 - seed
        heap: list[tuple[int, int]] = []
        for i, (v, w) in enumerate(zip(sources.nodes.tolist(), sources.weights.tolist(), strict=True)):
            if w < dist.get(v, INF):
                dist[v], pred[v] = w, -1 - i
                heapq.heappush(heap, (w, v))
        tgt: dict[int, tuple[int, int]] = {}
        for j, (v, w) in enumerate(zip(targets.nodes.tolist(), targets.weights.tolist(), strict=True)):
            if v not in tgt or w < tgt[v][0]:
                tgt[v] = (w, j)
        best, best_node = INF, -1
        done: set[int] = set()
        while heap:
            d, u = heapq.heappop(heap)
            if u in done or d > dist[u]:
                continue
            if d >= best:
                break
            done.add(u)
            if u in tgt and d + tgt[u][0] < best:
                best, best_node = d + tgt[u][0], u
            for a in range(int(g.first_out[u]), int(g.first_out[u + 1])):
                v, nd = int(g.arc_head[a]), d + int(g.arc_weight[a])
                if nd < dist.get(v, INF):
                    dist[v], pred[v] = nd, a
                    heapq.heappush(heap, (nd, v))
        stats = SearchStats("reference", len(done))
        if best_node < 0:
            return SearchResult(INF, np.zeros(0, dtype=np.int32), -1, -1, stats)
        arcs, v = [], best_node
        while pred[v] >= 0:
            arcs.append(pred[v])
            v = int(g.arc_tail[pred[v]])
        return SearchResult(best, np.array(arcs[::-1], dtype=np.int32), -1 - pred[v], tgt[best_node][1], stats)


def ref_router(graph: Graph, **kw: object) -> Router:
    return Router(graph, algorithms={"reference": RefDijkstra}, **kw)  # type: ignore[arg-type]


def real_algorithms() -> list[str]:
    """Every registry algorithm."""
    return list(ALGORITHMS)


# -- the oracle --------------------------------------------------------------------------------------------------------


def oracle(router: Router, phantoms: list[Phantom]) -> nx.MultiDiGraph:
    """The graph with every phantom i inserted as node ("P", i) on the arcs of its chain (equal phantoms: one node)."""
    g = router.graph
    on_arc: dict[int, list[tuple[float, int, int]]] = {}  # arc -> (position along the arc, before weight, phantom)
    first: dict[tuple[int, float, float], int] = {}
    G = nx.MultiDiGraph()
    for i, p in enumerate(phantoms):
        j = first.setdefault((p.chain, p.lon, p.lat), i)
        if j != i:
            G.add_edge(("P", i), ("P", j), weight=0)
            G.add_edge(("P", j), ("P", i), weight=0)
            continue
        off = router.snapper.offset_m(p)
        if p.fwd_arc >= 0:
            on_arc.setdefault(p.fwd_arc, []).append((off, p.fwd_weight_before, i))
        if p.bwd_arc >= 0:
            on_arc.setdefault(p.bwd_arc, []).append((-off, p.bwd_weight_before, i))
        # a phantom exactly on a chain end node is that node
        gf = g.geom_first
        for node, pt in ((router.chains.first_node, gf[p.chain]), (router.chains.last_node, gf[p.chain + 1] - 1)):
            if (p.lon, p.lat) == (g.geom_lon[pt] / COORD_SCALE, g.geom_lat[pt] / COORD_SCALE):
                on_arc.setdefault(-1, []).append((0.0, int(node[p.chain]), i))
    G.add_nodes_from(range(g.num_nodes))
    for a in range(g.num_arcs):
        u, v, w = int(g.arc_tail[a]), int(g.arc_head[a]), int(g.arc_weight[a])
        if a not in on_arc:
            G.add_edge(u, v, weight=w)
            continue
        prev, prev_w = u, 0
        for _, wb, i in sorted(on_arc[a]):
            G.add_edge(prev, ("P", i), weight=wb - prev_w)
            prev, prev_w = ("P", i), wb
        G.add_edge(prev, v, weight=w - prev_w)
    for _, node, i in on_arc.get(-1, []):
        G.add_edge(("P", i), node, weight=0)
        G.add_edge(node, ("P", i), weight=0)
    return G


def oracle_weight(G: nx.MultiDiGraph, i: int, j: int) -> int:
    try:
        return int(nx.dijkstra_path_length(G, ("P", i), ("P", j)))
    except nx.NetworkXNoPath:
        return INF


def check_leg(graph: Graph, leg: Leg) -> None:
    """Coordinates start and end at the snapped points without repeats; pieces add up and cover the line."""
    c = leg.coordinates
    assert c.shape[1] == 2 and len(c) >= 2
    assert (c[0, 0], c[0, 1]) == (leg.source.lon, leg.source.lat)
    assert (c[-1, 0], c[-1, 1]) == (leg.target.lon, leg.target.lat)
    if len(c) > 2 or (c[0] != c[1]).any():
        step = np.abs(np.diff(c, axis=0)).max(axis=1)
        assert (step > 1e-9).all(), "repeated consecutive coordinates"
    ends = leg.piece_coord_end
    assert len(ends) == len(leg.piece_arc) >= 1
    assert (np.diff(ends) >= 0).all() and ends[-1] == len(c) - 1
    assert leg.piece_duration_s.sum() == pytest.approx(leg.duration_s, abs=1e-9)
    assert leg.piece_distance_m.sum() == pytest.approx(leg.distance_m, abs=1e-9)
    assert leg.duration_s == leg.weight / 10
    # the leg is as long as its line in OSRM's formula
    length = sum(osrm_distance_m(*c[k], *c[k + 1]) for k in range(len(c) - 1))
    assert length == pytest.approx(leg.distance_m, abs=1e-6)
    for a in leg.piece_arc:
        assert 0 <= a < graph.num_arcs


# -- maps --------------------------------------------------------------------------------------------------------------

# a two-way road a-b-c with shape point b... and a oneway loop c-d-e-f back to c
LOOP = """
a    b    c    d


          f    e
"""


def loop_map() -> tuple[Graph, Router]:
    g, _ = build_map(LOOP, ["abc", ("cde", "oneway"), ("efc", "oneway")])
    return g, ref_router(g)


def test_same_chain_both_directions() -> None:
    g, r = loop_map()
    p, q = r.snap(*at(200, 10)), r.snap(*at(700, -10))
    assert p.chain == q.chain == 0
    fwd = r.route([p, q], "reference")
    # 500 m on the drawing (the sphere); OSRM's WGS84 ruler at 43 degrees measures east-west lines 0.3 % longer
    assert fwd.weight == 500 and fwd.distance_m == pytest.approx(500 * 1.00325, abs=0.2)
    assert fwd.coordinates.tolist() == [[p.lon, p.lat], [g.geom_lon[1] / 1e7, g.geom_lat[1] / 1e7], [q.lon, q.lat]]
    back = r.route([q, p], "reference")
    assert back.weight == 500 and len(back.legs[0].piece_arc) == 1
    assert back.legs[0].piece_arc[0] == q.bwd_arc
    for leg in (fwd.legs[0], back.legs[0]):
        check_leg(g, leg)
    same = r.route([p, p], "reference")
    assert same.weight == 0 and same.distance_m == 0 and len(same.coordinates) == 2


def test_one_hot_path_switch_per_router() -> None:
    """The fused kernels' switch belongs to a router, its snapper, its legs and the routers derived from it (a custom
    model's): turned off there it is off for them all, and another router (another engine) keeps its own."""
    g, r = loop_map()
    other = ref_router(g)
    derived = r.derive(g)
    assert r.hot_path.fused and derived.hot_path is r.hot_path
    r.hot_path.fused = False
    assert not derived.snapper.hot_path.fused and not derived.legs.hot_path.fused and not r.legs.hot_path.fused
    assert other.hot_path.fused and other.snapper.hot_path.fused
    p, q = r.snap(*at(200, 10)), r.snap(*at(700, -10))  # snapped step by step: the same phantoms
    assert (p, q) == (other.snap(*at(200, 10)), other.snap(*at(700, -10)))


def test_same_chain_oneway_goal_behind_goes_around() -> None:
    g, r = loop_map()
    p, q = r.snap(*at(1520, -100)), r.snap(*at(1520, -200))  # both on the oneway c-d-e, q after p
    assert p.chain == q.chain and p.bwd_arc == -1
    ahead = r.route([p, q], "reference")
    assert ahead.weight == 100 and len(ahead.legs[0].piece_arc) == 1
    behind = r.route([q, p], "reference")
    # q -> e (100 m) -> f -> c (800 m) -> d -> p (600 m)
    assert behind.weight == 100 + 800 + 600
    check_leg(g, behind.legs[0])
    assert [int(a) for a in behind.legs[0].piece_arc] == [q.fwd_arc, int(g.arc_geom.tolist().index(4)), q.fwd_arc]
    G = oracle(r, [p, q])
    assert oracle_weight(G, 1, 0) == behind.weight and oracle_weight(G, 0, 1) == ahead.weight


def test_oneway_dead_end_is_no_route() -> None:
    g, _ = build_map(LOOP, ["abc", ("cd", "oneway")])
    r = ref_router(g, min_component_size=2)  # a-b-c big beside the tiny dead end (OSRM's default makes both tiny)
    # c-d is its own tiny component (d is a dead end): points near it alone stay there, with a-b-c they move
    p, q = r.snap(*at(1200, 5)), r.snap(*at(1400, 5))
    assert p.chain == q.chain == 1 and p.component == 1
    assert [x.chain for x in r.snap_waypoints([at(1200, 5), at(1400, 5)])] == [1, 1]
    assert [x.chain for x in r.snap_waypoints([at(1200, 5), at(100, 0)])] == [0, 0]
    assert r.route([p, q], "reference").weight == 200
    with pytest.raises(NoRoute):
        r.route([q, p], "reference")
    with pytest.raises(NoRoute):
        r.route([q, r.snap(*at(100, 0))], "reference")
    t = r.table([p, q], [p, q])
    assert t.durations_s[0, 1] == 20 and math.isnan(t.durations_s[1, 0]) and math.isnan(t.distances_m[1, 0])
    assert t.durations_s[0, 0] == t.durations_s[1, 1] == 0


def test_via_points_and_route_totals() -> None:
    g, r = loop_map()
    pts = [r.snap(*at(100, 20)), r.snap(*at(1450, -150)), r.snap(*at(800, -210)), r.snap(*at(300, -20))]
    route = r.route(pts, "reference")
    assert len(route.legs) == 3
    G = oracle(r, pts)
    assert [leg.weight for leg in route.legs] == [oracle_weight(G, i, i + 1) for i in range(3)]
    assert route.weight == sum(leg.weight for leg in route.legs)
    assert route.duration_s == route.weight / 10
    assert route.distance_m == pytest.approx(sum(leg.distance_m for leg in route.legs))
    assert len(route.coordinates) == sum(len(leg.coordinates) for leg in route.legs) - 2
    for leg in route.legs:
        check_leg(g, leg)


def test_registry_errors() -> None:
    g, r = loop_map()
    p = r.snap(*at(100, 0))
    with pytest.raises(InvalidValue, match="unknown algorithm"):
        r.route([p, p], "teleport")
    with pytest.raises(InvalidValue):
        r.route([p], "reference")
    default = Router(g)
    assert "ch" not in default.algorithms and "alt" not in default.algorithms
    with pytest.raises(InvalidValue, match="contraction hierarchy"):
        default.route([p, p], "ch")
    with pytest.raises(InvalidValue, match="landmarks"):
        default.route([p, p], "alt")


def test_query_objects_per_thread() -> None:
    _, r = loop_map()
    q = r.query()
    assert r.query() is q
    other: list[object] = []
    t = threading.Thread(target=lambda: other.append(r.query()))
    t.start()
    t.join()
    assert other[0] is not q


def test_max_snap_radius() -> None:
    g, _ = build_map(LOOP, ["abc"])
    r = ref_router(g, max_snap_m=50)
    assert r.snap(*at(500, 40)).distance_m == pytest.approx(40, abs=0.1)
    from app.engine.errors import NoSegment

    with pytest.raises(NoSegment):
        r.snap(*at(500, 60))
    with pytest.raises(NoSegment):
        r.snap(*at(500, 60), radius_m=1000)  # the server cap wins
    with pytest.raises(NoSegment):
        r.snap(*at(500, 40), radius_m=30)


def random_network(seed: int, size: int = 6) -> Graph:
    """A jittered grid of junctions; random roads (some oneway, some with shape points, random speeds)."""
    rng = np.random.default_rng(seed)
    letters = iter(chr(c) for c in range(0x4E00, 0x9FFF))
    pts: dict[str, tuple[float, float]] = {}
    node = {}
    for i in range(size):
        for j in range(size):
            ch = next(letters)
            node[i, j] = ch
            pts[ch] = to_lonlat(i * 100 + rng.normal(0, 15), j * 100 + rng.normal(0, 15))
    ways: list[tuple[str, str, float]] = []
    for (i, j), a in node.items():
        for di, dj in ((1, 0), (0, 1)):
            b = node.get((i + di, j + dj))
            if b is None or rng.random() < 0.25:
                continue
            way = a
            for _ in range(int(rng.integers(0, 3))):  # shape points
                ch = next(letters)
                x = (i + di * rng.uniform(0.2, 0.8)) * 100 + rng.normal(0, 10)
                y = (j + dj * rng.uniform(0.2, 0.8)) * 100 + rng.normal(0, 10)
                pts[ch] = to_lonlat(x, y)
                way += ch
            way += b
            kind = str(rng.choice(["both", "both", "oneway", "reverse"]))
            ways.append((way, kind, float(rng.uniform(5, 30))))
    return build_map(pts, ways)[0]


def table_rounding_m(route: Route) -> float:
    """How far a table's distance may be from the route's: the route measures its points in OSRM's formula (as
    osrm-routed), the table adds the arcs' decimetres (`arc_dist`), each within 0.05 m, and the two phantom parts."""
    return 0.05 * (sum(len(leg.piece_arc) for leg in route.legs) + 2) + 1e-6


def route_or_inf(r: Router, a: Phantom, b: Phantom, algorithm: str) -> int:
    try:
        return r.route([a, b], algorithm).weight
    except NoRoute:
        return INF


@pytest.mark.parametrize("seed", range(6))
def test_routes_and_tables_equal_oracle(seed: int) -> None:
    g = random_network(seed)
    r = ref_router(g)
    rng = np.random.default_rng(100 + seed)
    phs = [r.snap(*to_lonlat(*rng.uniform(-50, 550, 2))) for _ in range(10)]
    phs += [phs[0], phs[3]]  # the same point twice
    G = oracle(r, phs)
    table = r.table(phs, phs)
    for i, a in enumerate(phs):
        for j, b in enumerate(phs):
            want = oracle_weight(G, i, j)
            try:
                route = r.route([a, b], "reference")
            except NoRoute:
                assert want == INF, f"seed {seed}: {i}->{j} NoRoute, oracle {want}"
                assert math.isnan(table.durations_s[i, j])
                continue
            assert route.weight == want, f"seed {seed}: {i}->{j}"
            check_leg(g, route.legs[0])
            assert table.durations_s[i, j] == route.duration_s, f"seed {seed}: table {i}->{j}"
            tol = table_rounding_m(route)
            assert table.distances_m[i, j] == pytest.approx(route.distance_m, abs=tol), f"seed {seed}: table {i}->{j}"


@pytest.mark.parametrize("seed", range(3))
def test_real_kernels_agree_with_reference(seed: int) -> None:
    g = random_network(seed, size=8)
    names = [n for n in real_algorithms() if n in Router(g).algorithms]
    if not names:
        pytest.skip("no search kernels in this build yet")
    r = Router(g)
    ref = ref_router(g)
    rng = np.random.default_rng(200 + seed)
    phs = [r.snap(*to_lonlat(*rng.uniform(-50, 750, 2))) for _ in range(8)]
    for a, b in pairwise(phs + phs[:1]):
        want = route_or_inf(ref, a, b, "reference")
        for name in names:
            assert route_or_inf(r, a, b, name) == want, f"seed {seed}: {name}"


def test_load_and_errors(tmp_path: Path) -> None:
    g, _ = build_map(LOOP, ["abc", ("cde", "oneway"), ("efc", "oneway")])
    out = save_graph(tmp_path / "g", g.arrays, {"profile": "testbot"})
    loaded = load(out)
    assert type(loaded.geom_lon) is np.ndarray and not loaded.geom_lon.flags.writeable
    r = ref_router(loaded)
    p, q = r.snap(*at(100, 0)), r.snap(*at(1100, -150))
    assert r.route([p, q], "reference").weight == ref_router(g).route([p, q], "reference").weight
    assert r.info()["nodes"] == g.num_nodes
    (out / "manifest.json").write_text("{}")
    with pytest.raises(GraphError, match="preprocess"):
        load(out)
    with pytest.raises(GraphError):
        load(tmp_path / "nowhere")


# -- a real extract ----------------------------------------------------------------------------------------------------


@pytest.mark.extracts
def test_monaco_end_to_end(graph_cache) -> None:  # type: ignore[no-untyped-def]
    g = load(graph_cache("monaco.osm.gz", "car", ch=True, landmarks=8))
    r = Router(g)
    assert "dijkstra" in r.algorithms
    rng = np.random.default_rng(7)
    x0, y0, x1, y1 = g.manifest["bbox"]
    phs = r.snap_waypoints([(rng.uniform(x0, x1), rng.uniform(y0, y1)) for _ in range(12)])
    assert all(p.component == 0 for p in phs)
    table = r.table(phs, phs)
    for a, b in pairwise(phs):
        want = route_or_inf(r, a, b, "dijkstra")
        for name in r.algorithms:
            try:
                route = r.route([a, b], name)
            except NoRoute:
                assert want == INF, name
                continue
            assert route.weight == want, name
            leg = route.legs[0]
            assert (leg.coordinates[0] == (a.lon, a.lat)).all() and (leg.coordinates[-1] == (b.lon, b.lat)).all()
            assert leg.piece_duration_s.sum() == pytest.approx(leg.duration_s)
    # tables (CH buckets, and one-to-many Dijkstra without a CH) equal single routes, distances included
    fallback = Router(g, algorithms={"dijkstra": r.factory("dijkstra")}).table(phs, phs)
    for i, a in enumerate(phs):
        for j, b in enumerate(phs):
            route = r.route([a, b], r.default_algorithm)
            for t in (table, fallback):
                assert t.durations_s[i, j] == route.duration_s and t.distances_m[i, j] == pytest.approx(
                    route.distance_m, abs=table_rounding_m(route)
                )
    r.warmup()


def test_bearing_restricts_the_start_direction() -> None:
    g, r = loop_map()
    q = r.snap(*at(700, 0))
    west = r.snap(*at(200, 10), bearing=(270, 30))
    assert west.fwd_arc == -1
    route = r.route([west, q], "reference")  # west to a, turn there, back east: 200 + 700
    assert route.weight == 900
    check_leg(g, route.legs[0])
    assert r.route([r.snap(*at(200, 10)), q], "reference").weight == 500


ROUNDABOUT = """
e  a  b

   d  c
"""


def test_closed_loop_chain() -> None:
    # a oneway closed way a-b-c-d-a (one chain from a back to a) hanging off the road e-a
    g, _ = build_map(ROUNDABOUT, [("abcda", "oneway"), "ea"])
    r = ref_router(g)
    p, q = r.snap(*at(610, -100)), r.snap(*at(300, -210))  # p on b-c 100 m after b, q on the corner d
    e = r.snap(*at(0, 10))
    assert p.chain == q.chain and p.bwd_arc == -1
    phs = [p, q, e]
    G = oracle(r, phs)
    for i, a in enumerate(phs):
        for j, b in enumerate(phs):
            route = r.route([a, b], "reference")
            assert route.weight == oracle_weight(G, i, j), (i, j)
            check_leg(g, route.legs[0])
    assert r.route([q, p], "reference").weight == 200 + 300 + 100  # d-a, a-b, b-p
    assert r.route([p, q], "reference").weight == 100 + 300  # p-c, c-d


def test_graph_without_roads() -> None:
    g, _ = build_map(LINE_ONLY_POINTS, [])
    r = ref_router(g)
    from app.engine.errors import NoSegment

    with pytest.raises(NoSegment):
        r.snap(7.0, 43.0)
    r.warmup()


LINE_ONLY_POINTS = """
a  b
"""

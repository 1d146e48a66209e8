"""Alternative routes (`app.engine.features.alternatives`): every alternative obeys the module's rules, checked from
outside.

Stretch at most 1.25, sharing at most 0.75 with the best route and with each earlier alternative, a connected simple
path whose stated weight is its arcs' weight, excluded classes and avoided areas never used, and local optimality:
every stretch of an alternative weighing at most a tenth of the best route is a shortest path (reference Dijkstra).
The best route is the plain route's. Then the HTTP surfaces: OSRM `alternatives=` and the native parameter.
"""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from app.engine.data import load
from app.engine.errors import NoRoute
from app.engine.features import alternatives as A
from app.engine.router import Router
from app.engine.search.reference import DijkstraSearch
from app.engine.types import Route, RouteOptions
from floor.format.units import COORD_SCALE, FLAG_MOTORWAY
from harness import api_server
from tests.unit.test_ch import seeds

# the graphs these tests ask `graph_cache` for, built ahead by conftest's background builder
GRAPHS = [("porto_portugal.osm.pbf", "car", True, 8)]


def internal_arcs(route: Route) -> np.ndarray:
    """The whole arcs of a one-leg route: its pieces without the partial first and last ones."""
    return np.asarray(route.legs[0].piece_arc[1:-1], dtype=np.int64)


def shared(a: np.ndarray, b: np.ndarray, weight: np.ndarray) -> int:
    return int(weight[np.intersect1d(a, b)].sum())


def check_alternatives(router: Router, best: Route, alts: list[Route], rng: np.random.Generator) -> None:
    g = router.graph
    tail, head, weight = (np.asarray(x) for x in (g.arc_tail, g.arc_head, g.arc_weight))
    kept = [internal_arcs(best)]
    oracle = DijkstraSearch(g if router.edges is None else router.search_graph)  # stops at its target
    for alt in alts:
        arcs = internal_arcs(alt)
        assert alt.weight <= A.MAX_STRETCH * best.weight, (alt.weight, best.weight)
        assert alt.weight >= best.weight
        assert np.all(head[arcs[:-1]] == tail[arcs[1:]]), "alternative is not a connected path"
        assert np.unique(tail[arcs]).size == arcs.size, "alternative visits a node twice"
        assert alt.legs[0].weight == alt.weight
        for other in kept:
            assert not np.array_equal(arcs, other), "an alternative repeats a route already given"
            assert shared(arcs, other, weight) <= A.MAX_SHARING * alt.weight + weight[arcs].max(initial=0)
        kept.append(arcs)
        # local optimality: stretches of at most MIN_PLATEAU x the best weight are shortest paths
        window = A.MIN_PLATEAU * best.weight
        if router.edges is None:
            cum = np.concatenate([[0], np.cumsum(weight[arcs])])
        else:  # each piece's weight includes the turn onto its arc
            cum = np.concatenate([[0], np.cumsum(np.round(alt.legs[0].piece_weight[1:-1] * 10).astype(np.int64))])
        starts = np.unique(np.linspace(0, arcs.size - 1, 30).astype(int)) if arcs.size else []
        for i in starts:
            j = int(np.searchsorted(cum, cum[i] + window, side="right")) - 1  # arcs i..j-1 weigh <= window
            if j <= i:
                continue
            if router.edges is None:
                d = oracle.run(seeds([int(tail[arcs[i]])]), seeds([int(head[arcs[j - 1]])])).weight
                assert d == cum[j] - cum[i], f"stretch {i}..{j} of an alternative is not a shortest path"
            else:  # on the search graph: from the end of arc i to the end of arc j-1 (turns included)
                d = oracle.run(seeds([int(arcs[i])]), seeds([int(arcs[j - 1])])).weight
                assert d == cum[j] - cum[i + 1], f"stretch {i}..{j} of an alternative is not a shortest path"


def random_phantom_pairs(router: Router, k: int, seed: int) -> list:
    g = router.graph
    rng = np.random.default_rng(seed)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    lon = np.asarray(g.node_lon) / COORD_SCALE
    lat = np.asarray(g.node_lat) / COORD_SCALE
    out = []
    for _ in range(k):
        a, b = rng.choice(main, 2, replace=False)
        jitter = rng.normal(0, 2e-5, 4)
        pts = [(lon[a] + jitter[0], lat[a] + jitter[1]), (lon[b] + jitter[2], lat[b] + jitter[3])]
        out.append(router.snap_waypoints(pts))
    return out


@pytest.fixture(scope="module")
def monaco(bundled_graph) -> Router:
    return Router(load(bundled_graph))


@pytest.mark.parametrize("landmarks", [True, False])
def test_bounded_trees_hold_every_node_a_route_within_the_cutoff_can_use(monaco: Router, landmarks: bool) -> None:
    """`Searcher.bounded_tree` (keys on the bound to the far end) against plain one-to-all searches: every node with
    d_f + d_b <= cutoff is settled in both bounded trees with the same labels, with exclusions and forbidden arcs."""
    from app.engine.search.searches import Searcher, SearchOptions

    g = monaco.search_graph
    rng = np.random.default_rng(2)
    sr = Searcher(g)
    if not landmarks:
        sr.lm_max = 0
    none = np.zeros(0, dtype=np.int32)
    for k, (src, tgt) in enumerate(random_phantom_pairs(monaco, 12, seed=4)):
        s_seeds = monaco.space.seeds(src, True).seeds
        t_seeds = monaco.space.seeds(tgt, False).seeds
        forbidden = rng.choice(g.num_arcs, size=20, replace=False).astype(np.int32) if k % 2 else None
        opts = SearchOptions(exclude_flags=FLAG_MOTORWAY if k % 3 == 0 else 0, forbidden=forbidden)
        full_f, _, done_f = sr.tree(sr.one_to_many(s_seeds, none, True, opts))
        full_b, _, done_b = sr.tree(sr.one_to_many(t_seeds, none, False, opts))
        both = done_f & done_b
        if not both.any():
            continue
        w = int((full_f + full_b)[both].min())
        cutoff = int(1.25 * w) + 1
        inside = both & (full_f + full_b <= cutoff)
        bounded = SearchOptions(exclude_flags=opts.exclude_flags, forbidden=forbidden, cutoff=cutoff)
        dist_f, _, bdone_f = sr.bounded_tree(s_seeds, t_seeds, True, bounded)
        dist_b, _, bdone_b = sr.bounded_tree(t_seeds, s_seeds, False, bounded)
        assert bdone_f[inside].all() and bdone_b[inside].all()
        assert np.array_equal(dist_f[inside], full_f[inside]) and np.array_equal(dist_b[inside], full_b[inside])
        assert np.array_equal(dist_f[bdone_f], full_f[bdone_f]), "a bounded tree settled a node at a wrong label"
        assert bdone_f.sum() < done_f.sum() or done_f.sum() < 50


@pytest.mark.parametrize("method", ["via", "plateau"])
def test_each_method_alone_obeys_the_rules(monaco: Router, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Via nodes on the hierarchy without the plateau fallback, and plateaus alone (no hierarchy offered)."""
    q = monaco.query()
    if method == "via":
        monkeypatch.setattr(A, "plateau_routes", lambda *args: [])
    else:
        monkeypatch.setattr(q, "_via", lambda exclude: None)
    rng = np.random.default_rng(8)
    found = 0
    for phantoms in random_phantom_pairs(monaco, 25, seed=12):
        result = q.routes(phantoms, RouteOptions(algorithm="ch", alternatives=2))
        check_alternatives(monaco, result.best, result.routes[1:], rng)
        found += len(result.routes) > 1
    assert found >= 8, f"{method}: alternatives found for only {found} of 25 pairs"


def test_via_candidates_on_random_graphs() -> None:
    """`ViaSearch` on random graphs (witness CH and customized CCH, zero weights, several weighted seeds) against
    Dijkstra: each candidate is a connected path from a source seed to a target seed whose two halves are shortest
    paths, of the stated weight, within the stretch; the T-test says exactly whether the stretch it tests around the
    via node is a shortest path, and a route that passes it is locally optimal (every stretch of at most the window
    is a shortest path)."""
    from app.engine.search.cch import customize
    from app.engine.search.via_alternatives import ViaSearch
    from tests.unit.test_cch import with_cch
    from tests.unit.test_ch import dijkstra, random_graph, with_ch

    checked = tested = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(8, 60))
        g = random_graph(seed, n, int(n * rng.uniform(1.5, 4.0)), zero_share=0.1)
        g = with_ch(g) if seed % 2 else with_cch(g)
        hierarchy = g if seed % 2 else customize(g, perfect=seed % 4 == 0)
        tail, head, weight = (np.asarray(x) for x in (g.arc_tail, g.arc_head, g.arc_weight))
        via = ViaSearch(hierarchy, g)
        for _ in range(10):
            s_nodes = rng.choice(n, size=int(rng.integers(1, 3)), replace=False)
            t_nodes = rng.choice(n, size=int(rng.integers(1, 3)), replace=False)
            s_w, t_w = rng.integers(0, 5, len(s_nodes)), rng.integers(0, 5, len(t_nodes))
            d_s = dijkstra(g, list(zip(s_nodes.tolist(), s_w.tolist(), strict=True)))
            best = min(d_s[int(x)] + int(w) for x, w in zip(t_nodes, t_w, strict=True))
            if best >= 10**15:
                continue
            window = A.MIN_PLATEAU * best
            for arcs, before, si, ti, total in via.candidates(
                seeds(s_nodes.tolist(), s_w.tolist()), seeds(t_nodes.tolist(), t_w.tolist()), A.MAX_STRETCH
            ):
                msg = f"seed {seed}"
                nodes = [int(s_nodes[si])] + head[arcs].tolist()
                assert len(arcs) == 0 or tail[arcs[0]] == s_nodes[si], msg
                assert np.all(head[arcs[:-1]] == tail[arcs[1:]]), msg
                assert nodes[-1] == t_nodes[ti], msg
                assert total == int(s_w[si]) + int(weight[arcs].sum()) + int(t_w[ti]), msg
                assert best <= total <= A.MAX_STRETCH * best, msg
                v = nodes[before]
                assert d_s[v] == int(s_w[si]) + int(weight[arcs[:before]].sum()), f"{msg}: first half not shortest"
                d_v = dijkstra(g, [(v, 0)])
                rest = min(d_v[int(x)] + int(w) for x, w in zip(t_nodes, t_w, strict=True))
                assert rest == int(weight[arcs[before:]].sum()) + int(t_w[ti]), f"{msg}: second half not shortest"
                cum = np.concatenate([[0], np.cumsum(weight[arcs])])
                ok = via.locally_optimal(arcs, before, window)
                optimal = all(
                    dijkstra(g, [(nodes[i], 0)])[nodes[j]] == cum[j] - cum[i]
                    for i in range(len(nodes))
                    for j in range(i + 1, len(nodes))
                    if cum[j] - cum[i] <= window
                )
                assert not ok or optimal, f"{msg}: passed the T-test but is not locally optimal"
                checked += 1
                tested += ok
    assert checked >= 30 and tested >= 15, (checked, tested)


def test_t_test_stretch_is_the_window_around_the_via_node() -> None:
    """The T-test's stretch kernel picks what the prefix sums and `searchsorted` pick: the last node at least the
    window before the via node, the first one at least that far after it (zero-weight arcs and windows among them)."""
    from app.engine.search.via_alternatives import _t_test_stretch

    rng = np.random.default_rng(3)
    tested = 0
    for _ in range(3000):
        n = int(rng.integers(1, 12))
        weight = rng.integers(0, 6, 40).astype(np.int32)
        weight[rng.random(40) < 0.2] = 0
        arcs = rng.integers(0, 40, n).astype(np.int32)
        tail, head = rng.integers(0, 99, 40).astype(np.int32), rng.integers(0, 99, 40).astype(np.int32)
        before = int(rng.integers(0, n + 1))
        window = float(rng.choice([0.0, 0.5, 1.0, 2.5, 4.0, 9.0, 30.0]))
        cum = np.concatenate([[0], np.cumsum(weight[arcs], dtype=np.int64)])
        at = int(cum[before])
        i = max(0, int(np.searchsorted(cum, at - window, side="right")) - 1)
        j = min(n, int(np.searchsorted(cum, at + window, side="left")))
        got = tuple(int(x) for x in _t_test_stretch(arcs, weight, tail, head, before, window))
        if j - i <= 1:
            assert got == (-1, -1, 0)
            continue
        a = int(tail[arcs[0]]) if i == 0 else int(head[arcs[i - 1]])
        assert got == (a, int(head[arcs[j - 1]]), int(cum[j] - cum[i])), (arcs, weight[arcs], before, window)
        tested += 1
    assert tested > 500


@pytest.mark.parametrize("algorithm", ["ch", "alt", "dijkstra"])
def test_alternatives_obey_the_rules(monaco: Router, algorithm: str) -> None:
    q = monaco.query()
    rng = np.random.default_rng(7)
    found = 0
    for phantoms in random_phantom_pairs(monaco, 25, seed=3):
        plain = q.route(phantoms, algorithm)
        result = q.routes(phantoms, RouteOptions(algorithm=algorithm, alternatives=2))
        assert result.best.weight == plain.weight
        assert len(result.routes) <= 3
        check_alternatives(monaco, result.best, result.routes[1:], rng)
        found += len(result.routes) > 1
    assert found >= 5, f"alternatives found for only {found} of 25 pairs"


def test_alternatives_respect_exclude_and_avoid(monaco: Router) -> None:
    q = monaco.query()
    g = monaco.graph
    flags = np.asarray(g.arc_flags)
    rng = np.random.default_rng(11)
    for phantoms in random_phantom_pairs(monaco, 10, seed=5):
        result = q.routes(phantoms, RouteOptions(algorithm="ch", exclude=frozenset({"motorway"}), alternatives=2))
        for r in result.routes:
            assert not np.any(flags[internal_arcs(r)] & FLAG_MOTORWAY)
        best = internal_arcs(result.best)
        if best.size < 3:
            continue
        forbidden = rng.choice(best[1:-1], size=1).astype(np.int32)
        try:
            avoided = q.routes(phantoms, RouteOptions(algorithm="alt", forbidden=forbidden, alternatives=2))
        except NoRoute:  # that arc was a bridge
            continue
        for r in avoided.routes:
            assert not np.isin(internal_arcs(r), forbidden).any()


def test_via_nodes_alone_say_when_plateaus_were_left(monaco: Router) -> None:
    """With `plateaus` off (the server's inline try) the result is the full one whenever it says it is complete,
    and it is incomplete exactly when fewer alternatives than asked came from via nodes."""
    q = monaco.query()
    seen = set()
    for phantoms in random_phantom_pairs(monaco, 40, seed=13):
        for want in (1, 2):
            full = q.routes(phantoms, RouteOptions(algorithm="ch", alternatives=want))
            quick = q.routes(phantoms, RouteOptions(algorithm="ch", alternatives=want, plateaus=False))
            assert full.complete
            assert quick.complete == (len(quick.routes) > want or monaco.legs.direct(*phantoms) is not None)
            if quick.complete:
                assert [internal_arcs(r).tolist() for r in quick.routes] == [
                    internal_arcs(r).tolist() for r in full.routes
                ]
            else:
                assert len(quick.routes) <= want and len(full.routes) >= len(quick.routes)
            seen.add(quick.complete)
    assert seen == {True, False}, seen


def test_no_alternative_repeats_the_best_route(monaco: Router) -> None:
    """No alternative is the best route (or an earlier alternative) again: the sharing bound counts road arcs against a
    weight with turns, so a copy of a route with costly turns once passed it (these Monaco pairs gave one)."""
    q = monaco.query()
    rng = np.random.default_rng(5)
    found = 0
    for phantoms in random_phantom_pairs(monaco, 40, seed=7):
        result = q.routes(phantoms, RouteOptions(algorithm="ch", alternatives=3))
        paths = [tuple(np.asarray(r.legs[0].piece_arc).tolist()) for r in result.routes]
        assert len(set(paths)) == len(paths), [r.weight for r in result.routes]
        check_alternatives(monaco, result.best, result.routes[1:], rng)
        found += len(result.routes) > 1
    assert found >= 10


def test_no_alternatives_when_not_asked(monaco: Router) -> None:
    phantoms = random_phantom_pairs(monaco, 1, seed=9)[0]
    assert len(monaco.query().routes(phantoms, RouteOptions(algorithm="ch")).routes) == 1


@pytest.mark.extracts
def test_alternatives_on_porto(graph_cache) -> None:
    router = Router(load(graph_cache("porto_portugal.osm.pbf")))
    q = router.query()
    rng = np.random.default_rng(1)
    found = 0
    for phantoms in random_phantom_pairs(router, 12, seed=1):
        result = q.routes(phantoms, RouteOptions(algorithm="ch", alternatives=2))
        check_alternatives(router, result.best, result.routes[1:], rng)
        found += len(result.routes) > 1
    assert found >= 6


# -- HTTP ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(bundled_graph):  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60.0) as c:
        yield c


A_PT, B_PT = "7.415136,43.733262", "7.422381,43.732684"  # three routes apart (the pair used before had only copies)


def test_osrm_alternatives(client: httpx.Client) -> None:
    r = client.get(f"/route/v1/driving/{A_PT};{B_PT}", params={"alternatives": "2", "steps": "true"})
    assert r.status_code == 200, r.text
    routes = r.json()["routes"]
    assert 2 <= len(routes) <= 3
    assert routes[0]["duration"] <= min(x["duration"] for x in routes[1:])
    for x in routes:
        assert x["legs"][0]["steps"][-1]["maneuver"]["type"] == "arrive"
        assert x["weight"] <= A.MAX_STRETCH * routes[0]["weight"] + 0.1
    one = client.get(f"/route/v1/driving/{A_PT};{B_PT}", params={"alternatives": "true"}).json()["routes"]
    assert len(one) == 2
    assert one[0]["duration"] == routes[0]["duration"]
    plain = client.get(f"/route/v1/driving/{A_PT};{B_PT}").json()["routes"]
    assert len(plain) == 1
    big = client.get(f"/route/v1/driving/{A_PT};{B_PT}", params={"alternatives": "9"})
    assert big.status_code == 400 and big.json()["code"] == "TooBig"


def test_native_alternatives(client: httpx.Client) -> None:
    r = client.get("/route", params={"from": A_PT, "to": B_PT, "alternatives": 2})
    assert r.status_code == 200, r.text
    props = r.json()["properties"]
    alts = props["alternatives"]
    assert 1 <= len(alts) <= 2
    for f in alts:
        assert f["type"] == "Feature" and f["geometry"]["type"] == "LineString"
        assert props["duration_s"] <= f["properties"]["duration_s"]
        assert "alternatives" not in f["properties"]
    coords = [[float(x) for x in p.split(",")] for p in (A_PT, B_PT)]
    post = client.post("/route", json={"coordinates": coords, "alternatives": 2})
    assert post.status_code == 200
    assert len(post.json()["properties"]["alternatives"]) == len(alts)
    assert "alternatives" not in client.get("/route", params={"from": A_PT, "to": B_PT}).json()["properties"]
    via = client.get("/route", params={"from": A_PT, "to": B_PT, "via": "7.4246,43.7384", "alternatives": 1})
    assert via.status_code == 400 and "two points" in via.json()["message"]
    too_many = client.get("/route", params={"from": A_PT, "to": B_PT, "alternatives": 5})
    assert too_many.status_code == 400 and too_many.json()["code"] == "TooBig"

"""OSRM's `/trip`: the tour solver (exact against brute force, local search never longer than where it starts, known
optima), OSRM's rewritten tables and rotations against brute force for every supported combination of fixed ends,
and the service through a real server on the bundled Monaco (the answer field by field, the refused combinations,
unreachable points); a slow test against osrm-routed on the same map."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.engine.errors import NoTrips
from app.engine.features import tsp
from app.engine.features.trip import plan
from app.engine.features.tsp import FORBIDDEN
from floor.format.units import INF_WEIGHT
from harness import api_server

T = "/trip/v1/driving/"


# --- the solver (no server) ------------------------------------------------------------------------------------------
def cost(c: np.ndarray, order: list[int] | np.ndarray, cycle: bool = True) -> int:
    n = len(order)
    return int(sum(c[order[k], order[(k + 1) % n]] for k in range(n if cycle else n - 1)))


def brute(c: np.ndarray, cycle: bool = True, first: int | None = None, last: int | None = None) -> int:
    """The cheapest cycle (or path) over every order, with the given first / last point."""
    n = c.shape[0]
    best = None
    for perm in itertools.permutations(range(n)):
        if (first is not None and perm[0] != first) or (last is not None and perm[-1] != last):
            continue
        s = cost(c, list(perm), cycle)
        best = s if best is None else min(best, s)
    assert best is not None
    return best


def random_table(rng: np.random.Generator, n: int, forbid: float = 0.0) -> np.ndarray:
    """Asymmetric travel times (a detour factor on points in a square), some pairs forbidden, a zero diagonal."""
    xy = rng.uniform(0, 1000, (n, 2))
    d = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    c = (d * rng.uniform(1.0, 1.6, (n, n))).astype(np.int64)
    c[rng.random((n, n)) < forbid] = FORBIDDEN
    np.fill_diagonal(c, 0)
    return c


def is_tour(t: np.ndarray, n: int) -> bool:
    return sorted(np.asarray(t).tolist()) == list(range(n))


def test_held_karp_equals_brute_force() -> None:
    rng = np.random.default_rng(17)
    for trial in range(40):
        n = 2 + trial % 7
        c = random_table(rng, n, forbid=0.15 if trial % 3 == 0 else 0.0)
        if trial % 5 == 0:
            c[:, 0] = 0  # the zeros of a rewritten table
        t = tsp.held_karp(c)
        assert t[0] == 0 and is_tour(t, n)
        assert cost(c, t) == brute(c), (n, c)
        assert cost(c, tsp.solve(c)) == brute(c)


def test_osrm_unit_cases() -> None:
    """osrm-backend's unit_tests/library/trip_algorithm_tests.cpp: the DP around forbidden arcs, its 2-opt."""
    c = np.full((3, 3), FORBIDDEN, dtype=np.int64)
    np.fill_diagonal(c, 0)
    c[0, 1] = c[1, 2] = c[2, 0] = 1
    assert cost(c, tsp.held_karp(c)) == 3
    c4 = np.array([[0, 10, 1, 10], [10, 0, 10, 1], [1, 10, 0, 10], [10, 1, 10, 0]], dtype=np.int64)
    route = np.arange(4, dtype=np.int64)
    assert cost(c4, route) == 40 and cost(c4, tsp.two_opt_osrm(route, c4)) == 22


def test_local_search_never_longer_than_its_start() -> None:
    rng = np.random.default_rng(5)
    for n in (17, 23, 40, 70):
        for forbid in (0.0, 0.05):
            c = random_table(rng, n, forbid)
            start = tsp.two_opt_osrm(tsp.farthest_insertion(c), c)
            assert is_tour(start, n)
            before = cost(c, start)
            descended = tsp.improve(c, start, 0, 1, tsp.NEAR, tsp.SPAN, tsp.REACH)
            kicked = tsp.improve(c, start, 3 * n, 1, tsp.NEAR, tsp.SPAN, tsp.REACH)
            assert is_tour(descended, n) and is_tour(kicked, n)
            assert cost(c, kicked) <= cost(c, descended) <= before
            assert cost(c, tsp.solve(c)) <= before
            assert np.array_equal(tsp.solve(c), tsp.solve(c))  # seeded: the same table, the same tour


def test_known_optima() -> None:
    rng = np.random.default_rng(3)
    # a hidden cycle of 1 s arcs among 1000 s ones: found by the DP and by the local search
    for n in (12, 45, 90):
        hidden = rng.permutation(n)
        c = np.full((n, n), 1000, dtype=np.int64)
        np.fill_diagonal(c, 0)
        c[hidden, np.roll(hidden, -1)] = 1
        assert cost(c, tsp.solve(c)) == n
    # points on a circle, clockwise 10 % cheaper: the clockwise round is the optimum
    n = 60
    angle = -2 * np.pi * np.arange(n) / n
    xy = np.stack([np.cos(angle), np.sin(angle)], axis=1) * 5000
    d = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    ahead = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n < n // 2
    c = np.where(ahead, d, 1.1 * d).astype(np.int64)
    shuffle = rng.permutation(n)  # the same instance with the points listed in a random order
    cs = c[np.ix_(shuffle, shuffle)]
    assert cost(cs, tsp.solve(cs)) == cost(c, np.arange(n))
    # at the DP's largest size, no amount of local search finds a shorter tour
    big = random_table(rng, tsp.EXACT_MAX)
    exact = cost(big, tsp.solve(big))
    searched = tsp.improve(big, tsp.farthest_insertion(big), 50 * tsp.EXACT_MAX, 2, tsp.NEAR, tsp.SPAN, tsp.REACH)
    assert exact <= cost(big, searched)


def test_small_tours() -> None:
    for n in range(4):
        c = np.arange(n * n, dtype=np.int64).reshape(n, n)
        assert is_tour(tsp.solve(c), n) and (n == 0 or cost(c, tsp.solve(c)) == brute(c))


@pytest.mark.parametrize(
    ("roundtrip", "first", "last"), [(True, False, False), (True, True, False), (True, False, True),
                                     (True, True, True), (False, True, False), (False, False, True),
                                     (False, True, True)]
)  # fmt: skip
def test_plan_is_osrm_with_fixed_ends(roundtrip: bool, first: bool, last: bool) -> None:
    """OSRM's rewritten tables and rotation, against brute force over the orders each combination allows."""
    rng = np.random.default_rng(int(roundtrip) * 4 + int(first) * 2 + int(last))
    for n in (2, 3, 5, 7):
        c = random_table(rng, n)
        order = plan(c, roundtrip, first, last).order
        assert sorted(order) == list(range(n))
        if first:
            assert order[0] == 0
        if last and roundtrip and not first:
            assert order[0] == n - 1  # a round trip from (and back to) the last point
        if last and (not roundtrip or first):
            assert order[-1] == n - 1
        if not (first or last):
            assert order[0] == 0  # rotated to start at the first point
        want = brute(c, roundtrip, 0 if first else None, n - 1 if last and (first or not roundtrip) else None)
        assert cost(c, order, roundtrip) == want, (n, order)


def test_plan_keeps_fixed_ends_above_the_exact_size() -> None:
    """Past `EXACT_MAX` the local search works on the rewritten table: the fixed ends still hold."""
    rng = np.random.default_rng(11)
    for n in (17, 30, 55):
        c = random_table(rng, n)
        for roundtrip, first, last in ((True, True, True), (False, True, True), (False, True, False),
                                       (False, False, True), (True, False, True)):  # fmt: skip
            order = plan(c, roundtrip, first, last).order
            assert sorted(order) == list(range(n))
            assert order[0] == (n - 1 if last and roundtrip and not first else 0 if first else order[0])
            assert not last or (roundtrip and not first) or order[-1] == n - 1


def test_plan_refuses_unreachable_pairs() -> None:
    c = random_table(np.random.default_rng(1), 5)
    c[3, 1] = INF_WEIGHT
    for ends in ((True, False, False), (False, True, True)):  # the whole table counts, whatever the ends
        with pytest.raises(NoTrips, match="No trip visiting all destinations possible."):
            plan(c, *ends)


# --- the service on Monaco -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client(bundled_graph: Path):
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def points(bundled_graph: Path) -> list[tuple[float, float]]:
    from harness.points import road_points

    return road_points(bundled_graph, 12, 7)


def path(pts: list[tuple[float, float]]) -> str:
    return ";".join(f"{lon},{lat}" for lon, lat in pts)


def order_of(body: dict) -> list[int]:
    wps = body["waypoints"]
    return sorted(range(len(wps)), key=lambda i: wps[i]["waypoint_index"])


def test_answer_field_by_field(client: httpx.Client, points: list[tuple[float, float]]) -> None:
    pts = points[:6]
    q = {"steps": "true", "annotations": "true", "geometries": "geojson", "overview": "full"}
    body = client.get(T + path(pts), params=q).json()
    assert set(body) == {"code", "trips", "waypoints"} and body["code"] == "Ok"
    (trip,) = body["trips"]
    assert set(trip) == {"legs", "weight_name", "weight", "duration", "distance", "geometry"}
    assert trip["weight_name"] == "routability" and len(trip["legs"]) == len(pts)
    for key in ("duration", "distance", "weight"):
        assert math.isclose(sum(leg[key] for leg in trip["legs"]), trip[key], abs_tol=0.1 * len(pts))
    for leg in trip["legs"]:
        assert set(leg) == {"steps", "summary", "weight", "duration", "distance", "annotation"}
        assert leg["steps"][0]["maneuver"]["type"] == "depart" and leg["steps"][-1]["maneuver"]["type"] == "arrive"
    wps = body["waypoints"]
    assert len(wps) == len(pts)
    for wp in wps:
        assert set(wp) == {"location", "name", "distance", "hint", "trips_index", "waypoint_index"}
        assert wp["trips_index"] == 0
    assert sorted(wp["waypoint_index"] for wp in wps) == list(range(len(pts))) and wps[0]["waypoint_index"] == 0
    # leg k leaves the waypoint of index k and arrives at the one of index k + 1 (back to the first at the end)
    at = {wp["waypoint_index"]: wp["location"] for wp in wps}
    for k, leg in enumerate(trip["legs"]):
        assert leg["steps"][0]["maneuver"]["location"] == at[k]
        assert leg["steps"][-1]["maneuver"]["location"] == at[(k + 1) % len(pts)]
    line = trip["geometry"]["coordinates"]
    assert line[0] == at[0] and line[-1] == at[0]
    # the same request without extras: polyline geometry, legs without annotation, steps empty
    plain = client.get(T + path(pts)).json()["trips"][0]
    assert isinstance(plain["geometry"], str) and plain["legs"][0]["steps"] == []
    assert plain["duration"] == trip["duration"]


def test_the_order_is_the_best_on_the_table(client: httpx.Client, points: list[tuple[float, float]]) -> None:
    """Each leg is the table's path, and no order of the points is faster on the table (7 points: brute force)."""
    pts = points[:7]
    body = client.get(T + path(pts)).json()
    table = np.array(client.get("/table/v1/driving/" + path(pts)).json()["durations"])
    order = order_of(body)
    legs = body["trips"][0]["legs"]
    for k, leg in enumerate(legs):
        assert math.isclose(leg["duration"], table[order[k], order[(k + 1) % 7]], abs_tol=0.051)
    assert cost(table, order) <= brute(table) + 0.05 * 7 + 1e-9


@pytest.mark.parametrize(
    ("query", "legs", "first", "last"),
    [
        ({"roundtrip": "false", "source": "first", "destination": "last"}, 5, 0, 5),
        ({"roundtrip": "false", "source": "first"}, 5, 0, None),
        ({"roundtrip": "false", "destination": "last"}, 5, None, 5),
        ({"roundtrip": "true", "destination": "last"}, 6, 5, None),
        ({"source": "first", "destination": "last"}, 6, 0, 5),
    ],
)
def test_fixed_ends(
    client: httpx.Client, points: list[tuple[float, float]], query: dict, legs: int, first: int, last: int | None
) -> None:
    pts = points[:6]
    body = client.get(T + path(pts), params=query).json()
    assert body["code"] == "Ok", body
    assert len(body["trips"][0]["legs"]) == legs
    order = order_of(body)
    if first is not None:
        assert order[0] == first
    if last is not None:
        assert order[-1] == last
    if legs == 5:  # an open trip is the fastest path with those ends on the table
        table = np.array(client.get("/table/v1/driving/" + path(pts)).json()["durations"])
        fixed = (0 if "source" in query else None, 5 if "destination" in query else None)
        assert cost(table, order, cycle=False) <= brute(table, False, *fixed) + 0.05 * 5 + 1e-9


def test_options(client: httpx.Client, points: list[tuple[float, float]]) -> None:
    pts = points[:4]
    assert "waypoints" not in client.get(T + path(pts), params={"skip_waypoints": "true"}).json()
    assert "hint" not in client.get(T + path(pts), params={"generate_hints": "false"}).json()["waypoints"][0]
    assert "geometry" not in client.get(T + path(pts), params={"overview": "false"}).json()["trips"][0]
    by_legs = client.get(T + path(pts), params={"overview": "by_legs"}).json()["trips"][0]
    assert all("geometry" in leg for leg in by_legs["legs"])
    # accepted and without effect, as in OSRM: waypoints=, hints, snapping; exclude of an offered class
    for q in ({"waypoints": "0;2"}, {"snapping": "any"}, {"exclude": "motorway"}, {"radiuses": "50;;;"}):
        body = client.get(T + path(pts), params=q).json()
        assert body["code"] == "Ok" and len(body["trips"][0]["legs"]) == 4, (q, body)
    nodes = client.get(T + path(pts), params={"annotations": "nodes"}).json()["trips"][0]["legs"][0]["annotation"]
    assert set(nodes) == {"nodes"} and len(nodes["nodes"]) >= 2
    # the same point twice: a trip there and back of nothing
    same = client.get(T + path([pts[0], pts[0]])).json()
    assert same["code"] == "Ok" and same["trips"][0]["duration"] == 0 and len(same["trips"][0]["legs"]) == 2


def test_documented_and_counted(client: httpx.Client, points: list[tuple[float, float]]) -> None:
    """The OpenAPI schema documents the service with a "Try it out" example on this graph; /metrics counts it."""
    op = client.get("/openapi.json").json()["paths"]["/trip/v1/{profile}/{coordinates}"]["get"]
    example = next(p["example"] for p in op["parameters"] if p["name"] == "coordinates")
    assert client.get(T + example).json()["code"] == "Ok"
    assert 'endpoint="osrm_trip",status="200"' in client.get("/metrics").text


def test_refusals(client: httpx.Client, points: list[tuple[float, float]]) -> None:
    """osrm-routed 26.10's codes and messages for the same URLs."""
    p3 = path(points[:3])
    many = ";".join([path(points[:1])] * 101)
    for url, code, message in [
        (T + p3 + "?roundtrip=false", "NotImplemented", "This request is not supported"),
        (T + p3 + "?roundtrip=false&source=any&destination=any", "NotImplemented", "This request is not supported"),
        (T + p3 + "?source=first&source=any&roundtrip=false", "NotImplemented", "This request is not supported"),
        (T + path(points[:1]), "InvalidOptions", "Number of coordinates needs to be at least two."),
        (T + many, "TooBig", "Too many trip coordinates"),
        (T + many + ";200,43", "TooBig", "Too many trip coordinates"),  # before the coordinates are looked at
        (T + p3 + ";200,43.7", "InvalidValue", "Invalid coordinate value."),
        (T + p3 + "?radiuses=1;2", "InvalidOptions", "Number of elements in radiuses size 2 does not match "
         "coordinate size 3"),
        (T + p3 + "?waypoints=0;5", "InvalidOptions", None),
        (T + p3 + "?alternatives=true", "InvalidQuery", None),
        (T + p3 + "?continue_straight=true", "InvalidQuery", None),
        (T + p3 + "?source=last", "InvalidQuery", None),
        (T + p3 + "?destination=first", "InvalidQuery", None),
        (T + p3 + "?roundtrip=1", "InvalidQuery", None),
        (T + p3 + "?exclude=boats", "InvalidValue", None),
    ]:  # fmt: skip
        r = client.get(url)
        assert r.status_code == 400, (url[-60:], r.text)
        body = r.json()
        assert set(body) == {"code", "message"} and body["code"] == code, (url[-60:], body)
        if message is not None:
            assert body["message"] == message


def test_unreachable_points_answer_no_trips(client: httpx.Client, bundled_graph: Path) -> None:
    """A point held (tight radius) on a piece of road the others cannot reach or leave for: `NoTrips`, where the
    table answers null for the same pair (OSRM 26: no trip per component, one refusal)."""
    from floor.format.graph import load_graph

    g = load_graph(bundled_graph)
    comp = np.asarray(g.node_component)
    main = np.nonzero(comp == 0)[0]
    a, b = (f"{g.node_lon[v] / 1e7},{g.node_lat[v] / 1e7}" for v in (main[0], main[len(main) // 2]))
    for c in range(1, min(int(comp.max()) + 1, 40)):
        v = int(np.nonzero(comp == c)[0][0])
        pocket = f"{g.node_lon[v] / 1e7},{g.node_lat[v] / 1e7}"
        params = {"radiuses": "unlimited;unlimited;2"}
        tbl = client.get("/table/v1/driving/" + ";".join((a, b, pocket)), params=params).json()
        if tbl["code"] != "Ok" or all(x is not None for row in tbl["durations"] for x in row):
            continue
        r = client.get(T + ";".join((a, b, pocket)), params=params)
        assert r.status_code == 400 and r.json() == {
            "code": "NoTrips",
            "message": "No trip visiting all destinations possible.",
        }
        fixed = client.get(T + ";".join((a, b, pocket)), params={**params, "source": "first", "roundtrip": "false"})
        assert fixed.json()["code"] == "NoTrips"
        return
    pytest.fail("no unreachable pocket found on Monaco")


# --- beside osrm-routed (the session's `osrm_base`, tests/conftest.py) ------------------------------------------


@pytest.mark.slow
def test_trips_beside_osrm(client: httpx.Client, osrm_base: str, bundled_graph: Path) -> None:
    """Points on roads (both engines snap them to the same segment), 4 to 20 of them: our tour is never longer than
    osrm-routed's (its rounding allowed), and on our own table OSRM's order is never faster than ours."""
    from harness.points import road_points

    with httpx.Client(base_url=osrm_base, timeout=60.0) as osrm:
        for seed, n in ((1, 4), (2, 6), (3, 8), (4, 12), (5, 20)):
            pts = path(road_points(bundled_graph, n, seed))
            ours, theirs = client.get(T + pts).json(), osrm.get(T + pts).json()
            assert ours["code"] == theirs["code"] == "Ok", (ours.get("message"), theirs.get("message"))
            assert ours["trips"][0]["duration"] <= theirs["trips"][0]["duration"] + 0.1 * n, (n, seed)
            table = np.array(client.get("/table/v1/driving/" + pts).json()["durations"])
            assert cost(table, order_of(ours)) <= cost(table, order_of(theirs)) + 0.05 * n + 1e-9

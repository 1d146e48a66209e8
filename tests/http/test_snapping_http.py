"""Snapping as users meet it, through a real server on drawn maps: components (OSRM's tiny-component rule) and
the native API's snapping radius.

One map holds every scenario (grid 100 m, testbot: 100 m of primary = 10 s). Most tests serve it with
`min_component_size` 3, so the main network (4 nodes) is big beside tiny ones; with OSRM's default of 1000 every
component of so small a map is tiny, and each point stays on its nearest road (`test_all_tiny_*`).

    a b c d e            road 1: a separate two-node road, far from the rest (tiny component)

    f g h i j            the main network: f-g-h-i-j with h-k, the largest component
        k      r         k -> r is a oneway dead-end spur: r is a one-node component (tiny)

    m n                  the island: a road with no ferry, 200 m from the main network (tiny)
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from floor.format.units import COORD_SCALE
from harness import api_server, asciimap
from preprocessing.pipeline import preprocess

MAP = """
a b c d e



f g h i j
    k      r

m n
"""
WAYS = [
    ("abcde", {"highway": "primary", "name": "Road One"}),
    ("fghij", {"highway": "primary", "name": "Main Street"}),
    ("hk", {"highway": "primary", "name": "Side Street"}),
    ("kr", {"highway": "primary", "name": "Spur", "oneway": "yes"}),
    ("mn", {"highway": "primary", "name": "Island Road"}),
]


@pytest.fixture(scope="module")
def snap_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("snapmap")
    osm = asciimap.write_osm(tmp / "map.osm", MAP, WAYS)
    return preprocess(osm, tmp / "graph", profile="testbot", landmarks=4, force=True, quiet=True)


@pytest.fixture(scope="module")
def base(snap_graph: Path) -> str:
    return api_server.shared(snap_graph, env={"STARROUTE_MIN_COMPONENT_SIZE": "3"})


@pytest.fixture(scope="module")
def all_tiny(snap_graph: Path) -> str:
    """The same map served with OSRM's default `min_component_size` (1000): every component is tiny."""
    return api_server.shared(snap_graph)


@pytest.fixture(scope="module")
def client(base: str):  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=base, timeout=30) as c:
        yield c


COORDS = asciimap.coordinates(MAP)


def at(letter: str, east_m: float = 0.0, north_m: float = 0.0) -> str:
    """`lon,lat` of a map letter, moved by some metres (the map lies on the equator: 1e-7 deg ~ 1.1 cm)."""
    lon, lat = COORDS[letter]
    per_m = COORD_SCALE / (6_371_008.8 * 3.141592653589793 / 180.0)
    return f"{(lon + east_m * per_m) / COORD_SCALE:.7f},{(lat + north_m * per_m) / COORD_SCALE:.7f}"


def osrm_route(client: httpx.Client, *points: str) -> dict:
    return client.get(f"/route/v1/driving/{';'.join(points)}", params={"steps": "true"}).json()


def names(route: dict) -> list[str]:
    return [s["name"] for leg in route["legs"] for s in leg["steps"]]


def test_route_inside_a_separate_road_stays_there(client: httpx.Client) -> None:
    # b -> d on road one: 400 m, 40 s; the old rule answered a 0 m route on the main network
    r = osrm_route(client, at("b", north_m=5), at("d", north_m=5))
    assert r["code"] == "Ok", r
    route = r["routes"][0]
    assert route["distance"] == pytest.approx(400, abs=0.5) and route["duration"] == pytest.approx(40, abs=0.1)
    assert {w["name"] for w in r["waypoints"]} == {"Road One"}
    assert all(w["distance"] == pytest.approx(5, abs=0.1) for w in r["waypoints"])
    native = client.get("/route", params={"from": at("b", north_m=5), "to": at("d", north_m=5)}).json()
    assert native["properties"]["distance_m"] == pytest.approx(400, abs=0.5)
    assert [w["name"] for w in native["properties"]["waypoints"]] == ["Road One", "Road One"]


def test_routes_on_each_road(client: httpx.Client) -> None:
    r = osrm_route(client, at("g", north_m=-3), at("i", north_m=-3))
    assert r["code"] == "Ok" and r["routes"][0]["distance"] == pytest.approx(400, abs=0.5)
    assert {w["name"] for w in r["waypoints"]} == {"Main Street"}


def test_island_point_moves_to_the_main_network(client: httpx.Client) -> None:
    # m is 200 m south of f (the island road is the nearest segment) and the other point is on the main network:
    # OSRM's rule moves the island point to its nearest big-component segment instead of answering NoRoute
    r = osrm_route(client, at("m", north_m=20), at("g"))
    assert r["code"] == "Ok", r
    first = r["waypoints"][0]
    assert first["name"] in ("Main Street", "Side Street") and first["distance"] > 100
    assert r["routes"][0]["distance"] > 0
    # both points on the island: the route stays on the island
    r = osrm_route(client, at("m", east_m=10, north_m=5), at("n", east_m=-10, north_m=5))
    assert r["code"] == "Ok" and {w["name"] for w in r["waypoints"]} == {"Island Road"}
    assert r["routes"][0]["distance"] == pytest.approx(180, abs=0.5)


def test_tiny_component_beside_the_big_one(client: httpx.Client) -> None:
    # a point 5 m from the dead-end spur k -> r: alone with another spur point it stays there ...
    on_spur = at("r", east_m=-300, north_m=5)
    r = osrm_route(client, at("r", east_m=-600, north_m=5), on_spur)
    assert r["code"] == "Ok" and {w["name"] for w in r["waypoints"]} == {"Spur"}
    # ... with a main-network point it moves to the big component (the spur leads nowhere back)
    r = osrm_route(client, on_spur, at("f"))
    assert r["code"] == "Ok", r
    assert r["waypoints"][0]["name"] != "Spur"


def test_all_tiny_point_on_a_dead_end_is_routed_to(all_tiny: str) -> None:
    """OSRM has no exception for the largest component: on a map whose components are all tiny, a destination on
    the one-way dead-end spur stays there and the route reaches it (f -> h 400 m, h -> k 100 m, k -> point 400 m);
    the old rule moved it to Main Street (95 m away) and answered a route that never reached it."""
    with httpx.Client(base_url=all_tiny, timeout=30) as c:
        r = osrm_route(c, at("f"), at("r", east_m=-300, north_m=5))
        assert r["code"] == "Ok", r
        assert [w["name"] for w in r["waypoints"]] == ["Main Street", "Spur"]
        route = r["routes"][0]
        assert route["distance"] == pytest.approx(899.5, abs=0.5) and route["duration"] == pytest.approx(90, abs=0.1)
        native = c.get("/route", params={"from": at("f"), "to": at("r", east_m=-300, north_m=5)}).json()
        assert native["properties"]["distance_m"] == pytest.approx(899.5, abs=0.5)
        # the island stays an island: no route leaves it
        assert osrm_route(c, at("m", north_m=20), at("g"))["code"] == "NoRoute"


def test_table_uses_the_same_rule(client: httpx.Client) -> None:
    t = client.get(f"/table/v1/driving/{at('b', north_m=5)};{at('d', north_m=5)}").json()
    assert t["code"] == "Ok" and t["durations"][0][1] == pytest.approx(40, abs=0.1)
    native = client.post(
        "/table",
        json={
            "sources": [[*map(float, at("b", north_m=5).split(","))]],
            "destinations": [[*map(float, at("d", north_m=5).split(","))]],
        },
    ).json()
    assert native["durations_s"][0][0] == pytest.approx(40, abs=0.1)


def test_native_radius_refuses_far_points(client: httpx.Client) -> None:
    far = at("j", east_m=5000)
    r = client.get("/route", params={"from": at("g"), "to": far})
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "NoSegment"
    assert "coordinate 1" in body["message"] and "within 1000 m" in body["message"]
    assert "the nearest is 4707 m away" in body["message"], body  # r, 4.7 km west (OSRM's WGS84 ruler)
    # a radius of the request's own widens it
    ok = client.post(
        "/route",
        json={
            "coordinates": [[*map(float, at("g").split(","))], [*map(float, far.split(","))]],
            "radiuses": [None, 6000],
        },
    )
    assert ok.status_code == 200 and ok.json()["properties"]["waypoints"][1]["distance_m"] > 4000
    # the OSRM API keeps OSRM's semantics: unlimited unless `radiuses`
    assert osrm_route(client, at("g"), far)["code"] == "Ok"
    assert client.get(f"/route/v1/driving/{at('g')};{far}", params={"radiuses": "10;10"}).json()["code"] == "NoSegment"


def test_native_nearest_uses_the_radius(client: httpx.Client) -> None:
    assert client.get("/nearest", params={"point": at("j", east_m=5000)}).json()["code"] == "NoSegment"
    fc = client.get("/nearest", params={"point": at("j", east_m=5000), "radius_m": 6000}).json()
    assert fc["features"][0]["properties"]["distance_m"] > 4000


def test_snapping_map_is_what_the_docstring_says(tmp_path: Path) -> None:
    built = asciimap.build(tmp_path, MAP, WAYS)
    comp = built.graph.node_component
    main = {int(comp[v]) for ch in "fhjk" for v in built.nodes(ch)}
    assert main == {0}
    assert {int(comp[v]) for v in built.nodes("r")} != {0}
    assert {int(comp[v]) for ch in "ae" for v in built.nodes(ch)} != {0}

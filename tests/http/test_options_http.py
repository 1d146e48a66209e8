"""Per-request options through a real server on a drawn map (car profile): `exclude` on route, table and nearest
(OSRM and native), traces, weighted A*, and their bad values.

    a---------b        Autoroute (motorway, a -> b only: motorways are oneway)
    |         |
    c---------d        Toll Road (primary, toll=yes)
    |         |
    e---------f        the ferry (route=ferry, 1 minute)
    |         |
    g---------h        Back Street (residential)

The sides a-c-e-g and b-d-f-h are West and East Road (secondary). Horizontal links are 1 km, vertical 200 m.
"""

from __future__ import annotations

import httpx
import pytest

from floor.format.units import COORD_SCALE
from harness import api_server, asciimap
from preprocessing.pipeline import preprocess

MAP = """
a---------b

c---------d

e---------f

g---------h
"""
WAYS = [
    ("ab", {"highway": "motorway", "name": "Autoroute"}),
    ("cd", {"highway": "primary", "name": "Toll Road", "toll": "yes"}),
    ("ef", {"route": "ferry", "name": "the ferry", "duration": "00:01"}),
    ("gh", {"highway": "residential", "name": "Back Street"}),
    ("aceg", {"highway": "secondary", "name": "West Road"}),
    ("bdfh", {"highway": "secondary", "name": "East Road"}),
]
ALGORITHMS = ("ch", "alt", "bidirectional-astar", "astar", "bidirectional-dijkstra", "dijkstra")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("optionsmap")
    osm = asciimap.write_osm(tmp / "map.osm", MAP, WAYS)
    graph = preprocess(osm, tmp / "graph", profile="car", landmarks=4, force=True, quiet=True)
    with httpx.Client(base_url=api_server.shared(graph), timeout=30) as c:
        yield c


COORDS = asciimap.coordinates(MAP)


def at(letter: str, east_m: float = 0.0, south_m: float = 0.0) -> str:
    lon, lat = COORDS[letter]
    per_m = COORD_SCALE / (6_371_008.8 * 3.141592653589793 / 180.0)
    return f"{(lon + east_m * per_m) / COORD_SCALE:.7f},{(lat - south_m * per_m) / COORD_SCALE:.7f}"


def names(client: httpx.Client, a: str, b: str, **params: str) -> tuple[set[str], dict]:
    r = client.get(f"/route/v1/driving/{a};{b}", params={"steps": "true", **params}).json()
    assert r["code"] == "Ok", r
    return {s["name"] for leg in r["routes"][0]["legs"] for s in leg["steps"]}, r


def test_exclude_motorway_toll_ferry_osrm(client: httpx.Client) -> None:
    start, end = at("a", south_m=10), at("b", south_m=10)  # on West / East Road just below the motorway
    used, plain = names(client, start, end)
    assert "Autoroute" in used
    used, r = names(client, start, end, exclude="motorway")
    assert "Autoroute" not in used and "Toll Road" in used
    assert r["routes"][0]["duration"] > plain["routes"][0]["duration"]
    used, _ = names(client, at("c", south_m=10), at("d", south_m=10), exclude="toll")
    assert "Toll Road" not in used
    used, _ = names(client, at("e", south_m=10), at("f", south_m=10))
    assert "the ferry" in used
    used, _ = names(client, at("e", south_m=10), at("f", south_m=10), exclude="ferry")
    assert "the ferry" not in used


def test_exclude_every_algorithm_native(client: httpx.Client) -> None:
    start, end = at("a", south_m=10), at("b", south_m=10)
    durations = set()
    for alg in ALGORITHMS:
        f = client.get("/route", params={"from": start, "to": end, "algorithm": alg, "exclude": "motorway"}).json()
        assert f["properties"]["exclude"] == ["motorway"], f
        durations.add(f["properties"]["duration_s"])
    assert len(durations) == 1, durations
    body = {"coordinates": [[*map(float, start.split(","))], [*map(float, end.split(","))]], "exclude": ["motorway"]}
    assert client.post("/route", json=body).json()["properties"]["duration_s"] in durations


def test_exclude_in_tables_and_nearest(client: httpx.Client) -> None:
    start, end = at("a", south_m=10), at("b", south_m=10)
    plain = client.get(f"/table/v1/driving/{start};{end}").json()["durations"][0][1]
    route = names(client, start, end, exclude="motorway")[1]["routes"][0]["duration"]
    excl = client.get(f"/table/v1/driving/{start};{end}", params={"exclude": "motorway"}).json()["durations"][0][1]
    assert excl > plain and excl == pytest.approx(route, abs=0.11)
    body = {"sources": [[*map(float, start.split(","))]], "destinations": [[*map(float, end.split(","))]]}
    native = client.post("/table", json={**body, "exclude": ["motorway"]}).json()
    assert native["durations_s"][0][0] == pytest.approx(excl, abs=0.11)
    # nearest: a point 5 m north of the motorway snaps to it, unless motorways are excluded
    near = client.get(f"/nearest/v1/driving/{at('a', east_m=500, south_m=-5)}").json()["waypoints"][0]
    assert near["name"] == "Autoroute"
    near = client.get(f"/nearest/v1/driving/{at('a', east_m=500, south_m=-5)}", params={"exclude": "motorway"})
    assert near.json()["waypoints"][0]["name"] != "Autoroute"
    fc = client.get("/nearest", params={"point": at("a", east_m=500, south_m=-5), "exclude": "motorway"}).json()
    assert fc["features"][0]["properties"]["name"] != "Autoroute"


def test_exclude_refusals(client: httpx.Client) -> None:
    start, end = at("a", south_m=10), at("b", south_m=10)
    for value in ("motorway,toll", "hovercraft", "motorway,ferry"):
        r = client.get(f"/route/v1/driving/{start};{end}", params={"exclude": value})
        assert r.status_code == 400 and r.json()["code"] == "InvalidValue", (value, r.text)
    r = client.get("/route", params={"from": start, "to": end, "exclude": "boats"})
    assert r.status_code == 400 and "unknown class 'boats'" in r.json()["message"]


def test_traces_for_every_algorithm(client: httpx.Client) -> None:
    start, end = at("g", south_m=-10), at("b", south_m=10)
    for alg in ALGORITHMS:
        f = client.get("/route", params={"from": start, "to": end, "algorithm": alg, "trace": "true"}).json()
        trace = f["properties"]["trace"]
        assert len(trace) == 1, alg  # one leg
        leg = trace[0]
        assert leg["settled"] and not leg["truncated"], alg
        assert all(len(p) == 3 and p[2] in (0, 1) for p in leg["settled"]), alg
        assert leg["meeting"] is not None, alg
        assert len(leg["settled"]) == f["properties"]["stats"]["settled"], alg  # CH: stalled nodes in both
    f = client.get("/route", params={"from": start, "to": end}).json()
    assert "trace" not in f["properties"]


def test_epsilon(client: httpx.Client) -> None:
    start, end = at("g", south_m=-10), at("b", south_m=10)
    exact = client.get("/route", params={"from": start, "to": end, "algorithm": "astar"}).json()["properties"]
    assert exact["epsilon"] == 1.0 and exact["bound"] == "optimal"
    for alg in ("astar", "bidirectional-astar"):
        p = client.get("/route", params={"from": start, "to": end, "algorithm": alg, "epsilon": 1.5}).json()
        p = p["properties"]
        assert p["epsilon"] == 1.5 and p["bound"] == "<= 1.5 x optimal"
        assert exact["duration_s"] <= p["duration_s"] <= 1.5 * exact["duration_s"] + 0.1
    for bad in ({"algorithm": "dijkstra", "epsilon": 2}, {"algorithm": "astar", "epsilon": 0.5}):
        r = client.get("/route", params={"from": start, "to": end, **bad})
        assert r.status_code == 400, (bad, r.text)

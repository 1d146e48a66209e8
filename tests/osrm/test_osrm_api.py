"""The OSRM v5 API: URL grammar and polyline units, steps from pieces, and a real server checked field by field
against OSRM's documentation (../shared/reference/osrm-http-api.md), with routingpy's OSRM client on top."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.api.osrm import dispatch, grammar, polyline
from app.api.osrm.steps import build_steps, summary
from app.engine.errors import EngineError
from app.engine.guidance import MODIFIER_NAMES, Maneuver, RouteStep, StepIntersection
from app.engine.guidance.steps import WAYPOINT_ARRIVE, WAYPOINT_DEPART
from app.engine.types import Leg, Phantom, SearchStats
from floor.intersections.intersection import ENTER_ROTARY, LEFT, NO_TURN, RIGHT, UTURN, turn_direction
from harness import api_server

# --- URL grammar (no server) ---------------------------------------------------------------------------------------
R = "/route/v1/driving/"
OK_2 = "7.4197,43.7311;7.4246,43.7384"

PARSE_ERRORS = [
    ("/", "", "InvalidUrl"),
    ("/route", "", "InvalidUrl"),
    ("/route/v1", "", "InvalidUrl"),
    ("/route/v1/driving", "", "InvalidUrl"),
    ("/route/v1/driving/", "", "InvalidUrl"),
    ("/route/vx/driving/" + OK_2, "", "InvalidUrl"),
    ("/route/v1/dr!ving/" + OK_2, "", "InvalidUrl"),
    ("/route/v1/driving/7.4 ,43.7;7.42,43.73", "", "InvalidUrl"),
    ("/foo/v1/driving/" + OK_2, "", "InvalidService"),
    ("/route/v2/driving/" + OK_2, "", "InvalidVersion"),
    ("/match/v1/driving/" + OK_2, "alternatives=true", "InvalidQuery"),  # a route option match does not take
    ("/trip/v1/driving/" + OK_2, "alternatives=true", "InvalidQuery"),  # a route option trip does not take
    ("/tile/v1/driving/tile(1,2,3).mvt", "", "InvalidOptions"),  # zoom below 12, as osrm-routed
    ("/tile/v1/driving/" + OK_2, "", "InvalidQuery"),
    (R + "abc,43.7;7.42,43.73", "", "InvalidQuery"),
    (R + "nan,43.7;7.42,43.73", "", "InvalidQuery"),
    (R + "inf,43.7;7.42,43.73", "", "InvalidQuery"),
    (R + "1e400,43.7;7.42,43.73", "", "InvalidQuery"),
    (R + "7.4,43.7;;7.42,43.73", "", "InvalidQuery"),
    (R + OK_2 + ";", "", "InvalidQuery"),
    (R + OK_2 + ".xml", "", "InvalidQuery"),
    (R + OK_2 + ".flatbuffers", "", "NotImplemented"),
    (R + "polyline(@@@", "", "InvalidQuery"),
    (R + "polyline(_p~iF)", "", "InvalidQuery"),
    (R + OK_2, "steps=yes", "InvalidQuery"),
    (R + OK_2, "foo=1", "InvalidQuery"),
    (R + OK_2, "steps", "InvalidQuery"),
    (R + OK_2, "&", "InvalidQuery"),
    (R + OK_2, "geometries=kml", "InvalidQuery"),
    (R + OK_2, "overview=some", "InvalidQuery"),
    (R + OK_2, "annotations=speed,colour", "InvalidQuery"),
    (R + OK_2, "radiuses=a;5", "InvalidQuery"),
    (R + OK_2, "number=3", "InvalidQuery"),
    (R + OK_2, "alternatives=-1", "InvalidQuery"),
    ("/nearest/v1/driving/7.4,43.7", "number=x", "InvalidQuery"),
    ("/table/v1/driving/" + OK_2, "annotations=speed", "InvalidQuery"),
    ("/table/v1/driving/" + OK_2, "sources=a", "InvalidQuery"),
]


@pytest.mark.parametrize(("path", "query", "code"), PARSE_ERRORS)
def test_parse_errors(path: str, query: str, code: str) -> None:
    with pytest.raises(EngineError) as info:
        grammar.parse(path, query)
    assert info.value.code == code, info.value.message


def test_parse_positions_match_osrm() -> None:
    """The positions osrm-routed 26.10 reports for the same URLs."""
    for path, query, pos in [
        (R + "abc,43.7;7.42,43.73", "", 18),
        (R + "7.4,43.7;;7.42,43.73", "", 26),
        (R + "7.4,43.7;7.42,43.73", "steps=yes", 44),
        (R + "7.4,43.7;7.42,43.73", "foo=1", 38),
        (R + "7.4,43.7;7.42,43.73.xml", "", 37),
        ("/trip/v1/driving/7.4197,43.7311;7.4246,43.7384", "alternatives=true", 47),
        ("/trip/v1/driving/7.4197,43.7311;7.4246,43.7384", "source=last", 54),
        (R + "7.4197,43.7311;7.4246,43.7384", "steps=true&foo=1", 58),  # an unknown option after "&": the "&"
        (R + "7.4197,43.7311;7.4246,43.7384", "steps=true&", 58),
        (R + "7.4197,43.7311;7.4246,43.7384", "steps=true&overview=xx", 68),
        (R + "7.4197,43.7311;7.4246,43.7384", "&", 48),
    ]:
        with pytest.raises(EngineError) as info:
            grammar.parse(path, query)
        assert info.value.message == f"Query string malformed close to position {pos}", (path, query)


def test_parse_good() -> None:
    req = grammar.parse(
        R + OK_2 + ".json",
        "steps=true&alternatives=2&geometries=geojson&overview=false&annotations=duration,distance"
        "&radiuses=unlimited;5.5&bearings=10,20;&continue_straight=default&hints=;&approaches=curb;",
    )
    assert req.service == "route" and req.profile == "driving"
    assert req.coordinates == [(7.4197, 43.7311), (7.4246, 43.7384)]
    o = req.options
    assert isinstance(o, grammar.OsrmRouteOptions)
    assert o.steps is True and o.alternatives == 2 and o.geometries == "geojson"
    assert o.overview == "false" and o.annotations == ("duration", "distance")
    assert o.radiuses == (None, 5.5) and o.bearings == ((10, 20), None)
    assert o.continue_straight is None and o.hints == (None, None) and o.approaches == ("curb", None)
    assert o.exclude == () and o.generate_hints is True and o.waypoints is None  # the defaults, written once
    assert grammar.parse(R + "polyline(_p~iF~ps|U_ulLnnqC)").coordinates == [(-120.2, 38.5), (-120.95, 40.7)]
    assert grammar.parse(R + "polyline6(_izlhA~rlgdF_{geC~ywl@)").coordinates == [(-120.2, 38.5), (-120.95, 40.7)]
    t = grammar.parse("/table/v1/car/" + OK_2 + ";7.42,43.73", "sources=0;2&destinations=all&annotations=distance")
    assert t.options.sources == (0, 2) and t.options.destinations is None
    assert t.options.annotations == ("distance",) and t.options.scale_factor == 1.0
    assert grammar.parse("/nearest/v1/foot/7.4,43.7.json", "number=3").options.number == 3
    assert grammar.parse("/table/v1/car/" + OK_2).options == grammar.OsrmTableOptions()  # nothing given: defaults
    assert grammar.parse(R + "-7.4,-43.7;.5,1e1").coordinates == [(-7.4, -43.7), (0.5, 10.0)]


# --- polyline --------------------------------------------------------------------------------------------------------
def test_polyline_google_example() -> None:
    pts = np.array([[-120.2, 38.5], [-120.95, 40.7], [-126.453, 43.252]])
    assert polyline.encode(pts) == "_p~iF~ps|U_ulLnnqC_mqNvxq`@"
    assert np.allclose(polyline.decode("_p~iF~ps|U_ulLnnqC_mqNvxq`@"), pts)
    assert polyline.encode(np.zeros((0, 2))) == ""
    assert polyline.decode("").shape == (0, 2)


@pytest.mark.parametrize("precision", [5, 6])
def test_polyline_roundtrip(precision: int) -> None:
    rng = np.random.default_rng(7)
    pts = np.column_stack([rng.uniform(-180, 180, 300), rng.uniform(-90, 90, 300)])
    pts[::7] = pts[::7][::-1]  # big jumps both ways
    back = polyline.decode(polyline.encode(pts, precision), precision)
    assert np.allclose(back, np.round(pts, precision), atol=0.6 * 10.0**-precision)


@pytest.mark.parametrize("bad", ["!", "_p~iF~ps|U_", "_p~iF", "~" * 20])
def test_polyline_decode_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        polyline.decode(bad)


# --- steps as JSON (the guidance steps themselves are tested through a server: tests/osrm/test_guidance_http.py)
class FakeRoads:
    """A road view that answers fixed guidance steps, whatever the leg."""

    driving_side = "right"

    def __init__(self, steps: list[RouteStep]) -> None:
        self._steps = steps

    def steps(self, leg: Leg) -> list[RouteStep]:
        return self._steps


def _leg(coords: list[tuple[float, float]]) -> Leg:
    c = np.array(coords, dtype=np.float64)
    p = len(coords) - 1
    ph = Phantom(*(0.0,) * 5, *(0,) * 13)  # type: ignore[arg-type]
    return Leg(
        weight=10 * p,
        duration_s=float(p),
        distance_m=100.0 * p,
        coordinates=c,
        piece_arc=np.arange(p, dtype=np.int32),
        piece_distance_m=np.full(p, 100.0),
        piece_duration_s=np.full(p, 1.0),
        piece_coord_end=np.arange(1, p + 1, dtype=np.int64),
        stats=SearchStats("ch"),
        source=ph,
        target=ph,
        piece_weight=np.full(p, 1.0),
    )


def _step(kind: int, modifier: int, begin: int, end: int, inter: StepIntersection, **kw: str | int) -> RouteStep:
    m = Maneuver(inter.location, 10, 100, kind, modifier, int(kw.pop("waypoint", 0)), int(kw.pop("exit", 0)))
    sign = {k: str(kw.get(k, "")) for k in ("name", "ref", "pronunciation", "destinations", "exits")}
    return RouteStep(
        0, 1, False, sign["name"], sign["ref"], sign["pronunciation"], sign["destinations"], sign["exits"],
        12.34, 100.0, 12.34, "driving", m, begin, end, [inter], rotary_name=str(kw.get("rotary_name", "")),
        length=123.456,
    )  # fmt: skip


def test_step_json() -> None:
    d = 0.001
    leg = _leg([(0, 0), (0, d), (d, d), (d, 2 * d)])
    at = StepIntersection((0.0, 0.0012345674), [0, 90, 180], [True, False, True], 2, 0, classes=["motorway"])
    lanes = StepIntersection((0.0, d), [0, 90, 180, 270], [True] * 4, 2, 1, lanes=(1, 0), lane_desc=(2, 8, 64 | 128))
    steps = [
        _step(NO_TURN, UTURN, 0, 2, at, waypoint=WAYPOINT_DEPART, name="A", ref="A 1"),
        _step(ENTER_ROTARY, RIGHT, 1, 3, lanes, exit=2, name="B", rotary_name="Star", destinations="X: Y"),
        _step(NO_TURN, LEFT, 3, 4, StepIntersection((d, 2 * d), [180], [True], 0, None), waypoint=WAYPOINT_ARRIVE),
    ]
    out = build_steps(leg, FakeRoads(steps), lambda c: c.tolist())
    dep, rot, arr = out
    # depart: no modifier (the waypoint is on the road), OSRM's rounding, only non-empty signage
    assert dep["maneuver"] == {
        "location": [0.0, 0.001235],
        "bearing_before": 10,
        "bearing_after": 100,
        "type": "depart",
    }
    assert dep["geometry"] == [[0, 0], [0, d]] and dep["name"] == "A" and dep["ref"] == "A 1"
    assert "destinations" not in dep and "rotary_name" not in dep and "exit" not in dep["maneuver"]
    assert (dep["distance"], dep["duration"], dep["weight"]) == (123.5, 12.3, 12.3)
    assert dep["intersections"] == [
        {"location": [0.0, 0.001235], "bearings": [0, 90, 180], "entry": [True, False, True], "in": 2, "out": 0,
         "classes": ["motorway"]}
    ]  # fmt: skip
    # a rotary: type, modifier, exit, rotary_name; lanes listed left to right, lane 0 is the rightmost
    assert rot["maneuver"]["type"] == "rotary" and rot["maneuver"]["modifier"] == "right"
    assert rot["maneuver"]["exit"] == 2 and rot["rotary_name"] == "Star" and rot["destinations"] == "X: Y"
    assert rot["geometry"] == [[0, d], [d, d]]
    assert rot["intersections"][0]["lanes"] == [
        {"indications": ["straight"], "valid": False},
        {"indications": ["left"], "valid": False},
        {"indications": ["right", "sharp right"], "valid": True},
    ]
    # arrive: a modifier only because the waypoint lies beside the road; a one-point geometry is doubled
    assert arr["maneuver"]["type"] == "arrive" and arr["maneuver"]["modifier"] == "left"
    assert arr["geometry"] == [[d, 2 * d], [d, 2 * d]]
    assert summary(out) == "A, B"


def test_summary_two_longest_names_in_route_order() -> None:
    steps = [
        {"name": "A", "duration": 5.0},
        {"name": "", "ref": "N1", "duration": 30.0},
        {"name": "B", "duration": 1.0},
        {"name": "C", "duration": 20.0},
        {"name": "", "duration": 99.0},
    ]
    assert summary(steps) == "N1, C"
    assert summary([{"name": "", "duration": 1.0}]) == ""


def test_modifier_table() -> None:
    # OSRM's getTurnDirection: 180 is straight on, smaller angles turn right
    angles = (180, 150, 210, 90, 270, 30, 330, 0, 160, 200, 140, 220)
    assert [MODIFIER_NAMES[turn_direction(a)] for a in angles] == [
        "straight",
        "slight right",
        "slight left",
        "right",
        "left",
        "sharp right",
        "sharp left",
        "uturn",
        "straight",
        "straight",
        "slight right",
        "slight left",
    ]


# --- a real server ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def monaco(bundled_graph: Path) -> Path:
    return bundled_graph


@pytest.fixture(scope="module")
def base(monaco: Path) -> str:
    return api_server.shared(monaco)


@pytest.fixture(scope="module")
def client(base: str):
    with httpx.Client(base_url=base, timeout=30.0) as c:
        yield c


@pytest.fixture(scope="module")
def engine(monaco: Path):
    from app.engine.data import load
    from app.engine.router import Router

    return Router(load(monaco))


def random_points(graph, n: int, seed: int) -> list[tuple[float, float]]:
    """Seeded points near graph nodes of the largest component (so they snap onto the main network)."""
    rng = random.Random(seed)
    main = np.nonzero(np.asarray(graph.node_component) == 0)[0]
    out = []
    for _ in range(n):
        v = int(main[rng.randrange(main.shape[0])])
        lon = float(graph.node_lon[v]) / 1e7 + rng.uniform(-3e-4, 3e-4)
        lat = float(graph.node_lat[v]) / 1e7 + rng.uniform(-3e-4, 3e-4)
        out.append((round(lon, 6), round(lat, 6)))  # as sent in URLs
    return out


def coords_path(points: list[tuple[float, float]]) -> str:
    return ";".join(f"{lon!r},{lat!r}" for lon, lat in points)


def _check_waypoint(wp: dict, nearest: bool = False) -> None:
    keys = {"hint", "distance", "name", "location"} | ({"nodes"} if nearest else set())
    assert set(wp) == keys
    assert isinstance(wp["name"], str) and isinstance(wp["hint"], str) and wp["distance"] >= 0
    lon, lat = wp["location"]
    assert -180 <= lon <= 180 and -90 <= lat <= 90
    assert round(lon, 6) == lon and round(lat, 6) == lat
    if nearest:
        assert len(wp["nodes"]) == 2 and all(isinstance(x, int) for x in wp["nodes"])


OSRM_TYPES = {
    "depart",
    "arrive",
    "turn",
    "new name",
    "continue",
    "merge",
    "on ramp",
    "off ramp",
    "fork",
    "end of road",
    "notification",
    "roundabout",
    "exit roundabout",
    "rotary",
    "exit rotary",
    "roundabout turn",
}


def _check_step(step: dict) -> None:
    for key in ("distance", "duration", "weight", "geometry", "name", "mode", "maneuver", "intersections"):
        assert key in step, key
    assert step["mode"] in ("driving", "ferry") and step["driving_side"] in ("left", "right")
    m = step["maneuver"]
    assert len(m["location"]) == 2 and 0 <= m["bearing_before"] <= 359 and 0 <= m["bearing_after"] <= 359
    assert m["type"] in OSRM_TYPES
    if "modifier" in m:
        assert m["modifier"] in {
            "uturn",
            "sharp right",
            "right",
            "slight right",
            "straight",
            "slight left",
            "left",
            "sharp left",
        }
    if m["type"] == "roundabout" and "exit" in m:
        assert isinstance(m["exit"], int) and m["exit"] >= 1
    for inter in step["intersections"]:
        assert len(inter["bearings"]) == len(inter["entry"]) >= 1
        assert all(0 <= b <= 359 for b in inter["bearings"])
        for k in ("in", "out"):
            if k in inter:
                assert 0 <= inter[k] < len(inter["bearings"])


def test_route_shape(client: httpx.Client) -> None:
    r = client.get(R + OK_2)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    d = r.json()
    assert set(d) == {"code", "routes", "waypoints"} and d["code"] == "Ok"
    assert len(d["routes"]) == 1 and len(d["waypoints"]) == 2
    route = d["routes"][0]
    assert set(route) == {"distance", "duration", "weight", "weight_name", "geometry", "legs"}
    assert isinstance(route["geometry"], str)  # polyline by default
    # the car profile's weight is OSRM's routability: the duration slowed by rate penalties, never below it
    assert route["weight_name"] == "routability" and route["weight"] >= route["duration"]
    (leg,) = route["legs"]
    assert set(leg) == {"distance", "duration", "weight", "summary", "steps"}
    assert leg["steps"] == [] and leg["summary"] == ""
    assert leg["distance"] == route["distance"] and leg["duration"] == route["duration"]
    for wp in d["waypoints"]:
        _check_waypoint(wp)
    # the simplified overview starts and ends at the snapped waypoints
    line = polyline.decode(route["geometry"])
    assert np.allclose(line[0], d["waypoints"][0]["location"], atol=1e-5)
    assert np.allclose(line[-1], d["waypoints"][1]["location"], atol=1e-5)


def test_route_geometries_and_overview(client: httpx.Client) -> None:
    full = client.get(R + OK_2, params={"overview": "full", "geometries": "geojson"}).json()["routes"][0]
    g = full["geometry"]
    assert g["type"] == "LineString" and len(g["coordinates"]) >= 2
    line = np.array(g["coordinates"])
    p5 = client.get(R + OK_2, params={"overview": "full"}).json()["routes"][0]["geometry"]
    p6 = client.get(R + OK_2, params={"overview": "full", "geometries": "polyline6"}).json()["routes"][0]["geometry"]
    assert np.allclose(polyline.decode(p5, 5), line, atol=1e-5)
    assert np.allclose(polyline.decode(p6, 6), line, atol=1e-6)
    simp = client.get(R + OK_2, params={"geometries": "geojson"}).json()["routes"][0]["geometry"]["coordinates"]
    assert 2 <= len(simp) <= len(line)
    assert all(any(np.allclose(p, q) for q in line) for p in simp)
    none = client.get(R + OK_2, params={"overview": "false"}).json()["routes"][0]
    assert "geometry" not in none and none["distance"] == full["distance"]
    legs = client.get(R + OK_2, params={"overview": "by_legs"}).json()["routes"][0]["legs"]
    assert isinstance(legs[0]["geometry"], str)


def test_route_steps(client: httpx.Client) -> None:
    d = client.get(R + OK_2, params={"steps": "true", "geometries": "geojson", "overview": "full"}).json()
    leg = d["routes"][0]["legs"][0]
    steps = leg["steps"]
    assert steps[0]["maneuver"]["type"] == "depart" and steps[-1]["maneuver"]["type"] == "arrive"
    assert len(steps) >= 3
    for s in steps:
        _check_step(s)
    assert math.isclose(sum(s["distance"] for s in steps), leg["distance"], abs_tol=0.1 * len(steps))
    assert math.isclose(sum(s["duration"] for s in steps), leg["duration"], abs_tol=0.1 * len(steps))
    assert leg["summary"] and all(name in {s["name"] for s in steps} for name in leg["summary"].split(", "))
    # consecutive steps are joined: each starts where the previous ended
    for a, b in zip(steps, steps[1:], strict=False):
        assert a["geometry"]["coordinates"][-1] == b["geometry"]["coordinates"][0]
        assert b["maneuver"]["location"] == b["geometry"]["coordinates"][0]
    # a `new name` announces a change of name or signage (OSRM's requiresNameAnnounced)
    sign = [(s["name"], s.get("ref", ""), s.get("destinations", ""), s.get("exits", "")) for s in steps]
    for a, b, s in zip(sign, sign[1:], steps[1:], strict=False):
        assert a != b or s["maneuver"]["type"] != "new name"
    # no phantom steps: only the arrive step is empty
    assert all(s["distance"] > 0 for s in steps[:-1]) and steps[-1]["distance"] == 0


def test_route_annotations(client: httpx.Client) -> None:
    d = client.get(R + OK_2, params={"annotations": "true", "overview": "full", "geometries": "geojson"}).json()
    route = d["routes"][0]
    ann = route["legs"][0]["annotation"]
    assert set(ann) == {"distance", "duration", "speed", "weight", "datasources", "metadata", "nodes"}  # as osrm-routed
    k = len(route["geometry"]["coordinates"]) - 1
    assert all(len(ann[f]) == k for f in ("distance", "duration", "speed", "weight", "datasources"))
    assert math.isclose(sum(ann["distance"]), route["distance"], abs_tol=0.1)
    # each segment's own time: the turns and node obstacles are left out, as osrm-routed's (tests/test_osrm_oracle)
    assert route["duration"] * 0.8 <= sum(ann["duration"]) <= route["duration"] + 0.05 * k
    assert ann["metadata"] == {"datasource_names": ["lua profile"]}
    only = client.get(R + OK_2, params={"annotations": "duration,speed"}).json()["routes"][0]["legs"][0]["annotation"]
    assert set(only) == {"duration", "speed"}


def test_route_via_and_waypoints(client: httpx.Client) -> None:
    three = OK_2 + ";7.4200,43.7350"
    d = client.get(R + three).json()
    assert len(d["routes"][0]["legs"]) == 2 and len(d["waypoints"]) == 3
    route = d["routes"][0]
    assert math.isclose(sum(leg["distance"] for leg in route["legs"]), route["distance"], abs_tol=0.2)
    w = client.get(R + three, params={"waypoints": "0;2", "steps": "true"}).json()
    assert len(w["routes"][0]["legs"]) == 1 and len(w["waypoints"]) == 2
    assert math.isclose(w["routes"][0]["distance"], route["distance"], abs_tol=0.2)
    steps = w["routes"][0]["legs"][0]["steps"]
    assert [s["maneuver"]["type"] for s in steps].count("arrive") == 1
    skip = client.get(R + OK_2, params={"skip_waypoints": "true", "generate_hints": "false"}).json()
    assert "waypoints" not in skip
    nohint = client.get(R + OK_2, params={"generate_hints": "false"}).json()
    assert all("hint" not in wp for wp in nohint["waypoints"])
    alt = client.get(R + OK_2, params={"alternatives": "true", "continue_straight": "false"}).json()
    assert alt["code"] == "Ok" and len(alt["routes"]) >= 1
    pl = polyline.encode(np.array([[7.4197, 43.7311], [7.4246, 43.7384]]))
    assert client.get(R + f"polyline({pl})").json()["routes"][0]["distance"] == route["legs"][0]["distance"]


def test_route_annotation_nodes(client: httpx.Client, engine) -> None:
    """OSRM's `annotations=nodes`: the OSM node id behind every coordinate (one more than the segments), the snapped
    ends standing for their segment's start and end nodes; a node that is a graph junction is a real OSM node."""
    d = client.get(R + OK_2 + ";7.4200,43.7350", params={"annotations": "true", "overview": "full",
                                                         "geometries": "geojson"}).json()  # fmt: skip
    route = d["routes"][0]
    known = set(np.asarray(engine.graph.geom_osm_id).tolist())
    total = 0
    for leg in route["legs"]:
        ann = leg["annotation"]
        nodes = ann["nodes"]
        assert len(nodes) == len(ann["distance"]) + 1
        assert all(isinstance(x, int) and x > 0 and x in known for x in nodes)
        assert all(a != b for a, b in zip(nodes, nodes[1:], strict=False))  # a node per coordinate, no repeat
        total += len(ann["distance"])
    assert total + 1 == len(route["geometry"]["coordinates"])
    merged = client.get(R + OK_2 + ";7.4200,43.7350", params={"annotations": "nodes", "waypoints": "0;2"}).json()
    nodes = merged["routes"][0]["legs"][0]["annotation"]["nodes"]
    assert nodes == route["legs"][0]["annotation"]["nodes"] + route["legs"][1]["annotation"]["nodes"][1:]


def test_nearest_several_coordinates(client: httpx.Client) -> None:
    """osrm-routed 26 answers one list of waypoints per coordinate when given several."""
    d = client.get("/nearest/v1/driving/" + OK_2, params={"number": 2}).json()
    assert d["code"] == "Ok" and len(d["waypoints"]) == 2
    assert all(len(w) == 2 and {"nodes", "location", "distance", "name", "hint"} <= set(w[0]) for w in d["waypoints"])
    one = client.get("/nearest/v1/driving/" + OK_2.split(";")[1], params={"number": 2}).json()
    assert d["waypoints"][1] == one["waypoints"]


def test_a_pole_snaps_like_any_point(client: httpx.Client) -> None:
    """Latitude +-90 is valid input: snapping clamps it to Web Mercator's edge, as OSRM does (it once divided by zero:
    500)."""
    for path in ("/nearest/v1/driving/0,90", "/nearest/v1/driving/7.42,-90", "/route/v1/driving/0,90;7.4197,43.7311"):
        r = client.get(path)
        assert r.status_code == 200 and r.json()["code"] == "Ok", (path, r.text[:200])


def test_nearest_shape(client: httpx.Client) -> None:
    d = client.get("/nearest/v1/driving/7.4197,43.7311.json", params={"number": "3"}).json()
    assert set(d) == {"code", "waypoints"} and d["code"] == "Ok"
    assert len(d["waypoints"]) == 3
    for wp in d["waypoints"]:
        _check_waypoint(wp, nearest=True)
    dist = [wp["distance"] for wp in d["waypoints"]]
    assert dist == sorted(dist)
    one = client.get("/nearest/v1/driving/7.4197,43.7311").json()
    assert len(one["waypoints"]) == 1 and one["waypoints"][0] == d["waypoints"][0]


def test_table_shape(client: httpx.Client) -> None:
    pts = OK_2 + ";7.4200,43.7350"
    d = client.get("/table/v1/driving/" + pts).json()
    assert set(d) == {"code", "durations", "sources", "destinations"}
    assert np.array(d["durations"]).shape == (3, 3) and all(d["durations"][i][i] == 0 for i in range(3))
    for wp in d["sources"] + d["destinations"]:
        _check_waypoint(wp)
    both = client.get(
        "/table/v1/driving/" + pts, params={"sources": "0;1", "destinations": "2", "annotations": "duration,distance"}
    ).json()
    assert np.array(both["durations"]).shape == (2, 1) and np.array(both["distances"]).shape == (2, 1)
    assert len(both["sources"]) == 2 and len(both["destinations"]) == 1
    assert both["durations"][0][0] == d["durations"][0][2]
    route = client.get(R + "7.4197,43.7311;7.4200,43.7350").json()["routes"][0]
    assert both["durations"][0][0] == route["duration"]
    # a table adds its arcs' decimetres (each within 0.05 m) where the route measures its points: 657.6 m beside the
    # route's 657.5 m here (osrm-routed, summing unrounded metres: 657.5 m both; the phantom's part is 105.0 m in both)
    assert abs(both["distances"][0][0] - route["distance"]) <= 0.1 + 1e-9
    scaled = client.get("/table/v1/driving/" + pts, params={"scale_factor": "2"}).json()
    assert math.isclose(scaled["durations"][0][1], 2 * d["durations"][0][1], abs_tol=0.1)


def test_every_error_code(client: httpx.Client, engine) -> None:
    many = ";".join(["7.4197,43.7311"] * 501)
    cases = {
        "InvalidUrl": "/route/v1/driving/",
        "InvalidService": "/foo/v1/driving/" + OK_2,
        "InvalidVersion": "/route/v2/driving/" + OK_2,
        "InvalidOptions": R + "7.4197,43.7311",
        "InvalidQuery": R + OK_2 + "?steps=yes",
        "InvalidValue": R + "200,43.7;7.42,43.73",
        "NoSegment": R + OK_2 + "?radiuses=0.001;0.001",
        "TooBig": R + many,
        "NotImplemented": "/trip/v1/driving/" + OK_2 + "?roundtrip=false",  # OSRM's refused combination
    }
    for code, url in cases.items():
        r = client.get(url)
        assert r.status_code == 400, (code, r.text)
        body = r.json()
        assert body["code"] == code, (url[:80], body)
        assert set(body) == {"code", "message"} and isinstance(body["message"], str)
    # more of the same, with osrm-routed's messages where they are fixed
    for url, code, message in [
        (R + "7.4,95;7.42,43.73", "InvalidValue", "Invalid coordinate value."),
        (
            R + OK_2 + "?radiuses=5",
            "InvalidOptions",
            "Number of elements in radiuses size 1 does not match coordinate size 2",
        ),
        (R + OK_2 + "?alternatives=5", "TooBig", "Requested number of alternatives is higher than current maximum (3)"),
        (
            R + OK_2 + ";7.42,43.735?waypoints=1;2",
            "InvalidValue",
            "First and last coordinates must be specified as waypoints.",
        ),
        (
            "/nearest/v1/driving/7.4,43.7?number=101",
            "TooBig",
            "Number of results 101 is higher than current maximum (100)",
        ),
        ("/nearest/v1/driving/7.4,43.7?number=0", "InvalidOptions", None),
        ("/nearest/v1/driving/" + OK_2, "Ok", None),  # osrm-routed 26: one list of waypoints per coordinate
        ("/table/v1/driving/" + OK_2 + "?sources=5", "InvalidOptions", None),
        ("/table/v1/driving/7.4,43.7", "InvalidOptions", "Number of coordinates needs to be at least two."),
        ("/table/v1/driving/" + ";".join(["7.42,43.73"] * 101), "TooBig", "Too many table coordinates"),
        (R + OK_2 + "?annotations=nodes", "Ok", None),
        (R + OK_2 + ";7.42,43.735?waypoints=0;5", "InvalidOptions", ""),  # an index past the coordinates
        (
            "/tile/v1/driving/tile(1,2,3).mvt",
            "InvalidOptions",
            "Invalid coodinates. Only zoomlevel 12+ is supported: zoom 3 is outside 12..19",
        ),
        (R + OK_2 + "?exclude=motorway,toll", "InvalidValue", None),  # car offers each class alone, as car.lua
        (R + OK_2 + "?exclude=boats", "InvalidValue", None),
        ("/table/v1/driving/" + OK_2 + "?exclude=hovercraft", "InvalidValue", None),
        (R + OK_2 + "?radiuses=-1;5", "NoSegment", "Could not find a matching segment for coordinate 1"),
        (R + OK_2 + "?radiuses=-2;-1", "NoSegment", "Could not find a matching segment for coordinate 0"),
        ("/favicon.icon", "InvalidUrl", None),  # any unknown path (/ and /favicon.ico serve the start page)
    ]:
        body = client.get(url).json()
        assert body["code"] == code, (url[:80], body)
        if message is not None:
            assert body["message"] == message
    # NoRoute: a point snapped (tight radius) into a small one-way pocket that cannot be left or reached
    assert _find_no_route(client, engine.graph) is not None


def _find_no_route(client: httpx.Client, g) -> dict | None:
    comp = np.asarray(g.node_component)
    main = int(np.nonzero(comp == 0)[0][0])
    a = f"{g.node_lon[main] / 1e7},{g.node_lat[main] / 1e7}"
    for c in range(1, min(int(comp.max()) + 1, 40)):
        v = int(np.nonzero(comp == c)[0][0])
        b = f"{g.node_lon[v] / 1e7},{g.node_lat[v] / 1e7}"
        for pair, radii in (((a, b), "unlimited;2"), ((b, a), "2;unlimited")):
            r = client.get(R + ";".join(pair), params={"radiuses": radii})
            if r.json()["code"] == "NoRoute":
                assert r.status_code == 400 and set(r.json()) == {"code", "message"}
                # the table answers null for the same pair instead
                t = client.get("/table/v1/driving/" + ";".join(pair), params={"radiuses": radii}).json()
                assert t["code"] == "Ok" and t["durations"][0][1] is None
                return r.json()
    return None


def test_osrm_matches_engine(client: httpx.Client, engine) -> None:
    pts = random_points(engine.graph, 40, seed=11)
    for a, b in zip(pts[::2], pts[1::2], strict=False):
        r = client.get(R + coords_path([a, b]))
        q = engine.query().route(engine.snap_waypoints([a, b]), algorithm="ch")
        body = r.json()
        assert body["code"] == "Ok", body
        route = body["routes"][0]
        assert route["distance"] == round(q.distance_m, 1) and route["duration"] == round(q.duration_s, 1)


def test_routingpy_client(base: str, client: httpx.Client) -> None:
    from routingpy import OSRM

    api = OSRM(base_url=base, timeout=30)
    locs = [[7.4197, 43.7311], [7.4246, 43.7384], [7.4200, 43.7350]]
    direction = api.directions(locations=locs[:2], profile="driving", geometries="geojson", overview="full", steps=True)
    ours = client.get(R + OK_2, params={"overview": "full", "geometries": "geojson"}).json()["routes"][0]
    # routingpy truncates distance and duration to whole metres and seconds
    assert direction.distance == int(ours["distance"]) and direction.duration == int(ours["duration"])
    assert np.allclose(np.array(direction.geometry), np.array(ours["geometry"]["coordinates"]))
    p = api.directions(locations=locs, profile="driving")  # polyline, decoded by routingpy
    assert len(p.geometry) >= 2 and p.distance > 0
    matrix = api.matrix(locations=locs, profile="driving")
    assert np.array(matrix.durations).shape == (3, 3) and np.array(matrix.distances).shape == (3, 3)
    assert matrix.durations[0][1] == ours["duration"]


def test_engine_codes_map_to_400_through_handle() -> None:
    """Codes only the engine raises (NoTable, NoRoute, ...) reach the client as HTTP 400 with OSRM's body."""
    import asyncio

    from app.api.service import Service
    from app.engine.errors import NoRoute, NoTable
    from app.settings import Settings

    class StubRouter:
        algorithms = ("ch",)
        default_algorithm = "ch"

        def exclude_set(self, classes: object) -> None:
            return None

        def snap_waypoints(
            self,
            points: list,
            radiuses: object = None,
            bearings: object = None,
            exclude_mask: int = 0,
            approaches: object = None,
            any_edge: bool = False,
        ) -> list[Phantom]:
            return [Phantom(lon, lat, lon, lat, 0.0, *(0,) * 13) for lon, lat in points]  # type: ignore[arg-type]

        def query(self) -> StubRouter:
            return self

        def routes(self, phantoms: list, options: object, algorithm: str = "ch") -> None:
            raise NoRoute("Impossible route between points")

        def table(self, sources: list, destinations: list, exclude: object = (), reuse_buckets: bool = False) -> None:
            raise NoTable("No table found")

    from app.engine.facade import Engine, Limits

    svc = Service(Settings(graph_dir=Path("unused")))
    engine = Engine.__new__(Engine)  # the facade over a stub router
    engine.router, engine.limits = StubRouter(), Limits()  # type: ignore[assignment]
    svc.engine = engine
    for path, code in (("/table/v1/driving/" + OK_2, "NoTable"), (R + OK_2, "NoRoute")):
        status, body = asyncio.run(dispatch.handle(svc, path, b""))
        answer = json.loads(body)
        assert status == 400 and set(answer) == {"code", "message"} and answer["code"] == code

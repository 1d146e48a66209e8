"""The GraphHopper dialect (`/graphhopper/`) on a real server over the bundled Monaco: routingpy 1.3.0's own
`Graphhopper` client, unmodified but for its base URL, for directions, matrix and isochrones; its answers agree with
the native API's; every refusal is GraphHopper's 400 `{message, hints}`."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import pytest
from routingpy import Graphhopper
from routingpy.exceptions import RouterApiError
from routingpy.utils import decode_polyline5

from floor.format.encoded_values import arc_values
from floor.format.units import ROAD_CLASSES
from harness import api_server
from tests.http.conftest import ROAD_PAIRS
from tests.osrm.test_osrm_api import random_points

# the graphs these tests ask `graph_cache` for, built ahead by conftest's background builder
GRAPHS = [("andorra.osm.pbf", "car", True, 8)]


@pytest.fixture(scope="module")
def gh(base: str) -> Graphhopper:
    return Graphhopper(base_url=f"{base}/graphhopper")


def _native(client: httpx.Client, a: tuple[float, float], b: tuple[float, float], **extra) -> dict:
    r = client.post("/route", json={"coordinates": [a, b], **extra})
    assert r.status_code == 200, r.text
    return r.json()["properties"] | {"geometry": r.json()["geometry"]["coordinates"]}


def _gh_error(r: httpx.Response, details: str | None = None) -> str:
    """The message of a GraphHopper-shaped 400."""
    assert r.status_code == 400, r.text
    body = r.json()
    assert set(body) == {"message", "hints"} and body["message"], body
    assert body["hints"][0]["message"] == body["message"] and body["hints"][0]["details"], body
    if details is not None:
        assert body["hints"][0]["details"].endswith(details), body
    return body["message"]


@pytest.mark.parametrize("encoded", [True, False])
def test_directions_agree_with_the_native_route(gh: Graphhopper, client: httpx.Client, points, encoded: bool) -> None:
    for a, b in zip(points[::2], points[1::2], strict=True):
        d = gh.directions([list(a), list(b)], profile="car", points_encoded=encoded, instructions=True)
        native = _native(client, a, b)
        path = d.raw["paths"][0]
        assert abs(path["time"] / 1000 - native["duration_s"]) <= 0.1, (a, b, path["time"], native["duration_s"])
        assert abs(path["distance"] - native["distance_m"]) <= 0.1
        assert path["points_encoded"] is encoded and d.duration == int(path["time"] / 1000)
        want = np.round(np.asarray(native["geometry"]), 5)
        got = np.asarray(d.geometry, dtype=np.float64)
        assert got.shape == want.shape and np.allclose(got, want, atol=1.1e-5), (a, b)
        w, s, e, n = path["bbox"]
        assert w <= got[:, 0].min() + 1e-5 and got[:, 0].max() - 1e-5 <= e and s <= got[:, 1].min() + 1e-5
        ins = path["instructions"]
        assert ins[-1]["sign"] == 4 and ins[-1]["interval"] == [len(got) - 1, len(got) - 1]
        assert ins[0]["interval"][0] == 0 and all(i["text"] for i in ins)
        for prev, nxt in zip(ins, ins[1:], strict=False):
            assert prev["interval"][1] == nxt["interval"][0] and prev["interval"][0] <= prev["interval"][1]
        assert abs(sum(i["time"] for i in ins) - path["time"]) <= 100 * len(ins)  # steps are rounded to 0.1 s
        assert abs(sum(i["distance"] for i in ins) - path["distance"]) <= 0.1 * len(ins) + 0.1


def test_instructions_speak_the_locale(gh: Graphhopper, client: httpx.Client, points) -> None:
    a, b = points[0], points[1]
    en = gh.directions([list(a), list(b)], profile="car", instructions=True, locale="en").raw["paths"][0]
    de = gh.directions([list(a), list(b)], profile="car", instructions=True, locale="de").raw["paths"][0]
    assert [i["sign"] for i in en["instructions"]] == [i["sign"] for i in de["instructions"]]
    assert [i["text"] for i in en["instructions"]] != [i["text"] for i in de["instructions"]]
    native = client.post("/route", json={"coordinates": [a, b], "language": "de"}).json()
    steps = native["properties"]["legs"][0]["steps"]
    assert [i["text"] for i in de["instructions"]] == [s["instruction"] for s in steps]
    assert de["instructions"][-1]["text"] == steps[-1]["instruction"]


def test_get_route_with_points_matches_post(client: httpx.Client, points) -> None:
    a, b = points[2], points[3]
    r = client.get(
        "/graphhopper/route",
        params=[("point", f"{a[1]},{a[0]}"), ("point", f"{b[1]},{b[0]}"), ("profile", "car"),
                ("details", "street_name"), ("details", "time"), ("locale", "pt_BR")],
    )  # fmt: skip
    assert r.status_code == 200, r.text
    path = r.json()["paths"][0]
    assert abs(path["time"] / 1000 - _native(client, a, b)["duration_s"]) <= 0.1
    n = len(decode_polyline5(path["points"]))
    times = path["details"]["time"]
    assert times[0][0] == 0 and times[-1][1] == n - 1 and abs(sum(t[2] for t in times) - path["time"]) <= len(times)
    names = path["details"]["street_name"]
    assert names and all(x[0] < x[1] for x in names)


def test_matrix_agrees_with_the_native_table(gh: Graphhopper, client: httpx.Client, points) -> None:
    locs = [list(p) for p in points[:5]]
    m = gh.matrix(locs, profile="car")
    table = client.post("/table", json={"sources": locs}).json()
    want_t, want_d = np.asarray(table["durations_s"], float), np.asarray(table["distances_m"], float)
    assert np.abs(np.asarray(m.durations, float) - want_t).max() <= 0.5  # GraphHopper's times are whole seconds
    assert np.abs(np.asarray(m.distances, float) - want_d).max() <= 0.05
    m2 = gh.matrix(locs, profile="car", sources=[0, 1], destinations=[2, 3, 4])
    assert np.abs(np.asarray(m2.durations, float) - want_t[:2, 2:]).max() <= 0.5
    r = client.post("/graphhopper/matrix", json={"from_points": locs[:2], "to_points": locs[2:],
                                                  "out_arrays": ["times", "distances"]})  # fmt: skip
    assert r.status_code == 200 and r.json()["times"] == m2.durations


def test_isochrones_have_nested_buckets(gh: Graphhopper, client: httpx.Client, points) -> None:
    lon, lat = points[0]
    iso = gh.isochrones([lon, lat], profile="car", intervals=[240], buckets=2)
    assert [i.interval for i in iso] == [120, 240]
    for i in iso:
        ring = np.asarray(i.geometry, float)
        assert ring.shape[0] >= 4 and ring.shape[1] == 2 and np.allclose(ring[0], ring[-1])

    def area(ring) -> float:
        r = np.asarray(ring, float)
        return abs(float(np.dot(r[:-1, 0], r[1:, 1]) - np.dot(r[1:, 0], r[:-1, 1]))) / 2

    assert area(iso[0].geometry) < area(iso[1].geometry)
    native = client.get("/isochrone", params={"point": f"{lon},{lat}", "minutes": "4"}).json()["features"][0]
    geom = native["geometry"]
    parts = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
    assert abs(area(iso[1].geometry) - max(area(p[0]) for p in parts)) < 1e-12  # the largest part of the same band


def test_andorra_directions_matrix_isochrones(graph_cache) -> None:
    """The client's directions, matrix and isochrones on Andorra too (mountain roads, hairpins, tunnels)."""
    from app.engine.data import load

    graph = graph_cache("andorra.osm.pbf", "car", ch=True, landmarks=8)
    base = api_server.shared(graph)
    points = random_points(load(graph), 2 * ROAD_PAIRS, 43)
    gh = Graphhopper(base_url=f"{base}/graphhopper")
    with httpx.Client(base_url=base, timeout=60.0) as client:
        for encoded in (True, False):
            test_directions_agree_with_the_native_route(gh, client, points, encoded)
        test_matrix_agrees_with_the_native_table(gh, client, points)
        test_isochrones_have_nested_buckets(gh, client, points)


def test_custom_model_and_alternatives(client: httpx.Client, points) -> None:
    a, b = points[4], points[5]
    model = {"speed": [{"if": "true", "multiply_by": "0.5"}]}
    r = client.post("/graphhopper/route", json={"points": [a, b], "profile": "car", "custom_model": model})
    slow = r.json()["paths"][0]
    assert abs(slow["time"] / 1000 - _native(client, a, b, custom_model=model)["duration_s"]) <= 0.1
    assert slow["time"] > _native(client, a, b)["duration_s"] * 1000
    r = client.post("/graphhopper/route", json={"points": [a, b], "algorithm": "alternative_route",
                                                 "alternative_route.max_paths": 3, "instructions": False})  # fmt: skip
    paths = r.json()["paths"]
    native = _native(client, a, b, alternatives=2)
    assert len(paths) == 1 + len(native.get("alternatives", [])) and "instructions" not in paths[0]
    assert abs(paths[0]["time"] / 1000 - native["duration_s"]) <= 0.1
    r = client.post("/graphhopper/route", json={"points": [a, b], "ch.disable": True})
    assert abs(r.json()["paths"][0]["time"] / 1000 - native["duration_s"]) <= 0.1


def test_a_profile_the_graph_lacks_is_graphhoppers_400(gh: Graphhopper, client: httpx.Client, points) -> None:
    a, b = points[0], points[1]
    with pytest.raises(RouterApiError) as err:
        gh.directions([list(a), list(b)], profile="bike")
    assert err.value.status == 400
    r = client.post("/graphhopper/route", json={"points": [a, b], "profile": "foot"})
    assert "'foot' does not exist" in _gh_error(r, "IllegalArgumentException")
    assert client.get("/graphhopper/info").json()["profiles"] == [{"name": "car"}]


def test_no_route_is_graphhoppers_connection_not_found(client: httpx.Client, points) -> None:
    """Residential streets only: pairs the native API finds no route between are GraphHopper's 400."""
    model = {"priority": [{"if": "road_class != RESIDENTIAL", "multiply_by": "0"}]}
    seen = 0
    for a, b in zip(points[::2], points[1::2], strict=True):
        native = client.post("/route", json={"coordinates": [a, b], "custom_model": model}).json()
        if native.get("code") != "NoRoute":
            continue
        r = client.post("/graphhopper/route", json={"points": [a, b], "custom_model": model})
        assert _gh_error(r, "ConnectionNotFoundException") == "Connection between locations not found"
        seen += 1
    assert seen


def test_refusals_are_graphhoppers_400(client: httpx.Client, points) -> None:
    a, b = points[0], points[1]
    q = [("point", f"{a[1]},{a[0]}"), ("point", f"{b[1]},{b[0]}")]
    get = lambda *extra: client.get("/graphhopper/route", params=q + list(extra))  # noqa: E731
    assert "elevation" in _gh_error(get(("elevation", "true")))
    assert "surface" in _gh_error(get(("details", "surface")))
    assert "supported: " in _gh_error(get(("locale", "xx")))
    assert "heading" in _gh_error(get(("heading", "90"), ("heading", "90")))
    assert "round_trip" in _gh_error(get(("algorithm", "round_trip")))
    far = client.get("/graphhopper/route", params=[("point", "43.0,7.0"), q[1]])
    assert "out of bounds" in _gh_error(far, "PointOutOfBoundsException")
    _gh_error(client.get("/graphhopper/route", params=[q[0], ("point", "x")]))
    _gh_error(client.post("/graphhopper/route", json={"points": [a, b], "bogus": 1}))
    _gh_error(client.post("/graphhopper/route", content=b"{x", headers={"content-type": "application/json"}))
    _gh_error(client.post("/graphhopper/matrix", json={"points": [a, b], "out_arrays": ["weights"]}))
    _gh_error(client.get("/graphhopper/isochrone", params={"point": "x"}))


# GraphHopper's RoadClass values as its path details write them (lower case)
GH_ROAD_CLASSES = {
    "other", "motorway", "trunk", "primary", "secondary", "tertiary", "residential", "unclassified", "service",
    "road", "track", "bridleway", "steps", "cycleway", "path", "living_street", "footway", "pedestrian", "platform",
    "corridor", "construction", "busway",
}  # fmt: skip


def _at(rows: list[list], k: int):
    """The value of the detail row holding point k (from <= k < to)."""
    (value,) = [v for a, b, v in rows if a <= k < b]
    return value


def test_road_class_and_max_speed_details(client: httpx.Client, points, bundled_graph: Path) -> None:
    """details road_class (GraphHopper's names, lower case; a link is its road's class, a ferry other) and max_speed
    (km/h, null where none is stated): rows cover the path, neighbours differ, and each piece of road carries its
    arc's class and limit (the same route in process, its arcs read from the graph)."""
    from app.engine.data import load
    from app.engine.facade import Engine, RouteRequest, Waypoints

    g = load(bundled_graph)
    engine = Engine(g)
    classes, limits = np.asarray(g.arc_class), arc_values(g.arrays, "max_speed")
    seen_classes, seen_limits = set(), set()
    for a, b in zip(points[::2], points[1::2], strict=True):
        body = {"points": [a, b], "details": ["road_class", "max_speed"], "points_encoded": False}
        r = client.post("/graphhopper/route", json=body)
        assert r.status_code == 200, r.text
        path = r.json()["paths"][0]
        n = len(path["points"]["coordinates"])
        for name in ("road_class", "max_speed"):
            rows = path["details"][name]
            assert rows[0][0] == 0 and rows[-1][1] == n - 1, (name, rows)
            assert all(p[1] == q[0] and p[2] != q[2] for p, q in zip(rows, rows[1:], strict=False)), rows
        (leg,) = engine.route(RouteRequest(Waypoints([a, b]))).best.legs
        assert len(leg.coordinates) == n
        begin = 0
        for arc, end in zip(leg.piece_arc, leg.piece_coord_end, strict=True):
            if int(end) > begin:
                base = ROAD_CLASSES[int(classes[arc])].removesuffix("_link")
                want = base if base in GH_ROAD_CLASSES else "other"
                assert _at(path["details"]["road_class"], begin) == want
                limit = float(limits[arc])
                assert _at(path["details"]["max_speed"], begin) == (limit if np.isfinite(limit) else None)
                seen_classes.add(want)
                seen_limits.add(limit if np.isfinite(limit) else None)
            begin = int(end)
    assert len(seen_classes) >= 3 and None in seen_limits and len(seen_limits) >= 3, (seen_classes, seen_limits)
    q = [("point", f"{points[0][1]},{points[0][0]}"), ("point", f"{points[1][1]},{points[1][0]}")]
    get = client.get("/graphhopper/route", params=[*q, ("details", "road_class"), ("details", "max_speed")]).json()
    post = client.post("/graphhopper/route", json={"points": points[:2], "details": ["road_class", "max_speed"]})
    assert get["paths"][0]["details"] == post.json()["paths"][0]["details"]


def test_via_points_give_one_path_with_a_via_sign(gh: Graphhopper, client: httpx.Client, points) -> None:
    a, v, b = points[6], points[7], points[8]
    d = gh.directions([list(a), list(v), list(b)], profile="car", points_encoded=False, instructions=True)
    path = d.raw["paths"][0]
    native = client.post("/route", json={"coordinates": [a, v, b]}).json()["properties"]
    assert abs(path["time"] / 1000 - native["duration_s"]) <= 0.1
    signs = [i["sign"] for i in path["instructions"]]
    assert signs.count(5) == 1 and signs[-1] == 4 and signs.count(4) == 1
    ins = path["instructions"]
    for prev, nxt in zip(ins, ins[1:], strict=False):
        assert prev["interval"][1] == nxt["interval"][0]
    via = ins[signs.index(5)]
    at = path["points"]["coordinates"][via["interval"][0]]
    assert np.allclose(at, native["waypoints"][1]["location"], atol=2e-6)
    assert len(path["snapped_waypoints"]["coordinates"]) == 3

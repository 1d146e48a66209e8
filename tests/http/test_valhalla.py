"""The Valhalla dialect (`/valhalla/`) on a real server over the bundled Monaco: routingpy 1.3.0's own `Valhalla`
client, unmodified but for its base URL, for directions (two languages), matrix and isochrones; its answers agree
with the native API's; every refusal is Valhalla's error `{error_code, error, status_code, status}`."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import pytest
from routingpy import Valhalla
from routingpy.exceptions import RouterApiError
from routingpy.utils import decode_polyline6

from app.api.valhalla.trips import maneuver_type
from floor.format.encoded_values import arc_values
from floor.format.graph import load_graph
from harness import api_server
from tests.http.conftest import ROAD_PAIRS
from tests.osrm.test_osrm_api import random_points

# the graphs these tests ask `graph_cache` for, built ahead by conftest's background builder
GRAPHS = [("andorra.osm.pbf", "car", True, 8)]


@pytest.fixture(scope="module")
def val(base: str) -> Valhalla:
    return Valhalla(base_url=f"{base}/valhalla")


def _locs(*pts: tuple[float, float]) -> list[dict[str, float]]:
    return [{"lon": p[0], "lat": p[1]} for p in pts]


def _native(client: httpx.Client, pts: list[tuple[float, float]], **extra) -> dict:
    r = client.post("/route", json={"coordinates": pts, **extra})
    assert r.status_code == 200, r.text
    return r.json()["properties"] | {"geometry": r.json()["geometry"]["coordinates"]}


def _error(r: httpx.Response, code: int) -> str:
    """The message of a Valhalla error answer with `code`."""
    assert r.status_code == 400, r.text
    body = r.json()
    assert set(body) == {"error_code", "error", "status_code", "status"}, body
    assert body["error_code"] == code and body["status_code"] == 400 and body["status"] == "Bad Request", body
    return body["error"]


def test_directions_agree_with_the_native_route(val: Valhalla, client: httpx.Client, points) -> None:
    for a, b in zip(points[::2], points[1::2], strict=True):
        d = val.directions([list(a), list(b)], profile="auto", instructions=True)
        native = _native(client, [a, b], language="en")
        trip = d.raw["trip"]
        assert trip["status"] == 0 and trip["status_message"] == "Found route between points"
        assert trip["units"] == "kilometers" and trip["language"] == "en-US"
        assert abs(trip["summary"]["time"] - native["duration_s"]) <= 0.1, (a, b)
        assert abs(trip["summary"]["length"] * 1000 - native["distance_m"]) <= 1.0
        (leg,) = trip["legs"]
        shape = np.asarray(decode_polyline6(leg["shape"]), dtype=np.float64)
        want = np.round(np.asarray(native["geometry"]), 6)
        assert shape.shape == want.shape and np.allclose(shape, want, atol=1.1e-6), (a, b)
        s = leg["summary"]
        assert s["min_lon"] <= shape[:, 0].min() + 1e-6 and shape[:, 0].max() - 1e-6 <= s["max_lon"]
        assert s["min_lat"] <= shape[:, 1].min() + 1e-6 and shape[:, 1].max() - 1e-6 <= s["max_lat"]
        man = leg["maneuvers"]
        steps = native["legs"][0]["steps"]
        assert len(man) == len(steps)
        assert [m["instruction"] for m in man] == [st["instruction"] for st in steps]
        assert man[0]["type"] in (1, 2, 3) and man[-1]["type"] in (4, 5, 6)
        assert man[0]["begin_shape_index"] == 0 and man[-1]["begin_shape_index"] == len(shape) - 1
        for prev, nxt in zip(man, man[1:], strict=False):
            assert prev["end_shape_index"] == nxt["begin_shape_index"] >= prev["begin_shape_index"]
        assert abs(sum(m["time"] for m in man) - s["time"]) <= 0.1 * len(man)
        assert abs(sum(m["length"] for m in man) - s["length"]) <= 0.001 * len(man) + 0.001
        assert d.duration == int(s["time"]) and abs(d.distance - native["distance_m"]) <= 1.0


def test_a_second_language_and_miles(val: Valhalla, client: httpx.Client, points) -> None:
    a, b = points[0], points[1]
    en = val.directions([list(a), list(b)], profile="auto", instructions=True).raw["trip"]
    de = val.directions([list(a), list(b)], profile="auto", instructions=True, language="de-DE", units="mi")
    trip = de.raw["trip"]
    assert trip["language"] == "de-DE" and trip["units"] == "miles"
    steps = _native(client, [a, b], language="de")["legs"][0]["steps"]
    got = trip["legs"][0]["maneuvers"]
    assert [m["instruction"] for m in got] == [st["instruction"] for st in steps]
    assert [m["instruction"] for m in got] != [m["instruction"] for m in en["legs"][0]["maneuvers"]]
    assert [m["type"] for m in got] == [m["type"] for m in en["legs"][0]["maneuvers"]]
    assert abs(trip["summary"]["length"] * 1.609344 - en["summary"]["length"]) <= 0.002
    assert trip["summary"]["time"] == en["summary"]["time"]


def test_via_points_give_legs_and_get_matches_post(client: httpx.Client, points) -> None:
    a, v, b = points[6], points[7], points[8]
    req = {"locations": _locs(a, v, b), "costing": "auto", "directions_options": {"directions_type": "maneuvers"}}
    post = client.post("/valhalla/route", json=req).json()
    get = client.get("/valhalla/route", params={"json": json.dumps(req)}).json()
    form = client.post(
        "/valhalla/route", content=json.dumps(req), headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert post == get == form.json()  # curl --data sends a form's content type; Valhalla reads JSON all the same
    native = _native(client, [a, v, b])
    legs = post["trip"]["legs"]
    assert len(legs) == 2 and abs(post["trip"]["summary"]["time"] - native["duration_s"]) <= 0.1
    for leg, nleg in zip(legs, native["legs"], strict=True):
        assert abs(leg["summary"]["time"] - nleg["duration_s"]) <= 0.1
        assert all("instruction" not in m for m in leg["maneuvers"])
    assert legs[0]["maneuvers"][-1]["type"] in (4, 5, 6) and legs[1]["maneuvers"][0]["type"] in (1, 2, 3)
    none = client.post("/valhalla/route", json=req | {"narrative": False}).json()
    assert all("maneuvers" not in leg for leg in none["trip"]["legs"])


def test_matrix_agrees_with_the_native_table(val: Valhalla, client: httpx.Client, points) -> None:
    locs = [list(p) for p in points[:5]]
    m = val.matrix(locs, profile="auto")
    table = client.post("/table", json={"sources": locs}).json()
    want_t, want_d = np.asarray(table["durations_s"], float), np.asarray(table["distances_m"], float)
    assert np.abs(np.asarray(m.durations, float) - want_t).max() <= 0.5  # Valhalla's matrix times are whole seconds
    assert np.abs(np.asarray(m.distances, float) - want_d).max() <= 1.0  # routingpy truncates km * 1000
    m2 = val.matrix(locs, profile="auto", sources=[0, 1], destinations=[2, 3, 4])
    assert np.abs(np.asarray(m2.durations, float) - want_t[:2, 2:]).max() <= 0.5
    cells = m2.raw["sources_to_targets"]
    assert [[(c["from_index"], c["to_index"]) for c in row] for row in cells] == [
        [(i, j) for j in range(3)] for i in range(2)
    ]


def test_isochrones_are_the_native_bands(val: Valhalla, client: httpx.Client, points) -> None:
    lon, lat = points[0]
    iso = val.isochrones([lon, lat], profile="auto", intervals=[120, 240], polygons=True)
    assert [i.interval for i in iso] == [120, 240]
    assert [f["properties"]["contour"] for f in iso.raw["features"]] == [4, 2]

    def area(ring) -> float:
        r = np.asarray(ring, float)
        return abs(float(np.dot(r[:-1, 0], r[1:, 1]) - np.dot(r[1:, 0], r[:-1, 1]))) / 2

    rings = [np.asarray(i.geometry[0], float) for i in iso]
    assert all(r.shape[0] >= 4 and np.allclose(r[0], r[-1]) for r in rings)
    assert area(rings[0]) < area(rings[1])
    native = client.get("/isochrone", params={"point": f"{lon},{lat}", "minutes": "4"}).json()["features"][0]
    geom = native["geometry"]
    parts = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
    assert abs(area(rings[1]) - max(area(p[0]) for p in parts)) < 1e-12
    lines = val.isochrones([lon, lat], profile="auto", intervals=[240])
    assert lines.raw["features"][0]["geometry"]["type"] == "LineString"
    assert np.allclose(np.asarray(lines[0].geometry, float), rings[1])


def test_optimized_route_is_the_trip_with_fixed_ends(client: httpx.Client, points) -> None:
    """`/optimized_route` visits the locations between the fixed first and last in OSRM's `/trip` order (source=first,
    destination=last, roundtrip=false), with the same time, one leg per hop, `original_index` per location."""
    pts = points[:6]
    req = {"locations": _locs(*pts), "costing": "auto"}
    r = client.post("/valhalla/optimized_route", json=req)
    assert r.status_code == 200, r.text
    trip = r.json()["trip"]
    order = [loc["original_index"] for loc in trip["locations"]]
    assert order[0] == 0 and order[-1] == len(pts) - 1 and sorted(order) == list(range(len(pts)))
    assert all((loc["lon"], loc["lat"]) == pts[i] for loc, i in zip(trip["locations"], order, strict=True))
    osrm = client.get(
        f"/trip/v1/driving/{';'.join(f'{lon},{lat}' for lon, lat in pts)}",
        params={"source": "first", "destination": "last", "roundtrip": "false"},
    ).json()
    assert osrm["code"] == "Ok", osrm
    by_place = sorted(range(len(pts)), key=lambda i: osrm["waypoints"][i]["waypoint_index"])
    assert order == by_place
    assert abs(trip["summary"]["time"] - osrm["trips"][0]["duration"]) <= 0.1
    assert len(trip["legs"]) == len(pts) - 1 and all(leg["maneuvers"] for leg in trip["legs"])
    ordered = ";".join(f"{pts[i][0]},{pts[i][1]}" for i in order)  # a trip may turn back at its stops, as OSRM's
    through = client.get(f"/route/v1/driving/{ordered}", params={"continue_straight": "false"}).json()["routes"][0]
    assert abs(trip["summary"]["time"] - through["duration"]) <= 0.1
    for leg, hop in zip(trip["legs"], through["legs"], strict=True):
        assert abs(leg["summary"]["time"] - hop["duration"]) <= 0.1
    assert client.get("/valhalla/optimized_route", params={"json": json.dumps(req)}).json() == r.json()
    top = req | {"costing_options": {"auto": {"top_speed": 50}}}
    assert "optimized_route" in _error(client.post("/valhalla/optimized_route", json=top), 107)
    _error(client.post("/valhalla/optimized_route", json={"locations": _locs(pts[0]), "costing": "auto"}), 120)
    status = client.get("/valhalla/status").json()
    assert "optimized_route" in status["available_actions"]


def test_andorra_directions_matrix_isochrones(graph_cache) -> None:
    """The client's directions, matrix and isochrones on Andorra too (mountain roads, hairpins, tunnels)."""
    from app.engine.data import load

    graph = graph_cache("andorra.osm.pbf", "car", ch=True, landmarks=8)
    base = api_server.shared(graph)
    points = random_points(load(graph), 2 * ROAD_PAIRS, 43)
    val = Valhalla(base_url=f"{base}/valhalla")
    with httpx.Client(base_url=base, timeout=60.0) as client:
        test_directions_agree_with_the_native_route(val, client, points)
        test_matrix_agrees_with_the_native_table(val, client, points)
        test_isochrones_are_the_native_bands(val, client, points)


def test_unknown_costing_and_a_costing_the_graph_lacks_are_125(val: Valhalla, client: httpx.Client, points) -> None:
    a, b = points[0], points[1]
    with pytest.raises(RouterApiError) as err:
        val.directions([list(a), list(b)], profile="bicycle")
    assert err.value.status == 400 and json.loads(err.value.message)["error_code"] == 125
    assert "built for car" in _error(
        client.post("/valhalla/route", json={"locations": _locs(a, b), "costing": "pedestrian"}), 125
    )
    assert "'hovercraft'" in _error(
        client.post("/valhalla/route", json={"locations": _locs(a, b), "costing": "hovercraft"}), 125
    )
    _error(client.post("/valhalla/route", json={"locations": _locs(a, b)}), 124)


def test_unreachable_is_442_and_no_road_is_171(client: httpx.Client, points) -> None:
    """Residential streets only (starroute's custom model in costing_options): pairs the native API finds no route
    between are Valhalla's 442; the matrix answers them as nulls."""
    model = {"priority": [{"if": "road_class != RESIDENTIAL", "multiply_by": "0"}]}
    opts = {"auto": {"custom_model": model}}
    seen = 0
    for a, b in zip(points[::2], points[1::2], strict=True):
        native = client.post("/route", json={"coordinates": [a, b], "custom_model": model}).json()
        if native.get("code") != "NoRoute":
            continue
        r = client.post("/valhalla/route", json={"locations": _locs(a, b), "costing": "auto", "costing_options": opts})
        assert _error(r, 442) == "No path could be found for input"
        req = {"sources": _locs(a), "targets": _locs(b), "costing": "auto", "costing_options": opts}
        m = client.post("/valhalla/sources_to_targets", json=req)
        cell = {"from_index": 0, "to_index": 0, "time": None, "distance": None}
        assert m.status_code == 200 and m.json()["sources_to_targets"] == [[cell]]
        seen += 1
    assert seen
    a = points[0]
    far = client.post("/valhalla/route", json={"locations": _locs((7.0, 43.0), a), "costing": "auto"})
    assert "coordinate 0" in _error(far, 171)
    located = client.post("/valhalla/locate", json={"locations": _locs((7.0, 43.0), a), "costing": "auto"}).json()
    assert located[0]["edges"] is None and located[1]["edges"][0]["distance"] >= 0


def test_costing_options_that_map_and_refusals(client: httpx.Client, points) -> None:
    a, b = points[4], points[5]
    route = lambda **extra: client.post("/valhalla/route", json={"locations": _locs(a, b), "costing": "auto", **extra})  # noqa: E731
    fast = route().json()["trip"]["summary"]["time"]
    slow = route(costing_options={"auto": {"top_speed": 20}}).json()["trip"]["summary"]["time"]
    model = {"speed": [{"if": "true", "limit_to": "20"}]}
    assert abs(slow - _native(client, [a, b], custom_model=model)["duration_s"]) <= 0.1 and slow > fast
    ignored = route(costing_options={"auto": {"use_highways": 0.2, "maneuver_penalty": 9}}).json()
    assert ignored["trip"]["summary"]["time"] == fast
    assert "shortest" in _error(route(costing_options={"auto": {"shortest": True}}), 107)
    assert "invariant" in _error(route(date_time={"type": 3, "value": "2026-01-01T08:00"}), 107)
    assert "exclude_locations" in _error(route(exclude_locations=_locs(a)), 107)
    assert "self" in _error(route(exclude_polygons=[[[7.41, 43.73], [7.42, 43.74], [7.42, 43.73], [7.41, 43.74]]]), 137)
    assert "truck" in _error(route(costing="truck", costing_options={"truck": {"hazmat": True}}), 107)
    assert "axle_load" in _error(route(costing="truck", costing_options={"truck": {"axle_load": 9}}), 107)
    assert "height" in _error(route(costing="truck", costing_options={"truck": {"height": "tall"}}), 100)
    assert "supported: " in _error(route(directions_options={"language": "xx-XX"}), 100)
    through = [{"lon": a[0], "lat": a[1], "type": "through"}, {"lon": b[0], "lat": b[1]}]
    assert "through" in _error(route(locations=through), 107)
    _error(client.post("/valhalla/route", json={"locations": _locs(a), "costing": "auto"}), 120)
    _error(
        client.post(
            "/valhalla/route", json={"locations": [{"lat": 91, "lon": 0}, {"lat": 0, "lon": 0}], "costing": "auto"}
        ),
        130,
    )
    _error(client.get("/valhalla/route", params={"json": "{x"}), 100)
    _error(client.post("/valhalla/route", content=b"{x", headers={"content-type": "application/json"}), 100)
    _error(client.post("/valhalla/route", content=b"\x8fV\xc3", headers={"content-type": "application/json"}), 100)
    assert "pole" in _error(route(locations=[{"lat": 90, "lon": 0}, {"lat": b[1], "lon": b[0]}]), 171)
    _error(client.post("/valhalla/sources_to_targets", json={"costing": "auto"}), 112)
    iso = {"locations": _locs(a), "costing": "auto"}
    _error(client.post("/valhalla/isochrone", json=iso | {"contours": [{"time": 2}, {"distance": 1}]}), 100)
    _error(client.post("/valhalla/isochrone", json=iso | {"contours": [{"time": 500}]}), 151)
    _error(client.post("/valhalla/isochrone", json=iso | {"contours": [{"time": 2}], "locations": _locs(a, b)}), 150)
    status = client.get("/valhalla/status").json()
    assert "route" in status["available_actions"] and status["version"]


def test_truck_costing_closes_the_roads_too_low_or_narrow(client: httpx.Client, points, bundled_graph: Path) -> None:
    """costing=truck on the car graph: the roads whose max_height / max_width / max_length / max_weight is below the
    truck's (Valhalla's defaults 4.11 m, 2.6 m, 21.64 m, 21.77 t) are closed, top speed 120 km/h: the native route
    with that custom model, to 0.1 s; across a 2.2 m underpass a car drives, a truck does not; a 2 m truck does."""
    closed = "max_height < 4.11 || max_width < 2.6 || max_length < 21.64 || max_weight < 21.77"
    model = {"priority": [{"if": closed, "multiply_by": "0"}], "speed": [{"if": "true", "limit_to": 120}]}
    for a, b in zip(points[::2], points[1::2], strict=True):
        truck = client.post("/valhalla/route", json={"locations": _locs(a, b), "costing": "truck"}).json()["trip"]
        native = _native(client, [a, b], custom_model=model)
        assert abs(truck["summary"]["time"] - native["duration_s"]) <= 0.1
        assert truck["legs"][0]["maneuvers"][0]["travel_type"] == "truck"
    g = load_graph(bundled_graph, metric=False)
    low = np.flatnonzero(arc_values(g.arrays, "max_height") <= 2.5)
    assert len(low)
    k = int(low[0])
    u, v = int(np.asarray(g.arc_tail)[k]), int(np.asarray(g.arc_head)[k])
    lon, lat = np.asarray(g.node_lon, float) / 1e7, np.asarray(g.node_lat, float) / 1e7
    ends = (
        (lon[u] * 0.8 + lon[v] * 0.2, lat[u] * 0.8 + lat[v] * 0.2),
        (lon[u] * 0.2 + lon[v] * 0.8, lat[u] * 0.2 + lat[v] * 0.8),
    )
    body = {"locations": _locs(*ends), "directions_options": {"directions_type": "none"}}
    car = client.post("/valhalla/route", json=body | {"costing": "auto"}).json()["trip"]
    truck = client.post("/valhalla/route", json=body | {"costing": "truck"})
    small = {"costing": "truck", "costing_options": {"truck": {"height": 2.0, "weight": 3}}}
    assert client.post("/valhalla/route", json=body | small).json()["trip"]["summary"] == car["summary"]
    assert truck.status_code == 200 and truck.json()["trip"]["summary"] != car["summary"]  # snapped beside it
    m = client.post("/valhalla/sources_to_targets", json={"sources": _locs(*points[:2]), "targets": _locs(*points[2:4]),
                                                         "costing": "truck"})  # fmt: skip
    table = client.post("/table", json={"sources": points[:2], "destinations": points[2:4], "custom_model": model})
    got = [[c["time"] for c in row] for row in m.json()["sources_to_targets"]]
    want = np.asarray(table.json()["durations_s"], float)
    assert np.abs(np.asarray(got, float) - want).max() <= 0.5


def test_exclude_polygons_are_avoid_areas(client: httpx.Client, points) -> None:
    """exclude_polygons (and avoid_polygons, its old name): rings closed when open, GeoJSON features too, answered
    as the native API's avoid areas; route, matrix and isochrone."""
    a, b = points[4], points[5]
    line = _native(client, [a, b])["geometry"]
    mid = line[len(line) // 2]  # a small square on the route's middle: it must change
    ring = [[mid[0] - 3e-4, mid[1] - 3e-4], [mid[0] + 3e-4, mid[1] - 3e-4], [mid[0] + 3e-4, mid[1] + 3e-4],
            [mid[0] - 3e-4, mid[1] + 3e-4]]  # fmt: skip
    closed = [*ring, ring[0]]
    avoid = {"type": "Polygon", "coordinates": [closed]}
    native = client.post("/route", json={"coordinates": [a, b], "avoid": avoid}).json()
    req = {"locations": _locs(a, b), "costing": "auto"}
    for polygons in (
        [ring],
        [closed],
        {"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": avoid}]},
    ):
        for key in ("exclude_polygons", "avoid_polygons"):
            r = client.post("/valhalla/route", json=req | {key: polygons})
            if native.get("code") == "NoRoute":
                _error(r, 442)
                continue
            assert r.status_code == 200, r.text
            assert abs(r.json()["trip"]["summary"]["time"] - native["properties"]["duration_s"]) <= 0.1
    plain = client.post("/valhalla/route", json=req).json()["trip"]["summary"]["time"]
    assert native.get("code") == "NoRoute" or native["properties"]["duration_s"] > plain + 0.1
    m = client.post("/valhalla/sources_to_targets", json={"sources": _locs(a), "targets": _locs(b), "costing": "auto",
                                                         "exclude_polygons": [ring]})  # fmt: skip
    table = client.post("/table", json={"sources": [a], "destinations": [b], "avoid": avoid}).json()
    cell = m.json()["sources_to_targets"][0][0]
    want = table["durations_s"][0][0]
    assert (cell["time"] is None) == (want is None) and (want is None or abs(cell["time"] - want) <= 0.5)
    iso = {"locations": _locs(a), "costing": "auto", "contours": [{"time": 3}], "exclude_polygons": [ring]}
    band = client.post("/valhalla/isochrone", json=iso | {"polygons": True})
    native_iso = client.post("/isochrone", json={"point": list(a), "minutes": [3], "avoid": avoid})
    assert band.status_code == 200 and native_iso.status_code == 200, (band.text, native_iso.text)
    geom = native_iso.json()["features"][0]["geometry"]
    rings = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
    assert band.json()["features"][0]["geometry"]["coordinates"] in rings
    assert _error(client.post("/valhalla/route", json=req | {"exclude_polygons": [[[7.41, 43.73]]]}), 137)
    assert _error(client.post("/valhalla/route", json=req | {"exclude_polygons": {"type": "Polygon"}}), 137)


def test_unknown_dialect_paths_are_one_metrics_label(client: httpx.Client) -> None:
    """Paths under /valhalla/ that no route answers are counted as "other", not one label each (a bounded set)."""
    assert client.get("/valhalla/no-such-action-4711").status_code == 404
    assert client.get("/graphhopper/no-such-action-4711").status_code == 404
    assert client.get("/valhalla/status").status_code == 200
    text = client.get("/metrics").text
    assert "no-such-action-4711" not in text and 'endpoint="/valhalla/status"' in text


def test_maneuver_types() -> None:
    assert [maneuver_type("depart", None), maneuver_type("depart", "right"), maneuver_type("arrive", "left")] == [
        1,
        2,
        6,
    ]
    assert [maneuver_type("turn", m) for m in ("left", "right", "sharp left", "slight right", "straight")] == [
        15,
        10,
        14,
        9,
        8,
    ]
    assert maneuver_type("turn", "uturn") == 13 and maneuver_type("turn", "uturn", "left") == 12
    assert [maneuver_type("roundabout", "right"), maneuver_type("exit roundabout", "right")] == [26, 27]
    assert [
        maneuver_type("fork", "slight left"),
        maneuver_type("off ramp", "right"),
        maneuver_type("merge", "left"),
    ] == [24, 20, 38]
    assert maneuver_type("new name", "straight") == 7 and maneuver_type("on ramp", "straight") == 17

"""Valhalla's `date_time` (issue 43): on a copy of Monaco customized with a weekday rush hour on every primary road
(`test_departure_profiles`' graph, served for real), `/valhalla/route` at Monday 08:00 answers the native API's
`depart_at` durations and is longer than at 03:00, its locations carry Valhalla's `date_time`; arrive by, the matrix
and the isochrone take it too; routingpy 1.3.0's `Valhalla` client passes its `date_time` argument through; every
refusal is Valhalla's code."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from routingpy import Valhalla

from harness import api_server
from tests.http.test_departure_profiles import MONDAY_3, MONDAY_8, App, points, profiled  # noqa: F401 (a fixture)

MONDAY_830 = "2026-03-02T08:30"


@pytest.fixture(scope="module")
def base(profiled: App) -> str:  # noqa: F811
    return api_server.shared(Path(profiled.app.state.service.settings.graph_dir))


@pytest.fixture(scope="module")
def client(base: str):
    with httpx.Client(base_url=base, timeout=120.0) as c:
        yield c


@pytest.fixture(scope="module")
def pairs(bundled_graph: Path) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    return points(bundled_graph, 12)


def _locs(*pts: tuple[float, float]) -> list[dict[str, float]]:
    return [{"lon": p[0], "lat": p[1]} for p in pts]


def _route(client: httpx.Client, a, b, date_time: dict | None = None, **extra) -> dict:
    body = {"locations": _locs(a, b), "costing": "auto", **extra}
    if date_time is not None:
        body["date_time"] = date_time
    r = client.post("/valhalla/route", json=body)
    assert r.status_code == 200, r.text
    return r.json()["trip"]


def _native(client: httpx.Client, a, b, **extra) -> dict:
    r = client.post("/route", json={"coordinates": [a, b], **extra})
    assert r.status_code == 200, r.text
    return r.json()["properties"]


def _error(r: httpx.Response, code: int) -> str:
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error_code"] == code and set(body) == {"error_code", "error", "status_code", "status"}, body
    return body["error"]


def _at(text: str, seconds: float) -> str:
    return (datetime.fromisoformat(text) + timedelta(seconds=int(seconds + 0.5))).isoformat(timespec="minutes")


def test_depart_at_is_the_native_departure_time(client: httpx.Client, pairs) -> None:
    """Type 1 at Monday 08:00 equals the native `depart_at` route to 0.1 s (legs too) and is longer than at 03:00 on
    most pairs; each location's `date_time` is its departure / arrival, minutes, with the graph's zone."""
    longer = 0
    for a, b in pairs:
        rush = _route(client, a, b, {"type": 1, "value": MONDAY_8})
        night = _route(client, a, b, {"type": 1, "value": MONDAY_3})
        native = _native(client, a, b, depart_at=MONDAY_8)
        assert abs(rush["summary"]["time"] - native["duration_s"]) <= 0.1, (a, b)
        assert abs(rush["legs"][0]["summary"]["time"] - native["legs"][0]["duration_s"]) <= 0.1
        assert abs(night["summary"]["time"] - _native(client, a, b, depart_at=MONDAY_3)["duration_s"]) <= 0.1
        assert rush["summary"]["time"] >= night["summary"]["time"]
        longer += rush["summary"]["time"] > night["summary"]["time"] + 1
        start, end = rush["locations"]
        assert start["date_time"] == MONDAY_8 and start["original_index"] == 0
        assert end["date_time"] == _at(MONDAY_8, rush["summary"]["time"])
        assert start["time_zone_name"] == end["time_zone_name"] and start["time_zone_offset"].startswith(("+", "-"))
        assert list(start) == ["type", "lat", "lon", "date_time", "time_zone_offset", "time_zone_name",
                               "original_index"]  # fmt: skip
    assert longer >= 6, longer
    a, b = pairs[0]
    static = _route(client, a, b)
    assert "date_time" not in static["locations"][0]  # no date_time: as before, static durations


def test_arrive_by_matrix_and_isochrone(client: httpx.Client, pairs) -> None:
    a, b = pairs[1]
    by = _route(client, a, b, {"type": 2, "value": MONDAY_830})
    native = _native(client, a, b, arrive_by=MONDAY_830)
    assert abs(by["summary"]["time"] - native["duration_s"]) <= 0.1
    assert by["locations"][-1]["date_time"] <= MONDAY_830 <= _at(by["locations"][-1]["date_time"], 60)
    now = _route(client, a, b, {"type": 0})["locations"][0]  # type 0: departs now, in the graph's zone
    assert abs(datetime.fromisoformat(now["date_time"] + now["time_zone_offset"]) - datetime.now().astimezone()) < (
        timedelta(minutes=2)
    )
    srcs, dsts = [p for p, _ in pairs[:3]], [q for _, q in pairs[:3]]
    body = {"sources": _locs(*srcs), "targets": _locs(*dsts), "costing": "auto"}
    m = client.post("/valhalla/sources_to_targets", json=body | {"date_time": {"type": 1, "value": MONDAY_8}})
    assert m.status_code == 200, m.text
    table = client.post("/table", json={"sources": srcs, "destinations": dsts, "depart_at": MONDAY_8}).json()
    for i, row in enumerate(m.json()["sources_to_targets"]):
        for j, c in enumerate(row):
            assert abs(c["time"] - table["durations_s"][i][j]) <= 0.5
            assert c["date_time"] == _at(MONDAY_8, table["durations_s"][i][j]) and "time_zone_name" in c
    static = client.post("/valhalla/sources_to_targets", json=body).json()["sources_to_targets"]
    assert "date_time" not in static[0][0]
    iso = {"locations": _locs(a), "costing": "auto", "contours": [{"time": 3}], "polygons": True}
    rush = client.post("/valhalla/isochrone", json=iso | {"date_time": {"type": 1, "value": MONDAY_8}})
    native_iso = client.post("/isochrone", json={"point": list(a), "minutes": [3], "depart_at": MONDAY_8})
    assert rush.status_code == 200 and native_iso.status_code == 200, (rush.text, native_iso.text)
    ring = rush.json()["features"][0]["geometry"]["coordinates"]
    geom = native_iso.json()["features"][0]["geometry"]
    rings = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
    assert ring in rings


def test_routingpy_passes_its_date_time_through(base: str, client: httpx.Client, pairs) -> None:
    a, b = pairs[2]
    val = Valhalla(base_url=f"{base}/valhalla")
    d = val.directions([list(a), list(b)], profile="auto", date_time={"type": 1, "value": MONDAY_8})
    assert d.raw["trip"]["locations"][0]["date_time"] == MONDAY_8
    assert abs(d.raw["trip"]["summary"]["time"] - _native(client, a, b, depart_at=MONDAY_8)["duration_s"]) <= 0.1
    m = val.matrix([list(a), list(b)], profile="auto", date_time={"type": 1, "value": MONDAY_8})
    assert m.raw["sources_to_targets"][0][1]["date_time"] >= MONDAY_8
    iso = val.isochrones(list(a), profile="auto", intervals=[120], date_time={"type": 1, "value": MONDAY_8})
    assert iso.raw["features"]


def test_date_time_refusals_are_valhallas_codes(client: httpx.Client, pairs) -> None:
    a, b = pairs[0]
    route = lambda **extra: client.post("/valhalla/route", json={"locations": _locs(a, b), "costing": "auto", **extra})  # noqa: E731
    _error(route(date_time={"type": 1}), 160)
    _error(route(date_time={"type": 2, "value": ""}), 161)
    _error(route(date_time={"type": 3}), 165)
    assert "invariant" in _error(route(date_time={"type": 3, "value": MONDAY_8}), 107)
    assert "2026-13-02" in _error(route(date_time={"type": 1, "value": "2026-13-02T08:00"}), 162)
    _error(route(date_time={"type": 1, "value": "08:00"}), 162)
    _error(route(date_time={"type": 7, "value": MONDAY_8}), 163)
    slow = route(date_time={"type": 1, "value": MONDAY_8}, costing_options={"auto": {"top_speed": 30}})
    assert "top_speed" in _error(slow, 107)
    assert "alternates" in _error(route(date_time={"type": 1, "value": MONDAY_8}, alternates=1), 107)
    ring = [[a[0] - 0.001, a[1] - 0.001], [a[0] + 0.001, a[1] - 0.001], [a[0], a[1] + 0.001]]
    assert "exclude_polygons" in _error(route(date_time={"type": 1, "value": MONDAY_8}, exclude_polygons=[ring]), 107)
    matrix = {"sources": _locs(a), "targets": _locs(b), "costing": "auto"}
    arrive = client.post("/valhalla/sources_to_targets", json=matrix | {"date_time": {"type": 2, "value": MONDAY_8}})
    assert "arrive by" in _error(arrive, 107)
    iso = {"locations": _locs(a), "costing": "auto", "contours": [{"time": 2}]}
    _error(client.post("/valhalla/isochrone", json=iso | {"date_time": {"type": 2, "value": MONDAY_8}}), 142)
    get = client.get(
        "/valhalla/route",
        params={
            "json": json.dumps(
                {"locations": _locs(a, b), "costing": "auto", "date_time": {"type": 1, "value": MONDAY_8}}
            )
        },
    )
    assert get.json() == route(date_time={"type": 1, "value": MONDAY_8}).json()

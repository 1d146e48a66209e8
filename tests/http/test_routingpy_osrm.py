"""routingpy 1.3.0's own `OSRM` client, unmodified but for its base URL, against starroute's OSRM v5 API on the
bundled Monaco and on Andorra: directions (with steps, alternatives, via points) and matrix agree with the native
API (durations to 0.1 s). routingpy's `OSRM` class has no isochrones (OSRM has none), so there is nothing of that
kind to test through it."""

from __future__ import annotations

import httpx
import numpy as np
import pytest
from routingpy import OSRM
from routingpy.exceptions import RouterApiError

from harness import api_server
from tests.http.conftest import ROAD_PAIRS
from tests.osrm.test_osrm_api import random_points

# the graphs these tests ask `graph_cache` for, built ahead by conftest's background builder
GRAPHS = [("andorra.osm.pbf", "car", True, 8)]


@pytest.fixture(scope="module")
def osrm(base: str) -> OSRM:
    return OSRM(base_url=base)


def _native(client: httpx.Client, pts: list[tuple[float, float]]) -> dict:
    r = client.post("/route", json={"coordinates": pts})
    assert r.status_code == 200, r.text
    return r.json()["properties"] | {"geometry": r.json()["geometry"]["coordinates"]}


def test_directions_agree_with_the_native_route(osrm: OSRM, client: httpx.Client, points) -> None:
    for a, b in zip(points[::2], points[1::2], strict=True):
        d = osrm.directions([list(a), list(b)], profile="driving", steps=True, overview="full")
        native = _native(client, [a, b])
        route = d.raw["routes"][0]
        assert abs(route["duration"] - native["duration_s"]) <= 0.1, (a, b)
        assert abs(route["distance"] - native["distance_m"]) <= 0.1
        assert d.duration == int(route["duration"]) and d.distance == int(route["distance"])
        want = np.round(np.asarray(native["geometry"]), 5)
        got = np.asarray(d.geometry, dtype=np.float64)
        assert got.shape == want.shape and np.allclose(got, want, atol=1.1e-5), (a, b)
        (leg,) = route["legs"]
        assert leg["steps"][0]["maneuver"]["type"] == "depart" and leg["steps"][-1]["maneuver"]["type"] == "arrive"


def test_alternatives_and_via_points(osrm: OSRM, client: httpx.Client, points) -> None:
    a, v, b = points[0], points[1], points[2]
    alts = osrm.directions([list(a), list(b)], profile="driving", alternatives=True)
    native = _native(client, [a, b])
    assert len(alts) >= 1 and abs(alts.raw["routes"][0]["duration"] - native["duration_s"]) <= 0.1
    assert all(r.duration >= alts[0].duration for r in alts)
    via = osrm.directions([list(a), list(v), list(b)], profile="driving", overview="full")
    nvia = _native(client, [a, v, b])
    legs = via.raw["routes"][0]["legs"]
    assert len(legs) == 2 and abs(via.raw["routes"][0]["duration"] - nvia["duration_s"]) <= 0.1
    for leg, nleg in zip(legs, nvia["legs"], strict=True):
        assert abs(leg["duration"] - nleg["duration_s"]) <= 0.1


def test_matrix_agrees_with_the_native_table(osrm: OSRM, client: httpx.Client, points) -> None:
    locs = [list(p) for p in points[:6]]
    m = osrm.matrix(locs, profile="driving", annotations=["duration", "distance"])
    table = client.post("/table", json={"sources": locs}).json()
    want_t, want_d = np.asarray(table["durations_s"], float), np.asarray(table["distances_m"], float)
    assert np.abs(np.asarray(m.durations, float) - want_t).max() <= 0.1
    assert np.abs(np.asarray(m.distances, float) - want_d).max() <= 0.1
    m2 = osrm.matrix(locs, profile="driving", sources=[0, 1], destinations=[2, 3, 4, 5])
    assert np.abs(np.asarray(m2.durations, float) - want_t[:2, 2:]).max() <= 0.1


def test_errors_reach_the_client_as_osrm_s(osrm: OSRM) -> None:
    with pytest.raises(RouterApiError) as err:
        osrm.directions([[7.42, 43.73]], profile="driving")
    assert err.value.status == 400 and '"code":"InvalidOptions"' in err.value.message.replace(" ", "")


def test_andorra_directions_and_matrix(graph_cache) -> None:
    """The same client checks on Andorra (mountain roads, hairpins, tunnels)."""
    from app.engine.data import load

    graph = graph_cache("andorra.osm.pbf", "car", ch=True, landmarks=8)
    base = api_server.shared(graph)
    points = random_points(load(graph), 2 * ROAD_PAIRS, 43)
    osrm = OSRM(base_url=base)
    with httpx.Client(base_url=base, timeout=60.0) as client:
        test_directions_agree_with_the_native_route(osrm, client, points)
        test_alternatives_and_via_points(osrm, client, points)
        test_matrix_agrees_with_the_native_table(osrm, client, points)

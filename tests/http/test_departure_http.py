"""Departure time over HTTP (issue 44): `depart_at` / `arrive_by` on native /route, /table, /isochrone and as OSRM
extension options on /route/v1 and /table/v1; bad values and both at once are 400s with a reason (OSRM-shaped on
OSRM paths). The bundled graph carries no time profiles, so its times are the static ones."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from harness import api_server

A, B = (7.41970, 43.73110), (7.42460, 43.73840)


@pytest.fixture(scope="module")
def client(bundled_graph: Path):  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60) as c:
        yield c


def route_params(**kw: str) -> dict[str, str]:
    return {"from": f"{A[0]},{A[1]}", "to": f"{B[0]},{B[1]}", **kw}


def test_native_route_departs_and_arrives(client: httpx.Client) -> None:
    r = client.get("/route", params=route_params(depart_at="2026-03-02T08:30"))
    assert r.status_code == 200, r.text
    p = r.json()["properties"]
    assert p["departure"] == "2026-03-02T08:30:00+00:00"
    arrive = datetime.fromisoformat(p["arrival"])
    assert arrive - datetime.fromisoformat(p["departure"]) == timedelta(seconds=p["duration_s"])
    assert p["algorithm"] == "td-astar"
    by = client.get("/route", params=route_params(arrive_by=p["arrival"])).json()["properties"]
    assert by["arrival"] <= p["arrival"] and by["departure"] == p["departure"]  # static times: the same trip
    plain = client.get("/route", params=route_params()).json()["properties"]
    assert "departure" not in plain and plain["algorithm"] == "ch"
    body = {"coordinates": [A, B], "depart_at": "2026-03-02T08:30:00+01:00"}
    posted = client.post("/route", json=body).json()["properties"]
    assert posted["departure"] == "2026-03-02T07:30:00+00:00"


@pytest.mark.parametrize(
    "extra, words",
    [
        ({"depart_at": "soon"}, "ISO 8601"),
        ({"depart_at": "2026-03-02T08:30", "arrive_by": "2026-03-02T09:30"}, "not both"),
        ({"arrive_by": "2026-02-30T08:00"}, "arrive_by"),
    ],
)
def test_native_bad_times_are_400(client: httpx.Client, extra: dict[str, str], words: str) -> None:
    r = client.get("/route", params=route_params(**extra))
    assert r.status_code == 400 and words in r.text, r.text


def test_native_table_and_isochrone(client: httpx.Client) -> None:
    r = client.post("/table", json={"sources": [A, B], "depart_at": "2026-03-02T08:30"})
    assert r.status_code == 200, r.text
    assert r.json()["departure"] == "2026-03-02T08:30:00+00:00"
    assert r.json()["durations_s"][0][1] > 0
    r = client.post("/table", json={"sources": [A, B], "arrive_by": "2026-03-02T08:30"})
    assert r.status_code == 400 and "depart_at" in r.text
    r = client.get("/isochrone", params={"point": f"{A[0]},{A[1]}", "minutes": "3", "depart_at": "now"})
    assert r.status_code == 200, r.text
    assert "departure" in r.json()["properties"]
    r = client.get("/isochrone", params={"point": f"{A[0]},{A[1]}", "minutes": "3", "arrive_by": "now"})
    assert r.status_code == 400


def test_osrm_extension_options(client: httpx.Client) -> None:
    coords = f"{A[0]},{A[1]};{B[0]},{B[1]}"
    r = client.get(f"/route/v1/driving/{coords}?depart_at=2026-03-02T08:30Z")
    assert r.status_code == 200, r.text
    route = r.json()["routes"][0]
    assert route["departure"] == "2026-03-02T08:30:00+00:00" and "arrival" in route
    plain = client.get(f"/route/v1/driving/{coords}").json()["routes"][0]
    assert "departure" not in plain
    bad = client.get(f"/route/v1/driving/{coords}?depart_at=yesterday")
    assert bad.status_code == 400 and bad.json()["code"] == "InvalidValue" and "ISO 8601" in bad.json()["message"]
    both = client.get(f"/route/v1/driving/{coords}?depart_at=now&arrive_by=now")
    assert both.status_code == 400 and "not both" in both.json()["message"]
    t = client.get(f"/table/v1/driving/{coords}?depart_at=2026-03-02T08:30&annotations=duration,distance")
    assert t.status_code == 200, t.text
    assert t.json()["departure"] == "2026-03-02T08:30:00+00:00" and t.json()["durations"][0][1] > 0


def test_openapi_names_the_time_dependent_algorithms(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").text
    assert '"td-astar"' in spec and '"td-dijkstra"' in spec


def test_continue_straight_with_a_departure_is_refused(client: httpx.Client) -> None:
    """Via points of a departure-time route are not held to continue_straight: asking for it is a 400 saying so."""
    mid = ((A[0] + B[0]) / 2, (A[1] + B[1]) / 2)
    coords = f"{A[0]},{A[1]};{mid[0]},{mid[1]};{B[0]},{B[1]}"
    r = client.get(f"/route/v1/driving/{coords}?depart_at=2026-03-02T08:30&continue_straight=true")
    assert r.status_code == 400 and "continue_straight" in r.json()["message"], r.text
    for extra in ("", "&continue_straight=false"):
        ok = client.get(f"/route/v1/driving/{coords}?depart_at=2026-03-02T08:30{extra}")
        assert ok.status_code == 200, ok.text
    two = f"{A[0]},{A[1]};{B[0]},{B[1]}"
    assert client.get(f"/route/v1/driving/{two}?depart_at=2026-03-02T08:30&continue_straight=true").status_code == 200

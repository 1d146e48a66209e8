"""`POST /optimize` (VROOM's vehicle routing) on a real server over the bundled Monaco: problems solved in VROOM's
output format, time windows and capacities honoured, tasks left unassigned when no vehicle can do them, route
geometries from starroute's routes, VROOM's error shape; and the same matrix gives the same solution cost: VROOM
(pyvroom, in this process) on starroute's `/table`, on the request's own `matrices`, and on osrm-routed's table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import vroom

from app.api.osrm.polyline import decode
from harness import api_server
from tests.osrm.test_osrm_api import random_points

DEPOT = (7.4190, 43.7318)


@pytest.fixture(scope="module")
def client(bundled_graph: Path):
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def points(bundled_graph: Path) -> list[tuple[float, float]]:
    from app.engine.data import load

    return random_points(load(bundled_graph), 12, 7)


def _optimize(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/optimize", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["code"] == 0 and set(out) == {"code", "summary", "unassigned", "routes"}, out
    return out


def _error(client: httpx.Client, body: Any, code: int, **kw: Any) -> str:
    r = client.post("/optimize", json=body, **kw) if "content" not in kw else client.post("/optimize", **kw)
    assert r.status_code == 400, r.text
    out = r.json()
    assert set(out) == {"code", "error"} and out["code"] == code, out
    return out["error"]


def _problem(points: list[tuple[float, float]], vehicles: int = 2, **job: Any) -> dict[str, Any]:
    return {
        "vehicles": [{"id": v, "start": list(DEPOT), "end": list(DEPOT)} for v in range(1, vehicles + 1)],
        "jobs": [{"id": 100 + k, "location": list(p), **job} for k, p in enumerate(points)],
    }


def _steps(out: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for r in out["routes"] for s in r["steps"]]


def _table(client: httpx.Client, pts: list[tuple[float, float]]) -> tuple[list[list[int]], list[list[int]]]:
    """starroute's OSRM /table rounded as VROOM rounds a router's matrix."""
    coords = ";".join(f"{lon},{lat}" for lon, lat in pts)
    t = client.get(f"/table/v1/driving/{coords}", params={"annotations": "duration,distance"}).json()
    return _round(t["durations"]), _round(t["distances"])


def _round(values: Any) -> list[list[int]]:
    """VROOM's rounding of a router's matrix (`utils::round`: the nearest whole number, halves up)."""
    return np.floor(np.asarray(values, dtype=np.float64) + 0.5).astype(int).tolist()


def _vroom_cost(body: dict[str, Any]) -> int:
    """VROOM itself (pyvroom, same exploration level and threads as the server's defaults) on `body`."""
    import orjson

    problem = vroom.Input()
    problem._from_json(orjson.dumps(body).decode(), False)
    return int(problem.solve(exploration_level=5, nb_threads=2).summary.cost)


def _indexed(body: dict[str, Any], pts: list[tuple[float, float]], dur: Any, dist: Any) -> dict[str, Any]:
    """`body` with every location replaced by its index in `pts`, and the matrices."""
    at = {p: i for i, p in enumerate(pts)}
    out = {"vehicles": [], "jobs": [], "matrices": {"car": {"durations": dur, "distances": dist}}}
    for v in body["vehicles"]:
        w = {k: x for k, x in v.items() if k not in ("start", "end")}
        for key in ("start", "end"):
            if key in v:
                w[f"{key}_index"] = at[tuple(v[key])]
        out["vehicles"].append(w)
    for j in body["jobs"]:
        out["jobs"].append(
            {**{k: x for k, x in j.items() if k != "location"}, "location_index": at[tuple(j["location"])]}
        )
    return out


def test_a_small_problem_is_solved_in_vroom_s_output_format(client: httpx.Client, points) -> None:
    out = _optimize(client, _problem(points[:8], service=60))
    s = out["summary"]
    assert s["unassigned"] == 0 and out["unassigned"] == [] and s["routes"] == len(out["routes"]) >= 1
    assert s["cost"] == sum(r["cost"] for r in out["routes"]) and s["service"] == 8 * 60
    done = sorted(st["id"] for st in _steps(out) if st["type"] == "job")
    assert done == list(range(100, 108))
    for r in out["routes"]:
        steps = r["steps"]
        assert steps[0]["type"] == "start" and steps[-1]["type"] == "end" and "geometry" not in r
        assert steps[0]["location"] == list(DEPOT) == steps[-1]["location"]
        assert all("location_index" not in st for st in steps)  # the request gave coordinates, not indices
        arrivals = [st["arrival"] for st in steps]
        assert arrivals == sorted(arrivals) and r["duration"] == steps[-1]["duration"]
        assert all(st["distance"] >= 0 for st in steps) and r["distance"] == steps[-1]["distance"]


def test_the_same_matrix_gives_the_same_cost(client: httpx.Client, points) -> None:
    """/optimize on coordinates costs what VROOM costs on starroute's /table of the same points, and /optimize on
    that matrix given as `matrices` (location_index) costs the same again."""
    body = _problem(points[:10])
    pts = [DEPOT, *points[:10]]
    dur, dist = _table(client, pts)
    ours = _optimize(client, body)["summary"]["cost"]
    indexed = _indexed(body, pts, dur, dist)
    assert ours == _vroom_cost(indexed)
    given = _optimize(client, indexed)
    assert given["summary"]["cost"] == ours and given["summary"]["distance"] > 0
    assert all("location_index" in st and "location" not in st for st in _steps(given))


def test_the_same_problem_on_osrm_s_matrix(client: httpx.Client, points, osrm_base: str) -> None:
    """OSRM + VROOM: VROOM on osrm-routed's table of the same points. The matrices agree (starroute's cells are
    osrm-routed's to 0.1 s, whole seconds after rounding), and then so do the costs."""
    body = _problem(points[:10])
    pts = [DEPOT, *points[:10]]
    ours, _ = _table(client, pts)
    coords = ";".join(f"{lon},{lat}" for lon, lat in pts)
    t = httpx.get(f"{osrm_base}/table/v1/driving/{coords}", params={"annotations": "duration,distance"}).json()
    theirs = np.asarray(_round(t["durations"]))
    assert np.abs(theirs - np.asarray(ours)).max() <= 1
    cost = _optimize(client, body)["summary"]["cost"]
    osrm_cost = _vroom_cost(_indexed(body, pts, theirs.tolist(), _round(t["distances"])))
    if (theirs == np.asarray(ours)).all():
        assert cost == osrm_cost
    else:  # a cell rounded the other way: a second per leg at most
        assert abs(cost - osrm_cost) <= len(pts) + 2


def test_time_windows_are_honoured(client: httpx.Client, points) -> None:
    body = _problem(points[:6], vehicles=1)
    body["vehicles"][0]["time_window"] = [0, 4 * 3600]
    windows = {100 + k: [900 * (k + 1), 900 * (k + 1) + 300] for k in range(6)}
    for j in body["jobs"]:
        j["time_windows"] = [windows[j["id"]]]
        j["service"] = 30
    out = _optimize(client, body)
    assert out["unassigned"] == []
    order = []
    for st in _steps(out):
        if st["type"] == "job":
            lo, hi = windows[st["id"]]
            start = st["arrival"] + st["waiting_time"]  # service begins
            assert lo <= start <= hi, (st, lo, hi)
            order.append(st["id"])
    assert order == sorted(order)  # the windows are in that order, a quarter hour apart
    assert out["summary"]["waiting_time"] > 0


def test_a_window_no_vehicle_can_reach_leaves_the_job_unassigned(client: httpx.Client, points) -> None:
    body = _problem(points[:3], vehicles=1)
    body["vehicles"][0]["time_window"] = [0, 3600]
    body["jobs"][1]["time_windows"] = [[0, 1]]  # not even the depot's neighbour is reached within a second
    out = _optimize(client, body)
    assert [u["id"] for u in out["unassigned"]] == [101] and out["summary"]["unassigned"] == 1
    assert out["unassigned"][0]["type"] == "job" and out["unassigned"][0]["location"] == list(points[1])
    assert "location_index" not in out["unassigned"][0]


def test_capacity_is_respected(client: httpx.Client, points) -> None:
    body = _problem(points[:7], vehicles=2, delivery=[1])
    for v in body["vehicles"]:
        v["capacity"] = [3]
    out = _optimize(client, body)
    assert len(out["unassigned"]) == 1 and out["summary"]["delivery"] == [6]
    for r in out["routes"]:
        assert r["delivery"][0] <= 3
        assert all(0 <= st["load"][0] <= 3 for st in r["steps"])
        assert r["steps"][0]["load"] == [sum(1 for st in r["steps"] if st["type"] == "job")]


def test_skills_and_shipments(client: httpx.Client, points) -> None:
    body = _problem(points[:4], vehicles=2)
    body["vehicles"][0]["skills"] = [1]
    body["vehicles"][1]["skills"] = [2]
    body["jobs"][0]["skills"] = [1]
    body["jobs"][1]["skills"] = [3]  # no vehicle has it
    body["shipments"] = [
        {"pickup": {"id": 7, "location": list(points[5])}, "delivery": {"id": 8, "location": list(points[6])}}
    ]
    out = _optimize(client, body)
    assert [u["id"] for u in out["unassigned"]] == [101]
    job100 = next(r for r in out["routes"] if any(st.get("id") == 100 for st in r["steps"]))
    assert job100["vehicle"] == 1
    route = next(r for r in out["routes"] if any(st["type"] == "pickup" for st in r["steps"]))
    kinds = [st["type"] for st in route["steps"]]
    assert kinds.index("pickup") < kinds.index("delivery")


def test_route_geometry_is_starroute_s_route_through_the_steps(client: httpx.Client, points) -> None:
    body = _problem(points[:5]) | {"options": {"g": True}}
    out = _optimize(client, body)
    for r in out["routes"]:
        stops = [st["location"] for st in r["steps"]]
        stops = [p for k, p in enumerate(stops) if k == 0 or p != stops[k - 1]]
        coords = ";".join(f"{lon},{lat}" for lon, lat in stops)
        params = {"overview": "full", "continue_straight": "false"}
        osrm = client.get(f"/route/v1/driving/{coords}", params=params).json()
        assert r["geometry"] == osrm["routes"][0]["geometry"]
        line = decode(r["geometry"], 5)
        assert np.allclose(line[0], stops[0], atol=2e-3) and np.allclose(line[-1], stops[-1], atol=2e-3)


def test_refusals_are_vroom_s_errors(client: httpx.Client, points) -> None:
    one = [{"id": 1, "start": list(DEPOT)}]
    assert "vehicles" in _error(client, {"vehicles": []}, 2)
    assert "Duplicate job id" in _error(
        client, {"vehicles": one, "jobs": [{"id": 1, "location": [7.42, 43.74]}] * 2}, 2
    )
    assert "time window" in _error(client, {"vehicles": one, "jobs": [{"id": 1, "location": [7.42, 43.74],
                                                                        "time_windows": [[10, 5]]}]}, 2)  # fmt: skip
    assert "location" in _error(client, {"vehicles": one, "jobs": [{"id": 1, "location": [7.42]}]}, 2)
    assert "[lon, lat]" in _error(client, {"vehicles": one, "jobs": [{"id": 1, "location": [43.7, 97.4]}]}, 2)
    assert "Invalid profile: bike" in _error(client, {"vehicles": [{**one[0], "profile": "bike"}]}, 2)
    assert "matrices" in _error(client, {"vehicles": [{"id": 1, "start_index": 0}]}, 2)
    assert "No road near location [0,0]" in _error(
        client, {"vehicles": one, "jobs": [{"id": 1, "location": [0, 0]}]}, 3
    )
    assert "JSON" in _error(client, None, 2, content=b"{nope", headers={"content-type": "application/json"})
    many = {"vehicles": one, "jobs": [{"id": k, "location": list(points[k % 12])} for k in range(300)]}
    assert "Too many locations: 302, at most 200" in _error(client, many, 2)
    geo = {"vehicles": [{"id": 1, "start_index": 0}], "jobs": [{"id": 1, "location_index": 1}],
           "matrices": {"car": {"durations": [[0, 1], [1, 0]]}}, "options": {"g": True}}  # fmt: skip
    assert "coordinates" in _error(client, geo, 2)
    assert "64 bits" in _error(client, {"vehicles": [{**one[0], "note": 2**70}]}, 2)  # JSON to VROOM cannot carry it
    assert client.get("/optimize").status_code == 405

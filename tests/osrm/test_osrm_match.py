"""OSRM's `/match/v1` through a real server on the bundled Monaco graph: the answer field by field against OSRM's
documentation (../shared/reference/osrm-http-api.md), the options, the error codes; and (slow) beside osrm-routed
on the same traces: the same codes and keys, matchings as close to the true roads."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import pytest

from app.api.osrm import grammar
from app.engine.errors import EngineError
from app.engine.facade import Engine
from harness import api_server
from harness.traces import drive, make_trace, mismatch, url
from tests.osrm.test_osrm_api import _check_step, _check_waypoint

M = "/match/v1/driving/"


@pytest.fixture(scope="module")
def client(bundled_graph: Path):
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def traces(bundled_graph: Path) -> list:
    """Three traces along real routes, every 10 s, 5 m of noise."""
    from app.engine.data import load

    engine = Engine(load(bundled_graph))
    return [make_trace(drive(engine, seed), 10, 5.0, np.random.default_rng(seed)) for seed in (21, 22, 23)]


def _params(trace, **kw: str) -> dict[str, str]:
    n = len(trace.points)
    return {"timestamps": ";".join(map(str, trace.timestamps)), "radiuses": ";".join(["5"] * n), **kw}


def _check_tracepoint(tp: dict, n_matchings: int, legs_of: list[int]) -> None:
    keys = {"matchings_index", "waypoint_index", "alternatives_count"}
    assert keys <= set(tp)
    _check_waypoint({k: v for k, v in tp.items() if k not in keys})
    assert 0 <= tp["matchings_index"] < n_matchings
    assert 0 <= tp["waypoint_index"] <= legs_of[tp["matchings_index"]]
    assert isinstance(tp["alternatives_count"], int) and tp["alternatives_count"] >= 0


def test_match_shape(client: httpx.Client, traces: list) -> None:
    """`{code, matchings, tracepoints}`: matchings are Route objects with a `confidence`, one leg per pair of
    consecutive matched points; tracepoints are Waypoints with the matching's index, the point's place in it and
    the alternatives, one per input point (null for a point left out)."""
    tr = traces[0]
    params = _params(tr, steps="true", annotations="true", geometries="geojson", overview="full")
    r = client.get(M + url(tr), params=params)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    d = r.json()
    assert set(d) == {"code", "matchings", "tracepoints"} and d["code"] == "Ok"
    assert len(d["tracepoints"]) == len(tr.points)
    legs_of = []
    for m in d["matchings"]:
        assert set(m) == {"legs", "weight_name", "weight", "duration", "distance", "geometry", "confidence"}
        assert 0.0 <= m["confidence"] <= 1.0 and m["weight_name"] == "routability"
        assert m["geometry"]["type"] == "LineString" and len(m["geometry"]["coordinates"]) >= 2
        assert m["distance"] == pytest.approx(sum(leg["distance"] for leg in m["legs"]), abs=0.1 * len(m["legs"]))
        for leg in m["legs"]:
            assert set(leg) == {"steps", "summary", "weight", "duration", "distance", "annotation"}
            assert leg["steps"][0]["maneuver"]["type"] == "depart" and leg["steps"][-1]["maneuver"]["type"] == "arrive"
            for step in leg["steps"]:
                _check_step(step)
            ann = leg["annotation"]
            assert {"distance", "duration", "weight", "speed", "datasources", "nodes", "metadata"} == set(ann)
            assert len(ann["nodes"]) == len(ann["distance"]) + 1
        legs_of.append(len(m["legs"]))
    matched = [tp for tp in d["tracepoints"] if tp is not None]
    for tp in matched:
        _check_tracepoint(tp, len(d["matchings"]), legs_of)
    for i in range(len(d["matchings"])):  # waypoint_index counts the matching's points 0..legs
        mine = [tp["waypoint_index"] for tp in matched if tp["matchings_index"] == i]
        assert mine == list(range(legs_of[i] + 1))


def test_match_options(client: httpx.Client, traces: list) -> None:
    tr = traces[1]
    n = len(tr.points)
    base = client.get(M + url(tr), params=_params(tr)).json()
    assert isinstance(base["matchings"][0]["geometry"], str)  # polyline, simplified by default
    assert base["matchings"][0]["legs"][0]["steps"] == []
    # waypoints: legs merge between the given points; only those are numbered
    wps = [0, n // 2, n - 1]
    d = client.get(M + url(tr), params=_params(tr, waypoints=";".join(map(str, wps)))).json()
    assert d["code"] == "Ok" and len(d["matchings"]) == 1 and len(d["matchings"][0]["legs"]) == 2
    assert [d["tracepoints"][i]["waypoint_index"] for i in wps] == [0, 1, 2]
    assert all(tp is None or tp["waypoint_index"] is None for i, tp in enumerate(d["tracepoints"]) if i not in wps)
    assert d["matchings"][0]["distance"] == pytest.approx(base["matchings"][0]["distance"], abs=0.5)
    # skip_waypoints, generate_hints, overview, geometries
    d = client.get(M + url(tr), params=_params(tr, skip_waypoints="true")).json()
    assert set(d) == {"code", "matchings"}
    d = client.get(M + url(tr), params=_params(tr, generate_hints="false", overview="false")).json()
    assert all("hint" not in tp for tp in d["tracepoints"] if tp is not None)
    assert "geometry" not in d["matchings"][0]
    d = client.get(M + url(tr), params=_params(tr, geometries="polyline6", overview="by_legs")).json()
    assert all(isinstance(leg["geometry"], str) for leg in d["matchings"][0]["legs"])
    # tidy and gaps are accepted; a long pause splits the trace unless gaps=ignore
    ts = list(tr.timestamps)
    ts[n // 2 :] = [t + 3600 for t in ts[n // 2 :]]
    params = {"timestamps": ";".join(map(str, ts)), "tidy": "true"}
    assert len(client.get(M + url(tr), params=params).json()["matchings"]) == 2
    assert len(client.get(M + url(tr), params={**params, "gaps": "ignore"}).json()["matchings"]) == 1


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("gaps=sometimes", "InvalidQuery"),
        ("tidy=yes", "InvalidQuery"),
        ("alternatives=true", "InvalidQuery"),  # route's own options are not match's
        ("continue_straight=true", "InvalidQuery"),
        ("timestamps=1;x", "InvalidQuery"),
        ("timestamps=-1;2", "InvalidQuery"),
        ("timestamps=4294967296;4294967297", "InvalidQuery"),  # OSRM's unsigned
    ],
)
def test_match_grammar(query: str, code: str) -> None:
    with pytest.raises(EngineError) as info:
        grammar.parse(M + "7.4197,43.7311;7.4246,43.7384", query)
    assert info.value.code == code


def test_match_errors(client: httpx.Client, traces: list) -> None:
    tr = traces[2]
    n = len(tr.points)
    path = M + url(tr)

    def code(p: str, **params: str) -> str:
        r = client.get(p, params=params)
        assert r.status_code == 400, r.text
        return r.json()["code"]

    assert code(path, timestamps="1;2") == "InvalidOptions"
    assert code(M + "7.4197,43.7311") == "InvalidOptions"
    assert code(path, waypoints=f"0;{n}") == "InvalidOptions"
    assert code(path, timestamps=";".join(str(n - i) for i in range(n))) == "InvalidValue"
    assert code(path, waypoints=f"1;{n - 1}") == "InvalidValue"
    assert code(M + ";".join([f"{x:.6f},{y:.6f}" for x, y in tr.points] * 20)) == "TooBig"
    assert code(M + "7.42,43.70;7.421,43.70") == "NoSegment"
    assert code(path, timestamps=";".join(["7"] * n)) == "NoMatch"


# -- beside osrm-routed (the session's, tests/conftest.py) ------------------------------------------------------------


@pytest.mark.slow
def test_match_beside_osrm(client: httpx.Client, osrm_base: str, bundled_graph: Path) -> None:
    """Twelve noisy traces (15 s apart, 10 m of noise) to both servers: the same codes and keys, and starroute's
    matchings at least as close to the true roads (Newson and Krumm's route mismatch fraction) as osrm-routed's. (Six
    were too few: since the turns became OSRM's (issue 46) the routes sampled changed, and one of the six, through
    the port's gates and round a roundabout, decided the mean alone; over 30 traces starroute's mean stayed about
    0.01 below osrm-routed's, as before.)"""
    from app.engine.data import load

    engine = Engine(load(bundled_graph))
    ours, theirs = [], []
    with httpx.Client(base_url=osrm_base, timeout=60.0) as peer:
        for seed in range(31, 43):
            tr = make_trace(drive(engine, seed), 15, 10.0, np.random.default_rng(seed))
            params = _params(tr, overview="full", geometries="geojson")
            params["radiuses"] = ";".join(["10"] * len(tr.points))
            a = client.get(M + url(tr), params=params).json()
            b = peer.get(M + url(tr), params=params).json()
            assert a["code"] == b["code"] == "Ok"
            assert set(a) == set(b) and set(a["matchings"][0]) == set(b["matchings"][0])
            keys = {k for tp in b["tracepoints"] if tp is not None for k in tp}
            assert all(set(tp) == keys for tp in a["tracepoints"] if tp is not None)
            ours.append(mismatch(tr.truth, [np.array(m["geometry"]["coordinates"]) for m in a["matchings"]]))
            theirs.append(mismatch(tr.truth, [np.array(m["geometry"]["coordinates"]) for m in b["matchings"]]))
    print(f"mismatch fraction: starroute {np.mean(ours):.4f}, osrm-routed {np.mean(theirs):.4f}")
    assert np.mean(ours) <= np.mean(theirs) + 0.01

"""Travel modes (OSRM's `TravelMode`, `arc_mode`): route tables through the real server, per profile with modes.

A bicycle on a footway, on steps or against a oneway is "pushing bike", on `railway=train` a "train", on a ferry a
"ferry"; a car's `route=shuttle_train` is a ferry (car.lua's ferry handler), testbot's rivers and steps go down
(forward) or up; a mode change starts a step of its own (OSRM's "notification"), even on the same name; a waypoint
never lands on a way of a mode the profile does not start in (a bicycle's train or ferry, a car's ferry). Every
table below is osrm-routed's answer on the same map (`python -m harness.osrm_modes`), and its arithmetic is OSRM's
rules: maps are harness/asciimap.py's (one character 100 m, so `a b` is 199.9 m), a segment takes `metres / speed`
rounded to deciseconds: 199.9 m at 15 km/h 48.0 s, pushed at 4 km/h 179.9 s, on steps at 2 km/h 359.9 s; a
bicycle's turn where the mode changes costs (angle / 90)^2 x 6 s, / 1.4 right (4.29: 4.2 s), x 1.4 left (8.4 s;
OSRM's float 8.3999.. truncates to 8.3), counted in the step before the turn (OSRM's `duration_until_turn`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.engine.data import chain_index
from floor.format.arrays import MANIFEST
from floor.format.graph import load_graph
from floor.format.manifest import fingerprint
from floor.format.units import TRAVEL_MODE_CODE, TRAVEL_MODES
from floor.intersections.graph import GuidanceGraph
from harness import api_server, asciimap, osrm_modes
from preprocessing.osm.profiles import bike, car, foot, testbot

Step = tuple[str, str, str, float]  # mode, name, maneuver (type, or "type modifier" for a notification), duration s

BIKE_MAP = """
    a b c d e f
              g
    h i   j k

    l m   n o
"""
BIKE_WAYS = [
    ("ab", {"highway": "residential", "name": "Main Street"}),
    ("bc", {"highway": "footway", "name": "Main Street"}),  # the same name: the mode change makes the step
    ("cd", {"highway": "residential", "name": "Main Street"}),
    ("de", {"highway": "steps"}),
    ("ef", {"highway": "residential", "name": "One Way", "oneway": "yes"}),
    ("fg", {"highway": "residential", "name": "One Way", "oneway": "-1"}),
    ("hi", {"highway": "residential", "name": "West Road"}),
    ("ij", {"railway": "train", "bicycle": "yes", "name": "Line 1"}),
    ("jk", {"highway": "residential", "name": "East Road"}),
    ("lm", {"highway": "cycleway"}),
    ("mn", {"route": "ferry", "name": "The Ferry", "duration": "00:05"}),
    ("no", {"highway": "cycleway"}),
]
ARRIVE = "arrive"


def serve(tmp_path: Path, drawing: str, ways: list, profile: str) -> tuple[asciimap.Built, str]:
    built = asciimap.build(tmp_path, drawing, ways=ways, profile=profile, name=profile)
    return built, api_server.shared(Path(built.graph.path), env={"STARROUTE_MIN_COMPONENT_SIZE": "1"})


def drawn(name: str) -> tuple[str, list, str]:
    """(drawing, ways, profile) of `harness.osrm_modes`'s map `name`: the map its osrm-routed answers come from."""
    m = next(m for m in osrm_modes.MAPS if m.name == name)
    return m.drawing, m.ways, m.profile


def lonlat(built: asciimap.Built, p: str | tuple[str, str, float]) -> str:
    x, y = built.point(p, p, 0.0) if isinstance(p, str) else built.point(*p)
    return f"{x:.6f},{y:.6f}"


def steps(base: str, url_profile: str, built: asciimap.Built, a: str | tuple, b: str | tuple) -> list[Step]:
    r = httpx.get(f"{base}/route/v1/{url_profile}/{lonlat(built, a)};{lonlat(built, b)}", params={"steps": "true"})
    body = r.json()
    assert body["code"] == "Ok", body
    out = []
    for s in body["routes"][0]["legs"][0]["steps"]:
        m = s["maneuver"]
        kind = f"{m['type']} {m['modifier']}" if m["type"] == "notification" else m["type"]
        out.append((s["mode"], s["name"], kind, s["duration"]))
    assert sum(s[3] for s in out) == pytest.approx(body["routes"][0]["duration"], abs=0.05)
    return out


def nearest(base: str, url_profile: str, built: asciimap.Built, p: tuple[str, str, float]) -> tuple[str, list]:
    w = httpx.get(f"{base}/nearest/v1/{url_profile}/{lonlat(built, p)}").json()["waypoints"][0]
    return w["name"], w["location"]


def test_profiles_say_known_modes() -> None:
    """Every mode a profile gives is a stored code, and its start modes are among them."""
    cases = {
        car: [{"highway": "primary"}, {"route": "ferry"}, {"route": "shuttle_train"}],
        foot: [{"highway": "footway"}, {"route": "ferry"}],
        bike: [
            {"highway": "footway"},
            {"highway": "steps"},
            {"railway": "train", "bicycle": "yes"},
            {"route": "ferry"},
            {"highway": "residential", "oneway": "yes"},
        ],  # fmt: skip
        testbot: [{"highway": "river"}, {"highway": "steps"}, {"highway": "primary", "duration": "00:01"}],
    }
    seen = set()
    for prof, tag_sets in cases.items():
        assert set(prof.START_MODES) <= set(TRAVEL_MODES) - {"inaccessible"}, prof.NAME
        for tags in tag_sets:
            res = prof.process_way(tags)
            assert res is not None, (prof.NAME, tags)
            for mode in (res.forward_mode, res.backward_mode):
                assert mode in TRAVEL_MODE_CODE, (prof.NAME, tags, mode)
                seen.add((prof.NAME, mode))
    assert ("car", "ferry") in seen and ("car", "train") not in seen  # a shuttle train is a ferry to OSRM's car
    assert {("bike", m) for m in ("cycling", "pushing_bike", "train", "ferry")} <= seen
    assert {("testbot", m) for m in ("river_down", "river_up", "steps_down", "steps_up", "route")} <= seen


def test_bike_pushing_train_ferry(tmp_path: Path) -> None:
    built, base = serve(tmp_path, BIKE_MAP, BIKE_WAYS, "bike")
    g = built.graph
    assert g.meta.start_modes == ("cycling", "pushing_bike")

    def arc_mode(a: str, b: str) -> str:
        (u,), (v,) = built.nodes(a), built.nodes(b)
        arcs = [e for e in range(int(g.first_out[u]), int(g.first_out[u + 1])) if int(g.arc_head[e]) == v]
        return TRAVEL_MODES[int(g.arc_mode[arcs[0]])]

    assert [arc_mode(*p) for p in ("ab", "bc", "de", "ed", "ef", "fe", "gf", "fg", "ij", "mn")] == [
        "cycling", "pushing_bike", "pushing_bike", "pushing_bike", "cycling", "pushing_bike", "cycling",
        "pushing_bike", "train", "ferry",
    ]  # fmt: skip

    def route(a: str | tuple, b: str | tuple) -> list[Step]:
        return steps(base, "cycling", built, a, b)

    assert route("a", "g") == [
        ("cycling", "Main Street", "depart", 48.0),
        ("pushing bike", "Main Street", "notification straight", 179.9),  # a footway of the same name
        ("cycling", "Main Street", "notification straight", 48.0),
        ("pushing bike", "", "notification straight", 359.9),  # steps
        ("cycling", "One Way", "notification straight", 52.2),  # 48.0 + the right turn onto pushing, 4.2
        ("pushing bike", "One Way", "notification right", 90.0),  # against a oneway (100 m)
        ("pushing bike", "One Way", ARRIVE, 0.0),
    ]
    assert route("g", "a") == [
        # 24.0 + the left turn onto pushing: 6 x 1.4 = 8.3999.. s truncates to 8.3, as osrm-routed's
        ("cycling", "One Way", "depart", 32.3),
        ("pushing bike", "One Way", "notification left", 539.8),  # against the oneway 179.9, then steps 359.9
        ("cycling", "Main Street", "notification straight", 48.0),
        ("pushing bike", "Main Street", "notification straight", 179.9),
        ("cycling", "Main Street", "notification straight", 48.0),
        ("cycling", "Main Street", ARRIVE, 0.0),
    ]
    assert route(("a", "b", 0.5), ("c", "d", 0.5)) == [
        ("cycling", "Main Street", "depart", 24.0),
        ("pushing bike", "Main Street", "notification straight", 179.9),
        ("cycling", "Main Street", "notification straight", 24.0),
        ("cycling", "Main Street", ARRIVE, 0.0),
    ]
    assert route(("f", "e", 0.3), "a")[0] == ("pushing bike", "One Way", "depart", 485.8)  # starts pushing
    train = [
        ("cycling", "West Road", "depart", 48.0),
        ("train", "Line 1", "notification straight", 143.9),
        ("cycling", "East Road", "notification straight", 48.0),
        ("cycling", "East Road", ARRIVE, 0.0),
    ]
    assert route("h", "k") == train  # 399.9 m of train at 10 km/h: 143.9 s
    assert route("l", "o") == [
        ("cycling", "", "depart", 48.0),
        ("ferry", "The Ferry", "notification straight", 300.0),
        ("cycling", "", "notification straight", 48.0),
        ("cycling", "", ARRIVE, 0.0),
    ]
    # no start on a train or a ferry (bicycle.lua's allowed_start_modes): the nearest way a bicycle starts on
    assert nearest(base, "cycling", built, ("i", "j", 0.4)) == ("West Road", [1.001796, -0.001808])
    assert nearest(base, "cycling", built, ("m", "n", 0.6)) == ("", [1.005388, -0.003616])
    assert nearest(base, "cycling", built, ("b", "c", 0.5)) == ("Main Street", [1.002694, 0.0])  # pushing is one
    # snapped onto West Road's end, the leg leaves by the train: OSRM drops the empty first step, so it departs on it
    assert route(("i", "j", 0.4), "k") == [("train", "Line 1", "depart", 143.9)] + train[2:]


def test_car_ferry_and_shuttle_train(tmp_path: Path) -> None:
    built, base = serve(tmp_path, *drawn("car-ferry-train"))
    assert steps(base, "driving", built, "a", "d") == [
        ("driving", "West Road", "depart", 11.1),  # 199.9 m at 65 km/h
        ("ferry", "The Ferry", "notification straight", 300.0),
        ("driving", "East Road", "notification straight", 11.1),
        ("driving", "East Road", ARRIVE, 0.0),
    ]
    assert steps(base, "driving", built, "e", "h") == [
        ("driving", "South West", "depart", 13.1),  # 199.9 m at 55 km/h
        ("ferry", "Shuttle", "notification straight", 143.9),  # a shuttle train is a ferry (399.9 m at 10 km/h)
        ("driving", "South East", "notification straight", 13.1),
        ("driving", "South East", ARRIVE, 0.0),
    ]
    assert nearest(base, "driving", built, ("b", "c", 0.4)) == ("West Road", [1.001796, 0.0])
    assert nearest(base, "driving", built, ("f", "g", 0.6)) == ("South East", [1.005388, -0.001808])


def test_foot_ferry(tmp_path: Path) -> None:
    built, base = serve(tmp_path, *drawn("foot-ferry"))
    assert steps(base, "walking", built, "d", "a") == [
        ("walking", "Quay", "depart", 143.9),  # 199.9 m at 5 km/h
        ("ferry", "The Ferry", "notification straight", 300.0),  # the same name either side: the mode says it
        ("walking", "Quay", "notification straight", 143.9),
        ("walking", "Quay", ARRIVE, 0.0),
    ]
    assert nearest(base, "walking", built, ("b", "c", 0.4)) == ("Quay", [1.001796, 0.0])


def test_testbot_rivers_steps_routes(tmp_path: Path) -> None:
    built, base = serve(tmp_path, *drawn("testbot-modes"))
    assert steps(base, "testbot", built, "a", "e") == [
        ("driving", "Road", "depart", 20.0),  # 36 km/h
        ("river downstream", "River", "notification straight", 20.0),  # 24 x 1.5 km/h
        ("steps down", "Steps", "notification straight", 120.0),  # 6 km/h
        ("route", "Route", "notification straight", 120.0),  # its duration
        ("route", "Route", ARRIVE, 0.0),
    ]
    assert steps(base, "testbot", built, ("d", "e", 0.5), "a") == [  # testbot starts anywhere, a route too
        ("route", "Route", "depart", 60.0),
        ("steps up", "Steps", "notification straight", 120.0),
        ("river upstream", "River", "notification straight", 45.0),  # 24 / 1.5 km/h
        ("driving", "Road", "notification straight", 20.0),
        ("driving", "Road", ARRIVE, 0.0),
    ]


def test_graph_without_modes_derives_them(tmp_path: Path) -> None:
    """A graph built before `arc_mode` loads: its modes come from the ferry flag and the profile, as before."""
    built = asciimap.build(tmp_path, BIKE_MAP, ways=BIKE_WAYS, profile="bike", name="bike")
    old = tmp_path / "old"
    shutil.copytree(built.graph.path, old)
    (old / "arc_mode.npy").unlink()
    mf = json.loads((old / MANIFEST).read_text())
    del mf["arrays"]["arc_mode"], mf["start_modes"]
    mf["fingerprint"] = fingerprint(mf)
    (old / MANIFEST).write_text(json.dumps(mf))
    g = load_graph(old)
    assert not g.has("arc_mode") and g.meta.start_modes is None
    gg = GuidanceGraph(g, "cycling")
    modes = {gg.arc_data(a).mode for a in range(g.num_arcs)}
    assert modes == {"cycling", "ferry"}
    ci = chain_index(g)
    ferry = np.asarray(g.arc_flags)[np.maximum(ci.fwd_arc, ci.bwd_arc)] & 1
    assert np.array_equal(ci.snappable, ci.used & (ferry == 0))  # the train is a start point, as before

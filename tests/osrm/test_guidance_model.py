"""The guidance model in-process: built only when steps are asked for, bounded caches that do not change answers,
the bearing classes of intersections, and the per-arc guidance arrays the pipeline writes (format 3).

The answers themselves are specified route by route in tests/osrm/test_guidance_http.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

import app.engine.guidance as guidance
from app.api.osrm.dispatch import handle
from app.api.service import Service
from app.engine.guidance import classify
from app.settings import Settings
from floor.format.arrays import FORMAT_VERSION
from floor.format.graph import load_graph
from floor.format.units import FLAG_CIRCULAR, FLAG_SPLIT, FLAG_TUNNEL
from floor.intersections.intersection import Road
from harness import asciimap
from preprocessing.pipeline import preprocess

# A small town: a rotary, a street with turn lanes, a street through a tunnel, a signed motorway exit. The
# expected answers below are osrm-routed's (car.lua) on the same OSM data.
MAP = """
        a             s
        b
    h g   c d - - - - e - - - - f
        i             |
        j             k
                      |
                      l

    m - - - - - n - - o - - - - p
                       \\
                        q - - - r
"""
WAYS = [
    ("ab", {"highway": "primary", "name": "North"}),
    ("cde", {"highway": "primary", "name": "East", "turn:lanes:forward": "left|through;right"}),
    ("ef", {"highway": "primary", "name": "East"}),
    ("se", {"highway": "secondary", "name": "Cross"}),
    ("ek", {"highway": "secondary", "name": "Cross", "tunnel": "yes", "layer": "-1"}),
    ("kl", {"highway": "secondary", "name": "Cross"}),
    ("gh", {"highway": "primary", "name": "West"}),
    ("ij", {"highway": "primary", "name": "South"}),
    ("bgicb", {"highway": "primary", "junction": "circular", "name": "Star"}),
    ("mnop", {"highway": "motorway", "name": "A1", "oneway": "yes"}),
    ("oqr", {"highway": "motorway_link", "oneway": "yes", "destination": "Porto", "junction:ref": "7"}),
]


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("guidance-model")
    osm = asciimap.write_osm(tmp / "town.osm", MAP, WAYS, grid_m=40.0)
    return preprocess(osm, tmp / "graph", profile="car", ch=True, landmarks=0, force=True, quiet=True)


def service(graph_dir: Path) -> Service:
    svc = Service(Settings(graph_dir=graph_dir, min_component_size=1))
    svc.open()
    return svc


def at(letter: str) -> str:
    lon, lat = asciimap.coordinates(MAP, 40.0)[letter]
    return f"{lon / 1e7:.7f},{lat / 1e7:.7f}"


def route(svc: Service, *letters: str, steps: bool = True) -> dict:
    path = "/route/v1/driving/" + ";".join(at(x) for x in letters)
    status, body = asyncio.run(handle(svc, path, f"steps={'true' if steps else 'false'}"))
    assert status == 200, body
    return json.loads(body)


REQUESTS = [("a", "f"), ("a", "j"), ("h", "d"), ("c", "s"), ("m", "r"), ("e", "h"), ("a", "k", "l"), ("s", "l")]


def test_guide_is_built_only_for_steps(graph_dir: Path) -> None:
    svc = service(graph_dir)
    route(svc, "a", "f", steps=False)
    assert svc.opened.roads._guide is None  # routing alone never builds the intersection model
    route(svc, "a", "f")
    assert svc.opened.roads._guide is not None


def test_bounded_caches_give_the_same_answers(graph_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [route(service(graph_dir), *r)["routes"][0]["legs"] for r in REQUESTS]
    monkeypatch.setattr(guidance, "_CACHE_LIMIT", 2)  # forget everything every few junctions
    svc = service(graph_dir)
    got = [route(svc, *r)["routes"][0]["legs"] for r in REQUESTS]
    assert got == expected
    assert len(svc.opened.roads.guide._turns) <= 3


def test_town_answers(graph_dir: Path) -> None:
    svc = service(graph_dir)

    def steps(*letters: str) -> list[dict]:
        return [s for leg in route(svc, *letters)["routes"][0]["legs"] for s in leg["steps"]]

    # the rotary: its name as rotary_name, the exit number, the name of the road taken out
    r = steps("a", "j")
    assert [(s["maneuver"]["type"], s["maneuver"].get("modifier"), s["name"]) for s in r] == [
        ("depart", None, "North"),
        ("rotary", "right", "South"),
        ("exit rotary", "right", "South"),
        ("arrive", None, "South"),
    ]
    assert r[1]["rotary_name"] == "Star" and r[1]["maneuver"]["exit"] == 2 and r[2]["maneuver"]["exit"] == 2
    # the tunnel keeps the street one step; its class shows at the junction it starts from
    r = steps("e", "l")
    assert [s["name"] for s in r] == ["Cross", "Cross"]
    assert [i.get("classes") for i in r[0]["intersections"]] == [["tunnel"], None]
    # the exit: off ramp with its number and destination, which the arrival keeps
    r = steps("m", "r")
    assert [(s["maneuver"]["type"], s["name"], s.get("exits"), s.get("destinations")) for s in r] == [
        ("depart", "A1", None, None),
        ("off ramp", "", "7", "Porto"),
        ("arrive", "", "7", "Porto"),
    ]
    assert r[0]["intersections"][0]["classes"] == ["motorway"]
    # turn lanes of East (left | through;right) at e: the left turn uses the left lane
    r = steps("c", "s")
    assert [(s["maneuver"]["type"], s["maneuver"].get("modifier")) for s in r][1] == ("turn", "left")
    assert r[1]["intersections"][0]["lanes"] == [
        {"indications": ["left"], "valid": True},
        {"indications": ["straight", "right"], "valid": False},
    ]
    # passing straight through e (no step there): the lanes show in the intersection passed
    r = steps("c", "f")
    assert len(r) == 2 and [i.get("lanes") for i in r[0]["intersections"]] == [
        None,
        [{"indications": ["left"], "valid": False}, {"indications": ["straight", "right"], "valid": True}],
    ]


def test_pipeline_writes_guidance_arrays(graph_dir: Path) -> None:
    g = load_graph(graph_dir)
    assert FORMAT_VERSION >= 3  # the guidance arrays arrived with format 3
    lanes = np.asarray(g.arc_lanes)
    signs = np.asarray(g.arc_signs)
    count = np.asarray(g.arc_lane_count)
    assert lanes.dtype == np.int32 and lanes.shape == np.asarray(g.arc_head).shape
    texts = {g.string(int(s)) for s in np.unique(lanes) if s}
    assert texts == {"left|through;right"}  # forward only: the backward direction of cde has none
    assert {g.string(int(s)) for s in np.unique(signs) if s} == {"Porto\x1f7\x1f"}
    assert int(count.max()) == 2  # deduced from the two turn lanes
    flags = np.asarray(g.arc_flags)
    assert (flags & FLAG_TUNNEL).any() and (flags & FLAG_CIRCULAR).any()
    # cde is split (its directions have different turn lanes), nothing else is
    split = np.flatnonzero(flags & FLAG_SPLIT)
    assert {g.string(int(g.arc_name[a])) for a in split} == {"East"} and len(split) == 2  # c-e, both ways


def _road(bearing: float, entry: bool = True) -> Road:
    return Road(0, bearing, bearing, 10.0, entry, 0.0)


@pytest.mark.parametrize(
    ("bearings", "expected"),
    [
        ([181.0, 0.4, 89.0], ([0, 90, 180], [True, True, True])),  # distinct 15-degree classes
        ([181.0, 2.0, 6.0, 270.0], ([2, 6, 181, 270], [True, True, True, True])),  # two in one class: exact
        ([355.0, 90.0], ([0, 90], [True, True])),  # 355 rounds into the 0-degree class
    ],
)
def test_classify_bearing_classes(bearings: list[float], expected: tuple[list[int], list[bool]]) -> None:
    assert classify([_road(b) for b in bearings]) == expected

"""OSRM-style route tables through the real server, one drawn map per profile: route (step names), modes,
distance, time, speed and the per-segment `annotations=speed`; every row is osrm-routed's answer on the same map.

The arithmetic is OSRM's (harness/asciimap.py maps: one character 100 m, `a b` 199.9 m). Car: a `primary` with
`maxspeed=50` runs at 40 km/h (car.lua's 0.8 x maxspeed), 18.0 s a segment (11.1 m/s), and the signal at b costs
2 s: a -> d 3 x 18 + 2 = 56 s. Bike: 15 km/h, 48.0 s a segment (4.2 m/s); a signal inside a way costs OSRM's fake
turn through the node it compresses away, (180 / 90)^2 x 6 / 1.4 = 17.1 s, plus 2 s: a -> d 144 + 19.1 = 163.1 s;
a footway is pushed at 4 km/h (1.1 m/s, "pushing bike"), a oneway pushed back. Foot: 5 km/h (1.4 m/s), steps too,
sand at half; a ferry's `duration` of 10 min. Testbot: primary 36 km/h (10 m/s), a signal 7 s, `maxspeed=10`.
Annotation speeds come from each segment's own time, without turns or node obstacles, as OSRM's do.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from harness import api_server, asciimap
from harness.osrm_modes import URL_PROFILE

DRAWING = """
    a b c d
        e
    f g h i
"""
MAPS = {
    "car": (
        [
            ("abcd", {"highway": "primary", "name": "Main Street", "maxspeed": "50"}),
            ("de", {"highway": "residential", "name": "Side Road"}),
            ("ei", {"highway": "residential", "name": "Side Road", "surface": "gravel"}),
            ("fghi", {"highway": "secondary", "name": "Low Road", "maxspeed": "30 mph"}),
            ("af", {"route": "ferry", "name": "Ferry", "duration": "00:10"}),
        ],
        {"b": {"highway": "traffic_signals"}, "h": {"highway": "stop"}},
    ),
    "bike": (
        [
            ("abcd", {"highway": "residential", "name": "Main Street"}),
            ("de", {"highway": "footway", "name": "Side Path"}),
            ("ei", {"highway": "cycleway", "name": "Side Path", "surface": "gravel"}),
            ("fghi", {"highway": "residential", "name": "Low Road", "oneway": "yes"}),
            ("af", {"route": "ferry", "name": "Ferry", "duration": "00:10"}),
        ],
        {"b": {"highway": "traffic_signals"}, "g": {"highway": "traffic_signals"}},
    ),
    "foot": (
        [
            ("abcd", {"highway": "residential", "name": "Main Street"}),
            ("de", {"highway": "steps", "name": "Stairs"}),
            ("ei", {"highway": "footway", "name": "Stairs", "surface": "sand"}),
            ("fghi", {"highway": "primary", "name": "Low Road", "oneway": "yes"}),
            ("af", {"route": "ferry", "name": "Ferry", "duration": "00:10"}),
        ],
        {"b": {"highway": "traffic_signals"}, "g": {"barrier": "gate"}},
    ),
    "testbot": (
        [
            ("abcd", {"highway": "primary", "name": "Main Street"}),
            ("de", {"highway": "secondary", "name": "Side Road"}),
            ("ei", {"highway": "tertiary", "name": "Side Road", "maxspeed": "10"}),
            ("fghi", {"highway": "primary", "name": "Low Road", "oneway": "yes"}),
            ("af", {"route": "ferry", "name": "Ferry", "duration": "00:10"}),
        ],
        {"b": {"highway": "traffic_signals"}},
    ),
}
# from, to, route, modes, distance m, time s, speed km/h, annotation speeds m/s (osrm-routed's answers)
TABLES = {
    "car": [
        ("a", "d", "Main Street,Main Street", "driving,driving", 599.8, 56.0, 39, [11.1, 11.1, 11.1]),
        ("a", "i", "Main Street,Side Road,Side Road", "driving,driving,driving", 1046.8, 120.4, 31,
         [11.1, 11.1, 11.1, 6.9, 6.9]),
        ("i", "f", "Low Road,Low Road", "driving,driving", 599.8, 57.8, 37, [10.7, 10.7, 10.7]),
        ("f", "a", "Low Road,Side Road,Main Street,Main Street", "driving,driving,driving,driving", 1646.6, 178.2, 33,
         [10.7, 10.7, 10.7, 6.9, 6.9, 11.1, 11.1, 11.1]),
        ("b", "c", "Main Street,Main Street", "driving,driving", 199.9, 20.0, 36, [11.1]),
    ],
    "bike": [
        ("a", "d", "Main Street,Main Street", "cycling,cycling", 599.8, 163.1, 13, [4.2, 4.2, 4.2]),
        ("a", "i", "Main Street,Side Path,Side Path,Side Path", "cycling,pushing bike,cycling,cycling", 1046.8, 527.4,
         7, [4.2, 4.2, 4.2, 1.1, 1.7]),
        ("i", "f", "Low Road,Low Road", "pushing bike,pushing bike", 599.8, 558.8, 4, [1.1, 1.1, 1.1]),
        ("f", "i", "Low Road,Low Road", "cycling,cycling", 599.8, 163.1, 13, [4.2, 4.2, 4.2]),
        ("b", "c", "Main Street,Main Street", "cycling,cycling", 199.9, 67.1, 11, [4.2]),
    ],
    "foot": [
        ("a", "d", "Main Street,Main Street", "walking,walking", 599.8, 433.7, 5, [1.4, 1.4, 1.4]),
        ("a", "i", "Main Street,Stairs,Stairs", "walking,walking,walking", 1046.8, 916.5, 4,
         [1.4, 1.4, 1.4, 1.4, 0.7]),
        ("i", "f", "Low Road,Low Road", "walking,walking", 599.8, 431.7, 5, [1.4, 1.4, 1.4]),
        ("f", "a", "Ferry,Ferry", "ferry,ferry", 199.9, 600.0, 1, [0.3]),
        ("b", "c", "Main Street,Main Street", "walking,walking", 199.9, 145.9, 5, [1.4]),
    ],
    "testbot": [
        ("a", "d", "Main Street,Main Street", "driving,driving", 599.8, 67.0, 32, [10.0, 10.0, 10.0]),
        ("a", "i", "Main Street,Side Road,Side Road", "driving,driving,driving", 1046.8, 192.2, 20,
         [10.0, 10.0, 10.0, 5.0, 2.8]),
        ("i", "f", "Side Road,Main Street,Ferry,Ferry", "driving,driving,route,route", 1246.8, 792.2, 6,
         [2.8, 5.0, 10.0, 10.0, 10.0, 0.3]),
        ("f", "i", "Low Road,Low Road", "driving,driving", 599.8, 60.0, 36, [10.0, 10.0, 10.0]),
        ("b", "c", "Main Street,Main Street", "driving,driving", 199.9, 27.0, 27, [10.0]),
    ],
}  # fmt: skip


@pytest.mark.parametrize("profile", sorted(MAPS))
def test_route_table(profile: str, tmp_path: Path) -> None:
    ways, nodes = MAPS[profile]
    built = asciimap.build(tmp_path, DRAWING, ways=ways, nodes=nodes, profile=profile, name=profile)
    base = api_server.shared(Path(built.graph.path), env={"STARROUTE_MIN_COMPONENT_SIZE": "1"})
    got = []
    for a, b, *_ in TABLES[profile]:
        pts = ";".join("{:.6f},{:.6f}".format(*built.point(p, p, 0.0)) for p in (a, b))
        body = httpx.get(
            f"{base}/route/v1/{URL_PROFILE[profile]}/{pts}", params={"steps": "true", "annotations": "speed"}
        ).json()
        assert body["code"] == "Ok", body
        r = body["routes"][0]
        steps = r["legs"][0]["steps"]
        got.append(
            (
                a,
                b,
                ",".join(s["name"] for s in steps),
                ",".join(s["mode"] for s in steps),
                round(r["distance"], 1),
                round(r["duration"], 1),
                round(r["distance"] / r["duration"] * 3.6),
                [round(v, 1) for v in r["legs"][0]["annotation"]["speed"]],
            )
        )
    assert got == TABLES[profile]

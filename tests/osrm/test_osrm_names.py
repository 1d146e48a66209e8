"""Names as OSRM gives them: route tables through the real server, each osrm-routed's answer on the same map.

lib/way_handlers.lua `names`: an unnamed sidewalk or sidepath (a footway, cycleway or path with `footway=sidewalk`,
`cycleway=sidepath` or `is_sidepath=yes`) takes its street's name from `is_sidepath:of:name` or `street:name`; a
`name` wins, and another kind of way (a service road) never borrows one. `foot=use_sidepath` and
`bicycle=use_sidepath` close a road to that profile (a sidepath is mapped and must be used). Ways sharing a segment
keep one per direction (`ExtractionContainers`): the least weight, ties to the lexicographically smallest name by
its UTF-8 bytes, unnamed last (OSRM's features/testbot/basic.feature), then to a way open both ways (OSRM's one
two-way edge). Each table was checked against osrm-routed on
the same drawing (harness/asciimap.py: one character 100 m, `a b` 199.9 m); walking 5 km/h takes 143.9 s there.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np

from floor.intersections.graph import GuidanceGraph
from harness import api_server, asciimap

Step = tuple[str, str, str, float]  # name, maneuver type, modifier, duration s


def route(base: str, url_profile: str, built: asciimap.Built, a: str, b: str) -> list[Step] | str:
    pts = ";".join("{:.6f},{:.6f}".format(*built.point(p, p, 0.0)) for p in (a, b))
    body = httpx.get(f"{base}/route/v1/{url_profile}/{pts}", params={"steps": "true"}).json()
    if body["code"] != "Ok":
        return str(body["code"])
    return [
        (s["name"], s["maneuver"]["type"], s["maneuver"].get("modifier", ""), s["duration"])
        for s in body["routes"][0]["legs"][0]["steps"]
    ]


def serve(tmp_path: Path, drawing: str, ways: list, profile: str) -> tuple[asciimap.Built, str]:
    built = asciimap.build(tmp_path, drawing, ways=ways, profile=profile, name=profile)
    return built, api_server.shared(Path(built.graph.path), env={"STARROUTE_MIN_COMPONENT_SIZE": "1"})


def test_foot_sidepath_names_and_use_sidepath(tmp_path: Path) -> None:
    built, base = serve(
        tmp_path,
        """
        a b c d e
        f g h i j
        """,
        [
            ("ab", {"highway": "footway", "footway": "sidewalk", "street:name": "Main Street"}),
            ("bc", {"highway": "footway", "is_sidepath": "yes", "is_sidepath:of:name": "Side Street"}),
            ("cd", {"highway": "footway"}),  # no sidepath tags: stays unnamed (guidance keeps the name before)
            ("de", {"highway": "path", "footway": "sidewalk", "street:name": "Main Street", "name": "Own"}),
            ("fg", {"highway": "residential", "foot": "use_sidepath"}),
            ("gh", {"highway": "service", "footway": "sidewalk", "street:name": "Nope"}),
            ("af", {"highway": "footway"}),
            ("bg", {"highway": "footway"}),
            ("hi", {"highway": "residential"}),
            ("ij", {"highway": "residential"}),
            ("ch", {"highway": "footway"}),
        ],
        "foot",
    )
    assert route(base, "walking", built, "a", "e") == [
        ("Main Street", "depart", "", 143.9),
        ("Side Street", "new name", "straight", 287.8),
        ("Own", "new name", "straight", 143.9),
        ("Own", "arrive", "", 0.0),
    ]
    # f -> g walks round by a and b: the road f-g is for its sidepath's users only
    assert route(base, "walking", built, "f", "g") == [
        ("", "depart", "", 72.0),
        ("Main Street", "new name", "right", 143.9),
        ("", "turn", "right", 72.0),
        ("", "arrive", "", 0.0),
    ]
    assert route(base, "walking", built, "g", "h") == [("", "depart", "", 143.9), ("", "arrive", "", 0.0)]


def test_bike_sidepath_names_and_use_sidepath(tmp_path: Path) -> None:
    built, base = serve(
        tmp_path,
        """
        a b c d
        e f g h
        """,
        [
            ("ab", {"highway": "cycleway", "cycleway": "sidepath", "is_sidepath:of:name": "Main Street"}),
            ("bc", {"highway": "cycleway", "street:name": "Side Street"}),  # not marked a sidepath: unnamed
            ("cd", {"highway": "path", "is_sidepath": "yes", "street:name": "Side Street"}),
            ("ef", {"highway": "residential", "bicycle": "use_sidepath"}),
            ("ae", {"highway": "cycleway"}),
            ("bf", {"highway": "cycleway"}),
            ("fg", {"highway": "residential"}),
            ("gh", {"highway": "residential"}),
            ("dh", {"highway": "cycleway"}),
        ],
        "bike",
    )
    assert route(base, "cycling", built, "a", "d") == [
        ("Main Street", "depart", "", 96.0),
        ("Side Street", "new name", "straight", 55.4),
        ("Side Street", "arrive", "", 0.0),
    ]
    assert route(base, "cycling", built, "e", "f") == [
        ("", "depart", "", 28.2),
        ("Main Street", "new name", "right", 52.2),
        ("", "turn", "right", 24.0),
        ("", "arrive", "", 0.0),
    ]


def test_shared_segments_keep_the_least_weight_and_the_smallest_name(tmp_path: Path) -> None:
    built, base = serve(
        tmp_path,
        """
        a b c
        d e
        """,
        [
            ("ab", {"highway": "primary"}),
            ("ab", {"highway": "primary", "name": "Αβγ"}),
            ("ab", {"highway": "primary"}),
            ("ab", {"highway": "primary", "name": "Abc"}),
            ("ab", {"highway": "primary"}),
            ("ab", {"highway": "primary", "name": "Абв"}),
            ("bc", {"highway": "primary", "name": "Ηθι"}),
            ("bc", {"highway": "primary", "name": "Δεζ"}),
            ("bc", {"highway": "primary", "name": "Где"}),
            ("de", {"highway": "tertiary"}),
            ("de", {"highway": "primary"}),
            ("de", {"highway": "secondary"}),
        ],
        "testbot",
    )
    assert route(base, "testbot", built, "a", "c") == [
        ("Abc", "depart", "", 20.0),
        ("Δεζ", "new name", "straight", 20.0),
        ("Δεζ", "arrive", "", 0.0),
    ]
    assert route(base, "testbot", built, "c", "a") == [
        ("Δεζ", "depart", "", 20.0),
        ("Abc", "new name", "straight", 20.0),
        ("Abc", "arrive", "", 0.0),
    ]
    assert route(base, "testbot", built, "d", "e") == [("", "depart", "", 20.0), ("", "arrive", "", 0.0)]
    # one arc a direction stays of each shared segment: a-b 6 ways, b-c 3, d-e 3
    assert built.graph.manifest["report"]["parallel_segments_dropped"] == 2 * (5 + 2 + 2)


def test_a_twoway_way_tying_with_a_oneway_on_a_shared_segment_is_the_one_edge(tmp_path: Path) -> None:
    """OSRM merges such a pair into one two-way edge (features/guidance/turn-angles.feature "Merging at Turn - Don't
    report u-turn"): the oneway's equal arc goes, the nodes between the shared segments stay compressible, and the
    graph is the one the two-way way alone gives, so guidance sees no intersection there and every cost is the same."""
    drawing = """
        a b c d
        """
    main = {"highway": "secondary", "name": "Main"}
    ways = [("ab", main), ("bc", {**main, "oneway": "yes"}), ("bc", main), ("cd", main)]
    twin = asciimap.build(tmp_path, drawing, ways=ways, profile="car", name="twin")
    plain = asciimap.build(tmp_path, drawing, ways=[w for i, w in enumerate(ways) if i != 1], profile="car", name="one")
    assert twin.graph.manifest["report"]["parallel_segments_dropped"] == 1
    for key in ("arc_tail", "arc_head", "arc_weight", "arc_duration", "node_flags", "eb_arc_weight", "eb_arc_turn"):
        assert np.array_equal(np.asarray(twin.graph.arrays[key]), np.asarray(plain.graph.arrays[key])), key
    gg = GuidanceGraph(twin.graph)
    assert [v for v in range(len(twin.graph.node_lon)) if gg.is_intersection(v)] == twin.nodes("a") + twin.nodes("d")
    env = {"STARROUTE_MIN_COMPONENT_SIZE": "1"}
    steps = [route(api_server.shared(Path(b.graph.path), env=env), "driving", b, "a", "d") for b in (twin, plain)]
    assert steps[0] == steps[1] == [("Main", "depart", "", 39.3), ("Main", "arrive", "", 0.0)]

"""OSRM's behaviour in its last corners (issue 46), as map tables through the real server: every row is osrm-routed
26.10's answer on the same drawn map (step names, distance m, duration s, weight).

Each case is a small map of the kind OSRM's own feature files draw (`harness/asciimap.py`), preprocessed by starroute
and served as a client sees it; the rows were recorded from osrm-routed (the `osrm-bindings` wheel) on the same OSM
file. `test_rows_are_osrm_routeds` checks the recordings against a live osrm-routed where it can be installed;
`python -m tests.osrm.test_osrm_parity [CASE ...]` prints osrm-routed's rows to paste when a case changes.

Groups:
- turns at junctions as OSRM's intersection model sees them: perceived bearings a few metres from a junction (a
  hairpin or a tunnel bend can be a u-turn there), the nodes OSRM's graph compressor keeps (one of two roads between
  the same junctions keeps a node), u-turns at turning circles and only where one road arrives.
- snapping: no waypoint on a private service road (unless `snapping=any`; `/nearest` never), a phantom's share of
  its segment along OSRM's edge.
- node penalties: car.lua's conditional stop signs (`stop=minor`, a stop sign with no direction near a junction);
  a segment speed file keeps a signal's penalty in its direction (`test_speed_file_keeps_signals`).
- access: lib/access.lua's `;`-lists (car, bicycle, foot) and car.lua's access values; bicycle.lua's closed
  directions and carriageways whose cycleway is mapped apart, `cycleway:both`.
- turn restrictions: `restriction:bicycle` and `except=` for bicycles (items as written), none for foot, a car
  `only_*` over two via ways.
- smaller: a ferry's duration, car.lua's access with conditional values, gates with access tags, surface and
  maxspeed; bicycle pushing on a pedestrian area and `use_sidepath`; foot over a bridge without a shared node and a
  name suffix change.
- via points exactly on a node (OSRM's candidates: one phantom per road there): `continue_straight` at 3-way and
  4-way junctions, a dead end and a node inside a straight road (car, testbot); the legs' rounded distances summed.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from harness import api_server, asciimap

Point = str | tuple[str, str, float]  # a letter, or part t of the straight line from one letter to another
Answer = tuple[str, float, float, float] | str  # (step names, distance m, duration s, weight), or the error code
URL_PROFILE = {"car": "driving", "bike": "cycling", "foot": "walking", "testbot": "testbot"}


@dataclass(frozen=True)
class Row:
    """One request (from, to, more query parameters, a via point if any) and osrm-routed's answer to it (step names
    of every leg)."""

    a: Point
    b: Point
    query: str
    expected: Answer
    via: Point | None = None


@dataclass(frozen=True)
class Case:
    """A drawn map for one profile and its rows."""

    drawing: str
    ways: Sequence[tuple[str, Mapping[str, str]]]
    rows: Sequence[Row]
    profile: str = "car"
    nodes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    grid_m: float = 100.0
    relations: Sequence = ()
    known_gap: str = ""  # why starroute does not answer as osrm-routed yet (the case then fails strictly as xfail)


def _via(a: str, via: str, b: str) -> list[tuple[str, str, str]]:
    """A restriction's members: from way `a`, via node `via`, to way `b`."""
    return [("way", a, "from"), ("node", via, "via"), ("way", b, "to")]


SECONDARY_ONEWAY = {"highway": "secondary", "oneway": "yes"}
TERTIARY_ONEWAY = {"highway": "tertiary", "oneway": "yes", "name": "Grace"}
STREET = {"highway": "residential", "name": "Street"}

CASES: dict[str, Case] = {
    # Monaco's Tunnel Rocher Antoine 1er, to the metre: the road bends back within 10 m of the junction b, so OSRM's
    # perceived bearing (the representative coordinate) makes going on along it a sharp turn, 17 s more than the
    # bearing of its first shape point would
    "tunnel_hairpin": Case(
        drawing=asciimap.draw(
            {
                "a": (-20, -4),
                "b": (0, 0),
                "c": (3, 3),
                "d": (2, 5),
                "e": (-2, 6),
                "f": (-16, 4),
                "g": (11, 18),
                "h": (20, 25),
                "i": (2, 10),
            }
        ),
        grid_m=1.0,
        ways=[
            ("abcde", {**SECONDARY_ONEWAY, "name": "Antoine"}),
            ("bgh", {"highway": "residential", "oneway": "yes", "name": "Branch"}),
            ("ief", {**SECONDARY_ONEWAY, "name": "Nogues"}),
        ],
        rows=[
            Row("a", "f", "", ("Antoine,Nogues,Nogues", 40.8, 20.9, 20.9)),
            Row("a", "h", "", ("Antoine,Branch,Branch", 49.3, 14.9, 14.9)),
            Row("i", "f", "", ("Nogues,Nogues", 18.0, 1.1, 1.1)),
        ],
    ),
    # hairpins of a few metres: the angles of the roads' perceived bearings, not of their first shape points
    "hairpin": Case(
        drawing="""
            g  e d
                 c
            a    b     f
            """,
        grid_m=3.0,
        ways=[
            ("abcdeg", {"highway": "residential", "name": "Loop"}),
            ("bf", {"highway": "residential", "name": "East"}),
        ],
        rows=[
            Row("a", "g", "", ("Loop,Loop,Loop", 34.9, 14.4, 14.4)),
            Row("a", "f", "", ("Loop,East", 31.8, 4.6, 4.6)),
            Row("g", "a", "", ("Loop,Loop,Loop", 34.9, 12.4, 12.4)),
            Row("f", "g", "", ("East,Loop,Loop", 37.8, 5.4, 5.4)),
        ],
    ),
    # Monaco's Avenue Princesse Grace: two oneways from j to k; OSRM's compressor keeps a node (W, the highest id
    # on the road whose highest id comes last) on jWXYZk, which makes that road's bearing at j and its turn costs
    "parallel_oneways": Case(
        drawing=asciimap.draw(
            {
                "a": (-6, 0),
                "j": (0, 0),
                "W": (3, 3),
                "X": (5, 4),
                "Y": (6, 8),
                "Z": (5, 11),
                "k": (4, 13),
                "b": (8, 0),
                "c": (13, 2),
                "d": (17, 4),
                "e": (23, 7),
                "f": (28, 11),
                "g": (22, 10),
                "h": (16, 10),
                "i": (11, 11),
                "o": (-10, 14),
                "p": (-20, 15),
            }
        ),
        grid_m=1.0,
        ways=[
            ("aj", TERTIARY_ONEWAY),
            ("jWXYZk", TERTIARY_ONEWAY),
            ("jbcdef", TERTIARY_ONEWAY),
            ("fghik", TERTIARY_ONEWAY),
            ("kop", TERTIARY_ONEWAY),
        ],  # fmt: skip
        rows=[
            Row("a", "k", "", ("Grace,Grace", 55.4, 5.0, 5.0)),
            Row("a", "p", "", ("Grace,Grace", 76.9, 7.1, 7.1)),
            Row("a", ("W", "X", 0.5), "", ("Grace,Grace,Grace", 10.4, 5.0, 5.0)),
            Row("a", ("c", "d", 0.5), "", ("Grace,Grace", 19.4, 1.7, 1.7)),
        ],
    ),
    # a turning circle is a node OSRM keeps, and turns back there (car.lua's obstacles)
    "turning_circle": Case(
        drawing="""
            a b c d e
            """,
        ways=[("abcde", STREET)],
        nodes={"c": {"highway": "turning_circle"}},
        rows=[
            Row(("b", "c", 0.5), ("a", "b", 0.5), "&bearings=90,10;", ("Street,Street,Street", 399.9, 85.0, 85.0)),
        ],
    ),
    # no u-turn at c: two roads arrive there (OSRM counts the roads one may arrive on, not the two-way ones)
    "u_turn_where_two_arrive": Case(
        drawing="""
                  d
            a b c
                  e
            """,
        ways=[
            ("abc", STREET),
            ("dc", {"highway": "residential", "oneway": "yes", "name": "In"}),
            ("ce", {"highway": "residential", "oneway": "yes", "name": "Out"}),
            ("ed", {"highway": "residential", "oneway": "yes", "name": "Back"}),
        ],  # fmt: skip
        rows=[
            Row(
                ("b", "c", 0.5),
                ("a", "b", 0.5),
                "&bearings=90,10;",
                ("Street,Out,Back,In,Street,Street", 1046.8, 150.8, 150.8),
            ),
        ],
    ),
    # no waypoint snaps onto a private service road (car.lua's `startpoint`: Monaco's driveway off Boulevard de Suisse)
    "private_service": Case(
        drawing="""
            a   b   c
                d
            """,
        ways=[("abc", STREET), ("bd", {"highway": "service", "access": "private", "name": "Driveway"})],
        rows=[
            Row(("b", "d", 0.3), "a", "", ("Street,Street", 399.9, 57.6, 57.6)),
            Row("c", ("b", "d", 0.6), "", ("Street,Street", 399.9, 57.6, 57.6)),
            # OSRM's `snapping=any`: such roads are candidates again
            Row(("b", "d", 0.3), "a", "&snapping=any", ("Driveway,Street,Street", 429.8, 72.0, 72.0)),
            Row("c", ("b", "d", 0.6), "&snapping=any", ("Street,Driveway,Driveway", 459.8, 79.2, 3348.6)),
        ],
    ),
    # a phantom splits its segment as OSRM's edge runs: from the end of the compressed edge with the lower OSM id
    # (`a`, though the way is drawn from b), truncating along it
    "phantom_split": Case(
        drawing="""
            a b
            """,
        ways=[("ba", STREET)],
        rows=[
            Row(("a", "b", 0.37), "b", "", ("Street,Street", 125.9, 18.2, 18.2)),
            Row(("a", "b", 0.37), "a", "", ("Street,Street", 74.0, 10.6, 10.6)),
            Row(("a", "b", 0.71), ("a", "b", 0.33), "", ("Street,Street", 75.9, 10.9, 10.9)),
            Row(("a", "b", 0.33), ("a", "b", 0.71), "", ("Street,Street", 75.9, 10.9, 10.9)),
        ],
    ),
    # car.lua's conditional stop signs: `stop=minor` at a junction counts only entering by the slower road (b); a
    # stop sign with no direction inside a way (g, q) not arriving from a leg shorter than 20 m onto a longer one, the
    # legs being those of OSRM's compressor (which removes nodes in OSM id order: g's legs end at f and h, q's at p
    # and r, though a node with a lower id, m, lies between q and r)
    "stop_signs": Case(
        drawing=asciimap.draw(
            {
                "a": (0, 0),
                "b": (150, 0),
                "c": (150, 150),
                "d": (300, 0),
                "e": (150, -150),
                "f": (0, -200),
                "g": (12, -200),
                "h": (300, -200),
                "p": (0, -300),
                "q": (15, -300),
                "m": (30, -300),
                "r": (300, -300),
                "s": (0, -400),
                "t": (10, -400),
                "u": (300, -400),
            }
        ),
        grid_m=1.0,
        ways=[
            ("abd", {"highway": "primary", "name": "Main"}),
            ("cbe", {"highway": "residential", "name": "Side"}),
            ("fgh", {"highway": "residential", "name": "Short"}),
            ("pqmr", {"highway": "residential", "name": "Order"}),
            ("stu", {"highway": "residential", "name": "Both"}),
        ],
        nodes={
            "b": {"highway": "stop", "stop": "minor"},
            "g": {"highway": "stop"},
            "q": {"highway": "stop"},
            "t": {"highway": "stop", "direction": "both"},
        },
        rows=[
            Row("a", "d", "", ("Main,Main", 267.2, 14.8, 14.8)),
            Row("c", "e", "", ("Side,Side", 298.6, 45.0, 45.0)),
            Row("c", "d", "", ("Side,Main,Main", 282.9, 38.2, 38.2)),
            Row("a", "e", "", ("Main,Side,Side", 282.9, 31.0, 31.0)),
            Row("f", "h", "", ("Short,Short", 267.2, 38.4, 38.4)),
            Row("h", "f", "", ("Short,Short", 267.2, 40.4, 40.4)),
            Row("p", "r", "", ("Order,Order", 267.2, 38.4, 38.4)),
            Row("r", "p", "", ("Order,Order", 267.2, 40.4, 40.4)),
            Row("s", "u", "", ("Both,Both", 267.2, 40.5, 40.5)),
        ],
    ),
    # car access as lib/access.lua resolves it: of a `;`-list the part of the highest class (whitelisted, restricted,
    # blacklisted; the first on a tie), on ways and on nodes; `foot`, `permit` and the like are car.lua's too
    "access_lists": Case(
        drawing="""
            a b c d e f
              h i j k l
              n o p q r
            """,
        ways=[
            ("abcdef", STREET),
            ("bhn", {"highway": "residential", "name": "NoPrivate", "access": "no;private"}),
            ("cio", {"highway": "residential", "name": "Foot", "access": "foot"}),
            ("djp", {"highway": "residential", "name": "Permit", "access": "permit"}),
            ("ekq", {"highway": "residential", "name": "Delivery", "motorcar": "agricultural;delivery"}),
            ("flr", {"highway": "residential", "name": "Gate"}),
        ],
        nodes={"l": {"access": "no;agricultural"}},
        rows=[
            Row("a", "n", "", ("Street,NoPrivate,NoPrivate", 399.8, 59.7, 3334.3)),
            Row("a", "o", "", ("Street,NoPrivate,NoPrivate", 399.8, 59.7, 3334.3)),
            Row("a", "p", "", ("Street,Permit,Permit", 799.7, 117.3, 3391.9)),
            Row("a", "q", "", ("Street,Delivery,Delivery", 999.6, 146.1, 3420.7)),
            Row("a", "r", "", "NoRoute"),
        ],
    ),
    # restrictions for bicycles (bicycle.lua reads `restriction` and `restriction:bicycle`; `except` names modes to
    # spare, `;`-separated as written: OSRM does not strip spaces, so "psv; bicycle" spares no bicycle)
    "bike_restrictions": Case(
        drawing="""
                c
            a   b   d
                e
            """,
        profile="bike",
        ways=[
            ("ab", {"highway": "residential", "name": "West"}),
            ("bc", {"highway": "residential", "name": "North"}),
            ("bd", {"highway": "residential", "name": "East"}),
            ("be", {"highway": "residential", "name": "South"}),
        ],
        relations=[
            (_via("ab", "b", "bc"), {"type": "restriction", "restriction:bicycle": "no_left_turn"}),
            (_via("ab", "b", "bd"), {"type": "restriction", "restriction": "no_straight_on", "except": "psv;bicycle"}),
            (_via("ab", "b", "be"), {"type": "restriction", "restriction": "no_right_turn", "except": "psv; bicycle"}),
            (_via("bc", "b", "bd"), {"type": "restriction", "restriction:motorcar": "no_left_turn"}),
        ],
        rows=[
            Row("a", "c", "", ("West,East,East,North,North", 1299.5, 353.3, 353.3)),
            Row("a", "d", "", ("West,East,East", 799.7, 192.0, 192.0)),
            Row("a", "e", "", ("West,East,East,South,South", 1299.5, 357.4, 357.4)),
            Row("c", "d", "", ("North,East,East", 499.8, 128.3, 128.3)),
        ],
    ),
    # foot.lua reads no turn restrictions at all (use_turn_restrictions = false), `restriction:foot` neither
    "foot_restrictions": Case(
        drawing="""
                c
            a   b   d
            """,
        profile="foot",
        ways=[
            ("ab", {"highway": "footway", "name": "West"}),
            ("bc", {"highway": "footway", "name": "North"}),
            ("bd", {"highway": "footway", "name": "East"}),
        ],
        relations=[
            (_via("ab", "b", "bc"), {"type": "restriction", "restriction:foot": "no_left_turn"}),
            (_via("ab", "b", "bd"), {"type": "restriction", "restriction": "no_straight_on"}),
        ],
        rows=[
            Row("a", "c", "", ("West,North,North", 499.8, 359.9, 359.9)),
            Row("a", "d", "", ("West,East,East", 799.7, 575.8, 575.8)),
        ],
    ),
    # a car `only_*` restriction over two via ways: from ab, through bc and cd, only onto de
    "only_multi_via": Case(
        drawing="""
            a b c d e
                  f
            """,
        ways=[
            ("ab", STREET),
            ("bc", STREET),
            ("cd", STREET),
            ("de", {"highway": "residential", "name": "Onward"}),
            ("df", {"highway": "residential", "name": "Side"}),
        ],
        relations=[
            (
                [("way", "ab", "from"), ("way", "bc", "via"), ("way", "cd", "via"), ("way", "de", "to")],
                {"type": "restriction", "restriction": "only_straight_on"},
            ),
        ],
        rows=[
            Row("a", "f", "", ("Street,Onward,Onward,Side,Side", 1099.6, 193.1, 193.1)),
            Row("b", "f", "", ("Street,Side,Side", 499.8, 74.1, 74.1)),
            Row("a", "e", "", ("Street,Onward,Onward", 799.7, 115.2, 115.2)),
        ],
    ),
    # more of car.lua's access: conditional values unread, `destination` restricted, a gate with an access tag costs
    # nothing (the penalty only comes without one), a lift gate with `access=no` a barrier; surface caps, `maxspeed`
    "car_access_more": Case(
        drawing="""
            a b c d e f g
              h i j k l m
              n o p q r s
            """,
        ways=[
            ("abcdefg", STREET),
            ("bhn", {"highway": "residential", "name": "Cond", "access": "no", "access:conditional": "yes @ (Mo-Fr)"}),
            ("cio", {"highway": "residential", "name": "Dest", "motor_vehicle": "destination"}),
            ("djp", {"highway": "residential", "name": "Gates"}),
            ("ekq", {"highway": "residential", "name": "Lift"}),
            ("flr", {"highway": "primary", "name": "Gravel", "surface": "gravel"}),
            ("gms", {"highway": "primary", "name": "Limit", "maxspeed": "30 mph"}),
        ],
        nodes={
            "j": {"barrier": "gate", "access": "yes"},
            "k": {"barrier": "lift_gate", "access": "no"},
        },
        rows=[
            Row("a", "n", "", ("Street,Dest,Dest", 599.8, 88.5, 3363.1)),
            Row("a", "o", "", ("Street,Dest,Dest", 599.8, 88.5, 3363.1)),
            Row("a", "p", "", ("Street,Gates,Gates", 799.7, 117.3, 117.3)),
            Row("a", "q", "", "NoRoute"),
            Row("a", "r", "", ("Street,Gravel,Gravel", 1199.6, 164.1, 164.1)),
            Row("a", "s", "", ("Street,Limit,Limit", 1399.5, 191.4, 191.4)),
        ],
    ),
    # a ferry's `duration` spread over its way (car)
    "ferry_duration": Case(
        drawing="""
            a b   c d
            """,
        ways=[
            ("ab", STREET),
            ("bc", {"route": "ferry", "duration": "00:30", "name": "Boat"}),
            ("cd", {"highway": "residential", "name": "Other"}),
        ],
        rows=[
            Row("a", "d", "", ("Street,Boat,Other,Other", 799.7, 1857.6, 1857.6)),
            Row("d", "a", "", ("Other,Boat,Street,Street", 799.7, 1857.6, 1857.6)),
        ],
    ),
    # testbot at a via point: `continue_straight` (testbot's default true) forbids turning back there; the via point
    # is on the junction c, where OSRM snaps it onto one of the roads
    "testbot_continue_straight": Case(
        drawing="""
            a b c d
                e
            """,
        profile="testbot",
        ways=[("abcd", {"highway": "primary", "name": "Line"}), ("ce", {"highway": "primary", "name": "Spur"})],
        rows=[
            Row("b", "b", "", ("Line,Spur,Spur,Spur,Line,Line", 599.7, 80.0, 80.0), via="c"),
            Row("b", "b", "&continue_straight=false", ("Line,Line,Line,Line", 399.8, 40.0, 40.0), via="c"),
            Row("b", "b", "&continue_straight=true", ("Line,Spur,Spur,Spur,Line,Line", 599.7, 80.0, 80.0), via="c"),
        ],
    ),
    # bicycle on a pedestrian area (a closed way with area=yes) pushes, and `bicycle=use_sidepath` closes a road
    "bike_pedestrian_sidepath": Case(
        drawing="""
            a b c d
              e f
            g h i j
            """,
        profile="bike",
        ways=[
            ("abcd", {"highway": "residential", "name": "Street"}),
            ("befcb", {"highway": "pedestrian", "area": "yes", "name": "Square"}),
            ("ghij", {"highway": "primary", "name": "Main", "bicycle": "use_sidepath"}),
            ("eh", {"highway": "cycleway", "name": "Link"}),
        ],
        rows=[
            Row("a", "f", "", ("Street,Square,Square", 499.8, 190.2, 190.2)),
            Row("a", "j", "", ("Street,Street", 599.8, 144.0, 144.0)),
            Row("a", ("h", "i", 0.5), "", ("Street,Square,Link,Link", 399.8, 166.2, 166.2)),
        ],
    ),
    # foot: roads crossing without a shared node (a bridge) do not meet; a suffix change (N) is no new name
    "foot_non_planar_suffix": Case(
        drawing="""
                c
            a   x   b
                d
                e
            """,
        profile="foot",
        ways=[
            ("axb", {"highway": "footway", "name": "Ridge"}),
            ("cd", {"highway": "footway", "name": "High Street N", "bridge": "yes", "layer": "1"}),
            ("de", {"highway": "footway", "name": "High Street"}),
        ],
        rows=[
            Row("c", "e", "", ("High Street N,High Street", 299.9, 215.9, 215.9)),
            Row("a", "e", "", "NoRoute"),
        ],
    ),
    # car via points exactly on nodes: OSRM snaps them onto one of the roads there, so continue_straight (car's
    # default) makes a route turn back at a dead end d (its u-turn costs) and the legs' distances sum per leg
    "via_on_node": Case(
        drawing="""
            a   b   c
                d
            """,
        ways=[("abc", STREET), ("bd", {"highway": "residential", "name": "Spur"})],
        rows=[
            Row("a", "c", "", ("Street,Street,Street,Street", 799.8, 115.2, 115.2), via="b"),
            Row("a", "c", "", ("Street,Spur,Spur,Spur,Street,Street", 999.6, 175.6, 175.6), via="d"),
            Row("a", "c", "", ("Street,Street,Street,Street", 799.7, 115.2, 115.2), via=("a", "b", 0.5)),
            Row("a", "a", "", ("Street,Street,Street,Street,Street", 1599.4, 257.8, 257.8), via=("b", "c", 0.5)),
        ],
    ),
    # car via points on the nodes of a 4-way junction b and of a 3-way junction h (OSRM's candidates: one phantom
    # per road there; continue_straight carries on along the road a leg arrives by and turns back only where a u-turn
    # is allowed), and on a node inside a straight road (m: a shape point, no junction)
    "via_on_junction": Case(
        drawing="""
                f
            a   b   c
                d
            g   h   i
                j
            k   m   n
            """,
        ways=[
            ("abc", STREET),
            ("fbd", {"highway": "residential", "name": "Cross"}),
            ("dh", {"highway": "residential", "name": "Link"}),
            ("ghi", {"highway": "residential", "name": "Lower"}),
            ("hj", {"highway": "residential", "name": "Stub"}),
            ("kmn", {"highway": "residential", "name": "Straight"}),
        ],
        rows=[
            Row("a", "f", "", ("Street,Street,Cross,Cross", 499.9, 79.3, 79.3), via="b"),
            Row("a", "a", "", ("Street,Cross,Cross,Cross,Street,Street", 999.7, 180.8, 180.8), via="b"),
            Row("a", "a", "&continue_straight=false", ("Street,Street,Street,Street", 799.8, 115.2, 115.2), via="b"),
            Row("f", "c", "", ("Cross,Cross,Street,Street", 499.9, 79.3, 79.3), via="b"),
            Row("g", "g", "", ("Lower,Stub,Stub,Stub,Lower,Lower", 999.7, 180.8, 180.8), via="h"),
            Row("g", "g", "&continue_straight=false", ("Lower,Lower,Lower,Lower", 799.8, 115.2, 115.2), via="h"),
            Row("g", "i", "", ("Lower,Lower,Lower,Lower", 799.8, 115.2, 115.2), via="h"),
            Row("k", "k", "", ("Straight,Straight,Straight,Straight,Straight", 1599.5, 257.8, 257.8), via="m"),
            Row(
                "k",
                "k",
                "&continue_straight=false",
                ("Straight,Straight,Straight,Straight", 799.8, 115.2, 115.2),
                via="m",
            ),
            Row(
                "k",
                "k",
                "&continue_straight=true",
                ("Straight,Straight,Straight,Straight,Straight", 1599.5, 257.8, 257.8),
                via="m",
            ),
            Row("k", "n", "", ("Straight,Straight,Straight,Straight", 799.8, 115.2, 115.2), via="m"),
        ],
    ),
    # bicycle.lua's access: `;`-lists resolved per direction (lib/access.lua), a blacklisted direction closed
    # (`vehicle:forward=agricultural`), a carriageway whose cycleway is mapped apart (`cycleway*=separate`) closed
    # unless `bicycle=` allows it
    "bike_access": Case(
        drawing="""
            a b c d e f
              h i j k l
              n o p q r
            """,
        profile="bike",
        ways=[
            ("abcdef", STREET),
            ("bhn", {"highway": "residential", "name": "PrivateNo", "bicycle": "private;no"}),
            ("cio", {"highway": "residential", "name": "Agri", "vehicle:forward": "agricultural"}),
            ("djp", {"highway": "residential", "name": "Separate", "cycleway": "separate"}),
            ("ekq", {"highway": "residential", "name": "Both", "cycleway:both": "separate", "bicycle": "designated"}),
            ("flr", {"highway": "residential", "name": "Right", "cycleway:right": "separate"}),
        ],
        rows=[
            Row("a", "n", "", "NoRoute"),
            Row("a", "o", "", "NoRoute"),
            Row("o", "a", "", ("Agri,Street,Street", 599.8, 152.3, 152.3)),
            Row("a", "p", "", "NoRoute"),
            Row("a", "q", "", ("Street,Both,Both", 999.6, 244.2, 244.2)),
            Row("a", "r", "", ("Street,Both,Both", 999.6, 244.2, 244.2)),
        ],
    ),
    # bicycle.lua reads `cycleway:both` where `cycleway` is missing: against a oneway by an opposite cycleway
    "bike_cycleway_both": Case(
        drawing="""
            a b c
            """,
        profile="bike",
        ways=[
            ("ab", {"highway": "residential", "name": "Both", "oneway": "yes", "cycleway:both": "opposite"}),
            ("bc", {"highway": "residential", "name": "Plain", "oneway": "yes"}),
        ],
        rows=[
            Row("b", "a", "", ("Both,Both", 199.9, 48.0, 48.0)),
            Row("c", "b", "", ("Plain,Plain", 199.9, 179.9, 179.9)),
        ],
    ),
    # foot.lua's access: `;`-lists resolved per direction
    "foot_access": Case(
        drawing="""
            a b c d
              h i j
            """,
        profile="foot",
        ways=[
            ("abcd", {"highway": "footway", "name": "Path"}),
            ("bh", {"highway": "footway", "name": "PrivateNo", "foot": "private;no"}),
            ("ci", {"highway": "footway", "name": "NoYes", "foot": "no;yes"}),
            ("dj", {"highway": "footway", "name": "Forward", "foot:forward": "no", "access": "yes"}),
        ],
        rows=[
            Row("a", "h", "", ("Path,Path", 199.9, 143.9, 143.9)),
            Row("a", "i", "", ("Path,NoYes,NoYes", 499.8, 359.8, 359.8)),
            Row("a", "j", "", "NoRoute"),
            Row("j", "a", "", ("Forward,Path,Path", 699.7, 503.7, 503.7)),
        ],
    ),
}


def _lonlat(built_coords: Mapping[str, tuple[int, int]], p: Point) -> str:
    if isinstance(p, str):
        lon, lat = built_coords[p]
    else:
        (ax, ay), (bx, by) = built_coords[p[0]], built_coords[p[1]]
        lon, lat = ax + p[2] * (bx - ax), ay + p[2] * (by - ay)
    return f"{lon / 1e7:.6f},{lat / 1e7:.6f}"


def answer(base: str, case: Case, row: Row) -> Answer:
    """A server's answer to a row's request: (step names, distance m, duration s, weight), or the error code."""
    coords = asciimap.coordinates(case.drawing, case.grid_m)
    pts = ";".join(_lonlat(coords, p) for p in (row.a, row.via, row.b) if p is not None)
    body = httpx.get(f"{base}/route/v1/{URL_PROFILE[case.profile]}/{pts}?steps=true{row.query}", timeout=60).json()
    if body.get("code") != "Ok":
        return str(body.get("code"))
    r = body["routes"][0]
    names = ",".join(s["name"] for leg in r["legs"] for s in leg["steps"])
    return names, round(r["distance"], 1), round(r["duration"], 1), round(r["weight"], 1)


def _write(tmp: Path, case: Case) -> Path:
    return asciimap.write_osm(tmp / "map.osm", case.drawing, case.ways, case.nodes, case.grid_m, case.relations)


def _cases() -> list:
    """The case names, a case with a known gap as a strict xfail (it must fail until the gap is closed)."""
    gap = pytest.mark.xfail
    return [pytest.param(n, marks=gap(strict=True, reason=CASES[n].known_gap)) if CASES[n].known_gap else n
            for n in sorted(CASES)]  # fmt: skip


@pytest.mark.parametrize("name", _cases())
def test_as_osrm_routed(name: str, tmp_path: Path) -> None:
    from preprocessing.pipeline import preprocess

    case = CASES[name]
    assert case.rows, f"{name} has no rows: record them (python -m tests.osrm.test_osrm_parity {name})"
    graph = preprocess(_write(tmp_path, case), tmp_path / "graph", profile=case.profile, landmarks=0, quiet=True)
    base = api_server.shared(graph)
    got = [answer(base, case, row) for row in case.rows]
    assert got == [row.expected for row in case.rows]


@pytest.mark.parametrize(
    "direction, along, against",
    [(None, 35.2, 35.2), ("forward", 35.2, 33.2), ("backward", 33.2, 35.2)],
)
def test_speed_file_keeps_signals(direction: str | None, along: float, against: float, tmp_path: Path) -> None:
    """OSRM's traffic_light_penalties.feature, "Traffic update on the edge with a traffic signal": a segment speed
    file (osrm-contract's `--segment-speed-file`, here `starroute customize`) replaces the speeds but keeps the
    signal's 2 s in its direction. osrm-routed 26.10's durations on the same map, a -> c and c -> a."""
    from preprocessing.customize import customize
    from preprocessing.pipeline import preprocess

    drawing = "a  b  c"
    signal = {"highway": "traffic_signals", **({"traffic_signals:direction": direction} if direction else {})}
    osm = asciimap.write_osm(tmp_path / "map.osm", drawing, [("abc", {"highway": "primary"})], {"b": signal})
    graph = preprocess(osm, tmp_path / "graph", landmarks=0, quiet=True)
    speeds = tmp_path / "speeds.csv"
    speeds.write_text("1,2,65\n2,1,65\n")
    customize(graph, [speeds])
    base = api_server.shared(graph)
    coords = asciimap.coordinates(drawing)
    got = []
    for a, b in (("a", "c"), ("c", "a")):
        pts = f"{_lonlat(coords, a)};{_lonlat(coords, b)}"
        route = httpx.get(f"{base}/route/v1/driving/{pts}", timeout=60).json()["routes"][0]
        got.append((round(route["duration"], 1), round(route["weight"], 1)))
    assert got == [(along, along), (against, against)]


def test_nearest_ignores_snapping_any(tmp_path: Path) -> None:
    """osrm-routed's `/nearest` never snaps onto a road that refuses waypoints, `snapping=any` or not (its plugin
    does not pass the option on): Street 59.9 m away, not the private driveway under the point."""
    from preprocessing.pipeline import preprocess

    case = CASES["private_service"]
    graph = preprocess(_write(tmp_path, case), tmp_path / "graph", landmarks=0, quiet=True)
    base = api_server.shared(graph)
    point = _lonlat(asciimap.coordinates(case.drawing, case.grid_m), ("b", "d", 0.6))
    for query in ("", "&snapping=any"):
        body = httpx.get(f"{base}/nearest/v1/driving/{point}?number=1{query}", timeout=60).json()
        assert [(w["name"], round(w["distance"], 1)) for w in body["waypoints"]] == [("Street", 59.9)]


def osrm_rows(name: str, bin_dir: Path) -> list[Row]:
    """osrm-routed's answers to a case's requests, on the same map."""
    from harness.osrm_peer import prepare_osrm_profile
    from harness.servers import start_osrm, stop

    case = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_osrm(bin_dir, prepare_osrm_profile(bin_dir, _write(Path(tmp), case), case.profile))
        try:
            return [Row(r.a, r.b, r.query, answer(base, case, r), r.via) for r in case.rows]
        finally:
            stop(proc)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_rows_are_osrm_routeds(name: str) -> None:
    """The recorded rows are what osrm-routed 26.10 answers on the same map (skipped where it cannot be installed)."""
    from harness.osrm_peer import ensure_osrm

    bin_dir = ensure_osrm(Path(tempfile.gettempdir()) / "starroute-osrm")
    if bin_dir is None:
        pytest.skip("osrm-bindings (osrm-routed) cannot be installed here")
    live = osrm_rows(name, bin_dir)
    assert live == list(CASES[name].rows), "\n".join(repr(r) for r in live)


if __name__ == "__main__":  # print osrm-routed's rows of the cases named (all by default), to paste above
    from harness.osrm_peer import ensure_osrm

    found = ensure_osrm(Path(tempfile.gettempdir()) / "starroute-osrm")
    assert found is not None, "osrm-bindings cannot be installed here"
    for case_name in sys.argv[1:] or sorted(CASES):
        print(case_name)
        for row in osrm_rows(case_name, found):
            print(f"    {row!r},")

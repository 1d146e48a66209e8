"""The map tables of `test_osrm_parity.py`: each case a small drawn map (`harness/asciimap.py`), its ways and nodes,
and rows of osrm-routed 26.10's answers on it (step names, distance m, duration s, weight), recorded from the
`osrm-bindings` wheel's osrm-routed on the same OSM file (the groups are listed in the test module)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness import asciimap

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

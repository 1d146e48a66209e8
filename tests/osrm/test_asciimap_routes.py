"""ASCII-art maps through the real pipeline: which arcs exist, in which direction, with which weight.

Maps follow harness/asciimap.py: one character = one grid unit (100 m unless said otherwise), so `ab` is 100 m and
`a b` 200 m. With testbot, 100 m of primary (36 km/h) is 10 s = 100 ds, secondary 200 ds, tertiary 300 ds.
Other profiles' weights are computed with the pipeline's formula (`Built.expect_ds`).
"""

from __future__ import annotations

from pathlib import Path

from floor.format.units import FLAG_FERRY, FLAG_RESTRICTED, FLAG_ROUNDABOUT, FLAG_TOLL
from harness import asciimap
from harness.asciimap import Built, letters_with_arcs


def arc_flags(built: Built, a: str, b: str) -> int:
    """OR of the flags of all arcs a -> b."""
    g = built.graph
    heads = set(built.nodes(b))
    out = 0
    for u in built.nodes(a):
        for e in range(int(g.first_out[u]), int(g.first_out[u + 1])):
            if int(g.arc_head[e]) in heads:
                out |= int(g.arc_flags[e])
    return out


# ---------------------------------------------------------------- the harness itself


def test_to_osm_is_deterministic_and_well_formed() -> None:
    xml = asciimap.to_osm(
        """
        a b
          c
        """,
        ways=[("abc", {"highway": "primary", "name": "A & B"})],
        nodes={"b": {"highway": "traffic_signals"}},
    )
    assert xml == asciimap.to_osm(
        "a b\n  c", ways=[("abc", {"highway": "primary", "name": "A & B"})], nodes={"b": {"highway": "traffic_signals"}}
    )
    assert '<node id="1" version="1" lat="0.0000000" lon="1.0000000"/>' in xml
    assert '<node id="2" version="1" lat="0.0000000" lon="1.0017960">' in xml  # 2 units of 898e-6 deg east
    assert '<node id="3" version="1" lat="-0.0009040" lon="1.0017960"/>' in xml  # 1 unit of 904e-6 deg south
    assert 'v="A &amp; B"' in xml and '<nd ref="3"/>' in xml
    assert asciimap.node_id("a") == 1 and asciimap.node_id("Z") == 52 and asciimap.node_id("0") == 53


def test_grid_unit_and_chain_collapse(tmp_path: Path) -> None:
    built = asciimap.build(tmp_path, "abc", ways=[("abc", {"highway": "primary"})])
    assert abs(built.metres("ab") - 99.965) < 0.001  # 898e-6 degrees of longitude on the equator, OSRM's formula
    # b has degree 2: one arc per direction a <-> c, b is only a shape point
    assert built.nodes("b") == []
    assert built.arcs("a", "c") == [(200, 1999)]  # two segments of 99.965 m at 36 km/h: 100 ds each
    assert built.arcs("c", "a") == [(200, 1999)]
    assert built.arc_count() == 2
    assert built.route_ds("a", "c") == 200


# ---------------------------------------------------------------- testbot


def test_testbot_speeds(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        "abcdef",
        ways=[
            ("ab", {"highway": "primary"}),
            ("bc", {"highway": "secondary"}),
            ("cd", {"highway": "tertiary"}),
            ("de", {"highway": "steps"}),
            ("ef", {"highway": "residential"}),
        ],
    )
    assert built.weight("a", "b") == 100 and built.weight("b", "a") == 100
    assert built.weight("b", "c") == 200
    assert built.weight("c", "d") == 300
    assert built.weight("d", "e") == 600
    assert built.weight("e", "f") == 150
    assert built.dist_dm("a", "b") == 1000
    assert built.route_ds("a", "f") == 1350
    assert built.route_ds("f", "a") == 1350


def test_testbot_oneway_variants(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        gh
        ij
        kl
        mn
        """,
        ways=[
            ("ab", {"highway": "primary", "oneway": "yes"}),
            ("cd", {"highway": "primary", "oneway": "-1"}),
            ("ef", {"highway": "primary", "oneway": "no"}),
            ("gh", {"highway": "primary", "oneway": "1"}),
            ("ij", {"highway": "primary", "oneway": "true"}),
            ("kl", {"highway": "primary"}),
            ("mn", {"highway": "primary", "oneway": "false"}),
        ],
    )
    assert built.has_arc("a", "b") and not built.has_arc("b", "a")
    assert built.has_arc("d", "c") and not built.has_arc("c", "d")
    assert built.has_arc("e", "f") and built.has_arc("f", "e")
    assert built.has_arc("g", "h") and not built.has_arc("h", "g")
    assert built.has_arc("i", "j") and not built.has_arc("j", "i")
    assert built.has_arc("k", "l") and built.has_arc("l", "k")
    assert built.has_arc("m", "n") and built.has_arc("n", "m")
    assert built.weight("d", "c") == 100


def test_testbot_roundabout_is_oneway(tmp_path: Path) -> None:
    # x - a > b > c - y on the north side, c > d > a back on the south side
    built = asciimap.build(
        tmp_path,
        """
        xabcy
         d e
        """,
        ways=[
            ("xa", {"highway": "primary"}),
            ("cy", {"highway": "primary"}),
            ("abc", {"highway": "primary", "junction": "roundabout"}),
            ("ceda", {"highway": "primary", "junction": "roundabout"}),
        ],
    )
    # of the two roads between a and c, OSRM's compressor keeps a node on the one whose highest node id comes last:
    # e (node 5) on c > e > d > a
    assert letters_with_arcs(built, "xacye") == {
        ("x", "a"), ("a", "x"), ("c", "y"), ("y", "c"), ("a", "c"), ("c", "e"), ("e", "a")
    }  # fmt: skip
    assert built.arcs("a", "c") == [(200, 1999)]  # only a > b > c, never back along it
    assert built.weight("c", "e") + built.weight("e", "a") == built.expect_ds("ceda", 36)
    assert arc_flags(built, "a", "c") & FLAG_ROUNDABOUT and not arc_flags(built, "x", "a") & FLAG_ROUNDABOUT
    assert built.route_ds("x", "y") == 400
    assert built.route_ds("y", "x") == 100 + built.expect_ds("ceda", 36) + 100


def test_testbot_traffic_signals(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        abc
         d
        efg
        """,
        ways=[("abc", {"highway": "primary"}), ("bd", {"highway": "primary"}), ("efg", {"highway": "primary"})],
        nodes={"b": {"highway": "traffic_signals"}, "f": {"highway": "traffic_signals"}},
    )
    # signal at a junction: paid on the turns passing it (OSRM's process_turn), so not by a route ending there
    assert built.weight("a", "b") == 100 and built.weight("b", "a") == 100
    assert built.turn_route_ds("a", "c") == 270
    assert built.turn_route_ds("d", "c") == 270
    assert built.turn_route_ds("a", "b") == 100 and built.turn_route_ds("b", "c") == 100
    # signal in the middle of a chain: paid once in either direction
    assert built.nodes("f") == []
    assert built.weight("e", "g") == 270 and built.weight("g", "e") == 270


def test_testbot_phantoms_split_per_segment(tmp_path: Path) -> None:
    """A point in the middle of an arc takes the whole segments and obstacles before it plus its own segment's
    share, truncated to deciseconds (OSRM's `MakePhantomNode`), not the arc split by length. Here a > b 100 ds,
    b > c 200, c > d 200 forward; backward at 18 km/h 200, 400, 400; the 7 s signal at c inside the chain."""
    built = asciimap.build(
        tmp_path,
        "ab c d",
        ways=[("abcd", {"highway": "primary", "maxspeed:backward": "18"})],
        nodes={"c": {"highway": "traffic_signals"}},
    )
    assert built.weight("a", "d") == 570 and built.weight("d", "a") == 1070
    a, d = built.point("a", "b", 0), built.point("d", "c", 0)
    p1, p2 = built.point("b", "c", 1 / 3), built.point("c", "d", 1 / 3)  # OSRM's ratio 599/1796 at 1e-6 degrees
    # forward: before p1 = 100 + trunc(200 * r) = 166; before p2 = 100 + 200 + 70 + 66 = 436
    assert built.route_s(a, p1) == (16.6, 16.6)  # split by length: 19.0
    assert built.route_s(p1, d) == (40.4, 40.4)
    assert built.route_s(p1, p2) == (27.0, 27.0)  # the signal between them counts
    # backward: before p2 = 400 - trunc(400 * r) = 267; before p1 = 400 + 70 + 267 = 737
    assert built.route_s(d, p2) == (26.7, 26.7)
    assert built.route_s(p2, p1) == (47.0, 47.0)
    assert built.route_s(p1, a) == (33.3, 33.3)
    assert built.route_s(d, p1) == (73.7, 73.7)


def test_car_directed_signals_and_signs(tmp_path: Path) -> None:
    """OSRM's obstacles with a direction (lib/obstacles.lua): `traffic_signals:direction` (or `direction`) on a
    signal, `direction` on a stop sign, relative to the way's node order; inside a way (b, f) and at a junction (c,
    charged on the turns passing it)."""
    built = asciimap.build(
        tmp_path,
        """
        abcx
          y
        efg
        """,
        ways=[("abcx", {"highway": "primary"}), ("cy", {"highway": "primary"}), ("efg", {"highway": "primary"})],
        nodes={
            "b": {"highway": "traffic_signals", "traffic_signals:direction": "forward"},
            "c": {"highway": "stop", "direction": "backward"},
            "f": {"highway": "traffic_signals", "direction": "backward"},
        },
        profile="car",
    )
    ac, ca = built.weight("a", "c"), built.weight("c", "a")
    assert ac is not None and ac == ca + 20  # a > b arrives at the signal forward: 2 s
    eg, ge = built.weight("e", "g"), built.weight("g", "e")
    assert ge is not None and ge == eg + 20  # g > f arrives at it against the way's order
    # the stop sign at c applies arriving from x (against abcx's order), on the turns there: straight on through c
    # (three roads: 0.007 s of turn, truncated to 0) pays it from x only, and a route ending at c never
    xc, cx = built.weight("x", "c"), built.weight("c", "x")
    assert xc is not None and cx is not None and built.turn_route_ds("x", "c") == xc
    assert built.turn_route_ds("x", "a") == xc + ca + 20
    assert built.turn_route_ds("a", "x") == ac + cx


def test_testbot_ferry_duration(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        abcde
          f
        """,
        ways=[
            ("ab", {"highway": "primary"}),
            ("bcde", {"route": "ferry", "duration": "00:05"}),
            ("cf", {"highway": "primary"}),
        ],
    )
    # 300 s spread over the way by distance: b-c is 1/3, c-e 2/3 (d is a shape point)
    assert built.weight("b", "c") == 1000 and built.weight("c", "b") == 1000
    assert built.weight("c", "e") == 2000 and built.weight("e", "c") == 2000
    assert built.route_ds("a", "e") == 100 + 3000
    assert arc_flags(built, "b", "c") & FLAG_FERRY and not arc_flags(built, "a", "b") & FLAG_FERRY


def test_testbot_maxspeed(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        gh
        """,
        ways=[
            ("ab", {"highway": "primary", "maxspeed": "18"}),
            ("cd", {"highway": "primary", "maxspeed:forward": "18"}),
            ("ef", {"highway": "tertiary", "maxspeed": "36"}),
            ("gh", {"highway": "secondary", "maxspeed:backward": "36"}),
        ],
    )
    assert built.weight("a", "b") == 200 and built.weight("b", "a") == 200
    assert built.weight("c", "d") == 200 and built.weight("d", "c") == 100
    assert built.weight("e", "f") == 300  # a maxspeed above the class speed does not raise it
    assert built.weight("g", "h") == 200 and built.weight("h", "g") == 100  # a directional value replaces


# ---------------------------------------------------------------- car


def test_car_speeds_maxspeed_surface(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        gh
        ij
        """,
        ways=[
            ("ab", {"highway": "primary"}),
            ("cd", {"highway": "residential", "maxspeed": "50"}),
            ("ef", {"highway": "primary", "surface": "gravel"}),
            ("gh", {"highway": "secondary", "maxspeed": "DE:rural"}),
            ("ij", {"highway": "track", "motor_vehicle": "yes"}),
        ],
        profile="car",
    )
    assert built.weight("a", "b") == built.expect_ds("ab", 65) == 55
    assert built.weight("c", "d") == built.expect_ds("cd", 40) == 90
    assert built.weight("e", "f") == built.expect_ds("ef", 40)
    assert built.weight("g", "h") == built.expect_ds("gh", 80) == 45
    assert built.weight("i", "j") == built.expect_ds("ij", 10) == 360


def test_car_implied_oneways(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        g h
         i
        jkl
        """,
        ways=[
            ("ab", {"highway": "motorway"}),
            ("cd", {"highway": "motorway", "oneway": "no"}),
            ("ef", {"highway": "motorway_link"}),
            ("gih", {"highway": "primary", "junction": "roundabout"}),
            ("jkl", {"highway": "primary", "junction": "circular"}),
        ],
        profile="car",
    )
    assert built.has_arc("a", "b") and not built.has_arc("b", "a")
    assert built.has_arc("c", "d") and built.has_arc("d", "c")
    assert built.has_arc("e", "f") and built.has_arc("f", "e")
    assert built.has_arc("g", "h") and not built.has_arc("h", "g")
    assert arc_flags(built, "g", "h") & FLAG_ROUNDABOUT
    assert built.has_arc("j", "l") and not built.has_arc("l", "j")
    assert built.weight("a", "b") == built.expect_ds("ab", 90)


def test_car_oneway_tags(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        gh
        ij
        """,
        ways=[
            ("ab", {"highway": "residential", "oneway": "-1"}),
            ("cd", {"highway": "residential", "oneway": "yes", "oneway:motorcar": "no"}),
            ("ef", {"highway": "residential", "oneway": "reversible"}),
            ("gh", {"highway": "residential", "oneway": "alternating"}),
            ("ij", {"highway": "residential", "oneway:bicycle": "yes"}),
        ],
        profile="car",
    )
    assert built.has_arc("b", "a") and not built.has_arc("a", "b")
    assert built.has_arc("c", "d") and built.has_arc("d", "c")
    assert built.nodes("e") == [] and built.nodes("f") == []
    assert built.has_arc("g", "h") and built.has_arc("h", "g")
    assert built.has_arc("i", "j") and built.has_arc("j", "i")


def test_car_access_tags(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        gh
        ij
        kl
        mn
        """,
        ways=[
            ("ab", {"highway": "residential", "access": "no"}),
            ("cd", {"highway": "residential", "access": "private"}),
            ("ef", {"highway": "track"}),
            ("gh", {"highway": "residential", "motor_vehicle": "no"}),
            ("ij", {"highway": "residential", "access": "no", "motorcar": "yes"}),
            ("kl", {"highway": "residential", "motor_vehicle:forward": "no"}),
            ("mn", {"highway": "residential", "access": "psv"}),
        ],
        profile="car",
    )
    for letter in "abefghmn":
        assert built.nodes(letter) == [], letter
    assert built.has_arc("c", "d") and built.has_arc("d", "c")
    assert arc_flags(built, "c", "d") & FLAG_RESTRICTED and arc_flags(built, "d", "c") & FLAG_RESTRICTED
    assert built.weight("c", "d") == built.expect_ds("cd", 25)
    assert built.has_arc("i", "j") and not arc_flags(built, "i", "j") & FLAG_RESTRICTED
    assert built.has_arc("l", "k") and not built.has_arc("k", "l")


def test_car_barriers_and_penalties(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        abc
        def
        ghi
        jkl
        mno
        pqr
        """,
        ways=[(row, {"highway": "residential"}) for row in ("abc", "def", "ghi", "jkl", "mno", "pqr")],
        nodes={
            "b": {"barrier": "bollard"},
            "e": {"barrier": "gate"},
            "h": {"barrier": "lift_gate"},
            "k": {"highway": "traffic_signals"},
            "n": {"highway": "stop"},
            "q": {"highway": "give_way"},
        },
        profile="car",
    )
    # a bollard blocks: it can be reached from either side but not passed
    assert not built.has_arc("a", "c") and built.route_ds("a", "c") is None
    assert len(built.nodes("b")) == 2 and built.has_arc("a", "b") and built.has_arc("c", "b")
    base = built.expect_ds("abc", 25)
    assert built.weight("d", "f") == base + 600 and built.weight("f", "d") == base + 600
    assert built.weight("g", "i") == base + 600
    assert built.weight("j", "l") == base + 20 and built.weight("l", "j") == base + 20
    assert built.weight("m", "o") == base + 20
    assert built.weight("p", "r") == base + 10


def test_car_ferry(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        abc
        d e
        """,
        ways=[
            ("ab", {"highway": "primary"}),
            ("bc", {"route": "ferry", "duration": "PT1H"}),
            ("de", {"route": "ferry"}),
        ],
        profile="car",
    )
    assert built.weight("b", "c") == 36000 and built.weight("c", "b") == 36000
    assert arc_flags(built, "b", "c") & FLAG_FERRY
    assert built.weight("d", "e") == built.expect_ds("de", 5)
    assert built.graph.manifest["max_speed_mps"] > 0


def test_car_excluded_ways(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        gh
        ij
        kl
        mn
        """,
        ways=[
            ("ab", {"highway": "residential", "area": "yes"}),
            ("cd", {"highway": "construction"}),
            ("ef", {"highway": "residential", "construction": "yes"}),
            ("gh", {"highway": "proposed"}),
            ("ij", {"highway": "steps"}),
            ("kl", {"highway": "primary", "impassable": "yes"}),
            ("mn", {"highway": "residential", "toll": "yes"}),
        ],
        profile="car",
    )
    for letter in "abcdefghijkl":
        assert built.nodes(letter) == [], letter
    assert built.has_arc("m", "n") and arc_flags(built, "m", "n") & FLAG_TOLL


# ---------------------------------------------------------------- bike


def test_bike_speeds_and_pushing(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        gh
        ij
        """,
        ways=[
            ("ab", {"highway": "cycleway"}),
            ("cd", {"highway": "track"}),
            ("ef", {"highway": "footway"}),
            ("gh", {"highway": "steps"}),
            ("ij", {"highway": "motorway"}),
        ],
        profile="bike",
    )
    assert built.weight("a", "b") == built.expect_ds("ab", 15) == 240
    assert built.weight("c", "d") == built.expect_ds("cd", 12) == 300
    assert built.weight("e", "f") == built.expect_ds("ef", 4) == 900
    assert built.weight("g", "h") == built.expect_ds("gh", 2) == 1799
    assert built.nodes("i") == []


def test_bike_oneways(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        gh
        ij
        """,
        ways=[
            ("ab", {"highway": "residential", "oneway": "yes"}),
            ("cd", {"highway": "residential", "oneway": "yes", "oneway:bicycle": "no"}),
            ("ef", {"highway": "residential", "oneway": "yes", "cycleway": "opposite"}),
            ("gh", {"highway": "residential", "junction": "roundabout"}),
            ("ij", {"highway": "residential", "oneway:bicycle": "yes"}),
        ],
        profile="bike",
    )
    ride, push = built.expect_ds("ab", 15), built.expect_ds("ab", 4)
    assert built.weight("a", "b") == ride and built.weight("b", "a") == push  # walking the bike back
    assert built.weight("c", "d") == ride and built.weight("d", "c") == ride
    assert built.weight("e", "f") == ride and built.weight("f", "e") == ride
    assert built.has_arc("g", "h") and not built.has_arc("h", "g")  # no pushing against a roundabout
    assert built.weight("i", "j") == ride and built.weight("j", "i") == push


def test_bike_access_barriers_signals_ferry(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cde
        fgh
        ijk
        lm
        """,
        ways=[
            ("ab", {"highway": "residential", "bicycle": "no"}),
            ("cde", {"highway": "residential"}),
            ("fgh", {"highway": "residential"}),
            ("ijk", {"highway": "residential"}),
            ("lm", {"route": "ferry", "duration": "10"}),
        ],
        nodes={"d": {"barrier": "bollard"}, "g": {"barrier": "fence"}, "j": {"highway": "traffic_signals"}},
        profile="bike",
    )
    assert built.nodes("a") == []
    base = built.expect_ds("cde", 15)
    assert built.weight("c", "e") == base  # bollards pass bikes
    assert built.route_ds("f", "h") is None  # a fence does not
    # a signal inside a way: its 2 s, and OSRM's fake turn through the node it compresses away, a 180-degree turn
    # for bicycle.lua's formula: trunc((180 / 90)^2 x 6 / 1.4 + 2 s) = 19.1 s
    assert built.weight("i", "k") == base + 191
    assert built.weight("l", "m") == 6000 and built.weight("m", "l") == 6000


def test_bike_turns_where_two_roads_meet(tmp_path: Path) -> None:
    """bicycle.lua charges every turn OSRM takes, also where only two roads meet: (angle / 90)^2 x 6 s, left turns
    dearer by 1.4; OSRM takes none where it compresses the node away (the two roads alike: name, class, modes,
    flags), and there a signal costs its fake 180-degree turn (17.1 s) whatever its direction."""
    built = asciimap.build(
        tmp_path,
        """
        ab  ef  ij
         c   g   k
        """,
        ways=[
            ("ab", {"highway": "residential", "name": "Mill Lane"}),
            ("bc", {"highway": "residential", "name": "Church Road"}),  # another name: a turn at b
            ("ef", {"highway": "residential", "name": "Mill Lane"}),
            ("fg", {"highway": "residential", "name": "Mill Lane"}),  # alike: f is compressed away
            ("ij", {"highway": "residential", "name": "High Street"}),
            ("jk", {"highway": "residential", "name": "High Street"}),
        ],
        nodes={"j": {"highway": "traffic_signals", "traffic_signals:direction": "backward"}},
        profile="bike",
    )
    # 90 degrees right (at b: east, then south) 4.29 s; left 6 x 1.4 = 8.399999999999999 s: truncated as OSRM does
    right, left = 42, 83
    ab, bc, cb, ba = (built.weight(x, y) for x, y in ("ab", "bc", "cb", "ba"))
    assert None not in (ab, bc, cb, ba)
    assert built.turn_route_ds("a", "c") == ab + bc + right  # type: ignore[operator]
    assert built.turn_route_ds("c", "a") == cb + ba + left  # type: ignore[operator]
    ef, fg = built.weight("e", "f"), built.weight("f", "g")
    assert built.turn_route_ds("e", "g") == ef + fg  # type: ignore[operator]
    ij, jk, kj, ji = (built.weight(x, y) for x, y in ("ij", "jk", "kj", "ji"))
    fake = 171  # (180 / 90)^2 x 6 / 1.4 s
    assert built.turn_route_ds("i", "k") == ij + jk + fake  # type: ignore[operator]  # the signal is not ours
    assert built.turn_route_ds("k", "i") == kj + ji + fake + 20  # type: ignore[operator]  # arriving backward


# ---------------------------------------------------------------- foot


def test_foot_network(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        ab
        cd
        ef
        gh
        ij
        kl
        mn
        """,
        ways=[
            ("ab", {"highway": "primary", "oneway": "yes"}),
            ("cd", {"highway": "steps"}),
            ("ef", {"highway": "footway", "oneway:foot": "yes"}),
            ("gh", {"highway": "motorway"}),
            ("ij", {"highway": "footway", "foot": "no"}),
            ("kl", {"highway": "construction"}),
            ("mn", {"highway": "residential", "junction": "roundabout"}),
        ],
        profile="foot",
    )
    walk = built.expect_ds("ab", 5)
    assert walk == 720
    assert built.weight("a", "b") == walk and built.weight("b", "a") == walk  # oneway is for vehicles
    assert built.weight("c", "d") == walk and built.weight("d", "c") == walk
    assert built.has_arc("e", "f") and not built.has_arc("f", "e")
    assert built.has_arc("m", "n") and built.has_arc("n", "m")
    for letter in "ghijkl":
        assert built.nodes(letter) == [], letter


def test_foot_barriers_signals_ferry(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        abc
        def
        ghi
        jk
        """,
        ways=[
            ("abc", {"highway": "footway"}),
            ("def", {"highway": "footway"}),
            ("ghi", {"highway": "residential"}),
            ("jk", {"route": "ferry", "duration": "00:02"}),
        ],
        nodes={"b": {"barrier": "bollard"}, "e": {"barrier": "wall"}, "h": {"highway": "traffic_signals"}},
        profile="foot",
    )
    base = built.expect_ds("abc", 5)
    assert built.weight("a", "c") == base and built.weight("c", "a") == base
    assert built.route_ds("d", "f") is None and built.route_ds("f", "d") is None
    assert built.weight("g", "i") == base + 20
    assert built.weight("j", "k") == 1200


def test_same_map_per_profile(tmp_path: Path) -> None:
    """One map, four profiles: a bollard on a residential street blocks only the car."""
    ways = [("abc", {"highway": "residential"})]
    nodes = {"b": {"barrier": "bollard"}}
    built = {
        p: asciimap.build(tmp_path, "abc", ways, nodes, profile=p, name=p) for p in ("car", "bike", "foot", "testbot")
    }
    assert built["car"].route_ds("a", "c") is None
    assert built["bike"].route_ds("a", "c") == built["bike"].expect_ds("abc", 15)
    assert built["foot"].route_ds("a", "c") == built["foot"].expect_ds("abc", 5)
    assert built["testbot"].route_ds("a", "c") == 300  # 200 m at 24 km/h

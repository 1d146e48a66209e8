"""GraphHopper's encoded values per road arc: the tag rules (`preprocessing.osm.way_values`, cases from GraphHopper's
own
parser tests), the arrays a build writes for every profile, decoded by `encoded_values.arc_values` per arc on a drawn
map, and a real extract whose every arc agrees with its way's tags."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import osmium
import pytest

from floor.format.arrays import FormatError
from floor.format.checks import check_graph
from floor.format.encoded_values import (
    ENCODED_VALUES,
    NO_LIMIT_U8,
    NO_LIMIT_U16,
    ROAD_ACCESS,
    ROAD_ENVIRONMENT,
    SURFACE,
    TOLL,
    MissingValue,
    arc_values,
    has_value,
)
from floor.format.graph import graph_in_memory, load_graph
from harness import asciimap
from preprocessing.graph import arrays_from_arcs
from preprocessing.osm import way_values as wv
from tests.conftest import BUNDLED

STORED = tuple(ev.array for ev in ENCODED_VALUES.values() if ev.array is not None)


def env(name: str) -> int:
    return ROAD_ENVIRONMENT.index(name)


def surf(name: str) -> int:
    return SURFACE.index(name)


def acc(name: str) -> int:
    return ROAD_ACCESS.index(name)


def toll(name: str) -> int:
    return TOLL.index(name)


# -- the tag rules -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "metres"),
    [
        ("1.5", 1.5), ("1.5m", 1.5), ("1.5 m", 1.5), ("1.5   m", 1.5), ("1.5 meter", 1.5), ("3 m.", 3), ("3meters", 3),
        ("4 ft 11 in", 1.499), ("4'11''", 1.499), ("9'7\"", 2.921), ("9' 7\"", 2.921), ("9 ft 7in", 2.921),
        ("9'", 2.743), ("9 feet", 2.743), ("150 cm", 1.5), ("~3", 2.4), ("3 m approx", 2.4),
        ("height limit 1.5m", None), ("", None), ("default", None), ("none", None), ("below_default", None),
        ("3,5", None), ("3-4", None), ("unsigned", None), (None, None),
    ],
)  # fmt: skip
def test_metres_as_graphhopper_reads_them(value: str | None, metres: float | None) -> None:
    got = wv.string_to_metres(value)
    if metres is None:
        assert math.isnan(got)
    else:
        assert got == pytest.approx(metres, abs=1e-3)


@pytest.mark.parametrize(
    ("value", "tonnes"),
    [
        ("1.5", 1.5), ("1.5 t", 1.5), ("1.5   t", 1.5), ("1.5 tons", 1.5), ("1.5 ton", 1.5), ("3306.9 lbs", 1.5),
        ("3 T", 3), ("3ton", 3), ("10000 kg", 10), ("28 st", 25.401), ("6t mgw", 6),
        ("weight limit 1.5t", None), ("", None), ("none", None),
    ],
)  # fmt: skip
def test_tonnes_as_graphhopper_reads_them(value: str, tonnes: float | None) -> None:
    got = wv.string_to_tonnes(value)
    assert math.isnan(got) if tonnes is None else got == pytest.approx(tonnes, abs=1e-3)


def test_limits_are_coded_in_tenths_with_a_no_limit_code() -> None:
    def row(tags: dict[str, str]) -> dict[str, int]:
        return dict(zip(wv.COLUMNS, wv.way_row({"highway": "residential", **tags}), strict=True))

    r = row({"maxheight": "11'6\"", "maxwidth": "2.2 m", "maxlength": "18.75", "maxweight": "7.5 t"})
    assert (r["max_height"], r["max_width"], r["max_length"], r["max_weight"]) == (35, 22, 188, 75)
    r = row({})  # nothing stated: the no-limit codes
    assert (r["max_height"], r["max_width"], r["max_length"], r["max_weight"]) == (255, 255, 255, 0xFFFF)
    r = row({"maxheight": "default", "maxwidth": "40", "maxweight": "99999"})  # none; clamped below the no-limit code
    assert (r["max_height"], r["max_width"], r["max_weight"]) == (NO_LIMIT_U8, 254, NO_LIMIT_U16 - 1)
    # the first key present counts, even unusable (GraphHopper's getFirstValue); `width` is a max width
    assert row({"maxheight": "none", "maxheight:physical": "3"})["max_height"] == NO_LIMIT_U8
    assert row({"maxheight:physical": "3"})["max_height"] == 30
    assert row({"width": "3"})["max_width"] == 30
    # a conditional weight ban overrides maxweight
    assert row({"maxweight": "3.5", "hgv:conditional": "no @ (weight > 7.5)"})["max_weight"] == 75
    assert wv.conditional_weight_tonnes("delivery @ (Mo-Sa 06:00-12:00); no @ (weight>7.5); no @ (length>12)") == 7.5


@pytest.mark.parametrize(
    ("value", "kmh"),
    [
        ("40 km/h", 40), ("40km/h", 40), ("40kmh", 40), ("40mph", 64.37), ("30 mph", 48.28), ("10 knots", 18.52),
        ("19 kph", 19), ("100", 100), ("100.5", 100.5), ("3 mph", 4.83), ("walk", 6), ("5", 5),
        ("-20", None), ("0", None), ("4", None), ("1mph", None), ("DE:urban", None), ("50;30", None), ("", None),
    ],
)  # fmt: skip
def test_maxspeed_strings(value: str, kmh: float | None) -> None:
    got = wv.parse_maxspeed_kmh(value)
    assert math.isnan(got) if kmh is None else got == pytest.approx(kmh, abs=0.01)


@pytest.mark.parametrize(
    ("tags", "codes"),
    [
        ({"highway": "primary", "maxspeed": "30"}, (30, 30)),
        ({"highway": "primary", "maxspeed:forward": "30", "maxspeed:backward": "40"}, (30, 40)),
        ({"highway": "primary", "maxspeed": "90", "maxspeed:backward": "50"}, (90, 50)),
        ({"highway": "primary", "maxspeed:forward": "70"}, (70, NO_LIMIT_U8)),
        ({"highway": "primary", "maxspeed": "30 mph"}, (48, 48)),
        ({"highway": "motorway", "maxspeed": "none"}, (150, 150)),
        ({"highway": "trunk_link", "maxspeed": "none"}, (150, 150)),
        ({"highway": "secondary", "maxspeed": "none"}, (NO_LIMIT_U8, NO_LIMIT_U8)),  # a mapping error
        ({"highway": "motorway", "maxspeed": "200"}, (150, 150)),
        ({"highway": "residential", "maxspeed": "DE:urban"}, (NO_LIMIT_U8, NO_LIMIT_U8)),
        ({"highway": "residential"}, (NO_LIMIT_U8, NO_LIMIT_U8)),
    ],
)
def test_max_speed_per_direction(tags: dict[str, str], codes: tuple[int, int]) -> None:
    assert wv.max_speed(tags) == codes


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("asphalt", "ASPHALT"), ("paving_stones", "PAVING_STONES"), ("fine_gravel", "FINE_GRAVEL"),
        ("sett", "COBBLESTONE"), ("unhewn_cobblestone", "COBBLESTONE"), ("metal", "PAVED"), ("earth", "DIRT"),
        ("pebblestone", "GRAVEL"), ("grass_paver", "GRASS"), ("concrete:plates", "CONCRETE"),
        ("paved:lanes", "PAVED"), ("woodchips", "OTHER"), ("Asphalt", "OTHER"), ("", "MISSING"), (None, "MISSING"),
    ],
)  # fmt: skip
def test_surface_names_and_aliases(value: str | None, code: str) -> None:
    assert wv.surface(value) == surf(code)


@pytest.mark.parametrize(
    ("tags", "code"),
    [
        ({"highway": "primary", "toll": "yes"}, ("ALL", "ALL")),
        ({"highway": "primary", "toll:hgv": "yes"}, ("HGV", "HGV")),
        ({"highway": "primary", "toll:N3": "yes", "toll": "no"}, ("HGV", "HGV")),
        ({"highway": "primary", "toll": "no"}, ("NO", "NO")),
        ({"highway": "motorway"}, ("MISSING", "MISSING")),  # no country default
        ({"highway": "primary", "toll": "yes", "toll:backward": "no"}, ("ALL", "NO")),
        ({"highway": "primary", "toll:forward": "hgv"}, ("HGV", "MISSING")),
        ({"highway": "primary", "toll": "no", "toll:forward": "yes", "toll:backward": "bogus"}, ("ALL", "NO")),
    ],
)
def test_toll_per_direction(tags: dict[str, str], code: tuple[str, str]) -> None:
    assert wv.toll(tags) == (toll(code[0]), toll(code[1]))


@pytest.mark.parametrize(
    ("tags", "code"),
    [
        ({"route": "ferry"}, "FERRY"),
        ({"route": "ferry", "ferry": "no"}, "OTHER"),
        ({"route": "shuttle_train"}, "FERRY"),
        ({"highway": "primary", "bridge": "yes"}, "BRIDGE"),
        ({"highway": "primary", "bridge": "movable"}, "BRIDGE"),
        ({"highway": "primary", "bridge": "no"}, "ROAD"),
        ({"highway": "service", "tunnel": "building_passage"}, "TUNNEL"),
        ({"highway": "primary", "tunnel": "yes", "bridge": "yes"}, "BRIDGE"),  # GraphHopper's order
        ({"highway": "primary", "tunnel": "no"}, "ROAD"),
        ({"highway": "track", "ford": "yes"}, "FORD"),
        ({"highway": "ford"}, "FORD"),
        ({"highway": "track", "ford": "no"}, "ROAD"),
        ({"railway": "platform"}, "OTHER"),
    ],
)
def test_road_environment(tags: dict[str, str], code: str) -> None:
    assert wv.road_environment(tags) == env(code)


@pytest.mark.parametrize(
    ("tags", "code"),
    [
        ({"highway": "residential"}, "YES"),
        ({"highway": "residential", "access": "private"}, "PRIVATE"),
        ({"highway": "residential", "access": "permit"}, "PRIVATE"),
        ({"highway": "service", "motor_vehicle": "service"}, "PRIVATE"),
        ({"highway": "residential", "access": "no", "motorcar": "destination"}, "DESTINATION"),
        ({"highway": "residential", "access": "private;destination"}, "DESTINATION"),
        ({"highway": "residential", "access": "agricultural;forestry"}, "AGRICULTURAL"),
        ({"highway": "residential", "vehicle": "permissive"}, "YES"),
        ({"highway": "residential", "access": "customers"}, "CUSTOMERS"),
        ({"highway": "footway"}, "NO"),  # implied motor_vehicle=no
        ({"highway": "footway", "motor_vehicle": "yes"}, "YES"),
        ({"highway": "busway"}, "NO"),
        ({"highway": "motorway"}, "YES"),  # designated
        ({"highway": "service", "access": "no", "access:conditional": "delivery @ (Mo-Fr 06:00-11:00)"}, "DELIVERY"),
        ({"highway": "residential", "access": "no", "access:conditional": "yes @ (weight < 3.5)"}, "NO"),
        ({"highway": "residential", "access:conditional": "no @ (Mo-Fr 06:00-11:00)"}, "YES"),
    ],
)  # fmt: skip
def test_road_access_of_a_car(tags: dict[str, str], code: str) -> None:
    assert wv.road_access(tags) == acc(code)


# -- the arrays of a built graph ---------------------------------------------------------------------------------

MAP = """
a b c d e
        f
g h   i j
"""
WAYS = [
    # b joins two ways of different limits: they stay two arcs (a chain never spans two ways)
    ("ab", {"highway": "primary", "maxspeed": "50", "maxspeed:backward": "30", "surface": "sett", "toll": "yes",
            "toll:backward": "no", "maxheight": "3.5 m", "maxweight": "7.5", "bridge": "yes"}),
    ("bc", {"highway": "primary", "maxheight": "11'6\"", "maxwidth": "2.2", "maxlength": "12", "surface": "asphalt",
            "tunnel": "building_passage", "access": "private"}),
    ("cdef", {"highway": "residential"}),  # d: a ford node inside the chain
    ("gh", {"route": "ferry", "duration": "00:05"}),
    ("ij", {"highway": "track", "ford": "yes", "motor_vehicle": "yes", "surface": "earth"}),
]  # fmt: skip


def arc_between(graph: object, a: str, b: str) -> int:
    """The one arc from map letter a to map letter b."""
    g = graph
    tail = set(np.flatnonzero(np.asarray(g.node_osm_id) == asciimap.node_id(a)))  # type: ignore[attr-defined]
    head = set(np.flatnonzero(np.asarray(g.node_osm_id) == asciimap.node_id(b)))  # type: ignore[attr-defined]
    arcs = [e for e in range(g.num_arcs) if g.arc_tail[e] in tail and g.arc_head[e] in head]  # type: ignore[attr-defined]
    assert len(arcs) == 1, f"{len(arcs)} arcs {a} -> {b}"
    return arcs[0]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> asciimap.Built:
    return asciimap.build(
        tmp_path_factory.mktemp("ev"), MAP, WAYS, nodes={"d": {"ford": "yes"}}, profile="testbot", turns=False
    )


def test_arc_values_of_a_drawn_map(drawn: asciimap.Built) -> None:
    g = drawn.graph
    v = {name: arc_values(g.arrays, name) for name in ENCODED_VALUES}

    def at(a: str, b: str) -> dict[str, object]:
        e = arc_between(g, a, b)
        return {name: (float(x[e]) if x.dtype.kind == "f" else int(x[e])) for name, x in v.items()}

    ab, ba = at("a", "b"), at("b", "a")
    assert ab["max_speed"] == 50 and ba["max_speed"] == 30
    assert ab["toll"] == toll("ALL") and ba["toll"] == toll("NO")
    for arc in (ab, ba):
        assert arc["road_environment"] == env("BRIDGE") and arc["surface"] == surf("COBBLESTONE")
        assert arc["max_height"] == pytest.approx(3.5) and arc["max_weight"] == pytest.approx(7.5)
        assert arc["max_width"] == arc["max_length"] == math.inf and arc["road_access"] == acc("YES")
        assert arc["road_class"] == 3 and arc["road_class_link"] == 0  # PRIMARY
    bc = at("b", "c")
    assert bc["max_height"] == pytest.approx(3.5) and bc["max_width"] == pytest.approx(2.2)
    assert bc["max_length"] == pytest.approx(12.0) and bc["max_weight"] == bc["max_speed"] == math.inf
    assert bc["road_environment"] == env("TUNNEL") and bc["road_access"] == acc("PRIVATE")
    assert bc["surface"] == surf("ASPHALT") and bc["toll"] == toll("MISSING")
    # the ford node d turns its road's chain FORD; the rest of the way has none of the values
    for arc in (at("c", "f"), at("f", "c")):
        assert arc["road_environment"] == env("FORD") and arc["surface"] == surf("MISSING")
        assert arc["max_speed"] == arc["max_height"] == arc["max_weight"] == math.inf
    assert at("g", "h")["road_environment"] == env("FERRY")
    ij = at("i", "j")
    assert ij["road_environment"] == env("FORD") and ij["surface"] == surf("DIRT") and ij["road_access"] == acc("YES")


def test_a_chain_never_spans_two_ways(drawn: asciimap.Built) -> None:
    # b is used by two ways only, yet it is a graph node: each way's values stay on its own arcs
    assert drawn.nodes("b") and not drawn.nodes("d")
    heights = arc_values(drawn.graph.arrays, "max_height")
    assert heights[arc_between(drawn.graph, "a", "b")] == pytest.approx(3.5)
    assert heights[arc_between(drawn.graph, "b", "c")] == pytest.approx(3.5)
    widths = arc_values(drawn.graph.arrays, "max_width")
    assert widths[arc_between(drawn.graph, "a", "b")] == math.inf
    assert widths[arc_between(drawn.graph, "b", "c")] == pytest.approx(2.2)


@pytest.mark.parametrize("profile", ["car", "bike", "foot"])
def test_every_profile_stores_them(tmp_path: Path, profile: str) -> None:
    ways = [
        ("abc", {"highway": "residential", "surface": "sett", "maxspeed": "30", "maxheight": "3"}),
        ("cd", {"highway": "residential", "motor_vehicle": "destination", "maxweight": "3.5 t"}),
    ]
    built = asciimap.build(tmp_path, "a b c d", ways, profile=profile, turns=False)
    g = built.graph
    assert all(g.has(name) for name in STORED)
    ab, cd = arc_between(g, "a", "c"), arc_between(g, "c", "d")
    assert arc_values(g.arrays, "surface")[ab] == surf("COBBLESTONE")
    assert arc_values(g.arrays, "max_speed")[ab] == 30 and arc_values(g.arrays, "max_height")[ab] == 3
    assert arc_values(g.arrays, "road_access")[cd] == acc("DESTINATION")
    assert arc_values(g.arrays, "max_weight")[cd] == pytest.approx(3.5)


def test_graphs_without_them_still_load_and_say_so() -> None:
    arrays = arrays_from_arcs([0, 1], [1, 0], [10, 10])
    check_graph(arrays)  # a graph built before the encoded values is valid
    assert has_value(arrays, "road_class") and not has_value(arrays, "surface")
    with pytest.raises(MissingValue):
        arc_values(arrays, "surface")
    bad = dict(arrays, arc_surface=np.array([0, len(SURFACE)], dtype=np.uint8))
    with pytest.raises(FormatError, match="arc_surface"):
        check_graph(bad)
    fast = dict(arrays, arc_max_speed=np.array([151, 255], dtype=np.uint8))
    with pytest.raises(FormatError, match="arc_max_speed"):
        check_graph(graph_in_memory(fast).arrays)


# -- a real extract ----------------------------------------------------------------------------------------------


def test_real_arcs_carry_their_ways_tags(bundled_graph: Path) -> None:
    """Monaco by car: every arc's stored codes are its way's row (the direction's for toll and max speed); an arc
    states a surface exactly when its way has a surface tag, a limit only when its way has a maxspeed tag."""
    g = load_graph(bundled_graph)
    way_ids = set(np.unique(np.asarray(g.arc_way)).tolist())
    rows: dict[int, tuple[int, ...]] = {}
    surfaced: set[int] = set()
    limited: set[int] = set()
    for w in osmium.FileProcessor(str(BUNDLED), osmium.osm.WAY):
        if w.id in way_ids:
            tags = {t.k: t.v for t in w.tags}
            rows[w.id] = wv._way_row(tags)  # every rule, not the build's shortcut for ways without the keys
            if tags.get("surface"):
                surfaced.add(w.id)
            if any(k in tags for k in ("maxspeed", "maxspeed:forward", "maxspeed:backward")):
                limited.add(w.id)
    assert set(rows) == way_ids
    arc_way = np.asarray(g.arc_way)
    table = np.array([rows[int(w)] for w in arc_way], dtype=np.int64)
    fwd = np.asarray(g.arc_geom) % 2 == 0  # the arc runs along its way's node order
    for name, fcol, bcol in wv.ARC_COLUMNS:
        want = np.where(fwd, table[:, fcol], table[:, bcol])
        got = np.asarray(g.arrays[name]).astype(np.int64)
        if name == "arc_environment":  # a ford node may only turn ROAD/OTHER arcs FORD
            assert np.all(got[got != want] == env("FORD")), name
        else:
            assert np.array_equal(got, want), name
    surface = arc_values(g.arrays, "surface")
    has_surface = np.isin(arc_way, list(surfaced))
    assert np.array_equal(surface != surf("MISSING"), has_surface)
    speed = arc_values(g.arrays, "max_speed")
    assert np.all(np.isin(arc_way[np.isfinite(speed)], list(limited)))
    assert np.all(speed[np.isfinite(speed)] <= 150)
    # sanity, not magic: Monaco's mappers tag surfaces and limits on a good share of its roads, heights on tunnels
    m = g.num_arcs
    assert has_surface.sum() > 0.2 * m and np.isfinite(speed).sum() > 0.1 * m
    height = arc_values(g.arrays, "max_height")
    assert 0 < np.isfinite(height).sum() < 0.2 * m
    tunnels = arc_values(g.arrays, "road_environment") == env("TUNNEL")
    assert 0 < tunnels.sum() < 0.2 * m

"""Unit tests of the profile rules on tag dicts (no pipeline): tags helpers, car, bike, foot, testbot."""

from __future__ import annotations

import pytest

from preprocessing.osm.profiles import base as B
from preprocessing.osm.profiles import bike, car, foot, get_profile, testbot
from preprocessing.osm.profiles import tags as T
from preprocessing.osm.profiles.base import NodeResult, WayResult


def fb(res: WayResult | None) -> tuple[float, float] | None:
    """(forward km/h, backward km/h), rounded for comparison; None when the way is not routable."""
    if res is None:
        return None
    return (round(res.forward_kmh, 3) if res.forward else 0.0, round(res.backward_kmh, 3) if res.backward else 0.0)


def node(res: NodeResult | None) -> tuple[bool, float]:
    return (False, 0.0) if res is None else (res.barrier, res.penalty_s)


# ---------------------------------------------------------------- tags helpers


@pytest.mark.parametrize(
    "value, kmh",
    [
        ("50", 50),
        ("50 km/h", 50),
        ("50;30", 50),
        ("30 mph", 30 * 1.609),
        ("30mph", 30 * 1.609),
        ("20 mp/h", 20 * 1.609),
        ("none", 140),
        ("None", 140),
        ("DE:urban", 50),
        ("de:rural", 100),
        ("DE:motorway", 0),
        ("RO:urban", 50),
        ("RO:rural", 90),
        ("IT:trunk", 110),
        ("FR:motorway", 130),
        ("FR:rural", 80),
        ("GB:nsl_single", 60 * 1.609),
        ("de:living_street", 7),
        ("DE:zone30", 0),
        ("signals", 0),
        ("walk", 0),
        ("", 0),
        (None, 0),
        ("0", 0),
    ],
)
def test_parse_maxspeed(value: str | None, kmh: float) -> None:
    assert T.parse_maxspeed(value) == pytest.approx(kmh)


def test_parse_maxspeed_variants() -> None:
    assert T.parse_maxspeed("walk", walk_kmh=6) == 6
    assert T.parse_maxspeed("DE:urban", table=None) == 0  # numeric only (bicycle.lua)
    assert T.parse_maxspeed("20 mph", table=None) == pytest.approx(32.18)


@pytest.mark.parametrize(
    "value, seconds",
    [
        ("15", 900),
        ("0", 0),
        ("00:05", 300),
        ("1:30", 5400),
        ("24:01", 86460),
        ("00:01:30", 90),
        ("00:01:60", 120),
        ("PT1H30M", 5400),
        ("PT15M", 900),
        ("PT90S", 90),
        ("P1DT2H", 93600),
        ("PT1.5H", 5400),
        ("pt5m", 300),
        (" 10 ", 600),
        ("PT", None),
        ("P", None),
        ("ab", None),
        ("1h", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_duration(value: str | None, seconds: float | None) -> None:
    assert T.parse_duration_s(value) == seconds
    assert T.duration_is_valid(value) == (seconds is not None)


def test_forward_backward_by_set() -> None:
    keys = ("motorcar", "motor_vehicle", "vehicle", "access")
    assert T.forward_backward_by_set({}, keys) == (None, None)
    assert T.forward_backward_by_set({"access": "no", "motorcar": "yes"}, keys) == ("yes", "yes")
    assert T.forward_backward_by_set({"access": "no", "vehicle:forward": "yes"}, keys) == ("yes", "no")
    assert T.forward_backward_by_set({"motor_vehicle:backward": "no", "access": "yes"}, keys) == ("yes", "no")
    # a direction-specific value of a lower key still loses to the plain value of a higher key
    assert T.forward_backward_by_set({"motorcar": "no", "access:forward": "yes"}, keys) == ("no", "no")
    assert T.forward_backward_by_key({"toll:forward": "yes"}, "toll") == ("yes", None)
    assert T.forward_backward_by_key({"toll": "yes", "toll:backward": "no"}, "toll") == ("yes", "no")


def test_find_access_and_prefixed() -> None:
    h = ("foot", "access")
    assert T.find_access_tag({"access": "no", "foot": "yes"}, h) == "yes"
    assert T.find_access_tag({"access": "no", "foot": ""}, h) == "no"
    assert T.find_access_tag({"foot:forward": "no"}, h) is None
    seq = ("motorcar", "motor_vehicle", "vehicle")
    assert T.value_by_prefixed_sequence({"oneway:vehicle": "no", "oneway:motorcar": "yes"}, seq, "oneway") == "yes"
    assert T.value_by_prefixed_sequence({"oneway": "yes"}, seq, "oneway") is None


@pytest.mark.parametrize(
    "value, direction",
    [
        ("yes", "forward"),
        ("1", "forward"),
        ("true", "forward"),
        ("-1", "backward"),
        ("no", "both"),
        ("0", "both"),
        ("false", "both"),
        ("reversible", None),
        ("alternating", None),
        (None, None),
    ],
)
def test_oneway_direction(value: str | None, direction: str | None) -> None:
    assert T.oneway_direction(value) == direction


def test_implied_oneway() -> None:
    assert T.implies_oneway({"highway": "motorway"})
    assert T.implies_oneway({"highway": "primary", "junction": "roundabout"})
    assert T.implies_oneway({"highway": "primary", "junction": "circular"})
    assert not T.implies_oneway({"highway": "motorway_link"})
    assert T.implies_oneway({"highway": "motorway_link"}, motorway_link=True)


def test_measures() -> None:
    assert T.parse_meters("2.5") == 2.5
    assert T.parse_meters("2,5 m") == 2.5
    assert T.parse_meters("7'6\"") == pytest.approx((7 * 12 + 6) * 0.0254)
    assert T.parse_meters("6 ft") == pytest.approx(6 * 0.3048)
    assert T.parse_meters("narrow") is None
    assert T.parse_height_m("default") == 4.5
    assert T.parse_height_m("none") == 4.5
    assert T.parse_height_m("1.9") == 1.9
    assert T.parse_kilograms("3.5") == 3500
    assert T.parse_kilograms("7.5 t") == 7500
    assert T.parse_kilograms("800 kg") == 800
    assert T.parse_kilograms("2000 lbs") == pytest.approx(907.18, abs=0.01)
    assert T.parse_kilograms("unknown") is None
    assert T.to_number(" 50 ") == 50
    assert T.to_number("30 mph") is None
    assert T.canonicalize_list("A 1;B 2 ; ;C") == "A 1; B 2; C"
    assert T.canonicalize_list(None) == ""


def test_profiles_implement_protocol() -> None:
    for name in ("car", "bike", "foot", "testbot"):
        mod = get_profile(name)
        assert mod.NAME == name
        assert isinstance(mod.MODE, str)
        assert isinstance(mod.WAY_KEYS, frozenset) and isinstance(mod.NODE_KEYS, frozenset)
        assert callable(mod.process_way) and callable(mod.process_node)
        assert mod.process_way({}) is None
        assert mod.process_node({}) is None


# ---------------------------------------------------------------- car


@pytest.mark.parametrize(
    "highway, kmh",
    [
        ("motorway", 90),
        ("motorway_link", 45),
        ("trunk", 85),
        ("trunk_link", 40),
        ("primary", 65),
        ("primary_link", 30),
        ("secondary", 55),
        ("secondary_link", 25),
        ("tertiary", 40),
        ("tertiary_link", 20),
        ("unclassified", 25),
        ("residential", 25),
        ("living_street", 10),
        ("service", 15),
        ("winter_road", 20),
        ("ice_road", 15),
    ],
)
def test_car_speed_table(highway: str, kmh: float) -> None:
    res = car.process_way({"highway": highway, "oneway": "no"})
    assert fb(res) == (kmh, kmh)
    assert res is not None and res.road_class == highway and res.forward_mode == "driving"


@pytest.mark.parametrize(
    "tags, expected",
    [
        ({"highway": "track"}, None),
        ({"highway": "path"}, None),
        ({"highway": "footway"}, None),
        ({"highway": "cycleway"}, None),
        ({"highway": "bridleway"}, None),
        ({"highway": "track", "motor_vehicle": "yes"}, (10, 10)),
        ({"highway": "track", "access": "permissive"}, (10, 10)),
        ({"highway": "track", "access": "permissive;no"}, (10, 10)),  # a list: its whitelisted part
        ({"highway": "track", "access": "permit"}, None),  # blacklisted (OSRM 26.10), restricted only where whitelisted
        ({"highway": "residential", "access": "permit"}, (25, 25)),  # restricted: routable, at a penalty weight
        ({"highway": "track", "access": "destination"}, None),  # restricted only on whitelisted highways
        ({"highway": "track", "motor_vehicle:forward": "yes"}, (10, 0)),
        ({"highway": "track", "motor_vehicle:backward": "yes"}, (0, 10)),
        ({"highway": "road"}, None),
        ({"route": "bus"}, None),
    ],
)
def test_car_default_speed_needs_access(tags: dict[str, str], expected: tuple[float, float] | None) -> None:
    assert fb(car.process_way(tags)) == expected


@pytest.mark.parametrize(
    "tags, expected",
    [
        ({"highway": "primary", "maxspeed": "50"}, (40, 40)),
        ({"highway": "residential", "maxspeed": "100"}, (80, 80)),  # replaces, may raise
        ({"highway": "primary", "maxspeed": "30 mph"}, (30 * 1.609 * 0.8,) * 2),
        ({"highway": "motorway", "maxspeed": "none", "oneway": "no"}, (112, 112)),
        ({"highway": "residential", "maxspeed": "DE:urban"}, (40, 40)),
        ({"highway": "primary", "maxspeed": "DE:rural"}, (80, 80)),
        ({"highway": "primary", "maxspeed": "RO:urban"}, (40, 40)),
        ({"highway": "primary", "maxspeed": "FR:rural"}, (64, 64)),
        ({"highway": "motorway", "maxspeed": "DE:motorway", "oneway": "no"}, (90, 90)),  # 0 = ignored
        ({"highway": "primary", "maxspeed": "signals"}, (65, 65)),
        ({"highway": "living_street", "maxspeed": "walk"}, (10, 10)),  # OSRM cannot read "walk"
        ({"highway": "primary", "maxspeed:forward": "30", "maxspeed:backward": "50"}, (24, 40)),
        ({"highway": "primary", "maxspeed": "100", "maxspeed:forward": "50"}, (40, 80)),
        ({"highway": "primary", "maxspeed:advisory": "30", "maxspeed": "50"}, (24, 24)),
        ({"highway": "primary", "source:maxspeed": "DE:urban"}, (40, 40)),
        ({"highway": "primary", "maxspeed:type": "DE:rural"}, (80, 80)),
        ({"highway": "primary", "maxspeed": "100", "surface": "gravel"}, (40, 40)),  # caps after maxspeed
    ],
)
def test_car_maxspeed(tags: dict[str, str], expected: tuple[float, float]) -> None:
    got = fb(car.process_way(tags))
    assert got is not None
    assert got == pytest.approx(expected)


@pytest.mark.parametrize(
    "extra, kmh",
    [
        ({"surface": "asphalt"}, 65),
        ({"surface": "paved"}, 65),
        ({"surface": "compacted"}, 65),  # cap 80 above 65
        ({"surface": "paving_stones"}, 60),
        ({"surface": "gravel"}, 40),
        ({"surface": "cobblestone"}, 30),
        ({"surface": "sand"}, 20),
        ({"surface": "mud"}, 10),
        ({"surface": "ice"}, 20),
        ({"surface": "snow"}, 30),
        ({"tracktype": "grade1"}, 60),
        ({"tracktype": "grade3"}, 30),
        ({"tracktype": "grade5"}, 20),
        ({"smoothness": "intermediate"}, 65),
        ({"smoothness": "bad"}, 40),
        ({"smoothness": "very_horrible"}, 5),
        ({"surface": "gravel", "smoothness": "horrible"}, 10),
    ],
)
def test_car_surface_caps(extra: dict[str, str], kmh: float) -> None:
    assert fb(car.process_way({"highway": "primary", **extra})) == (kmh, kmh)


def test_car_smoothness_impassable_closes() -> None:
    assert car.process_way({"highway": "track", "access": "yes", "smoothness": "impassable"}) is None


@pytest.mark.parametrize(
    "tags, expected",
    [
        ({"oneway": "yes"}, (25, 0)),
        ({"oneway": "1"}, (25, 0)),
        ({"oneway": "true"}, (25, 0)),
        ({"oneway": "-1"}, (0, 25)),
        ({"oneway": "no"}, (25, 25)),
        ({"oneway": "alternating"}, (25, 25)),
        ({"oneway": "yes", "oneway:motorcar": "no"}, (25, 25)),
        ({"oneway": "yes", "oneway:vehicle": "no"}, (25, 25)),
        ({"oneway:motor_vehicle": "yes"}, (25, 0)),
        ({"oneway:vehicle": "-1"}, (0, 25)),
        ({"oneway:bicycle": "yes"}, (25, 25)),
        ({"oneway:foot": "yes"}, (25, 25)),
        ({"junction": "roundabout"}, (25, 0)),
        ({"junction": "circular"}, (25, 0)),
        ({"junction": "roundabout", "oneway": "no"}, (25, 25)),
        ({"junction": "roundabout", "oneway": "-1"}, (0, 25)),
    ],
)
def test_car_oneway(tags: dict[str, str], expected: tuple[float, float]) -> None:
    assert fb(car.process_way({"highway": "residential", **tags})) == expected


def test_car_implied_oneway_motorway_and_roundabout_flag() -> None:
    assert fb(car.process_way({"highway": "motorway"})) == (90, 0)
    assert fb(car.process_way({"highway": "motorway", "oneway": "no"})) == (90, 90)
    assert fb(car.process_way({"highway": "motorway", "oneway": "-1"})) == (0, 90)
    assert fb(car.process_way({"highway": "motorway", "oneway": "false"})) == (90, 0)  # OSRM: only "no" cancels
    assert fb(car.process_way({"highway": "motorway_link"})) == (45, 45)
    res = car.process_way({"highway": "primary", "junction": "roundabout"})
    assert res is not None and res.roundabout
    res = car.process_way({"highway": "primary", "junction": "circular"})
    assert res is not None and not res.roundabout


def test_car_reversible_dropped() -> None:
    assert car.process_way({"highway": "primary", "oneway": "reversible"}) is None


@pytest.mark.parametrize(
    "tags, expected, restricted",
    [
        ({"access": "no"}, None, None),
        ({"access": "no", "motorcar": "yes"}, (25, 25), (False, False)),
        ({"access": "no", "motor_vehicle": "yes"}, (25, 25), (False, False)),
        ({"vehicle": "no", "motor_vehicle": "yes"}, (25, 25), (False, False)),
        ({"motor_vehicle": "no"}, None, None),
        ({"motorcar": "no", "access": "yes"}, None, None),
        ({"vehicle": "no"}, None, None),
        ({"access": "agricultural"}, None, None),
        ({"access": "forestry"}, None, None),
        ({"motor_vehicle": "agricultural;forestry"}, None, None),  # a list: its first part of the highest class
        ({"motor_vehicle": "no; destination"}, (25, 25), (True, True)),  # restricted ranks over blacklisted
        ({"motor_vehicle": "private;yes"}, (25, 25), (False, False)),  # whitelisted over all
        ({"motor_vehicle": "foo;bar"}, (25, 25), (False, False)),  # unknown parts: the first, not blacklisted
        ({"access": "foot"}, None, None),
        ({"access": "permit"}, (25, 25), (True, True)),
        ({"access": "residents"}, (25, 25), (True, True)),
        ({"access": "psv"}, None, None),
        ({"access": "bus"}, None, None),
        ({"access": "emergency"}, None, None),
        ({"access": "private"}, (25, 25), (True, True)),
        ({"access": "destination"}, (25, 25), (True, True)),
        ({"access": "delivery"}, (25, 25), (True, True)),
        ({"motor_vehicle": "customers"}, (25, 25), (True, True)),
        ({"access": "private", "motor_vehicle": "yes"}, (25, 25), (False, False)),
        ({"access:forward": "no"}, (0, 25), (False, False)),
        ({"motor_vehicle:backward": "no"}, (25, 0), (False, False)),
        ({"access:backward": "destination"}, (25, 25), (False, True)),
        ({"access": "yes"}, (25, 25), (False, False)),
        ({"access": "permissive"}, (25, 25), (False, False)),
        ({"hov": "designated"}, (25, 25), (True, True)),
        ({"hov:lanes": "designated|designated"}, (25, 25), (True, True)),
        ({"hov:lanes": "designated|yes"}, (25, 25), (False, False)),
        ({"hov:lanes:forward": "designated"}, (25, 25), (True, False)),
    ],
)
def test_car_access(
    tags: dict[str, str], expected: tuple[float, float] | None, restricted: tuple[bool, bool] | None
) -> None:
    res = car.process_way({"highway": "residential", **tags})
    assert fb(res) == expected
    if res is not None:
        assert (res.forward_restricted, res.backward_restricted) == restricted


def test_car_private_service_road_restricted() -> None:
    res = car.process_way({"highway": "service", "access": "private"})
    assert fb(res) == (15, 15) and res is not None and res.forward_restricted


@pytest.mark.parametrize(
    "tags",
    [
        {"highway": "residential", "area": "yes"},
        {"highway": "pedestrian", "area": "yes"},
        {"highway": "steps"},
        {"highway": "construction"},
        {"highway": "construction", "construction": "primary"},
        {"highway": "primary", "construction": "yes"},
        {"highway": "primary", "railway": "construction"},
        {"highway": "proposed"},
        {"highway": "proposed", "proposed": "primary"},
        {"route": "ferry", "proposed": "yes"},
        {"highway": "primary", "impassable": "yes"},
        {"highway": "primary", "status": "impassable"},
        {"highway": "service", "service": "emergency_access"},
        {"highway": "primary", "maxheight": "1.8"},
        {"highway": "primary", "maxheight:physical": "1.9"},
        {"highway": "primary", "maxwidth": "1.8"},
        {"highway": "primary", "width": "1.9"},
        {"highway": "primary", "est_width": "1.5"},
        {"highway": "primary", "maxlength": "4"},
        {"highway": "primary", "maxweight": "1.5"},
        {"highway": "primary", "maxweight": "1500 kg"},
        {"highway": "primary", "maxweightrating": "1"},
        {"building": "yes"},
        {"name": "Main Street"},
    ],
)
def test_car_excluded(tags: dict[str, str]) -> None:
    assert car.process_way(tags) is None


@pytest.mark.parametrize(
    "extra",
    [
        {"construction": "no"},
        {"construction": "minor"},
        {"construction": "widening"},
        {"area": "no"},
        {"maxheight": "2.5"},
        {"maxheight": "default"},
        {"maxheight": "none"},
        {"maxwidth": "2"},
        {"width": "6"},
        {"maxlength": "10"},
        {"maxweight": "3.5"},
        {"toll": "yes"},
        {"proposed": "motorway"},  # an upgrade proposal on an existing road (only dropped without highway)
    ],
)
def test_car_not_excluded(extra: dict[str, str]) -> None:
    assert fb(car.process_way({"highway": "primary", **extra})) == (65, 65)


def test_car_size_limits_per_direction() -> None:
    assert fb(car.process_way({"highway": "primary", "maxheight:forward": "1.5"})) == (0, 65)
    assert fb(car.process_way({"highway": "primary", "maxweight:backward": "1"})) == (65, 0)


def test_car_ferries() -> None:
    res = car.process_way({"route": "ferry"})
    assert fb(res) == (5, 5)
    assert res is not None and res.ferry and res.road_class == "ferry" and res.forward_mode == "ferry"
    assert res.forward_duration_s is None
    res = car.process_way({"route": "ferry", "duration": "00:30"})
    assert res is not None and res.forward_duration_s == 1800 and res.backward_duration_s == 1800
    assert res.forward and res.backward
    assert car.process_way({"route": "ferry", "duration": "PT1H"}).forward_duration_s == 3600  # type: ignore[union-attr]
    assert car.process_way({"route": "ferry", "duration": "15"}).forward_duration_s == 900  # type: ignore[union-attr]
    assert car.process_way({"route": "ferry", "duration": "0"}).forward_duration_s == 1  # type: ignore[union-attr]
    res = car.process_way({"route": "ferry", "duration": "about an hour"})
    assert res is not None and res.forward_duration_s is None and fb(res) == (5, 5)
    res = car.process_way({"route": "shuttle_train"})
    assert fb(res) == (10, 10) and res is not None and res.ferry and res.road_class == "shuttle_train"
    assert car.process_way({"route": "ferry", "motor_vehicle": "no"}) is None
    res = car.process_way({"route": "ferry", "oneway": "yes", "duration": "10"})
    assert res is not None and res.forward and not res.backward and res.backward_duration_s is None
    assert car.process_way({"route": "hiking"}) is None
    # car.lua classifies a ferry by its highway tag like any way: guidance sees a ramp or a primary road there
    res = car.process_way({"route": "ferry", "highway": "trunk_link"})
    assert res is not None and res.ferry and res.road_class == "trunk_link" and res.forward_mode == "ferry"
    assert fb(res) == (5, 5)


def test_car_movable_bridges() -> None:
    res = car.process_way({"highway": "primary", "bridge": "movable"})
    assert fb(res) == (5, 5) and res is not None and res.road_class == "movable_bridge"
    res = car.process_way({"highway": "primary", "bridge": "movable", "duration": "00:05"})
    assert res is not None and res.forward_duration_s == 300 and res.forward and res.backward
    assert fb(car.process_way({"highway": "primary", "bridge": "movable", "capacity:car": "0"})) == (65, 65)
    assert fb(car.process_way({"highway": "primary", "bridge": "yes"})) == (65, 65)


def test_car_names_refs_toll() -> None:
    res = car.process_way({"highway": "primary", "name": "Rue de la Paix", "ref": "D 1;N 7"})
    assert res is not None and res.name == "Rue de la Paix" and res.ref == "D 1; N 7" and not res.toll
    assert car.process_way({"highway": "motorway", "toll": "yes"}).toll  # type: ignore[union-attr]
    assert car.process_way({"highway": "motorway", "toll:forward": "yes"}).toll  # type: ignore[union-attr]


# guidance attributes: OSRM's lib/guidance.lua (turn lanes, lane count), lib/destination.lua, way_handlers.names
def lanes(tags: dict[str, str]) -> tuple[str, str]:
    res = car.process_way({"highway": "primary", **tags})
    assert res is not None
    return res.turn_lanes_forward, res.turn_lanes_backward


@pytest.mark.parametrize(
    "tags, expected",
    [
        (
            {"turn:lanes:forward": "left|through", "turn:lanes:backward": "through|right"},
            ("left|through", "through|right"),
        ),
        ({"turn:lanes": "left|through"}, ("left|through", "left|through")),  # a two-way road: both directions
        ({"turn:lanes": "left|through", "oneway": "yes"}, ("left|through", "")),
        ({"turn:lanes": "left|through", "oneway": "-1"}, ("", "left|through")),
        ({"turn:lanes:forward": "left|through", "turn:lanes": "right"}, ("left|through", "right")),
        # public-service lanes at the sides are trimmed (forward: backward count on the left, forward on the right)
        ({"turn:lanes": "left|through|", "oneway": "yes", "lanes:psv": "1"}, ("left|through", "")),
        ({"turn:lanes": "|left|through", "oneway": "yes", "lanes:bus:backward": "1"}, ("left|through", "")),
        ({"turn:lanes:forward": "left||", "lanes:psv:forward": "2"}, ("left", "")),
        ({"turn:lanes": "left|through||", "oneway": "yes", "lanes:psv": "x"}, ("left|through||", "")),
        # vehicle:lanes keeps only the lanes open to vehicles, when it has as many entries as turn:lanes
        ({"turn:lanes": "left|through|right", "oneway": "yes", "vehicle:lanes": "yes|no|yes"}, ("left|right", "")),
        ({"turn:lanes": "left|through|right", "oneway": "yes", "vehicle:lanes": "yes|no"}, ("left|through|right", "")),
        ({}, ("", "")),
    ],
)
def test_car_turn_lanes(tags: dict[str, str], expected: tuple[str, str]) -> None:
    assert lanes(tags) == expected


def test_trim_and_access_tokens() -> None:
    assert B.trim_lanes("||left|through|", 2, 1) == "left|through"
    assert B.trim_lanes("|left", 2, 0) == "|left"  # not enough empty lanes to trim: unchanged
    assert B.trim_lanes("left|", 0, 1) == "left"
    assert B.apply_access_tokens("a|b|c", "no|yes|yes") == "b|c"
    assert B.apply_access_tokens("a|b|c", "yes|designated|yes") == "a|c"


@pytest.mark.parametrize(
    "tags, count",
    [
        ({"lanes": "3"}, 3),
        ({"lanes": "2.5"}, 0),
        ({"lanes": "-1"}, 0),
        ({"lanes:forward": "2", "lanes:backward": "1"}, 3),
        ({"lanes:forward": "2"}, 2),
        ({"lanes": "1", "turn:lanes:forward": "left|through", "turn:lanes:backward": "left|right"}, 4),
        ({"lanes": "4", "turn:lanes:forward": "left|through"}, 4),
        ({"turn:lanes:forward": "left|sideways"}, 0),  # an unknown arrow: not a lane description
        ({}, 0),
    ],
)
def test_lane_count(tags: dict[str, str], count: int) -> None:
    res = car.process_way({"highway": "primary", **tags})
    assert res is not None and res.lane_count == count


def test_car_signs_and_guidance_flags() -> None:
    one = {"highway": "motorway_link", "oneway": "yes"}
    res = car.process_way({**one, "destination": "Berlin;Hamburg", "destination:ref": "A1;A2"})
    assert res is not None and res.destinations == "A1, A2: Berlin, Hamburg"
    res = car.process_way({**one, "destination:street": "St Street"})
    assert res is not None and res.destinations == "St Street"
    res = car.process_way({"highway": "motorway_link", "oneway": "-1", "destination:backward": "Köln"})
    assert res is not None and res.destinations == "Köln"
    res = car.process_way({"highway": "primary", "destination": "Berlin"})  # not a oneway: no destinations
    assert res is not None and res.destinations == ""
    res = car.process_way({**one, "junction:ref": "10;12", "name": "Ramp", "name:pronunciation": "ramp"})
    assert res is not None and res.exits == "10; 12" and res.pronunciation == "ramp"
    res = car.process_way({"highway": "primary", "tunnel": "building_passage", "junction": "circular"})
    assert res is not None and res.tunnel and res.circular and res.forward and not res.backward
    res = car.process_way({"highway": "primary", "tunnel": "no", "junction": "roundabout"})
    assert res is not None and not res.tunnel and not res.circular and res.roundabout


@pytest.mark.parametrize(
    "tags, split",
    [
        ({}, False),
        ({"maxspeed:forward": "50", "maxspeed:backward": "30"}, True),  # different speeds
        ({"turn:lanes:forward": "left|through"}, True),  # turn lanes one way only
        ({"turn:lanes": "left|through"}, False),  # the same lanes both ways
        ({"oneway": "yes", "turn:lanes": "left|through"}, False),  # a oneway is never split
        ({"access:backward": "private"}, True),  # restricted one way only
        ({"toll:forward": "yes"}, True),  # toll one way only
        ({"toll": "yes"}, False),
    ],
)
def test_car_split_ways(tags: dict[str, str], split: bool) -> None:
    # OSRM's is_split: the directions of a two-way way differ, so OSRM keeps them apart (guidance compression)
    res = car.process_way({"highway": "primary", **tags})
    assert res is not None and res.split == split


def test_lanes_and_destinations_per_profile() -> None:
    tags = {"highway": "primary", "oneway": "yes", "turn:lanes": "left|through", "destination": "Porto"}
    res = foot.process_way({**tags, "oneway:foot": "yes"})  # foot.lua reads destinations, not turn lanes
    assert res is not None and res.turn_lanes_forward == "" and res.destinations == "Porto"
    res = bike.process_way(tags)  # bicycle.lua reads neither
    assert res is not None and res.turn_lanes_forward == "" and res.destinations == ""


@pytest.mark.parametrize(
    "tags, expected",
    [
        ({"barrier": "bollard"}, (True, 0.0)),
        ({"barrier": "block"}, (True, 0.0)),
        ({"barrier": "yes"}, (True, 0.0)),
        ({"barrier": "fence"}, (True, 0.0)),
        ({"barrier": "wall"}, (True, 0.0)),
        ({"barrier": "cycle_barrier"}, (True, 0.0)),
        ({"barrier": "chain"}, (True, 0.0)),
        ({"barrier": "kerb"}, (True, 0.0)),
        ({"barrier": "gate"}, (False, 60.0)),
        ({"barrier": "lift_gate"}, (False, 60.0)),
        ({"barrier": "cattle_grid"}, (False, 0.0)),
        ({"barrier": "border_control"}, (False, 0.0)),
        ({"barrier": "toll_booth"}, (False, 0.0)),
        ({"barrier": "sally_port"}, (False, 0.0)),
        ({"barrier": "no"}, (False, 0.0)),
        ({"barrier": "entrance"}, (False, 0.0)),
        ({"barrier": "arch"}, (False, 0.0)),
        ({"barrier": "height_restrictor"}, (False, 0.0)),
        ({"barrier": "height_restrictor", "maxheight": "2.5"}, (False, 0.0)),
        ({"barrier": "height_restrictor", "maxheight": "1.9"}, (True, 0.0)),
        ({"barrier": "bollard", "bollard": "rising"}, (False, 0.0)),
        ({"barrier": "kerb", "kerb": "lowered"}, (False, 0.0)),
        ({"barrier": "kerb", "kerb": "flush"}, (False, 0.0)),
        ({"barrier": "kerb", "highway": "crossing"}, (False, 0.0)),
        ({"barrier": "fence", "sensory": "audible"}, (False, 0.0)),
        ({"barrier": "bollard", "access": "yes"}, (False, 0.0)),
        ({"barrier": "bollard", "motor_vehicle": "yes"}, (False, 0.0)),
        ({"barrier": "gate", "access": "private"}, (False, 0.0)),  # restricted values never block nodes
        ({"barrier": "gate", "access": "no"}, (True, 0.0)),
        ({"access": "no"}, (True, 0.0)),
        ({"motor_vehicle": "no"}, (True, 0.0)),
        ({"motorcar": "no", "access": "yes"}, (True, 0.0)),
        ({"access": "destination"}, (False, 0.0)),
        ({"access": "psv"}, (True, 0.0)),
        ({"highway": "traffic_signals"}, (False, 2.0)),
        ({"highway": "stop"}, (False, 2.0)),
        ({"highway": "give_way"}, (False, 1.0)),
        ({"highway": "crossing"}, (False, 0.0)),
        ({"highway": "traffic_signals", "barrier": "lift_gate"}, (False, 62.0)),
    ],
)
def test_car_nodes(tags: dict[str, str], expected: tuple[bool, float]) -> None:
    assert node(car.process_node(tags)) == expected


# ---------------------------------------------------------------- bike


@pytest.mark.parametrize(
    "tags, expected, modes",
    [
        ({"highway": "cycleway"}, (15, 15), ("cycling", "cycling")),
        ({"highway": "primary"}, (15, 15), ("cycling", "cycling")),
        ({"highway": "residential"}, (15, 15), ("cycling", "cycling")),
        ({"highway": "service"}, (15, 15), ("cycling", "cycling")),
        ({"highway": "track"}, (12, 12), ("cycling", "cycling")),
        ({"highway": "path"}, (13, 13), ("cycling", "cycling")),  # bicycle.lua 26.10: path 13
        ({"highway": "footway"}, (4, 4), ("pushing_bike", "pushing_bike")),
        ({"highway": "pedestrian"}, (4, 4), ("pushing_bike", "pushing_bike")),
        ({"highway": "steps"}, (2, 2), ("pushing_bike", "pushing_bike")),
        ({"highway": "footway", "bicycle": "yes"}, (15, 15), ("cycling", "cycling")),
        ({"highway": "footway", "bicycle": "designated"}, (15, 15), ("cycling", "cycling")),
        ({"highway": "bridleway", "bicycle": "yes"}, (15, 15), ("cycling", "cycling")),
        ({"highway": "primary", "bicycle": "dismount"}, (4, 4), ("pushing_bike", "pushing_bike")),
        ({"highway": "footway", "foot": "yes"}, (4, 4), ("pushing_bike", "pushing_bike")),
        ({"highway": "bridleway", "foot": "yes"}, (4, 4), ("pushing_bike", "pushing_bike")),
        ({"highway": "bridleway", "foot:forward": "yes"}, (4, 0), ("pushing_bike", "inaccessible")),
        ({"man_made": "pier"}, (4, 4), ("pushing_bike", "pushing_bike")),
        ({"railway": "platform"}, (4, 4), ("cycling", "cycling")),
        ({"public_transport": "platform"}, (4, 4), ("cycling", "cycling")),
        ({"amenity": "parking"}, (10, 10), ("cycling", "cycling")),
        ({"railway": "tram", "bicycle": "yes"}, (10, 10), ("train", "train")),
        ({"highway": "primary", "bridge": "movable"}, (5, 5), ("cycling", "cycling")),
        ({"highway": "pedestrian", "area": "yes"}, (4, 4), ("pushing_bike", "pushing_bike")),
        ({"highway": "residential", "bicycle": "no;yes"}, (15, 15), ("cycling", "cycling")),
        ({"highway": "residential", "vehicle:forward": "agricultural"}, (0, 15), ("inaccessible", "cycling")),
        ({"highway": "residential", "cycleway:left": "separate", "bicycle": "designated"}, (15, 15), ("cycling",) * 2),
    ],
)
def test_bike_speeds_and_pushing(tags: dict[str, str], expected: tuple[float, float], modes: tuple[str, str]) -> None:
    res = bike.process_way(tags)
    assert fb(res) == expected
    assert res is not None and (res.forward_mode, res.backward_mode) == modes


@pytest.mark.parametrize(
    "tags",
    [
        {"highway": "motorway"},
        {"highway": "trunk"},
        {"highway": "bridleway"},
        {"highway": "residential", "bicycle": "private;no"},  # resolved: both directions blacklisted
        {"highway": "residential", "cycleway": "separate"},
        {"highway": "residential", "cycleway:both": "separate", "vehicle": "yes"},  # only bicycle= overrides
        {"railway": "tram"},
        {"highway": "footway", "foot": "no"},
        {"highway": "footway", "bicycle": "no"},
        {"highway": "primary", "bicycle": "no"},
        {"highway": "primary", "access": "no"},
        {"highway": "primary", "vehicle": "no"},
        {"highway": "primary", "access": "private"},
        {"highway": "primary", "bicycle": "use_sidepath"},
        {"highway": "track", "access": "agricultural"},
        {"highway": "construction"},
        {"highway": "primary", "construction": "yes"},
        {"highway": "proposed"},
        {"proposed": "yes", "route": "ferry"},  # a proposed way without highway
        {"highway": "primary", "motorroad": "yes"},
        {"highway": "primary", "impassable": "yes"},
        {"highway": "primary", "status": "impassable"},
        {"building": "yes"},
    ],
)
def test_bike_excluded(tags: dict[str, str]) -> None:
    assert bike.process_way(tags) is None


def test_bike_blocked_ways_2610() -> None:
    """bicycle.lua 26.10's blocked_ways: a `proposed=*` upgrade of a real road is a road; motorroads are closed; an
    audible fence is no barrier."""
    assert fb(bike.process_way({"highway": "tertiary", "proposed": "secondary"})) == (15, 15)
    assert bike.process_way({"highway": "tertiary", "motorroad": "yes"}) is None
    assert bike.process_node({"barrier": "fence", "sensory": "audible"}) is None
    assert bike.process_node({"barrier": "fence"}) == NodeResult(barrier=True)


def test_foot_sidewalk_separate_conveying_audible_fence() -> None:
    """foot.lua 26.10: a carriageway whose sidewalk is its own way is walked only where a foot access tag opens it;
    an escalator runs one way unless `oneway=no`; an audible fence is no barrier."""
    assert foot.process_way({"highway": "residential", "sidewalk:both": "separate"}) is None
    assert fb(foot.process_way({"highway": "residential", "sidewalk": "separate", "foot": "yes"})) == (5, 5)
    open_fwd = foot.process_way({"highway": "residential", "sidewalk:right": "separate", "foot:forward": "yes"})
    assert open_fwd is not None and open_fwd.forward and not open_fwd.backward
    up = foot.process_way({"highway": "steps", "conveying": "forward"})
    assert up is not None and up.forward and not up.backward
    down = foot.process_way({"highway": "footway", "conveying": "backward"})
    assert down is not None and down.backward and not down.forward
    assert fb(foot.process_way({"highway": "steps", "conveying": "forward", "oneway": "no"})) == (5, 5)
    assert foot.process_node({"barrier": "fence", "sensory": "audio"}) is None


def test_bike_access_overrides() -> None:
    assert fb(bike.process_way({"highway": "primary", "access": "no", "bicycle": "yes"})) == (15, 15)
    assert fb(bike.process_way({"highway": "track", "vehicle": "no", "bicycle": "designated"})) == (12, 12)
    assert fb(bike.process_way({"highway": "motorway", "bicycle": "yes", "oneway": "no"})) == (15, 15)


@pytest.mark.parametrize(
    "tags, expected, modes",
    [
        ({"oneway": "yes"}, (15, 4), ("cycling", "pushing_bike")),
        ({"oneway": "-1"}, (4, 15), ("pushing_bike", "cycling")),
        ({"oneway": "yes", "foot": "no"}, (15, 0), ("cycling", "inaccessible")),
        ({"oneway": "yes", "oneway:bicycle": "no"}, (15, 15), ("cycling", "cycling")),
        ({"oneway:bicycle": "yes"}, (15, 4), ("cycling", "pushing_bike")),
        ({"oneway:bicycle": "-1"}, (4, 15), ("pushing_bike", "cycling")),
        ({"oneway": "yes", "cycleway": "opposite"}, (15, 15), ("cycling", "cycling")),
        ({"oneway": "yes", "cycleway": "opposite_lane"}, (15, 15), ("cycling", "cycling")),
        ({"oneway": "yes", "cycleway": "opposite_track"}, (15, 15), ("cycling", "cycling")),
        ({"oneway": "yes", "cycleway:left": "opposite_lane"}, (15, 15), ("cycling", "cycling")),
        ({"oneway": "-1", "cycleway:right": "opposite_lane"}, (15, 15), ("cycling", "cycling")),
        ({"oneway": "yes", "cycleway": "lane"}, (15, 4), ("cycling", "pushing_bike")),
        ({"junction": "roundabout"}, (15, 0), ("cycling", "inaccessible")),
        ({"junction": "circular"}, (15, 0), ("cycling", "inaccessible")),
        ({"junction": "roundabout", "oneway": "no"}, (15, 15), ("cycling", "cycling")),
        ({"oneway": "reversible"}, (15, 15), ("cycling", "cycling")),
    ],
)
def test_bike_oneway_and_cycleways(tags: dict[str, str], expected: tuple[float, float], modes: tuple[str, str]) -> None:
    res = bike.process_way({"highway": "residential", **tags})
    assert fb(res) == expected
    assert res is not None and (res.forward_mode, res.backward_mode) == modes


def test_bike_cycleway_lane_on_track_speeds_up() -> None:
    assert fb(bike.process_way({"highway": "track", "cycleway": "lane"})) == (15, 15)
    assert fb(bike.process_way({"highway": "track", "cycleway:right": "track"})) == (15, 12)


@pytest.mark.parametrize(
    "tags, expected",
    [
        ({"maxspeed": "10"}, (10, 10)),
        ({"maxspeed": "50"}, (15, 15)),
        ({"maxspeed": "5 mph"}, (5 * 1.609, 5 * 1.609)),
        ({"maxspeed": "DE:urban"}, (15, 15)),
        ({"maxspeed:forward": "10"}, (10, 15)),
        ({"maxspeed": "12", "maxspeed:backward": "8"}, (12, 8)),
        ({"surface": "asphalt"}, (15, 15)),
        ({"surface": "paving_stones"}, (10, 10)),
        ({"surface": "gravel"}, (6, 6)),
        ({"surface": "mud"}, (3, 3)),
        ({"surface": "sett"}, (9, 9)),  # bicycle.lua 26.10's caps from here on
        ({"surface": "dirt"}, (8, 8)),
        ({"surface": "cobblestone"}, (7, 7)),
        ({"surface": "ground"}, (10, 10)),
        ({"surface": "woodchips"}, (3, 3)),
    ],
)
def test_bike_maxspeed_and_surface(tags: dict[str, str], expected: tuple[float, float]) -> None:
    assert fb(bike.process_way({"highway": "residential", **tags})) == pytest.approx(expected)


def test_bike_surface_on_pushing() -> None:
    assert fb(bike.process_way({"highway": "footway", "surface": "sand"})) == (3, 3)
    assert fb(bike.process_way({"highway": "footway", "surface": "gravel"})) == (4, 4)


def test_bike_ferries() -> None:
    res = bike.process_way({"route": "ferry"})
    assert fb(res) == (5, 5) and res is not None and res.ferry and res.forward_mode == "ferry"
    res = bike.process_way({"route": "ferry", "duration": "00:20"})
    assert res is not None and res.forward_duration_s == 1200 and res.forward and res.backward
    res = bike.process_way({"route": "ferry", "duration": "20", "oneway": "yes"})
    assert res is not None and res.forward and not res.backward
    assert bike.process_way({"route": "ferry", "bicycle": "no"}) is None


@pytest.mark.parametrize(
    "tags, expected",
    [
        ({"barrier": "bollard"}, (False, 0.0)),
        ({"barrier": "gate"}, (False, 0.0)),
        ({"barrier": "lift_gate"}, (False, 0.0)),
        ({"barrier": "cycle_barrier"}, (False, 0.0)),
        ({"barrier": "block"}, (False, 0.0)),
        ({"barrier": "kerb"}, (False, 0.0)),
        ({"barrier": "fence"}, (True, 0.0)),
        ({"barrier": "wall"}, (True, 0.0)),
        ({"barrier": "yes"}, (True, 0.0)),
        ({"barrier": "fence", "bicycle": "yes"}, (False, 0.0)),
        ({"access": "no"}, (True, 0.0)),
        ({"bicycle": "no"}, (True, 0.0)),
        ({"access": "private"}, (True, 0.0)),
        ({"access": "no", "bicycle": "yes"}, (False, 0.0)),
        ({"access": "no", "highway": "crossing"}, (False, 0.0)),
        ({"highway": "traffic_signals"}, (False, 2.0)),
        ({"highway": "stop"}, (False, 0.0)),
    ],
)
def test_bike_nodes(tags: dict[str, str], expected: tuple[bool, float]) -> None:
    assert node(bike.process_node(tags)) == expected


# ---------------------------------------------------------------- foot


@pytest.mark.parametrize(
    "tags",
    [
        {"highway": "primary"},
        {"highway": "secondary"},
        {"highway": "residential"},
        {"highway": "living_street"},
        {"highway": "service"},
        {"highway": "track"},
        {"highway": "path"},
        {"highway": "footway"},
        {"highway": "pedestrian"},
        {"highway": "steps"},
        {"highway": "platform"},
        {"highway": "pier"},
        {"railway": "platform"},
        {"amenity": "parking"},
        {"man_made": "pier"},
        {"highway": "primary", "proposed": "yes"},  # 26.10's blocked_ways: an upgrade proposal, a real road
        {"highway": "primary", "oneway": "yes"},
        {"highway": "primary", "oneway": "-1"},
        {"highway": "primary", "junction": "roundabout"},
        {"highway": "primary", "oneway:bicycle": "yes"},
        {"highway": "pedestrian", "area": "yes"},
        {"highway": "motorway", "foot": "yes"},
        {"highway": "bridleway", "foot": "designated"},
        {"highway": "construction", "foot": "yes"},
        {"highway": "residential", "access": "no", "foot": "yes"},
        {"highway": "residential", "access": "destination"},
        {"highway": "primary", "bicycle": "no"},
        {"highway": "primary", "motor_vehicle": "no"},
    ],
)
def test_foot_walkable_both_ways(tags: dict[str, str]) -> None:
    res = foot.process_way(tags)
    assert fb(res) == (5, 5)
    assert res is not None and res.forward_mode == "walking"


@pytest.mark.parametrize(
    "tags",
    [
        {"highway": "motorway"},
        {"highway": "motorway_link"},
        {"highway": "trunk"},
        {"highway": "bridleway"},
        {"highway": "cycleway"},
        {"highway": "construction"},
        {"highway": "proposed"},
        {"highway": "primary", "motorroad": "yes"},
        {"highway": "road"},  # not in 26.10's foot.lua speeds
        {"leisure": "track"},  # nor is leisure
        {"highway": "residential", "sidewalk": "separate"},
        {"highway": "primary", "impassable": "yes"},
        {"highway": "footway", "foot": "no"},
        {"highway": "footway", "access": "no"},
        {"highway": "footway", "access": "private"},
        {"highway": "track", "foot": "agricultural"},
        {"highway": "track", "access": "forestry"},
        {"highway": "footway", "foot": "private;no"},  # a list: its first part of the highest class
        {"building": "yes"},
        {"bridge": "yes"},
    ],
)
def test_foot_excluded(tags: dict[str, str]) -> None:
    assert foot.process_way(tags) is None


@pytest.mark.parametrize(
    "tags, expected",
    [
        ({"oneway:foot": "yes"}, (5, 0)),
        ({"oneway:foot": "-1"}, (0, 5)),
        ({"oneway:foot": "no", "oneway": "yes"}, (5, 5)),
        ({"foot:forward": "no"}, (0, 5)),
        ({"access:backward": "no"}, (5, 0)),
        ({"foot": "no;yes"}, (5, 5)),  # a list: its whitelisted part
        ({"surface": "gravel"}, (3.75, 3.75)),
        ({"surface": "fine_gravel"}, (3.75, 3.75)),
        ({"surface": "mud"}, (2.5, 2.5)),
        ({"surface": "sand"}, (2.5, 2.5)),
        ({"surface": "asphalt"}, (5, 5)),
    ],
)
def test_foot_directions_and_surface(tags: dict[str, str], expected: tuple[float, float]) -> None:
    assert fb(foot.process_way({"highway": "footway", **tags})) == expected


def test_foot_default_speed_by_access() -> None:
    assert fb(foot.process_way({"highway": "cycleway", "foot": "permissive"})) == (5, 5)
    assert fb(foot.process_way({"highway": "cycleway", "foot:forward": "yes"})) == (5, 0)


def test_foot_ferries_and_names() -> None:
    res = foot.process_way({"route": "ferry"})
    assert fb(res) == (5, 5) and res is not None and res.ferry and res.forward_mode == "ferry"
    res = foot.process_way({"route": "ferry", "duration": "PT45M"})
    assert res is not None and res.forward_duration_s == 2700
    assert foot.process_way({"route": "ferry", "foot": "no"}) is None
    res = foot.process_way({"highway": "footway", "name": "Quai", "ref": "GR 5"})
    assert res is not None and res.name == "Quai" and res.ref == "GR 5"


@pytest.mark.parametrize(
    "tags, expected",
    [
        ({"barrier": "bollard"}, (False, 0.0)),
        ({"barrier": "gate"}, (False, 0.0)),
        ({"barrier": "kissing_gate"}, (False, 0.0)),
        ({"barrier": "stile"}, (False, 0.0)),
        ({"barrier": "cycle_barrier"}, (False, 0.0)),
        ({"barrier": "fence"}, (True, 0.0)),
        ({"barrier": "wall"}, (True, 0.0)),
        ({"barrier": "yes"}, (True, 0.0)),
        ({"barrier": "fence", "foot": "yes"}, (False, 0.0)),
        ({"access": "no"}, (True, 0.0)),
        ({"foot": "no"}, (True, 0.0)),
        ({"foot": "private"}, (True, 0.0)),
        ({"access": "no", "foot": "yes"}, (False, 0.0)),
        ({"highway": "traffic_signals"}, (False, 2.0)),
        ({"highway": "give_way"}, (False, 0.0)),
    ],
)
def test_foot_nodes(tags: dict[str, str], expected: tuple[bool, float]) -> None:
    assert node(foot.process_node(tags)) == expected


# ---------------------------------------------------------------- testbot


@pytest.mark.parametrize(
    "tags, expected",
    [
        ({"highway": "primary"}, (36, 36)),
        ({"highway": "secondary"}, (18, 18)),
        ({"highway": "tertiary"}, (12, 12)),
        ({"highway": "steps"}, (6, 6)),
        ({"highway": "residential"}, (24, 24)),
        ({"highway": "motorway"}, (24, 24)),  # testbot implies nothing for motorways
        ({"highway": "footway"}, (24, 24)),
        ({"highway": "river"}, (36, 16)),
        ({"highway": "primary", "maxspeed": "18"}, (18, 18)),
        ({"highway": "primary", "maxspeed": "50"}, (36, 36)),  # caps, never raises
        ({"highway": "primary", "maxspeed": "30 mph"}, (36, 36)),  # only plain numbers
        ({"highway": "primary", "maxspeed:forward": "50"}, (50, 36)),  # direction value replaces
        ({"highway": "primary", "maxspeed": "12", "maxspeed:backward": "24"}, (12, 24)),
        ({"highway": "primary", "oneway": "yes"}, (36, 0)),
        ({"highway": "primary", "oneway": "1"}, (36, 0)),
        ({"highway": "primary", "oneway": "true"}, (36, 0)),
        ({"highway": "primary", "oneway": "-1"}, (0, 36)),
        ({"highway": "primary", "oneway": "no"}, (36, 36)),
        ({"highway": "primary", "junction": "roundabout"}, (36, 0)),
        ({"highway": "primary", "junction": "roundabout", "oneway": "no"}, (36, 36)),
        ({"highway": "primary", "junction": "circular"}, (36, 36)),
        ({"highway": "primary", "access": "no"}, (36, 36)),  # testbot has no access rules
        ({"route": "ferry"}, (24, 24)),
    ],
)
def test_testbot_ways(tags: dict[str, str], expected: tuple[float, float]) -> None:
    assert fb(testbot.process_way(tags)) == expected


def test_testbot_duration_and_flags() -> None:
    res = testbot.process_way({"route": "ferry", "duration": "00:01"})
    assert res is not None and res.forward_duration_s == 60 and res.backward_duration_s == 60
    assert res.forward and res.backward and res.ferry and res.forward_mode == "route"
    res = testbot.process_way({"highway": "primary", "duration": "PT2M", "oneway": "yes"})
    assert res is not None and res.forward_duration_s == 120 and res.backward_duration_s is None and not res.backward
    res = testbot.process_way({"highway": "primary", "junction": "roundabout", "toll": "yes", "name": "Ring"})
    assert res is not None and res.roundabout and res.toll and res.name == "Ring"
    assert testbot.process_way({"building": "yes"}) is None


def test_testbot_nodes() -> None:
    assert node(testbot.process_node({"highway": "traffic_signals"})) == (False, 7.0)
    assert node(testbot.process_node({"barrier": "bollard"})) == (False, 0.0)
    assert node(testbot.process_node({"highway": "stop"})) == (False, 0.0)

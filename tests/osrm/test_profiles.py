"""Unit tests of the profile rules on tag dicts (no pipeline): the tags helpers and testbot here; car in
`test_profiles_car.py`, bike and foot in `test_profiles_bike_foot.py` (which import `fb` and `node` from here)."""

from __future__ import annotations

import pytest

from preprocessing.osm.profiles import get_profile, testbot
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

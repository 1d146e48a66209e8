"""car.lua's rules on tag dicts (no pipeline): speeds, access, oneways, exclusions, ferries, guidance attributes,
nodes."""

from __future__ import annotations

import pytest

from preprocessing.osm.profiles import base as B
from preprocessing.osm.profiles import bike, car, foot
from tests.osrm.test_profiles import fb, node

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

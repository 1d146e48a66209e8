"""bicycle.lua's and foot.lua's rules on tag dicts (no pipeline): speeds, pushing, access, oneways, surfaces,
ferries."""

from __future__ import annotations

import pytest

from preprocessing.osm.profiles import bike, foot
from preprocessing.osm.profiles.base import NodeResult
from tests.osrm.test_profiles import fb, node

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

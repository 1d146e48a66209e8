"""Bicycle profile: OSRM's `bicycle.lua`.

Way rules, in OSRM's handler order: dropped when `impassable`, `motorroad=yes`, under construction
(`highway|railway=construction`, `construction=*` other than no/widening/minor) or proposed (a `proposed=*` upgrade
of a real road is not); a way needs one of highway, route, railway, amenity, man_made, public_transport or bridge;
the first access value of `bicycle > vehicle > access` drops the way when blacklisted (no, private, agricultural,
forestry, delivery, use_sidepath), and so do the values with `:forward`/`:backward` (a `;`-list resolved to its part
of the highest class) where both directions' are; a carriageway whose cycleway is a way of its own (`cycleway`,
`cycleway:both|left|right` = separate) is dropped unless its `bicycle` tag is yes, permissive, designated or
destination. Speeds: movable bridges 5 km/h (or `duration`), `route=ferry` 5 km/h (or `duration`), platforms 4,
trains 10 (only with whitelisted access), parking 10, the cycling table (15 km/h; track 12, path 13), else 15 where
access is whitelisted. Oneway: `oneway:bicycle` first, then `oneway`, implied on motorways and roundabouts;
`cycleway=opposite*` (`cycleway:both` where `cycleway` is missing, and `cycleway:left|right` variants) reopen the
other direction at cycleway speed, cycle lanes set cycleway speed. Pushing: a direction that cannot be ridden is
walked at 4 km/h where OSRM allows it (footway/pedestrian 4, steps 2, piers, `foot=yes`, any way type a bike may use,
but not against an implied oneway), unless `foot=no`; `bicycle=dismount` walks both ways. `maxspeed` (numeric, mph)
caps the speed; then a direction with blacklisted access closes; surface caps follow. Nodes: blacklisted access
blocks (not on crossings), `barrier=yes|wall|fence` blocks (an audible fence does not), everything else (bollards,
gates, cycle barriers) passes; traffic signals 2 s.
Turns (edge-based): (angle / 90)^2 x 6 s (right turns cheaper by 1.4) on every turn OSRM takes, also where only two
roads meet unless OSRM compresses the node away (`floor.format.road_classification`), 20 s more for a u-turn, the
signal's 2 s on turns through it; a signal OSRM compresses away costs its fake turn through the node, 17.1 s, in both
directions (and the 2 s where it applies). OSRM's mode-change penalty has no effect: the weight is the duration.

Deliberate differences from OSRM:
- Turn angles come from the neighbouring shape points (OSRM's bearing formula, 1e-6 degree coordinates), not OSRM's
  coordinate extractor, which looks further along a path or service road: a turn may differ by a decisecond.
- Weight is duration: the cyclability weighting (unsafe-road and service penalties) is not applied.
- `highway=proposed` is dropped even without a `proposed=*` tag.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from preprocessing.osm.profiles import tags as T
from preprocessing.osm.profiles.base import (
    OBSTACLE_DIRECTIONS,
    Direction,
    NodeResult,
    Turns,
    WayResult,
    directed_way,
    turn_weight_same,
)

NAME = "bike"
MODE = "cycling"
# cycling, pushing_bike (a direction walked: footways, steps, against a oneway, `bicycle=dismount`), ferry, train
# (`railway=train|...` with whitelisted access); bicycle.lua's allowed_start_modes: no start or end on a ferry or train
START_MODES = ("cycling", "pushing_bike")
EXCLUDABLE = (frozenset({"ferry"}),)  # bicycle.lua has it, commented out to save memory; ours is cheap

# bicycle.lua's turns: no restrictions (use_turn_restrictions = false); node-based unless asked (`--turns`)
TURNS = True  # edge-based like every OSRM profile: turn costs and restrictions (`--no-turns` for node-based)
WEIGHT_NAME = "duration"  # the weight is the travel time
CONTINUE_STRAIGHT = False  # no u-turn at via points (OSRM continue_straight_at_waypoint)
USE_TURN_RESTRICTIONS = True  # bicycle.lua: use_turn_restrictions = true
RESTRICTIONS = ("bicycle",)
TURN_PENALTY_S = 6.0
TURN_BIAS = 1.4
U_TURN_PENALTY_S = 20.0
# OSRM's graph compressor charges an obstacle node it compresses away the cost of a fake turn whose angle it gives as
# 180 degrees (`ExtractionTurn`'s 180 - 0): (180 / 90)^2 x 6 / 1.4 s
FAKE_TURN_S = 2.0 * 2.0 * TURN_PENALTY_S / TURN_BIAS


def turn_duration_s(t: Turns) -> np.ndarray:
    """bicycle.lua: (angle / 90)^2 x 6 s, right turns cheaper by the bias 1.4, plus 20 s for a u-turn, on every turn
    OSRM takes: also where only two roads meet, unless they are compatible and OSRM compresses the node away."""
    a = np.where(t.u_turn, 180.0, t.angle) / 90.0
    s = np.where(a >= 0, a * a * TURN_PENALTY_S / TURN_BIAS, a * a * TURN_PENALTY_S * TURN_BIAS)
    taken = ~t.compressed if t.compressed is not None else (t.roads > 2) | t.mode_change
    s = np.where(taken | t.u_turn, s, 0.0)
    return s + np.where(t.u_turn, U_TURN_PENALTY_S, 0.0)


ACCESS_HIERARCHY = ("bicycle", "vehicle", "access")
WAY_KEYS = frozenset({"highway", "route", "railway", "amenity", "man_made", "public_transport", "bridge"})
NODE_KEYS = frozenset({"barrier", "highway", *ACCESS_HIERARCHY})

DEFAULT_SPEED = 15.0
WALKING_SPEED = 4.0
TRAFFIC_SIGNAL_PENALTY_S = 2.0

BICYCLE_SPEEDS: dict[str, float] = {
    "cycleway": DEFAULT_SPEED,
    "primary": DEFAULT_SPEED,
    "primary_link": DEFAULT_SPEED,
    "secondary": DEFAULT_SPEED,
    "secondary_link": DEFAULT_SPEED,
    "tertiary": DEFAULT_SPEED,
    "tertiary_link": DEFAULT_SPEED,
    "residential": DEFAULT_SPEED,
    "unclassified": DEFAULT_SPEED,
    "living_street": DEFAULT_SPEED,
    "service": DEFAULT_SPEED,
    "track": 12.0,
    "path": 13.0,
}
PEDESTRIAN_SPEEDS: dict[str, float] = {"footway": WALKING_SPEED, "pedestrian": WALKING_SPEED, "steps": 2.0}
RAILWAY_SPEEDS: dict[str, float] = {
    "train": 10.0,
    "railway": 10.0,
    "subway": 10.0,
    "light_rail": 10.0,
    "monorail": 10.0,
    "tram": 10.0,
}
PLATFORM_SPEEDS: dict[str, float] = {"platform": WALKING_SPEED}
AMENITY_SPEEDS: dict[str, float] = {"parking": 10.0, "parking_entrance": 10.0}
MAN_MADE_SPEEDS: dict[str, float] = {"pier": WALKING_SPEED}
ROUTE_SPEEDS: dict[str, float] = {"ferry": 5.0}
BRIDGE_SPEEDS: dict[str, float] = {"movable": 5.0}
SURFACE_SPEEDS: dict[str, float] = {  # bicycle.lua (osrm-backend 26.10): caps, km/h
    "asphalt": DEFAULT_SPEED,
    "chipseal": DEFAULT_SPEED,
    "concrete": DEFAULT_SPEED,
    "concrete_lanes": DEFAULT_SPEED,
    "wood": 10.0,
    "metal": 10.0,
    "cobblestone:flattened": 10.0,
    "paving_stones": 10.0,
    "compacted": 10.0,
    "cobblestone": 7.0,
    "unpaved": 6.0,
    "fine_gravel": 10.0,
    "gravel": 6.0,
    "pebblestone": 6.0,
    "grass_paver": 6.0,
    "ground": 10.0,
    "dirt": 8.0,
    "earth": 6.0,
    "laterite": 5.0,
    "grass": 6.0,
    "mud": 3.0,
    "sand": 3.0,
    "woodchips": 3.0,
    "sett": 9.0,
}

ACCESS_WHITELIST = frozenset({"yes", "permissive", "designated"})
ACCESS_BLACKLIST = frozenset({"no", "private", "agricultural", "forestry", "delivery", "use_sidepath"})
BARRIER_BLACKLIST = frozenset({"yes", "wall", "fence"})
CONSTRUCTION_WHITELIST = frozenset({"no", "widening", "minor"})
CYCLEWAY_TAGS = frozenset({"track", "lane", "share_busway", "sharrow", "shared", "shared_lane"})
OPPOSITE_CYCLEWAY_TAGS = frozenset({"opposite", "opposite_lane", "opposite_track"})


def _blocked(tags: Mapping[str, str], highway: str | None) -> bool:
    """OSRM `blocked_ways` for the bicycle avoid list (impassable, construction, proposed, motorroad): a `proposed=*`
    upgrade of a real road (highway=tertiary, proposed=secondary) leaves it routable."""
    if highway in ("construction", "proposed") or tags.get("railway") == "construction":
        return True
    if tags.get("motorroad") == "yes":
        return True
    construction = tags.get("construction")
    if construction is not None and construction not in CONSTRUCTION_WHITELIST:
        return True
    if tags.get("proposed") and not highway:
        return True
    return tags.get("impassable") == "yes" or tags.get("status") == "impassable"


def process_way(tags: Mapping[str, str]) -> WayResult | None:
    """Speeds per direction (km/h, 0 = closed), modes, ferry durations and flags of a way for bicycles."""
    highway = tags.get("highway") or None
    if _blocked(tags, highway):
        return None
    route = tags.get("route") or None
    railway = tags.get("railway") or None
    amenity = tags.get("amenity") or None
    man_made = tags.get("man_made") or None
    public_transport = tags.get("public_transport") or None
    bridge = tags.get("bridge") or None
    if not (highway or route or railway or amenity or man_made or public_transport or bridge):
        return None
    access = T.find_access_tag(tags, ACCESS_HIERARCHY)
    fwd_access, bwd_access = (
        T.resolve_access(v, ACCESS_WHITELIST, frozenset(), ACCESS_BLACKLIST)
        for v in T.forward_backward_by_set(tags, ACCESS_HIERARCHY)
    )
    if access in ACCESS_BLACKLIST or (fwd_access in ACCESS_BLACKLIST and bwd_access in ACCESS_BLACKLIST):
        return None

    foot = tags.get("foot")
    junction = tags.get("junction")
    road_class = highway or "other"

    # speed_handler; -1 = no speed yet
    speed = [-1.0, -1.0]
    mode = [MODE, MODE]
    open_ = [True, True]
    duration: float | None = None
    ferry = False
    allows_pushing = False
    if bridge in BRIDGE_SPEEDS:
        highway = bridge
        road_class = "movable_bridge"
        d = T.parse_duration_s(tags.get("duration"))
        duration = None if d is None else max(d, 1.0)
        speed = [BRIDGE_SPEEDS[bridge]] * 2
        allows_pushing = True
    elif route in ROUTE_SPEEDS:
        mode = ["ferry", "ferry"]
        ferry = True
        road_class = "ferry"
        d = T.parse_duration_s(tags.get("duration"))
        if d is not None:
            duration = max(d, 1.0)
        else:
            speed = [ROUTE_SPEEDS[route]] * 2
    elif railway in PLATFORM_SPEEDS:
        speed = [PLATFORM_SPEEDS[railway]] * 2
        allows_pushing = True
        road_class = "platform"
    elif public_transport in PLATFORM_SPEEDS:
        speed = [PLATFORM_SPEEDS[public_transport]] * 2
        allows_pushing = True
        road_class = "platform"
    elif railway in RAILWAY_SPEEDS and access in ACCESS_WHITELIST:
        mode = ["train", "train"]
        speed = [RAILWAY_SPEEDS[railway]] * 2
    elif amenity in AMENITY_SPEEDS:
        speed = [AMENITY_SPEEDS[amenity]] * 2
        allows_pushing = True
    elif highway in BICYCLE_SPEEDS:
        speed = [BICYCLE_SPEEDS[highway]] * 2
        allows_pushing = True
    elif access in ACCESS_WHITELIST:
        speed = [DEFAULT_SPEED] * 2
        allows_pushing = True

    # oneway_handler
    implied = junction in ("roundabout", "circular") or highway == "motorway"
    reverse = False
    ow_bike = tags.get("oneway:bicycle")
    ow = tags.get("oneway")
    if ow_bike in T.YES:
        open_[1] = False
    elif ow_bike in T.NO:
        pass
    elif ow_bike == "-1":
        open_[0] = False
        reverse = True
    elif ow in T.YES:
        open_[1] = False
    elif ow in T.NO:
        pass
    elif ow == "-1":
        open_[0] = False
        reverse = True
    elif implied:
        open_[1] = False

    # cycleway_handler
    cw, cwl, cwr = tags.get("cycleway"), tags.get("cycleway:left"), tags.get("cycleway:right")
    if cw is None:  # bicycle.lua: `cycleway:both` where `cycleway` is missing
        cw = tags.get("cycleway:both")
    has_fwd = has_bwd = False
    if open_[0] and open_[1] and not implied:
        if cw in CYCLEWAY_TAGS:
            has_fwd = has_bwd = True
        if cwr in CYCLEWAY_TAGS or cwl in OPPOSITE_CYCLEWAY_TAGS:
            has_fwd = True
        if cwl in CYCLEWAY_TAGS or cwr in OPPOSITE_CYCLEWAY_TAGS:
            has_bwd = True
    else:
        twoway_cw = cw in OPPOSITE_CYCLEWAY_TAGS or cwr in OPPOSITE_CYCLEWAY_TAGS or cwl in OPPOSITE_CYCLEWAY_TAGS
        opposite_cw = cwl in OPPOSITE_CYCLEWAY_TAGS or cwr in OPPOSITE_CYCLEWAY_TAGS
        oneway_cw = cw in CYCLEWAY_TAGS or cwr in CYCLEWAY_TAGS or cwl in CYCLEWAY_TAGS
        if twoway_cw:
            has_fwd = has_bwd = True
        elif opposite_cw:
            if reverse:
                has_fwd = True
            else:
                has_bwd = True
        elif oneway_cw:
            if reverse:
                has_bwd = True
            else:
                has_fwd = True
    for i, has in enumerate((has_fwd, has_bwd)):
        if has:
            open_[i] = True
            mode[i] = MODE
            speed[i] = BICYCLE_SPEEDS["cycleway"]

    # bike_push_handler
    if not (open_[0] and open_[1]) or speed[0] == -1 or speed[1] == -1:
        if foot != "no":
            push: list[float | None] = [None, None]
            if highway in PEDESTRIAN_SPEEDS:
                push = [PEDESTRIAN_SPEEDS[highway]] * 2
            elif man_made in MAN_MADE_SPEEDS:
                push = [MAN_MADE_SPEEDS[man_made]] * 2
            elif foot == "yes":
                push = [WALKING_SPEED, None if implied else WALKING_SPEED]
            elif tags.get("foot:forward") == "yes":
                push = [WALKING_SPEED, None]
            elif tags.get("foot:backward") == "yes":
                push = [None, WALKING_SPEED]
            elif allows_pushing:
                push = [WALKING_SPEED, None if implied else WALKING_SPEED]
            for i in range(2):
                p = push[i]
                if p is not None and (not open_[i] or speed[i] == -1):
                    open_[i] = True
                    mode[i] = "pushing_bike"
                    speed[i] = p
    if tags.get("bicycle") == "dismount":
        open_ = [True, True]
        mode = ["pushing_bike", "pushing_bike"]
        speed = [WALKING_SPEED, WALKING_SPEED]

    # maxspeed limit, then "no speed = not routable", then surface caps
    maxspeed = T.parse_maxspeed(tags.get("maxspeed"), table=None)
    limits = (
        T.parse_maxspeed(tags.get("maxspeed:forward"), table=None),
        T.parse_maxspeed(tags.get("maxspeed:backward"), table=None),
    )
    surface_cap = SURFACE_SPEEDS.get(tags.get("surface", ""))
    for i in range(2):
        limit = limits[i] if limits[i] > 0 else maxspeed
        if limit > 0:
            speed[i] = min(speed[i], limit)
        if speed[i] <= 0 and duration is None:
            open_[i] = False
        if surface_cap is not None:
            speed[i] = min(speed[i], surface_cap)
    # a direction whose (resolved) access is blacklisted, e.g. `vehicle:forward=agricultural`
    open_ = [open_[0] and fwd_access not in ACCESS_BLACKLIST, open_[1] and bwd_access not in ACCESS_BLACKLIST]
    if not (open_[0] or open_[1]) or _cycleway_apart(tags):
        return None

    return directed_way(
        tags,
        Direction(open_[0], speed[0], mode[0]),
        Direction(open_[1], speed[1], mode[1]),
        road_class,
        duration_s=duration,
        ferry=ferry,
    )


CYCLEWAY_APART_OVERRIDE = frozenset({"yes", "permissive", "designated", "destination"})


def _cycleway_apart(tags: Mapping[str, str]) -> bool:
    """bicycle.lua's `handle_cycleway_separate`: a carriageway whose cycleway is a way of its own (`cycleway`,
    `cycleway:both|left|right` = separate) is not cycled, unless its own `bicycle` tag allows it."""
    keys = ("cycleway", "cycleway:both", "cycleway:left", "cycleway:right")
    return any(tags.get(k) == "separate" for k in keys) and tags.get("bicycle") not in CYCLEWAY_APART_OVERRIDE


def process_node(tags: Mapping[str, str]) -> NodeResult | None:
    """Barrier (blocks) and traffic-signal penalty of a node for bicycles; None when the node has no effect."""
    barrier = False
    access = T.find_access_tag(tags, ACCESS_HIERARCHY)
    if access is not None:
        # access restrictions on crossing nodes concern the crossed road, not the cyclist
        barrier = access in ACCESS_BLACKLIST and tags.get("highway") != "crossing"
    else:
        barrier = tags.get("barrier", "") in BARRIER_BLACKLIST and not T.audible_fence(tags)
    penalty = TRAFFIC_SIGNAL_PENALTY_S if tags.get("highway") == "traffic_signals" else 0.0
    if not barrier and penalty == 0.0:
        return None
    if barrier:
        return NodeResult(barrier=True)
    # lib/traffic_signal.lua: `traffic_signals:direction` forward/backward (not `direction`) limits the signal;
    # where OSRM compresses the node away its fake turn through it costs a 180-degree turn, in both directions
    way_dir = OBSTACLE_DIRECTIONS.get(tags.get("traffic_signals:direction", ""), 0)
    if way_dir:
        return NodeResult(directed_s=penalty, direction=way_dir, passing_s=FAKE_TURN_S)
    return NodeResult(penalty_s=penalty, passing_s=FAKE_TURN_S)


turn_weight_s = turn_weight_same  # a turn weighs what it takes

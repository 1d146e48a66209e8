"""Car profile: OSRM's `car.lua` (see ../shared/reference/osrm-car-profile.md) for a node-based graph.

Way rules, in OSRM's handler order: a way needs `highway` or `route`; blocked/avoided ways are dropped (`area=yes`,
`highway=steps|construction|proposed`, `railway=construction`, `construction=*` other than no/widening/minor,
`proposed=*` without highway, `oneway=reversible`, `impassable=yes`, `status=impassable`,
`service=emergency_access`); physical limits close a direction (maxheight < 2.0 m, maxwidth <= 1.9 m, maxlength <
4.8 m, maxweight < 2000 kg); the access hierarchy `motorcar > motor_vehicle > vehicle > access` (with
`:forward`/`:backward`; of a `;`-list the part of the highest class, lib/access.lua's `resolve_access`) closes
blacklisted directions, except that restricted values (private, delivery, destination, customers, permit,
residents) on the whitelisted highway types keep the direction open and flag it restricted; oneway
(`oneway:motorcar|motor_vehicle|vehicle`, then `oneway`; implied on motorways and roundabouts unless `oneway=no`);
ferries (`route=ferry` 5 km/h, `route=shuttle_train` 10 km/h, `duration` spread over the way); movable bridges
(5 km/h or `duration`); speed per highway class, else 10 km/h where an access tag allows it; a parsed `maxspeed`
*replaces* the speed with `maxspeed * 0.8`; then surface/tracktype/smoothness caps. Nodes: blacklisted (resolved)
access blocks, barriers block unless whitelisted; gates and lift gates pass with 60 s; traffic signals and stop
signs cost 2 s (a stop sign not always: `process_node`), give-way signs 1 s.

Deliberate differences from OSRM:
- Turns (`turn_duration_s`, on the edge-based graph of `preprocessing.turns`) and OSM turn restrictions as car.lua;
  node obstacles (signals, stop, give way, gates) inside a way are charged on the arc passing them, at a junction
  on the turns passing it (as OSRM's graph compressor and process_turn), in the direction `traffic_signals:direction`
  or `direction` gives (OSRM's Obstacle::Direction); `stop=minor` (entering by the minor road) and the short-leg
  rule for undirected stop signs on degree-2 nodes are not modelled.
- Weight is OSRM's routability: the rate penalties (service roads, narrow or single-lane two-way roads, no lane
  markings, alternating oneways, side roads) slow the weight, not the duration; a turn from an open road onto a
  restricted one weighs the maximum turn weight. Both are applied per chain (OSRM: per segment), so rounding differs
  by at most a decisecond per chain.
- A oneway or one-direction-closed ferry or movable bridge keeps its direction (OSRM's ferry handler reopens both).
- `bridge=movable` with `capacity:car=0` is treated as an ordinary road (OSRM's Lua compares a string with 0, so
  its check never fires).
- `is_startpoint` (private service roads cannot be snapped to) is not represented; `junction=circular` implies
  oneway and is flagged for guidance (a rotary whatever its size). HEAD-only additions (extra blacklist values,
  `;`-lists in access values, priority penalty) are not adopted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from preprocessing.osm.profiles import tags as T
from preprocessing.osm.profiles.base import (
    OBSTACLE_DIRECTIONS,
    Direction,
    NodeResult,
    Turns,
    WayResult,
    directed_way,
    sigmoid_turn_s,
)

NAME = "car"
MODE = "driving"
# a car's arcs are driving, or ferry on `route=ferry|shuttle_train` (car.lua's ferry handler: a shuttle train is a
# ferry to OSRM); a waypoint starts or ends on a way driven in either direction (OSRM's is_startpoint: the default mode)
START_MODES = ("driving",)
EXCLUDABLE = (frozenset({"toll"}), frozenset({"motorway"}), frozenset({"ferry"}))  # as car.lua

# Turns (car.lua's process_turn): an edge-based search graph, OSM turn restrictions for these modes
TURNS = True
CONTINUE_STRAIGHT = True  # no u-turn at via points (OSRM continue_straight_at_waypoint)
USE_TURN_RESTRICTIONS = True
RESTRICTIONS = ("motorcar", "motor_vehicle", "vehicle")
TURN_PENALTY_S = 7.5
TURN_BIAS = 1.075
U_TURN_PENALTY_S = 20.0
ONCOMING_TURN_PENALTY_S = 2.0  # the shipped car.lua's oncoming_turn_penalty (left turns, right-hand driving)
WEIGHT_NAME = "routability"  # weight = duration slowed by the rate penalties; turns into restricted roads max out
MAX_TURN_WEIGHT_S = 3276.7  # OSRM's max_turn_weight (int16 deciseconds)
# rate penalties (car.lua's WayHandlers.penalties): the weight runs at speed x the smallest of these
SERVICE_PENALTIES = {
    "alley": 0.5,
    "parking": 0.5,
    "parking_aisle": 0.5,
    "driveway": 0.5,
    "drive-through": 0.5,
    "drive-thru": 0.5,
}
WIDTH_PENALTY = 0.5  # a two-way road at most 3 m wide, or with at most one lane
# lib/way_handlers.lua penalties: a two-way road's width (m) -> rate; <= 3, < 4, < 5, < 6 (just below as "<")
WIDTH_PENALTIES = ((3.0, 0.5), (4.0 - 1e-9, 0.6), (5.0 - 1e-9, 0.75), (6.0 - 1e-9, 0.8))
LANE_MARKINGS_PENALTY = 0.75  # a two-way road tagged lane_markings=no
ALTERNATING_PENALTY = 0.4  # oneway=alternating
SIDE_ROAD_PENALTY = 0.8  # side_road=yes|rotary


def turn_duration_s(t: Turns) -> np.ndarray:
    """car.lua: the angle sigmoid (7.5 s at most) where more than two roads meet, the mode changes or the car turns
    back, plus the oncoming-traffic wait of a left turn (below), plus 20 s for a u-turn. The junction's obstacles are
    added by `preprocessing.turns` (the build's `arc_head_penalty`); the max turn weight into restricted roads is
    `turn_weight_s`."""
    charged = (t.roads > 2) | t.mode_change | t.u_turn
    angle = np.where(t.u_turn, 180.0, t.angle)
    no = np.zeros(len(angle), dtype=bool)
    left_hand = t.left_hand if t.left_hand is not None else no  # car.lua: 1 / turn_bias where traffic keeps left
    bias = np.where(left_hand, 1.0 / TURN_BIAS, TURN_BIAS)
    s = np.where(charged, sigmoid_turn_s(angle, TURN_PENALTY_S, bias), 0.0)
    # the car.lua osrm-routed ships (osrm-bindings 26.10): a turn across oncoming traffic (left, right-hand driving;
    # right where traffic keeps left) at a real junction, neither leg on a roundabout, waits for a gap:
    # oncoming_turn_penalty times a sigmoid of the angle (1.93 s at 90 degrees)
    roundabout = (t.source_roundabout if t.source_roundabout is not None else no) | (
        t.target_roundabout if t.target_roundabout is not None else no
    )
    crosses = np.where(left_hand, angle > 0, angle < 0) & ~t.u_turn & (t.roads > 2) & ~roundabout
    sharpness = 1.0 / (1.0 + np.exp(-(13.0 * np.abs(angle) / 180.0 - 3.25)))
    s = s + np.where(crosses, ONCOMING_TURN_PENALTY_S * sharpness, 0.0)
    return s + np.where(t.u_turn, U_TURN_PENALTY_S, 0.0)


def turn_weight_s(t: Turns, duration_s: np.ndarray) -> np.ndarray:
    """car.lua under routability: a turn weighs its duration, but a turn from a road open to all onto a restricted
    one (private, destination, ...) weighs the maximum turn weight, so such roads serve only a route's ends."""
    return np.where(~t.source_restricted & t.target_restricted, MAX_TURN_WEIGHT_S, duration_s)


def rate_penalty(tags: Mapping[str, str], two_way: bool) -> float:
    """car.lua's rate penalty of a way (1.0 = none): service kinds, narrow or single-lane two-way roads, two-way
    roads without lane markings, alternating oneways, side roads; the smallest applies."""
    width_pen = LANE_MARKINGS_PENALTY if two_way and tags.get("lane_markings") == "no" else 1.0
    width = _lua_meters(tags.get("width"))
    lanes = _leading_int(tags.get("lanes"))
    if width is not None and two_way:  # osrm-backend 26.10: graduated, on two-way roads only
        width_pen = next((pen for limit, pen in WIDTH_PENALTIES if width <= limit), width_pen)
    if two_way and lanes is not None and lanes <= 1:
        width_pen = WIDTH_PENALTY
    pens = [
        SERVICE_PENALTIES.get(tags.get("service", ""), 1.0),
        width_pen,
        ALTERNATING_PENALTY if tags.get("oneway") == "alternating" else 1.0,
        SIDE_ROAD_PENALTY if tags.get("side_road") in ("yes", "rotary") else 1.0,
    ]
    return min(pens)


def _lua_meters(value: str | None) -> float | None:
    """lib/measure.lua `parse_value_meters`: the first number (`,` as `.`), in feet and inches after a `'`."""
    if not value:
        return None
    m = re.search(r"\d+\.?\d*", value.replace(",", "."))
    if m is None:
        return None
    n = float(m.group())
    if "'" in value:
        inches = re.search(r"\d+", value[value.index("'") :])
        n = (n * 12 + (int(inches.group()) if inches else 0)) * 0.0254
    return n


def _leading_int(value: str | None) -> int | None:
    """The integer prefix of a tag value, as Lua's `tonumber(v:match("%d*"))`; None without one."""
    if not value:
        return None
    digits = ""
    for ch in value:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


ACCESS_HIERARCHY = ("motorcar", "motor_vehicle", "vehicle", "access")
ONEWAY_RESTRICTIONS = ("motorcar", "motor_vehicle", "vehicle")

WAY_KEYS = frozenset({"highway", "route"})
NODE_KEYS = frozenset({"barrier", "highway", *ACCESS_HIERARCHY})
# lib/obstacles.lua's turning obstacles (`highway=` on a node): OSRM's compressor keeps them, u-turns are allowed there
SERVICE_ACCESS_BLACKLIST = frozenset({"private"})  # car.lua's service_access_tag_blacklist (no startpoint)
TURNING_OBSTACLES = frozenset({"turning_circle", "turning_loop", "mini_roundabout"})

DEFAULT_SPEED = 10.0
SPEED_REDUCTION = 0.8

SPEEDS: dict[str, float] = {
    "motorway": 90,
    "motorway_link": 45,
    "trunk": 85,
    "trunk_link": 40,
    "primary": 65,
    "primary_link": 30,
    "secondary": 55,
    "secondary_link": 25,
    "tertiary": 40,
    "tertiary_link": 20,
    "unclassified": 25,
    "residential": 25,
    "living_street": 10,
    "service": 15,
    "winter_road": 20,
    "ice_road": 15,
}
ROUTE_SPEEDS: dict[str, float] = {"ferry": 5, "shuttle_train": 10}
BRIDGE_SPEEDS: dict[str, float] = {"movable": 5}

SURFACE_SPEEDS: dict[str, float] = {
    "cement": 80,
    "compacted": 80,
    "fine_gravel": 80,
    "paving_stones": 60,
    "metal": 60,
    "bricks": 60,
    "grass": 40,
    "wood": 40,
    "sett": 40,
    "grass_paver": 40,
    "gravel": 40,
    "unpaved": 40,
    "ground": 40,
    "dirt": 40,
    "pebblestone": 40,
    "tartan": 40,
    "cobblestone": 30,
    "clay": 30,
    "earth": 20,
    "stone": 20,
    "rocky": 20,
    "sand": 20,
    "mud": 10,
    "ice": 20,
    "snow": 30,
}
TRACKTYPE_SPEEDS: dict[str, float] = {"grade1": 60, "grade2": 40, "grade3": 30, "grade4": 25, "grade5": 20}
SMOOTHNESS_SPEEDS: dict[str, float] = {
    "intermediate": 80,
    "bad": 40,
    "very_bad": 20,
    "horrible": 10,
    "very_horrible": 5,
    "impassable": 0,
}

ACCESS_WHITELIST = frozenset({"yes", "motorcar", "motor_vehicle", "vehicle", "permissive", "designated", "hov"})
ACCESS_BLACKLIST = frozenset(
    {
        "no",
        "agricultural",
        "forestry",
        "emergency",
        "psv",
        "taxi",
        "share_taxi",
        "minibus",
        "bus",
        "foot",
        "emergency_vehicle",
        "restricted",
        "military",
        "official",
        "customers",
        "private",
        "delivery",
        "destination",
        "permit",
        "residents",
    }
)
RESTRICTED_ACCESS = frozenset({"private", "delivery", "destination", "customers", "permit", "residents", "unknown"})


def resolve_access(value: str | None) -> str | None:
    """lib/access.lua `resolve_access` with car.lua's lists (`tags.resolve_access`)."""
    return T.resolve_access(value, ACCESS_WHITELIST, RESTRICTED_ACCESS, ACCESS_BLACKLIST)


RESTRICTED_HIGHWAY_WHITELIST = frozenset(
    {
        "motorway",
        "motorway_link",
        "trunk",
        "trunk_link",
        "primary",
        "primary_link",
        "secondary",
        "secondary_link",
        "tertiary",
        "tertiary_link",
        "residential",
        "living_street",
        "unclassified",
        "service",
        "winter_road",
        "ice_road",
    }
)
AVOID_HIGHWAYS = frozenset({"steps", "construction", "proposed"})
CONSTRUCTION_WHITELIST = frozenset({"no", "widening", "minor"})
SERVICE_FORBIDDEN = frozenset({"emergency_access"})

BARRIER_WHITELIST = frozenset(
    {"cattle_grid", "border_control", "toll_booth", "sally_port", "no", "entrance", "height_restrictor", "arch"}
)
BARRIER_PENALTIES_S: dict[str, float] = {"gate": 60.0, "lift_gate": 60.0}
OBSTACLE_PENALTIES_S: dict[str, float] = {"traffic_signals": 2.0, "stop": 2.0, "give_way": 1.0}

VEHICLE_HEIGHT_M = 2.0
VEHICLE_WIDTH_M = 1.9
VEHICLE_LENGTH_M = 4.8
VEHICLE_WEIGHT_KG = 2000.0


def _blocked(tags: Mapping[str, str], highway: str | None) -> bool:
    """OSRM `blocked_ways` + `avoid_ways` + forbidden service values for the car's avoid list."""
    if tags.get("area") == "yes":
        return True
    if highway in AVOID_HIGHWAYS:
        return True
    if tags.get("railway") == "construction":
        return True
    construction = tags.get("construction")
    if construction is not None and construction not in CONSTRUCTION_WHITELIST:
        return True
    if not highway and tags.get("proposed"):
        return True
    if tags.get("oneway") == "reversible":
        return True
    if tags.get("impassable") == "yes" or tags.get("status") == "impassable":
        return True
    return tags.get("service") in SERVICE_FORBIDDEN


def _size_limits(tags: Mapping[str, str]) -> tuple[bool, bool]:
    """(forward_ok, backward_ok) after the height, width, length and weight limits."""
    ok = [True, True]
    h = T.forward_backward_by_set(tags, ("maxheight:physical", "maxheight"))
    w = T.forward_backward_by_set(tags, ("maxwidth:physical", "maxwidth", "width", "est_width"))
    ln = T.forward_backward_by_set(tags, ("maxlength",))
    wt = T.forward_backward_by_set(tags, ("maxweightrating", "maxweight"))
    for i in range(2):
        height = T.parse_height_m(h[i])
        if height is not None and height < VEHICLE_HEIGHT_M:
            ok[i] = False
        width = T.parse_meters(w[i])
        if width is not None and width <= VEHICLE_WIDTH_M:
            ok[i] = False
        length = T.parse_meters(ln[i])
        if length is not None and length < VEHICLE_LENGTH_M:
            ok[i] = False
        weight = T.parse_kilograms(wt[i])
        if weight is not None and weight < VEHICLE_WEIGHT_KG:
            ok[i] = False
    return ok[0], ok[1]


def _all_designated(lanes: str | None) -> bool:
    """True when every `|`-separated lane value is `designated` (OSRM `has_all_designated_hov_lanes`)."""
    return lanes is not None and all(lane == "designated" for lane in lanes.split("|"))


def _cap(speed: float, tags: Mapping[str, str]) -> float:
    """Surface, tracktype and smoothness caps (min with the current speed)."""
    for key, table in (("surface", SURFACE_SPEEDS), ("tracktype", TRACKTYPE_SPEEDS), ("smoothness", SMOOTHNESS_SPEEDS)):
        v = tags.get(key)
        if v is not None and v in table:
            speed = min(speed, table[v])
    return speed


def process_way(tags: Mapping[str, str]) -> WayResult | None:
    """Speeds per direction (km/h, 0 = closed), ferry durations and flags of a way for cars; None = not routable."""
    highway = tags.get("highway") or None
    route = tags.get("route") or None
    if highway is None and route is None:
        return None
    if _blocked(tags, highway):
        return None

    fwd_ok, bwd_ok = _size_limits(tags)

    # access
    fwd_access, bwd_access = (resolve_access(v) for v in T.forward_backward_by_set(tags, ACCESS_HIERARCHY))
    fwd_restricted = bwd_restricted = False
    if highway in RESTRICTED_HIGHWAY_WHITELIST:
        fwd_restricted = fwd_access in RESTRICTED_ACCESS
        bwd_restricted = bwd_access in RESTRICTED_ACCESS
    if fwd_access in ACCESS_BLACKLIST and not fwd_restricted:
        fwd_ok = False
    if bwd_access in ACCESS_BLACKLIST and not bwd_restricted:
        bwd_ok = False
    if not fwd_ok and not bwd_ok:
        return None

    # HOV: designated lanes only flag the direction restricted (routability)
    if tags.get("hov") == "designated":
        fwd_restricted = bwd_restricted = True
    hov_f, hov_b = T.forward_backward_by_key(tags, "hov:lanes")
    fwd_restricted = fwd_restricted or _all_designated(hov_f)
    bwd_restricted = bwd_restricted or _all_designated(hov_b)

    # oneway
    oneway = T.value_by_prefixed_sequence(tags, ONEWAY_RESTRICTIONS, "oneway") or tags.get("oneway")
    direction = T.oneway_direction(oneway)
    if direction == "backward":
        fwd_ok = False
    elif direction == "forward" or (oneway != "no" and T.implies_oneway(tags)):
        bwd_ok = False  # as in OSRM only the literal "no" (not "0"/"false") cancels an implied oneway

    # ferries, movable bridges, then speed by highway class
    fwd_kmh = bwd_kmh = -1.0
    duration: float | None = None
    mode = MODE
    road_class = highway or "other"
    ferry = False
    if route is not None and route in ROUTE_SPEEDS:
        fwd_kmh = bwd_kmh = ROUTE_SPEEDS[route]
        d = T.parse_duration_s(tags.get("duration"))
        duration = None if d is None else max(d, 1.0)
        mode = "ferry"
        ferry = True
        # car.lua classifies every way by its highway tag, a ferry too (guidance takes a `highway=trunk_link` ferry
        # for a ramp, a `highway=primary` one for a primary road); a ferry without one is the route
        road_class = highway or route
    elif tags.get("bridge") in BRIDGE_SPEEDS and tags.get("capacity:car") != "0":
        d = T.parse_duration_s(tags.get("duration"))
        if d is not None:
            duration = max(d, 1.0)
            fwd_kmh = bwd_kmh = 0.0
        else:
            fwd_kmh = bwd_kmh = BRIDGE_SPEEDS[tags["bridge"]]
        road_class = "movable_bridge"
    elif highway is not None and highway in SPEEDS:
        fwd_kmh = bwd_kmh = SPEEDS[highway]
    else:
        # no table speed: the default speed only where an access tag allows that direction
        if fwd_access in ACCESS_WHITELIST or (fwd_access is not None and fwd_access not in ACCESS_BLACKLIST):
            fwd_kmh = DEFAULT_SPEED
        elif fwd_access is None and bwd_access is not None:
            fwd_ok = False
        if bwd_access in ACCESS_WHITELIST or (bwd_access is not None and bwd_access not in ACCESS_BLACKLIST):
            bwd_kmh = DEFAULT_SPEED
        elif bwd_access is None and fwd_access is not None:
            bwd_ok = False
        if fwd_kmh < 0 and bwd_kmh < 0:
            return None

    if duration is None:
        fmax, bmax = T.maxspeed_by_direction(tags)
        if fmax > 0:
            fwd_kmh = fmax * SPEED_REDUCTION
        if bmax > 0:
            bwd_kmh = bmax * SPEED_REDUCTION
        fwd_kmh = _cap(fwd_kmh, tags)
        bwd_kmh = _cap(bwd_kmh, tags)
        fwd_ok = fwd_ok and fwd_kmh > 0
        bwd_ok = bwd_ok and bwd_kmh > 0
    if not fwd_ok and not bwd_ok:
        return None

    toll_f, toll_b = T.forward_backward_by_key(tags, "toll")
    result = directed_way(
        tags,
        Direction(fwd_ok, fwd_kmh, mode, fwd_restricted),
        Direction(bwd_ok, bwd_kmh, mode, bwd_restricted),
        road_class,
        duration_s=duration,
        ferry=ferry,
        toll=toll_f == "yes" or toll_b == "yes",
        with_turn_lanes=True,
        with_destinations=True,
        classes_differ=(toll_f == "yes") != (toll_b == "yes"),
    )
    rate = rate_penalty(tags, fwd_ok and bwd_ok)
    if rate != 1.0:
        result = replace(result, rate=rate)
    # lib/way_handlers.lua `startpoint`: no waypoint snaps onto a service road whose (forward) access is private
    if highway == "service" and fwd_access in SERVICE_ACCESS_BLACKLIST:
        result = replace(result, startpoint=False)
    return result


def process_node(tags: Mapping[str, str]) -> NodeResult | None:
    """Barrier (blocks) and time penalty of a node for cars; None when the node has no effect."""
    barrier = False
    penalty = 0.0
    access = resolve_access(T.find_access_tag(tags, ACCESS_HIERARCHY))
    kind = tags.get("barrier")
    if access is not None:
        if access in ACCESS_BLACKLIST and access not in RESTRICTED_ACCESS:
            barrier = True
    elif kind:
        by_height = False
        if kind == "height_restrictor":
            h = T.parse_height_m(tags.get("maxheight"))
            by_height = h is not None and h < VEHICLE_HEIGHT_M
        rising_bollard = tags.get("bollard") == "rising"
        flat_kerb = tags.get("kerb") in ("lowered", "flush")
        crossing_kerb = kind == "kerb" and tags.get("highway") == "crossing"
        passable = (
            kind in BARRIER_WHITELIST
            or kind in BARRIER_PENALTIES_S
            or rising_bollard
            or flat_kerb
            or crossing_kerb
            or T.audible_fence(tags)
        )
        barrier = not passable or by_height
        penalty += BARRIER_PENALTIES_S.get(kind, 0.0)  # like OSRM, only without an access tag
    # lib/obstacles.lua: signals, stop and give-way signs, in the direction `traffic_signals:direction` (signals) or
    # `direction` says (forward/backward; both, none or anything else: every direction)
    highway = tags.get("highway", "")
    obstacle = OBSTACLE_PENALTIES_S.get(highway, 0.0)
    direction = tags.get("direction")
    if highway == "traffic_signals":
        direction = tags.get("traffic_signals:direction") or direction
    way_dir = OBSTACLE_DIRECTIONS.get(direction or "", 0)
    directed = obstacle if way_dir else 0.0
    penalty += 0.0 if way_dir else obstacle
    turning = highway in TURNING_OBSTACLES
    # car.lua's process_turn: a `stop=minor` sign counts only entering by the minor road; a stop sign with no
    # direction at all (not even `both`) not where it stands within 20 m of the road's start and the road on is longer
    minor = highway == "stop" and tags.get("stop") == "minor" and not way_dir
    short_leg = highway == "stop" and tags.get("stop") != "minor" and direction not in ("forward", "backward", "both")
    if not barrier and penalty == 0.0 and directed == 0.0 and not turning:
        return None
    if barrier:
        return NodeResult(barrier=True, turning=turning)
    return NodeResult(
        penalty_s=penalty,
        directed_s=directed,
        direction=way_dir if directed else 0,
        turning=turning,
        minor_stop=minor,
        short_leg_stop=short_leg,
    )

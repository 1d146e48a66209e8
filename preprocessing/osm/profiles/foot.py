"""Foot profile: OSRM's `foot.lua` (osrm-backend 26.10).

Way rules, in OSRM's handler order: a way needs one of highway, bridge, route, man_made, railway, platform, amenity
or public_transport; `impassable`, `motorroad=yes` and proposed roads are dropped (a `proposed=*` upgrade of a real
road is not); the access hierarchy `foot > access` (with `:forward`/`:backward`; a `;`-list resolved to its part of
the highest class) closes blacklisted directions (no, agricultural, forestry, private, delivery, use_sidepath); a
carriageway whose sidewalk is its own way (`sidewalk`, `sidewalk:both|left|right` = separate) is closed but in the
directions a foot access tag opens; only `oneway:foot` makes a way oneway (plain `oneway`, motorways and roundabouts
do not), and an escalator or moving walkway (`conveying=forward|backward` on steps or a footway) runs one way unless
`oneway=no`; `route=ferry` runs at 5 km/h or its `duration`; everything walkable (highway primary..footway, steps,
path, track, pier, platform; railway/public platforms, parking, piers) is 5 km/h, any other way only where an access
tag allows it; surface caps (gravel 3.75, mud/sand 2.5). Nodes: blacklisted access blocks, `barrier=yes|wall|fence`
blocks (a rising bollard or an audible fence never does), everything else passes; traffic signals cost 2 s.

Deliberate differences from OSRM:
- No turn or u-turn penalties (node-based graph); the traffic-signal penalty is added to arcs passing or entering
  the node, in both directions.
- `highway=proposed` is dropped even without a `proposed=*` tag. Like OSRM, `area=yes` ways (pedestrian squares)
  stay walkable along their outline, and `highway=construction` is walkable only where an access tag allows it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from preprocessing.osm.profiles import tags as T
from preprocessing.osm.profiles.base import Direction, NodeResult, Turns, WayResult, directed_way, turn_weight_same

NAME = "foot"
MODE = "walking"
# walking, or ferry on `route=ferry`; a waypoint starts or ends on a way walked (OSRM's is_startpoint)
START_MODES = ("walking",)
EXCLUDABLE = ()  # foot.lua declares none

# foot.lua's turns: 2 s to turn back, no restrictions; node-based unless asked (`--turns`)
TURNS = True  # edge-based like every OSRM profile: turn costs and restrictions (`--no-turns` for node-based)
WEIGHT_NAME = "duration"  # the weight is the travel time
CONTINUE_STRAIGHT = False  # no u-turn at via points (OSRM continue_straight_at_waypoint)
USE_TURN_RESTRICTIONS = False
RESTRICTIONS = ("foot",)
U_TURN_PENALTY_S = 2.0


def turn_duration_s(t: Turns) -> np.ndarray:
    """foot.lua: 2 s for a u-turn, nothing else."""
    return np.where(t.u_turn, U_TURN_PENALTY_S, 0.0)


ACCESS_HIERARCHY = ("foot", "access")
WAY_KEYS = frozenset({"highway", "bridge", "route", "man_made", "railway", "platform", "amenity", "public_transport"})
NODE_KEYS = frozenset({"barrier", "highway", *ACCESS_HIERARCHY})

WALKING_SPEED = 5.0
TRAFFIC_SIGNAL_PENALTY_S = 2.0

# OSRM foot.lua `speeds`: key -> value -> km/h, searched in this order
SPEEDS: dict[str, dict[str, float]] = {
    "highway": {
        v: WALKING_SPEED
        for v in (
            "primary",
            "primary_link",
            "secondary",
            "secondary_link",
            "tertiary",
            "tertiary_link",
            "unclassified",
            "residential",
            "living_street",
            "service",
            "track",
            "path",
            "steps",
            "pedestrian",
            "platform",
            "footway",
            "pier",
        )
    },
    "railway": {"platform": WALKING_SPEED},
    "amenity": {"parking": WALKING_SPEED, "parking_entrance": WALKING_SPEED},
    "man_made": {"pier": WALKING_SPEED},
}
ROUTE_SPEEDS: dict[str, float] = {"ferry": 5.0}
SURFACE_SPEEDS: dict[str, float] = {
    "fine_gravel": WALKING_SPEED * 0.75,
    "gravel": WALKING_SPEED * 0.75,
    "pebblestone": WALKING_SPEED * 0.75,
    "mud": WALKING_SPEED * 0.5,
    "sand": WALKING_SPEED * 0.5,
}

ACCESS_WHITELIST = frozenset({"yes", "foot", "permissive", "designated"})
SIDEWALK_KEYS = ("sidewalk", "sidewalk:both", "sidewalk:left", "sidewalk:right")
# `use_sidepath`: a parallel way for pedestrians is mapped and must be used instead (foot.lua: as `no`)
ACCESS_BLACKLIST = frozenset({"no", "agricultural", "forestry", "private", "delivery", "use_sidepath"})
BARRIER_BLACKLIST = frozenset({"yes", "wall", "fence"})


def _table_speed(tags: Mapping[str, str]) -> float | None:
    """km/h of the first key=value of `SPEEDS` present on the way."""
    for key, table in SPEEDS.items():
        v = tags.get(key)
        if v is not None and v in table:
            return table[v]
    return None


def process_way(tags: Mapping[str, str]) -> WayResult | None:
    """Speeds per direction (km/h, 0 = closed), ferry durations and flags of a way for pedestrians."""
    if not any(tags.get(k) for k in WAY_KEYS):
        return None
    highway = tags.get("highway") or None
    # blocked_ways: a proposed road (a `proposed=*` upgrade of a real road stays), impassable, motorroad
    if (tags.get("proposed") and not highway) or highway == "proposed":
        return None
    if tags.get("impassable") == "yes" or tags.get("status") == "impassable" or tags.get("motorroad") == "yes":
        return None

    fwd_access, bwd_access = (
        T.resolve_access(v, ACCESS_WHITELIST, frozenset(), ACCESS_BLACKLIST)
        for v in T.forward_backward_by_set(tags, ACCESS_HIERARCHY)
    )
    open_ = [fwd_access not in ACCESS_BLACKLIST, bwd_access not in ACCESS_BLACKLIST]
    if not (open_[0] or open_[1]):
        return None
    if any(tags.get(k) == "separate" for k in SIDEWALK_KEYS):
        # handle_sidewalk_separate: the sidewalk is its own way, so this carriageway is not walked, unless a foot
        # access tag that is not blacklisted opens a direction
        open_ = [
            open_[0] and fwd_access is not None and fwd_access not in ACCESS_BLACKLIST,
            open_[1] and bwd_access is not None and bwd_access not in ACCESS_BLACKLIST,
        ]
        if not (open_[0] or open_[1]):
            return None

    direction = T.oneway_direction(tags.get("oneway:foot"))
    if direction == "forward":
        open_[1] = False
    elif direction == "backward":
        open_[0] = False

    speed = [-1.0, -1.0]
    duration: float | None = None
    mode = MODE
    ferry = False
    road_class = highway or ("platform" if tags.get("railway") == "platform" else "other")
    route = tags.get("route")
    if route in ROUTE_SPEEDS:
        speed = [ROUTE_SPEEDS[route]] * 2
        d = T.parse_duration_s(tags.get("duration"))
        duration = None if d is None else max(d, 1.0)
        mode = "ferry"
        ferry = True
        road_class = "ferry"
    else:
        hit = _table_speed(tags)
        if hit is not None:
            speed = [hit, hit]
        else:
            for i, (acc, other) in enumerate(((fwd_access, bwd_access), (bwd_access, fwd_access))):
                if acc in ACCESS_WHITELIST or (acc is not None and acc not in ACCESS_BLACKLIST):
                    speed[i] = WALKING_SPEED
                elif acc is None and other is not None:
                    open_[i] = False
            if speed[0] < 0 and speed[1] < 0:
                return None

    conveying = tags.get("conveying")
    if conveying in ("forward", "backward") and highway in ("steps", "footway") and tags.get("oneway") != "no":
        open_[1 if conveying == "forward" else 0] = False  # an escalator or moving walkway runs one way

    cap = SURFACE_SPEEDS.get(tags.get("surface", ""))
    for i in range(2):
        if cap is not None:
            speed[i] = min(speed[i], cap)
        if duration is None and speed[i] <= 0:
            open_[i] = False
    if not (open_[0] or open_[1]):
        return None

    return directed_way(
        tags,
        Direction(open_[0], speed[0], mode),
        Direction(open_[1], speed[1], mode),
        road_class,
        duration_s=duration,
        ferry=ferry,
        with_destinations=True,
    )


def process_node(tags: Mapping[str, str]) -> NodeResult | None:
    """Barrier (blocks) and traffic-signal penalty of a node for pedestrians; None when the node has no effect."""
    access = T.find_access_tag(tags, ACCESS_HIERARCHY)
    if access is not None:
        barrier = access in ACCESS_BLACKLIST
    else:
        rising_bollard = tags.get("bollard") == "rising"
        barrier = tags.get("barrier", "") in BARRIER_BLACKLIST and not rising_bollard and not T.audible_fence(tags)
    penalty = TRAFFIC_SIGNAL_PENALTY_S if tags.get("highway") == "traffic_signals" else 0.0
    if not barrier and penalty == 0.0:
        return None
    return NodeResult(barrier=barrier, penalty_s=0.0 if barrier else penalty)


turn_weight_s = turn_weight_same  # a turn weighs what it takes

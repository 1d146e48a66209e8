"""Testbot profile: OSRM's `testbot.lua`, fixed speeds so that test expectations are mental arithmetic.

primary 36 km/h (100 m in 10 s), secondary 18, tertiary 12, steps 6, any other highway 24; `highway=river` runs
36 km/h downstream (forward) and 16 km/h upstream. `maxspeed` (a plain number) caps both directions, while
`maxspeed:forward|backward` *replaces* that direction's speed, as in OSRM. A way with a valid `duration` (minutes,
`HH:MM`, `HH:MM:SS`, ISO 8601) takes that time, at least 1 s, spread over the way. Oneway: `oneway=yes|1|true` or
`junction=roundabout` is forward-only, `-1` backward-only, `no|0|false` two-way; nothing else is implied. No
access tags, no barriers (testbot has none); traffic signals cost 7 s (OSRM testbot's `traffic_light_penalty`).

Deliberate differences from OSRM:
- A way needs `highway` or `route` (OSRM testbot routes on any way at all, buildings included).
- No turn or u-turn penalties (node-based graph); the traffic-signal penalty is added to arcs passing or entering
  the node, in both directions.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from preprocessing.osm.profiles import tags as T
from preprocessing.osm.profiles.base import Direction, NodeResult, Turns, WayResult, directed_way, turn_weight_same

NAME = "testbot"
MODE = "driving"
# driving, route (a way with a `duration`), river_down / river_up, steps_down / steps_up (forward / backward);
# testbot.lua has no startpoint handler, so every way is a start point (OSRM's default is_startpoint)
START_MODES = ("driving", "route", "river_down", "river_up", "steps_down", "steps_up")
EXCLUDABLE = (frozenset({"motorway"}), frozenset({"toll"}), frozenset({"motorway", "toll"}))  # testbot.lua

# testbot.lua's turns: restrictions (no mode keys: plain `restriction` only) and 20 s per u-turn; node-based unless
# asked (`starroute preprocess --turns`), so its maps stay simple to reason about
TURNS = True  # edge-based like every OSRM profile: turn costs and restrictions (`--no-turns` for node-based)
WEIGHT_NAME = "duration"  # the weight is the travel time
CONTINUE_STRAIGHT = True  # no u-turn at via points (OSRM continue_straight_at_waypoint)
USE_TURN_RESTRICTIONS = True
RESTRICTIONS: tuple[str, ...] = ()
U_TURN_PENALTY_S = 20.0


def turn_duration_s(t: Turns) -> np.ndarray:
    """testbot.lua: 20 s for a u-turn, nothing else (its traffic-signal penalty is on the arcs entering the node)."""
    return np.where(t.u_turn, U_TURN_PENALTY_S, 0.0)


WAY_KEYS = frozenset({"highway", "route"})
NODE_KEYS = frozenset({"highway"})

SPEEDS: dict[str, float] = {"primary": 36.0, "secondary": 18.0, "tertiary": 12.0, "steps": 6.0}
DEFAULT_SPEED = 24.0
TRAFFIC_SIGNAL_PENALTY_S = 7.0


def process_way(tags: Mapping[str, str]) -> WayResult | None:
    """Speeds per direction (km/h, 0 = closed) or a fixed duration of a way for the testbot."""
    highway = tags.get("highway") or None
    route = tags.get("route") or None
    if highway is None and route is None:
        return None
    duration = T.parse_duration_s(tags.get("duration"))
    mode = [MODE, MODE]
    fwd = bwd = 0.0
    if duration is not None:
        duration = max(1.0, duration)
        mode = ["route", "route"]
    else:
        fwd = bwd = SPEEDS.get(highway or "", DEFAULT_SPEED)
        if highway == "river":
            fwd, bwd = fwd * 1.5, fwd / 1.5
            mode = ["river_down", "river_up"]
        elif highway == "steps":
            mode = ["steps_down", "steps_up"]
        maxspeed = T.to_number(tags.get("maxspeed"))
        mf = T.to_number(tags.get("maxspeed:forward"))
        mb = T.to_number(tags.get("maxspeed:backward"))
        if mf is not None and mf > 0:
            fwd = mf
        elif maxspeed is not None and 0 < maxspeed < fwd:
            fwd = maxspeed
        if mb is not None and mb > 0:
            bwd = mb
        elif maxspeed is not None and 0 < maxspeed < bwd:
            bwd = maxspeed

    oneway = tags.get("oneway")
    junction = tags.get("junction")
    open_ = [True, True]
    if oneway in T.NO:
        pass
    elif oneway == "-1":
        open_[0] = False
    elif oneway in T.YES or junction == "roundabout":
        open_[1] = False

    return directed_way(
        tags,
        Direction(open_[0], fwd, mode[0]),
        Direction(open_[1], bwd, mode[1]),
        highway or route or "other",
        duration_s=duration,
        ferry=route == "ferry",
        toll=tags.get("toll") == "yes",
        sidepath_names=False,  # testbot.lua sets `name` alone
    )


def process_node(tags: Mapping[str, str]) -> NodeResult | None:
    """The traffic-signal penalty (7 s); testbot has no barriers."""
    if tags.get("highway") == "traffic_signals":
        return NodeResult(penalty_s=TRAFFIC_SIGNAL_PENALTY_S)
    return None


turn_weight_s = turn_weight_same  # a turn weighs what it takes

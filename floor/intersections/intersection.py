"""The intersection model: the roads at a junction with their turn instructions (OSRM's
`include/extractor/intersection/intersection_view.hpp` and `include/guidance/turn_instruction.hpp`).

A `Road` is one road of a junction as seen arriving on one of them: its bearings, turn angle, whether it may be
entered and, once classified, its instruction (turn type and direction modifier, OSRM's values) and lanes. An
`Intersection` is the roads in view order, counter-clockwise from the u-turn (index 0). The angle thresholds OSRM's
guidance shares live here too. Who builds the views: `intersection_analysis` (over `coordinates`, `merge`,
`walker`); who classifies them: `turns` and its handlers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from floor.intersections import geo

STRAIGHT_ANGLE = 180.0
ORTHOGONAL_ANGLE = 90.0
MAXIMAL_ALLOWED_NO_TURN_DEVIATION = 3.0
NARROW_TURN_ANGLE = 40.0
GROUP_ANGLE = 60.0
FUZZY_ANGLE_DIFFERENCE = 25.0
ASSUMED_LANE_WIDTH = 3.25
EPSILON = 2.220446049250313e-16

# turn types (OSRM's TurnType values)
INVALID, NEW_NAME, CONTINUE, TURN, MERGE, ON_RAMP, OFF_RAMP, FORK, END_OF_ROAD, NOTIFICATION = range(10)
ENTER_ROUNDABOUT, ENTER_AND_EXIT_ROUNDABOUT, ENTER_ROTARY, ENTER_AND_EXIT_ROTARY = 10, 11, 12, 13
ENTER_ROUNDABOUT_INTERSECTION, ENTER_AND_EXIT_ROUNDABOUT_INTERSECTION = 14, 15
NO_TURN, SUPPRESSED, ENTER_ROUNDABOUT_AT_EXIT, EXIT_ROUNDABOUT, ENTER_ROTARY_AT_EXIT, EXIT_ROTARY = (
    17,
    18,
    19,
    20,
    21,
    22,
)
ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT, EXIT_ROUNDABOUT_INTERSECTION, STAY_ON_ROUNDABOUT, SLIPROAD = 23, 24, 25, 26

# direction modifiers
UTURN, SHARP_RIGHT, RIGHT, SLIGHT_RIGHT, STRAIGHT, SLIGHT_LEFT, LEFT, SHARP_LEFT = range(8)

# the instruction groups of OSRM's turn_instruction.hpp (hasRoundaboutType, entersRoundabout, leavesRoundabout,
# staysOnRoundabout, isSilent) and its modifier sides
ROUNDABOUT_TYPES = frozenset(
    {ENTER_ROUNDABOUT, ENTER_AND_EXIT_ROUNDABOUT, ENTER_ROTARY, ENTER_AND_EXIT_ROTARY, ENTER_ROUNDABOUT_INTERSECTION,
     ENTER_AND_EXIT_ROUNDABOUT_INTERSECTION, ENTER_ROUNDABOUT_AT_EXIT, EXIT_ROUNDABOUT, ENTER_ROTARY_AT_EXIT,
     EXIT_ROTARY, ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT, EXIT_ROUNDABOUT_INTERSECTION, STAY_ON_ROUNDABOUT}
)  # fmt: skip
ENTERS = frozenset(
    {ENTER_ROUNDABOUT, ENTER_ROTARY, ENTER_ROUNDABOUT_INTERSECTION, ENTER_ROUNDABOUT_AT_EXIT, ENTER_ROTARY_AT_EXIT,
     ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT, ENTER_AND_EXIT_ROUNDABOUT, ENTER_AND_EXIT_ROTARY,
     ENTER_AND_EXIT_ROUNDABOUT_INTERSECTION}
)  # fmt: skip
LEAVES = frozenset(
    {EXIT_ROUNDABOUT, EXIT_ROTARY, EXIT_ROUNDABOUT_INTERSECTION, ENTER_AND_EXIT_ROUNDABOUT, ENTER_AND_EXIT_ROTARY,
     ENTER_AND_EXIT_ROUNDABOUT_INTERSECTION}
)  # fmt: skip
STAYS = frozenset({STAY_ON_ROUNDABOUT, ENTER_ROUNDABOUT_AT_EXIT, ENTER_ROTARY_AT_EXIT,
                   ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT})  # fmt: skip
SILENT = frozenset({NO_TURN, SUPPRESSED, STAY_ON_ROUNDABOUT})


def has_left(mod: int) -> bool:
    """Whether a modifier turns left (sharp, plain or slight)."""
    return mod in (SHARP_LEFT, LEFT, SLIGHT_LEFT)


def has_right(mod: int) -> bool:
    """Whether a modifier turns right (sharp, plain or slight)."""
    return mod in (SHARP_RIGHT, RIGHT, SLIGHT_RIGHT)


def turn_direction(angle: float) -> int:
    """OSRM's `getTurnDirection`: the modifier of a turn angle (180 straight, 0 u-turn)."""
    if 0 < angle < 60:
        return SHARP_RIGHT
    if 60 <= angle < 140:
        return RIGHT
    if 140 <= angle < 160:
        return SLIGHT_RIGHT
    if 160 <= angle <= 200:
        return STRAIGHT
    if 200 < angle <= 220:
        return SLIGHT_LEFT
    if 220 < angle <= 300:
        return LEFT
    if 300 < angle < 360:
        return SHARP_LEFT
    return UTURN


class Road:
    """One road of an intersection (OSRM's IntersectionViewData / ConnectedRoad): the edge leaving along it, its
    bearings, the segment length, whether it may be entered, the turn angle and (once classified) the instruction
    (`kind`, `modifier`) and the lane tuple of the turn."""

    __slots__ = ("eid", "initial_bearing", "perceived_bearing", "segment_length", "entry_allowed", "angle", "kind",
                 "modifier", "lanes")  # fmt: skip

    def __init__(self, eid: int, initial: float, perceived: float, length: float, entry: bool = False,
                 angle: float = 0.0) -> None:  # fmt: skip
        self.eid = eid
        self.initial_bearing = initial
        self.perceived_bearing = perceived
        self.segment_length = length
        self.entry_allowed = entry
        self.angle = angle
        self.kind = INVALID
        self.modifier = UTURN
        self.lanes: tuple[int, int, tuple[int, ...]] | None = None  # (lanes in turn, first from right, masks)

    def copy(self) -> Road:
        """A copy of the road with its instruction and lanes (views are shared between caches)."""
        r = Road(self.eid, self.initial_bearing, self.perceived_bearing, self.segment_length, self.entry_allowed,
                 self.angle)  # fmt: skip
        r.kind, r.modifier, r.lanes = self.kind, self.modifier, self.lanes
        return r

    def mirror(self) -> None:
        """Make a left turn an equivalent right turn and vice versa (angle and modifier)."""
        if geo.deviation(self.angle, 0) > EPSILON:
            self.angle = 360.0 - self.angle
            self.modifier = (0, 7, 6, 5, 4, 3, 2, 1)[self.modifier]

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return (f"Road(e={self.eid} entry={self.entry_allowed} angle={self.angle:.1f} "
                f"bearing={self.perceived_bearing:.1f} kind={self.kind} mod={self.modifier})")  # fmt: skip


Intersection = list[Road]


def closest_turn(inter: Sequence[Road], angle: float, skip: Callable[[Road], bool] | None = None) -> int | None:
    """Index of the road whose angle is closest to `angle` (roads where `skip` is true left out; None if all are)."""
    best, key = None, None
    for i, r in enumerate(inter):
        k = (bool(skip(r)) if skip else False, geo.deviation(r.angle, angle))
        if key is None or k < key:
            best, key = i, k
    if best is None or (skip is not None and skip(inter[best])):
        return None
    return best


def closest_bearing(inter: Sequence[Road], b: float) -> int:
    """Index of the road whose perceived bearing is closest to b."""
    return min(range(len(inter)), key=lambda i: geo.deviation(inter[i].perceived_bearing, b))


def count_enterable(inter: Sequence[Road]) -> int:
    return sum(1 for r in inter if r.entry_allowed)


def is_dead_end(inter: Sequence[Road]) -> bool:
    return not any(r.entry_allowed for r in inter[1:])


def rightmost(inter: Sequence[Road]) -> Road:
    return inter[1] if len(inter) > 1 else inter[0]


def leftmost(inter: Sequence[Road]) -> Road:
    return inter[-1] if len(inter) > 1 else inter[0]

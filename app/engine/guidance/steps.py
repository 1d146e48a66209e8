"""Route steps (OSRM's `include/engine/guidance/route_step.hpp`): a step with its maneuver and the junctions it passes,
and the queries on steps the post-processing passes share.

`Guide.steps` (`__init__`) cuts a leg into steps at every turn whose instruction is not "no turn" (OSRM's
assembleSteps): each step carries the name record of the road after its maneuver, the mode of the road it drives,
the maneuver (location, bearings quantised as OSRM stores them, instruction) and its first intersection (the
junction's roads as 15-degree bearing classes, which may be entered, in/out, lanes, classes). `post_processing`
then runs OSRM's passes over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from floor.intersections.intersection import NO_TURN, SUPPRESSED, UTURN
from floor.intersections.names import NameRecord, requires_announcement

WAYPOINT_NONE, WAYPOINT_ARRIVE, WAYPOINT_DEPART = 0, 1, 2


@dataclass
class StepIntersection:
    """One junction a step passes (OSRM's IntermediateIntersection)."""

    location: tuple[float, float]
    bearings: list[int]
    entry: list[bool]
    in_: int | None
    out: int | None
    lanes: tuple[int, int] = (0, -1)  # (lanes in turn, first lane from the right)
    lane_desc: tuple[int, ...] = ()
    classes: list[str] = field(default_factory=list)


@dataclass
class Maneuver:
    """What the driver is told at a step's start: where, the bearings before and after, the instruction (type and
    modifier), whether it is a depart/arrive, the roundabout exit."""

    location: tuple[float, float]
    bearing_before: int
    bearing_after: int
    kind: int
    modifier: int
    waypoint: int = WAYPOINT_NONE
    exit: int = 0


@dataclass
class RouteStep:
    """One step of a leg (OSRM's RouteStep); geometry is leg coordinates [geometry_begin, geometry_end)."""

    from_id: int
    name_id: int
    is_segregated: bool
    name: str
    ref: str
    pronunciation: str
    destinations: str
    exits: str
    duration: float
    distance: float
    weight: float
    mode: str
    maneuver: Maneuver
    geometry_begin: int
    geometry_end: int
    intersections: list[StepIntersection]
    rotary_name: str = ""
    rotary_pronunciation: str = ""
    length: float = 0.0  # metres as the leg measures them (the answer's `distance`); `distance` is OSRM's measure

    def invalidate(self) -> None:
        """Mark the step as merged away (OSRM's invalidate): no length, no instruction; removed by `remove_no_turns`."""
        self.name_id = 0
        self.name = self.ref = self.pronunciation = self.destinations = self.exits = ""
        self.rotary_name = self.rotary_pronunciation = ""
        self.duration = self.distance = self.weight = self.length = 0.0
        self.mode = "inaccessible"
        self.maneuver = Maneuver((0.0, 0.0), 0, 0, NO_TURN, UTURN)
        self.geometry_begin = self.geometry_end = 0
        self.intersections = [StepIntersection((0.0, 0.0), [], [], None, None)]

    def elongate_by(self, other: RouteStep) -> None:
        """Append the following step `other` to this one (its time, length, geometry end and intersections)."""
        self.duration += other.duration
        self.distance += other.distance
        self.length += other.length
        self.weight += other.weight
        self.geometry_end = other.geometry_end
        self.intersections.extend(other.intersections)

    def adapt_signage(self, origin: RouteStep) -> None:
        """Take over the name, ref, destinations, exits and pronunciation of `origin`."""
        self.name_id = origin.name_id
        self.name = origin.name
        self.pronunciation = origin.pronunciation
        self.destinations = origin.destinations
        self.exits = origin.exits
        self.ref = origin.ref

    def record(self) -> NameRecord:
        """The name record of the step (what decides whether a name change is announced)."""
        return NameRecord(self.name, self.destinations, self.pronunciation, self.ref, self.exits)

    # lane helpers
    def lanes_total(self) -> int:
        """Number of lanes described at the step's maneuver (0: no turn lanes)."""
        return len(self.intersections[0].lane_desc)

    def lanes_in_turn(self) -> int:
        """Number of those lanes that serve the maneuver."""
        return self.intersections[0].lanes[0]

    def lanes_right(self) -> int:
        """Lanes to the right of the ones serving the maneuver."""
        return self.intersections[0].lanes[1] if self.lanes_total() else 0

    def lanes_left(self) -> int:
        """Lanes to the left of the ones serving the maneuver."""
        if not self.lanes_total():
            return 0
        return self.lanes_total() - (self.lanes_in_turn() + self.lanes_right())


# -- helpers -------------------------------------------------------------------------------------------------------
def has_turn_type(s: RouteStep) -> bool:
    """Whether the step carries an instruction (not "no turn")."""
    return s.maneuver.kind != NO_TURN


def has_waypoint(s: RouteStep) -> bool:
    """Whether the step is a depart or arrive."""
    return s.maneuver.waypoint != WAYPOINT_NONE


def is_no_turn(s: RouteStep) -> bool:
    """Whether the step was invalidated (no turn, u-turn modifier: OSRM's marker)."""
    return s.maneuver.kind == NO_TURN and s.maneuver.modifier == UTURN


def prev_turn(steps: list[RouteStep], i: int) -> int:
    """Index of the nearest earlier step that still carries an instruction or a waypoint."""
    while True:
        i -= 1
        if has_turn_type(steps[i]) or has_waypoint(steps[i]):
            return i


def next_turn(steps: list[RouteStep], i: int) -> int:
    """Index of the nearest later step that still carries an instruction or a waypoint."""
    while True:
        i += 1
        if has_turn_type(steps[i]) or has_waypoint(steps[i]):
            return i


def remove_no_turns(steps: list[RouteStep]) -> list[RouteStep]:
    """The steps without invalidated ones (waypoints always stay)."""
    return [s for s in steps if not (is_no_turn(s) and s.maneuver.waypoint == WAYPOINT_NONE)]


def same_name(a: RouteStep, b: RouteStep) -> bool:
    """haveSameName."""
    if (not a.name and not a.ref) or (not b.name and not b.ref):
        return False
    if a.name_id == b.name_id:
        return True
    return not requires_announcement(a.record(), b.record())


def allowed_turns(s: RouteStep) -> int:
    """How many roads at the step's maneuver may be entered."""
    return sum(1 for e in s.intersections[0].entry if e)


def available_turns(s: RouteStep) -> int:
    """How many roads meet at the step's maneuver."""
    return len(s.intersections[0].entry)


def is_traffic_light(s: RouteStep) -> bool:
    """A suppressed maneuver at a two-road, one-exit junction: a node that only stops traffic."""
    return s.maneuver.kind == SUPPRESSED and available_turns(s) == 2 and allowed_turns(s) == 1

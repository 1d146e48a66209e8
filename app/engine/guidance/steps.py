"""Route steps from a leg and its turn instructions, then OSRM's post-processing of them.

`assemble` cuts a leg into steps at every turn whose instruction is not "no turn" (OSRM's assembleSteps): each
step carries the name record of the road after its maneuver, the mode of the road it drives, the maneuver
(location, bearings quantised as OSRM stores them, instruction) and its first intersection (the junction's roads
as 15-degree bearing classes, which may be entered, in/out, lanes, classes). `post_process` then runs OSRM's
passes in OSRM's order:

1. collapse segregated turns (a turn across a dual carriageway is one turn),
2. trim zero-length first/last steps (a waypoint on a junction node departs on the road it leaves along and
   arrives on the road it came by),
3. roundabouts: enter ... exit as one maneuver with the exit number (rotary names, roundabout turns),
4. collapse turns: name changes right before/after a turn, u-turns over short links, staggered crossings,
   name oscillations, sliproads, choiceless turns,
5. lane anticipation over short stretches with lanes,
6. intersections: suppressed turns become intersections of the previous step; end of road without passed
   intersections becomes turn/continue,
7. short name segments (< 105 m) are not announced,
8. depart/arrive get left/right/straight when the waypoint lies beside the road.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import geo
from .geo import Coord
from .intersection import (
    CONTINUE,
    END_OF_ROAD,
    ENTER_ROTARY,
    ENTER_ROTARY_AT_EXIT,
    ENTER_ROUNDABOUT,
    ENTER_ROUNDABOUT_INTERSECTION,
    ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT,
    ENTERS,
    FORK,
    LEAVES,
    MERGE,
    NARROW_TURN_ANGLE,
    NEW_NAME,
    NO_TURN,
    ON_RAMP,
    ROUNDABOUT_TYPES,
    SILENT,
    SLIGHT_LEFT,
    SLIGHT_RIGHT,
    SLIPROAD,
    STAYS,
    STRAIGHT,
    SUPPRESSED,
    TURN,
    UTURN,
    has_left,
    has_right,
    turn_direction,
)
from .names import NameRecord, requires_announcement

WAYPOINT_NONE, WAYPOINT_ARRIVE, WAYPOINT_DEPART = 0, 1, 2
MAX_COLLAPSE_DISTANCE = 30.0
NAME_SEGMENT_CUTOFF_LENGTH = 105.0
MIN_END_OF_ROAD_INTERSECTIONS = 2
LANE_CHANGE_DISTANCE = 200.0  # OSRM's min_distance_needed_for_lane_change


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


def same_side(a: RouteStep, b: RouteStep) -> bool:
    """Whether two maneuvers turn to the same side (straight counts as both)."""

    def is_left(s: RouteStep) -> bool:
        return s.maneuver.modifier == STRAIGHT or has_left(s.maneuver.modifier)

    def is_right(s: RouteStep) -> bool:
        return s.maneuver.modifier == STRAIGHT or has_right(s.maneuver.modifier)

    return (is_left(a) and is_left(b)) or (is_right(a) and is_right(b))


def allowed_turns(s: RouteStep) -> int:
    """How many roads at the step's maneuver may be entered."""
    return sum(1 for e in s.intersections[0].entry if e)


def available_turns(s: RouteStep) -> int:
    """How many roads meet at the step's maneuver."""
    return len(s.intersections[0].entry)


def is_traffic_light(s: RouteStep) -> bool:
    """A suppressed maneuver at a two-road, one-exit junction: a node that only stops traffic."""
    return s.maneuver.kind == SUPPRESSED and available_turns(s) == 2 and allowed_turns(s) == 1


def _in_out(inter: StepIntersection) -> tuple[float, float] | None:
    if inter.in_ is None or inter.out is None or inter.in_ >= len(inter.bearings) or inter.out >= len(inter.bearings):
        return None
    return geo.reverse(inter.bearings[inter.in_]), inter.bearings[inter.out]


def bearings_reversed(b_in: float, b_out: float) -> bool:
    """Whether the way out points back roughly where the way in came from (within 35 degrees)."""
    left = b_in - b_out if 0 <= b_out <= b_in else b_in + 360 - b_out
    return geo.deviation(left, 180) <= 35


def total_turn_angle(entry: RouteStep, exit_: RouteStep) -> float:
    """The angle turned from entering the first step's maneuver to leaving the second's (OSRM's totalTurnAngle)."""
    if entry.geometry_begin > exit_.geometry_begin:
        return total_turn_angle(exit_, entry)
    ei, xi = entry.intersections[0], exit_.intersections[0]
    if xi.out is None or xi.out >= len(xi.bearings) or ei.in_ is None or ei.in_ >= len(ei.bearings):
        return ei.bearings[ei.out] if ei.out is not None else 0.0
    return geo.angle_between(geo.reverse(ei.bearings[ei.in_]), xi.bearings[xi.out])


def no_intermediary(s: RouteStep) -> bool:
    """Whether the step passes no junction with a choice after its maneuver."""
    return all(len(i.entry) == 2 for i in s.intersections[1:])


def _step_angle(s: RouteStep) -> float:
    i = s.intersections[0]
    return geo.angle_between(geo.reverse(i.bearings[i.in_]), i.bearings[i.out])  # type: ignore[index]


# -- collapsing scenarios -------------------------------------------------------------------------------------------
def _bad_uturn(a: RouteStep, b: RouteStep) -> bool:
    has_u = a.maneuver.modifier == UTURN or b.maneuver.modifier == UTURN
    into = a.maneuver.kind == NEW_NAME and b.maneuver.modifier == UTURN
    out = b.maneuver.kind == NEW_NAME and a.maneuver.modifier == UTURN
    return has_u and not into and not out


def pre2(a: RouteStep, b: RouteStep) -> bool:
    """OSRM's basic collapse preconditions for two steps: no roundabout, no waypoint, same mode, no bad u-turn."""
    rb = a.maneuver.kind in ROUNDABOUT_TYPES or b.maneuver.kind in ROUNDABOUT_TYPES
    wp = has_waypoint(a) or has_waypoint(b)
    return not rb and not wp and a.mode == b.mode and not _bad_uturn(a, b)


def pre3(a: RouteStep, b: RouteStep, c: RouteStep) -> bool:
    """OSRM's basic collapse preconditions for three steps."""
    rb = any(s.maneuver.kind in ROUNDABOUT_TYPES for s in (a, b, c))
    bad = _bad_uturn(a, b) and _bad_uturn(b, c)
    return not rb and a.mode == b.mode == c.mode and not bad


def short_undisturbed(s: RouteStep, mcd: float) -> bool:
    """A step shorter than the collapse distance with no choice along it."""
    return s.distance <= mcd and no_intermediary(s)


def is_link_road(pre: RouteStep, link: RouteStep, post: RouteStep, mcd: float) -> bool:
    """An unnamed short step between two named roads (a link to collapse away)."""
    return link.distance <= 2 * mcd and not link.name and bool(pre.name) and bool(post.name) and no_intermediary(link)


def is_staggered(p: RouteStep, c: RouteStep, n: RouteStep) -> bool:
    """A right-left / left-right zig-zag across another road over a few metres (a staggered crossing)."""
    if c.maneuver.kind in ENTERS or n.maneuver.kind in ENTERS:
        return False
    if _in_out(c.intersections[0]) is None or _in_out(n.intersections[0]) is None:
        return False

    def right(a: float) -> bool:
        return 45 < a < 135

    def left(a: float) -> bool:
        return 225 < a < 315

    ac, an = _step_angle(c), _step_angle(n)
    lr = left(ac) and right(an)
    rl = right(ac) and left(an)
    short = c.distance < 3
    inter_mode = p.mode == n.mode and c.mode != n.mode
    mode_enter = p.mode != c.mode
    return short and (lr or rl) and not inter_mode and not mode_enter and no_intermediary(c)


def is_uturn(p: RouteStep, c: RouteStep, n: RouteStep, mcd: float) -> bool:
    """Two turns to the same side over a short link that together turn the driver around (OSRM's isUTurn)."""
    if not pre3(p, c, n):
        return False
    if c.maneuver.kind not in (TURN, CONTINUE, END_OF_ROAD):
        return False
    ci, ni = c.intersections[0], n.intersections[0]
    if ci.in_ is None or ni.out is None:
        return False
    if not bearings_reversed(geo.reverse(ci.bearings[ci.in_]), ni.bearings[ni.out]):
        return False
    if not same_name(p, n):
        return False
    collapsable = short_undisturbed(c, mcd)
    only_allowed = allowed_turns(n) == 1 and no_intermediary(c)
    return collapsable or is_link_road(p, c, n, mcd) or only_allowed


def _is_name_change(s: RouteStep) -> bool:
    return s.maneuver.kind == NEW_NAME or (s.maneuver.kind == TURN and s.maneuver.modifier == STRAIGHT)


def name_oscillation(p: RouteStep, c: RouteStep, n: RouteStep) -> bool:
    """A name that changes and changes back over a short stretch (OSRM's isNameOszillation)."""
    if not pre3(p, c, n):
        return False
    changes = _is_name_change(c) and (_is_name_change(n) or (n.maneuver.kind == SUPPRESSED and n.name_id == 0))
    if not changes:
        return False
    return p.name_id == n.name_id or same_name(p, n)


def preceded_by_name_change(p: RouteStep, c: RouteStep, n: RouteStep, mcd: float) -> bool:
    """A name change right before a turn: announce the turn only (maneuverPreceededByNameChange)."""
    if not pre3(p, c, n):
        return False
    is_change = c.maneuver.kind == NEW_NAME or (c.maneuver.kind in (TURN, CONTINUE) and c.maneuver.modifier == STRAIGHT)
    followed = has_turn_type(n) and n.maneuver.kind != SUPPRESSED
    return short_undisturbed(c, mcd) and is_change and followed


def preceded_by_suppressed_direction(c: RouteStep, n: RouteStep, mcd: float) -> bool:
    """A suppressed bend right before a maneuver (maneuverPreceededBySuppressedDirection)."""
    if not pre2(c, n):
        return False
    sup = c.maneuver.kind == SUPPRESSED and c.maneuver.modifier != STRAIGHT
    followed = has_turn_type(n) and n.maneuver.kind != SUPPRESSED
    return short_undisturbed(c, mcd) and allowed_turns(c) > 1 and sup and followed and same_side(c, n)


def suppressed_straight_between(e: RouteStep, c: RouteStep, x: RouteStep, mcd: float) -> bool:
    """Two short steps around a suppressed straight that form one maneuver (suppressedStraightBetweenTurns)."""
    if not pre3(e, c, x):
        return False
    short = e.distance < 0.8 * mcd and c.distance < 0.8 * mcd
    similar = (e.distance < 5 and c.distance < 5) or (
        max(e.distance, c.distance) > 0 and min(e.distance, c.distance) / max(e.distance, c.distance) > 0.75
    )
    types = (
        c.maneuver.kind == SUPPRESSED
        and c.maneuver.modifier == STRAIGHT
        and e.maneuver.kind in (TURN, CONTINUE)
        and x.maneuver.kind in (TURN, CONTINUE, ON_RAMP)
    )
    total = total_turn_angle(e, x)
    not_u = NARROW_TURN_ANGLE < total < 360 - NARROW_TURN_ANGLE
    return short and similar and types and not_u


def succeeded_by_name_change(c: RouteStep, n: RouteStep, mcd: float) -> bool:
    """A maneuver followed closely by a name change: the name goes into the maneuver (maneuverSucceededByNameChange)."""
    if not pre2(c, n):
        return False
    followed = n.maneuver.kind == NEW_NAME or (n.maneuver.kind in (TURN, CONTINUE) and n.maneuver.modifier == STRAIGHT)
    is_maneuver = has_turn_type(c) and c.maneuver.kind != SUPPRESSED
    strong = n.maneuver.kind == NEW_NAME and n.maneuver.modifier == STRAIGHT and c.distance <= 1.5 * mcd
    choiceless = n.maneuver.kind == NEW_NAME and allowed_turns(n) == 1 and c.distance <= 1.5 * mcd
    return (short_undisturbed(c, mcd) or strong or choiceless) and followed and is_maneuver


def succeeded_by_suppressed_direction(c: RouteStep, n: RouteStep, mcd: float) -> bool:
    """A maneuver followed closely by a suppressed bend (maneuverSucceededBySuppressedDirection)."""
    if not pre2(c, n):
        return False
    followed = n.maneuver.kind == SUPPRESSED and n.maneuver.modifier != STRAIGHT
    is_maneuver = has_turn_type(c) and c.maneuver.kind != SUPPRESSED
    return short_undisturbed(c, mcd) and followed and is_maneuver and same_side(c, n)


def name_change_after_suppressed(c: RouteStep, n: RouteStep, mcd: float) -> bool:
    """A very short suppressed step followed by a name change (nameChangeImmediatelyAfterSuppressed)."""
    if not pre2(c, n):
        return False
    return c.distance < 0.25 * mcd and c.maneuver.kind == SUPPRESSED and n.maneuver.kind == NEW_NAME


def close_choiceless_after_turn(c: RouteStep, n: RouteStep, mcd: float) -> bool:
    """A short choiceless step right after a turn (closeChoicelessTurnAfterTurn)."""
    if not pre2(c, n):
        return False
    return (
        short_undisturbed(c, mcd)
        and c.maneuver.modifier != STRAIGHT
        and allowed_turns(n) == 1
        and n.maneuver.kind != SUPPRESSED
    )


def double_choiceless(c: RouteStep, n: RouteStep, mcd: float) -> bool:
    """Two choiceless junctions in a row over a short stretch (doubleChoiceless)."""
    if not pre2(c, n):
        return False
    dc = allowed_turns(n) == 1 and len(c.intersections) == 2 and sum(1 for e in c.intersections[-1].entry if e) == 1
    return dc and c.distance < 1.5 * mcd


def straight_followed_by_choiceless(c: RouteStep, n: RouteStep, mcd: float) -> bool:
    """A short straight step followed by a choiceless turn (straightTurnFollowedByChoiceless)."""
    if not pre2(c, n):
        return False
    return (
        c.distance <= 2 * mcd
        and c.maneuver.kind in (CONTINUE, TURN)
        and c.maneuver.modifier == STRAIGHT
        and allowed_turns(n) == 1
        and no_intermediary(c)
    )


# -- combine strategies ---------------------------------------------------------------------------------------------
def find_total_turn_angle(entry: RouteStep, exit_: RouteStep, mcd: float) -> float:
    """The turn angle of a collapsed maneuver, measured over its short steps (OSRM's findTotalTurnAngle)."""
    if entry.geometry_begin > exit_.geometry_begin:
        return find_total_turn_angle(exit_, entry, mcd)
    xi, ei = exit_.intersections[0], entry.intersections[0]
    x_out = xi.bearings[xi.out]  # type: ignore[index]
    x_in = geo.reverse(xi.bearings[xi.in_])  # type: ignore[index]
    e_in = geo.reverse(ei.bearings[ei.in_])  # type: ignore[index]
    e_out = ei.bearings[ei.out]  # type: ignore[index]
    exit_angle = geo.angle_between(x_in, x_out)
    entry_angle = geo.angle_between(e_in, e_out)
    total = geo.angle_between(e_in, x_out)
    use_total = False
    if geo.deviation(total, 180) >= 0.5 * NARROW_TURN_ANGLE:
        if entry.distance < mcd:
            use_total = True
        elif (entry_angle <= 185 and exit_angle <= 185) or (entry_angle >= 175 and exit_angle >= 175):
            use_total = True
    return total if use_total else entry_angle


def _angles_ok(s: RouteStep) -> bool:
    i = s.intersections[0]
    return i.in_ is not None and i.out is not None


def adjust_to_combined_turn(at: RouteStep, frm: RouteStep, prior: RouteStep, mcd: float) -> None:
    """AdjustToCombinedTurnStrategy."""
    angle = find_total_turn_angle(at, frm, mcd) if _angles_ok(at) and _angles_ok(frm) else 180.0
    m = at.maneuver
    new_mod = m.modifier if m.kind in (FORK, MERGE) else turn_direction(angle)

    def non_turn(s: RouteStep) -> bool:
        k, md = s.maneuver.kind, s.maneuver.modifier
        return k == NEW_NAME or (k == TURN and md == STRAIGHT) or (k == CONTINUE and md == STRAIGHT)

    from_non = non_turn(frm)
    at_non = non_turn(at) or m.kind == SUPPRESSED
    if from_non or at_non:
        if m.kind == SUPPRESSED:
            if new_mod == STRAIGHT:
                m.kind = NEW_NAME
            else:
                m.kind = CONTINUE if same_name(prior, frm) else TURN
        elif m.kind == NEW_NAME and frm.maneuver.kind == SUPPRESSED and new_mod != STRAIGHT:
            m.kind = TURN
        elif m.kind == CONTINUE and not same_name(prior, frm):
            m.kind = TURN
        elif m.kind == TURN and frm.maneuver.kind != SUPPRESSED and same_name(prior, frm):
            m.kind = CONTINUE
    elif frm.maneuver.kind == ON_RAMP:
        m.kind = ON_RAMP
    elif m.kind == TURN and frm.maneuver.kind == TURN and same_name(prior, frm):
        m.kind = CONTINUE
    elif m.kind == CONTINUE and frm.maneuver.kind == TURN and not same_name(prior, frm):
        m.kind = TURN
    m.modifier = new_mod


def transfer_signage(at: RouteStep, frm: RouteStep) -> None:
    """Give the step `at` the signage (and rotary name) of `frm`."""
    at.adapt_signage(frm)
    at.rotary_name = frm.rotary_name
    at.rotary_pronunciation = frm.rotary_pronunciation


def transfer_lanes(at: RouteStep, frm: RouteStep) -> None:
    """Give the step `at` the lanes of `frm`."""
    at.intersections[0].lanes = frm.intersections[0].lanes
    at.intersections[0].lane_desc = frm.intersections[0].lane_desc


def combine(at: RouteStep, after: RouteStep, turn=None, signage=None, lanes=None) -> None:  # noqa: ANN001
    """combineRouteSteps: strategies for the instruction, the signage and the lanes, then merge `after` into `at`."""
    if turn is not None:
        turn(at, after)
    if signage is not None:
        signage(at, after)
    if lanes is not None:
        lanes(at, after)
    at.elongate_by(after)
    after.invalidate()


def _fixed(kind: int, mod: int):  # noqa: ANN202
    def f(at: RouteStep, _: RouteStep) -> None:
        at.maneuver.kind, at.maneuver.modifier = kind, mod

    return f


def _adjust_angle(mcd: float):  # noqa: ANN202
    def f(at: RouteStep, frm: RouteStep) -> None:
        if at.maneuver.kind == FORK or not (_angles_ok(at) and _angles_ok(frm)):
            return
        at.maneuver.modifier = turn_direction(find_total_turn_angle(at, frm, mcd))

    return f


def _combined(prior: RouteStep, mcd: float):  # noqa: ANN202
    return lambda at, frm: adjust_to_combined_turn(at, frm, prior, mcd)


def _staggered(prior: RouteStep):  # noqa: ANN202
    def f(at: RouteStep, frm: RouteStep) -> None:
        at.maneuver.modifier = STRAIGHT
        at.maneuver.kind = SUPPRESSED if same_name(prior, frm) else NEW_NAME

    return f


def _segregated_turn(prior: RouteStep):  # noqa: ANN202
    def f(at: RouteStep, frm: RouteStep) -> None:
        update = True
        angle = geo.angle_between(at.maneuver.bearing_before, frm.maneuver.bearing_after)
        direction = turn_direction(angle)

        def straight_step(s: RouteStep) -> bool:
            return s.maneuver.kind in (NEW_NAME, CONTINUE, SUPPRESSED, TURN) and s.maneuver.modifier in (
                STRAIGHT,
                SLIGHT_LEFT,
                SLIGHT_RIGHT,
            )

        def turn_step(s: RouteStep) -> bool:
            return s.maneuver.kind in (TURN, CONTINUE, NEW_NAME, SUPPRESSED)

        if at.maneuver.kind == END_OF_ROAD or frm.maneuver.kind == END_OF_ROAD:
            at.maneuver.kind = END_OF_ROAD
        elif at.maneuver.kind == FORK:
            update = False
        elif direction == STRAIGHT and straight_step(frm):
            at.maneuver.kind = SUPPRESSED if same_name(prior, frm) else NEW_NAME
        elif 125 <= angle <= 235 and len(at.intersections) == 1 and _straightest(at) and _straightest(frm):
            at.maneuver.kind = SUPPRESSED if same_name(prior, frm) else NEW_NAME
            at.maneuver.modifier = STRAIGHT
            update = False
        elif direction != STRAIGHT and turn_step(frm):
            at.maneuver.kind = TURN
        else:
            at.maneuver.kind = frm.maneuver.kind
        if update:
            at.maneuver.modifier = direction

    return f


def _straightest(s: RouteStep) -> bool:
    """hasStraightestTurn."""
    i = s.intersections[0]
    if i.in_ is None or i.out is None:
        return False
    b_in = geo.reverse(i.bearings[i.in_])
    path = geo.angle_between(b_in, i.bearings[i.out])
    if not 125 <= path <= 235:
        return False
    best_delta, best = 360.0, 360.0
    for k, b in enumerate(i.bearings):
        if k == i.in_ or k == i.out or not i.entry[k]:
            continue
        t = geo.angle_between(b_in, b)
        dlt = geo.deviation(t, 180)
        if dlt < best_delta:
            best_delta, best = dlt, t
    path_delta = geo.deviation(path, 180)
    inter_delta = geo.deviation(best, 180)
    return path_delta <= inter_delta if geo.deviation(path, best) > 10.0 else True


def _combine_segregated(at: RouteStep, frm: RouteStep) -> None:
    if at.maneuver.kind == END_OF_ROAD or frm.maneuver.kind == END_OF_ROAD:
        at.maneuver.kind = END_OF_ROAD


# -- the passes -----------------------------------------------------------------------------------------------------
def collapse_segregated(steps: list[RouteStep]) -> list[RouteStep]:
    """collapseSegregatedTurnInstructions."""
    if has_turn_type(steps[0]) or has_turn_type(steps[-1]) or len(steps) <= 2:
        return steps
    cur, nxt, last = 1, 2, len(steps) - 1
    while nxt != last:
        prv = prev_turn(steps, cur)
        c, n = steps[cur], steps[nxt]
        if c.is_segregated and n.is_segregated:
            combine(c, n, _combine_segregated, transfer_signage, transfer_lanes)
            nxt += 1
        elif (
            c.is_segregated
            and not n.is_segregated
            and c.maneuver.kind not in ROUNDABOUT_TYPES
            and n.maneuver.kind not in ROUNDABOUT_TYPES
        ):
            ci, ni = c.intersections[0], n.intersections[0]
            if (
                ci.in_ is not None
                and ni.out is not None
                and bearings_reversed(geo.reverse(ci.bearings[ci.in_]), ni.bearings[ni.out])
            ):
                combine(c, n, _fixed(CONTINUE, UTURN), transfer_signage)
            else:
                combine(c, n, _segregated_turn(steps[prv]), transfer_signage)
            c.is_segregated = False
            nxt += 1
        else:
            cur = nxt
            nxt += 1
    return remove_no_turns(steps)


def trim_short_segments(steps: list[RouteStep], locs: list[Coord]) -> list[RouteStep]:
    """trimShortSegments: a first or last step of at most a metre is no step (the waypoint is on a junction: the
    route departs on the road it leaves along and arrives on the road it came by); a first or last point repeated
    within a metre is left out of the step geometry."""
    if len(steps) < 2 or len(locs) <= 2:
        return steps
    zero = steps[0].distance <= 1 and len(steps) > 2
    g0 = steps[0].geometry_begin
    dup = geo.distance(locs[g0], locs[g0 + 1]) <= 1
    if zero or dup:
        first_bearing = steps[0].maneuver.bearing_after
        if zero:
            cur, nxt = steps[0], steps[1]
            nxt.duration += cur.duration
            nxt.weight += cur.weight
            nxt.distance += cur.distance
            nxt.length += cur.length
            m = nxt.maneuver
            m.waypoint, m.bearing_before, m.kind, m.modifier = WAYPOINT_DEPART, 0, NO_TURN, UTURN
            fi = nxt.intersections[0]
            out_b = fi.bearings[fi.out] if fi.out is not None and fi.out < len(fi.bearings) else m.bearing_after
            fi.lanes, fi.lane_desc = (0, -1), ()
            fi.bearings, fi.entry, fi.in_, fi.out = [out_b], [True], None, 0
            steps = steps[1:]
        elif steps[0].geometry_end - steps[0].geometry_begin > 2:
            steps[0].geometry_begin += 1
        first = steps[0]
        gb = first.geometry_begin
        b = first_bearing
        if gb + 1 < len(locs) and locs[gb] != locs[gb + 1]:
            b = geo.round_half_away(geo.bearing(locs[gb], locs[gb + 1]))
        first.maneuver.bearing_after = b
        first.intersections[0].bearings[0] = b
    if len(steps) < 2:
        return steps
    ntl = steps[-2]
    if ntl.distance <= 1 and len(steps) > 2:
        m = ntl.maneuver
        m.waypoint, m.kind, m.modifier, m.bearing_after = WAYPOINT_ARRIVE, NO_TURN, UTURN, 0
        li = ntl.intersections[-1]
        in_b = li.bearings[li.in_] if li.in_ is not None and li.in_ < len(li.bearings) else 0
        li.lanes, li.lane_desc = (0, -1), ()
        li.bearings, li.entry, li.out, li.in_ = [in_b], [True], None, 0
        ntl.intersections = [li]
        ntl.geometry_end = ntl.geometry_begin + 1
        steps = steps[:-1]
        prev = steps[-2]
        ntl.adapt_signage(prev)
        ntl.mode = prev.mode
    else:
        last = steps[-1]
        g1 = last.geometry_begin
        if g1 >= 1 and geo.distance(locs[g1 - 1], locs[g1]) <= 1 and ntl.geometry_end - ntl.geometry_begin > 2:
            ntl.geometry_end -= 1
            b = geo.round_half_away(geo.bearing(locs[ntl.geometry_end - 2], locs[g1]))
            last.maneuver.bearing_before = b
            last.intersections[0].bearings[0] = int(geo.reverse(b))
    return steps


def _compress_range(steps: list[RouteStep], begin: int, end: int) -> None:
    for i in range(begin + 1, end):
        if not has_waypoint(steps[i]):
            steps[begin].elongate_by(steps[i])
            steps[i].invalidate()


def _process_roundabout_exits(steps: list[RouteStep], begin: int, end: int) -> None:
    last = end - 1
    b = steps[begin]
    if steps[last].maneuver.kind not in LEAVES:
        if b.maneuver.kind in (ENTER_ROTARY, ENTER_ROTARY_AT_EXIT):
            b.rotary_name = b.name
            b.rotary_pronunciation = b.pronunciation
        elif b.maneuver.kind in ENTERS and b.maneuver.kind in (
            ENTER_ROUNDABOUT_INTERSECTION,
            ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT,
        ):
            b.maneuver.kind = ENTER_ROUNDABOUT
        _compress_range(steps, begin, end)
        return
    exit_no = sum(1 for i in range(begin, end) if steps[i].maneuver.kind in STAYS or steps[i].maneuver.kind in LEAVES)
    steps[last].maneuver.exit = exit_no
    if b.maneuver.kind in ENTERS:
        b.maneuver.exit = exit_no
        if b.maneuver.kind in (ENTER_ROTARY, ENTER_ROTARY_AT_EXIT):
            b.rotary_name = b.name
            b.rotary_pronunciation = b.pronunciation
        elif b.maneuver.kind in (ENTER_ROUNDABOUT_INTERSECTION, ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT):
            ei, xi = b.intersections[0], steps[last].intersections[0]
            if ei.in_ is not None and xi.out is not None:
                angle = geo.angle_between(geo.reverse(ei.bearings[ei.in_]), xi.bearings[xi.out])
                b.maneuver.modifier = turn_direction(angle)
        b.adapt_signage(steps[last])
    if b.maneuver.kind in (ENTER_ROUNDABOUT_INTERSECTION, ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT) and (
        b.mode == steps[last].mode
    ):
        _compress_range(steps, begin, end)
    else:
        _compress_range(steps, begin, last)


def handle_roundabouts(steps: list[RouteStep]) -> list[RouteStep]:
    """handleRoundabouts: OSRM's group_by with its stateful predicate, each roundabout group split at its exits."""
    first = next((i for i, s in enumerate(steps) if s.maneuver.kind in ROUNDABOUT_TYPES), None)
    if first is None:
        return steps
    state = [steps[first].maneuver.kind not in ENTERS]

    def on(s: RouteStep) -> bool:
        k = s.maneuver.kind
        if state[0]:
            if k in LEAVES:
                state[0] = False
            return True
        state[0] = k in ENTERS
        r = state[0]
        if state[0]:
            state[0] = k not in LEAVES
        return r

    n = len(steps)
    i = 0
    while i != n:
        while i < n and not on(steps[i]):
            i += 1
        j = i
        while j < n and on(steps[j]):
            j += 1
        itr = i
        while itr != j:
            ex = next((k for k in range(itr, j) if steps[k].maneuver.kind in LEAVES), j)
            if ex == j:
                _process_roundabout_exits(steps, itr, ex)
                itr = ex
            else:
                _process_roundabout_exits(steps, itr, ex + 1)
                itr = ex + 1
        i = j
    return remove_no_turns(steps)


def _handle_sliproad(steps: list[RouteStep], i: int, mcd: float) -> None:
    n = next_turn(steps, i)
    while is_traffic_light(steps[n]):
        steps[i].elongate_by(steps[n])
        steps[n].invalidate()
        n = next_turn(steps, n)
    if has_waypoint(steps[n]):
        steps[i].maneuver.kind = TURN
        return
    p = prev_turn(steps, i)
    steps[i].maneuver.kind = CONTINUE if same_name(steps[p], steps[n]) else TURN
    combine(steps[i], steps[n], _adjust_angle(mcd), transfer_signage, transfer_lanes)


def collapse_turns(steps: list[RouteStep], mcd: float = MAX_COLLAPSE_DISTANCE) -> list[RouteStep]:
    """collapseTurnInstructions."""
    if len(steps) <= 2:
        return steps
    i = 1
    while i + 1 < len(steps):
        cur = steps[i]
        if cur.maneuver.kind in ENTERS or cur.maneuver.kind in STAYS:
            i += 1
            continue
        if not has_turn_type(cur):
            i += 1
            continue
        if cur.maneuver.kind == SLIPROAD:
            _handle_sliproad(steps, i, mcd)
            i += 1
            continue
        n = next_turn(steps, i)
        if has_waypoint(steps[n]):
            break
        p = prev_turn(steps, i)
        if cur.mode != steps[n].mode:
            i += 1
            continue
        P, C, N = steps[p], cur, steps[n]
        if is_staggered(P, C, N):
            combine(C, N, _staggered(P), transfer_signage)
        elif is_uturn(P, C, N, mcd):
            combine(C, N, _fixed(CONTINUE, UTURN), transfer_signage)
        elif name_oscillation(P, C, N):
            combine(C, N)
            combine(P, C)
        elif preceded_by_name_change(P, C, N, mcd) or preceded_by_suppressed_direction(C, N, mcd):
            adjust_to_combined_turn(N, C, P, mcd)
            combine(P, C)
        elif (
            succeeded_by_name_change(C, N, mcd)
            or name_change_after_suppressed(C, N, mcd)
            or succeeded_by_suppressed_direction(C, N, mcd)
            or close_choiceless_after_turn(C, N, mcd)
        ):
            combine(C, N, _combined(P, mcd), transfer_signage)
        elif straight_followed_by_choiceless(C, N, mcd):
            combine(C, N, _combined(P, mcd), transfer_signage)
        elif suppressed_straight_between(P, C, N, mcd):
            fb = prev_turn(steps, p)
            P.elongate_by(C)
            C.invalidate()
            combine(P, N, _combined(steps[fb], mcd), transfer_signage)
        nn = next_turn(steps, i) if i + 1 < len(steps) else i
        if nn < len(steps) and double_choiceless(steps[i], steps[nn], mcd):
            combine(steps[i], steps[nn], _combined(steps[p], mcd), transfer_signage)
        if not has_waypoint(steps[p]):
            fb = prev_turn(steps, p)
            if is_uturn(steps[fb], steps[p], steps[i], mcd):
                combine(steps[p], steps[i], _fixed(CONTINUE, UTURN), transfer_signage)
        i += 1
    return steps


def anticipate_lanes(steps: list[RouteStep], min_dist: float = LANE_CHANGE_DISTANCE) -> list[RouteStep]:
    """anticipateLaneChange over ranges of short steps with lanes."""

    def short_with_lanes(s: RouteStep) -> bool:
        if s.intersections[0].lanes[0] <= 0:
            return False
        to_cross = max(s.lanes_right(), s.lanes_left())
        return s.distance < (1 + to_cross) * min_dist

    ranges: list[tuple[int, int]] = []
    i = 0
    while i < len(steps):
        if short_with_lanes(steps[i]):
            j = i
            while j < len(steps) and short_with_lanes(steps[j]):
                j += 1
            if j - i > 1:
                ranges.append((i, j))
            i = j
        else:
            i += 1
    straight_left: set[int] = set()
    straight_right: set[int] = set()

    def is_left_turn(m: Maneuver) -> bool:
        return has_right(m.modifier) if m.kind == MERGE else has_left(m.modifier)

    def is_right_turn(m: Maneuver) -> bool:
        return has_left(m.modifier) if m.kind == MERGE else has_right(m.modifier)

    for first, end in ranges:
        dist = 0.0
        for k in range(end - 1, first, -1):
            cur, prev = steps[k], steps[k - 1]
            cl = cur.intersections[0].lanes
            pl = prev.intersections[0].lanes
            if prev.maneuver.kind == SUPPRESSED:
                dist += prev.distance
            else:
                dist = 0.0
            delta = pl[0] - cl[0]
            if not (pl[0] > 1) or not (pl[0] > cl[0]) or dist > delta * min_dist:
                continue
            right_of, left_of = cur.lanes_right(), cur.lanes_left()
            prev_straight = not is_left_turn(prev.maneuver) and not is_right_turn(prev.maneuver)
            if prev_straight:
                if is_left_turn(cur.maneuver) or id(cur) in straight_left:
                    straight_left.add(id(prev))
                elif is_right_turn(cur.maneuver) or id(cur) in straight_right:
                    straight_right.add(id(prev))

            if is_left_turn(cur.maneuver):
                go_left = True
            elif is_right_turn(cur.maneuver):
                go_left = False
            else:
                go_left = id(cur) in straight_left
            if go_left:
                nfr = pl[1] + pl[0] - cl[0] - min(left_of, cl[0])
            else:
                nfr = pl[1] + min(right_of, cl[0])
            prev.intersections[0].lanes = (cl[0], nfr)
            if (
                prev.maneuver.kind == SUPPRESSED
                and cur.maneuver.kind == SUPPRESSED
                and prev.mode == cur.mode
                and prev.intersections[0].lanes == cur.intersections[0].lanes
            ):
                prev.elongate_by(cur)
                cur.invalidate()
    return remove_no_turns(steps)


def build_intersections(steps: list[RouteStep]) -> list[RouteStep]:
    """buildIntersections: suppressed turns join the previous step; lone end-of-road becomes turn/continue."""
    last_valid = 0
    for i, s in enumerate(steps):
        k = s.maneuver.kind
        if k == SUPPRESSED:
            steps[last_valid].elongate_by(s)
            s.invalidate()
        elif k not in SILENT:
            if k == END_OF_ROAD:
                prev = steps[last_valid]
                if len(prev.intersections) < MIN_END_OF_ROAD_INTERSECTIONS:
                    same = bool(s.name or s.ref) and not requires_announcement(prev.record(), s.record())
                    s.maneuver.kind = CONTINUE if same else TURN
            last_valid = i
    return remove_no_turns(steps)


def suppress_short_names(steps: list[RouteStep]) -> list[RouteStep]:
    """suppressShortNameSegments."""
    if not steps:
        return steps

    def can_extend(s: RouteStep) -> bool:
        return not has_waypoint(s) and (not has_turn_type(s) or s.maneuver.kind == SUPPRESSED)

    prev = 0
    cur = 1
    while cur < len(steps) and not has_waypoint(steps[cur]):
        c = steps[cur]
        if c.maneuver.kind == NEW_NAME and c.intersections[0].lanes[0] == 0 and steps[prev].mode == c.mode:
            if same_name(steps[prev], c):
                steps[prev].elongate_by(c)
                c.invalidate()
            else:
                loc = cur
                dist = c.distance
                while cur + 1 < len(steps) and can_extend(steps[cur + 1]) and dist < NAME_SEGMENT_CUTOFF_LENGTH:
                    cur += 1
                    dist += steps[cur].distance
                if dist < NAME_SEGMENT_CUTOFF_LENGTH:
                    steps[prev].elongate_by(steps[cur])
                    steps[cur].invalidate()
                else:
                    prev = loc
        else:
            prev = cur
        cur += 1
    return remove_no_turns(steps)


def assign_relative_locations(steps: list[RouteStep], first: Coord, second: Coord, last2: Coord, last: Coord,
                              source_input: Coord, target_input: Coord) -> list[RouteStep]:  # fmt: skip
    """Depart/arrive modifiers: which side of the road the input point lies on (5..300 m away)."""

    def side(angle: float) -> int:
        if angle < 135:
            return 2  # RIGHT
        if angle <= 225:
            return STRAIGHT
        return 6  # LEFT

    d0 = geo.distance(source_input, first)
    steps[0].maneuver.modifier = side(geo.compute_angle(source_input, first, second)) if 5.0 <= d0 <= 300.0 else UTURN
    d1 = geo.distance(target_input, last)
    steps[-1].maneuver.modifier = side(geo.compute_angle(last2, last, target_input)) if 5.0 <= d1 <= 300.0 else UTURN
    return steps


def post_process(steps: list[RouteStep], locs: list[Coord], source_input: Coord, target_input: Coord,
                 mcd: float = MAX_COLLAPSE_DISTANCE) -> list[RouteStep]:  # fmt: skip
    """All of OSRM's passes in its order (see the module docstring)."""
    steps = collapse_segregated(steps)
    steps = trim_short_segments(steps, locs)
    steps = handle_roundabouts(steps)
    steps = collapse_turns(steps, mcd)  # OSRM keeps the collapsed (invalid) steps until lane anticipation
    steps = anticipate_lanes(steps)
    steps = build_intersections(steps)
    steps = suppress_short_names(steps)
    g0, g1 = steps[0].geometry_begin, steps[-1].geometry_end
    first, second = locs[g0], locs[min(g0 + 1, len(locs) - 1)]
    last, last2 = locs[g1 - 1], locs[max(g1 - 2, 0)]
    return assign_relative_locations(steps, first, second, last2, last, source_input, target_input)

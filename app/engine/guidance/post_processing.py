"""OSRM's post-processing of a leg's steps (`src/engine/guidance/post_processing.cpp`, with `lane_processing.cpp`),
run by `post_process` in OSRM's order:

1. collapse segregated turns (a turn across a dual carriageway is one turn: `collapse_turns`),
2. trim zero-length first/last steps (a waypoint on a junction node departs on the road it leaves along and
   arrives on the road it came by),
3. roundabouts: enter ... exit as one maneuver with the exit number (rotary names, roundabout turns),
4. collapse turns (`collapse_turns`): name changes right before/after a turn, u-turns over short links, staggered
   crossings, name oscillations, sliproads, choiceless turns,
5. lane anticipation over short stretches with lanes,
6. intersections: suppressed turns become intersections of the previous step; end of road without passed
   intersections becomes turn/continue,
7. short name segments (< 105 m) are not announced,
8. depart/arrive get left/right/straight when the waypoint lies beside the road.
"""

from __future__ import annotations

from app.engine.guidance.collapse_turns import MAX_COLLAPSE_DISTANCE, collapse_segregated, collapse_turns
from app.engine.guidance.steps import (
    WAYPOINT_ARRIVE,
    WAYPOINT_DEPART,
    Maneuver,
    RouteStep,
    has_turn_type,
    has_waypoint,
    remove_no_turns,
    same_name,
)
from floor.intersections import geo
from floor.intersections.geo import Coord
from floor.intersections.intersection import (
    CONTINUE,
    END_OF_ROAD,
    ENTER_ROTARY,
    ENTER_ROTARY_AT_EXIT,
    ENTER_ROUNDABOUT,
    ENTER_ROUNDABOUT_INTERSECTION,
    ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT,
    ENTERS,
    LEAVES,
    MERGE,
    NEW_NAME,
    NO_TURN,
    ROUNDABOUT_TYPES,
    SILENT,
    STAYS,
    STRAIGHT,
    SUPPRESSED,
    TURN,
    UTURN,
    has_left,
    has_right,
    turn_direction,
)
from floor.intersections.names import requires_announcement

NAME_SEGMENT_CUTOFF_LENGTH = 105.0
MIN_END_OF_ROAD_INTERSECTIONS = 2
LANE_CHANGE_DISTANCE = 200.0  # OSRM's min_distance_needed_for_lane_change


def trim_short_segments(steps: list[RouteStep], locs: list[Coord], points: int = 0) -> list[RouteStep]:
    """trimShortSegments: a first or last step of at most a metre is no step (the waypoint is on a junction: the
    route departs on the road it leaves along and arrives on the road it came by); a first or last point repeated
    within a metre is left out of the step geometry. `points`: the leg's points as OSRM counts them (it repeats a
    waypoint at the start of a road the leg turns onto, where `locs` has it once; `len(locs)` when more)."""
    if len(steps) < 2 or max(len(locs), points) <= 2:
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
                 mcd: float = MAX_COLLAPSE_DISTANCE, points: int = 0) -> list[RouteStep]:  # fmt: skip
    """All of OSRM's passes in its order (see the module docstring); `points` as `trim_short_segments` takes it."""
    steps = collapse_segregated(steps)
    steps = trim_short_segments(steps, locs, points)
    steps = handle_roundabouts(steps)
    steps = collapse_turns(steps, mcd)  # OSRM keeps the collapsed (invalid) steps until lane anticipation
    steps = anticipate_lanes(steps)
    steps = build_intersections(steps)
    steps = suppress_short_names(steps)
    g0, g1 = steps[0].geometry_begin, steps[-1].geometry_end
    first, second = locs[g0], locs[min(g0 + 1, len(locs) - 1)]
    last, last2 = locs[g1 - 1], locs[max(g1 - 2, 0)]
    return assign_relative_locations(steps, first, second, last2, last, source_input, target_input)

"""Collapsing steps that are one maneuver into one step (OSRM's `src/engine/guidance/collapse_turns.cpp`): the turn
across a dual carriageway (`collapse_segregated`), then the scenarios of `collapse_scenarios` and sliproads
(`collapse_turns`), each combined with its strategy for the resulting instruction, signage and lanes.
"""

from __future__ import annotations

from collections.abc import Callable

from app.engine.guidance.collapse_scenarios import (
    bearings_reversed,
    close_choiceless_after_turn,
    double_choiceless,
    is_staggered,
    is_uturn,
    name_change_after_suppressed,
    name_oscillation,
    preceded_by_name_change,
    preceded_by_suppressed_direction,
    straight_followed_by_choiceless,
    succeeded_by_name_change,
    succeeded_by_suppressed_direction,
    suppressed_straight_between,
)
from app.engine.guidance.steps import (
    RouteStep,
    has_turn_type,
    has_waypoint,
    is_traffic_light,
    next_turn,
    prev_turn,
    remove_no_turns,
    same_name,
)
from floor.intersections import geo
from floor.intersections.intersection import (
    CONTINUE,
    END_OF_ROAD,
    ENTERS,
    FORK,
    MERGE,
    NARROW_TURN_ANGLE,
    NEW_NAME,
    ON_RAMP,
    ROUNDABOUT_TYPES,
    SLIGHT_LEFT,
    SLIGHT_RIGHT,
    SLIPROAD,
    STAYS,
    STRAIGHT,
    SUPPRESSED,
    TURN,
    UTURN,
    turn_direction,
)

MAX_COLLAPSE_DISTANCE = 30.0

Strategy = Callable[[RouteStep, RouteStep], None]  # changes the step `at` given the step `frm` merged into it


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


def combine(
    at: RouteStep,
    after: RouteStep,
    turn: Strategy | None = None,
    signage: Strategy | None = None,
    lanes: Strategy | None = None,
) -> None:
    """combineRouteSteps: strategies for the instruction, the signage and the lanes, then merge `after` into `at`."""
    if turn is not None:
        turn(at, after)
    if signage is not None:
        signage(at, after)
    if lanes is not None:
        lanes(at, after)
    at.elongate_by(after)
    after.invalidate()


def _fixed(kind: int, mod: int) -> Strategy:
    def f(at: RouteStep, _: RouteStep) -> None:
        at.maneuver.kind, at.maneuver.modifier = kind, mod

    return f


def _adjust_angle(mcd: float) -> Strategy:
    def f(at: RouteStep, frm: RouteStep) -> None:
        if at.maneuver.kind == FORK or not (_angles_ok(at) and _angles_ok(frm)):
            return
        at.maneuver.modifier = turn_direction(find_total_turn_angle(at, frm, mcd))

    return f


def _combined(prior: RouteStep, mcd: float) -> Strategy:
    return lambda at, frm: adjust_to_combined_turn(at, frm, prior, mcd)


def _staggered(prior: RouteStep) -> Strategy:
    def f(at: RouteStep, frm: RouteStep) -> None:
        at.maneuver.modifier = STRAIGHT
        at.maneuver.kind = SUPPRESSED if same_name(prior, frm) else NEW_NAME

    return f


def _segregated_turn(prior: RouteStep) -> Strategy:
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

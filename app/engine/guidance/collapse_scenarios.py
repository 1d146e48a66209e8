"""When consecutive steps are one maneuver (OSRM's `src/engine/guidance/collapse_scenario_detection.cpp`, with the
step geometry of `collapsing_utility.hpp`): staggered crossings, u-turns over short links, name oscillations, name
changes and suppressed directions right before or after a turn, choiceless turns. `collapse_turns` acts on them.
"""

from __future__ import annotations

from app.engine.guidance.steps import RouteStep, StepIntersection, allowed_turns, has_turn_type, has_waypoint, same_name
from floor.intersections import geo
from floor.intersections.intersection import (
    CONTINUE,
    END_OF_ROAD,
    ENTERS,
    NARROW_TURN_ANGLE,
    NEW_NAME,
    ON_RAMP,
    ROUNDABOUT_TYPES,
    STRAIGHT,
    SUPPRESSED,
    TURN,
    UTURN,
    has_left,
    has_right,
)


def same_side(a: RouteStep, b: RouteStep) -> bool:
    """Whether two maneuvers turn to the same side (straight counts as both)."""

    def is_left(s: RouteStep) -> bool:
        return s.maneuver.modifier == STRAIGHT or has_left(s.maneuver.modifier)

    def is_right(s: RouteStep) -> bool:
        return s.maneuver.modifier == STRAIGHT or has_right(s.maneuver.modifier)

    return (is_left(a) and is_left(b)) or (is_right(a) and is_right(b))


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

"""Maneuver classification at one intersection: OSRM's turn analysis and its handlers, on the intersection model.

`TurnAnalysis.assign(via, intersection)` gives every road of an intersection view an instruction `(kind,
modifier)`, as OSRM's `TurnAnalysis::AssignTurnTypes` does: suppressed modes (ferries, trains) first, then
roundabouts (roundabout, rotary = a large named one, roundabout turn = a small four-way one, entering at an exit,
exits), else basic turn types refined by the driveway handler (a main road passing service roads), the motorway
handler (ramps, merges, forks and exits on motorway-like roads) or the turn handler (obvious continuations, forks,
end of road T-junctions, conflicting turns of the same direction), and finally the sliproad handler (a short link
cutting the corner of a junction ahead); on-ramps taken from a motorway become off-ramps. The obvious road of an
intersection (`find_obvious_turn`) follows OSRM's rules on names, road classes and angle distinctness.
"""

from __future__ import annotations

import math

from . import geo
from .graph import (
    MOTORWAY,
    MOTORWAY_LINK,
    PRIMARY,
    SECONDARY,
    SIDE_RESIDENTIAL,
    TERTIARY,
    TERTIARY_LINK,
    TRUNK,
    TRUNK_LINK,
    EdgeData,
    GuidanceGraph,
    can_be_seen_as_fork,
    is_link_to,
    obvious_by_road_class,
    road_group,
    strictly_less,
)
from .intersection import (
    CONTINUE,
    END_OF_ROAD,
    ENTER_AND_EXIT_ROTARY,
    ENTER_AND_EXIT_ROUNDABOUT,
    ENTER_AND_EXIT_ROUNDABOUT_INTERSECTION,
    ENTER_ROTARY,
    ENTER_ROTARY_AT_EXIT,
    ENTER_ROUNDABOUT,
    ENTER_ROUNDABOUT_AT_EXIT,
    ENTER_ROUNDABOUT_INTERSECTION,
    ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT,
    EXIT_ROTARY,
    EXIT_ROUNDABOUT,
    EXIT_ROUNDABOUT_INTERSECTION,
    FORK,
    FUZZY_ANGLE_DIFFERENCE,
    GROUP_ANGLE,
    INVALID,
    LEFT,
    MAXIMAL_ALLOWED_NO_TURN_DEVIATION,
    MERGE,
    NARROW_TURN_ANGLE,
    NEW_NAME,
    NO_TURN,
    NOTIFICATION,
    OFF_RAMP,
    ON_RAMP,
    RIGHT,
    SHARP_LEFT,
    SHARP_RIGHT,
    SLIGHT_LEFT,
    SLIGHT_RIGHT,
    SLIPROAD,
    STAY_ON_ROUNDABOUT,
    STRAIGHT,
    STRAIGHT_ANGLE,
    SUPPRESSED,
    TURN,
    UTURN,
    Intersection,
    Road,
    closest_bearing,
    closest_turn,
    count_enterable,
    is_dead_end,
    leftmost,
    rightmost,
    turn_direction,
)
from .intersection_analysis import Extractor
from .walker import DistanceAccumulator, IntersectionFinder, skip_obstacle_selector

DISTINCTION_RATIO = 2.0
MAX_ROUNDABOUT_RADIUS = 15.0
MAX_ROUNDABOUT_INTERSECTION_RADIUS = 15.0
INCREASES_BY_FOURTY_PERCENT = 1.4
MAX_SLIPROAD_THRESHOLD = 250.0

ROUNDABOUT_NONE, ROUNDABOUT, ROTARY, ROUNDABOUT_INTERSECTION = 0, 1, 2, 3
_ENTER = {ROUNDABOUT: ENTER_ROUNDABOUT, ROTARY: ENTER_ROTARY, ROUNDABOUT_INTERSECTION: ENTER_ROUNDABOUT_INTERSECTION}
_EXIT = {ROUNDABOUT: EXIT_ROUNDABOUT, ROTARY: EXIT_ROTARY, ROUNDABOUT_INTERSECTION: EXIT_ROUNDABOUT_INTERSECTION}
_ENTER_EXIT = {
    ROUNDABOUT: ENTER_AND_EXIT_ROUNDABOUT,
    ROTARY: ENTER_AND_EXIT_ROTARY,
    ROUNDABOUT_INTERSECTION: ENTER_AND_EXIT_ROUNDABOUT_INTERSECTION,
}
_ENTER_AT_EXIT = {
    ROUNDABOUT: ENTER_ROUNDABOUT_AT_EXIT,
    ROTARY: ENTER_ROTARY_AT_EXIT,
    ROUNDABOUT_INTERSECTION: ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT,
}
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


def set_turn(r: Road, kind: int, mod: int) -> None:
    """Give a road its instruction."""
    r.kind = kind
    r.modifier = mod


class TurnAnalysis:
    """Turn instructions for every road of an intersection (OSRM's TurnAnalysis with its handlers)."""

    def __init__(self, ex: Extractor) -> None:
        self.ex = ex
        self.gg: GuidanceGraph = ex.gg
        self.names = ex.gg.names
        self._rb_type: dict[int, int] = {}

    def clear_caches(self) -> None:
        """Forget the roundabout types found so far."""
        self._rb_type.clear()

    def d(self, e: int) -> EdgeData:
        """The edge data of edge e."""
        return self.gg.data(e)

    # -- shared helpers (IntersectionHandler) -------------------------------------------------------------------
    def basic_type(self, via: int, road: Road) -> int:
        """findBasicTurnType: on ramp, continue (same non-empty name) or turn."""
        vd, rd = self.d(via), self.d(road.eid)
        if not vd.is_ramp and rd.is_ramp:
            return ON_RAMP
        names = self.names
        same = not names.announce(vd.name, rd.name)
        if not names.name_empty(vd.name) and not names.name_empty(rd.name) and same:
            return CONTINUE
        return TURN

    def same_classes(self, via: int, road: Road) -> bool:
        """Whether the road arrived by and `road` carry the same classes (toll, motorway, ...)."""
        return self.d(via).classes == self.d(road.eid).classes

    def requires_announcement(self, a: int, b: int) -> bool:
        """detail::requiresAnnouncement between two edges."""
        da, db = self.d(a), self.d(b)
        if da.reversed != db.reversed or da.flags != db.flags:
            return True
        return not da.combines_with(db)

    def obvious_instruction(self, num_roads: int, via: int, through: bool, road: Road) -> tuple[int, int]:
        """getInstructionForObvious."""
        kind = self.basic_type(via, road)
        if kind == ON_RAMP:
            return ON_RAMP, turn_direction(road.angle)
        if geo.deviation(road.angle, 0) < 0.01:
            return CONTINUE, UTURN
        vd, rd = self.d(via), self.d(road.eid)
        notify = vd.mode != rd.mode
        if kind == TURN:
            if self.names.announce(vd.name, rd.name):
                if through:
                    if rd.is_motorway:
                        return MERGE, (SLIGHT_RIGHT if road.angle > STRAIGHT_ANGLE else SLIGHT_LEFT)
                    if vd.is_ramp and rd.is_ramp:
                        return (SUPPRESSED if not notify else NOTIFICATION), turn_direction(road.angle)
                    dist = geo.distance(self.gg.coord(self.gg.target(via)), self.gg.coord(self.gg.target(road.eid)))
                    straight = geo.deviation(road.angle, STRAIGHT_ANGLE) < NARROW_TURN_ANGLE and dist > 60
                    return TURN, (STRAIGHT if straight else turn_direction(road.angle))
                return (NOTIFICATION if notify else NEW_NAME), turn_direction(road.angle)
            if notify:
                return NOTIFICATION, turn_direction(road.angle)
            kind2 = NO_TURN if num_roads == 2 and self.same_classes(via, road) else SUPPRESSED
            return kind2, turn_direction(road.angle)
        if notify:
            return NOTIFICATION, turn_direction(road.angle)
        if num_roads > 2 or not self.same_classes(via, road):
            return SUPPRESSED, turn_direction(road.angle)
        return NO_TURN, turn_direction(road.angle)

    def assign_fork2(self, via: int, left: Road, right: Road) -> None:
        """assignFork for two roads (OSRM's final block always decides; the straight cases only matter for it)."""
        vd, ld, rd = self.d(via), self.d(left.eid), self.d(right.eid)
        low_l, low_r = ld.ignorable, rd.ignorable
        sup_l = SUPPRESSED if vd.mode == ld.mode else NOTIFICATION
        sup_r = SUPPRESSED if vd.mode == rd.mode else NOTIFICATION
        if low_r and not low_l:
            set_turn(left, sup_l, SLIGHT_LEFT)
        elif low_l and not low_r:
            set_turn(left, TURN, SLIGHT_LEFT)
        else:
            set_turn(left, FORK, SLIGHT_LEFT)
        if low_l and not low_r:
            set_turn(right, sup_r, SLIGHT_RIGHT)
        elif low_r and not low_l:
            set_turn(right, TURN, SLIGHT_RIGHT)
        else:
            set_turn(right, FORK, SLIGHT_RIGHT)

    def assign_fork3(self, via: int, left: Road, center: Road, right: Road) -> None:
        """Three-way fork: slight left / straight / slight right (OSRM's assignFork for three roads)."""
        vd = self.d(via)

        def sup(r: Road) -> int:
            return SUPPRESSED if vd.mode == self.d(r.eid).mode else NOTIFICATION

        if left.entry_allowed and center.entry_allowed and right.entry_allowed:
            set_turn(left, FORK, SLIGHT_LEFT)
            if geo.deviation(center.angle, 180) < MAXIMAL_ALLOWED_NO_TURN_DEVIATION:
                if self.requires_announcement(via, center.eid):
                    set_turn(center, FORK, STRAIGHT)
                else:
                    set_turn(center, sup(center), STRAIGHT)
            else:
                set_turn(center, FORK, STRAIGHT)
            set_turn(right, FORK, SLIGHT_RIGHT)
        elif left.entry_allowed:
            if right.entry_allowed:
                self.assign_fork2(via, left, right)
            elif center.entry_allowed:
                self.assign_fork2(via, left, center)
            else:
                set_turn(left, self.basic_type(via, left), turn_direction(left.angle))
        elif right.entry_allowed:
            if center.entry_allowed:
                self.assign_fork2(via, center, right)
            else:
                set_turn(right, self.basic_type(via, right), turn_direction(right.angle))
        elif center.entry_allowed:
            set_turn(center, self.basic_type(via, center), turn_direction(center.angle))

    def trivial(self, via: int, inter: Intersection, begin: int, end: int) -> None:
        """assignTrivialTurns: plain turns for the enterable roads in [begin, end)."""
        for i in range(begin, end):
            r = inter[i]
            if r.entry_allowed:
                set_turn(r, self.basic_type(via, r), turn_direction(r.angle))

    def next_intersection(self, at: int, via: int) -> tuple[Intersection, int] | None:
        """getNextIntersection: the next intersection of more than two roads along `via`."""
        node, edge = self.ex.skip_degree_two(at, via)
        inter = self.ex.connected_roads(edge, False)
        if len(inter) <= 2:
            return None
        return inter, self.gg.target(edge)

    def is_same_name(self, a: int, b: int) -> bool:
        """Both roads are named and the name needs no announcement between them."""
        na, nb = self.d(a).name, self.d(b).name
        return not self.names.name_empty(na) and not self.names.name_empty(nb) and not self.names.announce(na, nb)

    def through_street(self, index: int, inter: Intersection) -> bool:
        """isThroughStreet: another road continues on the opposite side with the same name and class."""
        di = self.d(inter[index].eid)
        if di.name == 0:
            return False
        for j in range(1, len(inter)):
            if j == index:
                continue
            r = inter[j]
            dr = self.d(r.eid)
            if (
                geo.deviation(r.angle, inter[index].angle) > STRAIGHT_ANGLE - FUZZY_ANGLE_DIFFERENCE
                and self.names.identical(di.name, dr.name)
                and di.classification == dr.classification
            ):
                return True
        return False

    # -- obviousness --------------------------------------------------------------------------------------------
    def _lower_class(self, fr: EdgeData, to: EdgeData, cmp: EdgeData) -> bool:
        """roadHasLowerClass."""
        reduced = cmp.num_lanes > 0 and cmp.num_lanes + 1 < fr.num_lanes
        if strictly_less(cmp, fr) and strictly_less(cmp, to) and reduced:
            return True
        return is_link_to(cmp, fr) and is_link_to(cmp, to)

    def distinct_narrow(self, via: int, ci: int, inter: Intersection) -> bool:
        """For a near-straight candidate (IsDistinctNarrowTurn): it clearly stands out from its neighbours."""
        names = self.names
        cand = inter[ci]
        vd, cd = self.d(via), self.d(cand.eid)
        cdev = geo.deviation(cand.angle, STRAIGHT_ANGLE)
        no_change_cand = not names.announce(vd.name, cd.name)

        def lanes_equal(x: EdgeData) -> bool:
            return x.num_lanes > 0 and x.num_lanes == vd.num_lanes

        for road in inter[1:]:
            if road.eid == cand.eid:
                continue
            if cdev < NARROW_TURN_ANGLE and not road.entry_allowed:
                continue
            dev = geo.deviation(road.angle, STRAIGHT_ANGLE)
            xd = self.d(road.eid)
            lane_fork = (
                xd.num_lanes > 0
                and cd.num_lanes == xd.num_lanes
                and vd.num_lanes == cd.num_lanes + xd.num_lanes
                and geo.deviation(cand.angle, road.angle) < GROUP_ANGLE
            )
            distinct = dev > DISTINCTION_RATIO * cdev and abs(dev - cdev) > FUZZY_ANGLE_DIFFERENCE / 2.0
            slightly = dev > 0.7 * DISTINCTION_RATIO * cdev
            if not vd.restricted and not cd.restricted and xd.restricted and distinct:
                continue
            if vd.roundabout == cd.roundabout and vd.roundabout != xd.roundabout and cdev < dev:
                continue
            change_cmp = names.announce(vd.name, xd.name)
            if (no_change_cand or change_cmp) and not lane_fork and distinct:
                continue
            oi = closest_bearing(inter, geo.reverse(road.perceived_bearing))
            od = self.d(inter[oi].eid)
            four = len(inter) >= 4
            no_change_opp = not names.announce(od.name, xd.name)
            opp_angle = geo.deviation(road.angle, inter[oi].angle)
            opp_distinct = no_change_opp or opp_angle > STRAIGHT_ANGLE - NARROW_TURN_ANGLE
            if four and opp_distinct and distinct:
                continue
            if (four and no_change_cand and change_cmp and slightly and no_change_opp
                    and opp_angle > STRAIGHT_ANGLE - FUZZY_ANGLE_DIFFERENCE):  # fmt: skip
                continue
            if (not four and no_change_cand and change_cmp and distinct and not lane_fork
                    and opp_angle > STRAIGHT_ANGLE - GROUP_ANGLE):  # fmt: skip
                continue
            if vd.priority > SECONDARY and distinct:
                continue
            if lanes_equal(cd) and cdev < FUZZY_ANGLE_DIFFERENCE and distinct:
                continue
            same_prio = vd.priority == cd.priority
            if same_prio and cd.priority < xd.priority and no_change_cand and slightly:
                continue
            if same_prio and cd.priority > xd.priority + 4 and no_change_cand and slightly:
                continue
            if self._lower_class(vd, cd, xd):
                continue
            lower_group = road_group(vd.priority) < road_group(xd.priority)
            cand_cmp_diff = names.announce(cd.name, xd.name)
            if same_prio and lower_group and cand_cmp_diff and change_cmp:
                continue
            if same_prio and xd.link:
                continue
            return False
        return True

    def distinct_wide(self, via: int, ci: int, inter: Intersection) -> bool:
        """The candidate stands out though it bends: the other roads deviate much more or are of lower class."""
        cand = inter[ci]
        vd, cd = self.d(via), self.d(cand.eid)
        cdev = geo.deviation(cand.angle, STRAIGHT_ANGLE)
        for road in inter[1:]:
            if road.eid == cand.eid:
                continue
            xd = self.d(road.eid)
            dev = geo.deviation(road.angle, STRAIGHT_ANGLE)
            straight = turn_direction(road.angle) == STRAIGHT
            if not straight and self._lower_class(vd, cd, xd):
                continue
            if dev > DISTINCTION_RATIO * cdev:
                continue
            u = inter[0]
            if geo.deviation(u.initial_bearing, u.perceived_bearing) > FUZZY_ANGLE_DIFFERENCE:
                via_b = geo.reverse(u.initial_bearing)
                cdi = geo.deviation(geo.angle_between(via_b, cand.initial_bearing), STRAIGHT_ANGLE)
                rdi = geo.deviation(geo.angle_between(via_b, road.initial_bearing), STRAIGHT_ANGLE)
                r2c = geo.angle_between(geo.reverse(road.initial_bearing), cand.initial_bearing)
                if turn_direction(r2c) != STRAIGHT and rdi > DISTINCTION_RATIO * cdi:
                    continue
            return False
        return True

    def distinct(self, via: int, ci: int, inter: Intersection) -> bool:
        """Whether road ci is obvious enough to be taken silently (narrow or wide rule by its angle)."""
        if geo.deviation(inter[ci].angle, STRAIGHT_ANGLE) < GROUP_ANGLE:
            return self.distinct_narrow(via, ci, inter)
        return self.distinct_wide(via, ci, inter)

    def find_obvious_turn(self, via: int, inter: Intersection) -> int | None:
        """findObviousTurn: the index of the obvious road to take, if any."""
        if len(inter) == 1:
            return None
        if len(inter) == 2:
            return 1
        names = self.names
        vd = self.d(via)

        def continues(r: Road) -> bool:  # the filter: True = left out
            if not r.entry_allowed:
                return True
            if vd.name == 0 and not vd.ignorable:
                return True
            rd = self.d(r.eid)
            if rd.name == 0 and not rd.ignorable:
                return True
            if (vd.name == 0) != (rd.name == 0):
                return True
            if strictly_less(rd, vd):
                return True
            if is_link_to(rd, vd):
                return True
            return names.announce(vd.name, rd.name)

        def valid(i: int) -> int | None:
            if self.d(via).roundabout != self.d(inter[i].eid).roundabout:
                return None
            return None if i == 0 else i

        ri = closest_turn(inter, STRAIGHT_ANGLE, continues)
        if ri is not None and self.distinct(via, ri, inter):
            return valid(ri)

        def higher_or_same(r: Road) -> bool:
            if not r.entry_allowed:
                return True
            rd = self.d(r.eid)
            return strictly_less(rd, vd) or is_link_to(rd, vd)

        si = closest_turn(inter, STRAIGHT_ANGLE, higher_or_same)
        if si is not None and self.distinct(via, si, inter):
            return valid(si)
        vi = closest_turn(inter, STRAIGHT_ANGLE, lambda r: not r.entry_allowed)
        if vi is None:
            return None
        non_sharp = sum(1 for r in inter if geo.deviation(r.angle, STRAIGHT_ANGLE) <= 90)
        only_non_sharp = geo.deviation(inter[vi].angle, STRAIGHT_ANGLE) <= 90 and non_sharp == 1
        if (
            vi != si
            and (geo.deviation(STRAIGHT_ANGLE, inter[vi].angle) <= GROUP_ANGLE or only_non_sharp)
            and not self.d(inter[vi].eid).ignorable
            and self.distinct(via, vi, inter)
        ):
            return valid(vi)
        if (
            self.d(inter[vi].eid).is_motorway
            and geo.deviation(inter[vi].angle, STRAIGHT_ANGLE) <= GROUP_ANGLE
            and count_enterable(inter) == 1
        ):
            return valid(vi)
        vn = vd.name
        all_same = all(self.d(r.eid).name != 0 and self.d(r.eid).name == vn for r in inter)
        if (
            len(inter) == 3
            and all_same
            and count_enterable(inter) == 1
            and (geo.deviation(inter[1].angle, 90) > NARROW_TURN_ANGLE or geo.deviation(inter[2].angle, 270)
                 > NARROW_TURN_ANGLE)
        ):  # fmt: skip
            return valid(vi)
        return None

    # -- the analysis -------------------------------------------------------------------------------------------
    def assign(self, via: int, view: Intersection) -> Intersection:
        """AssignTurnTypes for the roads at the target of `via` (a fresh copy of `view` gets the instructions)."""
        inter = [r.copy() for r in view]
        for r in inter:
            r.kind, r.modifier, r.lanes = INVALID, UTURN, None
        from_node = self.gg.half_source(via)
        if self.suppress_mode_applies(via, inter):
            for r in inter:
                r.kind = NO_TURN
            return inter
        if self.roundabout_applies(from_node, via, inter):
            self.handle_roundabout(from_node, via, inter)
        else:
            for r in inter:
                if not r.entry_allowed:
                    continue
                if self.ex.goes_back(via, r.eid):
                    set_turn(r, CONTINUE, UTURN)
                else:
                    set_turn(r, TURN, turn_direction(r.angle))
            if self.driveway_applies(via, inter):
                self.handle_driveway(via, inter)
            elif self.motorway_applies(via, inter):
                self.handle_motorway(via, inter)
            else:
                self.handle_turn(via, inter)
        if len(inter) > 2:
            self.handle_sliproad(via, inter)
        if self.d(via).is_motorway:
            for r in inter:
                if r.kind == ON_RAMP:
                    r.kind = OFF_RAMP
        return inter

    # -- suppressed modes, driveways ----------------------------------------------------------------------------
    def suppress_mode_applies(self, via: int, inter: Intersection) -> bool:
        """SuppressModeHandler: on a ferry or train where every road keeps the mode, nothing is announced."""
        m = self.d(via).mode
        return m in ("ferry", "train") and all(self.d(r.eid).mode == m for r in inter)

    def driveway_applies(self, via: int, inter: Intersection) -> bool:
        """DrivewayHandler: one main road goes on, the others are driveways/parking aisles."""
        if len(inter) <= 2 or self.d(inter[0].eid).ignorable:
            return False
        low = sum(1 for r in inter if self.d(r.eid).ignorable)
        return low + 2 == len(inter)

    def handle_driveway(self, via: int, inter: Intersection) -> None:
        """Keep going silently along the main road past driveways (no turn or new name)."""
        idx = next((i for i in range(1, len(inter)) if not self.d(inter[i].eid).ignorable), None)
        if idx is None:
            return
        road = inter[idx]
        if road.kind == INVALID and road.modifier == UTURN:
            return
        road.kind = NO_TURN if self.is_same_name(via, road.eid) else NEW_NAME
        if road.modifier == STRAIGHT:
            for r in inter[1:idx]:
                if r.modifier == STRAIGHT:
                    r.modifier = SLIGHT_RIGHT
            for r in inter[idx + 1 :]:
                if r.modifier == STRAIGHT:
                    r.modifier = SLIGHT_LEFT

    # -- the turn handler ---------------------------------------------------------------------------------------
    def handle_turn(self, via: int, inter: Intersection) -> None:
        """TurnHandler: plain junctions by number of roads (two, three, more)."""
        if len(inter) == 1:
            return
        if inter[0].entry_allowed:
            set_turn(inter[0], self.basic_type(via, inter[0]), UTURN)
        if len(inter) == 2:
            inter[1].kind, inter[1].modifier = self.obvious_instruction(len(inter), via, False, inter[1])
            return
        if len(inter) == 3:
            self.three_way(via, inter)
            return
        self.complex_turn(via, inter)

    def _obvious_of_two(self, via: int, road: Road, other: Road) -> bool:
        vd, rd, od = self.d(via), self.d(road.eid), self.d(other.eid)
        if obvious_by_road_class(vd, rd, od):
            return True
        if obvious_by_road_class(vd, od, rd):
            return False
        perfectly = geo.deviation(road.angle, STRAIGHT_ANGLE) < 2.220446049250313e-16
        if not self.names.name_empty(vd.name):
            same = not self.names.announce(vd.name, rd.name)
            if perfectly and same:
                return True
        rdev = geo.deviation(road.angle, STRAIGHT_ANGLE)
        odev = geo.deviation(other.angle, STRAIGHT_ANGLE)
        if rdev > 0:
            ratio = odev / rdev
        else:
            ratio = math.inf if odev > 0 else math.nan
        return ratio > INCREASES_BY_FOURTY_PERCENT and geo.deviation(odev, rdev) > FUZZY_ANGLE_DIFFERENCE

    def _fork_candidates(self, inter: Intersection) -> tuple[int, int] | None:
        """findForkCandidatesByGeometry: (right index, left index) of 2 or 3 near-straight roads."""
        if len(inter) < 3:
            return None
        si = closest_turn(inter, STRAIGHT_ANGLE)
        if si is None or geo.deviation(inter[si].angle, STRAIGHT_ANGLE) > NARROW_TURN_ANGLE:
            return None

        def outermost(road1: Road, road2: Road) -> bool:
            a_next = geo.deviation(road2.angle, STRAIGHT_ANGLE)
            a_pn = geo.deviation(road1.angle, road2.angle)
            a_prev = geo.deviation(road1.angle, STRAIGHT_ANGLE)
            return a_next > NARROW_TURN_ANGLE and (a_pn > NARROW_TURN_ANGLE or a_prev > GROUP_ANGLE)

        # rightmost: walk from the straightmost towards index 0 (reverse order)
        seq = list(range(si, -1, -1))
        right = None
        for a, b in zip(seq, seq[1:], strict=False):
            if outermost(inter[a], inter[b]):
                right = a
                break
        if right is None:
            right = seq[-1]
        seq = list(range(si, len(inter)))
        left = None
        for a, b in zip(seq, seq[1:], strict=False):
            if outermost(inter[a], inter[b]):
                left = a
                break
        if left is None:
            left = seq[-1]
        if right < left and left - right < 3:
            return right, left
        return None

    def _compatible_classes(self, inter: Intersection, right: int, left: int) -> bool:
        vd = self.d(inter[0].eid)
        rlink = self.d(inter[right].eid).link
        if not all(rlink == self.d(inter[i].eid).link for i in range(right + 1, left + 1)):
            return False
        for i in range(right, left + 1):
            bc = self.d(inter[i].eid)
            for j in range(right, left + 1):
                if inter[j].eid != inter[i].eid and obvious_by_road_class(vd, bc, self.d(inter[j].eid)):
                    return False
        return True

    def find_fork(self, via: int, inter: Intersection) -> tuple[int, int] | None:
        """The range of roads forming a fork (two or three roads close to straight, similar class), if any."""
        f = self._fork_candidates(inter)
        if f is None:
            return None
        right, left = f
        nxt = inter[0] if left + 1 == len(inter) else inter[left + 1]
        sep_left = geo.deviation(inter[left].angle, nxt.angle) >= GROUP_ANGLE
        sep_right = geo.deviation(inter[right].angle, inter[right - 1].angle) >= GROUP_ANGLE
        has_obvious = any(
            self._obvious_of_two(via, inter[i], inter[i + 1]) or self._obvious_of_two(via, inter[i + 1], inter[i])
            for i in range(right, left)
        )
        compatible = self._compatible_classes(inter, right, left)
        valid = all(inter[i].entry_allowed for i in range(right, left + 1))
        vm = self.d(via).mode
        modes = all(self.d(inter[i].eid).mode == vm for i in range(right, left + 1))
        if sep_left and sep_right and not has_obvious and compatible and valid and modes:
            return right, left
        return None

    def three_way(self, via: int, inter: Intersection) -> None:
        """handleThreeWayTurn: fork, end of road, obvious continuation or plain turns at a T or Y."""
        obvious = self.find_obvious_turn(via, inter)
        all_links = all(self.d(r.eid).link for r in inter)
        fork = self.find_fork(via, inter)
        if fork is not None and (all_links or obvious is None):
            self.assign_fork2(via, inter[fork[1]], inter[fork[0]])
        elif (
            geo.deviation(inter[1].angle, 90) < NARROW_TURN_ANGLE
            and geo.deviation(inter[2].angle, 270) < NARROW_TURN_ANGLE
            and geo.deviation(inter[1].angle, inter[2].angle) > 2 * NARROW_TURN_ANGLE
            and obvious is None
        ):
            if inter[1].entry_allowed:
                kind = ON_RAMP if self.basic_type(via, inter[1]) == ON_RAMP else END_OF_ROAD
                set_turn(inter[1], kind, RIGHT)
            if inter[2].entry_allowed:
                kind = ON_RAMP if self.basic_type(via, inter[2]) == ON_RAMP else END_OF_ROAD
                set_turn(inter[2], kind, LEFT)
        elif obvious is not None:
            d1, d2 = turn_direction(inter[1].angle), turn_direction(inter[2].angle)
            if obvious == 1:
                inter[1].kind, inter[1].modifier = self.obvious_instruction(3, via, self.through_street(1, inter),
                                                                             inter[1])  # fmt: skip
                second = SLIGHT_LEFT if d1 == d2 == STRAIGHT else d2
                set_turn(inter[2], self.basic_type(via, inter[2]), second)
            else:
                inter[2].kind, inter[2].modifier = self.obvious_instruction(3, via, self.through_street(2, inter),
                                                                             inter[2])  # fmt: skip
                first = SLIGHT_RIGHT if d1 == d2 == STRAIGHT else d1
                set_turn(inter[1], self.basic_type(via, inter[1]), first)
        else:
            set_turn(inter[1], self.basic_type(via, inter[1]), turn_direction(inter[1].angle))
            set_turn(inter[2], self.basic_type(via, inter[2]), turn_direction(inter[2].angle))

    def complex_turn(self, via: int, inter: Intersection) -> None:
        """handleComplexTurn: four or more roads, obvious road or fork first, then left and right sides."""
        obvious = self.find_obvious_turn(via, inter)
        fork = self.find_fork(via, inter)
        si = closest_turn(inter, STRAIGHT_ANGLE)
        assert si is not None
        sdev = geo.deviation(inter[si].angle, STRAIGHT_ANGLE)
        if obvious is not None:
            r = inter[obvious]
            r.kind, r.modifier = self.obvious_instruction(len(inter), via, self.through_street(obvious, inter), r)
            self.assign_left(via, inter, obvious)
            self.assign_right(via, inter, obvious)
        elif fork is not None:
            right, left = fork
            size = left - right + 1
            if size == 2:
                lc, rc = self.d(inter[left].eid), self.d(inter[right].eid)
                if can_be_seen_as_fork(lc, rc):
                    self.assign_fork2(via, inter[left], inter[right])
                elif lc.priority > rc.priority:
                    inter[right].kind, inter[right].modifier = self.obvious_instruction(len(inter), via, False,
                                                                                         inter[right])  # fmt: skip
                    set_turn(inter[left], self.basic_type(via, inter[left]), SLIGHT_LEFT)
                else:
                    inter[left].kind, inter[left].modifier = self.obvious_instruction(len(inter), via, False,
                                                                                       inter[left])  # fmt: skip
                    set_turn(inter[right], self.basic_type(via, inter[right]), SLIGHT_RIGHT)
            else:
                self.assign_fork3(via, inter[left], inter[right + 1], inter[right])
            self.assign_left(via, inter, left)
            self.assign_right(via, inter, right)
        elif sdev < FUZZY_ANGLE_DIFFERENCE and not inter[si].entry_allowed:
            self.assign_left(via, inter, si)
            self.assign_right(via, inter, si)
        elif inter[si].angle > 180:
            self.assign_left(via, inter, si - 1)
            self.assign_right(via, inter, si)
        elif inter[si].angle < 180:
            self.assign_left(via, inter, si)
            self.assign_right(via, inter, si + 1)
        else:
            self.trivial(via, inter, 1, len(inter))

    def assign_left(self, via: int, inter: Intersection, starting_at: int) -> None:
        """assignLeftTurns: mirror, assign right turns, mirror back."""

        def switch() -> None:
            for r in inter:
                r.mirror()
            inter[1:] = inter[1:][::-1]

        switch()
        self.assign_right(via, inter, len(inter) - starting_at)
        switch()

    def assign_right(self, via: int, inter: Intersection, up_to: int) -> None:
        """assignRightTurns: the roads right of straight (indices 1 .. up_to-1)."""
        if up_to <= 1 or not any(inter[i].entry_allowed for i in range(1, up_to)):
            return
        if up_to == 2:
            self.trivial(via, inter, 1, up_to)
        elif up_to == 3:
            if turn_direction(inter[1].angle) == turn_direction(inter[2].angle):
                self.distinct_conflict(via, inter[2], inter[1])
            else:
                self.trivial(via, inter, 1, up_to)
        elif up_to == 4:
            d1, d2, d3 = (turn_direction(inter[i].angle) for i in (1, 2, 3))
            allowed = inter[1].entry_allowed + inter[2].entry_allowed + inter[3].entry_allowed
            if d1 != d2 and d2 != d3:
                self.trivial(via, inter, 1, up_to)
            elif allowed <= 2:
                if not inter[3].entry_allowed:
                    self.distinct_conflict(via, inter[2], inter[1])
                elif not inter[1].entry_allowed:
                    self.distinct_conflict(via, inter[3], inter[2])
                else:
                    self.distinct_conflict(via, inter[3], inter[1])
            elif (
                geo.deviation(inter[1].angle, inter[2].angle) >= NARROW_TURN_ANGLE
                and geo.deviation(inter[2].angle, inter[3].angle) >= NARROW_TURN_ANGLE
            ):
                set_turn(inter[1], self.basic_type(via, inter[1]), SHARP_RIGHT)
                set_turn(inter[2], self.basic_type(via, inter[2]), RIGHT)
                set_turn(inter[3], self.basic_type(via, inter[3]), SLIGHT_RIGHT)
            elif (
                (d1 == d2 and d2 == d3)
                or (d1 == d2 and geo.deviation(inter[2].angle, inter[3].angle) < GROUP_ANGLE)
                or (d2 == d3 and geo.deviation(inter[1].angle, inter[2].angle) < GROUP_ANGLE)
            ):
                self.trivial(via, inter, 1, up_to)
            elif (d1 == d2 and geo.deviation(inter[2].angle, inter[3].angle) >= GROUP_ANGLE) or (
                d2 == d3 and geo.deviation(inter[1].angle, inter[2].angle) >= GROUP_ANGLE
            ):
                if geo.deviation(inter[2].angle, inter[3].angle) >= GROUP_ANGLE:
                    self.distinct_conflict(via, inter[2], inter[1])
                    set_turn(inter[3], self.basic_type(via, inter[3]), d3)
                else:
                    set_turn(inter[1], self.basic_type(via, inter[1]), d1)
                    self.distinct_conflict(via, inter[3], inter[2])
            else:
                self.trivial(via, inter, 1, up_to)
        else:
            self.trivial(via, inter, 1, up_to)

    def distinct_conflict(self, via: int, left: Road, right: Road) -> None:
        """handleDistinctConflict: two roads with the same modifier get distinct ones (sharp/plain/slight)."""
        if not left.entry_allowed or not right.entry_allowed or left.angle == right.angle:
            if left.entry_allowed:
                set_turn(left, self.basic_type(via, left), turn_direction(left.angle))
            if right.entry_allowed:
                set_turn(right, self.basic_type(via, right), turn_direction(right.angle))
            return
        dl, dr = turn_direction(left.angle), turn_direction(right.angle)
        if dl == STRAIGHT or dl == SLIGHT_LEFT or dr == SLIGHT_RIGHT:
            lc, rc = self.d(left.eid), self.d(right.eid)
            if lc.priority > rc.priority:
                right.kind, right.modifier = self.obvious_instruction(4, via, False, right)
                set_turn(left, self.basic_type(via, left), SLIGHT_LEFT)
            else:
                left.kind, left.modifier = self.obvious_instruction(4, via, False, left)
                set_turn(right, self.basic_type(via, right), SLIGHT_RIGHT)
            return
        lt, rt = self.basic_type(via, left), self.basic_type(via, right)
        if geo.deviation(left.angle, 90) < MAXIMAL_ALLOWED_NO_TURN_DEVIATION:
            set_turn(left, lt, RIGHT)
            set_turn(right, rt, SHARP_RIGHT)
        elif geo.deviation(right.angle, 90) < MAXIMAL_ALLOWED_NO_TURN_DEVIATION:
            set_turn(left, lt, SLIGHT_RIGHT)
            set_turn(right, rt, RIGHT)
        elif geo.deviation(left.angle, 270) < MAXIMAL_ALLOWED_NO_TURN_DEVIATION:
            set_turn(left, lt, LEFT)
            set_turn(right, rt, SLIGHT_LEFT)
        elif geo.deviation(right.angle, 270) < MAXIMAL_ALLOWED_NO_TURN_DEVIATION:
            set_turn(left, lt, SHARP_LEFT)
            set_turn(right, rt, LEFT)
        elif dl == SHARP_LEFT:
            set_turn(left, lt, SHARP_LEFT)
            set_turn(right, rt, LEFT)
        elif dr == SHARP_RIGHT:
            set_turn(left, lt, RIGHT)
            set_turn(right, rt, SHARP_RIGHT)
        elif dl <= 180:  # OSRM compares the modifier (always true): the right-turn branch
            if geo.deviation(left.angle, 85) >= geo.deviation(right.angle, 85):
                set_turn(left, lt, SLIGHT_RIGHT)
                set_turn(right, rt, RIGHT)
            else:
                set_turn(left, lt, RIGHT)
                set_turn(right, rt, SHARP_RIGHT)

    # -- the motorway handler -----------------------------------------------------------------------------------
    def _ramp(self, e: int, from_motorway: bool = True) -> bool:
        d = self.d(e)
        return d.is_ramp or (from_motorway and d.link)

    def motorway_applies(self, via: int, inter: Intersection) -> bool:
        """MotorwayHandler: a motorway arrived by or enterable, only ramps besides, nothing enterable turning hard."""
        from_mw = self.d(via).is_motorway
        has_mw = has_normal = False
        for r in inter:
            if r.entry_allowed and geo.deviation(r.angle, STRAIGHT_ANGLE) > 60:
                return False
            if self.d(r.eid).is_motorway:
                if r.entry_allowed:
                    has_mw = True
            elif not self._ramp(r.eid, from_mw):
                has_normal = True
        if has_normal:
            return False
        return has_mw or from_mw

    def handle_motorway(self, via: int, inter: Intersection) -> None:
        """MotorwayHandler: from a motorway (exits, forks, continuing) or from a ramp (merges, forks)."""
        if self.d(via).is_motorway:
            self.from_motorway(via, inter)
            for r in inter:
                if r.kind == ON_RAMP:
                    r.kind = OFF_RAMP
        else:
            self.from_ramp(via, inter)

    def motorway_fallback(self, inter: Intersection) -> None:
        """MotorwayHandler::fallback: merge onto motorways, straight or slight turns elsewhere."""
        for r in inter:
            if not r.entry_allowed:
                continue
            if self.d(r.eid).is_motorway:
                set_turn(r, MERGE, SLIGHT_LEFT if r.angle < STRAIGHT_ANGLE else SLIGHT_RIGHT)
            elif geo.deviation(r.angle, STRAIGHT_ANGLE) < FUZZY_ANGLE_DIFFERENCE:
                set_turn(r, TURN, STRAIGHT)
            else:
                set_turn(r, TURN, SLIGHT_LEFT if r.angle > STRAIGHT_ANGLE else SLIGHT_RIGHT)

    def from_motorway(self, via: int, inter: Intersection) -> None:
        """fromMotorway: staying on, leaving by an off ramp, motorway forks."""
        vd = self.d(via)
        names = self.names

        def continue_angle() -> float:
            for r in inter:
                if not r.entry_allowed:
                    continue
                od = self.d(r.eid)
                same = not names.announce(vd.name, od.name)
                if r.angle != 0 and vd.name != 0 and od.name != 0 and same and od.is_motorway:
                    return r.angle
            return inter[0].angle

        def most_likely() -> float:
            angle, best = inter[0].angle, 180.0
            for r in inter:
                if self.d(r.eid).is_motorway and geo.deviation(r.angle, STRAIGHT_ANGLE) < best:
                    best = geo.deviation(r.angle, STRAIGHT_ANGLE)
                    angle = r.angle
            return angle

        ca = continue_angle()
        if ca == inter[0].angle:
            ca = most_likely()
        if ca == inter[0].angle:
            if len(inter) == 2:
                set_turn(inter[1], NO_TURN, turn_direction(inter[1].angle))
            elif len(inter) == 3:
                if inter[1].entry_allowed and inter[2].entry_allowed:
                    self.assign_fork2(via, inter[2], inter[1])
                elif inter[1].entry_allowed:
                    set_turn(inter[1], NO_TURN, turn_direction(inter[1].angle))
                else:
                    set_turn(inter[2], NO_TURN, turn_direction(inter[2].angle))
            elif (
                len(inter) == 4
                and self.d(inter[1].eid).classification == self.d(inter[2].eid).classification
                and self.d(inter[2].eid).classification == self.d(inter[3].eid).classification
            ):
                self.assign_fork3(via, inter[3], inter[2], inter[1])
            elif count_enterable(inter) > 0:
                self.motorway_fallback(inter)
            return
        valid = sum(1 for r in inter if r.entry_allowed)
        exiting = sum(1 for r in inter if r.entry_allowed and self.d(r.eid).is_motorway)
        if exiting == 0:
            for r in inter:
                if r.entry_allowed:
                    set_turn(r, SUPPRESSED, turn_direction(r.angle))
        elif exiting == 1 or exiting != valid:
            if len(inter) == 2:
                inter[1].kind, inter[1].modifier = self.obvious_instruction(2, via, self.through_street(1, inter),
                                                                             inter[1])  # fmt: skip
            else:
                for r in inter:
                    if not r.entry_allowed:
                        continue
                    if r.angle == ca:
                        r.kind, r.modifier = self.obvious_instruction(len(inter), via, self.through_street(1, inter),
                                                                      r)  # fmt: skip
                    elif r.angle < ca:
                        set_turn(r, OFF_RAMP if self._ramp(r.eid) else TURN, RIGHT if r.angle < 145 else SLIGHT_RIGHT)
                    elif r.angle > ca:
                        set_turn(r, OFF_RAMP if self._ramp(r.eid) else TURN, LEFT if r.angle > 215 else SLIGHT_LEFT)
        elif exiting == 2:
            idx = [i for i, r in enumerate(inter) if r.entry_allowed and self.d(r.eid).is_motorway]
            self.assign_fork2(via, inter[idx[1]], inter[idx[0]])
        elif exiting == 3:
            idx = [i for i, r in enumerate(inter) if r.entry_allowed and self.d(r.eid).is_motorway]
            self.assign_fork3(via, inter[idx[2]], inter[idx[1]], inter[idx[0]])
        else:
            self.motorway_fallback(inter)

    def from_ramp(self, via: int, inter: Intersection) -> None:
        """fromRamp: merging onto the motorway, ramp forks, ramps joining."""
        names = self.names
        num_valid = count_enterable(inter)
        if len(inter) == 2 and num_valid == 1:
            inter[1].kind, inter[1].modifier = self.obvious_instruction(2, via, self.through_street(1, inter), inter[1])
        elif len(inter) == 3:
            n2, n1 = self.d(inter[2].eid).name, self.d(inter[1].eid).name
            same12 = not names.announce(n2, n1)
            if num_valid == 1:
                e1, e2 = names.name_empty(n1), names.name_empty(n2)
                if inter[1].entry_allowed:
                    if self.d(inter[1].eid).is_motorway and not e2 and not e1 and same12:
                        if geo.deviation(inter[1].angle, STRAIGHT_ANGLE) < 2 * NARROW_TURN_ANGLE:
                            set_turn(inter[1], MERGE, SLIGHT_LEFT)
                        else:
                            set_turn(inter[1], MERGE, turn_direction(inter[1].angle))
                    else:
                        inter[1].kind, inter[1].modifier = self.obvious_instruction(
                            3, via, self.through_street(1, inter), inter[1]
                        )
                else:
                    if self.d(inter[2].eid).is_motorway and not e2 and not e1 and same12:
                        if geo.deviation(inter[2].angle, STRAIGHT_ANGLE) < 2 * NARROW_TURN_ANGLE:
                            set_turn(inter[2], MERGE, SLIGHT_RIGHT)
                        else:
                            set_turn(inter[2], MERGE, turn_direction(inter[2].angle))
                    else:
                        inter[2].kind, inter[2].modifier = self.obvious_instruction(
                            3, via, self.through_street(2, inter), inter[2]
                        )
            else:
                if self.d(inter[1].eid).is_motorway and self.d(inter[2].eid).is_motorway:
                    self.assign_fork2(via, inter[2], inter[1])
                elif self.d(inter[1].eid).is_motorway:
                    set_turn(inter[1], TURN, SLIGHT_RIGHT)
                    set_turn(inter[2], CONTINUE, SLIGHT_LEFT)
                else:
                    self.assign_fork2(via, inter[2], inter[1])
        elif len(inter) == 4:
            passed = False
            for r in inter:
                mw = self.d(r.eid).is_motorway
                if not r.entry_allowed and mw:
                    passed = True
                elif mw:
                    set_turn(r, MERGE, SLIGHT_RIGHT if passed else SLIGHT_LEFT)
                else:
                    set_turn(r, OFF_RAMP, turn_direction(r.angle))
        else:
            self.motorway_fallback(inter)

    # -- the roundabout handler ---------------------------------------------------------------------------------
    def _roundabout_flags(self, from_node: int, via: int, inter: Intersection) -> tuple[bool, bool, bool]:
        vd = self.d(via)
        on = vd.roundabout or vd.circular
        can_enter = can_exit_sep = False
        for r in inter:
            d = self.d(r.eid)
            if d.reversed or not r.entry_allowed:
                continue
            if d.roundabout or d.circular:
                can_enter = True
            elif not self.ex.goes_back(via, r.eid) and not can_enter:
                can_exit_sep = True
        return on, can_enter, can_exit_sep

    def roundabout_applies(self, from_node: int, via: int, inter: Intersection) -> bool:
        """RoundaboutHandler: the route is on a roundabout, or can enter one here."""
        on, can_enter, _ = self._roundabout_flags(from_node, via, inter)
        if not on and not can_enter:
            return False
        return self.roundabout_type(self.gg.target(via)) != ROUNDABOUT_NONE

    def roundabout_type(self, nid: int) -> int:
        """getRoundaboutType of the roundabout through node nid (cached per node)."""
        r = self._rb_type.get(nid)
        if r is None:
            r = self._rb_type[nid] = self._roundabout_type(nid)
        return r

    def _roundabout_type(self, nid: int) -> int:
        gg, names = self.gg, self.names
        rb_names: list[int] = []
        connected: set[int] = set()
        rb = circ = False
        for e in gg.adjacent(nid):
            d = gg.data(e)
            rb |= d.roundabout
            circ |= d.circular
        if rb == circ:
            return ROUNDABOUT_NONE

        def next_on(node: int) -> int:
            cont = -1
            for e in gg.adjacent(node):
                d = gg.data(e)
                if not d.reversed and d.circular == circ and d.roundabout == rb:
                    if cont != -1:
                        return -2
                    if not names.name_empty(d.name):
                        if all(names.announce(i, d.name) for i in rb_names):
                            rb_names.append(d.name)
                    cont = e
                elif not d.roundabout and not d.circular:
                    connected.add(d.name)
            return cont

        nodes: set[int] = set()
        ordered: list[int] = []
        length = 0.0
        last = nid
        while last not in nodes:
            if gg.out_degree(last) > 2:
                nodes.add(last)
                ordered.append(last)
            if sum(1 for e in gg.adjacent(last) if gg.data(e).roundabout or gg.data(e).circular) != 2:
                return ROUNDABOUT_NONE
            e = next_on(last)
            if e < 0:
                return ROUNDABOUT_NONE
            length += geo.length(gg.geometry(e))
            last = gg.target(e)
            if last == nid:
                break
        if not nodes:
            return ROUNDABOUT_NONE
        if len(nodes) == 1 and rb:
            return ROUNDABOUT_INTERSECTION
        radius = length * 0.5 / math.pi
        is_rotary = len(rb_names) == 1 and (circ or (rb_names[0] not in connected and radius > MAX_ROUNDABOUT_RADIUS))
        if is_rotary:
            return ROTARY
        if circ:
            return ROUNDABOUT_NONE
        if self._qualifies_as_roundabout_intersection(ordered) and radius < MAX_ROUNDABOUT_INTERSECTION_RADIUS:
            return ROUNDABOUT_INTERSECTION
        return ROUNDABOUT

    def _qualifies_as_roundabout_intersection(self, nodes: list[int]) -> bool:
        gg = self.gg
        if len(nodes) > 4:
            return False
        if any(gg.out_degree(n) > 3 for n in nodes):
            return False
        bearings = []
        for n in nodes:
            for e in gg.adjacent(n):
                d = gg.data(e)
                if d.roundabout or d.circular:
                    continue
                lanes = max((gg.data(x).num_lanes for x in gg.adjacent(n)), default=0)
                nxt = self.ex.along_road(n, e, lanes)
                bearings.append(geo.bearing(gg.coord(n), nxt))
                break
        bearings.sort()
        for i in range(len(bearings)):
            if abs(bearings[(i + 1) % len(bearings)] - bearings[i]) <= NARROW_TURN_ANGLE:
                return False
        return True

    def handle_roundabout(self, from_node: int, via: int, inter: Intersection) -> None:
        """Enter/stay/exit instructions for a roundabout, rotary or roundabout intersection."""
        on, _, can_exit_sep = self._roundabout_flags(from_node, via, inter)
        rtype = self.roundabout_type(self.gg.target(via))
        center = self.gg.target(via)
        if on:
            for r in inter:
                od = self.d(r.eid)
                if od.roundabout or od.circular:
                    if self.gg.directed_out_degree(center) == 1:
                        if len(inter) == 2:
                            set_turn(r, NO_TURN, UTURN)
                        else:
                            set_turn(r, SUPPRESSED, turn_direction(r.angle))
                    else:
                        non_ignorable = any(
                            not self.gg.data(e).reversed
                            and not self.gg.data(e).roundabout
                            and not self.gg.data(e).circular
                            and not self.gg.data(e).ignorable
                            for e in self.gg.adjacent(center)
                        )
                        if od.ignorable or non_ignorable:
                            set_turn(r, STAY_ON_ROUNDABOUT, turn_direction(r.angle))
                        else:
                            set_turn(r, SUPPRESSED, turn_direction(r.angle))
                else:
                    set_turn(r, _EXIT[rtype], turn_direction(r.angle))
            return
        crossing = False
        for idx, r in enumerate(inter):
            od = self.d(r.eid)
            if od.roundabout or od.circular:
                crossing = not crossing
            if not r.entry_allowed:
                continue
            if od.roundabout or od.circular:
                set_turn(r, (_ENTER_AT_EXIT if can_exit_sep else _ENTER)[rtype], turn_direction(r.angle))
            elif geo.deviation(r.angle, STRAIGHT_ANGLE) < FUZZY_ANGLE_DIFFERENCE and crossing:
                r.kind, r.modifier = self.obvious_instruction(len(inter), via, self.through_street(idx, inter), r)
            else:
                set_turn(r, _ENTER_EXIT[rtype], turn_direction(r.angle))

    # -- the sliproad handler -----------------------------------------------------------------------------------
    @staticmethod
    def _scaled(threshold: float, d: EdgeData) -> float:
        p = d.priority
        factor = {MOTORWAY: 1.0, TRUNK: 0.8, PRIMARY: 0.8, SECONDARY: 0.6, TERTIARY: 0.5, 10: 0.4,
                  SIDE_RESIDENTIAL: 0.3}.get(p)  # fmt: skip
        if factor is None:
            factor = 0.3 if p in (MOTORWAY_LINK, TRUNK_LINK, 5, 7, TERTIARY_LINK, 14) else 0.1
        return threshold * factor

    def _road_continues(self, cur: int, nxt: int) -> bool:
        c, n = self.d(cur), self.d(nxt)
        same_name = c.name != 0 and n.name != 0 and not self.names.announce(c.name, n.name)
        return c.classification == n.classification and c.mode == n.mode and same_name

    def _target_of_sliproad(self, inter: Intersection) -> bool:
        if len(inter) != 3:
            return False
        return not inter[0].entry_allowed and not (inter[1].entry_allowed and inter[2].entry_allowed)

    def _obvious_with_sliproads(self, via: int, inter: Intersection, at: int) -> int | None:
        idx = self.find_obvious_turn(via, inter)
        if idx is not None:
            return idx
        if len(inter) != 3:
            return None
        if not (inter[1].kind == FORK and inter[2].kind == FORK):
            return None
        first = self.next_intersection(at, rightmost(inter).eid)
        second = self.next_intersection(at, leftmost(inter).eid)
        if first is None or second is None:
            return None
        if is_dead_end(first[0]) or is_dead_end(second[0]):
            return None
        if self._target_of_sliproad(first[0]) and at != second[1]:
            return 2
        if self._target_of_sliproad(second[0]) and at != first[1]:
            return 1
        return None

    def handle_sliproad(self, via: int, inter: Intersection) -> None:
        """SliproadHandler: a short link cutting the corner of a junction turns as the junction does."""
        gg, names, ex = self.gg, self.names, self.ex
        at = gg.target(via)
        obvious = self._obvious_with_sliproads(via, inter, at)
        if obvious is None:
            return
        main = inter[obvious]
        if not self._road_continues(via, main.eid):
            return

        def potential_link(r: Road) -> bool:
            if not r.entry_allowed or r.kind in ROUNDABOUT_TYPES:
                return False
            narrow = geo.deviation(r.angle, STRAIGHT_ANGLE) <= 2 * NARROW_TURN_ANGLE
            same_angle = geo.deviation(main.angle, r.angle) <= 2.220446049250313e-16
            if not narrow or same_angle:
                return False
            return not self.d(r.eid).roundabout

        if not any(potential_link(r) for r in inter):
            return
        acc = DistanceAccumulator(ex, self._scaled(MAX_SLIPROAD_THRESHOLD, self.d(main.eid)))
        ex.traverse(at, main.eid, acc, skip_obstacle_selector)
        if acc.too_far_away:
            return
        mri = self.next_intersection(at, main.eid)
        if mri is None:
            return
        main_inter, main_node = mri
        if is_dead_end(main_inter) or at == main_node:
            return
        target_names = [self.d(r.eid).name for r in main_inter]
        found = False
        n = len(inter)
        for ri in range(1, n):
            if ri != (obvious - 1) % n and ri != (obvious + 1) % n:
                continue
            slip = inter[ri]
            sd = self.d(slip.eid)
            right_turn = ri < obvious
            left_turn = ri > obvious
            crossing = leftmost(main_inter) if left_turn else rightmost(main_inter)
            if self.d(crossing.eid).reversed:
                continue
            if sd.ignorable or sd.reversed:
                continue
            if not potential_link(slip):
                continue
            finder = IntersectionFinder(ex, 10)
            ex.traverse(at, slip.eid, finder, skip_obstacle_selector)
            slip_edge = finder.via
            target = finder.intersection
            if not target or is_dead_end(target):
                continue
            first_valid = next(r for r in target if r.entry_allowed)
            if not (self.d(via).mode == sd.mode and self.d(first_valid.eid).mode == sd.mode):
                continue
            if len(target) < 3 or len(target) > 4:
                continue
            slip_target = gg.target(slip_edge)
            if at == main_node or at == slip_target or main_node == slip_target:
                continue
            if len(target) == 4:
                if len(main_inter) < 3 or slip_target != gg.target(crossing.eid):
                    continue
                nti = len(main_inter) - 2 if left_turn else 2
                nt_node = gg.target(main_inter[nti].eid)
                if not any(
                    gg.target(r.eid) == nt_node and turn_direction(r.angle) in (SHARP_RIGHT, SHARP_LEFT) for r in target
                ):
                    continue
            si_t = next((i for i, r in enumerate(target) if r.eid == slip_edge), None)
            if si_t is not None and self.through_street(si_t, target):
                continue
            oi = self.find_obvious_turn(slip_edge, target)
            if oi is None:
                continue
            onto = target[oi]
            if geo.deviation(onto.angle, STRAIGHT_ANGLE) > 2 * NARROW_TURN_ANGLE or self.d(onto.eid).roundabout:
                continue
            coords = gg.geometry(slip_edge)
            if len(coords) < 2:
                continue
            start_c, end_c = coords[0], coords[-1]
            inner = coords[1:-1]
            dev_straight = 0.0
            if right_turn:
                snuggles = all(not geo.is_ccw(start_c, c, end_c) for c in inner)
                dev_straight = geo.deviation(rightmost(main_inter).angle, STRAIGHT_ANGLE)
            else:
                snuggles = all(geo.is_ccw(start_c, c, end_c) for c in inner)
                dev_straight = geo.deviation(leftmost(main_inter).angle, STRAIGHT_ANGLE)
            ln = geo.distance(gg.coord(at), gg.coord(main_node))
            if ln >= 3.0:
                if not snuggles:
                    continue
                if dev_straight > 180.0 - 40.0 and not sd.link:
                    continue
            area_threshold = self._scaled(MAX_SLIPROAD_THRESHOLD, sd) ** 2
            a_len = geo.distance(gg.coord(at), gg.coord(main_node))
            a_h = geo.distance(gg.coord(main_node), gg.coord(slip_target))
            area = a_len * a_h / 2.0
            if area < 3.0 or area > area_threshold:
                continue
            for cand in target:
                cdat = self.d(cand.eid)
                if all(names.announce(nm, cdat.name) for nm in target_names):
                    continue
                main_name = self.d(main.eid).name
                if (
                    not sd.link
                    and not names.name_empty(sd.name)
                    and not names.name_empty(main_name)
                    and not names.name_empty(cdat.name)
                    and names.announce(main_name, sd.name)
                    and names.announce(sd.name, cdat.name)
                ):
                    continue
                if sd.link and cdat.link:
                    continue
                ct = gg.target(cand.eid)
                if ct == main_node or (
                    ct == gg.target(crossing.eid)
                    and geo.angle_between(cand.perceived_bearing, crossing.perceived_bearing) < FUZZY_ANGLE_DIFFERENCE
                    and turn_direction(cand.angle) in (SHARP_RIGHT, SHARP_LEFT)
                ):
                    slip.kind = SLIPROAD
                    found = True
                    break
                skip = ex.connected_roads(cand.eid, False)
                if len(skip) == 2 and gg.target(skip[1].eid) == main_node:
                    slip.kind = SLIPROAD
                    found = True
                    break
        if found and main.kind == FORK:
            md = self.d(main.eid)
            if self.is_same_name(via, main.eid):
                main.kind = SUPPRESSED if geo.deviation(main.angle, STRAIGHT_ANGLE) < 5 else CONTINUE
                main.modifier = turn_direction(main.angle)
            elif not names.name_empty(md.name):
                main.kind = NEW_NAME
                main.modifier = turn_direction(main.angle)
            else:
                main.kind = SUPPRESSED

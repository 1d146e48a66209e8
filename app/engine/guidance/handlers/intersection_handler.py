"""What OSRM's handlers share (`src/guidance/intersection_handler.cpp`): the basic turn type, the instruction for
an obvious road, forks, trivial turns, through streets, the next intersection along a road, and the obvious road of
an intersection (`find_obvious_turn`, OSRM's rules on names, road classes and angle distinctness)."""

from __future__ import annotations

from floor.intersections import geo
from floor.intersections.graph import SECONDARY, EdgeData, GuidanceGraph, is_link_to, road_group, strictly_less
from floor.intersections.intersection import (
    CONTINUE,
    FORK,
    FUZZY_ANGLE_DIFFERENCE,
    GROUP_ANGLE,
    MAXIMAL_ALLOWED_NO_TURN_DEVIATION,
    MERGE,
    NARROW_TURN_ANGLE,
    NEW_NAME,
    NO_TURN,
    NOTIFICATION,
    ON_RAMP,
    SLIGHT_LEFT,
    SLIGHT_RIGHT,
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
    turn_direction,
)
from floor.intersections.intersection_analysis import Extractor

DISTINCTION_RATIO = 2.0


def set_turn(r: Road, kind: int, mod: int) -> None:
    """Give a road its instruction."""
    r.kind = kind
    r.modifier = mod


class IntersectionHandler:
    """The base of the turn handlers: the graph, its names and the helpers every handler uses."""

    def __init__(self, ex: Extractor) -> None:
        self.ex = ex
        self.gg: GuidanceGraph = ex.gg
        self.names = ex.gg.names

    def d(self, e: int) -> EdgeData:
        """The edge data of edge e."""
        return self.gg.data(e)

    # -- turn types, forks, through streets ---------------------------------------------------------------------
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

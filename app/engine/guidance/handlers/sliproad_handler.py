"""Sliproads (OSRM's `src/guidance/sliproad_handler.cpp`): a short link cutting the corner of a junction just
ahead turns as that junction does, and the main road beside it is no fork."""

from __future__ import annotations

from app.engine.guidance.handlers.intersection_handler import IntersectionHandler
from floor.intersections import geo
from floor.intersections.graph import (
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
)
from floor.intersections.intersection import (
    CONTINUE,
    FORK,
    FUZZY_ANGLE_DIFFERENCE,
    NARROW_TURN_ANGLE,
    NEW_NAME,
    ROUNDABOUT_TYPES,
    SHARP_LEFT,
    SHARP_RIGHT,
    SLIPROAD,
    STRAIGHT_ANGLE,
    SUPPRESSED,
    Intersection,
    Road,
    is_dead_end,
    leftmost,
    rightmost,
    turn_direction,
)
from floor.intersections.walker import DistanceAccumulator, IntersectionFinder, skip_obstacle_selector

MAX_SLIPROAD_THRESHOLD = 250.0


class SliproadHandler(IntersectionHandler):
    """Sliproads at intersections of more than two roads."""

    def applies(self, via: int, inter: Intersection) -> bool:
        """Only an intersection of three roads or more can have a sliproad."""
        return len(inter) > 2

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

    def handle(self, via: int, inter: Intersection) -> None:
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

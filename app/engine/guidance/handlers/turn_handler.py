"""Plain junctions (OSRM's `src/guidance/turn_handler.cpp`): by number of roads, the obvious continuation, forks,
end of road at a T, and distinct modifiers for roads turning the same way."""

from __future__ import annotations

import math

from app.engine.guidance.handlers.intersection_handler import IntersectionHandler, set_turn
from floor.intersections import geo
from floor.intersections.graph import can_be_seen_as_fork, obvious_by_road_class
from floor.intersections.intersection import (
    END_OF_ROAD,
    FUZZY_ANGLE_DIFFERENCE,
    GROUP_ANGLE,
    LEFT,
    MAXIMAL_ALLOWED_NO_TURN_DEVIATION,
    NARROW_TURN_ANGLE,
    ON_RAMP,
    RIGHT,
    SHARP_LEFT,
    SHARP_RIGHT,
    SLIGHT_LEFT,
    SLIGHT_RIGHT,
    STRAIGHT,
    STRAIGHT_ANGLE,
    UTURN,
    Intersection,
    Road,
    closest_turn,
    turn_direction,
)

INCREASES_BY_FOURTY_PERCENT = 1.4


class TurnHandler(IntersectionHandler):
    """Instructions at junctions no other handler takes."""

    def handle(self, via: int, inter: Intersection) -> None:
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

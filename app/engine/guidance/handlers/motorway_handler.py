"""Motorways and their ramps (OSRM's `src/guidance/motorway_handler.cpp`): staying on, exits, merges and
forks where only motorway-like roads meet."""

from __future__ import annotations

from app.engine.guidance.handlers.intersection_handler import IntersectionHandler, set_turn
from floor.intersections import geo
from floor.intersections.intersection import (
    CONTINUE,
    FUZZY_ANGLE_DIFFERENCE,
    LEFT,
    MERGE,
    NARROW_TURN_ANGLE,
    NO_TURN,
    OFF_RAMP,
    ON_RAMP,
    RIGHT,
    SLIGHT_LEFT,
    SLIGHT_RIGHT,
    STRAIGHT,
    STRAIGHT_ANGLE,
    SUPPRESSED,
    TURN,
    Intersection,
    count_enterable,
    turn_direction,
)


class MotorwayHandler(IntersectionHandler):
    """Instructions where a motorway is arrived by or entered and the other roads are ramps."""

    def _ramp(self, e: int, from_motorway: bool = True) -> bool:
        d = self.d(e)
        return d.is_ramp or (from_motorway and d.link)

    def applies(self, via: int, inter: Intersection) -> bool:
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

    def handle(self, via: int, inter: Intersection) -> None:
        """MotorwayHandler: from a motorway (exits, forks, continuing) or from a ramp (merges, forks)."""
        if self.d(via).is_motorway:
            self.from_motorway(via, inter)
            for r in inter:
                if r.kind == ON_RAMP:
                    r.kind = OFF_RAMP
        else:
            self.from_ramp(via, inter)

    def fallback(self, inter: Intersection) -> None:
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
                self.fallback(inter)
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
            self.fallback(inter)

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
            self.fallback(inter)

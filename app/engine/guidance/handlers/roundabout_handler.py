"""Roundabouts (OSRM's `src/guidance/roundabout_handler.cpp`): what kind of circle a node is on (roundabout,
rotary = a large named one, roundabout intersection = a small one of up to four exits) and the enter, stay and exit
instructions there."""

from __future__ import annotations

import math

from app.engine.guidance.handlers.intersection_handler import IntersectionHandler, set_turn
from floor.intersections import geo
from floor.intersections.intersection import (
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
    FUZZY_ANGLE_DIFFERENCE,
    NARROW_TURN_ANGLE,
    NO_TURN,
    STAY_ON_ROUNDABOUT,
    STRAIGHT_ANGLE,
    SUPPRESSED,
    UTURN,
    Intersection,
    turn_direction,
)
from floor.intersections.intersection_analysis import Extractor

MAX_ROUNDABOUT_RADIUS = 15.0
MAX_ROUNDABOUT_INTERSECTION_RADIUS = 15.0

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


class RoundaboutHandler(IntersectionHandler):
    """Instructions on and into roundabouts, rotaries and roundabout intersections (the type cached per node)."""

    def __init__(self, ex: Extractor) -> None:
        super().__init__(ex)
        self._rb_type: dict[int, int] = {}

    def clear_caches(self) -> None:
        """Forget the roundabout types found so far."""
        self._rb_type.clear()

    def _roundabout_flags(self, via: int, inter: Intersection) -> tuple[bool, bool, bool]:
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

    def applies(self, via: int, inter: Intersection) -> bool:
        """RoundaboutHandler: the route is on a roundabout, or can enter one here."""
        on, can_enter, _ = self._roundabout_flags(via, inter)
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

    def handle(self, via: int, inter: Intersection) -> None:
        """Enter/stay/exit instructions for a roundabout, rotary or roundabout intersection."""
        on, _, can_exit_sep = self._roundabout_flags(via, inter)
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

"""Maneuver classification at one intersection: OSRM's turn analysis (`src/guidance/turn_analysis.cpp`)
dispatching to its handlers, one module each.

`TurnAnalysis.assign(via, intersection)` gives every road of an intersection view an instruction `(kind,
modifier)`, as OSRM's `TurnAnalysis::AssignTurnTypes` does: suppressed modes (ferries, trains:
`suppress_mode_handler`) first, then roundabouts (`roundabout_handler`: roundabout, rotary = a large named one,
roundabout turn = a small four-way one, entering at an exit, exits), else basic turn types refined by the driveway
handler (a main road passing service roads: `driveway_handler`), the motorway handler (ramps, merges, forks and exits
on motorway-like roads: `motorway_handler`) or the turn handler (obvious continuations, forks, end of road
T-junctions, conflicting turns of the same direction: `turn_handler`), and finally the sliproad handler (a short link
cutting the corner of a junction ahead: `sliproad_handler`); on-ramps taken from a motorway become off-ramps. What
the handlers share, the obvious road of an intersection included, is `intersection_handler.IntersectionHandler`.
"""

from __future__ import annotations

from app.engine.guidance.handlers.driveway_handler import DrivewayHandler
from app.engine.guidance.handlers.intersection_handler import set_turn
from app.engine.guidance.handlers.motorway_handler import MotorwayHandler
from app.engine.guidance.handlers.roundabout_handler import RoundaboutHandler
from app.engine.guidance.handlers.sliproad_handler import SliproadHandler
from app.engine.guidance.handlers.suppress_mode_handler import SuppressModeHandler
from app.engine.guidance.handlers.turn_handler import TurnHandler
from floor.intersections.graph import GuidanceGraph
from floor.intersections.intersection import (
    CONTINUE,
    INVALID,
    OFF_RAMP,
    ON_RAMP,
    TURN,
    UTURN,
    Intersection,
    turn_direction,
)
from floor.intersections.intersection_analysis import Extractor


class TurnAnalysis:
    """Turn instructions for every road of an intersection (OSRM's TurnAnalysis over its handlers)."""

    def __init__(self, ex: Extractor) -> None:
        self.ex = ex
        self.gg: GuidanceGraph = ex.gg
        self.suppress_mode = SuppressModeHandler(ex)
        self.roundabout = RoundaboutHandler(ex)
        self.driveway = DrivewayHandler(ex)
        self.motorway = MotorwayHandler(ex)
        self.turn = TurnHandler(ex)
        self.sliproad = SliproadHandler(ex)

    def clear_caches(self) -> None:
        """Forget the roundabout types found so far."""
        self.roundabout.clear_caches()

    def assign(self, via: int, view: Intersection) -> Intersection:
        """AssignTurnTypes for the roads at the target of `via` (a fresh copy of `view` gets the instructions)."""
        inter = [r.copy() for r in view]
        for r in inter:
            r.kind, r.modifier, r.lanes = INVALID, UTURN, None
        if self.suppress_mode.applies(via, inter):
            self.suppress_mode.handle(via, inter)
            return inter
        if self.roundabout.applies(via, inter):
            self.roundabout.handle(via, inter)
        else:
            for r in inter:
                if not r.entry_allowed:
                    continue
                if self.ex.goes_back(via, r.eid):
                    set_turn(r, CONTINUE, UTURN)
                else:
                    set_turn(r, TURN, turn_direction(r.angle))
            if self.driveway.applies(via, inter):
                self.driveway.handle(via, inter)
            elif self.motorway.applies(via, inter):
                self.motorway.handle(via, inter)
            else:
                self.turn.handle(via, inter)
        if self.sliproad.applies(via, inter):
            self.sliproad.handle(via, inter)
        if self.gg.data(via).is_motorway:
            for r in inter:
                if r.kind == ON_RAMP:
                    r.kind = OFF_RAMP
        return inter

"""Ferries and trains (OSRM's `src/guidance/suppress_mode_handler.cpp`): where every road keeps the mode of the
road arrived by, nothing is announced."""

from __future__ import annotations

from app.engine.guidance.handlers.intersection_handler import IntersectionHandler
from floor.intersections.intersection import NO_TURN, Intersection


class SuppressModeHandler(IntersectionHandler):
    """Nothing to announce on a ferry or train that goes on as one."""

    def applies(self, via: int, inter: Intersection) -> bool:
        """SuppressModeHandler: on a ferry or train where every road keeps the mode, nothing is announced."""
        m = self.d(via).mode
        return m in ("ferry", "train") and all(self.d(r.eid).mode == m for r in inter)

    def handle(self, via: int, inter: Intersection) -> None:
        """Every road: no turn."""
        for r in inter:
            r.kind = NO_TURN

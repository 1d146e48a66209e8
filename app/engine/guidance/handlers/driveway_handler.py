"""A main road passing driveways and parking aisles (OSRM's `src/guidance/driveway_handler.cpp`): keep going
silently, or with a new name, along the main road."""

from __future__ import annotations

from app.engine.guidance.handlers.intersection_handler import IntersectionHandler
from floor.intersections.intersection import (
    INVALID,
    NEW_NAME,
    NO_TURN,
    SLIGHT_LEFT,
    SLIGHT_RIGHT,
    STRAIGHT,
    UTURN,
    Intersection,
)


class DrivewayHandler(IntersectionHandler):
    """One main road goes on, the other roads are driveways or parking aisles."""

    def applies(self, via: int, inter: Intersection) -> bool:
        """DrivewayHandler: one main road goes on, the others are driveways/parking aisles."""
        if len(inter) <= 2 or self.d(inter[0].eid).ignorable:
            return False
        low = sum(1 for r in inter if self.d(r.eid).ignorable)
        return low + 2 == len(inter)

    def handle(self, via: int, inter: Intersection) -> None:
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

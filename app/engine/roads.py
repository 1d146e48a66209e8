"""The road graph as guidance reads it: names and refs, and the intersection model behind turn-by-turn steps.

It sits beside the search graph and reads the same arrays (geometry chains, names, classes, flags, turn lanes);
the API reaches it only through the facade (`Router.roads`), so the search graph can change shape underneath.
Nothing here is built until asked for: the intersection model (`app.engine.guidance.Guide`, OSRM's compressed
node-based graph with its per-junction caches) is created on the first route with `steps=true`, never on the
routing hot path.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from app.engine.types import Leg
from floor.format.graph import Graph

if TYPE_CHECKING:  # the guidance package is imported on the first steps request, not at start-up
    from app.engine.guidance import Guide, RouteStep


class RoadGraph:
    """What step building reads of a loaded graph; thread-safe (caches are plain dicts, the guide built once)."""

    def __init__(self, graph: Graph, mode: str = "driving") -> None:
        self.g = graph
        self.mode = mode
        self.driving_side = graph.meta.driving_side  # "right" or "left", for the steps (OSRM's `driving_side`)
        self._names: dict[int, str] = {}
        self._guide: Guide | None = None
        self._lock = threading.Lock()

    def name(self, string_id: int) -> str:
        """A graph string (street name or ref), cached."""
        s = self._names.get(string_id)
        if s is None:
            s = self._names[string_id] = self.g.string(int(string_id)) if string_id else ""
        return s

    @property
    def guide(self) -> Guide:
        """The intersection model and turn analysis of this graph, built on first use."""
        if self._guide is None:
            with self._lock:
                if self._guide is None:
                    from app.engine.guidance import Guide

                    self._guide = Guide(self.g, self.mode)
        return self._guide

    def steps(self, leg: Leg) -> list[RouteStep]:
        """The turn-by-turn steps of one leg as OSRM gives them (depart ... arrive), see `app.engine.guidance`."""
        return self.guide.steps(leg)

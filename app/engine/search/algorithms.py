"""The one registry of search algorithms: names, what each needs, what it accepts. Schemas, the OSRM handler, the CLI
and the benchmarks all read it (no second list of names anywhere)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Algorithm:
    """A point-to-point search the engine answers with.

    `core` ones run on `app.engine.search.core` (`bidirectional`, `potential`: "none", "geo" great-circle bound, or
    "landmarks" ALT bounds max'ed with it); "ch" runs on the contraction hierarchy. `needs` names the graph data it
    requires; `epsilon` says whether it takes a weighted-A* factor.
    """

    name: str
    summary: str
    engine: Literal["core", "ch"] = "core"
    bidirectional: bool = False
    potential: Literal["none", "geo", "landmarks"] = "none"
    needs: Literal["ch", "landmarks"] | None = None
    epsilon: bool = False


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm("ch", "contraction hierarchy: bidirectional upward search, stall-on-demand", "ch", True, needs="ch"),
        Algorithm(
            "alt",
            "bidirectional A* with landmark (ALT) and great-circle bounds",
            "core",
            True,
            "landmarks",
            needs="landmarks",
        ),  # fmt: skip
        Algorithm(
            "bidirectional-astar",
            "bidirectional A*, great-circle bound (average potentials)",
            "core",
            True,
            "geo",
            epsilon=True,
        ),  # fmt: skip
        Algorithm("astar", "A* towards the target, great-circle bound", "core", False, "geo", epsilon=True),
        Algorithm("bidirectional-dijkstra", "bidirectional Dijkstra", "core", True),
        Algorithm("dijkstra", "Dijkstra", "core", False),
    )
}
NAMES: tuple[str, ...] = tuple(ALGORITHMS)  # fastest first
AlgorithmName = Literal["ch", "alt", "bidirectional-astar", "astar", "bidirectional-dijkstra", "dijkstra"]
assert set(AlgorithmName.__args__) == set(NAMES), "AlgorithmName must list the registry"  # type: ignore[attr-defined]

"""GPS traces for the map-matching tests: routes driven on a graph, sampled and moved as `bench/match.py` does."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.engine.facade import Engine, MatchRequest, RouteRequest, Waypoints
from app.engine.legs import segment_figures
from bench.match import Trace, TruthRoute


def drive(engine: Engine, seed: int, min_m: float = 1200.0) -> TruthRoute:
    """A seeded route of at least `min_m` between largest-component nodes, with the time at each coordinate."""
    g = engine.graph
    rng = np.random.default_rng(seed)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    while True:
        a, b = (int(main[rng.integers(len(main))]) for _ in range(2))
        pts = [(float(g.node_lon[v]) / 1e7, float(g.node_lat[v]) / 1e7) for v in (a, b)]
        best = engine.route(RouteRequest(Waypoints(pts))).best
        if best.distance_m >= min_m:
            seconds = np.concatenate([segment_figures(leg)[1] for leg in best.legs])
            return TruthRoute(best.coordinates, np.concatenate([[0.0], np.cumsum(seconds)]))


def request(trace: Trace, sigma: float | None, **kw: Any) -> MatchRequest:
    """The engine's request for a trace (every point's radius `sigma`, or none)."""
    pts = [(float(x), float(y)) for x, y in trace.points]
    return MatchRequest(pts, trace.timestamps, None if sigma is None else [sigma] * len(pts), **kw)


def url(trace: Trace) -> str:
    """The coordinates of a trace as an OSRM path segment."""
    return ";".join(f"{x:.6f},{y:.6f}" for x, y in trace.points)

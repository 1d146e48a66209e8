"""GPS traces for the map-matching tests: routes driven on a graph, sampled and moved as `bench/match.py` does."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.engine.facade import Engine, MatchRequest, RouteRequest, Waypoints
from app.engine.route.legs import segment_figures
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
            return _timeline(best.legs)


def _timeline(legs: Any) -> TruthRoute:
    """The legs' coordinates with the time at each: a vehicle waits out each turn's seconds (and a junction
    obstacle's, `Leg.piece_turn_s`) at the junction, then drives the piece at its own pace (its duration without the
    turn, spread over its segments by length), as a car stops at a gate or slows into a hairpin rather than
    crawling along the road after it."""
    coords: list[np.ndarray] = []
    times: list[float] = []
    now = 0.0
    for leg in legs:
        seg_len, spread, _ = segment_figures(leg)
        xy = np.asarray(leg.coordinates)
        p = leg.piece_arc.shape[0]
        turn = leg.piece_turn_s if leg.piece_turn_s is not None else np.zeros(p)
        piece = np.minimum(np.searchsorted(leg.piece_coord_end, np.arange(len(seg_len)), side="right"), p - 1)
        total = leg.piece_duration_s[piece]
        own = np.where(total > 0, spread * (1.0 - turn[piece] / np.where(total > 0, total, 1.0)), 0.0)
        first = np.ones(len(seg_len), dtype=bool)
        first[1:] = piece[1:] != piece[:-1]
        if not coords or not np.array_equal(coords[-1], xy[0]):
            coords.append(xy[0])
            times.append(now)
        for i in range(len(seg_len)):
            if first[i] and turn[piece[i]] > 0:  # the turn: waited out at the junction
                now += float(turn[piece[i]])
                coords.append(xy[i])
                times.append(now)
            now += float(own[i])
            coords.append(xy[i + 1])
            times.append(now)
    return TruthRoute(np.array(coords), np.array(times))


def request(trace: Trace, sigma: float | None, **kw: Any) -> MatchRequest:
    """The engine's request for a trace (every point's radius `sigma`, or none)."""
    pts = [(float(x), float(y)) for x, y in trace.points]
    return MatchRequest(pts, trace.timestamps, None if sigma is None else [sigma] * len(pts), **kw)


def url(trace: Trace) -> str:
    """The coordinates of a trace as an OSRM path segment."""
    return ";".join(f"{x:.6f},{y:.6f}" for x, y in trace.points)

"""GPS traces for map matching (the tests and `bench/match.py`): routes driven on a graph or by a server, sampled
every few seconds with Gaussian noise, and Newson and Krumm's route mismatch fraction of a matching."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from numba import njit

from app.engine.facade import Engine, MatchRequest, RouteRequest, Waypoints
from app.engine.route.legs import segment_figures

EARTH_M_PER_DEG = 6371008.8 * math.pi / 180
TOLERANCE_M = 3.0
MAX_POINTS = 100
T0 = 1_700_000_000  # the traces' first timestamp


@dataclass
class TruthRoute:
    """A route as driven: coordinates [k, 2] (lon, lat) and the time (s) at each."""

    coords: np.ndarray
    times: np.ndarray


@dataclass
class Trace:
    """A synthetic GPS trace and the stretch of its route it covers."""

    points: np.ndarray  # [n, 2] lon, lat with noise
    timestamps: list[int]
    truth: np.ndarray  # [k, 2] the route between the first and the last sample


def truth_routes(graph: Path, base: str, k: int, seed: int) -> list[TruthRoute]:
    """`k` seeded routes of 2-20 km between largest-component nodes, as the server at `base` drives them."""
    from floor.format.graph import load_graph

    g = load_graph(graph)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    rng = random.Random(seed)
    out: list[TruthRoute] = []
    with httpx.Client(base_url=base, timeout=60) as c:
        while len(out) < k:
            a, b = (int(main[rng.randrange(len(main))]) for _ in range(2))
            coords = ";".join(f"{g.node_lon[v] / 1e7:.6f},{g.node_lat[v] / 1e7:.6f}" for v in (a, b))
            params = {"overview": "full", "geometries": "geojson", "annotations": "duration"}
            body = c.get(f"/route/v1/driving/{coords}", params=params).json()
            if body.get("code") != "Ok" or not 2000 <= body["routes"][0]["distance"] <= 20000:
                continue
            r = body["routes"][0]
            xy = np.array(r["geometry"]["coordinates"], dtype=np.float64)
            dur = np.concatenate([d for leg in r["legs"] for d in [leg["annotation"]["duration"]]])
            if len(dur) != len(xy) - 1:
                continue
            out.append(TruthRoute(xy, np.concatenate([[0.0], np.cumsum(dur)])))
    return out


def _at(route: TruthRoute, t: np.ndarray) -> np.ndarray:
    """Positions (lon, lat) along the route at times `t` (s)."""
    return np.stack([np.interp(t, route.times, route.coords[:, i]) for i in (0, 1)], axis=1)


def varied(route: TruthRoute, rng: np.random.Generator) -> TruthRoute:
    """The route driven at other speeds than the profile's: the whole trip at a factor of 0.7 to 1.3 of them, each
    segment again at a log-normal factor (sigma 0.25), so a transition model cannot lean on the profile's speeds."""
    seg = np.diff(route.times) / rng.uniform(0.7, 1.3) / rng.lognormal(0.0, 0.25, len(route.times) - 1)
    return TruthRoute(route.coords, np.concatenate([[0.0], np.cumsum(seg)]))


def make_trace(route: TruthRoute, interval: int, noise_m: float, rng: np.random.Generator) -> Trace:
    """A trace sampled every `interval` s (a random window of at most 100 points) with Gaussian noise."""
    total = float(route.times[-1])
    span = min(total, interval * (MAX_POINTS - 1))
    start = float(rng.integers(0, int(total - span) + 1))
    t = start + np.arange(0.0, span + 1e-9, interval)
    exact = _at(route, t)
    lat0 = math.radians(float(exact[:, 1].mean()))
    dx = rng.normal(0.0, noise_m, len(t)) / (EARTH_M_PER_DEG * math.cos(lat0))
    dy = rng.normal(0.0, noise_m, len(t)) / EARTH_M_PER_DEG
    points = exact + np.stack([dx, dy], axis=1)
    inside = (route.times > t[0]) & (route.times < t[-1])
    truth = np.concatenate([exact[:1], route.coords[inside], exact[-1:]])
    return Trace(points, [T0 + int(round(x)) for x in t], truth)


def _densify(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points every <= 1 m along a polyline in metres, and the length each stands for."""
    pts, lens = [], []
    for a, b in zip(xy[:-1], xy[1:], strict=True):
        seg = float(np.hypot(*(b - a)))
        k = max(1, math.ceil(seg))
        f = (np.arange(k) + 0.5) / k
        pts.append(a + f[:, None] * (b - a))
        lens.append(np.full(k, seg / k))
    if not pts:
        return np.zeros((0, 2)), np.zeros(0)
    return np.concatenate(pts), np.concatenate(lens)


@njit(cache=True)
def _covered(a: np.ndarray, b: np.ndarray, tol: float) -> np.ndarray:  # pragma: no cover - numba
    """Per point of `a`, whether a point of `b` lies within `tol` (b sorted by x)."""
    out = np.zeros(a.shape[0], dtype=np.bool_)
    bx = b[:, 0]
    for i in range(a.shape[0]):
        lo = np.searchsorted(bx, a[i, 0] - tol)
        j = lo
        while j < b.shape[0] and bx[j] <= a[i, 0] + tol:
            if (b[j, 0] - a[i, 0]) ** 2 + (b[j, 1] - a[i, 1]) ** 2 <= tol * tol:
                out[i] = True
                break
            j += 1
    return out


def mismatch(truth: np.ndarray, matched: list[np.ndarray]) -> float:
    """Newson and Krumm's route mismatch fraction of `matched` polylines (lon, lat) against `truth`."""
    lat0 = math.radians(float(truth[:, 1].mean()))
    scale = np.array([EARTH_M_PER_DEG * math.cos(lat0), EARTH_M_PER_DEG])
    t_pts, t_len = _densify(truth * scale)
    parts = [_densify(m * scale) for m in matched if len(m) > 1]
    m_pts = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, 2))
    m_len = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
    total = float(t_len.sum())
    if total <= 0:
        return 0.0
    if len(m_pts) == 0:
        return 1.0
    ms = m_pts[np.argsort(m_pts[:, 0])]
    ts = t_pts[np.argsort(t_pts[:, 0])]
    missed = float(t_len[~_covered(t_pts, ms, TOLERANCE_M)].sum())
    added = float(m_len[~_covered(m_pts, ts, TOLERANCE_M)].sum())
    return (missed + added) / total


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

"""Map matching beside osrm-routed: synthetic GPS traces from real routes, scored by the route mismatch fraction.

    python bench/match.py GRAPH_DIR --extract PBF [--routes 20] [--seed 1] [--intervals 1,5,15,30]
        [--noise 5,15,30] [--radiuses given|default] [--speeds exact|varied] [--osrm-dir DIR]

Truth: `--routes` seeded routes between nodes of the largest component, 2 to 20 km, as osrm-routed drives them
(`/route` with full geometry and per-segment durations: the truth is the peer's own, so any bias favours it). Per
cell of the sampling interval x noise grid, each route gives one trace: the position every `interval` seconds along
the route at its own speeds (a seeded window of at most 100 points, osrm-routed's `--max-matching-size`), moved by
isotropic Gaussian noise of `noise` metres, with integer timestamps; `radiuses` gives each point the noise's
standard deviation (`--radiuses default`: none, so both use OSRM's 5 m). `--speeds varied` drives each route at
0.7 to 1.3 of its speeds and each segment at a further log-normal factor (a model that leaned on the profile's
speeds would show it). Both servers get the same `/match?timestamps=…&radiuses=…&overview=full&geometries=geojson`
request, trace by trace, one at a time, in the same run.

Score (Newson and Krumm 2009): the route mismatch fraction = (length of the true route the matchings miss + length
of the matchings off the true route) / length of the true route, over the stretch the trace covers, both polylines
densified to 1 m, "on" meaning within 3 m of the other; a request that fails (NoMatch, NoSegment) scores 1. The
table gives per cell the mean fraction and per server the median latency per trace (client wall time, loopback).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx  # noqa: E402
import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from bench.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from bench.servers import start_osrm, start_starroute, stop  # noqa: E402

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


def match_request(c: httpx.Client, trace: Trace, radius: float | None) -> tuple[float, list[np.ndarray] | None]:
    """(seconds, the matchings' geometries or None on an error) of one `/match` request."""
    coords = ";".join(f"{x:.6f},{y:.6f}" for x, y in trace.points)
    params = {"timestamps": ";".join(map(str, trace.timestamps)), "overview": "full", "geometries": "geojson"}
    if radius is not None:
        params["radiuses"] = ";".join([f"{radius:g}"] * len(trace.points))
    t0 = time.perf_counter()
    r = c.get(f"/match/v1/driving/{coords}", params=params)
    dt = time.perf_counter() - t0
    body = r.json()
    if body.get("code") != "Ok":
        return dt, None
    return dt, [np.array(m["geometry"]["coordinates"], dtype=np.float64) for m in body["matchings"]]


def run(servers: dict[str, str], routes: list[TruthRoute], intervals: list[int], noises: list[float], seed: int,
        given: bool, speeds: str) -> list[dict]:  # fmt: skip
    """Per cell and server: mean mismatch, failures, median and p90 latency (ms). Each trace goes to every server
    in turn, so a busy moment of the machine falls on both."""
    rows = []
    clients = {name: httpx.Client(base_url=b, timeout=120) for name, b in servers.items()}
    try:
        warm = make_trace(routes[0], 5, 5.0, np.random.default_rng(0))
        for c in clients.values():  # first-request costs (numba loading its kernels) are no trace's latency
            for _ in range(3):
                match_request(c, warm, 5.0)
        for interval in intervals:
            for noise in noises:
                rng = np.random.default_rng([seed, interval, int(noise)])
                driven = [varied(r, rng) if speeds == "varied" else r for r in routes]
                traces = [make_trace(r, interval, noise, rng) for r in driven]
                got: dict[str, tuple[list[float], list[float], int]] = {name: ([], [], 0) for name in clients}
                for tr in traces:
                    for name, c in clients.items():
                        dt, geo = match_request(c, tr, noise if given else None)
                        fr, lat, fails = got[name]
                        lat.append(dt * 1000)
                        fr.append(1.0 if geo is None else mismatch(tr.truth, geo))
                        got[name] = (fr, lat, fails + (geo is None))
                row: dict = {"interval": interval, "noise": noise,
                             "points": statistics.median(len(t.points) for t in traces)}  # fmt: skip
                for name, (fr, lat, fails) in got.items():
                    row[name] = (float(np.mean(fr)), fails, float(np.median(lat)), float(np.percentile(lat, 90)))
                rows.append(row)
                print(_line(row), flush=True)
    finally:
        for c in clients.values():
            c.close()
    return rows


HEADER = (
    "| interval | noise | points | mismatch starroute | mismatch osrm | failures | latency starroute ms "
    "| latency osrm ms | latency ratio |\n|---|---|---|---|---|---|---|---|---|"
)


def _line(row: dict) -> str:
    (fs, ns, ms, ps), (fo, no, mo, po) = row["starroute"], row["osrm"]
    return (
        f"| {row['interval']} s | {row['noise']:g} m | {row['points']:g} | {fs:.4f} | {fo:.4f} | {ns} / {no} "
        f"| {ms:.1f} (p90 {ps:.1f}) | {mo:.1f} (p90 {po:.1f}) | {ms / mo:.2f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--extract", type=Path, required=True, help="the OSM extract the graph was built from")
    ap.add_argument("--routes", type=int, default=20, help="traces per cell (one per route)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--intervals", default="1,5,15,30", help="seconds between points")
    ap.add_argument("--noise", default="5,15,30", help="GPS noise standard deviations, metres")
    ap.add_argument("--radiuses", choices=("given", "default"), default="given")
    ap.add_argument("--speeds", choices=("exact", "varied"), default="exact", help="driven at the route's speeds, "
                    "or at 0.7-1.3 of them per trace and a log-normal factor per segment")  # fmt: skip
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    args = ap.parse_args()
    bin_dir = ensure_osrm(args.osrm_dir)
    if bin_dir is None:
        sys.exit("osrm-bindings cannot be installed here")
    po, bo = start_osrm(bin_dir, prepare_osrm(bin_dir, args.extract, args.osrm_dir))
    ps, bs = start_starroute(args.graph)
    try:
        routes = truth_routes(args.graph, bo, args.routes, args.seed)
        minutes = np.median([r.times[-1] for r in routes]) / 60
        print(f"{len(routes)} routes of {minutes:.0f} min (median) as osrm-routed drives them, speeds {args.speeds}, "
              f"radiuses {args.radiuses}; mismatch fraction: mean over the traces (a failure counts 1); latency: "
              "median per trace (p90), client wall time on loopback, one request at a time\n")  # fmt: skip
        print(HEADER)
        run({"starroute": bs, "osrm": bo}, routes, [int(x) for x in args.intervals.split(",")],
            [float(x) for x in args.noise.split(",")], args.seed, args.radiuses == "given", args.speeds)  # fmt: skip
    finally:
        stop(ps)
        stop(po)


if __name__ == "__main__":
    main()

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
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402
from harness.traces import Trace, TruthRoute, make_trace, mismatch, truth_routes, varied  # noqa: E402


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

"""`POST /optimize` end to end over HTTP: a vehicle routing problem with time windows, timed, beside OSRM + VROOM.

    python bench/optimize.py [GRAPH_DIR] [--extract PBF] [--jobs 50] [--vehicles 2] [--runs 5] [--seed 1] [--no-osrm]

Starts `python -m app.server GRAPH_DIR` (default `graphs/porto-car`) and sends it `--runs` times the same problem:
`--vehicles` vehicles (capacity, an 8-hour shift) from a depot, `--jobs` jobs on seeded road points (a delivery of
1, 5 minutes of service, a 2-hour time window somewhere in the shift), with and without `options.g` (route
geometries). Prints the wall time of each request (client side: JSON, snapping, the matrix, VROOM, geometries) and
the answer's figures. With `--extract` (the graph's OSM extract), osrm-routed (`harness.osrm_peer`) answers the
same points' `/table`, VROOM (pyvroom, this process, the server's exploration level and threads) solves on it, and
the two solutions' costs and matrices are compared: the same matrix gives the same cost.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx  # noqa: E402
import numpy as np  # noqa: E402
import orjson  # noqa: E402

from harness.points import road_points  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402

SHIFT_S = 8 * 3600


def problem(points: list[tuple[float, float]], vehicles: int, seed: int) -> dict[str, Any]:
    """A depot (the first point), a job at each other point with a 2-hour window in the shift."""
    rng = np.random.default_rng(seed)
    depot, stops = points[0], points[1:]
    cap = -(-len(stops) // vehicles) + 5
    return {
        "vehicles": [
            {"id": v, "start": list(depot), "end": list(depot), "capacity": [cap], "time_window": [0, SHIFT_S]}
            for v in range(1, vehicles + 1)
        ],
        "jobs": [
            {"id": k, "location": list(p), "delivery": [1], "service": 300, "time_windows": [[int(t), int(t) + 7200]]}
            for k, (p, t) in enumerate(zip(stops, rng.uniform(0, SHIFT_S - 7200, len(stops)), strict=True), start=1)
        ],
    }


def timed(client: httpx.Client, body: dict[str, Any], runs: int) -> tuple[list[float], dict[str, Any]]:
    times, out = [], {}
    for _ in range(runs):
        t0 = time.perf_counter()
        r = client.post("/optimize", json=body)
        times.append(time.perf_counter() - t0)
        if r.status_code != 200:
            raise SystemExit(f"/optimize answered {r.status_code}: {r.text[:500]}")
        out = r.json()
    return times, out


def vroom_cost(body: dict[str, Any], points: list[tuple[float, float]], dur: Any, dist: Any) -> tuple[int, float]:
    """VROOM on the given matrices (every location by its index in `points`): (cost, seconds)."""
    import vroom

    at = {p: i for i, p in enumerate(points)}
    vehicles = [
        {**{k: x for k, x in v.items() if k not in ("start", "end")},
         "start_index": at[tuple(v["start"])], "end_index": at[tuple(v["end"])]}
        for v in body["vehicles"]
    ]  # fmt: skip
    jobs = [{**{k: x for k, x in j.items() if k != "location"}, "location_index": at[tuple(j["location"])]}
            for j in body["jobs"]]  # fmt: skip
    indexed = {"vehicles": vehicles, "jobs": jobs, "matrices": {"car": {"durations": dur, "distances": dist}}}
    t0 = time.perf_counter()
    p = vroom.Input()
    p._from_json(orjson.dumps(indexed).decode(), False)
    cost = int(p.solve(exploration_level=5, nb_threads=2).summary.cost)
    return cost, time.perf_counter() - t0


def whole(values: Any) -> np.ndarray:
    """VROOM's rounding of a router's matrix (halves up)."""
    return np.floor(np.asarray(values, dtype=np.float64) + 0.5).astype(np.int64)


def table(base: str, points: list[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    coords = ";".join(f"{lon},{lat}" for lon, lat in points)
    t = httpx.get(f"{base}/table/v1/driving/{coords}", params={"annotations": "duration,distance"}, timeout=60).json()
    return whole(t["durations"]), whole(t["distances"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", nargs="?", type=Path, default=Path("graphs/porto-car"))
    ap.add_argument("--extract", type=Path, help="the graph's OSM extract: OSRM + VROOM on the same problem")
    ap.add_argument("--jobs", type=int, default=50)
    ap.add_argument("--vehicles", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    args = ap.parse_args()

    points = road_points(args.graph, args.jobs + 1, args.seed)
    body = problem(points, args.vehicles, args.seed)
    proc, base = start_starroute(args.graph)
    try:
        with httpx.Client(base_url=base, timeout=120.0) as client:
            first, _ = timed(client, body, 1)  # VROOM imported, kernels warm
            plain, out = timed(client, body, args.runs)
            geo, out_g = timed(client, {**body, "options": {"g": True}}, args.runs)
            s = out["summary"]
            print(
                f"/optimize on {args.graph.name}: {args.vehicles} vehicles, {args.jobs} jobs with 2-hour time windows"
            )
            print(f"  first request                 {first[0]:.3f} s (imports VROOM)")
            print(f"  end to end, median of {args.runs}      {statistics.median(plain):.3f} s  "
                  f"(min {min(plain):.3f}, max {max(plain):.3f})")  # fmt: skip
            print(f"  with options.g, median of {args.runs}  {statistics.median(geo):.3f} s  "
                  f"(min {min(geo):.3f}, max {max(geo):.3f})")  # fmt: skip
            times = out_g["summary"]["computing_times"]
            print(f"  answer: cost {s['cost']}, routes {s['routes']}, unassigned {s['unassigned']}, "
                  f"distance {s['distance']} m, waiting {s['waiting_time']} s; "
                  f"VROOM solving {times['solving']} ms, starroute routing {times['routing']} ms (with g)")  # fmt: skip
            goal = "under" if statistics.median(plain) < 2.0 else "OVER"
            print(f"  goal < 2 s end to end: {goal}")
            if args.extract is not None:
                from harness.osrm_peer import ensure_osrm, prepare_osrm

                bin_dir = ensure_osrm(args.osrm_dir)
                if bin_dir is None:
                    print("OSRM + VROOM: osrm-bindings cannot be installed here; skipped")
                    return
                oproc, obase = start_osrm(bin_dir, prepare_osrm(bin_dir, args.extract, args.osrm_dir))
                try:
                    d_osrm, m_osrm = table(obase, points)
                finally:
                    stop(oproc)
                d_ours, m_ours = table(base, points)
                diff = np.abs(d_osrm - d_ours)
                cost_osrm, secs = vroom_cost(body, points, d_osrm.tolist(), m_osrm.tolist())
                cost_ours, _ = vroom_cost(body, points, d_ours.tolist(), m_ours.tolist())
                print(f"OSRM + VROOM on the same {len(points)} points: cells differing {int((diff > 0).sum())} of "
                      f"{diff.size} (largest {int(diff.max())} s), distances differing "
                      f"{int((m_osrm != m_ours).sum())} (largest {int(np.abs(m_osrm - m_ours).max())} m)")  # fmt: skip
                print(f"  VROOM on osrm-routed's matrix: cost {cost_osrm} (solved in {secs:.3f} s); on starroute's "
                      f"matrix: {cost_ours}; /optimize: {s['cost']}")  # fmt: skip
                same = "same cost" if cost_osrm == s["cost"] else f"costs differ by {s['cost'] - cost_osrm}"
                print(f"  same matrix -> {'same' if cost_ours == s['cost'] else 'DIFFERENT'} cost; OSRM's: {same}")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()

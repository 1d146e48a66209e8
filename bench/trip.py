"""`/trip` beside the real OSRM: the same seeded point sets to osrm-routed and starroute, tour durations and latency.

    python bench/trip.py GRAPH_DIR [--extract PBF] [--sizes 5,12,25,50,100] [--sets 10] [--reps 5] [--seed 1]
                                   [--osrm-dir /tmp/starroute-osrm]

GRAPH_DIR is a starroute car graph (`starroute preprocess EXTRACT --output GRAPH_DIR`); OSRM's dataset is built once
from the same extract (the graph's source unless `--extract`) with osrm-extract / osrm-contract and car.lua
(`harness/osrm_peer.py`). Both servers run on free loopback ports, one worker each (osrm-routed `-t 1`), in this run.

The points: seeded random points *on* roads, so both engines snap them to the same segment: the middle stretch
(25..75 %) of a random segment at least 10 m long of a named-street arc (motorway .. living_street, no roundabout,
no ferry) of the largest strongly connected component. Per size, `--sets` sets; each set is asked of both servers
(`/trip/v1/driving/...`, default options: a round trip from the first point, overview simplified) once to warm up
and `--reps` more times, alternating, for the latency (the median per set; the table shows the median over sets).

Columns: the median tour duration of each engine; starroute / OSRM per set (median, worst, and how many sets were
shorter / longer by more than 0.05 %); "same table": OSRM's visiting order costed on starroute's own `/table`
divided by starroute's order on it, the solver's gain with the graphs' differences taken out (>= 1: ours is no
longer); then the latencies and their ratio. Goals: never longer than OSRM, shorter on the median above 10 points,
latency within 2x of OSRM's at 100 points.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from bench.http_load import find_extract  # noqa: E402
from floor.format.graph import Graph, load_graph  # noqa: E402
from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.points import road_points  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402

SAME = 0.0005  # tours within 0.05 % count as equal


def trip_path(points: list[tuple[float, float]]) -> str:
    return "/trip/v1/driving/" + ";".join(f"{lon},{lat}" for lon, lat in points)


def visiting_order(body: dict[str, Any]) -> list[int]:
    """The request's point indices in trip order (from `waypoint_index`)."""
    wps = body["waypoints"]
    return sorted(range(len(wps)), key=lambda i: wps[i]["waypoint_index"])


def cycle_cost(durations: np.ndarray, order: list[int]) -> float:
    return float(sum(durations[order[k], order[(k + 1) % len(order)]] for k in range(len(order))))


def run_size(n: int, args: argparse.Namespace, osrm: httpx.Client, star: httpx.Client, graph: Graph) -> dict[str, Any]:
    """Every set of `n` points asked of both servers: per set the two tours, the same-table ratio, the latencies."""
    rows = []
    for k in range(args.sets):
        points = road_points(graph, n, args.seed * 1000 + n * 10 + k)
        path = trip_path(points)
        bodies: dict[str, dict[str, Any]] = {}
        times: dict[str, list[float]] = {"osrm": [], "star": []}
        for rep in range(args.reps + 1):
            for name, client in (("osrm", osrm), ("star", star)):
                t0 = time.perf_counter()
                body = client.get(path).json()
                if rep:
                    times[name].append(time.perf_counter() - t0)
                bodies[name] = body
        if any(b.get("code") != "Ok" for b in bodies.values()):
            rows.append({"codes": {k: b.get("code") for k, b in bodies.items()}})
            continue
        table = np.array(star.get(path.replace("/trip/", "/table/", 1)).json()["durations"], dtype=np.float64)
        ours, theirs = visiting_order(bodies["star"]), visiting_order(bodies["osrm"])
        rows.append(
            {
                "osrm_s": bodies["osrm"]["trips"][0]["duration"],
                "star_s": bodies["star"]["trips"][0]["duration"],
                "same_table": cycle_cost(table, theirs) / max(cycle_cost(table, ours), 1e-9),
                "osrm_ms": 1e3 * statistics.median(times["osrm"]),
                "star_ms": 1e3 * statistics.median(times["star"]),
            }
        )
    return {"n": n, "rows": rows}


def report(results: list[dict[str, Any]]) -> None:
    head = (
        f"{'points':>6} {'sets':>4} | {'OSRM s':>8} {'ours s':>8} | {'ours/OSRM':>9} {'worst':>6} {'<':>3} {'>':>3}"
        f" | {'same table':>10} | {'OSRM ms':>8} {'ours ms':>8} {'ratio':>6}"
    )
    print(head)
    print("-" * len(head))
    for res in results:
        ok = [r for r in res["rows"] if "osrm_s" in r]
        failed = len(res["rows"]) - len(ok)
        if not ok:
            print(f"{res['n']:>6} {0:>4} | every set failed: {[r['codes'] for r in res['rows']]}")
            continue
        ratio = [r["star_s"] / r["osrm_s"] for r in ok]
        med = statistics.median
        osrm_ms, star_ms = med(r["osrm_ms"] for r in ok), med(r["star_ms"] for r in ok)
        print(
            f"{res['n']:>6} {len(ok):>4} | {med(r['osrm_s'] for r in ok):>8.1f} {med(r['star_s'] for r in ok):>8.1f}"
            f" | {med(ratio):>9.4f} {max(ratio):>6.3f} {sum(x < 1 - SAME for x in ratio):>3}"
            f" {sum(x > 1 + SAME for x in ratio):>3} | {med(r['same_table'] for r in ok):>10.4f}"
            f" | {osrm_ms:>8.1f} {star_ms:>8.1f} {star_ms / osrm_ms:>6.2f}" + (f"  ({failed} failed)" if failed else "")
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path, help="starroute car graph directory")
    ap.add_argument("--extract", type=Path, help="the OSM extract for OSRM (default: the graph's source)")
    ap.add_argument("--sizes", default="5,12,25,50,100")
    ap.add_argument("--sets", type=int, default=10, help="point sets per size")
    ap.add_argument("--reps", type=int, default=5, help="timed requests per set and engine")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    args = ap.parse_args()
    bin_dir = ensure_osrm(args.osrm_dir)
    if bin_dir is None:
        raise SystemExit("osrm-routed is not available (see harness/osrm_peer.py)")
    graph = load_graph(args.graph)
    extract = args.extract or find_extract(graph)
    if extract is None:
        raise SystemExit("the graph's extract was not found: give --extract")
    dataset = prepare_osrm(bin_dir, Path(extract), args.osrm_dir / "data")
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"graph {args.graph} ({graph.num_nodes} nodes), OSRM dataset {dataset}; sizes {sizes}, {args.sets} sets")
    osrm_proc, osrm_base = start_osrm(bin_dir, dataset, 1)
    star_proc, star_base = start_starroute(args.graph)
    try:
        with httpx.Client(base_url=osrm_base, timeout=120) as osrm, httpx.Client(base_url=star_base, timeout=120) as s:
            results = [run_size(n, args, osrm, s, graph) for n in sizes]
    finally:
        stop(osrm_proc)
        stop(star_proc)
    print()
    report(results)
    worst = max((r["star_s"] / r["osrm_s"] for res in results for r in res["rows"] if "osrm_s" in r), default=math.nan)
    print(f"\nworst ours/OSRM over every set: {worst:.4f}")


if __name__ == "__main__":
    main()

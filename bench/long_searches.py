"""Long searches beside short ones: CH p99 alone and beside `dijkstra` clients, with the long searches in search
processes (`app.api.search_processes`) against the thread pool at nice 19 (`STARROUTE_SEARCH_PROCESSES=0`).

    python bench/long_searches.py GRAPH_DIR [--pairs 500] [--seed 1] [--workers 2] [--rounds 6] [--duration 8]
        [--connections 16] [--long 4]

Two servers (`python -m app.server GRAPH_DIR --workers W`), one per way, both running throughout; in each round,
one after the other: wrk on OSRM `/route/v1` (`--connections`) alone, then again while `--long` more connections ask
for native `/route?…&algorithm=dijkstra`. Printed per way: the medians of CH p99 alone and beside, of their ratio per
round, of CH req/s both ways, and of the long searches' req/s. Needs Debian's wrk.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from app.engine.data import load  # noqa: E402
from bench.http_load import native_paths, osrm_paths, random_pairs  # noqa: E402
from bench.versus_osrm import wrk, wrk_result, wrk_start  # noqa: E402
from harness.servers import start_starroute, stop  # noqa: E402

WAYS = {"search processes": "1", "thread pool": "0"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--pairs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--duration", type=float, default=8.0, help="seconds per wrk run")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--long", type=int, default=4, help="connections asking for dijkstra routes")
    args = ap.parse_args()

    pairs = random_pairs(load(args.graph), args.pairs, args.seed)
    short = osrm_paths(pairs)
    long = [p + "&algorithm=dijkstra" for p in native_paths(pairs)]
    d, c = args.duration, args.connections
    servers = {}
    for way, n in WAYS.items():
        servers[way] = start_starroute(args.graph, args.workers, {"STARROUTE_SEARCH_PROCESSES": n})
    rows: dict[str, dict[str, list[float]]] = {way: {} for way in WAYS}
    try:
        for _, base in servers.values():
            wrk(base, short, 2, c)
            wrk(base, long, 2, args.long)
        for r in range(args.rounds):
            for way, (_, base) in servers.items():
                alone = wrk(base, short, d, c)
                bg = wrk_start(base, long, d + 2, args.long)
                time.sleep(1.0)  # the long searches under way first
                beside = wrk(base, short, d, c)
                slow = wrk_result(*bg)
                got = {
                    "CH p99 alone, ms": alone["p99_ms"],
                    "CH p99 beside, ms": beside["p99_ms"],
                    "ratio beside / alone": beside["p99_ms"] / alone["p99_ms"],
                    "CH req/s alone": alone["rps"],
                    "CH req/s beside": beside["rps"],
                    "dijkstra req/s": slow["rps"],
                }
                for k, v in got.items():
                    rows[way].setdefault(k, []).append(v)
                print(f"round {r + 1} {way:<17}" + "  ".join(f"{k} {v:.2f}" for k, v in got.items()), flush=True)
    finally:
        for proc, _ in servers.values():
            stop(proc)
    print(f"\nmedians of {args.rounds} rounds, {args.workers} workers, CH at {c} connections beside {args.long} long")
    print(f"{'':<24}" + "".join(f"{way:>18}" for way in WAYS))
    for k in rows[next(iter(WAYS))]:
        print(f"{k:<24}" + "".join(f"{statistics.median(rows[way][k]):>18.2f}" for way in WAYS))


if __name__ == "__main__":
    main()

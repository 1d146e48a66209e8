"""What each extra worker costs in memory: a server with 1, 2 and 3 workers after sustained mixed traffic.

    python bench/workers_memory.py GRAPH_DIR [--workers 1,2,3] [--duration 10] [--seed 1]

For each worker count: starts `python -m app.server GRAPH_DIR --workers W`, times it to healthy, drives wrk for
`--duration` seconds over OSRM routes, 25x25 tables and nearest (so every worker's search arrays are in use), then
reads every process's PSS and USS (psutil, `/proc/PID/smaps_rollup`). PSS splits shared pages (the memory-mapped
graph, and with forked workers everything the supervisor loaded before forking) between the processes that map
them, so the total PSS is what the server really holds; the table prints it and the increment per extra worker
against the one-worker server (the issue's goal: under 50 MiB per extra worker). `--breakdown` also prints, per
process, where its memory is by kind of mapping (`bench/smaps.py`: the graph's files, libraries, numba's machine
code, the malloc heap, Python's arenas, numpy arrays) as RSS, PSS and pages private to it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from app.engine.data import load  # noqa: E402
from bench.http_load import osrm_paths, random_pairs  # noqa: E402
from bench.smaps import table  # noqa: E402
from bench.soak import process_memory  # noqa: E402
from bench.versus_osrm import wrk  # noqa: E402
from harness.servers import start_starroute, stop  # noqa: E402


def mixed_paths(graph: Path, seed: int) -> list[str]:
    """OSRM routes, 25x25 tables and nearest over seeded random points, interleaved."""
    pairs = random_pairs(load(graph), 400, seed)
    routes = osrm_paths(pairs)
    pts = [a for a, _ in pairs]
    tables = [
        "/table/v1/driving/" + ";".join(f"{lon},{lat}" for lon, lat in pts[k : k + 25]) for k in range(0, 375, 25)
    ]
    nearest = [f"/nearest/v1/driving/{lon},{lat}" for lon, lat in pts[:100]]
    out: list[str] = []
    for i, r in enumerate(routes):
        out.append(r)
        if i % 4 == 0:
            out.append(nearest[i // 4 % len(nearest)])
        if i % 8 == 0:
            out.append(tables[i // 8 % len(tables)])
    return out


def measure(graph: Path, workers: int, paths: list[str], duration: float, split: bool = False) -> dict[str, float]:
    t0 = time.perf_counter()
    proc, base = start_starroute(graph, workers)
    ready = time.perf_counter() - t0
    try:
        got = wrk(base, paths, duration, 8)
        time.sleep(0.5)
        rows = process_memory(proc.pid)
        if split:
            for k, r in enumerate(rows):
                role = "supervisor" if k == 0 and workers > 1 else "process"
                print(table(int(r["pid"]), graph, f"\n{workers} worker(s): {role} {int(r['pid'])}"))
    finally:
        stop(proc)
    return {
        "workers": workers,
        "ready_s": ready,
        "rps": got["rps"],
        "non200": got["non200"],
        "pss": sum(r["pss"] for r in rows),
        "uss": sum(r["uss"] for r in rows),
        "procs": len(rows),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--workers", default="1,2,3")
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--breakdown", action="store_true", help="where each process's memory is, by kind of mapping")
    args = ap.parse_args()
    paths = mixed_paths(args.graph, args.seed)
    rows = [measure(args.graph, int(w), paths, args.duration, args.breakdown) for w in args.workers.split(",")]
    one = next((r for r in rows if r["workers"] == 1), None)
    print(f"{args.graph}: wrk {args.duration:g} s of mixed routes / 25x25 tables / nearest, 8 connections")
    print("| workers | processes | ready s | req/s | total PSS MiB | total USS MiB | PSS per extra worker MiB |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        extra = "" if one is None or r["workers"] == 1 else f"{(r['pss'] - one['pss']) / (r['workers'] - 1):.0f}"
        print(
            f"| {r['workers']} | {r['procs']} | {r['ready_s']:.2f} | {r['rps']:.0f} | {r['pss']:.0f} | {r['uss']:.0f} "
            f"| {extra} |"
        )
        if r["non200"]:
            print(f"  ({r['non200']:.0f} answers were not 200)")


if __name__ == "__main__":
    main()

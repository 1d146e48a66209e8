"""Issue 47 in one run: every item's benchmark, one after another on the same graph, each beside its peer.

    python bench/engine_work.py GRAPH_DIR --extract PBF [--only 1,2,4,5,6,7] [--quick] [--log FILE]

GRAPH_DIR is a graph preprocessed from PBF (Porto: `starroute preprocess ../shared/data/osm/porto_portugal.osm.pbf
-o /tmp/porto`). Each item runs its own benchmark in a child process (none of them shares a core with another: they
run in turn), its output printed under the item's heading as it comes, then one line of wall time:

- items 1, 3, 8 (engine time per route beside osrm-routed's whole request, nearest, what is held: route req/s,
  table, alternatives): `bench/versus_osrm.py` (osrm-routed 26.10 and starroute served side by side, wrk);
- item 2 (25 and 100 waypoints): `bench/waypoints.py --http` (both servers, one connection, p50);
- item 4 (matrices 2000 x 2000 and 10,000 x 10,000): `bench/matrix.py` (`starroute matrix` on Dask beside
  osrm-routed's `/table` blocks; no pandana);
- item 5 (kernels against RoutingKit's CCH): `python -m bench.routingkit` (customization, queries, memory);
- item 6 (the library's `route()` over the engine): `bench/library.py`;
- item 7 (start-up, warm): `bench/startup.py --only 10-node --cold-runs 0` (beside OSRM's own start).

`--only` picks items by number (1 runs 3 and 8 too); `--quick` shortens every run (fewer rounds and pairs: a
smoke run, not the figures). `--log FILE` also writes everything printed to FILE.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def items(graph: str, extract: str, quick: bool) -> list[tuple[str, str, list[str]]]:
    """(item numbers, heading, argv) per benchmark, in the order they run."""
    py = sys.executable
    rounds, duration, pairs = ("1", "2", "100") if quick else ("3", "6", "500")
    return [
        ("1,3,8", "engine time per request, nearest, route / table / alternatives beside osrm-routed",
         [py, str(HERE / "versus_osrm.py"), graph, "--extract", extract, "--rounds", rounds, "--duration", duration,
          "--pairs", pairs]),
        ("2", "25 and 100 waypoints beside osrm-routed",
         [py, str(HERE / "waypoints.py"), graph, "--http", "--routes", "5" if quick else "20"]),
        ("4", "matrices beside osrm-routed's /table blocks",
         [py, str(HERE / "matrix.py"), "--graph", graph, "--extract", extract, "--no-pandana", "--no-cluster",
          "--sizes", "1000" if quick else "2000,10000"]),
        ("5", "the CCH beside RoutingKit's",
         [py, "-m", "bench.routingkit", graph, "--queries", "200" if quick else "1000", "--rounds",
          "1" if quick else "2"]),
        ("6", "the library over the engine", [py, str(HERE / "library.py"), graph, "--pairs", pairs]),
        ("7", "start-up, warm, beside OSRM",
         [py, str(HERE / "startup.py"), "--only", "10-node", "--cold-runs", "0", "--warm-runs",
          "2" if quick else "5"]),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", help="a graph directory preprocessed from --extract")
    ap.add_argument("--extract", required=True, help="the OSM extract the graph was built from (OSRM builds it too)")
    ap.add_argument("--only", default="", help="comma-separated item numbers (default: all)")
    ap.add_argument("--quick", action="store_true", help="short runs: a smoke test of the whole, not the figures")
    ap.add_argument("--log", type=Path, help="also write everything printed to this file")
    args = ap.parse_args(argv)
    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    log = args.log.open("w", encoding="utf-8") if args.log else None

    def say(line: str) -> None:
        print(line, flush=True)
        if log is not None:
            log.write(line + "\n")
            log.flush()

    started = time.perf_counter()
    failed = []
    for numbers, heading, argv_ in items(args.graph, args.extract, args.quick):
        if wanted and not wanted & set(numbers.split(",")):
            continue
        say(f"\n=== item {numbers}: {heading}\n$ {' '.join(argv_)}")
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv_, cwd=HERE.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            say(line.rstrip("\n"))
        status = proc.wait()
        if status != 0:
            failed.append(numbers)
        say(f"--- item {numbers}: {time.perf_counter() - t0:.0f} s, exit status {status}")
    say(f"\nall items: {time.perf_counter() - started:.0f} s" + (f"; failed: {', '.join(failed)}" if failed else ""))
    if log is not None:
        log.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

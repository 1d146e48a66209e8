"""Everything issue 19 measures, starroute beside osrm-routed in the same run, printed as one table.

    python bench/versus_osrm.py GRAPH_DIR [--extract PBF] [--pairs 500] [--seed 1] [--workers 2] [--duration 8]
        [--connections 16] [--rounds 3] [--no-osrm] [--only route,table,alternatives,nearest,mixed,floor]
        [--baseline SRC_DIR]

Starts `python -m app.server GRAPH_DIR --workers W` and osrm-routed `-t W` (the `osrm-bindings` wheel, car.lua, CH,
built once per extract by `harness.osrm_peer`) on loopback ports, both running throughout, and measures with Debian's
wrk, each kind `--rounds` times with the two servers back to back in every round (the median is shown; whatever
else the machine does then hits both alike):
- **route**: `/route/v1/driving/a;b` over `--pairs` seeded random pairs, wrk `-c --connections`: req/s, p50, p99;
  then one connection: p50;
- **table 100x100**: `/table/v1/driving/…` on 100 points (5 seeded sets), one connection: p50;
- **alternatives**: `/route/v1/driving/a;b?alternatives=true`, one connection: p50 (and how many got one);
- **nearest**: `/nearest/v1/driving/p` and `?number=10`, one connection: p50;
- **engine** (beside route at one connection and nearest): starroute's own work per request, from its
  `Server-Timing: engine;dur=` header (mean and median over the wrk run), set against osrm-routed's whole
  per-request time (its p50 at one connection): what is left once the HTTP floor is taken out;
- **mixed** (starroute only, OSRM has no slow algorithms): CH route p99 at `--connections` alone, then the same
  while four more connections ask for native `/route?…&algorithm=dijkstra` (long searches), and the ratio;
- **floor**: a malformed route URL (`/route/v1/driving/1,2;x`, 400 `InvalidQuery` from both) at `--connections`:
  req/s of answering a request with no work in it, the HTTP stack's ceiling for every kind above; and its p50 at one
  connection, the least a request takes.
`--baseline SRC_DIR` serves the same graph from another source tree too (a third server, in every round).
The ratio column is starroute / osrm-routed (below 1 is faster for latencies, above 1 is more for req/s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx  # noqa: E402

from app.engine.data import load  # noqa: E402
from bench.http_load import LUA, LUA_ENGINE, find_extract, native_paths, osrm_paths, parse_wrk, random_pairs  # noqa: E402
from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402

KINDS = ("route", "table", "alternatives", "nearest", "mixed", "floor")
FLOOR_PATH = "/route/v1/driving/1,2;x"  # malformed: both servers answer 400 InvalidQuery without any search


def wrk_start(
    base: str, paths: list[str], duration: float, connections: int, engine: bool = False
) -> tuple[subprocess.Popen, str]:
    """wrk in the background (`--latency`, cycling through `paths`; `engine`: also gather the answers'
    `Server-Timing` engine time, which makes wrk parse every answer's headers); (process, Lua script path)."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LUA % ",".join(json.dumps(p) for p in paths) + (LUA_ENGINE if engine else ""))
    threads = min(2, connections)
    seconds = max(1, round(duration))
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "30s", "-s", f.name]
    proc = subprocess.Popen(cmd + [base], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return proc, f.name


def wrk_result(proc: subprocess.Popen, script: str) -> dict[str, float]:
    out, _ = proc.communicate()
    os.unlink(script)
    return parse_wrk(out)


def wrk(base: str, paths: list[str], duration: float, connections: int, engine: bool = False) -> dict[str, float]:
    return wrk_result(*wrk_start(base, paths, duration, connections, engine))


def table_paths(graph, seed: int, n: int = 100, sets: int = 5) -> list[str]:
    out = []
    for k in range(sets):
        pts = [a for a, _ in random_pairs(graph, n, seed * 1000 + k)]
        out.append("/table/v1/driving/" + ";".join(f"{lon},{lat}" for lon, lat in pts))
    return out


def with_alternatives(base: str, paths: list[str]) -> float:
    """Share of the first 100 pairs that get at least one alternative."""
    got = 0
    with httpx.Client(base_url=base, timeout=30.0) as c:
        for p in paths[:100]:
            r = c.get(p)
            got += r.status_code == 200 and len(r.json().get("routes", ())) > 1
    return got / min(100, len(paths))


def measure_kind(kind: str, base: str, pairs: list, tables: list[str], args) -> dict[str, dict]:
    """One measurement of one kind against one server: {row name: wrk result}."""
    route = osrm_paths(pairs)
    d, c = args.duration, args.connections
    if kind == "route":  # and at c=1: the whole time of one request, beside the engine's share of it
        return {"route": wrk(base, route, d, c), "route c1": wrk(base, route, d / 2, 1, engine=True)}
    if kind == "table":
        return {"table": wrk(base, tables, d / 2, 1)}
    if kind == "alternatives":
        return {"alternatives": wrk(base, [p + "?alternatives=true" for p in route], d / 2, 1)}
    if kind == "nearest":
        near = [f"/nearest/v1/driving/{a[0]},{a[1]}" for a, _ in pairs]
        return {
            "nearest": wrk(base, near, d / 2, 1, engine=True),
            "nearest10": wrk(base, [p + "?number=10" for p in near], d / 2, 1, engine=True),
        }
    if kind == "floor":  # and at c=1: the least time a request takes, what the engine's share comes on top of
        return {"floor": wrk(base, [FLOOR_PATH], d, c), "floor c1": wrk(base, [FLOOR_PATH], d / 2, 1)}
    assert kind == "mixed", kind
    rows = {"mixed alone": wrk(base, route, d, c)}
    slow = [p + "&algorithm=dijkstra" for p in native_paths(pairs)]
    bg = wrk_start(base, slow, d + 2, 4)
    time.sleep(1.0)  # the long searches under way first
    rows["mixed beside"] = wrk(base, route, d, c)
    rows["mixed dijkstra"] = wrk_result(*bg)
    return rows


def median_rows(runs: list[dict[str, dict]]) -> dict[str, dict]:
    """Per row and figure, the median over the rounds."""
    out: dict[str, dict] = {}
    for name in runs[0]:
        out[name] = {k: statistics.median(r[name][k] for r in runs) for k in runs[0][name]}
    return out


def measure_both(servers: dict[str, str], kinds: list[str], pairs: list, tables: list[str], args) -> dict:
    """Every kind, `--rounds` times, the servers back to back within each round (so that whatever else the machine
    does hits both alike); the median of each figure."""
    route = osrm_paths(pairs)
    for base in servers.values():
        wrk(base, route, 2, args.connections)  # warm both alike
    result: dict[str, dict[str, dict]] = {name: {} for name in servers}
    for kind in kinds:
        runs: dict[str, list] = {name: [] for name in servers}
        for _ in range(args.rounds):
            for name, base in servers.items():
                if kind == "mixed" and name == "osrm-routed":
                    continue  # OSRM has no slow algorithms
                runs[name].append(measure_kind(kind, base, pairs, tables, args))
        for name in servers:
            if runs[name]:
                result[name].update(median_rows(runs[name]))
    for name, base in servers.items():
        if "alternatives" in kinds:
            alt = [p + "?alternatives=true" for p in route]
            result[name]["alternatives"]["share"] = with_alternatives(base, alt)
    return result


def report(ours: dict[str, dict], theirs: dict[str, dict], args, base: dict[str, dict] | None = None) -> None:
    """The table: starroute, osrm-routed, their ratio; with `base` (`--baseline`) also that tree's figures and
    starroute's ratio to them."""

    def line(label: str, a: float | None, b: float | None, unit: str, c: float | None = None) -> None:
        fa = f"{a:>12.2f}" if a is not None else f"{'-':>12}"
        fb = f"{b:>12.2f}" if b is not None else f"{'-':>12}"
        ratio = f"{a / b:>8.2f}x" if a is not None and b else f"{'':>9}"
        extra = ""
        if base is not None:
            fc = f"{c:>12.2f}" if c is not None else f"{'-':>12}"
            extra = fc + (f"{a / c:>8.2f}x" if a is not None and c else f"{'':>9}")
        print(f"{label:<36}{fa}{fb}{ratio}{extra}  {unit}")

    def row(label: str, kind: str, key: str, unit: str) -> None:
        line(label, get(ours, kind, key), get(theirs, kind, key), unit, get(base or {}, kind, key))

    def get(rows: dict, kind: str, key: str) -> float | None:
        return rows[kind].get(key) if kind in rows else None

    def engine_line(what: str, kind: str, osrm_whole: float | None) -> None:
        """starroute's engine time per request (its `Server-Timing`, wrk's mean and median over the c=1 run) beside
        osrm-routed's whole per-request time (its c=1 p50 over HTTP): the work apart from the HTTP floor."""
        for key, stat in (("engine_p50_ms", "p50"), ("engine_mean_ms", "mean")):
            a, c = get(ours, kind, key), get(base or {}, kind, key)
            line(f"  {what} engine {stat} (Server-Timing)", a, osrm_whole, "ms (vs OSRM's whole)", c)

    w = args.workers
    head = f"{'base':>12}{'vs base':>9}" if base is not None else ""
    print(f"\n{'':<36}{'starroute':>12}{'osrm-routed':>12}{'ratio':>9}{head}")
    print(f"{'':<36}{f'{w} workers':>12}{f'-t {w}':>12}")
    for kind, key, unit in (("route", "rps", "req/s"), ("route", "p50_ms", "ms"), ("route", "p99_ms", "ms")):
        row(f"route c={args.connections} {key.removesuffix('_ms')}", kind, key, unit)
    row("table 100x100 p50 (c=1)", "table", "p50_ms", "ms")
    row("alternatives p50 (c=1)", "alternatives", "p50_ms", "ms")
    if "alternatives" in ours:
        a, b = ours["alternatives"]["share"], theirs.get("alternatives", {}).get("share")
        line("  pairs with an alternative", a * 100, b * 100 if b is not None else None, "%")
    osrm_c1 = get(theirs, "route c1", "p50_ms")
    row("route p50 (c=1)", "route c1", "p50_ms", "ms")
    engine_line("route", "route c1", osrm_c1)
    for kind, label in (("nearest", "nearest p50 (c=1)"), ("nearest10", "nearest number=10 p50 (c=1)")):
        row(label, kind, "p50_ms", "ms")
        engine_line(kind.removesuffix("10"), kind, get(theirs, kind, "p50_ms"))
    if "mixed alone" in ours:
        alone, beside = ours["mixed alone"]["p99_ms"], ours["mixed beside"]["p99_ms"]
        print(f"{f'mixed: CH p99 alone (c={args.connections})':<36}{alone:>12.2f}{'':>21}  ms")
        print(f"{'mixed: CH p99 beside 4 dijkstra':<36}{beside:>12.2f}{'':>12}{beside / alone:>8.2f}x  ms (vs alone)")
        dj = ours["mixed dijkstra"]
        print(f"{'  dijkstra clients: p50 / req/s':<36}{dj['p50_ms']:>12.2f}{dj['rps']:>12.1f}")
    row(f"floor: a 400 answer c={args.connections}", "floor", "rps", "req/s")
    row("floor: a 400 answer p50 (c=1)", "floor c1", "p50_ms", "ms")
    every = (ours, theirs, base or {})
    bad = {
        k: int(v["non200"]) for rows in every for k, v in rows.items() if v.get("non200") and not k.startswith("floor")
    }
    if bad:
        print(f"non-200 answers: {bad}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--extract", type=Path)
    ap.add_argument("--pairs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--duration", type=float, default=8.0, help="seconds per wrk run (half for the c=1 runs)")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    ap.add_argument("--no-osrm", action="store_true")
    ap.add_argument("--only", default=",".join(KINDS))
    ap.add_argument("--rounds", type=int, default=3, help="measurements per kind and server (the median is shown)")
    ap.add_argument(
        "--baseline",
        type=Path,
        help="another starroute source tree (e.g. `git archive main | tar -x -C DIR`) served too, with this Python, "
        "measured in the same rounds as a `base` column: a change's figures before and after in one run",
    )
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed (apt-get install wrk)")
    graph = load(args.graph)
    pairs = random_pairs(graph, args.pairs, args.seed)
    tables = table_paths(graph, args.seed)
    dataset = bin_dir = None
    if not args.no_osrm:
        extract = args.extract or find_extract(graph)
        bin_dir = ensure_osrm(args.osrm_dir)
        if bin_dir is not None and extract is not None:
            dataset = prepare_osrm(bin_dir, extract, args.osrm_dir / "data")
    counts = graph.manifest.get("counts", {})
    print(
        f"graph {args.graph} ({counts.get('nodes', '?')} nodes), {args.pairs} pairs (seed {args.seed}), "
        f"wrk {args.duration:g} s per run, medians of {args.rounds} rounds (the servers back to back in each), "
        f"{os.cpu_count()} CPUs"
    )
    running = {"starroute": start_starroute(args.graph, args.workers)}
    if args.baseline is not None:
        running["base"] = start_starroute(args.graph, args.workers, root=args.baseline.resolve())
    try:
        if dataset is not None and bin_dir is not None:
            running["osrm-routed"] = start_osrm(bin_dir, dataset, args.workers)
        kinds = [k for k in KINDS if k in set(args.only.split(","))]
        result = measure_both({k: v[1] for k, v in running.items()}, kinds, pairs, tables, args)
    finally:
        for proc, _ in running.values():
            stop(proc)
    ours, theirs = result["starroute"], result.get("osrm-routed", {})
    report(ours, theirs, args, result.get("base"))


if __name__ == "__main__":
    main()

"""HTTP benchmark: starroute's OSRM and native route endpoints side by side with the real osrm-routed.

    python bench/http_load.py GRAPH_DIR [--extract PBF] [--pairs 1000] [--seed 1] [--workers 1,2] [--duration 10]
                         [--connections 16] [--wrk-threads 2] [--osrm-dir /tmp/osrm] [--no-osrm] [--oracle]

Draws `--pairs` seeded random pairs near nodes of the largest component, starts `python -m app.server` on a free
loopback port (1 and 2 workers), and for each endpoint (`/route/v1/driving/…`, native `/route?from&to`) measures:
sequential requests over one keep-alive httpx connection (p50/p99 latency, req/s), then wrk (`--latency`, a Lua
script cycling through the same paths) at `--connections` connections: p50/p99 and req/s. The same is done for
osrm-routed (`-t` = workers) on the same extract when it is available: the PyPI wheel `osrm-bindings==26.10.0`
(downloaded with `pip download --no-deps` and unpacked into `--osrm-dir` if absent), whose `osrm-extract` /
`osrm-contract` (car.lua) build the dataset once per extract. Only loopback addresses are used.

`--oracle` sends both servers the same good and bad OSRM requests and compares HTTP status, `code`, and the key
sets of the response objects, printing every difference (routes themselves differ: the profiles are not the same).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
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
import numpy as np  # noqa: E402

from harness.osrm_corpus import _diff, _shape  # noqa: E402  (one shape comparison for both oracles)

ROOT = HERE.parent

from app.engine.data import load  # noqa: E402
from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402

EXTRACT_DIRS = (ROOT.parent / "shared" / "data" / "osm", ROOT / "data")


# --- servers -------------------------------------------------------------------------------------------------------


# --- load generators -----------------------------------------------------------------------------------------------
def random_pairs(graph, n: int, seed: int) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    rng = random.Random(seed)
    main = np.nonzero(np.asarray(graph.node_component) == 0)[0]
    lon, lat = np.asarray(graph.node_lon) / 1e7, np.asarray(graph.node_lat) / 1e7

    def point() -> tuple[float, float]:
        v = int(main[rng.randrange(main.shape[0])])
        return round(float(lon[v]) + rng.uniform(-2e-4, 2e-4), 6), round(float(lat[v]) + rng.uniform(-2e-4, 2e-4), 6)

    return [(point(), point()) for _ in range(n)]


def osrm_paths(pairs: list) -> list[str]:
    return [f"/route/v1/driving/{a[0]},{a[1]};{b[0]},{b[1]}" for a, b in pairs]


def native_paths(pairs: list) -> list[str]:
    return [f"/route?from={a[0]},{a[1]}&to={b[0]},{b[1]}" for a, b in pairs]


def sequential(base: str, paths: list[str]) -> dict[str, float]:
    lat = []
    bad = 0
    with httpx.Client(base_url=base, timeout=30.0) as c:
        for p in paths[:20]:  # warm the connection and caches
            c.get(p)
        t0 = time.perf_counter()
        for p in paths:
            t = time.perf_counter()
            try:
                r = c.get(p)
            except httpx.RemoteProtocolError:  # osrm-routed closes a keep-alive connection after 512 requests
                r = c.get(p)
            lat.append(time.perf_counter() - t)
            bad += r.status_code != 200
        total = time.perf_counter() - t0
    q = statistics.quantiles(lat, n=100)
    return {"p50_ms": q[49] * 1e3, "p99_ms": q[98] * 1e3, "rps": len(paths) / total, "non200": bad}


LUA = """local paths = {%s}
local i = 0
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
"""


# appended to LUA: every answer's `Server-Timing: engine;dur=<ms>` kept per wrk thread, gathered when wrk is done and
# printed as one line (`parse_wrk` reads it); answers without the header (osrm-routed) print nothing
LUA_ENGINE = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
engine = {}
response = function(status, headers, body)
  local v = headers["server-timing"] or headers["Server-Timing"]
  if v then engine[#engine + 1] = tonumber(string.match(v, "engine;dur=([%d.]+)")) end
end
done = function(summary, latency, requests)
  local all = {}
  for _, t in ipairs(threads) do for _, x in ipairs(t:get("engine")) do all[#all + 1] = x end end
  if #all == 0 then return end
  table.sort(all)
  local sum = 0
  for _, x in ipairs(all) do sum = sum + x end
  io.write(string.format("engine_ms %f %f %d\\n", sum / #all, all[math.floor(#all / 2) + 1], #all))
end
"""


def _ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    assert m, text
    return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]


def run_wrk(base: str, paths: list[str], duration: int, connections: int, threads: int) -> dict[str, float] | None:
    if shutil.which("wrk") is None:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LUA % ",".join(json.dumps(p) for p in paths))
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency", "-s", f.name, base]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 60).stdout
    os.unlink(f.name)
    return parse_wrk(out)


def parse_wrk(out: str) -> dict[str, float]:
    """wrk's `--latency` report: p50_ms, p99_ms, rps (NaN where absent) and non200 (the non-2xx/3xx count); with
    `LUA_ENGINE` in the script also engine_mean_ms and engine_p50_ms (the servers' `Server-Timing` engine time)."""
    res: dict[str, float] = {}
    for pct, key in (("50%", "p50_ms"), ("99%", "p99_ms")):
        m = re.search(rf"^\s+{pct}\s+(\S+)", out, flags=re.M)
        res[key] = _ms(m.group(1)) if m else float("nan")
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    res["rps"] = float(m.group(1)) if m else float("nan")
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    res["non200"] = int(m.group(1)) if m else 0
    m = re.search(r"^engine_ms ([\d.]+) ([\d.]+) (\d+)$", out, flags=re.M)  # LUA_ENGINE's line, when asked for
    if m:
        res["engine_mean_ms"], res["engine_p50_ms"] = float(m.group(1)), float(m.group(2))
    return res


# --- oracle --------------------------------------------------------------------------------------------------------
def oracle_requests(pairs: list) -> list[str]:
    (a, b), (c, _) = pairs[0], pairs[1]
    ab = f"{a[0]},{a[1]};{b[0]},{b[1]}"
    abc = f"{ab};{c[0]},{c[1]}"
    R = "/route/v1/driving/"
    good = [
        R + ab,
        R + ab + "?steps=true",
        R + ab + "?overview=full&geometries=geojson",
        R + ab + "?overview=false",
        R + ab + "?geometries=polyline6&overview=simplified",
        R + ab + "?annotations=true&overview=full",
        R + ab + "?annotations=duration,distance,speed",
        R + ab + "?alternatives=true",
        R + ab + "?alternatives=2&continue_straight=false",
        R + ab + "?radiuses=unlimited;200",
        R + ab + "?generate_hints=false",
        R + ab + "?skip_waypoints=true",
        R + ab + ".json",
        R + abc + "?waypoints=0;2",
        R + abc + "?steps=true&overview=by_legs",
        f"/nearest/v1/driving/{a[0]},{a[1]}",
        f"/nearest/v1/driving/{a[0]},{a[1]}?number=3",
        f"/table/v1/driving/{abc}",
        f"/table/v1/driving/{abc}?sources=0&destinations=1;2",
        f"/table/v1/driving/{abc}?annotations=duration,distance",
        f"/table/v1/driving/{abc}?annotations=distance",
    ]
    bad = [
        "/",
        "/route",
        "/route/v1/driving",
        "/route/v1/driving/",
        "/foo/v1/driving/" + ab,
        "/route/v2/driving/" + ab,
        "/route/vx/driving/" + ab,
        R + "abc,1;2,3",
        R + "nan,43.7;7.42,43.73",
        R + "1e400,43.7;7.42,43.73",
        R + "200,43.7;7.42,43.73",
        R + "7.4,95;7.42,43.73",
        R + f"{a[0]},{a[1]}",
        R + ab + ";",
        R + ab + ".xml",
        R + ab + "?steps=yes",
        R + ab + "?foo=1",
        R + ab + "?radiuses=5",
        R + ab + "?radiuses=0.001;0.001",
        R + ab + "?alternatives=5",
        R + abc + "?waypoints=1;2",
        R + ";".join([f"{a[0]},{a[1]}"] * 501),
        f"/nearest/v1/driving/{a[0]},{a[1]}?number=0",
        f"/nearest/v1/driving/{a[0]},{a[1]}?number=101",
        f"/table/v1/driving/{a[0]},{a[1]}",
        f"/table/v1/driving/{ab}?sources=5",
        f"/table/v1/driving/{ab}?annotations=speed",
        f"/table/v1/driving/{';'.join([f'{a[0]},{a[1]}'] * 101)}",
    ]
    return good + bad


def run_oracle(ours: str, theirs: str, pairs: list) -> int:
    mismatches = 0
    with httpx.Client(timeout=30.0) as c:
        for url in oracle_requests(pairs):
            r1, r2 = c.get(ours + url), c.get(theirs + url)
            j1 = r1.json() if r1.headers.get("content-type", "").startswith("application/json") else {}
            j2 = r2.json() if r2.headers.get("content-type", "").startswith("application/json") else {}
            c1, c2 = j1.get("code"), j2.get("code")
            problems = []
            if r1.status_code != r2.status_code:
                problems.append(f"status {r1.status_code} vs {r2.status_code}")
            if c1 != c2:
                problems.append(f"code {c1} vs {c2}")
            if r1.status_code == r2.status_code == 200:
                problems += _diff(_shape(j1), _shape(j2))
            mark = "ok " if not problems else "DIFF"
            mismatches += bool(problems)
            print(f"{mark} {r1.status_code} {str(c1):<15} {url[:90]}")
            for p in problems:
                print(f"       {p}")
    print(f"\noracle: {mismatches} of {len(oracle_requests(pairs))} requests differ in status, code or shape")
    return mismatches


# --- main ----------------------------------------------------------------------------------------------------------
def find_extract(graph) -> Path | None:
    name = graph.manifest.get("source", {}).get("name", "")
    for d in EXTRACT_DIRS:
        if (d / name).exists():
            return d / name
    return None


def fmt(row: dict[str, float] | None) -> str:
    if row is None:
        return f"{'-':>9}{'-':>9}{'-':>9}"
    extra = f"  ({int(row['non200'])} non-200)" if row.get("non200") else ""
    return f"{row['p50_ms']:>9.2f}{row['p99_ms']:>9.2f}{row['rps']:>9.0f}{extra}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--extract", type=Path, help="OSM extract for OSRM (default: the graph's source, if found)")
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--wrk-threads", type=int, default=2)
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    ap.add_argument("--no-osrm", action="store_true")
    ap.add_argument("--oracle", action="store_true", help="only compare answers with osrm-routed")
    args = ap.parse_args()

    graph = load(args.graph)
    pairs = random_pairs(graph, args.pairs, args.seed)
    workers = [int(w) for w in args.workers.split(",")]
    bin_dir = dataset = None
    if not args.no_osrm:
        extract = args.extract or find_extract(graph)
        bin_dir = ensure_osrm(args.osrm_dir)
        if bin_dir is not None and extract is not None:
            dataset = prepare_osrm(bin_dir, extract, args.osrm_dir / "data")
        elif extract is None:
            print("no extract found for OSRM (pass --extract)", file=sys.stderr)

    if args.oracle:
        if dataset is None:
            sys.exit("--oracle needs osrm-routed and the extract")
        p1, ours = start_starroute(args.graph, 1)
        p2, theirs = start_osrm(bin_dir, dataset, 1)
        try:
            sys.exit(1 if run_oracle(ours, theirs, pairs) else 0)
        finally:
            stop(p1)
            stop(p2)

    counts = graph.manifest.get("counts", {})
    print(
        f"graph {args.graph} ({counts.get('nodes', '?')} nodes, {counts.get('arcs', '?')} arcs), {args.pairs} pairs "
        f"(seed {args.seed}); wrk -t{args.wrk_threads} -c{args.connections} -d{args.duration}s; "
        f"{os.cpu_count()} CPUs"
    )
    print(f"\n{'server':<34}{'mode':<12}{'p50 ms':>9}{'p99 ms':>9}{'req/s':>9}")
    targets: list[tuple[str, str, str, int]] = []
    for w in workers:
        targets += [("starroute", "osrm", "/route/v1", w), ("starroute", "native", "/route", w)]
        if dataset is not None:
            targets.append(("osrm-routed", "osrm", "/route/v1", w))
    for w in workers:
        running = {}
        try:
            running["starroute"] = start_starroute(args.graph, w)
            if dataset is not None:
                running["osrm-routed"] = start_osrm(bin_dir, dataset, w)
            for server, api, endpoint, tw in targets:
                if tw != w:
                    continue
                base = running[server][1]
                paths = osrm_paths(pairs) if api == "osrm" else native_paths(pairs)
                label = f"{server} {endpoint} ({w} {'thread' if server == 'osrm-routed' else 'worker'}{'s' * (w > 1)})"
                print(f"{label:<34}{'sequential':<12}{fmt(sequential(base, paths))}", flush=True)
                wrk = run_wrk(base, paths, args.duration, args.connections, args.wrk_threads)
                print(f"{'':<34}{f'wrk c={args.connections}':<12}{fmt(wrk)}", flush=True)
        finally:
            for proc, _ in running.values():
                stop(proc)


if __name__ == "__main__":
    main()

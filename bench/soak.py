"""Sustained mixed load: every kind of request at once against one server for a fixed time, latency per kind,
server errors, and the server's memory over time.

    python bench/soak.py GRAPH_DIR [--duration 60] [--workers 2] [--seed 1] [--sample 1.0]

One wrk process per request kind runs for `--duration` seconds, all at once, on loopback: CH routes (8
connections), 25x25 tables (2), nearest (2), malformed requests (1: bad coordinates, unknown options, a bad
service, 4xx expected), and long `dijkstra` routes on the native API (1, about 5 % of the requests). wrk's own
p50/p99 per kind; a Lua counter per kind of 5xx answers (the goal: none) and of answers of the wrong class (a good
request refused, a malformed one accepted). The server's resident memory (all its processes, RSS and PSS) is sampled
every `--sample` seconds: after warm-up it should stay flat.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import psutil  # noqa: E402

from app.engine.data import load  # noqa: E402
from bench.http_load import parse_wrk, random_pairs  # noqa: E402
from harness.servers import start_starroute, stop  # noqa: E402

# wrk runs `request`/`response` in each thread's own Lua state; `done` reads every thread's counters back (globals)
LUA = """local paths = {%s}
local i = 0
bad = 0
wrong = 0
local expect = %d
threads = {}
function setup(thread) table.insert(threads, thread) end
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
response = function(status, headers, body)
  if status >= 500 then bad = bad + 1 end
  if (expect == 200 and status ~= 200) or (expect == 400 and (status < 400 or status >= 500)) then
    wrong = wrong + 1
  end
end
done = function(summary, latency, requests)
  local b, w = 0, 0
  for _, t in ipairs(threads) do
    b = b + t:get("bad")
    w = w + t:get("wrong")
  end
  io.write(string.format("SOAK errors5xx=%%d wrong=%%d\\n", b, w))
end
"""


def kinds(graph_dir: Path, seed: int) -> dict[str, tuple[list[str], int, int]]:
    """kind -> (paths, connections, expected status)."""
    g = load(graph_dir)
    rng = random.Random(seed)
    pairs = random_pairs(g, 400, seed)
    routes = [f"/route/v1/driving/{a[0]:.6f},{a[1]:.6f};{b[0]:.6f},{b[1]:.6f}?overview=false" for a, b in pairs]
    tables = []
    for _ in range(20):
        pts = rng.sample(pairs, 25)
        coords = ";".join(f"{a[0]:.6f},{a[1]:.6f}" for a, _ in pts)
        tables.append(f"/table/v1/driving/{coords}")
    nearest = [f"/nearest/v1/driving/{a[0]:.6f},{a[1]:.6f}?number=3" for a, _ in pairs]
    (a, b) = pairs[0]
    malformed = [
        "/route/v1/driving/181,0;0,0",
        f"/route/v1/driving/{a[0]},{a[1]};{b[0]},{b[1]}?alternatives=maybe",
        "/route/v1/driving/not-a-coordinate",
        f"/flying/v1/driving/{a[0]},{a[1]};{b[0]},{b[1]}",
        f"/table/v1/driving/{a[0]},{a[1]}?sources=7",
        f"/route?from={a[0]},{a[1]}&to=nowhere",
    ]
    dijkstra = [f"/route?from={a[0]:.6f},{a[1]:.6f}&to={b[0]:.6f},{b[1]:.6f}&algorithm=dijkstra" for a, b in pairs]
    return {
        "route (CH)": (routes, 8, 200),
        "table 25x25": (tables, 2, 200),
        "nearest": (nearest, 2, 200),
        "malformed": (malformed, 1, 400),
        "dijkstra": (dijkstra, 1, 200),
    }


def run_kind(base: str, paths: list[str], conns: int, expect: int, duration: int, out: dict[str, object]) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LUA % (",".join(json.dumps(p) for p in paths), expect))
    cmd = ["wrk", "-t1", f"-c{conns}", f"-d{duration}s", "--latency", "-s", f.name, base]
    text = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 120).stdout
    os.unlink(f.name)
    res = parse_wrk(text)
    m = re.search(r"SOAK errors5xx=(\d+) wrong=(\d+)", text)
    res["5xx"], res["wrong"] = (int(m.group(1)), int(m.group(2))) if m else (-1, -1)
    m = re.search(r"Socket errors: (.*)", text)
    out.update(res)
    out["socket"] = m.group(1) if m else "none"


def process_memory(pid: int) -> list[dict[str, float]]:
    """RSS, PSS and USS (MiB) of the server and of each of its worker processes, one row each (those read before a
    process that vanished meanwhile)."""
    rows: list[dict[str, float]] = []
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            m = p.memory_full_info()
            mib = {"rss": m.rss, "pss": getattr(m, "pss", m.rss), "uss": getattr(m, "uss", m.rss)}
            rows.append({"pid": p.pid, **{k: v / 2**20 for k, v in mib.items()}})
    except psutil.Error:
        pass
    return rows


def memory(pid: int) -> tuple[float, float]:
    """RSS and PSS (MiB) of the server and its worker processes."""
    rows = process_memory(pid)
    return sum(r["rss"] for r in rows), sum(r["pss"] for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--duration", type=int, default=60)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sample", type=float, default=1.0, help="seconds between memory samples")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install wrk)")
    plan = kinds(args.graph, args.seed)
    proc, base = start_starroute(args.graph, workers=args.workers)
    try:
        results: dict[str, dict[str, object]] = {k: {} for k in plan}
        threads = [
            threading.Thread(target=run_kind, args=(base, paths, c, e, args.duration, results[k]))
            for k, (paths, c, e) in plan.items()
        ]
        samples: list[tuple[float, float, float]] = []
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            samples.append((time.perf_counter() - t0, *memory(proc.pid)))
            time.sleep(args.sample)
        for t in threads:
            t.join()
    finally:
        stop(proc)
    conns = sum(c for _, c, _ in plan.values())
    print(f"soak: {args.duration} s, {args.workers} workers, {conns} connections over {len(plan)} kinds ({args.graph})")
    print()
    print("| kind | connections | req/s | p50 ms | p99 ms | 5xx | wrong status | socket errors |")
    print("|---|---|---|---|---|---|---|---|")
    for k, (_, c, _) in plan.items():
        r = results[k]
        print(
            f"| {k} | {c} | {r.get('rps', float('nan')):.0f} | {r.get('p50_ms', float('nan')):.2f} | "
            f"{r.get('p99_ms', float('nan')):.2f} | {r.get('5xx')} | {r.get('wrong')} | {r.get('socket')} |"
        )
    print()
    if samples:
        warm = [s for s in samples if s[0] >= min(10.0, args.duration / 4)] or samples
        first, last = warm[0], warm[-1]
        peak = max(s[2] for s in samples)
        print(
            f"memory (all processes): PSS {first[2]:.0f} MiB at {first[0]:.0f} s, {last[2]:.0f} MiB at {last[0]:.0f} s "
            f"(change {last[2] - first[2]:+.0f} MiB after warm-up), peak {peak:.0f} MiB; RSS {last[1]:.0f} MiB at end"
        )


if __name__ == "__main__":
    main()

"""A fingerprint of every answer a server gives on a graph: seeded OSRM routes (steps, annotations, alternatives,
several waypoints, each algorithm), tables, nearest, trips, matches, native GeoJSON routes and isochrones, each
answer hashed (volatile timing fields removed), so a restructuring can show it changed no answer.

    python -m bench.answers GRAPH_DIR [--tree DIR] [--routes 500] [--seed 1] [--port 5099] [--workers 1] [--show]

`--tree DIR` serves from another checkout (`python -m app.server` run there), so two trees answer the same requests
on the same graph: equal lines mean equal answers. Prints one line per request group (count and hash) and a total.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

VOLATILE = {"stats", "compile_ms", "took_ms", "elapsed_ms", "timing"}


def _clean(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in sorted(obj.items()) if k not in VOLATILE}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(tree: Path, graph: Path, port: int, workers: int = 1) -> subprocess.Popen:
    env = {**os.environ, "STARROUTE_SEARCH_PROCESSES": "0"}
    argv = [sys.executable, "-m", "app.server", str(graph), "--port", str(port), "--workers", str(workers)]
    proc = subprocess.Popen(argv, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while time.time() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"server in {tree} exited with {proc.returncode}")
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("server did not come up")


def points(graph: Path, n: int, rng: random.Random) -> list[str]:
    lon = np.load(graph / "node_lon.npy", mmap_mode="r")
    lat = np.load(graph / "node_lat.npy", mmap_mode="r")
    comp = np.load(graph / "node_component.npy", mmap_mode="r")
    main = np.flatnonzero(np.asarray(comp) == 0)
    out = []
    for _ in range(n):
        v = int(main[rng.randrange(len(main))])
        dx, dy = rng.uniform(-3e-4, 3e-4), rng.uniform(-3e-4, 3e-4)
        out.append(f"{lon[v] / 1e7 + dx:.6f},{lat[v] / 1e7 + dy:.6f}")
    return out


def requests(graph: Path, n_routes: int, seed: int, algorithms: list[str]) -> dict[str, list[str]]:
    rng = random.Random(seed)
    pts = points(graph, 4 * n_routes + 400, rng)
    it = iter(pts)
    out: dict[str, list[str]] = {}
    full = "steps=true&overview=full&annotations=true&geometries=polyline6"
    out["route"] = [f"/route/v1/driving/{next(it)};{next(it)}?{full}" for _ in range(n_routes)]
    out["route_alternatives"] = [
        f"/route/v1/driving/{next(it)};{next(it)}?alternatives=3&overview=simplified" for _ in range(n_routes // 5)
    ]
    out["route_waypoints"] = [
        f"/route/v1/driving/{next(it)};{next(it)};{next(it)}?steps=true&continue_straight=false"
        for _ in range(n_routes // 5)
    ]
    out["route_exclude"] = [
        f"/route/v1/driving/{next(it)};{next(it)}?exclude=motorway&overview=false" for _ in range(n_routes // 10)
    ]
    pairs = [(next(it), next(it)) for _ in range(n_routes // 10)]
    out["native_route"] = [f"/route?from={a}&to={b}&algorithm={alg}" for alg in algorithms for a, b in pairs]
    out["table"] = [
        "/table/v1/driving/" + ";".join(next(it) for _ in range(25)) + "?annotations=duration,distance"
        for _ in range(4)
    ]
    out["nearest"] = [f"/nearest/v1/driving/{next(it)}?number=3" for _ in range(100)]
    out["trip"] = ["/trip/v1/driving/" + ";".join(next(it) for _ in range(8)) + "?steps=true" for _ in range(10)]
    out["isochrone"] = [f"/isochrone?point={next(it)}&minutes=2,4" for _ in range(10)]
    return out


def match_requests(c: httpx.Client, graph: Path, seed: int, k: int) -> list[str]:
    """Traces: every third point of seeded routes' geometries, with timestamps 5 s apart."""
    rng = random.Random(seed + 7)
    pts = points(graph, 2 * k * 3, rng)
    out = []
    for i in range(0, len(pts) - 1, 2):
        body = c.get(f"/route/v1/driving/{pts[i]};{pts[i + 1]}?overview=full&geometries=geojson").json()
        if body.get("code") != "Ok":
            continue
        coords = body["routes"][0]["geometry"]["coordinates"][::3][:60]
        if len(coords) < 3:
            continue
        ts = ";".join(str(1_700_000_000 + 5 * j) for j in range(len(coords)))
        out.append("/match/v1/driving/" + ";".join(f"{x:.6f},{y:.6f}" for x, y in coords) + f"?timestamps={ts}")
        if len(out) == k:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--routes", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--show", action="store_true", help="print each answer's hash")
    ap.add_argument("--workers", type=int, default=1, help="server workers (2: forked from a warm supervisor)")
    args = ap.parse_args(argv)
    graph = args.graph.resolve()
    port = args.port or _free_port()
    proc = serve(args.tree.resolve(), graph, port, args.workers)
    total = hashlib.sha256()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as c:
            algorithms = c.get("/health").json().get("algorithms") or ["ch"]
            groups = requests(graph, args.routes, args.seed, list(algorithms))
            groups["match"] = match_requests(c, graph, args.seed, 20)
            for name, paths in groups.items():
                h = hashlib.sha256()
                codes: dict[str, int] = {}
                for p in paths:
                    r = c.get(p)
                    body = _clean(r.json())
                    code = f"{r.status_code} {body.get('code', '') if isinstance(body, dict) else ''}"
                    codes[code] = codes.get(code, 0) + 1
                    blob = json.dumps([p, r.status_code, body], sort_keys=True).encode()
                    h.update(blob)
                    if args.show:
                        print(f"  {hashlib.sha256(blob).hexdigest()[:12]} {p[:100]}")
                total.update(h.digest())
                print(f"{name:20s} {len(paths):5d}  {h.hexdigest()[:16]}  {dict(sorted(codes.items()))}")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(f"{'total':20s} {'':5s}  {total.hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

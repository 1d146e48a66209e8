"""Routes through many waypoints (issue 47, item 2), in process: the OSRM handler and `Engine.route` per request.

    python bench/waypoints.py GRAPH_DIR [--points 25,100] [--routes 20] [--seed 1] [--rounds 3] [--tree DIR]
        [--dump FILE] [--profile N] [--http] [--osrm-dir /tmp/starroute-osrm]

Draws `--routes` seeded routes of each `--points` count, random points near nodes of the largest component within
3 km of the graph's busiest place (its bounding box's centre on Porto), and times per route, in this process:
- **osrm**: `/route/v1/driving/...` through `app.api.osrm.dispatch.handle` (parse, snap, legs, JSON), OSRM's
  defaults (simplified overview, no steps), as a server answers it apart from the HTTP stack;
- **engine**: `Engine.route` (snapping, the legs, the route's assembly), no JSON.
Each route's best of `--rounds` rounds; prints p50 and mean (ms). `--tree DIR` imports the code of another checkout
(before and after in the same conditions: run both, alternately). `--dump FILE` writes every route's OSRM answer with
`steps=true&annotations=true&overview=full` and with the defaults, one JSON body a line (compare two trees' files byte
for byte). `--profile N` prints cProfile's top N functions of the `--points` routes' engine calls instead.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def points_near_centre(graph, n: int, rng: random.Random, radius_deg: float = 0.03) -> list[tuple[float, float]]:
    """`n` points near random largest-component nodes within `radius_deg` (about 3 km) of the bounding box's centre."""
    import numpy as np

    lon, lat = np.asarray(graph.node_lon) / 1e7, np.asarray(graph.node_lat) / 1e7
    main = np.nonzero(np.asarray(graph.node_component) == 0)[0]
    clon, clat = (lon[main].min() + lon[main].max()) / 2, (lat[main].min() + lat[main].max()) / 2
    near = main[(np.abs(lon[main] - clon) < radius_deg) & (np.abs(lat[main] - clat) < radius_deg)]
    out = []
    for _ in range(n):
        v = int(near[rng.randrange(near.shape[0])])
        x, y = float(lon[v]) + rng.uniform(-2e-4, 2e-4), float(lat[v]) + rng.uniform(-2e-4, 2e-4)
        out.append((round(x, 6), round(y, 6)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--points", default="25,100")
    ap.add_argument("--routes", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tree", type=Path, default=HERE.parent)
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("--http", action="store_true")
    ap.add_argument("--osrm-dir", type=Path, default=Path("/tmp/starroute-osrm"))
    args = ap.parse_args()
    if args.http:  # the harness of this tree, the server of `--tree`
        sys.path.insert(0, str(HERE.parent))
        over_http(args)
        return
    sys.path.insert(0, str(args.tree.resolve()))

    import asyncio

    from app.api.osrm import dispatch
    from app.api.service import Service
    from app.engine.requests import RouteRequest, Waypoints
    from app.settings import Settings

    svc = Service(Settings(graph_dir=args.graph))
    svc.open()
    engine = svc.engine
    assert engine is not None
    loop = asyncio.new_event_loop()
    counts = [int(x) for x in args.points.split(",")]
    rng = random.Random(args.seed)
    routes = {k: [points_near_centre(engine.router.graph, k, rng) for _ in range(args.routes)] for k in counts}

    def path(pts: list[tuple[float, float]]) -> str:
        return "/route/v1/driving/" + ";".join(f"{x},{y}" for x, y in pts)

    def osrm(pts: list[tuple[float, float]], qs: str = "") -> bytes:
        status, body = loop.run_until_complete(dispatch.handle(svc, path(pts), qs))
        return body

    def native(pts: list[tuple[float, float]]) -> object:
        return engine.route(RouteRequest(Waypoints(pts)))

    for k in counts:  # warm: kernels loaded, caches filled
        for pts in routes[k][:3]:
            osrm(pts)
            native(pts)
    if args.dump is not None:
        with args.dump.open("wb") as f:
            for k in counts:
                for pts in routes[k]:
                    f.write(osrm(pts, "steps=true&annotations=true&overview=full") + b"\n")
                    f.write(osrm(pts) + b"\n")
        print(f"wrote {args.dump}")
        return
    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        for k in counts:
            for pts in routes[k]:
                prof.runcall(native, pts)
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.profile)
        return
    clock = time.perf_counter
    print(f"tree {args.tree.resolve()}, graph {args.graph}, {args.routes} routes each (seed {args.seed}), "
          f"per route the best of {args.rounds} rounds, ms")  # fmt: skip
    print(f"{'points':>8}{'osrm p50':>11}{'osrm mean':>11}{'engine p50':>12}{'engine mean':>13}")
    for k in counts:
        best = {"osrm": [float("inf")] * args.routes, "engine": [float("inf")] * args.routes}
        for _ in range(args.rounds):
            for name, fn in (("osrm", osrm), ("engine", native)):
                for i, pts in enumerate(routes[k]):
                    t = clock()
                    fn(pts)
                    best[name][i] = min(best[name][i], clock() - t)
        o, e = best["osrm"], best["engine"]
        print(f"{k:>8}{statistics.median(o) * 1e3:>11.2f}{statistics.mean(o) * 1e3:>11.2f}"
              f"{statistics.median(e) * 1e3:>12.2f}{statistics.mean(e) * 1e3:>13.2f}")  # fmt: skip


def over_http(args: argparse.Namespace) -> None:
    """`--http`: the routes' OSRM URLs on starroute and osrm-routed, one request at a time, best of `--rounds`."""
    import httpx

    from bench.http_load import find_extract
    from floor.format.graph import load_graph
    from harness.osrm_peer import ensure_osrm, prepare_osrm
    from harness.servers import start_osrm, start_starroute, stop

    graph = load_graph(args.graph)
    rng = random.Random(args.seed)
    counts = [int(x) for x in args.points.split(",")]
    routes = {k: [points_near_centre(graph, k, rng) for _ in range(args.routes)] for k in counts}
    running = {"starroute": start_starroute(args.graph, 1, root=args.tree.resolve())}
    try:
        bin_dir, extract = ensure_osrm(args.osrm_dir), find_extract(graph)
        if bin_dir is not None and extract is not None:
            running["osrm-routed"] = start_osrm(bin_dir, prepare_osrm(bin_dir, extract, args.osrm_dir / "data"), 1)
        print(f"tree {args.tree.resolve()}, graph {args.graph}, {args.routes} routes each (seed {args.seed}), over "
              f"HTTP one at a time, per route the best of {args.rounds} rounds, p50 ms")  # fmt: skip
        print(f"{'points':>8}" + "".join(f"{name:>14}" for name in running) + f"{'ratio':>8}")
        with httpx.Client(timeout=60.0) as client:
            for k in counts:
                paths = ["/route/v1/driving/" + ";".join(f"{x},{y}" for x, y in pts) for pts in routes[k]]
                best = {name: [float("inf")] * len(paths) for name in running}
                for _, base in running.values():  # warm
                    for p in paths[:3]:
                        assert client.get(base + p).json()["code"] == "Ok"
                for _ in range(args.rounds):
                    for name, (_, base) in running.items():
                        for i, p in enumerate(paths):
                            t = time.perf_counter()
                            client.get(base + p)
                            best[name][i] = min(best[name][i], time.perf_counter() - t)
                p50 = {name: statistics.median(v) * 1e3 for name, v in best.items()}
                ratio = p50["starroute"] / p50["osrm-routed"] if "osrm-routed" in p50 else float("nan")
                print(f"{k:>8}" + "".join(f"{v:>14.2f}" for v in p50.values()) + f"{ratio:>7.2f}x")
    finally:
        for proc, _ in running.values():
            stop(proc)


if __name__ == "__main__":
    main()

"""The Python library's cost over the engine under it: `graph.route(a, b)` against the engine work it asks for.

    python bench/library.py GRAPH_DIR [--pairs 500] [--seed 1] [--rounds 5]

Over `--pairs` seeded random pairs (`bench.http_load.random_pairs`, as the HTTP benchmarks draw them), per request,
in this process, the passes alternating so that whatever else the machine does hits all alike (the median of each
pair's best of `--rounds` rounds):
- **library**: `starroute.load(GRAPH).route(a, b)`, the `Route` it returns, its figures read (`distance_m`);
- **engine**: `Engine.route(RouteRequest)`, the facade call the library makes (snapping, the CH search, the route's
  assembly);
- **search**: `Query.routes` on phantoms snapped beforehand (the search and assembly alone).
The ratio library / engine is the library's overhead (goal of issue 47: at most 1.5x).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import starroute  # noqa: E402
from app.engine.facade import RouteRequest, Waypoints  # noqa: E402
from bench.http_load import random_pairs  # noqa: E402
from starroute.graph import SNAP_RADIUS_M  # noqa: E402


def per_request(fn: Callable[[int], object], n: int) -> list[float]:
    """Seconds of `fn(i)` for each i < n."""
    out = []
    clock = time.perf_counter
    for i in range(n):
        t = clock()
        fn(i)
        out.append(clock() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--pairs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    graph = starroute.load(args.graph)
    engine = graph.engine
    pairs = random_pairs(engine.router.graph, args.pairs, args.seed)
    requests = [RouteRequest(Waypoints([a, b], None, default_radius_m=SNAP_RADIUS_M, detail=True)) for a, b in pairs]
    resolved = [engine.resolve_route(r) for r in requests]
    query = engine.router.query()

    passes: dict[str, Callable[[int], object]] = {
        "library route()": lambda i: graph.route(pairs[i][0], pairs[i][1]).distance_m,
        "engine (Engine.route)": lambda i: engine.route(requests[i]),
        "search (Query.routes)": lambda i: query.routes(resolved[i][1], resolved[i][2]),
    }
    for fn in passes.values():  # warm: kernels loaded, caches filled
        per_request(fn, min(50, len(pairs)))
    best: dict[str, list[float]] = {name: [float("inf")] * len(pairs) for name in passes}
    for _ in range(args.rounds):
        for name, fn in passes.items():
            best[name] = [min(a, b) for a, b in zip(best[name], per_request(fn, len(pairs)), strict=True)]
    p50 = {name: statistics.median(v) * 1e6 for name, v in best.items()}
    print(f"graph {args.graph}, {len(pairs)} pairs (seed {args.seed}), per request the best of {args.rounds} rounds")
    print(f"\n{'':<26}{'p50 us':>10}{'mean us':>10}{'/ engine':>10}")
    engine_p50 = p50["engine (Engine.route)"]
    for name, v in best.items():
        print(f"{name:<26}{p50[name]:>10.1f}{statistics.mean(v) * 1e6:>10.1f}{p50[name] / engine_p50:>9.2f}x")


if __name__ == "__main__":
    main()

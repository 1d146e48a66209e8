"""Per-request options benchmark: what excluding classes, avoiding areas, isochrones and alternatives cost.

    python bench/options.py GRAPH_DIR [--pairs 500] [--seed 1] [--extract PBF] [--osrm-dir DIR] [--no-osrm]

Engine level, one thread, the same seeded random pairs (largest SCC) for every row; each option is timed beside the
plain request it modifies, so the ratios hold on a noisy machine:

- exclude: CH on the hierarchy contracted without motorways / tolls vs the plain CH (one hierarchy per excludable
  set, so the ratio should be near 1);
- avoid: ALT with a 1 km square on the middle of the best route forbidden vs plain ALT (arc intersection included);
- isochrone: 15 minutes from random points (one cutoff search plus the reached pieces; contours excluded);
- alternatives: starroute's plateaus vs osrm-routed (CH, the same extract, car.lua) over HTTP, both servers on one
  worker, with alternatives=1 and =2: how often one is found, its stretch (duration / best) and how much of its
  distance it shares with the best route, and the p50 latency of the request.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.data import load  # noqa: E402
from app.engine.errors import EngineError  # noqa: E402
from app.engine.router import Router  # noqa: E402
from app.engine.types import RouteOptions  # noqa: E402
from bench.http_load import find_extract  # noqa: E402
from floor.format.units import COORD_SCALE  # noqa: E402
from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402


def random_points(router: Router, n: int, seed: int) -> list[tuple[float, float]]:
    g = router.graph
    rng = np.random.default_rng(seed)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    v = rng.choice(main, n)
    lon = np.asarray(g.node_lon)[v] / COORD_SCALE + rng.uniform(-2e-4, 2e-4, n)
    lat = np.asarray(g.node_lat)[v] / COORD_SCALE + rng.uniform(-2e-4, 2e-4, n)
    return [(round(float(a), 6), round(float(b), 6)) for a, b in zip(lon, lat, strict=True)]


def ms(xs: list[float], q: float = 0.5) -> float:
    return 1000.0 * float(np.quantile(np.asarray(xs), q)) if xs else float("nan")


def timed(fn, *args, **kw):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


def row(name: str, base: list[float], opt: list[float]) -> None:
    print(
        f"  {name:<38} p50 {ms(base):8.3f} -> {ms(opt):8.3f} ms   p90 {ms(base, 0.9):8.3f} -> {ms(opt, 0.9):8.3f} ms"
        f"   ratio p50 {ms(opt) / ms(base):5.2f}"
    )


def bench_exclude(router: Router, pairs_xy: list) -> None:
    q = router.query()
    sets = [s for s in (("motorway",), ("toll",)) if router.exclude_set(s) is not None]
    print(f"exclude ({len(pairs_xy)} pairs, CH; points snapped off the excluded roads):")
    for classes in sets:
        mask = router.exclude_set(classes).mask
        base, opt, failed = [], [], 0
        for a, b in pairs_xy:
            try:
                ph = router.snap_waypoints([a, b], exclude_mask=mask)
                t_opt = timed(q.routes, ph, RouteOptions(algorithm="ch", exclude=frozenset(classes)))[1]
            except EngineError:
                failed += 1
                continue
            base.append(timed(q.routes, ph, RouteOptions(algorithm="ch"))[1])
            opt.append(t_opt)
        row(f"exclude={','.join(classes)} ({len(opt)} routed, {failed} not)", base, opt)


def square(lon: float, lat: float, half_m: float) -> dict:
    dlat = half_m / 111_195.0
    dlon = dlat / max(np.cos(np.radians(lat)), 1e-6)
    ring = [[lon - dlon, lat - dlat], [lon + dlon, lat - dlat], [lon + dlon, lat + dlat], [lon - dlon, lat + dlat]]
    return {"type": "Polygon", "coordinates": [ring + [ring[0]]]}


def bench_avoid(router: Router, pairs: list) -> None:
    from app.engine.features.areas import parse_areas

    q = router.query()
    base, opt, arcs_t, changed, blocked = [], [], [], 0, 0
    for ph in pairs:
        best, t0 = timed(q.routes, ph, RouteOptions(algorithm="alt"))
        c = best.best.coordinates
        mid = c[len(c) // 2]
        forbidden, t1 = timed(router.forbidden_arcs, parse_areas(square(float(mid[0]), float(mid[1]), 500.0)))
        try:
            router.check_outside(ph, forbidden)
            res, t2 = timed(q.routes, ph, RouteOptions(algorithm="alt", forbidden=forbidden))
        except EngineError:
            blocked += 1
            continue
        base.append(t0)
        opt.append(t1 + t2)
        arcs_t.append(t1)
        changed += res.best.weight != best.best.weight
    print(f"avoid a 1 km square on the route's middle ({len(opt)} pairs, {blocked} with no way round or inside it):")
    row("ALT plain -> ALT avoiding (incl. arcs)", base, opt)
    print(f"  forbidden_arcs alone p50 {ms(arcs_t):.3f} ms; the detour changed the weight on {changed}/{len(opt)}")


def bench_isochrone(router: Router, points: list, minutes: float = 15.0) -> None:
    q = router.query()
    times, settled, pieces = [], [], []
    for p in points:
        try:
            ph = router.snap_waypoints([p])[0]
        except EngineError:
            continue
        (out, n), t = timed(q.isochrone, ph, [int(minutes * 600)])
        times.append(t)
        settled.append(n)
        pieces.append(len(out[0]))
    print(
        f"isochrone {minutes:g} min ({len(times)} points): p50 {ms(times):.2f} ms, p90 {ms(times, 0.9):.2f} ms; "
        f"settled p50 {int(statistics.median(settled))}, reached pieces p50 {int(statistics.median(pieces))}"
    )


# -- alternatives over HTTP, beside osrm-routed ---------------------------------------------------------------------
def shared_fraction(best: dict, alt: dict) -> float:
    """Share of `alt`'s distance on segments the best route uses too (segments as rounded coordinate pairs)."""

    def segments(route: dict) -> dict[tuple, float]:
        pts = [tuple(np.round(p, 5)) for p in route["geometry"]["coordinates"]]
        out: dict[tuple, float] = {}
        for a, b in zip(pts, pts[1:], strict=False):
            if a != b:
                lat = np.radians((a[1] + b[1]) / 2)
                out[(a, b)] = 111_195.0 * float(np.hypot((b[0] - a[0]) * np.cos(lat), b[1] - a[1]))
        return out

    sb, sa = segments(best), segments(alt)
    total = sum(sa.values())
    return sum(d for s, d in sa.items() if s in sb) / total if total else 0.0


def alternatives_stats(client: httpx.Client, pairs: list, k: int) -> dict:
    found, stretch, share, lat, errors = 0, [], [], [], 0
    for a, b in pairs:
        path = f"/route/v1/driving/{a[0]},{a[1]};{b[0]},{b[1]}"
        t = time.perf_counter()
        r = client.get(path, params={"alternatives": str(k), "overview": "full", "geometries": "geojson"})
        lat.append(time.perf_counter() - t)
        body = r.json()
        if body.get("code") != "Ok":
            errors += 1
            continue
        routes = body["routes"]
        if len(routes) > 1:
            found += 1
        for alt in routes[1:]:
            stretch.append(alt["duration"] / max(routes[0]["duration"], 1e-9))
            share.append(shared_fraction(routes[0], alt))
    return {"found": found, "stretch": stretch, "share": share, "latency": lat, "errors": errors, "n": len(pairs)}


def bench_alternatives(graph_dir: Path, pairs: list, extract: Path | None, osrm_dir: Path, use_osrm: bool) -> None:
    servers = [("starroute", *start_starroute(graph_dir, 1))]
    try:
        if use_osrm and extract is not None:
            bin_dir = ensure_osrm(osrm_dir)
            if bin_dir is not None:
                dataset = prepare_osrm(bin_dir, extract, osrm_dir / "data")
                servers.append(("osrm-routed", *start_osrm(bin_dir, dataset, 1)))
        print(f"alternatives over HTTP ({len(pairs)} pairs, one worker each, sequential requests):")
        for k in (1, 2):
            for name, _, base in servers:
                with httpx.Client(base_url=base, timeout=60) as c:
                    alternatives_stats(c, pairs[:20], k)  # warm
                    s = alternatives_stats(c, pairs, k)
                n_alt = len(s["stretch"])
                print(
                    f"  {name:<12} alternatives={k}: found for {s['found']:4d}/{s['n']}"
                    f" ({100 * s['found'] / s['n']:5.1f} %),"
                    f" {n_alt:4d} alternatives, stretch mean {np.mean(s['stretch']) if n_alt else float('nan'):.3f}"
                    f" max {max(s['stretch'], default=float('nan')):.3f}, shared mean"
                    f" {np.mean(s['share']) if n_alt else float('nan'):.2f}, p50 {ms(s['latency']):.2f} ms"
                    f" p90 {ms(s['latency'], 0.9):.2f} ms, errors {s['errors']}"
                )
    finally:
        for _, proc, _ in servers:
            stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--pairs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--extract", type=Path, help="OSM extract for OSRM (default: the graph's source, if found)")
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    ap.add_argument("--no-osrm", action="store_true")
    ap.add_argument("--only", choices=["exclude", "avoid", "isochrone", "alternatives"], action="append")
    args = ap.parse_args()
    router = Router(load(args.graph))
    only = set(args.only or ["exclude", "avoid", "isochrone", "alternatives"])
    points = random_points(router, 2 * args.pairs, args.seed)
    pairs_xy = list(zip(points[::2], points[1::2], strict=True))
    pairs = []
    for a, b in pairs_xy:
        try:
            pairs.append(router.snap_waypoints([a, b]))
        except EngineError:
            pass
    print(f"graph {args.graph}: {router.graph.num_nodes} nodes, {router.graph.num_arcs} arcs; {len(pairs)} pairs")
    q = router.query()
    for ph in pairs[:20]:  # compile / load every kernel first
        q.routes(ph, RouteOptions(algorithm="ch"))
        q.routes(ph, RouteOptions(algorithm="alt"))
    if "exclude" in only:
        bench_exclude(router, pairs_xy)
    if "avoid" in only:
        bench_avoid(router, pairs)
    if "isochrone" in only:
        bench_isochrone(router, points[:100])
    if "alternatives" in only:
        extract = args.extract or find_extract(router.graph)
        bench_alternatives(args.graph, pairs_xy, extract, args.osrm_dir, not args.no_osrm)


if __name__ == "__main__":
    main()

"""Departure time (issue 44): time-dependent routes, tables and isochrones beside the static ones, and the issue's
done-criteria checked on the same graph.

    python bench/departure_time.py GRAPH_DIR [--routes 300] [--seed 1] [--table 100] [--http]

The time profiles are the graph's (`td_factor` / `td_arc_row`, written by `starroute customize`); a graph without
them gets the issue's rush-hour profile in process (50 % of free flow weekdays 07:30-09:00 on every motorway, trunk
and primary road and their links, `rush_hour`, installed with `departure.install_profiles`). In process
(`Engine.route` / `table` / `isochrone` wall time, one thread but the table's two): p50 / p90 of the static route,
of `depart_at` at Monday 08:00 (rush hour), 03:00 and at random times of the week, of `arrive_by` 09:00; a
`--table` x `--table` table; a 10-minute isochrone. `--http`: the same routes over HTTP against `app.server` (its
graph's own profiles: none before td-input's arrays, then the search is the free-flow one). Valhalla's figures
(`harness/valhalla_peer.py`, Valhalla 3.9.1 with the same predicted traffic) go beside them once that peer exists.

Checks printed (each PASS/FAIL with its counts): at Monday 03:00 every duration equals the static fastest one (the
oracle without profiles) within 0.1 %; at 08:00 no route is faster than at 03:00 and routes over the profiled roads
take longer; FIFO over 24 departures per pair; `arrive_by` round-trips (depart at the answer's departure: arrive by
the time; one decisecond later: after it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402

MAIN = ("motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link")


def rush_hour(graph: Any) -> tuple[np.ndarray, np.ndarray]:
    """The issue's profile: one row, 50 % weekdays 07:30-09:00, on the main roads and their links."""
    from app.engine.search.timedep import factors_from_percent
    from floor.format.units import ROAD_CLASS_CODE, SLOTS

    pct = np.full((1, SLOTS), 100)
    for day in range(5):
        pct[0, day * 96 + 30 : day * 96 + 36] = 50
    main = [ROAD_CLASS_CODE[c] for c in MAIN]
    row = np.where(np.isin(np.asarray(graph.arc_class), main), 0, -1).astype(np.int32)
    return factors_from_percent(pct), row


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


def line(name: str, xs: list[float], base: list[float] | None = None) -> None:
    p50, p90 = pct(xs, 50) * 1000, pct(xs, 90) * 1000
    extra = f"  ({p50 / (pct(base, 50) * 1000):.2f}x static)" if base else ""
    print(f"  {name:<34} p50 {p50:8.2f} ms  p90 {p90:8.2f} ms  n={len(xs)}{extra}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--routes", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--table", type=int, default=100)
    ap.add_argument("--http", action="store_true", help="also over HTTP (app.server, 1 worker)")
    args = ap.parse_args()

    from app.engine.data import load
    from app.engine.errors import NoRoute, NoSegment
    from app.engine.facade import Engine, IsochroneRequest, RouteRequest, TableRequest, Waypoints
    from app.engine.features.departure import TDModel, install_profiles, parse_time, td_model, td_route_at, week_time

    graph = load(args.graph)
    engine = Engine(graph)
    model = td_model(engine.router)
    if model.profiled:
        print(f"profiles: the graph's ({len(graph.arrays['td_factor'])} rows)")
    else:
        model = install_profiles(engine.router, *rush_hour(graph))
        print("profiles: none in the graph; the issue's rush hour installed in process (50 % weekdays 07:30-09:00 on "
              f"{int((model.road_row >= 0).sum())} of {len(model.road_row)} road arcs)")  # fmt: skip
    t0 = time.perf_counter()
    model.hierarchy  # noqa: B018 - the lower-bound hierarchy, customized once
    print(f"lower-bound hierarchy customized in {time.perf_counter() - t0:.2f} s")

    rng = np.random.default_rng(args.seed)
    big = np.flatnonzero(np.asarray(graph.node_component) == 0)
    nodes = rng.choice(big, 2 * args.routes)
    pts = [(float(graph.node_lon[v]) / 1e7 + 2e-5, float(graph.node_lat[v]) / 1e7 + 2e-5) for v in nodes]
    pairs = list(zip(pts[::2], pts[1::2], strict=True))

    def req(a: Any, b: Any, **kw: Any) -> RouteRequest:
        return RouteRequest(Waypoints([a, b], default_radius_m=1000), **kw)

    # warm: every kernel loaded, and the rush hour's window hierarchies customized, before timing (a server warms
    # them with its first requests, in the background)
    for kw in ({}, {"depart_at": "2026-12-07T08:00"}, {"arrive_by": "2026-12-07T09:00"},
               {"depart_at": "2026-12-07T08:00", "algorithm": "dijkstra"}):  # fmt: skip
        for a, b in pairs[-20:] if "algorithm" not in kw else pairs[:2]:
            try:
                engine.route(req(a, b, **kw))
            except (NoRoute, NoSegment):
                pass
            model.wait()
    print(f"warm-up: {model.customizations} lower-bound hierarchies customized ({model.hierarchy_seconds:.1f} s)")

    times: dict[str, list[float]] = {k: [] for k in ("static", "mon08", "mon03", "random", "arrive")}
    settled: dict[str, list[int]] = {"mon08": [], "mon03": [], "random": []}
    dur: dict[str, dict[int, float]] = {"static": {}, "mon08": {}, "mon03": {}}
    phantoms: dict[int, Any] = {}
    week = ["2026-12-07", "2026-12-08", "2026-12-09", "2026-12-10", "2026-12-11", "2026-12-12", "2026-12-13"]
    for i, (a, b) in enumerate(pairs):
        when_random = f"{week[int(rng.integers(0, 7))]}T{int(rng.integers(0, 24)):02d}:{int(rng.integers(0, 60)):02d}"
        try:
            t = time.perf_counter()
            s = engine.route(req(a, b))
            times["static"].append(time.perf_counter() - t)
        except (NoRoute, NoSegment):
            continue
        dur["static"][i] = s.best.duration_s
        phantoms[i] = s.phantoms
        asks = (("mon08", {"depart_at": "2026-12-07T08:00"}), ("mon03", {"depart_at": "2026-12-07T03:00"}),
                ("random", {"depart_at": when_random}), ("arrive", {"arrive_by": "2026-12-07T09:00"}))  # fmt: skip
        for key, kw in asks:
            t = time.perf_counter()
            ans = engine.route(req(a, b, **kw))
            times[key].append(time.perf_counter() - t)
            if key in settled:
                settled[key].append(sum(leg.stats.settled for leg in ans.best.legs))
            if key in dur:
                dur[key][i] = ans.best.duration_s

    print(f"\nin process, {len(times['static'])} routes ({args.graph.name}):")
    line("static route (CH)", times["static"])
    line("depart_at Monday 08:00 (rush)", times["mon08"], times["static"])
    line("depart_at Monday 03:00", times["mon03"], times["static"])
    line("depart_at random time of the week", times["random"], times["static"])
    line("arrive_by Monday 09:00", times["arrive"], times["static"])
    for key in settled:
        print(f"    settled per route, {key}: p50 {pct(settled[key], 50):.0f}, p90 {pct(settled[key], 90):.0f}")

    print(
        f"    lower-bound hierarchies customized so far: {model.customizations} ({model.hierarchy_seconds:.1f} s, "
        "windows in the background)"
    )
    model.wait()

    # table
    n = args.table
    tpts = pts[: 2 * n : 2][:n]
    treq = TableRequest(Waypoints(tpts, default_radius_m=1000))
    src, dst, ex = engine.resolve_table(treq)
    engine.table(src[:2], dst[:2], ex)
    t = time.perf_counter()
    engine.table(src, dst, ex)
    t_static = time.perf_counter() - t
    tdreq = TableRequest(Waypoints(tpts, default_radius_m=1000), depart_at="2026-12-07T08:00")
    when = engine.when(tdreq)
    engine.table(src[:2], dst[:2], ex, None, when)
    t_td = []
    for _ in range(2):
        t = time.perf_counter()
        tbl = engine.table(src, dst, ex, None, when)
        t_td.append(time.perf_counter() - t)
    print(f"  table {len(src)}x{len(dst)}: static {t_static * 1000:.1f} ms, depart_at 08:00 {min(t_td) * 1000:.1f} ms "
          f"(TD-Dijkstra per source to its last destination, 2 threads; {np.isnan(tbl.durations_s).sum()} "
          "unreachable cells)")  # fmt: skip

    # isochrone
    iso_s, iso_t = [], []
    for a, _ in pairs[:20]:
        try:
            ireq = IsochroneRequest(Waypoints([a], default_radius_m=1000), [600.0])
            ph, ex_ = engine.resolve_isochrone(ireq)
            t = time.perf_counter()
            engine.isochrone(ireq, ph, ex_)
            iso_s.append(time.perf_counter() - t)
            treq2 = IsochroneRequest(Waypoints([a], default_radius_m=1000), [600.0], depart_at="2026-12-07T08:00")
            t = time.perf_counter()
            engine.isochrone(treq2, ph, ex_)
            iso_t.append(time.perf_counter() - t)
        except (NoRoute, NoSegment):
            continue
    line("isochrone 10 min, static", iso_s)
    line("isochrone 10 min, depart_at 08:00", iso_t, iso_s)

    # checks
    print("\nchecks:")
    flat = TDModel(engine.router, None, None)
    legs = engine.router.legs
    off = 0
    for i in dur["mon03"]:
        res, _ = td_route_at(flat, legs, phantoms[i], 0, 0, "td", oracle=True)
        want = res.best.duration_s
        if abs(dur["mon03"][i] - want) > 0.001 * want:
            off += 1
    print(
        f"  03:00 = static fastest (oracle, no profiles) within 0.1 %: {'PASS' if off == 0 else 'FAIL'} "
        f"({len(dur['mon03']) - off}/{len(dur['mon03'])})"
    )
    faster = sum(dur["mon08"][i] < dur["mon03"][i] for i in dur["mon08"])
    longer = sum(dur["mon08"][i] > dur["mon03"][i] for i in dur["mon08"])
    print(f"  08:00 never faster than 03:00: {'PASS' if faster == 0 else 'FAIL'} ({faster} faster); longer at 08:00: "
          f"{longer}/{len(dur['mon08'])} {'PASS' if longer > 0 else 'FAIL'}")  # fmt: skip
    tz = model.tz
    bad_fifo = bad_rt = pairs_checked = 0
    for i in list(phantoms)[:30]:
        arrivals = []
        for hour in range(24):
            tau0 = week_time(parse_time(f"2026-12-07T{hour:02d}:30", tz, "t"), tz)
            arrivals.append(td_route_at(model, legs, phantoms[i], tau0, 0, "td")[1])
            arrivals.append(td_route_at(model, legs, phantoms[i], tau0 + 1, 0, "td")[1])
        bad_fifo += any(y < x for x, y in zip(arrivals, arrivals[1:], strict=False))
        a, b = pairs[i]
        ans = engine.route(req(a, b, arrive_by="2026-12-07T08:45"))
        limit = parse_time("2026-12-07T08:45", tz, "b")
        dep = week_time(parse_time(ans.departure, tz, "d"), tz)
        again = engine.route(req(a, b, depart_at=ans.departure))
        after = td_route_at(model, legs, ans.phantoms, dep + 1, 0, "td")[1]
        ok = parse_time(again.arrival, tz, "a") <= limit and after > week_time(limit, tz)
        bad_rt += not ok
        pairs_checked += 1
    print(f"  FIFO, 48 departures per pair: {'PASS' if bad_fifo == 0 else 'FAIL'} ({pairs_checked - bad_fifo}/"
          f"{pairs_checked})")  # fmt: skip
    print(f"  arrive_by round trip: {'PASS' if bad_rt == 0 else 'FAIL'} ({pairs_checked - bad_rt}/{pairs_checked})")

    if args.http:
        http(args.graph, pairs[: min(200, len(pairs))])
    print("\nValhalla 3.9.1 (same predicted traffic): not wired into this benchmark yet (harness/valhalla_peer.py)")


def http(graph_dir: Path, pairs: list[Any]) -> None:
    """The same routes over HTTP (one connection, sequential), static and depart_at 08:00."""
    import httpx

    from harness.servers import start_starroute, stop

    proc, base = start_starroute(graph_dir, workers=1)
    try:
        with httpx.Client(base_url=base, timeout=60) as c:
            out: dict[str, list[float]] = {"static": [], "depart_at 08:00": []}
            for extra in ({}, {"depart_at": "2026-12-07T08:00"}):
                for a, b in pairs[:5]:
                    c.get("/route", params={"from": f"{a[0]},{a[1]}", "to": f"{b[0]},{b[1]}", "overview": "false",
                                            **extra})  # fmt: skip
            for a, b in pairs:
                for name, extra in (("static", {}), ("depart_at 08:00", {"depart_at": "2026-12-07T08:00"})):
                    params = {"from": f"{a[0]},{a[1]}", "to": f"{b[0]},{b[1]}", "overview": "false", **extra}
                    t = time.perf_counter()
                    r = c.get("/route", params=params)
                    if r.status_code == 200:
                        out[name].append(time.perf_counter() - t)
        own = "its own" if (graph_dir / "td_factor.npy").exists() else "none, so free-flow searches"
        print(f"\nover HTTP (native GET /route, 1 worker, 1 connection; the server's graph profiles: {own}):")
        line("static route", out["static"])
        line("depart_at Monday 08:00", out["depart_at 08:00"], out["static"])
        print(f"  ({statistics.mean(out['static']) * 1000:.2f} ms mean static)")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()

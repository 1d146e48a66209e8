"""Departure time (issue 44): time-dependent routes, tables and isochrones beside the static ones and beside
Valhalla 3.9 with the same speeds, and the issue's done-criteria checked on the same graph.

    python bench/departure_time.py GRAPH_DIR --work DIR [--routes 200] [--seed 1] [--table 100] [--http]
                                   [--valhalla EXTRACT]

The time profiles are the graph's own (`td_factor` / `td_arc_row`). A graph without them is hard-linked into
`DIR/graph` (once), given the issue's rush hour by `bench/td_profiles.py` (50 % of free flow weekdays 07:30-09:00 on
every motorway, trunk and primary road and their links, into `DIR/profiles`) and `starroute customize
--time-profiles --segment-profiles`, and measured there. In process (`Engine.route` / `table` / `isochrone` wall
time, one thread but the table's two): p50 / p90 of the static route, of `depart_at` at Monday 08:00 (rush hour),
03:00 and at random times of the week, of `arrive_by` 09:00; a `--table` x `--table` table; a 10-minute isochrone;
the lower-bound hierarchies kept and the process's memory. `--http`: the same pairs over HTTP (native GET /route, one
connection) against `app.server` serving the customized graph: static, Monday 03:00 and 08:00. `--valhalla
EXTRACT`: Valhalla 3.9.1 (`harness/valhalla_peer.py`, built once into `DIR/valhalla`) with the same rush hour as
predicted traffic, the same pairs without a time and at Monday 03:00 and 08:00 (POST /route, one connection), and
its durations beside starroute's (the median ratio per time).

Checks printed (each PASS/FAIL with its counts): at Monday 03:00 every duration equals the static fastest one (the
oracle without profiles) within 0.1 %; at 08:00 no route is faster than at 03:00 and routes over the profiled roads
take longer; FIFO over 48 departures per pair; `arrive_by` round-trips (depart at the answer's departure: arrive by
the time; one decisecond later: after it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402

MAIN = ("motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link")


def customized_graph(graph_dir: Path, work: Path) -> Path:
    """`graph_dir` when it holds time profiles; else a hard-linked copy in `work/graph` with the rush hour of
    `bench/td_profiles.py` applied by `starroute customize` (made once)."""
    from floor.format.graph import load_graph

    if "td_factor" in load_graph(graph_dir, check=False).arrays:
        return graph_dir
    out = work / "graph"
    if out.exists() and "td_factor" in load_graph(out, check=False).arrays:
        return out
    shutil.rmtree(out, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    shutil.copytree(graph_dir, out, symlinks=True, copy_function=os.link)  # customize writes new files only
    from bench.td_profiles import write_profiles

    tp, sp, n = write_profiles(graph_dir, work / "profiles")
    cli = Path(sys.executable).with_name("starroute")
    cmd = [str(cli), "customize", str(out), "--time-profiles", str(tp), "--segment-profiles", str(sp)]
    t = time.perf_counter()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    print(f"{' '.join(cmd[1:])}: {time.perf_counter() - t:.1f} s ({n} segments)")
    print("  " + "\n  ".join(x for x in done.stdout.splitlines() if "profile" in x or "time" in x))
    return out


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
    ap.add_argument("--work", type=Path, default=Path("/tmp/starroute-departure"), help="the customized copy, profiles")
    ap.add_argument("--valhalla", type=Path, metavar="EXTRACT", help="Valhalla 3.9.1 on this extract beside")
    args = ap.parse_args()
    args.graph = customized_graph(args.graph, args.work)

    from app.engine.data import load
    from app.engine.errors import NoRoute, NoSegment
    from app.engine.facade import Engine, IsochroneRequest, RouteRequest, TableRequest, Waypoints
    from app.engine.features.departure import TDModel, parse_time, td_model, td_route_at, week_time

    graph = load(args.graph)
    engine = Engine(graph)
    model = td_model(engine.router)
    if not model.profiled:
        raise SystemExit(f"{args.graph} holds no time profiles")
    print(f"profiles: the graph's ({args.graph}: {len(graph.arrays['td_factor'])} rows, "
          f"{int((model.road_row >= 0).sum())} of {len(model.road_row)} road arcs timed, {model.tz})")  # fmt: skip
    import psutil

    def rss() -> int:
        return int(psutil.Process().memory_info().rss)

    rss0 = rss()
    t0 = time.perf_counter()
    model.hierarchy  # noqa: B018 - the lower-bound hierarchy, customized once
    print(f"weekly lower-bound hierarchy customized in {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    assert model.bounds is not None
    built = model.bounds.prepare()  # as a server's warm-up does
    print(
        f"window hierarchies: {built} of {len(model.bounds.distinct())} distinct grid windows customized in "
        f"{time.perf_counter() - t0:.2f} s; lower-bound hierarchies hold {model.bounds.nbytes() / 2**20:.1f} MiB "
        f"(budget {model.bounds.budget / 2**20:.0f} MiB for the windows); process RSS "
        f"{rss() / 2**20:.0f} MiB (+{(rss() - rss0) / 2**20:.0f} since the graph loaded)"
    )  # fmt: skip

    rng = np.random.default_rng(args.seed)
    big = np.flatnonzero(np.asarray(graph.node_component) == 0)
    nodes = rng.choice(big, 2 * args.routes)
    pts = [(float(graph.node_lon[v]) / 1e7 + 2e-5, float(graph.node_lat[v]) / 1e7 + 2e-5) for v in nodes]
    pairs = list(zip(pts[::2], pts[1::2], strict=True))

    def req(a: Any, b: Any, **kw: Any) -> RouteRequest:
        return RouteRequest(Waypoints([a, b], default_radius_m=1000), **kw)

    # warm: every kernel loaded before timing
    for kw in ({}, {"depart_at": "2026-12-07T08:00"}, {"arrive_by": "2026-12-07T09:00"},
               {"depart_at": "2026-12-07T08:00", "algorithm": "dijkstra"}):  # fmt: skip
        for a, b in pairs[-20:] if "algorithm" not in kw else pairs[:2]:
            try:
                engine.route(req(a, b, **kw))
            except (NoRoute, NoSegment):
                pass
            model.wait()
    print(
        f"warm-up: {model.customizations} lower-bound hierarchies customized in all ({model.hierarchy_seconds:.1f} s)"
    )

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
        f"    lower-bound hierarchies customized so far: {model.customizations} ({model.hierarchy_seconds:.1f} s); "
        f"kept: the weekly one and {model.bounds.kept()} windows, {model.bounds.nbytes() / 2**20:.1f} MiB; process RSS "
        f"{psutil.Process().memory_info().rss / 2**20:.0f} MiB"
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
          "(per source a TD-A* towards the destination set until the last one settles, 2 threads; "
          f"{np.isnan(tbl.durations_s).sum()} unreachable cells)")  # fmt: skip

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
    tau8 = week_time(parse_time("2026-12-07T08:00", tz, "t"), tz)
    cells = [(int(rng.integers(0, len(src))), int(rng.integers(0, len(dst)))) for _ in range(20)]
    off_cells = 0
    for i, j in cells:
        try:
            want = td_route_at(model, legs, [src[i], dst[j]], tau8, 0, "td", oracle=True)[1] - tau8
        except NoRoute:
            want = None
        got = tbl.durations_s[i, j]
        off_cells += not (np.isnan(got) if want is None else round(got * 10) == want)
    print(
        f"  table 08:00 = oracle routes: {'PASS' if off_cells == 0 else 'FAIL'} ({len(cells) - off_cells}/{len(cells)})"
    )

    peer_pairs = pairs[: min(200, len(pairs))]
    ours = http(args.graph, peer_pairs) if args.http else None
    if args.valhalla is not None:
        valhalla(args.valhalla, args.graph, args.work, peer_pairs, ours)


def wait_idle(pid: int, limit_s: float = 240.0) -> float:
    """Until the process and its children use under 5 % of a core over 2 s (a server's background warm-up done);
    seconds waited."""
    import psutil

    t0 = time.perf_counter()
    root = psutil.Process(pid)

    def cpu() -> float:
        total = 0.0
        for p in [root, *root.children(recursive=True)]:
            try:
                c = p.cpu_times()
                total += c.user + c.system
            except psutil.NoSuchProcess:
                pass
        return total

    while time.perf_counter() - t0 < limit_s:
        before = cpu()
        time.sleep(2.0)
        if cpu() - before < 0.1:
            break
    return time.perf_counter() - t0


TIMES = {"no time": None, "Monday 03:00": "2026-12-07T03:00", "Monday 08:00": "2026-12-07T08:00"}


def http(graph_dir: Path, pairs: list[Any]) -> dict[str, dict[int, float]]:
    """The same routes over HTTP (one connection, sequential) against a server of the customized graph, without a
    time and departing Monday 03:00 and 08:00; per time the durations (s) by pair index."""
    import httpx

    from harness.servers import start_starroute, stop

    proc, base = start_starroute(graph_dir, workers=1)
    idle = wait_idle(proc.pid)
    out: dict[str, list[float]] = {k: [] for k in TIMES}
    durations: dict[str, dict[int, float]] = {k: {} for k in TIMES}
    try:
        with httpx.Client(base_url=base, timeout=60) as c:
            for name, at in TIMES.items():
                for i, (a, b) in enumerate(pairs):
                    params = {"from": f"{a[0]},{a[1]}", "to": f"{b[0]},{b[1]}", "overview": "false"}
                    if at is not None:
                        params["depart_at"] = at
                    t = time.perf_counter()
                    r = c.get("/route", params=params)
                    if r.status_code == 200 and i >= 5:  # the first five warm the connection
                        out[name].append(time.perf_counter() - t)
                    if r.status_code == 200:
                        durations[name][i] = r.json()["properties"]["duration_s"]
    finally:
        stop(proc)
    print(f"\nover HTTP (native GET /route, overview=false, 1 worker, 1 connection; {graph_dir}, its profiles; the "
          f"server's background warm-up done after {idle:.0f} s):")  # fmt: skip
    for name in TIMES:
        line(f"starroute {name}", out[name], out["no time"] if name != "no time" else None)
    print(f"  ({statistics.mean(out['no time']) * 1000:.2f} ms mean static)")
    return durations


def valhalla(
    extract: Path, graph_dir: Path, work: Path, pairs: list[Any], ours: dict[str, dict[int, float]] | None
) -> None:
    """Valhalla 3.9.1 with the same rush hour as predicted traffic: the same pairs without a time and departing
    Monday 03:00 and 08:00 (POST /route, one connection), its durations beside starroute's."""
    from harness.servers import stop
    from harness.valhalla_peer import prepare, route, start_valhalla

    t = time.perf_counter()
    bin_dir, config = prepare(extract, graph_dir, work / "profiles", work / "valhalla")
    done = (work / "valhalla" / "traffic.done").read_text().strip()
    took = time.perf_counter() - t
    print(f"\nValhalla 3.9.1 ({work / 'valhalla'}, predicted traffic: {done}; ready in {took:.1f} s), POST /route,"
          " 1 thread, 1 connection:")  # fmt: skip
    proc, base = start_valhalla(bin_dir, config)
    times: dict[str, list[float]] = {k: [] for k in TIMES}
    durations: dict[str, dict[int, float]] = {k: {} for k in TIMES}
    try:
        for name, at in TIMES.items():
            for i, (a, b) in enumerate(pairs):
                try:
                    sec, ms = route(base, a, b, at)
                except RuntimeError:
                    continue
                durations[name][i] = sec
                if i >= 5:
                    times[name].append(ms / 1000)
    finally:
        stop(proc)
    for name in TIMES:
        line(f"Valhalla {name}", times[name], times["no time"] if name != "no time" else None)
    if ours is None:
        return
    print("  durations, Valhalla / starroute over the same pairs (a sanity check: two engines, two speed models):")
    for name in TIMES:
        both = [i for i in durations[name] if i in ours[name] and ours[name][i] > 0]
        r = np.array([durations[name][i] / ours[name][i] for i in both])
        if len(r):
            print(f"    {name:<14} median {np.median(r):.2f}, p10 {np.percentile(r, 10):.2f}, "
                  f"p90 {np.percentile(r, 90):.2f} (n={len(r)})")  # fmt: skip
    for who, d in (("starroute", ours), ("Valhalla", durations)):
        both = [i for i in d["Monday 08:00"] if i in d["Monday 03:00"] and d["Monday 03:00"][i] > 0]
        r = np.array([d["Monday 08:00"][i] / d["Monday 03:00"][i] for i in both])
        if len(r):
            print(f"    {who}: 08:00 / 03:00 median {np.median(r):.3f}, p90 {np.percentile(r, 90):.3f}, "
                  f"longer on {(r > 1.001).sum()}/{len(r)}")  # fmt: skip


if __name__ == "__main__":
    main()

"""Live weights beside OSRM's MLD: the time to apply a traffic file, and the durations it gives, in one run.

    python bench/customize.py GRAPH_DIR --extract PBF [--fraction 0.1] [--routes 300] [--seed 1] [--osrm-dir DIR]

One seeded speed file for both: `--fraction` of the graph's directed way segments (consecutive OSM nodes, in
driving direction) at a uniform 5-100 km/h. starroute: `starroute customize` on a copy of GRAPH_DIR (the command's
wall time, median of 3 runs, and its own per-step seconds: the new weights, its search stages left to the server),
then a 2-worker server on the copy gets SIGHUP and the time until every worker's `/health` names the new metric is
"in-server" (the supervisor customizes the hierarchy and the landmark tables once, then every worker loads them);
then the same file is POSTed to `/admin/metric` (new weights inside the server, then the same SIGHUP path). OSRM:
osrm-extract (car.lua) + osrm-partition once, then `osrm-customize` with no file and with the file (wall time, the
latter a median of 3 runs; both on 2 threads, its default), and osrm-routed
`--algorithm mld` on the customized data. Durations: `--routes` random node-to-node routes on both servers after
the update, the relative difference per route (median, p90) and the share within 1 %; the same before the update
for reference. Query latency: p50 of CH routes on the customized metric beside the preprocessed one (client wall
time, loopback, one at a time).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
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

from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402

ROOT = HERE.parent
RUNS = 3  # each command's wall time is the median of this many runs


def speed_file(graph: Path, out: Path, fraction: float, seed: int) -> int:
    """The seeded speed file (module docstring); returns its line count."""
    from floor.format.graph import load_graph
    from preprocessing.metric import arc_segments

    arrays = dict(load_graph(graph, metric=False).arrays)
    _, a, b, _ = arc_segments(arrays)
    osm = np.asarray(arrays["geom_osm_id"])
    keys = np.unique(np.stack([osm[a], osm[b]], axis=1), axis=0)
    rng = np.random.default_rng(seed)
    pick = keys[rng.random(len(keys)) < fraction]
    speeds = rng.integers(5, 101, len(pick))
    out.write_text("".join(f"{f},{t},{v}\n" for (f, t), v in zip(pick, speeds, strict=True)))
    return len(pick)


def timed(cmd: list[str], **kw: object) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - t0


def metric_ids(base: str, workers: int) -> set[str]:
    """The metric ids the server's workers serve, one `/health` per new connection (the kernel spreads them over the
    workers) until every worker answered. Plain `http.client`: an `httpx.Client` costs 20-40 ms to make (its TLS
    context), which would count in the time being measured."""
    host, port = base.split("//", 1)[1].rsplit(":", 1)
    seen: dict[int, str] = {}
    for _ in range(50):
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            conn.request("GET", "/health")
            h = json.loads(conn.getresponse().read())
        finally:
            conn.close()
        seen[h["pid"]] = h["metric"]["id"]
        if len(seen) == workers:
            break
    return set(seen.values())


def durations(base: str, pairs: list[tuple[float, float, float, float]]) -> tuple[list[float | None], list[float]]:
    out: list[float | None] = []
    lat: list[float] = []
    with httpx.Client(base_url=base, timeout=30) as c:
        for x1, y1, x2, y2 in pairs:
            t0 = time.perf_counter()
            r = c.get(f"/route/v1/driving/{x1:.6f},{y1:.6f};{x2:.6f},{y2:.6f}", params={"overview": "false"})
            lat.append(time.perf_counter() - t0)
            j = r.json()
            out.append(j["routes"][0]["duration"] if j.get("code") == "Ok" else None)
    return out, lat


def compare(a: list[float | None], b: list[float | None]) -> str:
    rel = [abs(x - y) / max(y, 1.0) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if not rel:
        return "no common routes"
    rel.sort()
    p90 = rel[int(0.9 * (len(rel) - 1))]
    within = sum(r <= 0.01 for r in rel) / len(rel)
    med = 100 * statistics.median(rel)
    return f"median {med:.2f} %, p90 {100 * p90:.2f} %, within 1 %: {100 * within:.0f} % ({len(rel)} routes)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--extract", type=Path, required=True, help="the OSM extract the graph was built from")
    ap.add_argument("--fraction", type=float, default=0.1, help="share of directed segments the file updates")
    ap.add_argument("--routes", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    args = ap.parse_args()
    bin_dir = ensure_osrm(args.osrm_dir)
    if bin_dir is None:
        sys.exit("osrm-bindings cannot be installed here")
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        g = tmp / "graph"
        shutil.copytree(args.graph, g, symlinks=True)
        from floor.format.metrics import clear_metric

        clear_metric(g)
        speeds = tmp / "speeds.csv"
        n = speed_file(g, speeds, args.fraction, args.seed)
        share = f"{100 * args.fraction:g} %"
        print(f"speed file: {n} directed segments ({share} of the graph's), 5-100 km/h, seed {args.seed}")

        base = prepare_osrm(bin_dir, args.extract, args.osrm_dir, algorithm="mld")
        work = tmp / "osrm"
        shutil.copytree(base.parent, work)
        ds = work / base.name
        t_plain = timed([str(bin_dir / "osrm-customize"), str(ds)], cwd=work)
        before_ds = tmp / "osrm-before"
        shutil.copytree(work, before_ds)
        os.sync()  # the copies' writeback is no part of either program's time
        osrm_cmd = [str(bin_dir / "osrm-customize"), str(ds), "--segment-speed-file", str(speeds)]
        t_file = statistics.median(timed(osrm_cmd, cwd=work) for _ in range(RUNS))

        cli = [sys.executable, "-m", "app.cli", "customize", str(g), "--segment-speed-file", str(speeds)]
        ps, bs = start_starroute(g, workers=2, env={"STARROUTE_ADMIN_TOKEN": "bench"})
        try:
            rng = np.random.default_rng(args.seed)
            from floor.format.graph import load_graph

            gg = load_graph(g, metric=False)
            main_nodes = np.flatnonzero(np.asarray(gg.node_component) == 0)
            lon, lat = np.asarray(gg.node_lon) / 1e7, np.asarray(gg.node_lat) / 1e7
            pick = rng.choice(main_nodes, (args.routes, 2))
            pairs = [(lon[i], lat[i], lon[j], lat[j]) for i, j in pick]
            s_before, lat_before = durations(bs, pairs)
            os.sync()
            runs = []
            for _ in range(RUNS):  # the same file each time: the last run's metric is the one applied below
                t0 = time.perf_counter()
                out = subprocess.run(cli, check=True, capture_output=True, text=True, cwd=ROOT)
                runs.append(time.perf_counter() - t0)
            t_cli = statistics.median(runs)
            mid = out.stdout.split("metric ")[-1].split()[0]
            t1 = time.perf_counter()
            os.kill(ps.pid, signal.SIGHUP)
            while metric_ids(bs, 2) != {mid}:
                time.sleep(0.01)
            t_apply = time.perf_counter() - t1
            s_after, lat_after = durations(bs, pairs)
            # the same file pushed over HTTP: customized inside the server, then every worker switched
            t2 = time.perf_counter()
            with httpx.Client(base_url=bs, timeout=600) as c:
                r = c.post(
                    "/admin/metric",
                    content=speeds.read_bytes(),
                    headers={"Authorization": "Bearer bench", "Content-Type": "text/csv"},
                )
            r.raise_for_status()
            mid2 = r.json()["metric"]
            while metric_ids(bs, 2) != {mid2}:
                time.sleep(0.01)
            t_admin = time.perf_counter() - t2
            t_admin_work = sum(r.json()["seconds"].values())
        finally:
            stop(ps)
        po, bo = start_osrm(bin_dir, before_ds / base.name, threads=2, algorithm="mld")
        try:
            o_before, _ = durations(bo, pairs)
        finally:
            stop(po)
        po, bo = start_osrm(bin_dir, ds, threads=2, algorithm="mld")
        try:
            o_after, _ = durations(bo, pairs)
        finally:
            stop(po)
    steps = [line for line in out.stdout.splitlines() if line.startswith(("segment", "hierarchy", "metric"))]
    print("\n".join(f"  {line}" for line in steps))
    print()
    print("| | starroute | osrm (MLD) | ratio |")
    print("|---|---|---|---|")
    print(f"| customize, no file (s) | - | {t_plain:.2f} | |")
    print(
        f"| customize with the file, command wall (s, median of {RUNS}) | {t_cli:.2f} | {t_file:.2f} | "
        f"{t_cli / t_file:.2f}x |"
    )
    print(f"| applied in a running server (s, SIGHUP to every worker serving it) | {t_apply:.2f} | - | |")
    print(
        f"| POST /admin/metric until every worker serves it (s; of which customizing {t_admin_work:.2f}) "
        f"| {t_admin:.2f} | - | |"
    )
    ms = statistics.median(lat_after) * 1e3
    print(f"| route p50 after / before the update (ms) | {ms:.2f} / {statistics.median(lat_before) * 1e3:.2f} | - | |")
    print()
    print(f"durations before the update, starroute vs osrm: {compare(s_before, o_before)}")
    print(f"durations after the update,  starroute vs osrm: {compare(s_after, o_after)}")
    changed = sum(1 for x, y in zip(s_before, s_after, strict=True) if x is not None and y is not None and x != y)
    print(f"routes whose starroute duration changed with the update: {changed} of {len(pairs)}")


if __name__ == "__main__":
    main()

"""Matrix benchmark: `starroute matrix` on Dask beside osrm-routed's `/table` in 100 x 100 blocks and pandana.

    python bench/matrix.py [--graph DIR] [--extract PBF] [--sizes 1000,5000,10000] [--seed 1] [--workers 2]
                           [--osrm-dir /tmp/starroute-osrm] [--osrm-blocks 2500] [--no-osrm] [--no-pandana]
                           [--pandana-max 1000] [--no-cluster]

For each size N it draws N seeded random points near nodes of the largest component of the Porto graph (built once
from `--extract` with `starroute preprocess` when `--graph` is not given) and measures, for the same N x N matrix:

- `starroute matrix GRAPH points.csv -o m.npz --workers 2`: a local Dask cluster of two worker threads in the
  command's process, as a user runs it; cells per second over the command's whole wall time (start-up, snapping,
  cluster, writing included) and over its compute phase (the command's own summary line), and peak memory: the
  largest sum of the resident sets of the command and all its processes (a shared page counts once per process, so
  with several processes this overstates), sampled every 0.1 s;
- osrm-routed (`-t 2`, the `osrm-bindings` wheel's binaries and car.lua) answering `/table/v1` for every 100 x 100
  block (200 coordinates, `sources=`/`destinations=`), two client threads with keep-alive connections parsing the
  JSON, the way users chunk it: cells per second and osrm-routed's peak resident set (VmHWM). Above
  `--osrm-blocks` blocks (default 2500, the 5k x 5k) it answers that many random blocks and the whole matrix's time
  is extrapolated at the measured rate (marked `*`): every block is 100 x 100 random points, and 10k x 10k in full
  would take OSRM several minutes;
- pandana's `shortest_path_lengths` over the N^2 pairs of the points' nearest nodes on the same road graph, where
  it fits (N <= `--pandana-max`, default 1000; it answers pair by pair), in its own process;
- checks: 20 random 100 x 100 blocks of starroute's matrix against starroute's own HTTP `POST /table` (every cell
  identical, NaN where null) and against OSRM's `/table` (the profiles differ, so only the agreement is reported:
  median |difference| and the share of cells within 5%).

The 1k x 1k is also run on a real `dask scheduler` and two `dask worker` processes on loopback started here
(`--scheduler tcp://127.0.0.1:PORT`), and its .npz must equal the local cluster's bit for bit. Only loopback
addresses are used; every process started here is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx  # noqa: E402
import numpy as np  # noqa: E402
import psutil  # noqa: E402

from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.servers import free_port, start_osrm, start_starroute, stop  # noqa: E402

ROOT = HERE.parent
PORTO = ROOT.parent / "shared" / "data" / "osm" / "porto_portugal.osm.pbf"
BIN = Path(sys.executable).parent
OSRM_BLOCK = 100
CHECK_BLOCKS = 20
GiB = 1 << 30


# --- measuring -------------------------------------------------------------------------------------------------------
class PeakRss:
    """The largest sum of resident sets of some processes and all their descendants, sampled every 0.1 s."""

    def __init__(self, pids: list[int]) -> None:
        self.roots = [psutil.Process(p) for p in pids]
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            total = 0
            for root in self.roots:
                try:
                    procs = [root, *root.children(recursive=True)]
                except psutil.Error:
                    continue
                for p in procs:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
            self.peak = max(self.peak, total)
            self._stop.wait(0.1)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_measured(cmd: list[str], extra_pids: list[int] | None = None) -> tuple[float, int, str]:
    """Run `cmd` to its end: (wall seconds, peak tree RSS in bytes, stderr); fails loudly on a non-zero exit."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with PeakRss([proc.pid, *(extra_pids or [])]) as peak:
        out, err = proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{err[-3000:]}")
    return wall, peak.peak, err + out


def compute_seconds(stderr: str) -> float | None:
    """The compute phase from `starroute matrix`'s summary line ("... in 12.3 s: ...")."""
    m = re.search(r"\) in ([\d.]+) s:", stderr)
    return float(m.group(1)) if m else None


# --- inputs ----------------------------------------------------------------------------------------------------------
def random_points(graph: Any, n: int, seed: int) -> np.ndarray:
    """n seeded points near nodes of the largest component (within ~30 m), as (lon, lat) rounded to 6 decimals."""
    rng = random.Random(seed)
    main = np.nonzero(np.asarray(graph.node_component) == 0)[0]
    lon, lat = np.asarray(graph.node_lon) / 1e7, np.asarray(graph.node_lat) / 1e7
    out = np.empty((n, 2))
    for k in range(n):
        v = int(main[rng.randrange(main.shape[0])])
        out[k] = round(float(lon[v]) + rng.uniform(-2e-4, 2e-4), 6), round(float(lat[v]) + rng.uniform(-2e-4, 2e-4), 6)
    return out


def write_csv(path: Path, pts: np.ndarray) -> Path:
    with path.open("w") as f:
        f.write("id,lon,lat\n")
        for k, (lon, lat) in enumerate(pts):
            f.write(f"{k},{lon:.6f},{lat:.6f}\n")
    return path


def check_blocks(n: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Origins of CHECK_BLOCKS distinct 100 x 100 blocks of an n x n matrix (all of them when fewer)."""
    k = n // OSRM_BLOCK
    cells = [(i * OSRM_BLOCK, j * OSRM_BLOCK) for i in range(k) for j in range(k)]
    pick = rng.choice(len(cells), size=min(CHECK_BLOCKS, len(cells)), replace=False)
    return [cells[int(p)] for p in sorted(pick)]


# --- the peers -------------------------------------------------------------------------------------------------------
def coords(pts: np.ndarray) -> str:
    return ";".join(f"{lon:.6f},{lat:.6f}" for lon, lat in pts)


def osrm_matrix(
    base: str, pts: np.ndarray, keep: set[tuple[int, int]], most: int, rng: np.random.Generator
) -> tuple[float, int, dict[tuple[int, int], Any]]:
    """The 100 x 100 blocks through osrm-routed's /table, two client threads: (seconds, cells, kept blocks'
    durations). All blocks, or when there are more than `most`, the kept ones and a random rest up to `most` (every
    block is 100 x 100 random points, so their rate is the whole matrix's)."""
    n = len(pts)
    blocks = [(i, j) for i in range(0, n, OSRM_BLOCK) for j in range(0, n, OSRM_BLOCK)]
    if len(blocks) > most:
        rest = [b for b in blocks if b not in keep]
        pick = rng.choice(len(rest), size=max(most - len(keep), 0), replace=False)
        blocks = sorted(keep) + [rest[int(k)] for k in pick]
    src_q = ";".join(str(k) for k in range(OSRM_BLOCK))
    dst_q = ";".join(str(k) for k in range(OSRM_BLOCK, 2 * OSRM_BLOCK))
    local = threading.local()
    kept: dict[tuple[int, int], Any] = {}

    def one(b: tuple[int, int]) -> None:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(timeout=60.0)
        i, j = b
        both = np.concatenate([pts[i : i + OSRM_BLOCK], pts[j : j + OSRM_BLOCK]])
        url = f"{base}/table/v1/driving/{coords(both)}"
        r = client.get(url, params={"sources": src_q, "destinations": dst_q, "annotations": "duration,distance"})
        body = r.json()
        if body.get("code") != "Ok":
            raise RuntimeError(f"osrm /table: {body.get('code')} {body.get('message')}")
        if b in keep:
            kept[b] = np.array([[np.nan if v is None else v for v in row] for row in body["durations"]])

    t0 = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(one, blocks))
    return time.perf_counter() - t0, len(blocks) * OSRM_BLOCK * OSRM_BLOCK, kept


def vm_hwm(pid: int) -> int:
    """Peak resident set of a process (VmHWM), bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def pandana_worker(graph_dir: str, points_npy: str) -> None:
    """In its own process: pandana's network over the graph's road arcs, the points' nearest nodes, and
    `shortest_path_lengths` over every pair; prints {"seconds": ..., "build_s": ...} as JSON."""
    import pandana as pdna
    import pandas as pd

    from app.engine.data import load
    from floor.format.units import COORD_SCALE

    g = load(graph_dir)
    tail, head, weight = (np.asarray(a) for a in (g.arc_tail, g.arc_head, g.arc_weight))
    keep = tail != head
    nodes = np.arange(g.num_nodes)
    x = pd.Series(np.asarray(g.node_lon) / COORD_SCALE, index=nodes)
    y = pd.Series(np.asarray(g.node_lat) / COORD_SCALE, index=nodes)
    t0 = time.perf_counter()
    devnull, saved = os.open(os.devnull, os.O_WRONLY), os.dup(1)
    os.dup2(devnull, 1)  # pandana's C++ prints progress on stdout
    try:
        net = pdna.Network(x, y, pd.Series(tail[keep]), pd.Series(head[keep]), pd.DataFrame({"w": weight[keep] / 10.0}))
    finally:
        os.dup2(saved, 1)
    build = time.perf_counter() - t0
    pts = np.load(points_npy)
    ids = net.get_node_ids(pd.Series(pts[:, 0]), pd.Series(pts[:, 1])).to_numpy()
    n = len(ids)
    a, b = np.repeat(ids, n), np.tile(ids, n)
    t0 = time.perf_counter()
    lengths = net.shortest_path_lengths(a, b, imp_name="w")
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "build_s": build, "cells": len(lengths)}))


# --- a real cluster on loopback --------------------------------------------------------------------------------------
def start_cluster(workers: int) -> tuple[list[subprocess.Popen], str]:
    """`dask scheduler` and `workers` x `dask worker` (one thread each) on 127.0.0.1, all registered."""
    from distributed import Client

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": ROOT}
    procs = [
        subprocess.Popen(
            [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **quiet
        )
    ]
    for _ in range(workers):
        procs.append(
            subprocess.Popen(
                [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
                **quiet,
            )
        )
    with Client(address, timeout=60) as c:
        c.wait_for_workers(workers, timeout=120)
    return procs, address


# --- the run ---------------------------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", type=Path, help="a Porto graph directory (default: built from --extract once)")
    ap.add_argument("--extract", type=Path, default=PORTO)
    ap.add_argument("--sizes", default="1000,5000,10000")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "starroute-bench-matrix")
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    ap.add_argument("--no-osrm", action="store_true")
    ap.add_argument("--osrm-blocks", type=int, default=2500, help="most 100x100 blocks asked of OSRM per size")
    ap.add_argument("--no-pandana", action="store_true")
    ap.add_argument("--pandana-max", type=int, default=1000)
    ap.add_argument("--no-cluster", action="store_true", help="skip the scheduler + workers run on loopback")
    ap.add_argument("--pandana-worker", nargs=2, metavar=("GRAPH", "POINTS_NPY"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.pandana_worker:
        pandana_worker(*args.pandana_worker)
        return 0

    from app.engine.data import load

    args.work.mkdir(parents=True, exist_ok=True)
    graph_dir = args.graph or args.work / "porto-car"
    if args.graph is None and not (graph_dir / "manifest.json").exists():
        print(f"building {graph_dir} from {args.extract} ...", flush=True)
        subprocess.run([str(BIN / "starroute"), "preprocess", str(args.extract), "-o", str(graph_dir), "-q", "--force"],
                       check=True)  # fmt: skip
    sizes = [int(s) for s in args.sizes.split(",")]
    pts_all = random_points(load(graph_dir), max(sizes), args.seed)
    rng = np.random.default_rng(args.seed)
    rows: list[dict[str, Any]] = []
    procs: list[subprocess.Popen] = []
    try:
        star_proc, star_base = start_starroute(graph_dir)
        procs.append(star_proc)
        osrm_base = osrm_pid = None
        if not args.no_osrm:
            bin_dir = ensure_osrm(args.osrm_dir)
            if bin_dir is not None:
                dataset = prepare_osrm(bin_dir, args.extract, args.osrm_dir / "data")
                osrm_proc, osrm_base = start_osrm(bin_dir, dataset, threads=2)
                procs.append(osrm_proc)
                osrm_pid = osrm_proc.pid
        local_npz: dict[int, Path] = {}
        for n in sizes:
            pts = pts_all[:n]
            csv = write_csv(args.work / f"points-{n}.csv", pts)
            out = args.work / f"matrix-{n}.npz"
            cmd = [str(BIN / "starroute"), "matrix", str(graph_dir), str(csv), "-o", str(out), "--workers",
                   str(args.workers)]  # fmt: skip
            print(f"\n{n} x {n}: {' '.join(cmd)}", flush=True)
            wall, peak, err = run_measured(cmd)
            local_npz[n] = out
            comp = compute_seconds(err)
            row: dict[str, Any] = {"n": n, "star_wall": wall, "star_compute": comp, "star_peak": peak}
            print(f"  starroute matrix: {wall:.1f} s wall ({comp} s compute), peak {peak / GiB:.2f} GiB", flush=True)
            with np.load(out) as z:
                dur, dist = z["durations_s"], z["distances_m"]
            blocks = check_blocks(n, rng)
            same = total = 0
            for i, j in blocks:
                body = httpx.post(
                    f"{star_base}/table",
                    json={"sources": pts[i : i + 100].tolist(), "destinations": pts[j : j + 100].tolist()},
                    timeout=60,
                ).json()
                for got, key in ((dur, "durations_s"), (dist, "distances_m")):
                    want = np.array([[np.nan if v is None else v for v in r] for r in body[key]])
                    block = got[i : i + 100, j : j + 100]
                    same += int(np.count_nonzero((block == want) | (np.isnan(block) & np.isnan(want))))
                    total += want.size
            row["http_same"], row["http_total"] = same, total
            print(f"  vs starroute HTTP /table: {same}/{total} sampled cells identical", flush=True)
            if osrm_base is not None:
                seconds, cells, kept = osrm_matrix(osrm_base, pts, set(blocks), args.osrm_blocks, rng)
                row["osrm_s"], row["osrm_cells"] = seconds, cells
                row["osrm_peak"] = vm_hwm(osrm_pid) if osrm_pid else 0
                a = np.concatenate([dur[i : i + 100, j : j + 100].ravel() for i, j in blocks])
                b = np.concatenate([kept[(i, j)].ravel() for i, j in blocks])
                ok = ~(np.isnan(a) | np.isnan(b)) & (b > 0)
                diff = np.abs(a[ok] - b[ok])
                row["osrm_median_diff"] = float(np.median(diff)) if ok.any() else float("nan")
                row["osrm_within5"] = float(np.mean(diff <= 0.05 * b[ok])) if ok.any() else float("nan")
                share = f" ({cells / n / n:.0%} of the blocks)" if cells < n * n else ""
                print(f"  osrm-routed /table 100x100, 2 client threads: {seconds:.1f} s{share}", flush=True)
            del dur, dist
            if not args.no_pandana and n <= args.pandana_max:
                npy = args.work / f"points-{n}.npy"
                np.save(npy, pts)
                try:
                    _, peak_pd, outp = run_measured(
                        [sys.executable, str(Path(__file__).resolve()), "--pandana-worker", str(graph_dir), str(npy)]
                    )
                    res = json.loads(outp.strip().splitlines()[-1])
                    row["pandana_s"], row["pandana_peak"] = res["seconds"], peak_pd
                    print(f"  pandana shortest_path_lengths: {res['seconds']:.1f} s", flush=True)
                except (RuntimeError, ValueError, KeyError) as exc:
                    print(f"  pandana: skipped ({str(exc).splitlines()[0][:200]})", flush=True)
            rows.append(row)
        cluster_row = None
        n0 = 1000 if 1000 in local_npz else min(local_npz)  # the 1k x 1k (the smallest size in a trial run)
        if not args.no_cluster:
            cprocs, address = start_cluster(args.workers)
            procs.extend(cprocs)
            out = args.work / f"matrix-{n0}-cluster.npz"
            cmd = [str(BIN / "starroute"), "matrix", str(graph_dir), str(args.work / f"points-{n0}.csv"), "-o",
                   str(out), "--scheduler", address]  # fmt: skip
            print(f"\n{n0} x {n0} on a dask scheduler + {args.workers} dask workers: {' '.join(cmd)}", flush=True)
            wall, peak, err = run_measured(cmd, [p.pid for p in cprocs])
            with np.load(out) as a, np.load(local_npz[n0]) as b:
                identical = all(np.array_equal(a[k], b[k], equal_nan=True) for k in ("durations_s", "distances_m"))
            cluster_row = {"n": n0, "wall": wall, "compute": compute_seconds(err), "peak": peak, "identical": identical}
    finally:
        for p in procs:
            stop(p)
    report(rows, cluster_row, args.workers)
    return 0


def report(rows: list[dict[str, Any]], cluster: dict[str, Any] | None, workers: int) -> None:
    def rate(cells: int, s: float | None) -> str:
        return f"{cells / s / 1e6:8.2f}" if s else f"{'-':>8s}"

    print("\nN x N random Porto points; cells/s in millions; memory: peak RSS sum of the process tree (GiB)")
    print(f"{'N':>6s} | {'starroute matrix, ' + str(workers) + ' local Dask workers':^44s} | "
          f"{'osrm-routed /table 100x100, 2 threads':^38s} | {'pandana':^17s} | {'starroute vs':^18s}")  # fmt: skip
    print(f"{'':>6s} | {'wall Mc/s':>9s} {'compute Mc/s':>12s} {'peak GiB':>9s} {'wall s':>8s} | "
          f"{'Mc/s':>8s} {'wall s':>8s} {'peak GiB':>9s} {'x osrm':>8s} | {'Mc/s':>8s} {'GiB':>7s} | "
          f"{'HTTP same':>9s} {'osrm 5%':>8s}")  # fmt: skip
    for r in rows:
        cells = r["n"] * r["n"]
        osrm_s = r.get("osrm_s")
        if osrm_s:
            osrm_s = osrm_s * cells / r["osrm_cells"]  # the whole matrix at the measured rate
        mark = "*" if osrm_s and r["osrm_cells"] < cells else " "
        ratio = f"{osrm_s / r['star_wall']:8.1f}" if osrm_s else f"{'-':>8s}"
        pd_peak = f"{r['pandana_peak'] / GiB:7.2f}" if "pandana_peak" in r else f"{'-':>7s}"
        osrm_peak = f"{r['osrm_peak'] / GiB:9.2f}" if osrm_s else f"{'-':>9s}"
        same = f"{r['http_same'] / r['http_total']:9.1%}"
        within = f"{r['osrm_within5']:8.1%}" if osrm_s else f"{'-':>8s}"
        print(
            f"{r['n']:6d} | {rate(cells, r['star_wall']):>9s} {rate(cells, r['star_compute']):>12s} "
            f"{r['star_peak'] / GiB:9.2f} {r['star_wall']:8.1f} | {rate(cells, osrm_s)} "
            f"{(osrm_s or 0):7.1f}{mark} {osrm_peak} {ratio} | {rate(cells, r.get('pandana_s'))} {pd_peak} | "
            f"{same} {within}"
        )
    if cluster is not None:
        print(
            f"{cluster['n']} x {cluster['n']} on `dask scheduler` + {workers} `dask worker` (loopback): "
            f"{cluster['wall']:.1f} s wall ({rate(cluster['n'] ** 2, cluster['wall']).strip()} Mc/s; "
            f"compute {cluster['compute']} s), peak "
            f"{cluster['peak'] / GiB:.2f} GiB (scheduler, workers, client); identical to the local cluster's: "
            f"{cluster['identical']}"
        )
    if any(r.get("osrm_cells", 0) < r["n"] ** 2 for r in rows if "osrm_s" in r):
        print("* osrm-routed answered a random subset of the 100x100 blocks (--osrm-blocks); its wall time is the "
              "whole matrix at the rate measured on them")  # fmt: skip
    med = [f"{r['n']}: {r['osrm_median_diff']:.1f} s" for r in rows if "osrm_median_diff" in r]
    if med:
        print(f"osrm-routed vs starroute, median |duration difference| on the sampled cells (profiles differ): "
              f"{', '.join(med)}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())

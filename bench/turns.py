#!/usr/bin/env python3
"""Turns beside OSRM: preprocess time, restriction counts, CH query latency and car durations on the same routes.

For each extract: `starroute preprocess` without and with turns (edge-based graph), osrm-extract + osrm-contract
(car.lua) timed in the same run; then N random road-point pairs routed by both starroute graphs (in process, CH) and
by osrm-routed (HTTP), printing the median and p90 relative duration difference to OSRM, and the CH p50 latency
per query with path (in process, including snapping-free facade work: seeds, search, unpacking, leg assembly).

Usage: python bench/turns.py EXTRACT [EXTRACT ...] [--pairs 250] [--osrm-dir /tmp/osrm] [--work /tmp/bench-turns]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.engine.data import load  # noqa: E402
from app.engine.errors import EngineError  # noqa: E402
from app.engine.router import Router  # noqa: E402
from floor.report import Reporter  # noqa: E402
from harness.osrm_peer import ensure_osrm  # noqa: E402
from harness.servers import start_osrm, stop  # noqa: E402
from preprocessing.pipeline import preprocess  # noqa: E402


def build(extract: Path, out: Path, turns: bool) -> float:
    t0 = time.perf_counter()
    preprocess(extract, out, profile="car", force=True, reporter=Reporter(quiet=True), turns=turns)
    return time.perf_counter() - t0


def osrm_build(bin_dir: Path, extract: Path, work: Path) -> tuple[Path, float, float]:
    """osrm-extract + osrm-contract, timed (no cache: the same run as ours)."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    local = work / extract.name
    shutil.copy(extract, local)
    profile = bin_dir.parent / "share" / "profiles" / "car.lua"
    t0 = time.perf_counter()
    subprocess.run([str(bin_dir / "osrm-extract"), "-p", str(profile), str(local)], cwd=work, check=True,
                   capture_output=True)  # fmt: skip
    t1 = time.perf_counter()
    base = next(work.glob("*.osrm.properties")).with_suffix("")
    subprocess.run([str(bin_dir / "osrm-contract"), str(base)], cwd=work, check=True, capture_output=True)
    return base, t1 - t0, time.perf_counter() - t1


def sample_points(router: Router, k: int, seed: int) -> list[tuple[float, float]]:
    """Road points in the largest component (a shape point of a random big chain, nudged off it)."""
    g = router.graph
    rng = np.random.default_rng(seed)
    chains = np.flatnonzero(router.snapper.big_chain)
    pts = []
    for c in rng.choice(chains, size=k):
        p0, p1 = int(g.geom_first[c]), int(g.geom_first[c + 1])
        p = int(rng.integers(p0, p1))
        pts.append((round(float(g.geom_lon[p]) / 1e7 + 1e-5, 6), round(float(g.geom_lat[p]) / 1e7 + 1e-5, 6)))
    return pts


def durations(router: Router, pairs: list) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """(durations s, weights, CH microseconds per query) of routes between pairs (NaN where no route)."""
    q = router.query()
    dur, dist, micros = [], [], []
    for s, t in pairs:
        try:
            phs = router.snap_waypoints([s, t])
            t0 = time.perf_counter()
            r = q.route(phs, "ch")
            micros.append((time.perf_counter() - t0) * 1e6)
            dur.append(r.duration_s)
            dist.append(r.weight / 10.0)
        except EngineError:
            dur.append(np.nan)
            dist.append(np.nan)
    return np.array(dur), np.array(dist), micros


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("extracts", type=Path, nargs="+")
    ap.add_argument("--pairs", type=int, default=250)
    ap.add_argument("--osrm-dir", type=Path, default=Path("/tmp/osrm"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-turns"))
    args = ap.parse_args()
    bin_dir = ensure_osrm(args.osrm_dir)
    all_rel: dict[str, list[np.ndarray]] = {"node": [], "edge": []}
    for extract in args.extracts:
        name = extract.name.split(".")[0]
        node_dir, edge_dir = args.work / f"{name}-node", args.work / f"{name}-edge"
        t_node = build(extract, node_dir, False)
        t_edge = build(extract, edge_dir, True)
        print(f"# {extract.name}")
        print(f"preprocess   starroute node-based {t_node:6.2f} s   edge-based (turns) {t_edge:6.2f} s")
        edge = load(edge_dir)
        rep = edge.manifest["report"]
        keys = sorted(k for k in rep if k.startswith(("restriction", "turns_", "u_turns", "search_", "forbidden")))
        print("report       " + ", ".join(f"{k}={rep[k]:,}" for k in keys))
        routers = {"node": Router(load(node_dir)), "edge": Router(edge)}
        pts = sample_points(routers["node"], 2 * args.pairs, seed=11)
        pairs = list(zip(pts[0::2], pts[1::2], strict=True))
        res = {k: durations(r, pairs) for k, r in routers.items()}
        for k, (_, _, micros) in res.items():
            p50, p90 = np.percentile(micros, 50), np.percentile(micros, 90)
            print(f"CH query     {k:<4} p50 {p50:7.1f} us  p90 {p90:7.1f} us  ({len(micros)} routes, path and leg)")
        if bin_dir is None:
            continue
        base, t_ext, t_con = osrm_build(bin_dir, extract, args.work / f"{name}-osrm")
        print(f"preprocess   OSRM extract {t_ext:6.2f} s + contract {t_con:6.2f} s = {t_ext + t_con:6.2f} s")
        proc, url = start_osrm(bin_dir, base)
        try:
            osrm, osrm_w = [], []
            with httpx.Client(timeout=30) as c:
                for s, t in pairs:
                    j = c.get(f"{url}/route/v1/driving/{s[0]},{s[1]};{t[0]},{t[1]}", params={"overview": "false"})
                    ok = j.json().get("code") == "Ok"
                    osrm.append(j.json()["routes"][0]["duration"] if ok else np.nan)
                    osrm_w.append(j.json()["routes"][0]["weight"] if ok else np.nan)
        finally:
            stop(proc)
        osrm_d, osrm_wt = np.array(osrm), np.array(osrm_w)
        for k, (dur, wt, _) in res.items():
            okw = np.isfinite(wt) & np.isfinite(osrm_wt) & (osrm_wt > 30)
            relw = np.abs(wt[okw] - osrm_wt[okw]) / osrm_wt[okw]
            print(f"vs OSRM      {k:<4} weight diff   median {100 * np.median(relw):5.2f} %  p90 "
                  f"{100 * np.percentile(relw, 90):5.2f} %  ({okw.sum()} routes, routability both)")  # fmt: skip
            ok = np.isfinite(dur) & np.isfinite(osrm_d) & (osrm_d > 30)
            rel = np.abs(dur[ok] - osrm_d[ok]) / osrm_d[ok]
            all_rel[k].append(rel)
            signed = 100 * np.mean((dur[ok] - osrm_d[ok]) / osrm_d[ok])
            print(f"vs OSRM      {k:<4} duration diff median {100 * np.median(rel):5.2f} %  p90 "
                  f"{100 * np.percentile(rel, 90):5.2f} %  mean {signed:+5.2f} % ({ok.sum()} > 30 s)")  # fmt: skip
    if all(all_rel.values()):
        for k, rels in all_rel.items():
            r = np.concatenate(rels)
            print(f"all extracts {k:<4} duration diff median {100 * np.median(r):5.2f} %  p90 "
                  f"{100 * np.percentile(r, 90):5.2f} %  ({len(r)} routes)")  # fmt: skip


if __name__ == "__main__":
    main()

"""starroute's CCH beside RoutingKit's, on the same graph, order and metric, in one run (issue 47 item 5).

    python -m bench.routingkit GRAPH_DIR [--queries 1000] [--rounds 2] [--seed 1]

GRAPH_DIR is a preprocessed graph with the CCH stage (e.g. `starroute preprocess
../shared/data/osm/porto_portugal.osm.pbf -o /tmp/rk/porto`). Its search graph (edge-based with turns: search
nodes, search arcs, their weights in ds) and its CCH order (`cch_rank`) are handed to RoutingKit's CCH through the
`routingkit-cch` bindings (`CCH(order, tail, head)`, `CCHMetric(cch, weights)`), so both customize the same metric
on the same elimination order. Prints:

- customization wall per round: starroute's `customize` (perfect, as the engine customizes, and basic; the
  hierarchy in the `ch_*` layout plus the elimination tree) against RoutingKit's `CCHMetric(...)` (first
  customization) and `metric.reset(...)` (again, buffers reused); the Python lists RoutingKit's bindings take
  are built before the clock starts;
- `--queries` random pairs of search nodes in the largest component: distances compared (mismatches counted,
  must be 0), then per round, engines interleaved (their order alternating), p50/p90 µs of a distance-only query
  (RoutingKit `run(s, t).distance`; starroute `weight_between`) and of one with the path (RoutingKit's `arc_path`
  too; starroute `run`, the path unpacked into search arcs), for starroute's heap-based `CHSearch` ("heap") and
  its elimination-tree walk `CCHSearch` ("tree") on the same hierarchy, with the ratios to RoutingKit;
- memory: each side built in a subprocess of its own (graph loaded and read first), its resident set after the
  build (structure, metric, one query object, the queries run) above the baseline (the graph read, starroute's
  kernels loaded), and the process's peak.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _load(path: str) -> Any:
    from app.engine.data import load, search_graph

    search = search_graph(load(path))
    for name in ("arc_tail", "arc_head", "arc_weight", "arc_dist", "arc_duration", "cch_rank", "cch_first",
                 "cch_head", "cch_arc_of"):  # fmt: skip
        int(np.asarray(getattr(search, name)).sum())  # read every page both sides read
    return search


def _order(search: Any) -> np.ndarray:
    """RoutingKit's order: the node of each rank (the inverse of `cch_rank`)."""
    rank = np.asarray(search.cch_rank)
    order = np.empty(len(rank), dtype=np.int64)
    order[rank] = np.arange(len(rank))
    return order


def _routingkit(search: Any) -> tuple[Any, Any, dict[str, float], list[int]]:
    """RoutingKit's CCH and metric of `search`: (cch, metric, seconds by step, weights list)."""
    import routingkit_cch as rk

    order = _order(search).tolist()
    tail = np.asarray(search.arc_tail).tolist()
    head = np.asarray(search.arc_head).tolist()
    weights = np.asarray(search.arc_weight).tolist()
    sec = {}
    t0 = time.perf_counter()
    cch = rk.CCH(order, tail, head, False)
    sec["structure"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    metric = rk.CCHMetric(cch, weights)
    sec["customize"] = time.perf_counter() - t0
    return cch, metric, sec, weights


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def _peak() -> int:
    """This process's resident high-water mark (VmHWM: per address space, so not the parent's, as ru_maxrss is)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _trimmed() -> int:
    """The resident set after glibc hands freed heap memory back (what is still allocated, less fragmentation)."""
    import ctypes

    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return _rss()


def child(search: Any, side: str, pairs: np.ndarray, basic: bool) -> dict[str, int]:
    """One side's memory in this (fresh) process: resident set and peak after building it and running `pairs`."""
    if side == "starroute":  # its kernels loaded before the baseline (RoutingKit's code is loaded with its module)
        from app.engine.search import cch_query
        from floor.kernels import cch_customize  # noqa: F401 - its kernels, for ready_all
        from floor.kernels.jit import ready_all

        ready_all()
        cch_query.warm()
    gc.collect()
    base = _rss()
    if side == "routingkit":
        import routingkit_cch as rk

        cch, metric, _, weights = _routingkit(search)
        del weights
        q = rk.CCHQuery(metric)
        for s, t in pairs:
            r = q.run(int(s), int(t))
            _ = r.arc_path
            del r
    else:
        from app.engine.search.cch import customize
        from app.engine.search.cch_query import CCHSearch
        from app.engine.types import Seeds

        h = customize(search, perfect=not basic)
        et = CCHSearch(h)
        z = np.zeros(1, np.int64)
        for s, t in pairs:
            et.run(Seeds(np.array([s], np.int32), z, z, 0.0, 0.0), Seeds(np.array([t], np.int32), z, z, 0.0, 0.0))
    gc.collect()
    return {"base": base, "after": _rss(), "trimmed": _trimmed(), "peak": _peak()}


def _pct(us: list[float]) -> tuple[float, float]:
    return float(np.percentile(us, 50)), float(np.percentile(us, 90))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--child", choices=("routingkit", "starroute"), help=argparse.SUPPRESS)
    ap.add_argument("--no-memory", action="store_true", help="skip the two memory subprocesses")
    ap.add_argument("--basic", action="store_true", help="query starroute's basic customization, not the perfect one")
    args = ap.parse_args()

    import routingkit_cch as rk

    from app.engine.search.cch import customize
    from app.engine.search.cch_query import CCHSearch
    from app.engine.search.ch import CHSearch
    from app.engine.types import INF_WEIGHT, Seeds

    search = _load(args.graph)
    rng = np.random.default_rng(args.seed)
    pool = np.flatnonzero(np.asarray(search.node_component) == 0)
    pairs = rng.choice(pool, size=(args.queries, 2))
    if args.child:
        print(json.dumps(child(search, args.child, pairs, args.basic)))
        return
    n, m = search.num_nodes, search.num_arcs
    print(f"graph {args.graph}: {n:,} search nodes, {m:,} search arcs; CCH {len(search.cch_head):,} arcs")

    print("\ncustomization (wall ms)")
    h = customize(search)  # its kernels loaded first
    cch, metric, weights = None, None, None
    for rnd in range(args.rounds):
        t0 = time.perf_counter()
        h = customize(search)
        ours = time.perf_counter() - t0
        steps = ", ".join(f"{k} {v * 1e3:.0f}" for k, v in h.manifest["customize_seconds"].items())
        if metric is None:
            cch, metric, sec, weights = _routingkit(search)
            print(f"  routingkit CCH structure from our order: {sec['structure'] * 1e3:.0f} ms")
            theirs, kind = sec["customize"], "CCHMetric()"
        else:
            t0 = time.perf_counter()
            metric.reset(weights)
            theirs, kind = time.perf_counter() - t0, "reset()"
        t0 = time.perf_counter()
        customize(search, perfect=False)
        basic = time.perf_counter() - t0
        print(f"  round {rnd + 1}: starroute perfect {ours * 1e3:.0f} ({steps}), basic {basic * 1e3:.0f};"
              f" routingkit {kind} {theirs * 1e3:.0f}; ratio perfect {ours / theirs:.2f}x,"
              f" basic {basic / theirs:.2f}x")  # fmt: skip
    assert metric is not None

    if args.basic:
        h = customize(search, perfect=False)
    q = rk.CCHQuery(metric)
    heap, tree = CHSearch(h), CCHSearch(h)
    print(f"\nstarroute queries on its {'basic' if args.basic else 'perfect'} customization")
    z = np.zeros(1, np.int64)
    seeds = [
        (Seeds(np.array([s], np.int32), z, z, 0.0, 0.0), Seeds(np.array([t], np.int32), z, z, 0.0, 0.0))
        for s, t in pairs
    ]

    def rk_dist(s: int, t: int) -> int:
        r = q.run(s, t)
        d = r.distance
        del r
        return int(INF_WEIGHT) if d is None else int(d)

    def rk_path(s: int, t: int) -> int:
        r = q.run(s, t)
        d = r.distance
        _ = r.arc_path
        del r
        return int(INF_WEIGHT) if d is None else int(d)

    engines = {
        "routingkit": (rk_dist, rk_path),
        "heap": (heap.weight_between, None),
        "tree": (tree.weight_between, None),
    }
    mism = {"heap": 0, "tree": 0}
    for s, t in pairs[:20]:
        rk_path(int(s), int(t))  # warm up
        heap.weight_between(int(s), int(t))
        tree.weight_between(int(s), int(t))
    for k, (s, t) in enumerate(pairs):
        want = rk_dist(int(s), int(t))
        for name, eng in (("heap", heap), ("tree", tree)):
            w = eng.run(*seeds[k]).weight
            mism[name] += w != want or eng.weight_between(int(s), int(t)) != want
    print(f"\n{args.queries} random pairs: distance mismatches against RoutingKit: heap {mism['heap']}, tree"
          f" {mism['tree']}")  # fmt: skip

    print("\nqueries (µs; ratio = starroute / routingkit, same round)")
    print("| round | engine | distance p50 | p90 | ratio p50 | with path p50 | p90 | ratio p50 |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for rnd in range(args.rounds):
        names = list(engines) if rnd % 2 == 0 else list(reversed(engines))
        res: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in engines}
        for name in names:
            dist_fn, _ = engines[name]
            us = res[name][0]
            for s, t in pairs:
                si, ti = int(s), int(t)
                t0 = time.perf_counter()
                dist_fn(si, ti)
                us.append((time.perf_counter() - t0) * 1e6)
            us = res[name][1]
            if name == "routingkit":
                for s, t in pairs:
                    si, ti = int(s), int(t)
                    t0 = time.perf_counter()
                    rk_path(si, ti)
                    us.append((time.perf_counter() - t0) * 1e6)
            else:
                eng = heap if name == "heap" else tree
                for a, b in seeds:
                    t0 = time.perf_counter()
                    eng.run(a, b)
                    us.append((time.perf_counter() - t0) * 1e6)
        ref_d, ref_p = _pct(res["routingkit"][0])[0], _pct(res["routingkit"][1])[0]
        for name in engines:
            d50, d90 = _pct(res[name][0])
            p50, p90 = _pct(res[name][1])
            print(f"| {rnd + 1} | {name} | {d50:.1f} | {d90:.1f} | {d50 / ref_d:.2f}x | {p50:.1f} | {p90:.1f} |"
                  f" {p50 / ref_p:.2f}x |")  # fmt: skip

    if args.no_memory:
        return
    print("\nmemory (MiB above the loaded graph; a subprocess each: build, one query object, the queries)")
    got: dict[str, dict[str, int]] = {}
    for side in ("starroute", "routingkit"):
        cmd = [sys.executable, "-m", "bench.routingkit", args.graph, "--queries", str(args.queries), "--seed",
               str(args.seed), "--child", side] + (["--basic"] if args.basic else [])  # fmt: skip
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        got[side] = json.loads(out)
    mib = 1 << 20
    cch_b = sum(int(np.asarray(getattr(search, k)).nbytes) for k in ("cch_rank", "cch_first", "cch_head", "cch_arc_of"))
    extra = {"starroute": cch_b, "routingkit": 0}  # starroute's CCH structure is read from the graph's files
    for side, v in got.items():
        print(f"  {side}: resident {(v['after'] - v['base']) / mib:.1f}, after malloc_trim"
              f" {(v['trimmed'] - v['base']) / mib:.1f}, peak {(v['peak'] - v['base']) / mib:.1f}"
              f" (+ structure on file {extra[side] / mib:.1f}); baseline {v['base'] / mib:.0f}")  # fmt: skip
    for key in ("after", "trimmed", "peak"):
        ours, theirs = (got[k][key] - got[k]["base"] + extra[k] for k in ("starroute", "routingkit"))
        print(f"  ratio starroute / routingkit, {key} (structure included): {ours / max(theirs, 1):.2f}x")
    struct = sum(int(np.asarray(x).nbytes) for x in h.arrays.values())
    print(f"  starroute arrays: customized hierarchy {struct / mib:.1f} MiB, CCH structure (mapped) {cch_b / mib:.1f}"
          " MiB")  # fmt: skip


if __name__ == "__main__":
    main()

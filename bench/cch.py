"""The customizable hierarchy beside today's witness-search CH, in one run on one graph.

    python bench/cch.py GRAPH_DIR [--queries 1000] [--table 100] [--orders metis,kahip] [--repeat 3]

GRAPH_DIR is a preprocessed graph (with its `ch_*` hierarchy; `cch_*` arrays are rebuilt here for each order, so
the order's time is measured). Prints, per order: order seconds, CCH arcs, max upward degree, elimination-tree
depth; per customization (basic, perfect): wall seconds by step (best of `--repeat`), the arcs kept; then route
queries on `--queries` random search-node pairs of the largest component (`CHSearch.run` with path unpacking,
p50/p90 µs, mean settled nodes) and a `--table` x `--table` `CHTable` (ms), on the witness CH and on each
customized hierarchy, after checking that they all return the same weights.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--table", type=int, default=100)
    ap.add_argument("--orders", default="metis")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    from app.engine.data import load, search_graph
    from app.engine.features.table import CHTable
    from app.engine.search.cch import customize
    from app.engine.search.ch import CHSearch
    from app.engine.types import Seeds
    from preprocessing.cch import build_cch

    graph = load(args.graph)
    search = search_graph(graph)
    n = search.num_nodes
    print(f"graph {args.graph}: {n:,} search nodes, {search.num_arcs:,} search arcs")
    stages = graph.manifest.get("stages", {})
    for name in ("contract (CH)", "cch (order)"):
        if name in stages:
            print(f"  preprocess stage {name!r}: {stages[name].get('seconds')} s")
    ch = search.manifest.get("ch", {})
    print(f"witness CH: {len(search.ch_up_arcs) + len(search.ch_down_arcs):,} arcs (up+down), max level"
          f" {ch.get('max_level')}")  # fmt: skip

    rng = np.random.default_rng(args.seed)
    comp = np.asarray(search.node_component)
    pool = np.flatnonzero(comp == 0)
    pairs = rng.choice(pool, size=(args.queries, 2))

    def seeds(v: int) -> Seeds:
        return Seeds(np.array([v], np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), 0.0, 0.0)

    def routes(h: object) -> tuple[np.ndarray, np.ndarray, float]:
        s = CHSearch(h)
        for u, v in pairs[:20]:  # warm up
            s.run(seeds(int(u)), seeds(int(v)))
        us, ws, settled = [], [], []
        for u, v in pairs:
            su, sv = seeds(int(u)), seeds(int(v))
            t0 = time.perf_counter()
            r = s.run(su, sv)
            us.append((time.perf_counter() - t0) * 1e6)
            ws.append(r.weight)
            settled.append(r.stats.settled)
        return np.asarray(us), np.asarray(ws), float(np.mean(settled))

    def table_ms(h: object) -> tuple[float, np.ndarray]:
        t = CHTable(h)
        src = [seeds(int(v)) for v in pairs[: args.table, 0]]
        dst = [seeds(int(v)) for v in pairs[: args.table, 1]]
        t.run(src[:2], dst[:2])
        best = np.inf
        for _ in range(3):
            t0 = time.perf_counter()
            w, _d = t.run(src, dst)
            best = min(best, time.perf_counter() - t0)
        return best * 1e3, w

    rows = []
    us, ref_w, settled = routes(search)
    tms, ref_t = table_ms(search)
    rows.append(("witness CH", us, settled, tms))
    for order in args.orders.split(","):
        arrays, meta = build_cch(search, order)
        print(f"order {order}: {meta['seconds']['order']:.2f} s order + {meta['seconds']['contract']:.2f} s"
              f" contraction; {meta['arcs']:,} CCH arcs, max up degree {meta['max_up_degree']},"
              f" elimination-tree depth {meta['tree_depth']}")  # fmt: skip
        search.arrays.update(arrays)
        for perfect in (False, True):
            best, steps, h = np.inf, {}, None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                h = customize(search, perfect=perfect)
                dt = time.perf_counter() - t0
                if dt < best:
                    best, steps = dt, h.manifest["customize_seconds"]
            assert h is not None
            kind = "perfect" if perfect else "basic"
            kept = len(h.ch_up_arcs) + len(h.ch_down_arcs)
            steps_txt = ", ".join(f"{k} {v * 1e3:.0f}" for k, v in steps.items())
            print(f"  customize {kind}: {best * 1e3:.0f} ms ({steps_txt} ms); {kept:,} arcs kept (up+down)")
            us, w, settled = routes(h)
            assert np.array_equal(w, ref_w), f"CCH {order} {kind} disagrees with the witness CH"
            tms, tw = table_ms(h)
            assert np.array_equal(tw, ref_t), f"CCH {order} {kind} table disagrees with the witness CH"
            rows.append((f"CCH {order} {kind}", us, settled, tms))
    print(f"\nroutes: {args.queries} random pairs (CHSearch.run with unpacking); table {args.table}x{args.table}")
    print("| hierarchy | route p50 µs | route p90 µs | settled (mean) | table ms |")
    print("|---|---:|---:|---:|---:|")
    for name, us, settled, tms in rows:
        print(f"| {name} | {np.percentile(us, 50):.0f} | {np.percentile(us, 90):.0f} | {settled:.0f} | {tms:.1f} |")


if __name__ == "__main__":
    main()

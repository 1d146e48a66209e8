"""Query benchmark: every starroute search vs networkx and pandana's CH on the same graph and random pairs.

    python bench/query.py GRAPH_DIR [--pairs 1000] [--seed 1] [--nx-pairs 100] [--table 100] [--baseline REV]

`--baseline REV` also runs this script as it was at git revision REV (a temporary worktree, same graph, pairs and
seed) before this one, and prints each algorithm's p50 and settled nodes side by side with the ratio: the before and
after of an engine change, measured in one run on one machine. When the graph format changed since REV, give the
same extract preprocessed by REV with `--baseline-graph DIR`.

Pairs are drawn (seeded) from the largest SCC, so every pair is connected. Each engine answers the same pairs;
every answer is checked against the reference Dijkstra's weight. Per engine it prints p50/p90/p99 wall
microseconds per query (Python call included; ours return the arc path, pandana's raw call returns a distance or a
node path), mean settled nodes (where the engine reports them), preprocessing seconds and memory (ours: the
manifest's stage time and the process's peak RSS then; networkx / pandana: build time and RSS growth here), and
the p50 ratio to networkx's `bidirectional_dijkstra` and to pandana's raw CH call, measured in this run.
Then a many-to-many table (starroute `CHTable` vs pandana `shortest_path_distances`). networkx runs on
`--nx-pairs` of the pairs (it is slow); the header says so.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from app.engine.data import has_ch, has_landmarks, load, search_graph  # noqa: E402
from app.engine.geo import node_geo  # noqa: E402
from app.engine.search.algorithms import ALGORITHMS  # noqa: E402
from app.engine.types import Seeds  # noqa: E402
from floor.format.graph import Graph
from floor.format.units import COORD_SCALE  # noqa: E402

STAGE = {"alt": "landmarks (ALT)", "ch": "contract (CH)"}
REFERENCE = "reference dijkstra"


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


class Row:
    """One engine's measurements."""

    def __init__(self, name: str, pairs: int) -> None:
        self.name = name
        self.pairs = pairs
        self.us: list[float] = []
        self.settled: list[int] = []
        self.prep_s: float | None = None
        self.prep_mb: float | None = None
        self.mismatches = 0
        self.note = ""

    def p(self, q: float) -> float:
        return float(np.percentile(self.us, q)) if self.us else float("nan")


def node_seeds(graph: Graph, v: int) -> Seeds:
    lon = float(graph.node_lon[v]) / COORD_SCALE
    lat = float(graph.node_lat[v]) / COORD_SCALE
    return Seeds(np.array([v], np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), lon, lat)


def time_calls(fn: Callable[[int, int], Any], pairs: np.ndarray, warm: int = 5) -> tuple[list[float], list[Any]]:
    """Wall microseconds of fn(s, t) per pair (after a few warm-up calls) and the results."""
    for s, t in pairs[:warm]:
        fn(int(s), int(t))
    us: list[float] = []
    out: list[Any] = []
    gc.disable()
    try:
        for s, t in pairs:
            s, t = int(s), int(t)
            t0 = time.perf_counter_ns()
            r = fn(s, t)
            us.append((time.perf_counter_ns() - t0) / 1000.0)
            out.append(r)
    finally:
        gc.enable()
    return us, out


def bench_ours(graph: Graph, pairs: np.ndarray, seeds: list[tuple[Seeds, Seeds]]) -> tuple[list[Row], np.ndarray]:
    rows: list[Row] = []
    ref = np.zeros(len(pairs), dtype=np.int64)
    stages = graph.manifest.get("stages", {})
    index = {(int(s), int(t)): i for i, (s, t) in enumerate(pairs)}
    from app.engine.search.ch import CHSearch
    from app.engine.search.reference import DijkstraSearch
    from app.engine.search.searches import CoreSearch

    engines: list[tuple[str, Any]] = [(REFERENCE, DijkstraSearch)]
    for spec in reversed(ALGORITHMS.values()):  # slowest first, as the table always read
        if spec.needs == "landmarks" and not has_landmarks(graph) or spec.needs == "ch" and not has_ch(graph):
            continue
        engines.append((spec.name, CHSearch if spec.engine == "ch" else (lambda g, n=spec.name: CoreSearch(g, n))))
    for name, cls in engines:
        search = cls(graph)
        row = Row(name, len(pairs))

        def fn(s: int, t: int, search: Any = search) -> Any:
            i = index[(s, t)]
            return search.run(*seeds[i])

        row.us, results = time_calls(fn, pairs)
        row.settled = [r.stats.settled for r in results]
        weights = np.array([r.weight for r in results], dtype=np.int64)
        if name == REFERENCE:
            ref = weights
        row.mismatches = int(np.count_nonzero(weights != ref))
        st = stages.get(STAGE.get(name, ""), None)
        if st is not None:
            row.prep_s, row.prep_mb = st.get("seconds"), st.get("peak_rss_mb")
        elif name not in STAGE:
            row.prep_s, row.prep_mb = 0.0, 0.0
        rows.append(row)
    return rows, ref


def bench_networkx(graph: Graph, pairs: np.ndarray, ref: np.ndarray) -> list[Row]:
    try:
        import networkx as nx
    except ImportError:
        print("  (networkx not installed; skipped)")
        return []
    from preprocessing.export import networkx_astar_heuristic, to_networkx

    gc.collect()
    m0, t0 = rss_mb(), time.perf_counter()
    G = to_networkx(graph, multigraph=False)
    prep_s, prep_mb = time.perf_counter() - t0, rss_mb() - m0
    heuristic = networkx_astar_heuristic(graph, node_geo(graph).vmax_mps)
    rows = []
    for name, fn in (
        ("networkx bidirectional_dijkstra", lambda s, t: nx.bidirectional_dijkstra(G, s, t, weight="weight")[0]),
        (
            "networkx astar_path",
            lambda s, t: nx.path_weight(G, nx.astar_path(G, s, t, heuristic=heuristic, weight="weight"), "weight"),
        ),
    ):
        row = Row(name, len(pairs))
        row.us, results = time_calls(fn, pairs, warm=1)
        row.mismatches = int(np.count_nonzero(np.array(results, dtype=np.int64) != ref[: len(pairs)]))
        row.prep_s, row.prep_mb = prep_s, prep_mb
        rows.append(row)
    return rows


def build_pandana(graph: Graph) -> tuple[Any, float, float] | None:
    try:
        import pandana as pdna
        import pandas as pd
    except ImportError:
        print("  (pandana not installed: `pip install pandana`; skipped)")
        return None
    tail = np.asarray(graph.arc_tail)
    head = np.asarray(graph.arc_head)
    weight = np.asarray(graph.arc_weight)
    keep = tail != head  # pandana's CH keeps the lightest of parallel arcs itself; self-loops never help
    x = pd.Series(np.asarray(graph.node_lon) / COORD_SCALE, index=np.arange(graph.num_nodes))
    y = pd.Series(np.asarray(graph.node_lat) / COORD_SCALE, index=np.arange(graph.num_nodes))
    edges = pd.DataFrame({"w": weight[keep].astype(np.float64)})
    gc.collect()
    m0, t0 = rss_mb(), time.perf_counter()
    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1)
    try:  # pandana's C++ prints progress dots on stdout
        sys.stdout.flush()
        os.dup2(devnull, 1)
        net = pdna.Network(x, y, pd.Series(tail[keep]), pd.Series(head[keep]), edges, twoway=False)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
    return net, time.perf_counter() - t0, rss_mb() - m0


def bench_pandana(pd_net: tuple[Any, float, float], pairs: np.ndarray, ref: np.ndarray) -> list[Row]:
    import pandas as pd

    net, prep_s, prep_mb = pd_net
    idx = net._node_indexes(pd.Series(np.arange(len(net.node_ids)))).to_numpy()
    raw = net.net
    rows = []
    for name, fn in (
        ("pandana CH distance (raw)", lambda s, t: raw.shortest_path_distance(int(idx[s]), int(idx[t]), 0)),
        ("pandana CH path (raw)", lambda s, t: raw.shortest_path(int(idx[s]), int(idx[t]), 0)),
    ):
        row = Row(name, len(pairs))
        row.us, results = time_calls(fn, pairs)
        if "distance" in name:
            got = np.rint(np.array(results, dtype=np.float64)).astype(np.int64)
            row.mismatches = int(np.count_nonzero(got != ref))
        row.prep_s, row.prep_mb = prep_s, prep_mb
        rows.append(row)
    return rows


def print_rows(rows: list[Row]) -> None:
    base_nx = next((r.p(50) for r in rows if r.name == "networkx bidirectional_dijkstra"), None)
    base_pd = next((r.p(50) for r in rows if r.name == "pandana CH distance (raw)"), None)
    head = (
        f"{'engine':34s} {'pairs':>5s} {'p50 us':>10s} {'p90 us':>10s} {'p99 us':>10s} {'settled':>9s} "
        f"{'prep s':>7s} {'prep MB':>8s} {'x nx':>8s} {'x pandana':>9s} {'wrong':>5s}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        settled = f"{np.mean(r.settled):9.0f}" if r.settled else f"{'-':>9s}"
        prep_s = f"{r.prep_s:7.2f}" if r.prep_s is not None else f"{'?':>7s}"
        prep_mb = f"{r.prep_mb:8.0f}" if r.prep_mb is not None else f"{'?':>8s}"
        vs_nx = f"{r.p(50) / base_nx:8.4f}" if base_nx else f"{'-':>8s}"
        vs_pd = f"{r.p(50) / base_pd:9.3f}" if base_pd else f"{'-':>9s}"
        print(
            f"{r.name:34s} {r.pairs:5d} {r.p(50):10.1f} {r.p(90):10.1f} {r.p(99):10.1f} {settled} "
            f"{prep_s} {prep_mb} {vs_nx} {vs_pd} {r.mismatches:5d}"
        )


def bench_table(graph: Graph, size: int, rng: np.random.Generator, pd_net: tuple[Any, float, float] | None) -> None:
    main = np.flatnonzero(np.asarray(graph.node_component) == 0)
    src = rng.choice(main, size)
    dst = rng.choice(main, size)
    print(f"\n{size}x{size} table (sources and destinations in the largest SCC)")
    ours = None
    if has_ch(graph):
        try:
            table_cls = importlib.import_module("app.engine.features.table").CHTable
        except (ImportError, AttributeError) as exc:
            print(f"  (CHTable: {exc}; skipped)")
            table_cls = None
        if table_cls is not None:
            tbl = table_cls(graph)
            ss = [node_seeds(graph, int(v)) for v in src]
            ts = [node_seeds(graph, int(v)) for v in dst]
            tbl.run(ss[:2], ts[:2])
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                w, _ = tbl.run(ss, ts)
                best = min(best, time.perf_counter() - t0)
            ours = np.asarray(w, dtype=np.int64)
            print(f"  starroute CHTable               {best * 1e3:10.1f} ms  ({best * 1e6 / size / size:.2f} us/cell)")
    if pd_net is not None:
        import pandas as pd

        net = pd_net[0]
        idx = net._node_indexes(pd.Series(np.arange(len(net.node_ids)))).to_numpy()
        a = np.repeat(idx[src], size).astype(np.int64)
        b = np.tile(idx[dst], size).astype(np.int64)
        raw = net.net
        raw.shortest_path_distances(a[:10], b[:10], 0)
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            d = raw.shortest_path_distances(a, b, 0)
            best = min(best, time.perf_counter() - t0)
        print(f"  pandana shortest_path_distances {best * 1e3:10.1f} ms  ({best * 1e6 / size / size:.2f} us/cell)")
        theirs = np.rint(np.asarray(d, dtype=np.float64)).astype(np.int64).reshape(size, size)
        if ours is not None:
            print(f"  cells that differ: {int(np.count_nonzero(ours != theirs))}")


def run_baseline(rev: str, args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    """Run this benchmark as it was at git revision `rev` on the same graph and pairs; {engine: (p50 us, settled)}."""
    import subprocess
    import tempfile

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    work = tempfile.mkdtemp(prefix="starroute-baseline-")
    tree = os.path.join(work, "tree")
    subprocess.run(["git", "-C", root, "worktree", "add", "--detach", tree, rev], check=True, capture_output=True)
    try:
        graph = os.path.abspath(args.baseline_graph or args.graph)
        cmd = [sys.executable, os.path.join(tree, "bench", "query.py"), graph,
               "--pairs", str(args.pairs), "--seed", str(args.seed), "--nx-pairs", "0", "--table", "0",
               "--no-pandana"]  # fmt: skip
        proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
        out = proc.stdout
        if proc.returncode != 0:
            print(f"baseline {rev} failed: {proc.stderr.strip()[-400:]}", file=sys.stderr)
    finally:
        subprocess.run(["git", "-C", root, "worktree", "remove", "--force", tree], capture_output=True)
    rows: dict[str, tuple[float, float]] = {}
    for line in out.splitlines():
        parts = line.split()
        for width in (2, 1):  # engine names are one or two words
            name = " ".join(parts[:width])
            rest = parts[width:]
            if len(rest) >= 5 and rest[0].isdigit():
                try:
                    rows[name] = (float(rest[1]), float(rest[4]) if rest[4] != "-" else float("nan"))
                except ValueError:
                    continue
                break
    return rows


def print_comparison(rev: str, before: dict[str, tuple[float, float]], rows: list[Row]) -> None:
    print(f"\nbefore ({rev}) and after, p50 us per query and mean settled nodes, same pairs, this machine, this run")
    print(f"{'engine':24s} {'p50 before':>11s} {'p50 after':>10s} {'after/before':>12s} {'settled before':>15s} "
          f"{'settled after':>14s}")  # fmt: skip
    for r in rows:
        key = "dijkstra" if r.name == REFERENCE else r.name
        if key not in before or not r.us:
            continue
        b50, bset = before[key]
        label = "dijkstra (reference)" if r.name == REFERENCE else r.name
        print(f"{label:24s} {b50:11.1f} {r.p(50):10.1f} {r.p(50) / b50:12.2f} {bset:15.0f} {np.mean(r.settled):14.0f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph", help="graph directory (starroute preprocess output)")
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nx-pairs", type=int, default=100, help="pairs for networkx (slow); 0 skips it")
    ap.add_argument("--table", type=int, default=100, help="size of the square table; 0 skips it")
    ap.add_argument("--no-pandana", action="store_true")
    ap.add_argument("--baseline", metavar="REV", help="also run the benchmark of git revision REV, side by side")
    ap.add_argument(
        "--baseline-graph", metavar="DIR", help="the same extract preprocessed by REV, when the graph format changed"
    )
    args = ap.parse_args(argv)
    before = run_baseline(args.baseline, args) if args.baseline else None

    graph = search_graph(load(args.graph))  # the graph the searches run on: edge-based where the graph has turns
    mf = graph.manifest
    print(
        f"graph {args.graph} ({mf.get('search_graph', 'node')}-based search graph): "
        f"{graph.num_nodes} nodes, {graph.num_arcs} arcs, profile {mf.get('profile')}, "
        f"largest SCC {int(np.count_nonzero(np.asarray(graph.node_component) == 0))} nodes"
    )
    rng = np.random.default_rng(args.seed)
    main_nodes = np.flatnonzero(np.asarray(graph.node_component) == 0)
    pairs = rng.choice(main_nodes, size=(args.pairs, 2))
    seeds = [(node_seeds(graph, int(s)), node_seeds(graph, int(t))) for s, t in pairs]
    print(f"{args.pairs} random pairs in the largest SCC (seed {args.seed}); networkx on the first {args.nx_pairs}\n")
    rows, ref = bench_ours(graph, pairs, seeds)
    if args.nx_pairs > 0:
        rows += bench_networkx(graph, pairs[: args.nx_pairs], ref)
    pd_net = None if args.no_pandana else build_pandana(graph)
    if pd_net is not None:
        rows += bench_pandana(pd_net, pairs, ref)
    print_rows(rows)
    byname = {r.name: r for r in rows}
    if "bidirectional-dijkstra" in byname:
        bd = np.mean(byname["bidirectional-dijkstra"].settled)
        facts = [
            f"{k} {bd / np.mean(byname[k].settled):.1f}x"
            for k in ("astar", "bidirectional-astar", "alt", "ch")
            if k in byname and np.mean(byname[k].settled) > 0
        ]
        print(f"\nsettled-node reduction vs bidirectional-dijkstra: {', '.join(facts)}")
    bad = sum(r.mismatches for r in rows)
    print(f"answers differing from the reference Dijkstra: {bad}")
    if before is not None:
        print_comparison(args.baseline, before, [r for r in rows if r.name in ALGORITHMS or r.name == REFERENCE])
    if args.table > 0:
        bench_table(graph, args.table, rng, pd_net)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""CH scaling benchmark: contraction seconds, peak memory, shortcuts, and query p50 per graph.

    python bench/ch_scale.py GRAPH_DIR [GRAPH_DIR ...]     # graph directories (with or without ch_* arrays)
    python bench/ch_scale.py --grid 100000 1000000         # synthetic hierarchical grids built in memory
    python bench/ch_scale.py --osm 100000 1000000 3000000  # ../shared/tools/synth_roads.py -> preprocess -> CH

Every case runs in its own subprocess so its peak RSS is its own. Columns: nodes/arcs of the graph as contracted,
contraction seconds (build_ch wall), CPU seconds, peak RSS of the process and its growth during build_ch, shortcuts
per original arc, then `--queries` random pairs within the largest component: CHSearch p50/p90 µs including path
unpacking, mean settled nodes, and a 100x100 CHTable in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SYNTH = ROOT.parent / "shared" / "tools" / "synth_roads.py"


def _rss_mb() -> float:
    """Peak RSS of this process in MB (VmHWM: unlike ru_maxrss it is not inherited across fork + exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def grid_arrays(nodes: int, seed: int = 1) -> dict[str, np.ndarray]:
    """A road-like grid: 100-150 m blocks, arterials every 5/10/20 lines, 8% streets missing, 5% oneway."""
    from preprocessing.graph import arrays_from_arcs

    rng = np.random.default_rng(seed)
    k = int(np.sqrt(nodes))
    idx = np.arange(k * k).reshape(k, k)
    tails, heads, lines = [], [], []
    for a, b, line in (
        (idx[:, :-1], idx[:, 1:], np.broadcast_to(np.arange(k)[:, None], (k, k - 1))),  # along rows
        (idx[:-1, :], idx[1:, :], np.broadcast_to(np.arange(k)[None, :], (k - 1, k))),  # along columns
    ):
        tails.append(a.ravel())
        heads.append(b.ravel())
        lines.append(line.ravel())
    t = np.concatenate(tails)
    h = np.concatenate(heads)
    line = np.concatenate(lines)
    speed = np.full(len(t), 30.0 / 3.6)
    speed[line % 5 == 0] = 50 / 3.6
    speed[line % 20 == 0] = 80 / 3.6
    speed[line % 60 == 0] = 120 / 3.6
    keep = (rng.random(len(t)) > 0.08) | (line % 5 == 0)
    t, h, speed = t[keep], h[keep], speed[keep]
    length = rng.uniform(100, 150, len(t))
    w = np.maximum(1, np.ceil(length / speed * 10)).astype(np.int64)
    d = np.round(length * 10).astype(np.int64)
    oneway = rng.random(len(t)) < 0.05
    flip = rng.random(len(t)) < 0.5
    ft, fh = np.where(flip, h, t), np.where(flip, t, h)
    both = ~oneway
    tail = np.concatenate([ft, fh[both]])
    head = np.concatenate([fh, ft[both]])
    ww = np.concatenate([w, w[both]])
    dd = np.concatenate([d, d[both]])
    lon = (idx % k).ravel() * 0.0015
    lat = (idx // k).ravel() * 0.0011
    return arrays_from_arcs(tail, head, ww, dd, lon=lon, lat=lat, n=k * k)


def osm_graph(nodes: int, workdir: Path) -> Path:
    """synth_roads.py --nodes N --seed 1 -> preprocess(car, no CH, no landmarks); cached in `workdir`."""
    from preprocessing.pipeline import preprocess

    out = workdir / f"synth-{nodes}"
    if (out / "manifest.json").exists():
        return out
    pbf = workdir / f"roads-{nodes}.osm.pbf"
    if not pbf.exists():
        subprocess.run(
            [sys.executable, str(SYNTH), "--nodes", str(nodes), "--seed", "1", "--output", str(pbf)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    preprocess(pbf, out, profile="car", ch=False, landmarks=0, force=True, quiet=True)
    return out


def run_case(spec: str, queries: int) -> dict:
    """One benchmark case in this process: build the CH (unless stored), then time queries."""
    from app.engine.data import search_graph
    from app.engine.features.table import CHTable
    from app.engine.search.ch import CHSearch
    from app.engine.types import Seeds
    from floor.format.graph import graph_in_memory, load_graph
    from preprocessing.contract import build_ch

    kind, _, arg = spec.partition(":")
    graph = graph_in_memory(grid_arrays(int(arg))) if kind == "grid" else search_graph(load_graph(arg))
    row: dict = {"case": spec if kind == "grid" else Path(arg).name, "nodes": graph.num_nodes, "arcs": graph.num_arcs}
    rss0 = _rss_mb()
    if graph.has("ch_rank"):
        meta = graph.manifest.get("ch", {})
        row["stored_ch"] = True
    else:
        t0, c0 = time.perf_counter(), time.process_time()
        arrays, meta = build_ch(graph)
        row["contract_s"] = round(time.perf_counter() - t0, 2)
        row["cpu_s"] = round(time.process_time() - c0, 2)
        graph.arrays.update(arrays)
    row["rss_mb"] = round(_rss_mb())
    row["rss_growth_mb"] = round(_rss_mb() - rss0)
    row["shortcuts_per_arc"] = meta.get("shortcuts_per_arc")
    row["phases"] = meta.get("seconds")

    rng = np.random.default_rng(7)
    comp = np.flatnonzero(np.asarray(graph.node_component) == 0)
    pairs = rng.choice(comp, size=(queries, 2))
    zero = np.zeros(1, dtype=np.int64)

    def seeds(v: int) -> Seeds:
        return Seeds(np.array([v], dtype=np.int32), zero, zero, 0.0, 0.0)

    q = CHSearch(graph)
    q.run(seeds(int(pairs[0, 0])), seeds(int(pairs[0, 1])))  # warm-up (numba cache load)
    micros, settled = [], []
    for s, t in pairs:
        a, b = seeds(int(s)), seeds(int(t))
        t0 = time.perf_counter()
        res = q.run(a, b)
        micros.append((time.perf_counter() - t0) * 1e6)
        settled.append(res.stats.settled)
    row["query_p50_us"] = round(float(np.percentile(micros, 50)), 1)
    row["query_p90_us"] = round(float(np.percentile(micros, 90)), 1)
    row["settled_mean"] = round(float(np.mean(settled)), 1)
    tab = CHTable(graph)
    pts = [seeds(int(v)) for v in rng.choice(comp, size=100)]
    tab.run(pts[:2], pts[:2])
    t0 = time.perf_counter()
    tab.run(pts, pts)
    row["table_100x100_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graphs", nargs="*", help="graph directories")
    ap.add_argument("--grid", nargs="*", type=int, default=[], help="synthetic grid sizes (nodes)")
    ap.add_argument("--osm", nargs="*", type=int, default=[], help="synth_roads.py sizes (OSM nodes)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "starroute-bench"))
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(run_case(args.worker, args.queries)))
        return
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    specs = [f"dir:{g}" for g in args.graphs] + [f"grid:{n}" for n in args.grid]
    for n in args.osm:
        t0 = time.perf_counter()
        specs.append(f"dir:{osm_graph(n, work)}")
        print(f"# synth {n}: generated + preprocessed (no CH) in {time.perf_counter() - t0:.1f} s", flush=True)
    cols = [
        "case",
        "nodes",
        "arcs",
        "contract_s",
        "cpu_s",
        "rss_mb",
        "rss_growth_mb",
        "shortcuts_per_arc",
        "query_p50_us",
        "query_p90_us",
        "settled_mean",
        "table_100x100_ms",
    ]
    print(" | ".join(cols), flush=True)
    for spec in specs:
        out = subprocess.run(
            [sys.executable, __file__, "--worker", spec, "--queries", str(args.queries)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        row = json.loads(out.strip().splitlines()[-1])
        print(" | ".join(str(row.get(c, "")) for c in cols), flush=True)
        print(f"#   phases: {row.get('phases')}", flush=True)


if __name__ == "__main__":
    main()

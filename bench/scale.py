"""Scale figures on real structure, with turns: 1 M to 20 M node networks, starroute beside OSRM in one run.

    python bench/scale.py [--sizes 1000000,2000000,3000000] [--work /tmp/starroute-scale] [--duration 10]
                          [--rounds 3] [--pairs 500] [--osrm-dir DIR] [--reuse] [--build-only] [--synthetic]
                          [--no-osrm] [--low-memory]

Per size N: `../shared/tools/tile_extracts.py --nodes N` tiles the real extracts into one network (cached in `--work`);
`starroute preprocess` (car, turns, CH + CCH + 16 landmarks, as by default) is timed as a command, with its peak RSS and
its stages' seconds from the manifest; OSRM's `osrm-extract` (car.lua) + `osrm-contract` the same way. Then both serve
the same `--pairs` random routes at once (starroute `serve --workers 2`, osrm-routed `-t 2`; wrk, 16 connections,
`--duration` seconds, the two in turn for `--rounds` rounds, medians: whatever else the machine does then hits both
alike): p50 and req/s; then, with that traffic behind them, each server's memory (starroute's 2 workers and their
supervisor: the PSS summed; osrm-routed: its RSS), the issue's serving goal. Memory: the server's processes' PSS with 1
worker and with 2, after the same requests, so the difference is what one more worker costs (the graph's pages are
shared). `--reuse` keeps a graph and an OSRM dataset built by an earlier run (their build columns then stay empty): the
HTTP figures again.

Memory per stage: after the table, per size, each stage's peak RSS (the process's peak at the stage's end, from the
manifest) and the stage that holds the run's peak (the first to reach it), with OSRM's extract and contract peaks
beside. `--build-only` stops after the builds (no serving: the preprocess table alone, in a fraction of the time);
`--synthetic` makes the networks with `../shared/tools/synth_roads.py` (any size, a jittered grid) instead of tiling
the real extracts; `--no-osrm` builds starroute alone; `--low-memory` passes it to `starroute preprocess`.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx  # noqa: E402

from app.engine.data import load  # noqa: E402
from bench.http_load import osrm_paths, random_pairs, run_wrk  # noqa: E402
from bench.soak import memory  # noqa: E402
from harness.osrm_peer import ensure_osrm  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402

ROOT = HERE.parent
TILER = ROOT.parent / "shared" / "tools" / "tile_extracts.py"
SYNTH = ROOT.parent / "shared" / "tools" / "synth_roads.py"


def timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of a command, by GNU time."""
    out = subprocess.run(
        ["/usr/bin/time", "-f", "TIME %e %M", *cmd], cwd=cwd, capture_output=True, text=True, check=False
    )
    m = re.search(r"TIME ([\d.]+) (\d+)", out.stderr)
    if out.returncode != 0 or not m:
        raise RuntimeError(f"{cmd[0]} failed: {out.stderr[-800:]}")
    return float(m.group(1)), int(m.group(2)) / 1024


def tiled(n: int, work: Path, synthetic: bool = False) -> Path:
    """The network of `n` OSM nodes (cached in `work`): tiled real extracts, or `synthetic` roads (seed 1)."""
    out = work / (f"synth-{n}.osm.pbf" if synthetic else f"tiled-{n}.osm.pbf")
    if not out.exists():
        tool = [str(SYNTH), "--seed", "1"] if synthetic else [str(TILER)]
        subprocess.run([sys.executable, *tool, "--nodes", str(n), "--output", str(out)], check=True)
    return out


def osrm_dir(extract: Path, work: Path) -> Path:
    """Where OSRM's dataset of a tiled extract is built."""
    return work / f"osrm-{extract.stem.split('.')[0]}"


def osrm_build(bin_dir: Path, extract: Path, work: Path) -> tuple[Path, dict[str, tuple[float, float]]]:
    d = osrm_dir(extract, work)
    d.mkdir(exist_ok=True)
    local = d / extract.name
    if not local.exists():
        local.symlink_to(extract)
    profile = bin_dir.parent / "share" / "profiles" / "car.lua"
    figures = {"extract": timed([str(bin_dir / "osrm-extract"), "-p", str(profile), str(local)], cwd=d)}
    base = next(d.glob("*.osrm.properties")).with_suffix("")
    figures["contract"] = timed([str(bin_dir / "osrm-contract"), str(base)], cwd=d)
    return base, figures


def pss_after(graph: Path, workers: int, paths: list[str]) -> float:
    proc, base = start_starroute(graph, workers=workers)
    try:
        with httpx.Client(base_url=base, timeout=60) as c:
            for p in paths[:200]:
                c.get(p)
        return memory(proc.pid)[1]
    finally:
        stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000000,2000000,3000000")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "starroute-scale")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--pairs", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    ap.add_argument("--reuse", action="store_true", help="keep graphs and OSRM datasets an earlier run built")
    ap.add_argument("--build-only", action="store_true", help="the builds alone: no serving, no HTTP, no PSS")
    ap.add_argument("--synthetic", action="store_true", help="synth_roads.py networks instead of tiled extracts")
    ap.add_argument("--no-osrm", action="store_true", help="starroute alone")
    ap.add_argument("--low-memory", action="store_true", help="starroute preprocess --low-memory")
    args = ap.parse_args()
    bin_dir = None if args.no_osrm else ensure_osrm(args.osrm_dir)
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        src = tiled(n, args.work, args.synthetic)
        g = args.work / (f"g-synth-{n}" if args.synthetic else f"g-{n}")
        row: dict[str, object] = {"n": n, "s_wall": None, "s_rss": None}
        if not (args.reuse and (g / "manifest.json").exists()):
            cmd = [sys.executable, "-m", "app.cli", "preprocess", str(src), "--output", str(g), "--force", "--quiet"]
            row["s_wall"], row["s_rss"] = timed(cmd + (["--low-memory"] if args.low_memory else []), cwd=ROOT)
        graph = load(g)
        row["stages"] = graph.meta.raw.get("stages", {})
        row["search_nodes"] = graph.meta.raw.get("report", {}).get("search_nodes")
        row["o_build"] = None
        ds = None
        if bin_dir is not None:
            d = osrm_dir(src, args.work)
            built = next(d.glob("*.osrm.properties"), None) if args.reuse and d.exists() else None
            if built is not None:
                ds = built.with_suffix("")
            else:
                ds, row["o_build"] = osrm_build(bin_dir, src, args.work)
        if not args.build_only:
            paths = osrm_paths(random_pairs(graph, args.pairs, 1))
            row["s_http"], row["o_http"], row["after_traffic"] = side_by_side(
                g, bin_dir, ds, paths, args.duration, args.rounds
            )
            row["pss1"], row["pss2"] = pss_after(g, 1, paths), pss_after(g, 2, paths)
        del graph
        rows.append(row)
        print_table(rows)
        print_stages(rows)
        sys.stdout.flush()


def side_by_side(
    graph: Path, bin_dir: Path | None, dataset: Path | None, paths: list[str], duration: int, rounds: int
) -> tuple[dict[str, float], dict[str, float], list[tuple[float, float]]]:
    """Both servers up at once, wrk on each in turn for `rounds` rounds: (starroute's, OSRM's) median p50 and req/s
    (OSRM's empty without its binaries), and each server's (RSS, PSS) MiB after that traffic, all its processes."""
    servers = [start_starroute(graph, workers=2)]
    if bin_dir is not None and dataset is not None:
        servers.append(start_osrm(bin_dir, dataset, threads=2))
    runs: list[list[dict[str, float]]] = [[] for _ in servers]
    try:
        for _, base in servers:
            run_wrk(base, paths, 2, 16, 2)  # warm both alike
        for _ in range(rounds):
            for k, (_, base) in enumerate(servers):
                got = run_wrk(base, paths, duration, 16, 2)
                if got is not None:
                    runs[k].append(got)
        after = [memory(proc.pid) for proc, _ in servers]
    finally:
        for proc, _ in servers:
            stop(proc)
    med = [{key: statistics.median(r[key] for r in rs) for key in ("p50_ms", "rps")} if rs else {} for rs in runs]
    return med[0], (med[1] if len(med) > 1 else {}), after


def print_table(rows: list[dict]) -> None:
    nan = float("nan")
    print()
    print(
        "| OSM nodes | search nodes | starroute preprocess s (peak MiB) | OSRM extract + contract s (peak MiB) | "
        "ratio | p50 ms starroute / OSRM | req/s starroute / OSRM | ratio | PSS 1 worker / 2 workers MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        o = r.get("o_build") or {}
        o_wall = sum(v[0] for v in o.values()) if o else nan
        o_rss = max((v[1] for v in o.values()), default=nan)
        sh, oh = r.get("s_http") or {}, r.get("o_http") or {}
        rps_s, rps_o = sh.get("rps", nan), oh.get("rps", nan)
        s_wall = nan if r["s_wall"] is None else r["s_wall"]
        s_rss = nan if r["s_rss"] is None else r["s_rss"]
        build = f"{s_wall:.0f} ({s_rss:.0f}) | {o_wall:.0f} ({o_rss:.0f}) | {s_wall / o_wall:.2f}x"
        p50 = f"{sh.get('p50_ms', nan):.2f} / {oh.get('p50_ms', nan):.2f}"
        rps = f"{rps_s:.0f} / {rps_o:.0f} | {rps_s / rps_o:.2f}x"
        pss = f"{r.get('pss1', nan):.0f} / {r.get('pss2', nan):.0f}"
        print(f"| {r['n']:,} | {r['search_nodes']:,} | {build} | {p50} | {rps} | {pss} |")
    for r in rows:
        mem = r.get("after_traffic") or []
        if mem:
            (s_rss, s_pss), *osrm = mem
            line = f"serving {r['n']:,} after the traffic: starroute 2 workers PSS {s_pss:.0f} MiB (RSS {s_rss:.0f})"
            if osrm:
                o_rss, o_pss = osrm[0]
                line += f", osrm-routed -t 2 RSS {o_rss:.0f} MiB (PSS {o_pss:.0f}): {s_pss / o_rss:.2f}x"
            print(line)
    if len(rows) > 1 and all(r["s_wall"] is not None for r in (rows[0], rows[-1])):
        a, b = rows[0], rows[-1]
        grow = b["n"] / a["n"]
        print(
            f"growth {a['n']:,} -> {b['n']:,} nodes ({grow:.1f}x): preprocess {b['s_wall'] / a['s_wall']:.2f}x, "
            f"peak RSS {b['s_rss'] / a['s_rss']:.2f}x"
        )


# the pipeline's stages in the order they run (the manifest's `stages` is keyed by name, sorted)
STAGE_ORDER = (
    "read ways", "read nodes", "read restrictions", "build graph", "compile kernels", "turns", "maneuver overrides",
    "contract (CH)", "cch (order)", "landmarks (ALT)", "basemap", "write",
)  # fmt: skip


def in_order(stages: dict[str, dict]) -> list[tuple[str, dict]]:
    """The manifest's stages in the order they ran (names this list does not know, such as the excludable sets'
    hierarchies, next to the contraction)."""
    at = {name: k for k, name in enumerate(STAGE_ORDER)}
    return sorted(stages.items(), key=lambda kv: at.get(kv[0], at["contract (CH)"]))


def peak_stage(stages: dict[str, dict]) -> tuple[str, float]:
    """(the stage that holds the run's peak RSS, that peak MiB): the first, in pipeline order, whose end-of-stage
    peak reaches it (a stage run beside the contraction is recorded when it is collected, after it: the contraction
    then holds it, with the stages beside it)."""
    peaks = [(name, float(v.get("peak_rss_mb", 0.0))) for name, v in in_order(stages)]
    top = max((p for _, p in peaks), default=0.0)
    return next(((name, p) for name, p in peaks if p >= top), ("", 0.0))


def print_stages(rows: list[dict]) -> None:
    """Per size: each stage's seconds and peak RSS (the process's peak at its end), the stage holding the peak, and
    OSRM's extract and contract beside."""
    for r in rows:
        stages = r["stages"]
        name, top = peak_stage(stages)
        print(f"\nstages at {r['n']:,} nodes (seconds, peak RSS MiB at the stage's end); peak {top:.0f} MiB in {name}")
        print("| stage | s | peak MiB |")
        print("|---|---|---|")
        for k, v in in_order(stages):
            beside = f" (beside {v['beside']})" if v.get("beside") else ""
            print(f"| {k}{beside} | {v['seconds']:.1f} | {v.get('peak_rss_mb', float('nan')):.0f} |")
        for k, (wall, rss) in (r.get("o_build") or {}).items():
            print(f"| OSRM {k} | {wall:.1f} | {rss:.0f} |")


if __name__ == "__main__":
    main()

"""Start-up benchmark: how long a new user waits, cold (first run after an install) and warm, beside OSRM.

    python bench/startup.py [--cold-runs 1] [--warm-runs 5] [--osrm-dir /tmp/osrm] [--no-osrm] [--only WORDS]
        [--command "python -m app.cli"]

Every figure is the wall time of a whole `starroute` process (the installed console script), median over the runs:

- `preprocess` of a 10-node drawn map and of the bundled Monaco extract (`--force -q`);
- `serve` until `GET /health` answers 200 (the 10-node map's graph, and Monaco's);
- `route` (one CH route on Monaco, printed);
- the README's main command, `starroute serve` in a folder holding only `data/monaco.osm.pbf`: it compiles what
  is not compiled, builds the graph, serves it; timed to a healthy `/health`.

Cold runs get an empty `NUMBA_CACHE_DIR` each (what a fresh install has: every kernel compiles); warm runs share one
cache filled beforehand. Beside them, on the same maps and machine: `osrm-extract` + `osrm-contract` (car.lua) and
`osrm-routed` until it answers, from the `osrm-bindings` wheel. Targets (issue 7, 2 cores): warm serve <= 1 s,
warm 10-node preprocess <= 0.5 s, warm route <= 1 s, cold serve <= 30 s, cold README main command <= 30 s.
`--only` runs the cases whose name holds one of its comma-separated words (`--only 10-node`: the two warm figures of
issue 47, item 7). `--command` times another command line instead of the installed `starroute` (another source
tree's: `PYTHONPATH=TREE python bench/startup.py --command "python -m app.cli"`, its before and after).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from harness.osrm_peer import ensure_osrm  # noqa: E402
from harness.servers import free_port, http_status  # noqa: E402

MONACO = ROOT / "data" / "monaco.osm.pbf"
FROM, TO = "7.4197,43.7311", "7.4246,43.7384"
STARROUTE = shutil.which("starroute") or f"{sys.executable} -m app.cli"
TEN_NODE_MAP = """<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6" generator="starroute-bench">
{nodes}
  <way id="1" version="1"><nd ref="1"/><nd ref="2"/><nd ref="3"/><nd ref="4"/><nd ref="5"/>\
<tag k="highway" v="primary"/><tag k="name" v="Main"/></way>
  <way id="2" version="1"><nd ref="2"/><nd ref="6"/><nd ref="7"/><nd ref="10"/><nd ref="9"/><nd ref="8"/><nd ref="4"/>\
<tag k="highway" v="residential"/><tag k="name" v="Loop"/></way>
</osm>
"""
TEN_NODES = [
    (1, 0, 0),
    (2, 1, 0),
    (3, 2, 0),
    (4, 3, 0),
    (5, 4, 0),
    (6, 1, 1),
    (7, 1, 2),
    (8, 3, 1),
    (9, 3, 2),
    (10, 2, 2),
]


def write_ten_node_map(path: Path) -> Path:
    nodes = "\n".join(
        f'  <node id="{i}" version="1" lat="{43.73 + r * 0.001:.4f}" lon="{7.42 + c * 0.001:.4f}"/>'
        for i, r, c in TEN_NODES
    )
    path.write_text(TEN_NODE_MAP.format(nodes=nodes), encoding="utf-8")
    return path


def cmd(*args: str) -> list[str]:
    return [*STARROUTE.split(), *args]  # `--command` replaces STARROUTE


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of a command that must succeed."""
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr[-800:]}")
    return seconds


def until_answers(argv: list[str], url: str, env: dict[str, str], cwd: Path, timeout: float = 300.0) -> float:
    """Wall seconds from starting a server to its first good answer at `url`; then SIGTERM. Polled every 10 ms with
    the standard library's client (`harness.servers.http_status`: `httpx.get` cost 20 ms of CPU a poll, two thirds
    of one of the 2 cores the start-up compiles on, and read 21.7 s where a 0.2 s poll by curl read 15.5 s)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while time.perf_counter() - t0 < timeout:
            if proc.poll() is not None:
                raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.read()[-800:]}")
            if http_status(url, timeout=1.0) == 200:
                return time.perf_counter() - t0
            time.sleep(0.01)
        raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def median(fn: Callable[[], float], runs: int) -> tuple[float, list[float]]:
    values = [fn() for _ in range(runs)]
    return statistics.median(values), values


def main(argv: list[str] | None = None) -> int:
    global STARROUTE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cold-runs", type=int, default=1, help="runs with an empty numba cache (each compiles)")
    ap.add_argument("--warm-runs", type=int, default=5)
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    ap.add_argument("--no-osrm", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated words: only the cases whose name holds one")
    ap.add_argument("--command", help=f"the command line to time (default {STARROUTE})")
    args = ap.parse_args(argv)
    if args.command:
        STARROUTE = args.command

    work = Path(tempfile.mkdtemp(prefix="starroute-startup-"))
    # Python's bytecode cache stays on, as numba's does: a user's warm start reads the .pyc files its first start
    # wrote. With PYTHONDONTWRITEBYTECODE inherited, a source tree whose modules were edited since their .pyc was
    # written compiled them again at every start (a warm serve read 1.12 s, 0.92 s once they were written)
    base_env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")}
    warm_cache = work / "warm-cache"
    warm_env = {**base_env, "NUMBA_CACHE_DIR": str(warm_cache)}
    ten = write_ten_node_map(work / "ten.osm")
    (work / "data").mkdir()
    shutil.copy(MONACO, work / "data" / MONACO.name)
    monaco = work / "data" / MONACO.name
    print(f"starroute start-up, {os.cpu_count()} cores, {args.cold_runs} cold / {args.warm_runs} warm runs each")
    print(f"command: {STARROUTE}\n")

    cold_n = [0]

    def cold_env() -> dict[str, str]:
        cold_n[0] += 1
        d = work / f"cold-cache-{cold_n[0]}"
        d.mkdir()
        return {**base_env, "NUMBA_CACHE_DIR": str(d)}

    rows: list[tuple[str, float | None, float | None, str, str]] = []
    # fill the warm cache first (and time it: the two halves compile in parallel)
    compile_s = timed(cmd("compile", "-q"), warm_env, work)
    rows.append(("compile (every kernel, 2 jobs)", compile_s, None, "", ""))
    graph = work / "graphs" / "monaco-car"
    timed(cmd("preprocess", str(monaco), "-o", str(graph), "-q"), warm_env, work)
    ten_graph = work / "graphs" / "ten-car"
    timed(cmd("preprocess", str(ten), "-o", str(ten_graph), "-q"), warm_env, work)

    def pre(path: Path, env: Callable[[], dict[str, str]]) -> float:
        return timed(cmd("preprocess", str(path), "-o", str(work / "out" / path.stem), "--force", "-q"), env(), work)

    def serve(env: Callable[[], dict[str, str]], target: list[str], cwd: Path) -> float:
        port = free_port()
        return until_answers(cmd("serve", *target, "--port", str(port)), f"http://127.0.0.1:{port}/health", env(), cwd)

    def readme(env: Callable[[], dict[str, str]]) -> float:
        d = Path(tempfile.mkdtemp(dir=work, prefix="fresh-"))
        (d / "data").mkdir()
        shutil.copy(MONACO, d / "data" / MONACO.name)
        return serve(env, [], d)

    cases = [
        ("preprocess 10-node map", lambda e: pre(ten, e), "<= 0.5 s warm"),
        ("preprocess Monaco", lambda e: pre(monaco, e), ""),
        ("serve 10-node map to /health", lambda e: serve(e, [str(ten_graph)], work), "<= 1 s warm"),
        ("serve Monaco to /health", lambda e: serve(e, [str(graph)], work), "<= 1 s warm, <= 30 s cold"),
        (
            "route (CH, Monaco)",
            lambda e: timed(cmd("route", str(graph), "--from", FROM, "--to", TO), e(), work),
            "<= 1 s warm",
        ),  # fmt: skip
        ("README main command", readme, "<= 30 s cold"),
    ]
    words = [w for w in args.only.split(",") if w]
    for name, fn, target in cases:
        if words and not any(w in name for w in words):
            continue
        cold = median(lambda fn=fn: fn(cold_env), args.cold_runs)[0] if args.cold_runs else None
        warm = median(lambda fn=fn: fn(lambda: warm_env), args.warm_runs)[0] if args.warm_runs else None
        rows.append((name, cold, warm, target, ""))
        cold_s = "-" if cold is None else f"{cold:.2f} s"
        warm_s = "-" if warm is None else f"{warm:.3f} s"
        print(f"  {name}: cold {cold_s}, warm {warm_s}")

    osrm: dict[str, float] = {}
    if not args.no_osrm:
        bin_dir = ensure_osrm(args.osrm_dir)
        if bin_dir is not None:
            osrm = bench_osrm(bin_dir, work, ten, monaco, args.warm_runs)
    print()
    print(f"{'':36s} {'starroute cold':>15s} {'starroute warm':>15s} {'OSRM':>10s}   target")
    peer = {
        "preprocess 10-node map": osrm.get("ten"),
        "preprocess Monaco": osrm.get("monaco"),
        "serve Monaco to /health": osrm.get("routed"),
        "serve 10-node map to /health": osrm.get("routed ten"),
        "README main command": osrm.get("monaco", 0) + osrm.get("routed", 0) if osrm else None,
    }
    for name, cold, warm, target, _ in rows:
        c = f"{cold:13.2f} s" if cold is not None else f"{'':15s}"
        w = f"{warm:13.3f} s" if warm is not None else f"{'':15s}"
        o = peer.get(name)
        ot = f"{o:8.3f} s" if o is not None else f"{'':10s}"
        print(f"{name:36s} {c} {w} {ot}   {target}")
    if osrm:
        print("\nOSRM: osrm-extract + osrm-contract (car.lua) for preprocess; osrm-routed until /nearest answers.")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def bench_osrm(bin_dir: Path, work: Path, ten: Path, monaco: Path, runs: int) -> dict[str, float]:
    """Median wall seconds of osrm-extract + osrm-contract per map, and of osrm-routed until it answers."""
    profile = bin_dir.parent / "share" / "profiles" / "car.lua"
    env = dict(os.environ)
    out: dict[str, float] = {}
    datasets: dict[str, Path] = {}
    for key, src in (("ten", ten), ("monaco", monaco)):

        def build(src: Path = src, key: str = key) -> float:
            d = Path(tempfile.mkdtemp(dir=work, prefix="osrm-"))
            local = d / src.name
            shutil.copy(src, local)
            t = timed([str(bin_dir / "osrm-extract"), "-p", str(profile), str(local)], env, d)
            base = next(d.glob("*.osrm.properties")).with_suffix("")
            t += timed([str(bin_dir / "osrm-contract"), str(base)], env, d)
            datasets[key] = base
            return t

        out[key] = median(build, runs)[0]
        print(f"  OSRM extract+contract {src.name}: {out[key]:.3f} s")

    def routed(dataset: Path) -> float:
        port = free_port()
        argv = [str(bin_dir / "osrm-routed"), "--ip", "127.0.0.1", "--port", str(port), str(dataset)]
        return until_answers(argv, f"http://127.0.0.1:{port}/nearest/v1/driving/{FROM}", env, work)

    for key, name in (("routed", "monaco"), ("routed ten", "ten")):
        out[key] = median(lambda name=name: routed(datasets[name]), runs)[0]
        print(f"  osrm-routed ({name}) until it answers: {out[key]:.3f} s")
    return out


if __name__ == "__main__":
    raise SystemExit(main())

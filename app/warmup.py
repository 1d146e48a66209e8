"""Start-up: have every numba kernel compiled (first run) or loaded (every later run) before a request comes.

- `warm_service(service, say)` opens a `Service` and answers a handful of requests in-process (every algorithm, a
  table, nearest, steps and geometries), so each kernel the server uses is loaded from numba's cache; on a first run
  after an install it compiles them and says so once, with an estimate.
- `compile_all(jobs)` (`starroute compile`, the Docker build, a cold first `starroute serve`) compiles the
  kernels of both preprocessing and the server into the cache ahead of use, on a small built-in map, in up to two
  processes: one runs the preprocess kernels and then the CH and ALT queries, the other the kernels that need no
  contraction (snapping, Dijkstra, A*, leg assembly, geometry) on a graph built without it.
- `stale_kernels()` says whether that is needed: which entry kernels have no fresh cache entry.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.settings import Settings
from preprocessing.jit import announce_compilation, remove_partial_files

log = logging.getLogger("starroute")
Say = Callable[[str], None]

# Measured cold compile times on this project's 2-core reference machine (bench/startup.py), for the message.
ENGINE_COMPILE_S = 25.0
PREPROCESS_COMPILE_S = 12.0
_PROCESS_START = time.time()
_ROOT = Path(__file__).resolve().parent.parent
KERNEL_PACKAGES = (_ROOT / "preprocessing", _ROOT / "app" / "engine", _ROOT / "app" / "api")

# Kernels called from Python (each compiles its callees into itself): a fresh cache entry for all of them means a
# warm start. "module:function".
ENTRY_KERNELS = (
    "preprocessing.contract:_contract_rounds",
    "preprocessing.contract:_init_priorities",
    "preprocessing.contract:_init_lists",
    "preprocessing.landmarks:one_to_all",
    "preprocessing.landmarks:_avoid_pick",
    "app.engine.snap:_search",
    "app.engine.snap:_phantom_figures",
    "app.engine.router:_seeds",
    "app.engine.assemble:_assemble",
    "app.engine.ch:_run",
    "app.engine.table:_table",
    "app.api.geometry:_douglas_peucker",
    "app.api.polyline:_encode_kernel",
)


def _is_cached(dispatcher: Any) -> bool:
    """Whether numba's cache holds a fresh entry for `dispatcher` (its index exists and matches the source)."""
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - an unreadable index is a cold one
        return False


def stale_kernels() -> list[str]:
    """The entry kernels without a fresh cache entry (all of them after an install, none once compiled)."""
    out = []
    for entry in ENTRY_KERNELS:
        module, name = entry.split(":")
        if not _is_cached(getattr(importlib.import_module(module), name)):
            out.append(entry)
    return out


def remove_partial_cache_files() -> None:
    """Delete cache files a compile stopped half-way left behind (a start-up interrupted by a signal)."""
    dirs = [str(p / "__pycache__") for p in KERNEL_PACKAGES]
    if os.environ.get("NUMBA_CACHE_DIR"):
        dirs = [os.environ["NUMBA_CACHE_DIR"]]
    remove_partial_files(dirs, _PROCESS_START)


# -- warming a service ------------------------------------------------------------------------------------------


async def exercise(service: Any, algorithms: tuple[str, ...] | None = None) -> None:
    """Answer a few requests in-process so that every kernel the server uses is compiled or loaded.

    `algorithms` limits the point-to-point algorithms (all the graph offers by default).
    """
    from app.api import osrm
    from app.engine.errors import EngineError

    g = service.graph
    n = g.num_nodes
    if n == 0:
        return
    pts = [(float(g.node_lon[v]) / 1e7, float(g.node_lat[v]) / 1e7) for v in (0, n // 2)]
    a, b = (f"{lon},{lat}" for lon, lat in pts)
    for path, query in (
        (f"/route/v1/warmup/{a};{b}", "steps=true&annotations=true&overview=simplified"),
        (f"/route/v1/warmup/{a};{b}", "geometries=polyline6&overview=full"),
        (f"/table/v1/warmup/{a};{b}", "annotations=duration,distance"),
        (f"/nearest/v1/warmup/{a}", "number=2"),
    ):
        status, body = await osrm.handle(service, path, query)
        if status != 200:  # a graph whose sample points do not connect still serves
            log.info("warm-up %s: %s", path, body[:200])
    try:
        phantoms = service.snap_all(pts)
    except EngineError as exc:
        log.info("warm-up of the other algorithms skipped: %s", exc)
        return
    for algorithm in algorithms if algorithms is not None else service.router.algorithms:
        try:
            service.router.query().route(phantoms, algorithm=algorithm)
        except EngineError:
            pass
    try:
        service.router.query().table(phantoms, phantoms)
    except EngineError:
        pass
    service.router.warmup()


def warm_service(service: Any, say: Say = log.info, algorithms: tuple[str, ...] | None = None) -> Any:
    """Open `service` (if not yet) and run `exercise` on it; says once when kernels compile. Returns the service."""
    from app.api.health import Metrics

    if service.graph is None:
        service.open()
    with announce_compilation(say, "routing kernels", ENGINE_COMPILE_S) as note:
        asyncio.run(exercise(service, algorithms))
    if note.fired:
        say(f"routing kernels compiled in {time.perf_counter() - note.started:.0f} s (cached for later starts)")
    service.metrics = Metrics()  # warm-up searches are not traffic
    return service


# -- compiling everything ahead of use ------------------------------------------------------------------------------

SAMPLE_SIZE = 5  # the built-in map: a SAMPLE_SIZE x SAMPLE_SIZE street grid


def write_sample_map(path: Path) -> Path:
    """A small street grid as OSM XML (two-way and oneway streets, a signal, names): exercises every kernel."""
    k = SAMPLE_SIZE
    step = 0.001
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="starroute-warmup">']
    for r in range(k):
        for c in range(k):
            tags = '<tag k="highway" v="traffic_signals"/>' if (r, c) == (2, 2) else ""
            lines.append(
                f'<node id="{1 + r * k + c}" version="1" lat="{43.73 + r * step:.7f}" lon="{7.42 + c * step:.7f}">'
                f"{tags}</node>"
            )
    way = 1
    for r in range(k):
        refs = "".join(f'<nd ref="{1 + r * k + c}"/>' for c in range(k))
        oneway = '<tag k="oneway" v="yes"/>' if r == 1 else ""
        lines.append(
            f'<way id="{way}" version="1">{refs}<tag k="highway" v="primary"/><tag k="name" v="Row {r}"/>{oneway}</way>'
        )
        way += 1
    for c in range(k):
        refs = "".join(f'<nd ref="{1 + r * k + c}"/>' for r in range(k))
        lines.append(f'<way id="{way}" version="1">{refs}<tag k="highway" v="residential"/></way>')
        way += 1
    lines.append("</osm>")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _compile_job(job: str, work: Path) -> None:
    """One compile job of `compile_all` (run in a child process): "preprocess" or "engine"."""
    from app.api.service import Service
    from preprocessing.pipeline import preprocess

    osm = write_sample_map(work / f"sample-{job}.osm")
    if job == "preprocess":  # contraction and landmarks, then the queries that need them
        graph = preprocess(osm, work / "full", ch=True, landmarks=4, force=True, quiet=True)
        warm_service(Service(Settings(graph_dir=graph)), say=lambda m: None, algorithms=("ch", "alt"))
    else:  # everything that needs no contraction, on a graph built without it (numpy only, no kernel)
        graph = preprocess(osm, work / "plain", ch=False, landmarks=0, force=True, quiet=True)
        warm_service(Service(Settings(graph_dir=graph)), say=lambda m: None)


def compile_all(jobs: int = 2, quiet: bool = False, say: Say | None = None) -> float:
    """Compile every kernel of preprocessing and the server into numba's cache; returns the seconds it took.

    With `jobs >= 2` the two halves run in parallel child processes (numba compiles in one thread per process).
    """
    say = say or (lambda m: None if quiet else print(f"starroute: {m}", file=sys.stderr, flush=True))
    t0 = time.perf_counter()
    stale = stale_kernels()
    if not stale:
        say("every kernel is compiled already")
        return 0.0
    say(
        f"compiling {len(stale)} of {len(ENTRY_KERNELS)} kernel groups "
        f"(about {PREPROCESS_COMPILE_S + ENGINE_COMPILE_S if jobs < 2 else ENGINE_COMPILE_S:.0f} s on 2 cores)"
    )
    with tempfile.TemporaryDirectory(prefix="starroute-compile-") as tmp:
        work = Path(tmp)
        if jobs < 2:
            for job in ("preprocess", "engine"):
                _compile_job(job, work)
        else:
            procs = [
                subprocess.Popen([sys.executable, "-m", "app.warmup", job, str(work)], cwd=_ROOT)
                for job in ("preprocess", "engine")
            ]
            try:
                codes = [p.wait() for p in procs]
            except BaseException:
                for p in procs:
                    p.kill()
                    p.wait()
                remove_partial_cache_files()
                raise
            if any(codes):
                raise RuntimeError(f"a kernel compile job failed (exit codes {codes})")
    seconds = time.perf_counter() - t0
    say(f"kernels compiled in {seconds:.0f} s")
    return seconds


if __name__ == "__main__":  # a compile job of compile_all: python -m app.warmup JOB WORKDIR
    logging.basicConfig(level=logging.WARNING)
    _compile_job(sys.argv[1], Path(sys.argv[2]))

"""Start-up: have every numba kernel compiled (first run) or loaded (every later run) before a request comes.

- `warm_service(service, say)` opens a `Service` and answers a handful of requests in-process (every algorithm, a
  table, nearest, geometries; then alternatives, areas to avoid, isochrones, on a background thread when a server
  starts), so each kernel the server uses is loaded from numba's cache; on a first run after an install it compiles
  them and says so once, with an estimate.
- `compile_all(jobs)` (`starroute compile`, the Docker build, a cold first `starroute serve`) compiles the
  kernels of both preprocessing and the server into the cache ahead of use, on a small built-in map, in up to two
  processes: one runs the preprocess kernels and then the CH and ALT queries, the other the kernels that need no
  contraction (snapping, Dijkstra, A*, leg assembly, geometry) on a graph built without it.
- `is_compiled(part)` says whether that is needed without importing numba: a marker file beside the cache, named
  by a hash of the kernel sources and the numba and Python versions, written once a part ("engine" or
  "preprocess") has run warm.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import tempfile
import threading
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
PREPROCESS_COMPILE_S = 12.0  # every preprocessing kernel (pipeline.CONTRACT_COMPILE_S: contraction, landmarks)
_PROCESS_START = time.time()
_ROOT = Path(__file__).resolve().parent.parent
KERNEL_PACKAGES = (_ROOT / "preprocessing", _ROOT / "app" / "engine", _ROOT / "app" / "api")

KERNEL_SOURCES = {
    "preprocess": ("preprocessing",),
    "engine": ("preprocessing", "app/engine", "app/api"),
}


def _cache_dir() -> Path:
    root = os.environ.get("NUMBA_CACHE_DIR")
    return Path(root) if root else _ROOT / "app" / "engine" / "__pycache__"


def kernel_stamp(part: str) -> str:
    """A hash of what the compiled kernels of `part` depend on: their source files, numba's and Python's versions."""
    import hashlib
    from importlib.metadata import version as dist_version

    h = hashlib.sha256(f"{sys.version_info[:2]} numba {dist_version('numba')}".encode())
    for folder in KERNEL_SOURCES[part]:
        for f in sorted((_ROOT / folder).glob("*.py")):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _marker(part: str) -> Path:
    return _cache_dir() / f"starroute-{part}-kernels-{kernel_stamp(part)}"


def is_compiled(part: str) -> bool:
    """Whether the kernels of `part` ("engine", "preprocess") are in numba's cache (checked without numba)."""
    return _marker(part).exists()


def mark_compiled(part: str) -> None:
    """Note that the kernels of `part` ran warm (their cache is complete); old markers of it are removed."""
    d = _cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        for old in d.glob(f"starroute-{part}-kernels-*"):
            old.unlink(missing_ok=True)
        _marker(part).touch()
    except OSError:  # a read-only install: the next start checks again, nothing else changes
        pass


_CHILDREN: list[subprocess.Popen] = []  # compile jobs of `compile_all` still running


def remove_partial_cache_files() -> None:
    """Stop running compile jobs and delete the cache files a compile stopped half-way left behind (a start-up
    interrupted by a signal)."""
    for p in list(_CHILDREN):
        p.kill()
        p.wait()
    dirs = [str(p / "__pycache__") for p in KERNEL_PACKAGES]
    if os.environ.get("NUMBA_CACHE_DIR"):
        dirs = [os.environ["NUMBA_CACHE_DIR"]]
    remove_partial_files(dirs, _PROCESS_START)


# -- warming a service ------------------------------------------------------------------------------------------


async def exercise(service: Any, algorithms: tuple[str, ...] | None = None, options: bool = True) -> None:
    """Answer a few requests in-process so that every kernel the server uses is compiled or loaded.

    `algorithms` limits the point-to-point algorithms (all the graph offers by default); `options=False` leaves out
    the per-request options (alternatives, areas to avoid, isochrones: core kernels another compile job covers).
    """
    phantoms = await _exercise_routing(service, algorithms)
    if options and phantoms is not None:
        exercise_options(service, phantoms)


async def _exercise_routing(service: Any, algorithms: tuple[str, ...] | None) -> list[Any] | None:
    """Routes (OSRM answers with geometry and annotations, every algorithm), a table, nearest; the sample phantoms."""
    from app.api import osrm
    from app.engine.errors import EngineError
    from app.engine.facade import Waypoints
    from app.engine.types import RouteOptions

    engine = service.opened
    sample = engine.sample_points()
    if sample is None:
        return None
    pts = list(sample)
    a, b = (f"{lon},{lat}" for lon, lat in pts)
    for path, query in (
        (f"/route/v1/warmup/{a};{b}", "annotations=true&overview=simplified"),
        (f"/route/v1/warmup/{a};{b}", "geometries=polyline6&overview=full"),
        (f"/table/v1/warmup/{a};{b}", "annotations=duration,distance"),
        (f"/nearest/v1/warmup/{a}", "number=2"),
    ):
        status, body = await osrm.handle(service, path, query)
        if status != 200:  # a graph whose sample points do not connect still serves
            log.info("warm-up %s: %s", path, body[:200])
    try:
        phantoms = engine.snap(Waypoints(pts))
    except EngineError as exc:
        log.info("warm-up of the other algorithms skipped: %s", exc)
        return None
    for algorithm in algorithms if algorithms is not None else engine.algorithms:
        try:
            engine.routes(phantoms, RouteOptions(algorithm=algorithm))
        except EngineError:
            pass
    try:
        engine.table(phantoms, phantoms)
    except EngineError:
        pass
    engine.router.warmup(algorithms)
    from app.engine.tsp import warm as warm_trips  # the trip solver's kernels (no graph needed)

    warm_trips()
    return phantoms


def exercise_options(service: Any, phantoms: list[Any]) -> None:
    """The kernels of alternatives, areas to avoid, isochrones and their contours, map matching, and the map's tile
    index (straight to the engine: no ASGI client to import)."""
    from app.engine.areas import parse_compact
    from app.engine.contours import contour_polygons
    from app.engine.errors import EngineError
    from app.engine.facade import MatchRequest
    from app.engine.types import RouteOptions

    engine = service.opened
    engine.road_tiles()  # no kernels: tens of milliseconds on a city
    router = engine.router
    x1, y1 = phantoms[0].lon, phantoms[0].lat
    ring = f"{x1 + 1e-4},{y1 + 1e-4};{x1 + 2e-4},{y1 + 1e-4};{x1 + 2e-4},{y1 + 2e-4}"
    q = router.query()
    core = [a for a in router.algorithms if a != "ch"]
    try:
        q.routes(phantoms, RouteOptions(algorithm=router.default_algorithm, alternatives=1))
        hierarchy, prefix = router.metric.hierarchy(None)
        if router.tables and prefix is not None:  # every kernel of the via-node method, found or not above
            from app.engine.alternatives import warm as warm_alternatives

            warm_alternatives(hierarchy, router.search_graph, router.graph)
        forbidden = router.forbidden_arcs(parse_compact(ring))
        if core:  # with alternatives: no hierarchy holds for an area, so plateaus answer (their kernels)
            q.routes(phantoms, RouteOptions(algorithm=core[0], forbidden=forbidden, alternatives=1))
        for part in q.isochrone(phantoms[0], [600, 1200])[0]:
            if len(part):
                contour_polygons(part[:, 0], part[:, 1], part[:, 2], part[:, 3], 50.0)
        engine.match(MatchRequest([(p.lon, p.lat) for p in phantoms], timestamps=[0, 3600]))
    except (EngineError, ValueError) as exc:
        log.info("warm-up of the options: %s", exc)


def warm_service(
    service: Any,
    say: Say = log.info,
    algorithms: tuple[str, ...] | None = None,
    options: bool = True,
    background: bool = False,
) -> Any:
    """Open `service` (if not yet) and run `exercise` on it; says once when kernels compile. Returns the service.

    `background=True` (a server starting): routes, tables and nearest are warm when this returns; the options'
    kernels (alternatives, areas, isochrones: compiled already by `compile_all`, only loaded here) load on a daemon
    thread meanwhile, so the server is ready sooner and a first such request at most waits for that load.
    """
    from app.api.health import Metrics

    with announce_compilation(say, "routing kernels", ENGINE_COMPILE_S) as note:
        if service.engine is None:
            service.open()  # imports the engine: kernels with signatures compile (or load) now
        if background and options:
            phantoms = asyncio.run(_exercise_routing(service, algorithms))
        else:
            asyncio.run(exercise(service, algorithms, options))
    if note.fired:
        say(f"routing kernels compiled in {time.perf_counter() - note.started:.0f} s (cached for later starts)")
    service.metrics = Metrics()  # warm-up searches are not traffic
    if background and options:

        def rest() -> None:
            if phantoms is not None:
                exercise_options(service, phantoms)
            if algorithms is None:
                mark_compiled("engine")

        threading.Thread(target=rest, name="starroute-warmup", daemon=True).start()
    elif algorithms is None:
        mark_compiled("engine")
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
        warm_service(Service(Settings(graph_dir=graph)), say=lambda m: None, algorithms=("ch",), options=False)
    else:  # everything that needs no contraction, on a graph built without it (numpy only, no kernel)
        graph = preprocess(osm, work / "plain", ch=False, landmarks=0, force=True, quiet=True)
        warm_service(Service(Settings(graph_dir=graph)), say=lambda m: None)


def compile_all(jobs: int = 2, quiet: bool = False, say: Say | None = None) -> float:
    """Compile every kernel of preprocessing and the server into numba's cache; returns the seconds it took.

    With `jobs >= 2` the two halves run in parallel child processes (numba compiles in one thread per process).
    """
    say = say or (lambda m: None if quiet else print(f"starroute: {m}", file=sys.stderr, flush=True))
    t0 = time.perf_counter()
    if is_compiled("preprocess") and is_compiled("engine"):
        say("every kernel is compiled already")
        return 0.0
    estimate = PREPROCESS_COMPILE_S + ENGINE_COMPILE_S if jobs < 2 else max(ENGINE_COMPILE_S, PREPROCESS_COMPILE_S)
    say(f"compiling the routing kernels (first run after an install or upgrade; about {estimate:.0f} s on 2 cores)")
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
            _CHILDREN.extend(procs)
            try:
                codes = [p.wait() for p in procs]
            except BaseException:
                remove_partial_cache_files()
                raise
            finally:
                for p in procs:
                    _CHILDREN.remove(p)
            if any(codes):
                raise RuntimeError(f"a kernel compile job failed (exit codes {codes})")
    mark_compiled("preprocess")
    mark_compiled("engine")
    seconds = time.perf_counter() - t0
    say(f"kernels compiled in {seconds:.0f} s")
    return seconds


if __name__ == "__main__":  # a compile job of compile_all: python -m app.warmup JOB WORKDIR
    logging.basicConfig(level=logging.WARNING)
    _compile_job(sys.argv[1], Path(sys.argv[2]))

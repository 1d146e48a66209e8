"""Start-up: have every numba kernel compiled (first run) or loaded (every later run) before a request comes.

- `warm_service(service, say)` opens a `Service` and answers a handful of requests in-process (every algorithm, a
  table, nearest, geometries; then alternatives, areas to avoid, isochrones, on a background thread when a server
  starts), so each kernel the server uses is loaded from numba's cache; on a first run after an install it compiles
  them and says so once, with an estimate.
- `compile_all(jobs)` (`starroute compile`, the Docker build, a cold first `starroute serve`) compiles the
  kernels of both preprocessing and the server into the cache ahead of use, on a small built-in map, in up to two
  processes, group by group (`COMPILE_GROUPS`, each announced with its number and estimate): one runs the
  preprocess kernels, then the hierarchy's queries, alternatives, areas, isochrones and trips; the other snapping,
  the core's searches and leg assembly on a graph built without hierarchy, then map matching.
- `is_compiled(part)` says whether that is needed without importing numba: a marker file beside the cache, named
  by a hash of the kernel sources and the numba and Python versions, written once a part ("engine" or
  "preprocess") has run warm.

Compile jobs are child processes of their own process group (`start_compile_job`): a terminal's Ctrl-C reaches only
the command, which stops them (`abandon_compiles`), and they end with it should it die.
"""

from __future__ import annotations

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

log = logging.getLogger("starroute")
Say = Callable[[str], None]

# Measured cold compile time of the kernels a server warms on a first `python -m app.server` (no `compile_all`).
ENGINE_COMPILE_S = 60.0
# ... of those a first route, table and nearest need (a one-worker server's start; Monaco, 2 cores: 17-20 s), and
# of the rest, compiled behind them at nice 19 while the server serves.
FIRST_REQUESTS_COMPILE_S = 20.0
REST_COMPILE_S = 60.0
_PROCESS_START = time.time()
_ROOT = Path(__file__).resolve().parent.parent
KERNEL_PACKAGES = (_ROOT / "floor", _ROOT / "preprocessing", _ROOT / "app" / "engine", _ROOT / "app" / "api")

KERNEL_SOURCES = {
    "preprocess": ("floor", "preprocessing"),
    "engine": ("floor", "preprocessing", "app/engine", "app/api"),
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
        for f in sorted((_ROOT / folder).rglob("*.py")):
            h.update(str(f.relative_to(_ROOT)).encode())
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


def start_compile_job(quiet: bool, job: str, work: str) -> subprocess.Popen:
    """`python -m app.warmup --quiet|--say JOB WORK PARENT` in a process group of its own (a Ctrl-C at the terminal
    is this process's to handle: it stops the job without the job's traceback), ended should this process die."""
    argv = [sys.executable, "-m", "app.warmup", "--quiet" if quiet else "--say", job, work, str(os.getpid())]
    proc = subprocess.Popen(argv, cwd=_ROOT, stdin=subprocess.DEVNULL, process_group=0)
    _CHILDREN.append(proc)
    return proc


def remove_partial_cache_files() -> None:
    """Stop running compile jobs and delete the cache files a compile stopped half-way left behind (a start-up
    interrupted by a signal)."""
    for p in list(_CHILDREN):
        p.kill()
        p.wait()
    from floor.kernels.jit import remove_partial_files

    dirs = [str(d) for p in KERNEL_PACKAGES for d in p.rglob("__pycache__")]
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
    _warm_one_calls(service)
    if options and phantoms is not None:
        exercise_options(service, phantoms)


# The routes a warm-up asks for: with annotations and the simplified overview, and polyline6 with the full one.
_WARM_ROUTE_QUERIES = ("annotations=true&overview=simplified", "geometries=polyline6&overview=full")


async def _exercise_routing(service: Any, algorithms: tuple[str, ...] | None, trips: bool = True) -> list[Any] | None:
    """Routes (OSRM answers with geometry and annotations, every algorithm), a table, nearest; the sample phantoms."""
    from app.api.osrm import dispatch as osrm
    from app.engine.errors import EngineError
    from app.engine.facade import Waypoints

    engine = service.opened
    sample = engine.sample_points()
    if sample is None:
        return None
    pts = list(sample)
    a, b = (f"{lon},{lat}" for lon, lat in pts)
    for path, query in (
        *((f"/route/v1/warmup/{a};{b}", q) for q in _WARM_ROUTE_QUERIES),
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
    exercise_algorithms(service, phantoms, algorithms)
    try:  # a via point: `Legs._straight_legs`' seeds of every waypoint in one call (on an edge-based graph)
        from app.engine.types import RouteOptions

        engine.routes([*phantoms, phantoms[0]], RouteOptions(continue_straight=True))
    except EngineError:
        pass
    try:
        for _ in range(2):  # the second takes the buckets the first kept (`reuse_buckets`: a matrix's blocks)
            engine.table(phantoms, phantoms, reuse_buckets=True)
    except EngineError:
        pass
    if trips:
        from app.engine.features.tsp import warm as warm_trips  # the trip solver's kernels (no graph needed)

        warm_trips()
    return phantoms


def exercise_algorithms(service: Any, phantoms: list[Any], algorithms: tuple[str, ...] | None) -> None:
    """Routes on each of `algorithms` (all the graph offers by default), through the sample phantoms and the
    router's own short queries and table."""
    from app.engine.errors import EngineError
    from app.engine.search.algorithms import ALGORITHMS
    from app.engine.types import RouteOptions

    engine = service.opened
    for algorithm in algorithms if algorithms is not None else engine.algorithms:
        # a traced hierarchy search takes the step-by-step kernels (the map's search spaces); the core kernel takes
        # its trace buffer as an argument, so a second, traced search there would only repeat the work
        spec = ALGORITHMS.get(algorithm)
        traces = (False, True) if spec is not None and spec.engine == "ch" else (False,)
        for trace in traces:
            try:
                engine.routes(phantoms, RouteOptions(algorithm=algorithm, trace=trace))
            except EngineError:
                pass
    engine.router.warmup(algorithms)


def exercise_options(service: Any, phantoms: list[Any]) -> None:
    """The kernels of alternatives, areas to avoid, isochrones and their contours, map matching, and the map's tile
    index (straight to the engine: no ASGI client to import)."""
    service.opened.road_tiles()  # no kernels: tens of milliseconds on a city
    exercise_alternatives(service, phantoms)
    exercise_areas(service, phantoms)
    exercise_matching(service, phantoms)
    exercise_departures(service, phantoms)


def exercise_alternatives(service: Any, phantoms: list[Any]) -> None:
    """Alternatives on the default algorithm, and every kernel of the via-node method when the graph has CH tables."""
    from app.engine.errors import EngineError
    from app.engine.types import RouteOptions

    router = service.opened.router
    try:
        router.query().routes(phantoms, RouteOptions(algorithm=router.default_algorithm, alternatives=1))
        hierarchy, prefix = router.metric.hierarchy(None) if router.tables else (None, None)
        if hierarchy is not None and prefix is not None:  # every kernel of the via-node method, found or not above
            from app.engine.features.alternatives import warm as warm_alternatives

            warm_alternatives(hierarchy, router.search_graph, router.graph)
    except (EngineError, ValueError) as exc:
        log.info("warm-up of alternatives: %s", exc)


def exercise_areas(service: Any, phantoms: list[Any]) -> None:
    """Areas to avoid (with alternatives: no hierarchy holds for an area, so plateaus answer), isochrones and their
    contours."""
    from app.engine.errors import EngineError
    from app.engine.features.areas import parse_compact
    from app.engine.features.contours import contour_polygons
    from app.engine.types import RouteOptions

    router = service.opened.router
    x1, y1 = phantoms[0].lon, phantoms[0].lat
    q = router.query()
    core = [a for a in router.algorithms if a != "ch"]
    try:  # a triangle around the first point: its road's chain meets the area (the exact test's kernel)
        router.forbidden_arcs(parse_compact(f"{x1 - 1e-4},{y1 - 1e-4};{x1 + 1e-4},{y1 - 1e-4};{x1},{y1 + 1e-4}"))
    except (EngineError, ValueError) as exc:
        log.info("warm-up of areas: %s", exc)
    ring = f"{x1 + 1e-4},{y1 + 1e-4};{x1 + 2e-4},{y1 + 1e-4};{x1 + 2e-4},{y1 + 2e-4}"
    try:
        forbidden = router.forbidden_arcs(parse_compact(ring))
        if core:
            q.routes(phantoms, RouteOptions(algorithm=core[0], forbidden=forbidden, alternatives=1))
    except (EngineError, ValueError) as exc:
        log.info("warm-up of areas: %s", exc)
    try:
        for part in q.isochrone(phantoms[0], [600, 1200])[0]:
            if len(part):
                contour_polygons(part[:, 0], part[:, 1], part[:, 2], part[:, 3], 50.0)
    except (EngineError, ValueError) as exc:
        log.info("warm-up of isochrones: %s", exc)


def exercise_departures(service: Any, phantoms: list[Any]) -> None:
    """Departure times (the time-dependent kernels, the lower-bound hierarchies: the weekly one and the time windows'
    within their budget, `LowerBounds.prepare`), only on a graph with time profiles: elsewhere a start-up costs
    nothing more (a first departure-time request there loads them)."""
    from app.engine.errors import EngineError
    from app.engine.facade import RouteRequest, Waypoints
    from app.engine.features.departure import isochrone_when, td_model
    from app.engine.types import RouteOptions

    engine = service.opened
    model = td_model(engine.router)
    if not model.profiled or model.arrays is None:
        return
    try:
        if model.bounds is not None:
            model.bounds.prepare()
        when = engine.when(RouteRequest(Waypoints([(p.lon, p.lat) for p in phantoms]), depart_at="2026-12-07T08:00"))
        for algorithm in ("ch", "dijkstra"):
            engine.routes(phantoms, RouteOptions(algorithm=algorithm, when=when))
        engine.table(phantoms, phantoms, None, None, when)
        isochrone_when(engine.router, phantoms[0], [600], when, False, "duration", 0)
    except EngineError as exc:
        log.info("warm-up of departure times: %s", exc)


def exercise_matching(service: Any, phantoms: list[Any]) -> None:
    """Map matching (candidates, the Viterbi kernel, its legs)."""
    from app.engine.errors import EngineError
    from app.engine.facade import MatchRequest

    try:
        service.opened.match(MatchRequest([(p.lon, p.lat) for p in phantoms], timestamps=[0, 3600]))
    except (EngineError, ValueError) as exc:
        log.info("warm-up of map matching: %s", exc)


def warm_search_process(service: Any) -> None:
    """A search process's engine warmed (`app.api.search_processes`, `Service.child_warmup`): the kernels of what a
    child answers loaded (or, on a first start, compiled) and the engine's tables built: a route on every algorithm
    (with a trace), areas to avoid, an isochrone, a matched trace; nothing else (each kernel loaded costs memory in
    every child)."""
    from app.engine.errors import EngineError
    from app.engine.facade import Waypoints
    from app.engine.types import RouteOptions

    engine = service.opened
    sample = engine.sample_points()
    try:
        if sample is None:
            raise EngineError("no sample points")
        phantoms = engine.snap(Waypoints(list(sample)))
        engine.routes(phantoms, RouteOptions(algorithm="ch", trace=True))
    except EngineError as exc:
        log.info("warm-up of a search process: %s", exc)
        engine.warmup()
        return
    exercise_algorithms(service, phantoms, None)
    exercise_areas(service, phantoms)
    exercise_matching(service, phantoms)


def _start_background(fn: Callable[[], None]) -> None:
    threading.Thread(target=fn, name="starroute-warmup", daemon=True).start()


def warm_service(
    service: Any,
    say: Say = log.info,
    algorithms: tuple[str, ...] | None = None,
    options: bool = True,
    background: bool = False,
) -> Any:
    """Open `service` (if not yet) and run `exercise` on it; says once when kernels compile. Returns the service.

    `background=True` (a server starting): routes on the default algorithm (the OSRM API's), tables and nearest are
    warm when this returns; the other algorithms (long searches: they run in the search pool), trips and the
    options' kernels (alternatives, areas, isochrones, matching: compiled already by `compile_all`, only loaded here)
    load on a daemon thread at nice 19 meanwhile, so the server is ready sooner and a first such request at most
    waits for that load.
    """
    import asyncio

    from app.api.health import Metrics
    from floor.kernels.jit import announce_compilation

    later = background and options and algorithms is None
    what, estimate = ("the kernels of a first route, table and nearest", FIRST_REQUESTS_COMPILE_S)
    if not later:
        what, estimate = "routing kernels", ENGINE_COMPILE_S
    with announce_compilation(say, what, estimate) as note:
        if service.engine is None:
            service.open()  # imports the engine (its kernels load when first run)
        if later:
            # legs and snapping step by step until `rest` has loaded their fused kernels
            service.opened.router.hot_path.fused = False
            first = (service.opened.router.default_algorithm,)
            phantoms = asyncio.run(_exercise_routing(service, first, trips=False))
        else:
            asyncio.run(exercise(service, algorithms, options))
    if note.fired:
        say(f"{what} compiled in {time.perf_counter() - note.started:.0f} s (cached for later starts)")
        if later:
            say(
                "the other kernels (algorithms, alternatives, areas, trips, matching) compile behind, at low "
                f"priority, while it serves (about {REST_COMPILE_S:.0f} s; a request that needs one first waits for it)"
            )
    service.metrics = Metrics()  # warm-up searches are not traffic
    if later:

        def rest() -> None:
            from app.api.service import _lower_priority
            from app.engine.features.tsp import warm as warm_trips
            from floor.kernels.jit import ready_all

            _lower_priority()
            try:
                _warm_one_calls(service)
                if phantoms is not None:
                    others = tuple(a for a in service.opened.algorithms if a not in first)
                    exercise_algorithms(service, phantoms, others)
                    exercise_options(service, phantoms)
                warm_trips()
                ready_all()  # the kernels no warm-up ran: loaded now, never by a request
            except Exception:  # noqa: BLE001 - a warm-up is no request: the server serves on, the log says why
                log.exception("background warm-up failed")
                return
            mark_compiled("engine")

        _start_background(rest)
    elif algorithms is None:
        from floor.kernels.jit import ready_all

        ready_all()  # before the workers fork: they share every kernel, and none loads during a request
        mark_compiled("engine")
    return service


def _warm_one_calls(service: Any) -> None:
    """Load (or compile) the hierarchy's one-call leg and one-call snapping for the served graph, then let the legs
    and the snapper take them (the router's `hot_path` switch)."""
    from app.engine.route import ch_leg
    from app.engine.search import cch_query

    router = service.opened.router
    router.snapper.warm()
    cch_query.warm()  # the customized CCH's tree walk (excludes, a metric applied later), beside its one-call leg
    if router.space.edge_based:
        ch_leg.warm(router.space.edges, router.legs.assembler)
    router.hot_path.fused = True


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


# The kernel groups `compile_all` compiles, numbered in the order they start: (name, job, measured seconds of that
# group, cold, in its job beside the other job on this project's 2-core machine with a neighbour process busy;
# `STARROUTE_COMPILE_LOG=INFO` logs them). Job "preprocess" works on a graph with every stage, job "engine" on one
# without hierarchy or landmarks; each group is a preprocessing run or a few requests of the server.
COMPILE_GROUPS: tuple[tuple[str, str, float], ...] = (
    ("preprocessing", "preprocess", 22.0),  # the turn stage's kernels 11 s of it (pipeline.TURNS_COMPILE_S)
    ("snapping, searches and legs", "engine", 24.0),
    ("hierarchy routes and tables", "preprocess", 9.0),
    ("alternatives", "preprocess", 4.0),
    ("areas to avoid and isochrones", "preprocess", 8.0),
    ("trips", "preprocess", 10.0),
    ("map matching", "engine", 36.0),
)


def compile_estimate(jobs: int = 2) -> float:
    """Seconds `compile_all(jobs)` is expected to take on a cold cache (the longer job, or the sum with one job)."""
    per_job: dict[str, float] = {}
    for _, job, seconds in COMPILE_GROUPS:
        per_job[job] = per_job.get(job, 0.0) + seconds
    return max(per_job.values()) if jobs >= 2 else sum(per_job.values())


FIRST_JOB_GROUP = "snapping, hierarchy routes, tables and legs"  # what `start_first_engine_job` compiles


def _compile_job(job: str, work: Path, say: Say) -> None:
    """One compile job of `compile_all` (a child process, or in turn with `jobs=1`): its groups of `COMPILE_GROUPS`
    in order, each announced with its number and estimate (and its time logged at INFO). Job "engine-first" is
    `_first_requests` (`start_first_engine_job`)."""
    if job == "engine-first":
        say(f"compiling routing kernels ({FIRST_JOB_GROUP}) ...")
        _first_requests(work)
        return
    from preprocessing.pipeline import preprocess

    state: dict[str, Any] = {}

    def build_full() -> None:  # contraction, CCH, landmarks; the engine is not imported yet (job "engine" does it)
        osm = write_sample_map(work / "sample-full.osm")
        state["graph"] = preprocess(osm, work / "full", ch=True, landmarks=4, force=True, quiet=True)

    def routes(algorithms: tuple[str, ...] | None) -> Callable[[], None]:
        def run() -> None:
            from app.api.service import Service
            from app.settings import Settings

            if "graph" not in state:  # job "engine": a graph without hierarchy (numpy only, no kernel)
                osm = write_sample_map(work / "sample-plain.osm")
                state["graph"] = preprocess(osm, work / "plain", ch=False, landmarks=0, force=True, quiet=True)
            # no request time limit: a warm-up request may compile for longer than a request may search
            service = state["service"] = Service(Settings(graph_dir=state["graph"], request_time_limit_s=3600))
            service.open()
            import asyncio

            state["phantoms"] = asyncio.run(_exercise_routing(service, algorithms, trips=False))
            assert state["phantoms"] is not None, "the sample map's points connect"
            _warm_one_calls(service)  # snapping and a hierarchy's leg in one call (the sample may have no hierarchy)

        return run

    def with_phantoms(fn: Callable[[Any, list[Any]], None]) -> Callable[[], None]:
        return lambda: fn(state["service"], state["phantoms"])

    def trips() -> None:
        from app.engine.features.tsp import warm as warm_trips

        warm_trips()

    steps: dict[str, Callable[[], None]] = {
        "preprocessing": build_full,
        "snapping, searches and legs": routes(None),
        "hierarchy routes and tables": routes(("ch",)),
        "alternatives": with_phantoms(exercise_alternatives),
        "areas to avoid and isochrones": with_phantoms(exercise_areas),
        "trips": trips,
        "map matching": with_phantoms(exercise_matching),
    }
    for i, (name, group_job, seconds) in enumerate(COMPILE_GROUPS, 1):
        if group_job != job:
            continue
        say(f"compiling routing kernels {i}/{len(COMPILE_GROUPS)} ({name}, about {seconds:.0f} s) ...")
        t0 = time.perf_counter()
        steps[name]()
        log.info("kernel group %d (%s) took %.1f s", i, name, time.perf_counter() - t0)
    from floor.kernels.jit import ready_all

    ready_all()  # kernels with signatures that no group ran (an option's rarer path): in the cache all the same
    if "service" in state:
        state["service"].close()


def _first_requests(work: Path) -> None:
    """The kernels a server on a freshly built graph (with hierarchy) needs for a first route, table and nearest,
    compiled by `start_first_engine_job` while its parent builds that graph: snapping and the legs first, on a sample
    graph without hierarchy (the contraction kernels the parent compiles meanwhile are not needed for it), then the
    tables and the hierarchy's queries on a sample graph with one (its contraction kernels the parent has compiled by
    then: the compile lock of `floor.kernels.jit` has this process load them instead of compiling them again), and
    last the one-call leg and snapping (`_warm_one_calls`), which the parent serves without until its background
    warm-up loads them.
    Never the core search, which a graph with hierarchy does not run for these requests."""
    import asyncio

    from app.api.osrm import dispatch as osrm
    from app.api.service import Service
    from app.settings import Settings
    from preprocessing.pipeline import preprocess

    def service_on(graph: Path) -> Any:
        service = Service(Settings(graph_dir=graph, request_time_limit_s=3600))  # no limit while compiling
        service.open()
        # the parent's first requests snap and run legs step by step: those kernels first, the fused ones last
        service.opened.router.hot_path.fused = False
        return service

    osm = write_sample_map(work / "sample.osm")
    plain = service_on(preprocess(osm, work / "plain", ch=False, landmarks=0, force=True, quiet=True))
    sample = plain.opened.sample_points()
    assert sample is not None, "the sample map has points"

    # The parent, its graph built, starts on a route: seeds, then the hierarchy's query, then the legs. So first what
    # it needs last, that the two compile different kernels: the legs of a route from a point to itself (along its
    # road, no search: this graph serves it while the parent still compiles the contraction), then the table, then
    # whole routes.
    a, b = (f"{lon},{lat}" for lon, lat in sample)
    for path, query in (
        (f"/nearest/v1/warmup/{a}", "number=2"),
        *((f"/route/v1/warmup/{a};{a}", q) for q in _WARM_ROUTE_QUERIES),
    ):
        asyncio.run(osrm.handle(plain, path, query))
    plain.close()
    hierarchy = service_on(preprocess(osm, work / "ch", ch=True, landmarks=0, cch=False, force=True, quiet=True))
    asyncio.run(osrm.handle(hierarchy, f"/table/v1/warmup/{a};{b}", "annotations=duration,distance"))
    asyncio.run(_exercise_routing(hierarchy, (hierarchy.opened.router.default_algorithm,), trips=False))
    _warm_one_calls(hierarchy)  # the parent's background warm-up loads them (its first requests go without)
    hierarchy.close()


def start_first_engine_job() -> subprocess.Popen:
    """Compile what a first route, table and nearest on a graph with hierarchy need (`_first_requests`) in a child
    process, into the same cache, while this process does other work (a first `serve` of an extract builds the
    graph meanwhile); `stop_compile_jobs` ends it if it still runs."""
    return start_compile_job(True, "engine-first", "-")


def abandon_compiles() -> None:
    """On a signal, just before the process exits: no compile thread of this process may start a cache file any more
    (`hold_cache_writes`), then `remove_partial_cache_files`. The process cannot compile afterwards."""
    from floor.kernels.jit import hold_cache_writes

    hold_cache_writes()
    remove_partial_cache_files()


def stop_compile_jobs() -> None:
    """End compile jobs still running (their half-written cache files removed)."""
    if any(p.poll() is None for p in _CHILDREN):
        remove_partial_cache_files()
    _CHILDREN.clear()


def say_stderr(message: str) -> None:
    """One `starroute: ...` line on stderr, at once: how the commands and the server say what they do."""
    print(f"starroute: {message}", file=sys.stderr, flush=True)


def compile_all(jobs: int = 2, quiet: bool = False, say: Say | None = None) -> float:
    """Compile every kernel of preprocessing and the server into numba's cache; returns the seconds it took.

    With `jobs >= 2` the two halves run in parallel child processes (numba compiles in one thread per process);
    each says when one of `COMPILE_GROUPS` starts (`compiling routing kernels 3/7 (...)`).
    """
    say = say or (lambda m: None if quiet else say_stderr(m))
    t0 = time.perf_counter()
    if is_compiled("preprocess") and is_compiled("engine"):
        say("every kernel is compiled already")
        return 0.0
    say(
        "compiling the routing kernels (first run after an install or upgrade; "
        f"about {compile_estimate(jobs):.0f} s on 2 cores, in {len(COMPILE_GROUPS)} groups)"
    )
    with tempfile.TemporaryDirectory(prefix="starroute-compile-") as tmp:
        work = Path(tmp)
        if jobs < 2:
            for job in ("preprocess", "engine"):
                _compile_job(job, work, say)
        else:
            procs = [start_compile_job(quiet, job, str(work)) for job in ("preprocess", "engine")]
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


if __name__ == "__main__":  # a compile job (`start_compile_job`): python -m app.warmup --say|--quiet JOB WORKDIR PARENT
    from app.api.search_processes import exit_with_parent

    exit_with_parent(int(sys.argv[4]))
    logging.basicConfig(level=os.environ.get("STARROUTE_COMPILE_LOG", "WARNING"))
    _quiet = sys.argv[1] == "--quiet"
    _say: Say = lambda m: None if _quiet else say_stderr(m)  # noqa: E731
    if sys.argv[3] == "-":  # a work directory of its own
        with tempfile.TemporaryDirectory(prefix="starroute-compile-") as _tmp:
            _compile_job(sys.argv[2], Path(_tmp), _say)
    else:
        _compile_job(sys.argv[2], Path(sys.argv[3]), _say)

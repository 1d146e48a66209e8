"""The state both APIs share: the engine (their one door into it), the search thread pool, metrics.

CH searches are short (well under a millisecond on city graphs) and run inline on the event loop. Longer work on the
hierarchy (alternatives, large tables, trips) runs in a pool at normal priority. Routes on every other algorithm,
isochrones, map matching and map tiles (the long jobs) run in search processes at idle priority
(`app.api.search_processes`), so they take neither CPU time nor the GIL from the loop; with `search_processes` 0, and
for a custom model's build, in a pool whose threads run at nice 19 instead (every pool under the request time limit; the
numba kernels release the GIL). The request time limit never counts the time this process spends compiling kernels
(`floor.kernels.jit.compile_seconds`): on a first start, a request that needs a kernel the background warm-up has not
compiled yet waits for it, then searches under the whole limit.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import BrokenExecutor, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from app.api import search_processes
from app.api.health import Metrics
from app.api.search_processes import SearchProcesses
from app.engine.errors import Overloaded, Timeout
from app.engine.facade import (
    CustomModel,
    Engine,
    IsochroneAnswer,
    IsochroneRequest,
    MatchAnswer,
    MatchRequest,
    NearestRequest,
    RouteAnswer,
    RouteRequest,
    TableRequest,
    TripAnswer,
    TripRequest,
)
from app.engine.types import Phantom, Table
from app.settings import Settings
from floor.kernels.jit import compile_seconds

if TYPE_CHECKING:
    from floor.format.graph import Graph

T = TypeVar("T")
log = logging.getLogger("starroute")

INLINE_ALGORITHMS = frozenset({"ch"})  # searches short enough to run on the event loop


DAMAGE_CHECK_S = 0.25  # how often the request path asks whether the graph's files changed under it
FORK_WAIT_S = 60.0  # how long a lone worker waits for its warm-up thread to end, to fork its search processes
SEARCH_NICE = 19  # the search pool's threads: CPU weight 15 against the event loops' 1024


def _lower_priority() -> None:
    """Run this thread of the search pool at nice `SEARCH_NICE` (Linux threads have their own nice value), so a long
    search takes little CPU time from the event loops: the short requests they answer inline preempt it at once.
    Not `SCHED_IDLE`: a pool thread holding the GIL (its short Python part) would then wait for an idle CPU while the
    event loop waits for the GIL, hundreds of milliseconds on a busy machine; at nice 19 it still gets its turn."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SEARCH_NICE)
    except (AttributeError, OSError):  # not Linux, or not permitted: the pool runs at normal priority
        pass


def search_pool(threads: int) -> ThreadPoolExecutor:
    """The pool long searches run in: `threads` threads, each at nice `SEARCH_NICE` where Linux allows it."""
    return ThreadPoolExecutor(threads, thread_name_prefix="starroute-search", initializer=_lower_priority)


class Service:
    """One per worker process, created by `create_app` and opened by its lifespan: the engine (the API's one door
    into it), the search pool and the metrics."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.engine: Engine | None = None
        self.pool: ThreadPoolExecutor | None = None  # long searches, at the lowest priority
        self.ch_pool: ThreadPoolExecutor | None = None  # hierarchy work too long for the loop, at normal priority
        self.processes: SearchProcesses | None = None  # long searches, matching and tiles, at idle priority
        self.generation = 0  # of the engine: every reload counts one (the search processes follow it)
        # how a spawned search process warms its engine: set by the shell (`app.warmup.warm_search_process`, picklable
        # by reference); None leaves its kernels to load on first use
        self.child_warmup: Callable[[Service], None] | None = None
        self.version = _version()
        self._slow_pending = 0
        self._reload_lock = threading.Lock()
        self.loaded_at = 0.0  # when the engine serving now was switched in (time.time())
        self.reloads = 0
        self.reload_seconds = 0.0
        self._damage: tuple[float, list[str]] = (-math.inf, [])  # (when asked, `Engine.damaged`'s answer then)
        self.master_pid: int | None = None  # a worker of several: its supervisor's pid (`app.api.admin` signals it)

    # lifecycle -----------------------------------------------------------------------------------------------------
    def open(self, graph: Graph | None = None) -> None:
        """Memory-map the graph and build the engine (raises `GraphError` on a bad graph directory); `graph`: the
        graph directory loaded already (`app.server` loads it first to fail fast: not mapped and checked twice)."""
        self.engine = self._load(graph)
        self.loaded_at = time.time()
        self.open_pools(processes=False)

    def open_pools(self, processes: bool = True) -> None:
        """Start the search pools if they are not running (a worker forked from a warm supervisor has none), and
        with `processes` the search processes (a worker's lifespan: never in a supervisor about to fork)."""
        if self.pool is None:
            self.pool = search_pool(self.settings.threads)
        if self.ch_pool is None:
            self.ch_pool = ThreadPoolExecutor(self.settings.threads, thread_name_prefix="starroute-ch")
        if processes and self.processes is None and self.settings.search_processes > 0:
            self._start_processes(time.monotonic() + FORK_WAIT_S)

    def fork_safe(self) -> bool:
        """Whether a fork now leaves no lock held that the child needs: no thread besides this one but the search
        pools' idle ones (no long job pending; an idle pool thread waits on its queue and holds nothing)."""
        pools = ("starroute-search", "starroute-ch")
        others = search_processes.other_threads()
        return not [n for n in others if not (self._slow_pending == 0 and n.startswith(pools))]

    def _start_processes(self, deadline: float) -> None:
        """Start the search processes, forked when `fork_safe`. Under an event loop, while it is not (a lone
        worker's background warm-up runs, a long job is under way) and until `deadline`, ask again in 0.1 s: a fork
        shares the warm engine's pages, where a spawned child loads an engine of its own (Porto: 139 MiB).
        Meanwhile long searches run in the thread pool."""
        n = self.settings.search_processes
        if self.processes is not None or self.pool is None or n <= 0:
            return  # started, or closed meanwhile
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        fork = self.fork_safe()
        if loop is not None and not fork and time.monotonic() < deadline:
            loop.call_later(0.1, self._start_processes, deadline)
            return
        self.processes = SearchProcesses(self, n, fork)

    def _load(self, loaded: Graph | None = None) -> Engine:
        """The engine of the graph now at the graph path (`loaded`: that graph, loaded by the caller); when it is the
        served build with another metric, built on the served engine (its unchanged arrays and weight-independent
        tables kept: a fraction of the time and no new copies in a worker)."""
        from app.engine.data import load, same_build
        from app.engine.facade import Engine, engine_limits

        s = self.settings
        current = self.engine
        graph = loaded or load(s.graph_dir, reuse=current.graph if current is not None else None)
        if current is not None and same_build(current.graph, graph) and not current.damaged():
            return current.with_metric(graph)
        return Engine(graph, engine_limits(s), max_snap_m=s.max_snap_radius_m, min_component_size=s.min_component_size)

    def reload(self) -> Engine:
        """Load the graph now at the graph path with its current metric (checked at load), warm it, and serve it from
        the next request on: requests already running finish on the engine they started with, and nothing changes
        when the load fails (`GraphError`). One reload at a time; the way a `SIGHUP` and the admin endpoint apply a
        new metric or a new graph."""
        with self._reload_lock:
            t0 = time.perf_counter()
            engine = self._load()
            engine.warmup(("ch",))  # the per-graph tables the first request would otherwise build
            if self.engine is None:
                raise RuntimeError("service not opened")
            self.engine = engine
            self._damage = (-math.inf, [])
            self.loaded_at = time.time()
            self.reloads += 1
            self.generation += 1
            self.reload_seconds = time.perf_counter() - t0
            return engine

    def complete_metric(self) -> str | None:
        """The search stages of a new metric without them (`preprocessing.customize.complete_metric`: its hierarchy,
        and landmark tables if some road got faster), computed here once and added to the graph directory, so that
        the workers reloading next map them instead of each computing its own. Returns what was done, in a few
        words for the reload's log line (None: nothing); a failure is logged, and leaves the workers' own loads to
        compute them (or refuse the metric)."""
        from app.engine.data import complete_metric

        try:
            got = complete_metric(self.settings.graph_dir)
        except Exception as exc:  # noqa: BLE001 - logged; every worker's load tries again and says why
            log.error("the new metric's search stages could not be computed: %s", exc)
            return None
        if got is None:
            return None
        how = ", ".join(f"{k} {v}" for k, v in got.how.items())
        return f"its search stages computed in {got.seconds:.2f} s: {how}"

    def unusable(self) -> list[str]:
        """Why the graph served now cannot be read (`Engine.damaged`: a file truncated or rewritten under the server),
        asked at most every `DAMAGE_CHECK_S` (a stat per array file); empty while it is sound. Requests are refused
        with 503 meanwhile and `/health` says why: reading such a mapping would kill the worker. A reload of a sound
        graph ends it."""
        when, problems = self._damage
        now = time.monotonic()
        if now - when >= DAMAGE_CHECK_S and self.engine is not None:
            problems = self.engine.damaged()
            if problems and not self._damage[1]:
                log.error("the graph served now is unusable, requests are refused: %s", "; ".join(problems))
            self._damage = (now, problems)
        return problems

    def loaded(self) -> str:
        """What the engine serving now was loaded from, for a log line: the graph directory, its build and metric."""
        meta = self.opened.meta
        metric = (meta.raw.get("metric") or {}).get("id") or "the preprocessed one"
        return f"{self.settings.graph_dir} (graph {meta.fingerprint[:16]}, metric {metric})"

    def reload_logged(self, why: str = "SIGHUP", note: str | None = None, quiet: bool = False) -> bool:
        """`reload`, said in one log line either way (a failed load keeps the old graph serving): `why` it happened,
        what was loaded from which directory, how long it took, and `note`. `quiet`: success at DEBUG only (a worker
        of several: its supervisor says it). Whether it reloaded."""
        try:
            self.reload()
        except Exception as exc:  # noqa: BLE001 - logged; the old graph serves on
            log.error("%s: reload of %s refused, the previous graph serves on: %s", why, self.settings.graph_dir, exc)
            return False
        line = f"{why}: reloaded {self.loaded()} in {self.reload_seconds:.2f} s" + (f"; {note}" if note else "")
        log.log(logging.DEBUG if quiet else logging.INFO, "%s", line)
        return True

    def close(self, wait: bool = False, stopping: bool = False) -> None:
        """Stop the search pools (the engine stays); `wait` until their threads have ended (before a fork).
        `stopping` (the server stops): the search processes end at once, a search under way included, and are
        joined, so that what they shared with this process is released before it exits (a process ending without
        that has multiprocessing's resource tracker warn of leaked semaphores)."""
        for pool in (self.pool, self.ch_pool):
            if pool is not None:
                pool.shutdown(wait=wait, cancel_futures=True)
        if self.processes is not None:
            self.processes.shutdown(wait=wait or stopping, kill=stopping)
        self.pool = self.ch_pool = None
        self.processes = None
        if wait and self.engine is not None:
            self.engine.stop_threads()

    @property
    def opened(self) -> Engine:
        """The engine (the service is open while requests arrive)."""
        assert self.engine is not None, "service not opened"
        return self.engine

    async def run_slow(self, fn: Callable[[], T], *, hierarchy: bool = False) -> T:
        """Run `fn` in the search pool under the request time limit (`Timeout` when exceeded, `Overloaded` when the
        queue is full);
        `hierarchy`: work on the contraction hierarchy (alternatives, tables, trips), run at normal priority in a
        pool of its own, not among the long searches that get little CPU time while the loop is busy."""
        pool = self.ch_pool if hierarchy else self.pool
        assert pool is not None, "service not opened"
        return await self._limited(lambda: asyncio.get_running_loop().run_in_executor(pool, fn))

    async def run_in_process(self, task: Callable[..., T], arg: object, fallback: Callable[[], T]) -> T:
        """`task(generation, arg)` in a search process under the request time limit (as `run_slow`); `fallback` in
        the search pool when there are no search processes or they are still warming up (spawned), or when one died
        (the pool is started afresh). A search still running at the limit is stopped: its process is killed and
        replaced (a thread could not be stopped)."""
        procs = self.processes
        if procs is None or not procs.warm:
            return await self.run_slow(fallback)
        submitted: list[int] = []

        def start() -> Awaitable[T]:
            task_id, future = procs.submit(task, self.generation, arg, limit_s=self.settings.request_time_limit_s)
            submitted.append(task_id)
            return asyncio.wrap_future(future)

        try:
            return await self._limited(start)
        except Timeout:
            if submitted and procs.running(submitted[0]):  # queued ones are never started (`search_processes._task`)
                log.warning("a long search ran past the request time limit: its search process is replaced")
                self._replace_processes(procs, kill=True)
            raise
        except BrokenExecutor:  # BrokenProcessPool (not imported: multiprocessing costs a server's start 9 ms)
            log.error("a search process ended unexpectedly; starting them afresh")
            self._replace_processes(procs)
            return await self.run_slow(fallback)

    def processes_info(self) -> dict[str, object]:
        """The search processes as `/health` shows them: the configured size, and those running (pids, forked)."""
        procs = self.processes
        return {
            "size": self.settings.search_processes,
            "started": 0 if procs is None else procs.processes,
            "forked": procs is not None and procs.forked,
            "pids": [] if procs is None else procs.pids(),
        }

    def _replace_processes(self, procs: SearchProcesses, kill: bool = False) -> None:
        """Start new search processes in place of `procs` (unless that happened already), ending the old ones:
        `kill`ed at once, or after their queue. The jobs still with them are not cancelled (an awaiting request
        would end with `CancelledError`): they finish, or fail with `BrokenProcessPool` and go to the thread pool."""
        if self.processes is procs:  # at once (forked if that is safe now, else spawned): the next search wants it
            self.processes = SearchProcesses(self, procs.processes, self.fork_safe())
        procs.shutdown(kill=kill, cancel=False)

    async def _limited(self, start: Callable[[], Awaitable[T]]) -> T:
        """Await the job `start` submits under the request time limit, time this process spends compiling kernels
        left out: `Timeout` when it is exceeded (a queued job is cancelled; an answer that comes in just late is
        refused too), `Overloaded` when `8 x threads` long jobs are pending already."""
        limit = self.settings.request_time_limit_s
        if self._slow_pending >= 8 * self.settings.threads:
            raise Overloaded("Too many long searches queued; retry later or use algorithm=ch")
        self._slow_pending += 1
        started, compiled = time.monotonic(), compile_seconds()

        def left() -> float:  # of the limit, compile time not counted
            return limit - (time.monotonic() - started) + (compile_seconds() - compiled)

        job = asyncio.ensure_future(start())
        try:
            while not job.done():
                wait = left()
                if wait <= 0:
                    break
                await asyncio.wait((job,), timeout=wait)
            if job.done() and (job.cancelled() or job.exception() is not None):
                return job.result()  # raises what the job raised
            if not job.done() or left() < 0:
                raise Timeout(f"Search exceeded the request time limit of {limit:g} s")
            return job.result()
        finally:
            if not job.done():
                job.cancel()
            self._slow_pending -= 1

    # requests ------------------------------------------------------------------------------------------------------
    async def prepare_model(self, engine: Engine, model: CustomModel | None) -> bool:
        """Build a request's custom model metric in the search pool when the engine has not cached it (its weights,
        the router on them; the hierarchy customizes in the background), never on the event loop. Whether it was
        built now."""
        if engine.model_ready(model):
            return False
        assert model is not None
        await self.run_slow(lambda: engine.prepare_model(model))
        return True

    async def route(self, req: RouteRequest) -> RouteAnswer:
        """The routes of a request: resolved on the event loop, searched inline for plain CH, in the pool for the
        rest (other algorithms, traces, alternatives); a custom model not cached yet is built in the pool first."""
        engine = self.opened
        built = await self.prepare_model(engine, req.custom_model)
        algorithm, phantoms, options = engine.resolve_route(req)
        if built and options.model_info is not None:
            options.model_info["cached"] = False

        def run() -> RouteAnswer:
            return engine.routes(phantoms, options)

        hierarchy = algorithm in INLINE_ALGORITHMS and not options.trace
        # a custom model is built (or found) in the search process too, for its own engine; but its hierarchy is
        # customized there in the background, so a traced CH search on one stays here
        if options.when is not None:  # time-dependent: milliseconds (arrive_by: a search per departure tried)
            answer = await self.run_slow(run)
        elif not hierarchy and (req.custom_model is None or algorithm not in INLINE_ALGORITHMS):
            answer = await self.run_in_process(search_processes.route, req, run)
            if built and answer.custom_model is not None:
                answer.custom_model["cached"] = False
        elif not hierarchy:
            answer = await self.run_slow(run)
        elif not options.alternatives:
            answer = run()
        else:  # via-node alternatives inline (about a millisecond); plateaus (tens) only in the pool
            answer = engine.routes(phantoms, replace(options, plateaus=False))
            if not answer.result.complete:
                answer = await self.run_slow(run, hierarchy=True)
        best = answer.result.best
        for leg in best.legs:
            self.metrics.observe_search(best.algorithm, leg.stats.settled)
        return answer

    async def table(self, req: TableRequest) -> tuple[Table, list[Phantom], list[Phantom]]:
        """Many-to-many durations and distances (NaN where unreachable), with the snapped sources and
        destinations; small tables inline, the rest in the pool."""
        engine = self.opened
        await self.prepare_model(engine, req.model)
        src, dst, ex = engine.resolve_table(req)

        when = engine.when(req)

        def run() -> Table:
            return engine.table(src, dst, ex, req.model, when)

        if len(src) * len(dst) <= self.settings.inline_table_cells:
            return run(), src, dst
        return await self.run_slow(run, hierarchy=True), src, dst

    async def trip(self, req: TripRequest) -> TripAnswer:
        """A trip: resolved on the event loop; the table, the tour and the route inline when the table is small
        (`inline_table_cells`), else in the pool."""
        engine = self.opened
        phantoms, options = engine.resolve_trip(req)

        def run() -> TripAnswer:
            return engine.trip(req, phantoms, options)

        if len(phantoms) ** 2 <= self.settings.inline_table_cells:
            return run()
        return await self.run_slow(run, hierarchy=True)

    def nearest(self, req: NearestRequest) -> list[Phantom]:
        """Up to `number` snapped points, nearest first; `NoSegment` when none."""
        return self.opened.nearest(req)

    async def isochrone(self, req: IsochroneRequest) -> IsochroneAnswer:
        """Isochrone bands, searched and drawn in a search process (which builds or finds a custom model's metric,
        areas to avoid included, for its own engine)."""
        engine = self.opened
        await self.prepare_model(engine, req.model)
        phantom, ex = engine.resolve_isochrone(req)

        def run() -> IsochroneAnswer:
            return engine.isochrone(req, phantom, ex)

        return await self.run_in_process(search_processes.isochrone, req, run)

    async def tile(self, draw: Callable[[Engine, int, int, int], bytes], z: int, x: int, y: int) -> bytes:
        """A map tile's bytes, `draw(engine, z, x, y)` (a module-level function: a search process gets it by name),
        cut and encoded in a search process, or in the search pool when there is none."""
        engine = self.opened
        return await self.run_in_process(search_processes.tile, (draw, z, x, y), lambda: draw(engine, z, x, y))

    async def match(self, req: MatchRequest) -> MatchAnswer:
        """A GPS trace matched onto the roads (`Engine.match`), in a search process."""
        engine = self.opened
        return await self.run_in_process(search_processes.match, req, lambda: engine.match(req))


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("starroute")
    except Exception:  # noqa: BLE001 - not installed as a package
        return "0+unknown"

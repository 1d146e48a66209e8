"""Long searches in processes of their own, at idle priority: they take neither CPU time nor the GIL from the
event loops that answer CH requests inline.

A worker with `search_processes` > 0 starts that many children, which answer whole requests (`route`, `isochrone`,
`match`, `tile`) that the worker has already checked and snapped on its loop. A worker whose other threads are all idle
(`Service.fork_safe`: one forked from a warm supervisor, `--workers` 2 or more; a lone worker once its background
warm-up has ended, `Service._start_processes` waits for that) forks them: they share its warm engine and its pages, and
cost little memory of their own. Otherwise they start afresh (`spawn`: a thread that holds a lock at a fork would leave
it held in the child), each building its own engine over the graph directory (memory-mapped: the graph's pages are
shared) and loading the kernels it needs (Monaco: about 100 MiB apiece).
A child runs under `SCHED_IDLE`: any runnable thread of normal priority preempts it at once. Threads at nice 19 in
the worker (the thread pool) cannot run so low: one holding the GIL would starve the loop waiting for that GIL.

Each task carries the worker's engine generation (`Service.generation`, changed by every reload); a child whose
engine is of another generation loads the graph directory again first, as the worker did (same build: only the
metric's arrays). A child ends when its worker does (`exit_with_parent`), and leaves a terminal's Ctrl-C, which
reaches every process of the server's group, to its worker: it starts with SIGINT blocked, then ignores it.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
import signal
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Future

    from app.engine.facade import (
        Engine,
        IsochroneAnswer,
        IsochroneRequest,
        MatchAnswer,
        MatchRequest,
        RouteAnswer,
        RouteRequest,
    )
    from app.settings import Settings

log = logging.getLogger("starroute")


class Serving(Protocol):
    """What the search processes need of the worker's service, `app.api.service.Service` (not imported here: it
    imports this module, and hands a child its class to build one from the settings)."""

    settings: Settings
    engine: Engine | None
    generation: int

    @property
    def opened(self) -> Engine: ...

    @property
    def child_warmup(self) -> Callable[[Any], None] | None: ...

    def _load(self) -> Engine: ...


_service: Serving | None = None  # in a child: the service whose engine answers (no pools of its own)
_generation = -1  # ... and the worker generation that engine was loaded for
_running: Any = None  # ... and the pool's shared table of the task each child runs (0: none), with its slot in it
_slot = -1
_warm: Callable[[Any], None] | None = None  # ... and how it warms an engine it loads (the shell's; None: lazily)


def lower_priority(pid: int = 0) -> None:
    """Put process `pid` (0: this one) under `SCHED_IDLE` (Linux), else at nice 19 where allowed."""
    try:
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        try:
            os.setpriority(os.PRIO_PROCESS, pid, 19)
        except (AttributeError, OSError):
            pass


PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when the thread that started it ends


def exit_with_parent(parent: int, sig: int = signal.SIGKILL) -> None:
    """Have this process get `sig` as soon as `parent` (the process that started it) dies, so that no orphan serves
    or searches on: Linux's parent-death signal (the parent must have started it from its main thread), sent at once
    if the parent died before it was set; elsewhere a thread that looks every 0.2 s."""
    try:
        import ctypes

        if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):  # not Linux
        threading.Thread(target=_watch_parent, args=(parent, sig), daemon=True, name="starroute-parent-watch").start()
        return
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)


def _watch_parent(parent: int, sig: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.2)
    os.kill(os.getpid(), sig)


def _drop_sockets() -> None:
    """In a forked child: point every socket descriptor inherited from the worker (its listener, its clients'
    connections) at /dev/null, so that a connection the worker closes is closed (a copy held here would keep it
    open); the numbers stay taken, so that nothing new reuses a number an inherited socket object still holds."""
    import stat

    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # not Linux: the descriptors below the limit
        fds = list(range(3, min(os.sysconf("SC_OPEN_MAX"), 65536)))
    null = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        try:
            if fd != null and stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.dup2(null, fd)
        except OSError:
            pass
    os.close(null)


def _start(
    settings_json: str,
    generation: int,
    parent: int,
    inherited: Serving | None,
    running: Any,
    slots: Any,
    warm: Callable[[Any], None] | None,
    make: Callable[[Settings], Serving],
) -> None:
    """Initializer of a child: Ctrl-C ignored (its worker stops it), idle priority, ended with its parent, a slot in
    the table of running tasks; the worker's service when forked, else one of its own (`make`: the service's class)
    with the engine loaded and warmed by `warm`."""
    global _service, _generation, _running, _slot, _warm
    from app.settings import Settings

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked since its start (`SearchProcesses`)
    exit_with_parent(parent)
    lower_priority()
    _warm = warm
    with slots.get_lock():
        _running, _slot = running, slots.value
        slots.value += 1
    if inherited is not None:
        _drop_sockets()
        _service, _generation = inherited, generation
        return
    service = make(Settings.model_validate_json(settings_json))
    service.engine = service._load()
    if warm is not None:
        warm(service)
    _service, _generation = service, generation


def _engine(generation: int) -> Engine:
    """The child's engine for the worker's `generation`: reloaded from the graph directory when it is another."""
    global _generation
    assert _service is not None, "not a search process"
    if generation != _generation:
        _service.engine = _service._load()
        if _warm is not None:
            _warm(_service)
        _generation = generation
    return _service.opened


def _task(task_id: int, deadline: float, fn: Any, generation: int, *args: Any) -> Any:
    """Run `fn(generation, *args)` as task `task_id`, marked in the table of running tasks meanwhile; `Timeout` at
    once when `deadline` (`time.monotonic()`, one clock for every process) has passed: a task that waited in the
    queue past its request's time limit is not started (its request has had its answer)."""
    from app.engine.errors import Timeout

    if time.monotonic() > deadline:
        raise Timeout("Search exceeded the request time limit (still queued)")
    _running[_slot] = task_id
    try:
        return fn(generation, *args)
    finally:
        _running[_slot] = 0


def ready(generation: int) -> int:
    """Nothing but the engine of `generation` loaded and warm: the child's pid."""
    _engine(generation)
    return os.getpid()


def route(generation: int, req: RouteRequest) -> RouteAnswer:
    """`Engine.route` in a child (the worker checked the request already)."""
    return _engine(generation).route(req)


def isochrone(generation: int, req: IsochroneRequest) -> IsochroneAnswer:
    """`Engine.isochrone` in a child, its point snapped again there."""
    engine = _engine(generation)
    phantom, ex = engine.resolve_isochrone(req)
    return engine.isochrone(req, phantom, ex)


def match(generation: int, req: MatchRequest) -> MatchAnswer:
    """`Engine.match` in a child."""
    return _engine(generation).match(req)


def tile(generation: int, which: tuple[Callable[[Engine, int, int, int], bytes], int, int, int]) -> bytes:
    """A map tile's bytes in a child, `which` = (draw, z, x, y): `draw(engine, z, x, y)`, a module-level function
    (sent by name: `app.api.tiles.tile_bytes`, `app.api.basemap.bg_tile_bytes`, `app.api.osrm.tile.draw`)."""
    draw, z, x, y = which
    return draw(_engine(generation), z, x, y)


def call(generation: int, which: tuple[Callable[[Any], Any], Any]) -> Any:
    """`fn(arg)` in a child, `which` = (fn, arg): a module-level function of plain data that needs no engine (sent by
    name: `app.api.vroom.solve.solve`, which holds the GIL while it works)."""
    fn, arg = which
    return fn(arg)


def other_threads() -> list[str]:
    """The names of this process's threads but the calling one and uvicorn's worker ping thread (`always_pong`,
    which waits on a pipe and holds no lock)."""
    me = threading.current_thread()
    return [t.name for t in threading.enumerate() if t is not me and not t.name.endswith("(always_pong)")]


class SearchProcesses:
    """A worker's pool of search processes (started at once; warmed in the background when spawned): forked with
    `fork` (the caller knows no other thread holds a lock the children need), else spawned."""

    def __init__(self, service: Serving, processes: int, fork: bool) -> None:
        from concurrent.futures import ProcessPoolExecutor  # imported here: multiprocessing costs a server's start 9 ms

        self.processes = processes
        self.forked = fork and "fork" in multiprocessing.get_all_start_methods()
        generation = service.generation
        ctx = multiprocessing.get_context("fork" if self.forked else "spawn")
        self._running = ctx.Array("q", processes, lock=False)  # per child, the task it runs (0: none)
        self._ids = itertools.count(1)
        inherited = service if self.forked else None
        settings, slots = service.settings.model_dump_json(), ctx.Value("i", 0)
        self._pool = ProcessPoolExecutor(
            processes,
            mp_context=ctx,
            initializer=_start,
            initargs=(
                settings,
                generation,
                os.getpid(),
                inherited,
                self._running,
                slots,
                service.child_warmup,
                type(service),
            ),
        )
        # start them now, not on the first long search, with SIGINT blocked: a Ctrl-C during a spawned child's
        # imports would end it with a traceback (blocked after the pool started multiprocessing's resource tracker,
        # whose start unblocks it)
        interrupts = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self._ready = [self._pool.submit(ready, generation) for _ in range(processes)]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, interrupts)
        for process in self._children():  # a spawned child imports the app first: at idle priority from the start
            if process.pid is not None:
                lower_priority(process.pid)

    def _children(self) -> list[Any]:
        """The pool's processes (`multiprocessing.Process`), from its private table (no public one before 3.14)."""
        return list((getattr(self._pool, "_processes", None) or {}).values())

    @property
    def warm(self) -> bool:
        """Whether every child has its engine loaded and warm (a spawned one takes seconds; a forked one starts so)."""
        return all(f.done() for f in self._ready)

    def pids(self) -> list[int]:
        """The pids of the children started so far."""
        return sorted(p.pid for p in self._children() if p.pid is not None)

    def submit(self, fn: Any, generation: int, *args: Any, limit_s: float = 3600.0) -> tuple[int, Future[Any]]:
        """Run `fn(generation, *args)` in a child, unless it waits there longer than `limit_s` (`Timeout`): its task
        id and future (`BrokenProcessPool` when a child died)."""
        task_id = next(self._ids)
        deadline = time.monotonic() + limit_s
        return task_id, self._pool.submit(_task, task_id, deadline, fn, generation, *args)

    def running(self, task_id: int) -> bool:
        """Whether a child is running task `task_id` now (not queued, not done)."""
        return task_id in self._running[:]

    def shutdown(self, wait: bool = False, kill: bool = False, cancel: bool = True) -> None:
        """Stop the children: a running task finishes first (its answer unread), or with `kill` ends at once (its
        future and any other still with the pool fail with `BrokenProcessPool`); queued tasks are dropped (their
        futures cancelled) with `cancel`, else run first (or fail likewise)."""
        if kill:
            for process in self._children():
                process.kill()
        self._pool.shutdown(wait=wait, cancel_futures=cancel)

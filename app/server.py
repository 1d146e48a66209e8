"""Run the service with uvicorn: `run_server(settings)`, or `python -m app.server GRAPH_DIR [--port …]`.

Start-up happens before uvicorn starts: the graph is memory-mapped, the port checked, and the kernels a first
request needs compiled (first run after an install, announced with an estimate) or loaded from numba's cache, in a
thread the main thread watches, so Ctrl-C or SIGTERM at any moment of it exits at once with status 0. Then uvicorn
serves; it stops on the same signals. With `--workers N` the supervisor loads the graph and warms every kernel once,
then forks the N workers (`ForkedWorker`): each starts with the warm engine, and everything loaded before the fork
(the mapped graph, the tables derived from it, numba's loaded code) stays shared between them, copy-on-write, so an
extra worker costs only what it writes (its search arrays). A SIGHUP makes every worker reload its graph, and the
supervisor too, so that a worker it forks later (one that died) serves the new graph.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.settings import Settings
from floor.memory import trim_heap

log = logging.getLogger("starroute")


class ServerError(Exception):
    """The server cannot start (port in use, ...); the message says what to do."""


def check_port(host: str, port: int) -> None:
    """`ServerError` when `host:port` cannot be bound (in use, or not an address of this machine)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            why = exc.strerror or str(exc)
            raise ServerError(f"cannot listen on {host}:{port} ({why}): pass another --port or --host") from None


def _url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else ("[::1]" if host == "::" else host)
    return f"http://{shown}:{port}/"


def open_service(settings: Settings, say: Callable[[str], None]) -> Any:
    """The warm `Service` a server starts with: the graph loaded (a bad directory fails here, with the loader's
    sentence), the port checked, the engine built on that same graph (loading it again cost as much: Porto 0.1 s),
    the kernels of a first request loaded. One worker: the rest load on a background thread while it serves;
    several: everything loads now, before the fork, so that the workers share it."""
    from app.engine.data import load

    graph = load(settings.graph_dir)
    check_port(settings.host, settings.port)
    from app.api.service import Service
    from app.warmup import warm_service

    service = Service(settings)
    service.open(graph)
    return warm_service(service, say=say, background=settings.workers == 1)


def run_server(settings: Settings) -> None:
    """Start up (graph, port, kernels), print the URL, serve until interrupted.

    A bad graph directory raises `GraphError`, a port that cannot be bound `ServerError`, both before any kernel
    work or worker process.
    """
    from app.stoppable import run_until_signal
    from app.warmup import abandon_compiles, say_stderr

    started = time.perf_counter()

    service = run_until_signal(
        lambda: open_service(settings, say_stderr),
        on_stop=abandon_compiles,
        status=lambda signum: 0,
        message="stopped during start-up",
    )
    say_stderr(
        f"serving {settings.graph_dir} at {_url(settings.host, settings.port)} "
        f"(ready in {time.perf_counter() - started:.1f} s; open it in a browser, Ctrl-C stops)"
    )
    import uvicorn

    from app.main import create_app

    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "access_log": settings.access_log,
        "timeout_keep_alive": 5,
        "timeout_graceful_shutdown": 1,
        "lifespan": "on",
        "log_config": log_config(settings.log_level),
    }
    protocol = _http_protocol(settings)
    if protocol is None:
        options["http"] = "auto"
    else:
        options["http"] = protocol
    app = create_app(settings, service=service)
    if settings.workers > 1:
        settings.export()
        service.master_pid = os.getpid()  # the workers' supervisor: the one process their admin endpoint signals
        prepare_fork(service)
        config = uvicorn.Config(app, workers=settings.workers, **options)
        listener = config.bind_socket()
        if protocol is not None:
            protocol.listener = listener
        _supervisor(service)(config, sockets=[listener]).run()
    else:
        config = uvicorn.Config(app, **options)
        listener = config.bind_socket()
        if protocol is not None:
            protocol.listener = listener
        try:  # as `uvicorn.run`: a Ctrl-C that uvicorn raises again after its graceful stop ends quietly
            uvicorn.Server(config).run(sockets=[listener])
        except KeyboardInterrupt:
            pass


class QuietShutdownCancels(logging.Filter):
    """Drop uvicorn's "Exception in ASGI application" traceback of a request its graceful shutdown cancelled (one
    still waiting, on a first start, for a kernel to compile, when Ctrl-C comes): uvicorn has said so in one line
    ("Cancel 1 running task(s), timeout graceful shutdown exceeded")."""

    def filter(self, record: logging.LogRecord) -> bool:
        import asyncio

        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, asyncio.CancelledError) and "graceful shutdown" in str(exc))


def log_config(level: str = "info") -> dict[str, Any]:
    """uvicorn's logging set-up, with `QuietShutdownCancels` on its error log, and starroute's own log (reloads,
    metric updates, errors) written as uvicorn's lines are, from `level` up."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["shutdown_cancels"] = {"()": QuietShutdownCancels}
    config["loggers"]["uvicorn.error"]["filters"] = ["shutdown_cancels"]
    config["loggers"]["starroute"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    return config


def _http_protocol(settings: Settings) -> Any:
    """uvicorn's httptools protocol as the server runs it (`app.http_protocol`: one write per response, refusals in
    JSON, the settings' connection limits), or None where httptools is missing (uvicorn's own choice then)."""
    try:
        from app.http_protocol import ConnectionLimits, StarrouteHttpProtocol
    except ImportError:  # uvicorn without its [standard] extra
        return None
    limits = ConnectionLimits(
        max_connections=_descriptors_for(settings.max_connections),
        header_timeout_s=settings.header_timeout_s,
        queue_timeout_s=settings.queue_timeout_s,
    )
    return StarrouteHttpProtocol.configured(limits)


def _descriptors_for(connections: int, spare: int = 128) -> int:
    """`connections`, or fewer if this process cannot open that many descriptors besides `spare` (the graph's files,
    pipes, the search processes'): its soft limit raised to the hard one first, as far as needed."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = connections + spare
        if soft != resource.RLIM_INFINITY and soft < want:
            soft = want if hard == resource.RLIM_INFINITY else min(want, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        return connections if soft == resource.RLIM_INFINITY else max(1, min(connections, soft - spare))
    except (ImportError, ValueError, OSError):
        return connections


def prepare_fork(service: Any) -> None:
    """Leave the process fit to fork workers from: no thread but this one (a forked child gets only the forking
    thread, and a pool whose threads stayed behind would never run its jobs), and the objects loaded so far frozen
    out of the garbage collector's reach (`gc.freeze`), so that its passes do not write to, and so copy, the pages
    the workers share."""
    import gc
    import threading

    service.close(wait=True)
    deadline = time.monotonic() + 5.0
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.01)  # the start-up thread of `run_until_signal` ending after it handed over its result
    others = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
    if others:
        log.warning("forking workers beside threads %s: those do not exist in the workers", others)
    if service.engine is not None:
        service.engine.before_fork()
    gc.collect()
    trim_heap()  # arrays freed before the fork would stay resident in every worker
    gc.freeze()


def _supervisor(service: Any) -> type:
    import multiprocessing

    import uvicorn.supervisors.multiprocess as mp
    from uvicorn._subprocess import subprocess_started

    fork = multiprocessing.get_context("fork")

    class ForkedWorker(mp.Process):  # type: ignore[misc,name-defined]
        """A uvicorn worker forked from the supervisor (uvicorn spawns fresh interpreters): it starts with the
        supervisor's warm engine and shares its pages. The supervisor's signal handlers (which only queue a
        signal for the supervisor's loop) are reset in the child; uvicorn's server installs its own. A worker gets
        SIGTERM (uvicorn's graceful stop) the moment its supervisor dies, so that no orphan keeps the port."""

        def __init__(self, config: Any, sockets: list[socket.socket]) -> None:
            super().__init__(config, sockets)
            self.master = os.getpid()
            kwargs = {"config": config, "target": self.target, "sockets": sockets, "stdin_fileno": None}
            self.process = fork.Process(target=subprocess_started, kwargs=kwargs)  # type: ignore[assignment]

        def target(self, sockets: list[socket.socket] | None = None) -> None:  # pragma: no cover - in the child
            from app.api.search_processes import exit_with_parent

            for sig in mp.SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            exit_with_parent(self.master, signal.SIGTERM)
            super().target(sockets)

    class ReloadingSupervisor(mp.Multiprocess):  # type: ignore[misc]
        """uvicorn's worker supervisor, with forked workers, and a SIGHUP that reloads the graph inside every worker
        (each switches between requests, nothing restarts, no connection drops) instead of replacing the worker
        processes; the supervisor reloads too, for the workers it forks later."""

        def run(self) -> None:
            """uvicorn's loop, woken by a signal at once: uvicorn's polls its signal queue every 0.5 s, which a
            SIGHUP (a new metric or graph) would wait for on top of its own work."""
            import threading

            mp.Process = ForkedWorker  # type: ignore[misc]  # uvicorn makes its workers through this module-level name
            wake = threading.Event()

            def queue(sig: int, frame: object) -> None:
                self.signal_queue.append(sig)
                wake.set()

            for sig in mp.SIGNALS:
                signal.signal(sig, queue)
            log.info("Started parent process [%d]", os.getpid())
            self.init_processes()
            while not self.should_exit.is_set():
                wake.wait(0.5)
                wake.clear()
                self.handle_signals()
                self.keep_subprocess_alive()
            self.terminate_all()
            self.join_all()
            log.info("Stopping parent process [%d]", os.getpid())

        def handle_hup(self) -> None:
            """The supervisor's one log line says it all: the workers reload quietly (a failure says so)."""
            t0 = time.perf_counter()
            stages = service.complete_metric()  # a new metric's hierarchy, once, before the workers load it
            signalled = 0
            for p in self.processes:
                pid = p.process.pid
                if pid is not None and p.process.is_alive():
                    try:
                        os.kill(pid, signal.SIGHUP)
                        signalled += 1
                    except ProcessLookupError:
                        pass
            note = f"{signalled} workers reload it" + (f"; {stages}" if stages else "")
            service.reload_logged("SIGHUP", note)
            prepare_fork(service)
            log.debug("SIGHUP handled in %.2f s", time.perf_counter() - t0)

    return ReloadingSupervisor


def main(argv: list[str] | None = None) -> int:
    """Command line of `python -m app.server`."""
    p = argparse.ArgumentParser(prog="python -m app.server", description="Serve a starroute graph over HTTP.")
    p.add_argument("graph_dir", type=Path)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5000)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--threads", type=int, default=None, help="search threads per worker")
    p.add_argument(
        "--search-processes", type=int, default=None, help="processes per worker for long searches (0: threads)"
    )
    p.add_argument("--log-level", default="info")
    p.add_argument("--access-log", action="store_true")
    args = p.parse_args(argv)
    extra: dict[str, Any] = {"threads": args.threads} if args.threads else {}
    if args.search_processes is not None:
        extra["search_processes"] = args.search_processes
    settings = Settings(
        graph_dir=args.graph_dir,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        access_log=args.access_log,
        **extra,
    )
    from app.engine.errors import GraphError

    try:
        run_server(settings)
    except (GraphError, ServerError) as exc:
        print(f"starroute: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

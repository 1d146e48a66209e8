"""Run the service with uvicorn: `run_server(settings)`, or `python -m app.server GRAPH_DIR [--port …]`.

Start-up happens before uvicorn starts: the graph is memory-mapped, the port checked, and the kernels a first
request needs compiled (first run after an install, announced with an estimate) or loaded from numba's cache, in a
thread the main thread watches, so Ctrl-C or SIGTERM at any moment of it exits at once with status 0. Then uvicorn
serves; it stops on the same signals. With `--workers N` uvicorn starts N processes; each memory-maps the same
graph files, so the OS shares their pages, and each loads and warms the kernels from the cache (the supervisor
warms a graph itself only when the cache is not complete, so that no two workers compile). The settings reach the
workers as `STARROUTE_*` variables.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from app.settings import Settings

log = logging.getLogger("starroute")


class ServerError(Exception):
    """The server cannot start (port in use, ...); the message says what to do."""


def _say(message: str) -> None:
    print(f"starroute: {message}", file=sys.stderr, flush=True)


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


def run_server(settings: Settings) -> None:
    """Start up (graph, port, kernels), print the URL, serve until interrupted.

    A bad graph directory raises `GraphError`, a port that cannot be bound `ServerError`, both before any kernel
    work or worker process.
    """
    from app.stoppable import run_until_signal
    from app.warmup import is_compiled, remove_partial_cache_files

    started = time.perf_counter()

    def start_up() -> Any:
        from app.engine.data import load

        load(settings.graph_dir)  # fail fast, with the loader's sentence
        check_port(settings.host, settings.port)
        if settings.workers > 1 and is_compiled("engine"):
            return None  # each worker loads and warms its own; nothing would compile here
        from app.api.service import Service
        from app.warmup import warm_service

        return warm_service(Service(settings), say=_say, background=settings.workers == 1)

    service = run_until_signal(
        start_up, on_stop=remove_partial_cache_files, status=lambda signum: 0, message="stopped during start-up"
    )
    if settings.workers > 1 and service is not None:
        # the kernels are compiled now (the workers load them from the cache); each worker opens its own graph,
        # and the supervisor keeps no graph tables of its own
        service.close()
        service.engine = None
        del service
        import gc

        gc.collect()
    _say(
        f"serving {settings.graph_dir} at {_url(settings.host, settings.port)} "
        f"(ready in {time.perf_counter() - started:.1f} s; open it in a browser, Ctrl-C stops)"
    )
    import uvicorn

    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "access_log": settings.access_log,
        "timeout_keep_alive": 5,
        "timeout_graceful_shutdown": 1,
        "lifespan": "on",
    }
    if settings.workers > 1:
        settings.export()
        config = uvicorn.Config("app.main:create_app", factory=True, workers=settings.workers, **options)
        _supervisor()(config, sockets=[config.bind_socket()]).run()
    else:
        from app.main import create_app

        uvicorn.run(create_app(settings, service=service), **options)


def _supervisor() -> type:
    from uvicorn.supervisors import Multiprocess

    class ReloadingSupervisor(Multiprocess):  # type: ignore[misc]
        """uvicorn's worker supervisor, but a SIGHUP reloads the graph inside every worker (each switches between
        requests, nothing restarts, no connection drops) instead of replacing the worker processes."""

        def handle_hup(self) -> None:
            log.info("SIGHUP: every worker reloads its graph")
            for p in self.processes:
                pid = p.process.pid
                if pid is not None and p.process.is_alive():
                    try:
                        os.kill(pid, signal.SIGHUP)
                    except ProcessLookupError:
                        pass

    return ReloadingSupervisor


def main(argv: list[str] | None = None) -> int:
    """Command line of `python -m app.server`."""
    p = argparse.ArgumentParser(prog="python -m app.server", description="Serve a starroute graph over HTTP.")
    p.add_argument("graph_dir", type=Path)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5000)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--threads", type=int, default=None, help="search threads per worker")
    p.add_argument("--log-level", default="info")
    p.add_argument("--access-log", action="store_true")
    args = p.parse_args(argv)
    extra = {"threads": args.threads} if args.threads else {}
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

"""Run the service with uvicorn: `run_server(settings)`, or `python -m app.server GRAPH_DIR [--port …]`.

With `--workers N` uvicorn starts N processes; each memory-maps the same graph files, so the OS shares their pages
(no per-worker copy of the arrays). The settings reach the workers as `STARROUTE_*` variables.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import uvicorn

from app.settings import Settings


def run_server(settings: Settings) -> None:
    """Serve until interrupted; a bad graph directory raises `GraphError` before any worker starts."""
    from app.engine.data import load

    load(settings.graph_dir)  # fail fast, in the parent, with the loader's sentence
    options = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "access_log": settings.access_log,
        "timeout_keep_alive": 5,
        "lifespan": "on",
    }
    if settings.workers > 1:
        settings.export()
        uvicorn.run("app.main:create_app", factory=True, workers=settings.workers, **options)
    else:
        from app.main import create_app

        uvicorn.run(create_app(settings), **options)


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
    except GraphError as exc:
        print(f"starroute: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

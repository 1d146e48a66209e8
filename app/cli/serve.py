"""`starroute serve`: a graph directory served, or an extract, preprocessed first when its graph is missing or
stale."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.cli.common import (
    OSM_SUFFIXES,
    CliError,
    default_extract,
    default_graph_dir,
)
from app.cli.preprocess import _abandon, build_graph, graph_matches


def cmd_serve(args: argparse.Namespace) -> int:
    from app.stoppable import run_until_signal
    from app.warmup import compile_all, is_compiled, start_first_engine_job, stop_compile_jobs

    target: Path = args.target if args.target is not None else default_extract()
    extract = target.is_file() or target.name.lower().endswith(OSM_SUFFIXES)
    if not is_compiled("engine") or (extract and not is_compiled("preprocess")):
        # A first run. Workers to fork (they share what was compiled before): every kernel first, both halves at
        # once in two processes. One worker compiles only what a first route, table and nearest need, serves, and
        # compiles the rest behind them (`app.warmup.warm_service`); with a graph to build, snapping, the searches
        # and the legs compile in a child process meanwhile (the preprocessing kernels compile as they are used).
        if args.workers > 1:
            run_until_signal(lambda: compile_all(jobs=2), on_stop=_abandon, status=lambda s: 0, message="stopped")
        elif extract and not is_compiled("engine"):
            start_first_engine_job()
    try:
        return _serve(args, target, extract)
    finally:
        stop_compile_jobs()


def _serve(args: argparse.Namespace, target: Path, extract: bool) -> int:
    """`cmd_serve` once kernels are dealt with: build the graph if `target` is an extract, then serve it."""
    from app.stoppable import run_until_signal

    if extract:
        graph_dir = default_graph_dir(target, args.profile)
        if not target.is_file():
            raise CliError(f"input file {target} does not exist")
        if graph_matches(graph_dir, target, args.profile):
            print(f"starroute: using the graph {graph_dir} built from {target}", file=sys.stderr)
        else:
            print(f"starroute: building {graph_dir} from {target} (profile {args.profile})", file=sys.stderr)
            run_until_signal(
                lambda: build_graph(  # its summary beside the server's log lines, on stderr
                    target, graph_dir, args.profile, True, 16, graph_dir.exists(), False, False, summary=sys.stderr
                ),
                on_stop=_abandon,
                status=lambda signum: 0,
                message="no graph was written",
            )
    else:
        graph_dir = target
    from app.engine.errors import GraphError
    from app.server import ServerError, run_server
    from app.settings import Settings

    try:
        settings = Settings(graph_dir=graph_dir, host=args.host, port=args.port, workers=args.workers)
        run_server(settings)
    except (GraphError, ServerError) as exc:
        raise CliError(str(exc)) from None
    return 0

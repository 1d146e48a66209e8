"""The `starroute` entry point: parse, run one command, and end as a command line should.

Bad input gets one line on stderr and exit status 2, never a traceback. Ctrl-C or SIGTERM stops any command at
once: preprocess and download leave nothing behind (exit 130 / 143), serve exits 0. Each command imports only what
it uses, so `starroute route` never loads the web stack and `starroute preprocess` never loads the engine."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from app.cli.common import (
    EXIT_INTERRUPTED,
    CliError,
    Stopped,
)
from app.cli.parser import parser


def _quiet_exit(signum: int, frame: Any) -> None:
    warmup = sys.modules.get("app.warmup")
    if warmup is not None and "floor.kernels.jit" in sys.modules:  # kernels may be compiling: no file left half made
        warmup.abandon_compiles()
    elif warmup is not None:  # a compile job started for this serve ends with it
        warmup.stop_compile_jobs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _terminate_as_interrupt(signum: int, frame: Any) -> None:
    """SIGTERM outside the phases that handle it (the imports): unwind as an interrupt that says it was SIGTERM."""
    stop = KeyboardInterrupt()
    stop.signum = signum  # type: ignore[attr-defined]
    raise stop


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point: `run`, and on a signal exit at once with the status that says why (an interrupt
    landing inside a C extension's import can otherwise make the interpreter kill itself with SIGINT at shutdown,
    whatever was returned). SIGTERM stops a command the way Ctrl-C does from the start, imports included, so the
    exit status and the line saying what was left are the same whenever it lands."""
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        status = run(argv)
    except Stopped as stop:
        status = stop.status
    except KeyboardInterrupt as exc:  # before the command began (parsing its arguments, importing its modules)
        term = getattr(exc, "signum", signal.SIGINT) == signal.SIGTERM
        print(f"starroute: {'terminated' if term else 'interrupted'}; nothing was written", file=sys.stderr)
        status = 128 + signal.SIGTERM if term else EXIT_INTERRUPTED
    # end the process at once: interpreter shutdown with numba loaded costs a tenth of a second, and there is nothing
    # left to do (outputs are written and closed, no thread still works)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def run(argv: Sequence[str] | None = None) -> int:
    """Run one command in this process, map failures to one line and an exit status; `Stopped` on a signal."""
    p = parser()
    args = p.parse_args(argv)
    if args.command is None:
        p.print_help()
        return 0
    if args.command == "serve" and threading.current_thread() is threading.main_thread():
        # a stop outside the phases that handle it (imports; after uvicorn's graceful shutdown, which re-raises
        # the signal) ends serve quietly with status 0
        for s in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(s) != signal.SIG_IGN:
                signal.signal(s, _quiet_exit)
    try:
        return int(args.func(args))
    except CliError as exc:
        print(f"starroute: error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt as exc:  # cleanup already ran while it unwound (temporary directories removed)
        term = getattr(exc, "signum", signal.SIGINT) == signal.SIGTERM
        print(
            f"starroute: {'terminated' if term else 'interrupted'}; {getattr(args, 'left', 'stopped')}", file=sys.stderr
        )
        status = 128 + signal.SIGTERM if term else EXIT_INTERRUPTED
        raise Stopped(getattr(args, "stop_status", status)) from None


if __name__ == "__main__":
    sys.exit(main())

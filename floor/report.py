"""Stage reporting: a progress bar per stage on a terminal, plain log lines otherwise, nothing with quiet.

Each stage records wall seconds and the process's peak RSS at its end, which go into the manifest and the final
summary.
"""

from __future__ import annotations

import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from floor.memory import trim_heap


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class Reporter:
    """Collects per-stage timings; draws rich progress bars when stderr is a terminal."""

    def __init__(self, quiet: bool = False, stream: Any = None) -> None:
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.stages: dict[str, Any] = {}
        self._beside: dict[str, tuple[float, str]] = {}

    def log(self, message: str) -> None:
        if not self.quiet:
            print(message, file=self.stream, flush=True)

    def note_beside(self, name: str, seconds: float, other: str) -> None:
        """Stage `name` (under way) did its work on another thread beside stage `other`, in `seconds`: its record
        gets those seconds (`beside`: the other stage; `waited_s`: how long the stage itself then lasted)."""
        self._beside[name] = (seconds, other)

    @contextmanager
    def compiling(self, what: str, estimate_s: float) -> Iterator[None]:
        """A block that may compile numba kernels: silent when they load from the cache; on a first run it says so
        once, shows a bar that moves with the elapsed time (towards the estimate), and records a "compile" stage."""
        from floor.kernels.jit import announce_compilation

        state: dict[str, Any] = {}

        def start(message: str) -> None:
            self.log(f"starroute: {message}")
            state["t0"] = time.perf_counter()
            if self.tty and not self.quiet:
                from rich.console import Console
                from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

                bar = Progress(
                    TextColumn(f"{'compile kernels':<16}"), BarColumn(), TimeElapsedColumn(),
                    TextColumn(f"of about {estimate_s:.0f} s"), console=Console(file=self.stream),
                )  # fmt: skip
                task = bar.add_task("compile", total=estimate_s)
                bar.start()
                stop = threading.Event()

                def tick() -> None:
                    while not stop.wait(0.2):
                        bar.update(task, completed=min(time.perf_counter() - state["t0"], 0.99 * estimate_s))

                threading.Thread(target=tick, daemon=True).start()
                state["bar"], state["stop"] = bar, stop

        with announce_compilation(start, what, estimate_s):
            try:
                yield
            finally:
                if "stop" in state:
                    state["stop"].set()
                    state["bar"].stop()
        if "t0" in state:
            secs = time.perf_counter() - state["t0"]
            self.stages["compile kernels"] = {"seconds": round(secs, 3), "peak_rss_mb": round(peak_rss_mb(), 1)}
            self.log(f"starroute: {what} compiled in {secs:.1f} s (cached for every later run)")

    @contextmanager
    def stage(self, name: str, total: int | None = None, unit: str = "") -> Iterator[Callable[..., None]]:
        """Run one named stage; yields `advance(n)` to move its progress bar."""
        t0 = time.perf_counter()
        progress = None
        task = None
        if not self.quiet and self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            progress = Progress(
                TextColumn(f"{name:<16}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(unit),
                TimeElapsedColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            progress.start()
            task = progress.add_task(name, total=total)
        elif not self.quiet:
            print(f"starroute: {name} ...", file=self.stream, flush=True)

        def advance(n: int = 1, total: int | None = None) -> None:
            if progress is not None:
                assert task is not None
                if total is not None:
                    progress.update(task, total=total)
                progress.advance(task, n)

        try:
            yield advance
        finally:
            if progress is not None:
                progress.stop()
        trim_heap()  # what the stage freed leaves the process's resident set before the next stage starts
        secs = time.perf_counter() - t0
        self.stages[name] = {"seconds": round(secs, 3), "peak_rss_mb": round(peak_rss_mb(), 1)}
        if name in self._beside:  # its work ran beside another stage: its own seconds, and the wait for it
            own, other = self._beside.pop(name)
            self.stages[name].update(seconds=round(own, 3), beside=other, waited_s=round(secs, 3))
        if not self.quiet and not self.tty:
            print(
                f"starroute: {name} done in {secs:.2f} s (peak RSS {peak_rss_mb():.0f} MiB)",
                file=self.stream,
                flush=True,
            )

"""A progress bar for matrices on stderr: cells done of the total, cells per second, elapsed time; retries and
failures printed above it as they happen."""

from __future__ import annotations

import sys
import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        rate = task.completed / elapsed if elapsed > 0 else 0.0
        return Text(f"{rate:,.0f} cells/s")


class Bar:
    """`with Bar(total_cells) as bar:` a run's `Progress` (`runner.Progress`) drawn with rich."""

    def __init__(self, total: int, label: str = "matrix") -> None:
        self.console = Console(file=sys.stderr)
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:,.0f}/{task.total:,.0f} cells"),
            _Rate(),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.task = self.progress.add_task(label, total=total)
        self.t0 = time.perf_counter()

    def __enter__(self) -> Bar:
        self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.progress.stop()

    def advance(self, cells: int) -> None:
        self.progress.advance(self.task, cells)

    def note(self, message: str) -> None:
        self.progress.console.print(f"starroute: {message}", markup=False, highlight=False)

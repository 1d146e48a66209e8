"""Run the blocks of a matrix, in this process or on a Dask cluster, handing each result to a sink as it finishes.

A block that raises is retried (`retries` more times) and every failure is reported; one that fails every try is
collected, the others still run, and `MatrixError` names them all at the end: no block is ever silently missing. On
Dask at most `window` blocks are in flight, so results never pile up: memory stays bounded whatever N x M.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from starroute.errors import MatrixError

R = TypeVar("R")


@dataclass(frozen=True)
class Block:
    """Rows `i0:i1` (sources) by columns `j0:j1` (destinations)."""

    i0: int
    i1: int
    j0: int
    j1: int

    @property
    def cells(self) -> int:
        return (self.i1 - self.i0) * (self.j1 - self.j0)


def plan(n: int, m: int, rows: int, cols: int, by_columns: bool = False) -> list[Block]:
    """Blocks of at most `rows` x `cols` covering n x m, row-major (`by_columns`: column-major, so blocks with the
    same destinations follow one another and a worker reuses their buckets)."""
    rs, cs = range(0, n, max(rows, 1)), range(0, m, max(cols, 1))
    pairs = [(i, j) for j in cs for i in rs] if by_columns else [(i, j) for i in rs for j in cs]
    return [Block(i, min(i + rows, n), j, min(j + cols, m)) for i, j in pairs]


class Progress(Protocol):
    """What a run reports: cells done (for cells per second) and retried or failed blocks."""

    def advance(self, cells: int) -> None: ...

    def note(self, message: str) -> None: ...


class Silent:
    """No progress shown; failures still reach `MatrixError`."""

    def advance(self, cells: int) -> None:
        pass

    def note(self, message: str) -> None:
        pass


@dataclass
class Outcome:
    """What a run did: blocks, cells, seconds, and the blocks that needed a retry."""

    blocks: int
    cells: int
    seconds: float
    retried: list[tuple[int, int]]

    @property
    def cells_per_s(self) -> float:
        return self.cells / self.seconds if self.seconds > 0 else float("inf")


def _fail(failed: dict[Block, str]) -> MatrixError:
    where = [(b.i0, b.j0) for b in failed]
    first = next(iter(failed.items()))
    return MatrixError(
        f"{len(failed)} block(s) failed every retry, first rows {first[0].i0}:{first[0].i1} x columns "
        f"{first[0].j0}:{first[0].j1}: {first[1]}",
        where,
        list(failed.values()),
    )


def run_local(
    blocks: list[Block],
    compute: Callable[[Block], R],
    done: Callable[[Block, R], None],
    progress: Progress | None = None,
    retries: int = 2,
) -> Outcome:
    """Compute each block here, in order; `done(block, result)` as each finishes."""
    progress = progress or Silent()
    t0 = time.perf_counter()
    failed: dict[Block, str] = {}
    retried: list[tuple[int, int]] = []
    cells = 0
    for b in blocks:
        for attempt in range(retries + 1):
            try:
                result = compute(b)
            except Exception as exc:  # noqa: BLE001 - reported, retried, and raised at the end if it persists
                progress.note(f"block {b.i0}:{b.i1} x {b.j0}:{b.j1} failed (try {attempt + 1}): {exc!r}")
                if attempt == retries:
                    failed[b] = repr(exc)
                elif (b.i0, b.j0) not in retried:
                    retried.append((b.i0, b.j0))
                continue
            done(b, result)
            cells += b.cells
            progress.advance(b.cells)
            break
    if failed:
        raise _fail(failed)
    return Outcome(len(blocks), cells, time.perf_counter() - t0, retried)


def run_dask(
    client: Any,
    blocks: list[Block],
    submit: Callable[[Block], Any],
    done: Callable[[Block, Any], None],
    progress: Progress | None = None,
    retries: int = 2,
    window: int | None = None,
) -> Outcome:
    """Submit each block (`submit(block) -> Future`), at most `window` in flight (default: two per worker thread),
    and hand results to `done` in the order they finish."""
    from distributed import as_completed

    progress = progress or Silent()
    if window is None:
        threads = sum(client.nthreads().values()) or 1
        window = 2 * threads
    t0 = time.perf_counter()
    pending: Iterator[Block] = iter(blocks)
    tries: dict[Block, int] = {}
    failed: dict[Block, str] = {}
    retried: list[tuple[int, int]] = []
    cells = 0
    owner: dict[Any, Block] = {}

    def launch(b: Block) -> Any:
        fut = submit(b)
        owner[fut] = b
        return fut

    first = [launch(b) for _, b in zip(range(window), pending, strict=False)]
    ac = as_completed(first, loop=client.loop)
    for fut in ac:
        b = owner.pop(fut)
        try:
            result = fut.result()
        except Exception as exc:  # noqa: BLE001 - reported, retried, and raised at the end if it persists
            n = tries[b] = tries.get(b, 0) + 1
            progress.note(f"block {b.i0}:{b.i1} x {b.j0}:{b.j1} failed (try {n}): {exc!r}")
            fut.release()
            if n <= retries:
                if (b.i0, b.j0) not in retried:
                    retried.append((b.i0, b.j0))
                ac.add(launch(b))
                continue
            failed[b] = repr(exc)
        else:
            fut.release()
            done(b, result)
            del result
            cells += b.cells
            progress.advance(b.cells)
        nxt = next(pending, None)
        if nxt is not None:
            ac.add(launch(nxt))
    if failed:
        raise _fail(failed)
    return Outcome(len(blocks), cells, time.perf_counter() - t0, retried)

"""Big matrices: snapped sources x destinations cut into blocks, computed here or on Dask, each block handed to a
sink (or reduced to accessibility figures) as it finishes.

Points are snapped once, together, by the caller (the engine's rule for one request); blocks carry snapped points,
so every cell equals the one-request table's answer for that pair. On Dask the snapped points of each row and column
range are scattered once and each block's task gets them by reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from app.engine.facade import Engine
from app.engine.types import Phantom
from starroute.blocks import (
    AccessSpec,
    access_block,
    access_task,
    in_this_process,
    merge_nearest,
    shared_engine,
    table_block,
    table_task,
)
from starroute.cluster import client_for
from starroute.runner import Block, Outcome, Progress, plan, run_dask, run_local
from starroute.sinks import Sink

BLOCK = (1000, 1000)  # sources x destinations per block (see bench/matrix.py's block sweep)


class _Scattered:
    """Each row range's sources and column range's destinations, scattered to the cluster once."""

    def __init__(self, client: Any, src: Sequence[Phantom | None], dst: Sequence[Phantom | None]) -> None:
        self.client, self.src, self.dst = client, src, dst
        self.rows: dict[tuple[int, int], Any] = {}
        self.cols: dict[tuple[int, int], Any] = {}

    def _get(self, cache: dict[tuple[int, int], Any], pts: Sequence[Phantom | None], a: int, b: int) -> Any:
        fut = cache.get((a, b))
        if fut is None:
            fut = cache[(a, b)] = self.client.scatter([list(pts[a:b])], hash=False)[0]
        return fut

    def of(self, b: Block) -> tuple[Any, Any]:
        return self._get(self.rows, self.src, b.i0, b.i1), self._get(self.cols, self.dst, b.j0, b.j1)


def run_table(
    engine: Engine,
    graph_dir: str | Path,
    src: Sequence[Phantom | None],
    dst: Sequence[Phantom | None],
    sink: Sink,
    exclude: Sequence[str] = (),
    *,
    block: tuple[int, int] = BLOCK,
    scheduler: Any = None,
    workers: int = 2,
    progress: Progress | None = None,
    retries: int = 2,
    model: Mapping[str, Any] | None = None,
) -> Outcome:
    """Every block's durations and distances into `sink` (closed on success, aborted on failure). `scheduler`
    None: here, with `engine`; else a Dask client, address or "local" (`cluster.client_for`). `model`: a custom
    model's JSON, every block on its metric. A point None (left out unsnapped) has NaN cells."""
    blocks = plan(len(src), len(dst), *block, by_columns=True)  # down each column range: its buckets kept
    ex = tuple(exclude)
    try:
        if scheduler is None:
            out = run_local(
                blocks,
                lambda b: table_block(engine, src[b.i0 : b.i1], dst[b.j0 : b.j1], ex, model),
                lambda b, r: sink.write(b, *r),
                progress,
                retries,
            )
        else:
            with client_for(scheduler, workers) as client, shared_engine(engine) as key:
                gd = key if in_this_process(client) else str(Path(graph_dir).resolve())
                pts = _Scattered(client, src, dst)

                def submit(b: Block) -> Any:
                    s, d = pts.of(b)
                    return client.submit(table_task, gd, s, d, ex, model, pure=False)

                out = run_dask(client, blocks, submit, lambda b, r: sink.write(b, *r), progress, retries)
    except BaseException:
        sink.abort()
        raise
    sink.close()
    return out


def run_access(
    engine: Engine,
    graph_dir: str | Path,
    src: Sequence[Phantom],
    dst: Sequence[Phantom],
    spec: AccessSpec,
    weights: np.ndarray | None = None,
    exclude: Sequence[str] = (),
    *,
    block: tuple[int, int] = BLOCK,
    scheduler: Any = None,
    workers: int = 2,
    progress: Progress | None = None,
    retries: int = 2,
    model: Mapping[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Outcome]:
    """Accessibility over the same blocks: (reached [N, L], nearest [N, k], nearest durations [N, k], outcome);
    each block is reduced where it was computed, so only per-source figures travel."""
    n = len(src)
    reached = np.zeros((n, len(spec.limits_s)))
    near = np.full((n, spec.k), -1, dtype=np.int64)
    near_s = np.full((n, spec.k), np.nan)
    blocks = plan(n, len(dst), *block)
    ex = tuple(exclude)

    def done(b: Block, r: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        part, idx, dur = r
        reached[b.i0 : b.i1] += part
        if spec.k:
            glob = np.where(idx >= 0, idx + b.j0, -1)
            near[b.i0 : b.i1], near_s[b.i0 : b.i1] = merge_nearest(
                near[b.i0 : b.i1], near_s[b.i0 : b.i1], glob, dur, spec.k
            )

    def w(b: Block) -> np.ndarray | None:
        return None if weights is None else weights[b.j0 : b.j1]

    if scheduler is None:

        def compute(b: Block) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            durations, _ = table_block(engine, src[b.i0 : b.i1], dst[b.j0 : b.j1], ex, model)
            return access_block(durations, spec, w(b))

        out = run_local(blocks, compute, done, progress, retries)
    else:
        with client_for(scheduler, workers) as client, shared_engine(engine) as key:
            gd = key if in_this_process(client) else str(Path(graph_dir).resolve())
            pts = _Scattered(client, src, dst)

            def submit(b: Block) -> Any:
                s, d = pts.of(b)
                return client.submit(access_task, gd, s, d, ex, spec, w(b), model, pure=False)

            out = run_dask(client, blocks, submit, done, progress, retries)
    return reached, near, near_s, out

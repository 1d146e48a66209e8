"""One block of a matrix, sources x destinations, computed by the engine's table (the CH bucket table), in this
process or on a Dask worker; and the accessibility reduction of a block, so that only per-source figures travel.

A worker process memory-maps the graph once (`worker_engine`, keyed by the graph directory) and answers every block
it is given with that engine; workers that are threads of the caller's process (the local cluster) use the caller's
engine (`shared_engine`); each thread reuses its own search arrays (`Router.query`). Entries do not depend on
the blocking: every cell is the table's answer for that pair, whatever block it is computed in.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.engine.facade import Engine
from app.engine.types import Phantom

_ENGINES: dict[str, Engine] = {}
_LOCK = threading.Lock()
SHARED = "shared-engine:"  # `shared_engine`'s keys: an engine of this process, not a directory
_SHARED_IDS = itertools.count()


def worker_engine(graph_dir: str) -> Engine:
    """This process's engine over `graph_dir`, loaded (memory-mapped) on first use and kept for every later block."""
    with _LOCK:
        engine = _ENGINES.get(graph_dir)
        if engine is None:
            from app.engine.data import load

            engine = _ENGINES[graph_dir] = Engine(load(graph_dir))
        return engine


@contextmanager
def shared_engine(engine: Engine) -> Iterator[str]:
    """A key that workers in this process (the local cluster's threads) give `worker_engine` to answer with `engine`,
    the caller's, loaded already, for as long as the `with` lasts; the key names no directory elsewhere."""
    key = f"{SHARED}{next(_SHARED_IDS)}"
    with _LOCK:
        _ENGINES[key] = engine
    try:
        yield key
    finally:
        with _LOCK:
            _ENGINES.pop(key, None)


def in_this_process(client: Any) -> bool:
    """Whether every worker of `client` is a thread of this process (a local cluster without processes)."""
    pids = client.run(os.getpid)
    return bool(pids) and set(pids.values()) == {os.getpid()}


def table_block(
    engine: Engine,
    sources: Sequence[Phantom | None],
    destinations: Sequence[Phantom | None],
    exclude: Sequence[str] = (),
    model: Mapping[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """float64 durations (s) and distances (m) [S, T] of snapped points, NaN where unreachable (`Engine.table`)
    and in the rows and columns of points left out unsnapped (None: `starroute matrix`'s points with no road
    near); on custom `model`'s metric (its JSON: what travels to a worker, which parses it once and keeps its
    metric)."""
    parsed = None if model is None else engine.parse_model(model)
    src = [p for p in sources if p is not None]
    dst = [p for p in destinations if p is not None]
    if len(src) == len(sources) and len(dst) == len(destinations):
        t = engine.table(src, dst, engine.exclude(exclude), parsed, reuse_buckets=True)
        return t.durations_s, t.distances_m
    durations = np.full((len(sources), len(destinations)), np.nan)
    distances = durations.copy()
    if src and dst:
        t = engine.table(src, dst, engine.exclude(exclude), parsed, reuse_buckets=True)
        rows = [i for i, p in enumerate(sources) if p is not None]
        cols = [j for j, p in enumerate(destinations) if p is not None]
        durations[np.ix_(rows, cols)] = t.durations_s
        distances[np.ix_(rows, cols)] = t.distances_m
    return durations, distances


@dataclass(frozen=True)
class AccessSpec:
    """What accessibility asks of each block: the time limits in seconds (ascending) and how many nearest."""

    limits_s: tuple[float, ...]
    k: int = 0


def access_block(
    durations: np.ndarray, spec: AccessSpec, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per source of one block: (reached [S, L]: count or weighted sum of destinations within each limit; nearest
    [S, k']: block-local indices of the k nearest by duration, ties to the lower index, -1 where fewer; their
    durations [S, k'], NaN there), k' = min(k, T)."""
    S, T = durations.shape
    finite = np.where(np.isnan(durations), np.inf, durations)
    w = np.ones(T) if weights is None else np.asarray(weights, dtype=np.float64)
    reached = np.empty((S, len(spec.limits_s)), dtype=np.float64)
    for i, limit in enumerate(spec.limits_s):
        reached[:, i] = (finite <= limit) @ w
    k = min(spec.k, T)
    order = np.argsort(finite, axis=1, kind="stable")[:, :k]
    near_s = np.take_along_axis(finite, order, axis=1)
    idx = np.where(np.isinf(near_s), -1, order).astype(np.int64)
    return reached, idx, np.where(np.isinf(near_s), np.nan, near_s)


def merge_nearest(
    idx_a: np.ndarray, s_a: np.ndarray, idx_b: np.ndarray, s_b: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest of two candidate sets per row (global indices, durations with NaN for none), ties to the lower
    index; -1 / NaN where fewer than k."""
    idx = np.concatenate([idx_a, idx_b], axis=1)
    dur = np.concatenate([s_a, s_b], axis=1)
    missing = idx < 0
    dur = np.where(missing | np.isnan(dur), np.inf, dur)
    key_idx = np.where(missing, np.iinfo(np.int64).max, idx)
    order = np.lexsort((key_idx, dur), axis=-1)[:, :k]
    idx = np.take_along_axis(key_idx, order, axis=1)
    dur = np.take_along_axis(dur, order, axis=1)
    none = np.isinf(dur)
    return np.where(none, -1, idx), np.where(none, np.nan, dur)


# -- what a Dask worker runs (module-level functions: pickled by reference) ------------------------------------------
def table_task(
    graph_dir: str,
    sources: Sequence[Phantom | None],
    destinations: Sequence[Phantom | None],
    exclude: Sequence[str],
    model: Mapping[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """`table_block` on this worker's engine."""
    return table_block(worker_engine(graph_dir), sources, destinations, exclude, model)


def access_task(
    graph_dir: str,
    sources: Sequence[Phantom],
    destinations: Sequence[Phantom],
    exclude: Sequence[str],
    spec: AccessSpec,
    weights: np.ndarray | None,
    model: Mapping[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`access_block` of `table_block` on this worker's engine."""
    durations, _ = table_block(worker_engine(graph_dir), sources, destinations, exclude, model)
    return access_block(durations, spec, weights)

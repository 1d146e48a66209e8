"""A Dask client for the matrix: an existing one, a scheduler's address, or a local cluster started here.

A local cluster runs `workers` single-threaded workers as threads of this process (`processes=False`): the kernels
release the GIL, each thread keeps its own search state, and the workers answer with the caller's engine
(`blocks.shared_engine`), so starting one costs no process, no import and no graph load (those were most of a
2000 x 2000 matrix's time). No dashboard. Every worker of another cluster must be able to read the graph directory at
the same path: on one machine it is; on a cluster, mount it on a shared volume or copy it to each node at that path.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from app.install import install_extra


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ImportError(f"Dask is not installed: {install_extra('dask')}") from None
    return distributed


@contextmanager
def client_for(scheduler: Any, workers: int = 2) -> Iterator[Any]:
    """A `distributed.Client` for `scheduler`: a Client as it is, `"tcp://HOST:PORT"` connected (and closed after),
    `"local"` or None a local cluster of `workers` threads in this process (shut down after)."""
    distributed = _distributed()
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    if isinstance(scheduler, str) and scheduler not in ("local", ""):
        with distributed.Client(scheduler, set_as_default=False) as client:
            yield client
        return
    if workers < 1:
        raise ValueError("workers must be at least 1")
    with (
        distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
            silence_logs=40,  # logging.ERROR: the matrix reports its own progress and failures
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client

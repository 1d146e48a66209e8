"""A Dask client for the matrix: an existing one, a scheduler's address, or a local cluster started here.

Local clusters run `workers` processes of one thread each (the kernels hold no GIL, but one search state per process
keeps memory flat), no dashboard. Every worker must be able to read the graph directory at the same path: on one
machine it is; on a cluster, mount it on a shared volume or copy it to each node at that path.
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
    `"local"` or None a local cluster of `workers` processes (shut down after)."""
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
            processes=True,
            dashboard_address=None,
            silence_logs=40,  # logging.ERROR: the matrix reports its own progress and failures
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client

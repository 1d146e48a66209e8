"""numba in one place: the decorator every kernel uses, and a note to the user when compilation starts.

Every kernel is `@kernel`: `numba.njit(cache=True, nogil=True)`, so each compiles once per machine (numba's on-disk
cache, beside the source in `__pycache__` or under `NUMBA_CACHE_DIR`) and releases the GIL while it runs.
A first run after an install or an upgrade compiles for a while; `announce_compilation` tells the user so the
moment the first kernel misses the cache (numba's `numba:compile` event fires on cache misses only), never on a
warm start.
"""

from __future__ import annotations

import glob
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numba as nb
from numba.core import event

_OPTIONS = {"cache": True, "nogil": True}


def kernel(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """`numba.njit(cache=True, nogil=True, **options)`, usable bare (`@kernel`) or with options."""
    if fn is not None:
        return nb.njit(**_OPTIONS)(fn)
    return nb.njit(**{**_OPTIONS, **options})


class _FirstCompile(event.Listener):
    """Calls `hook()` once, at the first kernel compilation (a cache miss) while registered."""

    def __init__(self, hook: Callable[[], None]) -> None:
        self.hook = hook
        self.fired = False
        self.started = 0.0
        self._lock = threading.Lock()

    def on_start(self, ev: event.Event) -> None:
        with self._lock:
            if self.fired:
                return
            self.fired = True
            self.started = time.perf_counter()
        self.hook()

    def on_end(self, ev: event.Event) -> None:
        pass


@contextmanager
def announce_compilation(say: Callable[[str], None], what: str, estimate_s: float) -> Iterator[_FirstCompile]:
    """Inside the block, say once that `what` compiles (with an estimate) if any kernel misses the cache.

    The listener is yielded: `.fired` tells afterwards whether anything compiled, `.started` when it began.
    """
    listener = _FirstCompile(
        lambda: say(
            f"compiling {what} (first run after an install or upgrade; about {estimate_s:.0f} s on 2 cores, "
            "then cached for every later start)"
        )
    )
    event.register("numba:compile", listener)
    try:
        yield listener
    finally:
        event.unregister("numba:compile", listener)


def cache_dirs(modules: list[Any]) -> list[str]:
    """Where numba caches the kernels of `modules`: `NUMBA_CACHE_DIR`, else each module's `__pycache__`."""
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root:
        return [root]
    return sorted({os.path.join(os.path.dirname(m.__file__), "__pycache__") for m in modules})


def remove_partial_files(dirs: list[str], since: float) -> int:
    """Delete numba's half-written cache files (`*.tmp.<uuid>`) newer than `since` (a process stopped mid-write)."""
    removed = 0
    for d in dirs:
        for path in glob.glob(os.path.join(d, "**", "*.tmp.*"), recursive=True):
            try:
                if os.stat(path).st_mtime >= since - 1.0:
                    os.unlink(path)
                    removed += 1
            except OSError:
                pass
    return removed

"""The search pool: long searches run at the lowest priority, so the event loop's short ones come first."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from app.api.service import SEARCH_NICE, search_pool


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread scheduling policies are Linux's")
def test_search_pool_threads_run_at_the_lowest_priority_and_the_caller_does_not() -> None:
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    pool = search_pool(2)
    try:
        nice = pool.submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())).result()
    finally:
        pool.shutdown()
    assert nice == SEARCH_NICE
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine


def test_the_request_time_limit_never_counts_compile_time() -> None:
    """A long job that spent most of its time waiting for a kernel to compile (a first start: the background warm-up
    holds numba's compiler) answers; one that searched that long answers 503 `Timeout`."""
    import asyncio
    import time
    from pathlib import Path

    from app.api.service import Service
    from app.engine.errors import Timeout
    from app.settings import Settings
    from floor.kernels import jit

    def compiled_then_searched() -> str:
        jit._COMPILE_CLOCK.enter()  # what a kernel's compile call marks, here for longer than the limit
        try:
            time.sleep(0.6)
        finally:
            jit._COMPILE_CLOCK.leave()
        time.sleep(0.05)
        return "answer"

    service = Service(Settings(graph_dir=Path("unused"), request_time_limit_s=0.2))
    service.pool = search_pool(1)
    try:
        assert asyncio.run(service.run_slow(compiled_then_searched)) == "answer"
        with pytest.raises(Timeout, match="time limit of 0.2 s"):
            asyncio.run(service.run_slow(lambda: time.sleep(0.6)))
    finally:
        service.pool.shutdown()


def test_a_thread_counts_its_own_compile_time_only() -> None:
    """`thread_compile_seconds` (what a search's `compile_ms` reports): the calling thread's time in kernels' compile
    calls, waiting in a kernel's first use for another thread's compile (numba's lock) included; another thread's
    compile while this one does something else is not counted."""
    import time

    import numba
    from numba.core.compiler_lock import global_compiler_lock

    from floor.kernels import jit

    def plus_one(x: int) -> int:
        return x + 1

    fn = jit._deferred(numba.njit(plus_one), [jit.I64(jit.I64)])
    jit._DEFERRED.remove(fn)  # not one of the project's kernels (`ready_all`)
    held, release = threading.Event(), threading.Event()

    def compiling_elsewhere() -> None:
        jit._COMPILE_CLOCK.enter()
        try:
            with global_compiler_lock:
                held.set()
                release.wait(10)
        finally:
            jit._COMPILE_CLOCK.leave()

    other = threading.Thread(target=compiling_elsewhere)
    other.start()
    assert held.wait(10)
    before = jit.thread_compile_seconds()
    time.sleep(0.3)  # the other thread compiles meanwhile: not this thread's time
    assert jit.thread_compile_seconds() - before < 0.05
    threading.Timer(0.5, release.set).start()
    assert fn(1) == 2  # its first use waits for the lock (0.5 s), then compiles
    other.join()
    assert jit.thread_compile_seconds() - before >= 0.5

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
    from preprocessing import jit

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

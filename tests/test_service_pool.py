"""The search pool: long searches run at idle priority, so the event loop's short ones always come first."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from app.api.service import search_pool


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread scheduling policies are Linux's")
def test_search_pool_threads_run_idle_and_the_caller_does_not() -> None:
    pool = search_pool(2)
    try:
        policy = pool.submit(lambda: os.sched_getscheduler(threading.get_native_id())).result()
    finally:
        pool.shutdown()
    assert policy == os.SCHED_IDLE
    assert os.sched_getscheduler(threading.get_native_id()) != os.SCHED_IDLE

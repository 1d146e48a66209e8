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

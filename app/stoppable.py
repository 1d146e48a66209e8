"""Work that a signal stops at once: the work runs on a thread, the main thread only waits for it or for a signal.

Python runs signal handlers on the main thread between bytecodes, and an exception a handler raises inside a C
callback (llvmlite calls back into Python while numba compiles) is swallowed, or leaves the compiler broken. So the
main thread does nothing but wait here: SIGINT or SIGTERM calls `on_stop` (which removes what the work left half
made), prints one line and ends the process at once with the status `status(signum)`.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def run_until_signal(
    fn: Callable[[], T],
    on_stop: Callable[[], None] | None = None,
    status: Callable[[int], int] = lambda signum: 128 + signum,
    message: str = "stopped",
) -> T:
    """`fn()` on a worker thread, returning its result or raising its exception; a signal ends the process.

    Outside the main thread (where no signal arrives) `fn` simply runs.
    """
    if threading.current_thread() is not threading.main_thread():
        return fn()
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            box["error"] = exc

    stop: list[int] = []
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.getsignal(s) for s in signals}
    for s in signals:
        if previous[s] != signal.SIG_IGN:  # a background job started with Ctrl-C ignored keeps ignoring it
            signal.signal(s, lambda signum, frame: stop.append(signum))
    try:
        worker = threading.Thread(target=target, name="starroute-work", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
            if stop:
                if on_stop is not None:
                    on_stop()
                how = "terminated" if stop[0] == signal.SIGTERM else "interrupted"
                print(f"starroute: {how}; {message}", file=sys.stderr, flush=True)
                sys.stdout.flush()
                os._exit(status(stop[0]))
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]

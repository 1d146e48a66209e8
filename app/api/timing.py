"""The `Server-Timing` header: a request's own work (`engine`) shown apart from the HTTP stack around it.

`engine;dur=<ms>` is the time from a handler's start (the OSRM front door's `osrm.handle`, or a native endpoint's
first line, after FastAPI parsed its parameters) to its answer's body being ready: parsing, snapping, searching and
encoding JSON. What a client waits for beyond it is the HTTP floor (uvicorn, the ASGI layers, the socket).
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.types import Scope

HEADER = b"server-timing"
_START = "starroute.engine_t0"  # the scope key a native endpoint's start is kept under


def value(seconds: float) -> bytes:
    """`engine;dur=<milliseconds>` (three decimals: microseconds)."""
    return b"engine;dur=%.3f" % (seconds * 1e3)


def start(request: Request) -> None:
    """Mark a native endpoint's start; the front door adds the header when its answer starts (`elapsed`)."""
    request.scope[_START] = time.perf_counter()


def elapsed(scope: Scope) -> float | None:
    """Seconds since `start` marked this request, None when no endpoint marked it (health, docs, static, ...)."""
    t0 = scope.get(_START)
    return None if t0 is None else time.perf_counter() - t0

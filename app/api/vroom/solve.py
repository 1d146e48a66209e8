"""VROOM run on a problem (`problem.with_matrix`'s input): `pyvroom`'s own JSON reader, its solver, its answer.

`solve` is a module-level function of plain data, so that a search process can run it (`Service.run_in_process`
sends it by name): VROOM holds the GIL while it solves (half a second for 50 jobs), which would stall the worker's
event loop in a thread. `vroom` (and pandas under it) is imported on first use, not at every server start.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import orjson

_PRINT = threading.Lock()  # pyvroom writes its answer through Python's sys.stdout (redirected while it does)


@dataclass(frozen=True)
class Job:
    """What `solve` needs: VROOM's input (JSON), its exploration level (0-5), threads, time limit (s), and whether
    the input has distances (so the answer gives them)."""

    body: bytes
    exploration: int
    threads: int
    timeout_s: float
    distances: bool


def solve(job: Job) -> tuple[int, Any]:
    """(0, VROOM's answer) or (VROOM's error code, its message): 2 for input VROOM refuses, 3 routing, 1 internal.
    VROOM stops at `timeout_s` with the best solution it has."""
    import vroom
    from vroom import _vroom

    t0 = time.perf_counter()
    problem = vroom.Input()
    try:
        problem._from_json(job.body.decode(), False)
    except _vroom.VroomInputException as exc:
        return 2, str(exc)
    except _vroom.VroomRoutingException as exc:
        return 3, str(exc)
    except (_vroom.VroomInternalException, RuntimeError, ValueError) as exc:  # rapidjson, pybind11 conversions
        return 2, str(exc) or "Invalid input."
    loaded = time.perf_counter()
    try:
        solution = problem.solve(
            exploration_level=job.exploration, nb_threads=job.threads, timeout=timedelta(seconds=job.timeout_s)
        )
    except _vroom.VroomInputException as exc:
        return 2, str(exc)
    except _vroom.VroomRoutingException as exc:
        return 3, str(exc)
    except _vroom.VroomInternalException as exc:
        return 1, str(exc)
    solution._distances = job.distances
    with _PRINT:
        answer = solution.to_dict()
    times = answer.get("summary", {}).get("computing_times")
    if isinstance(times, dict):  # VROOM's own clock for its parts; the loading it did is ours here
        times["loading"] = round((loaded - t0) * 1000)
    return 0, answer


def dumps(body: dict[str, Any]) -> bytes | None:
    """VROOM's input as JSON bytes; None when JSON cannot carry it to VROOM (an integer past 64 bits, a string
    that is no Unicode: a lone surrogate)."""
    try:
        return orjson.dumps(body)
    except orjson.JSONEncodeError:
        return None

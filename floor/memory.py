"""The C heap's free pages back to the system between the steps of a long job (`trim_heap`)."""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any


@cache
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


def trim_heap() -> bool:
    """Hand the free pages of every malloc arena back to the system (glibc's `malloc_trim`; False elsewhere).

    numpy takes arrays under glibc's mmap threshold (which grows to 32 MiB as large arrays are freed) from the heap,
    and freed heap pages stay resident; a later stage on another thread (its own arena) cannot reuse them, so a
    stage's spent temporaries would stay in the process's peak beside the next stage's."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True

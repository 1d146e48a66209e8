"""Outputs that appear whole or not at all: parent folders made (and taken back), temporary paths tracked, so that a
run stopped at any moment (an error, Ctrl-C, SIGTERM) leaves nothing behind.

A stop arrives on the main thread while the work runs on another (`app.stoppable`): `abandon()` then removes every
tracked path under the lock that `committing()` holds while an output is made visible, so an output is either
renamed into place before the stop or never.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

_LOCK = threading.RLock()
_TRACKED: list[Path] = []  # temporary paths and made folders of outputs in progress, oldest first
_ABANDONED = False


class Abandoned(Exception):
    """The run was stopped: no new output may start or become visible."""


def track(path: Path) -> Path:
    """Remember `path` (a temporary file or directory, or a folder just made) until `untrack`."""
    with _LOCK:
        if _ABANDONED:
            raise Abandoned(f"stopped; {path} not made")
        _TRACKED.append(path)
    return path


def untrack(path: Path) -> None:
    with _LOCK:
        if path in _TRACKED:
            _TRACKED.remove(path)


def make_parents(path: Path) -> list[Path]:
    """`mkdir -p path`, tracking the folders it made; returns them, outermost first, for `remove_created`."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    made = list(reversed(missing))
    with _LOCK:
        if _ABANDONED:
            raise Abandoned(f"stopped; {path} not made")
        path.mkdir(parents=True, exist_ok=True)
        _TRACKED.extend(made)
    return made


def remove_created(created: list[Path]) -> None:
    """Remove folders `make_parents` made, innermost first, as long as they are empty."""
    for d in reversed(created):
        untrack(d)
        try:
            d.rmdir()
        except OSError:
            break


def keep_created(created: list[Path]) -> None:
    """The output these folders hold is complete: stop tracking them."""
    for d in created:
        untrack(d)


@contextmanager
def committing() -> Iterator[None]:
    """Hold while an output is made visible (renamed into place); refuses once the run was abandoned."""
    with _LOCK:
        if _ABANDONED:
            raise Abandoned("stopped before the output was written")
        yield


def abandon() -> None:
    """Stop for good: remove every tracked path (newest first) and refuse new ones. Safe from any thread."""
    global _ABANDONED
    with _LOCK:
        _ABANDONED = True
        for p in reversed(_TRACKED):
            try:
                if p.is_dir() and not p.is_symlink():
                    if any(p.iterdir()) and p.name.startswith("."):
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        p.rmdir()
                elif p.exists():
                    p.unlink()
            except OSError:
                pass
        _TRACKED.clear()


def umask() -> int:
    """The process umask (read without changing it for longer than a call)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


WRITE_CHUNK = 1 << 20  # bytes per write() of an array's data


def save_array(path: Path, arr: np.ndarray) -> None:
    """`np.save(path, arr)` (C order, no pickles), its data written 1 MiB at a time: np.save hands the whole array to
    one write(), which on this project's VMs stalled for a second or more on ext4 now and then (112 MB: 0.03 s in
    1 MiB writes, 1.0-1.4 s in one or in 2-32 MiB writes; tmpfs never stalled); the file is the same bytes."""
    arr = np.ascontiguousarray(arr)
    header = np.lib.format.header_data_from_array_1_0(arr)
    with open(path, "wb") as fh:
        try:
            np.lib.format.write_array_header_1_0(fh, header)
        except ValueError:  # a header over 64 KiB (refused before anything is written): format 2.0, as np.save
            np.lib.format.write_array_header_2_0(fh, header)
        data = memoryview(arr.reshape(-1).view(np.uint8)) if arr.size else memoryview(b"")  # type: ignore[arg-type]
        for i in range(0, len(data), WRITE_CHUNK):
            fh.write(data[i : i + WRITE_CHUNK])


def release_pages(arr: np.ndarray) -> bool:
    """Take a memory-mapped array's pages out of this process's resident set (`madvise(MADV_DONTNEED)` on its file
    mapping): they stay in the page cache and come back on the next read, as a minor fault. For pages the process
    read once and will not need (a checksum's pass, a supervisor's warm-up before it forks workers that answer
    everything): without it they count in the process's RSS and PSS as long as it lives. False (and nothing done)
    for an array that is not a read-only file mapping."""
    import mmap

    base: object = arr
    while isinstance(base, np.ndarray):
        if isinstance(base, np.memmap) and isinstance(getattr(base, "_mmap", None), mmap.mmap):
            base = base._mmap  # type: ignore[attr-defined]
            break
        base = base.base
    if not isinstance(base, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
        return False
    try:
        base.madvise(mmap.MADV_DONTNEED)
    except (OSError, ValueError):  # closed, or a kernel without it: the pages stay, nothing is lost
        return False
    return True

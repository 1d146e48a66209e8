"""What guards a graph directory's files once written: a checksum per array (xxh3-64, ~10 GB/s: a 3 M-node graph
checks in well under a second), the state of each mapped file (to notice one truncated or rewritten under a
running server before a page of it is touched), stale temporaries of killed runs, a full disk said in one sentence,
and a directory swapped for another in one rename.

`floor.format` (the format's owner: its `arrays`, `graph` and `metrics` modules) is the only caller; nothing here
knows the format.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np
import xxhash

DIGEST = "xxh3_64"  # the manifest key of an array's checksum (its hex digest)


def digest(arr: np.ndarray) -> str:
    """xxh3-64 of an array's bytes in C order (a memory-mapped array is read once, page by page)."""
    a = np.ascontiguousarray(arr)
    return xxhash.xxh3_64_hexdigest(memoryview(a.reshape(-1).view(np.uint8)) if a.size else b"")  # type: ignore[arg-type]


class FileState(NamedTuple):
    """A file as it was when mapped: a later change of size or modification time with the same inode means its
    bytes changed under the mapping (a file replaced by another, a new inode, leaves the mapping intact)."""

    path: str
    size: int
    inode: int
    mtime_ns: int


def file_state(path: str | os.PathLike[str]) -> FileState:
    st = os.stat(path)
    return FileState(str(path), st.st_size, st.st_ino, st.st_mtime_ns)


def changed(states: Iterable[FileState]) -> list[str]:
    """One phrase per mapped file whose bytes changed since it was mapped (truncated, rewritten in place): reading
    a truncated mapping past the file's end kills the process (SIGBUS), so this is asked before touching them."""
    out = []
    for s in states:
        try:
            st = os.stat(s.path)
        except OSError:
            continue  # removed: the mapping keeps the old inode alive
        if st.st_ino != s.inode:
            continue  # replaced by another file (a new graph renamed into place): the mapping is intact
        if st.st_size < s.size:
            out.append(f"{s.path} was truncated to {st.st_size:,} bytes (mapped: {s.size:,})")
        elif st.st_size != s.size or st.st_mtime_ns != s.mtime_ns:
            out.append(f"{s.path} was rewritten in place")
    return out


_OWNER = re.compile(r"-(\d+)-")


def sweep_stale(parent: Path, prefixes: Iterable[str]) -> list[Path]:
    """Remove the temporary folders (names starting with one of `prefixes`) that runs killed before they could
    clean up left in `parent`: those whose owner (the pid in the name, `<prefix><pid>-<random>`) is gone, and any
    without a pid (written before names carried one). Returns what was removed."""
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for p in entries:
        rest = next((p.name[len(x) :] for x in prefixes if p.name.startswith(x)), None)
        if rest is None or not p.is_dir():
            continue
        owner = _OWNER.match("-" + rest)
        if owner is not None and owner.group(1) != "0" and _alive(int(owner.group(1))):
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def no_space(exc: BaseException) -> bool:
    """Whether `exc` is the file system being full (or the user's quota used up)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def space_sentence(where: Path, arrays: Mapping[str, np.ndarray], what: str) -> str:
    """One sentence for a write the disk could not hold: where, how much it needs and how much is free."""
    need = sum(int(np.asarray(a).nbytes) for a in arrays.values())
    try:
        free = shutil.disk_usage(where).free
    except OSError:
        free = 0
    return (
        f"no space left on the device of {where} to write {what}: it needs about {need / 1e6:,.1f} MB "
        f"and {free / 1e6:,.1f} MB are free; nothing was left behind"
    )


_RENAME_EXCHANGE = 2  # linux/fs.h


def exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one rename (Linux renameat2 RENAME_EXCHANGE): a reader of either path sees the old
    or the new one, never none. False where the system or file system cannot (the caller does it in two steps)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))

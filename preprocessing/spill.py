"""Finished arrays out of the resident set while the search stages run (issue 45): written to a scratch folder
beside the output and mapped back read-only, so their pages are the page cache's, not the process's, until the
graph is written.

The road graph's arrays (geometry, arcs, nodes, names: a third of the arrays at 1 M nodes) are done once the turn
stage has built the search graph, and nothing reads them again before `save_graph` copies them into the graph
directory; the contraction's arrays are done before the CCH order and the landmarks when those run after it, and
theirs, built beside the contraction, before its peak (its finalize comes last). The
folder (`.NAME.spill-PID-*`) is removed when the run ends, however it ends (on a signal with the other tracked
temporaries, `floor.format.files.abandon`); one a killed run left is removed by the next run beside it. Where it
cannot be written (no parent folder yet, a full disk), the arrays stay in memory: the same graph, a higher peak.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from types import TracebackType

import numpy as np

from floor.format.files import save_array, track, untrack
from floor.format.integrity import sweep_stale

MIN_BYTES = 1 << 16  # smaller arrays stay: a file each is not worth it


class Spill:
    """A scratch folder for arrays taken out of memory; a context manager that removes it at its end."""

    def __init__(self, out: Path) -> None:
        self.dir: Path | None = None
        self.bytes = 0
        self._lock = threading.Lock()  # the stages beside the contraction spill from their own thread
        parent = out.parent
        if not parent.is_dir():
            return
        prefix = f".{out.name}.spill-"
        sweep_stale(parent, (prefix,))
        try:
            self.dir = track(Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent)))
        except OSError:
            self.dir = None

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.dir is not None:
            untrack(self.dir)
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def out(self, arrays: MutableMapping[str, np.ndarray], names: Iterable[str]) -> int:
        """Replace each of `names` in `arrays` by a read-only map of its copy on disk (the same dtype, shape and
        bytes); returns the bytes taken out of memory. An array that cannot be written stays as it was."""
        if self.dir is None:
            return 0
        done = 0
        for name in names:
            a = arrays[name]
            if isinstance(a, np.memmap) or a.nbytes < MIN_BYTES:
                continue
            path = self.dir / f"{name}.npy"
            try:
                save_array(path, a)
            except OSError:
                path.unlink(missing_ok=True)
                continue
            arrays[name] = np.load(path, mmap_mode="r")
            done += a.nbytes
        with self._lock:
            self.bytes += done
        return done

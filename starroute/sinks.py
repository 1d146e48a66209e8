"""Where matrix blocks go as they finish: dense arrays in memory, a `.npz` on disk, or long-form Parquet.

The file sinks hold at most one block in memory: `.npz` rows are written in place into raw files beside the output
(plain writes, no mapping) and zipped into the archive at the end; Parquet gets one row group per block. Both write
to `OUTPUT.partial` and rename only when every block is in, so a failed or stopped run never leaves an output that
looks complete.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from starroute.runner import Block

CHUNK = 16 << 20  # bytes copied at a time into the .npz


class Sink(Protocol):
    def write(self, block: Block, durations: np.ndarray, distances: np.ndarray) -> None: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...


class DenseSink:
    """Both matrices in memory (the Python API's `table`)."""

    def __init__(self, n: int, m: int) -> None:
        self.durations = np.full((n, m), np.nan)
        self.distances = np.full((n, m), np.nan)

    def write(self, block: Block, durations: np.ndarray, distances: np.ndarray) -> None:
        self.durations[block.i0 : block.i1, block.j0 : block.j1] = durations
        self.distances[block.i0 : block.i1, block.j0 : block.j1] = distances

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


def _partial(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def _raw(path: Path, name: str) -> Path:
    return path.with_name(f".{path.name}.{name}.raw")


class NpzSink:
    """`durations_s` and `distances_m` float64 [N, M] (NaN where unreachable) and the points' `source_id` and
    `destination_id`, in an uncompressed `.npz` (`numpy.load` reads it; `mmap_mode` does not apply to archives)."""

    def __init__(self, path: Path, n: int, m: int, source_ids: np.ndarray, destination_ids: np.ndarray) -> None:
        self.path, self.n, self.m = Path(path), n, m
        self.ids = {"source_id": np.asarray(source_ids), "destination_id": np.asarray(destination_ids)}
        self.raw = {
            name: self.path.with_name(f".{self.path.name}.{name}.raw") for name in ("durations_s", "distances_m")
        }
        self.fds: dict[str, int] = {}
        for name, p in self.raw.items():
            self.fds[name] = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
            os.ftruncate(self.fds[name], n * m * 8)  # sparse until written; unwritten cells are never read

    def write(self, block: Block, durations: np.ndarray, distances: np.ndarray) -> None:
        for name, arr in (("durations_s", durations), ("distances_m", distances)):
            fd = self.fds[name]
            a = np.ascontiguousarray(arr, dtype="<f8")
            if block.j0 == 0 and block.j1 == self.m:  # whole rows: one write
                os.pwrite(fd, a.tobytes(), block.i0 * self.m * 8)
                continue
            for r in range(a.shape[0]):
                os.pwrite(fd, a[r].tobytes(), ((block.i0 + r) * self.m + block.j0) * 8)

    def close(self) -> None:
        out = _partial(self.path)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            for name, fd in self.fds.items():
                with z.open(name + ".npy", "w", force_zip64=True) as f:
                    header = {"descr": "<f8", "fortran_order": False, "shape": (self.n, self.m)}
                    np.lib.format.write_array_header_2_0(f, header)
                    size, off = self.n * self.m * 8, 0
                    while off < size:
                        data = os.pread(fd, min(CHUNK, size - off), off)
                        f.write(data)
                        off += len(data)
            for name, arr in self.ids.items():
                with z.open(name + ".npy", "w", force_zip64=True) as f:
                    np.lib.format.write_array(f, arr, allow_pickle=False)
        self._drop_raw()
        os.replace(out, self.path)

    def abort(self) -> None:
        self._drop_raw()
        _partial(self.path).unlink(missing_ok=True)

    def _drop_raw(self) -> None:
        for name, fd in list(self.fds.items()):
            os.close(fd)
            self.raw[name].unlink(missing_ok=True)
        self.fds.clear()


class ParquetSink:
    """Long form `source, destination, duration_s, distance_m` (the points' ids; null where unreachable), one row
    group per block, in the order blocks finish."""

    def __init__(self, path: Path, source_ids: Any, destination_ids: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.pa = pa
        self.path = Path(path)
        self.src = pa.array(source_ids)
        self.dst = pa.array(destination_ids)
        schema = pa.schema(
            [
                ("source", self.src.type),
                ("destination", self.dst.type),
                ("duration_s", pa.float64()),
                ("distance_m", pa.float64()),
            ]
        )
        self.writer = pq.ParquetWriter(_partial(self.path), schema)

    def write(self, block: Block, durations: np.ndarray, distances: np.ndarray) -> None:
        pa = self.pa
        S, T = durations.shape
        rows = pa.array(np.repeat(np.arange(block.i0, block.i1), T))
        cols = pa.array(np.tile(np.arange(block.j0, block.j1), S))
        table = pa.table(
            {
                "source": self.src.take(rows),
                "destination": self.dst.take(cols),
                "duration_s": pa.array(durations.ravel(), from_pandas=True),
                "distance_m": pa.array(distances.ravel(), from_pandas=True),
            }
        )
        self.writer.write_table(table, row_group_size=max(S * T, 1))

    def close(self) -> None:
        self.writer.close()
        os.replace(_partial(self.path), self.path)

    def abort(self) -> None:
        try:
            self.writer.close()
        finally:
            _partial(self.path).unlink(missing_ok=True)


def open_sink(path: Path, n: int, m: int, source_ids: Any, destination_ids: Any) -> Sink:
    """The sink for `path`'s suffix (`.npz` or `.parquet`); ValueError for any other."""
    suffix = Path(path).suffix.lower()
    if suffix == ".npz":
        return NpzSink(path, n, m, np.asarray(source_ids), np.asarray(destination_ids))
    if suffix in (".parquet", ".pq"):
        return ParquetSink(path, source_ids, destination_ids)
    raise ValueError(f"the output must end in .parquet or .npz, not {Path(path).name!r}")


def remove_partial(path: Path) -> None:
    """Remove what an interrupted run left beside `path` (the `.partial` output, the `.npz` raw files)."""
    path = Path(path)
    _partial(path).unlink(missing_ok=True)
    for name in ("durations_s", "distances_m"):
        _raw(path, name).unlink(missing_ok=True)

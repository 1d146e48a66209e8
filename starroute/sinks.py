"""Where matrix blocks go as they finish: dense arrays in memory, a `.npz` on disk, or long-form Parquet.

The file sinks hold at most one block in memory: `.npz` rows are written in place into the archive itself (its two
big members stored uncompressed at offsets fixed up front, plain writes, no mapping; their CRCs and the small members
added at the end); Parquet gets one row group per block. Both write to `OUTPUT.partial` and rename only when every
block is in, so a failed or stopped run never leaves an output that looks complete.
"""

from __future__ import annotations

import io
import os
import time
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from starroute.runner import Block

CHUNK = 16 << 20  # bytes read at a time for a member's CRC


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
    `destination_id`, in an uncompressed `.npz` (`numpy.load` reads it; `mmap_mode` does not apply to archives).

    The two matrices are the archive's first members, stored, with zip64 local headers of a fixed size: each block's
    rows are written straight to their place in `OUTPUT.partial`; `close` reads the members back for their CRCs
    (both at once: `zlib.crc32` and `os.pread` release the GIL), rewrites their headers and lets `zipfile` add the id
    arrays and the central directory. So the matrix is written once, not into raw files and then copied."""

    NAMES = ("durations_s", "distances_m")

    def __init__(self, path: Path, n: int, m: int, source_ids: np.ndarray, destination_ids: np.ndarray) -> None:
        self.path, self.n, self.m = Path(path), n, m
        self.ids = {"source_id": np.asarray(source_ids), "destination_id": np.asarray(destination_ids)}
        buf = io.BytesIO()
        np.lib.format.write_array_header_2_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (n, m)})
        self.npy_header = buf.getvalue()
        when = time.localtime(time.time())[:6]
        self.infos: dict[str, zipfile.ZipInfo] = {}
        self.data_at: dict[str, int] = {}  # offset of each matrix's first cell in the archive
        at = 0
        for name in self.NAMES:
            info = zipfile.ZipInfo(name + ".npy", date_time=when)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o600 << 16
            info.file_size = info.compress_size = len(self.npy_header) + n * m * 8
            info.CRC = 0  # until `close` knows it (the header's size does not depend on it)
            info.header_offset = at
            at += len(info.FileHeader(zip64=True))
            self.data_at[name] = at + len(self.npy_header)
            at += info.file_size
            self.infos[name] = info
        self.end = at
        self.fd = os.open(_partial(self.path), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.ftruncate(self.fd, self.end)  # sparse until written; unwritten cells are never read
        for name in self.NAMES:
            os.pwrite(self.fd, self.npy_header, self.data_at[name] - len(self.npy_header))

    def write(self, block: Block, durations: np.ndarray, distances: np.ndarray) -> None:
        for name, arr in zip(self.NAMES, (durations, distances), strict=True):
            a = np.ascontiguousarray(arr, dtype="<f8")
            base = self.data_at[name]
            if block.j0 == 0 and block.j1 == self.m:  # whole rows: one write
                os.pwrite(self.fd, a.tobytes(), base + block.i0 * self.m * 8)
                continue
            for r in range(a.shape[0]):
                os.pwrite(self.fd, a[r].tobytes(), base + ((block.i0 + r) * self.m + block.j0) * 8)

    def _crc(self, info: zipfile.ZipInfo) -> int:
        crc, off = 0, info.header_offset + len(info.FileHeader(zip64=True))
        left = info.file_size
        while left > 0:
            data = os.pread(self.fd, min(CHUNK, left), off)
            if not data:
                raise OSError(f"{_partial(self.path)} is shorter than its members")
            crc = zlib.crc32(data, crc)
            off += len(data)
            left -= len(data)
        return crc

    def close(self) -> None:
        infos = [self.infos[name] for name in self.NAMES]
        with ThreadPoolExecutor(len(infos)) as pool:
            crcs = list(pool.map(self._crc, infos))
        for info, crc in zip(infos, crcs, strict=True):
            info.CRC = crc
            os.pwrite(self.fd, info.FileHeader(zip64=True), info.header_offset)
        with os.fdopen(self.fd, "r+b") as f:
            self.fd = -1
            f.seek(self.end)
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
                for info in infos:  # the members already in place, for the central directory
                    z.filelist.append(info)
                    z.NameToInfo[info.filename] = info
                for name, arr in self.ids.items():
                    with z.open(name + ".npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, arr, allow_pickle=False)
        os.replace(_partial(self.path), self.path)

    def abort(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        _partial(self.path).unlink(missing_ok=True)


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
    """Remove what an interrupted run left beside `path` (the `.partial` output; the raw files earlier versions wrote
    beside an `.npz`)."""
    path = Path(path)
    _partial(path).unlink(missing_ok=True)
    for name in ("durations_s", "distances_m"):
        _raw(path, name).unlink(missing_ok=True)

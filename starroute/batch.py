"""`starroute matrix`: a CSV of points (and another of destinations) -> an N x M duration and distance matrix,
computed in blocks on Dask and written block by block to Parquet (long form) or `.npz` (dense).

The CSVs have a header with `lon` and `lat` columns and an optional `id` (the Parquet `source` / `destination`
values; the row number, from 0, without it). Points are snapped here, together (as one table request), then the
blocks go to the workers.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InvalidValue
from .runner import Outcome


@dataclass
class PointsFile:
    """The points of one CSV: (N, 2) lon/lat and their ids (a pyarrow array)."""

    lonlat: np.ndarray
    ids: Any


def read_points(path: Path) -> PointsFile:
    """`lon`, `lat` and optional `id` columns of a CSV with a header; `InvalidValue` saying what is wrong."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    try:
        t = pacsv.read_csv(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise InvalidValue(f"{path}: {str(exc).splitlines()[0]}") from None
    names = {n.strip().lower(): n for n in t.column_names}
    if "lon" not in names or "lat" not in names:
        raise InvalidValue(f"{path}: the header needs lon and lat columns (has {', '.join(t.column_names)})")
    try:
        lonlat = np.column_stack(
            [t[names[c]].to_numpy(zero_copy_only=False).astype(np.float64) for c in ("lon", "lat")]
        )
    except (ValueError, TypeError, pa.ArrowInvalid):
        raise InvalidValue(f"{path}: lon and lat must be numbers") from None
    ids = t[names["id"]].combine_chunks() if "id" in names else pa.array(np.arange(t.num_rows, dtype=np.int64))
    if t.num_rows == 0:
        raise InvalidValue(f"{path}: no points")
    return PointsFile(lonlat, ids)


def _ids_for_npz(ids: Any) -> np.ndarray:
    arr = ids.to_numpy(zero_copy_only=False)
    return arr.astype(str) if arr.dtype == object else arr


def matrix(
    graph_dir: Path,
    sources_csv: Path,
    output: Path,
    destinations_csv: Path | None = None,
    *,
    workers: int = 2,
    scheduler: str | None = None,
    block: tuple[int, int] | None = None,
    exclude: str | None = None,
    quiet: bool = False,
) -> Outcome:
    """Compute and write the matrix; returns what the run did (cells, seconds, retried blocks)."""
    from . import load
    from .matrix import BLOCK, run_table
    from .progress import Bar
    from .sinks import open_sink

    suffix = output.suffix.lower()
    if suffix not in (".npz", ".parquet", ".pq"):
        raise InvalidValue(f"the output must end in .parquet or .npz, not {output.name!r}")
    src = read_points(sources_csv)
    dst = read_points(destinations_csv) if destinations_csv is not None else None
    graph = load(graph_dir)
    sp, dp, ex = graph._snap_table(src.lonlat, None if dst is None else dst.lonlat, exclude)
    d_ids = (dst or src).ids
    if suffix == ".npz":
        sink = open_sink(output, len(sp), len(dp), _ids_for_npz(src.ids), _ids_for_npz(d_ids))
    else:
        sink = open_sink(output, len(sp), len(dp), src.ids, d_ids)
    where = scheduler or f"a local Dask cluster of {workers} workers"
    if not quiet:
        print(f"starroute: {len(sp):,} x {len(dp):,} cells on {where}", file=sys.stderr)

    def run(bar: Any) -> Outcome:
        return run_table(
            graph.engine, graph_dir, sp, dp, sink, ex, block=block or BLOCK, scheduler=scheduler or "local",
            workers=workers, progress=bar,
        )  # fmt: skip

    if quiet:
        out = run(None)
    else:
        with Bar(len(sp) * len(dp)) as bar:
            out = run(bar)
    if not quiet:
        retried = f"; {len(out.retried)} block(s) needed a retry" if out.retried else ""
        print(
            f"starroute: wrote {output} ({out.cells:,} cells, {out.blocks} blocks) in {out.seconds:.1f} s: "
            f"{out.cells_per_s:,.0f} cells/s{retried}",
            file=sys.stderr,
        )
    return out

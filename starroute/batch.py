"""`starroute matrix`: a CSV of points (and another of destinations) -> an N x M duration and distance matrix,
computed in blocks on Dask and written block by block to Parquet (long form) or `.npz` (dense).

The CSVs have a header with `lon` and `lat` columns and an optional `id` (the Parquet `source` / `destination`
values; the row number, from 0, without it). Points are snapped here, together (as one table request), then the
blocks go to the workers. A point with no road within the snapping radius does not stop the job: it is reported
(file, line, id, how far the nearest road is, whether lon and lat look swapped) and its cells are null.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from starroute.errors import InvalidValue
from starroute.runner import Outcome


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
        lonlat = np.column_stack([_floats(t[names[c]]) for c in ("lon", "lat")])
    except (ValueError, TypeError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InvalidValue(f"{path}: lon and lat must be numbers") from None
    ids = t[names["id"]].combine_chunks() if "id" in names else pa.array(np.arange(t.num_rows, dtype=np.int64))
    if t.num_rows == 0:
        raise InvalidValue(f"{path}: no points")
    bad = ~(np.isfinite(lonlat).all(axis=1) & (np.abs(lonlat[:, 0]) <= 180.0) & (np.abs(lonlat[:, 1]) <= 90.0))
    if bad.any():
        i = int(np.argmax(bad))
        raise InvalidValue(f"{path}: line {line_of(i)}: ({lonlat[i, 0]}, {lonlat[i, 1]}) is no lon, lat coordinate")
    return PointsFile(lonlat, ids)


def _floats(column: Any) -> np.ndarray:
    """A CSV column as float64, NaN where a cell is empty, read from its buffer: pyarrow's `to_numpy` imports pandas
    (0.3 s of a 2000 x 2000 matrix's 4 s)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    a = column.combine_chunks().cast(pa.float64())
    if a.null_count:
        a = pc.fill_null(a, float("nan"))
    return _values(a, np.float64)


def _values(a: Any, dtype: type) -> np.ndarray:
    """A copy of the values of an Arrow array of 8-byte numbers without nulls, from its data buffer."""
    return np.frombuffer(a.buffers()[1], dtype=dtype, count=len(a), offset=a.offset * 8).copy()


def line_of(row: int) -> int:
    """The CSV line of a data row (from 0): the header is line 1."""
    return row + 2


SHOWN = 20  # points left out listed one by one; the rest counted


def left_out_lines(why: dict[int, str], files: list[tuple[Path, PointsFile]], radius_m: float) -> list[str]:
    """The report of the points left out unsnapped: `why` by their index among the points of `files` in turn
    (sources, then destinations)."""
    lines = [
        f"starroute: {len(why):,} point(s) have no road within {radius_m:g} m: left out, their cells are null "
        "(--radius METRES looks farther)"
    ]
    for k, (i, reason) in enumerate(sorted(why.items())):
        if k == SHOWN:
            lines.append(f"  ... and {len(why) - SHOWN:,} more")
            break
        for path, pts in files:
            if i < len(pts.lonlat):
                lines.append(f"  {path} line {line_of(i)} (id {pts.ids[i].as_py()}): {reason}")
                break
            i -= len(pts.lonlat)
    return lines


def _ids_for_npz(ids: Any) -> np.ndarray:
    import pyarrow as pa

    if pa.types.is_int64(ids.type) and not ids.null_count:  # numbered points: the buffer (`to_numpy` imports pandas)
        return _values(ids, np.int64)
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
    radius_m: float | None = None,
) -> Outcome:
    """Compute and write the matrix; returns what the run did (cells, seconds, retried blocks). Points farther
    than `radius_m` (default: the native API's 1000 m) from every road are reported on stderr and left out (null
    cells)."""
    from starroute import load
    from starroute.graph import SNAP_RADIUS_M
    from starroute.matrix import BLOCK, run_table
    from starroute.progress import Bar
    from starroute.sinks import open_sink

    suffix = output.suffix.lower()
    if suffix not in (".npz", ".parquet", ".pq"):
        raise InvalidValue(f"the output must end in .parquet or .npz, not {output.name!r}")
    radius = SNAP_RADIUS_M if radius_m is None else radius_m
    if not radius > 0:
        raise InvalidValue("the snapping radius must be > 0 metres")
    src = read_points(sources_csv)
    dst = read_points(destinations_csv) if destinations_csv is not None else None
    graph = load(graph_dir)
    req = graph._table_request(src.lonlat, None if dst is None else dst.lonlat, exclude, radius_m=radius)
    sp, dp, exclude_set, why = graph.engine.resolve_table_each(req)
    ex = tuple(sorted(exclude_set.classes)) if exclude_set is not None else ()
    if why:
        files = [(sources_csv, src)] + ([(destinations_csv, dst)] if destinations_csv and dst else [])
        print("\n".join(left_out_lines(why, files, radius)), file=sys.stderr)
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
        retried += f"; {len(why):,} point(s) left out (null cells, listed above)" if why else ""
        print(
            f"starroute: wrote {output} ({out.cells:,} cells, {out.blocks} blocks) in {out.seconds:.1f} s: "
            f"{out.cells_per_s:,.0f} cells/s{retried}",
            file=sys.stderr,
        )
    return out

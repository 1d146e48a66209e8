"""Points in, `(N, 2)` float64 longitude/latitude arrays out: the one place the library reads what users pass.

Accepted: one `(lon, lat)` pair, a sequence of pairs, an `(N, 2)` array, a pandas DataFrame with `lon` and `lat`
columns (or `longitude` and `latitude`), and with the `[geo]` extra a GeoDataFrame or GeoSeries of points (in any
CRS: reprojected to WGS 84). Coordinates are checked as the HTTP API checks them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

from app.engine.errors import InvalidValue

Point: TypeAlias = tuple[float, float] | Sequence[float] | np.ndarray
Points: TypeAlias = Sequence[Point] | np.ndarray | Any  # Any: a pandas or GeoPandas frame

_COLUMNS = (("lon", "lat"), ("longitude", "latitude"), ("lng", "lat"))


def _geo(points: Any) -> np.ndarray | None:
    """A GeoSeries / GeoDataFrame of points as (N, 2) lon/lat, else None."""
    geom = getattr(points, "geometry", None)
    if geom is None or not hasattr(geom, "geom_type"):
        return None
    crs = getattr(geom, "crs", None)
    if crs is not None and not crs.equals("EPSG:4326"):
        geom = geom.to_crs("EPSG:4326")
    kinds = set(geom.geom_type)
    if kinds - {"Point"}:
        raise InvalidValue(f"geometries must be points, not {', '.join(sorted(k for k in kinds if k != 'Point'))}")
    return np.column_stack([np.asarray(geom.x, dtype=np.float64), np.asarray(geom.y, dtype=np.float64)])


def _frame(points: Any) -> np.ndarray | None:
    """A pandas DataFrame's lon/lat columns as (N, 2), else None."""
    columns = getattr(points, "columns", None)
    if columns is None:
        return None
    names = {str(c).lower(): c for c in columns}
    for lon, lat in _COLUMNS:
        if lon in names and lat in names:
            return np.column_stack(
                [np.asarray(points[names[lon]], dtype=np.float64), np.asarray(points[names[lat]], dtype=np.float64)]
            )
    raise InvalidValue(f"a frame of points needs lon and lat columns (has {', '.join(map(str, columns))})")


def as_lonlat(points: Points, what: str = "points") -> np.ndarray:
    """`points` as a C-contiguous (N, 2) float64 array of (lon, lat); `InvalidValue` for anything else or a
    coordinate out of range (one pair gives N = 1)."""
    arr = _geo(points)
    if arr is None:
        arr = _frame(points)
    if arr is None:
        try:
            arr = np.asarray(points, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidValue(f"{what} must be (lon, lat) pairs, an (N, 2) array or a frame of points") from None
        if arr.ndim == 1 and arr.shape[0] == 2:
            arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise InvalidValue(f"{what} must be (lon, lat) pairs, an (N, 2) array or a frame of points")
    bad = ~(np.isfinite(arr).all(axis=1) & (np.abs(arr[:, 0]) <= 180.0) & (np.abs(arr[:, 1]) <= 90.0))
    if bad.any():
        raise InvalidValue(f"Invalid coordinate value (in {what}, at index {int(np.argmax(bad))}).")
    return np.ascontiguousarray(arr)


def as_point(point: Point, what: str = "point") -> tuple[float, float]:
    """One `(lon, lat)` pair, checked."""
    kind = type(point)
    pair = kind is tuple or kind is list or (kind is np.ndarray and point.shape == (2,))  # type: ignore[union-attr]
    if pair and len(point) == 2:  # the usual pair, checked without numpy's array machinery (7 us a point there)
        try:
            lon, lat = float(point[0]), float(point[1])  # type: ignore[index]
        except (TypeError, ValueError):
            pass  # `as_lonlat` says what is wrong
        else:
            if math.isfinite(lon) and math.isfinite(lat) and abs(lon) <= 180.0 and abs(lat) <= 90.0:
                return lon, lat
    arr = as_lonlat(point, what)
    if arr.shape[0] != 1:
        raise InvalidValue(f"{what} must be one (lon, lat) pair")
    lon, lat = float(arr[0, 0]), float(arr[0, 1])
    assert math.isfinite(lon) and math.isfinite(lat)
    return lon, lat


def pairs(arr: np.ndarray) -> list[tuple[float, float]]:
    """An (N, 2) array as the engine's list of (lon, lat) tuples."""
    return [(float(a), float(b)) for a, b in arr]

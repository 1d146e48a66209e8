"""Small geometry helpers for responses: segment lengths and Douglas-Peucker overview simplification (great-circle
distances come from `floor.kernels.geometry.haversine_m`, the one vectorised haversine)."""

from __future__ import annotations

import math

import numpy as np

from floor.format.units import EARTH_RADIUS_M
from floor.kernels.geometry import haversine_m
from floor.kernels.jit import kernel


def valid_lonlat(lon: float, lat: float) -> bool:
    """The API's one coordinate rule (both APIs refuse in their own words): finite, longitude -180..180, latitude
    -90..90."""
    return math.isfinite(lon) and math.isfinite(lat) and -180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0


def segment_lengths_m(coords: np.ndarray) -> np.ndarray:
    """Great-circle length in metres of each segment of a `[k, 2]` lon/lat polyline (`k - 1` values)."""
    return haversine_m(coords[:-1, 0], coords[:-1, 1], coords[1:, 0], coords[1:, 1])


@kernel
def _douglas_peucker(coords: np.ndarray, tolerance_m: float) -> np.ndarray:  # pragma: no cover - compiled
    n = coords.shape[0]
    lat0 = 0.0
    for i in range(n):
        lat0 += coords[i, 1]
    kx = math.cos(math.radians(lat0 / n)) * EARTH_RADIUS_M * math.pi / 180.0
    ky = EARTH_RADIUS_M * math.pi / 180.0
    x = coords[:, 0] * kx
    y = coords[:, 1] * ky
    if tolerance_m < 0.0:
        extent = max(x.max() - x.min(), y.max() - y.min())
        tolerance_m = max(extent / 500.0, 0.5)
    tol2 = tolerance_m * tolerance_m
    keep = np.zeros(n, dtype=np.bool_)
    keep[0] = True
    keep[n - 1] = True
    stack = np.empty((n, 2), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = n - 1
    top = 1
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        if b - a < 2:
            continue
        dx = x[b] - x[a]
        dy = y[b] - y[a]
        len2 = dx * dx + dy * dy
        best = -1.0
        best_i = -1
        for i in range(a + 1, b):
            px = x[i] - x[a]
            py = y[i] - y[a]
            if len2 > 0.0:
                t = min(1.0, max(0.0, (px * dx + py * dy) / len2))
                px -= t * dx
                py -= t * dy
            d2 = px * px + py * py
            if d2 > best:
                best = d2
                best_i = i
        if best > tol2:
            keep[best_i] = True
            stack[top, 0] = a
            stack[top, 1] = best_i
            stack[top + 1, 0] = best_i
            stack[top + 1, 1] = b
            top += 2
    out = np.empty((n, 2), dtype=np.float64)  # the kept points, packed here: a boolean index costs more than DP
    m = 0
    for i in range(n):
        if keep[i]:
            out[m, 0] = coords[i, 0]
            out[m, 1] = coords[i, 1]
            m += 1
    return out[:m]


def simplify(coords: np.ndarray, tolerance_m: float | None = None) -> np.ndarray:
    """Douglas-Peucker simplification of a lon/lat polyline (OSRM's `overview=simplified`).

    Without a tolerance it picks one pixel at the zoom where the route's extent spans about 500 pixels, as OSRM
    fits the overview to the viewport. Endpoints are always kept.
    """
    if coords.shape[0] <= 2:
        return coords
    return _douglas_peucker(
        np.ascontiguousarray(coords, dtype=np.float64), -1.0 if tolerance_m is None else tolerance_m
    )

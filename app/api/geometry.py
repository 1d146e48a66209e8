"""Small geometry helpers for responses: bearings, segment lengths, Douglas-Peucker overview simplification."""

from __future__ import annotations

import math

import numpy as np

from preprocessing.jit import kernel

EARTH_RADIUS_M = 6_372_797.560856  # OSRM's radius (coordinate_calculation.hpp)


def bearing(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Initial great-circle bearing from point 1 to point 2 in degrees, 0 = north, clockwise, in [0, 360)."""
    p1 = math.radians(lat1)
    p2 = math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return math.degrees(math.atan2(y, x)) % 360.0


def segment_lengths_m(coords: np.ndarray) -> np.ndarray:
    """Haversine length in metres of each segment of a `[k, 2]` lon/lat polyline (`k - 1` values)."""
    lon = np.radians(coords[:, 0])
    lat = np.radians(coords[:, 1])
    dlat = np.diff(lat)
    dlon = np.diff(lon)
    a = np.sin(dlat / 2) ** 2 + np.cos(lat[:-1]) * np.cos(lat[1:]) * np.sin(dlon / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.minimum(a, 1.0)))


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
    return keep


def simplify(coords: np.ndarray, tolerance_m: float | None = None) -> np.ndarray:
    """Douglas-Peucker simplification of a lon/lat polyline (OSRM's `overview=simplified`).

    Without a tolerance it picks one pixel at the zoom where the route's extent spans about 500 pixels, as OSRM
    fits the overview to the viewport. Endpoints are always kept.
    """
    if coords.shape[0] <= 2:
        return coords
    keep = _douglas_peucker(
        np.ascontiguousarray(coords, dtype=np.float64), -1.0 if tolerance_m is None else tolerance_m
    )
    return coords[keep]

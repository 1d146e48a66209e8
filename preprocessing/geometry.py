"""Geometry and array helpers both the build stages and the engine stand on (one home each).

Vectorised numpy only: great-circle distances, the Hilbert curve that orders nodes and snapping cells, CSR offsets,
and the measured top speed that bounds the A* heuristics. The engine's numba scalars live in `app.engine.geo`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .units import DIST_PER_METRE, EARTH_RADIUS_M, WEIGHT_PER_SECOND


def haversine_m(lon1: np.ndarray, lat1: np.ndarray, lon2: np.ndarray, lat2: np.ndarray) -> np.ndarray:
    """Great-circle distance in metres between degree coordinates (vectorised)."""
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dp = p2 - p1
    dl = np.radians(lon2 - lon1)
    a = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.minimum(a, 1.0)))


def hilbert_index(x: np.ndarray, y: np.ndarray, bits: int = 16) -> np.ndarray:
    """Hilbert-curve position of integer grid points (0 <= x, y < 2**bits), vectorised."""
    x = x.astype(np.int64).copy()
    y = y.astype(np.int64).copy()
    d = np.zeros(len(x), dtype=np.int64)
    s = 1 << (bits - 1)
    while s > 0:
        rx = ((x & s) > 0).astype(np.int64)
        ry = ((y & s) > 0).astype(np.int64)
        d += s * s * ((3 * rx) ^ ry)
        # rotate the quadrant
        flip = ry == 0
        swap_flip = flip & (rx == 1)
        x = np.where(swap_flip, s - 1 - x, x)
        y = np.where(swap_flip, s - 1 - y, y)
        x, y = np.where(flip, y, x), np.where(flip, x, y)
        s >>= 1
    return d


def csr_offsets(keys: np.ndarray, n: int) -> np.ndarray:
    """CSR offsets (int32 [n+1]) of `keys` already sorted ascending."""
    counts = np.bincount(keys, minlength=n)
    out = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out.astype(np.int32)


def measured_max_speed_mps(arrays: Mapping[str, np.ndarray]) -> float:
    """The largest distance/weight ratio over all arcs, in m/s: the admissible top speed for A* heuristics."""
    w = arrays["arc_weight"].astype(np.float64)
    if len(w) == 0:
        return 1.0
    d = arrays["arc_dist"].astype(np.float64) / DIST_PER_METRE
    return float(max(np.max(d / (w / WEIGHT_PER_SECOND)), 0.1))

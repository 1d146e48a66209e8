"""Measures over whole arrays in plain numpy, for the commands that must start in a fraction of a second.

`starroute customize` runs without numba (importing it alone costs 0.3 s, half of `osrm-customize`'s whole run on
Porto), so the two measures it needs live here rather than beside the kernels in `floor.kernels.geometry`:
`osrm_lengths_m`, OSRM's segment length bit for bit the same as the kernel `geometry.osrm_distances_m` (the same
operations in the same order, and one table of the cheap ruler per 0.05-degree band, `OSRM_RULERS`, which the
kernels read too; `tests/unit/test_measure.py` compares every segment of real extracts), and the measured top speed that
bounds the A* heuristics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from floor.format.units import (
    DIST_PER_METRE,
    OSRM_COORD_SCALE,
    OSRM_RULER_BANDS,
    WEIGHT_PER_SECOND,
    WGS84_A_KM,
    WGS84_F,
)

_RAD = math.pi / 180.0
_E2 = WGS84_F * (2.0 - WGS84_F)
RULER_BAND = int(90.0 * OSRM_COORD_SCALE / OSRM_RULER_BANDS)  # 50_000 fixed-point units = 0.05 degrees


def _fixed(deg: np.ndarray) -> np.ndarray:
    """`geometry.osrm_fixed` per element: `round(deg * 1e6)`, halves away from zero."""
    v = np.asarray(deg, dtype=np.float64) * OSRM_COORD_SCALE
    return np.where(v >= 0.0, np.floor(v + 0.5), -np.floor(-v + 0.5)).astype(np.int64)


def _ruler(band: int) -> tuple[float, float]:
    """OSRM's cheap ruler of one 0.05-degree band (metres per degree of longitude, of latitude), evaluated at the
    band's middle from the WGS84 normal and meridional radii of curvature."""
    lat = RULER_BAND * (band + 0.5) / OSRM_COORD_SCALE
    mul = _RAD * WGS84_A_KM * 1000.0
    coslat = math.cos(lat * _RAD)
    w2 = 1.0 / (1.0 - _E2 * (1.0 - coslat * coslat))
    w = math.sqrt(w2)
    return mul * w * coslat, mul * w * w2 * (1.0 - _E2)


# every band's ruler, [band, (kx, ky)]: twice the bands of 0..90 degrees, so that no latitude a check let through
# (|lat| <= 90) and no sum of two of them reaches the end; the kernels (`geometry._osrm_ruler`) read it too
OSRM_RULERS = np.array([_ruler(b) for b in range(2 * OSRM_RULER_BANDS)], dtype=np.float64)


def ruler_band(y1: np.ndarray, y2: np.ndarray) -> np.ndarray:
    """The band of the mean of two fixed-point latitudes (C++ integer division, truncating), as
    `geometry._osrm_ruler` takes it; the last band of `OSRM_RULERS` beyond it."""
    s = y1 + y2
    mean = np.where(s >= 0, s // 2, -((-s) // 2))
    am = np.abs(mean)
    return np.minimum(np.where(am >= 1, (am - 1) // RULER_BAND, 0), len(OSRM_RULERS) - 1)


def osrm_lengths_m(lon1: np.ndarray, lat1: np.ndarray, lon2: np.ndarray, lat2: np.ndarray) -> np.ndarray:
    """Metres between degree coordinates, element by element, exactly as `geometry.osrm_distances_m` (OSRM's
    `greatCircleDistance`: 1e-6 degree points, the cheap ruler of the band of their mean latitude)."""
    x1, y1, x2, y2 = (_fixed(a) for a in (lon1, lat1, lon2, lat2))
    band = ruler_band(y1, y2)
    kx, ky = OSRM_RULERS[band, 0], OSRM_RULERS[band, 1]
    dlon = x1 / OSRM_COORD_SCALE - x2 / OSRM_COORD_SCALE
    wrap = (dlon > 180.0) | (dlon < -180.0)
    if wrap.any():
        dlon = np.where(wrap, dlon - 360.0 * np.round(dlon / 360.0), dlon)
    dx = dlon * kx
    dy = (y1 / OSRM_COORD_SCALE - y2 / OSRM_COORD_SCALE) * ky
    return np.sqrt(dx * dx + dy * dy)


def measured_max_speed_mps(arrays: Mapping[str, np.ndarray]) -> float:
    """The largest distance/weight ratio over all arcs, in m/s: the admissible top speed for A* heuristics."""
    w = arrays["arc_weight"].astype(np.float64)
    if len(w) == 0:
        return 1.0
    d = arrays["arc_dist"].astype(np.float64) / DIST_PER_METRE
    return float(max(np.max(d / (w / WEIGHT_PER_SECOND)), 0.1))

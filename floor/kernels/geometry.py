"""Geometry and array helpers both the build stages and the engine stand on (one home each).

Two distances, each with one home. `osrm_distance_m` (a numba scalar, usable from the engine's kernels) and
`osrm_distances_m` (vectorised) are *the* distance formula of everything reported: arc lengths, phantom offsets,
route and annotation distances, exactly as OSRM computes them (`util::coordinate_calculation::greatCircleDistance`).
`haversine_m` is the great circle on the mean sphere, for bounds (the A*/ALT straight-line bound measures its own top
speed against it, `app.engine.geo`) and for what OSRM does not report. Also the Hilbert curve that orders nodes and
snapping cells and CSR offsets. (`floor.kernels.measure` holds numpy twins for the commands that run without numba.)
"""

from __future__ import annotations

import math

import numpy as np

from floor.format.units import EARTH_RADIUS_M, OSRM_COORD_SCALE
from floor.kernels.jit import F64, I64, arr, kernel, tup
from floor.kernels.measure import OSRM_RULERS, RULER_BAND

_RAD = math.pi / 180.0
_LAST_BAND = len(OSRM_RULERS) - 1


@kernel(I64(F64), nrt=False, forceinline=True)
def osrm_fixed(deg: float) -> int:
    """A degree value as OSRM's fixed point (`util::toFixed`: `std::round(deg * 1e6)`, halves away from zero)."""
    v = deg * OSRM_COORD_SCALE
    return int(math.floor(v + 0.5)) if v >= 0.0 else -int(math.floor(-v + 0.5))


@kernel(tup(F64, F64)(I64, I64), nrt=False, forceinline=True)
def _osrm_ruler(y1: int, y2: int) -> tuple[float, float]:
    """OSRM's cheap ruler (metres per degree of longitude, of latitude) for two fixed-point latitudes: the ruler of
    the 0.05-degree band holding their mean (C++ integer division, truncating), from the one table of them
    (`measure.OSRM_RULERS`, each evaluated at its band's middle from the WGS84 radii of curvature)."""
    s = y1 + y2
    mean = s // 2 if s >= 0 else -((-s) // 2)
    band = min((abs(mean) - 1) // RULER_BAND if abs(mean) >= 1 else 0, _LAST_BAND)
    return OSRM_RULERS[band, 0], OSRM_RULERS[band, 1]


@kernel(F64(I64, I64), nrt=False, forceinline=True)
def _osrm_dlon(x1: int, x2: int) -> float:
    """Degrees of longitude from fixed-point x2 to x1, wrapped into [-180, 180] (`std::remainder(x1 - x2, 360)`)."""
    dlon = x1 / OSRM_COORD_SCALE - x2 / OSRM_COORD_SCALE
    if dlon > 180.0 or dlon < -180.0:
        dlon -= 360.0 * round(dlon / 360.0)
    return dlon


@kernel(F64(F64, F64, F64, F64), nrt=False, forceinline=True)
def osrm_distance_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Metres between two degree coordinates exactly as OSRM measures them (the one formula of reported distances).

    Both points are rounded to 1e-6 degrees (`osrm_fixed`); the ruler is the cheap ruler of the 0.05-degree band
    holding the pair's mean fixed-point latitude (`_osrm_ruler`), `dx = remainder(dlon, 360) * kx`.
    `osrm_distance_m(1.0, 0.0, 1.0009, 0.0)` = 100.19 m (a thousandth of a degree of longitude at the equator).
    """
    x1 = osrm_fixed(lon1)
    y1 = osrm_fixed(lat1)
    x2 = osrm_fixed(lon2)
    y2 = osrm_fixed(lat2)
    kx, ky = _osrm_ruler(y1, y2)
    dx = _osrm_dlon(x1, x2) * kx
    dy = (y1 / OSRM_COORD_SCALE - y2 / OSRM_COORD_SCALE) * ky
    return math.sqrt(dx * dx + dy * dy)


@kernel(F64(F64, F64, F64, F64), nrt=False, forceinline=True)
def osrm_bearing_deg(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """OSRM's bearing from point 1 to point 2 in [0, 360), degrees clockwise from north
    (`util::coordinate_calculation::bearing`: both points at 1e-6 degrees, the cheap ruler of `osrm_distance_m`;
    0 for identical points)."""
    x1 = osrm_fixed(lon1)
    y1 = osrm_fixed(lat1)
    x2 = osrm_fixed(lon2)
    y2 = osrm_fixed(lat2)
    kx, ky = _osrm_ruler(y1, y2)
    dx = _osrm_dlon(x2, x1) * kx
    dy = (y2 / OSRM_COORD_SCALE - y1 / OSRM_COORD_SCALE) * ky
    r = math.atan2(dx, dy) / _RAD
    return r + 360.0 if r < 0.0 else r


# One signature each, on read-only arrays (writable ones convert): callers pass either, and each variant compiled
# for about half a second on a first start.
_RO_F64 = arr(F64, readonly=True)


@kernel(arr(F64)(_RO_F64, _RO_F64, _RO_F64, _RO_F64))
def _osrm_bearings(lon1, lat1, lon2, lat2):  # type: ignore[no-untyped-def]  # pragma: no cover - numba
    out = np.empty(len(lon1), dtype=np.float64)
    for i in range(len(lon1)):
        out[i] = osrm_bearing_deg(lon1[i], lat1[i], lon2[i], lat2[i])
    return out


def osrm_bearings_deg(lon1: np.ndarray, lat1: np.ndarray, lon2: np.ndarray, lat2: np.ndarray) -> np.ndarray:
    """`osrm_bearing_deg` over arrays of degree coordinates (float64 degrees in [0, 360))."""
    arrs = [np.ascontiguousarray(np.asarray(a, dtype=np.float64)) for a in (lon1, lat1, lon2, lat2)]
    return _osrm_bearings(*arrs)


@kernel(arr(F64)(_RO_F64, _RO_F64, _RO_F64, _RO_F64))
def _osrm_distances(lon1, lat1, lon2, lat2):  # type: ignore[no-untyped-def]  # pragma: no cover - numba
    out = np.empty(len(lon1), dtype=np.float64)
    for i in range(len(lon1)):
        out[i] = osrm_distance_m(lon1[i], lat1[i], lon2[i], lat2[i])
    return out


def osrm_distances_m(lon1: np.ndarray, lat1: np.ndarray, lon2: np.ndarray, lat2: np.ndarray) -> np.ndarray:
    """`osrm_distance_m` over arrays of degree coordinates (float64 metres), e.g. the segments of a polyline."""
    arrs = [
        np.ascontiguousarray(np.broadcast_to(np.asarray(a, dtype=np.float64), np.shape(lon1)))
        for a in (lon1, lat1, lon2, lat2)
    ]
    if arrs[0].ndim == 0:
        return _osrm_distances(*(a.reshape(1) for a in arrs))[0]
    return _osrm_distances(*arrs)


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

"""Google encoded polylines (precision 5 = OSRM `polyline`, 6 = `polyline6`), encoded by a small numba kernel.

Coordinates go in and come out as `[lon, lat]` (GeoJSON order); the encoding itself stores lat, lon pairs.

>>> encode(np.array([[-120.2, 38.5], [-120.95, 40.7], [-126.453, 43.252]]))
'_p~iF~ps|U_ulLnnqC_mqNvxq`@'
"""

from __future__ import annotations

import numpy as np

from floor.kernels.jit import kernel


@kernel
def _encode_kernel(coords: np.ndarray, factor: float) -> np.ndarray:  # pragma: no cover - compiled
    n = coords.shape[0]
    out = np.empty(n * 2 * 7, dtype=np.uint8)
    pos = 0
    prev_lat = 0
    prev_lon = 0
    for i in range(n):
        lat = np.int64(np.round(coords[i, 1] * factor))
        lon = np.int64(np.round(coords[i, 0] * factor))
        for k in range(2):
            d = lat - prev_lat if k == 0 else lon - prev_lon
            v = ~(d << 1) if d < 0 else d << 1
            while v >= 0x20:
                out[pos] = np.uint8((0x20 | (v & 0x1F)) + 63)
                pos += 1
                v >>= 5
            out[pos] = np.uint8(v + 63)
            pos += 1
        prev_lat = lat  # type: ignore[assignment]
        prev_lon = lon  # type: ignore[assignment]
    return out[:pos]


def encode(coordinates: np.ndarray, precision: int = 5) -> str:
    """Encode a `[k, 2]` array of `[lon, lat]` degrees as a polyline string of the given precision (5 or 6)."""
    coords = np.ascontiguousarray(coordinates, dtype=np.float64).reshape(-1, 2)
    return _encode_kernel(coords, 10.0**precision).tobytes().decode("ascii")


def decode(text: str, precision: int = 5) -> np.ndarray:
    """Decode a polyline string into a `[k, 2]` float64 array of `[lon, lat]` degrees.

    Raises ValueError on characters outside the polyline alphabet or a truncated value.
    """
    values: list[int] = []
    shift = 0
    acc = 0
    for ch in text:
        b = ord(ch) - 63
        if b < 0 or b > 0x3F:
            raise ValueError(f"invalid polyline character {ch!r}")
        acc |= (b & 0x1F) << shift
        shift += 5
        if b < 0x20:
            values.append(~(acc >> 1) if acc & 1 else acc >> 1)
            acc = 0
            shift = 0
        elif shift > 60:
            raise ValueError("polyline value too long")
    if shift != 0 or len(values) % 2:
        raise ValueError("truncated polyline")
    arr = np.cumsum(np.array(values, dtype=np.int64).reshape(-1, 2), axis=0) / (10.0**precision)
    return arr[:, ::-1].copy()

"""OSRM's coordinate arithmetic for guidance, on OSRM's own fixed point (1e-6 degree integers).

Turn angles decide maneuvers at thresholds of a degree, so the guidance model computes them exactly as OSRM does:
coordinates rounded to 1e-6 degrees (`fixed`), distances and bearings with the cheap ruler of the latitude band
(OSRM caches one ruler per 0.05 degree), interpolation and offsets in integer arithmetic, projections in plain
degrees. A coordinate is a `(lon, lat)` tuple of ints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Coord = tuple[int, int]

PRECISION = 1e6
_RE = 6378.137  # WGS84 equatorial radius (km), as OSRM's cheap ruler
_FE = 1.0 / 298.257223563
_E2 = _FE * (2 - _FE)
_RAD = math.pi / 180.0
_RULER_STEP = 50_000  # 90 degrees * 1e6 / 1800 rulers
_rulers: dict[int, tuple[float, float]] = {}


def round_half_away(x: float) -> int:
    """C's `std::round`: halves away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def fixed_from_e7(v: int) -> int:
    """A 1e-7 degree integer (OSM, the graph) as OSRM's 1e-6 integer (libosmium double, then `toFixed`)."""
    return round_half_away((v / 1e7) * PRECISION)


def fixed_array(v: Sequence[int]) -> list[int]:
    """`fixed_from_e7` of many values at once (the same float operations, vectorised)."""
    x = np.asarray(v, dtype=np.float64) / 1e7 * PRECISION
    return np.where(x >= 0, np.floor(x + 0.5), -np.floor(-x + 0.5)).astype(np.int64).tolist()


def fixed(deg: float) -> int:
    """Degrees as a 1e-6 integer (`toFixed`)."""
    return round_half_away(deg * PRECISION)


def _ruler(lat_fixed: int) -> tuple[float, float]:
    b = (abs(lat_fixed) - 1) // _RULER_STEP if lat_fixed != 0 else 0
    r = _rulers.get(b)
    if r is None:
        lat = _RULER_STEP * (b + 0.5) / PRECISION
        mul = _RAD * _RE * 1000
        coslat = math.cos(lat * _RAD)
        w2 = 1 / (1 - _E2 * (1 - coslat * coslat))
        w = math.sqrt(w2)
        r = _rulers[b] = (mul * w * coslat, mul * w * w2 * (1 - _E2))
    return r


def _mid_lat(a: int, b: int) -> int:
    s = a + b
    return int(s / 2)  # C integer division truncates toward zero


def _long_diff(a: float, b: float) -> float:
    return math.remainder(a - b, 360.0)


def distance(a: Coord, b: Coord) -> float:
    """OSRM's `greatCircleDistance` (metres): the cheap ruler of the two points' latitude band (`_ruler`,
    `_mid_lat` and `_long_diff` written out: the turn stage calls it for every shape point near a junction)."""
    mid = int((a[1] + b[1]) / 2)
    band = (abs(mid) - 1) // _RULER_STEP if mid != 0 else 0
    r = _rulers.get(band)
    kx, ky = r if r is not None else _ruler(mid)
    dx = math.remainder(a[0] / PRECISION - b[0] / PRECISION, 360.0) * kx
    dy = (a[1] - b[1]) / PRECISION * ky
    return math.sqrt(dx * dx + dy * dy)


def length(coords: Sequence[Coord]) -> float:
    """Sum of `distance` along a polyline."""
    return sum(distance(coords[i - 1], coords[i]) for i in range(1, len(coords)))


def bearing(a: Coord, b: Coord) -> float:
    """OSRM's bearing from a to b in [0, 360) (0 for identical points)."""
    kx, ky = _ruler(_mid_lat(a[1], b[1]))
    dx = _long_diff(b[0] / PRECISION, a[0] / PRECISION) * kx
    dy = (b[1] - a[1]) / PRECISION * ky
    r = math.atan2(dx, dy) / _RAD
    if r < 0.0:
        r += 360.0
    return r


def reverse(b: float) -> float:
    """The opposite bearing."""
    return b - 180.0 if b >= 180.0 else b + 180.0


def angle_between(entry_bearing: float, exit_bearing: float) -> float:
    """Turn angle on OSRM's turn circle: 180 straight, below 180 to the right, above to the left, 0 u-turn."""
    return math.fmod(entry_bearing - exit_bearing + 540.0, 360.0)


def deviation(a: float, b: float) -> float:
    """Smallest difference between two angles or bearings (0..180)."""
    d = abs(a - b)
    return min(360.0 - d, d)


def restrict_angle(a: float) -> float:
    """An angle moved into [0, 360]."""
    while a < 0:
        a += 360.0
    while a > 360:
        a -= 360.0
    return a


def interpolate(factor: float, a: Coord, b: Coord) -> Coord:
    """A point between a (0) and b (1), truncated to the fixed grid as OSRM's `interpolateLinear`."""
    return int(a[0] + factor * (b[0] - a[0])), int(a[1] + factor * (b[1] - a[1]))


def project(src: Coord, tgt: Coord, pt: Coord) -> tuple[float, Coord]:
    """(ratio, nearest point) of `pt` on segment src-tgt, computed in degrees and rounded back to the grid."""
    sx, sy = src[0] / PRECISION, src[1] / PRECISION
    vx, vy = tgt[0] / PRECISION - sx, tgt[1] / PRECISION - sy
    rx, ry = pt[0] / PRECISION - sx, pt[1] / PRECISION - sy
    sq = vx * vx + vy * vy
    if sq < 2.220446049250313e-16:
        return 0.0, src
    r = (vx * rx + vy * ry) / sq
    r = 0.0 if r < 0.0 else 1.0 if r > 1.0 else r
    lon = (1.0 - r) * sx + (sx + vx) * r
    lat = (1.0 - r) * sy + (sy + vy) * r
    return r, (fixed(lon), fixed(lat))


def closest_distance(pt: Coord, a: Coord, b: Coord) -> float:
    """Metres from pt to segment a-b (`findClosestDistance`)."""
    return distance(pt, project(a, b, pt)[1])


def closest_distance_to_line(pt: Coord, line: Sequence[Coord]) -> float:
    """Metres from pt to a polyline."""
    best = float("inf")
    for i in range(1, len(line)):
        best = min(best, closest_distance(pt, line[i - 1], line[i]))
    return best


def lat_to_y(lat: float) -> float:
    """Web mercator y (degrees) of a latitude."""
    lat = max(min(lat, 85.051128779806592), -85.051128779806592)
    f = math.sin(_RAD * lat)
    return 0.5 / _RAD * math.log((1 + f) / (1 - f))


def compute_angle(first: Coord, second: Coord, third: Coord) -> float:
    """Angle first-second-third in [0, 360) on the mercator plane (180 = straight), as OSRM's `computeAngle`."""
    if first == second or second == third:
        return 180.0
    v1x = (first[0] - second[0]) / PRECISION
    v1y = lat_to_y(first[1] / PRECISION) - lat_to_y(second[1] / PRECISION)
    v2x = (third[0] - second[0]) / PRECISION
    v2y = lat_to_y(third[1] / PRECISION) - lat_to_y(second[1] / PRECISION)
    angle = (math.atan2(v2y, v2x) - math.atan2(v1y, v1x)) * 180.0 / math.pi
    while angle < 0.0:
        angle += 360.0
    return angle


def signed_area(a: Coord, b: Coord, c: Coord) -> float:
    """Signed area of a triangle in degrees squared."""
    x1, y1 = a[0] / PRECISION, a[1] / PRECISION
    x2, y2 = b[0] / PRECISION, b[1] / PRECISION
    x3, y3 = c[0] / PRECISION, c[1] / PRECISION
    return 0.5 * (-x2 * y1 + x3 * y1 + x1 * y2 - x3 * y2 - x1 * y3 + x2 * y3)


def is_ccw(a: Coord, b: Coord, c: Coord) -> bool:
    """Whether a, b, c turn counter-clockwise."""
    return signed_area(a, b, c) > 0


def rotate_ccw(c: tuple[float, float] | Coord, angle_rad: float, is_fixed: bool = True) -> Coord:
    """Rotate a coordinate around (0, 0) (`rotateCCWAroundZero`), result on the grid."""
    ca, sa = math.cos(angle_rad), math.sin(angle_rad)
    lon = c[0] / PRECISION if is_fixed else c[0]
    lat = c[1] / PRECISION if is_fixed else c[1]
    return fixed(ca * lon - sa * lat), fixed(sa * lon + ca * lat)


def regression(coords: Sequence[Coord]) -> tuple[Coord, Coord]:
    """OSRM's `leastSquareRegression`: the least-squares line through the points as two grid points."""
    n = len(coords)
    lons = [c[0] / PRECISION for c in coords]
    lats = [c[1] / PRECISION for c in coords]
    min_lon, max_lon, min_lat, max_lat = min(lons), max(lons), min(lats), max(lats)
    if (max_lat - min_lat) > 2 * (max_lon - min_lon):
        rotated = [rotate_ccw(c, -math.pi / 2) for c in coords]
        a, b = regression(rotated)
        return rotate_ccw(a, math.pi / 2), rotate_ccw(b, math.pi / 2)
    mean_lon = sum(lons) / n
    mean_lat = sum(lats) / n
    var_lon = math.sqrt(sum((x - mean_lon) ** 2 for x in lons) / (n - 1))
    if abs(var_lon) < 2.220446049250313e-16:
        return coords[0], coords[-1]
    var_lat = math.sqrt(sum((y - mean_lat) ** 2 for y in lats) / (n - 1))
    if abs(var_lat) < 2.220446049250313e-16:
        return coords[0], coords[-1]
    corr = 0.0
    for x, y in zip(lons, lats, strict=True):
        corr += (x - mean_lon) * (y - mean_lat) / (var_lon * var_lat)
    corr /= n - 1
    slope = corr * var_lat / var_lon
    intercept = mean_lat - slope * mean_lon
    off = 0.00001
    first = (fixed(min_lon - off), fixed(intercept + slope * (min_lon - off)))
    last = (fixed(max_lon + off), fixed(intercept + slope * (max_lon + off)))
    return first, last


def are_parallel(lhs: Sequence[Coord], rhs: Sequence[Coord]) -> bool:
    """OSRM's `areParallel`: the regression lines of both point sets differ by a slope of less than 20 %."""
    la, lb = regression(lhs)
    ra, rb = regression(rhs)
    dl = (la[0] - lb[0], la[1] - lb[1])
    dr = (ra[0] - rb[0], ra[1] - rb[1])
    b_l = bearing((0, 0), dl)
    rot = rotate_ccw(dr, (b_l - 90) * _RAD)
    diff_lon = 0 - rot[0]
    diff_lat = 0 - rot[1]
    slope = float("inf") if diff_lon == 0 else diff_lat / diff_lon
    return abs(slope) < 0.20


def polygon_area(poly: Sequence[Coord]) -> float:
    """OSRM's `computeArea` of a closed polygon (m^2, signed)."""
    if not poly:
        return 0.0
    ref_lat = min(c[1] for c in poly)
    area = 0.0
    prev_base = (poly[0][0], ref_lat)
    prev_y = distance(prev_base, poly[0])
    for c in poly[1:]:
        base = (c[0], ref_lat)
        y = distance(base, c)
        chunk = distance(prev_base, base) * (prev_y + y)
        area += chunk if base[0] >= prev_base[0] else -chunk
        prev_base, prev_y = base, y
    return area / 2.0

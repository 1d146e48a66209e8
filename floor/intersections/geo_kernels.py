"""OSRM's fixed-point geometry and coordinate extractor as numba kernels (`geo`, `coordinates`): distances,
bearings, projections, regression lines and `representative`, the point along a road that shows where a driver
perceives it heading. A polyline is two int64 arrays of 1e-6 degree coordinates; `rulers` is the cheap ruler per
0.05 degree latitude band (`rulers()`). Each kernel does the Python function's float operations in the same order
(and the same libm), so the turn stage's kernels (`views`) give the Python model's numbers bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from floor.format.road_classification import PRIMARY, TRUNK
from floor.intersections import geo
from floor.kernels.jit import BOOL, F64, I64, arr, kernel, tup

PREC = geo.PRECISION
RAD = math.pi / 180.0
EPS = 2.220446049250313e-16
LANE_WIDTH = 3.25
NO_LANES_LOOKAHEAD = 10.0
FAR_LOOKAHEAD = 40.0
# rotateCCWAroundZero's sines and cosines as the Python model's libm computes them
COS_CW, SIN_CW = math.cos(-math.pi / 2), math.sin(-math.pi / 2)
COS_CCW, SIN_CCW = math.cos(math.pi / 2), math.sin(math.pi / 2)
# One signature per kernel (`jit.kernel`): each compiles once, whatever literal or integer type its callers pass
# (`f(x, 0)` and `f(x, True)` each compiled a copy of `_representative`, `_trim`, ... : half the cold compile).
IA, FA, BA, IA2 = arr(I64), arr(F64), arr(BOOL), arr(I64, 2)  # a polyline's coordinates, lengths, flags, rows
RULERS = arr(F64, 2)
POINT, LINE, LINE_PTS = tup(I64, I64), tup(I64, I64, I64, I64), tup(IA, IA)  # (x, y), two points, a polyline
# per arc attribute columns (`views.arc_attributes`)
A_PRIO, A_MOTORWAY, A_LINK, A_IGNORE, A_LANES, A_ROUNDABOUT, A_CIRCULAR, A_MODE, A_NAME, A_TURN_LANES, A_U_LANE = range(
    11
)


def rulers() -> np.ndarray:
    """OSRM's cheap ruler (kx, ky) per 0.05 degree latitude band, float64 [1800, 2] (`geo._ruler`'s numbers)."""
    return np.array([geo._ruler(b * 50_000 + 1) for b in range(1800)], dtype=np.float64)


# -- OSRM's fixed-point geometry (geo) ---------------------------------------------------------------------------
@kernel(I64(F64), inner=True)
def _round_half_away(x: float) -> float:
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


@kernel(F64(F64), inner=True)
def _remainder360(x: float) -> float:
    """IEEE remainder(x, 360) (math.remainder): x - 360 n, n the nearest integer to x / 360, halves to even."""
    if -180.0 <= x <= 180.0:
        return x
    q = x / 360.0
    n = math.floor(q)
    f = q - n
    if f > 0.5 or (f == 0.5 and n % 2 == 1):
        n += 1.0
    r = x - n * 360.0
    if r > 180.0:
        r -= 360.0
    elif r < -180.0:
        r += 360.0
    return r


@kernel(I64(I64), inner=True)
def _band(lat_fixed: int) -> int:
    return (abs(lat_fixed) - 1) // 50_000 if lat_fixed != 0 else 0


@kernel(F64(I64, I64, I64, I64, RULERS), inner=True)
def _distance(ax: int, ay: int, bx: int, by: int, rulers: np.ndarray) -> float:
    mid = int((ay + by) / 2)
    b = _band(mid)
    dx = _remainder360(ax / PREC - bx / PREC) * rulers[b, 0]
    dy = (ay - by) / PREC * rulers[b, 1]
    return math.sqrt(dx * dx + dy * dy)


@kernel(F64(I64, I64, I64, I64, RULERS), inner=True)
def _bearing(ax: int, ay: int, bx: int, by: int, rulers: np.ndarray) -> float:
    b = _band(int((ay + by) / 2))
    dx = _remainder360(bx / PREC - ax / PREC) * rulers[b, 0]
    dy = (by - ay) / PREC * rulers[b, 1]
    r = math.atan2(dx, dy) / RAD
    if r < 0.0:
        r += 360.0
    return r


@kernel(F64(IA, IA, RULERS), inner=True)
def _length(xs: np.ndarray, ys: np.ndarray, rulers: np.ndarray) -> float:
    s = 0.0
    for i in range(1, len(xs)):
        s += _distance(xs[i - 1], ys[i - 1], xs[i], ys[i], rulers)
    return s


@kernel(F64(F64), inner=True)
def _reverse(b: float) -> float:
    return b - 180.0 if b >= 180.0 else b + 180.0


@kernel(F64(F64, F64), inner=True)
def _angle_between(entry: float, exit_: float) -> float:
    return np.fmod(entry - exit_ + 540.0, 360.0)


@kernel(F64(F64, F64), inner=True)
def _deviation(a: float, b: float) -> float:
    d = abs(a - b)
    return min(360.0 - d, d)


@kernel(F64(F64), inner=True)
def _restrict_angle(a: float) -> float:
    while a < 0:
        a += 360.0
    while a > 360:
        a -= 360.0
    return a


@kernel(F64(F64, F64, F64), inner=True)
def _interp_factor(desired: float, first: float, second: float) -> float:
    seg = second - first
    if seg <= 0:
        return 0.0
    return max(0.0, min((desired - first) / seg, 1.0))


@kernel(POINT(F64, I64, I64, I64, I64), inner=True)
def _interpolate(f: float, ax: int, ay: int, bx: int, by: int) -> tuple[int, int]:
    return int(ax + f * (bx - ax)), int(ay + f * (by - ay))


@kernel(I64(F64), inner=True)
def _fixed(deg: float) -> int:
    return int(_round_half_away(deg * PREC))


@kernel(POINT(I64, I64, I64, I64, I64, I64), inner=True)
def _project(sx0: int, sy0: int, tx: int, ty: int, px: int, py: int) -> tuple[int, int]:
    """The nearest point of segment s-t to p, on the grid (`geo.project`'s point)."""
    sx, sy = sx0 / PREC, sy0 / PREC
    vx, vy = tx / PREC - sx, ty / PREC - sy
    rx, ry = px / PREC - sx, py / PREC - sy
    sq = vx * vx + vy * vy
    if sq < EPS:
        return sx0, sy0
    r = (vx * rx + vy * ry) / sq
    r = 0.0 if r < 0.0 else 1.0 if r > 1.0 else r
    return _fixed((1.0 - r) * sx + (sx + vx) * r), _fixed((1.0 - r) * sy + (sy + vy) * r)


@kernel(POINT(I64, I64, F64, F64), inner=True)
def _rotate(x: int, y: int, ca: float, sa: float) -> tuple[int, int]:
    lon, lat = x / PREC, y / PREC
    return _fixed(ca * lon - sa * lat), _fixed(sa * lon + ca * lat)


@kernel(LINE(IA, IA), inner=True)
def _regression(xs0: np.ndarray, ys0: np.ndarray) -> tuple[int, int, int, int]:
    """`geo.regression` (its recursion over rotations as a loop): the line as two grid points."""
    xs, ys = xs0.copy(), ys0.copy()
    n = len(xs)
    turns = 0
    while True:
        min_lon = max_lon = xs[0] / PREC
        min_lat = max_lat = ys[0] / PREC
        for i in range(1, n):
            lo, la = xs[i] / PREC, ys[i] / PREC
            min_lon, max_lon = min(min_lon, lo), max(max_lon, lo)
            min_lat, max_lat = min(min_lat, la), max(max_lat, la)
        if not ((max_lat - min_lat) > 2 * (max_lon - min_lon)):
            break
        for i in range(n):
            xs[i], ys[i] = _rotate(xs[i], ys[i], COS_CW, SIN_CW)
        turns += 1
    ax, ay, bx, by = xs[0], ys[0], xs[n - 1], ys[n - 1]
    mean_lon = 0.0
    mean_lat = 0.0
    for i in range(n):
        mean_lon += xs[i] / PREC
    mean_lon /= n
    for i in range(n):
        mean_lat += ys[i] / PREC
    mean_lat /= n
    var_lon = 0.0
    for i in range(n):
        var_lon += (xs[i] / PREC - mean_lon) ** 2
    var_lon = math.sqrt(var_lon / (n - 1))
    ok = abs(var_lon) >= EPS
    if ok:
        var_lat = 0.0
        for i in range(n):
            var_lat += (ys[i] / PREC - mean_lat) ** 2
        var_lat = math.sqrt(var_lat / (n - 1))
        ok = abs(var_lat) >= EPS
    if ok:
        corr = 0.0
        for i in range(n):
            corr += (xs[i] / PREC - mean_lon) * (ys[i] / PREC - mean_lat) / (var_lon * var_lat)
        corr /= n - 1
        slope = corr * var_lat / var_lon
        intercept = mean_lat - slope * mean_lon
        off = 0.00001
        ax, ay = _fixed(min_lon - off), _fixed(intercept + slope * (min_lon - off))
        bx, by = _fixed(max_lon + off), _fixed(intercept + slope * (max_lon + off))
    for _ in range(turns):
        ax, ay = _rotate(ax, ay, COS_CCW, SIN_CCW)
        bx, by = _rotate(bx, by, COS_CCW, SIN_CCW)
    return ax, ay, bx, by


@kernel(F64(I64, I64, I64, I64, I64, I64), inner=True)
def _compute_angle(fx: int, fy: int, sx: int, sy: int, tx: int, ty: int) -> float:
    """`geo.compute_angle` on the mercator plane."""
    if (fx == sx and fy == sy) or (sx == tx and sy == ty):
        return 180.0
    v1x = (fx - sx) / PREC
    v1y = _lat_to_y(fy / PREC) - _lat_to_y(sy / PREC)
    v2x = (tx - sx) / PREC
    v2y = _lat_to_y(ty / PREC) - _lat_to_y(sy / PREC)
    angle = (math.atan2(v2y, v2x) - math.atan2(v1y, v1x)) * 180.0 / math.pi
    while angle < 0.0:
        angle += 360.0
    return angle


@kernel(F64(F64), inner=True)
def _lat_to_y(lat: float) -> float:
    lat = max(min(lat, 85.051128779806592), -85.051128779806592)
    f = math.sin(RAD * lat)
    return 0.5 / RAD * math.log((1 + f) / (1 - f))


# -- the coordinate extractor (coordinates) ----------------------------------------------------------------------
@kernel(POINT(F64, IA, IA, FA, BOOL, RULERS), inner=True)
def _at_length(dist: float, xs: np.ndarray, ys: np.ndarray, seg: np.ndarray, use_seg: bool,
               rulers: np.ndarray) -> tuple[int, int]:  # fmt: skip
    """`coordinate_at_length` (with its length cache `seg` when `use_seg`)."""
    acc = 0.0
    for i in range(1, len(xs)):
        d = seg[i] if use_seg else _distance(xs[i - 1], ys[i - 1], xs[i], ys[i], rulers)
        if acc + d >= dist:
            return _interpolate(_interp_factor(dist - acc, 0, d), xs[i - 1], ys[i - 1], xs[i], ys[i])
        acc += d
    return xs[-1], ys[-1]


@kernel(FA(IA, IA, F64, RULERS), inner=True)
def _length_cache(xs: np.ndarray, ys: np.ndarray, limit: float, rulers: np.ndarray) -> np.ndarray:
    out = np.zeros(len(xs), np.float64)
    acc = 0.0
    k = 1
    for i in range(1, len(xs)):
        d = _distance(xs[i - 1], ys[i - 1], xs[i], ys[i], rulers)
        acc += d
        out[k] = d
        k += 1
        if acc >= limit:
            break
    return out[:k].copy()


@kernel(LINE_PTS(IA, IA, F64, FA, BOOL, RULERS), inner=True)
def _trim(xs0: np.ndarray, ys0: np.ndarray, desired: float, seg: np.ndarray, use_seg: bool,
          rulers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`trim_to_length` (with its length cache `seg` when `use_seg`)."""
    xs, ys = xs0.copy(), ys0.copy()
    n = len(xs)
    if use_seg and seg[len(seg) - 1] < desired and n >= 2:
        if n > len(seg):
            n = len(seg)
            xs, ys = xs[:n].copy(), ys[:n].copy()
        d = _distance(xs[n - 2], ys[n - 2], xs[n - 1], ys[n - 1], rulers)
        if d > 0:
            xs[n - 1], ys[n - 1] = _interpolate(_interp_factor(seg[len(seg) - 1], 0, d), xs[n - 2], ys[n - 2],
                                                xs[n - 1], ys[n - 1])  # fmt: skip
        return xs, ys
    acc = 0.0
    for i in range(1, n):
        nxt = seg[i] if use_seg else acc + _distance(xs[i - 1], ys[i - 1], xs[i], ys[i], rulers)
        if nxt >= desired:
            px, py = _interpolate(_interp_factor(desired, acc, nxt), xs[i - 1], ys[i - 1], xs[i], ys[i])
            xs, ys = xs[: i + 1].copy(), ys[: i + 1].copy()
            xs[i], ys[i] = px, py
            break
        acc = nxt
    return xs, ys


@kernel(LINE_PTS(IA, IA, F64, RULERS), inner=True)
def _trim_front(xs: np.ndarray, ys: np.ndarray, desired: float, rulers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    acc = 0.0
    idx = 0
    for j in range(1, len(xs)):
        nxt = acc + _distance(xs[idx], ys[idx], xs[j], ys[j], rulers)
        if nxt >= desired:
            px, py = _interpolate(_interp_factor(desired, acc, nxt), xs[idx], ys[idx], xs[j], ys[j])
            ox, oy = xs[idx:].copy(), ys[idx:].copy()
            ox[0], oy[0] = px, py
            return ox, oy
        acc = nxt
        idx = j
    return xs[:0].copy(), ys[:0].copy()


@kernel(POINT(I64, I64, I64, I64, I64, I64, RULERS), inner=True)
def _corrected(fx: int, fy: int, bx: int, by: int, hx: int, hy: int, rulers: np.ndarray) -> tuple[int, int]:
    if _distance(bx, by, hx, hy, rulers) < 2.0:
        return hx, hy
    return hx - int(90 * (bx - fx) / 100), hy - int(90 * (by - fy) / 100)


@kernel(LINE_PTS(IA, IA, F64, F64, RULERS), inner=True)
def _sample(xs: np.ndarray, ys: np.ndarray, max_len: float, rate: float,
            rulers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    cap = 16
    ox, oy = np.empty(cap, np.int64), np.empty(cap, np.int64)
    ox[0], oy[0] = xs[0], ys[0]
    k = 1
    carry = 0.0
    total = 0.0
    for i in range(1, len(xs)):
        if total > max_len:
            break
        d = _distance(xs[i - 1], ys[i - 1], xs[i], ys[i], rulers)
        if carry + d >= rate:
            base = rate - carry
            cnt = int((min(max_len - total, d) + carry) // rate)
            for j in range(cnt):
                if k == cap:
                    cap *= 2
                    nx, ny = np.empty(cap, np.int64), np.empty(cap, np.int64)
                    for q in range(k):  # a loop: a slice assignment lowered to 2 s of compile
                        nx[q], ny[q] = ox[q], oy[q]
                    ox, oy = nx, ny
                ox[k], oy[k] = _interpolate(_interp_factor(base + j * rate, 0, d), xs[i - 1], ys[i - 1], xs[i], ys[i])
                k += 1
            carry = (d + carry) - cnt * rate
        else:
            carry += d
        total += d
    return ox[:k].copy(), oy[:k].copy()


@kernel(LINE(IA, IA, RULERS), inner=True)
def _regression_line(xs: np.ndarray, ys: np.ndarray, rulers: np.ndarray) -> tuple[int, int, int, int]:
    sx, sy = _sample(xs, ys, FAR_LOOKAHEAD, 1.0, rulers)
    n = len(xs)
    if len(sx) < 2:
        return xs[0], ys[0], xs[n - 1], ys[n - 1]
    ax, ay, bx, by = _regression(sx, sy)
    p0x, p0y = _project(ax, ay, bx, by, xs[0], ys[0])
    p1x, p1y = _project(ax, ay, bx, by, xs[n - 1], ys[n - 1])
    return p0x, p0y, p1x, p1y


@kernel(F64(IA, IA, I64, I64, I64, I64, I64, I64, RULERS), inner=True)
def _max_deviation(xs: np.ndarray, ys: np.ndarray, lo: int, hi: int, ax: int, ay: int, bx: int, by: int,
                   rulers: np.ndarray) -> float:  # fmt: skip
    """The largest distance of the points `lo:hi` from segment a-b."""
    best = 0.0
    for i in range(lo, hi):
        px, py = _project(ax, ay, bx, by, xs[i], ys[i])
        best = max(best, _distance(px, py, xs[i], ys[i], rulers))
    return best


@kernel(BOOL(I64, I64, I64, I64, I64, I64), inner=True)
def _is_ccw(ax: int, ay: int, bx: int, by: int, cx: int, cy: int) -> bool:
    x1, y1 = ax / PREC, ay / PREC
    x2, y2 = bx / PREC, by / PREC
    x3, y3 = cx / PREC, cy / PREC
    return 0.5 * (-x2 * y1 + x3 * y1 + x1 * y2 - x3 * y2 - x1 * y3 + x2 * y3) > 0


@kernel(BOOL(IA, IA, FA, F64, F64, BOOL, RULERS), inner=True)
def _is_curve(xs: np.ndarray, ys: np.ndarray, seg: np.ndarray, seg_len: float, lane_width: float,
              roundabout: bool, rulers: np.ndarray) -> bool:  # fmt: skip
    if roundabout:
        return True
    n = len(xs)
    b0 = _bearing(xs[0], ys[0], xs[1], ys[1], rulers)
    b1 = _bearing(xs[n - 2], ys[n - 2], xs[n - 1], ys[n - 1], rulers)
    if _deviation(b0, b1) <= 0.5 * 40.0:
        return False
    if n > 3:
        ccw = _is_ccw(xs[0], ys[0], xs[n - 1], ys[n - 1], xs[1], ys[1])
        for i in range(2, n - 1):
            if _is_ccw(xs[0], ys[0], xs[n - 1], ys[n - 1], xs[i], ys[i]) != ccw:
                return False
    devs = np.empty(n, np.float64)
    for i in range(n):
        px, py = _project(xs[0], ys[0], xs[n - 1], ys[n - 1], xs[i], ys[i])
        devs[i] = _distance(px, py, xs[i], ys[i], rulers)
    if n == 3:
        max_i, max_d = 1, devs[1]
    else:
        k = 1
        while k + 1 < n and not (devs[k + 1] < devs[k]):
            k += 1
        one_past = k + 1
        if one_past >= n:
            max_i, max_d = n - 1, 0.0
        else:
            for j in range(one_past, n - 1):
                if devs[j + 1] > devs[j]:
                    return False
            max_i, max_d = one_past - 1, devs[one_past - 1]
    dist_to_max = 0.0
    for i in range(min(max_i + 1, len(seg))):
        dist_to_max += seg[i]
    if (dist_to_max <= 0.35 * seg_len or max_d < max(0.3 * lane_width, 0.5 * LANE_WIDTH)) and (
        seg_len > NO_LANES_LOOKAHEAD
    ):
        return False
    na = n - 2
    angles = np.empty(max(na, 0), np.float64)
    for i in range(na):
        angles[i] = _compute_angle(xs[i], ys[i], xs[i + 1], ys[i + 1], xs[i + 2], ys[i + 2])
    last_was_straight = False
    straight = max(0.0, seg[1] - lane_width)
    it = 1
    valid = True
    for j in range(1, na):
        prev, cur = angles[j - 1], angles[j]
        both_turn = _deviation(prev, 180.0) > 25.0 and _deviation(cur, 180.0) > 25.0
        switches = (prev > 180.0) == (cur < 180.0)
        if both_turn and switches:
            valid = False
            break
        is_straight = _deviation(cur, 180.0) < 5
        it += 1
        if is_straight:
            straight += seg[it]
            if last_was_straight and straight > 0.3 * seg_len:
                valid = False
                break
        elif straight > 0.3 * seg_len:
            valid = False
            break
        else:
            straight = seg[it]
        last_was_straight = is_straight
    return seg_len > 2 * lane_width and valid


@kernel(BOOL(IA, IA, I64, F64, F64, FA, I64, RULERS), inner=True)
def _is_direct_offset(xs: np.ndarray, ys: np.ndarray, straight_index: int, straight_dist: float, seg_len: float,
                      seg: np.ndarray, lanes: int, rulers: np.ndarray) -> bool:  # fmt: skip
    n = len(xs)
    oi = max(1, straight_index)
    if oi + 1 >= n:
        return False
    s = 0.0
    for i in range(min(oi + 1, len(seg))):
        s += seg[i]
    if s - 0.5 * lanes * LANE_WIDTH >= LANE_WIDTH:
        return False
    if seg_len < 0.4 * FAR_LOOKAHEAD:
        return False
    if (seg_len - max(straight_dist, seg[1])) < 0.1 * seg_len:
        return False
    k = oi
    while k < len(seg) and not (seg[k] >= 30):
        k += 1
    end = min(n, k + 1)
    return 0.5 * LANE_WIDTH > _max_deviation(xs, ys, oi, end, xs[oi], ys[oi], xs[end - 1], ys[end - 1], rulers)


@kernel(POINT(I64, I64, BOOL, IA, IA, I64, IA, RULERS), inner=True)
def _representative(vx: int, vy: int, self_loop: bool, xs0: np.ndarray, ys0: np.ndarray, lanes: int,
                    attr: np.ndarray, rulers: np.ndarray) -> tuple[int, int]:  # fmt: skip
    """`coordinates.representative` of the edge with points `xs0, ys0` leaving node (vx, vy); `attr` its arc's
    attribute row, `self_loop` whether it returns to the node."""
    xs, ys = xs0, ys0
    n = len(xs)
    if self_loop:
        return xs[1], ys[1]
    if n <= 2:
        return xs[n - 1], ys[n - 1]
    skip = 2.0
    none = np.zeros(1, np.float64)
    if attr[A_ROUNDABOUT] or attr[A_CIRCULAR]:
        return _at_length(skip, xs, ys, none, False, rulers)
    if attr[A_IGNORE]:
        xs, ys = _trim(xs, ys, NO_LANES_LOOKAHEAD, none, False, rulers)
        n = len(xs)
        if n > 2 and _distance(vx, vy, xs[1], ys[1], rulers) < LANE_WIDTH:
            init = _distance(vx, vy, xs[1], ys[1], rulers)
            total = _distance(vx, vy, xs[n - 1], ys[n - 1], rulers)
            if init > LANE_WIDTH and total > init:
                return _corrected(vx, vy, xs[1], ys[1], xs[n - 1], ys[n - 1], rulers)
        return xs[n - 1], ys[n - 1]
    first_distance = _distance(xs[0], ys[0], xs[1], ys[1], rulers)
    if attr[A_MOTORWAY]:
        factor = 2.5
    elif attr[A_PRIO] == TRUNK:
        factor = 2.0
    elif attr[A_PRIO] == PRIMARY:
        factor = 1.5
    else:
        factor = 1.0
    considered = factor * (2 if lanes == 0 else lanes)
    if first_distance > considered * LANE_WIDTH + NO_LANES_LOOKAHEAD:
        return xs[1], ys[1]
    lookahead = FAR_LOOKAHEAD + considered * LANE_WIDTH
    seg = _length_cache(xs, ys, lookahead, rulers)
    xs, ys = _trim(xs, ys, lookahead, seg, True, rulers)
    n = len(xs)
    seg[len(seg) - 1] = min(seg[len(seg) - 1], lookahead)
    total = 0.0
    for d in seg:
        total += d
    if n == 2 or total <= skip:
        return xs[n - 1], ys[n - 1]
    if _max_deviation(xs, ys, 0, n, xs[0], ys[0], xs[n - 1], ys[n - 1], rulers) < 0.5 * LANE_WIDTH:
        if xs[0] == xs[n - 1] and ys[0] == ys[n - 1]:
            return _at_length(skip, xs, ys, none, False, rulers)
        return xs[n - 1], ys[n - 1]
    straight_dist = seg[1]
    index = 2
    while index < n:
        if _max_deviation(xs, ys, 0, index, xs[0], ys[0], xs[index], ys[index], rulers) < 0.25 * LANE_WIDTH:
            straight_dist += seg[index]
            index += 1
        else:
            break
    straight_index = index - 1
    if straight_dist >= considered * LANE_WIDTH + NO_LANES_LOOKAHEAD:
        return _at_length(5.0, xs, ys, seg, True, rulers)
    r0x, r0y, r1x, r1y = _regression_line(xs, ys, rulers)
    if _max_deviation(xs, ys, 0, n, r0x, r0y, r1x, r1y, rulers) < 0.35 * LANE_WIDTH:
        fx, fy = _project(r0x, r0y, r1x, r1y, xs[0], ys[0])
        bx, by = _project(r0x, r0y, r1x, r1y, xs[n - 1], ys[n - 1])
        return _corrected(vx, vy, fx, fy, bx, by, rulers)
    if _is_direct_offset(xs, ys, straight_index, straight_dist, total, seg, int(considered), rulers):
        oi = max(1, straight_index)
        return _corrected(vx, vy, xs[oi], ys[oi], xs[oi + 1], ys[oi + 1], rulers)
    if _is_curve(xs, ys, seg, total, considered * LANE_WIDTH, bool(attr[A_ROUNDABOUT]), rulers):
        if total <= skip:
            return xs[n - 1], ys[n - 1]
        xs, ys = _trim(xs, ys, 3 * skip, seg, True, rulers)
        n = len(xs)
        seg = seg[:n].copy()
        seg[len(seg) - 1] = _distance(xs[n - 2], ys[n - 2], xs[n - 1], ys[n - 1], rulers)
        hx, hy = xs[n - 1], ys[n - 1]
        xs, ys = _trim(xs, ys, 2 * skip, seg, True, rulers)
        n = len(xs)
        return _corrected(vx, vy, xs[n - 1], ys[n - 1], hx, hy, rulers)
    trimming = 0.8 * (considered * LANE_WIDTH)
    tx, ty = _trim_front(xs, ys, 0.8 * trimming, rulers)
    if len(tx) >= 2 and total >= trimming + 2:
        a0x, a0y, a1x, a1y = _regression_line(tx, ty, rulers)
        if _max_deviation(tx, ty, 0, len(tx), a0x, a0y, a1x, a1y, rulers) < 0.5 * LANE_WIDTH:
            return _corrected(vx, vy, a0x, a0y, a1x, a1y, rulers)
    rx, ry = _at_length(NO_LANES_LOOKAHEAD, xs, ys, seg, True, rulers)
    if rx != vx or ry != vy:
        return rx, ry
    for i in range(n):
        if xs[i] != vx or ys[i] != vy:
            return xs[i], ys[i]
    return rx, ry

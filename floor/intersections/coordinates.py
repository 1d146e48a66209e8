"""The coordinate extractor: where a road at a junction heads, judged from its first metres (OSRM's
`src/extractor/intersection/coordinate_extractor.cpp`).

`representative` picks the point along a road that shows where a driver perceives it heading: straight roads look far
ahead, curves and lane offsets near the junction are corrected for; `close_to_turn` is the point right after the
junction. The polyline helpers (lengths, trimming, sampling, regression lines) serve it and the merge detector.
"""

from __future__ import annotations

from collections.abc import Sequence

from floor.intersections import geo
from floor.intersections.geo import Coord
from floor.intersections.graph import PRIMARY, TRUNK, GuidanceGraph
from floor.intersections.intersection import (
    ASSUMED_LANE_WIDTH,
    FUZZY_ANGLE_DIFFERENCE,
    NARROW_TURN_ANGLE,
    STRAIGHT_ANGLE,
)

DESIRED_COORDINATE_DIFFERENCE = 2.0
LOOKAHEAD_DISTANCE_WITHOUT_LANES = 10.0
FAR_LOOKAHEAD_DISTANCE = 40.0
ASSUMED_LANE_COUNT = 2


def _interp_factor(desired: float, first: float, second: float) -> float:
    seg = second - first
    if seg <= 0:
        return 0.0
    return max(0.0, min((desired - first) / seg, 1.0))


def coordinate_at_length(dist: float, coords: Sequence[Coord], cache: Sequence[float] | None = None) -> Coord:
    """The point `dist` metres along `coords` (the last point when shorter)."""
    acc = 0.0
    if cache is not None:
        for i in range(1, len(coords)):
            seg = cache[i]
            if acc + seg >= dist:
                return geo.interpolate(_interp_factor(dist - acc, 0, seg), coords[i - 1], coords[i])
            acc += seg
        return coords[-1]
    last = coords[0]
    for i in range(1, len(coords)):
        seg = geo.distance(last, coords[i])
        if acc + seg >= dist:
            return geo.interpolate(_interp_factor(dist - acc, 0, seg), coords[i - 1], coords[i])
        acc += seg
        last = coords[i]
    return coords[-1]


def length_cache(coords: Sequence[Coord], limit: float) -> list[float]:
    """Segment lengths from the start until `limit` metres are passed (OSRM's PrepareLengthCache)."""
    out = [0.0]
    acc = 0.0
    for i in range(1, len(coords)):
        d = geo.distance(coords[i - 1], coords[i])
        acc += d
        out.append(d)
        if acc >= limit:
            break
    return out


def trim_to_length(coords: list[Coord], desired: float, cache: Sequence[float] | None = None) -> list[Coord]:
    """The points up to `desired` metres along `coords`, the last one interpolated (TrimCoordinatesToLength)."""
    coords = list(coords)
    if cache is not None and cache[-1] < desired and len(coords) >= 2:
        if len(coords) > len(cache):
            del coords[len(cache) :]
        d = geo.distance(coords[-2], coords[-1])
        if d > 0:
            coords[-1] = geo.interpolate(_interp_factor(cache[-1], 0, d), coords[-2], coords[-1])
        return coords
    acc = 0.0
    for i in range(1, len(coords)):
        nxt = cache[i] if cache is not None else acc + geo.distance(coords[i - 1], coords[i])
        if nxt >= desired:
            p = geo.interpolate(_interp_factor(desired, acc, nxt), coords[i - 1], coords[i])
            del coords[i + 1 :]
            coords[-1] = p
            break
        acc = nxt
    return coords


def trim_front(coords: Sequence[Coord], desired: float) -> list[Coord]:
    """The points after the first `desired` metres (the first one interpolated), [] when too short."""
    acc = 0.0
    idx = 0
    for nxt_i in range(1, len(coords)):
        nxt = acc + geo.distance(coords[idx], coords[nxt_i])
        if nxt >= desired:
            p = geo.interpolate(_interp_factor(desired, acc, nxt), coords[idx], coords[nxt_i])
            out = list(coords[idx:])
            out[0] = p
            return out
        acc = nxt
        idx = nxt_i
    return []


def corrected(fix: Coord, base: Coord, head: Coord) -> Coord:
    """Move `head` back by 90 % of the offset base - fix (GetCorrectedCoordinate)."""
    if geo.distance(base, head) < DESIRED_COORDINATE_DIFFERENCE:
        return head

    def part(d: int) -> int:
        v = 90 * d
        return int(v / 100)  # C integer division

    return head[0] - part(base[0] - fix[0]), head[1] - part(base[1] - fix[1])


def sample(coords: Sequence[Coord], max_len: float, rate: float) -> list[Coord]:
    """Points every `rate` metres along `coords` up to `max_len` (SampleCoordinates)."""
    out = [coords[0]]
    carry = total = 0.0
    for i in range(1, len(coords)):
        if total > max_len:
            break
        a, b = coords[i - 1], coords[i]
        d = geo.distance(a, b)
        if carry + d >= rate:
            base = rate - carry
            n = int((min(max_len - total, d) + carry) // rate)
            for k in range(n):
                out.append(geo.interpolate(_interp_factor(base + k * rate, 0, d), a, b))
            carry = (d + carry) - n * rate
        else:
            carry += d
        total += d
    return out


def regression_line(coords: Sequence[Coord]) -> tuple[Coord, Coord]:
    """The regression line of a sampled polyline, as the projections of its first and last point."""
    s = sample(coords, FAR_LOOKAHEAD_DISTANCE, 1)
    if len(s) < 2:
        return coords[0], coords[-1]
    a, b = geo.regression(s)
    return geo.project(a, b, coords[0])[1], geo.project(a, b, coords[-1])[1]


def max_deviation(coords: Sequence[Coord], a: Coord, b: Coord) -> float:
    """Largest distance of the points from the segment a-b."""
    best = 0.0
    for c in coords:
        best = max(best, geo.distance(geo.project(a, b, c)[1], c))
    return best


def _is_curve(coords: list[Coord], seg: list[float], seg_len: float, lane_width: float, roundabout: bool) -> bool:
    if roundabout:
        return True
    b0 = geo.bearing(coords[0], coords[1])
    b1 = geo.bearing(coords[-2], coords[-1])
    if geo.deviation(b0, b1) <= 0.5 * NARROW_TURN_ANGLE:
        return False

    def dev(p: Coord) -> float:
        return geo.distance(geo.project(coords[0], coords[-1], p)[1], p)

    if len(coords) > 3:
        ccw = geo.is_ccw(coords[0], coords[-1], coords[1])
        if any(geo.is_ccw(coords[0], coords[-1], c) != ccw for c in coords[2:-1]):
            return False
    # increasing deviation up to a maximum, decreasing after
    if len(coords) == 3:
        ok, max_i, max_d = True, 1, dev(coords[1])
    else:
        devs = [dev(c) for c in coords]
        k = 1
        while k + 1 < len(coords) and not (devs[k + 1] < devs[k]):  # is_sorted_until with `increasing`
            k += 1
        one_past = k + 1
        if one_past >= len(coords):
            ok, max_i, max_d = True, len(coords) - 1, 0.0
        elif all(not (devs[j + 1] > devs[j]) for j in range(one_past, len(coords) - 1)):
            ok, max_i, max_d = True, one_past - 1, devs[one_past - 1]
        else:
            ok, max_i, max_d = False, 0, 0.0
    if not ok:
        return False
    dist_to_max = sum(seg[: max_i + 1])
    if (dist_to_max <= 0.35 * seg_len or max_d < max(0.3 * lane_width, 0.5 * ASSUMED_LANE_WIDTH)) and (
        seg_len > LOOKAHEAD_DISTANCE_WITHOUT_LANES
    ):
        return False
    angles = [geo.compute_angle(coords[i], coords[i + 1], coords[i + 2]) for i in range(len(coords) - 2)]
    last_was_straight = False
    straight = max(0.0, seg[1] - lane_width)
    it = 1
    valid = True
    for j in range(1, len(angles)):
        prev, cur = angles[j - 1], angles[j]
        both_turn = (
            geo.deviation(prev, STRAIGHT_ANGLE) > FUZZY_ANGLE_DIFFERENCE
            and geo.deviation(cur, STRAIGHT_ANGLE) > FUZZY_ANGLE_DIFFERENCE
        )
        switches = (prev > STRAIGHT_ANGLE) == (cur < STRAIGHT_ANGLE)
        if both_turn and switches:
            valid = False
            break
        is_straight = geo.deviation(cur, STRAIGHT_ANGLE) < 5
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


def _is_direct_offset(coords: list[Coord], straight_index: int, straight_dist: float, seg_len: float,
                      seg: list[float], lanes: float) -> bool:  # fmt: skip
    offset_index = max(1, straight_index)
    if offset_index + 1 >= len(coords):
        return False
    if sum(seg[: offset_index + 1]) - 0.5 * lanes * ASSUMED_LANE_WIDTH >= ASSUMED_LANE_WIDTH:
        return False
    if seg_len < 0.4 * FAR_LOOKAHEAD_DISTANCE:
        return False
    if (seg_len - max(straight_dist, seg[1])) < 0.1 * seg_len:
        return False
    k = offset_index
    while k < len(seg) and not (seg[k] >= 30):
        k += 1
    end = min(len(coords), k + 1)
    return 0.5 * ASSUMED_LANE_WIDTH > max_deviation(coords[offset_index:end], coords[offset_index], coords[end - 1])


def close_to_turn(gg: GuidanceGraph, e: int) -> Coord:
    """GetCoordinateCloseToTurn: the first point along edge e more than a metre from its start."""
    g = gg.geometry(e)
    start = g[0]
    for p in g[1:]:
        if geo.distance(p, start) > 1:
            return p
    return gg.coord(gg.target(e))


def representative(gg: GuidanceGraph, v: int, e: int, lanes: int, coords: list[Coord]) -> Coord:
    """ExtractRepresentativeCoordinate: the point along edge e (leaving v) that best shows where it heads."""
    to_node = gg.target(e)
    start = gg.coord(v)
    if v == to_node:
        return coords[1]
    if len(coords) <= 2:
        return coords[-1]
    skip = 2.0
    data = gg.data(e)
    if data.roundabout or data.circular:
        return coordinate_at_length(skip, coords)
    turn = start
    if data.ignorable:
        coords = trim_to_length(coords, LOOKAHEAD_DISTANCE_WITHOUT_LANES)
        if len(coords) > 2 and geo.distance(turn, coords[1]) < ASSUMED_LANE_WIDTH:
            init = geo.distance(turn, coords[1])
            total = geo.distance(turn, coords[-1])
            if init > ASSUMED_LANE_WIDTH and total > init:
                return corrected(turn, coords[1], coords[-1])
        return coords[-1]
    first_distance = geo.distance(coords[0], coords[1])
    if data.motorway_flag:  # motorway or ramp class
        factor = 2.5
    elif data.priority == TRUNK:
        factor = 2.0
    elif data.priority == PRIMARY:
        factor = 1.5
    else:
        factor = 1.0
    considered = factor * (ASSUMED_LANE_COUNT if lanes == 0 else lanes)
    if first_distance > considered * ASSUMED_LANE_WIDTH + LOOKAHEAD_DISTANCE_WITHOUT_LANES:
        return coords[1]
    lookahead = FAR_LOOKAHEAD_DISTANCE + considered * ASSUMED_LANE_WIDTH
    seg = length_cache(coords, lookahead)
    coords = trim_to_length(coords, lookahead, seg)
    seg[-1] = min(seg[-1], lookahead)
    total = sum(seg)
    if len(coords) == 2 or total <= skip:
        return coords[-1]
    if max_deviation(coords, coords[0], coords[-1]) < 0.5 * ASSUMED_LANE_WIDTH:
        if coords[0] == coords[-1]:
            return coordinate_at_length(skip, coords)
        return coords[-1]
    straight_dist = seg[1]
    index = 2
    while index < len(coords):
        if max_deviation(coords[:index], coords[0], coords[index]) < 0.25 * ASSUMED_LANE_WIDTH:
            straight_dist += seg[index]
            index += 1
        else:
            break
    straight_index = index - 1
    if straight_dist >= considered * ASSUMED_LANE_WIDTH + LOOKAHEAD_DISTANCE_WITHOUT_LANES:
        return coordinate_at_length(5, coords, seg)
    rl = regression_line(coords)
    if max_deviation(coords, rl[0], rl[1]) < 0.35 * ASSUMED_LANE_WIDTH:
        front = geo.project(rl[0], rl[1], coords[0])[1]
        back = geo.project(rl[0], rl[1], coords[-1])[1]
        return corrected(turn, front, back)
    if _is_direct_offset(coords, straight_index, straight_dist, total, seg, int(considered)):
        oi = max(1, straight_index)
        return corrected(turn, coords[oi], coords[oi + 1])
    if _is_curve(coords, seg, total, considered * ASSUMED_LANE_WIDTH, data.roundabout):
        if total <= skip:
            return coords[-1]
        coords = trim_to_length(coords, 3 * skip, seg)
        seg = seg[: len(coords)]
        seg[-1] = geo.distance(coords[-2], coords[-1])
        head = coords[-1]
        coords = trim_to_length(coords, 2 * skip, seg)
        return corrected(turn, coords[-1], head)
    trimming = 0.8 * (considered * ASSUMED_LANE_WIDTH)
    trimmed = trim_front(coords, 0.8 * trimming)
    if len(trimmed) >= 2 and total >= trimming + 2:
        rt = regression_line(trimmed)
        if max_deviation(trimmed, rt[0], rt[1]) < 0.5 * ASSUMED_LANE_WIDTH:
            return corrected(turn, rt[0], rt[1])
    result = coordinate_at_length(LOOKAHEAD_DISTANCE_WITHOUT_LANES, coords, seg)
    if result != start:
        return result
    for c in coords:
        if c != start:
            return c
    return result

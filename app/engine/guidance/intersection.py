"""The intersection model: the roads at a junction as a driver arriving on one of them perceives them.

A port of OSRM's `extractor/intersection` (coordinate_extractor, intersection_analysis, mergable_road_detector,
node_based_graph_walker) onto `GuidanceGraph`:

- each road's *perceived bearing* comes from a representative coordinate along it: straight roads look far
  ahead, curves and lane offsets near the junction are corrected for, as in OSRM's CoordinateExtractor;
- the two carriageways of a dual road (one entry, one exit, same name and class, splitting into a narrow triangle,
  a traffic island or running parallel) merge into one road with the bisecting bearing, at the junction and
  (bearing corrections) at the neighbouring one;
- the *view* from an incoming edge orders the roads counter-clockwise from the u-turn (index 0, angle 0): each
  with its turn angle (180 = straight on, < 180 to the right) and whether it may be entered (oneways, u-turns only
  at dead ends and where no other exit exists, no turning against a roundabout).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from . import geo
from .geo import Coord
from .graph import CONNECTIVITY, PRIMARY, SIDE_RESIDENTIAL, TRUNK, GuidanceGraph

STRAIGHT_ANGLE = 180.0
ORTHOGONAL_ANGLE = 90.0
MAXIMAL_ALLOWED_NO_TURN_DEVIATION = 3.0
NARROW_TURN_ANGLE = 40.0
GROUP_ANGLE = 60.0
FUZZY_ANGLE_DIFFERENCE = 25.0
ASSUMED_LANE_WIDTH = 3.25
MERGABLE_ANGLE_DIFFERENCE = 95.0

DESIRED_COORDINATE_DIFFERENCE = 2.0
LOOKAHEAD_DISTANCE_WITHOUT_LANES = 10.0
FAR_LOOKAHEAD_DISTANCE = 40.0
ASSUMED_LANE_COUNT = 2
EPSILON = 2.220446049250313e-16

# turn types (OSRM's TurnType values)
INVALID, NEW_NAME, CONTINUE, TURN, MERGE, ON_RAMP, OFF_RAMP, FORK, END_OF_ROAD, NOTIFICATION = range(10)
ENTER_ROUNDABOUT, ENTER_AND_EXIT_ROUNDABOUT, ENTER_ROTARY, ENTER_AND_EXIT_ROTARY = 10, 11, 12, 13
ENTER_ROUNDABOUT_INTERSECTION, ENTER_AND_EXIT_ROUNDABOUT_INTERSECTION = 14, 15
NO_TURN, SUPPRESSED, ENTER_ROUNDABOUT_AT_EXIT, EXIT_ROUNDABOUT, ENTER_ROTARY_AT_EXIT, EXIT_ROTARY = (
    17,
    18,
    19,
    20,
    21,
    22,
)
ENTER_ROUNDABOUT_INTERSECTION_AT_EXIT, EXIT_ROUNDABOUT_INTERSECTION, STAY_ON_ROUNDABOUT, SLIPROAD = 23, 24, 25, 26

# direction modifiers
UTURN, SHARP_RIGHT, RIGHT, SLIGHT_RIGHT, STRAIGHT, SLIGHT_LEFT, LEFT, SHARP_LEFT = range(8)


def turn_direction(angle: float) -> int:
    """OSRM's `getTurnDirection`: the modifier of a turn angle (180 straight, 0 u-turn)."""
    if 0 < angle < 60:
        return SHARP_RIGHT
    if 60 <= angle < 140:
        return RIGHT
    if 140 <= angle < 160:
        return SLIGHT_RIGHT
    if 160 <= angle <= 200:
        return STRAIGHT
    if 200 < angle <= 220:
        return SLIGHT_LEFT
    if 220 < angle <= 300:
        return LEFT
    if 300 < angle < 360:
        return SHARP_LEFT
    return UTURN


class Road:
    """One road of an intersection (OSRM's IntersectionViewData / ConnectedRoad): the edge leaving along it, its
    bearings, the segment length, whether it may be entered, the turn angle and (once classified) the instruction
    (`kind`, `modifier`) and the lane tuple of the turn."""

    __slots__ = ("eid", "initial_bearing", "perceived_bearing", "segment_length", "entry_allowed", "angle", "kind",
                 "modifier", "lanes")  # fmt: skip

    def __init__(self, eid: int, initial: float, perceived: float, length: float, entry: bool = False,
                 angle: float = 0.0) -> None:  # fmt: skip
        self.eid = eid
        self.initial_bearing = initial
        self.perceived_bearing = perceived
        self.segment_length = length
        self.entry_allowed = entry
        self.angle = angle
        self.kind = INVALID
        self.modifier = UTURN
        self.lanes: tuple[int, int, tuple[int, ...]] | None = None  # (lanes in turn, first from right, masks)

    def copy(self) -> Road:
        """A copy of the road with its instruction and lanes (views are shared between caches)."""
        r = Road(self.eid, self.initial_bearing, self.perceived_bearing, self.segment_length, self.entry_allowed,
                 self.angle)  # fmt: skip
        r.kind, r.modifier, r.lanes = self.kind, self.modifier, self.lanes
        return r

    def mirror(self) -> None:
        """Make a left turn an equivalent right turn and vice versa (angle and modifier)."""
        if geo.deviation(self.angle, 0) > EPSILON:
            self.angle = 360.0 - self.angle
            self.modifier = (0, 7, 6, 5, 4, 3, 2, 1)[self.modifier]

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return (f"Road(e={self.eid} entry={self.entry_allowed} angle={self.angle:.1f} "
                f"bearing={self.perceived_bearing:.1f} kind={self.kind} mod={self.modifier})")  # fmt: skip


Intersection = list[Road]


def closest_turn(inter: Sequence[Road], angle: float, skip: Callable[[Road], bool] | None = None) -> int | None:
    """Index of the road whose angle is closest to `angle` (roads where `skip` is true left out; None if all are)."""
    best, key = None, None
    for i, r in enumerate(inter):
        k = (bool(skip(r)) if skip else False, geo.deviation(r.angle, angle))
        if key is None or k < key:
            best, key = i, k
    if best is None or (skip is not None and skip(inter[best])):
        return None
    return best


def closest_bearing(inter: Sequence[Road], b: float) -> int:
    """Index of the road whose perceived bearing is closest to b."""
    return min(range(len(inter)), key=lambda i: geo.deviation(inter[i].perceived_bearing, b))


def count_enterable(inter: Sequence[Road]) -> int:
    return sum(1 for r in inter if r.entry_allowed)


def is_dead_end(inter: Sequence[Road]) -> bool:
    return not any(r.entry_allowed for r in inter[1:])


def rightmost(inter: Sequence[Road]) -> Road:
    return inter[1] if len(inter) > 1 else inter[0]


def leftmost(inter: Sequence[Road]) -> Road:
    return inter[-1] if len(inter) > 1 else inter[0]


# -- the coordinate extractor ---------------------------------------------------------------------------------------
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


class Extractor:
    """OSRM's CoordinateExtractor, intersection geometry and views over a GuidanceGraph, with per-node caches."""

    def __init__(self, gg: GuidanceGraph) -> None:
        self.gg = gg
        self._geoms: dict[tuple[int, bool], list[tuple[int, float, float, float]]] = {}
        self._merged: dict[int, tuple[dict[int, tuple[float, float, float]], frozenset[int]]] = {}
        self._segregated: dict[int, bool] = {}
        self._max_lanes: dict[int, int] = {}
        self._connected: dict[tuple[int, bool], Intersection] = {}

    def clear_caches(self) -> None:
        """Forget what was learnt per junction (bounds memory on large graphs)."""
        for cache in (self._geoms, self._merged, self._segregated, self._max_lanes, self._connected):
            cache.clear()

    # -- coordinates ---------------------------------------------------------------------------------------------
    def close_to_turn(self, e: int) -> Coord:
        """GetCoordinateCloseToTurn: the first point along edge e more than a metre from its start."""
        g = self.gg.geometry(e)
        start = g[0]
        for p in g[1:]:
            if geo.distance(p, start) > 1:
                return p
        return self.gg.coord(self.gg.target(e))

    def representative(self, v: int, e: int, lanes: int, coords: list[Coord]) -> Coord:
        """ExtractRepresentativeCoordinate: the point along edge e (leaving v) that best shows where it heads."""
        gg = self.gg
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

    def along_road(self, v: int, e: int, lanes: int) -> Coord:
        """GetCoordinateAlongRoad."""
        return self.representative(v, e, lanes, list(self.gg.geometry(e)))

    # -- intersection geometry -----------------------------------------------------------------------------------
    def max_lanes(self, v: int) -> int:
        """The most lanes any road at v has: the coordinate extractor judges the width of the junction by it."""
        n = self._max_lanes.get(v)
        if n is None:
            n = self._max_lanes[v] = max((self.gg.data(e).num_lanes for e in self.gg.adjacent(v)), default=0)
        return n

    def outgoing(self, v: int, use_close: bool) -> list[tuple[int, float, float, float]]:
        """(edge, initial bearing, perceived bearing, length) of every road at v, sorted by perceived bearing."""
        key = (v, use_close)
        r = self._geoms.get(key)
        if r is not None:
            return r
        gg = self.gg
        lanes = self.max_lanes(v)
        degree = gg.out_degree(v)
        out = []
        for e in gg.adjacent(v):
            g = gg.geometry(e)
            close = coordinate_at_length(2.0, g)
            initial = geo.bearing(g[0], close)
            if use_close or degree <= 2:
                rep = self.close_to_turn(e)
            else:
                rep = self.representative(v, e, lanes, list(g))
            perceived = geo.bearing(g[0], rep)
            out.append((e, initial, perceived, geo.length(g)))
        out.sort(key=lambda t: t[2])
        self._geoms[key] = out
        return out

    def merged_geometries(self, v: int) -> tuple[dict[int, tuple[float, float, float]], frozenset[int]]:
        """getIntersectionGeometries: bearings of the roads at v after merging dual carriageways here and at the
        neighbouring intersections; the edges merged away (the entry-only halves)."""
        r = self._merged.get(v)
        if r is not None:
            return r
        gg = self.gg
        geoms = [list(t) for t in self.outgoing(v, False)]
        n = len(geoms)
        merged = [False] * n
        merged_ids: set[int] = set()
        det = MergeDetector(self)
        if n >= 3:
            for i in range(n):
                if det.pair_mergeable(geoms, v, i):
                    nxt = (i + 1) % n
                    merged[i] = merged[nxt] = True
                    _, b = det.merged_bearing(geoms, i, nxt, False)
                    geoms[i][1] = geoms[i][2] = b
                    geoms[nxt][1] = geoms[nxt][2] = b
                    merged_ids.add(geoms[i][0] if gg.data(geoms[i][0]).reversed else geoms[nxt][0])
        if n >= 2:
            for i in range(n):
                g = geoms[i]
                if merged[i] or g[3] > 30.0:
                    continue
                w = gg.target(g[0])
                nb = [list(t) for t in self.outgoing(w, False)]
                m = len(nb)
                if m <= 1:
                    continue
                cur = next((k for k in range(m) if gg.target(nb[k][0]) == v), None)
                if cur is None:
                    continue
                prev = (cur + m - 1) % m
                nxt = (cur + 1) % m
                if det.pair_mergeable(nb, w, prev):
                    ok, b = det.merged_bearing(nb, prev, cur, True)
                    if ok:
                        off = geo.deviation(b, nb[cur][2])
                        g[1] = g[2] = (g[2] + 360.0 - off) % 360.0
                elif det.pair_mergeable(nb, w, cur):
                    ok, b = det.merged_bearing(nb, cur, nxt, True)
                    if ok:
                        off = geo.deviation(b, nb[cur][2])
                        g[1] = g[2] = (g[2] + off) % 360.0
        res = {g[0]: (g[1], g[2], g[3]) for g in geoms}
        r = (res, frozenset(merged_ids))
        self._merged[v] = r
        return r

    def goes_back(self, via: int, to: int) -> bool:
        """Whether leaving by `to` returns to where `via` came from (OSRM: the target of `to` is the source node of
        `via`). Two roads between the same junctions count only without a point between: otherwise OSRM's graph
        compressor keeps a node on one of them, so they lead to different nodes."""
        gg = self.gg
        if to == gg.reverse(via):
            return True
        if gg.target(to) != gg.half_source(via):
            return False
        return len(gg.geometry(via)) == 2 and len(gg.geometry(to)) == 2

    def turn_allowed(self, from_node: int, via: int, to: int, geoms: dict[int, tuple[float, float, float]]) -> bool:
        """isTurnAllowed from edge `via` (arriving at v) onto edge `to` (leaving v)."""
        gg = self.gg
        if gg.data(via).reversed or gg.data(to).reversed:
            return False
        v = gg.target(via)
        from_rev_bearing = geoms[gg.reverse(via)][1]  # reverse(reverse(bearing)) of the incoming entry
        allowed_exits = bidirectional = 0
        rb_from = rb_to = -1
        rb_from_angle = rb_to_angle = 0.0
        for e in gg.adjacent(v):
            d = gg.data(e)
            rev = gg.reverse(e)
            allowed_exits += not d.reversed
            bidirectional += not gg.data(rev).reversed
            if d.roundabout or d.circular:
                if d.reversed:
                    ang = geo.angle_between(geo.reverse(geoms[e][1]), from_rev_bearing)
                    if ang > rb_from_angle:
                        rb_from, rb_from_angle = e, ang
                else:
                    ang = geo.angle_between(from_rev_bearing, geoms[e][1])
                    if ang > rb_to_angle:
                        rb_to, rb_to_angle = e, ang
        if self.goes_back(via, to):
            if gg.out_degree(v) == 1:
                return True
            if allowed_exits == 1 or bidirectional <= 1:
                return True
            lanes = gg.data(via).lanes
            return bool(lanes and any(m & 256 for m in lanes))
        if rb_from >= 0 and rb_to >= 0:
            from_b = geo.reverse(geoms[rb_from][1])
            to_b = geoms[rb_to][1]
            to_edge_b = geoms[to][1]
            rb_angle = geo.angle_between(from_b, to_b)
            rb_from_a = geo.angle_between(from_b, from_rev_bearing)
            rb_to_a = geo.angle_between(from_b, to_edge_b)
            if (rb_from_a < rb_angle and rb_to_a < rb_from_a) or (rb_from_a > rb_angle and rb_to_a > rb_from_a):
                return False
        return True

    def view(self, via: int, geoms: dict[int, tuple[float, float, float]], merged: frozenset[int]) -> Intersection:
        """convertToIntersectionView: the roads at the target of `via` as seen arriving on it."""
        gg = self.gg
        v = gg.target(via)
        from_node = gg.half_source(via)
        back = gg.reverse(via)
        in_b = geo.reverse(geoms[back][1])
        in_init = geo.reverse(geoms[back][0])
        pre: list[tuple[Road, float]] = []
        uturn: Road | None = None
        allowed_uturns = 0
        for e in gg.adjacent(v):
            init_b, perc_b, seg_len = geoms[e]
            allowed = self.turn_allowed(from_node, via, e, geoms)
            turn_angle = math.fmod(geo.round_half_away(geo.angle_between(in_b, perc_b) * 1e8) / 1e8, 360.0)
            initial_angle = geo.angle_between(in_init, init_b)
            if allowed and ((turn_angle < 15 and initial_angle > 180) or (turn_angle > 345 and initial_angle < 180)):
                turn_angle = initial_angle = 0.0
            is_uturn_angle = abs(turn_angle) < EPSILON
            road = Road(e, init_b, perc_b, seg_len, allowed, turn_angle)
            if e == back:
                uturn = road
            elif allowed or (e not in merged and not is_uturn_angle):
                allowed_uturns += is_uturn_angle
                use_turn = (turn_angle > 270 and initial_angle < 90) or (turn_angle < 90 and initial_angle > 270)
                if abs(initial_angle) < EPSILON:
                    adjusted = 360.0 if turn_angle > 180 else 0.0
                elif use_turn:
                    adjusted = turn_angle
                else:
                    adjusted = initial_angle
                pre.append((road, adjusted))
        if uturn is None:  # cannot happen: every incoming edge has a way back
            uturn = Road(back, 0.0, 0.0, 0.0, False, 0.0)
        added = False
        if uturn.entry_allowed or allowed_uturns == 0:
            uturn.angle = 0.0
            pre.insert(0, (uturn, 0.0))
            added = True
        pre.sort(key=lambda t: (t[1], t[0].angle))
        for i in range(len(pre) - 1):
            cur, nxt = pre[i][0], pre[i + 1][0]
            if nxt.angle < cur.angle:
                adj = min(0.5, geo.restrict_angle(360.0 - cur.angle) / 2.0)
                nxt.angle = geo.restrict_angle(cur.angle + adj)
        if not added and not any(abs(r.angle) < EPSILON for r, _ in pre):
            uturn.angle = 0.0
            pre.insert(0, (uturn, 0.0))
        return [r for r, _ in pre]

    def connected_roads(self, via: int, use_close: bool = False) -> Intersection:
        """getConnectedRoads: the view from `via` without merging (bearings close to the turn when `use_close`);
        a fresh copy each time, callers annotate the roads."""
        key = (via, use_close)
        roads = self._connected.get(key)
        if roads is None:
            geoms = {e: (i, p, ln) for e, i, p, ln in self.outgoing(self.gg.target(via), use_close)}
            roads = self._connected[key] = self.view(via, geoms, frozenset())
        return [r.copy() for r in roads]

    def intersection(self, via: int) -> Intersection:
        """The guidance intersection at the target of `via`, with merged roads (what turn analysis reads)."""
        geoms, merged = self.merged_geometries(self.gg.target(via))
        return self.view(via, geoms, merged)

    # -- graph walking --------------------------------------------------------------------------------------------
    def skip_degree_two(self, node: int, edge: int) -> tuple[int, int]:
        """skipDegreeTwoNodes: follow `edge` over intersections of two roads; the last (node, edge)."""
        gg = self.gg
        start = node
        nxt = gg.target(edge)
        seen = 0
        while gg.out_degree(nxt) == 2 and nxt != start and seen < 10000:
            a, b = gg.adjacent(nxt)
            back = gg.reverse(edge)
            edge = b if a == back else a
            node = nxt
            nxt = gg.target(edge)
            seen += 1
        return node, edge

    def traverse(self, node: int, edge: int, acc: object, selector: Callable) -> tuple[int, int] | None:
        """NodeBasedGraphWalker.TraverseRoad."""
        gg = self.gg
        stop = node
        for _ in range(1000):
            acc.update(node, edge, gg.target(edge))  # type: ignore[attr-defined]
            if gg.target(edge) == stop:
                return None
            inter = self.connected_roads(edge, True)
            if len(inter) <= 1:
                return None
            nxt = selector(node, edge, inter)
            if nxt is None:
                return None
            if acc.terminate():  # type: ignore[attr-defined]
                return node, edge
            node = gg.target(edge)
            edge = nxt
        return None

    # -- segregated edges ----------------------------------------------------------------------------------------
    def segregated(self, e: int) -> bool:
        """OSRM's findSegregatedNodes for one edge: a short internal edge of a dual carriageway intersection."""
        r = self._segregated.get(e)
        if r is None:
            r = self._segregated[e] = self._is_segregated(e)
        return r

    def _angle(self, from_node: int, e_in: int, e_out: int) -> float:
        gg = self.gg
        v = gg.target(e_in)
        to_c = self.close_to_turn(e_out)
        from_c = self.close_to_turn(gg.reverse(e_in))
        return geo.compute_angle(from_c, gg.coord(v), to_c)

    def _is_segregated(self, e: int) -> bool:
        gg = self.gg
        d = gg.data(e)
        if d.reversed:
            return False
        n1 = gg.half_source(e)
        n2 = gg.target(e)
        if geo.length(gg.geometry(e)) > 32.0 or d.roundabout or d.circular:
            return False

        def infos(node: int, other: int) -> list[int]:
            seen: dict[int, int] = {}
            for x in sorted(gg.adjacent(node), key=lambda h: gg.target(h)):
                t = gg.target(x)
                if t == other or t in seen:
                    continue
                seen[t] = x
            return list(seen.values())

        def bidir(data: object) -> bool:
            return data.two_way  # type: ignore[attr-defined]

        straight = lambda a: 150.0 < a < 210.0  # noqa: E731
        in_types: set[int] = set()
        oneway_in = False
        for x in infos(n1, n2):
            inbound = gg.reverse(x)
            di = gg.data(inbound)
            if di.reversed:
                continue
            a = self._angle(gg.half_source(inbound), inbound, e)
            in_types.add(turn_direction(a))
            if bidir(di) or di.link or di.priority > SIDE_RESIDENTIAL:
                continue
            if straight(a):
                continue
            oneway_in = True
        if not oneway_in:
            return False
        out_types: set[int] = set()
        oneway_out = False
        for x in infos(n2, n1):
            dx = gg.data(x)
            if dx.reversed:
                continue
            a = self._angle(n1, e, x)
            out_types.add(turn_direction(a))
            if bidir(dx) or dx.link or dx.priority > SIDE_RESIDENTIAL:
                continue
            if straight(a):
                continue
            oneway_out = True
        if not oneway_out:
            return False

        def has_right(s: set[int]) -> bool:
            return RIGHT in s or SHARP_RIGHT in s

        def has_left(s: set[int]) -> bool:
            return LEFT in s or SHARP_LEFT in s

        if (
            (has_left(in_types) and has_right(out_types))
            or (has_right(in_types) and has_left(out_types))
            or (has_left(out_types) and has_right(out_types))
        ):
            return False
        return True


# -- walker accumulators and selectors ------------------------------------------------------------------------------
class LengthLimitedAccumulator:
    """Collect the points along a road until `max_length` metres."""

    def __init__(self, ex: Extractor, max_length: float) -> None:
        self.ex = ex
        self.max_length = max_length
        self.length = 0.0
        self.coords: list[Coord] = []

    def terminate(self) -> bool:
        return self.length >= self.max_length

    def update(self, from_node: int, via: int, to_node: int) -> None:
        cur = list(self.ex.gg.geometry(via))
        ln = geo.length(cur)
        if ln + self.length > self.max_length:
            cur = trim_to_length(cur, self.max_length - self.length)
        self.coords.extend(cur)
        self.length = min(self.length + ln, self.max_length)


class IntersectionFinder:
    """Find the next intersection with more than two roads (or stop after `hop_limit` hops)."""

    def __init__(self, ex: Extractor, hop_limit: int) -> None:
        self.ex = ex
        self.hop_limit = hop_limit
        self.hops = 0
        self.nid = -1
        self.via = -1
        self.intersection: Intersection = []

    def terminate(self) -> bool:
        if len(self.intersection) > 2 or self.hops == self.hop_limit:
            self.hops = 0
            return True
        return False

    def update(self, from_node: int, via: int, to_node: int) -> None:
        self.hops += 1
        self.nid = from_node
        self.via = via
        self.intersection = self.ex.connected_roads(via, True)


class DistanceAccumulator:
    """Sum up the length along a road; `too_far_away` once past `threshold`."""

    def __init__(self, ex: Extractor, threshold: float) -> None:
        self.ex = ex
        self.threshold = threshold
        self.distance = 0.0
        self.too_far_away = False

    def terminate(self) -> bool:
        if self.distance > self.threshold:
            self.too_far_away = True
            return True
        return False

    def update(self, from_node: int, via: int, to_node: int) -> None:
        self.distance += geo.length(self.ex.gg.geometry(via))


def skip_obstacle_selector(node: int, via: int, inter: Intersection) -> int | None:
    """Continue only over intersections of two roads."""
    return inter[1].eid if len(inter) == 2 else None


def straightmost_selector(gg: GuidanceGraph, name: int, initial_bearing: float, requires_entry: bool,
                          stop_on_ambiguous: bool) -> Callable:  # fmt: skip
    """SelectStraightmostRoadByNameAndOnlyChoice."""

    def select(node: int, via: int, inter: Intersection) -> int | None:
        if len(inter) == 1:
            return None

        def score(r: Road) -> float:
            s = 0.0
            if requires_entry and not r.entry_allowed:
                s += 360.0
            if gg.data(r.eid).name != name:
                s += 180.0
            return s + geo.deviation(r.angle, STRAIGHT_ANGLE)

        count_desired = sum(1 for r in inter if gg.data(r.eid).name == name)
        if count_desired > 2:
            return None
        mi = min(range(1, len(inter)), key=lambda i: score(inter[i]))
        m = inter[mi]
        if requires_entry and not m.entry_allowed:
            return None
        valid_angle = (
            (len(inter) == 2 or closest_turn(inter, STRAIGHT_ANGLE) == mi)
            and geo.deviation(m.angle, STRAIGHT_ANGLE) < NARROW_TURN_ANGLE
            and geo.deviation(initial_bearing, m.perceived_bearing) < NARROW_TURN_ANGLE
        )
        if valid_angle:
            return m.eid
        only_choice = (
            count_desired <= 2 and gg.data(m.eid).name == name and geo.deviation(m.angle, STRAIGHT_ANGLE) < 100
        )
        if stop_on_ambiguous and geo.deviation(STRAIGHT_ANGLE, m.angle) > GROUP_ANGLE:
            oi = closest_turn(inter, geo.reverse(m.angle))
            if geo.deviation(m.angle, inter[oi].angle) > 180 - FUZZY_ANGLE_DIFFERENCE:  # type: ignore[index]
                return None
            bi = closest_turn(inter, STRAIGHT_ANGLE)
            if geo.deviation(inter[bi].angle, STRAIGHT_ANGLE) < FUZZY_ANGLE_DIFFERENCE:  # type: ignore[index]
                return None
        return m.eid if only_choice else None

    return select


# -- merging dual carriageways ----------------------------------------------------------------------------------------
class MergeDetector:
    """OSRM's MergableRoadDetector: whether two adjacent roads at a node are the two halves of one road."""

    DISTANCE_TO_EXTRACT = 120.0

    def __init__(self, ex: Extractor) -> None:
        self.ex = ex
        self.gg = ex.gg
        self.names = ex.gg.names

    def pair_mergeable(self, geoms: list, v: int, i: int) -> bool:
        n = len(geoms)
        llhs, lhs, rhs, rrhs = geoms[(i + n - 1) % n], geoms[i], geoms[(i + 1) % n], geoms[(i + 2) % n]
        return self.distinct(llhs, lhs) and self.can_merge(v, lhs, rhs) and self.distinct(rhs, rrhs)

    def merged_bearing(self, geoms: list, li: int, ri: int, neighbor: bool) -> tuple[bool, float]:
        """findMergedBearing."""
        gg = self.gg
        lhs, rhs = geoms[li], geoms[ri]
        entry = rhs if gg.data(lhs[0]).reversed else lhs
        target = geo.reverse(entry[2])
        closest = min(geoms, key=lambda g: geo.deviation(g[2], target))
        opposite = geo.reverse(closest[2])
        a, b = rhs[2] * math.pi / 180.0, lhs[2] * math.pi / 180.0
        avg = 180.0 * math.atan2(math.sin(a) + math.sin(b), math.cos(a) + math.cos(b)) / math.pi
        merged = math.fmod(avg + 360.0, 360.0)
        if geo.deviation(geo.angle_between(opposite, entry[2]), STRAIGHT_ANGLE) < MAXIMAL_ALLOWED_NO_TURN_DEVIATION:
            return False, entry[2]
        if neighbor:
            tl = geo.angle_between(opposite, lhs[2])
            tr = geo.angle_between(opposite, rhs[2])
            tn = geo.angle_between(opposite, merged)
            if geo.deviation(tl, STRAIGHT_ANGLE) < geo.deviation(tn, STRAIGHT_ANGLE) or geo.deviation(
                tr, STRAIGHT_ANGLE
            ) < geo.deviation(tn, STRAIGHT_ANGLE):
                return False, opposite
        return True, merged

    def distinct(self, lhs: Sequence, rhs: Sequence) -> bool:
        """IsDistinctFrom: far apart, or not of the same name."""
        if geo.deviation(lhs[2], rhs[2]) > MERGABLE_ANGLE_DIFFERENCE:
            return True
        return not self.names.identical(self.gg.data(lhs[0]).name, self.gg.data(rhs[0]).name)

    def supports_merge(self, a: object, b: object) -> bool:
        """EdgeDataSupportsMerge."""
        if a.roundabout or b.roundabout:  # type: ignore[attr-defined]
            return False
        if a.mode != b.mode:  # type: ignore[attr-defined]
            return False
        if not self.names.identical(a.name, b.name):  # type: ignore[attr-defined]
            return False
        return a.classification == b.classification  # type: ignore[attr-defined]

    def can_merge(self, v: int, lhs: Sequence, rhs: Sequence) -> bool:
        gg = self.gg
        if geo.deviation(lhs[2], rhs[2]) > MERGABLE_ANGLE_DIFFERENCE:
            return False
        ld, rd = gg.data(lhs[0]), gg.data(rhs[0])
        if ld.reversed == rd.reversed or not self.supports_merge(ld, rd):
            return False
        if gg.target(lhs[0]) == v or gg.target(rhs[0]) == v:
            return False
        if self.traffic_loop(v, lhs) or self.traffic_loop(v, rhs):
            return False
        if self.traffic_island(v, lhs, rhs):
            return True
        if self.link_road(v, lhs) or self.link_road(v, rhs):
            return False
        if self.narrow_triangle(v, lhs, rhs):
            return True
        return self.same_direction(v, lhs, rhs) and not self.circular_shape(v, lhs, rhs)

    def traffic_loop(self, v: int, road: Sequence) -> bool:
        node, edge = self.ex.skip_degree_two(v, road[0])
        return v == self.gg.target(edge)

    def narrow_triangle(self, v: int, lhs: Sequence, rhs: Sequence) -> bool:
        ex, gg = self.ex, self.gg
        left = IntersectionFinder(ex, 5)
        right = IntersectionFinder(ex, 5)
        sel = straightmost_selector(gg, gg.data(lhs[0]).name, lhs[2], False, False)
        ex.traverse(v, lhs[0], left, sel)
        if not left.intersection:
            return False
        ci = closest_turn(left.intersection, ORTHOGONAL_ANGLE)
        if geo.deviation(left.intersection[ci].angle, ORTHOGONAL_ANGLE) > NARROW_TURN_ANGLE:  # type: ignore[index]
            si = closest_turn(left.intersection, STRAIGHT_ANGLE)
            ex.traverse(gg.target(left.via), left.intersection[si].eid, left, sel)  # type: ignore[index]
        dist = geo.distance(gg.coord(v), gg.coord(gg.target(left.via)))
        if dist > 80:
            return False
        ex.traverse(v, rhs[0], right, sel)
        if not right.intersection:
            return False
        ci = closest_turn(right.intersection, 270)
        if geo.deviation(right.intersection[ci].angle, 270) > NARROW_TURN_ANGLE:  # type: ignore[index]
            si = closest_turn(right.intersection, STRAIGHT_ANGLE)
            ex.traverse(gg.target(right.via), right.intersection[si].eid, right, sel)  # type: ignore[index]
        if not left.intersection or not right.intersection:
            return False
        ci = closest_turn(left.intersection, ORTHOGONAL_ANGLE)
        connector = left.intersection[ci]  # type: ignore[index]
        if geo.deviation(connector.angle, ORTHOGONAL_ANGLE) > NARROW_TURN_ANGLE:
            return False
        width = (max(gg.data(lhs[0]).num_lanes, 1) + max(gg.data(rhs[0]).num_lanes, 1)) * ASSUMED_LANE_WIDTH
        corners = geo.distance(gg.coord(gg.target(left.via)), gg.coord(gg.target(right.via)))
        if corners > width + 10:
            return False
        connect = IntersectionFinder(ex, 5)
        ex.traverse(gg.target(left.via), connector.eid, connect, sel)
        return connect.via >= 0 and gg.target(connect.via) == gg.target(right.via)

    def _along(self, v: int, e: int, initial: float, stop_ambiguous: bool) -> tuple[float, list[Coord]]:
        acc = LengthLimitedAccumulator(self.ex, self.DISTANCE_TO_EXTRACT)
        sel = straightmost_selector(self.gg, self.gg.data(e).name, initial, False, stop_ambiguous)
        self.ex.traverse(v, e, acc, sel)
        return acc.length, acc.coords

    def circular_shape(self, v: int, lhs: Sequence, rhs: Sequence) -> bool:
        dl, cl = self._along(v, lhs[0], lhs[2], False)
        dr, cr = self._along(v, rhs[0], lhs[2], False)
        if not cl or not cr:
            return False
        if cl[-1] == cr[-1] and cl[0] == cl[-1]:
            area = geo.polygon_area(cl)
            if dl > 0 and abs(area) / (dl * dl) >= 0.85 / (4 * 3.141592653589793):
                return True
        return False

    def same_direction(self, v: int, lhs: Sequence, rhs: Sequence) -> bool:
        if geo.deviation(lhs[2], rhs[2]) > MERGABLE_ANGLE_DIFFERENCE:
            return False
        dl, cl = self._along(v, lhs[0], lhs[2], True)
        if dl <= 40:
            return False
        dr, cr = self._along(v, rhs[0], lhs[2], True)
        if dr <= 40:
            return False
        connect_again = cl[-1] == cr[-1]
        cl = sample(cl, self.DISTANCE_TO_EXTRACT, 5)
        cr = sample(cr, self.DISTANCE_TO_EXTRACT, 5)
        if not connect_again:
            cl = cl[len(cl) // 3 :]
            cr = cr[len(cr) // 3 :]
        if len(cl) < 2 or len(cr) < 2 or not geo.are_parallel(cl, cr):
            return False
        d1 = geo.closest_distance_to_line(cl[len(cl) // 2], cr)
        d2 = geo.closest_distance_to_line(cr[len(cr) // 2], cl)
        gg = self.gg
        lanes = max(1, gg.data(lhs[0]).num_lanes) + max(1, gg.data(rhs[0]).num_lanes)
        return min(d1, d2) <= 0.5 * lanes * ASSUMED_LANE_WIDTH + 12

    def traffic_island(self, v: int, lhs: Sequence, rhs: Sequence) -> bool:
        ex, gg, names = self.ex, self.gg, self.names
        _, le = ex.skip_degree_two(v, lhs[0])
        _, re_ = ex.skip_degree_two(v, rhs[0])
        cand = gg.target(le)
        if not (cand == gg.target(re_) and cand != v):
            return False

        def same_name_degree_three(nid: int) -> bool:
            adj = gg.adjacent(nid)
            if len(adj) != 3:
                return False
            req = gg.data(adj[0]).name
            for e in adj:
                nm = gg.data(e).name
                if names.name_empty(req) and names.name_empty(nm):
                    return False
                if not (not names.announce(req, nm) or not names.announce(nm, req)):
                    return False
            return True

        din = same_name_degree_three(v)
        dout = same_name_degree_three(cand)
        if not din and not dout:
            return False
        dist = geo.distance(gg.coord(v), gg.coord(cand))
        return dist < 30 if (din and dout) else dist < 15

    def link_road(self, v: int, road: Sequence) -> bool:
        ex, gg, names = self.ex, self.gg, self.names
        node, edge = ex.skip_degree_two(v, road[0])
        nxt = ex.connected_roads(edge, False)
        name = gg.data(road[0]).name

        def filt(r: Road) -> bool:
            nm = gg.data(r.eid).name
            if names.name_empty(name) or names.name_empty(nm):
                return True
            return names.announce(name, nm) or names.announce(nm, name)

        ni = closest_turn(nxt, STRAIGHT_ANGLE, filt)
        if ni is None:
            return False
        nr = nxt[ni]
        oi = closest_turn(nxt, geo.restrict_angle(nr.angle + STRAIGHT_ANGLE))
        opp = nxt[oi]  # type: ignore[index]
        if gg.target(opp.eid) == node:
            return False
        if geo.deviation(geo.deviation(nr.angle, STRAIGHT_ANGLE), geo.deviation(opp.angle, 0)) < FUZZY_ANGLE_DIFFERENCE:
            return False
        dn, do = gg.data(nr.eid), gg.data(opp.eid)
        return (
            geo.deviation(opp.angle, nr.angle) >= STRAIGHT_ANGLE - FUZZY_ANGLE_DIFFERENCE
            and dn.reversed == do.reversed
            and self.supports_merge(dn, do)
        )


__all__ = ["CONNECTIVITY", "Extractor", "Intersection", "Road", "turn_direction"]

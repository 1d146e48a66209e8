"""Merging the two carriageways of a dual road into one road of the intersection (OSRM's
`src/extractor/intersection/mergable_road_detector.cpp`).

Two adjacent roads at a node are the halves of one road when they have one entry and one exit, the same name and
class, and split into a narrow triangle, a traffic island, or run parallel (and are no loop, link or circle).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from floor.intersections import geo
from floor.intersections.coordinates import sample
from floor.intersections.geo import Coord
from floor.intersections.intersection import (
    ASSUMED_LANE_WIDTH,
    FUZZY_ANGLE_DIFFERENCE,
    MAXIMAL_ALLOWED_NO_TURN_DEVIATION,
    NARROW_TURN_ANGLE,
    ORTHOGONAL_ANGLE,
    STRAIGHT_ANGLE,
    Road,
    closest_turn,
)
from floor.intersections.walker import Extractor, IntersectionFinder, LengthLimitedAccumulator, straightmost_selector

MERGABLE_ANGLE_DIFFERENCE = 95.0


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

"""The roads at a junction as a driver arriving on one of them perceives them (OSRM's
`src/extractor/intersection/intersection_analysis.cpp`), with the segregated-edge test of
`src/guidance/segregated_intersection_classification.cpp`.

`Extractor` gives every road its initial and perceived bearing (`coordinates`), merges the two carriageways of a dual
road into one road with the bisecting bearing, at the junction and (bearing corrections) at the neighbouring one
(`merge`), and builds the *view* from an incoming edge: the roads counter-clockwise from the u-turn (index 0, angle
0), each with its turn angle (180 = straight on, < 180 to the right) and whether it may be entered (oneways, u-turns
only at dead ends and where no other exit exists, no turning against a roundabout). It caches what it learns per node.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from floor.intersections import geo
from floor.intersections.coordinates import close_to_turn, coordinate_at_length, representative
from floor.intersections.geo import Coord
from floor.intersections.graph import SIDE_RESIDENTIAL, GuidanceGraph
from floor.intersections.intersection import (
    EPSILON,
    LEFT,
    RIGHT,
    SHARP_LEFT,
    SHARP_RIGHT,
    Intersection,
    Road,
    turn_direction,
)
from floor.intersections.merge import MergeDetector


class Extractor:
    """Intersection geometry and views over a GuidanceGraph (OSRM's intersection analysis, with the coordinate
    extractor, the mergable road detector and the graph walker behind it), with per-node caches."""

    def __init__(self, gg: GuidanceGraph, restricted: Callable[[int, int], bool] | None = None) -> None:
        self.gg = gg
        # isTurnAllowed's turn restrictions: whether the turn from edge `via` onto edge `to` is restricted (guidance
        # passes the search graph's; the turn stage, which builds that graph, has none)
        self.restricted = restricted
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
    def along_road(self, v: int, e: int, lanes: int) -> Coord:
        """GetCoordinateAlongRoad."""
        return representative(self.gg, v, e, lanes, list(self.gg.geometry(e)))

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
                rep = close_to_turn(gg, e)
            else:
                rep = representative(gg, v, e, lanes, list(g))
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

    def _allowed_context(
        self, via: int, geoms: dict[int, tuple[float, float, float]]
    ) -> tuple[float, int, int, int, int]:
        """What isTurnAllowed learns of the junction arriving by `via`, whatever the road taken: the reversed
        bearing arriving, the allowed exits, the roads one may arrive on, the roundabout edges in and out."""
        gg = self.gg
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
        return from_rev_bearing, allowed_exits, bidirectional, rb_from, rb_to

    def _allowed(
        self, ctx: tuple[float, int, int, int, int], via: int, to: int, geoms: dict[int, tuple[float, float, float]]
    ) -> bool:
        """isTurnAllowed from edge `via` (arriving at v) onto edge `to` (leaving v), in the junction context `ctx`
        (`_allowed_context` of `via`, computed once per view)."""
        gg = self.gg
        if gg.data(via).reversed or gg.data(to).reversed:
            return False
        if self.restricted is not None and self.restricted(via, to):
            return False
        _, allowed_exits, bidirectional, _, _ = ctx
        if self.goes_back(via, to):
            if gg.out_degree(gg.target(via)) == 1:
                return True
            if allowed_exits == 1 or bidirectional <= 1:
                return True
            lanes = gg.data(via).lanes
            return bool(lanes and any(m & 256 for m in lanes))
        return not _against_roundabout(ctx, to, geoms)

    def against_roundabout(self, via: int, to: int) -> bool:
        """Whether isTurnAllowed refuses the turn from edge `via` onto edge `to` (not a way back) as one against a
        roundabout's flow: `to` leaves within the sector between the roundabout edge arriving and the road arrived
        on (a way crossing a roundabout node may not turn onto its own continuation there against the flow)."""
        geoms, _ = self.merged_geometries(self.gg.target(via))
        return not self.goes_back(via, to) and _against_roundabout(self._allowed_context(via, geoms), to, geoms)

    def view(self, via: int, geoms: dict[int, tuple[float, float, float]], merged: frozenset[int]) -> Intersection:
        """convertToIntersectionView: the roads at the target of `via` as seen arriving on it."""
        gg = self.gg
        v = gg.target(via)
        back = gg.reverse(via)
        in_b = geo.reverse(geoms[back][1])
        in_init = geo.reverse(geoms[back][0])
        pre: list[tuple[Road, float]] = []
        uturn: Road | None = None
        allowed_uturns = 0
        ctx = self._allowed_context(via, geoms)
        for e in gg.adjacent(v):
            init_b, perc_b, seg_len = geoms[e]
            allowed = self._allowed(ctx, via, e, geoms)
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
        to_c = close_to_turn(gg, e_out)
        from_c = close_to_turn(gg, gg.reverse(e_in))
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


def _against_roundabout(
    ctx: tuple[float, int, int, int, int], to: int, geoms: dict[int, tuple[float, float, float]]
) -> bool:
    """isTurnAllowed's roundabout check in the junction context `ctx` (`Extractor._allowed_context`): the road `to`
    lies in the sector from the roundabout edge arriving to the road arrived on."""
    from_rev_bearing, _, _, rb_from, rb_to = ctx
    if rb_from < 0 or rb_to < 0:
        return False
    from_b = geo.reverse(geoms[rb_from][1])
    rb_angle = geo.angle_between(from_b, geoms[rb_to][1])
    rb_from_a = geo.angle_between(from_b, from_rev_bearing)
    rb_to_a = geo.angle_between(from_b, geoms[to][1])
    return (rb_from_a < rb_angle and rb_to_a < rb_from_a) or (rb_from_a > rb_angle and rb_to_a > rb_from_a)

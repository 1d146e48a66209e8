"""Turn-by-turn guidance as OSRM gives it: the intersection model, maneuver classification and step post-processing.

`Guide(graph)` is built lazily beside the search graph (never on a search's path) and caches what it learns per
junction. `Guide.steps(leg)` turns a routed leg into `RouteStep`s: at every junction the leg passes, the roads there
are modelled as OSRM models them (`intersection_analysis`, over `intersection`), the turn taken is classified
(`turns`, dispatching to one module per OSRM handler, and `lanes`), the leg is cut into steps where an instruction
is announced (`steps`) and OSRM's post-processing runs (`post_processing`, `collapse_turns`). The API layer
(`app.api.osrm.steps`) only formats the result, with the names exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.engine.guidance.handlers.turns import TurnAnalysis
from app.engine.guidance.lanes import LaneHandler
from app.engine.guidance.overrides import apply_overrides, load_overrides
from app.engine.guidance.post_processing import post_process
from app.engine.guidance.steps import (
    WAYPOINT_ARRIVE,
    WAYPOINT_DEPART,
    Maneuver,
    RouteStep,
    StepIntersection,
)
from app.engine.types import Leg
from floor.format.graph import Graph
from floor.intersections import geo
from floor.intersections.geo import Coord
from floor.intersections.graph import LANE_NAMES, GuidanceGraph
from floor.intersections.intersection import (
    CONTINUE,
    INVALID,
    NO_TURN,
    TURN,
    UTURN,
    Intersection,
    turn_direction,
)
from floor.intersections.intersection_analysis import Extractor

__all__ = [
    "Guide",
    "RouteStep",
    "StepIntersection",
    "Maneuver",
    "TYPE_NAMES",
    "MODIFIER_NAMES",
    "LANE_NAMES",
    "WAYPOINT_ARRIVE",
    "WAYPOINT_DEPART",
]

MODIFIER_NAMES = ("uturn", "sharp right", "right", "slight right", "straight", "slight left", "left", "sharp left")
# OSRM's external names of the turn types (index = type)
TYPE_NAMES = (
    "invalid", "new name", "continue", "turn", "merge", "on ramp", "off ramp", "fork", "end of road", "notification",
    "roundabout", "exit roundabout", "rotary", "exit rotary", "roundabout turn", "roundabout turn", "use lane",
    "invalid", "invalid", "roundabout", "exit roundabout", "rotary", "exit rotary", "roundabout turn",
    "exit roundabout", "invalid", "invalid",
)  # fmt: skip

_BEARING_SCALE = 360.0 / 256.0
_CACHE_LIMIT = 30_000  # junctions; about 7 kB each with the per-node caches behind them


def _quantize(b: float) -> int:
    """A bearing as OSRM stores it per turn (1.40625 degree units), truncated to whole degrees on read."""
    return int(int(b / _BEARING_SCALE) * _BEARING_SCALE)


def _discrete(b: float) -> int:
    s = b + 7.5
    if s >= 360.0:
        s -= 360.0
    return int(s / 15.0)


def classify(inter: Intersection) -> tuple[list[int], list[bool]]:
    """OSRM's classifyIntersection: the bearings of the roads (15-degree classes when they stay distinct) with
    whether each may be entered, in bearing order."""
    roads = sorted(inter, key=lambda r: r.perceived_bearing)
    if not roads:
        return [], []
    ok = True
    last = _discrete(geo.round_half_away(roads[-1].perceived_bearing))
    for r in roads:
        d = _discrete(geo.round_half_away(r.perceived_bearing))
        if d == last:
            ok = len(roads) <= 1
            break
        last = d
    if ok:
        if _discrete(roads[-1].perceived_bearing) < _discrete(roads[0].perceived_bearing):
            roads = [roads[-1]] + roads[:-1]
        bearings = [geo.round_half_away(_discrete(geo.round_half_away(r.perceived_bearing)) * 15.0) for r in roads]
    else:
        bearings = [geo.round_half_away(r.perceived_bearing) for r in roads]
    return [b % 360 for b in bearings], [r.entry_allowed for r in roads]


def matching_bearing(bearings: list[int], b: int) -> int:
    """BearingClass::findMatchingBearing: the index of the closest bearing."""
    best, dev = 0, 1e9
    for i, x in enumerate(bearings):
        d = geo.deviation(x, b)
        if d < dev:
            best, dev = i, d
    return best


def _restrictions(graph: Graph, gg: GuidanceGraph) -> Callable[[int, int], bool] | None:
    """isTurnAllowed's turn restrictions, read from the search graph: the turn from edge `via` onto edge `to` is
    restricted when the search node of the road arc arriving has no turn onto the road arc leaving (search node i is
    road arc i; the copies a via-way restriction makes map back through `eb_node_arc`). None on node-based graphs."""
    if not graph.has("eb_first_out"):
        return None
    first_out = np.asarray(graph.eb_first_out)
    head = np.asarray(graph.eb_arc_head)
    node_arc = np.asarray(graph.eb_node_arc)
    n_arcs = len(gg.arc_geom)
    if len(node_arc) < n_arcs or first_out.shape[0] < n_arcs + 1:
        return None

    def restricted(via: int, to: int) -> bool:
        a, b = gg.half_arc(gg.halves(via)[-1]), gg.half_arc(to)
        if a < 0 or b < 0:
            return False
        turns = node_arc[head[int(first_out[a]) : int(first_out[a + 1])]]
        return not bool((turns == b).any())

    return restricted


@dataclass
class TurnsAt:
    """The classified intersection at the end of one incoming edge."""

    bearings: list[int]
    entry: list[bool]
    pre: int  # quantized bearing of the road arrived on (pointing back)
    roads: dict[int, tuple[int, int, tuple[int, int, tuple[int, ...]] | None, int]]  # eid -> kind, mod, lanes, post


class Guide:
    """Guidance over one graph: the compressed road graph, the intersection model, the turn analysis."""

    def __init__(self, graph: Graph, mode: str = "driving") -> None:
        self.gg = GuidanceGraph(graph, mode)
        self.ex = Extractor(self.gg, _restrictions(graph, self.gg))
        self.overrides = load_overrides(self.gg, np.asarray(graph.man_seq)) if graph.has("man_seq") else {}
        self.ta = TurnAnalysis(self.ex)
        self.lh = LaneHandler(self.ta)
        self._turns: dict[int, TurnsAt] = {}

    def turns_at(self, via: int) -> TurnsAt:
        """The instructions for every turn at the end of edge `via` (cached)."""
        t = self._turns.get(via)
        if t is not None:
            return t
        view = self.ex.intersection(via)
        inter = self.ta.assign(via, view)
        inter = self.lh.assign(via, inter)
        bearings, entry = classify(inter)
        roads = {}
        for r in inter:
            kind, mod = r.kind, r.modifier
            if not r.entry_allowed or kind == INVALID:
                kind, mod = self._fallback(via, r.eid, r.angle)
            roads[r.eid] = (kind, mod, r.lanes, _quantize(r.perceived_bearing))
        t = TurnsAt(bearings, entry, _quantize(inter[0].perceived_bearing), roads)
        if len(self._turns) > _CACHE_LIMIT:  # bound memory: start learning afresh
            self._turns.clear()
            self.gg.clear_caches()
            self.ex.clear_caches()
            self.ta.clear_caches()
        self._turns[via] = t
        return t

    def _fallback(self, via: int, out: int, angle: float) -> tuple[int, int]:
        """An instruction for a turn OSRM would not allow (u-turns away from dead ends): our router may take one."""
        if geo.deviation(angle, 0) < 1e-6 or self.ex.goes_back(via, out):
            return CONTINUE, UTURN
        return TURN, turn_direction(angle)

    def _phantom_bearing(self, chain: int, segment: int, reverse: bool) -> int:
        pts = self.gg.chain_coords(chain)
        if segment + 1 >= len(pts):
            return 0
        a, b = pts[segment], pts[segment + 1]
        return geo.round_half_away(geo.bearing(b, a) if reverse else geo.bearing(a, b)) % 360

    def steps(self, leg: Leg) -> list[RouteStep]:
        """The post-processed steps of one leg, depart and arrive included."""
        gg, ex = self.gg, self.ex
        coords = np.asarray(leg.coordinates)
        arcs = np.asarray(leg.piece_arc)
        ends = np.asarray(leg.piece_coord_end)
        dists = np.asarray(leg.piece_distance_m)
        durs = np.asarray(leg.piece_duration_s)
        wts = durs if leg.piece_weight is None else np.asarray(leg.piece_weight)  # routability where it differs
        # a turn's time and weight count in the step before it (OSRM's `duration_until_turn`), not in its piece
        turn_t = np.zeros(len(durs)) if leg.piece_turn_s is None else np.asarray(leg.piece_turn_s)
        turn_w = turn_t if leg.piece_turn_weight is None else np.asarray(leg.piece_turn_weight)
        src, tgt = leg.source, leg.target
        locs: list[Coord] = [(geo.fixed(float(x)), geo.fixed(float(y))) for x, y in coords]
        pts = [(float(x), float(y)) for x, y in coords]
        n = len(locs)
        p = int(arcs.shape[0])
        arc_geom = gg.arc_geom

        def half(i: int) -> int:
            return int(arc_geom[int(arcs[i])])

        first_h = half(0) if p else -1
        if p:
            d0 = gg.data(gg.edge_start(first_h))
        if p and geo.distance(locs[0], locs[1]) <= 1:
            after = self._phantom_bearing(src.chain, src.segment, bool(first_h & 1))
        else:
            after = geo.round_half_away(geo.bearing(locs[0], locs[1])) % 360
        inter = StepIntersection(pts[0], [after], [True], None, 0)
        man = Maneuver(pts[0], 0, after, NO_TURN, UTURN, WAYPOINT_DEPART)
        steps: list[RouteStep] = []
        if p:
            via0 = gg.edge_start(first_h)
            name = d0.name
            seg = ex.segregated(via0)
        else:
            name, seg = 0, False
        begin = 0
        dur = dist = wt = 0.0
        for i in range(p - 1):
            dur += float(durs[i])
            wt += float(wts[i])
            dist += float(dists[i])
            node = int(gg.g.arc_head[int(arcs[i])])
            if not gg.is_intersection(node):
                continue
            via = gg.edge_start(half(i))
            out = half(i + 1)
            at = self.turns_at(via)
            info = at.roads.get(out)
            if info is None:
                kind, mod = self._fallback(via, out, 180.0)
                info = (kind, mod, None, at.pre)
            kind, mod, lanes, post = info
            if kind == NO_TURN:
                continue
            vd = gg.data(via)
            inter.classes = vd.class_names()
            tt, tw = float(turn_t[i + 1]), float(turn_w[i + 1])
            steps.append(
                self._step(via, name, seg, dur + tt, dist, vd.mode, man, begin, int(ends[i]) + 1, inter, locs, wt + tw)
            )
            od = gg.data(out)
            name, seg = od.name, ex.segregated(out)
            loc = pts[int(ends[i])]
            inter = StepIntersection(
                loc,
                list(at.bearings),
                list(at.entry),
                matching_bearing(at.bearings, at.pre),
                matching_bearing(at.bearings, post),
                (lanes[0], lanes[1]) if lanes else (0, -1),
                tuple(lanes[2]) if lanes else (),
            )
            man = Maneuver(loc, int(geo.reverse(at.pre)), post, kind, mod)
            begin = int(ends[i])
            dur, dist, wt = -tt, 0.0, -tw
        if p:
            dur += float(durs[p - 1])
            wt += float(wts[p - 1])
            dist += float(dists[p - 1])
            last_via = gg.edge_start(half(p - 1))
            ld = gg.data(last_via)
            mode = ld.mode
            inter.classes = ld.class_names()
            steps.append(self._step(last_via, name, seg, dur, dist, mode, man, begin, n, inter, locs, wt))
            tname = gg.data(last_via).name
        else:
            mode, tname = gg.mode, 0
            steps.append(self._step(-1, 0, False, 0.0, 0.0, mode, man, 0, n, inter, locs))
        if p and geo.distance(locs[-1], locs[-2]) <= 1:
            last_h = half(p - 1)
            before = self._phantom_bearing(tgt.chain, tgt.segment, bool(last_h & 1))
        else:
            before = geo.round_half_away(geo.bearing(locs[-2], locs[-1])) % 360
        arrive_inter = StepIntersection(pts[-1], [int(geo.reverse(before))], [True], 0, None)
        arrive = Maneuver(pts[-1], before, 0, NO_TURN, UTURN, WAYPOINT_ARRIVE)
        steps.append(self._step(-1, tname, False, 0.0, 0.0, mode, arrive, n - 1, n, arrive_inter, locs))
        source_input = (geo.fixed(src.input_lon), geo.fixed(src.input_lat))
        target_input = (geo.fixed(tgt.input_lon), geo.fixed(tgt.input_lat))
        if self.overrides:  # OSRM applies them before any post-processing
            apply_overrides(steps, locs, gg, self.overrides)
        # OSRM's leg geometry has a point per road node the leg passes besides its ends: p + 1 points at least
        return post_process(steps, locs, source_input, target_input, points=p + 1)

    def _step(self, from_id: int, name: int, seg: bool, dur: float, dist: float, mode: str, man: Maneuver,
              begin: int, end: int, inter: StepIntersection, locs: list[Coord],
              wt: float | None = None) -> RouteStep:  # fmt: skip
        """A step over locs[begin:end]: `distance` measured as OSRM does (its thresholds), `length` the leg's."""
        rec = self.gg.names[name]
        measured = geo.length(locs[begin:end]) if end - begin >= 2 else 0.0
        return RouteStep(
            from_id, name, seg, rec.name, rec.ref, rec.pronunciation, rec.destinations, rec.exits,
            dur, measured, dur if wt is None else wt, mode, man, begin, end, [inter], length=dist,
        )  # fmt: skip

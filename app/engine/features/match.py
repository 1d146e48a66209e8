"""Map matching (OSRM's `/match`): a GPS trace onto the roads it was driven on.

The model and its searches are `app.engine.features.hmm` (one numba kernel), the states
`app.engine.features.candidates`; this module
prepares the trace, reads the answer back and routes through it:

- **tidy** (`tidy_trace`, OSRM's `tidy=true`): a point closer than 15 m, or with timestamps 5 s, after the last one
  kept is left out (its tracepoint is null); first and last always kept;
- **thinning** (`thin`, Newson and Krumm's preprocessing, not OSRM's): a point closer than `THIN_SIGMAS` GPS
  standard deviations to the last point kept is left out too, unless the next point jumps far (twice that) from
  the last kept one or the request names it as a waypoint: where the noise is as large as the movement, points
  only add back-and-forth; a point with no road within its search radius is left out as well (OSRM lets it break
  the chain, dropping the point before it too). Left-out points have null tracepoints;
- **reading back** (`_sub_matchings`): OSRM's reconstruction: per piece between splits, the path back from its best
  last state, how many other states still reach a final one (`alternatives_count`), the confidence;
- **route**: each sub-matching's states in order, routed by the default algorithm with `continue_straight=false`
  (OSRM's `ShortestPathSearch` over the matched phantoms): the matching's legs, geometry, steps and annotations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from app.engine.errors import NoSegment
from app.engine.features import hmm
from app.engine.features.candidates import CandidateSet
from app.engine.geo import gc_distance_m
from app.engine.route.assemble import AT_FIRST, AT_LAST, BWD, FWD, LegEnd, _assemble, join_route, piece_distances_m
from app.engine.route.space import EdgeSpace
from app.engine.search.searches import STAMP_LIMIT
from app.engine.types import ExcludeSet, Leg, Phantom, Route, SearchStats
from floor.format.units import WEIGHT_PER_SECOND
from floor.kernels.geometry import haversine_m
from floor.kernels.jit import kernel

if TYPE_CHECKING:
    from app.engine.router import Router

DEFAULT_GPS_PRECISION_M = 5.0  # OSRM's DEFAULT_GPS_PRECISION: the standard deviation when `radiuses` gives none
RADIUS_MULTIPLIER = 3.0  # OSRM: candidates within 3 standard deviations (> 99 % of fixes)
TIDY_DISTANCE_M = 15.0  # OSRM's tidy thresholds
TIDY_DURATION_S = 5
THIN_SIGMAS = 4.0  # thinning: a point this many standard deviations from the last kept one is kept
# OSRM's profiles' `max_speed_for_map_matching` (m/s): the fastest a GPS jump may be driven
MAP_MATCHING_SPEED_MPS = {"car": 180 / 3.6, "bike": 40 / 3.6, "foot": 40 / 3.6, "testbot": 30 / 3.6}


@dataclass(frozen=True)
class Trace:
    """A trace ready for matching: points (lon, lat degrees), optional timestamps (s, non-decreasing), per point
    the GPS standard deviation in metres (None: `DEFAULT_GPS_PRECISION_M`) and an optional bearing filter."""

    coordinates: Sequence[tuple[float, float]]
    timestamps: Sequence[int] | None = None
    sigmas: Sequence[float | None] | None = None
    bearings: Sequence[tuple[float, float] | None] | None = None


@dataclass(frozen=True)
class Tidied:
    """What `tidy_trace` keeps: the original index of each kept point, per original point whether it was left out,
    the waypoints as indices among the kept points (None when the request gave none), and per original point
    whether it is a waypoint (all of them when none were given)."""

    kept: list[int]
    removed: list[bool]
    waypoints: list[int] | None
    was_waypoint: list[bool]


def tidy_trace(
    coordinates: Sequence[tuple[float, float]],
    timestamps: Sequence[int] | None,
    waypoints: Sequence[int] | None,
    enabled: bool,
) -> Tidied:
    """OSRM's `tidy` (`match_parameters_tidy.hpp`), or with `enabled` False its `keep_all`: walking the points, one
    is kept once the distance (and, with timestamps, the time) since the last kept one reaches 15 m (5 s); the
    first and the last are always kept. A waypoint left out hands its role to the last point kept before it."""
    n = len(coordinates)
    was_wp = [True] * n
    if waypoints:
        was_wp = [False] * n
        for w in waypoints:
            was_wp[w] = True
    removed = [False] * n
    if enabled:
        run_m, run_s = 0.0, 0
        for cur in range(n - 2):
            nxt = cur + 1
            run_m += gc_distance_m(*coordinates[cur], *coordinates[nxt])
            over = run_m >= TIDY_DISTANCE_M
            if timestamps:
                run_s += timestamps[nxt] - timestamps[cur]
                over = over and run_s >= TIDY_DURATION_S
            if over:
                run_m, run_s = 0.0, 0
            else:
                removed[nxt] = True
    kept: list[int] = []
    wps: list[int] = []
    for i in range(n):
        if not removed[i]:
            kept.append(i)
            if was_wp[i]:
                wps.append(len(kept) - 1)
        elif was_wp[i] and enabled and (not wps or wps[-1] != len(kept) - 1):
            wps.append(len(kept) - 1)
    return Tidied(kept, removed, wps if waypoints else None, was_wp)


def thin(lon: np.ndarray, lat: np.ndarray, sigma: np.ndarray, keep_always: np.ndarray) -> np.ndarray:
    """Indices of the points kept (Newson and Krumm's thinning, see the module's docstring): first, last, those
    marked in `keep_always`, and those `THIN_SIGMAS` standard deviations from the last kept one or before a jump
    of twice that."""
    return _thin(np.ascontiguousarray(lon, dtype=np.float64), np.ascontiguousarray(lat, dtype=np.float64),
                 np.ascontiguousarray(sigma, dtype=np.float64), keep_always, THIN_SIGMAS)  # fmt: skip


@kernel
def _thin(lon, lat, sigma, keep_always, sigmas):  # pragma: no cover - numba
    n = lon.shape[0]
    kept = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        if 0 < i < n - 1 and not keep_always[i]:
            last = kept[k - 1]
            limit = sigmas * sigma[i]
            near = gc_distance_m(lon[last], lat[last], lon[i], lat[i]) < limit
            jump = gc_distance_m(lon[last], lat[last], lon[i + 1], lat[i + 1]) >= 2 * limit
            if near and not jump:
                continue
        kept[k] = i
        k += 1
    return kept[:k].copy()


def pauses(timestamps: Sequence[int] | None, split_gaps: bool, n: int) -> np.ndarray:
    """Per point how many pauses in the recording come before it (OSRM's `gaps=split`: a step longer than 10 x the
    median sample time, the upper median, at least 1 s); zeros without timestamps or with `gaps=ignore`."""
    if not split_gaps or timestamps is None or len(timestamps) < 2:
        return np.zeros(n, dtype=np.int64)
    ts = np.asarray(timestamps, dtype=np.int64)
    diffs = np.diff(ts)
    median = max(1, int(np.sort(diffs)[len(diffs) // 2]))
    return np.concatenate([[0], np.cumsum(diffs > median * hmm.MAX_BROKEN_STATES)]).astype(np.int64)


@dataclass
class SubMatching:
    """One matched piece of a trace: its points (`indices` into the trace, increasing), the candidate chosen for
    each, per point how many other candidates still led to the piece's end, the confidence."""

    indices: list[int]
    phantoms: list[Phantom]
    alternatives: list[int]
    confidence: float


class Matcher:
    """Matches traces on one graph through this thread's searcher (`Router.query`)."""

    def __init__(self, router: Router, exclude: ExcludeSet | None) -> None:
        self.router = router
        self.exclude = exclude
        self.mask = exclude.mask if exclude is not None else 0
        self.max_speed = MAP_MATCHING_SPEED_MPS.get(router.graph.meta.profile, MAP_MATCHING_SPEED_MPS["car"])
        self.query = router.query()
        self.searcher = self.query.searcher_on("weight")

    def match(self, trace: Trace, split_gaps: bool, keep_always: Sequence[int] = ()) -> list[MatchedPart]:
        """The sub-matchings of `trace` with their routes (none when nothing matched); `keep_always`: points never
        thinned away (the request's waypoints). `NoSegment` when no point has a road within its search radius."""
        pts = np.asarray(trace.coordinates, dtype=np.float64).reshape(-1, 2)
        n = len(pts)
        sig = trace.sigmas or [None] * n
        sigma = np.array([DEFAULT_GPS_PRECISION_M if x is None else float(x) for x in sig])
        protect = np.zeros(n, dtype=bool)
        protect[list(keep_always)] = True
        kept = thin(pts[:, 0], pts[:, 1], sigma, protect)
        bearings = [trace.bearings[i] for i in kept] if trace.bearings is not None else None
        cands = CandidateSet(self.router, pts[kept, 0], pts[kept, 1], RADIUS_MULTIPLIER * sigma[kept],
                             sigma[kept], bearings, self.mask)  # fmt: skip
        has = np.flatnonzero(cands.counts() > 0)
        if len(has) == 0:
            raise NoSegment("Could not find a matching segment for any coordinate.")
        points = kept[has]
        cands = cands.subset(has)
        ts = np.asarray(trace.timestamps, dtype=np.int64)[points] if trace.timestamps else np.zeros(0, np.int64)
        tr = hmm.Trace(pts[points, 0].copy(), pts[points, 1].copy(), ts, sigma[points],
                       pauses(trace.timestamps, split_gaps, n)[points], self.max_speed)  # fmt: skip
        arrays = cands.arrays()
        model = hmm.new_model(len(points), len(cands))
        self._run(arrays, tr, model)
        parts = []
        for path, alternatives, conf in _sub_matchings(model, arrays, tr):
            phantoms = cands.phantoms(path)
            indices = [int(points[cands.point[k]]) for k in path]
            route = self._route(cands, arrays, model, np.array(path, dtype=np.int64), phantoms)
            parts.append(MatchedPart(route, SubMatching(indices, phantoms, alternatives, conf)))
        return parts

    def _route(self, cands: CandidateSet, c: hmm.Candidates, model: hmm.Model, path: np.ndarray,
               phantoms: list[Phantom]) -> Route:  # fmt: skip
        """The matching's route: one leg per pair of consecutive states, along the path the model's search found
        for it (found again, bounded by its weight) or the direct stretch; OSRM routes through the phantoms anew.
        The legs are assembled as `Assembler.search_leg` / `direct_leg` do, all in one kernel call."""
        s = self.searcher
        sg = s.graph
        space = self.router.space
        if isinstance(space, EdgeSpace):
            e = space.edges
            eb = (e.arc_turn, e.arc_turn_time, e.node_arc, e.s_head)
        else:
            none = np.zeros(1, dtype=np.int32)
            eb = (sg.arc_dist, sg.arc_dist, none, sg.arc_head)
        rows, arcs, s.query = hmm.leg_paths(c, path, model, space.edge_based, s.g, s.lab, s.p, np.uint8(self.mask),
                                            s.forbid, s.buf, s.out, s.query, sg.arc_dist, sg.arc_duration, eb[0],
                                            eb[1])  # fmt: skip
        gf = self.router.snapper._gf
        seg_local = (cands.seg - gf[cands.chain]).astype(np.int64)
        coords, geom, c_first, pieces, p_first, totals = _assemble_all(
            rows, arcs, path, cands.fig, cands.chain, seg_local, space.edge_based, *eb,
            self.router.legs.assembler.geometry,
        )  # fmt: skip
        legs = []
        stats = SearchStats("dijkstra")
        arc = pieces[:, 0].astype(np.int32)
        time_s, weight_s, ends = pieces[:, 4] / WEIGHT_PER_SECOND, pieces[:, 1] / WEIGHT_PER_SECOND, pieces[:, 3]
        for i, (w, _d, t) in enumerate(totals.tolist()):
            assert w == rows[i, 0], f"match leg {i}: the path weighs {w} ds, the model found {rows[i, 0]}"
            a, b = p_first[i], p_first[i + 1]
            leg_coords = coords[c_first[i] : c_first[i + 1]]
            dist_m = piece_distances_m(leg_coords, ends[a:b])  # OSRM's distances, as the router's legs
            legs.append(Leg(
                weight=w, duration_s=t / WEIGHT_PER_SECOND, distance_m=float(dist_m.sum()),
                coordinates=leg_coords, piece_arc=arc[a:b], piece_distance_m=dist_m,
                piece_duration_s=time_s[a:b], piece_coord_end=ends[a:b], stats=stats, source=phantoms[i],
                target=phantoms[i + 1], piece_weight=weight_s[a:b], coord_geom=geom[c_first[i] : c_first[i + 1]],
            ))  # fmt: skip
        return join_route(legs, "dijkstra")

    def _run(self, c: hmm.Candidates, tr: hmm.Trace, model: hmm.Model) -> None:
        """The kernel on this thread's searcher (its stamps renewed when they could run out on the way)."""
        s = self.searcher
        if s.query > STAMP_LIMIT // 2:
            s.query = STAMP_LIMIT  # the next query clears the stamps
            s.next_query()
        s._ensure_heap(int(np.diff(c.src_first).max(initial=1)))
        g = s.graph
        s.query = hmm.run(c, tr, model, self.router.space.edge_based, s.g, s.lab, s.p, np.uint8(self.mask),
                          s.forbid, s.buf, s.out, s.query, g.arc_dist, g.arc_duration)  # fmt: skip


@dataclass
class MatchedPart:
    """One sub-matching and its route (one leg per pair of consecutive matched points)."""

    route: Route
    sub: SubMatching


def _sub_matchings(m: hmm.Model, c: hmm.Candidates, tr: hmm.Trace) -> list[tuple[list[int], list[int], float]]:
    """OSRM's reconstruction per piece between splits: (the chosen candidates in order, per point the other states
    that still reach a final one, the confidence)."""
    n_splits, begin = int(m.out[0]), int(m.out[1])
    out = []
    reach = np.zeros(len(c.em), dtype=bool)
    first = c.first
    for end in m.splits[:n_splits].tolist():
        last = end - 1
        while last >= begin and m.breakage[last]:
            last -= 1
        while begin < end and m.breakage[begin]:
            begin += 1
        if last - begin + 1 < 2:
            begin = end
            continue
        t, k = last, int(first[last] + np.argmax(m.viterbi[first[last] : first[last + 1]]))
        path = []
        while t > begin:
            path.append((t, k))
            reach[k] = True
            nt, nk = int(m.parent_t[t]), int(m.parent[k])
            if nt == t:
                break
            t, k = nt, nk
        path.append((t, k))
        reach[k] = True
        path.reverse()
        if len(path) < 2:
            begin = end
            continue
        for k_last in range(int(first[last]), int(first[last + 1])):  # every final state's way back
            t, k = last, k_last
            while t > begin:
                if reach[k] or m.pruned[k]:
                    break
                reach[k] = True
                t, k = int(m.parent_t[t]), int(m.parent[k])
            reach[k] = True
        alternatives = [int(reach[first[t] : first[t + 1]].sum()) - 1 for t, _ in path]
        matched = float(sum(m.length[k] for _, k in path))
        idx = [t for t, _ in path]
        traced = float(haversine_m(tr.lon[idx[:-1]], tr.lat[idx[:-1]], tr.lon[idx[1:]], tr.lat[idx[1:]]).sum())
        out.append(([k for _, k in path], alternatives, hmm.confidence(traced, matched)))
        begin = end
    return out


@kernel
def _assemble_all(
    rows, arcs, path, fig, chain, seg, edge_based, turn_w, turn_t, node_arc, s_head, geometry
):  # fmt: skip  # pragma: no cover - numba
    """Every leg of a matching (`hmm.leg_paths`' rows and search arcs, the candidates' figures) through the legs'
    own `_assemble`, with the arguments `Assembler.search_leg` and `direct_leg` give it: (coordinates [K, 2], the
    shape point behind each [K], their CSR per leg, pieces [P, 5] = arc, weight, dist, coordinate end, time and
    their CSR, per leg its weight, dist and time)."""
    k = rows.shape[0]
    c_first = np.zeros(k + 1, dtype=np.int64)
    p_first = np.zeros(k + 1, dtype=np.int64)
    totals = np.zeros((k, 3), dtype=np.int64)
    parts_c = []
    parts_g = []
    parts_p = []
    at = 0
    none = np.zeros(0, dtype=np.int64)
    for i in range(k):
        u, v = path[i], path[i + 1]
        direct = rows[i, 1] >= 0
        n = 0 if direct else rows[i, 7]
        road = np.empty(n + 1, dtype=np.int32)
        tw = np.zeros(n + 1, dtype=np.int64)
        tt = np.zeros(n + 1, dtype=np.int64)
        m = 0
        s_kind = rows[i, 1] if direct else rows[i, 2]
        if not direct and edge_based and (s_kind == AT_FIRST or s_kind == AT_LAST):
            road[0] = node_arc[rows[i, 3]]  # started on the seed's whole arc, no turn
            m = 1
        for x in range(n):
            a = arcs[at + x]
            if edge_based:
                road[m] = node_arc[s_head[a]]
                tw[m], tt[m] = turn_w[a], turn_t[a]
            else:
                road[m] = a
            m += 1
        at += n
        fs = fig[u]
        ft = fig[v]
        if direct:
            kind = rows[i, 1]
            if kind == FWD:
                arc, w, d, t = fs[3], ft[5] - fs[5], ft[7] - fs[7], ft[17] - fs[17]
            else:
                arc, w, d, t = fs[4], ft[9] - fs[9], ft[11] - fs[11], ft[19] - fs[19]
            src = LegEnd(fs[0], fs[1], np.int64(chain[u]), np.int64(seg[u]), np.int64(kind), np.int64(arc),
                         np.int64(max(w, 0)), np.int64(max(d, 0)), np.int64(max(t, 0)))  # fmt: skip
            tgt = LegEnd(ft[0], ft[1], np.int64(chain[v]), np.int64(seg[v]), np.int64(kind), np.int64(arc),
                         np.int64(0), np.int64(0), np.int64(0))  # fmt: skip
            out = _assemble(road[:0], geometry, src, tgt, True, none, none)
        else:
            if s_kind == FWD:
                s_arc, s_w, s_d, s_t = fs[3], fs[6], fs[8], fs[18]
            elif s_kind == BWD:
                s_arc, s_w, s_d, s_t = fs[4], fs[10], fs[12], fs[20]
            else:
                s_arc, s_w, s_d, s_t = (fs[3] if fs[3] >= 0 else fs[4]), 0.0, 0.0, 0.0
            t_kind = rows[i, 4]
            if t_kind == FWD:
                t_arc, t_w, t_d, t_t = ft[3], ft[5], ft[7], ft[17]
            elif t_kind == BWD:
                t_arc, t_w, t_d, t_t = ft[4], ft[9], ft[11], ft[19]
            else:
                t_arc, t_w, t_d, t_t = (ft[3] if ft[3] >= 0 else ft[4]), 0.0, 0.0, 0.0
            src = LegEnd(fs[0], fs[1], np.int64(chain[u]), np.int64(seg[u]), np.int64(s_kind), np.int64(s_arc),
                         np.int64(s_w), np.int64(s_d), np.int64(s_t))  # fmt: skip
            tgt = LegEnd(ft[0], ft[1], np.int64(chain[v]), np.int64(seg[v]), np.int64(t_kind), np.int64(t_arc),
                         np.int64(t_w) + rows[i, 5], np.int64(t_d), np.int64(t_t) + rows[i, 6])  # fmt: skip
            out = _assemble(road[:m], geometry, src, tgt, False, tw[:m], tt[:m])
        coords, p_arc, p_w, p_d, ends, p_t, geom, _first = out
        pieces = np.empty((p_arc.shape[0], 5), dtype=np.int64)
        for x in range(p_arc.shape[0]):
            pieces[x, 0], pieces[x, 1], pieces[x, 2], pieces[x, 3], pieces[x, 4] = (
                p_arc[x],
                p_w[x],
                p_d[x],
                ends[x],
                p_t[x],
            )
            totals[i, 0] += p_w[x]
            totals[i, 1] += p_d[x]
            totals[i, 2] += p_t[x]
        parts_c.append(coords)
        parts_g.append(geom)
        parts_p.append(pieces)
        c_first[i + 1] = c_first[i] + coords.shape[0]
        p_first[i + 1] = p_first[i] + pieces.shape[0]
    all_c = np.empty((c_first[k], 2), dtype=np.float64)
    all_g = np.empty(c_first[k], dtype=np.int64)
    all_p = np.empty((p_first[k], 5), dtype=np.int64)
    for i in range(k):
        for x in range(parts_c[i].shape[0]):
            all_c[c_first[i] + x, 0] = parts_c[i][x, 0]
            all_c[c_first[i] + x, 1] = parts_c[i][x, 1]
            all_g[c_first[i] + x] = parts_g[i][x]
        for x in range(parts_p[i].shape[0]):
            for y in range(5):
                all_p[p_first[i] + x, y] = parts_p[i][x, y]
    return all_c, all_g, c_first, all_p, p_first, totals

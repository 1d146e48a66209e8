"""Legs: one search per pair of consecutive waypoints, the stretch along a shared chain, OSRM's `continue_straight`
at via points, and legs merged into one (OSRM's `waypoints=`).

`Legs` is immutable and shared (it holds the search space, the leg assembler and the snapper); each call takes the
thread's search object. A leg is a search between the seeds of two phantoms (`app.engine.route.space`), the search path
mapped to road arcs and assembled into pieces (`app.engine.route.assemble`), unless the direct stretch along the chain
both phantoms share is at least as cheap.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import NamedTuple, Protocol

import numpy as np

from app.engine.errors import NoRoute
from app.engine.route.assemble import BWD, FWD, Assembler, leg_of
from app.engine.route.ch_leg import DIRECT, DIRECT_FIRST, NO_ROUTE, ch_leg
from app.engine.route.space import SearchSpace, SeedSet
from app.engine.search.ch import D_MASK, CHSearch
from app.engine.snap.snapper import Snapper
from app.engine.types import (
    HotPath,
    Leg,
    Phantom,
    SearchOptions,
    SearchResult,
    SearchStats,
    SearchTrace,
    Seeds,
    new_seeds,
)
from floor.format.units import CLOSED_DS, INF_WEIGHT
from floor.kernels.geometry import osrm_distances_m, osrm_fixed


class Search(Protocol):
    """A point-to-point search (one instance per thread; arrays allocated in `__init__`). Every search takes the
    same options and refuses, by name, one it cannot honour."""

    def run(self, sources: Seeds, targets: Seeds, options: SearchOptions) -> SearchResult: ...


# `_joint_step` keeps a leg's distance below 2^31 / 16 dm (13,400 km): more states run pairwise, and so do states
# whose totals lie a closed road apart or more (their offsets then stay far below the seeds' 2^32 ds)
MAX_JOINT_STATES = 16


class _Found(NamedTuple):
    """A searched leg not assembled yet (`Legs._leg_on`): its weight, the search's answer and both seed sets."""

    weight: int
    algorithm: str
    src: Phantom
    s: SeedSet
    tgt: Phantom
    t: SeedSet
    result: SearchResult


class _Leaving(NamedTuple):
    """A state a leg may leave a via point in (`Legs._straight_legs`): its place, direction (None: the route's start)
    and seeds, with the total weight, legs and traces of the best route arriving so."""

    src: Phantom
    s_dir: int | None
    seeds: SeedSet
    total: int
    legs: list[Leg | _Found]
    traces: list[SearchTrace]


class _Step(NamedTuple):
    """One step of `Legs._straight_legs`: leg `i`'s leaving states, the places it may arrive at (`there`), the
    arriving states (place index, FWD/BWD/None) with their target seeds, and whether it is the route's last leg."""

    i: int
    states: list[_Leaving]
    there: list[Phantom]
    targets: list[tuple[int, int | None]]
    target_sets: list[SeedSet]
    last: bool


_Arriving = dict[tuple[int, int | None] | None, tuple[int, list[Leg | _Found], list[SearchTrace]]]
"""`_straight_legs`' states at a via point, (place, FWD/BWD/None) or None at the route's end -> (total weight, legs,
traces) of the best route arriving in it."""


class Legs:
    """Legs over one graph's search space (immutable, shared by every thread)."""

    def __init__(self, space: SearchSpace, assembler: Assembler, snapper: Snapper, hot_path: HotPath) -> None:
        self.space = space
        self.assembler = assembler
        self.snapper = snapper
        self.hot_path = hot_path  # plain hierarchy legs in one kernel call (`ch_leg`) or step by step

    def segment_figures(self, leg: Leg) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per segment of the leg's coordinates: distance (m), duration (s) and weight (s of weight) as OSRM's
        annotations give them, each segment's own time without the turns and node obstacles (the graph's
        per-segment values, `geom_seg_duration` / `geom_seg_weight`); the snapped ends' partial segments take what
        their piece has left. A graph without per-segment values, or a matched leg, splits each piece by length
        (`segment_figures`)."""
        g = self.space.graph
        dist, dur, wgt = segment_figures(leg)
        n = dist.shape[0]
        p = leg.piece_arc.shape[0]
        if not g.has("geom_seg_duration") or n == 0 or leg.coord_geom.shape[0] != n + 1:
            return dist, dur, wgt
        geom = np.asarray(g.arc_geom)
        gfirst = np.asarray(g.geom_first)
        glon, glat = np.asarray(g.geom_lon), np.asarray(g.geom_lat)
        cg = leg.coord_geom.astype(np.int64)
        ends = leg.piece_coord_end.astype(np.int64)
        turn_s = leg.piece_turn_s if leg.piece_turn_s is not None else np.zeros(p)
        turn_w = leg.piece_turn_weight if leg.piece_turn_weight is not None else np.zeros(p)
        fixed = np.round(leg.coordinates * 1e7).astype(np.int64)
        dur, wgt = dur.copy(), wgt.copy()
        start = 0
        for k in range(p):
            end = int(ends[k])
            if end <= start:
                start = end
                continue
            code = int(geom[int(leg.piece_arc[k])])
            along = not code & 1
            p0, p1 = int(gfirst[code >> 1]), int(gfirst[(code >> 1) + 1]) - 1
            js = np.arange(start, end + 1)
            step = 1 if along else -1
            first_pt, last_pt = (p0, p1) if along else (p1, p0)

            def on(j: int, q: int) -> bool:
                return bool(0 <= q < glon.shape[0] and fixed[j, 0] == glon[q] and fixed[j, 1] == glat[q])

            # the chain point behind each coordinate: counted back from the chain's end where the piece reaches it,
            # on from its start where the piece leaves it, else the leg's own (a piece inside one chain)
            if on(end, last_pt):
                idx = last_pt - step * (end - js)
            elif on(start, first_pt):
                idx = first_pt + step * (js - start)
            else:
                idx = cg[start : end + 1].copy()
            at_point = [on(int(j), int(q)) for j, q in zip(js, idx, strict=True)]
            obstacle_col, seg_col = (2, 0) if along else (3, 1)
            at_vertex = -1  # the leg starts on a shape point: its obstacle is in the piece, in no segment
            if k == 0:
                for q in (int(idx[0]), int(idx[0]) + step):
                    if p0 <= q <= p1 and (len(idx) < 2 or q != idx[1]) and on(start, q):
                        at_vertex = q
                        break
            for table, piece_total, turn, out in (
                (g.geom_seg_duration, leg.piece_duration_s, turn_s, dur),
                (g.geom_seg_weight, leg.piece_weight, turn_w, wgt),
            ):
                left = round(float(piece_total[k] - turn[k]) * 10)
                if at_vertex >= 0:
                    left -= int(table[at_vertex, obstacle_col])
                partial = []
                for i in range(start, end):
                    j = i - start
                    if i + 1 < n and at_point[j + 1]:  # the obstacle at a point passed (the leg's last is not)
                        left -= int(table[idx[j + 1], obstacle_col])
                    if not (at_point[j] and at_point[j + 1] and abs(int(idx[j + 1]) - int(idx[j])) == 1):
                        partial.append(i)
                        continue
                    own = int(table[max(idx[j], idx[j + 1]), seg_col])
                    out[i] = own / 10.0
                    left -= own
                if partial:
                    share = dist[partial] / max(float(dist[partial].sum()), 1e-9)
                    out[partial] = max(left, 0) * share / 10.0
            start = end
        return dist, dur, wgt

    def osm_nodes(self, leg: Leg) -> np.ndarray:
        """The OSM node id behind each coordinate of `leg` (`Leg.coord_geom`; 0 where the graph has none)."""
        return np.asarray(self.space.graph.geom_osm_id)[leg.coord_geom]

    def direct(self, src: Phantom, tgt: Phantom) -> tuple[int, int, int, int] | None:
        """(weight, dist, FWD|BWD, travel time) of the best stretch along the chain both phantoms share, or None."""
        if src.chain != tgt.chain:
            return None
        os_, ot = self.snapper.offset_m(src), self.snapper.offset_m(tgt)
        sfb, _, sbb, _ = src.times()
        tfb, _, tbb, _ = tgt.times()
        best = None
        if src.fwd_arc >= 0 and tgt.fwd_arc >= 0 and ot >= os_:
            best = (tgt.fwd_weight_before - src.fwd_weight_before, tgt.fwd_dist_before - src.fwd_dist_before, FWD,
                    tfb - sfb)  # fmt: skip
        if src.bwd_arc >= 0 and tgt.bwd_arc >= 0 and ot <= os_:
            b = (tgt.bwd_weight_before - src.bwd_weight_before, tgt.bwd_dist_before - src.bwd_dist_before, BWD,
                 tbb - sbb)  # fmt: skip
            if best is None or b[0] < best[0]:
                best = b
        if best is None:
            return None
        return max(best[0], 0), max(best[1], 0), best[2], max(best[3], 0)

    def _direct_on(
        self, src: Phantom, tgt: Phantom, s_dir: int | None, t_dir: int | None
    ) -> tuple[int, int, int, int] | None:
        """`direct`, None unless it leaves the way `s_dir` says and arrives the way `t_dir` says (FWD/BWD; None:
        either way)."""
        dr = self.direct(src, tgt)
        if dr is not None and ((s_dir is not None and dr[2] != s_dir) or (t_dir is not None and dr[2] != t_dir)):
            return None
        return dr

    def same_place(self, src: Phantom, tgt: Phantom) -> tuple[Phantom, Phantom, int] | None:
        """(source, target, FWD|BWD) of OSRM's leg between two waypoints at one place (both snapped to the same point
        at 1e-6 degrees with the same candidates), None when they are not. Every candidate direction then meets itself
        at weight 0 in OSRM's two-waypoint search (`directShortestPathSearch`), and its `routingStep` keeps the last
        such meeting (`new_weight <= upper_bound`): the target heap's last pop, i.e. the candidate direction whose
        target key (OSRM's `GetForwardWeightPlusOffset` / `GetReverseWeightPlusOffset`: the weight from the start of
        its road to the point that way) is largest, the later one inserted on ties (candidates in order, each OSRM
        edge's forward direction before its reverse). So a route from a junction to itself runs (zero metres) along
        the road arriving there with the largest weight, and one inside a road along the direction with more of the
        road behind it."""
        if (osrm_fixed(src.lon), osrm_fixed(src.lat)) != (osrm_fixed(tgt.lon), osrm_fixed(tgt.lat)):
            return None
        cands_s, cands_t = self._candidates_here(src), self._candidates_here(tgt)
        if [(p.chain, p.segment) for p in cands_s] != [(p.chain, p.segment) for p in cands_t]:
            return None
        flip = self.space.chains.osrm_flip
        best: tuple[int, Phantom, Phantom, int] | None = None
        for ps, pt in zip(cands_s, cands_t, strict=True):
            for kind in (BWD, FWD) if flip[ps.chain] else (FWD, BWD):
                if min(ps.fwd_arc, pt.fwd_arc) < 0 if kind == FWD else min(ps.bwd_arc, pt.bwd_arc) < 0:
                    continue
                key = pt.fwd_weight_before if kind == FWD else pt.bwd_weight_before
                if best is None or key >= best[0]:
                    best = (key, ps, pt, kind)
        return None if best is None else best[1:]

    def _candidates_here(self, ph: Phantom) -> list[Phantom]:
        """OSRM's candidates at a phantom's point, in order: on a road node with candidate roads
        (`Phantom.at_chains`), a phantom at the node's end of each road meeting there (at the start of OSRM's edge
        when both ends are there: OSRM keeps a road's lowest segment at a point); else the phantom itself."""
        at, _ = self.space.at_chain_end(ph)
        if at < 0 or ph.at_chains is None:
            return [ph]
        ch = self.space.chains
        here = {at, *self.space.same_place(at).tolist()}
        out = []
        for c in ph.at_chains:
            first, last = int(ch.first_node[c]) in here, int(ch.last_node[c]) in here
            if first or last:  # a road whose projection only rounds onto the node is left out (`_via_states`)
                out.append(
                    self.snapper.at_end(ph.input_lon, ph.input_lat, c, last and (not first or bool(ch.osrm_flip[c])))
                )
        return out

    def route_legs(
        self,
        search: Search,
        algorithm: str,
        phantoms: Sequence[Phantom],
        options: SearchOptions,
        continue_straight: bool,
    ) -> tuple[list[Leg], list[SearchTrace]]:
        """The legs through `phantoms` in order, and the traces of their searches (when `options.trace`); with
        `continue_straight` on an edge-based graph, no leg turns back at a via point."""
        if continue_straight and self.space.edge_based and len(phantoms) > 2:
            return self._straight_legs(search, algorithm, phantoms, options)
        if len(phantoms) == 2 and options.forbidden is None:
            here = self.same_place(phantoms[0], phantoms[1])
            if here is not None:
                return [self.assembler.direct_leg(*here, SearchStats(algorithm))], []
        legs, traces = [], []
        for i in range(len(phantoms) - 1):
            leg, trace, _ = self.leg(search, algorithm, i, phantoms[i], phantoms[i + 1], options)
            legs.append(leg)
            if trace is not None:
                traces.append(trace)
        return legs, traces

    def _straight_legs(
        self, search: Search, algorithm: str, phantoms: Sequence[Phantom], options: SearchOptions
    ) -> tuple[list[Leg], list[SearchTrace]]:
        """Legs through via points without turning back there (OSRM's `continue_straight`): a leg leaves a via point
        as the previous one arrived (`_via_states`: FWD or BWD along its road, or along one of the roads at a via
        point on a road node). Dynamic programming over the state a leg arrives in at each via point: on the
        hierarchy one search per arriving state from every leaving state at once (`_joint_step`), else one search
        per (leaving, arriving) state pair; the first state on ties. Each place's seeds are made once per state, and
        only the winning legs are assembled (`_Found`: a searched leg is its search's weight until then)."""
        k = len(phantoms)
        joint = isinstance(search, CHSearch) and not options.trace  # one search per arriving state (`_joint_step`)
        # best[(j, d)] = (total weight, legs, traces) arriving at the current via point in its state j, direction d
        # (None: the route's start)
        best: _Arriving = {None: (0, [], [])}
        places: list[Phantom] = []
        space = self.space
        # the waypoints' own seeds, as sources and as targets, in one kernel call each (None: made per place below)
        made = {True: space.seed_sets(phantoms[:-1], True), False: space.seed_sets(phantoms[1:], False)}

        def seeds_of(ph: Phantom, as_source: bool, at: int) -> SeedSet:
            """The seeds of place `ph` of waypoint `at`: made above when the place is the waypoint itself."""
            got = made[as_source][at - (0 if as_source else 1)] if ph is phantoms[at] else None
            return got if got is not None else space.seeds(ph, as_source)

        for i in range(k - 1):
            last = i == k - 2
            end: list[tuple[int, int | None]] = [(0, None)]
            there, targets = ([phantoms[-1]], end) if last else self._via_states(phantoms[i + 1])
            # each place's seeds made once per leg, and kept to each state's direction once
            as_target = [seeds_of(ph, False, i + 1) for ph in there]
            target_sets = [as_target[j].only(t_dir) for j, t_dir in targets]
            as_source: dict[int | None, SeedSet] = {}
            states: list[_Leaving] = []
            for key_in in best:
                src, s_dir = (phantoms[i], None) if key_in is None else (places[key_in[0]], key_in[1])
                place = None if key_in is None else key_in[0]
                s_all = as_source.get(place)
                if s_all is None:
                    s_all = as_source[place] = seeds_of(src, True, i)
                states.append(_Leaving(src, s_dir, s_all.only(s_dir), *best[key_in]))
            totals = [st.total for st in states]
            at_once = joint and len(states) <= MAX_JOINT_STATES and max(totals) - min(totals) < CLOSED_DS
            run_step = self._joint_step if at_once else self._pairwise_step
            nxt = run_step(search, algorithm, _Step(i, states, there, targets, target_sets, last), options)
            if not nxt:
                raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1} without turning back at a via point")
            best, places = nxt, there
        _, found, traces = min(best.values(), key=lambda v: v[0])
        return [self._built(x) for x in found], traces

    def _pairwise_step(self, search: Search, algorithm: str, step: _Step, options: SearchOptions) -> _Arriving:
        """One step of `_straight_legs`' dynamic programming, one search per (leaving, arriving) state pair."""
        i, states, there, targets, target_sets, last = step
        nxt: _Arriving = {}
        for st in states:
            for (j, t_dir), t in zip(targets, target_sets, strict=True):
                try:
                    got, trace, arrive = self._leg_on(search, algorithm, i, st.src, there[j], options, st.seeds, t,
                                                      st.s_dir, t_dir)  # fmt: skip
                except NoRoute:
                    continue
                key = None if last else (j, arrive)
                total = st.total + got.weight
                if key not in nxt or total < nxt[key][0]:
                    nxt[key] = (total, [*st.legs, got], [*st.traces, *([trace] if trace is not None else [])])
        return nxt

    def _joint_step(self, search: Search, algorithm: str, step: _Step, options: SearchOptions) -> _Arriving:
        """One step of `_straight_legs`' dynamic programming with one search per arriving state, seeded from every
        leaving state at once (OSRM's via-route search): each state's seeds start at its total so far, less the
        smallest (so keys stay small), and at `k * spread` decimetres of distance for the k-th state in order. The
        hierarchy's keys are (weight, distance) in order, so among paths of equal total weight the search ends on
        the first state's, as the pairwise step keeps the first state on ties; within a state, the distance breaks
        ties as in its own search (an exact tie of both may settle in another order than there). A leaving state's
        stretch along the road it shares with the arriving one is weighed beside the search as in `_leg_on` (a
        stretch no path can beat is taken without searching; the stretch on ties). The arriving states come out in
        the order of `targets`."""
        i, states, there, targets, target_sets, last = step
        totals = [st.total for st in states]
        spread = (D_MASK + 1) // len(states)  # a leg's distance (dm) stays below it: 107,000 km for 2 states
        sources: dict[tuple[int, ...], tuple[Seeds, list[int], int]] = {}  # the same for each arriving state, mostly
        nxt: _Arriving = {}
        for (j, t_dir), t in zip(targets, target_sets, strict=True):
            tgt = there[j]
            if len(t.kinds) == 0:
                continue
            stretches: list[tuple[int, int, bool] | None] = []  # per state: (stretch weight, FWD|BWD, searched)
            searched: list[int] = []
            for k, (src, s_dir, s, *_) in enumerate(states):
                if len(s.kinds) == 0:
                    stretches.append(None)
                    continue
                dr = self._direct_on(src, tgt, s_dir, t_dir)
                if dr is not None and _unbeatable(dr[0], s, t):
                    stretches.append((dr[0], dr[2], False) if dr[0] < CLOSED_DS else None)
                    continue  # no path beats the stretch (a stretch over a closed road: no leg from this state)
                stretches.append((dr[0], dr[2], True) if dr is not None and dr[0] < CLOSED_DS else None)
                searched.append(k)
            found: tuple[int, int, SearchResult] | None = None  # (state, total, the leg's own search answer)
            if searched:
                key_s = tuple(searched)
                got_s = sources.get(key_s)
                if got_s is None:
                    got_s = sources[key_s] = self._joint_sources(states, key_s, spread)
                joint, starts, least = got_s
                res = search.run(joint, t.seeds, options)
                if res.source_seed >= 0:
                    at = bisect_right(starts, res.source_seed) - 1
                    k = searched[at]
                    leg_w = res.weight - (totals[k] - least)  # the state's seeds started at that offset
                    if leg_w < CLOSED_DS:
                        found = (k, totals[k] + leg_w, SearchResult(leg_w, res.arcs, res.source_seed - starts[at],
                                                                    res.target_seed, res.stats))  # fmt: skip
            ends = [totals[k] + x[0] for k, x in enumerate(stretches) if x is not None]
            if found is not None:
                ends.append(found[1])
            if not ends:
                continue  # no leg to this arriving state
            best_total = min(ends)
            for k, x in enumerate(stretches):
                src = states[k].src
                if x is not None and totals[k] + x[0] == best_total:
                    stats = found[2].stats if x[2] and found is not None else SearchStats(algorithm)
                    got: Leg | _Found = self.assembler.direct_leg(src, tgt, x[1], stats)
                    arrive: int | None = x[1]
                    break
                if found is not None and found[0] == k and found[1] == best_total:
                    res = found[2]
                    got = _Found(res.weight, algorithm, src, states[k].seeds, tgt, t, res)
                    kind = int(t.kinds[res.target_seed])
                    arrive = kind if kind in (FWD, BWD) else None
                    break
            key = None if last else (j, arrive)
            if key not in nxt or best_total < nxt[key][0]:
                nxt[key] = (best_total, [*states[k].legs, got], states[k].traces)
        return nxt

    @staticmethod
    def _joint_sources(states: list[_Leaving], searched: tuple[int, ...], spread: int) -> tuple[Seeds, list[int], int]:
        """`_joint_step`'s source seeds for the leaving states `searched`, each state's at its total so far less
        the smallest and `k * spread` dm for the k-th state; with where each state's seeds start among them, and
        that smallest total."""
        parts = [states[k].seeds.seeds for k in searched]
        least = min(states[k].total for k in searched)
        if len(parts) == 1:  # one state: no offsets to tell it from others
            return parts[0], [0], least
        starts = [0]
        for p in parts:
            starts.append(starts[-1] + p.nodes.shape[0])
        sources = new_seeds(
            np.concatenate([p.nodes for p in parts]),
            np.concatenate([p.weights + (states[k].total - least) for p, k in zip(parts, searched, strict=True)]),
            np.concatenate([p.dists + k * spread for p, k in zip(parts, searched, strict=True)]),
            parts[0].lon,
            parts[0].lat,
            np.concatenate([p.duration_array() for p in parts]),
        )
        return sources, starts, least

    def _via_states(self, ph: Phantom) -> tuple[list[Phantom], list[tuple[int, int | None]]]:
        """The places a route may pass a via point on under `continue_straight`, and its states there in order
        (place index, direction FWD/BWD): the phantom itself, both ways along its road; on a road node with candidate
        roads (`Phantom.at_chains`), OSRM's candidates there instead, a phantom at the node's end of each road
        meeting there, leaving the node along it first (a turn at the via point then counts in the leg that arrives:
        OSRM's search keeps a seed over an equal path), then arriving. A road whose projection only rounds onto the
        node is left out."""
        at, _ = self.space.at_chain_end(ph)
        if at < 0 or ph.at_chains is None:
            return [ph], [(0, FWD), (0, BWD)]
        ch = self.space.chains
        here = {at, *self.space.same_place(at).tolist()}
        places: list[Phantom] = []
        leaving: list[tuple[int, int | None]] = []
        arriving: list[tuple[int, int | None]] = []
        for c in ph.at_chains:
            first = int(ch.first_node[c]) in here
            if not first and int(ch.last_node[c]) not in here:
                continue
            places.append(self.snapper.at_end(ph.input_lon, ph.input_lat, c, not first))
            leaving.append((len(places) - 1, FWD if first else BWD))
            arriving.append((len(places) - 1, BWD if first else FWD))
        return places, leaving + arriving

    def leg(
        self,
        search: Search,
        algorithm: str,
        i: int,
        src: Phantom,
        tgt: Phantom,
        options: SearchOptions,
        s_dir: int | None = None,
        t_dir: int | None = None,
    ) -> tuple[Leg, SearchTrace | None, int | None]:
        """One leg (and its trace); `s_dir`/`t_dir` (FWD/BWD) keep only the seeds leaving / arriving that way along
        the phantoms' roads (seeds on a junction node always stay); with the direction the leg arrives in (FWD/BWD,
        None on a junction node)."""
        space = self.space
        plain = s_dir is None and t_dir is None and not options.trace
        if plain and self.hot_path.fused and isinstance(search, CHSearch) and space.edge_based:
            places = space.plain_place(src), space.plain_place(tgt)  # type: ignore[attr-defined]
            if places[0] is not None and places[1] is not None:
                dr = self.direct(src, tgt)
                return self._ch_leg(search, algorithm, i, src, tgt, options, dr, places[0], places[1])
        s = space.seeds(src, True).only(s_dir)
        t = space.seeds(tgt, False).only(t_dir)
        got, trace, arrive = self._leg_on(search, algorithm, i, src, tgt, options, s, t, s_dir, t_dir)
        return self._built(got), trace, arrive

    def _leg_on(
        self,
        search: Search,
        algorithm: str,
        i: int,
        src: Phantom,
        tgt: Phantom,
        options: SearchOptions,
        s: SeedSet,
        t: SeedSet,
        s_dir: int | None,
        t_dir: int | None,
    ) -> tuple[Leg | _Found, SearchTrace | None, int | None]:
        """`leg` on the phantoms' seeds `s` and `t` (kept to `s_dir` / `t_dir` already): a leg along the direct
        stretch, or the search's answer to assemble (`_built`); its trace and the direction it arrives in."""
        dr = self._direct_on(src, tgt, s_dir, t_dir)
        if s_dir is not None or t_dir is not None:
            if len(s.kinds) == 0 or len(t.kinds) == 0:
                raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1}")
        if dr is not None and _unbeatable(dr[0], s, t):
            if dr[0] >= CLOSED_DS:  # the stretch crosses a road a speed file closed
                raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1}")
            return self.assembler.direct_leg(src, tgt, dr[2], SearchStats(algorithm)), None, dr[2]
        res = search.run(s.seeds, t.seeds, options)
        if dr is not None and dr[0] < CLOSED_DS and (res.weight >= CLOSED_DS or dr[0] <= res.weight):
            return self.assembler.direct_leg(src, tgt, dr[2], res.stats), res.trace, dr[2]
        if res.weight >= CLOSED_DS:  # unreachable (INF_WEIGHT), or only over a closed road
            raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1}")
        kind = int(t.kinds[res.target_seed])
        return _Found(res.weight, algorithm, src, s, tgt, t, res), res.trace, (kind if kind in (FWD, BWD) else None)

    def _built(self, got: Leg | _Found) -> Leg:
        """The leg `_leg_on` found: the search's path mapped to road arcs and assembled."""
        if isinstance(got, Leg):
            return got
        res, s, t = got.result, got.s, got.t
        arcs, turns = self.space.road_path(res.arcs, s, res.source_seed)
        kind = int(t.kinds[res.target_seed])
        leg = self.assembler.search_leg(
            got.src, int(s.kinds[res.source_seed]), arcs, got.tgt, kind, res.stats, turns,
            tuple(t.turns[res.target_seed]),
        )  # fmt: skip
        w = res.weight
        assert leg.weight == w, f"{got.algorithm}: path weighs {leg.weight} ds, the search reported {w}"
        return leg

    def _ch_leg(
        self,
        search: CHSearch,
        algorithm: str,
        i: int,
        src: Phantom,
        tgt: Phantom,
        options: SearchOptions,
        dr: tuple[int, int, int, int] | None,
        src_place: tuple[int, int],
        tgt_place: tuple[int, int],
    ) -> tuple[Leg, SearchTrace | None, int | None]:
        """`leg` in one kernel call (`app.engine.route.ch_leg`): the same leg, stretch or `NoRoute`."""
        search.check(options)
        edges = self.space.edges  # type: ignore[attr-defined]
        status, w, _, kind, parts, micros = ch_leg(
            search, edges, self.assembler, src, src_place, tgt, tgt_place, -1 if dr is None else dr[0]
        )
        if status == DIRECT_FIRST:
            assert dr is not None
            if dr[0] >= CLOSED_DS:  # the stretch crosses a road a speed file closed
                raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1}")
            return self.assembler.direct_leg(src, tgt, dr[2], SearchStats(algorithm)), None, dr[2]
        counters = search.counters
        stats = SearchStats("ch", int(counters[0]), int(counters[1]), micros)
        if status == DIRECT:
            assert dr is not None
            return self.assembler.direct_leg(src, tgt, dr[2], stats), None, dr[2]
        if status == NO_ROUTE:
            raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1}")
        assert parts is not None  # status LEG
        leg = leg_of(parts, stats, src, tgt, True)
        assert leg.weight == w, f"{algorithm}: path weighs {leg.weight} ds, the search reported {w}"
        return leg, None, (kind if kind in (FWD, BWD) else None)


def _unbeatable(stretch: int, s: SeedSet, t: SeedSet) -> bool:
    """Whether no path through the network can beat a direct stretch of weight `stretch` between seed sets `s` and
    `t`: it weighs no more than their cheapest seeds together."""
    least = min(s.seeds.weights.tolist(), default=INF_WEIGHT) + min(t.seeds.weights.tolist(), default=INF_WEIGHT)
    return stretch <= least


def merge_legs(legs: Sequence[Leg]) -> Leg:
    """One leg through several consecutive legs (OSRM's `waypoints=`): figures added, coordinates and pieces joined,
    the pieces' weights kept beside their durations."""
    if len(legs) == 1:
        return legs[0]
    coords = [legs[0].coordinates]
    ends = [legs[0].piece_coord_end]
    offset = legs[0].coordinates.shape[0] - 1
    for leg in legs[1:]:
        coords.append(leg.coordinates[1:])
        ends.append(leg.piece_coord_end + offset)
        offset += leg.coordinates.shape[0] - 1
    stats = SearchStats(legs[0].stats.algorithm)
    for leg in legs:
        stats.settled += leg.stats.settled
        stats.relaxed += leg.stats.relaxed
        stats.micros += leg.stats.micros
    return Leg(
        weight=sum(leg.weight for leg in legs),
        duration_s=sum(leg.duration_s for leg in legs),
        distance_m=sum(leg.distance_m for leg in legs),
        coordinates=np.concatenate(coords),
        piece_arc=np.concatenate([leg.piece_arc for leg in legs]),
        piece_distance_m=np.concatenate([leg.piece_distance_m for leg in legs]),
        piece_duration_s=np.concatenate([leg.piece_duration_s for leg in legs]),
        piece_coord_end=np.concatenate(ends),
        stats=stats,
        source=legs[0].source,
        target=legs[-1].target,
        piece_weight=np.concatenate([leg.piece_weight for leg in legs]),
        coord_geom=np.concatenate([legs[0].coord_geom] + [leg.coord_geom[1:] for leg in legs[1:]]),
        piece_turn_s=_joined(legs, "piece_turn_s"),
        piece_turn_weight=_joined(legs, "piece_turn_weight"),
    )


def _joined(legs: Sequence[Leg], name: str) -> np.ndarray | None:
    """The legs' per-piece turn figures `name` joined (zeros for a leg without them); None when no leg has any."""
    if all(getattr(leg, name) is None for leg in legs):
        return None
    parts = [getattr(leg, name) for leg in legs]
    return np.concatenate(
        [p if p is not None else np.zeros(leg.piece_arc.shape[0]) for p, leg in zip(parts, legs, strict=True)]
    )


def segment_figures(leg: Leg) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per segment of the leg's coordinates (one value per pair of consecutive points): distance (m), duration (s)
    and weight (s of weight): the distance is the segment's own (OSRM's formula, as its annotations), duration and
    weight are each piece's figures split over its segments by length."""
    coords = leg.coordinates
    nseg = coords.shape[0] - 1
    if nseg <= 0 or leg.piece_arc.shape[0] == 0:
        empty = np.zeros(0)
        return empty, empty, empty
    seg_len = osrm_distances_m(coords[:-1, 0], coords[:-1, 1], coords[1:, 0], coords[1:, 1])
    piece = np.searchsorted(leg.piece_coord_end, np.arange(nseg), side="right")
    piece = np.minimum(piece, leg.piece_arc.shape[0] - 1)
    per_piece = np.bincount(piece, weights=seg_len, minlength=leg.piece_arc.shape[0])
    count = np.bincount(piece, minlength=leg.piece_arc.shape[0])
    frac = np.where(per_piece[piece] > 0, seg_len / np.where(per_piece[piece] > 0, per_piece[piece], 1.0), 0.0)
    frac = np.where(per_piece[piece] > 0, frac, 1.0 / np.maximum(count[piece], 1))
    return seg_len, leg.piece_duration_s[piece] * frac, leg.piece_weight[piece] * frac

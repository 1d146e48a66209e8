"""Leg assembly: a search result (or a direct along-chain stretch) and its two phantoms -> coordinates and pieces.

A leg leaves its source phantom along one of the phantom's arcs (or right at a chain end node), follows the path's
arcs and enters the target phantom along one of its arcs. Its coordinates are the geometry chains of every arc in
travel order (reversed where `arc_geom` is odd), the first and last chains cut exactly at the snapped points, without
repeated joint points. Pieces (one per arc, the first and last possibly partial) carry the figures the API's step
builder needs. All work is proportional to the path.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.engine.types import Leg, Phantom, Route, SearchStats
from floor.format.graph import Graph
from floor.format.units import COORD_SCALE, WEIGHT_PER_SECOND
from floor.kernels.geometry import osrm_distance_m
from floor.kernels.jit import kernel

# How a leg leaves (source) or enters (target) a phantom.
FWD = 0  # along the phantom's fwd_arc (chain order)
BWD = 1  # along its bwd_arc (reverse chain order)
AT_FIRST = 2  # the phantom sits on the chain's first node: the leg starts/ends right there
AT_LAST = 3  # ... on the chain's last node

_SAME_POINT_DEG = 1e-9  # consecutive coordinates closer than this (0.1 mm) are one point


class LegGeometry(NamedTuple):
    """The road graph's arrays a leg's assembly reads (read-only, shared): built once per `Assembler`."""

    arc_geom: np.ndarray  # per arc: geometry chain << 1 | reversed
    arc_weight: np.ndarray  # per arc: weight (ds), dist (dm), travel time (ds)
    arc_dist: np.ndarray
    arc_time: np.ndarray
    gf: np.ndarray  # geometry chain CSR (int64)
    glon: np.ndarray  # shape points (COORD_SCALE)
    glat: np.ndarray


class LegEnd(NamedTuple):
    """How a leg leaves its source or enters its target phantom: the snapped point, its chain and segment, the kind
    (FWD, BWD, AT_FIRST, AT_LAST) and the arc with the partial piece's weight, dist, travel time on it. Kernels build
    it with float64 and int64 fields (`leg_end` from Python), so each kernel compiles once for it."""

    lon: float
    lat: float
    chain: int
    seg: int
    kind: int
    arc: int
    w: int
    d: int
    t: int


def leg_end(ph: Phantom, kind: int, arc: int, w: int, d: int, t: int) -> LegEnd:
    """The `LegEnd` of phantom `ph` left or entered by `kind` along `arc` with a partial piece of `w`, `d`, `t`."""
    return LegEnd(float(ph.lon), float(ph.lat), int(ph.chain), int(ph.segment), int(kind), int(arc), int(w), int(d),
                  int(t))  # fmt: skip


@kernel(inline="always")
def _span(a: int, b: int, step: int) -> int:
    return max(0, b - a) if step > 0 else max(0, a - b)


@kernel
def _assemble(arcs, geometry, src, tgt, direct, turns, turn_times):  # pragma: no cover - numba
    """Coordinates [k, 2] and pieces (arc, weight, dist, coordinate end index, travel time) of a leg, and the shape
    point (geometry index) behind each coordinate: the point itself, and for the snapped points OSRM's choice, the
    node their segment starts at (source) or ends at (target) in the direction of travel.

    The source part is the snapped point plus the chain points up to the seed node, then every arc's chain without
    its first point (the joint), then the chain points from the target seed node (left out) to the snapped point.
    `geometry` is a `LegGeometry`, `src` and `tgt` `LegEnd`s. A `direct` leg is one piece along the source's chain
    (`src.kind` FWD or BWD, its figures in `src`). `turns` / `turn_times` [n_arcs] add the turn's weight / time taken
    onto each arc to its piece (zeros on a node-based graph); the target's turn is in `tgt.w` / `tgt.t`.
    Consecutive duplicate points are dropped, so are partial pieces with nothing in them (a phantom on its seed node);
    a zero-length leg keeps its point twice. The last value returned is the index of the first piece kept (1 when
    the source's is dropped).
    """
    arc_geom, arc_weight, arc_dist, arc_time, gf, glon, glat = geometry
    s_lon, s_lat, s_chain, s_seg, s_kind, s_arc, s_w, s_d, s_t = src
    t_lon, t_lat, t_chain, t_seg, t_kind, t_arc, t_w, t_d, t_t = tgt
    sp0, sp1 = gf[s_chain], gf[s_chain + 1]
    tp0, tp1 = gf[t_chain], gf[t_chain + 1]
    ta, tb, tstep = 0, 0, 1
    if direct:
        if s_kind == 0:
            sa, sb, sstep = sp0 + s_seg + 1, sp0 + t_seg + 1, 1
        else:
            sa, sb, sstep = sp0 + s_seg, sp0 + t_seg, -1
    else:
        if s_kind == 0:
            sa, sb, sstep = sp0 + s_seg + 1, sp1, 1
        elif s_kind == 1:
            sa, sb, sstep = sp0 + s_seg, sp0 - 1, -1
        else:
            sa, sb, sstep = 0, 0, 1
        if t_kind == 0:
            ta, tb, tstep = tp0 + 1, tp0 + t_seg + 1, 1
        elif t_kind == 1:
            ta, tb, tstep = tp1 - 2, tp0 + t_seg, -1
    n_arcs = 0 if direct else arcs.shape[0]
    n_pieces = 1 if direct else n_arcs + 2
    total = 2 + _span(sa, sb, sstep) + _span(ta, tb, tstep)
    for j in range(n_arcs):
        c = arc_geom[arcs[j]] >> 1
        total += gf[c + 1] - gf[c] - 1
    out = np.empty((total, 2), dtype=np.float64)
    gi = np.empty(total, dtype=np.int64)  # shape point of each coordinate
    ends = np.empty(n_pieces, dtype=np.int64)
    p_arc = np.empty(n_pieces, dtype=np.int32)
    p_w = np.empty(n_pieces, dtype=np.int64)
    p_d = np.empty(n_pieces, dtype=np.int64)
    p_t = np.empty(n_pieces, dtype=np.int64)
    p_arc[0], p_w[0], p_d[0], p_t[0] = s_arc, s_w, s_d, s_t
    k = 0
    out[k, 0] = s_lon
    out[k, 1] = s_lat
    # the source's segment start in the direction of travel (on a node: that node)
    if s_kind == 0:
        gi[k] = sp0 + s_seg
    elif s_kind == 1:
        gi[k] = sp0 + s_seg + 1
    elif s_kind == 2:
        gi[k] = sp0
    else:
        gi[k] = sp1 - 1
    k += 1
    for i in range(sa, sb, sstep):
        out[k, 0] = glon[i] / COORD_SCALE
        out[k, 1] = glat[i] / COORD_SCALE
        gi[k] = i
        k += 1
    if not direct:
        ends[0] = k - 1
        for j in range(n_arcs):
            a = arcs[j]
            g = arc_geom[a]
            c = g >> 1
            p0 = gf[c]
            p1 = gf[c + 1]
            if g & 1:
                for i in range(p1 - 2, p0 - 1, -1):
                    out[k, 0] = glon[i] / COORD_SCALE
                    out[k, 1] = glat[i] / COORD_SCALE
                    gi[k] = i
                    k += 1
            else:
                for i in range(p0 + 1, p1):
                    out[k, 0] = glon[i] / COORD_SCALE
                    out[k, 1] = glat[i] / COORD_SCALE
                    gi[k] = i
                    k += 1
            ends[j + 1] = k - 1
            p_arc[j + 1], p_w[j + 1], p_d[j + 1] = a, arc_weight[a] + turns[j], arc_dist[a]
            p_t[j + 1] = arc_time[a] + turn_times[j]
        for i in range(ta, tb, tstep):
            out[k, 0] = glon[i] / COORD_SCALE
            out[k, 1] = glat[i] / COORD_SCALE
            gi[k] = i
            k += 1
        p_arc[n_pieces - 1], p_w[n_pieces - 1], p_d[n_pieces - 1] = t_arc, t_w, t_d
        p_t[n_pieces - 1] = t_t
    out[k, 0] = t_lon
    out[k, 1] = t_lat
    # the target's segment end in the direction of travel (on a node: that node)
    t_dir = s_kind if direct else t_kind
    if t_dir == 0:
        gi[k] = tp0 + t_seg + 1
    elif t_dir == 1:
        gi[k] = tp0 + t_seg
    elif t_dir == 2:
        gi[k] = tp0
    else:
        gi[k] = tp1 - 1
    k += 1
    ends[n_pieces - 1] = k - 1
    # drop consecutive duplicates, remapping piece ends onto the kept point they coincide with
    newidx = np.empty(k, dtype=np.int64)
    w = 0
    for i in range(k):
        if (
            w > 0
            and abs(out[i, 0] - out[w - 1, 0]) <= _SAME_POINT_DEG
            and abs(out[i, 1] - out[w - 1, 1]) <= _SAME_POINT_DEG
        ):
            newidx[i] = w - 1
            continue
        out[w, 0] = out[i, 0]
        out[w, 1] = out[i, 1]
        gi[w] = gi[i]
        newidx[i] = w
        w += 1
    for p in range(n_pieces):
        ends[p] = newidx[ends[p]]
    # a partial piece with nothing in it (the phantom sits on the seed node) is no piece at all
    first = 0
    last = n_pieces
    if n_pieces > 1 and p_w[0] == 0 and p_d[0] == 0 and ends[0] == 0:
        first = 1
    if last - first > 1 and p_w[last - 1] == 0 and p_d[last - 1] == 0 and ends[last - 1] == ends[last - 2]:
        last -= 1
    if w < 2:  # a zero-length leg is still a line: the point twice
        out[1, 0] = out[0, 0]
        out[1, 1] = out[0, 1]
        gi[1] = gi[k - 1]
        w = 2
        for p in range(n_pieces):
            ends[p] = 1
    return (
        out[:w].copy(),
        p_arc[first:last].copy(),
        p_w[first:last].copy(),
        p_d[first:last].copy(),
        ends[first:last].copy(),
        p_t[first:last].copy(),
        gi[:w].copy(),
        first,
    )


@kernel
def _leg_parts(
    arcs, geometry, src, tgt, direct, turns, turn_times, tgt_turn_w, tgt_turn_t, with_turns
):  # fmt: skip  # pragma: no cover - numba
    """Everything numeric a `Leg` holds, in one call: `_assemble`'s coordinates and pieces, OSRM's per-piece
    distances (`_piece_distances`), the pieces' durations and weights in seconds, their turn figures (with
    `with_turns`: the turn onto each arc counted in its piece, `tgt_turn_*` onto the target's; none onto the first
    piece), and the leg's weight and duration (ds)."""
    tgt2 = LegEnd(
        tgt.lon, tgt.lat, tgt.chain, tgt.seg, tgt.kind, tgt.arc, tgt.w + tgt_turn_w, tgt.d, tgt.t + tgt_turn_t
    )  # the target's turn counted in its piece
    coords, p_arc, p_w, p_d, ends, p_t, gi, first = _assemble(arcs, geometry, src, tgt2, direct, turns, turn_times)
    n = p_arc.shape[0]
    if coords.shape[0] < 2 or n == 0:
        piece_m = np.zeros(n)
    else:
        piece_m = _piece_distances(coords, ends)
    weight = 0
    duration = 0
    dur_s = np.empty(n)
    w_s = np.empty(n)
    for i in range(n):
        weight += p_w[i]
        duration += p_t[i]
        dur_s[i] = p_t[i] / WEIGHT_PER_SECOND
        w_s[i] = p_w[i] / WEIGHT_PER_SECOND
    turn_s = np.zeros(n if with_turns else 0)
    turn_w = np.zeros(n if with_turns else 0)
    if with_turns:
        m = turns.shape[0]
        for i in range(n):
            j = first + i  # index over [first piece (no turn), one per arc, the target's]
            if j == 0:
                continue
            if j <= m:
                turn_s[i] = turn_times[j - 1] / WEIGHT_PER_SECOND
                turn_w[i] = turns[j - 1] / WEIGHT_PER_SECOND
            else:
                turn_s[i] = tgt_turn_t / WEIGHT_PER_SECOND
                turn_w[i] = tgt_turn_w / WEIGHT_PER_SECOND
    return coords, p_arc, piece_m, dur_s, ends, w_s, gi, turn_s, turn_w, weight, duration


class Assembler:
    """Builds legs over one graph; holds only references to its read-only arrays."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._gf = np.asarray(graph.geom_first, dtype=np.int64)
        self._none = np.zeros(0, dtype=np.int32)
        self._no_turns = np.zeros(0, dtype=np.int64)
        self._time = graph.arc_duration
        self.geometry = LegGeometry(
            graph.arc_geom, graph.arc_weight, graph.arc_dist, self._time, self._gf, graph.geom_lon, graph.geom_lat
        )  # what `_leg_parts` reads

    def search_leg(
        self,
        src: Phantom,
        src_kind: int,
        arcs: np.ndarray,
        tgt: Phantom,
        tgt_kind: int,
        stats: SearchStats,
        turns: np.ndarray | None = None,
        tgt_turn: tuple[int, int] = (0, 0),
    ) -> Leg:
        """The leg of a search path `arcs` (original arc ids from the source seed node to the target seed node).

        `src_kind`/`tgt_kind` say how the leg leaves the source / enters the target: FWD, BWD, AT_FIRST or AT_LAST.
        On an edge-based graph `turns` [n, 2] is the (weight, travel time) of the turn taken onto each arc and
        `tgt_turn` the one onto the target's arc; each is counted in the piece after the turn, and recorded in the
        leg's `piece_turn_s` / `piece_turn_weight` (steps count it in the step before the turn, as OSRM).
        """
        arcs = np.asarray(arcs, dtype=np.int32)
        if turns is None:
            turn_w = turn_t = np.zeros(len(arcs), dtype=np.int64)
        else:
            turns = np.asarray(turns, dtype=np.int64)
            turn_w, turn_t = np.ascontiguousarray(turns[:, 0]), np.ascontiguousarray(turns[:, 1])
        sfb, sfa, sbb, sba = src.times()
        tfb, tfa, tbb, tba = tgt.times()
        if src_kind == FWD:
            s_arc, s_w, s_d, s_t = src.fwd_arc, src.fwd_weight_after, src.fwd_dist_after, sfa
        elif src_kind == BWD:
            s_arc, s_w, s_d, s_t = src.bwd_arc, src.bwd_weight_after, src.bwd_dist_after, sba
        else:
            s_arc, s_w, s_d, s_t = _arc_of(src), 0, 0, 0
        if tgt_kind == FWD:
            t_arc, t_w, t_d, t_t = tgt.fwd_arc, tgt.fwd_weight_before, tgt.fwd_dist_before, tfb
        elif tgt_kind == BWD:
            t_arc, t_w, t_d, t_t = tgt.bwd_arc, tgt.bwd_weight_before, tgt.bwd_dist_before, tbb
        else:
            t_arc, t_w, t_d, t_t = _arc_of(tgt), 0, 0, 0
        parts = _leg_parts(
            arcs, self.geometry, leg_end(src, src_kind, s_arc, s_w, s_d, s_t),
            leg_end(tgt, tgt_kind, t_arc, t_w, t_d, t_t), False, turn_w, turn_t, int(tgt_turn[0]), int(tgt_turn[1]),
            turns is not None,
        )  # fmt: skip
        return leg_of(parts, stats, src, tgt, turns is not None)

    def direct_leg(self, src: Phantom, tgt: Phantom, kind: int, stats: SearchStats) -> Leg:
        """The leg along the one chain both phantoms share, `kind` FWD (target ahead) or BWD (target behind)."""
        sfb, _, sbb, _ = src.times()
        tfb, _, tbb, _ = tgt.times()
        if kind == FWD:
            arc, w, d, t = (
                src.fwd_arc,
                tgt.fwd_weight_before - src.fwd_weight_before,
                tgt.fwd_dist_before - src.fwd_dist_before,
                tfb - sfb,
            )
        else:
            arc, w, d, t = (
                src.bwd_arc,
                tgt.bwd_weight_before - src.bwd_weight_before,
                tgt.bwd_dist_before - src.bwd_dist_before,
                tbb - sbb,
            )
        none = self._no_turns
        parts = _leg_parts(
            self._none, self.geometry, leg_end(src, kind, arc, max(w, 0), max(d, 0), max(t, 0)),
            leg_end(tgt, kind, arc, 0, 0, 0), True, none, none, 0, 0, False,
        )  # fmt: skip
        return leg_of(parts, stats, src, tgt, False)


def piece_distances_m(coords: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Metres per piece of a leg, as OSRM's `assembleGeometry` measures them: OSRM's formula over consecutive points
    (the snapped points at both ends), each segment counted in the piece whose coordinates it ends in. Unrounded, so
    the pieces add up to the leg and the legs to the route; the answer rounds to 0.1 m, as OSRM's JSON does."""
    if coords.shape[0] < 2 or ends.shape[0] == 0:
        return np.zeros(ends.shape[0])
    return _piece_distances(np.ascontiguousarray(coords, dtype=np.float64), np.ascontiguousarray(ends, dtype=np.int64))


@kernel
def _piece_distances(coords, ends):  # type: ignore[no-untyped-def]  # pragma: no cover - numba
    """`piece_distances_m` in one pass: segment i (points i, i + 1) goes to the first piece whose end is above i (the
    last piece past the final end), summed in segment order."""
    m = ends.shape[0]
    out = np.zeros(m)
    p = 0
    for i in range(coords.shape[0] - 1):
        while p < m and ends[p] <= i:
            p += 1
        out[min(p, m - 1)] += osrm_distance_m(coords[i, 0], coords[i, 1], coords[i + 1, 0], coords[i + 1, 1])
    return out


def leg_of(parts: tuple, stats: SearchStats, src: Phantom, tgt: Phantom, with_turns: bool) -> Leg:
    """The `Leg` of `_leg_parts`'s figures; its distance sums OSRM's per-piece distances as numpy does."""
    coords, piece_arc, piece_m, dur_s, ends, w_s, coord_geom, turn_s, turn_w, weight, duration = parts
    return Leg(
        weight=int(weight),
        duration_s=int(duration) / WEIGHT_PER_SECOND,
        distance_m=float(piece_m.sum()),
        coordinates=coords,
        piece_arc=piece_arc,
        piece_distance_m=piece_m,
        piece_duration_s=dur_s,
        piece_coord_end=ends,
        stats=stats,
        source=src,
        target=tgt,
        piece_weight=w_s,
        coord_geom=coord_geom,
        piece_turn_s=turn_s if with_turns else None,
        piece_turn_weight=turn_w if with_turns else None,
    )


def _arc_of(ph: Phantom) -> int:
    return ph.fwd_arc if ph.fwd_arc >= 0 else ph.bwd_arc


def join_route(legs: list[Leg], algorithm: str) -> Route:
    """A route over consecutive legs: totals summed, coordinates joined without repeating the waypoints."""
    if len(legs) == 1:
        coords = legs[0].coordinates
    else:
        coords = np.concatenate([legs[0].coordinates] + [leg.coordinates[1:] for leg in legs[1:]])
    weight = sum(leg.weight for leg in legs)
    return Route(
        legs=legs,
        algorithm=algorithm,
        weight=weight,
        duration_s=sum(round(leg.duration_s * WEIGHT_PER_SECOND) for leg in legs) / WEIGHT_PER_SECOND,
        distance_m=sum(leg.distance_m for leg in legs),  # unrounded, as OSRM's route (its JSON rounds)
        coordinates=coords,
    )

"""The turn stage's intersection views as numba kernels over flat arrays: what `preprocessing.turns` prices a turn
by (its perceived angle, the number of roads in view, whether it is a u-turn), the same numbers as the Python model
(`intersection_analysis.Extractor.intersection`) gives, at compiled speed.

The kernels port the part of the model every junction needs: the compressed graph's edges (`graph`), OSRM's
fixed-point geometry (`geo`), the coordinate extractor (`coordinates.representative`, `close_to_turn`), the roads'
bearings (`Extractor.outgoing`) and the view from the road arriving (`Extractor.view`, `_allowed`). Dual
carriageway merging (`merge`) walks the graph and compares street names: only a few junctions can merge, so the
kernels mark every junction where a pair of roads passes the merge detector's cheap tests (`can_merge` up to its
walks, names equal or not yet compared), and every junction whose short road leads to one (the bearing corrections
of `merged_geometries`): the turn stage gives those, and the junctions with a conditional stop sign, to the Python
model. Every float operation is the Python model's, in the same order, on the same libm, so the results are
bit-identical (`bench.turn_stage --compare` checks it on real extracts, `tests/unit/test_turn_views.py` on Monaco).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import types as nt

from floor.format.road_classification import (
    CONNECTIVITY,
    MOTORWAY_TYPES,
    PRIORITY,
    ROAD_TYPES,
    chain_arcs,
    compressed_nodes,
)
from floor.format.units import FLAG_CIRCULAR, FLAG_FERRY, FLAG_ROUNDABOUT, OSRM_MODE_NAMES, ROAD_CLASSES
from floor.intersections import geo
from floor.intersections.geo_kernels import (
    A_CIRCULAR,
    A_IGNORE,
    A_LANES,
    A_LINK,
    A_MODE,
    A_MOTORWAY,
    A_NAME,
    A_PRIO,
    A_ROUNDABOUT,
    A_TURN_LANES,
    A_U_LANE,
    BA,
    EPS,
    FA,
    IA,
    IA2,
    LINE_PTS,
    RULERS,
    _angle_between,
    _at_length,
    _bearing,
    _deviation,
    _distance,
    _length,
    _representative,
    _restrict_angle,
    _reverse,
    _round_half_away,
    rulers,
)
from floor.intersections.graph import lane_description
from floor.intersections.names import CAR_SUFFIXES, NameRecord, NameTable
from floor.kernels.jit import I64, kernel, tup


# -- the compressed graph (graph) --------------------------------------------------------------------------------
@kernel(I64(I64, IA, IA), inner=True)
def _half_source(h: int, first_node: np.ndarray, last_node: np.ndarray) -> int:
    return first_node[h >> 1] if h & 1 == 0 else last_node[h >> 1]


@kernel(I64(I64, IA, IA), inner=True)
def _half_target(h: int, first_node: np.ndarray, last_node: np.ndarray) -> int:
    return last_node[h >> 1] if h & 1 == 0 else first_node[h >> 1]


@kernel(I64(I64, IA, IA), inner=True)
def _half_arc(h: int, fwd: np.ndarray, bwd: np.ndarray) -> int:
    return fwd[h >> 1] if h & 1 == 0 else bwd[h >> 1]


@kernel(I64(I64, IA, IA), inner=True)
def _source_arc(h: int, fwd: np.ndarray, bwd: np.ndarray) -> int:
    """The arc whose data a half edge carries (`GuidanceGraph.half_data`: its own, else the opposite one's)."""
    a = _half_arc(h, fwd, bwd)
    return a if a >= 0 else _half_arc(h ^ 1, fwd, bwd)


@kernel(tup(I64, I64, I64)(I64, IA, IA, BA, IA, IA, IA), inner=True)
def _walk(e: int, adj_first: np.ndarray, adj_half: np.ndarray, is_inter: np.ndarray, first_node: np.ndarray,
          last_node: np.ndarray, buf: np.ndarray) -> tuple[int, int, int]:  # fmt: skip
    """`GuidanceGraph._walk`: the edge's half edges into `buf`; (target, their number, the last one)."""
    buf[0] = e
    cnt = 1
    start = _half_source(e, first_node, last_node)
    v = _half_target(e, first_node, last_node)
    h = e
    while v != start and not is_inter[v] and cnt < 100_000:
        a, b = adj_half[adj_first[v]], adj_half[adj_first[v] + 1]
        h = b if a == (h ^ 1) else a
        buf[cnt] = h
        cnt += 1
        v = _half_target(h, first_node, last_node)
    return v, cnt, h


@kernel(I64(I64, IA, IA, BA, IA, IA), inner=True)
def _edge_start(h: int, adj_first: np.ndarray, adj_half: np.ndarray, is_inter: np.ndarray, first_node: np.ndarray,
                last_node: np.ndarray) -> int:  # fmt: skip
    """`GuidanceGraph.edge_start`."""
    cur = h
    v = _half_source(h, first_node, last_node)
    seen = 0
    while not is_inter[v] and seen < 100_000:
        a, b = adj_half[adj_first[v]], adj_half[adj_first[v] + 1]
        other = b if a == cur else a
        cur = other ^ 1
        v = _half_source(cur, first_node, last_node)
        seen += 1
        if cur == h:
            break
    return cur


@kernel(LINE_PTS(IA, I64, IA, IA, IA), inner=True)
def _points(buf: np.ndarray, cnt: int, geom_first: np.ndarray, gx: np.ndarray,
            gy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`GuidanceGraph.geometry` of the edge whose half edges are `buf[:cnt]`."""
    total = 0
    for i in range(cnt):
        c = buf[i] >> 1
        total += geom_first[c + 1] - geom_first[c]
    xs, ys = np.empty(max(total, 2), np.int64), np.empty(max(total, 2), np.int64)
    k = 0
    for i in range(cnt):
        h = buf[i]
        lo, hi = geom_first[h >> 1], geom_first[(h >> 1) + 1]
        for j in range(hi - lo):
            p = hi - 1 - j if h & 1 else lo + j
            if k == 0 or xs[k - 1] != gx[p] or ys[k - 1] != gy[p]:
                xs[k], ys[k] = gx[p], gy[p]
                k += 1
    if k == 1:
        xs[1], ys[1] = xs[0], ys[0]
        k = 2
    return xs[:k].copy(), ys[:k].copy()


# -- the roads at every junction (Extractor.outgoing) and the merge detector's cheap tests -------------------------
@kernel(tup(FA, FA, FA, IA, IA, IA, IA)(IA, IA, BA, IA, IA, IA, IA, IA, IA, IA, IA, IA, IA2, RULERS))
def _junction_roads(adj_first: np.ndarray, adj_half: np.ndarray, is_inter: np.ndarray, first_node: np.ndarray,
                    last_node: np.ndarray, fwd: np.ndarray, bwd: np.ndarray, geom_first: np.ndarray, gx: np.ndarray,
                    gy: np.ndarray, nx: np.ndarray, ny: np.ndarray, attr: np.ndarray,
                    rulers: np.ndarray) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Per adjacency slot of every junction (OSRM node) `Extractor.outgoing(v, False)`'s numbers for its edge:
    initial and perceived bearing, length; the edge's target, reverse edge and point count; and per junction its
    slots sorted by perceived bearing (`order`, stable as Python's sort)."""
    k_all = len(adj_half)
    # allocations in as few forms as the other kernels use (each form of np.zeros/np.full compiles once more)
    init, perc, seg_len = np.zeros(k_all, np.float64), np.zeros(k_all, np.float64), np.zeros(k_all, np.float64)
    tgt, rev = np.empty(k_all, np.int64), np.empty(k_all, np.int64)
    npts, order = np.zeros(k_all, np.int64), np.empty(k_all, np.int64)
    for k in range(k_all):
        tgt[k], rev[k], order[k] = -1, -1, k
    buf = np.empty(100_001, np.int64)
    none = np.zeros(1, np.float64)
    for v in range(len(adj_first) - 1):
        lo, hi = adj_first[v], adj_first[v + 1]
        if not is_inter[v] or hi == lo:
            continue
        lanes = 0
        for k in range(lo, hi):
            lanes = max(lanes, attr[_source_arc(adj_half[k], fwd, bwd), A_LANES])
        degree = hi - lo
        for k in range(lo, hi):
            e = adj_half[k]
            t, cnt, last = _walk(e, adj_first, adj_half, is_inter, first_node, last_node, buf)
            tgt[k], rev[k] = t, last ^ 1
            xs, ys = _points(buf, cnt, geom_first, gx, gy)
            npts[k] = len(xs)
            cx, cy = _at_length(2.0, xs, ys, none, False, rulers)
            init[k] = _bearing(xs[0], ys[0], cx, cy, rulers)
            if degree <= 2:  # close_to_turn
                rx, ry = nx[t], ny[t]
                for i in range(1, len(xs)):
                    if _distance(xs[i], ys[i], xs[0], ys[0], rulers) > 1:
                        rx, ry = xs[i], ys[i]
                        break
            else:
                rx, ry = _representative(nx[v], ny[v], v == t, xs, ys, lanes, attr[_source_arc(e, fwd, bwd)], rulers)
            perc[k] = _bearing(xs[0], ys[0], rx, ry, rulers)
            seg_len[k] = _length(xs, ys, rulers)
        for k in range(lo + 1, hi):  # insertion sort by perceived bearing, stable
            s = order[k]
            j = k
            while j > lo and perc[order[j - 1]] > perc[s]:
                order[j] = order[j - 1]
                j -= 1
            order[j] = s
    return init, perc, seg_len, tgt, rev, npts, order


@kernel(tup(BA, IA)(IA, IA, BA, IA, IA, IA2, FA, FA, IA, IA, IA, I64))
def _may_merge(adj_first: np.ndarray, adj_half: np.ndarray, is_inter: np.ndarray, fwd: np.ndarray, bwd: np.ndarray,
               attr: np.ndarray, perc: np.ndarray, seg_len: np.ndarray, tgt: np.ndarray, order: np.ndarray,
               identical: np.ndarray, records: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per node whether the Python model must build its view: a pair of neighbouring roads there passes
    `MergeDetector.can_merge`'s tests before its walks (their name records equal, or their key `a * records + b`,
    a < b, in the sorted `identical`), or a road of 30 m or less leads to such a junction (`merged_geometries`'
    bearing corrections); and the keys of the pairs of different name records not in `identical` that would pass
    if they were (for the caller to compare)."""
    n = len(adj_first) - 1
    pair = np.zeros(n, np.bool_)
    unknown = np.zeros(16, np.int64)
    n_unknown = 0
    for v in range(n):
        lo, hi = adj_first[v], adj_first[v + 1]
        cnt = hi - lo
        if not is_inter[v] or cnt < 3:
            continue
        for i in range(cnt):
            a, b = order[lo + i], order[lo + (i + 1) % cnt]
            if _deviation(perc[a], perc[b]) > 95.0:
                continue
            ea, eb = adj_half[a], adj_half[b]
            if (_half_arc(ea, fwd, bwd) < 0) == (_half_arc(eb, fwd, bwd) < 0):
                continue
            ra, rb = attr[_source_arc(ea, fwd, bwd)], attr[_source_arc(eb, fwd, bwd)]
            if ra[A_ROUNDABOUT] or rb[A_ROUNDABOUT] or ra[A_MODE] != rb[A_MODE] or ra[A_NAME] == 0 or rb[A_NAME] == 0:
                continue
            if ra[A_MOTORWAY] != rb[A_MOTORWAY] or ra[A_LINK] != rb[A_LINK] or ra[A_IGNORE] != rb[A_IGNORE]:
                continue
            if ra[A_PRIO] != rb[A_PRIO] or tgt[a] == v or tgt[b] == v:
                continue
            if ra[A_NAME] != rb[A_NAME]:
                key = min(ra[A_NAME], rb[A_NAME]) * records + max(ra[A_NAME], rb[A_NAME])
                at, end = 0, len(identical)  # np.searchsorted's (left) place, without its compile
                while at < end:
                    mid = (at + end) >> 1
                    if identical[mid] < key:
                        at = mid + 1
                    else:
                        end = mid
                if at == len(identical) or identical[at] != key:
                    if n_unknown == len(unknown):
                        grown = np.zeros(2 * len(unknown), np.int64)
                        for q in range(n_unknown):
                            grown[q] = unknown[q]
                        unknown = grown
                    unknown[n_unknown] = key
                    n_unknown += 1
                    continue
            pair[v] = True
            break
    out = pair.copy()
    for v in range(n):
        lo, hi = adj_first[v], adj_first[v + 1]
        if not is_inter[v] or out[v] or hi - lo < 2:
            continue
        for k in range(lo, hi):
            if seg_len[k] <= 30.0 and tgt[k] >= 0 and pair[tgt[k]]:
                out[v] = True
                break
    return out, unknown[:n_unknown].copy()


# -- the view from the road arriving (Extractor.view) and the turns' numbers --------------------------------------
class Junctions(NamedTuple):
    """OSRM's compressed graph at its junctions: per node its adjacency (`adj_first` into `adj_half`, the half edges
    leaving it), whether it is an intersection, and per edge its first and last node."""

    adj_first: np.ndarray
    adj_half: np.ndarray
    is_inter: np.ndarray
    first_node: np.ndarray
    last_node: np.ndarray


class Shapes(NamedTuple):
    """The compressed edges' shapes: per edge its road arcs both ways, and the points (`geom_first` into `gx`/`gy`)."""

    fwd: np.ndarray
    bwd: np.ndarray
    geom_first: np.ndarray
    gx: np.ndarray
    gy: np.ndarray


class EdgeViews(NamedTuple):
    """Per half edge what the views read: its attributes row, initial and perceived bearings, target node,
    reverse half and point count."""

    attr: np.ndarray
    init: np.ndarray
    perc: np.ndarray
    tgt: np.ndarray
    rev: np.ndarray
    npts: np.ndarray


class Roads(NamedTuple):
    """A view's roads, written by `_view`: edge id, angle, adjusted angle, refused against a roundabout's flow."""

    eid: np.ndarray
    ang: np.ndarray
    adj: np.ndarray
    rb: np.ndarray


JUNCTIONS = nt.NamedTuple([IA, IA, BA, IA, IA], Junctions)
SHAPES = nt.NamedUniTuple(IA, 5, Shapes)
EDGE_VIEWS = nt.NamedTuple([IA2, FA, FA, IA, IA, IA], EdgeViews)
ROADS = nt.NamedTuple([IA, FA, FA, BA], Roads)


@kernel(tup(BA, FA, IA, BA, BA, BA)(IA, IA, IA, IA, JUNCTIONS, SHAPES, EDGE_VIEWS, BA))
def _turn_views(fa: np.ndarray, ta: np.ndarray, order_t: np.ndarray, arc_geom: np.ndarray, junctions: Junctions,
                shapes: Shapes, edges: EdgeViews, python: np.ndarray) -> tuple[np.ndarray, ...]:  # fmt: skip
    """`osrm_turn_views`' numbers for the turns `fa -> ta` (taken in `order_t`, grouped by from arc) at junctions
    the kernels cover; `todo` marks the turns left to the Python model (`python[node]`)."""
    adj_first, adj_half, is_inter, first_node, last_node = junctions
    k = len(fa)
    got, todo = np.zeros(k, np.bool_), np.zeros(k, np.bool_)
    angle, roads, u_turn = np.zeros(k, np.float64), np.zeros(k, np.int64), np.zeros(k, np.bool_)
    against = np.zeros(k, np.bool_)
    buf = np.empty(100_001, np.int64)
    r_eid = np.empty(64, np.int64)
    r_ang = np.empty(64, np.float64)
    r_adj = np.empty(64, np.float64)
    r_rb = np.zeros(64, np.bool_)
    size = 0
    last_from = -1
    v = -1
    for j in order_t:
        a = fa[j]
        if a != last_from:
            last_from = a
            via = _edge_start(arc_geom[a], adj_first, adj_half, is_inter, first_node, last_node)
            v, cnt, last = _walk(via, adj_first, adj_half, is_inter, first_node, last_node, buf)
            if python[v]:
                size = -1
            else:
                lo, hi = adj_first[v], adj_first[v + 1]
                if hi - lo + 1 > len(r_eid):
                    cap = 2 * (hi - lo + 1)
                    r_eid, r_ang, r_adj = np.empty(cap, np.int64), np.empty(cap, np.float64), np.empty(cap, np.float64)
                    r_rb = np.zeros(cap, np.bool_)
                scratch = Roads(r_eid, r_ang, r_adj, r_rb)
                size = _view(via, v, last ^ 1, buf, cnt, junctions, shapes, edges, scratch)
        if size < 0:
            todo[j] = True
            continue
        b = arc_geom[ta[j]]
        for i in range(adj_first[v], adj_first[v + 1]):
            if adj_half[i] == b:
                against[j] = r_rb[i - adj_first[v]]
        for i in range(size):
            if r_eid[i] == b:
                a_osrm = r_ang[i]
                is_u = not (0.0 < a_osrm < 360.0)
                got[j], angle[j], u_turn[j] = True, 180.0 - a_osrm, is_u
                roads[j] = size - (1 if is_u and i != 0 else 0)
                break
    return got, angle, roads, u_turn, against, todo


@kernel(I64(I64, I64, I64, IA, I64, JUNCTIONS, SHAPES, EDGE_VIEWS, ROADS), inner=True)
def _view(
    via: int,
    v: int,
    back: int,
    halves: np.ndarray,
    cnt: int,
    junctions: Junctions,
    shapes: Shapes,
    edges: EdgeViews,
    roads: Roads,
) -> int:
    """`Extractor.view` from edge `via` (half edges `halves[:cnt]`) at junction v with no road merged: the roads in
    view order into `r_eid` / `r_ang` (their angles); returns their number. `r_rb[k - lo]`: whether isTurnAllowed
    refuses the road at adjacency slot k as a turn against a roundabout's flow (`Extractor.against_roundabout`)."""
    adj_first, adj_half, _, first_node, last_node = junctions
    fwd, bwd, geom_first, gx, gy = shapes
    attr, init, perc, tgt, rev, npts = edges
    r_eid, r_ang, r_adj, r_rb = roads
    lo, hi = adj_first[v], adj_first[v + 1]
    sb = lo
    while adj_half[sb] != back:
        sb += 1
    in_b = _reverse(perc[sb])
    in_init = _reverse(init[sb])
    # _allowed_context: the reversed bearing arriving, allowed exits, roads to arrive on, roundabout edges
    from_rev = perc[sb]
    allowed_exits = 0
    bidirectional = 0
    rb_from = rb_to = -1
    rb_from_angle = rb_to_angle = 0.0
    for k in range(lo, hi):
        e = adj_half[k]
        d_rev = _half_arc(e, fwd, bwd) < 0
        allowed_exits += not d_rev
        bidirectional += not (_half_arc(rev[k], fwd, bwd) < 0)
        row = attr[_source_arc(e, fwd, bwd)]
        if row[A_ROUNDABOUT] or row[A_CIRCULAR]:
            if d_rev:
                ang = _angle_between(_reverse(perc[k]), from_rev)
                if ang > rb_from_angle:
                    rb_from, rb_from_angle = k, ang
            else:
                ang = _angle_between(from_rev, perc[k])
                if ang > rb_to_angle:
                    rb_to, rb_to_angle = k, ang
    via_rev = _half_arc(via, fwd, bwd) < 0
    u_lanes = False
    for i in range(cnt - 1, -1, -1):  # the lanes of the edge: its last half edge's that has any
        row = attr[_source_arc(halves[i], fwd, bwd)]
        if row[A_TURN_LANES]:
            u_lanes = row[A_U_LANE] != 0
            break
    via_pts = -1
    source = _half_source(via, first_node, last_node)
    n = 0
    u_allowed = False
    allowed_uturns = 0
    for k in range(lo, hi):
        e = adj_half[k]
        # _allowed
        allowed = True
        r_rb[k - lo] = False
        if via_rev or _half_arc(e, fwd, bwd) < 0:
            allowed = False
        else:
            back_to = e == back
            if not back_to and tgt[k] == source:
                if via_pts < 0:
                    via_pts = len(_points(halves, cnt, geom_first, gx, gy)[0])
                back_to = via_pts == 2 and npts[k] == 2
            if back_to:
                allowed = hi - lo == 1 or allowed_exits == 1 or bidirectional <= 1 or u_lanes
            elif rb_from >= 0 and rb_to >= 0:
                from_b = _reverse(perc[rb_from])
                rb_angle = _angle_between(from_b, perc[rb_to])
                rb_from_a = _angle_between(from_b, from_rev)
                rb_to_a = _angle_between(from_b, perc[k])
                if (rb_from_a < rb_angle and rb_to_a < rb_from_a) or (rb_from_a > rb_angle and rb_to_a > rb_from_a):
                    allowed = False
                    r_rb[k - lo] = True
        turn_angle = np.fmod(_round_half_away(_angle_between(in_b, perc[k]) * 1e8) / 1e8, 360.0)
        initial_angle = _angle_between(in_init, init[k])
        if allowed and ((turn_angle < 15 and initial_angle > 180) or (turn_angle > 345 and initial_angle < 180)):
            turn_angle = initial_angle = 0.0
        is_uturn_angle = abs(turn_angle) < EPS
        if e == back:
            u_allowed = allowed
        elif allowed or not is_uturn_angle:
            allowed_uturns += is_uturn_angle
            use_turn = (turn_angle > 270 and initial_angle < 90) or (turn_angle < 90 and initial_angle > 270)
            if abs(initial_angle) < EPS:
                adjusted = 360.0 if turn_angle > 180 else 0.0
            elif use_turn:
                adjusted = turn_angle
            else:
                adjusted = initial_angle
            r_eid[n], r_ang[n], r_adj[n] = e, turn_angle, adjusted
            n += 1
    added = False
    if u_allowed or allowed_uturns == 0:
        for i in range(n, 0, -1):
            r_eid[i], r_ang[i], r_adj[i] = r_eid[i - 1], r_ang[i - 1], r_adj[i - 1]
        r_eid[0], r_ang[0], r_adj[0] = back, 0.0, 0.0
        n += 1
        added = True
    for i in range(1, n):  # stable sort by (adjusted, angle)
        e, ang, adj = r_eid[i], r_ang[i], r_adj[i]
        j = i
        while j > 0 and (r_adj[j - 1] > adj or (r_adj[j - 1] == adj and r_ang[j - 1] > ang)):
            r_eid[j], r_ang[j], r_adj[j] = r_eid[j - 1], r_ang[j - 1], r_adj[j - 1]
            j -= 1
        r_eid[j], r_ang[j], r_adj[j] = e, ang, adj
    for i in range(n - 1):
        if r_ang[i + 1] < r_ang[i]:
            adj = min(0.5, _restrict_angle(360.0 - r_ang[i]) / 2.0)
            r_ang[i + 1] = _restrict_angle(r_ang[i] + adj)
    if not added:
        zero = False
        for i in range(n):
            if abs(r_ang[i]) < EPS:
                zero = True
        if not zero:
            for i in range(n, 0, -1):
                r_eid[i], r_ang[i], r_adj[i] = r_eid[i - 1], r_ang[i - 1], r_adj[i - 1]
            r_eid[0], r_ang[0], r_adj[0] = back, 0.0, 0.0
            n += 1
    return n


def ready() -> None:
    """Compile (first run) or load the views' kernels (`preprocessing.pipeline.warm_turn_kernels` runs them on a
    tiny map first)."""
    for k in (_junction_roads, _may_merge, _turn_views):
        k.starroute_ready()


# -- from the graph arrays -----------------------------------------------------------------------------------------
def _strings(arrays: dict[str, np.ndarray]) -> Any:
    """A cached string reader of the graph's string table ("" for 0), as `GuidanceGraph.string`."""
    off, data = arrays.get("str_offsets"), arrays.get("str_bytes")
    cache: dict[int, str] = {0: ""}

    def string(sid: int) -> str:
        s = cache.get(sid)
        if s is None:
            s = cache[sid] = bytes(data[off[sid] : off[sid + 1]]).decode("utf-8")  # type: ignore[index]
        return s

    return string


def arc_attributes(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, list[NameRecord]]:
    """Per road arc what the kernels read of `GuidanceGraph.arc_data`, int64 [m, 11] (columns `A_*`): priority,
    motorway class, link, may be ignored, lane count, roundabout, circular, travel mode, name record (0 the empty
    one; equal records equal), whether it has turn lanes and whether one has a u-turn arrow; and the name records
    by number."""
    m = len(arrays["arc_head"])
    string = _strings(arrays)
    out = np.zeros((m, 11), dtype=np.int64)
    code = arrays["arc_class"].astype(np.int64)
    names = [ROAD_CLASSES[c] if c < len(ROAD_CLASSES) else "other" for c in range(256)]
    table = np.array([[PRIORITY.get(hw, CONNECTIVITY), hw in MOTORWAY_TYPES, hw.endswith("_link"), hw not in ROAD_TYPES]
                      for hw in names], dtype=np.int64)  # fmt: skip
    out[:, A_PRIO : A_IGNORE + 1] = table[code]
    if "arc_lane_count" in arrays:
        out[:, A_LANES] = arrays["arc_lane_count"]
    flags = arrays["arc_flags"].astype(np.int64)
    out[:, A_ROUNDABOUT] = (flags & FLAG_ROUNDABOUT) != 0
    out[:, A_CIRCULAR] = (flags & FLAG_CIRCULAR) != 0
    # travel mode as `GuidanceGraph.mode_of` names it, numbered
    if "arc_mode" in arrays:
        modes = [OSRM_MODE_NAMES[c] if c < len(OSRM_MODE_NAMES) else "other" for c in range(256)]
        mode_of = np.array([modes.index(x) for x in modes], dtype=np.int64)
        out[:, A_MODE] = mode_of[arrays["arc_mode"].astype(np.int64)]
    else:
        ferry = (flags & FLAG_FERRY) != 0
        train = ferry & (code == ROAD_CLASSES.index("shuttle_train"))
        out[:, A_MODE] = np.where(train, 2, np.where(ferry, 1, 0))
    # name records (name, destinations, pronunciation, ref, exits), numbered by their text
    zero = np.zeros(m, dtype=np.int64)
    keys = np.stack([arrays["arc_name"].astype(np.int64), arrays.get("arc_signs", zero).astype(np.int64),
                     arrays["arc_ref"].astype(np.int64)], axis=1)  # fmt: skip
    span = keys.max(axis=0, initial=0) + 1
    uniq, inv = np.unique((keys[:, 0] * span[1] + keys[:, 1]) * span[2] + keys[:, 2], return_inverse=True)
    ids: dict[NameRecord, int] = {NameRecord(): 0}
    rec_id = np.zeros(len(uniq), dtype=np.int64)
    for i, key in enumerate(uniq.tolist()):
        name, signs_id, ref = key // span[2] // span[1], key // span[2] % span[1], key % span[2]
        signs = string(signs_id)
        dest, exits, pron = (signs.split("\x1f") + ["", "", ""])[:3] if signs else ("", "", "")
        rec = NameRecord(name=string(name), destinations=dest, pronunciation=pron, ref=string(ref), exits=exits)
        rec_id[i] = ids.setdefault(rec, len(ids))
    out[:, A_NAME] = rec_id[inv.reshape(-1)]
    if "arc_lanes" in arrays:
        sids, inv = np.unique(arrays["arc_lanes"].astype(np.int64), return_inverse=True)
        present, u_lane = np.zeros(len(sids), np.int64), np.zeros(len(sids), np.int64)
        for i, sid in enumerate(sids.tolist()):
            desc = lane_description(string(sid))
            present[i] = desc is not None
            u_lane[i] = bool(desc and any(x & 256 for x in desc))
        out[:, A_TURN_LANES] = present[inv.reshape(-1)]
        out[:, A_U_LANE] = u_lane[inv.reshape(-1)]
    return out, list(ids)


def adjacency(arrays: dict[str, np.ndarray], first_node: np.ndarray, last_node: np.ndarray) -> tuple[np.ndarray, ...]:
    """`GuidanceGraph.adjacent` of every node as CSR (first, half edges): the half edges leaving it, one per road
    end, sorted by the node at their other end, then id."""
    n = len(arrays["node_lon"])
    geom = arrays["arc_geom"].astype(np.int64)
    node = np.concatenate([arrays["arc_tail"], arrays["arc_head"]]).astype(np.int64)
    half = np.concatenate([geom, geom ^ 1])
    span = 2 * (len(first_node) + 1)
    key = np.unique(node * span + half)
    node, half = key // span, key % span
    far = np.where(half & 1 == 0, last_node[half >> 1], first_node[half >> 1])
    order = np.lexsort((half, far, node))
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(node, minlength=n), out=first[1:])
    return first, half[order]


def turn_views(
    arrays: dict[str, np.ndarray],
    profile_name: str,
    fa: np.ndarray,
    ta: np.ndarray,
    python_nodes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For the turns `fa -> ta` (road arcs meeting at a node OSRM keeps), `preprocessing.turns.osrm_turn_views`'
    numbers (whether the view has the road taken, the angle for the profile, the number of roads, whether it is a
    u-turn, whether it turns against a roundabout's flow) and `todo`: the turns the Python model must give
    (junctions where roads may merge, and `python_nodes`)."""
    # the kernels take exactly their signatures' types: fresh (writable, C-contiguous) int64, float64, bool arrays
    fwd, bwd, first_node, last_node = (x.astype(np.int64) for x in chain_arcs(arrays))
    is_inter = ~compressed_nodes(arrays)
    adj_first, adj_half = adjacency(arrays, first_node, last_node)
    gx, gy = (np.asarray(geo.fixed_array(arrays[k]), dtype=np.int64) for k in ("geom_lon", "geom_lat"))
    nx, ny = (np.asarray(geo.fixed_array(arrays[k]), dtype=np.int64) for k in ("node_lon", "node_lat"))
    geom_first = arrays["geom_first"].astype(np.int64)
    attr, records = arc_attributes(arrays)
    ruler = rulers()
    init, perc, seg_len, tgt, rev, npts, order = _junction_roads(
        adj_first, adj_half, is_inter, first_node, last_node, fwd, bwd, geom_first, gx, gy, nx, ny, attr, ruler
    )
    # the merge detector's name test (`NameTable.identical`) on the pairs of different records that reach it
    table = NameTable(CAR_SUFFIXES if profile_name == "car" else frozenset())
    for rec in records[1:]:
        table.intern(rec)
    r = len(records)
    args = (adj_first, adj_half, is_inter, fwd, bwd, attr, perc, seg_len, tgt, order)
    _, unknown = _may_merge(*args, np.zeros(0, np.int64), r)
    keys = np.unique(unknown)
    same = np.array([table.identical(int(x) // r, int(x) % r) for x in keys.tolist()], dtype=bool)
    python, _ = _may_merge(*args, keys[same] if len(keys) else keys, r)
    if python_nodes is not None:
        python |= python_nodes
    head = arrays["arc_head"]
    order_t = np.lexsort((ta, fa, head[fa]))
    junctions = Junctions(adj_first, adj_half, is_inter, first_node, last_node)
    shapes = Shapes(fwd, bwd, geom_first, gx, gy)
    edges = EdgeViews(attr, init, perc, tgt, rev, npts)
    return _turn_views(fa.astype(np.int64), ta.astype(np.int64), order_t, arrays["arc_geom"].astype(np.int64),
                       junctions, shapes, edges, python)  # fmt: skip

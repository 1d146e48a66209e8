"""OSM ways + nodes -> the core graph arrays: junctions become nodes, degree-2 runs collapse into geometry chains.

Every way the profile accepts is cut at junctions (nodes used more than once), way ends and barrier nodes; each
piece is one geometry chain carrying up to two arcs (forward/backward). Blocking barriers get one node copy per
chain end touching them, so a route can reach a bollard but never pass it. Nothing is dropped without a count in
the report.
"""

from __future__ import annotations

import numpy as np

from floor.format.arrays import SPECS
from floor.format.road_classification import osrm_compression
from floor.format.units import COORD_SCALE, NODE_COMPRESSED, NODE_MINOR_STOP, NODE_SHORT_LEG_STOP, NODE_TURNING
from floor.kernels.geometry import hilbert_index, osrm_distances_m
from preprocessing.graph import finalize_arrays
from preprocessing.osm.profiles.base import OBSTACLE_BACKWARD, OBSTACLE_FORWARD, STOP_LEG_M, STOP_SIGN_S
from preprocessing.osm.read import NodeTable, WayTable
from preprocessing.osm.way_values import ARC_COLUMNS, ENV_FORD, ENV_OTHER, ENV_ROAD


class NoRoutableWays(Exception):
    """The extract has no way the profile can use."""


def spatial_order(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Permutation sorting nodes along a Hilbert curve over their bounding box (cache locality for searches)."""
    if len(lon) == 0:
        return np.zeros(0, dtype=np.int64)
    span = 1 << 16

    def grid(v: np.ndarray) -> np.ndarray:
        lo, hi = int(v.min()), int(v.max())
        return ((v.astype(np.int64) - lo) * (span - 1) // max(hi - lo, 1)).astype(np.int64)

    return np.argsort(hilbert_index(grid(lon), grid(lat)), kind="stable")


def segment_ds(
    seg_m: np.ndarray, kmh: np.ndarray, duration_s: np.ndarray, way_segments: np.ndarray, rate: np.ndarray
) -> np.ndarray:
    """OSRM's per-segment deciseconds (`ExtractionContainers::PrepareEdges`), the one home of the rounding rule.

    A segment of `seg_m` metres takes `seg_m / (kmh * rate / 3.6)` seconds, or, on a way with a `duration`
    (NaN = none), `duration_s / way_segments / rate` (OSRM splits a way's duration evenly over its segments, not by
    length); each rounds to whole deciseconds (halves away from zero, `std::round`) and is at least 1. `rate` = 1
    gives the duration, the profile's rate penalty the weight. A chain's arc is the sum of its segments, so a route
    adds up segment by segment as OSRM's does.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        by_speed = seg_m / (kmh * rate / 3.6) * 10.0
        by_dur = duration_s / np.maximum(way_segments, 1) / rate * 10.0
    v = np.where(np.isnan(duration_s), by_speed, by_dur)
    v = np.where(np.isfinite(v), v, 0.0)
    return np.maximum(np.floor(v + 0.5), 1).astype(np.int64)


def parallel_segments(
    a: np.ndarray,
    b: np.ndarray,
    segments: np.ndarray,
    fmask: np.ndarray,
    bmask: np.ndarray,
    fval: tuple[np.ndarray, np.ndarray],
    bval: tuple[np.ndarray, np.ndarray],
    name: np.ndarray,
    strings: list[str],
) -> tuple[np.ndarray, np.ndarray, int]:
    """OSRM's `ExtractionContainers::PrepareEdges` on segments two ways share: of the one-segment chains joining the
    same two nodes (`a`, `b` per chain), each direction keeps only the one of least (weight, duration) (`fval` along
    the chain, `bval` against it), ties going to the lexicographically smallest name by its UTF-8 bytes (unnamed
    last), then to a chain open both ways (so that, as OSRM's observed answers show, a two-way way tying with a
    oneway becomes the one two-way edge rather than the oneway keeping one direction and the two-way the other):
    (forward mask, backward mask, arcs dropped)."""
    single = (segments == 1) & (a != b)
    idx = np.flatnonzero(single)
    if len(idx) < 2:
        return fmask, bmask, 0
    lo, hi = np.minimum(a[idx], b[idx]), np.maximum(a[idx], b[idx])
    _, group, count = np.unique(np.stack([lo, hi], axis=1), axis=0, return_inverse=True, return_counts=True)
    group = group.reshape(-1)
    shared = count[group] >= 2
    if not shared.any():
        return fmask, bmask, 0
    idx, group, lo = idx[shared], group[shared], lo[shared]
    names = np.unique(name[idx])
    ranked = sorted(names.tolist(), key=lambda i: (strings[i] == "", strings[i].encode("utf-8")))
    rank = np.zeros(int(names.max()) + 1, dtype=np.int64)
    rank[np.array(ranked, dtype=np.int64)] = np.arange(len(ranked))
    fmask, bmask = fmask.copy(), bmask.copy()
    along = a[idx] == lo  # the chain's forward arc runs lo -> hi
    one_way = ~(fmask[idx] & bmask[idx])  # False first: a chain open both ways wins a tie in both directions
    dropped = 0
    for up in (True, False):  # lo -> hi, then hi -> lo
        fwd = along == up  # which of the chain's arcs runs this way
        is_open = np.where(fwd, fmask[idx], bmask[idx])
        w = np.where(fwd, fval[0][idx], bval[0][idx])
        t = np.where(fwd, fval[1][idx], bval[1][idx])
        k = np.flatnonzero(is_open)
        order = k[np.lexsort((one_way[k], rank[name[idx[k]]], t[k], w[k], group[k]))]
        first = np.ones(len(order), dtype=bool)
        first[1:] = group[order[1:]] != group[order[:-1]]
        lose = idx[order[~first]]
        dropped += len(lose)
        fl = fwd[order[~first]]
        fmask[lose[fl]] = False
        bmask[lose[~fl]] = False
    return fmask, bmask, int(dropped)


def point_segments(
    seg_f: np.ndarray,
    seg_b: np.ndarray,
    pos: np.ndarray,
    geom_first: np.ndarray,
    fmask: np.ndarray,
    bmask: np.ndarray,
    pen_f: np.ndarray,
    pen_b: np.ndarray,
    on_arcs: int,
) -> np.ndarray:
    """`geom_seg_weight` / `geom_seg_duration` (docs/DESIGN.md): per shape point, the deciseconds of the segment
    ending there travelled along the chain (column 0) and against it (1), and of the node obstacles at the point
    charged on the arc along the chain (2) and against it (3), as OSRM's compressed geometry keeps them. `seg_f` /
    `seg_b` and `pen_f` / `pen_b` are per way position, `pos` the position of each shape point, `on_arcs` 1 when
    the arcs hold their head node's obstacles (a node-based graph). A direction no arc travels is all 0; an arc is
    the sum of its columns over its chain."""
    nc = len(geom_first) - 1
    npts = np.diff(geom_first)
    chain = np.repeat(np.arange(nc), npts)
    first = np.zeros(len(pos), dtype=bool)
    first[geom_first[:-1]] = True
    last = np.zeros(len(pos), dtype=bool)
    last[geom_first[1:] - 1] = True
    out = np.zeros((len(pos), 4), dtype=np.int32)  # deciseconds cast as stored (int32), not held as int64 first
    out[:, 0] = np.where(first, 0, seg_f[pos])
    out[:, 1] = np.where(first, 0, seg_b[pos])
    out[:, 2] = np.where(first, 0, np.where(last, on_arcs * pen_f[pos], pen_f[pos]))
    out[:, 3] = np.where(last, 0, np.where(first, on_arcs * pen_b[pos], pen_b[pos]))
    out[~fmask[chain], 0::2] = 0
    out[~bmask[chain], 1::2] = 0
    return out


def encoded_values(
    ways: WayTable,
    nodes: NodeTable,
    ni: np.ndarray,
    use: np.ndarray,
    c0: np.ndarray,
    c1: np.ndarray,
    chain_way: np.ndarray,
    fmask: np.ndarray,
    bmask: np.ndarray,
) -> dict[str, np.ndarray]:
    """GraphHopper's encoded values per arc (`arc_environment`, `arc_toll`, ...; `preprocessing.osm.way_values`), in
    the arc order of `build_arrays` before sorting (the forward arcs of the chains in `fmask`, then the backward ones
    of `bmask`). A chain never spans two ways (ways are cut at their ends), so an arc takes its way's codes, the
    direction's for toll and max speed; a ford node that is no junction (`ni` positions used once, as GraphHopper
    ignores barriers at junctions) turns a ROAD or OTHER chain through it FORD (GraphHopper's barrier edge)."""
    if ways.values is None:
        return {}
    fw, bw = chain_way[fmask], chain_way[bmask]
    out = {
        name: np.concatenate([ways.values[fw, fcol], ways.values[bw, bcol]]).astype(SPECS[name].dtype)
        for name, fcol, bcol in ARC_COLUMNS
    }
    if nodes.ford is not None and nodes.ford.any():
        at = np.zeros(len(ni) + 1, dtype=np.int64)
        np.cumsum(nodes.ford[ni] & (use[ni] == 1), out=at[1:])
        chain_ford = at[c1 + 1] - at[c0] > 0
        ford = np.concatenate([chain_ford[fmask], chain_ford[bmask]])
        env = out["arc_environment"]
        env[ford & ((env == ENV_ROAD) | (env == ENV_OTHER))] = ENV_FORD
    return out


def build_arrays(
    ways: WayTable, nodes: NodeTable, obstacles_on_turns: bool = False, hard_osm_ids: np.ndarray | None = None
) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Core arrays (see docs/DESIGN.md) and a report of what was counted, split or dropped.

    Node obstacles (signals, signs, gates; `NodeTable.penalty_ds`, and `directed_ds` in one direction of the ways)
    inside a chain are charged on the arc passing them, as OSRM's graph compressor does. One at a chain's end node is
    charged on the arc arriving there, unless `obstacles_on_turns` (an edge-based graph follows): then the arcs
    leave it out and `arc_head_penalty` holds it for `preprocessing.turns` to charge on the turns out of the arc,
    as OSRM's `process_turn` does, so a route ending at a signal does not wait at it.

    The nodes are OSRM's, whose turn and guidance model sees the graph its compressor leaves
    (`road_classification.osrm_compression`, recorded in `node_flags`): turning obstacles (`NodeTable.turning`) and
    `hard_osm_ids` (turn restrictions' via nodes) stay, and where OSRM's compressor keeps a shape point (one of two
    roads between the same junctions), the chain is cut there and the point becomes a node."""
    turning = nodes.turning if nodes.turning is not None else np.zeros(len(nodes.osm_id), dtype=bool)
    hard = turning.copy()
    if hard_osm_ids is not None and len(hard_osm_ids) and len(nodes.osm_id):
        at = np.minimum(np.searchsorted(nodes.osm_id, hard_osm_ids), len(nodes.osm_id) - 1)
        hard[at[nodes.osm_id[at] == hard_osm_ids]] = True
    cut = turning.copy()
    for _ in range(4):  # a cut point stays a node once cut: the second round finds none
        arrays, report, node_src = _build(ways, nodes, obstacles_on_turns, cut)
        compressed, points = osrm_compression(arrays, hard[node_src])
        if not len(points):
            break
        at = np.searchsorted(nodes.osm_id, arrays["geom_osm_id"][points])
        cut[at] = True
        arrays.clear()  # the next round builds them again: never two rounds' arrays at once
    else:  # pragma: no cover - the rule converges after one round
        raise AssertionError("OSRM's compression kept shape points after cutting the chains there")
    flags = compressed * NODE_COMPRESSED + turning[node_src] * NODE_TURNING
    if nodes.minor_stop is not None and nodes.short_leg_stop is not None:
        minor, short_leg = nodes.minor_stop[node_src], nodes.short_leg_stop[node_src]
        flags = flags + minor * NODE_MINOR_STOP + short_leg * NODE_SHORT_LEG_STOP
    arrays["node_flags"] = flags.astype(np.uint8)
    report["shape_points_osrm_keeps"] = int((cut & ~turning).sum())
    report["nodes_osrm_compresses"] = int(compressed.sum())
    return arrays, report


def _stop_rules(
    nodes: NodeTable, ni: np.ndarray, cut: np.ndarray, cs: np.ndarray, pen_f: np.ndarray, pen_b: np.ndarray
) -> None:
    """car.lua's stop sign rules on the way positions OSRM compresses away (`cut` False; in place on the obstacles
    met arriving along the way, `pen_f`, and against it, `pen_b`): its compressor's fake turn there comes by no minor
    road, so a `stop=minor` sign never counts; a stop sign with no direction does not count arriving from less than
    `STOP_LEG_M` metres (`cs`: metres along the way) onto more. The legs are measured to the neighbours the
    compressor sees, which removes nodes in the order of their OSM ids: the nearest one each way with a higher id,
    or the chain's end."""
    stop_ds = int(round(STOP_SIGN_S * 10))
    if nodes.minor_stop is not None:
        minor = ~cut & nodes.minor_stop[ni]
        pen_f[minor] -= stop_ds
        pen_b[minor] -= stop_ds
    if nodes.short_leg_stop is None:
        return
    osm = nodes.osm_id[ni]
    for i in np.flatnonzero(~cut & nodes.short_leg_stop[ni]).tolist():
        lo = i - 1
        while not cut[lo] and osm[lo] < osm[i]:
            lo -= 1
        hi = i + 1
        while not cut[hi] and osm[hi] < osm[i]:
            hi += 1
        back, ahead = cs[i] - cs[lo], cs[hi] - cs[i]
        if back < STOP_LEG_M < ahead:  # arriving along the way from a short leg
            pen_f[i] -= stop_ds
        if ahead < STOP_LEG_M < back:  # against it
            pen_b[i] -= stop_ds


def _build(
    ways: WayTable, nodes: NodeTable, obstacles_on_turns: bool, cut: np.ndarray
) -> tuple[dict[str, np.ndarray], dict[str, int], np.ndarray]:
    """`build_arrays` with the ways cut also at the node table's `cut` nodes: (arrays, report, the node table index
    of each graph node)."""
    report: dict[str, int] = {}
    nw = len(ways.osm_id)
    if nw == 0:
        raise NoRoutableWays("no routable ways")
    lengths = np.diff(ways.first)
    way_of_pos = np.repeat(np.arange(nw), lengths)
    refs = ways.refs
    idx = np.searchsorted(nodes.osm_id, refs)
    idx_c = np.minimum(idx, max(len(nodes.osm_id) - 1, 0))
    if len(nodes.osm_id):
        present = (idx < len(nodes.osm_id)) & (nodes.osm_id[idx_c] == refs)
    else:
        present = np.zeros(len(refs), dtype=bool)
    report["node_refs"] = int(len(refs))
    report["missing_node_refs"] = int((~present).sum())

    # Pieces: a way is split where a referenced node is missing from the file.
    is_start = np.zeros(len(refs), dtype=bool)
    is_start[ways.first[:-1]] = True
    prev_missing = np.zeros(len(refs), dtype=bool)
    prev_missing[1:] = ~present[:-1]
    brk = is_start | (prev_missing & ~is_start)
    piece = np.cumsum(brk) - 1
    keep = present
    ni = idx_c[keep]
    piece = piece[keep]
    way_of_pos = way_of_pos[keep]
    del idx, idx_c, present, keep, is_start, prev_missing, brk, refs  # the build's peak is per way position: each
    # temporary goes as soon as it is spent
    # drop consecutive duplicates created by removing a missing node between two equal refs
    if len(ni):
        dup = np.zeros(len(ni), dtype=bool)
        dup[1:] = (ni[1:] == ni[:-1]) & (piece[1:] == piece[:-1])
        ni, piece, way_of_pos = ni[~dup], piece[~dup], way_of_pos[~dup]
    # drop pieces shorter than two nodes
    _, piece_dense, piece_len = np.unique(piece, return_inverse=True, return_counts=True)
    ok = piece_len[piece_dense] >= 2
    report["way_pieces_dropped_missing_nodes"] = int((piece_len < 2).sum())
    ni, piece, way_of_pos = ni[ok], piece_dense[ok], way_of_pos[ok]
    report["ways_split_at_missing_nodes"] = int(len(np.unique(piece)) - len(np.unique(way_of_pos)) if len(piece) else 0)
    if len(ni) == 0:
        raise NoRoutableWays("no routable ways with known node locations")

    p = len(ni)
    piece_start = np.ones(p, dtype=bool)
    piece_start[1:] = piece[1:] != piece[:-1]
    piece_end = np.ones(p, dtype=bool)
    piece_end[:-1] = piece[1:] != piece[:-1]

    use = np.bincount(ni, minlength=len(nodes.osm_id))
    junction = use >= 2
    junction[ni[piece_start]] = True
    junction[ni[piece_end]] = True
    junction |= nodes.barrier & (use > 0)
    junction |= cut & (use > 0)
    cut = junction[ni]
    del junction
    cuts = np.flatnonzero(cut)
    same = piece[cuts[1:]] == piece[cuts[:-1]]
    del piece, piece_dense, piece_len, ok
    c0 = cuts[:-1][same]
    c1 = cuts[1:][same]
    nc = len(c0)

    lon = nodes.lon[ni]
    lat = nodes.lat[ni]
    seg = np.zeros(p, dtype=np.float64)
    seg[1:] = osrm_distances_m(
        lon[:-1] / COORD_SCALE, lat[:-1] / COORD_SCALE, lon[1:] / COORD_SCALE, lat[1:] / COORD_SCALE
    )
    seg[piece_start] = 0.0
    cs = np.cumsum(seg)
    chain_len = cs[c1] - cs[c0]
    # node obstacles, per direction of travel: arriving at a position along the way's order (`pen_f`) or against it
    pen = nodes.penalty_ds[ni].astype(np.int64)
    pen_f, pen_b = pen.copy(), pen.copy()
    if nodes.directed_ds is not None and nodes.direction is not None:
        directed, direction = nodes.directed_ds[ni].astype(np.int64), nodes.direction[ni]
        pen_f += np.where(direction == OBSTACLE_FORWARD, directed, 0)
        pen_b += np.where(direction == OBSTACLE_BACKWARD, directed, 0)
        del directed, direction
    if nodes.passing_ds is not None:  # a node inside a chain is one OSRM compresses away: passing it costs this
        passing = np.where(cut, 0, nodes.passing_ds[ni].astype(np.int64))
        pen_f, pen_b = pen_f + passing, pen_b + passing
        del passing
    _stop_rules(nodes, ni, cut, cs, pen_f, pen_b)
    del pen, cs
    pcf, pcb = np.cumsum(pen_f), np.cumsum(pen_b)
    interior_f, interior_b = pcf[c1 - 1] - pcf[c0], pcb[c1 - 1] - pcb[c0]
    del pcf, pcb
    chain_way = way_of_pos[c0]

    # geometry: positions c0..c1 inclusive per chain
    npts = c1 - c0 + 1
    geom_first = np.zeros(nc + 1, dtype=np.int64)
    np.cumsum(npts, out=geom_first[1:])
    pos = np.repeat(c0, npts) + (np.arange(geom_first[-1]) - np.repeat(geom_first[:-1], npts))
    geom_lon = lon[pos]
    geom_lat = lat[pos]
    geom_osm_id = nodes.osm_id[ni[pos]]
    del lon, lat

    # graph node ids: junctions get one id; blocking barriers one id per chain end that touches them
    a_node = ni[c0]
    b_node = ni[c1]
    jid = np.full(len(nodes.osm_id), -1, dtype=np.int64)
    jnodes = np.unique(np.concatenate([a_node, b_node]))
    plain = jnodes[~nodes.barrier[jnodes]]
    jid[plain] = np.arange(len(plain))
    nid = len(plain)
    ends = np.concatenate([a_node, b_node])
    gid = jid[ends]
    del jid
    bar = nodes.barrier[ends]
    gid[bar] = nid + np.arange(int(bar.sum()))
    node_src = np.concatenate([plain, ends[bar]])  # NodeTable index of each graph node
    a_g, b_g = gid[:nc], gid[nc:]
    report["barrier_nodes_blocking"] = int(len(np.unique(ends[bar])))

    # weights per direction: OSRM's per-segment deciseconds (`segment_ds`), summed over each chain
    seg_way = way_of_pos  # the way of the segment ending at each position (position 0 of a piece: no segment)
    seg_edges = (np.diff(ways.first) - 1)[seg_way]  # segments of the whole way: a `duration` is split evenly
    seg_rate = ways.rate[seg_way] if ways.rate is not None else np.ones(p)
    in_chain = ~piece_start

    def weights(per_seg: np.ndarray, pens: np.ndarray) -> np.ndarray:
        """Deciseconds of each chain: its segments plus the node penalties `pens` (inside, and at the head unless
        the turns charge those)."""
        cum = np.cumsum(per_seg)
        return (cum[c1] - cum[c0]) + pens

    one = np.ones(p)
    head_f, head_b = pen_f[c1], pen_b[c0]  # the obstacle at the head node, arriving forward / backward
    on_arcs = 0 if obstacles_on_turns else 1  # OSRM charges a junction's obstacle on the turns passing it
    fpen, bpen = interior_f + on_arcs * head_f, interior_b + on_arcs * head_b
    # deciseconds of the segment ending at each position: `segment_ds` at the way's speed (or its `duration` split
    # evenly over its segments; per way, gathered one at a time) slowed by the rate, for the weight (routability),
    # then at rate 1 for the duration; 0 at a piece's first position
    seg_fw, seg_bw, seg_ft, seg_bt = (
        np.where(in_chain, segment_ds(seg, kmh[seg_way], dur[seg_way], seg_edges, r), 0)
        for kmh, dur, r in (
            (ways.fwd_kmh, ways.fwd_duration_s, seg_rate), (ways.bwd_kmh, ways.bwd_duration_s, seg_rate),
            (ways.fwd_kmh, ways.fwd_duration_s, one), (ways.bwd_kmh, ways.bwd_duration_s, one),
        )
    )  # fmt: skip
    fw, bw = weights(seg_fw, fpen), weights(seg_bw, bpen)
    ft, bt = weights(seg_ft, fpen), weights(seg_bt, bpen)
    del one, seg_rate, seg_edges, seg, seg_way, way_of_pos, in_chain
    fk = ways.fwd_kmh[chain_way]
    bk = ways.bwd_kmh[chain_way]
    fd = ways.fwd_duration_s[chain_way]
    bd = ways.bwd_duration_s[chain_way]
    fmask = (fk > 0) | (~np.isnan(fd))
    bmask = (bk > 0) | (~np.isnan(bd))
    fmask, bmask, dropped = parallel_segments(
        a_g, b_g, c1 - c0, fmask, bmask, (seg_fw[c1], seg_ft[c1]), (seg_bw[c1], seg_bt[c1]), ways.name[chain_way],
        ways.strings,
    )  # fmt: skip
    report["parallel_segments_dropped"] = dropped
    chain_ids = np.arange(nc)
    dist_dm = np.round(chain_len * 10).astype(np.int64)
    tail = np.concatenate([a_g[fmask], b_g[bmask]])
    head = np.concatenate([b_g[fmask], a_g[bmask]])
    arc_chain = np.concatenate([chain_ids[fmask], chain_ids[bmask]])
    rev = np.concatenate([np.zeros(int(fmask.sum()), np.int64), np.ones(int(bmask.sum()), np.int64)])
    weight = np.concatenate([fw[fmask], bw[bmask]])
    duration = np.concatenate([ft[fmask], bt[bmask]])
    if weight.size and weight.max() >= 2**31:
        raise ValueError("an arc weight overflows int32 deciseconds")
    aw = np.concatenate([chain_way[fmask], chain_way[bmask]])
    head_pen = np.concatenate([head_f[fmask], head_b[bmask]]) * (1 - on_arcs)
    flags = np.concatenate([ways.flags_fwd[chain_way[fmask]], ways.flags_bwd[chain_way[bmask]]])
    zeros = np.zeros(nw, dtype=np.int32)
    lanes_f = ways.lanes_fwd if ways.lanes_fwd is not None else zeros
    lanes_b = ways.lanes_bwd if ways.lanes_bwd is not None else zeros
    arc_lanes = np.concatenate([lanes_f[chain_way[fmask]], lanes_b[chain_way[bmask]]])
    signs = ways.signs if ways.signs is not None else zeros
    lane_count = ways.lane_count if ways.lane_count is not None else zeros.astype(np.uint8)
    per_arc = encoded_values(ways, nodes, ni, use, c0, c1, chain_way, fmask, bmask)
    if ways.mode_fwd is not None and ways.mode_bwd is not None:  # OSRM's travel mode of each arc's direction
        per_arc["arc_mode"] = np.concatenate([ways.mode_fwd[chain_way[fmask]], ways.mode_bwd[chain_way[bmask]]])
    if ways.startpoint is not None:  # OSRM's is_startpoint of the arc's way, beyond its mode
        per_arc["arc_startpoint"] = ways.startpoint[aw].astype(np.uint8)

    # spatial renumbering of graph nodes
    n = len(node_src)
    order = spatial_order(nodes.lon[node_src], nodes.lat[node_src])
    newid = np.empty(n, dtype=np.int64)
    newid[order] = np.arange(n)
    node_src = node_src[order]

    node_arrays = {
        "node_lon": nodes.lon[node_src],
        "node_lat": nodes.lat[node_src],
        "node_osm_id": nodes.osm_id[node_src],
    }
    arc_arrays = {
        "arc_tail": newid[tail],
        "arc_head": newid[head],
        "arc_weight": weight,
        "arc_duration": duration,
        "arc_head_penalty": head_pen,
        "arc_dist": dist_dm[arc_chain],
        "arc_geom": (2 * arc_chain + rev).astype(np.int32),
        "arc_name": ways.name[aw],
        "arc_ref": ways.ref[aw],
        "arc_class": ways.road_class[aw],
        "arc_flags": flags,
        "arc_lanes": arc_lanes,
        "arc_signs": signs[aw],
        "arc_lane_count": lane_count[aw],
        "arc_way": ways.osm_id[aw],
        **per_arc,
    }
    geometry = {"geom_first": geom_first, "geom_lon": geom_lon, "geom_lat": geom_lat, "geom_osm_id": geom_osm_id}
    arrays = finalize_arrays(node_arrays, arc_arrays, geometry, ways.strings)
    seg_args = (pos, geom_first, fmask, bmask, pen_f, pen_b, on_arcs)
    arrays["geom_seg_weight"] = point_segments(seg_fw, seg_bw, *seg_args)
    arrays["geom_seg_duration"] = point_segments(seg_ft, seg_bt, *seg_args)
    if nodes.passing_ds is not None and nodes.passing_ds.any():
        arrays["node_passing_penalty"] = nodes.passing_ds[node_src].astype(np.int32)
    comp = arrays["node_component"]
    sizes = np.bincount(comp) if n else np.zeros(0, np.int64)
    report.update(
        nodes=int(n),
        arcs=int(len(tail)),
        chains=int(nc),
        shape_points=int(geom_first[-1] - 2 * nc),
        self_loop_chains=int((a_g == b_g).sum()),
        components=int(len(sizes)),
        largest_component_nodes=int(sizes[0]) if len(sizes) else 0,
        nodes_outside_largest_component=int(n - (sizes[0] if len(sizes) else 0)),
    )
    return arrays, report, node_src

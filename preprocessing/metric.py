"""A new metric for a built graph: OSRM's segment speed and turn penalty files applied to its weights and durations.

`new_metric(arrays, speeds, turns)` is pure and vectorised: it maps every directed segment between two consecutive
shape points of a road arc to its `(from_osm_node_id, to_osm_node_id)` pair (`geom_osm_id`), and every turn of the
edge-based graph to its `(from, via, to)` triple, looks them up in the files, and returns the road arcs' and turns'
new weights and durations, the search graph's arc weights that follow from them, and a report of what matched.

Arithmetic (OSRM's `updater.cpp`): an updated segment lasts `max(1, round(length / (speed_kmh / 3.6) * 10))` ds;
its weight follows the duration without a rate column, stays with an empty one, and is `length / rate` otherwise;
a speed or rate of 0 closes it. A road arc's segments that no line names keep their own weight and duration
(`geom_seg_weight` / `geom_seg_duration`, which the metric then carries) and its node obstacles stay, so an arc is
the exact sum of OSRM's per-segment deciseconds; on a graph built before those arrays they keep their share of the
arc's values (split along its length). A closed arc weighs `CLOSED_DS`: far
above any real route, so a path weighing that much is no path (the engine says "no route"). An updated turn lasts
`round(penalty_s * 10)` ds and weighs `round(weight * 10)` (or its duration); a negative one is clamped to 0, since
every search needs non-negative arcs. A metric is always the base graph's metric plus the files given: applying
files twice gives the same metric, and no files give the base metric back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from floor.format.checks import arc_segment_sums
from floor.format.units import CLOSED_DS, COORD_SCALE, WEIGHT_PER_SECOND
from floor.kernels.measure import osrm_lengths_m
from preprocessing.osm.speeds import SegmentSpeeds, TurnPenalties

# the arrays a metric replaces (besides the hierarchies and landmark tables built on them)
ROAD_METRIC = ("arc_weight", "arc_duration")
TURN_METRIC = ("eb_arc_weight", "eb_arc_duration", "eb_arc_turn", "eb_arc_turn_duration")


@dataclass
class MetricReport:
    """What a metric's files did: lines read, distinct keys, keys that matched something, what changed."""

    segment_lines: int = 0
    segment_keys: int = 0
    segment_keys_applied: int = 0
    segments_updated: int = 0
    arcs_changed: int = 0
    arcs_closed: int = 0
    turn_lines: int = 0
    turn_keys: int = 0
    turn_keys_applied: int = 0
    turns_updated: int = 0
    turns_clamped: int = 0
    faster_arcs: int = 0  # search arcs now lighter than in the base metric (landmark bounds must be recomputed)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def segment_keys_unmatched(self) -> int:
        return self.segment_keys - self.segment_keys_applied

    @property
    def turn_keys_unmatched(self) -> int:
        return self.turn_keys - self.turn_keys_applied

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "extra"}
        out["segment_keys_unmatched"] = self.segment_keys_unmatched
        out["turn_keys_unmatched"] = self.turn_keys_unmatched
        out.update(self.extra)
        return out


def _keys(*cols: np.ndarray, ids: np.ndarray, ranks: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
    """Sortable keys of int64 column tuples: one int64 per tuple packing the columns' ranks in `ids` (sorted unique;
    `ranks`: those ranks when the caller has them; len(ids) for an id not among them) when that fits, else
    fixed-width bytes of the ids themselves (big-endian, sign flipped)."""
    if len(ids) and (len(ids) + 1) ** len(cols) < (1 << 62):
        n = len(ids) + 1
        key = np.zeros(len(cols[0]) if cols else 0, dtype=np.int64)
        for c, r in zip(cols, ranks or [None] * len(cols), strict=True):
            key = key * n + (_ranks(c, ids) if r is None else r)
        return key
    parts = [(np.asarray(c, dtype=np.int64).astype(np.uint64) ^ np.uint64(1 << 63)).astype(">u8") for c in cols]
    stacked = np.ascontiguousarray(np.stack(parts, axis=1)) if parts else np.zeros((0, 0), ">u8")
    return stacked.view(f"S{8 * len(cols)}").ravel()


def _ranks(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Each value's index in the sorted unique `ids`, len(ids) where absent."""
    pos = np.searchsorted(ids, values)
    pos_c = np.minimum(pos, max(len(ids) - 1, 0))
    return np.where((pos < len(ids)) & (ids[pos_c] == values), pos, len(ids)) if len(ids) else np.zeros_like(pos)


def _unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (by sorting: numpy's hash-based `unique` is several times slower on ids)."""
    s = np.sort(a)
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    return s[keep]


def _lookup(table: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Index of each of `keys` in the sorted unique `table`, -1 where absent."""
    if len(table) == 0:
        return np.full(len(keys), -1, dtype=np.int64)
    pos = np.searchsorted(table, keys)
    pos_c = np.minimum(pos, len(table) - 1)
    return np.where(table[pos_c] == keys, pos_c, -1).astype(np.int64)


def _sorted_table(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys, kind="stable")
    return keys[order], order


def arc_segments(
    arrays: dict[str, np.ndarray], lengths: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Every directed segment of every road arc: (arc id, from shape point, to shape point, length m), the arc's
    segments in its driving order; the lengths only with `lengths` (None otherwise: a file updates few segments)."""
    geom = np.asarray(arrays["arc_geom"], dtype=np.int64)
    gf = np.asarray(arrays["geom_first"], dtype=np.int64)
    chain, rev = geom >> 1, (geom & 1).astype(bool)
    nseg = gf[chain + 1] - gf[chain] - 1
    arc = np.repeat(np.arange(len(geom), dtype=np.int64), nseg)
    starts = np.zeros(len(geom) + 1, dtype=np.int64)
    np.cumsum(nseg, out=starts[1:])
    k = np.arange(int(starts[-1]), dtype=np.int64) - starts[arc]  # index of the segment along the arc
    c0, cn = gf[chain][arc], gf[chain + 1][arc] - 1
    r = rev[arc]
    a = np.where(r, cn - k, c0 + k)
    b = np.where(r, a - 1, a + 1)
    return arc, a, b, segment_lengths(arrays, a, b) if lengths else None


def segment_lengths(arrays: dict[str, np.ndarray], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Metres from shape point `a` to `b`, per element: OSRM's formula, as the build measured the arcs."""
    lon = np.asarray(arrays["geom_lon"], dtype=np.float64) / COORD_SCALE
    lat = np.asarray(arrays["geom_lat"], dtype=np.float64) / COORD_SCALE
    return osrm_lengths_m(lon[a], lat[a], lon[b], lat[b])


def named_segments(
    arrays: dict[str, np.ndarray], from_id: np.ndarray, to_id: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(arc, from shape point, to shape point, line) of every directed road-arc segment whose OSM node pair is a
    line's (`from_id[line]`, `to_id[line]`, distinct pairs), in `arc_segments`' order. Only shape points whose OSM
    node the file names are looked at: a file names a few percent of a city's segments."""
    osm = np.asarray(arrays["geom_osm_id"], dtype=np.int64)
    gf = np.asarray(arrays["geom_first"], dtype=np.int64)
    geom = np.asarray(arrays["arc_geom"], dtype=np.int64)
    ids = _unique(np.concatenate([from_id, to_id]))
    table, order = _sorted_table(_keys(from_id, to_id, ids=ids))
    if len(geom) and np.bincount(geom).max() > 1:  # two arcs on one chain and direction: segment by segment
        arc, a, b, _ = arc_segments(arrays, lengths=False)
        hit = _lookup(table, _keys(osm[a], osm[b], ids=ids))
        got = hit >= 0
        return arc[got], a[got], b[got], order[hit[got]]
    m = len(ids)
    rank = _ranks(osm, ids)
    inner = np.ones(max(len(osm) - 1, 0), dtype=bool)  # point s and s + 1 are one segment of a chain
    ends = gf[1:-1] - 1
    inner[ends[(ends >= 0) & (ends < len(inner))]] = False
    s = np.flatnonzero(inner & (rank[:-1] < m) & (rank[1:] < m))
    chain = np.searchsorted(gf, s, side="right") - 1
    arc_of = np.full(2 * (len(gf) - 1), -1, dtype=np.int64)
    arc_of[geom] = np.arange(len(geom), dtype=np.int64)
    parts = []
    for a, b, arc in ((s, s + 1, arc_of[2 * chain]), (s + 1, s, arc_of[2 * chain + 1])):  # along, against the chain
        hit = _lookup(table, _keys(osm[a], osm[b], ids=ids, ranks=(rank[a], rank[b])))
        got = (hit >= 0) & (arc >= 0)
        parts.append((arc[got], a[got], b[got], order[hit[got]]))
    arc, a, b, line = (np.concatenate([p[i] for p in parts]) for i in range(4))
    along = np.where(geom[arc] & 1, -a, a)  # the segment's place along its arc, in driving order
    keep = np.lexsort((along, arc))
    return arc[keep], a[keep], b[keep], line[keep]


def _deciseconds(length_m: np.ndarray, mps: np.ndarray) -> np.ndarray:
    """OSRM's segment value: max(1, round(length / speed * 10)) ds; CLOSED_DS where the speed is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.maximum(1.0, np.round(length_m / mps * WEIGHT_PER_SECOND))
    return np.where(mps > 0, np.minimum(v, CLOSED_DS), CLOSED_DS)


def new_metric(
    arrays: dict[str, np.ndarray], speeds: SegmentSpeeds | None, turns: TurnPenalties | None
) -> tuple[dict[str, np.ndarray], MetricReport]:
    """The metric-dependent road and turn arrays (`ROAD_METRIC`, and `TURN_METRIC` on an edge-based graph) of the
    base metric in `arrays` with the files applied, and the report (module docstring)."""
    rep = MetricReport()
    w0 = np.asarray(arrays["arc_weight"], dtype=np.int64)
    d0 = np.asarray(arrays["arc_duration"], dtype=np.int64)
    w, d = w0.astype(np.float64), d0.astype(np.float64)
    closed = np.zeros(len(w0), dtype=bool)
    if speeds is not None and len(speeds):
        rep.segment_lines, rep.segment_keys = speeds.lines, len(speeds)
        arc_u, a_u, b_u, upd = named_segments(arrays, speeds.from_id, speeds.to_id)
        rep.segments_updated = len(upd)
        rep.segment_keys_applied = int(len(_unique(upd)))
        len_u = segment_lengths(arrays, a_u, b_u)
        speed_mps = speeds.speed_kmh[upd] / 3.6
        new_d = _deciseconds(len_u, speed_mps)
        rate = np.where(speeds.has_rate[upd], speeds.rate[upd], speed_mps)
        keep_w = np.isnan(rate)
        if "geom_seg_weight" in arrays and "geom_seg_duration" in arrays:
            return _per_segment(arrays, rep, turns, (a_u, b_u, arc_u, len_u), new_d, rate, keep_w)
        # each segment's share of its arc's base values, split along the arc's length
        arc, a, b, length = arc_segments(arrays)
        arc_len = np.bincount(arc, weights=length, minlength=len(w0))
        nseg = np.bincount(arc, minlength=len(w0))
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(arc_len[arc_u] > 0, len_u / arc_len[arc_u], 1.0 / np.maximum(nseg[arc_u], 1))
        new_w = np.where(keep_w, w0[arc_u] * frac, _deciseconds(len_u, np.nan_to_num(rate)))
        closed_seg = (new_d >= CLOSED_DS) | (~keep_w & (new_w >= CLOSED_DS))
        closed[arc_u[closed_seg]] = True
        d += np.bincount(arc_u, weights=np.where(new_d >= CLOSED_DS, 0.0, new_d) - d0[arc_u] * frac, minlength=len(w))
        w += np.bincount(arc_u, weights=np.where(new_w >= CLOSED_DS, 0.0, new_w) - w0[arc_u] * frac, minlength=len(w))
    arc_w = np.where(closed, CLOSED_DS, np.clip(np.round(w), 0, CLOSED_DS)).astype(np.int32)
    arc_d = np.where(closed, CLOSED_DS, np.clip(np.round(d), 0, CLOSED_DS)).astype(np.int32)
    return _with_turns(arrays, rep, turns, {"arc_weight": arc_w, "arc_duration": arc_d}, closed)


def _per_segment(
    arrays: dict[str, np.ndarray],
    rep: MetricReport,
    turns: TurnPenalties | None,
    updated: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    new_d: np.ndarray,
    rate: np.ndarray,
    keep_w: np.ndarray,
) -> tuple[dict[str, np.ndarray], MetricReport]:
    """The road arcs on a graph with per-segment values (`geom_seg_weight` / `geom_seg_duration`): each updated
    segment `updated` = (from point, to point, arc, metres) takes its new deciseconds in its own cell, every other
    segment and obstacle keeps its own, and an arc is their sum, as OSRM's updater; the new per-segment arrays go
    with the metric."""
    a, b, arc_u, length = updated
    sw = np.array(arrays["geom_seg_weight"], dtype=np.int32)  # one copy, written below
    sd = np.array(arrays["geom_seg_duration"], dtype=np.int32)
    row, col = np.maximum(a, b), np.where(b > a, 0, 1)  # the segment's row and direction column
    new_w = np.where(keep_w, sw[row, col], _deciseconds(length, np.nan_to_num(rate)))
    closed = np.zeros(int(arrays["arc_weight"].shape[0]), dtype=bool)
    closed[arc_u[(new_d >= CLOSED_DS) | (new_w >= CLOSED_DS)]] = True
    sd[row, col] = np.minimum(new_d, CLOSED_DS)
    sw[row, col] = np.minimum(new_w, CLOSED_DS)
    out: dict[str, np.ndarray] = {}
    touched = _unique(arc_u)  # every other arc is the sum of its unchanged segments already (`checks.check_segments`)
    for name, seg in (("arc_weight", sw), ("arc_duration", sd)):
        total = np.array(arrays[name], dtype=np.int64)
        total[touched] = arc_segment_sums(seg, arrays["arc_geom"], arrays["geom_first"], touched)
        out[name] = np.where(closed, CLOSED_DS, np.clip(total, 0, CLOSED_DS)).astype(np.int32)
    out["geom_seg_weight"], out["geom_seg_duration"] = sw, sd
    return _with_turns(arrays, rep, turns, out, closed)


def _with_turns(
    arrays: dict[str, np.ndarray],
    rep: MetricReport,
    turns: TurnPenalties | None,
    out: dict[str, np.ndarray],
    closed: np.ndarray,
) -> tuple[dict[str, np.ndarray], MetricReport]:
    """The report's arc counts, and on an edge-based graph the turns (files applied) and search arcs that follow
    from the new road arcs in `out`."""
    w0, d0 = np.asarray(arrays["arc_weight"]), np.asarray(arrays["arc_duration"])
    arc_w, arc_d = out["arc_weight"], out["arc_duration"]
    rep.arcs_changed = int(np.count_nonzero((arc_w != w0) | (arc_d != d0)))
    rep.arcs_closed = int(closed.sum())
    if "eb_arc_head" not in arrays:
        rep.faster_arcs = int(np.count_nonzero(arc_w < w0))
        if turns is not None and len(turns):
            rep.turn_lines, rep.turn_keys = turns.lines, len(turns)
        return out, rep
    tw = np.asarray(arrays["eb_arc_turn"], dtype=np.int64).copy()
    td = np.asarray(arrays["eb_arc_turn_duration"], dtype=np.int64).copy()
    node_arc = np.asarray(arrays["eb_node_arc"], dtype=np.int64)
    into = node_arc[np.asarray(arrays["eb_arc_tail"], dtype=np.int64)]
    onto = node_arc[np.asarray(arrays["eb_arc_head"], dtype=np.int64)]
    if turns is not None and len(turns):
        rep.turn_lines, rep.turn_keys = turns.lines, len(turns)
        osm = np.asarray(arrays["geom_osm_id"], dtype=np.int64)
        ids = _unique(np.concatenate([turns.from_id, turns.via_id, turns.to_id]))
        last, before, second = _arc_ends(arrays)
        table, order = _sorted_table(_keys(turns.from_id, turns.via_id, turns.to_id, ids=ids))
        rank = _ranks(osm, ids)
        x, y, z = before[into], last[into], second[onto]
        hit = _lookup(table, _keys(osm[x], osm[y], osm[z], ids=ids, ranks=(rank[x], rank[y], rank[z])))
        got = hit >= 0
        upd = order[hit[got]]
        rep.turns_updated = int(got.sum())
        rep.turn_keys_applied = int(len(_unique(upd)))
        new_td = np.round(turns.penalty_s[upd] * WEIGHT_PER_SECOND)
        new_tw = np.where(np.isnan(turns.weight_s[upd]), new_td, np.round(turns.weight_s[upd] * WEIGHT_PER_SECOND))
        rep.turns_clamped = int(np.count_nonzero((new_td < 0) | (new_tw < 0)))
        big = CLOSED_DS // 4
        td[got] = np.clip(new_td, 0, big)
        tw[got] = np.clip(new_tw, 0, big)
    eb_w = np.minimum(tw + arc_w[onto], CLOSED_DS + CLOSED_DS // 4).astype(np.int32)
    eb_d = np.minimum(td + arc_d[onto], CLOSED_DS + CLOSED_DS // 4).astype(np.int32)
    rep.faster_arcs = int(np.count_nonzero(eb_w < np.asarray(arrays["eb_arc_weight"])))
    out.update(
        {
            "eb_arc_weight": eb_w,
            "eb_arc_duration": eb_d,
            "eb_arc_turn": tw.astype(np.int32),
            "eb_arc_turn_duration": td.astype(np.int32),
        }
    )
    return out, rep


def _arc_ends(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per road arc, in its driving direction: the shape point it ends on, the one before, the one after its
    start (OSRM's turn `from, via, to` reads `before[in], last[in], second[out]`)."""
    geom = np.asarray(arrays["arc_geom"], dtype=np.int64)
    gf = np.asarray(arrays["geom_first"], dtype=np.int64)
    chain, rev = geom >> 1, (geom & 1).astype(bool)
    c0, cn = gf[chain], gf[chain + 1] - 1
    last = np.where(rev, c0, cn)
    before = np.where(rev, c0 + 1, cn - 1)
    second = np.where(rev, cn - 1, c0 + 1)
    return last, before, second

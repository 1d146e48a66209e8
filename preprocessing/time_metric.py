"""Time profiles as a metric's arrays (issue 44): the weekly travel-time factor rows (`td_factor`) and the row of each
road arc (`td_arc_row`), from the vendors' files (`preprocessing.osm.time_profiles`). Pure, vectorised numpy.

A segment profile names a daily profile per weekday: its weekly row is the seven days' 96 slot factors end to end
(Monday first), factor = round(65536 * 100 / pct) (`floor.format.time_profiles`). Segments are matched as the speed
files' are (`preprocessing.metric.named_segments`: by OSM node pair, per direction). A road arc whose segments all
follow one weekly row takes that row; an arc only partly listed, or whose segments follow several, takes their mean
weighted by each segment's duration (`geom_seg_duration`; by length on graphs built before it), an unlisted segment
counting as free flow (65536). The obstacles an arc holds (signals, ...) are scaled with it. Identical rows are
stored once. An arc a speed file closed stays static (a factor below 1 would open it). An arc whose row would let a
later departure arrive earlier (d * (f[k] - f[k+1]) > 9000 * 65536) gets a repaired row of its own
(`floor.format.time_profiles.repair_fifo`), counted in the report.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from floor.format.time_profiles import fifo_holds, pct_factor, repair_fifo
from floor.format.units import CLOSED_DS, SLOTS, TD_ONE
from preprocessing.metric import arc_segments, named_segments, segment_lengths
from preprocessing.osm.time_profiles import SegmentProfiles, TimeProfiles


@dataclass
class TimeReport:
    """What the time profiles did: profiles read, segment lines and keys, keys that matched a road segment, arcs
    timed (wholly by one row, or mixed), rows stored, arcs repaired for FIFO, closed arcs left static."""

    profiles: int = 0
    segment_lines: int = 0
    segment_keys: int = 0
    segment_keys_applied: int = 0
    segments_profiled: int = 0
    arcs_timed: int = 0
    arcs_mixed: int = 0
    rows: int = 0
    fifo_repaired: int = 0
    closed_static: int = 0

    @property
    def segment_keys_unmatched(self) -> int:
        return self.segment_keys - self.segment_keys_applied

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "segment_keys_unmatched": self.segment_keys_unmatched}


def weekly_rows(profiles: TimeProfiles, day_profile: np.ndarray) -> np.ndarray:
    """int64 [k, SLOTS] weekly factor rows of `day_profile` ([k, 7] profile indices, Monday first)."""
    day = pct_factor(profiles.pct)  # [P, 96]
    dp = np.asarray(day_profile, dtype=np.int64)
    return day[dp].reshape(dp.shape[0], SLOTS)


def _segment_weights(
    arrays: dict[str, np.ndarray], a: np.ndarray, b: np.ndarray, arcs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(weight of each segment a->b, total weight of each arc of `arcs` over all its segments): deciseconds of
    travel (`geom_seg_duration`, obstacles apart), or metres on graphs built before per-segment values."""
    geom = np.asarray(arrays["arc_geom"], dtype=np.int64)
    gf = np.asarray(arrays["geom_first"], dtype=np.int64)
    if "geom_seg_duration" in arrays:
        sd = np.asarray(arrays["geom_seg_duration"])
        w = sd[np.maximum(a, b), np.where(b > a, 0, 1)].astype(np.float64)
        cum = np.zeros((sd.shape[0] + 1, 2), dtype=np.int64)
        np.cumsum(sd[:, 0:2].astype(np.int64), axis=0, out=cum[1:])
        chain, rev = geom[arcs] >> 1, geom[arcs] & 1
        return w, (cum[gf[chain + 1], rev] - cum[gf[chain], rev]).astype(np.float64)
    w = segment_lengths(arrays, a, b)
    arc, _, _, length = arc_segments(arrays)
    assert length is not None
    total = np.bincount(arc, weights=length, minlength=len(geom))
    return w, total[arcs]


def time_metric(
    arrays: dict[str, np.ndarray], profiles: TimeProfiles, segments: SegmentProfiles
) -> tuple[dict[str, np.ndarray], TimeReport]:
    """`td_factor` and `td_arc_row` for the graph in `arrays` (its preprocessed arrays with the new metric's
    `arc_duration` and `geom_seg_duration` over them), and the report (module docstring)."""
    rep = TimeReport(profiles=len(profiles.names), segment_lines=segments.lines, segment_keys=len(segments))
    duration = np.asarray(arrays["arc_duration"], dtype=np.int64)
    m = len(duration)
    arc_row = np.full(m, -1, dtype=np.int32)
    empty = {"td_factor": np.zeros((0, SLOTS), dtype=np.int32), "td_arc_row": arc_row}
    if not len(segments):
        return empty, rep
    combos, line_combo = np.unique(segments.day_profile, axis=0, return_inverse=True)
    line_combo = np.asarray(line_combo).reshape(-1)
    week = weekly_rows(profiles, combos)  # [C, SLOTS]
    arc, a, b, line = named_segments(arrays, segments.from_id, segments.to_id)
    rep.segments_profiled = len(line)
    rep.segment_keys_applied = int(len(np.unique(line)))
    live = duration[arc] < CLOSED_DS  # an arc a speed file closed stays static
    rep.closed_static = int(len(np.unique(arc[~live])))
    arc, a, b, line = arc[live], a[live], b[live], line[live]
    if not len(arc):
        return empty, rep
    combo = line_combo[line]
    touched, seg_arc = np.unique(arc, return_inverse=True)  # the arcs some listed segment times
    seg_w, arc_w = _segment_weights(arrays, a, b, touched)
    geom = np.asarray(arrays["arc_geom"], dtype=np.int64)
    gf = np.asarray(arrays["geom_first"], dtype=np.int64)
    nseg = gf[(geom[touched] >> 1) + 1] - gf[geom[touched] >> 1] - 1
    listed = np.bincount(seg_arc, minlength=len(touched))
    lo = np.full(len(touched), np.iinfo(np.int64).max)
    hi = np.full(len(touched), -1)
    np.minimum.at(lo, seg_arc, combo)
    np.maximum.at(hi, seg_arc, combo)
    pure = (listed == nseg) & (lo == hi)  # every segment listed, all with one weekly row: that row exactly
    # candidate rows: the weekly rows, then one mean row per mixed arc
    mixed = np.flatnonzero(~pure)
    rep.arcs_mixed = len(mixed)
    cand_of = np.where(pure, lo, -1).astype(np.int64)
    rows = [week]
    if len(mixed):
        slot = np.full(len(touched), -1, dtype=np.int64)
        slot[mixed] = np.arange(len(mixed))
        on = slot[seg_arc] >= 0
        # weight per (mixed arc, weekly row), then the rows summed with those weights
        key = slot[seg_arc[on]] * len(week) + combo[on]
        pair, inv = np.unique(key, return_inverse=True)
        pw = np.bincount(np.asarray(inv).reshape(-1), weights=seg_w[on], minlength=len(pair))
        pcount = np.bincount(np.asarray(inv).reshape(-1), minlength=len(pair)).astype(np.float64)
        total = arc_w[mixed]
        by_count = np.bincount(pair // len(week), weights=pw, minlength=len(mixed)) <= 0  # zero-duration segments
        if np.any(by_count):  # weigh those arcs' segments by count instead
            use = by_count[pair // len(week)]
            pw = np.where(use, pcount, pw)
            total = np.where(by_count, nseg[mixed].astype(np.float64), total)
        acc = np.zeros((len(mixed), SLOTS), dtype=np.float64)
        np.add.at(acc, pair // len(week), pw[:, None] * week[pair % len(week)])
        listed_w = np.bincount(pair // len(week), weights=pw, minlength=len(mixed))
        rest = np.maximum(total - listed_w, 0.0)
        mean = np.rint((acc + rest[:, None] * TD_ONE) / np.maximum(listed_w + rest, 1e-9)[:, None]).astype(np.int64)
        rows.append(mean)
        cand_of[mixed] = len(week) + np.arange(len(mixed))
    cand = np.concatenate(rows)
    # FIFO: an arc whose row breaks it gets that row repaired for its own duration (shared by equal caps)
    d = duration[touched]
    ok = fifo_holds(d, cand[cand_of])
    bad = np.flatnonzero(~ok)
    rep.fifo_repaired = len(bad)
    if len(bad):
        fixed = repair_fifo(cand[cand_of[bad]], d[bad])
        cand_of[bad] = len(cand) + np.arange(len(bad))
        cand = np.concatenate([cand, fixed])
    used, back = np.unique(cand_of, return_inverse=True)
    table, row_of = np.unique(cand[used], axis=0, return_inverse=True)
    arc_row[touched] = np.asarray(row_of).reshape(-1)[np.asarray(back).reshape(-1)]
    rep.arcs_timed = len(touched)
    rep.rows = len(table)
    return {"td_factor": table.astype(np.int32), "td_arc_row": arc_row}, rep

"""Traffic vendors' time profiles, read for departure-time routing (issue 44): named weekly speed shapes, and the
profile each directed OSM segment follows on each weekday.

`time_profiles.csv`: the header `profile,00:00,00:15,...,23:45`, then one line per named profile with 96 values, each
the speed in that 15-minute slot as a percent of the segment's free-flow speed (1..200, decimals allowed).
`segment_profiles.csv`: the header `from_osm_node_id,to_osm_node_id,mon,tue,wed,thu,fri,sat,sun`, then per directed
segment between two directly connected OSM way nodes (the segments of OSRM's speed files, `speeds.py`) the profile
name of each weekday. Blank lines are skipped; a segment listed twice takes its last line (the speed files' rule).
A malformed file is refused with its file, line number and reason (`MetricFileError`), and nothing is applied.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from floor.format.units import SLOTS_PER_DAY, TD_PCT_MAX, TD_PCT_MIN
from preprocessing.osm.speeds import MetricFileError, Source, last_of, osm_node_id, read_source

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SLOT_TIMES = tuple(f"{q // 4:02d}:{q % 4 * 15:02d}" for q in range(SLOTS_PER_DAY))  # "00:00" .. "23:45"
PROFILE_HEADER = ("profile", *SLOT_TIMES)
SEGMENT_HEADER = ("from_osm_node_id", "to_osm_node_id", *WEEKDAYS)


@dataclass(frozen=True)
class TimeProfiles:
    """Named daily profiles: `pct[i, q]` the speed of profile `names[i]` in slot q (15 minutes from 00:00) as a
    percent of free flow."""

    names: tuple[str, ...]
    pct: np.ndarray  # float64 [P, 96]

    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.names)}


@dataclass(frozen=True)
class SegmentProfiles:
    """Directed segments, unique by (from, to) (the last listing winning), and the profile of each weekday (an index
    into `TimeProfiles.names`, Monday first)."""

    from_id: np.ndarray  # int64 [k]
    to_id: np.ndarray  # int64 [k]
    day_profile: np.ndarray  # int32 [k, 7]
    lines: int  # data lines read, duplicates included

    def __len__(self) -> int:
        return int(self.from_id.shape[0])


def _data_lines(src: Source) -> tuple[str, list[tuple[int, str]]]:
    """The file's name and its non-blank lines with their numbers (1-based)."""
    name, lines = read_source(src)
    return name, [(no, line) for no, line in enumerate(lines, 1) if line.strip()]


def _header(name: str, lines: list[tuple[int, str]], want: tuple[str, ...], short: str) -> list[tuple[int, str]]:
    """The lines after the header, which must be `want` (case and spaces aside); `MetricFileError` naming the first
    column that differs."""
    if not lines:
        raise MetricFileError(f"{name}: empty file (expected the header {short})")
    no, line = lines[0]
    got = [c.strip().lower() for c in line.split(",")]
    for i, w in enumerate(want):
        if i >= len(got):
            raise MetricFileError(f"{name} line {no}: header has {len(got)} columns, expected {len(want)} ({short})")
        if got[i] != w:
            raise MetricFileError(f"{name} line {no}: header column {i + 1} is {got[i]!r}, expected {w!r} ({short})")
    if len(got) > len(want):
        raise MetricFileError(f"{name} line {no}: header has {len(got)} columns, expected {len(want)} ({short})")
    return lines[1:]


def read_time_profiles(src: Source) -> TimeProfiles:
    """Read a `time_profiles.csv` (module docstring); `MetricFileError` on the first malformed line."""
    name, lines = _data_lines(src)
    body = _header(name, lines, PROFILE_HEADER, "profile,00:00,00:15,...,23:45")
    names: list[str] = []
    first: dict[str, int] = {}
    rows: list[list[float]] = []
    for no, line in body:
        cols = line.split(",")
        prof = cols[0].strip()
        if not prof:
            raise MetricFileError(f"{name} line {no}: empty profile name")
        if prof in first:
            raise MetricFileError(f"{name} line {no}: duplicate profile {prof!r} (first defined on line {first[prof]})")
        values = cols[1:]
        if len(values) != SLOTS_PER_DAY:
            raise MetricFileError(
                f"{name} line {no}: profile {prof!r} has {len(values)} slots, expected {SLOTS_PER_DAY} (00:00..23:45)"
            )
        row = []
        for q, v in enumerate(values):
            try:
                x = float(v.strip())
            except ValueError:
                raise MetricFileError(
                    f"{name} line {no}: profile {prof!r} slot {SLOT_TIMES[q]}: {v.strip()!r} is not a number"
                ) from None
            if not math.isfinite(x) or not TD_PCT_MIN <= x <= TD_PCT_MAX:
                raise MetricFileError(
                    f"{name} line {no}: profile {prof!r} slot {SLOT_TIMES[q]}: {v.strip()} % is not within "
                    f"{TD_PCT_MIN}..{TD_PCT_MAX} % of free flow"
                )
            row.append(x)
        first[prof] = no
        names.append(prof)
        rows.append(row)
    if not names:
        raise MetricFileError(f"{name}: no profile (only the header)")
    return TimeProfiles(tuple(names), np.asarray(rows, dtype=np.float64).reshape(len(names), SLOTS_PER_DAY))


def read_segment_profiles(paths: Sequence[Source], profiles: TimeProfiles) -> SegmentProfiles:
    """Read `segment_profiles.csv` files (module docstring), their profile names looked up in `profiles`;
    `MetricFileError` on the first malformed line or unknown profile name."""
    index = profiles.index()
    fr: list[int] = []
    to: list[int] = []
    days: list[list[int]] = []
    ncols = len(SEGMENT_HEADER)
    for src in paths:
        name, lines = _data_lines(src)
        body = _header(name, lines, SEGMENT_HEADER, ",".join(SEGMENT_HEADER))
        for no, line in body:
            cols = line.split(",")
            if len(cols) != ncols:
                raise MetricFileError(
                    f"{name} line {no}: {len(cols)} columns, expected {ncols} ({','.join(SEGMENT_HEADER)})"
                )
            fr.append(osm_node_id(name, no, "from_osm_node_id", cols[0]))
            to.append(osm_node_id(name, no, "to_osm_node_id", cols[1]))
            row = []
            for day, v in zip(WEEKDAYS, cols[2:], strict=True):
                i = index.get(v.strip())
                if i is None:
                    raise MetricFileError(
                        f"{name} line {no}: {day}: unknown profile {v.strip()!r} (not in the time profiles)"
                    )
                row.append(i)
            days.append(row)
    n = len(fr)
    keys = np.array([fr, to], dtype=np.int64).reshape(2, n)
    last = last_of(keys)
    day_profile = np.asarray(days, dtype=np.int32).reshape(n, len(WEEKDAYS))
    return SegmentProfiles(keys[0][last], keys[1][last], day_profile[last], n)

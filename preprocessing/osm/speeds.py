"""OSRM's traffic update files, read the way `osrm-customize` reads them: segment speeds and turn penalties.

Segment speed file, one line per directed segment between two directly connected OSM way nodes:
`from_osm_node_id,to_osm_node_id,speed_kmh[,rate]`; `rate` (m/s of weight) absent: the weight follows the new
duration; present but empty: the weight stays; `speed_kmh` 0 closes the segment. Turn penalty file:
`from_osm_node_id,via_osm_node_id,to_osm_node_id,penalty_s[,weight]`. Anything after the last column is a comment
(OSRM ignores it). Several files may be given; for a key listed more than once the last file, then the last line,
wins (OSRM's rule). A malformed line is refused with its file, line number and reason, and nothing is applied.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_OSM_ID = (1 << 63) - 1  # OSM ids are stored as int64


class MetricFileError(ValueError):
    """A traffic file that cannot be applied; the message names the file, the line and the reason."""


@dataclass(frozen=True)
class SegmentSpeeds:
    """Directed segment updates, unique by (from, to), the last listing winning. `rate` NaN: keep the weight;
    `has_rate` False: the weight follows the duration."""

    from_id: np.ndarray  # int64 [k]
    to_id: np.ndarray  # int64 [k]
    speed_kmh: np.ndarray  # float64 [k], 0 = closed
    rate: np.ndarray  # float64 [k] m/s of weight (NaN: keep the weight)
    has_rate: np.ndarray  # bool [k]
    lines: int  # lines read, duplicates included

    def __len__(self) -> int:
        return int(self.from_id.shape[0])


@dataclass(frozen=True)
class TurnPenalties:
    """Turn updates, unique by (from, via, to), the last listing winning. `weight` NaN: the weight follows the
    duration."""

    from_id: np.ndarray  # int64 [k]
    via_id: np.ndarray  # int64 [k]
    to_id: np.ndarray  # int64 [k]
    penalty_s: np.ndarray  # float64 [k]
    weight_s: np.ndarray  # float64 [k] (NaN: as the penalty)
    lines: int

    def __len__(self) -> int:
        return int(self.from_id.shape[0])


Source = str | os.PathLike[str] | tuple[str, bytes]  # a file, or (a name for messages, its bytes)


def read_source(src: Source) -> tuple[str, list[str]]:
    """The name and the lines of a file or of in-memory bytes."""
    if isinstance(src, tuple):
        name, raw = src
    else:
        name = str(src)
        try:
            raw = open(src, "rb").read()  # noqa: SIM115 - read at once
        except OSError as exc:
            raise MetricFileError(f"{src}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise MetricFileError(f"{name} line {line}: not UTF-8 text") from None
    return name, text.splitlines()


def osm_node_id(path: object, no: int, field: str, value: str) -> int:
    v = value.strip()
    if not v.isdigit():
        raise MetricFileError(f"{path} line {no}: {field} {value!r} is not an OSM node id (a whole number >= 0)")
    n = int(v)
    if n > MAX_OSM_ID:
        raise MetricFileError(f"{path} line {no}: {field} {value!r} is too large for an OSM node id")
    return n


def parse_number(path: object, no: int, field: str, value: str, unsigned: bool) -> float:
    v = value.strip()
    try:
        x = float(v)
    except ValueError:
        raise MetricFileError(f"{path} line {no}: {field} {value!r} is not a number") from None
    if not math.isfinite(x):
        raise MetricFileError(f"{path} line {no}: {field} {value!r} is not a finite number")
    if unsigned and (x < 0 or v.startswith(("-", "+"))):
        raise MetricFileError(f"{path} line {no}: {field} {value!r} must be a number >= 0")
    return x


def _fast_columns(lines: list[str], ncols: int, ids: int) -> list[np.ndarray] | None:
    """The columns of a file whose every line has exactly `ncols` non-empty fields, the first `ids` of them OSM ids
    (>= 0) and the rest finite numbers, parsed in C; None when any line differs (the line-by-line reader then finds
    and names it)."""
    if not lines:
        return None
    commas = np.fromiter(map(str.count, lines, itertools.repeat(",")), dtype=np.int64, count=len(lines))
    if np.any(commas != ncols - 1):
        return None
    fields = ",".join(lines).split(",")
    try:
        cols = [np.array(fields[i::ncols], dtype=np.int64 if i < ids else np.float64) for i in range(ncols)]
    except (ValueError, OverflowError):
        return None
    if any(np.any(c < 0) for c in cols[:ids]) or not all(np.all(np.isfinite(c)) for c in cols[ids:]):
        return None
    return cols


def read_segment_speeds(paths: Sequence[Source]) -> SegmentSpeeds:
    """Read segment speed files (module docstring); `MetricFileError` on the first malformed line."""
    parts: list[tuple[np.ndarray, ...]] = []
    for src in paths:
        path, all_lines = read_source(src)
        lines = [line for line in all_lines if line.strip()]
        fast = _fast_columns(lines, 3, 2)
        if fast is not None and not np.any(fast[2] < 0):
            k = len(lines)
            parts.append((fast[0], fast[1], fast[2], np.full(k, math.nan), np.zeros(k, dtype=bool)))
            continue
        fr: list[int] = []
        to: list[int] = []
        speed: list[float] = []
        rate: list[float] = []
        has: list[bool] = []
        for no, line in enumerate(all_lines, 1):
            if not line.strip():
                continue
            cols = line.split(",")
            if len(cols) < 3:
                raise MetricFileError(
                    f"{path} line {no}: expected from_osm_node_id,to_osm_node_id,speed_kmh[,rate], got {line!r}"
                )
            fr.append(osm_node_id(path, no, "from_osm_node_id", cols[0]))
            to.append(osm_node_id(path, no, "to_osm_node_id", cols[1]))
            speed.append(parse_number(path, no, "speed_kmh", cols[2], unsigned=True))
            if len(cols) >= 4:
                has.append(True)
                rate.append(
                    math.nan if not cols[3].strip() else parse_number(path, no, "rate", cols[3], unsigned=False)
                )
            else:
                has.append(False)
                rate.append(math.nan)
        parts.append(
            (
                np.asarray(fr, dtype=np.int64),
                np.asarray(to, dtype=np.int64),
                np.asarray(speed, dtype=np.float64),
                np.asarray(rate, dtype=np.float64),
                np.asarray(has, dtype=bool),
            )
        )
    merged: list[np.ndarray] = [np.concatenate([p[i] for p in parts]) if parts else np.zeros(0) for i in range(5)]
    n = len(merged[0])
    keys = np.stack([merged[0].astype(np.int64), merged[1].astype(np.int64)]).reshape(2, n)
    last = last_of(keys)
    return SegmentSpeeds(
        keys[0][last], keys[1][last], merged[2][last], merged[3][last], merged[4].astype(bool)[last], n
    )


def read_turn_penalties(paths: Sequence[Source]) -> TurnPenalties:
    """Read turn penalty files (module docstring); `MetricFileError` on the first malformed line."""
    ids: list[tuple[int, int, int]] = []
    pen: list[float] = []
    wgt: list[float] = []
    for src in paths:
        path, all_lines = read_source(src)
        for no, line in enumerate(all_lines, 1):
            if not line.strip():
                continue
            cols = line.split(",")
            if len(cols) < 4:
                raise MetricFileError(
                    f"{path} line {no}: expected from_osm_node_id,via_osm_node_id,to_osm_node_id,penalty_s[,weight], "
                    f"got {line!r}"
                )
            ids.append(
                (
                    osm_node_id(path, no, "from_osm_node_id", cols[0]),
                    osm_node_id(path, no, "via_osm_node_id", cols[1]),
                    osm_node_id(path, no, "to_osm_node_id", cols[2]),
                )
            )
            pen.append(parse_number(path, no, "penalty_s", cols[3], unsigned=False))
            w = cols[4].strip() if len(cols) >= 5 else ""
            wgt.append(parse_number(path, no, "weight", w, unsigned=False) if w else math.nan)
    n = len(ids)
    keys = np.array(ids, dtype=np.int64).reshape(n, 3).T
    last = last_of(keys)
    return TurnPenalties(
        keys[0][last],
        keys[1][last],
        keys[2][last],
        np.asarray(pen, dtype=np.float64)[last],
        np.asarray(wgt, dtype=np.float64)[last],
        n,
    )


def last_of(keys: np.ndarray) -> np.ndarray:
    """Indices of the last occurrence of each distinct key column of `keys` [r, n], in key order."""
    n = keys.shape[1]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((np.arange(n),) + tuple(keys[::-1]))  # by key, then by position
    k = keys[:, order]
    last = np.ones(n, dtype=bool)
    last[:-1] = np.any(k[:, 1:] != k[:, :-1], axis=0)
    return order[last]

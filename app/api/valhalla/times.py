"""Valhalla's `date_time` -> the engine's departure time, and the times Valhalla writes back.

A request's `date_time` is `{"type": T, "value": "YYYY-MM-DDTHH:MM"}` in local time: type 0 departs now, 1 departs at
the value, 2 arrives by it, 3 (invariant: the speeds of one moment along the whole route) is not something starroute
computes. Valhalla's codes for a bad one: 160/161/165 a value missing, 162 a value it cannot read, 163 a type it does
not know, 142 arrive_by on an isochrone. The value goes to the engine as its `depart_at` / `arrive_by` (a time without
offset is the graph's local time, as Valhalla's is the location's).

The answer's times are Valhalla's: each route location's `date_time` (its departure, then each leg's arrival),
each matrix cell's arrival at its target, written as Valhalla's `DateTime::offset_date` does (whole seconds, then
the minute, `YYYY-MM-DDTHH:MM`, with `time_zone_offset` and `time_zone_name`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from app.api.valhalla.errors import (
    BAD_DATE_TIME,
    BAD_DATE_TYPE,
    ISOCHRONE_ARRIVE_BY,
    NO_ARRIVE_TIME,
    NO_DEPART_TIME,
    NO_INVARIANT_TIME,
    NOT_IMPLEMENTED,
    ValhallaError,
)
from app.api.valhalla.schemas import DateTime

# Valhalla reads `%Y-%m-%dT%H:%M` and ignores what follows (seconds); starroute takes seconds, nothing else
_VALUE = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(:\d{2})?")
CURRENT, DEPART_AT, ARRIVE_BY, INVARIANT = 0, 1, 2, 3


@dataclass(frozen=True)
class When:
    """A request's `date_time` as the engine's `depart_at` / `arrive_by` (both None: no time)."""

    depart_at: str | None = None
    arrive_by: str | None = None

    def __bool__(self) -> bool:
        return self.depart_at is not None or self.arrive_by is not None


def when(date_time: DateTime | None, action: str) -> When:
    """The engine's time of a `date_time` for `action` (route, sources_to_targets, isochrone), Valhalla's error
    otherwise: arrive_by on an isochrone 142, on a matrix 107 (a matrix departs at a time), invariant 107."""
    if date_time is None:
        return When()
    kind = date_time.type
    if kind not in (CURRENT, DEPART_AT, ARRIVE_BY, INVARIANT):
        raise ValhallaError(BAD_DATE_TYPE, f"date_time type {kind}: 0 current, 1 depart at, 2 arrive by, 3 invariant")
    if kind in (ARRIVE_BY, INVARIANT) and action == "isochrone":
        raise ValhallaError(ISOCHRONE_ARRIVE_BY, f"date_time type {kind} on an isochrone: give type 0 or 1")
    if kind == CURRENT:
        return When(depart_at="now")
    value = date_time.value
    if not value:
        raise ValhallaError({DEPART_AT: NO_DEPART_TIME, ARRIVE_BY: NO_ARRIVE_TIME}.get(kind, NO_INVARIANT_TIME))
    if kind == INVARIANT:
        raise ValhallaError(
            NOT_IMPLEMENTED,
            "date_time type 3 (invariant: one moment's speeds along the whole route) is not supported: "
            "give type 1 (depart at) or 2 (arrive by)",
        )
    m = _VALUE.fullmatch(value.strip())
    try:
        if m is None:
            raise ValueError
        year, month, day, hour, minute = (int(g) for g in m.groups()[:5])
        datetime(year, month, day, hour, minute)
    except ValueError:
        raise ValhallaError(BAD_DATE_TIME, f"'{value[:40]}' is no local time such as 2026-03-02T08:30") from None
    if kind == ARRIVE_BY:
        if action == "sources_to_targets":
            raise ValhallaError(
                NOT_IMPLEMENTED, "date_time type 2 (arrive by) on sources_to_targets: a matrix departs at a time"
            )
        return When(arrive_by=value.strip())
    return When(depart_at=value.strip())


def refuse_with(what: str) -> None:
    """Valhalla's 107 for a `date_time` with an option the engine's departure times do not take."""
    raise ValhallaError(NOT_IMPLEMENTED, f"date_time cannot be combined with {what}")


def _zone(name: str | None) -> ZoneInfo | None:
    try:
        return ZoneInfo(name) if name else None
    except (ZoneInfoNotFoundError, ValueError):
        return None


def stamp(departure: str, seconds: float, zone: str | None) -> dict[str, str]:
    """Valhalla's `date_time` (minutes), `time_zone_offset` and `time_zone_name` of `seconds` after `departure`
    (ISO 8601 with its offset), in the graph's time zone `zone` (None: the departure's own offset)."""
    at = datetime.fromisoformat(departure)
    at = at + timedelta(seconds=int(seconds + 0.5) if seconds >= 0 else -int(-seconds + 0.5))
    tz = _zone(zone)
    if tz is not None:
        at = at.astimezone(tz)
    text = at.isoformat(timespec="minutes")
    out = {"date_time": text[:16], "time_zone_offset": text[16:] or "+00:00"}
    if tz is not None:
        out["time_zone_name"] = str(zone)
    return out


def location_times(departure: str, legs_s: Sequence[float], zone: str | None) -> list[dict[str, str]]:
    """Per route location, its time: the departure, then the arrival of each leg (the next leg departs then)."""
    out = [stamp(departure, 0.0, zone)]
    elapsed = 0.0
    for t in legs_s:
        elapsed += float(t)
        out.append(stamp(departure, elapsed, zone))
    return out


def with_times(locations: list[dict[str, Any]], times: list[dict[str, str]] | None) -> list[dict[str, Any]]:
    """The route's locations with their times (placed before `original_index`, as Valhalla writes them)."""
    if times is None:
        return locations
    out = []
    for loc, t in zip(locations, times, strict=True):
        index = loc.pop("original_index", None)
        out.append(loc | t | ({} if index is None else {"original_index": index}))
    return out

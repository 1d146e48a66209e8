"""The time zone of a graph's time profiles: an IANA name given (`--timezone`), checked against the tz database, or
by default the zone whose principal location (the tz database's `zone.tab`) is nearest to the centre of the
graph's bounding box -- right for a city or a region, possibly a neighbour's zone near a border (pass --timezone
there) -- and UTC when the graph has no box, the table is missing, or no zone lies within `MAX_KM`.
"""

from __future__ import annotations

import math
import zoneinfo
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from floor.format.units import EARTH_RADIUS_M

MAX_KM = 1500.0  # a zone's principal location farther than this from the graph's centre is no guess: UTC
TABLE = "zone.tab"  # one principal location per country and zone (zone1970.tab merges countries)


class TimezoneError(ValueError):
    """A time zone name the tz database does not know."""


def check_timezone(name: str) -> str:
    """`name` when the tz database knows it (e.g. "Europe/Lisbon", "UTC"); `TimezoneError` otherwise."""
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise TimezoneError(f"--timezone {name!r} is not an IANA time zone name (e.g. Europe/Lisbon, UTC)") from None
    return name


def _table_text() -> str | None:
    """zone.tab from the `tzdata` package (installed with the project), else the system's tz database."""
    try:
        return (resources.files("tzdata") / "zoneinfo" / TABLE).read_text(encoding="utf-8")
    except (ModuleNotFoundError, OSError):
        pass
    for root in zoneinfo.TZPATH:
        f = Path(root) / TABLE
        if f.is_file():
            return f.read_text(encoding="utf-8")
    return None


def _degrees(text: str, width: int) -> float:
    """ISO 6709 `+DDMM[SS]` / `+DDDMM[SS]` to degrees."""
    sign = -1.0 if text[0] == "-" else 1.0
    digits = text[1:]
    deg, minutes = int(digits[:width]), int(digits[width : width + 2])
    seconds = int(digits[width + 2 :] or 0)
    return sign * (deg + minutes / 60 + seconds / 3600)


def zone_locations() -> list[tuple[str, float, float]]:
    """(zone, lon, lat) of every zone's principal location in zone.tab (empty when it cannot be found)."""
    text = _table_text()
    out: list[tuple[str, float, float]] = []
    for line in (text or "").splitlines():
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 3:
            continue
        coord = cols[1]
        cut = max(coord.rfind("+"), coord.rfind("-"))
        lat, lon = _degrees(coord[:cut], 2), _degrees(coord[cut:], 3)
        out.append((cols[2], lon, lat))
    return out


def _km(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_M / 1000 * math.asin(min(1.0, math.sqrt(h)))


def default_timezone(manifest: Mapping[str, Any]) -> str:
    """The graph's zone by the module's rule: nearest principal location to its bounding box's centre, else "UTC"."""
    bbox = manifest.get("bbox")
    if not bbox or len(bbox) != 4:
        return "UTC"
    lon, lat = (float(bbox[0]) + float(bbox[2])) / 2, (float(bbox[1]) + float(bbox[3])) / 2
    best, best_km = "UTC", MAX_KM
    for zone, zlon, zlat in zone_locations():
        km = _km(lon, lat, zlon, zlat)
        if km < best_km:
            best, best_km = zone, km
    try:
        return check_timezone(best)
    except TimezoneError:
        return "UTC"

"""Tag parsing shared by the profiles, with the semantics of OSRM's `profiles/lib/*.lua` helpers.

Every function takes plain strings or a tag mapping and returns plain values, so the profiles stay small and each
rule can be unit-tested on a dict. Speeds are km/h, lengths metres, weights kilograms, durations seconds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

Tags = Mapping[str, str]

MPH_TO_KMH = 1.609  # OSRM's factor for "mph" / "mp/h" maxspeeds

# OSRM car.lua `maxspeed_table`: country/zone codes that differ from the `xx:<type>` defaults (lower-case keys).
MAXSPEED_TABLE: dict[str, float] = {
    "at:rural": 100,
    "at:trunk": 100,
    "ar:urban": 40,
    "ar:rural": 110,
    "be:motorway": 120,
    "be-bru:rural": 70,
    "be-bru:urban": 30,
    "be-vlg:rural": 70,
    "bg:motorway": 140,
    "by:urban": 60,
    "by:motorway": 110,
    "ca-on:rural": 80,
    "ch:rural": 80,
    "ch:trunk": 100,
    "ch:motorway": 120,
    "de:living_street": 7,
    "de:rural": 100,
    "de:motorway": 0,
    "dk:rural": 80,
    "es:trunk": 90,
    "fr:rural": 80,
    "gb:nsl_single": (60 * 1609) / 1000,
    "gb:nsl_dual": (70 * 1609) / 1000,
    "gb:motorway": (70 * 1609) / 1000,
    "lv:living_street": 20,
    "nl:rural": 80,
    "nl:trunk": 100,
    "no:rural": 80,
    "no:motorway": 110,
    "ph:urban": 40,
    "ph:rural": 80,
    "ph:motorway": 100,
    "pl:rural": 100,
    "pl:expressway": 120,
    "pl:motorway": 140,
    "ro:trunk": 100,
    "ru:living_street": 20,
    "ru:urban": 60,
    "ru:motorway": 110,
    "uk:nsl_single": (60 * 1609) / 1000,
    "uk:nsl_dual": (70 * 1609) / 1000,
    "uk:motorway": (70 * 1609) / 1000,
    "za:urban": 60,
    "za:rural": 100,
    "none": 140,
}
# OSRM car.lua `maxspeed_table_default`: the `xx:<type>` fallback for any country code.
MAXSPEED_TABLE_DEFAULT: dict[str, float] = {"urban": 50, "rural": 90, "trunk": 110, "motorway": 130}

YES = frozenset({"yes", "1", "true"})
NO = frozenset({"no", "0", "false"})

_LEADING_INT = re.compile(r"\d*")
_ZONE_TYPE = re.compile(r"[A-Za-z]{2}:([A-Za-z]+)")
_NUMBER = re.compile(r"\d+\.?\d*")


def leading_int(value: str) -> int | None:
    """The integer at the very start of `value` (Lua `tonumber(v:match("%d*"))`), or None."""
    m = _LEADING_INT.match(value)
    return int(m.group()) if m and m.group() else None


def parse_maxspeed(
    value: str | None,
    table: Mapping[str, float] | None = MAXSPEED_TABLE,
    default_table: Mapping[str, float] | None = MAXSPEED_TABLE_DEFAULT,
    walk_kmh: float | None = None,
) -> float:
    """km/h of a `maxspeed`-like value, 0 meaning "no usable value" (OSRM `WayHandlers.parse_maxspeed`).

    `"50"` -> 50, `"30 mph"` -> 48.27, `"none"` -> 140, `"DE:rural"` -> 100 (table), `"RO:urban"` -> 50 (the
    `xx:urban` default), `"signals"` -> 0. OSRM has no rule for `"walk"`: it is 0 unless `walk_kmh` is given.
    With `table=None` only the numeric forms are read (bicycle.lua's `parse_maxspeed`).
    """
    if not value:
        return 0.0
    n = leading_int(value)
    if n is not None:
        speed = float(n)
        if "mph" in value or "mp/h" in value:
            speed *= MPH_TO_KMH
        return speed
    low = value.strip().lower()
    if walk_kmh is not None and low == "walk":
        return float(walk_kmh)
    if table is None:
        return 0.0
    if low in table:
        return float(table[low])
    m = _ZONE_TYPE.search(low)
    if m and default_table is not None and m.group(1) in default_table:
        return float(default_table[m.group(1)])
    return 0.0


# OSRM `WayHandlers.maxspeed`: keys tried in this order, each `:forward`/`:backward` first
MAXSPEED_KEYS = ("maxspeed:advisory", "maxspeed", "source:maxspeed", "maxspeed:type")


def maxspeed_by_direction(tags: Tags) -> tuple[float, float]:
    """(forward, backward) km/h from the maxspeed keys in OSRM's order; 0 means no usable value."""
    fwd, bwd = forward_backward_by_set(tags, MAXSPEED_KEYS)
    return parse_maxspeed(fwd), parse_maxspeed(bwd)


def to_number(value: str | None) -> float | None:
    """Lua `tonumber`: the whole string as a number (surrounding blanks allowed), else None."""
    if value is None:
        return None
    try:
        x = float(value.strip())
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def forward_backward_by_key(tags: Tags, key: str) -> tuple[str | None, str | None]:
    """(forward, backward) values of `key`: `key:forward` / `key:backward`, each falling back to plain `key`."""
    fwd = tags.get(key + ":forward")
    bwd = tags.get(key + ":backward")
    if fwd is not None and bwd is not None:
        return fwd, bwd
    common = tags.get(key)
    return (fwd if fwd is not None else common), (bwd if bwd is not None else common)


def forward_backward_by_set(tags: Tags, keys: Iterable[str]) -> tuple[str | None, str | None]:
    """(forward, backward) values over a priority list of keys (OSRM `Tags.get_forward_backward_by_set`).

    For each key in order, a direction still unset takes `key:<direction>`, then plain `key`; the search stops as
    soon as both directions have a value. This is how access hierarchies and the maxspeed keys are read.
    """
    fwd: str | None = None
    bwd: str | None = None
    for key in keys:
        if fwd is None:
            fwd = tags.get(key + ":forward")
        if bwd is None:
            bwd = tags.get(key + ":backward")
        if fwd is None or bwd is None:
            common = tags.get(key)
            if fwd is None:
                fwd = common
            if bwd is None:
                bwd = common
        if fwd is not None and bwd is not None:
            break
    return fwd, bwd


def audible_fence(tags: Tags) -> bool:
    """A virtual livestock fence (`barrier=fence` with `sensory=audible|audio`): no barrier to any of OSRM's
    profiles."""
    return tags.get("barrier") == "fence" and tags.get("sensory") in ("audible", "audio")


def find_access_tag(tags: Tags, hierarchy: Iterable[str]) -> str | None:
    """The value of the first key of `hierarchy` present and non-empty (OSRM `find_access_tag`; no directions)."""
    for key in hierarchy:
        v = tags.get(key)
        if v:
            return v
    return None


def resolve_access(
    value: str | None, whitelist: frozenset[str], restricted: frozenset[str], blacklist: frozenset[str]
) -> str | None:
    """lib/access.lua `resolve_access`: of a `;`-list the part of the highest class (whitelisted, restricted,
    blacklisted, other; the first on a tie), parts stripped of spaces; a single value as it is."""
    if value is None or ";" not in value:
        return value
    best, best_rank = None, -1
    for part in value.split(";"):
        if not part:  # Lua's gmatch("[^;]+") yields no empty part
            continue
        item = part.strip()
        rank = 3 if item in whitelist else 2 if item in restricted else 1 if item in blacklist else 0
        if rank > best_rank:
            best, best_rank = item, rank
    return best if best is not None else value


def value_by_prefixed_sequence(tags: Tags, seq: Iterable[str], prefix: str) -> str | None:
    """First present `prefix:<key>` for key in `seq`, e.g. `oneway:motorcar`, `oneway:motor_vehicle`, ..."""
    for key in seq:
        v = tags.get(f"{prefix}:{key}")
        if v is not None:
            return v
    return None


def oneway_direction(value: str | None) -> str | None:
    """`"forward"` for `yes/1/true`, `"backward"` for `-1`, `"both"` for `no/0/false`, else None (unknown/unset).

    `reversible` and `alternating` are None here: the car profile drops reversible ways before asking and keeps
    alternating ones two-way, as OSRM does.
    """
    if value is None:
        return None
    if value in YES:
        return "forward"
    if value == "-1":
        return "backward"
    if value in NO:
        return "both"
    return None


def implies_oneway(tags: Tags, motorway_link: bool = False) -> bool:
    """True for ways that are oneway unless tagged otherwise: motorways and `junction=roundabout|circular`."""
    highway = tags.get("highway")
    return (
        highway == "motorway"
        or (motorway_link and highway == "motorway_link")
        or tags.get("junction") in ("roundabout", "circular")
    )


_ISO_DURATION = re.compile(
    r"^P(?:(?P<d>\d+(?:[.,]\d+)?)D)?(?:T(?:(?P<h>\d+(?:[.,]\d+)?)H)?(?:(?P<m>\d+(?:[.,]\d+)?)M)?"
    r"(?:(?P<s>\d+(?:[.,]\d+)?)S)?)?$"
)
_CLOCK_DURATION = re.compile(r"^(\d+)(?::(\d+))?(?::(\d+))?$")


def parse_duration_s(value: str | None) -> float | None:
    """Seconds of an OSM `duration` value, or None when it is not valid (OSRM `durationIsValid`/`parseDuration`).

    Accepted: minutes (`"15"`), `"HH:MM"`, `"HH:MM:SS"`, ISO 8601 (`"PT1H30M"`, `"P1DT2H"`, `"PT90S"`).
    """
    if value is None:
        return None
    v = value.strip()
    m = _CLOCK_DURATION.match(v)
    if m:
        a, b, c = m.groups()
        if b is None:
            return int(a) * 60.0
        if c is None:
            return int(a) * 3600.0 + int(b) * 60.0
        return int(a) * 3600.0 + int(b) * 60.0 + int(c)
    m = _ISO_DURATION.match(v.upper())
    if m and v.upper() not in ("P", "PT") and any(m.groupdict().values()):

        def num(g: str) -> float:
            x = m.group(g)
            return float(x.replace(",", ".")) if x else 0.0

        return num("d") * 86400.0 + num("h") * 3600.0 + num("m") * 60.0 + num("s")
    return None


def duration_is_valid(value: str | None) -> bool:
    """Whether `parse_duration_s` can read `value`."""
    return parse_duration_s(value) is not None


# maxheight/maxwidth values meaning "no sign here": treated as 4.5 m like OSRM's Measure.get_max_height
NO_SIGN_HEIGHTS = frozenset({"default", "none", "no-sign", "no_sign", "unsigned", "no"})
DEFAULT_UNSIGNED_HEIGHT_M = 4.5


def parse_meters(value: str | None) -> float | None:
    """Metres of a height/width value: `"2.5"`, `"2,5 m"`, `"7'6\\""` (feet and inches), `"6 ft"`; else None."""
    if value is None:
        return None
    v = value.strip()
    m = _NUMBER.search(v.replace(",", "."))
    if not m:
        return None
    n = float(m.group())
    if "'" in v:  # feet'inches"
        inches = re.search(r"'\s*(\d+)", v)
        return (n * 12 + (int(inches.group(1)) if inches else 0)) * 0.0254
    if re.search(r"\d\s*(ft|feet)\b", v):
        return n * 0.3048
    return n


def parse_height_m(value: str | None) -> float | None:
    """Metres of a `maxheight`: like `parse_meters`, with the no-sign values counting as 4.5 m."""
    if value is None:
        return None
    if value.strip().lower() in NO_SIGN_HEIGHTS:
        return DEFAULT_UNSIGNED_HEIGHT_M
    return parse_meters(value)


def parse_kilograms(value: str | None) -> float | None:
    """Kilograms of a `maxweight`: tonnes unless `kg` or `lbs` is written (`"3.5"` -> 3500, `"800 kg"` -> 800)."""
    if value is None:
        return None
    v = value.strip().lower()
    m = _NUMBER.search(v.replace(",", "."))
    if not m:
        return None
    n = float(m.group())
    if re.search(r"\d\s*kg\b", v):
        return n
    if re.search(r"\d\s*(lbs?|pounds?)\b", v):
        return n * 0.45359237
    return n * 1000.0


def canonicalize_list(value: str | None, sep: str = ";") -> str:
    """`"A1;A2 "` -> `"A1; A2"` (OSRM `canonicalizeStringList`): parts stripped, empty parts dropped."""
    if not value:
        return ""
    return f"{sep} ".join(p.strip() for p in value.split(sep) if p.strip())

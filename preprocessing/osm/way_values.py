"""GraphHopper's encoded values of a way, read from its OSM tags: the codes `preprocessing.build` stores per road arc
(`arc_environment`, `arc_toll`, `arc_surface`, `arc_road_access`, `arc_max_speed`, `arc_max_height`,
`arc_max_width`, `arc_max_length`, `arc_max_weight`; names, constants and units in `floor.format.encoded_values`).

Each function follows the GraphHopper parser of the same value (`core/.../routing/util/parsers/OSM*Parser.java`,
`helpers/OSMValueExtractor.java`, the enums' `find`), tag for tag, with these differences:
- no country defaults (GraphHopper's `country` tag comes from its country boundaries, which starroute does not
  read): a way without `toll` is MISSING, not its country's default; `road_access` skips the country rules (AUT,
  DEU, HUN) and keeps the OSM-wiki implied defaults by highway type;
- `ford=no` is no ford (GraphHopper tests only that a `ford` key exists);
- `road_access` is GraphHopper's car value (`motorcar`, `motor_vehicle`, `vehicle`, `access`) for every profile;
- country-coded speeds (`maxspeed=DE:urban`) are no limit, as in `OSMMaxSpeedParser`; GraphHopper's
  `DefaultMaxSpeedParser` then fills in legal defaults by country and urban density (flagged `max_speed_estimated`),
  which starroute does not: a way without a usable `maxspeed` has no limit stated;
- speeds are whole km/h (GraphHopper stores steps of 2 km/h: 3 mph is 5 here, 4 there), limits whole decimetres
  and tenths of a tonne up to 25.4 m and 6553.4 t (GraphHopper: 12.6 m and 51 t).

Numbers are coded as the format stores them: km/h for `max_speed` (at most `MAX_SPEED_NONE_KMH`), decimetres for
heights, widths and lengths (values of 25.4 m and more stored as 254), 0.1 t for weights (6553.4 t and more as
65534); the all-ones code means no limit stated (GraphHopper's infinity). A ford node (not at a junction, as
GraphHopper's barrier edge) makes its chain FORD in `preprocessing.build`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from floor.format.encoded_values import (
    MAX_SPEED_NONE_KMH,
    NO_LIMIT_U8,
    NO_LIMIT_U16,
    ROAD_ACCESS,
    ROAD_ENVIRONMENT,
    SURFACE,
    TOLL,
)

Tags = Mapping[str, str]

# The columns of `way_row`, and the arc array each pair (forward, backward column) fills; one column for both
# directions when a value has no direction.
COLUMNS = (
    "environment", "surface", "road_access", "max_height", "max_width", "max_length", "max_weight",
    "toll_forward", "toll_backward", "max_speed_forward", "max_speed_backward",
)  # fmt: skip
ARC_COLUMNS: tuple[tuple[str, int, int], ...] = (
    ("arc_environment", 0, 0),
    ("arc_surface", 1, 1),
    ("arc_road_access", 2, 2),
    ("arc_max_height", 3, 3),
    ("arc_max_width", 4, 4),
    ("arc_max_length", 5, 5),
    ("arc_max_weight", 6, 6),
    ("arc_toll", 7, 8),
    ("arc_max_speed", 9, 10),
)

ENV_OTHER, ENV_ROAD, ENV_FERRY, ENV_TUNNEL, ENV_BRIDGE, ENV_FORD = (ROAD_ENVIRONMENT.index(c) for c in ROAD_ENVIRONMENT)
TOLL_MISSING, TOLL_NO, TOLL_HGV, TOLL_ALL = (TOLL.index(c) for c in TOLL)
ACCESS_YES = ROAD_ACCESS.index("YES")
ACCESS_PRIVATE = ROAD_ACCESS.index("PRIVATE")


def road_environment(tags: Tags) -> int:
    """ROAD_ENVIRONMENT code (`OSMRoadEnvironmentParser`): FERRY (`route=ferry`/`shuttle_train`, unless
    `ferry`/`shuttle_train=no`), else BRIDGE (`bridge` not `no`), else TUNNEL (`tunnel` not `no`: `yes`,
    `building_passage`, `culvert`, ...), else FORD (`ford` not `no`, `highway=ford`), else ROAD for a highway, else
    OTHER (a platform or pier without a highway tag)."""
    route = tags.get("route")
    if (route == "ferry" and tags.get("ferry") != "no") or (
        route == "shuttle_train" and tags.get("shuttle_train") != "no"
    ):
        return ENV_FERRY
    bridge = tags.get("bridge")
    if bridge is not None and bridge != "no":
        return ENV_BRIDGE
    tunnel = tags.get("tunnel")
    if tunnel is not None and tunnel != "no":
        return ENV_TUNNEL
    highway = tags.get("highway")
    ford = tags.get("ford")
    if (ford is not None and ford != "no") or highway == "ford":
        return ENV_FORD
    return ENV_ROAD if highway is not None else ENV_OTHER


_HGV_TOLL_KEYS = ("toll:hgv", "toll:N2", "toll:N3")


def toll(tags: Tags) -> tuple[int, int]:
    """(forward, backward) TOLL codes (`OSMTollParser`): `toll=yes` ALL, else `toll:hgv`/`toll:N2`/`toll:N3=yes`
    HGV, else `toll=no` NO, else MISSING (no country default); `toll:forward`/`toll:backward` (`yes`, `no`, `hgv`,
    `all`) override a direction."""
    if tags.get("toll") == "yes":
        base = TOLL_ALL
    elif any(tags.get(k) == "yes" for k in _HGV_TOLL_KEYS):
        base = TOLL_HGV
    elif tags.get("toll") == "no":
        base = TOLL_NO
    else:
        base = TOLL_MISSING

    def directed(value: str | None) -> int:
        if value is None:
            return base
        if value == "yes":
            return TOLL_ALL
        if value == "no":
            return TOLL_NO
        up = value.upper()  # Toll.valueOf: `hgv`, `all`, ...
        return TOLL.index(up) if up in TOLL else base

    return directed(tags.get("toll:forward")), directed(tags.get("toll:backward"))


# Surface.find: the enum's lower-case names (not MISSING, OTHER) and GraphHopper's aliases
_SURFACES = {c.lower(): i for i, c in enumerate(SURFACE) if c not in ("MISSING", "OTHER")}
_SURFACES.update(
    metal=SURFACE.index("PAVED"),
    sett=SURFACE.index("COBBLESTONE"),
    unhewn_cobblestone=SURFACE.index("COBBLESTONE"),
    earth=SURFACE.index("DIRT"),
    pebblestone=SURFACE.index("GRAVEL"),
    grass_paver=SURFACE.index("GRASS"),
)
SURFACE_MISSING, SURFACE_OTHER = SURFACE.index("MISSING"), SURFACE.index("OTHER")


def surface(value: str | None) -> int:
    """SURFACE code of a `surface` value (`Surface.find`): MISSING when absent or empty, the part before a colon
    (`concrete:plates` -> CONCRETE), the aliases (`sett` -> COBBLESTONE, `metal` -> PAVED, `earth` -> DIRT, ...),
    OTHER for any other value (case-sensitive, as GraphHopper's)."""
    if value is None or not value.strip():
        return SURFACE_MISSING
    colon = value.find(":")
    if colon != -1:
        value = value[:colon]
    return _SURFACES.get(value, SURFACE_OTHER)


# the car's access keys, most specific first (OSMRoadAccessParser.toOSMRestrictions(CAR))
CAR_RESTRICTIONS = ("motorcar", "motor_vehicle", "vehicle", "access")
# ModeAccessParser.HIGHWAY_TYPE_DEFAULTS for the car's keys: what a highway type implies when no key is tagged
_IMPLIED = {
    "motorway": {"motor_vehicle": "designated"},
    "motorway_link": {"motor_vehicle": "designated"},
    "steps": {"motor_vehicle": "no"},
    "footway": {"motor_vehicle": "no"},
    "cycleway": {"motor_vehicle": "no"},
    "pedestrian": {"motor_vehicle": "no"},
    "path": {"motor_vehicle": "no"},
    "bridleway": {"motor_vehicle": "no"},
    "busway": {"access": "no"},
    "construction": {"access": "no"},
    "proposed": {"access": "no"},
    "raceway": {"access": "no"},
    "corridor": {"motor_vehicle": "no"},
    "platform": {"motor_vehicle": "no"},
}
_ACCESS_BY_NAME = {c: i for i, c in enumerate(ROAD_ACCESS)}
# OSMTemporalAccessParser.hasTemporalSpec: a time range, a weekday or a month anywhere after the `@`
_TEMPORAL = re.compile(
    r"\d{1,2}:\d{2}\s*-\s*\d{1,2}:\d{2}|\b(?:Mo|Tu|We|Th|Fr|Sa|Su)\b|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b"
)


def access_code(value: str) -> int:
    """ROAD_ACCESS code of one value (`RoadAccess.find`): `permit`/`service` PRIVATE, a constant's name (`private`,
    `destination`, `no`, ...) that constant, anything else (`yes`, `permissive`, `designated`, ...) YES."""
    low = value.lower()
    if low in ("permit", "service"):
        return ACCESS_PRIVATE
    return _ACCESS_BY_NAME.get(value.upper(), ACCESS_YES)


def _least_restrictive(value: str | None, current: int | None) -> int | None:
    """`getRoadAccess`: the least restrictive (lowest) code of a `;`-list, or `current` when `value` is None."""
    if value is None:
        return current
    parts = value.split(";")
    while len(parts) > 1 and not parts[-1]:  # Java's split drops trailing empty parts
        parts.pop()
    for part in parts:
        code = access_code(part)
        if current is None or code < current:
            current = code
    return current


def road_access(tags: Tags) -> int:
    """ROAD_ACCESS code for a car (`OSMRoadAccessParser.forCar`): the first of `motorcar`, `motor_vehicle`,
    `vehicle`, `access` present (the least restrictive of a `;`-list), else what the highway type implies
    (`highway=footway` -> `motor_vehicle=no` -> NO), else YES; a temporal `<key>:conditional` (`delivery @
    (Mo-Fr 06:00-11:00)`) may relax it. No country defaults."""
    code: int | None = None
    for key in CAR_RESTRICTIONS:
        code = _least_restrictive(tags.get(key), code)
        if code is not None:
            break
    if code is None:
        implied = _IMPLIED.get(tags.get("highway", ""))
        if implied:
            for key in CAR_RESTRICTIONS:
                code = _least_restrictive(implied.get(key), code)
                if code is not None:
                    break
    for key in CAR_RESTRICTIONS:
        cond = tags.get(key + ":conditional")
        if cond is None:
            continue
        parts = cond.split("@")
        if len(parts) == 2 and _TEMPORAL.search(parts[1]):
            relaxed = access_code(parts[0].strip())
            if code is not None and relaxed < code:
                code = relaxed
            break
    return ACCESS_YES if code is None else code


KM_MILE = 1.609344  # GraphHopper's DistanceCalcEarth.KM_MILE
_MAXSPEED_NONE = -1.0


def _java_double(text: str) -> float:
    """`Double.parseDouble` for the plain decimals OSM values hold (NaN when not one; no `_` digit groups, which
    Python's float would accept)."""
    if "_" in text:
        return math.nan
    try:
        return float(text)
    except ValueError:
        return math.nan


def parse_maxspeed_kmh(value: str | None) -> float:
    """km/h of a `maxspeed` value (`OSMMaxSpeedParser.parseMaxspeedString`): `"50"`, `"50 km/h"`, `"30 mph"`
    (x 1.609344), `"10 knots"` (x 1.852), `"walk"` 6; `none` gives -1; NaN when missing, not a number (`"DE:urban"`,
    `"50;30"`) or below 4.8 km/h (a mapping error)."""
    if value is None or not value.strip():
        return math.nan
    s = value.strip()
    if s == "walk":
        return 6.0
    if s == "none":
        return _MAXSPEED_NONE
    mp, knots, km, kph = value.find("mp"), value.find("knots"), value.find("km"), value.find("kph")
    text, factor = value, 1.0
    if mp > 0:
        text, factor = value[:mp].strip(), KM_MILE
    elif knots > 0:
        text, factor = value[:knots].strip(), 1.852
    elif km > 0:
        text = value[:km].strip()
    elif kph > 0:
        text = value[:kph].strip()
    speed = _java_double(text) * factor
    if not speed >= 4.8:  # NaN too
        return math.nan
    return speed


_NONE_ALLOWED = frozenset({"motorway", "motorway_link", "trunk", "trunk_link", "primary"})


def _max_speed_tag(tags: Tags, key: str) -> float:
    speed = parse_maxspeed_kmh(tags.get(key))
    if speed == _MAXSPEED_NONE:
        # `none` only where unlimited speed exists (German motorways...); elsewhere a mapping error: no limit stated
        return float(MAX_SPEED_NONE_KMH) if tags.get("highway") in _NONE_ALLOWED else math.nan
    return min(float(MAX_SPEED_NONE_KMH), speed) if speed == speed else math.nan


def max_speed(tags: Tags) -> tuple[int, int]:
    """(forward, backward) km/h codes (`OSMMaxSpeedParser.parseMaxSpeed`): `maxspeed:forward`/`:backward`, else
    `maxspeed`; at most 150 (`none` is 150 on motorways, trunks and primaries, no limit elsewhere); rounded to
    whole km/h; `NO_LIMIT_U8` when none is stated."""

    def code(directed: str) -> int:
        v = _max_speed_tag(tags, directed)
        if v != v:
            v = _max_speed_tag(tags, "maxspeed")
        return NO_LIMIT_U8 if v != v else int(math.floor(v + 0.5))

    if "maxspeed" not in tags and "maxspeed:forward" not in tags and "maxspeed:backward" not in tags:
        return NO_LIMIT_U8, NO_LIMIT_U8
    return code("maxspeed:forward"), code("maxspeed:backward")


def _invalid(value: str) -> bool:
    """`OSMValueExtractor.isInvalidValue` (on a lower-cased value)."""
    return (
        not value
        or value.startswith("default")
        or value in ("none", "unknown", "unsigned", "fixme", "small")
        or "unrestricted" in value
        or value.startswith("〜")
        or "narrow" in value
        or any(c in value for c in ";:(><-,")
    )


_WSPACE = re.compile(r"\s")
_METER = re.compile(r"meters?|mtrs?|mt|m\.")
_INCH = re.compile(r"\"|''")
_FEET = re.compile(r"'|feet")
_APPROX = re.compile(r"~|approx")


def string_to_metres(value: str | None) -> float:
    """Metres of a height, width or length (`OSMValueExtractor.stringToMeter`): `"3.5"`, `"3.5 m"`, `"350 cm"`,
    `"11'6\\""` or `"11 ft 6 in"` (feet and inches), `"~4"` (approximate: x 0.8); NaN when invalid (`default`,
    `none`, `below_default`, a range, a `,` decimal, a condition)."""
    if value is None:
        return math.nan
    v = _WSPACE.sub("", value.lower())
    v = _METER.sub("m", v)
    v = _INCH.sub("in", v)
    v = _FEET.sub("ft", v)
    if _invalid(v):
        return math.nan
    factor, offset = 1.0, 0.0
    if v.startswith("~") or "approx" in v:
        v = _APPROX.sub("", v).strip()
        factor = 0.8
    if v.endswith("in"):
        start = v.find("ft")
        start = 0 if start < 0 else start + 2
        inches = _java_double(v[start:-2])
        if inches != inches:
            return math.nan
        offset = inches * 0.0254
        v = v[:start]
    if v.endswith("ft"):
        v, factor = v[:-2], factor * 0.3048
    elif v.endswith("cm"):
        v, factor = v[:-2], factor * 0.01
    elif v.endswith("m"):
        v = v[:-1]
    if not v:
        return offset
    return _java_double(v) * factor + offset


_TON = re.compile(r"tons?")


def string_to_tonnes(value: str | None) -> float:
    """Tonnes of a weight (`OSMValueExtractor.stringToTons`): `"7.5"`, `"7.5 t"`, `"7.5 tons"`, `"3 st"` (short
    tons), `"800 kg"`, `"6000 lbs"`; NaN when invalid."""
    if value is None:
        return math.nan
    v = _TON.sub("t", value.lower()).replace("mgw", "").strip()
    if _invalid(v):
        return math.nan
    factor = 1.0
    if v.endswith("st"):
        v, factor = v[:-2], 0.907194048807
    elif v.endswith("t"):
        v = v[:-1]
    elif v.endswith("lbs"):
        v, factor = v[:-3], 0.00045359237
    elif v.endswith("kg"):
        v, factor = v[:-2], 0.001
    return _java_double(v) * factor


def conditional_weight_tonnes(value: str) -> float:
    """The weight of a condition `no @ (weight > 7.5)` (`OSMValueExtractor.conditionalWeightToTons`), else NaN."""
    i = value.find("weight>")
    if i < 0:
        i = value.find("weight >")
        if i > 0:
            i += len("weight >")
    else:
        i += len("weight>")
    if i > 0:
        j = value.find(")", i)
        if j < 0:
            j = len(value)
        if j > i:
            return string_to_tonnes(value[i:j])
    return math.nan


def _first_value(tags: Tags, keys: tuple[str, ...]) -> str | None:
    """`ReaderElement.getFirstValue`: the value of the first key present (even an unusable one)."""
    for k in keys:
        v = tags.get(k)
        if v is not None:
            return v
    return None


def _tenths(x: float, none: int) -> int:
    """A limit in tenths (dm, 0.1 t): rounded, `none` - 1 at most (GraphHopper stores its largest value for any
    limit beyond it), `none` for NaN or infinity."""
    if not math.isfinite(x):
        return none
    return min(int(math.floor(x * 10 + 0.5)), none - 1)


HEIGHT_KEYS = ("maxheight", "maxheight:physical")
WIDTH_KEYS = ("maxwidth", "maxwidth:physical", "width")
LENGTH_KEYS = ("maxlength",)
WEIGHT_KEYS = ("maxweight", "maxweightrating", "maxweightrating:hgv", "maxgcweight")
_HGV_CONDITIONALS = ("hgv:conditional", "motor_vehicle:conditional", "vehicle:conditional", "access:conditional")


def max_weight_tonnes(tags: Tags) -> float:
    """Tonnes (`OSMMaxWeightParser`): the first of `maxweight`, `maxweightrating`, `maxweightrating:hgv`,
    `maxgcweight`, overridden by a conditional ban above a weight (`hgv:conditional=no @ (weight > 7.5)`, and the
    `motor_vehicle`, `vehicle`, `access` ones); NaN when none."""
    t = string_to_tonnes(_first_value(tags, WEIGHT_KEYS))
    for key in _HGV_CONDITIONALS:
        v = tags.get(key, "")
        if v.startswith("no") and v.find("@") < 6:
            c = conditional_weight_tonnes(v)
            if c == c:
                t = c
    return t


# every key a rule above reads besides `highway`: a way with none of them has its highway type's row
_KEYS = frozenset(
    {"route", "bridge", "tunnel", "ford", "toll", "toll:forward", "toll:backward", *_HGV_TOLL_KEYS, "surface",
     *CAR_RESTRICTIONS, *(k + ":conditional" for k in CAR_RESTRICTIONS), *_HGV_CONDITIONALS,
     "maxspeed", "maxspeed:forward", "maxspeed:backward", *HEIGHT_KEYS, *WIDTH_KEYS, *LENGTH_KEYS, *WEIGHT_KEYS}
)  # fmt: skip
_PLAIN_ROWS: dict[str | None, tuple[int, ...]] = {}


def way_row(tags: Tags) -> tuple[int, ...]:
    """A way's codes in `COLUMNS` order (most ways have none of the keys read: their highway type's row, cached)."""
    if _KEYS.isdisjoint(tags):
        highway = tags.get("highway")
        row = _PLAIN_ROWS.get(highway)
        if row is None:
            row = _PLAIN_ROWS[highway] = _way_row({} if highway is None else {"highway": highway})
        return row
    return _way_row(tags)


def _way_row(tags: Tags) -> tuple[int, ...]:
    toll_f, toll_b = toll(tags)
    speed_f, speed_b = max_speed(tags)
    return (
        road_environment(tags),
        surface(tags.get("surface")),
        road_access(tags),
        _tenths(string_to_metres(_first_value(tags, HEIGHT_KEYS)), NO_LIMIT_U8),
        _tenths(string_to_metres(_first_value(tags, WIDTH_KEYS)), NO_LIMIT_U8),
        _tenths(string_to_metres(_first_value(tags, LENGTH_KEYS)), NO_LIMIT_U8),
        _tenths(max_weight_tonnes(tags), NO_LIMIT_U16),
        toll_f,
        toll_b,
        speed_f,
        speed_b,
    )


def is_ford_node(ford: str | None) -> bool:
    """Whether a node's `ford` value makes it one GraphHopper splits into a FORD barrier edge (any but `no`)."""
    return ford is not None and ford != "no"

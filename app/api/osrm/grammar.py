"""The OSRM v5 URL grammar: `/{service}/v1/{profile}/{coordinates}[.json][?options]` read into an `OsrmRequest` whose
options are one frozen, typed dataclass per service (OSRM's `*_parameter_grammar.hpp` and `*_parameters.hpp`).

The URL is parsed by hand (no pydantic on this path) as osrm-routed's grammar reads it: a malformed URL is
`InvalidUrl`, an unknown service `InvalidService`, a version other than 1 `InvalidVersion`, anything the service's
grammar rejects `InvalidQuery` ("Query string malformed close to position N", N counted in the decoded URL); the
`flatbuffers` format is `NotImplemented`. What a value means, and the checks of values against each other and the
limits, are the services' (`app.api.osrm.route`, ...).

Each option is a field of its service's options class with its default written once and an `Option` in its metadata
(how its value is read, what the documentation says, the limit that bounds it): `GRAMMAR`, the parser and the
OpenAPI parameters (`query_parameters`) all come from these classes. `OsrmOptions` holds the options every service
but `tile` takes, `OsrmRouteLikeOptions` those of route, trip and match.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

from app.api.instructions import LANGUAGES, language_of
from app.api.openapi_limits import LIMIT
from app.api.osrm import polyline
from app.engine.errors import EngineError, NotImplementedOption
from app.engine.maps.tiles import OSRM_MAX_ZOOM, OSRM_MIN_ZOOM

SERVICES = ("route", "nearest", "table", "match", "trip", "tile")
IMPLEMENTED = ("route", "nearest", "table", "trip", "tile", "match")
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_COORD = re.compile(rf"({_NUM}),({_NUM})")
_UINT = re.compile(r"\d+")
_DOUBLE = re.compile(_NUM)
_PREFIX = re.compile(r"/([A-Za-z0-9]+)/v(\d+)/([A-Za-z0-9_\-]+)/")
_URL_CHARS = re.compile(r"[A-Za-z0-9_.\-\[\]{}@?|\\~`^=,;:&()%]*")
_ANNOTATIONS = ("duration", "nodes", "distance", "weight", "datasources", "speed")
_UINT_MAX = 2**32 - 1  # x3::uint_ (unsigned int) refuses more
INVALID_TILE = "Invalid coodinates. Only zoomlevel 12+ is supported"  # sic, osrm-routed's message


def query_error(pos: int) -> EngineError:
    """OSRM's `InvalidQuery` at `pos` of the decoded URL."""
    return EngineError(f"Query string malformed close to position {pos}", "InvalidQuery")


def _url_error(url: str, pos: int) -> EngineError:
    return EngineError(
        f'URL string malformed close to position {pos}: "{url[max(0, pos - 3) : pos + 3]}"', "InvalidUrl"
    )


# --- option value grammars ---------------------------------------------------------------------------------------
def _bool(v: str) -> bool:
    if v == "true":
        return True
    if v == "false":
        return False
    raise ValueError(v)


def _uint(v: str) -> int:
    if not _UINT.fullmatch(v):
        raise ValueError(v)
    return int(v)


def _double(v: str) -> float:
    if not _DOUBLE.fullmatch(v):
        raise ValueError(v)
    x = float(v)
    if not math.isfinite(x):
        raise ValueError(v)
    return x


def _choice(*values: str) -> Callable[[str], str]:
    def parse(v: str) -> str:
        if v not in values:
            raise ValueError(v)
        return v

    return parse


def _default_true_false(v: str) -> bool | None:
    """`default|true|false` as None, True, False."""
    return {"default": None, "true": True, "false": False}[_choice("default", "true", "false")(v)]


def _alternatives(v: str) -> int:
    return int(_bool(v)) if v in ("true", "false") else _uint(v)


def _uint_list(v: str) -> tuple[int, ...]:
    return tuple(_uint(x) for x in v.split(";"))


def _uint32_list(v: str) -> tuple[int, ...]:
    out = _uint_list(v)
    if any(x >= 2**32 for x in out):  # OSRM's `unsigned`
        raise ValueError(v)
    return out


def _indices(v: str) -> tuple[int, ...] | None:
    return None if v == "all" else _uint_list(v)


def _radiuses(v: str) -> tuple[float | None, ...]:
    """Per coordinate: a radius in metres; empty, `unlimited` or -1 (osrm-routed's own "unlimited") for none. Any
    other negative radius finds no road, as in osrm-routed (here: a radius of 0 m, which only a point lying on a
    road meets)."""
    out: list[float | None] = []
    for x in v.split(";"):
        r = None if x in ("", "unlimited") else _double(x)
        out.append(None if r == -1 else (0.0 if r is not None and r < 0 else r))  # 0 m: only a point on a road
    return tuple(out)


def _bearings(v: str) -> tuple[tuple[int, int] | None, ...]:
    out: list[tuple[int, int] | None] = []
    for x in v.split(";"):
        if x == "":
            out.append(None)
            continue
        a, b = x.split(",")
        out.append((_uint(a), _uint(b)))
    return tuple(out)


def _per_coordinate(parse: Callable[[str], Any]) -> Callable[[str], tuple[Any, ...]]:
    return lambda v: tuple(None if x == "" else parse(x) for x in v.split(";"))


def _hint(v: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9+/=_\-]+", v):
        raise ValueError(v)
    return v


def _route_annotations(v: str) -> tuple[str, ...]:
    if v in ("true", "false"):
        return _ANNOTATIONS if v == "true" else ()
    parts = tuple(v.split(","))
    if not parts or any(p not in _ANNOTATIONS for p in parts):
        raise ValueError(v)
    return parts


def _table_annotations(v: str) -> tuple[str, ...]:
    parts = tuple(v.split(","))
    if not parts or any(p not in ("duration", "distance") for p in parts):
        raise ValueError(v)
    return parts


def _exclude(v: str) -> tuple[str, ...]:
    parts = v.split(",")
    if any(not re.fullmatch(r"[A-Za-z0-9_]+", p) for p in parts):
        raise ValueError(v)
    return tuple(parts)


def _language(v: str) -> str:
    """A language code (`de`, `pt-BR`, `zh-Hans`; anything else is a malformed query), one the text instructions
    have (else `InvalidValue` listing them: `app.api.instructions.language_of`)."""
    if not re.fullmatch(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*", v):
        raise ValueError(v)
    return language_of(v)


@dataclass(frozen=True)
class Option:
    """One option of a service's query string: how its value is read (`ValueError` when malformed), what the
    documentation says of it, and the request limit (`app.engine.facade.Limits` field) that bounds it, if any."""

    parse: Callable[[str], Any]
    doc: str
    limit: str | None = None


def _time(v: str) -> str:
    """A departure or arrival time as given (ISO 8601 or `now`): the engine reads it and says what is wrong."""
    if not v:
        raise ValueError("empty")
    return v


_DEPART_AT = (
    "`{ISO 8601}` | `now` (our extension): depart at this time (`2026-03-02T08:30` in the graph's local time, or with "
    "`Z` or an offset, `+` written `%2B`): durations from the graph's time profiles, `departure` and `arrival` in the "
    "answer"
)


def _option(default: Any, parse: Callable[[str], Any], doc: str, limit: str | None = None) -> Any:
    """A field of an options class: its default, and the `Option` that reads it from the query string."""
    return field(default=default, metadata={"option": Option(parse, doc, limit)})


# --- the options of each service -------------------------------------------------------------------------------------
_RADIUSES = "`{metres};...` per coordinate: snap no farther (`unlimited`, `-1` or empty: no limit, the default)"


@dataclass(frozen=True)
class OsrmOptions:
    """The options every service but `tile` takes (OSRM's `BaseParameters`); per-coordinate lists are None when not
    given."""

    bearings: tuple[tuple[int, int] | None, ...] | None = _option(
        None,
        _bearings,
        "`{value},{range};...` per coordinate (degrees, 0-360 and 0-180; empty: any): snap only onto road segments "
        "travelled in that direction",
    )
    radiuses: tuple[float | None, ...] | None = _option(None, _radiuses, _RADIUSES)
    generate_hints: bool = _option(True, _bool, "`true` (default) | `false`: a `hint` per waypoint")
    hints: tuple[str | None, ...] | None = _option(
        None, _per_coordinate(_hint), "`{hint};...` per coordinate: accepted, without effect"
    )
    approaches: tuple[str | None, ...] | None = _option(
        None,
        _per_coordinate(_choice("curb", "opposite", "unrestricted")),
        "`curb|opposite|unrestricted;...` per coordinate: pass the point on the right (curb) or left (opposite) "
        "side of the road",
    )
    exclude: tuple[str, ...] = _option(
        (), _exclude, "`{class}[,{class}...]`: one of the profile's excludable class sets (car: toll, motorway, ferry)"
    )
    snapping: str = _option("default", _choice("default", "any"), "`default|any`: accepted, without effect")
    skip_waypoints: bool = _option(False, _bool, "`true|false` (default): leave the `waypoints` out of the answer")


@dataclass(frozen=True)
class OsrmRouteLikeOptions(OsrmOptions):
    """The options of the services that answer Route objects: route, trip and match (OSRM's `RouteParameters`)."""

    steps: bool = _option(False, _bool, "`true|false` (default): turn-by-turn steps per leg")
    annotations: tuple[str, ...] = _option(
        (),
        _route_annotations,
        "`true|false` (default) or a comma-separated list of `duration`, `nodes`, `distance`, `weight`, "
        "`datasources`, `speed`: figures per segment of each leg",
    )
    geometries: str = _option(
        "polyline",
        _choice("polyline", "polyline6", "geojson"),
        "`polyline` (default) | `polyline6` | `geojson`",
    )
    overview: str = _option(
        "simplified",
        _choice("simplified", "full", "false", "by_legs"),
        "`simplified` (default) | `full` | `false` | `by_legs`: the geometry of the whole route (or of each leg)",
    )
    waypoints: tuple[int, ...] | None = _option(
        None,
        _uint_list,
        "`{index};...`: the coordinates that are waypoints (first and last included), the others only passed",
    )
    language: str | None = _option(
        None,
        _language,
        "`{code}`: with `steps=true`, each step's `maneuver.instruction` in this language, as OSRM's front ends "
        "write it (osrm-text-instructions 0.15.0; our extension: osrm-routed has no text): " + ", ".join(LANGUAGES),
    )


@dataclass(frozen=True)
class OsrmRouteOptions(OsrmRouteLikeOptions):
    """`/route/v1`."""

    alternatives: int = _option(
        0,
        _alternatives,
        "`true|false` (default) or a number N: up to N (true: 1) alternative routes, between two coordinates",
        limit="max_alternatives",
    )
    continue_straight: bool | None = _option(
        None,
        _default_true_false,
        "`default|true|false`: no turning back at via points (default: the profile's; car true)",
    )
    depart_at: str | None = _option(None, _time, _DEPART_AT)
    arrive_by: str | None = _option(
        None, _time, "`{ISO 8601}` | `now` (our extension): the latest departure arriving by this time"
    )
    voice_instructions: bool = _option(
        False,
        _bool,
        "`true|false` (default): with `steps=true`, each step's `voiceInstructions` (Mapbox Directions' navigation "
        "field: `distanceAlongGeometry`, `announcement`, `ssmlAnnouncement`) in `language` (default en)",
    )
    banner_instructions: bool = _option(
        False,
        _bool,
        "`true|false` (default): with `steps=true`, each step's `bannerInstructions` (Mapbox Directions' navigation "
        "field: `distanceAlongGeometry`, `primary`, `secondary`) in `language` (default en)",
    )
    voice_units: str = _option(
        "imperial", _choice("imperial", "metric"), "`imperial` (default, as Mapbox) | `metric`: distances spoken"
    )


@dataclass(frozen=True)
class OsrmNearestOptions(OsrmOptions):
    """`/nearest/v1`."""

    number: int = _option(1, _uint, "`{N}` (default 1): how many nearest road segments", limit="max_nearest")


@dataclass(frozen=True)
class OsrmTableOptions(OsrmOptions):
    """`/table/v1`; `sources`/`destinations` None: all coordinates."""

    sources: tuple[int, ...] | None = _option(
        None, _indices, "`{index};...` | `all` (default): the coordinates that are sources"
    )
    destinations: tuple[int, ...] | None = _option(
        None, _indices, "`{index};...` | `all` (default): the coordinates that are destinations"
    )
    annotations: tuple[str, ...] = _option(
        ("duration",),
        _table_annotations,
        "`duration` (default) | `distance` | `duration,distance`: the matrices answered",
    )
    fallback_speed: float | None = _option(
        None,
        _double,
        "`{m/s}` > 0: where no route exists, the straight-line distance at this speed (those cells are listed "
        "in `fallback_speed_cells`)",
    )
    fallback_coordinate: str = _option(
        "input",
        _choice("input", "snapped"),
        "`input` (default) | `snapped`: where the fallback distance is measured from",
    )
    scale_factor: float = _option(1.0, _double, "`{factor}` > 0: durations multiplied by it")
    depart_at: str | None = _option(None, _time, _DEPART_AT)


@dataclass(frozen=True)
class OsrmTripOptions(OsrmRouteLikeOptions):
    """`/trip/v1` (`app.api.osrm.trip`); `alternatives` and `continue_straight` are not among them, as in OSRM."""

    roundtrip: bool = _option(True, _bool, "`true` (default) | `false`: back to the first point at the end")
    source: str = _option(
        "any", _choice("any", "first"), "`any` (default) | `first`: the trip starts at the first point"
    )
    destination: str = _option(
        "any", _choice("any", "last"), "`any` (default) | `last`: the trip ends at the last point"
    )


@dataclass(frozen=True)
class OsrmMatchOptions(OsrmRouteLikeOptions):
    """`/match/v1` (`app.api.osrm.match`): `radiuses` are the GPS standard deviations here."""

    timestamps: tuple[int, ...] | None = _option(
        None, _uint32_list, "`{seconds};...` per coordinate: UNIX times, increasing"
    )
    gaps: str = _option(
        "split",
        _choice("split", "ignore"),
        "`split` (default) | `ignore`: split the trace where it has a gap in time",
    )
    tidy: bool = _option(False, _bool, "`true|false` (default): drop points too close to the one before")
    radiuses: tuple[float | None, ...] | None = _option(
        None, _radiuses, "`{metres};...` per coordinate: the GPS standard deviation (default 5 m)"
    )


@dataclass(frozen=True)
class OsrmTileOptions:
    """`/tile/v1/{profile}/tile(x,y,z).mvt`: the tile, no query options (`app.api.osrm.tile`)."""

    x: int
    y: int
    z: int


OPTIONS: dict[str, type] = {
    "route": OsrmRouteOptions,
    "nearest": OsrmNearestOptions,
    "table": OsrmTableOptions,
    "trip": OsrmTripOptions,
    "match": OsrmMatchOptions,
    "tile": OsrmTileOptions,
}


def _grammar(cls: type) -> dict[str, Option]:
    """A service's options by name, from its class: its own first, then each base's (an option a class declares
    again, such as match's `radiuses`, keeps its base's place and takes the class's documentation)."""
    declared_by: dict[str, type] = {}
    for klass in reversed(cls.__mro__):  # the first class to declare a name owns its place
        for name in klass.__dict__.get("__annotations__", {}):
            declared_by.setdefault(name, klass)
    by_name = {f.name: f.metadata["option"] for f in fields(cls) if "option" in f.metadata}
    out: dict[str, Option] = {}
    for klass in cls.__mro__:
        out.update((name, opt) for name, opt in by_name.items() if declared_by[name] is klass)
    return out


GRAMMAR: dict[str, dict[str, Option]] = {service: _grammar(cls) for service, cls in OPTIONS.items()}


def query_parameters(service: str) -> list[dict[str, Any]]:
    """The OpenAPI parameter objects of a service's query options, from its grammar (every value a string: the
    grammar, not pydantic, judges it). An option with a limit names it (`app.api.openapi_limits` states it)."""
    out = []
    for name, option in GRAMMAR[service].items():
        schema: dict[str, Any] = {"type": "string"}
        if option.limit is not None:
            schema[LIMIT] = option.limit
        out.append({"name": name, "in": "query", "required": False, "description": option.doc, "schema": schema})
    return out


O = TypeVar("O", covariant=True)


@dataclass(frozen=True)
class OsrmRequest(Generic[O]):
    """A parsed OSRM request: service, profile, coordinates `[(lon, lat), …]` and the service's typed options."""

    service: str
    profile: str
    coordinates: list[tuple[float, float]]
    options: O


def parse(path: str, query: str = "") -> OsrmRequest[Any]:
    """Parse a decoded OSRM path and query string (without `?`) into an `OsrmRequest`, raising OSRM's errors."""
    url = path + ("?" + query if query else "")
    m = _PREFIX.match(url)
    if m is None:
        raise _url_error(url, _url_failure(url))
    if not _URL_CHARS.fullmatch(url, m.end()) or m.end() == len(url):
        bad = _URL_CHARS.match(url, m.end())
        raise _url_error(url, bad.end() if bad else m.end())
    service, version, profile = m.group(1), int(m.group(2)), m.group(3)
    if service not in SERVICES:
        raise EngineError(f"Service {service} not found!", "InvalidService")
    if version != 1:
        raise EngineError(f"Service {service} not found!", "InvalidVersion")
    if service not in IMPLEMENTED:
        raise NotImplementedOption(f"Service {service} is not implemented by this server")
    if service == "tile":  # its own grammar: tile(x,y,z).mvt
        return OsrmRequest(service, profile, [], parse_tile(url, m.end()))
    pos = m.end()
    coords, pos = _parse_coordinates(url, pos)
    if url.startswith(".json", pos):
        pos += 5
    elif url.startswith(".flatbuffers", pos):
        raise NotImplementedOption("Format flatbuffers is not implemented by this server")
    given: dict[str, Any] = {}
    if pos < len(url):
        if url[pos] != "?":
            raise query_error(pos)
        given = _parse_options(service, url, pos + 1)
    return OsrmRequest(service, profile, coords, OPTIONS[service](**given))


def _url_failure(url: str) -> int:
    """Where the `/{service}/v{version}/{profile}/{query}` prefix stops matching (for the error message)."""
    pos = 1 if url.startswith("/") else 0
    for part in (r"[A-Za-z0-9]+/", r"v\d+/", r"[A-Za-z0-9_\-]+/"):
        m = re.compile(part).match(url, pos)
        if m is None:
            return pos
        pos = m.end()
    return pos


def _parse_coordinates(url: str, pos: int) -> tuple[list[tuple[float, float]], int]:
    for prefix, precision in (("polyline(", 5), ("polyline6(", 6)):
        if url.startswith(prefix, pos):
            end = url.find(")", pos)
            if end < 0:
                raise query_error(pos)
            try:
                arr = polyline.decode(url[pos + len(prefix) : end], precision)
            except ValueError:
                raise query_error(pos) from None
            if arr.shape[0] == 0:
                raise query_error(pos)
            return [(float(a), float(b)) for a, b in arr], end + 1
    coords: list[tuple[float, float]] = []
    while True:
        m = _COORD.match(url, pos)
        if m is None:
            if coords:
                return coords, pos - 1  # back to the ';' that promised another coordinate
            raise query_error(pos)
        lon, lat = float(m.group(1)), float(m.group(2))
        if not (math.isfinite(lon) and math.isfinite(lat)):
            raise query_error(pos)
        coords.append((lon, lat))
        pos = m.end()
        if pos < len(url) and url[pos] == ";":
            pos += 1
            continue
        return coords, pos


def _parse_options(service: str, url: str, pos: int) -> dict[str, Any]:
    """The options given in `url[pos:]`, by field name (the last of an option given twice)."""
    grammar = GRAMMAR[service]
    options: dict[str, Any] = {}
    n = len(url)
    first = pos
    while True:
        end = url.find("&", pos)
        if end < 0:
            end = n
        eq = url.find("=", pos, end)
        key = url[pos:eq] if eq >= 0 else ""
        option = grammar.get(key)
        if option is None:  # osrm-routed points at the option's start: after "?", or at the "&" before it
            raise query_error(pos if pos == first else pos - 1)
        try:
            options[key] = option.parse(url[eq + 1 : end])
        except ValueError:
            raise query_error(eq + 1) from None
        if end == n:
            return options
        pos = end + 1


def parse_tile(url: str, pos: int) -> OsrmTileOptions:
    """`tile(x,y,z).mvt` from `url[pos:]` to its end, as osrm-routed's x3 grammar reads it, or `InvalidQuery` at the
    position the parser stopped (the start when `tile(` is missing, else the element it expected); then OSRM's
    validity check (`InvalidOptions`: a zoom outside 12..19, a tile that does not exist, with OSRM's message, typo
    included, followed by what is wrong; OSRM's text says "12+" even of zoom 20)."""
    if not url.startswith("tile(", pos):
        raise query_error(pos)
    p = pos + 5
    numbers = []
    for sep in (",", ",", ").mvt"):
        end = p
        while end < len(url) and url[end].isdigit() and url[end].isascii():
            end += 1
        if end == p or int(url[p:end]) > _UINT_MAX:
            raise query_error(p)
        numbers.append(int(url[p:end]))
        if not url.startswith(sep, end):
            raise query_error(end)
        p = end + len(sep)
    if p != len(url):  # anything after `.mvt`, a query string included
        raise query_error(p)
    x, y, z = numbers
    if not OSRM_MIN_ZOOM <= z <= OSRM_MAX_ZOOM:  # osrm-routed's words, then which bound (its text names one only)
        raise EngineError(f"{INVALID_TILE}: zoom {z} is outside {OSRM_MIN_ZOOM}..{OSRM_MAX_ZOOM}", "InvalidOptions")
    if not (x < (1 << z) and y < (1 << z)):
        raise EngineError(f"{INVALID_TILE}: x and y are 0..{(1 << z) - 1} at zoom {z}", "InvalidOptions")
    return OsrmTileOptions(x, y, z)

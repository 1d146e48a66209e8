"""The OSRM v5 HTTP API: `/route/v1/…`, `/nearest/v1/…`, `/table/v1/…` with osrm-routed's codes and shapes.

The URL is parsed by hand (no pydantic on this path) following osrm-routed's grammar: a malformed URL is
`InvalidUrl`, an unknown service `InvalidService`, a version other than 1 `InvalidVersion`, anything the service's
grammar rejects `InvalidQuery` ("Query string malformed close to position N", N counted in the decoded URL), bad
option combinations `InvalidOptions`, out-of-range values `InvalidValue`, limits `TooBig`; every one is HTTP 400.

`exclude=` takes one of the profile's excludable class sets (car: `toll`, `motorway`, `ferry`; anything else is
`InvalidValue`, as in OSRM): routes and tables run on the hierarchy contracted without them, and snapping skips
them. `bearings` filter the snapped segments; `approaches=curb|opposite` keep the direction that passes the point on
its right / left; `continue_straight` (default: the profile's; car true) forbids turning back at via points on an
edge-based graph. `alternatives=true|N` adds up to N (true: 1) alternative routes between two coordinates
(`app.engine.features.alternatives`). Accepted but without effect (as OSRM allows): `hints`. `snapping=any` lets
points snap
onto roads that refuse waypoints (car: private service roads; not onto roads of other travel modes, such as
ferries, which OSRM's `any` allows too); `/nearest` ignores it, as osrm-routed's does.
`annotations=nodes` gives the OSM node id behind every coordinate. `/trip/v1` is answered by `app.api.osrm.trip`,
`/tile/v1/{profile}/tile(x,y,z).mvt` by `app.api.osrm.tile` (OSRM's debug vector tiles, protobuf), `/match/v1` by
`app.api.osrm.match`. Not supported: the `flatbuffers` format (`NotImplemented`).
"""

from __future__ import annotations

import base64
import logging
import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any
from urllib.parse import unquote

import numpy as np
import orjson
from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from app.api.errors import JSON_TYPE, RETRY_AFTER_S, error_body, status_for
from app.api.geometry import segment_lengths_m, simplify
from app.api.openapi_limits import LIMIT
from app.api.osrm import polyline
from app.api.osrm import tile as osrm_tile
from app.api.service import Service, check_coordinate
from app.engine.errors import EngineError, InvalidValue, NoSegment, NotImplementedOption, TooBig
from app.engine.facade import Engine, NearestRequest, RouteRequest, TableRequest, Waypoints
from app.engine.route.legs import merge_legs, segment_figures
from app.engine.types import Leg, Phantom, Route

log = logging.getLogger("starroute.osrm")

SERVICES = ("route", "nearest", "table", "match", "trip", "tile")
IMPLEMENTED = ("route", "nearest", "table", "trip", "tile", "match")
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_COORD = re.compile(rf"({_NUM}),({_NUM})")
_UINT = re.compile(r"\d+")
_DOUBLE = re.compile(_NUM)
_PREFIX = re.compile(r"/([A-Za-z0-9]+)/v(\d+)/([A-Za-z0-9_\-]+)/")
_URL_CHARS = re.compile(r"[A-Za-z0-9_.\-\[\]{}@?|\\~`^=,;:&()%]*")
_ANNOTATIONS = ("duration", "nodes", "distance", "weight", "datasources", "speed")
_ORJSON = orjson.OPT_SERIALIZE_NUMPY


def _query_error(pos: int) -> EngineError:
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


def _alternatives(v: str) -> int:
    return int(_bool(v)) if v in ("true", "false") else _uint(v)


def _uint_list(v: str) -> list[int]:
    return [_uint(x) for x in v.split(";")]


def _uint32_list(v: str) -> list[int]:
    out = _uint_list(v)
    if any(x >= 2**32 for x in out):  # OSRM's `unsigned`
        raise ValueError(v)
    return out


def _indices(v: str) -> list[int] | None:
    return None if v == "all" else _uint_list(v)


def _radiuses(v: str) -> list[float | None]:
    """Per coordinate: a radius in metres; empty, `unlimited` or -1 (osrm-routed's own "unlimited") for none. Any
    other negative radius finds no road, as in osrm-routed (here: a radius of 0 m, which only a point lying on a
    road meets)."""
    out: list[float | None] = []
    for x in v.split(";"):
        r = None if x in ("", "unlimited") else _double(x)
        out.append(None if r == -1 else (0.0 if r is not None and r < 0 else r))  # 0 m: only a point on a road
    return out


def _bearings(v: str) -> list[tuple[int, int] | None]:
    out: list[tuple[int, int] | None] = []
    for x in v.split(";"):
        if x == "":
            out.append(None)
            continue
        a, b = x.split(",")
        out.append((_uint(a), _uint(b)))
    return out


def _per_coordinate(parse: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    return lambda v: [None if x == "" else parse(x) for x in v.split(";")]


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


def _exclude(v: str) -> list[str]:
    parts = v.split(",")
    if any(not re.fullmatch(r"[A-Za-z0-9_]+", p) for p in parts):
        raise ValueError(v)
    return parts


@dataclass(frozen=True)
class Option:
    """One option of a service's query string: how its value is read (`ValueError` when malformed), what the
    documentation says of it, and the request limit (`app.engine.facade.Limits` field) that bounds it, if any. The
    grammar below is the one list: the parser reads it and the OpenAPI schema is generated from it."""

    parse: Callable[[str], Any]
    doc: str
    limit: str | None = None


_GENERAL: dict[str, Option] = {
    "bearings": Option(
        _bearings,
        "`{value},{range};...` per coordinate (degrees, 0-360 and 0-180; empty: any): snap only onto road segments "
        "travelled in that direction",
    ),
    "radiuses": Option(
        _radiuses,
        "`{metres};...` per coordinate: snap no farther (`unlimited`, `-1` or empty: no limit, the default)",
    ),
    "generate_hints": Option(_bool, "`true` (default) | `false`: a `hint` per waypoint"),
    "hints": Option(_per_coordinate(_hint), "`{hint};...` per coordinate: accepted, without effect"),
    "approaches": Option(
        _per_coordinate(_choice("curb", "opposite", "unrestricted")),
        "`curb|opposite|unrestricted;...` per coordinate: pass the point on the right (curb) or left (opposite) "
        "side of the road",
    ),
    "exclude": Option(
        _exclude, "`{class}[,{class}...]`: one of the profile's excludable class sets (car: toll, motorway, ferry)"
    ),
    "snapping": Option(_choice("default", "any"), "`default|any`: accepted, without effect"),
    "skip_waypoints": Option(_bool, "`true|false` (default): leave the `waypoints` out of the answer"),
}
_ROUTE: dict[str, Option] = {  # route, trip and match
    "steps": Option(_bool, "`true|false` (default): turn-by-turn steps per leg"),
    "annotations": Option(
        _route_annotations,
        "`true|false` (default) or a comma-separated list of `duration`, `nodes`, `distance`, `weight`, "
        "`datasources`, `speed`: figures per segment of each leg",
    ),
    "geometries": Option(_choice("polyline", "polyline6", "geojson"), "`polyline` (default) | `polyline6` | `geojson`"),
    "overview": Option(
        _choice("simplified", "full", "false", "by_legs"),
        "`simplified` (default) | `full` | `false` | `by_legs`: the geometry of the whole route (or of each leg)",
    ),
    "waypoints": Option(
        _uint_list,
        "`{index};...`: the coordinates that are waypoints (first and last included), the others only passed",
    ),
}
_GRAMMAR: dict[str, dict[str, Option]] = {
    "route": {
        "alternatives": Option(
            _alternatives,
            "`true|false` (default) or a number N: up to N (true: 1) alternative routes, between two coordinates",
            limit="max_alternatives",
        ),
        "continue_straight": Option(
            _choice("default", "true", "false"),
            "`default|true|false`: no turning back at via points (default: the profile's; car true)",
        ),
        **_ROUTE,
        **_GENERAL,
    },
    "nearest": {
        "number": Option(_uint, "`{N}` (default 1): how many nearest road segments", limit="max_nearest"),
        **_GENERAL,
    },
    "table": {
        "sources": Option(_indices, "`{index};...` | `all` (default): the coordinates that are sources"),
        "destinations": Option(_indices, "`{index};...` | `all` (default): the coordinates that are destinations"),
        "annotations": Option(
            _table_annotations, "`duration` (default) | `distance` | `duration,distance`: the matrices answered"
        ),
        "fallback_speed": Option(
            _double,
            "`{m/s}` > 0: where no route exists, the straight-line distance at this speed (those cells are listed "
            "in `fallback_speed_cells`)",
        ),
        "fallback_coordinate": Option(
            _choice("input", "snapped"), "`input` (default) | `snapped`: where the fallback distance is measured from"
        ),
        "scale_factor": Option(_double, "`{factor}` > 0: durations multiplied by it"),
        **_GENERAL,
    },
    "trip": {  # app.api.osrm.trip
        "roundtrip": Option(_bool, "`true` (default) | `false`: back to the first point at the end"),
        "source": Option(_choice("any", "first"), "`any` (default) | `first`: the trip starts at the first point"),
        "destination": Option(_choice("any", "last"), "`any` (default) | `last`: the trip ends at the last point"),
        **_ROUTE,
        **_GENERAL,
    },
    "match": {  # app.api.osrm.match
        "timestamps": Option(_uint32_list, "`{seconds};...` per coordinate: UNIX times, increasing"),
        "gaps": Option(
            _choice("split", "ignore"), "`split` (default) | `ignore`: split the trace where it has a gap in time"
        ),
        "tidy": Option(_bool, "`true|false` (default): drop points too close to the one before"),
        **_ROUTE,
        **_GENERAL,
        "radiuses": Option(_radiuses, "`{metres};...` per coordinate: the GPS standard deviation (default 5 m)"),
    },
    "tile": {},  # nothing after `tile(x,y,z).mvt` (app.api.osrm.tile)
}


def query_parameters(service: str) -> list[dict[str, Any]]:
    """The OpenAPI parameter objects of a service's query options, from its grammar (every value a string: the
    grammar, not pydantic, judges it). An option with a limit names it (`app.api.openapi_limits` states it)."""
    out = []
    for name, option in _GRAMMAR[service].items():
        schema: dict[str, Any] = {"type": "string"}
        if option.limit is not None:
            schema[LIMIT] = option.limit
        out.append({"name": name, "in": "query", "required": False, "description": option.doc, "schema": schema})
    return out


@dataclass
class OsrmRequest:
    """A parsed OSRM request: service, profile, coordinates `[(lon, lat), …]` and the options given."""

    service: str
    profile: str
    coordinates: list[tuple[float, float]]
    options: dict[str, Any] = field(default_factory=dict)


def parse(path: str, query: str = "") -> OsrmRequest:
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
        x, y, z = osrm_tile.parse_tile(url, m.end())
        return OsrmRequest(service, profile, [], {"x": x, "y": y, "z": z})
    pos = m.end()
    coords, pos = _parse_coordinates(url, pos)
    if url.startswith(".json", pos):
        pos += 5
    elif url.startswith(".flatbuffers", pos):
        raise NotImplementedOption("Format flatbuffers is not implemented by this server")
    options: dict[str, Any] = {}
    if pos < len(url):
        if url[pos] != "?":
            raise _query_error(pos)
        options = _parse_options(service, url, pos + 1)
    return OsrmRequest(service, profile, coords, options)


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
                raise _query_error(pos)
            try:
                arr = polyline.decode(url[pos + len(prefix) : end], precision)
            except ValueError:
                raise _query_error(pos) from None
            if arr.shape[0] == 0:
                raise _query_error(pos)
            return [(float(a), float(b)) for a, b in arr], end + 1
    coords: list[tuple[float, float]] = []
    while True:
        m = _COORD.match(url, pos)
        if m is None:
            if coords:
                return coords, pos - 1  # back to the ';' that promised another coordinate
            raise _query_error(pos)
        lon, lat = float(m.group(1)), float(m.group(2))
        if not (math.isfinite(lon) and math.isfinite(lat)):
            raise _query_error(pos)
        coords.append((lon, lat))
        pos = m.end()
        if pos < len(url) and url[pos] == ";":
            pos += 1
            continue
        return coords, pos


def _parse_options(service: str, url: str, pos: int) -> dict[str, Any]:
    grammar = _GRAMMAR[service]
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
            raise _query_error(pos if pos == first else pos - 1)
        try:
            options[key] = option.parse(url[eq + 1 : end])
        except ValueError:
            raise _query_error(eq + 1) from None
        if end == n:
            return options
        pos = end + 1


# --- responses ---------------------------------------------------------------------------------------------------
def _hint_for(ph: Phantom) -> str:
    return base64.urlsafe_b64encode(struct.pack("<ii", ph.chain, ph.segment)).decode("ascii")


def round6(x: float) -> float:
    """`np.round(x, 6)` for one float (the same rounding as the geometries), without numpy's per-call cost."""
    return round(x * 1e6) / 1e6


def waypoint(ph: Phantom, hints: bool = True) -> dict[str, Any]:
    """OSRM's Waypoint object: snapped location (6 decimals), distance from the input, road name, hint."""
    wp: dict[str, Any] = {
        "location": [round6(ph.lon), round6(ph.lat)],
        "name": ph.name,
        "distance": round(ph.distance_m, 6),
    }
    if hints:
        wp["hint"] = _hint_for(ph)
    return wp


def _geometry_fn(kind: str) -> Callable[[np.ndarray], Any]:
    if kind == "polyline6":
        return lambda c: polyline.encode(c, 6)
    if kind == "geojson":
        return lambda c: {"type": "LineString", "coordinates": np.round(c, 6)}
    return lambda c: polyline.encode(c, 5)


def _check_sizes(req: OsrmRequest, names: tuple[str, ...]) -> None:
    n = len(req.coordinates)
    for name in names:
        value = req.options.get(name)
        if value is not None and len(value) != n:
            raise EngineError(
                f"Number of elements in {name} size {len(value)} does not match coordinate size {n}", "InvalidOptions"
            )


def _check_common(req: OsrmRequest) -> list[float | None] | None:
    """Checks shared by the services; returns the per-coordinate snap radii."""
    _check_sizes(req, ("hints", "bearings", "radiuses", "approaches"))
    for b in req.options.get("bearings") or ():
        if b is not None and not (b[0] <= 360 and b[1] <= 180):
            raise EngineError("Bearing must be in 0..360 and its range in 0..180", "InvalidOptions")
    return req.options.get("radiuses")


def _bearings_of(req: OsrmRequest) -> list[tuple[float, float] | None] | None:
    """OSRM `bearings` as (value, range) degree pairs per coordinate (None where not given)."""
    b = req.options.get("bearings")
    return None if b is None else [None if x is None else (float(x[0]), float(x[1])) for x in b]


def _waypoints(req: OsrmRequest, radiuses: list[float | None] | None) -> Waypoints:
    """The request's points with OSRM's per-coordinate options (radii unlimited unless given)."""
    o = req.options
    return Waypoints(
        req.coordinates, radiuses, _bearings_of(req), o.get("approaches"), any_edge=o.get("snapping") == "any"
    )


def _check_coordinates(req: OsrmRequest) -> None:
    for lon, lat in req.coordinates:
        check_coordinate(lon, lat)


def annotation(leg: Leg, fields: tuple[str, ...], engine: Engine | None = None) -> dict[str, Any]:
    """Per-segment annotation arrays (one value per pair of consecutive coordinates): with `engine`, each segment's
    own time and weight as OSRM's (no turns or node obstacles), else pieces split by length; `nodes`: the OSM node
    id behind every coordinate (one more than the segments), from `engine`."""
    dist, dur, wgt = engine.leg_segment_figures(leg) if engine is not None else segment_figures(leg)
    out: dict[str, Any] = {}
    if "nodes" in fields and engine is not None:
        out["nodes"] = engine.leg_nodes(leg)
    if "distance" in fields:
        out["distance"] = np.round(dist, 8)
    if "duration" in fields:
        out["duration"] = np.round(dur, 1)
    if "weight" in fields:
        out["weight"] = np.round(wgt, 1)
    if "speed" in fields:
        out["speed"] = np.round(np.divide(dist, dur, out=np.zeros_like(dist), where=dur > 0), 1)
    if "datasources" in fields:
        out["datasources"] = np.zeros(dist.shape[0], dtype=np.int64)
        out["metadata"] = {"datasource_names": ["lua profile"]}
    return out


async def route(svc: Service, req: OsrmRequest) -> dict[str, Any]:
    """Answer `/route/v1`: the best route, and up to `alternatives` more between two coordinates."""
    o = req.options
    n = len(req.coordinates)
    radiuses = _check_common(req)
    if n < 2:
        raise EngineError("Number of coordinates needs to be at least two.", "InvalidOptions")
    limit = svc.settings.max_via_points
    if n > limit:
        raise TooBig(f"Number of entries {n} is higher than current maximum ({limit})")
    if o.get("alternatives", 0) > svc.settings.max_alternatives:
        raise TooBig(
            f"Requested number of alternatives is higher than current maximum ({svc.settings.max_alternatives})"
        )
    _check_coordinates(req)
    wps = o.get("waypoints")
    if wps is not None:
        if any(i >= n for i in wps):  # osrm-routed: InvalidOptions, no message
            raise EngineError("", "InvalidOptions")
        if wps[0] != 0 or wps[-1] != n - 1:
            raise InvalidValue("First and last coordinates must be specified as waypoints.")
        if any(b <= a for a, b in zip(wps, wps[1:], strict=False)) or wps[-1] >= n:
            raise InvalidValue("Waypoints must be supplied in increasing order")
    straight = {"true": True, "false": False}.get(o.get("continue_straight", "default"))
    engine_req = RouteRequest(
        _waypoints(req, radiuses),
        exclude=o.get("exclude", []),
        alternatives=o.get("alternatives", 0) if n == 2 else 0,  # OSRM looks for alternatives between two points only
        continue_straight=straight,
    )
    answer = await svc.route(engine_req)
    phantoms = answer.phantoms
    routes = [_route_object(svc, r, wps, o) for r in answer.result.routes]
    body: dict[str, Any] = {"code": "Ok", "routes": routes}
    if not o.get("skip_waypoints", False):
        hints = o.get("generate_hints", True)
        keep = range(n) if wps is None else wps
        body["waypoints"] = [waypoint(phantoms[i], hints) for i in keep]
    return body


def _route_object(svc: Service, r: Route, wps: list[int] | None, o: dict[str, Any]) -> dict[str, Any]:
    """One OSRM Route object: legs (steps, annotations), totals, the overview geometry."""
    fields = o.get("annotations", ())
    legs = r.legs if wps is None else [merge_legs(r.legs[a:b]) for a, b in zip(wps, wps[1:], strict=False)]
    engine = svc.opened
    geom = _geometry_fn(o.get("geometries", "polyline"))
    overview = o.get("overview", "simplified")
    roads = engine.roads if o.get("steps") else None
    if roads is not None:  # guidance is imported on the first steps request, not at start-up
        from app.api.osrm.steps import build_steps, summary
    legs_out = []
    for leg in legs:
        steps = build_steps(leg, roads, geom) if roads is not None else []
        obj: dict[str, Any] = {
            "steps": steps,
            "summary": summary(steps) if steps else "",
            "weight": round(leg.weight_s, 1),
            "duration": round(leg.duration_s, 1),
            "distance": round(leg.distance_m, 1),
        }
        if fields:
            obj["annotation"] = annotation(leg, fields, engine)
        if overview == "by_legs":
            obj["geometry"] = geom(leg.coordinates)
        legs_out.append(obj)
    route_obj: dict[str, Any] = {
        "legs": legs_out,
        "weight_name": engine.meta.weight_name,
        "weight": round(r.weight_s, 1),
        "duration": round(r.duration_s, 1),
        # OSRM's route distance is the sum of its legs' rounded distances (`assembleLeg` rounds each to 0.1 m)
        "distance": round(sum(leg["distance"] for leg in legs_out), 1),
    }
    if overview == "full":
        route_obj["geometry"] = geom(r.coordinates)
    elif overview == "simplified":
        route_obj["geometry"] = geom(simplify(r.coordinates))
    return route_obj


async def nearest(svc: Service, req: OsrmRequest) -> dict[str, Any]:
    """Answer `/nearest/v1`: up to `number` snapped points with their segment's OSM node ids; for several
    coordinates (as osrm-routed 26 answers them) one such list per coordinate."""
    radiuses = _check_common(req)
    number = req.options.get("number", 1)
    if number < 1:
        raise EngineError("Number of results must be at least 1", "InvalidOptions")
    if number > svc.settings.max_nearest:
        raise TooBig(f"Number of results {number} is higher than current maximum ({svc.settings.max_nearest})")
    _check_coordinates(req)
    hints = req.options.get("generate_hints", True)
    lists = []
    for i, (lon, lat) in enumerate(req.coordinates):
        radius = radiuses[i] if radiuses else None
        try:
            found = svc.nearest(NearestRequest(lon, lat, number, radius, req.options.get("exclude") or ()))
        except NoSegment:
            raise NoSegment(f"Could not find a matching segment for coordinate {i}") from None
        lists.append([{"nodes": list(ph.osm_nodes), **waypoint(ph, hints)} for ph in found])
    return {"code": "Ok", "waypoints": lists[0] if len(lists) == 1 else lists}


async def table(svc: Service, req: OsrmRequest) -> dict[str, Any]:
    """Answer `/table/v1`: durations (and/or distances) between sources and destinations, null when unreachable."""
    o = req.options
    n = len(req.coordinates)
    radiuses = _check_common(req)
    if n < 2:
        raise EngineError("Number of coordinates needs to be at least two.", "InvalidOptions")
    src = o.get("sources") or list(range(n))
    dst = o.get("destinations") or list(range(n))
    if any(i >= n for i in src) or any(i >= n for i in dst):
        raise EngineError(
            "Source and destination indices must be less than the number of coordinates", "InvalidOptions"
        )
    for key in ("fallback_speed", "scale_factor"):
        if key in o and o[key] <= 0:
            raise EngineError(f"{key} must be > 0", "InvalidOptions")
    limit = svc.settings.max_table_size
    if len(src) * len(dst) > limit * limit:
        raise TooBig("Too many table coordinates")
    _check_coordinates(req)
    tbl, _, _ = await svc.table(TableRequest(_waypoints(req, radiuses), src, dst, o.get("exclude", [])))
    phantoms = tbl.sources + tbl.destinations
    fields = o.get("annotations", ("duration",))
    durations = np.asarray(tbl.durations_s, dtype=np.float64) * o.get("scale_factor", 1.0)
    distances = np.asarray(tbl.distances_m, dtype=np.float64)
    body: dict[str, Any] = {"code": "Ok"}
    speed = o.get("fallback_speed")
    if speed is not None:
        missing = np.isnan(durations)
        body["fallback_speed_cells"] = []  # as osrm-routed: present, empty when every cell was routed
        if missing.any():
            snapped = o.get("fallback_coordinate", "input") == "snapped"
            pts = np.array([(p.lon, p.lat) if snapped else (p.input_lon, p.input_lat) for p in phantoms])
            si, dj = np.nonzero(missing)
            a = pts[si]
            b = pts[len(src) + dj]
            crow = segment_lengths_m(np.stack([a, b], axis=1).reshape(-1, 2))[::2]
            durations[si, dj] = crow / speed
            distances[si, dj] = crow
            body["fallback_speed_cells"] = np.stack([si, dj], axis=1)
    if "duration" in fields:
        body["durations"] = np.round(durations, 1)
    if "distance" in fields:
        body["distances"] = np.round(distances, 1)
    hints = o.get("generate_hints", True)
    body["sources"] = [waypoint(p, hints) for p in tbl.sources]
    body["destinations"] = [waypoint(p, hints) for p in tbl.destinations]
    return body


_HANDLERS = {"route": route, "nearest": nearest, "table": table}


async def _trip(svc: Service, req: OsrmRequest) -> dict[str, Any]:
    """`/trip/v1` (`app.api.osrm.trip`, imported on first use: it builds on this module)."""
    from app.api.osrm.trip import trip

    return await trip(svc, req)


_HANDLERS["trip"] = _trip


async def _match(svc: Service, req: OsrmRequest) -> dict[str, Any]:
    """`/match/v1` (`app.api.osrm.match`, imported on first use: it builds on this module)."""
    from app.api.osrm.match import match

    return await match(svc, req)


_HANDLERS["match"] = _match


async def handle(svc: Service, path: str, query_string: bytes | str) -> tuple[int, bytes]:
    """Answer one OSRM request: `(HTTP status, body)`, the body JSON but for a tile (`media_type`). Never raises
    for bad input."""
    try:
        qs = query_string.decode("latin-1") if isinstance(query_string, bytes) else query_string
        req = parse(path, unquote(qs) if "%" in qs else qs)
        if req.service == "tile":  # protobuf, not JSON: its bytes carry their media type (`media_type`)
            return 200, await osrm_tile.tile(svc, req)
        body = await _HANDLERS[req.service](svc, req)
        return 200, orjson.dumps(body, option=_ORJSON)
    except EngineError as exc:
        return status_for(exc.code), error_body(exc.code, exc.message)
    except Exception:  # noqa: BLE001 - a bug must still answer JSON
        log.exception("OSRM request failed: %s?%r", path, query_string)
        return 500, error_body("InternalError", "internal error")


def media_type(body: bytes) -> str:
    """The Content-Type of a body `handle` answered: JSON, unless the body names its own (a tile's protobuf)."""
    return str(getattr(body, "media_type", JSON_TYPE))


# --- OpenAPI documentation of the same endpoints -------------------------------------------------------------------
# `app.api.frontdoor` answers these paths before routing; the routes below document them (and serve them should the
# front door be bypassed). Each one's query options are its grammar's (`query_parameters`), added to the operation as
# they are: what the documentation lists is what the parser accepts.
router = APIRouter(tags=["osrm"])
router.include_router(osrm_tile.router)
_ERR: dict[int | str, dict[str, Any]] = {
    400: {"description": "OSRM error: `{code, message}`, code one of InvalidUrl, InvalidQuery, ..."}
}


_Profile = Annotated[str, Path(description="any name: the loaded graph's profile answers (`driving`, `car`, ...)")]
_Coordinates = Annotated[
    str,
    Path(
        description="`{lon},{lat};{lon},{lat}[;...]`, `polyline({polyline})` or `polyline6({polyline6})`, "
        "optionally followed by `.json`"
    ),
]


async def _answer(request: Request) -> Response:
    svc: Service = request.app.state.service
    status, body = await handle(svc, request.url.path, request.scope.get("query_string", b""))
    headers = {"retry-after": str(RETRY_AFTER_S)} if status == 503 else None  # only `RETRY_LATER` codes answer 503
    return Response(body, status_code=status, media_type=media_type(body), headers=headers)


def _document(service: str, summary: str, doc: str) -> None:
    """`GET /{service}/v1/{profile}/{coordinates}` on the router: its summary, description and query options."""

    async def endpoint(request: Request, profile: _Profile, coordinates: _Coordinates) -> Response:
        return await _answer(request)

    router.add_api_route(
        f"/{service}/v1/{{profile}}/{{coordinates}}",
        endpoint,
        methods=["GET"],
        name=f"osrm_{service}",  # the operation's id and its /metrics label
        summary=summary,
        description=doc,
        responses=_ERR,
        openapi_extra={"parameters": query_parameters(service)},
    )


_document(
    "route",
    "OSRM route service",
    "`{lon},{lat};{lon},{lat}[;...]` or `polyline(...)`: the fastest route through the points, OSRM v5 shapes.",
)
_document(
    "trip",
    "OSRM trip service",
    "The fastest tour through the points (`roundtrip`, `source=first`, `destination=last`): `trips` holds one route, "
    "`waypoints` each point's place in it. `roundtrip=false` needs a fixed end (else `NotImplemented`).",
)
_document("nearest", "OSRM nearest service", "The `number` nearest road segments to each coordinate.")
_document(
    "table",
    "OSRM table service",
    "Durations and/or distances between all sources and destinations (null where unreachable).",
)
_document(
    "match",
    "OSRM match service",
    "A GPS trace matched onto the roads: `matchings` (routes with a confidence) and a tracepoint per point.",
)

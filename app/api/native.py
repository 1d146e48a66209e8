"""The native API: GeoJSON routes (`GET`/`POST /route`), `GET /nearest`, `POST /table`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any

import numpy as np
import orjson
from fastapi import APIRouter, Body, Query, Request
from starlette.responses import JSONResponse, Response

from app.api.geometry import simplify
from app.api.schemas import (
    Algorithm,
    ErrorBody,
    IsochroneCollection,
    NearestCollection,
    Overview,
    RouteFeature,
    RouteRequest,
    TableRequest,
    TableResponse,
)
from app.api.service import Service
from app.engine.errors import InvalidValue, TooBig
from app.engine.types import Phantom, Route, RouteOptions, RouteResult

router = APIRouter(tags=["native"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "description": "bad input, NoSegment, NoRoute, TooBig: `{code, message}`",
        "content": {"application/json": {"schema": ErrorBody.model_json_schema()}},
    }
}
_JSON = "application/geo+json"


class GeoJSONResponse(JSONResponse):
    """Documents `application/geo+json` (RFC 7946) as the media type of the GeoJSON answers."""

    media_type = _JSON


_ORJSON = orjson.OPT_SERIALIZE_NUMPY


def _json(body: Any, media_type: str = "application/json") -> Response:
    return Response(orjson.dumps(body, option=_ORJSON), media_type=media_type)


def parse_lonlat(text: str, what: str) -> tuple[float, float]:
    """`"lon,lat"` -> floats, finite and in range; `InvalidValue` naming the parameter otherwise."""
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        lon, lat = float(parts[0]), float(parts[1])
    except ValueError:
        raise InvalidValue(f"{what} must be 'lon,lat' in degrees, got {text[:40]!r}") from None
    if not (math.isfinite(lon) and math.isfinite(lat) and -180 <= lon <= 180 and -90 <= lat <= 90):
        raise InvalidValue(f"{what} {text[:40]!r} is out of range (lon -180..180, lat -90..90)")
    return lon, lat


def _svc(request: Request) -> Service:
    return request.app.state.service


def _r1(x: float) -> float:
    """Metres and seconds to a tenth (the graph's own resolution: decimetres, deciseconds), as OSRM writes them."""
    return round(float(x), 1)


def _waypoint(ph: Phantom) -> dict[str, Any]:
    return {
        "location": [ph.lon, ph.lat],
        "input": [ph.input_lon, ph.input_lat],
        "distance_m": _r1(ph.distance_m),
        "name": ph.name,
    }


def _stats(settled: int, relaxed: int, micros: float) -> dict[str, Any]:
    return {"settled": int(settled), "relaxed": int(relaxed), "micros": _r1(micros)}


def feature(
    route: Route,
    phantoms: list[Phantom],
    overview: str = "full",
    result: RouteResult | None = None,
    trace: list[dict[str, Any]] | None = None,
    exclude: list[str] | None = None,
) -> dict[str, Any]:
    """The route as a GeoJSON Feature (see `schemas.RouteFeature`)."""
    coords = route.coordinates
    if overview == "simplified":
        coords = simplify(coords)
    elif overview == "false":
        coords = coords[[0, -1]] if coords.shape[0] else coords
    legs = [
        {
            "distance_m": _r1(leg.distance_m),
            "duration_s": _r1(leg.duration_s),
            "stats": _stats(leg.stats.settled, leg.stats.relaxed, leg.stats.micros),
        }
        for leg in route.legs
    ]
    total = _stats(
        sum(leg.stats.settled for leg in route.legs),
        sum(leg.stats.relaxed for leg in route.legs),
        sum(leg.stats.micros for leg in route.legs),
    )
    eps = result.epsilon if result is not None else 1.0
    props: dict[str, Any] = {
        "distance_m": _r1(route.distance_m),
        "duration_s": _r1(route.duration_s),
        "algorithm": route.algorithm,
        "stats": total,
        "waypoints": [_waypoint(ph) for ph in phantoms],
        "legs": legs,
        "epsilon": eps,
        "bound": "optimal" if eps == 1.0 else f"<= {eps:g} x optimal",
        "exclude": sorted(exclude or []),
    }
    if trace is not None:
        props["trace"] = trace
    if result is not None and route is result.best and len(result.routes) > 1:
        props["alternatives"] = [feature(r, phantoms, overview, None, None, exclude) for r in result.routes[1:]]
    return {
        "type": "Feature",
        "geometry": {"type": "LineString", "coordinates": np.round(coords, 7)},
        "properties": props,
    }


@dataclass
class RouteParams:
    """A native route request, from either GET or POST."""

    coords: list[tuple[float, float]]
    algorithm: str | None = None
    radiuses: list[float | None] | None = None
    overview: str = "full"
    exclude: list[str] = field(default_factory=list)
    avoid: Any = None  # parsed `app.engine.areas.Areas`
    trace: bool = False
    epsilon: float = 1.0
    alternatives: int = 0


def _trace_json(svc: Service, result: RouteResult) -> list[dict[str, Any]]:
    out = []
    for tr in result.traces:
        pts = np.round(svc.router.node_lonlat(tr.nodes), 6)
        settled = np.concatenate([pts, tr.directions[:, None].astype(np.float64)], axis=1) if len(pts) else pts
        meet = np.round(svc.router.node_lonlat(np.array([tr.meeting])), 6)[0].tolist() if tr.meeting >= 0 else None
        out.append({"settled": settled, "meeting": meet, "truncated": tr.truncated})
    return out


async def _route(svc: Service, p: RouteParams) -> Response:
    limit = svc.settings.max_via_points
    if len(p.coords) > limit:
        raise TooBig(f"Number of points {len(p.coords)} is higher than the maximum ({limit})")
    if p.radiuses is not None and len(p.radiuses) != len(p.coords):
        raise InvalidValue(f"radiuses has {len(p.radiuses)} entries for {len(p.coords)} points")
    if p.alternatives > svc.settings.max_alternatives:
        raise TooBig(f"alternatives={p.alternatives} is more than the maximum ({svc.settings.max_alternatives})")
    if p.alternatives and len(p.coords) != 2:
        raise InvalidValue("alternatives are looked for between two points only: drop the via points")
    algorithm = p.algorithm or ("alt" if p.avoid is not None and "alt" in svc.router.algorithms else "ch")
    svc.check_algorithm(algorithm)  # coordinates were range-checked by parse_lonlat / the pydantic schema
    mask = svc.exclude_mask(p.exclude)
    phantoms = svc.snap_all(
        p.coords, p.radiuses, default_radius_m=svc.settings.snap_radius_m, detail=True, exclude_mask=mask
    )
    forbidden = None
    if p.avoid is not None:
        forbidden = svc.router.forbidden_arcs(p.avoid)
        svc.router.check_outside(phantoms, forbidden)
    options = RouteOptions(
        algorithm=algorithm,
        exclude=frozenset(p.exclude),
        forbidden=forbidden,
        trace=p.trace,
        trace_limit=svc.settings.trace_limit,
        epsilon=p.epsilon,
        alternatives=p.alternatives,
    )
    result = await svc.routes(phantoms, algorithm, options)
    trace = _trace_json(svc, result) if p.trace else None
    return _json(feature(result.best, phantoms, p.overview, result, trace, p.exclude), _JSON)


def _exclude_list(text: str | None) -> list[str]:
    return [c for c in (text or "").split(",") if c]


@router.get(
    "/route",
    response_model=RouteFeature,
    response_class=GeoJSONResponse,
    responses=_ERRORS,
    summary="Route as a GeoJSON Feature",
)
async def get_route(
    request: Request,
    from_: Annotated[str, Query(alias="from", description="start as `lon,lat`", examples=["7.4197,43.7311"])],
    to: Annotated[str, Query(description="goal as `lon,lat`", examples=["7.4246,43.7384"])],
    via: Annotated[str | None, Query(description="intermediate points `lon,lat;lon,lat`")] = None,
    algorithm: Annotated[Algorithm | None, Query(description="default: ch (alt when avoiding areas)")] = None,
    overview: Overview = "full",
    exclude: Annotated[str | None, Query(description="road classes not to use, comma-separated: `motorway`")] = None,
    avoid: Annotated[
        str | None, Query(description="areas not to enter: polygons `lon,lat;lon,lat;...` separated by `|`")
    ] = None,
    trace: Annotated[bool, Query(description="also return the nodes each leg's search settled")] = False,
    epsilon: Annotated[
        float, Query(ge=1.0, le=100.0, allow_inf_nan=False, description="weighted A*: within epsilon of the optimum")
    ] = 1.0,
    alternatives: Annotated[
        int, Query(ge=0, le=10, description="also look for up to this many alternative routes (no via points)")
    ] = 0,
) -> Response:
    """The fastest route from `from` through each `via` point to `to`; `[lon, lat]` order throughout (RFC 7946).
    Alternatives, when found, are in `properties.alternatives` (each a Feature like this one)."""
    points = [parse_lonlat(from_, "from")]
    if via:
        points += [parse_lonlat(p, "via") for p in via.split(";")]
    points.append(parse_lonlat(to, "to"))
    areas = None
    if avoid:
        from app.engine.areas import parse_compact

        areas = parse_compact(avoid)
    params = RouteParams(points, algorithm, None, overview, _exclude_list(exclude), areas, trace, epsilon, alternatives)
    return await _route(_svc(request), params)


@router.post(
    "/route",
    response_model=RouteFeature,
    response_class=GeoJSONResponse,
    responses=_ERRORS,
    summary="Route as a GeoJSON Feature",
)
async def post_route(request: Request, body: Annotated[RouteRequest, Body()]) -> Response:
    """The same as `GET /route` with the points as a JSON list `[[lon, lat], ...]`, optional snap radii, and areas
    to avoid as GeoJSON."""
    coords = [(float(a), float(b)) for a, b in body.coordinates]
    areas = None
    if body.avoid is not None:
        from app.engine.areas import parse_areas

        areas = parse_areas(body.avoid)
    params = RouteParams(
        coords,
        body.algorithm,
        body.radiuses,
        body.overview,
        body.exclude,
        areas,
        body.trace,
        body.epsilon,
        body.alternatives,
    )
    return await _route(_svc(request), params)


MAX_CONTOURS = 10
MAX_MINUTES = 180.0
MAX_DISTANCE_M = 200_000.0


def _limits(text: str, what: str, top: float) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InvalidValue(f"{what} must be comma-separated numbers, got {text[:40]!r}") from None
    if not values or len(values) > MAX_CONTOURS:
        raise InvalidValue(f"{what}: give 1 to {MAX_CONTOURS} values")
    if any(not math.isfinite(v) or v <= 0 or v > top for v in values):
        raise InvalidValue(f"{what}: every value must be > 0 and at most {top:g}")
    return sorted(set(values))


@router.get(
    "/isochrone",
    response_model=IsochroneCollection,
    response_class=GeoJSONResponse,
    responses=_ERRORS,
    summary="Isochrones: what is reached within given times or distances",
)
async def get_isochrone(
    request: Request,
    point: Annotated[str, Query(description="`lon,lat`", examples=["7.4197,43.7311"])],
    minutes: Annotated[str | None, Query(description="travel-time limits, comma-separated: `5,10,15`")] = None,
    distance_m: Annotated[str | None, Query(description="distance limits in metres instead: `500,1000`")] = None,
    reverse: Annotated[
        bool, Query(description="who reaches the point within the limits, instead of where it reaches")
    ] = False,
    exclude: Annotated[str | None, Query(description="road classes not to use: `motorway`")] = None,
    buffer_m: Annotated[
        float, Query(ge=5, le=500, allow_inf_nan=False, description="polygon buffer around reached roads")
    ] = 50.0,
) -> Response:
    """One GeoJSON Polygon/MultiPolygon Feature per limit, largest first, covering the roads reached within it (and
    `buffer_m` around them), with holes where the network is not reached; built from a one-to-all search with a
    cutoff, partly reached roads cut where the limit runs out."""
    svc = _svc(request)
    lon, lat = parse_lonlat(point, "point")
    if (minutes is None) == (distance_m is None):
        raise InvalidValue("give either minutes or distance_m")
    if minutes is not None:
        values = _limits(minutes, "minutes", MAX_MINUTES)
        metric, limits = "duration", [int(round(v * 60 * 10)) for v in values]
    else:
        values = _limits(distance_m or "", "distance_m", MAX_DISTANCE_M)
        metric, limits = "distance", [int(round(v * 10)) for v in values]
    classes = _exclude_list(exclude)
    mask = svc.exclude_mask(classes)
    phantom = svc.snap_all([(lon, lat)], default_radius_m=svc.settings.snap_radius_m, detail=True, exclude_mask=mask)[0]

    def run() -> tuple[list[dict[str, Any]], int]:
        from app.engine.contours import contour_polygons

        pieces, settled = svc.router.query().isochrone(phantom, limits, metric, reverse, classes)
        out = []
        for value, part in zip(values, pieces, strict=True):
            try:
                geometry, tol = contour_polygons(part[:, 0], part[:, 1], part[:, 2], part[:, 3], buffer_m)
            except ValueError as exc:
                raise TooBig(f"isochrone of {value:g}: {exc}") from None
            props = {
                "value": value,
                "unit": "min" if metric == "duration" else "m",
                "metric": metric,
                "reverse": reverse,
                "buffer_m": buffer_m,
                "tolerance_m": round(tol, 2),
                "pieces": int(len(part)),
            }
            out.append({"type": "Feature", "geometry": geometry, "properties": props})
        return out[::-1], settled

    features, settled = await svc.run_slow(run)
    snap_m = _r1(phantom.distance_m)
    body = {"type": "FeatureCollection", "features": features, "properties": {
        "point": [phantom.lon, phantom.lat], "snap_distance_m": snap_m, "settled": settled}}  # fmt: skip
    return _json(body, _JSON)


@router.get(
    "/nearest",
    response_model=NearestCollection,
    response_class=GeoJSONResponse,
    responses=_ERRORS,
    summary="Nearest road points",
)
async def get_nearest(
    request: Request,
    point: Annotated[str, Query(description="`lon,lat`", examples=["7.4197,43.7311"])],
    number: Annotated[int, Query(ge=1, description="how many (at most the server's limit, 100 by default)")] = 1,
    radius_m: Annotated[float | None, Query(gt=0, allow_inf_nan=False, description="search radius")] = None,
    exclude: Annotated[str | None, Query(description="road classes that do not count: `motorway`")] = None,
) -> Response:
    """The `number` nearest snapped points on distinct road segments, nearest first, as GeoJSON Points."""
    svc = _svc(request)
    lon, lat = parse_lonlat(point, "point")
    if number > svc.settings.max_nearest:
        raise TooBig(f"number {number} is higher than the maximum ({svc.settings.max_nearest})")
    mask = svc.exclude_mask(_exclude_list(exclude))
    found = svc.nearest(lon, lat, number, svc.settings.snap_radius_m if radius_m is None else radius_m, mask)
    features = [
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [ph.lon, ph.lat]},
            "properties": {
                "distance_m": _r1(ph.distance_m),
                "name": ph.name,
                "input": [lon, lat],
                "nodes": list(ph.osm_nodes),
            },
        }
        for ph in found
    ]
    return _json({"type": "FeatureCollection", "features": features}, _JSON)


@router.post("/table", response_model=TableResponse, responses=_ERRORS, summary="Duration and distance matrix")
async def post_table(request: Request, body: Annotated[TableRequest, Body()]) -> Response:
    """Durations (s) and distances (m) from every source to every destination; null where unreachable."""
    svc = _svc(request)
    limit = svc.settings.max_table_size
    dst_coords = body.destinations if body.destinations is not None else body.sources
    if len(body.sources) > limit or len(dst_coords) > limit:
        raise TooBig(f"a table has at most {limit} sources and {limit} destinations")
    if not dst_coords:
        raise InvalidValue("destinations must not be empty")
    points = [(float(a), float(b)) for a, b in body.sources]
    if body.destinations is not None:
        points += [(float(a), float(b)) for a, b in dst_coords]
    mask = svc.exclude_mask(body.exclude)
    snapped = svc.snap_all(points, default_radius_m=svc.settings.snap_radius_m, detail=True, exclude_mask=mask)
    src = snapped[: len(body.sources)]
    dst = src if body.destinations is None else snapped[len(body.sources) :]
    tbl = await svc.table(src, dst, body.exclude)
    return _json(
        {
            "durations_s": np.round(np.asarray(tbl.durations_s, dtype=np.float64), 1),
            "distances_m": np.round(np.asarray(tbl.distances_m, dtype=np.float64), 1),
            "sources": [_waypoint(ph) for ph in src],
            "destinations": [_waypoint(ph) for ph in dst],
        }
    )

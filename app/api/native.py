"""The native API: GeoJSON routes (`GET`/`POST /route`), `GET /nearest`, `POST /table`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any

import numpy as np
import orjson
from fastapi import APIRouter, Body, Query, Request
from starlette.responses import JSONResponse, Response

from app.api import timing
from app.api.geometry import simplify, valid_lonlat
from app.api.instructions import language_of
from app.api.openapi_limits import limit
from app.api.schemas import (
    ARRIVE_BY,
    DEPART_AT,
    LANGUAGE,
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
from app.api.schemas import (
    IsochroneRequest as IsochroneBody,
)
from app.api.service import Service
from app.engine import facade
from app.engine.errors import InvalidValue, TooBig
from app.engine.facade import IsochroneRequest, NearestRequest, Waypoints
from app.engine.types import Leg, Phantom, Route, RouteResult

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
    if not valid_lonlat(lon, lat):
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


def _steps(svc: Service, language: str, legs: list[Leg]) -> list[list[dict[str, Any]]]:
    """Per leg, its maneuvers with their text (`schemas.Step`): the OSRM steps and instructions of the same legs."""
    from app.api.osrm.steps import add_instructions, build_steps

    out = []
    for i, leg in enumerate(legs):
        steps = build_steps(leg, svc.opened.roads, lambda _: None)
        add_instructions(steps, language, i, len(legs))
        out.append(
            [
                {
                    "instruction": s["maneuver"]["instruction"],
                    "type": s["maneuver"]["type"],
                    "modifier": s["maneuver"].get("modifier"),
                    "name": s["name"],
                    "location": s["maneuver"]["location"],
                    "distance_m": s["distance"],
                    "duration_s": s["duration"],
                }
                for s in steps
            ]
        )
    return out


def feature(
    route: Route,
    phantoms: list[Phantom],
    overview: str = "full",
    result: RouteResult | None = None,
    trace: list[dict[str, Any]] | None = None,
    exclude: list[str] | None = None,
    custom_model: dict[str, Any] | None = None,
    steps_of: Callable[[list[Leg]], list[list[dict[str, Any]]]] | None = None,
) -> dict[str, Any]:
    """The route as a GeoJSON Feature (see `schemas.RouteFeature`); with `steps_of`, each leg's steps."""
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
    if steps_of is not None:
        for obj, steps in zip(legs, steps_of(route.legs), strict=True):
            obj["steps"] = steps
    total = _stats(
        sum(leg.stats.settled for leg in route.legs),
        sum(leg.stats.relaxed for leg in route.legs),
        sum(leg.stats.micros for leg in route.legs),
    )
    if result is not None and result.compile_s > 0:  # a first use: micros holds that compile (or load) time too
        total["compile_ms"] = _r1(result.compile_s * 1000)
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
    if custom_model is not None:
        props["custom_model"] = custom_model
    if result is not None and route is result.best and len(result.routes) > 1:
        props["alternatives"] = [
            feature(r, phantoms, overview, None, None, exclude, None, steps_of) for r in result.routes[1:]
        ]
    return {
        "type": "Feature",
        "geometry": {"type": "LineString", "coordinates": np.round(coords, 7)},
        "properties": props,
    }


async def _route(svc: Service, req: facade.RouteRequest, overview: str, language: str | None = None) -> Response:
    if req.alternatives and len(req.waypoints.coordinates) != 2:
        raise InvalidValue("alternatives are looked for between two points only: drop the via points")
    if language is not None:
        language_of(language)
    answer = await svc.route(req)
    trace = answer.traces if req.trace else None
    steps_of = None if language is None else lambda legs: _steps(svc, language, legs)
    body = feature(
        answer.best, answer.phantoms, overview, answer.result, trace, answer.exclude, answer.custom_model, steps_of
    )
    if answer.departure is not None:
        body["properties"]["departure"], body["properties"]["arrival"] = answer.departure, answer.arrival
    return _json(body, _JSON)


def _waypoints(
    svc: Service, coords: list[tuple[float, float]], radiuses: list[float | None] | None = None
) -> Waypoints:
    """A native request's points: the native snapping radius, and NoSegment saying how far the nearest road is."""
    if radiuses is not None and len(radiuses) != len(coords):
        raise InvalidValue(f"radiuses has {len(radiuses)} entries for {len(coords)} points")
    return Waypoints(coords, radiuses, default_radius_m=svc.settings.snap_radius_m, detail=True)


def _areas_limits(svc: Service) -> dict[str, int]:
    return {"max_vertices": svc.settings.max_vertices, "max_polygons": svc.settings.max_polygons}


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
        int,
        Query(
            ge=0,
            description="also look for up to this many alternative routes (no via points)",
            json_schema_extra=limit("max_alternatives"),
        ),
    ] = 0,
    language: Annotated[str | None, Query(description=LANGUAGE, examples=["de"])] = None,
    depart_at: Annotated[str | None, Query(description=DEPART_AT, examples=["2026-03-02T08:30"])] = None,
    arrive_by: Annotated[str | None, Query(description=ARRIVE_BY)] = None,
) -> Response:
    """The fastest route from `from` through each `via` point to `to`; `[lon, lat]` order throughout (RFC 7946).
    Alternatives, when found, are in `properties.alternatives` (each a Feature like this one)."""
    timing.start(request)
    points = [parse_lonlat(from_, "from")]
    if via:
        points += [parse_lonlat(p, "via") for p in via.split(";")]
    points.append(parse_lonlat(to, "to"))
    svc = _svc(request)
    areas = None
    if avoid:
        from app.engine.features.areas import parse_compact

        areas = parse_compact(avoid, **_areas_limits(svc))
    req = facade.RouteRequest(
        _waypoints(svc, points), algorithm, _exclude_list(exclude), areas, alternatives, trace, epsilon,
        depart_at=depart_at, arrive_by=arrive_by,
    )  # fmt: skip
    return await _route(svc, req, overview, language)


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
    timing.start(request)
    svc = _svc(request)
    coords = [(float(a), float(b)) for a, b in body.coordinates]
    areas = None
    if body.avoid is not None:
        from app.engine.features.areas import parse_areas

        areas = parse_areas(body.avoid, **_areas_limits(svc))
    req = facade.RouteRequest(
        _waypoints(svc, coords, body.radiuses),
        body.algorithm,
        body.exclude,
        areas,
        body.alternatives,
        body.trace,
        body.epsilon,
        custom_model=_model(body.custom_model),
        depart_at=body.depart_at,
        arrive_by=body.arrive_by,
    )
    return await _route(svc, req, body.overview, body.language)


def _model(obj: dict[str, Any] | None) -> facade.CustomModel | None:
    """A request's custom model, parsed and checked (`InvalidValue` naming the rule: a 400)."""
    return None if obj is None else facade.Engine.parse_model(obj)


def _limits(text: str, what: str, count: int, top: float) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InvalidValue(f"{what} must be comma-separated numbers, got {text[:40]!r}") from None
    if not values or len(values) > count:
        raise InvalidValue(f"{what}: give 1 to {count} values")
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
    avoid: Annotated[
        str | None, Query(description="areas not to enter: polygons `lon,lat;lon,lat;...` separated by `|`")
    ] = None,
    depart_at: Annotated[str | None, Query(description=DEPART_AT)] = None,
    arrive_by: Annotated[str | None, Query(description="refused: an isochrone takes depart_at")] = None,
) -> Response:
    """One GeoJSON Polygon/MultiPolygon Feature per limit, largest first, covering the roads reached within it (and
    `buffer_m` around them), with holes where the network is not reached; built from a one-to-all search with a
    cutoff, partly reached roads cut where the limit runs out. `avoid`: no road touching the areas is used (the
    areas' roads are closed as a custom model closes roads)."""
    timing.start(request)
    svc = _svc(request)
    lon, lat = parse_lonlat(point, "point")
    if (minutes is None) == (distance_m is None):
        raise InvalidValue("give either minutes or distance_m")
    st = svc.settings
    if minutes is not None:
        values = _limits(minutes, "minutes", st.max_contours, st.max_minutes)
        metric, limits = "duration", [v * 60.0 for v in values]
    else:
        values = _limits(distance_m or "", "distance_m", st.max_contours, st.max_distance_m)
        metric, limits = "distance", values
    areas = None
    if avoid:
        from app.engine.features.areas import parse_compact

        areas = parse_compact(avoid, **_areas_limits(svc))
    req = IsochroneRequest(
        _waypoints(svc, [(lon, lat)]), limits, metric, reverse, _exclude_list(exclude), buffer_m, avoid=areas,
        depart_at=depart_at, arrive_by=arrive_by,
    )  # fmt: skip
    return await _isochrone(svc, req, values)


def _geo_areas(svc: Service, obj: dict[str, Any] | None) -> Any:
    """A body's areas to avoid (GeoJSON), parsed and checked."""
    if obj is None:
        return None
    from app.engine.features.areas import parse_areas

    return parse_areas(obj, **_areas_limits(svc))


@router.post(
    "/isochrone",
    response_model=IsochroneCollection,
    response_class=GeoJSONResponse,
    responses=_ERRORS,
    summary="Isochrones, with a custom model",
)
async def post_isochrone(request: Request, body: Annotated[IsochroneBody, Body()]) -> Response:
    """The same as `GET /isochrone` as a JSON body, which may carry a custom model (GraphHopper's): the bands are
    then those of the model's travel times, without the roads it closes."""
    timing.start(request)
    svc = _svc(request)
    st = svc.settings
    if (body.minutes is None) == (body.distance_m is None):
        raise InvalidValue("give either minutes or distance_m")
    if body.minutes is not None:
        values = _limits(",".join(map(str, body.minutes)), "minutes", st.max_contours, st.max_minutes)
        metric, limits = "duration", [v * 60.0 for v in values]
    else:
        given = ",".join(map(str, body.distance_m or []))
        values = _limits(given, "distance_m", st.max_contours, st.max_distance_m)
        metric, limits = "distance", values
    lon, lat = float(body.point[0]), float(body.point[1])
    req = IsochroneRequest(
        _waypoints(svc, [(lon, lat)]), limits, metric, body.reverse, body.exclude, body.buffer_m,
        _model(body.custom_model), _geo_areas(svc, body.avoid), body.depart_at, body.arrive_by,
    )  # fmt: skip
    return await _isochrone(svc, req, values)


async def _isochrone(svc: Service, req: IsochroneRequest, values: list[float]) -> Response:
    metric, reverse, buffer_m = req.metric, req.reverse, req.buffer_m
    answer = await svc.isochrone(req)
    features = []
    for value, c in zip(values[::-1], answer.contours, strict=True):
        props = {
            "value": value,
            "unit": "min" if metric == "duration" else "m",
            "metric": metric,
            "reverse": reverse,
            "buffer_m": buffer_m,
            "tolerance_m": round(c.tolerance_m, 2),
            "pieces": c.pieces,
        }
        features.append({"type": "Feature", "geometry": c.geometry, "properties": props})
    ph = answer.phantom
    info: dict[str, Any] = {"point": [ph.lon, ph.lat], "snap_distance_m": _r1(ph.distance_m),
                             "settled": answer.settled}  # fmt: skip
    if answer.custom_model is not None:
        info["custom_model"] = answer.custom_model
    if answer.departure is not None:
        info["departure"] = answer.departure
    return _json({"type": "FeatureCollection", "features": features, "properties": info}, _JSON)


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
    number: Annotated[
        int, Query(ge=1, description="how many nearest points", json_schema_extra=limit("max_nearest"))
    ] = 1,
    radius_m: Annotated[float | None, Query(gt=0, allow_inf_nan=False, description="search radius")] = None,
    exclude: Annotated[str | None, Query(description="road classes that do not count: `motorway`")] = None,
) -> Response:
    """The `number` nearest snapped points on distinct road segments, nearest first, as GeoJSON Points."""
    timing.start(request)
    svc = _svc(request)
    lon, lat = parse_lonlat(point, "point")
    radius = svc.settings.snap_radius_m if radius_m is None else radius_m
    found = svc.nearest(NearestRequest(lon, lat, number, radius, _exclude_list(exclude)))
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
    timing.start(request)
    svc = _svc(request)
    limit = svc.settings.max_table_size
    dst_coords = body.destinations if body.destinations is not None else body.sources
    if len(body.sources) > limit or len(dst_coords) > limit:
        raise TooBig(f"a table has at most {limit} sources and {limit} destinations")
    if not dst_coords:
        raise InvalidValue("destinations must not be empty")
    points = [(float(a), float(b)) for a, b in body.sources]
    n = len(points)
    destinations = None
    if body.destinations is not None:
        points += [(float(a), float(b)) for a, b in dst_coords]
        destinations = list(range(n, len(points)))
    req = facade.TableRequest(
        _waypoints(svc, points), list(range(n)), destinations, body.exclude, _model(body.custom_model),
        _geo_areas(svc, body.avoid), body.depart_at, body.arrive_by,
    )  # fmt: skip
    model = req.model
    tbl, src, dst = await svc.table(req)
    out: dict[str, Any] = {
        "durations_s": np.round(np.asarray(tbl.durations_s, dtype=np.float64), 1),
        "distances_m": np.round(np.asarray(tbl.distances_m, dtype=np.float64), 1),
        "sources": [_waypoint(ph) for ph in src],
        "destinations": [_waypoint(ph) for ph in dst],
    }
    if model is not None:
        out["custom_model"] = svc.opened.model_info(model)
    if tbl.departure is not None:
        out["departure"] = tbl.departure
    return _json(out)

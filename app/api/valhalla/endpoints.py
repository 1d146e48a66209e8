"""The Valhalla dialect's endpoints under `/valhalla/`: route, optimized_route, sources_to_targets, isochrone,
locate (each POST with a JSON body, or GET with it in `?json=`) and status. Each reads Valhalla's request
(`grammar`), asks the service (the engine's door) and writes Valhalla's answer; every refusal is Valhalla's error
(`errors.ValhallaRoute`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import numpy as np
import orjson
from fastapi import APIRouter, Body, Query, Request
from starlette.responses import Response

from app.api import timing
from app.api.dialects import largest_polygon
from app.api.service import Service
from app.api.valhalla import grammar, times
from app.api.valhalla.errors import (
    MAX_CONTOURS,
    MAX_DISTANCE,
    MAX_TIME,
    NO_SOURCES_TARGETS,
    NOT_IMPLEMENTED,
    PARSE,
    RESPONSES,
    ValhallaError,
    ValhallaRoute,
)
from app.api.valhalla.schemas import (
    DirectionsOptions,
    IsochroneBody,
    IsochroneResponse,
    LocateBody,
    Located,
    Location,
    MatrixBody,
    MatrixResponse,
    RouteBody,
    RouteResponse,
    StatusResponse,
)
from app.api.valhalla.trips import trip
from app.engine.facade import (
    IsochroneRequest,
    NearestRequest,
    NoSegment,
    RouteRequest,
    TableRequest,
    TripRequest,
    Waypoints,
)

PREFIX = "/valhalla"
router = APIRouter(prefix=PREFIX, tags=["valhalla"], route_class=ValhallaRoute)
ACTIONS = ["status", "route", "sources_to_targets", "optimized_route", "isochrone", "locate"]
# a URL's 65,535 bytes (`app.http_protocol.MAX_URL_BYTES`) hold 5,000 characters however they are percent-encoded
# (12 bytes for a 4-byte character); longer requests are POSTs
JSON = Query(alias="json", max_length=5_000, description="the request's JSON, as the POST body (longer: POST it)")
_ORJSON = orjson.OPT_SERIALIZE_NUMPY
_COLORS = ("ff0000", "00ff00", "0000ff", "ffff00", "ff00ff", "00ffff", "800000", "008000", "000080", "808000")


def _svc(request: Request) -> Service:
    return request.app.state.service


def _json(body: Any) -> Response:
    return Response(orjson.dumps(body, option=_ORJSON), media_type="application/json")


def _waypoints(svc: Service, locations: list[Location]) -> Waypoints:
    return Waypoints(
        grammar.points(locations), grammar.radiuses(locations), default_radius_m=svc.settings.snap_radius_m
    )


def _with_id(body: dict[str, Any], id_: str | int | None) -> dict[str, Any]:
    if id_ is not None:
        body["id"] = id_
    return body


def _areas(svc: Service, b: Any) -> Any:
    """The request's polygons to exclude (`exclude_polygons`, or its older name `avoid_polygons`) as avoid areas."""
    polygons = b.avoid_polygons if b.avoid_polygons is not None else b.exclude_polygons
    return grammar.areas(polygons, svc.settings.max_vertices, svc.settings.max_polygons)


def _when(b: Any, action: str, cost: grammar.Costing, areas: Any, alternates: int = 0) -> times.When:
    """The request's `date_time` as the engine's departure time, refused (107) beside what the engine's
    departure times do not take: a custom model (truck, top_speed, custom_model), polygons, alternates."""
    when = times.when(b.date_time, action)
    if when and cost.model is not None:
        times.refuse_with("truck, top_speed or custom_model costing options")
    if when and areas is not None:
        times.refuse_with("exclude_polygons")
    if when and alternates:
        times.refuse_with("alternates")
    return when


def _given(options: DirectionsOptions | None, name: str) -> Any:
    return getattr(options, name) if options is not None and name in options.model_fields_set else None


def _directions(b: RouteBody) -> tuple[str, str, str, str]:
    """A route request's directions options (in `directions_options` or, as Valhalla also reads them, at the top):
    units, the language tag, the instructions' language, the directions type (`none` when narrative is false)."""
    d = b.directions_options
    units = _given(d, "units") or b.units or "kilometers"
    tag = _given(d, "language") or b.language or "en-US"
    kind = _given(d, "directions_type") or b.directions_type or "instructions"
    if _given(d, "narrative") is False or b.narrative is False:
        kind = "none"
    return units, tag, grammar.language(tag), kind


async def _route(request: Request, b: RouteBody) -> Response:
    timing.start(request)
    svc = _svc(request)
    engine = svc.opened
    grammar.refuse(avoid_locations=b.avoid_locations, exclude_locations=b.exclude_locations)
    cost = grammar.costing(engine, b.costing, b.costing_options)
    areas = _areas(svc, b)
    units, tag, language, kind = _directions(b)
    grammar.check_location_count(len(b.locations), svc.settings.max_via_points)
    alternates = min(b.alternates, engine.limits.max_alternatives) if len(b.locations) == 2 else 0
    when = _when(b, "route", cost, areas, alternates)
    req = RouteRequest(
        _waypoints(svc, b.locations), None, exclude=cost.exclude, avoid=areas, alternatives=alternates,
        custom_model=cost.model, depart_at=when.depart_at, arrive_by=when.arrive_by,
    )  # fmt: skip
    answer = await svc.route(req)
    locations = [
        {"type": loc.type, "lat": loc.lat, "lon": loc.lon, "original_index": i} for i, loc in enumerate(b.locations)
    ]
    if answer.departure is not None:
        legs = [leg.duration_s for leg in answer.best.legs]
        stamps = times.location_times(answer.departure, legs, engine.info().get("timezone"))
        locations = times.with_times(locations, stamps)
    travel = cost.travel
    trips = [
        trip(
            engine,
            r,
            [dict(loc) for loc in locations],
            miles=grammar.miles(units),
            language=language if kind == "instructions" else None,
            language_tag=tag,
            shape_format=b.shape_format,
            travel=travel,
            with_maneuvers=kind != "none",
        )  # fmt: skip
        for r in answer.result.routes[: 1 + alternates]
    ]
    body: dict[str, Any] = {"trip": trips[0]}
    if alternates:
        body["alternates"] = [{"trip": t} for t in trips[1:]]
    return _json(_with_id(body, b.id))


@router.post("/route", response_model=RouteResponse, responses=RESPONSES, summary="Valhalla: route")
async def post_route(request: Request, body: Annotated[RouteBody, Body()]) -> Response:
    """Valhalla's `/route`: `locations`, `costing`, `directions_options`; answered as Valhalla's `trip`."""
    return await _route(request, body)


@router.get("/route", response_model=RouteResponse, responses=RESPONSES, summary="Valhalla: route (GET ?json=)")
async def get_route(request: Request, json: Annotated[str, JSON]) -> Response:
    """Valhalla's `/route` with the request in `?json=`."""
    return await _route(request, grammar.body(RouteBody, json))


async def _optimized_route(request: Request, b: RouteBody) -> Response:
    timing.start(request)
    svc = _svc(request)
    engine = svc.opened
    grammar.refuse(avoid_locations=b.avoid_locations, exclude_locations=b.exclude_locations)
    if b.date_time is not None or b.avoid_polygons or b.exclude_polygons:
        raise ValhallaError(NOT_IMPLEMENTED, "date_time and exclude_polygons on optimized_route")
    cost = grammar.costing(engine, b.costing, b.costing_options)
    if cost.model is not None:
        raise ValhallaError(NOT_IMPLEMENTED, "truck, top_speed and custom_model on optimized_route")
    units, tag, language, kind = _directions(b)
    grammar.check_location_count(len(b.locations), svc.settings.max_trip_size)
    req = TripRequest(_waypoints(svc, b.locations), roundtrip=False, source="first", destination="last",
                      exclude=cost.exclude)  # fmt: skip
    answer = await svc.trip(req)
    locations = [
        {"type": loc.type, "lat": loc.lat, "lon": loc.lon, "original_index": i}
        for i, loc in ((i, b.locations[i]) for i in answer.order)
    ]
    body = {
        "trip": trip(
            engine,
            answer.route,
            locations,
            miles=grammar.miles(units),
            language=language if kind == "instructions" else None,
            language_tag=tag,
            shape_format=b.shape_format,
            travel=cost.travel,
            with_maneuvers=kind != "none",
        )  # fmt: skip
    }
    return _json(_with_id(body, b.id))


@router.post("/optimized_route", response_model=RouteResponse, responses=RESPONSES, summary="Valhalla: optimized route")
async def post_optimized_route(request: Request, body: Annotated[RouteBody, Body()]) -> Response:
    """Valhalla's `/optimized_route`: the locations between the first and the last (both fixed) in the order that
    takes least time (starroute's trip), answered as a `trip` whose `locations` are in that order, each with its
    `original_index`."""
    return await _optimized_route(request, body)


@router.get(
    "/optimized_route", response_model=RouteResponse, responses=RESPONSES, summary="Valhalla: optimized route (GET)"
)
async def get_optimized_route(request: Request, json: Annotated[str, JSON]) -> Response:
    """Valhalla's `/optimized_route` with the request in `?json=`."""
    return await _optimized_route(request, grammar.body(RouteBody, json))


async def _matrix(request: Request, b: MatrixBody) -> Response:
    timing.start(request)
    svc = _svc(request)
    engine = svc.opened
    grammar.refuse(avoid_locations=b.avoid_locations, exclude_locations=b.exclude_locations)
    sources, targets = b.sources or b.locations, b.targets or b.locations
    if sources is None or targets is None:
        raise ValhallaError(NO_SOURCES_TARGETS)
    cost = grammar.costing(engine, b.costing, b.costing_options)
    areas = _areas(svc, b)
    when = _when(b, "sources_to_targets", cost, areas)
    n = len(sources)
    req = TableRequest(
        _waypoints(svc, sources + targets), list(range(n)), list(range(n, n + len(targets))), cost.exclude,
        cost.model, areas, depart_at=when.depart_at,
    )  # fmt: skip
    tbl, _, _ = await svc.table(req)
    unit_m = 1609.344 if grammar.miles(b.units) else 1000.0
    dur = np.asarray(tbl.durations_s, dtype=np.float64)
    dist = np.asarray(tbl.distances_m, dtype=np.float64)
    zone = engine.info().get("timezone")

    def cell(i: int, j: int) -> dict[str, Any]:
        if not np.isfinite(dur[i, j]):
            return {"from_index": i, "to_index": j, "time": None, "distance": None}
        out: dict[str, Any] = {"from_index": i, "to_index": j, "time": int(round(float(dur[i, j]))),
               "distance": round(float(dist[i, j]) / unit_m, 3)}  # fmt: skip
        if tbl.departure is not None:  # Valhalla's arrival at the target
            out |= times.stamp(tbl.departure, float(dur[i, j]), zone)
        return out

    rows = [[cell(i, j) for j in range(len(targets))] for i in range(n)]
    body = {
        "sources_to_targets": rows,
        "sources": [{"lat": s.lat, "lon": s.lon} for s in sources],
        "targets": [{"lat": t.lat, "lon": t.lon} for t in targets],
        "units": "miles" if grammar.miles(b.units) else "kilometers",
    }
    return _json(_with_id(body, b.id))


@router.post("/sources_to_targets", response_model=MatrixResponse, responses=RESPONSES, summary="Valhalla: matrix")
async def post_matrix(request: Request, body: Annotated[MatrixBody, Body()]) -> Response:
    """Valhalla's `/sources_to_targets`: time (s) and distance (units) from each source to each target, null
    where unreachable."""
    return await _matrix(request, body)


@router.get(
    "/sources_to_targets", response_model=MatrixResponse, responses=RESPONSES, summary="Valhalla: matrix (GET ?json=)"
)
async def get_matrix(request: Request, json: Annotated[str, JSON]) -> Response:
    """Valhalla's `/sources_to_targets` with the request in `?json=`."""
    return await _matrix(request, grammar.body(MatrixBody, json))


def _contours(b: IsochroneBody, most: int, max_minutes: float, max_m: float) -> tuple[str, list[float]]:
    """(metric, limits in seconds or metres) of the contours: all times or all distances."""
    times = [c.time for c in b.contours if c.time is not None]
    dists = [c.distance for c in b.contours if c.distance is not None]
    if len(b.contours) > most:
        raise ValhallaError(MAX_CONTOURS, f"at most {most} contours on this server")
    if any((c.time is None) == (c.distance is None) for c in b.contours) or (times and dists):
        raise ValhallaError(PARSE, "each contour has a time (minutes) or a distance (km), all of one kind")
    if times:
        if max(times) > max_minutes:
            raise ValhallaError(MAX_TIME, f"contours of at most {max_minutes:g} minutes on this server")
        return "duration", [t * 60.0 for t in times]
    if max(dists) * 1000.0 > max_m:
        raise ValhallaError(MAX_DISTANCE, f"contours of at most {max_m / 1000:g} km on this server")
    return "distance", [d * 1000.0 for d in dists]


async def _isochrone(request: Request, b: IsochroneBody) -> Response:
    timing.start(request)
    svc = _svc(request)
    engine = svc.opened
    grammar.refuse(
        avoid_locations=b.avoid_locations, exclude_locations=b.exclude_locations, show_locations=b.show_locations
    )
    grammar.check_location_count(len(b.locations), 1)
    cost = grammar.costing(engine, b.costing, b.costing_options)
    areas = _areas(svc, b)
    when = _when(b, "isochrone", cost, areas)
    lim = engine.limits
    metric, limits = _contours(b, lim.max_contours, lim.max_minutes, lim.max_distance_m)
    colors = {
        round(v, 6): c.color or _COLORS[k % len(_COLORS)]
        for k, (v, c) in enumerate(zip(limits, b.contours, strict=True))
    }
    req = IsochroneRequest(
        _waypoints(svc, b.locations), sorted(set(limits)), metric, b.reverse, cost.exclude, custom_model=cost.model,
        avoid=areas, depart_at=when.depart_at,
    )  # fmt: skip
    answer = await svc.isochrone(req)
    scale = 60.0 if metric == "duration" else 1000.0
    features = []
    for c in sorted(answer.contours, key=lambda c: -c.value):
        value = round(c.value / scale, 6)
        polygon = largest_polygon(c.geometry)
        geometry = polygon if b.polygons else {"type": "LineString", "coordinates": polygon["coordinates"][0]}
        color = "#" + colors.get(round(c.value, 6), "000000")
        features.append({
            "type": "Feature",
            "geometry": geometry,
            "properties": {
                "contour": value, "metric": "time" if metric == "duration" else "distance", "color": color,
                "fill": color, "fillColor": color, "opacity": 0.33, "fill-opacity": 0.33, "fillOpacity": 0.33,
            },
        })  # fmt: skip
    return _json(_with_id({"type": "FeatureCollection", "features": features}, b.id))


@router.post("/isochrone", response_model=IsochroneResponse, responses=RESPONSES, summary="Valhalla: isochrone")
async def post_isochrone(request: Request, body: Annotated[IsochroneBody, Body()]) -> Response:
    """Valhalla's `/isochrone`: a GeoJSON FeatureCollection, one feature per contour, largest first."""
    return await _isochrone(request, body)


@router.get("/isochrone", response_model=IsochroneResponse, responses=RESPONSES, summary="Valhalla: isochrone (GET)")
async def get_isochrone(request: Request, json: Annotated[str, JSON]) -> Response:
    """Valhalla's `/isochrone` with the request in `?json=`."""
    return await _isochrone(request, grammar.body(IsochroneBody, json))


def _locate(request: Request, b: LocateBody) -> Response:
    svc = _svc(request)
    engine = svc.opened
    cost = grammar.costing(engine, b.costing, b.costing_options)
    grammar.check_location_count(len(b.locations), svc.settings.max_nearest)
    out: list[dict[str, Any]] = []
    grammar.points(b.locations, poles=True)
    for loc in b.locations:
        lon, lat = loc.lon, loc.lat
        radius = loc.radius if loc.radius is not None else svc.settings.snap_radius_m
        try:
            found = [] if grammar.at_pole(lat) else svc.nearest(NearestRequest(lon, lat, 1, radius, cost.exclude))
        except NoSegment:
            found = []
        edges = []
        for ph in found:
            before, after = (
                (ph.fwd_dist_before, ph.fwd_dist_after) if ph.fwd_arc >= 0 else (ph.bwd_dist_after, ph.bwd_dist_before)
            )
            edge: dict[str, Any] = {
                "correlated_lat": round(ph.lat, 6),
                "correlated_lon": round(ph.lon, 6),
                "distance": round(ph.distance_m, 3),
                "percent_along": round(before / (before + after), 5) if before + after > 0 else 0.0,
                "side_of_street": "neither",
            }
            if ph.name:
                edge["names"] = [ph.name]
            edges.append(edge)
        out.append({"input_lat": lat, "input_lon": lon, "edges": edges or None, "nodes": [] if edges else None})
    return _json(out)


@router.post("/locate", response_model=list[Located], responses=RESPONSES, summary="Valhalla: locate")
async def post_locate(request: Request, body: Annotated[LocateBody, Body()]) -> Response:
    """Valhalla's `/locate`: the road nearest each location within its radius (default: the server's snapping
    radius; `edges` null where none is near)."""
    return _locate(request, body)


@router.get("/locate", response_model=list[Located], responses=RESPONSES, summary="Valhalla: locate (GET ?json=)")
async def get_locate(request: Request, json: Annotated[str, JSON]) -> Response:
    """Valhalla's `/locate` with the request in `?json=`."""
    return _locate(request, grammar.body(LocateBody, json))


@router.get("/status", response_model=StatusResponse, responses=RESPONSES, summary="Valhalla: status")
async def get_status(request: Request) -> Response:
    """Valhalla's `/status`: the version, when the graph was built, the actions this dialect answers, its bbox."""
    svc = _svc(request)
    engine = svc.opened
    built = engine.meta.built_at
    try:
        modified = int(datetime.fromisoformat(built).timestamp()) if built else 0
    except ValueError:
        modified = 0
    bbox = engine.info().get("bbox")
    body: dict[str, Any] = {
        "version": svc.version,
        "tileset_last_modified": modified,
        "available_actions": ACTIONS,
        "has_tiles": True,
        "has_admins": False,
        "has_timezones": False,
        "has_live_traffic": False,
    }
    if bbox:
        w, s, e, n = bbox
        ring = [[w, s], [e, s], [e, n], [w, n], [w, s]]
        body["bbox"] = {"type": "Polygon", "coordinates": [ring]}
    return _json(body)

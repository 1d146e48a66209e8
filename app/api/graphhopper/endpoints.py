"""The GraphHopper dialect's endpoints under `/graphhopper/`: route (GET and POST), matrix (GET and POST),
isochrone, info. Each parses GraphHopper's options (`grammar`), asks the service (the engine's door) and writes
GraphHopper's answer; every refusal is GraphHopper's 400 (`errors.GraphHopperRoute`)."""

from __future__ import annotations

import time
from typing import Annotated, Any

import numpy as np
import orjson
from fastapi import APIRouter, Body, Query, Request
from starlette.responses import Response

from app.api import timing
from app.api.dialects import largest_polygon
from app.api.graphhopper import grammar
from app.api.graphhopper.errors import (
    CONNECTION_NOT_FOUND,
    POINT_NOT_FOUND,
    RESPONSES,
    GraphHopperError,
    GraphHopperRoute,
)
from app.api.graphhopper.paths import path
from app.api.graphhopper.schemas import (
    InfoResponse,
    IsochroneResponse,
    MatrixBody,
    MatrixResponse,
    RouteBody,
    RouteResponse,
)
from app.api.service import Service
from app.engine import facade
from app.engine.facade import EngineError, Waypoints

PREFIX = "/graphhopper"
router = APIRouter(prefix=PREFIX, tags=["graphhopper"], route_class=GraphHopperRoute)
COPYRIGHTS = ["starroute", "OpenStreetMap contributors"]
_ORJSON = orjson.OPT_SERIALIZE_NUMPY


def _svc(request: Request) -> Service:
    return request.app.state.service


def _answer(body: dict[str, Any], t0: float) -> Response:
    body["info"] = {"copyrights": COPYRIGHTS, "took": int(round((time.perf_counter() - t0) * 1000))}
    return Response(orjson.dumps(body, option=_ORJSON), media_type="application/json")


def _waypoints(svc: Service, points: list[tuple[float, float]]) -> Waypoints:
    return Waypoints(points, None, default_radius_m=svc.settings.snap_radius_m)


def _not_found(exc: EngineError, points: list[tuple[float, float]]) -> EngineError:
    """The engine's NoSegment as GraphHopper's PointNotFoundException ("Cannot find point i: lat,lon")."""
    if exc.code != "NoSegment":
        return exc
    i = getattr(exc, "index", None) or 0
    lon, lat = points[i] if i < len(points) else points[0]
    return GraphHopperError(f"Cannot find point {i}: {lat},{lon}", POINT_NOT_FOUND)


async def _route(request: Request, opts: grammar.RouteOptions, paths_wanted: int) -> Response:
    timing.start(request)
    t0 = time.perf_counter()
    svc = _svc(request)
    engine = svc.opened
    grammar.check_profile(engine, opts.profile)
    language = grammar.language(opts.locale) if opts.instructions else None
    details = grammar.check_details(opts.details)
    grammar.check_bounds(engine, opts.points)
    algorithm = None
    if opts.ch_disable and opts.custom_model is None:
        algorithm = "alt" if "alt" in engine.algorithms else "bidirectional-astar"
    req = facade.RouteRequest(
        _waypoints(svc, opts.points), algorithm, alternatives=paths_wanted - 1,
        custom_model=grammar.model(opts.custom_model),
    )  # fmt: skip
    try:
        answer = await svc.route(req)
    except EngineError as exc:
        raise _not_found(exc, opts.points) from None
    routes = answer.result.routes[:paths_wanted]
    paths = [path(engine, r, answer.phantoms, opts.points_encoded, opts.calc_points, language, details) for r in routes]
    return _answer({"paths": paths}, t0)


@router.get("/route", response_model=RouteResponse, responses=RESPONSES, summary="GraphHopper: route")
async def get_route(
    request: Request,
    point: Annotated[list[str], Query(description="`lat,lon`, two or more", examples=[["43.7311,7.4197"]])],
    profile: Annotated[str | None, Query(description="car, bike or foot: the graph's profile")] = None,
    points_encoded: Annotated[bool, Query(description="polyline (precision 5), else GeoJSON")] = True,
    instructions: Annotated[bool, Query(description="turn instructions with text")] = True,
    locale: Annotated[str, Query(max_length=40, description="instruction language: de, en_US, ...")] = "en",
    calc_points: bool = True,
    elevation: Annotated[bool, Query(description="refused when true: no elevation data")] = False,
    details: Annotated[list[str] | None, Query(description="path details: " + ", ".join(grammar.DETAILS))] = None,
    algorithm: Annotated[str | None, Query(max_length=40, description="alternative_route for alternatives")] = None,
    max_paths: Annotated[int | None, Query(alias="alternative_route.max_paths", ge=1, le=100)] = None,
    ch_disable: Annotated[bool, Query(alias="ch.disable", description="a search without the hierarchy")] = False,
    heading: Annotated[list[float] | None, Query(description="refused: not supported")] = None,
    type: Annotated[str, Query(pattern="^json$")] = "json",  # noqa: A002
) -> Response:
    """GraphHopper's `GET /route`: `point=lat,lon` repeated, answered as GraphHopper's `paths`."""
    svc = _svc(request)
    if len(point) < 2:
        raise GraphHopperError("At least 2 points have to be specified, but was:" + str(len(point)))
    if len(point) > svc.settings.max_via_points:
        raise GraphHopperError(f"Too many points: at most {svc.settings.max_via_points}")
    pts = [grammar.parse_point(p, "point", i) for i, p in enumerate(point)]
    grammar.refuse(elevation=elevation, headings=heading)
    opts = grammar.RouteOptions(
        pts, profile, points_encoded, instructions, locale, calc_points, details or [], 1, ch_disable
    )
    return await _route(request, opts, grammar.max_paths(algorithm, max_paths, svc.opened))


@router.post("/route", response_model=RouteResponse, responses=RESPONSES, summary="GraphHopper: route (JSON)")
async def post_route(request: Request, body: Annotated[RouteBody, Body()]) -> Response:
    """GraphHopper's `POST /route`: `points` as `[[lon, lat], ...]`, a custom model allowed."""
    svc = _svc(request)
    grammar.refuse(
        elevation=body.elevation, headings=body.headings, curbsides=[c for c in body.curbsides or [] if c != "any"],
        pass_through=body.pass_through, snap_preventions=body.snap_preventions, point_hints=body.point_hints,
        optimize=body.optimize,
    )  # fmt: skip
    pts = [grammar.check_point(float(a), float(b), i) for i, (a, b) in enumerate(body.points)]
    opts = grammar.RouteOptions(
        pts, body.profile, body.points_encoded, body.instructions, body.locale, body.calc_points, body.details, 1,
        body.ch_disable, body.custom_model,
    )  # fmt: skip
    return await _route(request, opts, grammar.max_paths(body.algorithm, body.max_paths, svc.opened))


async def _matrix(
    request: Request, sources: list[tuple[float, float]], targets: list[tuple[float, float]] | None,
    profile: str | None, out_arrays: list[str], fail_fast: bool, custom_model: dict[str, Any] | None = None,
) -> Response:  # fmt: skip
    timing.start(request)
    t0 = time.perf_counter()
    svc = _svc(request)
    engine = svc.opened
    grammar.check_profile(engine, profile)
    wanted = list(dict.fromkeys(out_arrays or ["times"]))
    if "weights" in wanted and (custom_model is not None or engine.meta.weight_name != "duration"):
        raise GraphHopperError("out_array=weights is only available for this graph's own duration weights")
    if not sources or (targets is not None and not targets):
        raise GraphHopperError("Either point or from_point and to_point have to be specified")
    points = sources + (targets or [])
    grammar.check_bounds(engine, points)
    n = len(sources)
    dst = list(range(n, len(points))) if targets is not None else None
    req = facade.TableRequest(_waypoints(svc, points), list(range(n)), dst, (), grammar.model(custom_model))
    try:
        tbl, _, _ = await svc.table(req)
    except EngineError as exc:
        raise _not_found(exc, points) from None
    dur = np.asarray(tbl.durations_s, dtype=np.float64)
    dist = np.asarray(tbl.distances_m, dtype=np.float64)
    if fail_fast and not np.isfinite(dur).all():
        raise GraphHopperError("Connection between locations not found", CONNECTION_NOT_FOUND)

    def cells(a: np.ndarray, digits: int | None) -> list[list[Any]]:
        return [[None if not np.isfinite(v) else (int(round(v)) if digits is None else round(float(v), digits))
                 for v in row] for row in a]  # fmt: skip

    body: dict[str, Any] = {}
    if "times" in wanted:
        body["times"] = cells(dur, None)
    if "distances" in wanted:
        body["distances"] = cells(dist, 1)
    if "weights" in wanted:
        body["weights"] = cells(dur, 1)
    return _answer(body, t0)


@router.get("/matrix", response_model=MatrixResponse, responses=RESPONSES, summary="GraphHopper: matrix")
async def get_matrix(
    request: Request,
    point: Annotated[list[str] | None, Query(description="`lat,lon`: from each to each")] = None,
    from_point: Annotated[list[str] | None, Query(description="`lat,lon` sources")] = None,
    to_point: Annotated[list[str] | None, Query(description="`lat,lon` destinations")] = None,
    profile: str | None = None,
    out_array: Annotated[list[str] | None, Query(description="times (s), distances (m), weights")] = None,
    fail_fast: Annotated[bool, Query(description="true: unreachable pairs are a 400 instead of null")] = False,
) -> Response:
    """GraphHopper's `GET /matrix`: times (s), distances (m) and weights; null where unreachable."""
    if point is not None and (from_point is not None or to_point is not None):
        raise GraphHopperError("Give either point or from_point and to_point, not both")
    for name in out_array or []:
        if name not in ("times", "distances", "weights"):
            raise GraphHopperError(f"out_array '{name[:40]}' is not one of times, distances, weights")
    if point is not None:
        src, dst = [grammar.parse_point(p, "point", i) for i, p in enumerate(point)], None
    else:
        src = [grammar.parse_point(p, "from_point", i) for i, p in enumerate(from_point or [])]
        dst = [grammar.parse_point(p, "to_point", i) for i, p in enumerate(to_point or [])]
    return await _matrix(request, src, dst, profile, out_array or [], fail_fast)


@router.post("/matrix", response_model=MatrixResponse, responses=RESPONSES, summary="GraphHopper: matrix (JSON)")
async def post_matrix(request: Request, body: Annotated[MatrixBody, Body()]) -> Response:
    """GraphHopper's `POST /matrix`: `points`, or `from_points` and `to_points`, as `[[lon, lat], ...]`."""
    if body.points is not None and (body.from_points is not None or body.to_points is not None):
        raise GraphHopperError("Give either points or from_points and to_points, not both")
    if body.points is not None:
        src, dst = [(float(a), float(b)) for a, b in body.points], None
    else:
        src = [(float(a), float(b)) for a, b in body.from_points or []]
        dst = [(float(a), float(b)) for a, b in body.to_points or []]
    return await _matrix(request, src, dst, body.profile, list(body.out_arrays), body.fail_fast, body.custom_model)


@router.get("/isochrone", response_model=IsochroneResponse, responses=RESPONSES, summary="GraphHopper: isochrone")
async def get_isochrone(
    request: Request,
    point: Annotated[str, Query(description="`lat,lon`", examples=["43.7311,7.4197"])],
    profile: str | None = None,
    time_limit: Annotated[float, Query(gt=0, allow_inf_nan=False, description="seconds")] = 600,
    distance_limit: Annotated[
        float | None, Query(allow_inf_nan=False, description="metres instead of time (<= 0: unset)")
    ] = None,
    buckets: Annotated[int, Query(ge=1, le=10, description="polygons at limit * (k+1) / buckets")] = 1,
    reverse_flow: Annotated[bool, Query(description="who reaches the point, instead of where it reaches")] = False,
    type: Annotated[str, Query(pattern="^json$")] = "json",  # noqa: A002
    debug: bool = False,
) -> Response:
    """GraphHopper's `GET /isochrone`: one GeoJSON Polygon Feature per bucket, `properties.bucket` from 0."""
    timing.start(request)
    t0 = time.perf_counter()
    svc = _svc(request)
    engine = svc.opened
    grammar.check_profile(engine, profile)
    lon, lat = grammar.parse_point(point, "point", 0)
    grammar.check_bounds(engine, [(lon, lat)])
    if buckets > engine.limits.max_contours:
        raise GraphHopperError(f"buckets must be at most {engine.limits.max_contours} on this server")
    if distance_limit is not None and distance_limit > 0:
        metric, limit = "distance", distance_limit
    else:
        metric, limit = "duration", time_limit
    limits = [limit * (k + 1) / buckets for k in range(buckets)]
    req = facade.IsochroneRequest(_waypoints(svc, [(lon, lat)]), limits, metric, reverse_flow)
    try:
        answer = await svc.isochrone(req)
    except EngineError as exc:
        raise _not_found(exc, [(lon, lat)]) from None
    polygons = [
        {"type": "Feature", "geometry": largest_polygon(c.geometry), "properties": {"bucket": k}}
        for k, c in enumerate(answer.contours[::-1])
    ]
    return _answer({"polygons": polygons}, t0)


@router.get("/info", response_model=InfoResponse, responses=RESPONSES, summary="GraphHopper: info")
async def get_info(request: Request) -> Response:
    """The graph's bounds and profile, as GraphHopper's `/info`."""
    svc = _svc(request)
    engine = svc.opened
    profile = grammar.graph_profile(engine)
    bbox = engine.info().get("bbox") or [-180.0, -90.0, 180.0, 90.0]
    body = {
        "bbox": bbox,
        "profiles": [{"name": profile}],
        "version": svc.version,
        "elevation": False,
        "features": {profile: {"elevation": False}},
    }
    return Response(orjson.dumps(body), media_type="application/json")

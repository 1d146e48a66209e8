"""The native API: GeoJSON routes (`GET`/`POST /route`), `GET /nearest`, `POST /table`."""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
import orjson
from fastapi import APIRouter, Body, Query, Request
from starlette.responses import JSONResponse, Response

from app.api.geometry import simplify
from app.api.schemas import (
    Algorithm,
    ErrorBody,
    NearestCollection,
    Overview,
    RouteFeature,
    RouteRequest,
    TableRequest,
    TableResponse,
)
from app.api.service import Service
from app.engine.errors import InvalidValue, TooBig
from app.engine.types import Phantom, Route

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


def _waypoint(ph: Phantom) -> dict[str, Any]:
    return {
        "location": [ph.lon, ph.lat],
        "input": [ph.input_lon, ph.input_lat],
        "distance_m": ph.distance_m,
        "name": ph.name,
    }


def _stats(settled: int, relaxed: int, micros: float) -> dict[str, Any]:
    return {"settled": int(settled), "relaxed": int(relaxed), "micros": float(micros)}


def feature(route: Route, phantoms: list[Phantom], overview: str = "full") -> dict[str, Any]:
    """The route as a GeoJSON Feature (see `schemas.RouteFeature`)."""
    coords = route.coordinates
    if overview == "simplified":
        coords = simplify(coords)
    elif overview == "false":
        coords = coords[[0, -1]] if coords.shape[0] else coords
    legs = [
        {
            "distance_m": leg.distance_m,
            "duration_s": leg.duration_s,
            "stats": _stats(leg.stats.settled, leg.stats.relaxed, leg.stats.micros),
        }
        for leg in route.legs
    ]
    total = _stats(
        sum(leg.stats.settled for leg in route.legs),
        sum(leg.stats.relaxed for leg in route.legs),
        sum(leg.stats.micros for leg in route.legs),
    )
    return {
        "type": "Feature",
        "geometry": {"type": "LineString", "coordinates": np.round(coords, 7)},
        "properties": {
            "distance_m": route.distance_m,
            "duration_s": route.duration_s,
            "algorithm": route.algorithm,
            "stats": total,
            "waypoints": [_waypoint(ph) for ph in phantoms],
            "legs": legs,
        },
    }


async def _route(
    svc: Service,
    coords: list[tuple[float, float]],
    algorithm: str,
    radiuses: list[float | None] | None,
    overview: str,
) -> Response:
    limit = svc.settings.max_via_points
    if len(coords) > limit:
        raise TooBig(f"Number of points {len(coords)} is higher than the maximum ({limit})")
    if radiuses is not None and len(radiuses) != len(coords):
        raise InvalidValue(f"radiuses has {len(radiuses)} entries for {len(coords)} points")
    svc.check_algorithm(algorithm)  # coordinates were range-checked by parse_lonlat / the pydantic schema
    phantoms = svc.snap_all(coords, radiuses, default_radius_m=svc.settings.snap_radius_m, detail=True)
    route = await svc.route(phantoms, algorithm)
    return _json(feature(route, phantoms, overview), _JSON)


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
    algorithm: Algorithm = "ch",
    overview: Overview = "full",
) -> Response:
    """The fastest route from `from` through each `via` point to `to`; `[lon, lat]` order throughout (RFC 7946)."""
    points = [parse_lonlat(from_, "from")]
    if via:
        points += [parse_lonlat(p, "via") for p in via.split(";")]
    points.append(parse_lonlat(to, "to"))
    return await _route(_svc(request), points, algorithm, None, overview)


@router.post(
    "/route",
    response_model=RouteFeature,
    response_class=GeoJSONResponse,
    responses=_ERRORS,
    summary="Route as a GeoJSON Feature",
)
async def post_route(request: Request, body: Annotated[RouteRequest, Body()]) -> Response:
    """The same as `GET /route` with the points as a JSON list `[[lon, lat], ...]` and optional snap radii."""
    coords = [(float(a), float(b)) for a, b in body.coordinates]
    return await _route(_svc(request), coords, body.algorithm, body.radiuses, body.overview)


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
) -> Response:
    """The `number` nearest snapped points on distinct road segments, nearest first, as GeoJSON Points."""
    svc = _svc(request)
    lon, lat = parse_lonlat(point, "point")
    if number > svc.settings.max_nearest:
        raise TooBig(f"number {number} is higher than the maximum ({svc.settings.max_nearest})")
    found = svc.nearest(lon, lat, number, svc.settings.snap_radius_m if radius_m is None else radius_m)
    features = [
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [ph.lon, ph.lat]},
            "properties": {
                "distance_m": ph.distance_m,
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
    snapped = svc.snap_all(points, default_radius_m=svc.settings.snap_radius_m, detail=True)
    src = snapped[: len(body.sources)]
    dst = src if body.destinations is None else snapped[len(body.sources) :]
    tbl = await svc.table(src, dst)
    return _json(
        {
            "durations_s": np.asarray(tbl.durations_s, dtype=np.float64),
            "distances_m": np.asarray(tbl.distances_m, dtype=np.float64),
            "sources": [_waypoint(ph) for ph in src],
            "destinations": [_waypoint(ph) for ph in dst],
        }
    )

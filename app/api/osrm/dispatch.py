"""The OSRM v5 HTTP API's entry: `handle` reads a request with the grammar (`app.api.osrm.grammar`) and answers it
with its service's module (`route`, `nearest`, `table`, `trip`, `match`, `tile`), in osrm-routed's codes and shapes:
every refusal is `{code, message}` with HTTP 400 (503 for `RETRY_LATER` codes), a bug a 500 in the same shape.

`app.api.frontdoor` calls `handle` before FastAPI's routing; the routes of `router` document the same endpoints in
the OpenAPI schema (their query options are their grammar's, `query_parameters`) and answer them should the front door
be bypassed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any
from urllib.parse import unquote

import orjson
from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from app.api.errors import JSON_TYPE, RETRY_AFTER_S, error_body, status_for
from app.api.osrm.grammar import parse, query_parameters
from app.api.osrm.match import match
from app.api.osrm.nearest import nearest
from app.api.osrm.route import route
from app.api.osrm.table import table
from app.api.osrm.tile import TILE_TYPE
from app.api.osrm.tile import tile as debug_tile
from app.api.osrm.trip import trip
from app.api.service import Service
from app.engine.errors import EngineError

log = logging.getLogger("starroute.osrm")

_ORJSON = orjson.OPT_SERIALIZE_NUMPY
_SERVICES: dict[str, Callable[[Service, Any], Awaitable[dict[str, Any]]]] = {
    "route": route,
    "nearest": nearest,
    "table": table,
    "trip": trip,
    "match": match,
}


async def handle(svc: Service, path: str, query_string: bytes | str) -> tuple[int, bytes]:
    """Answer one OSRM request: `(HTTP status, body)`, the body JSON but for a tile (`media_type`). Never raises
    for bad input."""
    try:
        qs = query_string.decode("latin-1") if isinstance(query_string, bytes) else query_string
        req = parse(path, unquote(qs) if "%" in qs else qs)
        if req.service == "tile":  # protobuf, not JSON: its bytes carry their media type (`media_type`)
            return 200, await debug_tile(svc, req)
        body = await _SERVICES[req.service](svc, req)
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
router = APIRouter(tags=["osrm"])
_TILE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the debug tile (Mapbox Vector Tile 2: layers speeds, turns, osmnodes, internal-nodes)",
        "content": {TILE_TYPE: {"schema": {"type": "string", "format": "binary"}}},
    },
    400: {
        "description": "OSRM error: `{code, message}` (InvalidQuery, InvalidOptions, ...)",
        "content": {JSON_TYPE.split(";")[0]: {"schema": {"type": "object"}}},
    },
}


@router.get(
    "/tile/v1/{profile}/{tile}", summary="OSRM tile service", response_class=Response, responses=_TILE_RESPONSES
)
async def osrm_tile(
    request: Request,
    profile: str,
    tile: Annotated[
        str, Path(description="`tile({x},{y},{zoom}).mvt`, zoom 12..19", examples=["tile(17059,11948,15).mvt"])
    ],
) -> Response:
    """OSRM's debug vector tile: every road segment with its speed, weight and duration, every turn with its cost."""
    status, body = await handle(request.app.state.service, request.url.path, request.scope.get("query_string", b""))
    return Response(body, status_code=status, media_type=media_type(body))


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

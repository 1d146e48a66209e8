"""The one place that turns errors into HTTP answers: `EngineError.code` -> status + `{"code", "message"}` JSON.

osrm-routed answers every non-`Ok` code with HTTP 400 (`request_handler.cpp`), and so do we, on both APIs, for every
code of OSRM's; a server that cannot answer now (`Timeout`: its request time limit, `Overloaded`: its queues) says so
with HTTP 503 and `Retry-After`, in the same `{"code", "message"}` shape.
"""

from __future__ import annotations

import logging

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from app.engine.errors import EngineError, GraphError

log = logging.getLogger("starroute.api")

# OSRM's codes (all HTTP 400) plus the two POST-only ones and ours for an unknown path.
HTTP_STATUS: dict[str, int] = {
    "InvalidUrl": 400,
    "InvalidService": 400,
    "InvalidVersion": 400,
    "InvalidOptions": 400,
    "InvalidQuery": 400,
    "InvalidValue": 400,
    "NoSegment": 400,
    "NoRoute": 400,
    "NoTable": 400,
    "NoMatch": 400,
    "NoTrips": 400,
    "TooBig": 400,
    "DisabledDataset": 400,
    "NotImplemented": 400,
    "InvalidContentType": 415,
    "InvalidMethod": 405,
    "NotFound": 404,
    "Unavailable": 503,
    "Timeout": 503,
    "Overloaded": 503,
    "InternalError": 500,
}
RETRY_LATER = frozenset({"Timeout", "Overloaded"})  # codes whose answer carries Retry-After
RETRY_AFTER_S = 1  # ... in seconds

JSON_TYPE = "application/json; charset=UTF-8"


def status_for(code: str) -> int:
    """HTTP status for an error code (400 for any code we do not know: it came from bad input)."""
    return HTTP_STATUS.get(code, 400)


def error_body(code: str, message: str) -> bytes:
    """The JSON error body, `{"code": ..., "message": ...}`, as OSRM writes it."""
    return orjson.dumps({"code": code, "message": message})


def error_headers(code: str) -> dict[str, str] | None:
    """The headers an error answer of `code` carries besides its type: `Retry-After` for `RETRY_LATER` codes."""
    return {"retry-after": str(RETRY_AFTER_S)} if code in RETRY_LATER else None


def error_response(code: str, message: str) -> Response:
    """A complete error response with the status that belongs to `code`."""
    return Response(
        error_body(code, message), status_code=status_for(code), media_type=JSON_TYPE, headers=error_headers(code)
    )


def _describe(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        if err.get("type") == "json_invalid":  # loc is ("body", character offset): say what it is
            where = err.get("loc", ())[-1]
            why = (err.get("ctx") or {}).get("error", "JSON decode error")
            return f"the request body is not valid JSON: {why} (at character {where})"
        loc = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "request"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install(app: FastAPI) -> None:
    """Register the handlers: engine errors, request validation (400, not FastAPI's 422), HTTP errors, the rest."""

    async def engine_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, EngineError)
        return error_response(exc.code, exc.message)

    async def validation_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return error_response("InvalidQuery", _describe(exc))

    async def http_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        code = {404: "NotFound", 405: "InvalidMethod", 415: "InvalidContentType"}.get(exc.status_code, "InvalidQuery")
        resp = Response(
            error_body(code, str(exc.detail)), status_code=exc.status_code, media_type=JSON_TYPE, headers=exc.headers
        )
        return resp

    async def graph_error(_: Request, exc: Exception) -> Response:
        log.error("graph error: %s", exc)
        return error_response("Unavailable", str(exc))

    async def internal_error(_: Request, exc: Exception) -> Response:
        log.exception("unhandled error", exc_info=exc)
        return error_response("InternalError", "internal error")

    app.add_exception_handler(EngineError, engine_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(GraphError, graph_error)
    app.add_exception_handler(Exception, internal_error)

"""GraphHopper's error answers: `{"message": ..., "hints": [{"message": ..., "details": <exception class>}]}`.

GraphHopper answers bad input, points it cannot snap and routes it cannot find with HTTP 400 and the Java exception
that said no in `hints[].details`; a server that cannot answer now says 503 in the same shape (with Retry-After).
`GraphHopperRoute` makes every refusal of a `/graphhopper/` endpoint, the request validation's included, this shape.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field
from starlette.responses import Response

from app.api.dialects import DialectRoute, describe
from app.api.errors import RETRY_AFTER_S, RETRY_LATER
from app.engine.facade import EngineError

ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
POINT_NOT_FOUND = "com.graphhopper.util.exceptions.PointNotFoundException"
POINT_OUT_OF_BOUNDS = "com.graphhopper.util.exceptions.PointOutOfBoundsException"
CONNECTION_NOT_FOUND = "com.graphhopper.util.exceptions.ConnectionNotFoundException"
MAX_POINTS_EXCEEDED = "com.graphhopper.util.exceptions.MaximumNodesExceededException"
UNAVAILABLE = "java.lang.IllegalStateException"

# an engine error code -> the exception GraphHopper names for it
_DETAILS = {
    "NoSegment": POINT_NOT_FOUND,
    "NoRoute": CONNECTION_NOT_FOUND,
    "NoTable": CONNECTION_NOT_FOUND,
    "TooBig": MAX_POINTS_EXCEEDED,
    "Timeout": UNAVAILABLE,
    "Overloaded": UNAVAILABLE,
}


class GraphHopperError(EngineError):
    """A refusal in GraphHopper's words: its message and the exception class GraphHopper would name."""

    def __init__(self, message: str, details: str = ILLEGAL_ARGUMENT) -> None:
        super().__init__(message, "InvalidValue")
        self.details = details


class Hint(BaseModel):
    message: str
    details: str = Field(description="the Java exception GraphHopper names, e.g. java.lang.IllegalArgumentException")


class ErrorBody(BaseModel):
    """GraphHopper's error answer."""

    message: str
    hints: list[Hint]


RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {
        "description": "bad input, a point out of bounds or not found, no connection: GraphHopper's error shape",
        "model": ErrorBody,  # a component with a $ref (an inline schema's nested `$defs` break ReDoc)
    }
}


def error_response(message: str, details: str = ILLEGAL_ARGUMENT, status: int = 400) -> Response:
    """The answer GraphHopper gives for a refusal."""
    body = {"message": message, "hints": [{"message": message, "details": details}]}
    headers = {"retry-after": str(RETRY_AFTER_S)} if status == 503 else None
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def engine_error(exc: EngineError) -> Response:
    """An engine refusal in GraphHopper's shape: no route is its ConnectionNotFoundException's message."""
    if isinstance(exc, GraphHopperError):
        return error_response(exc.message, exc.details)
    if exc.code == "NoRoute":
        return error_response("Connection between locations not found", CONNECTION_NOT_FOUND)
    status = 503 if exc.code in RETRY_LATER else 400
    return error_response(exc.message, _DETAILS.get(exc.code, ILLEGAL_ARGUMENT), status)


class GraphHopperRoute(DialectRoute):
    """A FastAPI route whose refusals (validation and engine errors) are GraphHopper's 400s, not OSRM's."""

    @staticmethod
    def validation_error(exc: RequestValidationError) -> Response:
        return error_response(describe(exc))

    @staticmethod
    def engine_error(exc: EngineError) -> Response:
        return engine_error(exc)

"""VROOM's error answers: `{"code": N, "error": "..."}`, VROOM's codes (`vroom/src/utils/exception.h`): 1 internal,
2 input (a request VROOM cannot read, or one past this server's limits), 3 routing (a location with no road near it,
locations that cannot reach each other). Input and routing errors answer 400, a server that cannot answer now 503
(with Retry-After). `VroomRoute` makes every refusal of `/optimize`, request validation's included, this shape."""

from __future__ import annotations

import json
from typing import Any

import orjson
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field
from starlette.responses import Response

from app.api.dialects import DialectRoute, describe
from app.api.errors import RETRY_AFTER_S, RETRY_LATER
from app.engine.facade import EngineError

INTERNAL = 1
INPUT = 2
ROUTING = 3
_ROUTING_CODES = frozenset({"NoSegment", "NoRoute", "NoTable"})  # engine error codes that are VROOM's routing errors


class VroomError(EngineError):
    """A refusal in VROOM's words: its code (`INPUT`, `ROUTING`, `INTERNAL`) and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message, "InvalidValue")
        self.error_code = code


class ErrorBody(BaseModel):
    """VROOM's error answer."""

    code: int = Field(description="1 internal error, 2 input error, 3 routing error")
    error: str


RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {
        "description": "an input error (code 2) or a routing error (code 3): VROOM's error shape",
        "model": ErrorBody,
    },
    503: {"description": "the server cannot answer now (code 1; Retry-After)", "model": ErrorBody},
}


def error_response(code: int, message: str, status: int = 400) -> Response:
    """The answer for a refusal: VROOM's `{code, error}`."""
    headers = {"retry-after": str(RETRY_AFTER_S)} if status == 503 else None
    try:
        body = orjson.dumps({"code": code, "error": message})
    except orjson.JSONEncodeError:  # a lone surrogate quoted from the request: escaped as JSON allows
        body = json.dumps({"code": code, "error": message}).encode()
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def engine_error(exc: EngineError) -> Response:
    """An engine refusal in VROOM's shape: no road near a location or no path is a routing error (3), a server
    that cannot answer now 503, anything else an input error (2)."""
    if isinstance(exc, VroomError):
        return error_response(exc.error_code, exc.message, 500 if exc.error_code == INTERNAL else 400)
    if exc.code in RETRY_LATER:
        return error_response(INTERNAL, exc.message, 503)
    return error_response(ROUTING if exc.code in _ROUTING_CODES else INPUT, exc.message)


class VroomRoute(DialectRoute):
    """A FastAPI route whose refusals (validation and engine errors) are VROOM's `{code, error}`, not OSRM's."""

    @staticmethod
    def validation_error(exc: RequestValidationError) -> Response:
        return error_response(INPUT, describe(exc))

    @staticmethod
    def engine_error(exc: EngineError) -> Response:
        return engine_error(exc)

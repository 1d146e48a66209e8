"""Valhalla's error answers: `{"error_code": N, "error": "...", "status_code": 400, "status": "Bad Request"}`.

The codes are Valhalla's where it has one for the case (`valhalla/worker.cc`): 100 unparsable request, 110/112/113
a required parameter missing, 120-122 too few locations, 124/125 no or an unknown costing, 130-132 a location that
cannot be read, 133/137 an area to avoid that cannot be read, 142 arrive_by on an isochrone, 150 too many locations,
151/152/154 contours too long or too many, 160-165 a `date_time` missing its value or not read, 171 no road near a
location, 442 no path. Options starroute cannot honour are 107 ("Not Implemented", answered 400 here, with the
reason); other engine refusals 199 with the engine's reason. A server that cannot answer now says 503 in the same
shape (with Retry-After). `ValhallaRoute` makes every refusal of a `/valhalla/` endpoint this shape, validation's
included.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import Response

from app.api.dialects import DialectRoute, describe
from app.api.errors import RETRY_AFTER_S, RETRY_LATER
from app.engine.facade import EngineError

PARSE = 100  # Failed to parse json request
NOT_IMPLEMENTED = 107
NO_LOCATIONS = 110  # Insufficiently specified required parameter 'locations'
NO_SOURCES_TARGETS = 112  # ... 'locations' or 'sources & targets'
NO_CONTOURS = 113  # ... 'contours'
FEW_LOCATIONS = 120  # Insufficient number of locations provided
FEW_SOURCES = 121
FEW_TARGETS = 122
NO_COSTING = 124  # No edge/node costing provided
UNKNOWN_COSTING = 125  # No costing method found
BAD_LOCATION = 130  # Failed to parse location
BAD_SOURCE = 131
BAD_TARGET = 132
BAD_AVOID = 133  # Failed to parse avoid
BAD_POLYGON = 137  # Failed to parse polygon
ISOCHRONE_ARRIVE_BY = 142  # Arrive by not implemented for isochrones
MAX_LOCATIONS = 150  # Exceeded max locations
MAX_TIME = 151  # Exceeded max time
MAX_CONTOURS = 152  # Exceeded max contours
MAX_DISTANCE = 154  # Path distance exceeds the max distance limit
NO_DEPART_TIME = 160  # Date and time required for origin for date_type of depart at
NO_ARRIVE_TIME = 161  # ... for destination for date_type of arrive by
BAD_DATE_TIME = 162  # Date and time is invalid.  Format is YYYY-MM-DDTHH:MM
BAD_DATE_TYPE = 163  # Invalid date_type
NO_INVARIANT_TIME = 165  # Date and time required for destination for date_type of invariant
NO_EDGES = 171  # No suitable edges near location
NO_PATH = 442  # No path could be found for input
UNKNOWN = 199

MESSAGES = {
    PARSE: "Failed to parse json request",
    NOT_IMPLEMENTED: "Not Implemented",
    NO_LOCATIONS: "Insufficiently specified required parameter 'locations'",
    NO_SOURCES_TARGETS: "Insufficiently specified required parameter 'locations' or 'sources & targets'",
    NO_CONTOURS: "Insufficiently specified required parameter 'contours'",
    FEW_LOCATIONS: "Insufficient number of locations provided",
    FEW_SOURCES: "Insufficient number of sources provided",
    FEW_TARGETS: "Insufficient number of targets provided",
    NO_COSTING: "No edge/node costing provided",
    UNKNOWN_COSTING: "No costing method found",
    BAD_LOCATION: "Failed to parse location",
    BAD_SOURCE: "Failed to parse source",
    BAD_TARGET: "Failed to parse target",
    BAD_AVOID: "Failed to parse avoid",
    BAD_POLYGON: "Failed to parse polygon",
    ISOCHRONE_ARRIVE_BY: "Arrive by not implemented for isochrones",
    MAX_LOCATIONS: "Exceeded max locations",
    MAX_TIME: "Exceeded max time",
    MAX_CONTOURS: "Exceeded max contours",
    MAX_DISTANCE: "Path distance exceeds the max distance limit",
    NO_DEPART_TIME: "Date and time required for origin for date_type of depart at",
    NO_ARRIVE_TIME: "Date and time required for destination for date_type of arrive by",
    BAD_DATE_TIME: "Date and time is invalid.  Format is YYYY-MM-DDTHH:MM",
    BAD_DATE_TYPE: "Invalid date_type",
    NO_INVARIANT_TIME: "Date and time required for destination for date_type of invariant",
    NO_EDGES: "No suitable edges near location",
    NO_PATH: "No path could be found for input",
    UNKNOWN: "Unknown",
}
# an engine error code -> Valhalla's code for it
_CODES = {"NoSegment": NO_EDGES, "NoRoute": NO_PATH, "NoTable": NO_PATH, "NoTrips": NO_PATH, "TooBig": MAX_LOCATIONS}
# a body field whose validation failed -> (missing, too few, unreadable)
_FIELDS = {
    "locations": (NO_LOCATIONS, FEW_LOCATIONS, BAD_LOCATION),
    "sources": (NO_SOURCES_TARGETS, FEW_SOURCES, BAD_SOURCE),
    "targets": (NO_SOURCES_TARGETS, FEW_TARGETS, BAD_TARGET),
    "contours": (NO_CONTOURS, NO_CONTOURS, PARSE),
    "costing": (NO_COSTING, NO_COSTING, UNKNOWN_COSTING),
}


class ValhallaError(EngineError):
    """A refusal in Valhalla's words: its error code, and a detail after its message."""

    def __init__(self, code: int, detail: str = "") -> None:
        super().__init__(MESSAGES[code] + (f": {detail}" if detail else ""), "InvalidValue")
        self.error_code = code


class ErrorBody(BaseModel):
    """Valhalla's error answer."""

    error_code: int = Field(description="Valhalla's code: 171 no road near a location, 442 no path, ...")
    error: str
    status_code: int
    status: str


RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {
        "description": "bad input, no road near a location, no path: Valhalla's error shape",
        "content": {"application/json": {"schema": ErrorBody.model_json_schema()}},
    }
}


def error_response(code: int, message: str, status: int = 400) -> Response:
    """The answer Valhalla gives for a refusal."""
    body = {
        "error_code": code,
        "error": message,
        "status_code": status,
        "status": "Service Unavailable" if status == 503 else "Bad Request",
    }
    headers = {"retry-after": str(RETRY_AFTER_S)} if status == 503 else None
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def engine_error(exc: EngineError) -> Response:
    """An engine refusal in Valhalla's shape: no road near a location 171, no path 442 (with the engine's reason)."""
    if isinstance(exc, ValhallaError):
        return error_response(exc.error_code, exc.message)
    code = _CODES.get(exc.code, UNKNOWN)
    if exc.code in RETRY_LATER:
        return error_response(code, exc.message, 503)
    message = MESSAGES[code] if code == NO_PATH else f"{MESSAGES[code]}: {exc.message}"
    return error_response(code, message)


def validation_error(exc: RequestValidationError) -> Response:
    """A request that does not read as Valhalla's: the code of the field that failed (110/120/130 for locations,
    124/125 for the costing, ...), else 100."""
    errors = exc.errors()
    first = errors[0] if errors else {}
    loc = [x for x in first.get("loc", ()) if x not in ("body", "query")]
    codes = _FIELDS.get(str(loc[0])) if loc else None
    if codes is None or first.get("type") == "json_invalid":
        return error_response(PARSE, f"{MESSAGES[PARSE]}: {describe(exc)}")
    kind = str(first.get("type", ""))
    code = codes[0] if kind == "missing" else codes[1] if kind == "too_short" else codes[2]
    return error_response(code, f"{MESSAGES[code]}: {describe(exc)}")


class ValhallaRoute(DialectRoute):
    """A FastAPI route whose refusals (validation and engine errors) are Valhalla's answers, not OSRM's, and which
    reads a POST body as JSON whatever its content type, as Valhalla does (`curl --data '{...}'` sends it as a form)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            if request.method == "POST":
                headers = [(k, v) for k, v in request.scope["headers"] if k != b"content-type"]
                request.scope["headers"] = [*headers, (b"content-type", b"application/json")]
                request.__dict__.pop("_headers", None)  # Starlette's cached view of them
            return await handler(request)

        return answer

    @staticmethod
    def validation_error(exc: RequestValidationError) -> Response:
        return validation_error(exc)

    @staticmethod
    def engine_error(exc: EngineError) -> Response:
        return engine_error(exc)

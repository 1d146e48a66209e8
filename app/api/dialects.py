"""What the other engines' dialects (`app.api.graphhopper`, `app.api.valhalla`) share: a route class answering every
refusal (request validation, engine errors) in the dialect's error shape, the validation errors as one sentence, a
dialect's language tag -> the text instructions' language, and an isochrone band as one Polygon."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import numpy as np
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from app.api.instructions.compile import LANGUAGES
from app.engine.facade import EngineError

# language tags other engines use that are not one of osrm-text-instructions' (lower case, `_` as `-`)
_TAGS = {"zh": "zh-Hans", "zh-cn": "zh-Hans", "zh-hans": "zh-Hans", "pt": "pt-BR", "pt-br": "pt-BR"}


class DialectRoute(APIRoute):
    """A FastAPI route whose refusals are the dialect's answers: subclasses say how a validation error and an
    engine error are written (`validation_error`, `engine_error`)."""

    @staticmethod
    def validation_error(exc: RequestValidationError) -> Response:
        raise NotImplementedError

    @staticmethod
    def engine_error(exc: EngineError) -> Response:
        raise NotImplementedError

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                return self.validation_error(exc)
            except HTTPException as exc:
                if exc.status_code != 400:  # FastAPI's 400: a body it cannot decode (not UTF-8, not JSON)
                    raise
                error = {"type": "json_invalid", "loc": ("body",), "msg": str(exc.detail), "ctx": {"error": exc.detail}}
                return self.validation_error(RequestValidationError([error]))
            except EngineError as exc:
                return self.engine_error(exc)

        return answer


def describe(exc: RequestValidationError) -> str:
    """The first validation errors as one sentence (`field: reason; ...`), a body that is no JSON as such."""
    parts = []
    for err in exc.errors()[:3]:
        if err.get("type") == "json_invalid":
            return "Cannot parse the request body as JSON: " + str((err.get("ctx") or {}).get("error", "invalid"))
        loc = ".".join(str(x) for x in err.get("loc", ()) if x not in ("body", "query"))
        parts.append(f"{loc or 'request'}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def instruction_language(tag: str) -> str | None:
    """A language tag (`de`, `de-DE`, `en_US`, `pt_BR`, `zh-CN`) -> the language of the text instructions that
    speaks it (the tag itself, a known alias, else its base language); None when none does."""
    if tag in LANGUAGES:
        return tag
    low = tag.lower().replace("_", "-")
    if low in _TAGS:
        return _TAGS[low]
    for lang in LANGUAGES:
        if lang.lower() == low:
            return lang
    base = low.split("-")[0]
    return base if base in LANGUAGES else None


def largest_polygon(geometry: dict[str, Any]) -> dict[str, Any]:
    """A Polygon for an isochrone band, as engines that answer one per band do: a MultiPolygon's largest part (by
    its outer ring's area)."""
    if geometry["type"] == "Polygon":
        return geometry

    def area(poly: list[Any]) -> float:
        ring = np.asarray(poly[0], dtype=np.float64)
        return abs(float(np.dot(ring[:-1, 0], ring[1:, 1]) - np.dot(ring[1:, 0], ring[:-1, 1])))

    return {"type": "Polygon", "coordinates": max(geometry["coordinates"], key=area)}

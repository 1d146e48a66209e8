"""The pure-ASGI front door: answers OSRM URLs without going through FastAPI's routing, times every request (and
says the handler's own share in a `Server-Timing: engine;dur=<ms>` header, `app.api.timing`).

`StarrouteApp` (app.main) hands an OSRM GET to `answer_osrm` before FastAPI's own middleware stack (its error,
telemetry and body-limit layers, CORS) ever sees it: those cost about 6 % of a worker's time per route request and
do nothing for it (`osrm.handle` never raises; a GET has no body). A request that carries an `Origin` while CORS is
on goes the long way, so that CORSMiddleware answers it as before.

Native paths (`/route`, `/nearest`, `/table`, `/health`, `/metrics`, the docs, the start page `/` and `/static/...`,
the map's road tiles `/tile/{z}/{x}/{y}` and `/osrm-client`, VROOM's `/optimize`, GraphHopper's `/graphhopper/...`,
Valhalla's `/valhalla/...`) go on to FastAPI;
any other GET is an OSRM URL (so an unknown path answers OSRM's `InvalidUrl`). POST bodies larger than the limit are
refused with 413 before they are read.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api import timing
from app.api.admin import ADMIN_PATH
from app.api.errors import RETRY_AFTER_S, error_body
from app.api.osrm import dispatch as osrm
from app.api.service import Service

NATIVE_PATHS = frozenset(
    {"/route", "/nearest", "/table", "/health", "/metrics", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"}
    | {"/", "/start", "/favicon.ico", "/isochrone"}
    | {"/osrm-client"}  # the map page's OSRM client demo (app.api.tiles)
    | {ADMIN_PATH}  # live traffic updates (app.api.admin), with their own body limit
    | {"/optimize"}  # VROOM's vehicle routing (app.api.vroom)
)
STATIC_PREFIX = "/static/"
TILE_PREFIX = "/tile/"  # the map's road tiles (app.api.tiles); OSRM's own /tile/v1/... stays an OSRM URL
OSRM_TILE_PREFIX = "/tile/v"
BG_PREFIX = "/bgtile/"  # the map's background tiles (app.api.basemap)
GRAPHHOPPER_PREFIX = "/graphhopper/"  # GraphHopper's dialect (app.api.graphhopper)
VALHALLA_PREFIX = "/valhalla/"  # Valhalla's dialect (app.api.valhalla)
DIALECT_PREFIXES = (GRAPHHOPPER_PREFIX, VALHALLA_PREFIX)
_OSRM_LABELS = {
    "route": "osrm_route",
    "nearest": "osrm_nearest",
    "table": "osrm_table",
    "trip": "osrm_trip",
    "tile": "osrm_tile",
    "match": "osrm_match",
}
_JSON_HEADERS = [(b"content-type", b"application/json; charset=UTF-8")]


def _osrm_label(path: str) -> str:
    end = path.find("/", 1)
    return _OSRM_LABELS.get(path[1:end] if end > 0 else "", "osrm_other")


def _native(path: str) -> tuple[bool, bool]:
    """(whether FastAPI answers `path`, whether it is one of the map's tile paths)."""
    tile = (path.startswith(TILE_PREFIX) and not path.startswith(OSRM_TILE_PREFIX)) or path.startswith(BG_PREFIX)
    native = path in NATIVE_PATHS or path.startswith(STATIC_PREFIX) or path.startswith(DIALECT_PREFIXES)
    return native or tile, tile


def is_native_path(path: str) -> bool:
    """Whether FastAPI answers `path` (else it is an OSRM URL)."""
    return _native(path)[0]


def osrm_get(scope: Scope, cors: bool) -> bool:
    """Whether `answer_osrm` takes this request ahead of FastAPI: an HTTP GET or HEAD of an OSRM URL, and with CORS
    on (`cors`) one without an `Origin` header (CORSMiddleware answers those)."""
    if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD") or _native(scope["path"])[0]:
        return False
    return not cors or all(key != b"origin" for key, _ in scope["headers"])


async def answer_osrm(service: Service, scope: Scope, send: Send) -> None:
    """Answer an OSRM GET or HEAD (`osrm.handle`) and count it in the request metrics."""
    t0 = time.perf_counter()
    path: str = scope["path"]
    status, body = await osrm.handle(service, path, scope["query_string"])
    engine = timing.value(time.perf_counter() - t0)
    ctype = osrm.media_type(body).encode()  # JSON, or a tile's protobuf
    headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode()), (timing.HEADER, engine)]
    if status == 503:  # the OSRM API's only 503s: `RETRY_LATER` codes
        headers.append((b"retry-after", str(RETRY_AFTER_S).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
    service.metrics.observe_request(_osrm_label(path), status, time.perf_counter() - t0)


UNGUARDED = frozenset({"/health", "/metrics"})  # answered while the graph is unusable (they say why)


async def refuse_unusable(service: Service, scope: Scope, send: Send) -> None:
    """503 `Unavailable` (with Retry-After) for a request that would read a graph whose files changed under the
    server (`Service.unusable`): reading a truncated mapping would kill the worker."""
    t0 = time.perf_counter()
    problems = service.unusable()
    message = "The graph this server maps is unusable: " + "; ".join(problems[:3])
    message += " -- restore the graph directory and reload (SIGHUP), or restart the server"
    body = error_body("Unavailable", message)
    headers = [*_JSON_HEADERS, (b"retry-after", str(RETRY_AFTER_S).encode())]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
    service.metrics.observe_request("unusable", 503, time.perf_counter() - t0)


class FrontDoor:
    """ASGI middleware: OSRM fast path, body-size limit, request metrics."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        path: str = scope["path"]
        method: str = scope["method"]
        metrics = self.service.metrics
        native, tile = _native(path)
        if not native and method in ("GET", "HEAD"):  # one with an Origin under CORS (the rest: `StarrouteApp`)
            await answer_osrm(self.service, scope, send)
            return
        limit = self._limit(path)
        if method == "POST" and self._too_large(scope, limit):
            body = error_body("TooBig", f"Request body exceeds {limit} bytes")
            await send({"type": "http.response.start", "status": 413, "headers": _JSON_HEADERS})
            await send({"type": "http.response.body", "body": body})
            metrics.observe_request(path if native else "other", 413, time.perf_counter() - t0)
            return
        state: dict[str, Any] = {"status": 500}
        if method == "POST":
            receive = self._limited(receive, limit)

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
                engine = timing.elapsed(scope)  # a native endpoint that marked its start (`timing.start`)
                if engine is not None:
                    message = {
                        **message,
                        "headers": [*message.get("headers", ()), (timing.HEADER, timing.value(engine))],
                    }
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            # a dialect's path is its own label when a route answered it (404: any path under the prefix, "other",
            # so that the labels stay a bounded set)
            dialect = path.startswith(DIALECT_PREFIXES)
            if path in NATIVE_PATHS or (dialect and state["status"] != 404):
                label = path
            else:
                label = "tile" if tile else "other" if dialect or not native else "static"
            metrics.observe_request(label, state["status"], time.perf_counter() - t0)

    def _limit(self, path: str) -> int:
        s = self.service.settings
        return s.admin_max_body_bytes if path == ADMIN_PATH else s.max_body_bytes

    def _limited(self, receive: Receive, limit: int) -> Receive:
        """Wrap `receive` so a body without Content-Length cannot grow past the limit (FastAPI answers 400)."""
        seen = 0

        async def wrapped() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise ValueError(f"request body exceeds {limit} bytes")
            return message

        return wrapped

    def _too_large(self, scope: Scope, limit: int) -> bool:
        for key, value in scope["headers"]:
            if key == b"content-length":
                try:
                    return int(value) > limit
                except ValueError:
                    return True
        return False

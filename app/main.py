"""The ASGI application: `create_app(settings)`; its lifespan memory-maps the graph once per worker process."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.utils import get_openapi
from fastapi.responses import ORJSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from app.api import admin, basemap, errors, health, native, pages, tiles
from app.api.frontdoor import UNGUARDED, FrontDoor, answer_osrm, osrm_get, refuse_unusable
from app.api.graphhopper import endpoints as graphhopper
from app.api.openapi_examples import add_examples
from app.api.openapi_limits import add_limits
from app.api.osrm import dispatch as osrm
from app.api.service import Service
from app.api.valhalla import endpoints as valhalla
from app.api.vroom import endpoints as vroom
from app.engine.facade import engine_limits
from app.settings import Settings

log = logging.getLogger("starroute")

DESCRIPTION = """Road routing over contraction hierarchies and ALT.

* **Native API** — `GET/POST /route` answer a GeoJSON `Feature` (RFC 7946, `[lon, lat]`), `GET /nearest`,
  `POST /table`.
* **OSRM v5 API** — `/route/v1/{profile}/{coordinates}`, `/nearest/v1/…`, `/table/v1/…` with osrm-routed's
  response shapes and error codes (every error is HTTP 400 with `{code, message}`).
* **GraphHopper API** — `/graphhopper/route`, `/graphhopper/matrix`, `/graphhopper/isochrone`, `/graphhopper/info`
  with GraphHopper's parameters, `paths[]` and error shape (`{message, hints}`, HTTP 400).
* **Valhalla API** — `/valhalla/route`, `/valhalla/sources_to_targets`, `/valhalla/isochrone`, `/valhalla/locate`
  (POST JSON or GET `?json=`), `/valhalla/status` with Valhalla's request, `trip` and error shape
  (`{error_code, error, status_code, status}`).
* **VROOM API** — `POST /optimize`: VROOM's vehicle routing input (vehicles, jobs, shipments) solved by VROOM on
  this graph's durations and distances, answered in VROOM's output format (`options.g`: route geometries).
* `GET /health`, `GET /metrics` (Prometheus).
"""


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema without its 422 answers (validation errors are 400 `{code, message}` here), with examples
    that work on the loaded graph (`app.api.openapi_examples`) and this server's limits (`app.api.openapi_limits`)."""
    if app.openapi_schema is None:
        spec = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        for item in spec.get("paths", {}).values():
            for op in item.values():
                op.get("responses", {}).pop("422", None)
        schemas = spec.get("components", {}).get("schemas", {})
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        router = getattr(app.state.service, "router", None)
        add_examples(spec, router.sample_points() if router is not None else None)  # "Try it out" runs as it is
        add_limits(spec, engine_limits(app.state.service.settings))  # the numbers the engine refuses above
        app.openapi_schema = spec
    return app.openapi_schema


def install_reload_signal(service: Service) -> bool:
    """SIGHUP makes this process reload its graph directory (the graph now at its path, with its current metric)
    between requests (`Service.reload`); only the main thread can take a signal, elsewhere nothing is installed."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGHUP"):
        return False

    quiet = service.settings.workers > 1  # a worker of several: the supervisor's line says it

    def on_hup(signum: int, frame: object) -> None:
        reload = lambda: service.reload_logged(quiet=quiet)  # noqa: E731
        threading.Thread(target=reload, name="starroute-reload", daemon=True).start()

    signal.signal(signal.SIGHUP, on_hup)
    return True


class StarrouteApp(FastAPI):
    """FastAPI, with OSRM's GETs answered before its middleware stack (`app.api.frontdoor.osrm_get`)."""

    starroute_service: Service
    starroute_cors: bool

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in UNGUARDED and self.starroute_service.unusable():
            await refuse_unusable(self.starroute_service, scope, send)
            return
        if osrm_get(scope, self.starroute_cors):
            await answer_osrm(self.starroute_service, scope, send)
            return
        await super().__call__(scope, receive, send)


def create_app(settings: Settings | None = None, service: Service | None = None) -> FastAPI:
    """Build the app; without `settings` they are read from `STARROUTE_*` variables (uvicorn workers do that).

    `service` is an already opened and warmed `Service` (`app.server` prepares it before uvicorn starts); without
    one, the lifespan opens and warms its own (each uvicorn worker process).
    """
    settings = settings or Settings()
    service = service or Service(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if service.engine is None:
            from app.warmup import warm_service

            await asyncio.to_thread(warm_service, service, log.info, background=True)
        else:  # warmed before: by `app.server`, maybe in the supervisor this worker was forked from
            install_reload_signal(service)
        from app.warmup import warm_search_process

        service.child_warmup = warm_search_process
        if settings.workers > 1 and service.master_pid is None:  # a worker uvicorn started (not `app.server`'s)
            service.master_pid = os.getppid()
        service.open_pools()  # with the search processes
        log.debug("graph %s loaded: %s", settings.graph_dir, dict(service.opened.meta.counts))
        try:
            yield
        finally:
            service.close(stopping=True)

    app = StarrouteApp(
        title="starroute",
        version=service.version,
        description=DESCRIPTION,
        lifespan=lifespan,
        default_response_class=ORJSONResponse,
        docs_url=None,  # served by app.api.pages with the vendored assets (no CDN)
        redoc_url=None,
    )
    app.state.service = service
    app.starroute_service = service
    app.starroute_cors = bool(settings.cors_origins)
    install_reload_signal(service)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    errors.install(app)
    app.include_router(native.router)
    app.include_router(osrm.router)
    app.include_router(graphhopper.router)  # /graphhopper/: GraphHopper's dialect
    app.include_router(valhalla.router)  # /valhalla/: Valhalla's dialect
    app.include_router(vroom.router)  # /optimize: VROOM's vehicle routing
    app.include_router(health.router)
    app.include_router(admin.router)
    app.include_router(pages.router)
    app.include_router(tiles.router)
    app.include_router(basemap.router)  # /bgtile/: the map's background
    app.mount("/static", StaticFiles(directory=pages.STATIC), name="static")
    app.add_middleware(FrontDoor, service=service)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["*"],
        )
    return app

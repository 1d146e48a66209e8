"""The ASGI application: `create_app(settings)`; its lifespan memory-maps the graph once per worker process."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import ORJSONResponse

from app.api import errors, health, native, osrm
from app.api.frontdoor import FrontDoor
from app.api.health import Metrics
from app.api.service import Service
from app.settings import Settings

log = logging.getLogger("starroute")

DESCRIPTION = """Road routing over contraction hierarchies and ALT.

* **Native API** — `GET/POST /route` answer a GeoJSON `Feature` (RFC 7946, `[lon, lat]`), `GET /nearest`,
  `POST /table`.
* **OSRM v5 API** — `/route/v1/{profile}/{coordinates}`, `/nearest/v1/…`, `/table/v1/…` with osrm-routed's
  response shapes and error codes (every error is HTTP 400 with `{code, message}`).
* `GET /health`, `GET /metrics` (Prometheus).
"""


async def _warm_up(service: Service) -> None:
    """Answer a few requests in-process so that every numba kernel is compiled (or loaded) before real traffic."""
    g = service.graph
    n = g.num_nodes
    if n == 0:
        return
    a = f"{g.node_lon[0] / 1e7},{g.node_lat[0] / 1e7}"
    b = f"{g.node_lon[n // 2] / 1e7},{g.node_lat[n // 2] / 1e7}"
    for path, query in (
        (f"/route/v1/warmup/{a};{b}", "steps=true&annotations=true&overview=simplified"),
        (f"/table/v1/warmup/{a};{b}", "annotations=duration,distance"),
        (f"/nearest/v1/warmup/{a}", "number=2"),
    ):
        status, body = await osrm.handle(service, path, query)
        if status != 200:  # a graph whose sample points do not connect still serves
            log.info("warm-up %s: %s", path, body[:200])


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; without `settings` they are read from `STARROUTE_*` variables (uvicorn workers do that)."""
    settings = settings or Settings()
    service = Service(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        service.open()
        await _warm_up(service)
        service.metrics = Metrics()  # warm-up searches are not traffic
        log.info("graph %s loaded: %s", settings.graph_dir, service.graph.manifest.get("counts"))
        try:
            yield
        finally:
            service.close()

    app = FastAPI(
        title="starroute",
        version=service.version,
        description=DESCRIPTION,
        lifespan=lifespan,
        default_response_class=ORJSONResponse,
    )
    app.state.service = service
    errors.install(app)
    app.include_router(native.router)
    app.include_router(osrm.router)
    app.include_router(health.router)
    app.add_middleware(FrontDoor, service=service)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["*"],
        )
    return app

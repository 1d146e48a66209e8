"""Service settings, read from `STARROUTE_*` environment variables (or passed in directly)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Everything the HTTP service needs; limits default to osrm-routed's (`--max-viaroute-size 500`, ...)."""

    model_config = SettingsConfigDict(env_prefix="STARROUTE_", extra="ignore")

    graph_dir: Path = Field(Path("graph"), description="graph directory written by `starroute preprocess`")
    host: str = "127.0.0.1"
    port: int = Field(5000, ge=0, le=65535)
    workers: int = Field(1, ge=1, description="uvicorn worker processes; they share the memory-mapped graph")
    threads: int = Field(
        4,
        ge=1,
        description="per-worker threads for hierarchy work (tables, alternatives, trips) and, at nice 19, custom "
        "model builds and the long searches while no search process takes them (all with search_processes 0)",
    )
    search_processes: int = Field(
        1,
        ge=0,
        description="per-worker processes at idle priority for long routes, isochrones, map matching and map tiles "
        "(0: in the threads)",
    )
    max_via_points: int = Field(500, ge=2, description="most coordinates in one route request")
    max_table_size: int = Field(100, ge=1, description="most sources (and destinations) in one table request")
    max_trip_size: int = Field(100, ge=2, description="most coordinates in one trip request (OSRM's --max-trip-size)")
    max_nearest: int = Field(100, ge=1, description="largest `number` for nearest")
    max_alternatives: int = Field(3, ge=0)
    max_matching_size: int = Field(100, ge=2, description="most points in one /match trace")
    max_matching_radius_m: float | None = Field(
        None, gt=0, description="largest GPS radius (standard deviation) a /match point may give (None: unlimited)"
    )
    max_snap_radius_m: float | None = Field(None, gt=0, description="snapping never looks further (None: unlimited)")
    snap_radius_m: float = Field(
        1000.0, gt=0, description="native API and CLI: a point farther from every road is NoSegment (OSRM: unlimited)"
    )
    min_component_size: int = Field(
        1000, ge=1, description="smaller strongly connected components are tiny: waypoints leave them (OSRM's rule)"
    )
    request_time_limit_s: float = Field(
        10.0, gt=0, description="a long search running longer answers 503 Timeout (compile time never counts)"
    )
    trace_limit: int = Field(100_000, ge=1, description="most settled nodes a `trace=true` answer lists per leg")
    max_contours: int = Field(10, ge=1, description="most limits in one isochrone request")
    max_minutes: float = Field(180.0, gt=0, description="largest isochrone time limit, minutes")
    max_distance_m: float = Field(200_000.0, gt=0, description="largest isochrone distance limit, metres")
    max_custom_models: int = Field(
        8, ge=1, description="custom models whose weights (and hierarchy) a worker keeps, least recently used dropped"
    )
    custom_model_cch_max_arcs: int = Field(
        1_000_000, ge=0, description="customize the hierarchy for a custom model on graphs up to this many search arcs"
    )
    max_polygons: int = Field(20, ge=1, description="most polygons in the areas to avoid of one request")
    max_vertices: int = Field(1000, ge=3, description="most vertices over all areas to avoid of one request")
    inline_table_cells: int = Field(
        16, ge=0, description="CH tables up to this many cells run on the event loop, larger ones in the pool"
    )
    optimize_max_locations: int = Field(
        200,
        ge=2,
        description="most places in one /optimize request (jobs, shipment pickups and deliveries, vehicle "
        "starts and ends)",
    )
    optimize_exploration: int = Field(5, ge=0, le=5, description="VROOM's exploration level for /optimize (its -x)")
    optimize_threads: int = Field(2, ge=1, description="VROOM's threads for one /optimize request (its -t)")
    max_body_bytes: int = Field(1_000_000, ge=1024, description="largest POST body")
    max_connections: int = Field(
        1000, ge=1, description="open connections per worker; a new one beyond is answered 503 Overloaded and closed"
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="a request head not arrived this long after the connection opened (or its first byte) "
        "is answered 408 Timeout and the connection closed",
    )
    queue_timeout_s: float = Field(
        5.0, gt=0, description="a request that waited longer for its worker is answered 503 Overloaded, unworked"
    )
    admin_token: str | None = Field(
        None, description="bearer token of the admin endpoint (`POST /admin/metric`); unset, the endpoint is off"
    )
    admin_max_body_bytes: int = Field(
        64 * 1024 * 1024, ge=1024, description="largest traffic file `POST /admin/metric` takes (bytes)"
    )
    cors_origins: list[str] = Field(default_factory=lambda: ["*"], description="allowed CORS origins ([] disables)")
    log_level: str = "info"
    access_log: bool = False

    def to_env(self) -> dict[str, str]:
        """These settings as `STARROUTE_*` variables, so that uvicorn's worker processes rebuild the same object."""
        env: dict[str, str] = {}
        for name, value in self.model_dump().items():
            if value is None:
                continue
            if isinstance(value, (list, dict)):
                text = json.dumps(value)
            elif isinstance(value, bool):
                text = "true" if value else "false"
            else:
                text = str(value)
            env[f"STARROUTE_{name.upper()}"] = text
        return env

    def export(self) -> None:
        """Write `to_env()` into `os.environ` (and drop unset optional ones inherited from the parent)."""
        env = self.to_env()
        for name in type(self).model_fields:
            key = f"STARROUTE_{name.upper()}"
            if key in env:
                os.environ[key] = env[key]
            else:
                os.environ.pop(key, None)

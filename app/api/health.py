"""`/health` (liveness + graph metadata) and `/metrics` (Prometheus text format, per worker process)."""

from __future__ import annotations

import bisect
import datetime
import os
import time
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from app.api.schemas import Health

LATENCY_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SETTLED_BUCKETS = (10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000)


class _Histogram:
    __slots__ = ("bounds", "counts", "total", "n")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0
        self.n = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value
        self.n += 1

    def lines(self, name: str, labels: str) -> list[str]:
        out = []
        acc = 0
        sep = "," if labels else ""
        for bound, c in zip(self.bounds, self.counts, strict=False):
            acc += c
            out.append(f'{name}_bucket{{{labels}{sep}le="{bound:g}"}} {acc}')
        out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.n}')
        out.append(f"{name}_sum{{{labels}}} {self.total:.6f}")
        out.append(f"{name}_count{{{labels}}} {self.n}")
        return out


class Metrics:
    """Request counts, latency histograms and settled-node histograms; cheap enough for the hot path."""

    def __init__(self) -> None:
        self.started = time.time()
        self.requests: dict[tuple[str, int], int] = {}
        self.latency: dict[str, _Histogram] = {}
        self.settled: dict[str, _Histogram] = {}
        self.searches: dict[str, int] = {}

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        key = (endpoint, status)
        self.requests[key] = self.requests.get(key, 0) + 1
        h = self.latency.get(endpoint)
        if h is None:
            h = self.latency[endpoint] = _Histogram(LATENCY_BUCKETS_S)
        h.observe(seconds)

    def observe_search(self, algorithm: str, settled: int) -> None:
        h = self.settled.get(algorithm)
        if h is None:
            h = self.settled[algorithm] = _Histogram(SETTLED_BUCKETS)
        h.observe(float(settled))
        self.searches[algorithm] = self.searches.get(algorithm, 0) + 1

    def render(self) -> str:
        """Prometheus text exposition format 0.0.4."""
        lines = [
            "# HELP starroute_requests_total HTTP requests answered, by endpoint and status.",
            "# TYPE starroute_requests_total counter",
        ]
        for (endpoint, status), n in sorted(self.requests.items()):
            lines.append(f'starroute_requests_total{{endpoint="{endpoint}",status="{status}"}} {n}')
        lines += [
            "# HELP starroute_request_duration_seconds Time to answer a request.",
            "# TYPE starroute_request_duration_seconds histogram",
        ]
        for endpoint, h in sorted(self.latency.items()):
            lines += h.lines("starroute_request_duration_seconds", f'endpoint="{endpoint}"')
        lines += [
            "# HELP starroute_settled_nodes Nodes settled per search (one per route leg or table).",
            "# TYPE starroute_settled_nodes histogram",
        ]
        for algorithm, h in sorted(self.settled.items()):
            lines += h.lines("starroute_settled_nodes", f'algorithm="{algorithm}"')
        lines += [
            "# HELP starroute_uptime_seconds Seconds since this worker started.",
            "# TYPE starroute_uptime_seconds gauge",
            f"starroute_uptime_seconds {time.time() - self.started:.3f}",
        ]
        return "\n".join(lines) + "\n"


def graph_summary(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest fields `/health` shows (no array listing)."""
    keys = ("profile", "counts", "bbox", "source", "built_at", "format_version", "fingerprint", "max_speed_mps")
    out = {k: manifest[k] for k in keys if k in manifest}
    # what the searches count (the map page explains its figures with these): "edge" searches road arcs
    out["search_graph"] = manifest.get("search_graph", "node")
    out["search_nodes"] = manifest.get("report", {}).get("search_nodes") or manifest.get("counts", {}).get("nodes", 0)
    out["basemap"] = bool(manifest.get("basemap"))  # the background tiles (/bgtile/) were built
    return out


def metric_summary(manifest: dict[str, Any], applied_at: float, reloads: int) -> dict[str, Any]:
    """Which metric a worker serves and since when (`/health`)."""
    m = manifest.get("metric") or {}
    applied = datetime.datetime.fromtimestamp(applied_at, datetime.UTC).isoformat(timespec="milliseconds")
    return {
        "id": m.get("id") or "preprocessed",
        "built_at": m.get("built_at") or manifest.get("built_at"),
        "applied_at": applied if applied_at else None,
        "reloads": reloads,
        "sources": [{"kind": x.get("kind"), "sha256": x.get("sha256")} for x in m.get("sources") or []],
    }


router = APIRouter(tags=["service"])


@router.get(
    "/health",
    response_model=Health,
    summary="Liveness and graph metadata",
    responses={503: {"model": Health, "description": "the graph is unusable (`problems` says why)"}},
)
async def health(request: Request) -> Response:
    """`status: ok` once the graph is loaded, with its profile, counts, bounding box, the available algorithms and the
    road-class sets `exclude=` takes; 503 with `status: unusable` and the `problems` while a file of the graph was
    truncated or rewritten under the server (every other request is refused then)."""
    svc = request.app.state.service
    problems = svc.unusable()
    body = {
        "status": "unusable" if problems else "ok",
        **({"problems": problems} if problems else {}),
        "version": svc.version,
        "pid": os.getpid(),
        "uptime_s": round(time.time() - svc.metrics.started, 3),
        "algorithms": list(svc.opened.algorithms),
        "excludable": [sorted(e.classes) for e in svc.opened.excludable],
        "graph": graph_summary(svc.opened.meta.raw)
        | {"time_profiles": svc.opened.has_time_profiles, "timezone": svc.opened.timezone},
        "metric": metric_summary(svc.opened.meta.raw, svc.loaded_at, svc.reloads),
        "custom_models": svc.opened.custom_models_info(),
        "search_processes": svc.processes_info(),
    }
    return Response(orjson.dumps(body), media_type="application/json", status_code=503 if problems else 200)


@router.get(
    "/metrics",
    summary="Prometheus metrics of this worker",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}}},
)
async def metrics(request: Request) -> Response:
    """Request counts and latency histograms per endpoint, settled-node histograms per algorithm."""
    text = request.app.state.service.metrics.render()
    return Response(text, media_type="text/plain; version=0.0.4; charset=utf-8")

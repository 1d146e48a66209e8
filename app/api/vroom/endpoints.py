"""`POST /optimize`: VROOM's input in, VROOM's output out. starroute snaps the request's locations, computes their
duration and distance matrix (the engine's table, on the graph's profile), VROOM (`solve`, in a search process)
solves on it, and with `options.g` each route's geometry is starroute's route through the vehicle's steps."""

from __future__ import annotations

import time
from typing import Annotated, Any

import numpy as np
import orjson
from fastapi import APIRouter, Body, Request
from starlette.responses import Response

from app.api import search_processes, timing
from app.api.osrm.polyline import encode
from app.api.service import Service
from app.api.vroom import problem as problems
from app.api.vroom.errors import INPUT, RESPONSES, ROUTING, VroomError, VroomRoute
from app.api.vroom.schemas import OptimizeBody, OptimizeResponse
from app.api.vroom.solve import Job, dumps, solve
from app.engine.facade import NoSegment, RouteRequest, Waypoints

router = APIRouter(tags=["vroom"], route_class=VroomRoute)
PATH = "/optimize"


def _svc(request: Request) -> Service:
    return request.app.state.service


async def _matrix(svc: Service, points: list[tuple[float, float]]) -> tuple[list[list[int]], list[list[int]]]:
    """Durations (whole seconds) and distances (whole metres) between `points`, rounded as VROOM rounds OSRM's;
    a point with no road near it or points that cannot reach each other are VROOM's routing error."""
    engine = svc.opened
    try:
        phantoms = engine.snap(Waypoints(points, default_radius_m=svc.settings.snap_radius_m, detail=True))
    except NoSegment as exc:
        lon, lat = points[exc.index or 0]
        raise VroomError(ROUTING, f"No road near location [{lon:g},{lat:g}]: {exc.detail}") from None

    def run() -> Any:
        return engine.table(phantoms, phantoms)

    table = run() if len(points) ** 2 <= svc.settings.inline_table_cells else await svc.run_slow(run, hierarchy=True)
    dur = np.asarray(table.durations_s, dtype=np.float64)
    dist = np.asarray(table.distances_m, dtype=np.float64)
    bad = ~np.isfinite(dur)
    if bad.any():
        i = int(np.nonzero(bad.any(axis=1))[0][0])
        lon, lat = points[i]
        raise VroomError(ROUTING, f"Unfound route(s) from location [{lon:g},{lat:g}]")
    return _whole(dur), _whole(dist)


def _whole(values: np.ndarray) -> list[list[int]]:
    """A matrix in whole units as VROOM rounds a router's (`utils::round`: halves up)."""
    return np.floor(values + 0.5).astype(np.int64).tolist()


async def _geometry(svc: Service, route: dict[str, Any]) -> str:
    """starroute's route through a vehicle's steps, in order, as an encoded polyline (precision 5; VROOM's `-g`
    routes through OSRM with `continue_straight=false`)."""
    points: list[tuple[float, float]] = []
    for step in route.get("steps", ()):
        loc = step.get("location")
        if loc is not None and (not points or points[-1] != tuple(loc)):
            points.append((float(loc[0]), float(loc[1])))
    if len(points) == 1:
        points.append(points[0])
    if not points:
        return ""
    wp = Waypoints(points, default_radius_m=svc.settings.snap_radius_m)
    answer = await svc.route(RouteRequest(wp, continue_straight=False))
    return encode(np.asarray(answer.best.coordinates, dtype=np.float64), 5)


def _drop_index(items: list[dict[str, Any]]) -> None:
    for item in items:
        item.pop("location_index", None)


@router.post(
    PATH,
    response_model=OptimizeResponse,
    responses=RESPONSES,
    summary="VROOM: vehicle routing",
)
async def optimize(request: Request, body: Annotated[OptimizeBody, Body()]) -> Response:
    """VROOM's vehicle routing problem (vehicles with start, end, capacity, time window, skills, breaks; jobs and
    shipments), solved by VROOM on starroute's durations and distances, answered in VROOM's output format;
    `options.g`: each route's geometry from starroute. Errors are VROOM's `{code, error}` (2 input, 3 routing)."""
    timing.start(request)
    svc = _svc(request)
    s = svc.settings
    profile = str(svc.opened.info()["profile"])
    problem = problems.read(body.model_dump(exclude_unset=True, exclude_none=True), profile, s.optimize_max_locations)
    t0 = time.perf_counter()
    if problem.given_index:  # the request's own matrices; distances in the answer when they have them
        vroom_input = problem.body
        distances = any("distances" in m for m in vroom_input["matrices"].values())
    else:
        durations, dists = await _matrix(svc, problem.points)
        vroom_input, distances = problems.with_matrix(problem, durations, dists), True
    routing = time.perf_counter() - t0
    timeout = max(0.1, 0.8 * s.request_time_limit_s)
    text = dumps(vroom_input)
    if text is None:
        raise VroomError(INPUT, "Invalid input: an integer past 64 bits or a string that is not Unicode.")
    job = Job(text, s.optimize_exploration, s.optimize_threads, timeout, distances)
    code, answer = await svc.run_in_process(search_processes.call, (solve, job), lambda: solve(job))
    if code:
        raise VroomError(code, answer)
    t1 = time.perf_counter()
    if not problem.given_index:
        _drop_index(answer.get("unassigned", []))
        for route in answer.get("routes", []):
            _drop_index(route.get("steps", []))
    if problem.geometry:
        for route in answer.get("routes", []):
            route["geometry"] = await _geometry(svc, route)
    routing += time.perf_counter() - t1
    times = answer.get("summary", {}).get("computing_times")
    if isinstance(times, dict):
        times["routing"] = round(routing * 1000)
    return Response(orjson.dumps(answer), media_type="application/json")

"""VROOM's input read for starroute: where its locations are, whether they fit this server, and the input VROOM is
handed, in which every location is an index into the matrix starroute computes (`location_index`, with
`matrices` added) unless the request brought its own matrices.

VROOM's own parser (in `solve`) checks everything else (ids, amounts, time windows, skills, breaks, steps) and
answers with its own messages; what is read here is only what starroute needs to do its part: the coordinates to
route between, the vehicles' profile (the graph's), `options.g` (route geometries) and the size limit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from app.api.vroom.errors import INPUT, VroomError

# VROOM's profile names (vroom-express's, OSRM's and Valhalla's words) -> the starroute profile that answers them
PROFILES = {
    "car": "car", "driving": "car", "auto": "car", "bike": "bike", "bicycle": "bike", "cycling": "bike",
    "foot": "foot", "walking": "foot", "pedestrian": "foot", "testbot": "testbot",
}  # fmt: skip
DEFAULT_PROFILE = "car"  # VROOM's, for a vehicle that names none


@dataclass
class Problem:
    """A request read: `body`, the input VROOM gets (without `options`); `points`, the distinct `[lon, lat]` the
    matrix is computed over, in the order of their `location_index` (empty when the request gave `matrices`);
    `geometry`: `options.g`; `given_index`: whether the request gave the indices (so answers keep them)."""

    body: dict[str, Any]
    points: list[tuple[float, float]] = field(default_factory=list)
    geometry: bool = False
    given_index: bool = False
    profile: str = DEFAULT_PROFILE


def _places(body: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str, str, str]]:
    """Every place of the request: (the object holding it, its coordinate key, its index key, a name for errors)."""
    for k, v in enumerate(body.get("vehicles") or ()):
        yield v, "start", "start_index", f"vehicles[{k}].start"
        yield v, "end", "end_index", f"vehicles[{k}].end"
    for k, j in enumerate(body.get("jobs") or ()):
        yield j, "location", "location_index", f"jobs[{k}].location"
    for k, s in enumerate(body.get("shipments") or ()):
        for part in ("pickup", "delivery"):
            step = s.get(part)
            if isinstance(step, dict):
                yield step, "location", "location_index", f"shipments[{k}].{part}.location"


def _coordinate(value: Any, where: str) -> tuple[float, float]:
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value)
    ):
        raise VroomError(INPUT, f"Invalid {where}: a location is [lon, lat].")
    lon, lat = float(value[0]), float(value[1])
    if not (-180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0):
        raise VroomError(INPUT, f"Invalid {where}: [{lon:g}, {lat:g}] is not [lon, lat] on the Earth.")
    return lon, lat


def read(request: dict[str, Any], graph_profile: str, max_locations: int) -> Problem:
    """The request as VROOM will read it. Refused (input error, code 2): more than `max_locations` places (each
    job, shipment pickup and delivery, vehicle start and end counts), a location that is not `[lon, lat]`, a vehicle
    profile that is not the graph's, `location_index` without `matrices`, route geometry without coordinates."""
    body = {k: v for k, v in request.items() if k != "options"}
    options = request.get("options") or {}
    geometry = bool(options.get("g", False)) if isinstance(options, dict) else False
    places = list(_places(body))
    if len(places) > max_locations:
        raise VroomError(INPUT, f"Too many locations: {len(places)}, at most {max_locations} on this server.")
    given = bool(body.get("matrices"))
    if not given or geometry:  # starroute routes for these vehicles: on the graph's profile
        for v in body.get("vehicles") or ():
            name = v.get("profile", DEFAULT_PROFILE) if isinstance(v, dict) else DEFAULT_PROFILE
            if PROFILES.get(name) != graph_profile:
                raise VroomError(INPUT, f"Invalid profile: {name} (this server routes {graph_profile}).")
    problem = Problem(body, geometry=geometry, given_index=given, profile=graph_profile)
    if given:  # the request's own matrices: VROOM reads the indices as they are
        for holder, where, index, name in places:
            if where in holder:
                _coordinate(holder[where], name)
            elif geometry and index in holder:
                raise VroomError(INPUT, f"Route geometry needs coordinates: {name} has only an index.")
        return problem
    seen: dict[tuple[float, float], int] = {}
    for holder, where, index, name in places:
        if index in holder:
            raise VroomError(INPUT, f"{name}: location_index needs matrices (or give [lon, lat]).")
        if where not in holder:
            continue  # a vehicle without a start (or an end); VROOM says what a job without a location is
        point = _coordinate(holder[where], name)
        holder[index] = seen.setdefault(point, len(seen))
    problem.points = list(seen)
    return problem


def with_matrix(problem: Problem, durations: list[list[int]], distances: list[list[int]]) -> dict[str, Any]:
    """The input VROOM reads: the request with every vehicle on the profile of `matrices` and starroute's matrix
    (whole seconds and metres) as that profile's."""
    body = dict(problem.body)
    body["vehicles"] = [{**v, "profile": DEFAULT_PROFILE} for v in body.get("vehicles") or ()]
    body["matrices"] = {DEFAULT_PROFILE: {"durations": durations, "distances": distances}}
    return body

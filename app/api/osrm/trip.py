"""OSRM's `/trip/v1/{profile}/{coordinates}`: the fastest tour through the points, answered as osrm-routed does.

Options: `roundtrip` (default true), `source=any|first`, `destination=any|last`, the route's `steps`, `annotations`,
`geometries`, `overview` and `waypoints` (accepted and, as in OSRM, without effect: a trip has a leg per stop), and
the general ones (`radiuses`, `bearings`, `approaches`, `exclude`, `hints`, `generate_hints`, `skip_waypoints`,
`snapping`); `alternatives` and `continue_straight` are not trip options (`InvalidQuery`), as in OSRM's grammar.

The answer: `{"code": "Ok", "trips": [Route], "waypoints": [Waypoint + trips_index + waypoint_index]}`, the
waypoints in request order, each with its place in the trip. Refusals in osrm-routed's order: `InvalidOptions` (per
point lists of the wrong length, fewer than two points, a `waypoints` index out of range), `NotImplemented`
(`roundtrip=false` with `source=any` and `destination=any`), `TooBig` (more than `max_trip_size` points, OSRM's
`--max-trip-size`), `InvalidValue` (a coordinate out of range), `NoSegment`, `NoTrips` (some point cannot reach
another). The order itself is the engine's (`app.engine.features.trip`).
"""

from __future__ import annotations

from typing import Any

from app.api.osrm.grammar import OsrmRequest, OsrmTripOptions
from app.api.osrm.shapes import check_common, check_coordinates, route_object, waypoint, waypoints
from app.api.service import Service
from app.engine.errors import EngineError
from app.engine.facade import TripRequest


async def trip(svc: Service, req: OsrmRequest[OsrmTripOptions]) -> dict[str, Any]:
    """Answer `/trip/v1`: one trip through every coordinate, its waypoints with their place in it."""
    o = req.options
    n = len(req.coordinates)
    radiuses = check_common(req)
    if any(i >= n for i in o.waypoints or ()):  # osrm-routed: InvalidOptions, no message
        raise EngineError("", "InvalidOptions")
    engine_req = TripRequest(
        waypoints(req, radiuses),
        roundtrip=o.roundtrip,
        source=o.source,
        destination=o.destination,
        exclude=o.exclude,
    )
    svc.opened.check_trip(engine_req)
    check_coordinates(req)
    answer = await svc.trip(engine_req)
    body: dict[str, Any] = {"code": "Ok", "trips": [route_object(svc.opened, answer.route, None, o)]}
    if not o.skip_waypoints:
        places = answer.waypoint_index
        body["waypoints"] = [
            {**waypoint(ph, o.generate_hints), "trips_index": 0, "waypoint_index": places[i]}
            for i, ph in enumerate(answer.phantoms)
        ]
    return body

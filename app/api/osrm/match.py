"""OSRM's `/match/v1`: a GPS trace matched onto the roads, answered in osrm-routed's shape.

Options as osrm-routed takes them: `timestamps` (s, non-decreasing), `radiuses` (the GPS standard deviation per
point, default 5 m; candidates lie within 3 of them), `gaps=split|ignore`, `tidy`, `waypoints` (legs between the
given points merge; the trace must then match in one piece), `steps`, `annotations`, `geometries`, `overview`,
`bearings`, `exclude`, `generate_hints`, `skip_waypoints`. Accepted without effect: `hints`, `approaches`,
`snapping`. The answer: `matchings` (Route objects with `confidence`) and `tracepoints` (a Waypoint per input point
with `matchings_index`, `waypoint_index`, `alternatives_count`; null for a point tidied away or not matched).
Limits: `max_matching_size` points (osrm-routed's `--max-matching-size`, 100) and `max_matching_radius_m`
(`--max-matching-radius`, unlimited by default). The work is `Engine.match` (`app.engine.features.match`).
"""

from __future__ import annotations

from typing import Any

from app.api.osrm.grammar import OsrmMatchOptions, OsrmRequest
from app.api.osrm.shapes import (
    bearings_of,
    check_common,
    check_coordinates,
    check_size,
    check_two_points,
    invalid_options,
    route_object,
    waypoint,
)
from app.api.service import Service
from app.engine.errors import TooBig
from app.engine.facade import Engine, MatchAnswer, MatchRequest


async def match(svc: Service, req: OsrmRequest[OsrmMatchOptions]) -> dict[str, Any]:
    """Answer `/match/v1`: OSRM's checks in its order, then the matching in the search pool."""
    o = req.options
    n = len(req.coordinates)
    radiuses = check_common(req)
    if o.timestamps is not None:
        check_size("timestamps", len(o.timestamps), n)
    check_two_points(n)
    if o.waypoints is not None and any(w >= n for w in o.waypoints):
        raise invalid_options("Waypoints must be valid coordinate indices")
    limit = svc.settings.max_matching_size
    if n > limit:
        raise TooBig("Too many trace coordinates")
    check_coordinates(req)
    mreq = MatchRequest(
        req.coordinates,
        timestamps=o.timestamps,
        radiuses=radiuses,
        bearings=bearings_of(o),
        split_gaps=o.gaps == "split",
        tidy=o.tidy,
        waypoints=o.waypoints,
        exclude=o.exclude,
    )
    answer = await svc.match(mreq)
    return _body(svc.opened, answer, o)


def _body(engine: Engine, answer: MatchAnswer, o: OsrmMatchOptions) -> dict[str, Any]:
    """`{code, matchings, tracepoints}` as osrm-routed writes them."""
    matchings = []
    for m in answer.matchings:
        route = route_object(engine, m.route, m.legs_at, o)
        route["confidence"] = m.confidence
        matchings.append(route)
    body: dict[str, Any] = {"code": "Ok", "matchings": matchings}
    if not o.skip_waypoints:
        body["tracepoints"] = [
            None
            if tp is None
            else {
                **waypoint(tp.phantom, o.generate_hints),
                "matchings_index": tp.matching,
                "waypoint_index": tp.waypoint,
                "alternatives_count": tp.alternatives,
            }
            for tp in answer.tracepoints
        ]
    return body

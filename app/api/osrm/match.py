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

from app.api.osrm.handlers import OsrmRequest, _bearings_of, _check_common, _check_coordinates, _route_object, waypoint
from app.api.service import Service
from app.engine.errors import EngineError, TooBig
from app.engine.facade import MatchAnswer, MatchRequest


def _invalid(message: str) -> EngineError:
    return EngineError(message, "InvalidOptions")


async def match(svc: Service, req: OsrmRequest) -> dict[str, Any]:
    """Answer `/match/v1`: OSRM's checks in its order, then the matching in the search pool."""
    o = req.options
    n = len(req.coordinates)
    radiuses = _check_common(req)
    ts = o.get("timestamps")
    if ts is not None and len(ts) != n:
        raise _invalid(f"Number of elements in timestamps size {len(ts)} does not match coordinate size {n}")
    if n < 2:
        raise _invalid("Number of coordinates needs to be at least two.")
    wps = o.get("waypoints")
    if wps is not None and any(w >= n for w in wps):
        raise _invalid("Waypoints must be valid coordinate indices")
    limit = svc.settings.max_matching_size
    if n > limit:
        raise TooBig("Too many trace coordinates")
    _check_coordinates(req)
    mreq = MatchRequest(
        req.coordinates,
        timestamps=ts,
        radiuses=radiuses,
        bearings=_bearings_of(req),
        split_gaps=o.get("gaps", "split") == "split",
        tidy=o.get("tidy", False),
        waypoints=wps,
        exclude=o.get("exclude", []),
    )
    answer = await svc.match(mreq)
    return _body(svc, answer, o)


def _body(svc: Service, answer: MatchAnswer, o: dict[str, Any]) -> dict[str, Any]:
    """`{code, matchings, tracepoints}` as osrm-routed writes them."""
    matchings = []
    for m in answer.matchings:
        route = _route_object(svc, m.route, m.legs_at, o)
        route["confidence"] = m.confidence
        matchings.append(route)
    body: dict[str, Any] = {"code": "Ok", "matchings": matchings}
    if not o.get("skip_waypoints", False):
        hints = o.get("generate_hints", True)
        body["tracepoints"] = [
            None
            if tp is None
            else {
                **waypoint(tp.phantom, hints),
                "matchings_index": tp.matching,
                "waypoint_index": tp.waypoint,
                "alternatives_count": tp.alternatives,
            }
            for tp in answer.tracepoints
        ]
    return body

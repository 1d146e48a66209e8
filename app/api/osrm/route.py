"""OSRM's `/route/v1/{profile}/{coordinates}`: the best route through the points, and up to `alternatives` more
between two of them (`app.engine.features.alternatives`), answered as osrm-routed does.

`exclude=` takes one of the profile's excludable class sets (car: `toll`, `motorway`, `ferry`; anything else is
`InvalidValue`, as in OSRM): the route runs on the hierarchy contracted without them, and snapping skips them.
`bearings` filter the snapped segments; `approaches=curb|opposite` keep the direction that passes the point on its
right / left; `continue_straight` (default: the profile's; car true) forbids turning back at via points on an
edge-based graph; `waypoints` name the coordinates whose legs stay apart (the others are only passed). `snapping=any`
lets points snap onto roads that refuse waypoints (car: private service roads; not onto roads of other travel modes,
such as ferries, which OSRM's `any` allows too). `annotations=nodes` gives the OSM node id behind every coordinate.
Accepted but without effect (as OSRM allows): `hints`. With `steps=true`, `voice_instructions=true` and
`banner_instructions=true` add the Mapbox Directions API's navigation fields to each step
(`app.api.instructions.navigation`; `voice_units=imperial|metric`), in `language` (default en).

Refusals in osrm-routed's order: `InvalidOptions` (per point lists of the wrong length, a bearing out of range,
fewer than two points), `TooBig` (more than `max_via_points` points, more than `max_alternatives` alternatives),
`InvalidValue` (a coordinate out of range), `InvalidOptions`/`InvalidValue` (bad `waypoints`), then the engine's.
"""

from __future__ import annotations

from typing import Any

from app.api.osrm.grammar import OsrmRequest, OsrmRouteOptions
from app.api.osrm.shapes import check_common, check_coordinates, check_two_points, route_object, waypoint, waypoints
from app.api.service import Service
from app.engine.errors import EngineError, InvalidValue, TooBig
from app.engine.facade import RouteRequest


async def route(svc: Service, req: OsrmRequest[OsrmRouteOptions]) -> dict[str, Any]:
    """Answer `/route/v1`: the best route, and up to `alternatives` more between two coordinates."""
    o = req.options
    n = len(req.coordinates)
    radiuses = check_common(req)
    check_two_points(n)
    limit = svc.settings.max_via_points
    if n > limit:
        raise TooBig(f"Number of entries {n} is higher than current maximum ({limit})")
    # OSRM's words, and before the coordinates' check; the engine's own bound (`Engine.resolve_route`) words it
    # otherwise and sees 0 alternatives for more than two points
    if o.alternatives > svc.settings.max_alternatives:
        raise TooBig(
            f"Requested number of alternatives is higher than current maximum ({svc.settings.max_alternatives})"
        )
    check_coordinates(req)
    wps = o.waypoints
    if wps is not None:
        if any(i >= n for i in wps):  # osrm-routed: InvalidOptions, no message
            raise EngineError("", "InvalidOptions")
        if wps[0] != 0 or wps[-1] != n - 1:
            raise InvalidValue("First and last coordinates must be specified as waypoints.")
        if any(b <= a for a, b in zip(wps, wps[1:], strict=False)) or wps[-1] >= n:
            raise InvalidValue("Waypoints must be supplied in increasing order")
    navigation = o.voice_instructions or o.banner_instructions
    if navigation and not o.steps:
        raise InvalidValue("voice_instructions and banner_instructions need steps=true")
    engine_req = RouteRequest(
        waypoints(req, radiuses),
        exclude=o.exclude,
        alternatives=o.alternatives if n == 2 else 0,  # OSRM looks for alternatives between two points only
        continue_straight=o.continue_straight,
        depart_at=o.depart_at,
        arrive_by=o.arrive_by,
    )
    answer = await svc.route(engine_req)
    phantoms = answer.phantoms
    routes = [route_object(svc.opened, r, wps, o) for r in answer.result.routes]
    if navigation:  # Mapbox Directions' navigation fields (`app.api.instructions.navigation`)
        from app.api.instructions.navigation import add_navigation

        language = o.language or "en"
        for r in routes:
            add_navigation(
                r["legs"], language, voice_instructions=o.voice_instructions,
                banner_instructions=o.banner_instructions, units=o.voice_units,
            )  # fmt: skip
            if o.voice_instructions:
                r["voiceLocale"] = language
    body: dict[str, Any] = {"code": "Ok", "routes": routes}
    if answer.departure is not None:  # our extension: when the time-dependent route leaves and arrives
        for r in routes:
            r["departure"], r["arrival"] = answer.departure, answer.arrival
    if not o.skip_waypoints:
        keep = range(n) if wps is None else wps
        body["waypoints"] = [waypoint(phantoms[i], o.generate_hints) for i in keep]
    return body

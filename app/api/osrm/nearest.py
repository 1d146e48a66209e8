"""OSRM's `/nearest/v1/{profile}/{coordinates}`: the `number` nearest road segments to each point, with their OSM
node ids, answered as osrm-routed does (one list per coordinate when several are given, as osrm-routed 26 answers
them). `exclude` skips the excluded classes' roads; `snapping` is ignored, as osrm-routed ignores it here."""

from __future__ import annotations

from typing import Any

from app.api.osrm.grammar import OsrmNearestOptions, OsrmRequest
from app.api.osrm.shapes import check_common, check_coordinates, invalid_options, waypoint
from app.api.service import Service
from app.engine.errors import NoSegment, TooBig
from app.engine.facade import NearestRequest


async def nearest(svc: Service, req: OsrmRequest[OsrmNearestOptions]) -> dict[str, Any]:
    """Answer `/nearest/v1`: up to `number` snapped points per coordinate."""
    o = req.options
    radiuses = check_common(req)
    if o.number < 1:
        raise invalid_options("Number of results must be at least 1")
    if o.number > svc.settings.max_nearest:
        raise TooBig(f"Number of results {o.number} is higher than current maximum ({svc.settings.max_nearest})")
    check_coordinates(req)
    lists = []
    for i, (lon, lat) in enumerate(req.coordinates):
        radius = radiuses[i] if radiuses else None
        try:
            found = svc.nearest(NearestRequest(lon, lat, o.number, radius, o.exclude))
        except NoSegment:
            raise NoSegment(f"Could not find a matching segment for coordinate {i}") from None
        lists.append([{"nodes": list(ph.osm_nodes), **waypoint(ph, o.generate_hints)} for ph in found])
    return {"code": "Ok", "waypoints": lists[0] if len(lists) == 1 else lists}

"""OSRM's `/table/v1/{profile}/{coordinates}`: durations and/or distances between the sources and the destinations,
null where no route exists, answered as osrm-routed does.

`annotations=duration|distance|duration,distance` choose the matrices; `fallback_speed` (m/s) fills the cells
without a route with the straight-line distance at that speed, measured from the input points or the snapped ones
(`fallback_coordinate`), and lists them in `fallback_speed_cells`; `scale_factor` multiplies the durations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from app.api.geometry import segment_lengths_m
from app.api.osrm.grammar import OsrmRequest, OsrmTableOptions
from app.api.osrm.shapes import check_common, check_coordinates, check_two_points, invalid_options, waypoint, waypoints
from app.api.service import Service
from app.engine.errors import TooBig
from app.engine.facade import TableRequest


async def table(svc: Service, req: OsrmRequest[OsrmTableOptions]) -> dict[str, Any]:
    """Answer `/table/v1`: durations (and/or distances) between sources and destinations, null when unreachable."""
    o = req.options
    n = len(req.coordinates)
    radiuses = check_common(req)
    check_two_points(n)
    src = list(o.sources or range(n))
    dst = list(o.destinations or range(n))
    if any(i >= n for i in src) or any(i >= n for i in dst):
        raise invalid_options("Source and destination indices must be less than the number of coordinates")
    for key, value in (("fallback_speed", o.fallback_speed), ("scale_factor", o.scale_factor)):
        if value is not None and value <= 0:
            raise invalid_options(f"{key} must be > 0")
    limit = svc.settings.max_table_size
    if len(src) * len(dst) > limit * limit:
        raise TooBig("Too many table coordinates")
    check_coordinates(req)
    treq = TableRequest(waypoints(req, radiuses), src, dst, o.exclude, depart_at=o.depart_at)
    tbl, _, _ = await svc.table(treq)
    phantoms = tbl.sources + tbl.destinations
    durations = np.asarray(tbl.durations_s, dtype=np.float64) * o.scale_factor
    distances = np.asarray(tbl.distances_m, dtype=np.float64)
    body: dict[str, Any] = {"code": "Ok"}
    speed = o.fallback_speed
    if speed is not None:
        missing = np.isnan(durations)
        body["fallback_speed_cells"] = []  # as osrm-routed: present, empty when every cell was routed
        if missing.any():
            snapped = o.fallback_coordinate == "snapped"
            pts = np.array([(p.lon, p.lat) if snapped else (p.input_lon, p.input_lat) for p in phantoms])
            si, dj = np.nonzero(missing)
            a = pts[si]
            b = pts[len(src) + dj]
            crow = segment_lengths_m(np.stack([a, b], axis=1).reshape(-1, 2))[::2]
            durations[si, dj] = crow / speed
            distances[si, dj] = crow
            body["fallback_speed_cells"] = np.stack([si, dj], axis=1)
    if "duration" in o.annotations:
        body["durations"] = np.round(durations, 1)
    if "distance" in o.annotations:
        body["distances"] = np.round(distances, 1)
    body["sources"] = [waypoint(p, o.generate_hints) for p in tbl.sources]
    body["destinations"] = [waypoint(p, o.generate_hints) for p in tbl.destinations]
    if tbl.departure is not None:  # our extension: the durations are those of this departure
        body["departure"] = tbl.departure
    return body

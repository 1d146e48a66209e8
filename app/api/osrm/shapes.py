"""The pieces of OSRM answers the services share, and their shared checks: Waypoint objects, Route objects (legs,
steps, annotations, the overview geometry in the requested encoding), and the checks of per-coordinate option lists,
bearings, coordinates and the "at least two" rule, in osrm-routed's codes and words."""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from app.api.geometry import simplify, valid_lonlat
from app.api.osrm import polyline
from app.api.osrm.grammar import OsrmOptions, OsrmRequest, OsrmRouteLikeOptions
from app.engine.errors import EngineError, InvalidValue
from app.engine.facade import Engine, Waypoints
from app.engine.route.legs import merge_legs, segment_figures
from app.engine.types import Leg, Phantom, Route


# --- checks ------------------------------------------------------------------------------------------------------
def invalid_options(message: str) -> EngineError:
    """OSRM's `InvalidOptions` with `message`."""
    return EngineError(message, "InvalidOptions")


def check_size(name: str, size: int, n: int) -> None:
    """A per-coordinate list of `size` elements against `n` coordinates (`InvalidOptions` in OSRM's words)."""
    if size != n:
        raise invalid_options(f"Number of elements in {name} size {size} does not match coordinate size {n}")


def check_common(req: OsrmRequest[OsrmOptions]) -> Sequence[float | None] | None:
    """The checks every service but tile makes first: per-coordinate lists as long as the coordinates, bearings in
    range; returns the per-coordinate snap radii."""
    o, n = req.options, len(req.coordinates)
    lists = (("hints", o.hints), ("bearings", o.bearings), ("radiuses", o.radiuses), ("approaches", o.approaches))
    for name, value in lists:
        if value is not None:
            check_size(name, len(value), n)
    for b in o.bearings or ():
        if b is not None and not (b[0] <= 360 and b[1] <= 180):
            raise invalid_options("Bearing must be in 0..360 and its range in 0..180")
    return o.radiuses


def check_two_points(n: int) -> None:
    """Route, table and match need two coordinates at least."""
    if n < 2:
        raise invalid_options("Number of coordinates needs to be at least two.")


def check_coordinate(lon: float, lat: float) -> None:
    """OSRM's coordinate check (`valid_lonlat`), else `InvalidValue` in osrm-routed's words."""
    if not valid_lonlat(lon, lat):
        raise InvalidValue("Invalid coordinate value.")


def check_coordinates(req: OsrmRequest[Any]) -> None:
    """Every coordinate of the request (`check_coordinate`)."""
    for lon, lat in req.coordinates:
        check_coordinate(lon, lat)


# --- what the engine is asked ------------------------------------------------------------------------------------
def bearings_of(o: OsrmOptions) -> list[tuple[float, float] | None] | None:
    """OSRM `bearings` as (value, range) degree pairs per coordinate (None where not given)."""
    b = o.bearings
    return None if b is None else [None if x is None else (float(x[0]), float(x[1])) for x in b]


def waypoints(req: OsrmRequest[OsrmOptions], radiuses: Sequence[float | None] | None) -> Waypoints:
    """The request's points with OSRM's per-coordinate options (radii unlimited unless given)."""
    o = req.options
    return Waypoints(req.coordinates, radiuses, bearings_of(o), o.approaches, any_edge=o.snapping == "any")


# --- answers -----------------------------------------------------------------------------------------------------
def _hint_for(ph: Phantom) -> str:
    return base64.urlsafe_b64encode(struct.pack("<ii", ph.chain, ph.segment)).decode("ascii")


def round6(x: float) -> float:
    """`np.round(x, 6)` for one float (the same rounding as the geometries), without numpy's per-call cost."""
    return round(x * 1e6) / 1e6


def waypoint(ph: Phantom, hints: bool = True) -> dict[str, Any]:
    """OSRM's Waypoint object: snapped location (6 decimals), distance from the input, road name, hint."""
    wp: dict[str, Any] = {
        "location": [round6(ph.lon), round6(ph.lat)],
        "name": ph.name,
        "distance": round(ph.distance_m, 6),
    }
    if hints:
        wp["hint"] = _hint_for(ph)
    return wp


def geometry_encoder(kind: str) -> Callable[[np.ndarray], Any]:
    """How `geometries=kind` writes a line of (lon, lat) rows: polyline (5 digits), polyline6, GeoJSON LineString."""
    if kind == "polyline6":
        return lambda c: polyline.encode(c, 6)
    if kind == "geojson":
        return lambda c: {"type": "LineString", "coordinates": np.round(c, 6)}
    return lambda c: polyline.encode(c, 5)


def annotation(leg: Leg, fields: tuple[str, ...], engine: Engine | None = None) -> dict[str, Any]:
    """Per-segment annotation arrays (one value per pair of consecutive coordinates): with `engine`, each segment's
    own time and weight as OSRM's (no turns or node obstacles), else pieces split by length; `nodes`: the OSM node
    id behind every coordinate (one more than the segments), from `engine`."""
    dist, dur, wgt = engine.leg_segment_figures(leg) if engine is not None else segment_figures(leg)
    out: dict[str, Any] = {}
    if "nodes" in fields and engine is not None:
        out["nodes"] = engine.leg_nodes(leg)
    if "distance" in fields:
        out["distance"] = np.round(dist, 8)
    if "duration" in fields:
        out["duration"] = np.round(dur, 1)
    if "weight" in fields:
        out["weight"] = np.round(wgt, 1)
    if "speed" in fields:
        out["speed"] = np.round(np.divide(dist, dur, out=np.zeros_like(dist), where=dur > 0), 1)
    if "datasources" in fields:
        out["datasources"] = np.zeros(dist.shape[0], dtype=np.int64)
        out["metadata"] = {"datasource_names": ["lua profile"]}
    return out


def route_object(engine: Engine, r: Route, wps: Sequence[int] | None, o: OsrmRouteLikeOptions) -> dict[str, Any]:
    """One OSRM Route object: legs (steps, annotations), totals, the overview geometry; `wps`: the coordinates that
    are waypoints (the legs between them merge), None: all."""
    fields = o.annotations
    legs = r.legs if wps is None else [merge_legs(r.legs[a:b]) for a, b in zip(wps, wps[1:], strict=False)]
    geom = geometry_encoder(o.geometries)
    overview = o.overview
    roads = engine.roads if o.steps else None
    if roads is not None:  # guidance is imported on the first steps request, not at start-up
        from app.api.osrm.steps import add_instructions, build_steps, summary
    legs_out = []
    for i, leg in enumerate(legs):
        steps = build_steps(leg, roads, geom) if roads is not None else []
        if steps and o.language is not None:
            add_instructions(steps, o.language, i, len(legs))
        obj: dict[str, Any] = {
            "steps": steps,
            "summary": summary(steps) if steps else "",
            "weight": round(leg.weight_s, 1),
            "duration": round(leg.duration_s, 1),
            "distance": round(leg.distance_m, 1),
        }
        if fields:
            obj["annotation"] = annotation(leg, fields, engine)
        if overview == "by_legs":
            obj["geometry"] = geom(leg.coordinates)
        legs_out.append(obj)
    route_obj: dict[str, Any] = {
        "legs": legs_out,
        "weight_name": engine.meta.weight_name,
        "weight": round(r.weight_s, 1),
        "duration": round(r.duration_s, 1),
        # OSRM's route distance is the sum of its legs' rounded distances (`assembleLeg` rounds each to 0.1 m)
        "distance": round(sum(leg["distance"] for leg in legs_out), 1),
    }
    if overview == "full":
        route_obj["geometry"] = geom(r.coordinates)
    elif overview == "simplified":
        route_obj["geometry"] = geom(simplify(r.coordinates))
    return route_obj

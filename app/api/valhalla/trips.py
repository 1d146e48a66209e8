"""A route as Valhalla's `trip`: its locations, legs (shape as polyline6, maneuvers, summary), summary, units,
language and status.

The maneuvers are the OSRM steps of each leg (`app.api.osrm.steps`, the engine's guidance) with their text from
`app.api.instructions` in the request's language; only the OSRM maneuver (type, modifier) is translated into
Valhalla's maneuver type number. `begin_shape_index` / `end_shape_index` are indices into the leg's shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from app.api.osrm.polyline import encode
from app.api.osrm.steps import add_instructions, step_json
from app.engine.facade import Engine

if TYPE_CHECKING:
    from app.engine.types import Leg, Route

# Valhalla's DirectionsLeg.Maneuver.Type numbers
START, START_RIGHT, START_LEFT, DESTINATION, DESTINATION_RIGHT, DESTINATION_LEFT = 1, 2, 3, 4, 5, 6
BECOMES, CONTINUE, SLIGHT_RIGHT, RIGHT, SHARP_RIGHT, UTURN_RIGHT, UTURN_LEFT = 7, 8, 9, 10, 11, 12, 13
SHARP_LEFT, LEFT, SLIGHT_LEFT, RAMP_STRAIGHT, RAMP_RIGHT, RAMP_LEFT, EXIT_RIGHT, EXIT_LEFT = (
    14,
    15,
    16,
    17,
    18,
    19,
    20,
    21,
)
STAY_STRAIGHT, STAY_RIGHT, STAY_LEFT, MERGE, ROUNDABOUT_ENTER, ROUNDABOUT_EXIT = 22, 23, 24, 25, 26, 27
FERRY_ENTER, FERRY_EXIT, MERGE_RIGHT, MERGE_LEFT = 28, 29, 37, 38
_TURNS = {
    "sharp left": SHARP_LEFT, "left": LEFT, "slight left": SLIGHT_LEFT, "straight": CONTINUE,
    "slight right": SLIGHT_RIGHT, "right": RIGHT, "sharp right": SHARP_RIGHT,
}  # fmt: skip
_SIDES = {"left": -1, "sharp left": -1, "slight left": -1, "right": 1, "sharp right": 1, "slight right": 1}
STATUS_MESSAGE = "Found route between points"


def maneuver_type(kind: str, modifier: str | None, driving_side: str = "right") -> int:
    """Valhalla's maneuver type for an OSRM maneuver: start / destination by side, roundabouts 26 (leaving 27),
    ramps 17-21, forks stay 22-24, merges 25/37/38, u-turns by the side traffic keeps, turns by their modifier."""
    side = _SIDES.get(modifier or "straight", 0)
    if kind == "depart":
        return START_RIGHT if side > 0 else START_LEFT if side < 0 else START
    if kind == "arrive":
        return DESTINATION_RIGHT if side > 0 else DESTINATION_LEFT if side < 0 else DESTINATION
    if kind in ("roundabout", "rotary", "roundabout turn"):
        return ROUNDABOUT_ENTER
    if kind in ("exit roundabout", "exit rotary"):
        return ROUNDABOUT_EXIT
    if modifier == "uturn":
        return UTURN_LEFT if driving_side == "right" else UTURN_RIGHT
    if kind == "on ramp":
        return RAMP_RIGHT if side > 0 else RAMP_LEFT if side < 0 else RAMP_STRAIGHT
    if kind == "off ramp":
        return EXIT_RIGHT if side > 0 else EXIT_LEFT if side < 0 else RAMP_STRAIGHT
    if kind == "fork":
        return STAY_RIGHT if side > 0 else STAY_LEFT if side < 0 else STAY_STRAIGHT
    if kind == "merge":
        return MERGE_RIGHT if side > 0 else MERGE_LEFT if side < 0 else MERGE
    if kind == "new name" and side == 0:
        return BECOMES
    return _TURNS.get(modifier or "straight", CONTINUE)


def shape(coords: np.ndarray, fmt: str) -> Any:
    """A leg's shape: polyline6 (Valhalla's default), polyline5, or a GeoJSON LineString."""
    if fmt == "geojson":
        return {"type": "LineString", "coordinates": np.round(coords, 6).tolist()}
    return encode(coords, 5 if fmt == "polyline5" else 6) if coords.shape[0] else ""


def summary(coords: np.ndarray, time_s: float, length_m: float, cost_s: float, unit_m: float) -> dict[str, Any]:
    """Valhalla's summary: time (s), length (in the units), cost, and the bounding box of the shape."""
    lo, hi = coords.min(axis=0), coords.max(axis=0)
    return {
        "time": round(float(time_s), 3),
        "length": round(float(length_m) / unit_m, 3),
        "cost": round(float(cost_s), 3),
        "min_lat": round(float(lo[1]), 6),
        "min_lon": round(float(lo[0]), 6),
        "max_lat": round(float(hi[1]), 6),
        "max_lon": round(float(hi[0]), 6),
    }


def maneuvers(
    engine: Engine, leg: Leg, language: str | None, index: int, count: int, unit_m: float, travel: tuple[str, str]
) -> list[dict[str, Any]]:
    """One leg's maneuvers from its OSRM steps: the type, text (None: without), street names, time, length and the
    stretch of the leg's shape each covers (a maneuver runs to the next one's first point)."""
    roads = engine.roads
    steps = roads.steps(leg)
    coords = np.asarray(leg.coordinates, dtype=np.float64)
    last = max(coords.shape[0] - 1, 0)
    osrm = [step_json(s, coords, lambda _: None, roads.driving_side) for s in steps]
    if language is not None:
        add_instructions(osrm, language, index, count)
    begins = [min(s.geometry_begin, last) for s in steps]
    out = []
    for k, (step, js) in enumerate(zip(steps, osrm, strict=True)):
        m = js["maneuver"]
        begin = last if m["type"] == "arrive" else begins[k]
        end = last if k + 1 == len(steps) else max(begin, begins[k + 1])
        man: dict[str, Any] = {"type": maneuver_type(m["type"], m.get("modifier"), roads.driving_side)}
        if language is not None:
            man["instruction"] = m["instruction"]
        names = [n for n in (step.name, step.ref) if n]
        if names:
            man["street_names"] = names
        man |= {
            "time": round(float(step.duration), 3),
            "length": round(float(step.length) / unit_m, 3),
            "cost": round(float(step.weight), 3),
            "begin_shape_index": begin,
            "end_shape_index": end,
            "travel_mode": travel[0],
            "travel_type": travel[1],
            "bearing_before": m["bearing_before"],
            "bearing_after": m["bearing_after"],
        }
        if m["type"] in ("roundabout", "rotary", "roundabout turn") and m.get("exit"):
            man["roundabout_exit_count"] = int(m["exit"])
        out.append(man)
    return out


def trip(
    engine: Engine, route: Route, locations: list[dict[str, Any]], *, miles: bool, language: str | None,
    language_tag: str, shape_format: str, travel: tuple[str, str], with_maneuvers: bool = True,
) -> dict[str, Any]:  # fmt: skip
    """Valhalla's `trip` of one route: `language` None answers maneuvers without text; `travel` is Valhalla's
    (travel_mode, travel_type); without maneuvers (directions_type none) legs carry only shape and summary."""
    unit_m = 1609.344 if miles else 1000.0
    legs = []
    for i, leg in enumerate(route.legs):
        coords = np.round(np.asarray(leg.coordinates, dtype=np.float64), 6)
        out: dict[str, Any] = {
            "shape": shape(coords, shape_format),
            "summary": summary(coords, leg.duration_s, leg.distance_m, leg.weight_s, unit_m),
        }
        if with_maneuvers:
            out["maneuvers"] = maneuvers(engine, leg, language, i, len(route.legs), unit_m, travel)
        legs.append(out)
    coords = np.round(np.asarray(route.coordinates, dtype=np.float64), 6)
    if coords.shape[0] == 0:
        coords = np.array([[loc["lon"], loc["lat"]] for loc in locations], dtype=np.float64)
    return {
        "locations": locations,
        "legs": legs,
        "summary": summary(coords, route.duration_s, route.distance_m, route.weight_s, unit_m),
        "status_message": STATUS_MESSAGE,
        "status": 0,
        "units": "miles" if miles else "kilometers",
        "language": language_tag,
    }

"""A route as GraphHopper's `paths[]` entry: points (polyline, precision 5, or a GeoJSON LineString), bbox, the
snapped waypoints, instructions and path details.

The instructions are the OSRM steps of each leg (`app.api.osrm.steps`, the engine's guidance) with their text from
`app.api.instructions` in the request's language; only the OSRM maneuver (type, modifier) is translated into
GraphHopper's `sign`. `interval` holds indices into the path's points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from app.api.osrm.polyline import encode
from app.api.osrm.steps import add_instructions, step_json
from app.engine.facade import Engine

if TYPE_CHECKING:
    from app.engine.types import Leg, Phantom, Route

# GraphHopper's Instruction signs
U_TURN_LEFT, KEEP_LEFT, LEAVE_ROUNDABOUT, SHARP_LEFT, LEFT, SLIGHT_LEFT = -8, -7, -6, -3, -2, -1
CONTINUE, SLIGHT_RIGHT, RIGHT, SHARP_RIGHT, FINISH, REACHED_VIA, USE_ROUNDABOUT, KEEP_RIGHT, U_TURN_RIGHT = (
    0, 1, 2, 3, 4, 5, 6, 7, 8,
)  # fmt: skip
_TURNS = {
    "sharp left": SHARP_LEFT, "left": LEFT, "slight left": SLIGHT_LEFT, "straight": CONTINUE,
    "slight right": SLIGHT_RIGHT, "right": RIGHT, "sharp right": SHARP_RIGHT,
}  # fmt: skip
_ROUNDABOUTS = frozenset({"roundabout", "rotary", "roundabout turn"})
_EXITS = frozenset({"exit roundabout", "exit rotary"})
_KEEPS = frozenset({"fork", "on ramp", "off ramp", "merge"})
ROAD_DETAILS = ("road_class", "max_speed")  # path details read from the graph's encoded values


def sign(kind: str, modifier: str | None, driving_side: str = "right") -> int:
    """GraphHopper's sign for an OSRM maneuver: roundabouts 6 (leaving one -6), forks and ramps keep left/right
    (-7/7), a u-turn -8 where traffic keeps right (8 where it keeps left), turns by their modifier, the rest 0."""
    if kind == "arrive":
        return FINISH
    if kind == "depart":
        return CONTINUE
    if kind in _ROUNDABOUTS:
        return USE_ROUNDABOUT
    if kind in _EXITS:
        return LEAVE_ROUNDABOUT
    if modifier == "uturn":
        return U_TURN_LEFT if driving_side == "right" else U_TURN_RIGHT
    turn = _TURNS.get(modifier or "straight", CONTINUE)
    if kind in _KEEPS and turn != CONTINUE:
        return KEEP_LEFT if turn < 0 else KEEP_RIGHT
    return turn


def points_json(coords: np.ndarray, encoded: bool) -> Any:
    """Points as GraphHopper writes them: a polyline of precision 5, or a GeoJSON LineString `[lon, lat]`."""
    if encoded:
        return encode(coords, 5) if coords.shape[0] else ""
    return {"type": "LineString", "coordinates": np.round(coords, 6).tolist()}


def bbox(coords: np.ndarray) -> list[float]:
    """`[minLon, minLat, maxLon, maxLat]` of the points."""
    lo, hi = coords.min(axis=0), coords.max(axis=0)
    return [round(float(lo[0]), 6), round(float(lo[1]), 6), round(float(hi[0]), 6), round(float(hi[1]), 6)]


def _leg_instructions(
    engine: Engine, leg: Leg, language: str, index: int, count: int, offset: int
) -> list[tuple[int, dict[str, Any]]]:
    """(first point index in the path, instruction) of one leg's steps; a later leg's departure is left out (the
    path goes on), an arrival before the last is GraphHopper's "reached via"."""
    roads = engine.roads
    steps = roads.steps(leg)
    coords = np.asarray(leg.coordinates, dtype=np.float64)
    osrm = [step_json(s, coords, lambda _: None, roads.driving_side) for s in steps]
    add_instructions(osrm, language, index, count)
    out = []
    for k, (step, js) in enumerate(zip(steps, osrm, strict=True)):
        m = js["maneuver"]
        if m["type"] == "depart" and index > 0:
            continue
        code = sign(m["type"], m.get("modifier"), roads.driving_side)
        if m["type"] == "arrive" and index < count - 1:
            code = REACHED_VIA
        ins: dict[str, Any] = {
            "distance": round(float(js["distance"]), 3),
            "sign": code,
            "text": m["instruction"],
            "time": int(round(float(js["duration"]) * 1000)),
            "street_name": js["name"],
        }
        if k == 0 and index == 0:
            ins["heading"] = round(float(m["bearing_after"]), 2)
        if code == USE_ROUNDABOUT:
            ins["exit_number"] = int(m.get("exit", 1))
            ins["exited"] = True
        out.append((offset + min(step.geometry_begin, coords.shape[0] - 1), ins))
    return out


def instructions(engine: Engine, route: Route, language: str) -> list[dict[str, Any]]:
    """The route's instructions over all its legs, each with its `interval` of point indices (an instruction runs
    from its point to the next one's; the finish is one point)."""
    found: list[tuple[int, dict[str, Any]]] = []
    offset = 0
    for i, leg in enumerate(route.legs):
        found += _leg_instructions(engine, leg, language, i, len(route.legs), offset)
        offset += len(leg.coordinates) - 1
    last = max(offset, 0)
    out = []
    start = 0
    for k, (begin, ins) in enumerate(found):
        start = max(start, begin)
        end = last if k + 1 == len(found) else max(start, min(found[k + 1][0], last))
        if k + 1 == len(found):
            start = last
        ins["interval"] = [start, end]
        out.append(ins)
    return out


def _merged(rows: list[list[Any]]) -> list[list[Any]]:
    """Consecutive intervals with one value joined, as GraphHopper writes a detail."""
    out: list[list[Any]] = []
    for row in rows:
        if out and out[-1][2] == row[2] and out[-1][1] == row[0]:
            out[-1][1] = row[1]
        elif row[1] > row[0]:
            out.append(row)
    return out


def details(
    engine: Engine, route: Route, names: list[str], instructions_: list[dict[str, Any]]
) -> dict[str, list[list[Any]]]:
    """GraphHopper's path details `{name: [[from, to, value], ...]}`: street names from the instructions, time (ms),
    distance (m) and average speed (km/h) per piece of road, its road class (GraphHopper's names, lower case; a link
    is its road's class) and legal speed limit (km/h, None where none is stated) from the graph's encoded values."""
    out: dict[str, list[list[Any]]] = {}
    pieces: list[tuple[int, int, float, float]] = []
    arcs: list[int] = []
    offset = 0
    for leg in route.legs:
        begin = 0
        for arc, end, dist, dur in zip(
            leg.piece_arc, leg.piece_coord_end, leg.piece_distance_m, leg.piece_duration_s, strict=True
        ):
            pieces.append((offset + begin, offset + int(end), float(dist), float(dur)))
            arcs.append(int(arc))
            begin = int(end)
        offset += len(leg.coordinates) - 1
    for name in names:
        if name in ROAD_DETAILS:
            values = engine.road_values(name, np.asarray(arcs, dtype=np.int64))
            if name == "road_class":
                values = [str(v).lower() for v in values]
            out[name] = _merged([[a, b, v] for (a, b, _, _), v in zip(pieces, values, strict=True)])
            continue
        if name == "street_name":
            rows = [[i["interval"][0], i["interval"][1], i["street_name"]] for i in instructions_]
            out[name] = _merged(rows)
        elif name == "time":
            out[name] = [[a, b, int(round(t * 1000))] for a, b, _, t in pieces if b > a]
        elif name == "distance":
            out[name] = [[a, b, round(d, 3)] for a, b, d, _ in pieces if b > a]
        elif name == "average_speed":
            rows = [[a, b, round(d / t * 3.6, 1) if t > 0 else None] for a, b, d, t in pieces]
            out[name] = _merged(rows)
    return out


def path(
    engine: Engine, route: Route, phantoms: list[Phantom], encoded: bool, calc_points: bool, language: str | None,
    detail_names: list[str],
) -> dict[str, Any]:  # fmt: skip
    """One entry of GraphHopper's `paths`: distance (m), time (ms), weight, points, bbox, snapped waypoints, and
    with `language` the instructions (none without points, as GraphHopper)."""
    coords = np.asarray(route.coordinates, dtype=np.float64)
    snapped = np.array([[ph.lon, ph.lat] for ph in phantoms], dtype=np.float64)
    out: dict[str, Any] = {
        "distance": round(float(route.distance_m), 3),
        "time": int(round(float(route.duration_s) * 1000)),
        "weight": round(float(route.weight_s), 3),
        "transfers": 0,
        "legs": [],
        "ascend": 0.0,
        "descend": 0.0,
        "points_encoded": encoded,
        "bbox": bbox(coords if coords.shape[0] else snapped),
        "snapped_waypoints": points_json(snapped, encoded),
    }
    if encoded:
        out["points_encoded_multiplier"] = 1e5
    if not calc_points:
        out["points"] = points_json(np.zeros((0, 2)), encoded)
        return out
    out["points"] = points_json(coords, encoded)
    ins: list[dict[str, Any]] = []
    if language is not None or "street_name" in detail_names:
        ins = instructions(engine, route, language or "en")
    if language is not None:
        out["instructions"] = ins
    out["details"] = details(engine, route, detail_names, ins)
    return out

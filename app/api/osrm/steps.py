"""OSRM route steps as JSON: the engine's guidance steps (`app.engine.guidance`) in osrm-routed's shapes.

The engine decides the steps (which junctions are announced, with what maneuver, lanes and signage); this module
only writes them out as OSRM's RouteStep objects: geometry in the requested encoding, `maneuver` (type, modifier,
exit, bearings, location), `intersections` (bearings, entry, in/out, lanes with `indications` and `valid`,
classes), `name`, `ref`, `destinations`, `exits`, `pronunciation`, `rotary_name`, `mode`, distance, duration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from app.engine.guidance import (
    LANE_NAMES,
    MODIFIER_NAMES,
    TYPE_NAMES,
    WAYPOINT_ARRIVE,
    WAYPOINT_DEPART,
    RouteStep,
    StepIntersection,
)
from app.engine.types import Leg

GeometryFn = Callable[[np.ndarray], Any]


class RoadView(Protocol):
    """What the step builder needs of the road network (`app.engine.roads.RoadGraph`, from the facade:
    `Router.roads`)."""

    driving_side: str  # "right" or "left": the graph's (`preprocess --driving-side`)

    def steps(self, leg: Leg) -> list[RouteStep]:
        """The guidance steps of a leg."""
        ...


def _loc(p: tuple[float, float]) -> list[float]:
    return [round(p[0] * 1e6) / 1e6, round(p[1] * 1e6) / 1e6]


def lanes_json(inter: StepIntersection) -> list[dict[str, Any]]:
    """OSRM's `lanes` of an intersection: every lane left to right with its arrows and whether it serves the turn."""
    in_turn, first_right = inter.lanes
    out = []
    lane_id = len(inter.lane_desc)
    for mask in inter.lane_desc:
        lane_id -= 1
        indications = [LANE_NAMES[i] for i in range(len(LANE_NAMES)) if mask & (1 << i)]
        valid = first_right <= lane_id < first_right + in_turn
        out.append({"indications": indications, "valid": valid})
    return out


def _intersection(inter: StepIntersection) -> dict[str, Any]:
    out: dict[str, Any] = {
        "location": _loc(inter.location),
        "bearings": [int(b) % 360 for b in inter.bearings],
        "entry": list(inter.entry),
    }
    if inter.in_ is not None:
        out["in"] = inter.in_
    if inter.out is not None:
        out["out"] = inter.out
    if inter.lanes[0] > 0:
        out["lanes"] = lanes_json(inter)
    if inter.classes:
        out["classes"] = list(inter.classes)
    return out


def step_json(step: RouteStep, coords: np.ndarray, geometry: GeometryFn, driving_side: str = "right") -> dict[str, Any]:
    """One OSRM RouteStep object."""
    m = step.maneuver
    if m.waypoint == WAYPOINT_DEPART:
        kind = "depart"
    elif m.waypoint == WAYPOINT_ARRIVE:
        kind = "arrive"
    else:
        kind = TYPE_NAMES[m.kind]
    maneuver: dict[str, Any] = {
        "location": _loc(m.location),
        "bearing_before": int(m.bearing_before) % 360,
        "bearing_after": int(m.bearing_after) % 360,
        "type": kind,
    }
    if m.waypoint == 0 or m.modifier != 0:  # OSRM's isValidModifier: waypoints only with a side of the road
        maneuver["modifier"] = MODIFIER_NAMES[m.modifier]
    if m.exit:
        maneuver["exit"] = m.exit
    b, e = step.geometry_begin, step.geometry_end
    pts = coords[b:e] if e - b >= 2 else coords[[b, b]] if b < coords.shape[0] else coords[[-1, -1]]
    out: dict[str, Any] = {
        "geometry": geometry(pts),
        "maneuver": maneuver,
        "mode": step.mode,
        "driving_side": driving_side,
        "name": step.name,
        "intersections": [_intersection(i) for i in step.intersections],
        "weight": round(step.weight, 1),
        "duration": round(step.duration, 1),
        "distance": round(step.length, 1),
    }
    for key, value in (
        ("ref", step.ref),
        ("pronunciation", step.pronunciation),
        ("destinations", step.destinations),
        ("exits", step.exits),
    ):
        if value:
            out[key] = value
    if step.rotary_name:
        out["rotary_name"] = step.rotary_name
        if step.rotary_pronunciation:
            out["rotary_pronunciation"] = step.rotary_pronunciation
    return out


def build_steps(leg: Leg, roads: RoadView, geometry: GeometryFn, precision: int = 6) -> list[dict[str, Any]]:
    """The OSRM `steps` of one leg (depart, the announced maneuvers, arrive), geometries encoded by `geometry`.

    A step passing a node with a large penalty (a gate: `preprocessing.osm.penalties`) says so in `penalties`
    (`[{"location": [lon, lat], "duration": s}]`, our addition to OSRM's RouteStep; clients ignore it), so the
    minute it costs is not silent."""
    coords = np.round(np.asarray(leg.coordinates, dtype=np.float64), precision)
    steps = roads.steps(leg)
    out = [step_json(s, coords, geometry, roads.driving_side) for s in steps]
    for i, lon, lat, seconds in penalties_on(leg, getattr(roads, "g", None)):
        for st, js in zip(steps, out, strict=True):
            if st.geometry_begin <= i < max(st.geometry_end - 1, st.geometry_begin + 1):
                js.setdefault("penalties", []).append({"location": _loc((lon, lat)), "duration": seconds})
                break
    return out


def penalties_on(leg: Leg, graph: Any) -> list[tuple[int, float, float, float]]:
    """(index into the leg's coordinates, lon, lat, seconds) of every large node penalty the leg passes (not at its
    two ends), from the graph's `pen_*` arrays (none in graphs built before them)."""
    if graph is None or not graph.has("pen_lon") or graph.pen_lon.shape[0] == 0:
        return []
    c = np.round(np.asarray(leg.coordinates, dtype=np.float64) * 1e7).astype(np.int64)
    if c.shape[0] < 3:
        return []
    key = (np.asarray(graph.pen_lon, dtype=np.int64) << 32) + (np.asarray(graph.pen_lat, dtype=np.int64) + (1 << 31))
    ck = (c[1:-1, 0] << 32) + (c[1:-1, 1] + (1 << 31))
    at = np.clip(np.searchsorted(key, ck), 0, key.shape[0] - 1)
    hit = np.flatnonzero(key[at] == ck)
    ds = np.asarray(graph.pen_ds)
    return [(int(i) + 1, c[i + 1, 0] / 1e7, c[i + 1, 1] / 1e7, round(float(ds[at[i]]) / 10, 1)) for i in hit]


def add_instructions(steps: list[dict[str, Any]], language: str, leg_index: int, leg_count: int) -> None:
    """Write `maneuver.instruction` into the OSRM steps of one leg: the text osrm-text-instructions gives them in
    `language`, with the leg's place among the route's legs (an arrival before the last says "your 1st destination")
    as OSRM's front ends (leaflet-routing-machine) ask it."""
    from app.api.instructions.compile import Options, compile

    opts = Options(leg_index=leg_index, leg_count=leg_count)
    for step in steps:
        step["maneuver"]["instruction"] = compile(language, step, opts)


def summary(steps: list[dict[str, Any]]) -> str:
    """OSRM's leg summary: the names (else refs) of the two longest-running named stretches, in route order."""
    totals: dict[str, float] = {}
    order: dict[str, int] = {}
    for i, s in enumerate(steps):
        name = s["name"] or s.get("ref", "")
        if name:
            totals[name] = totals.get(name, 0.0) + s["duration"]
            order.setdefault(name, i)
    top = sorted(totals, key=lambda n: (-totals[n], order[n]))[:2]
    return ", ".join(sorted(top, key=order.__getitem__))

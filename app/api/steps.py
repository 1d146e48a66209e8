"""OSRM route steps from a `Leg`'s pieces: one step per stretch of road with the same name (and ref and mode).

Maneuver types: `depart`, `turn`, `new name`, `continue` (the same name again), `roundabout` (entering; with `exit`),
`exit roundabout` (leaving, as osrm-routed does), `arrive`. The modifier comes from the turn angle between
`bearing_before` and `bearing_after`. Intersections list the bearings of every road at each junction the step
passes (`in`/`out` index the road we came from and the one we take).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from app.api.geometry import bearing
from app.engine.types import Leg

FLAG_FERRY = 1
FLAG_ROUNDABOUT = 2

GeometryFn = Callable[[np.ndarray], Any]


class RoadView(Protocol):
    """What the step builder needs to know about the road network (`app.engine.roads.RoadGraph`, from the facade:
    `Router.roads`)."""

    def road(self, arc: int) -> tuple[str, str, str, bool]:
        """(name, ref, mode, on a roundabout) of an arc."""
        ...

    def head(self, arc: int) -> int: ...

    def junction(self, node: int) -> tuple[list[int], list[bool]]:
        """Distinct bearings (integer degrees, ascending) of the roads at a node, and whether each may be entered."""
        ...

    def is_roundabout_exit(self, node: int) -> bool:
        """Whether a node on a roundabout has an arc leaving the roundabout."""
        ...


def modifier(angle: float) -> str:
    """OSRM modifier for a turn angle in degrees (positive = to the right), e.g. 90 -> `right`."""
    a = abs(angle)
    side = "right" if angle > 0 else "left"
    if a < 20:
        return "straight"
    if a < 60:
        return f"slight {side}"
    if a < 130:
        return side
    if a < 170:
        return f"sharp {side}"
    return "uturn"


def turn_angle(before: float, after: float) -> float:
    """Signed turn from bearing `before` to bearing `after`, in (-180, 180]."""
    d = (after - before) % 360.0
    return d - 360.0 if d > 180.0 else d


def _bearing_out(coords: np.ndarray, i: int) -> float:
    """Bearing leaving point i towards the next distinct point (0 when there is none)."""
    p = coords[i]
    for j in range(i + 1, coords.shape[0]):
        q = coords[j]
        if q[0] != p[0] or q[1] != p[1]:
            return bearing(p[0], p[1], q[0], q[1])
    return 0.0


def _bearing_in(coords: np.ndarray, i: int) -> float:
    """Bearing arriving at point i from the previous distinct point (0 when there is none)."""
    p = coords[i]
    for j in range(i - 1, -1, -1):
        q = coords[j]
        if q[0] != p[0] or q[1] != p[1]:
            return bearing(q[0], q[1], p[0], p[1])
    return 0.0


def _closest(bearings: list[int], b: float) -> int:
    return min(range(len(bearings)), key=lambda k: abs(turn_angle(bearings[k], b)))


def _intersection(roads: RoadView, node: int, loc: list[float], b_in: float | None, b_out: float | None) -> dict:
    bearings, entry = roads.junction(node)
    if not bearings:
        bearings, entry = [int(round(b_out or 0.0)) % 360], [True]
    out: dict[str, Any] = {"location": loc, "bearings": bearings, "entry": entry}
    if b_in is not None:
        out["in"] = _closest(bearings, (b_in + 180.0) % 360.0)
    if b_out is not None:
        out["out"] = _closest(bearings, b_out)
    return out


def _runs(roads: RoadView, arcs: np.ndarray) -> list[tuple[int, int, tuple[str, str, str, bool]]]:
    """Split piece indices into [start, end) runs of one road (roundabouts as one run whatever their names)."""
    runs: list[tuple[int, int, tuple[str, str, str, bool]]] = []
    start = 0
    cur = roads.road(int(arcs[0]))
    for i in range(1, arcs.shape[0]):
        r = roads.road(int(arcs[i]))
        same = (r[3] and cur[3] and r[2] == cur[2]) or (not r[3] and not cur[3] and r[:3] == cur[:3])
        if not same:
            runs.append((start, i, cur))
            start, cur = i, r
    runs.append((start, arcs.shape[0], cur))
    return runs


def build_steps(leg: Leg, roads: RoadView, geometry: GeometryFn, precision: int = 6) -> list[dict[str, Any]]:
    """The OSRM `steps` of one leg: depart, one step per same-name stretch (roundabouts as enter/exit), arrive."""
    coords = leg.coordinates
    arcs = leg.piece_arc
    ends = leg.piece_coord_end
    last = coords.shape[0] - 1
    rounded = np.round(coords, precision)  # the same rounding as geojson geometries
    loc_of = lambda i: [float(rounded[i, 0]), float(rounded[i, 1])]  # noqa: E731
    steps: list[dict[str, Any]] = []
    if arcs.shape[0] == 0:
        runs: list[tuple[int, int, tuple[str, str, str, bool]]] = []
        arrive_road = ("", "", "driving", False)
    else:
        runs = _runs(roads, arcs)
        arrive_road = runs[-1][2]
    prev_name: str | None = None
    exit_no = 0
    for k, (p0, p1, (name, ref, mode, rb)) in enumerate(runs):
        c0 = int(ends[p0 - 1]) if p0 > 0 else 0
        c1 = int(ends[p1 - 1])
        b_after = _bearing_out(coords, c0)
        b_before = _bearing_in(coords, c0) if k > 0 else 0.0
        maneuver: dict[str, Any] = {
            "location": loc_of(c0),
            "bearing_before": int(round(b_before)) % 360,
            "bearing_after": int(round(b_after)) % 360,
        }
        step_name, step_ref = name, ref
        if k == 0:
            maneuver["type"] = "depart"
        elif rb:
            exit_no = 1 + sum(roads.is_roundabout_exit(roads.head(int(arcs[i]))) for i in range(p0, p1 - 1))
            maneuver["type"] = "roundabout"
            if k + 1 < len(runs):
                nxt = runs[k + 1]
                step_name, step_ref = nxt[2][0], nxt[2][1]
                exit_at = int(ends[nxt[0] - 1])
                maneuver["modifier"] = modifier(turn_angle(b_before, _bearing_out(coords, exit_at)))
                maneuver["exit"] = exit_no
            else:
                maneuver["modifier"] = modifier(turn_angle(b_before, b_after))
        else:
            angle = turn_angle(b_before, b_after)
            maneuver["modifier"] = modifier(angle)
            if runs[k - 1][2][3]:
                maneuver["type"] = "exit roundabout"
                maneuver["exit"] = exit_no
            elif name == prev_name:
                maneuver["type"] = "continue"
            else:
                maneuver["type"] = "new name" if abs(angle) < 20 else "turn"
        # intersections: the maneuver's, then every junction passed inside the run
        inters = []
        if k == 0:
            inters.append(
                {"location": maneuver["location"], "bearings": [maneuver["bearing_after"]], "entry": [True], "out": 0}
            )
        else:
            inters.append(_intersection(roads, roads.head(int(arcs[p0 - 1])), maneuver["location"], b_before, b_after))
        for i in range(p0, p1 - 1):
            ci = int(ends[i])
            node = roads.head(int(arcs[i]))
            if len(roads.junction(node)[0]) > 2:
                inters.append(_intersection(roads, node, loc_of(ci), _bearing_in(coords, ci), _bearing_out(coords, ci)))
        dist = float(leg.piece_distance_m[p0:p1].sum())
        dur = float(leg.piece_duration_s[p0:p1].sum())
        step: dict[str, Any] = {
            "geometry": geometry(coords[c0 : c1 + 1]),
            "maneuver": maneuver,
            "mode": mode,
            "driving_side": "right",
            "name": step_name,
            "intersections": inters,
            "weight": round(dur, 1),
            "duration": round(dur, 1),
            "distance": round(dist, 1),
        }
        if step_ref:
            step["ref"] = step_ref
        steps.append(step)
        prev_name = name
    b_before = _bearing_in(coords, last)
    loc = loc_of(last)
    steps.append(
        {
            "geometry": geometry(coords[[last, last]]),
            "maneuver": {
                "location": loc,
                "bearing_before": int(round(b_before)) % 360,
                "bearing_after": 0,
                "type": "arrive",
            },
            "mode": arrive_road[2],
            "driving_side": "right",
            "name": arrive_road[0],
            "intersections": [
                {"location": loc, "bearings": [int(round(b_before + 180.0)) % 360], "entry": [True], "in": 0}
            ],
            "weight": 0.0,
            "duration": 0.0,
            "distance": 0.0,
            **({"ref": arrive_road[1]} if arrive_road[1] else {}),
        }
    )
    return steps


def summary(steps: list[dict[str, Any]]) -> str:
    """OSRM's leg summary: the names of the two longest named stretches, in route order."""
    totals: dict[str, float] = {}
    order: dict[str, int] = {}
    for i, s in enumerate(steps):
        name = s["name"]
        if name:
            totals[name] = totals.get(name, 0.0) + s["distance"]
            order.setdefault(name, i)
    top = sorted(totals, key=lambda n: -totals[n])[:2]
    return ", ".join(sorted(top, key=order.__getitem__))

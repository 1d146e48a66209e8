"""What the library answers: plain, typed values in seconds, metres and (lon, lat) degrees.

Each mirrors the native HTTP API's answer for the same request (`app.api.native`): a `Route` is its route Feature, a
`Matrix` its table, an `Isochrone` its FeatureCollection; `.geojson` gives those shapes and, with the `[geo]` extra,
`.shape` / `.shapes` shapely geometries.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from app.engine.facade import IsochroneAnswer, RouteAnswer
from app.engine.types import Phantom
from app.engine.types import Route as EngineRoute
from app.install import install_extra


def r1(x: float) -> float:
    """Metres and seconds to a tenth, the graph's own resolution (decimetres, deciseconds), as the HTTP API gives
    them: every figure here equals the API's."""
    return round(float(x), 1)


def _shapely() -> Any:
    try:
        import shapely.geometry
    except ImportError:  # pragma: no cover - depends on the install
        raise ImportError(f"shapely geometries need the geo extra: {install_extra('geo')}") from None
    return shapely.geometry


@dataclass(frozen=True)
class Waypoint:
    """A point snapped onto the road network: where it landed, where it was given, how far apart, the road's name
    and the OSM ids of the snapped segment's end nodes."""

    location: tuple[float, float]
    input: tuple[float, float]
    distance_m: float
    name: str
    nodes: tuple[int, int] = (0, 0)

    @classmethod
    def of(cls, ph: Phantom) -> Waypoint:
        nodes = (int(ph.osm_nodes[0]), int(ph.osm_nodes[1]))
        return cls((ph.lon, ph.lat), (ph.input_lon, ph.input_lat), r1(ph.distance_m), ph.name, nodes)

    @property
    def geojson(self) -> dict[str, Any]:
        """A GeoJSON Point Feature at the snapped location."""
        return {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": list(self.location)},
            "properties": {"distance_m": self.distance_m, "name": self.name, "input": list(self.input)},
        }


def _figures(distance_m: float, duration_s: float) -> str:
    return f"{distance_m:.1f} m, {duration_s:.1f} s"


@dataclass(frozen=True, repr=False)
class Leg:
    """The stretch between two consecutive waypoints."""

    duration_s: float
    distance_m: float
    weight_s: float
    coordinates: np.ndarray  # float64 [k, 2] lon, lat

    def __repr__(self) -> str:
        return f"<starroute.Leg {_figures(self.distance_m, self.duration_s)}, {len(self.coordinates)} points>"


@dataclass(frozen=True, repr=False)
class Route:
    """A route through the waypoints: totals, legs, the (k, 2) lon/lat polyline; `alternatives` when asked.

    Printed, one line: `<starroute.Route 1806.4 m, 207.3 s by ch from 'Tunnel Rocher Palais' to "Avenue de
    l'Hermitage", 1 leg, 172 points>`; the fields hold the rest (`coordinates`, `legs`, `waypoints`, `.geojson`).
    """

    duration_s: float
    distance_m: float
    weight_s: float
    algorithm: str
    legs: tuple[Leg, ...]
    coordinates: np.ndarray  # float64 [k, 2]
    waypoints: tuple[Waypoint, ...]
    exclude: tuple[str, ...] = ()
    alternatives: tuple[Route, ...] = ()
    departure: str | None = None  # with depart_at / arrive_by: when it leaves and arrives (ISO 8601, local time)
    arrival: str | None = None

    def __repr__(self) -> str:
        names = [w.name or f"({w.location[0]:.5f}, {w.location[1]:.5f})" for w in self.waypoints]
        where = f" from {names[0]!r} to {names[-1]!r}" if len(names) >= 2 else ""
        n = len(self.legs)
        more = f", {len(self.alternatives)} alternative{'s' if len(self.alternatives) != 1 else ''}"
        return (
            f"<starroute.Route {_figures(self.distance_m, self.duration_s)} by {self.algorithm}{where}, "
            f"{n} leg{'s' if n != 1 else ''}, {len(self.coordinates)} points{more if self.alternatives else ''}>"
        )

    @classmethod
    def of(cls, answer: RouteAnswer) -> Route:
        """The best route of an engine answer, with the others as its alternatives."""
        wps = tuple(Waypoint.of(p) for p in answer.phantoms)
        ex = tuple(answer.exclude)
        best, *others = answer.result.routes
        route = cls._one(best, wps, ex, tuple(cls._one(r, wps, ex) for r in others))
        if answer.departure is None:
            return route
        return replace(route, departure=answer.departure, arrival=answer.arrival)

    @classmethod
    def _one(
        cls, r: EngineRoute, wps: tuple[Waypoint, ...], ex: tuple[str, ...], alternatives: tuple[Route, ...] = ()
    ) -> Route:
        legs = tuple(Leg(r1(leg.duration_s), r1(leg.distance_m), leg.weight_s, leg.coordinates) for leg in r.legs)
        return cls(
            r1(r.duration_s), r1(r.distance_m), r.weight_s, r.algorithm, legs, r.coordinates, wps, ex, alternatives
        )

    @property
    def geojson(self) -> dict[str, Any]:
        """A GeoJSON LineString Feature with the totals, legs and waypoints as properties."""
        return {
            "type": "Feature",
            "geometry": {"type": "LineString", "coordinates": np.round(self.coordinates, 7).tolist()},
            "properties": {
                "duration_s": self.duration_s,
                "distance_m": self.distance_m,
                "algorithm": self.algorithm,
                "legs": [{"duration_s": leg.duration_s, "distance_m": leg.distance_m} for leg in self.legs],
                "waypoints": [
                    {"location": list(w.location), "input": list(w.input), "distance_m": w.distance_m, "name": w.name}
                    for w in self.waypoints
                ],
                "exclude": list(self.exclude),
            },
        }

    @property
    def shape(self) -> Any:
        """The route as a shapely LineString (the `[geo]` extra)."""
        return _shapely().LineString(self.coordinates)


@dataclass(frozen=True, repr=False)
class Matrix:
    """Durations (s) and distances (m) from every source (rows) to every destination (columns); NaN where a pair is
    unreachable. `sources` and `destinations` are the snapped points."""

    durations_s: np.ndarray  # float64 [N, M]
    distances_m: np.ndarray  # float64 [N, M]
    sources: list[Waypoint]
    destinations: list[Waypoint]

    def __repr__(self) -> str:
        n, m = self.shape
        return f"<starroute.Matrix {n} x {m}, {int(np.isnan(self.durations_s).sum())} pairs unreachable>"

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.durations_s.shape[0]), int(self.durations_s.shape[1]))


@dataclass(frozen=True, repr=False)
class Band:
    """One isochrone band: its limit (`unit` "min" or "m"), the GeoJSON (Multi)Polygon, the simplification
    tolerance and how many road pieces it was drawn from."""

    value: float
    unit: str
    metric: str
    geometry: dict[str, Any]
    tolerance_m: float
    pieces: int

    def __repr__(self) -> str:
        return f"<starroute.Band {self.value:g} {self.unit}: {self.geometry.get('type')}, {self.pieces} pieces>"


@dataclass(frozen=True, repr=False)
class Isochrone:
    """What is reached from (or, `reverse`, reaches) one point within each limit, largest band first."""

    bands: tuple[Band, ...]
    point: Waypoint
    reverse: bool
    buffer_m: float
    settled: int

    def __repr__(self) -> str:
        limits = ", ".join(f"{b.value:g}" for b in self.bands)
        unit = self.bands[0].unit if self.bands else ""
        where = self.point.name or f"({self.point.location[0]:.5f}, {self.point.location[1]:.5f})"
        return f"<starroute.Isochrone {limits} {unit} {'to' if self.reverse else 'from'} {where!r}>"

    @classmethod
    def of(cls, answer: IsochroneAnswer, values: list[float], metric: str, reverse: bool, buffer_m: float) -> Isochrone:
        unit = "min" if metric == "duration" else "m"
        bands = tuple(
            Band(v, unit, metric, c.geometry, c.tolerance_m, c.pieces)
            for v, c in zip(values[::-1], answer.contours, strict=True)
        )
        return cls(bands, Waypoint.of(answer.phantom), reverse, buffer_m, answer.settled)

    @property
    def geojson(self) -> dict[str, Any]:
        """The native API's FeatureCollection: one Feature per band, largest first."""
        features = [
            {
                "type": "Feature",
                "geometry": b.geometry,
                "properties": {
                    "value": b.value,
                    "unit": b.unit,
                    "metric": b.metric,
                    "reverse": self.reverse,
                    "buffer_m": self.buffer_m,
                    "tolerance_m": round(b.tolerance_m, 2),
                    "pieces": b.pieces,
                },
            }
            for b in self.bands
        ]
        props = {"point": list(self.point.location), "snap_distance_m": self.point.distance_m, "settled": self.settled}
        return {"type": "FeatureCollection", "features": features, "properties": props}

    @property
    def shapes(self) -> list[Any]:
        """The bands as shapely geometries, largest first (the `[geo]` extra)."""
        geometry = _shapely()
        return [geometry.shape(b.geometry) for b in self.bands]


@dataclass(frozen=True)
class Accessibility:
    """Per source: `reached[i, l]`, the number (or with weights the weighted sum) of destinations reachable within
    `minutes[l]`; and its `k` nearest destinations by travel time, `nearest[i]` their indices (-1 where fewer are
    reachable) and `nearest_s[i]` their durations (NaN there), nearest first (ties: the lower index)."""

    minutes: tuple[float, ...]
    reached: np.ndarray  # float64 [N, L]
    nearest: np.ndarray  # int64 [N, k]
    nearest_s: np.ndarray  # float64 [N, k]
    sources: list[Waypoint] = field(default_factory=list)

"""The engine's request and answer types: what an API parses its input into and what `Engine` answers with.

Plain data (frozen requests, answers of engine types); `app.engine.facade` takes and returns them, and is where the
API imports them from (its one door into the engine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from app.engine.models.custom_model import CustomModel, closing_areas
from app.engine.types import Phantom, Route, RouteResult


@dataclass(frozen=True)
class Waypoints:
    """The points of a request, `(lon, lat)` degrees (range-checked by the API), with OSRM's per-point options.

    A missing radius is `default_radius_m` (None: unlimited, as OSRM). With `detail`, `NoSegment` says how far the
    nearest road is. `any_edge`: OSRM's `snapping=any`, roads that refuse waypoints (car: private service roads) are
    candidates too.
    """

    coordinates: Sequence[tuple[float, float]]
    radiuses: Sequence[float | None] | None = None
    bearings: Sequence[tuple[float, float] | None] | None = None
    approaches: Sequence[str | None] | None = None
    default_radius_m: float | None = None
    detail: bool = False
    any_edge: bool = False


def only_waypoints(wp: Waypoints, keep: Sequence[int]) -> Waypoints:
    """The waypoints `keep` of `wp`, with their per-point options."""

    def pick(values: Sequence[Any] | None) -> list[Any] | None:
        return None if values is None else [values[i] for i in keep]

    return Waypoints(
        [wp.coordinates[i] for i in keep],
        pick(wp.radiuses),
        pick(wp.bearings),
        pick(wp.approaches),
        wp.default_radius_m,
        wp.detail,
    )


@dataclass(frozen=True)
class RouteRequest:
    """A route through `waypoints` in order. `algorithm` None: the default (CH; ALT when avoiding areas).
    `exclude`: one of the profile's excludable class sets; `avoid`: parsed areas (`app.engine.features.areas.Areas`);
    `alternatives`: how many more routes to look for (two points only); `trace`: the settled nodes; `epsilon`:
    weighted A*; `continue_straight`: OSRM's option (None: the profile's default); `custom_model`: GraphHopper's
    custom model (`parse_model`), answered on its metric (`app.engine.models.model_metric`); `depart_at` /
    `arrive_by`: ISO 8601 or "now", the time-dependent route (`app.engine.features.departure`)."""

    waypoints: Waypoints
    algorithm: str | None = None
    exclude: Sequence[str] = ()
    avoid: Any = None
    alternatives: int = 0
    trace: bool = False
    epsilon: float = 1.0
    continue_straight: bool | None = None
    custom_model: CustomModel | None = None
    depart_at: str | None = None
    arrive_by: str | None = None


@dataclass(frozen=True)
class TableRequest:
    """Durations and distances from `sources` to `destinations` (indices into the waypoints; None: all);
    `custom_model`: on a custom model's metric (`parse_model`); `avoid`: areas whose roads no path uses (no point is
    snapped onto them), closed as a custom model would close them."""

    waypoints: Waypoints
    sources: Sequence[int] | None = None
    destinations: Sequence[int] | None = None
    exclude: Sequence[str] = ()
    custom_model: CustomModel | None = None
    avoid: Any = None  # areas (`app.engine.features.areas.Areas`): their roads closed, as a custom model's (`model`)
    depart_at: str | None = None  # ISO 8601 or "now": time-dependent durations (`app.engine.features.departure`)
    arrive_by: str | None = None  # refused: a table takes depart_at

    @cached_property
    def model(self) -> CustomModel | None:
        """The custom model the table runs on: its own, with the areas to avoid closed."""
        return _model_of(self.custom_model, self.avoid)


@dataclass(frozen=True)
class TripRequest:
    """A tour through every waypoint, in the order that takes least time (OSRM's `/trip`): back to the start when
    `roundtrip`; `source` "first" starts at the first waypoint ("any": anywhere), `destination` "last" ends at the
    last one. OSRM refuses `roundtrip=False` with neither end fixed (`NotImplemented`), and so does `Engine`."""

    waypoints: Waypoints
    roundtrip: bool = True
    source: str = "any"
    destination: str = "any"
    exclude: Sequence[str] = ()


@dataclass(frozen=True)
class NearestRequest:
    """The `number` nearest road points to one point, within `radius_m` (None: unlimited)."""

    lon: float
    lat: float
    number: int = 1
    radius_m: float | None = None
    exclude: Sequence[str] = ()


@dataclass(frozen=True)
class IsochroneRequest:
    """What is reached from (or, `reverse`, reaches) one point within each limit: travel time in seconds
    (`metric` "duration") or distance in metres ("distance"); contour polygons buffered by `buffer_m`."""

    waypoints: Waypoints
    limits: Sequence[float]
    metric: str = "duration"
    reverse: bool = False
    exclude: Sequence[str] = ()
    buffer_m: float = 50.0
    custom_model: CustomModel | None = None
    avoid: Any = None  # areas whose roads are closed (as `TableRequest.avoid`)
    depart_at: str | None = None  # ISO 8601 or "now": reached by time-dependent travel times
    arrive_by: str | None = None  # refused: an isochrone takes depart_at

    @cached_property
    def model(self) -> CustomModel | None:
        """The custom model the isochrone runs on: its own, with the areas to avoid closed."""
        return _model_of(self.custom_model, self.avoid)


def _model_of(model: CustomModel | None, avoid: Any) -> CustomModel | None:
    """A request's custom model with its areas to avoid closed (`closing_areas`); None when it has neither."""
    if avoid is None:
        return model
    return closing_areas(model, avoid.polygons)


@dataclass(frozen=True)
class MatchRequest:
    """A GPS trace to match onto the roads (OSRM's `/match`): points in driving order, optional `timestamps` (s,
    non-decreasing), per point the GPS standard deviation in metres (`radiuses`; None: 5 m) and a bearing filter;
    `split_gaps` (OSRM's `gaps=split`): a long pause in the timestamps splits the trace; `tidy`: thin points that
    crowd together first; `waypoints`: the points whose legs stay apart (None: all)."""

    coordinates: Sequence[tuple[float, float]]
    timestamps: Sequence[int] | None = None
    radiuses: Sequence[float | None] | None = None
    bearings: Sequence[tuple[float, float] | None] | None = None
    split_gaps: bool = True
    tidy: bool = False
    waypoints: Sequence[int] | None = None
    exclude: Sequence[str] = ()


@dataclass
class RouteAnswer:
    """The routes of a request (best first), the snapped waypoints, and per leg of the best route its search trace
    (`trace`: the settled search nodes as [k, 3] lon, lat, direction; the meeting point; truncated)."""

    result: RouteResult
    phantoms: list[Phantom]
    exclude: list[str]
    traces: list[dict[str, Any]] = field(default_factory=list)
    custom_model: dict[str, Any] | None = None  # the model's key, the method that answered, its build
    departure: str | None = None  # with a departure time: when it leaves and arrives (ISO 8601, local time)
    arrival: str | None = None

    @property
    def best(self) -> Any:
        return self.result.best


@dataclass
class TripAnswer:
    """A trip: `order` lists the waypoints (request indices) in visiting order, the start once; `route` runs through
    them in that order (one leg each, and one back to the start on a round trip); `phantoms` are the snapped
    waypoints in request order; `exact` says the order is proven the fastest on the table (else: local search)."""

    order: list[int]
    route: Route
    phantoms: list[Phantom]
    exclude: list[str]
    exact: bool

    @property
    def waypoint_index(self) -> list[int]:
        """Per waypoint (request order), its place in the trip (OSRM's `waypoint_index`)."""
        place = [0] * len(self.order)
        for k, i in enumerate(self.order):
            place[i] = k
        return place


@dataclass
class Contour:
    """One isochrone band: its limit (the request's unit), the GeoJSON geometry, the tolerance and the pieces it
    was drawn from."""

    value: float
    geometry: dict[str, Any]
    tolerance_m: float
    pieces: int


@dataclass
class IsochroneAnswer:
    """The bands of an isochrone request, largest first, the snapped point and the nodes the search settled."""

    contours: list[Contour]
    phantom: Phantom
    settled: int
    custom_model: dict[str, Any] | None = None
    departure: str | None = None  # with depart_at: the departure (ISO 8601, local time)


@dataclass
class Tracepoint:
    """Where one trace point was matched: its phantom, the matching it belongs to, its place among that matching's
    waypoints (None: not a waypoint of a request with `waypoints`) and how many other candidates still led to the
    matching's end."""

    phantom: Phantom
    matching: int
    waypoint: int | None
    alternatives: int


@dataclass
class Matching:
    """One matched piece of a trace: its route (one leg per pair of consecutive matched points), the positions of
    the request's waypoints among those points (legs between them merge; None: every point), the confidence."""

    route: Route
    confidence: float
    legs_at: list[int] | None


@dataclass
class MatchAnswer:
    """The matchings of a trace and per input point its tracepoint (None: left out by tidy, or not matched)."""

    matchings: list[Matching]
    tracepoints: list[Tracepoint | None]

"""Wire schemas of the native API (GeoJSON out, RFC 7946 `[lon, lat]`), separate from the engine's types.

They document the API in OpenAPI and validate POST bodies; responses are built as plain dicts and serialized with
orjson (the models are the contract those dicts follow, checked in the tests).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.api.instructions.compile import LANGUAGES
from app.api.openapi_limits import limit
from app.engine.search.algorithms import NAMES
from app.engine.search.algorithms import AlgorithmName as Algorithm

ALGORITHMS: tuple[str, ...] = NAMES  # the registry's names (app.engine.search.algorithms), fastest first

Overview = Literal["full", "simplified", "false"]

Lon = Annotated[float, Field(ge=-180.0, le=180.0, allow_inf_nan=False)]
Lat = Annotated[float, Field(ge=-90.0, le=90.0, allow_inf_nan=False)]
LonLat = Annotated[tuple[Lon, Lat], Field(description="[longitude, latitude] in degrees (WGS 84)")]
Radius = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
CUSTOM_MODEL = (
    "GraphHopper's custom model: `speed` and `priority` rules (`if`/`else_if`/`else` with `multiply_by`, `limit_to` or "
    "`do`) over encoded values (road_class, road_class_link, road_environment, toll, surface, max_speed, lanes, "
    "road_access, max_height, max_width, max_weight, max_length, in_<area id>), `distance_influence` (s per km), "
    '`areas` (a GeoJSON FeatureCollection). Example: `{"priority": [{"if": "max_height < 4", "multiply_by": "0"}]}`'
)
CustomModelBody = Annotated[dict[str, Any] | None, Field(description=CUSTOM_MODEL)]
LANGUAGE = (
    "turn-by-turn steps per leg (`properties.legs[].steps`) with text instructions in this language (those of "
    "OSRM's `language=`, from osrm-text-instructions 0.15.0): " + ", ".join(LANGUAGES)
)
DEPART_AT = (
    "depart at this time (ISO 8601, e.g. `2026-03-02T08:30` in the graph's local time or with an offset, or `now`): "
    "time-dependent travel times from the graph's time profiles; the answer says its departure and arrival"
)
ARRIVE_BY = "arrive by this time (ISO 8601 or `now`): the latest departure that arrives in time (routes only)"
DepartAt = Annotated[str | None, Field(description=DEPART_AT)]
ArriveBy = Annotated[str | None, Field(description=ARRIVE_BY)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RouteRequest(_Strict):
    """`POST /route`: two or more points, visited in order."""

    coordinates: list[LonLat] = Field(min_length=2, description="from, via..., to")
    algorithm: Algorithm | None = Field(None, description="default: ch (alt when avoiding areas)")
    radiuses: list[Radius | None] | None = Field(None, description="snap radius per point in metres (null: default)")
    overview: Overview = "full"
    exclude: list[str] = Field(default_factory=list, description='road classes not to use (e.g. ["motorway"])')
    avoid: dict[str, Any] | None = Field(
        None, description="areas not to enter: a GeoJSON Polygon, MultiPolygon, Feature or FeatureCollection"
    )
    trace: bool = Field(False, description="also return the nodes each leg's search settled, in settle order")
    epsilon: float = Field(
        1.0, ge=1.0, le=100.0, allow_inf_nan=False, description="weighted A*: cost within epsilon of the optimum"
    )
    alternatives: int = Field(
        0,
        ge=0,
        description="also look for up to this many alternative routes (two coordinates only)",
        json_schema_extra=limit("max_alternatives"),
    )
    custom_model: CustomModelBody = None
    language: str | None = Field(None, description=LANGUAGE)
    depart_at: DepartAt = None
    arrive_by: ArriveBy = None


class TableRequest(_Strict):
    """`POST /table`: durations and distances from every source to every destination."""

    sources: list[LonLat] = Field(min_length=1)
    destinations: list[LonLat] | None = Field(None, description="defaults to the sources")
    exclude: list[str] = Field(default_factory=list, description="road classes not to use")
    custom_model: CustomModelBody = None
    avoid: dict[str, Any] | None = Field(
        None,
        description="areas not to enter (a GeoJSON Polygon, MultiPolygon, Feature or FeatureCollection): their "
        "roads are closed, as a custom model closes roads; no point is snapped onto them",
    )
    depart_at: DepartAt = None
    arrive_by: ArriveBy = None


class IsochroneRequest(_Strict):
    """`POST /isochrone`: the same as `GET /isochrone`, with a custom model."""

    point: LonLat
    minutes: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] | None = Field(
        None, description="travel-time limits"
    )
    distance_m: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] | None = Field(
        None, description="distance limits in metres instead"
    )
    reverse: bool = Field(False, description="who reaches the point within the limits")
    exclude: list[str] = Field(default_factory=list, description="road classes not to use")
    buffer_m: float = Field(50.0, ge=5, le=500, allow_inf_nan=False, description="polygon buffer around reached roads")
    custom_model: CustomModelBody = None
    avoid: dict[str, Any] | None = Field(
        None,
        description="areas not to enter (a GeoJSON Polygon, MultiPolygon, Feature or FeatureCollection): their "
        "roads are closed, as a custom model closes roads; no point is snapped onto them",
    )
    depart_at: DepartAt = None
    arrive_by: ArriveBy = None


class CustomModelInfo(BaseModel):
    """How a custom model was answered."""

    key: str = Field(description="the model's hash (the cache key)")
    method: Literal["ch-customized", "alt", "bidirectional-astar"] = Field(
        description="ch-customized: the hierarchy customized for the model; alt: landmarks (the model only slows "
        "roads); bidirectional-astar: great-circle bound re-measured for the model"
    )
    cached: bool = Field(description="the model's metric was built before this request")
    closed_arcs: int = Field(description="road arcs the model closes (priority or speed 0)")
    slower_only: bool = Field(description="no road got lighter than in the preprocessed metric")
    build_ms: dict[str, float] = Field(description="what building the model's metric took, per step")


class ErrorBody(BaseModel):
    code: str = Field(description="OSRM error code, e.g. InvalidValue, NoSegment, NoRoute, TooBig")
    message: str


class LineString(BaseModel):
    type: Literal["LineString"] = "LineString"
    coordinates: list[tuple[float, float]]


class Point(BaseModel):
    type: Literal["Point"] = "Point"
    coordinates: tuple[float, float]


class Waypoint(BaseModel):
    location: tuple[float, float] = Field(description="snapped [lon, lat]")
    input: tuple[float, float] = Field(description="requested [lon, lat]")
    distance_m: float = Field(description="from the requested point to the snapped one")
    name: str


class SearchStats(BaseModel):
    settled: int
    relaxed: int
    micros: float = Field(description="the search's time in the engine, microseconds")
    compile_ms: float | None = Field(
        None,
        description="present when the search compiled or loaded kernels (their first use after a start) or waited "
        "for another thread's compile of them: milliseconds that `micros` includes",
    )


class Step(BaseModel):
    """One maneuver of a leg (the OSRM step it comes from, shortened), asked with `language`."""

    instruction: str = Field(description='the text, e.g. "Turn left onto Boulevard Albert 1er"')
    type: str = Field(description="OSRM's maneuver type: depart, turn, roundabout, arrive, ...")
    modifier: str | None = Field(None, description="OSRM's maneuver modifier: left, slight right, straight, ...")
    name: str = Field(description="the road the step follows")
    location: tuple[float, float] = Field(description="where the maneuver is, [lon, lat]")
    distance_m: float = Field(description="from this maneuver to the next")
    duration_s: float


class LegProperties(BaseModel):
    distance_m: float
    duration_s: float
    stats: SearchStats
    steps: list[Step] | None = Field(None, description="asked with `language`: the leg's maneuvers with their text")


class TraceLeg(BaseModel):
    settled: list[tuple[float, float, int]] = Field(description="[lon, lat, direction] in settle order (1: backward)")
    meeting: tuple[float, float] | None = Field(description="where the best path was found")
    truncated: bool = Field(description="the trace limit cut the list")


class RouteProperties(BaseModel):
    distance_m: float
    duration_s: float
    algorithm: Algorithm | Literal["td-astar", "td-dijkstra"] = Field(
        description="the search that answered; with depart_at / arrive_by the time-dependent ones: td-astar, or "
        "td-dijkstra (the oracle) when asked for dijkstra"
    )
    stats: SearchStats = Field(description="summed over the legs")
    waypoints: list[Waypoint]
    legs: list[LegProperties]
    epsilon: float = Field(1.0, description="the weighted-A* factor the search ran with")
    bound: str = Field("optimal", description="what is guaranteed: `optimal`, or `<= epsilon x optimal`")
    exclude: list[str] = Field(default_factory=list)
    trace: list[TraceLeg] | None = Field(None, description="per leg, when asked with trace=true")
    alternatives: list[RouteFeature] | None = Field(
        None, description="alternative routes found (asked with alternatives=N), best first; each without this field"
    )
    custom_model: CustomModelInfo | None = Field(None, description="with a custom model: how it was answered")


class RouteFeature(BaseModel):
    """The route as a GeoJSON Feature with a LineString geometry."""

    type: Literal["Feature"] = "Feature"
    geometry: LineString
    properties: RouteProperties


RouteProperties.model_rebuild()


class NearestProperties(BaseModel):
    distance_m: float
    name: str
    input: tuple[float, float]
    nodes: tuple[int, int] = Field(description="OSM ids of the road segment's end nodes")


class NearestFeature(BaseModel):
    type: Literal["Feature"] = "Feature"
    geometry: Point
    properties: NearestProperties


class NearestCollection(BaseModel):
    type: Literal["FeatureCollection"] = "FeatureCollection"
    features: list[NearestFeature]


class IsochroneProperties(BaseModel):
    value: float = Field(description="the limit, in `unit`")
    unit: Literal["min", "m"]
    metric: Literal["duration", "distance"]
    reverse: bool
    buffer_m: float
    tolerance_m: float = Field(description="how far the polygon's edge may be from buffer_m around reached roads")
    pieces: int = Field(description="reached road pieces the polygon covers")


class IsochroneFeature(BaseModel):
    type: Literal["Feature"] = "Feature"
    geometry: dict[str, Any] = Field(description="a GeoJSON MultiPolygon (holes where the network is not reached)")
    properties: IsochroneProperties


class IsochroneCollection(BaseModel):
    type: Literal["FeatureCollection"] = "FeatureCollection"
    features: list[IsochroneFeature] = Field(description="one per limit, largest first")
    properties: dict[str, Any] = Field(description="snapped point, its snap distance, nodes the search settled")


class TableResponse(BaseModel):
    durations_s: list[list[float | None]] = Field(description="[source][destination]; null when unreachable")
    distances_m: list[list[float | None]]
    sources: list[Waypoint]
    destinations: list[Waypoint]
    custom_model: CustomModelInfo | None = Field(None, description="with a custom model: how it was answered")


class Health(BaseModel):
    status: Literal["ok", "unusable"]
    problems: list[str] = Field(
        default_factory=list,
        description="with `unusable` (HTTP 503): the graph's files truncated or rewritten since they were mapped",
    )
    version: str
    pid: int
    uptime_s: float
    algorithms: list[str]
    excludable: list[list[str]] = Field(default_factory=list, description="the class sets `exclude=` takes")
    graph: dict[str, object] = Field(
        description="the graph's manifest summary; `time_profiles`: whether departure times change its durations "
        "(`starroute customize --time-profiles`), `timezone`: the local time a departure time without offset is in"
    )
    metric: dict[str, object] = Field(
        default_factory=dict,
        description="the metric this worker serves: `id` (`preprocessed`, or the one `starroute customize` wrote), "
        "`built_at`, `applied_at` (when this worker switched to it), `reloads` (SIGHUP or admin updates applied)",
    )
    custom_models: dict[str, object] = Field(
        default_factory=dict,
        description="the custom models this worker keeps built: `size` (the cache's bound), `models` (their keys, "
        "least recently used first), `built` (models built since start)",
    )
    search_processes: dict[str, object] = Field(
        default_factory=dict,
        description="this worker's search processes for long searches: `size` (0: they run on threads), `pids`, "
        "`forked` (sharing the worker's pages) or spawned, `started` (0 while a lone worker's warm-up runs)",
    )

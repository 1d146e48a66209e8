"""Wire schemas of the Valhalla dialect: the JSON requests it reads (POST bodies, or GET `?json=`) and the answers it
documents. Keys Valhalla knows that starroute does not use are ignored, as Valhalla ignores unknown keys; the ones it
cannot honour are declared here and refused by `grammar` with a reason."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.api.schemas import Lat, Lon

UNITS = Literal["kilometers", "km", "miles", "mi"]
COSTING = Field(
    description="auto (car), bicycle (bike) or pedestrian (foot): the one the graph was built for; truck on a car graph"
)
COSTING_OPTIONS = Field(
    None,
    description="`{costing: {...}}`: exclude_tolls, exclude_highways, exclude_ferries (the graph's excludable "
    "classes), top_speed (km/h, a speed limit) and custom_model (starroute's extension: GraphHopper's custom model) "
    "are applied; truck's height, width, length (m) and weight (t) close the roads whose max_height, max_width, "
    "max_length, max_weight is below them (Valhalla's defaults 4.11, 2.6, 21.64, 21.77 when not given; top_speed "
    "120), axle_load, axle_count, hazmat=true and hgv_no_access_penalty are refused (107: the graph does not store "
    "them); shortest is refused; the other options (use_* preferences, penalties) are ignored",
)
REFUSED = "refused when given: not supported"
POLYGONS = Field(
    None,
    description="rings `[[lon, lat], ...]` (closed if open) or a GeoJSON FeatureCollection of Polygons: roads whose "
    "shape meets one (crossing or inside) are closed, as the native API's avoid areas (exclude_polygons and "
    "avoid_polygons are one option)",
)


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Location(_Body):
    """A Valhalla location: `lat`, `lon`, and its `type` (break: legs end and start here)."""

    lat: Lat
    lon: Lon
    type: Literal["break", "break_through", "through", "via"] = Field(
        "break", description="break or break_through; through and via (no leg break) are refused"
    )
    radius: float | None = Field(None, ge=0, le=10_000, allow_inf_nan=False, description="metres to look for a road")
    heading: float | None = Field(None, description=REFUSED)
    name: str | None = Field(None, max_length=200)


class DirectionsOptions(_Body):
    units: UNITS = Field("kilometers", description="lengths in kilometres or miles")
    language: str = Field("en-US", max_length=40, description="instruction language: en-US, de-DE, fr-FR, pt-BR, ...")
    directions_type: Literal["none", "maneuvers", "instructions"] = Field(
        "instructions", description="none: no maneuvers; maneuvers: without text; instructions: with text"
    )
    narrative: bool = True


class DateTime(_Body):
    """Valhalla's `date_time`: when the route leaves (or arrives), in the graph's local time."""

    type: int = Field(description="0 depart now, 1 depart at value, 2 arrive by value; 3 (invariant) is refused")
    value: str | None = Field(None, max_length=40, description="local time YYYY-MM-DDTHH:MM (types 1 and 2)")


class _Common(_Body):
    costing: str = COSTING
    costing_options: dict[str, dict[str, Any]] | None = COSTING_OPTIONS
    id: str | int | None = Field(None, description="echoed in the answer")
    date_time: DateTime | None = Field(
        None,
        description="time-dependent durations from the graph's time profiles: type 0 now, 1 depart at, 2 arrive by "
        "(route only; an isochrone answers 142, a matrix 107); not with truck, top_speed, custom_model, "
        "polygons or alternates (107)",
    )
    avoid_locations: list[dict[str, Any]] | None = Field(None, description=REFUSED + " (give exclude_polygons)")
    exclude_locations: list[dict[str, Any]] | None = Field(None, description=REFUSED + " (give exclude_polygons)")
    avoid_polygons: list[Any] | dict[str, Any] | None = POLYGONS
    exclude_polygons: list[Any] | dict[str, Any] | None = POLYGONS


class RouteBody(_Common):
    """`/valhalla/route`: Valhalla's route request."""

    locations: list[Location] = Field(min_length=2, max_length=500, description="visited in order")
    directions_options: DirectionsOptions | None = None
    units: UNITS | None = Field(None, description="as directions_options.units")
    language: str | None = Field(None, max_length=40, description="as directions_options.language")
    narrative: bool | None = Field(None, description="false: no maneuvers (as directions_type none)")
    directions_type: Literal["none", "maneuvers", "instructions"] | None = None
    alternates: int = Field(0, ge=0, le=100, description="alternative routes wanted (this server's limit applies)")
    shape_format: Literal["polyline6", "polyline5", "geojson"] = "polyline6"


class MatrixBody(_Common):
    """`/valhalla/sources_to_targets`: `sources` and `targets`, or `locations` for both."""

    sources: list[Location] | None = Field(None, min_length=1)
    targets: list[Location] | None = Field(None, min_length=1)
    locations: list[Location] | None = Field(None, min_length=1, description="sources and targets at once")
    units: UNITS = "kilometers"


class ContourSpec(_Body):
    time: float | None = Field(None, gt=0, allow_inf_nan=False, description="minutes")
    distance: float | None = Field(None, gt=0, allow_inf_nan=False, description="kilometres")
    color: str | None = Field(None, max_length=20, description="hex RGB, without #")


class IsochroneBody(_Common):
    """`/valhalla/isochrone`: one location, its contours in minutes or kilometres."""

    locations: list[Location] = Field(min_length=1, max_length=20)
    contours: list[ContourSpec] = Field(min_length=1, max_length=20)
    polygons: bool = Field(False, description="Polygons, else their outer rings as LineStrings")
    denoise: float = Field(1.0, ge=0, le=1, description="accepted; starroute's bands are not denoised further")
    generalize: float | None = Field(None, ge=0, allow_inf_nan=False, description="accepted; bands are simplified")
    reverse: bool = Field(False, description="who reaches the location, instead of where it reaches")
    show_locations: bool = Field(False, description=REFUSED)


class LocateBody(_Body):
    """`/valhalla/locate`: the road nearest each location."""

    locations: list[Location] = Field(min_length=1, max_length=100)
    costing: str | None = Field(None, description="as elsewhere; default: the graph's")
    costing_options: dict[str, dict[str, Any]] | None = COSTING_OPTIONS
    verbose: bool = False
    id: str | int | None = None


class Maneuver(BaseModel):
    type: int = Field(description="Valhalla's maneuver type: 1 start, 4 destination, 10 right, 15 left, ...")
    instruction: str | None = None
    street_names: list[str] | None = None
    time: float = Field(description="seconds")
    length: float = Field(description="in the request's units")
    cost: float
    begin_shape_index: int
    end_shape_index: int
    travel_mode: str
    travel_type: str
    roundabout_exit_count: int | None = None


class Summary(BaseModel):
    time: float = Field(description="seconds")
    length: float = Field(description="in the request's units")
    cost: float
    min_lat: float
    min_lon: float
    max_lat: float
    max_lon: float


class TripLeg(BaseModel):
    shape: str | dict[str, Any] = Field(description="polyline6 (or polyline5, or a GeoJSON LineString)")
    summary: Summary
    maneuvers: list[Maneuver] | None = None


class Trip(BaseModel):
    locations: list[dict[str, Any]] = Field(
        description="type, lat, lon, original_index; with date_time also date_time (YYYY-MM-DDTHH:MM: the departure, "
        "then each leg's arrival), time_zone_offset and time_zone_name"
    )
    legs: list[TripLeg]
    summary: Summary
    status: int
    status_message: str
    units: str
    language: str


class Alternate(BaseModel):
    trip: Trip


class RouteResponse(BaseModel):
    trip: Trip
    alternates: list[Alternate] | None = None
    id: str | int | None = None


class Cell(BaseModel):
    from_index: int
    to_index: int
    time: int | None = Field(description="seconds; null: unreachable")
    distance: float | None = Field(description="in units; null: unreachable")
    date_time: str | None = Field(None, description="with date_time: the arrival at the target, YYYY-MM-DDTHH:MM")
    time_zone_offset: str | None = Field(None, description="with date_time: e.g. +01:00")
    time_zone_name: str | None = Field(None, description="with date_time: the graph's time zone, e.g. Europe/Monaco")


class MatrixResponse(BaseModel):
    sources_to_targets: list[list[Cell]]
    sources: list[dict[str, Any]]
    targets: list[dict[str, Any]]
    units: str
    id: str | int | None = None


class IsochroneResponse(BaseModel):
    type: Literal["FeatureCollection"]
    features: list[dict[str, Any]] = Field(description="largest contour first; properties.contour, .metric")
    id: str | int | None = None


class LocateEdge(BaseModel):
    correlated_lat: float
    correlated_lon: float
    distance: float = Field(description="metres from the input")
    percent_along: float
    side_of_street: str
    names: list[str] | None = None


class Located(BaseModel):
    input_lat: float
    input_lon: float
    edges: list[LocateEdge] | None = Field(description="null: no road near")
    nodes: list[dict[str, Any]] | None = None


class StatusResponse(BaseModel):
    version: str
    tileset_last_modified: int
    available_actions: list[str]
    has_tiles: bool
    has_admins: bool
    has_timezones: bool
    has_live_traffic: bool
    bbox: dict[str, Any] | None = None

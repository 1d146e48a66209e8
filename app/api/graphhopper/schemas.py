"""Wire schemas of the GraphHopper dialect: the POST bodies it validates and the answers it documents."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.api.graphhopper.grammar import DETAILS
from app.api.schemas import CUSTOM_MODEL, LonLat


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RouteBody(_Body):
    """`POST /graphhopper/route`: GraphHopper's route request."""

    points: list[LonLat] = Field(min_length=2, max_length=500, description="[[lon, lat], ...], visited in order")
    profile: str | None = Field(None, description="car, bike or foot: the graph's profile (default: it)")
    points_encoded: bool = Field(True, description="points as a polyline (precision 5), else a GeoJSON LineString")
    instructions: bool = Field(True, description="turn instructions with their text in `locale`")
    locale: str = Field("en", max_length=40, description="language of the instruction texts: de, en_US, pt_BR, ...")
    calc_points: bool = Field(True, description="false: no points (and no instructions)")
    elevation: bool = Field(False, description="refused when true: the graph has no elevation")
    details: list[str] = Field(default_factory=list, max_length=8, description="path details: " + ", ".join(DETAILS))
    custom_model: dict[str, Any] | None = Field(None, description=CUSTOM_MODEL)
    algorithm: str | None = Field(None, max_length=40, description="alternative_route for alternatives")
    max_paths: int | None = Field(None, alias="alternative_route.max_paths", ge=1, le=100)
    max_weight_factor: float | None = Field(
        None, alias="alternative_route.max_weight_factor", description="accepted; starroute's own criteria apply"
    )
    max_share_factor: float | None = Field(
        None, alias="alternative_route.max_share_factor", description="accepted; starroute's own criteria apply"
    )
    max_share_factor_routingpy: float | None = Field(
        None, alias="alternative_route_max_share_factor", description="routingpy 1.3's spelling of the above"
    )
    ch_disable: bool = Field(False, alias="ch.disable", description="true: a search without the hierarchy")
    headings: list[float] | None = Field(None, max_length=500, description="refused: not supported")
    heading_penalty: float | None = Field(None, description="accepted, without headings it means nothing")
    pass_through: bool = Field(False, description="refused when true")
    snap_preventions: list[str] | None = Field(None, max_length=10, description="refused: not supported")
    curbsides: list[str] | None = Field(None, max_length=500, description="refused: not supported")
    point_hints: list[str] | None = Field(None, max_length=500, description="refused: not supported")
    optimize: bool = Field(False, description="refused when true (OSRM's /trip/v1 optimizes)")
    debug: bool = Field(False, description="accepted, no effect")
    type: Literal["json"] = "json"


class MatrixBody(_Body):
    """`POST /graphhopper/matrix`: `points` (every pair), or `from_points` and `to_points`."""

    points: list[LonLat] | None = Field(None, description="[[lon, lat], ...]: from each to each")
    from_points: list[LonLat] | None = None
    to_points: list[LonLat] | None = None
    profile: str | None = None
    out_arrays: list[Literal["times", "distances", "weights"]] = Field(
        ["times"], description="times (s), distances (m), weights"
    )
    fail_fast: bool = Field(False, description="true: unreachable pairs are a 400 instead of null")
    custom_model: dict[str, Any] | None = Field(None, description=CUSTOM_MODEL)


class Instruction(BaseModel):
    distance: float = Field(description="metres to the next instruction")
    sign: int = Field(description="GraphHopper's sign: -2 left, 2 right, 0 continue, 4 finish, 5 via, 6 roundabout")
    text: str
    time: int = Field(description="milliseconds to the next instruction")
    interval: list[int] = Field(description="[from, to] indices into the points")
    street_name: str


class Path(BaseModel):
    distance: float = Field(description="metres")
    time: int = Field(description="milliseconds")
    weight: float
    points: str | dict[str, Any] = Field(description="polyline (precision 5) or GeoJSON LineString")
    points_encoded: bool
    bbox: list[float] = Field(description="[minLon, minLat, maxLon, maxLat]")
    snapped_waypoints: str | dict[str, Any]
    instructions: list[Instruction] | None = None
    details: dict[str, list[list[Any]]] | None = None
    ascend: float
    descend: float


class Info(BaseModel):
    copyrights: list[str]
    took: int = Field(description="milliseconds")


class RouteResponse(BaseModel):
    paths: list[Path]
    info: Info


class MatrixResponse(BaseModel):
    times: list[list[int | None]] | None = Field(None, description="seconds; null: unreachable")
    distances: list[list[float | None]] | None = Field(None, description="metres; null: unreachable")
    weights: list[list[float | None]] | None = None
    info: Info


class IsochroneResponse(BaseModel):
    polygons: list[dict[str, Any]] = Field(description="GeoJSON Polygon Features with properties.bucket")
    info: Info


class InfoResponse(BaseModel):
    bbox: list[float]
    profiles: list[dict[str, Any]]
    version: str
    elevation: bool
    features: dict[str, Any]

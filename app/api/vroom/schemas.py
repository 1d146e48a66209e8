"""`/optimize`'s request and answer as `/openapi.json` documents them: VROOM's input and output formats
(`vroom/docs/API.md`), the fields starroute reads spelled out, every other field of VROOM's passed on to VROOM as
given (`extra="allow"`), VROOM's parser being the judge of them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

Coordinate = Annotated[list[float], Field(min_length=2, max_length=2, description="[lon, lat]")]
TimeWindow = Annotated[list[int], Field(min_length=2, max_length=2, description="[start, end], seconds")]
_OPEN = ConfigDict(extra="allow")


class Vehicle(BaseModel):
    """A vehicle: where it starts and ends (either may be left out), what it carries, when it works."""

    model_config = _OPEN
    id: int = Field(ge=0)
    profile: str | None = Field(None, description="the graph's profile (car, bike or foot; VROOM's default: car)")
    start: Coordinate | None = None
    start_index: int | None = Field(None, ge=0, description="a row of `matrices` (with matrices only)")
    end: Coordinate | None = None
    end_index: int | None = Field(None, ge=0)
    capacity: list[int] | None = None
    skills: list[int] | None = None
    time_window: TimeWindow | None = None
    breaks: list[dict[str, Any]] | None = None


class Job(BaseModel):
    """A single task at one place: a delivery or pickup amount, service time, time windows, skills needed."""

    model_config = _OPEN
    id: int = Field(ge=0)
    location: Coordinate | None = None
    location_index: int | None = Field(None, ge=0)
    service: int | None = Field(None, ge=0)
    delivery: list[int] | None = None
    pickup: list[int] | None = None
    skills: list[int] | None = None
    priority: int | None = Field(None, ge=0, le=100)
    time_windows: list[TimeWindow] | None = None


class ShipmentStep(BaseModel):
    """A shipment's pickup or delivery."""

    model_config = _OPEN
    id: int = Field(ge=0)
    location: Coordinate | None = None
    location_index: int | None = Field(None, ge=0)
    service: int | None = Field(None, ge=0)
    time_windows: list[TimeWindow] | None = None


class Shipment(BaseModel):
    """A pickup and its delivery by the same vehicle."""

    model_config = _OPEN
    pickup: ShipmentStep
    delivery: ShipmentStep
    amount: list[int] | None = None
    skills: list[int] | None = None
    priority: int | None = Field(None, ge=0, le=100)


class Options(BaseModel):
    """vroom-express's per-request options."""

    model_config = _OPEN
    g: bool = Field(False, description="route geometries (encoded polyline, precision 5) from starroute's routes")


class OptimizeBody(BaseModel):
    """VROOM's input: vehicles, jobs and/or shipments, locations as [lon, lat] (starroute computes the matrix) or
    as `location_index` into the `matrices` given, keyed by profile."""

    model_config = _OPEN
    vehicles: list[Vehicle] = Field(min_length=1)
    jobs: list[Job] | None = None
    shipments: list[Shipment] | None = None
    matrices: dict[str, dict[str, list[list[int]]]] | None = Field(
        None, description="per profile: durations (s), distances (m), costs; with `location_index`"
    )
    options: Options | None = None


class Step(BaseModel):
    model_config = _OPEN
    type: str = Field(description="start, job, pickup, delivery, break or end")
    arrival: int
    duration: int
    distance: int | None = None
    location: Coordinate | None = None
    location_index: int | None = None
    id: int | None = None


class Route(BaseModel):
    model_config = _OPEN
    vehicle: int
    cost: int
    duration: int
    steps: list[Step]
    geometry: str | None = Field(None, description="with options.g: an encoded polyline (precision 5)")


class OptimizeResponse(BaseModel):
    """VROOM's output: `code` 0, the summary, the tasks left unassigned, a route per vehicle used."""

    model_config = _OPEN
    code: int
    summary: dict[str, Any]
    unassigned: list[dict[str, Any]]
    routes: list[Route]

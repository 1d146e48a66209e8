"""GraphHopper's request options -> the engine's requests: points (`lat,lon` in URLs, `[lon, lat]` in bodies), the
profile, the locale, details, and the options starroute refuses (each with a sentence saying why).

One typed `RouteOptions` holds a route request whichever way it came (GET parameters or a POST body), so that both
are checked and answered by the same code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.api.dialects import instruction_language
from app.api.graphhopper.errors import POINT_OUT_OF_BOUNDS, GraphHopperError
from app.api.instructions.compile import LANGUAGES
from app.engine.facade import CustomModel, Engine

# GraphHopper's profile names (and the vehicle names of its older API) -> the starroute profile that answers them
PROFILE_ALIASES = {
    "car": "car",
    "bike": "bike",
    "bicycle": "bike",
    "foot": "foot",
    "pedestrian": "foot",
    "walk": "foot",
    "hike": "foot",
}
DETAILS = ("street_name", "time", "distance", "average_speed", "road_class", "max_speed")  # the details written


@dataclass(frozen=True)
class RouteOptions:
    """A GraphHopper route request, parsed: points `(lon, lat)`, and the options this server honours."""

    points: list[tuple[float, float]]
    profile: str | None = None
    points_encoded: bool = True
    instructions: bool = True
    locale: str = "en"
    calc_points: bool = True
    details: list[str] = field(default_factory=list)
    max_paths: int = 1
    ch_disable: bool = False
    custom_model: dict[str, Any] | None = None


def parse_point(text: str, what: str, index: int) -> tuple[float, float]:
    """GraphHopper's `lat,lon` (an elevation after them ignored, as GraphHopper does) -> `(lon, lat)`."""
    parts = text.split(",")
    try:
        if len(parts) not in (2, 3):
            raise ValueError
        lat, lon = float(parts[0]), float(parts[1])
    except ValueError:
        raise GraphHopperError(f"Cannot parse point '{text[:40]}' of {what} {index}: give 'lat,lon'") from None
    return check_point(lon, lat, index)


def check_point(lon: float, lat: float, index: int) -> tuple[float, float]:
    """`(lon, lat)` when finite and in range, else GraphHopper's IllegalArgumentException."""
    if not (math.isfinite(lon) and math.isfinite(lat) and -180 <= lon <= 180 and -90 <= lat <= 90):
        raise GraphHopperError(f"Point {index} is not a valid coordinate: {lat},{lon} (lat -90..90, lon -180..180)")
    return lon, lat


def check_bounds(engine: Engine, points: Sequence[tuple[float, float]]) -> None:
    """GraphHopper's PointOutOfBoundsException for a point outside the graph's bounding box."""
    bbox = engine.info().get("bbox")
    if not bbox:
        return
    w, s, e, n = bbox
    for i, (lon, lat) in enumerate(points):
        if not (w <= lon <= e and s <= lat <= n):
            raise GraphHopperError(
                f"Point {i} is out of bounds: {lat},{lon}, the bounds are: {w},{e},{s},{n}", POINT_OUT_OF_BOUNDS
            )


def graph_profile(engine: Engine) -> str:
    """The profile the graph was built for (`car`, `bike`, `foot`, ...)."""
    return str(engine.info()["profile"])


def check_profile(engine: Engine, profile: str | None) -> None:
    """None or a GraphHopper profile name this graph answers, else GraphHopper's "does not exist" 400."""
    if profile is None:
        return
    own = graph_profile(engine)
    if PROFILE_ALIASES.get(profile, profile) != own:
        raise GraphHopperError(f"The requested profile '{profile}' does not exist.\nAvailable profiles: [{own}]")


def language(locale: str) -> str:
    """A GraphHopper locale (`de`, `en_US`, `pt_BR`, `zh_CN`) -> the language of the text instructions; a 400
    listing them for one without phrases."""
    found = instruction_language(locale)
    if found is not None:
        return found
    raise GraphHopperError(f"locale '{locale[:40]}' is not supported; supported: {', '.join(LANGUAGES)}")


def check_details(details: Sequence[str]) -> list[str]:
    """The path details asked for, each one this server writes; a 400 naming the others."""
    unknown = [d for d in details if d not in DETAILS]
    if unknown:
        raise GraphHopperError(f"Cannot find the path details: {unknown[:5]}; this server writes {', '.join(DETAILS)}")
    return list(dict.fromkeys(details))


def refuse(**given: Any) -> None:
    """A 400 for each of GraphHopper's options that starroute cannot honour, when it was given a value that asks
    for something (false, empty and None ask for nothing)."""
    why = {
        "elevation": "elevation=true is not supported: the graph has no elevation data",
        "headings": "heading is not supported: starroute does not prefer directions of travel at points",
        "curbsides": "curbside is not supported",
        "pass_through": "pass_through=true is not supported",
        "snap_preventions": "snap_prevention is not supported",
        "point_hints": "point_hint is not supported",
        "optimize": "optimize=true is not supported (use the OSRM trip service, /trip/v1)",
    }
    for name, value in given.items():
        if value:
            raise GraphHopperError(why[name])


def max_paths(algorithm: str | None, paths: int | None, engine: Engine) -> int:
    """How many paths to answer: 1, or `alternative_route.max_paths` with `algorithm=alternative_route`."""
    if algorithm in (None, "", "astarbi", "dijkstrabi", "astar", "dijkstra"):
        return 1
    if algorithm != "alternative_route":
        raise GraphHopperError(
            f"algorithm '{algorithm[:40]}' is not supported (round_trip is not; give alternative_route)"
        )
    most = engine.limits.max_alternatives + 1
    n = 2 if paths is None else paths
    if not 1 <= n <= most:
        raise GraphHopperError(f"alternative_route.max_paths must be 1 to {most} on this server")
    return n


def model(obj: dict[str, Any] | None) -> CustomModel | None:
    """A request's custom model, parsed and checked (the engine's `InvalidValue` names the rule: a 400)."""
    return None if obj is None else Engine.parse_model(obj)

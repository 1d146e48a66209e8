"""Valhalla's request -> the engine's requests: the costing (-> the graph's profile), the costing options that map
onto the engine (exclude classes, a top speed as a custom model), units, the language of the instructions, the
locations, and the options starroute refuses (each with a sentence saying why).

A GET request carries its JSON in `?json=`; `body` reads it into the same typed model a POST body is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from app.api.dialects import instruction_language
from app.api.instructions.compile import LANGUAGES
from app.api.valhalla.errors import MAX_LOCATIONS, NO_EDGES, NOT_IMPLEMENTED, PARSE, UNKNOWN_COSTING, ValhallaError
from app.api.valhalla.schemas import Location
from app.engine.facade import CustomModel, Engine, EngineError

M = TypeVar("M", bound=BaseModel)
# Valhalla's costings -> the starroute profile that answers them (None: no starroute profile does)
COSTINGS: dict[str, str | None] = {
    "auto": "car", "taxi": "car", "bicycle": "bike", "pedestrian": "foot", "bus": None, "truck": None,
    "motor_scooter": None, "motorcycle": None, "bikeshare": None, "multimodal": None, "transit": None,
    "auto_shorter": None, "auto_data_fix": None,
}  # fmt: skip
# a profile -> the costing that names it in answers, Valhalla's travel_mode and travel_type
TRAVEL = {
    "car": ("auto", "drive", "car"),
    "bike": ("bicycle", "bicycle", "road"),
    "foot": ("pedestrian", "pedestrian", "foot"),
}
# Valhalla's exclude_* costing options -> the profile's excludable class
EXCLUDES = {"exclude_tolls": "toll", "exclude_highways": "motorway", "exclude_ferries": "ferry"}
KM_PER_MILE = 1.609344


@dataclass(frozen=True)
class Costing:
    """A request's costing, resolved: the graph's profile, the classes to exclude, a custom model (top speed)."""

    profile: str
    exclude: list[str]
    model: CustomModel | None


def body(model: type[M], text: str) -> M:
    """A GET request's `?json=` read into `model` (its validation errors answered as a POST body's are)."""
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ValhallaError(PARSE, f"the json parameter is not JSON ({exc})") from None
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None


def costing(engine: Engine, name: str | None, options: dict[str, dict[str, Any]] | None) -> Costing:
    """The costing named (the graph's own when None) with its options: a costing Valhalla lacks or the graph was not
    built for is Valhalla's 125; `shortest` is refused; exclude_* (the profile's excludable classes), top_speed (a
    speed limit rule) and `custom_model` (starroute's extension: GraphHopper's custom model) apply; other options
    (Valhalla's use_* preferences and penalties) are ignored."""
    own = str(engine.info()["profile"])
    own_costing = TRAVEL.get(own, (own,))[0]
    if name is not None:
        if name not in COSTINGS:
            raise ValhallaError(UNKNOWN_COSTING, f"'{name[:40]}'")
        if COSTINGS[name] != own:
            raise ValhallaError(
                UNKNOWN_COSTING,
                f"'{name}' is not available: this server's graph is built for {own} (costing {own_costing})",
            )
    opts = (options or {}).get(name or own_costing) or {}
    if opts.get("shortest"):
        raise ValhallaError(NOT_IMPLEMENTED, "costing_options shortest is not supported: routes are the fastest")
    exclude = [cls for key, cls in EXCLUDES.items() if opts.get(key) is True]
    rules = opts.get("custom_model")
    if rules is not None and not isinstance(rules, dict):
        raise ValhallaError(PARSE, "costing_options custom_model must be an object (GraphHopper's custom model)")
    top = opts.get("top_speed")
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, int | float) or not 10 <= top <= 252:
            raise ValhallaError(PARSE, "costing_options top_speed must be a number of km/h from 10 to 252")
        rules = dict(rules or {})
        rules["speed"] = [*(rules.get("speed") or []), {"if": "true", "limit_to": float(top)}]
    try:
        model = None if rules is None else Engine.parse_model(rules)
    except EngineError as exc:
        raise ValhallaError(PARSE, f"costing_options custom_model: {exc.message}") from None
    return Costing(own, exclude, model)


def language(tag: str) -> str:
    """Valhalla's language tag (`en-US`, `de-DE`, `pt-BR`, `zh-CN`) -> the language of the text instructions; a
    400 listing them for one without phrases."""
    found = instruction_language(tag)
    if found is None:
        raise ValhallaError(PARSE, f"language '{tag[:40]}' is not supported; supported: {', '.join(LANGUAGES)}")
    return found


def miles(units: str | None) -> bool:
    return units in ("miles", "mi")


def at_pole(lat: float) -> bool:
    """Whether a latitude is a pole: no road is near one, and the engine's snapping divides by its cos(lat) = 0."""
    return abs(lat) >= 90.0


def points(locations: list[Location], poles: bool = False) -> list[tuple[float, float]]:
    """`(lon, lat)` of the locations; a location type without a leg break is refused (every location ends a leg),
    a location at a pole is Valhalla's 171 (unless `poles`: the caller answers it)."""
    for i, loc in enumerate(locations):
        if at_pole(loc.lat) and not poles:
            raise ValhallaError(NO_EDGES, f"location {i} is at a pole")
        if loc.type in ("through", "via"):
            raise ValhallaError(
                NOT_IMPLEMENTED, f"location {i} has type {loc.type}: only break locations are supported"
            )
        if loc.heading is not None:
            raise ValhallaError(NOT_IMPLEMENTED, f"location {i}: heading is not supported")
    return [(loc.lon, loc.lat) for loc in locations]


def radiuses(locations: list[Location]) -> list[float | None] | None:
    """Each location's search radius (metres), None when none is given."""
    found = [loc.radius for loc in locations]
    return found if any(r is not None for r in found) else None


def refuse(**given: Any) -> None:
    """Valhalla's 107 for each option starroute cannot honour that was given."""
    why = {
        "date_time": "date_time is not supported: starroute has no time-dependent speeds",
        "avoid_locations": "avoid_locations is not supported",
        "exclude_locations": "exclude_locations is not supported",
        "avoid_polygons": "avoid_polygons is not supported (the native API's avoid areas are)",
        "exclude_polygons": "exclude_polygons is not supported (the native API's avoid areas are)",
        "show_locations": "show_locations is not supported",
    }
    for name, value in given.items():
        if value:
            raise ValhallaError(NOT_IMPLEMENTED, why[name])


def check_location_count(n: int, most: int, what: str = "locations") -> None:
    """Valhalla's 150 for more locations than this server answers at once."""
    if n > most:
        raise ValhallaError(MAX_LOCATIONS, f"at most {most} {what} on this server")

"""Valhalla's request -> the engine's requests: the costing (-> the graph's profile; truck -> a car graph with the
truck's dimensions as a custom model), the costing options that map onto the engine (exclude classes, a top speed as
a custom model), the polygons to exclude (-> avoid areas), units, the language of the instructions, the locations,
and the options starroute refuses (each with a sentence saying why).

A GET request carries its JSON in `?json=`; `body` reads it into the same typed model a POST body is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from app.api.dialects import instruction_language
from app.api.instructions.compile import LANGUAGES
from app.api.valhalla.errors import (
    BAD_POLYGON,
    MAX_LOCATIONS,
    NO_EDGES,
    NOT_IMPLEMENTED,
    PARSE,
    UNKNOWN_COSTING,
    ValhallaError,
)
from app.api.valhalla.schemas import Location
from app.engine.facade import CustomModel, Engine, EngineError

M = TypeVar("M", bound=BaseModel)
# Valhalla's costings -> the starroute profile that answers them (None: no starroute profile does)
COSTINGS: dict[str, str | None] = {
    "auto": "car", "taxi": "car", "bicycle": "bike", "pedestrian": "foot", "bus": None, "truck": "car",
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
# truck costing options -> (the encoded value a road's limit is stored in, Valhalla's default); a road whose limit is
# below the truck's is closed to it
TRUCK_LIMITS = {
    "height": ("max_height", 4.11), "width": ("max_width", 2.6), "length": ("max_length", 21.64),
    "weight": ("max_weight", 21.77),
}  # fmt: skip
TRUCK_TOP_SPEED = 120.0  # km/h, Valhalla's truck default
# truck options whose road data the graph does not store: refused when given
TRUCK_REFUSED = {
    "axle_load": "maxaxleload", "axle_count": "maxaxles", "hgv_no_access_penalty": "hgv access",
    "hazmat": "hazmat",
}  # fmt: skip


@dataclass(frozen=True)
class Costing:
    """A request's costing, resolved: the graph's profile, the classes to exclude, a custom model (top speed, a
    truck's dimensions), and Valhalla's (travel_mode, travel_type) for the answer."""

    profile: str
    exclude: list[str]
    model: CustomModel | None
    travel: tuple[str, str] = ("drive", "car")


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
    truck = name == "truck"
    if truck:
        rules = truck_rules(opts, rules)
    top = opts.get("top_speed", TRUCK_TOP_SPEED if truck else None)
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, int | float) or not 10 <= top <= 252:
            raise ValhallaError(PARSE, "costing_options top_speed must be a number of km/h from 10 to 252")
        rules = dict(rules or {})
        rules["speed"] = [*(rules.get("speed") or []), {"if": "true", "limit_to": float(top)}]
    try:
        model = None if rules is None else Engine.parse_model(rules)
    except EngineError as exc:
        raise ValhallaError(PARSE, f"costing_options custom_model: {exc.message}") from None
    travel = ("drive", "truck") if truck else TRAVEL.get(own, ("auto", "drive", "car"))[1:]
    return Costing(own, exclude, model, travel)


def truck_rules(opts: dict[str, Any], rules: dict[str, Any] | None) -> dict[str, Any]:
    """A truck's costing options as custom model rules: a priority 0 on the roads whose max_height, max_width,
    max_length or max_weight is below the truck's (Valhalla's defaults where not given); the options whose road data
    the graph lacks are Valhalla's 107."""
    for key, data in TRUCK_REFUSED.items():
        given = opts.get(key)
        if given is not None and given is not False:
            raise ValhallaError(
                NOT_IMPLEMENTED, f"costing_options truck {key} is not supported: this graph does not store {data}"
            )
    limits = []
    for key, (value, default) in TRUCK_LIMITS.items():
        size = opts.get(key, default)
        if isinstance(size, bool) or not isinstance(size, int | float) or not 0 < size <= 100:
            raise ValhallaError(PARSE, f"costing_options truck {key} must be a number above 0 (metres or tonnes)")
        limits.append(f"{value} < {float(size):g}")
    out = dict(rules or {})
    out["priority"] = [*(out.get("priority") or []), {"if": " || ".join(limits), "multiply_by": "0"}]
    return out


def areas(polygons: list[Any] | dict[str, Any] | None, max_vertices: int, max_polygons: int) -> Any:
    """Valhalla's `exclude_polygons` (rings `[[lon, lat], ...]`, closed when open as Valhalla closes them, or GeoJSON
    Polygon features, or a FeatureCollection of them) as the engine's avoid areas; Valhalla's 137 with the reason for
    one that cannot be read (or more than the server's limits). None: none given."""
    from app.engine.features.areas import parse_areas

    if not polygons:
        return None
    if isinstance(polygons, dict):
        features = polygons.get("features") if polygons.get("type") == "FeatureCollection" else None
        if not isinstance(features, list):
            raise ValhallaError(BAD_POLYGON, "exclude_polygons: an array of rings or a GeoJSON FeatureCollection")
    else:
        features = []
        for ring in polygons:
            if isinstance(ring, dict):
                features.append(ring)
            elif isinstance(ring, list) and ring:
                closed = ring if ring[0] == ring[-1] else [*ring, ring[0]]
                features.append({"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [closed]}})
            elif ring != []:  # Valhalla skips an empty ring
                raise ValhallaError(BAD_POLYGON, "exclude_polygons: each ring is an array of [lon, lat] positions")
    try:
        return parse_areas({"type": "FeatureCollection", "features": features}, max_vertices=max_vertices,
                           max_polygons=max_polygons)  # fmt: skip
    except EngineError as exc:
        raise ValhallaError(BAD_POLYGON, f"exclude_polygons: {exc.message}") from None


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
        "avoid_locations": "avoid_locations is not supported (exclude_polygons is: a small ring around the place)",
        "exclude_locations": "exclude_locations is not supported (exclude_polygons is: a small ring around the place)",
        "show_locations": "show_locations is not supported",
    }
    for name, value in given.items():
        if value:
            raise ValhallaError(NOT_IMPLEMENTED, why[name])


def check_location_count(n: int, most: int, what: str = "locations") -> None:
    """Valhalla's 150 for more locations than this server answers at once."""
    if n > most:
        raise ValhallaError(MAX_LOCATIONS, f"at most {most} {what} on this server")

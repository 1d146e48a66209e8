"""What a snapping request gives, checked: a coordinate, a radius, a bearing filter (`InvalidValue` saying why)."""

from __future__ import annotations

import math

from app.engine.errors import InvalidValue

MAX_LATITUDE = 85.05112877980659  # OSRM's web_mercator::MAX_LATITUDE: the projection's edge


def snap_latitude(lat: float) -> float:
    """The latitude snapping works with: clamped to Web Mercator's edge, as OSRM's `web_mercator::clamp` does (the
    projection of a pole is infinite; a point beyond 85.05 degrees snaps as one on that parallel)."""
    return max(-MAX_LATITUDE, min(MAX_LATITUDE, lat))


def check_coordinate(lon: float, lat: float) -> tuple[float, float]:
    """`(lon, lat)` as floats when finite and in range (-180..180, -90..90), else `InvalidValue`."""
    try:
        flon, flat = float(lon), float(lat)
    except (TypeError, ValueError):
        raise InvalidValue(f"coordinate ({lon!r}, {lat!r}) is not a pair of numbers") from None
    if not (math.isfinite(flon) and math.isfinite(flat)):
        raise InvalidValue(f"coordinate ({lon}, {lat}) is not finite")
    if not (-180.0 <= flon <= 180.0 and -90.0 <= flat <= 90.0):
        raise InvalidValue(f"coordinate ({lon}, {lat}) is out of range: longitude -180..180, latitude -90..90")
    return flon, flat


def check_radius(radius_m: float | None) -> float | None:
    """A snap radius in metres (None or inf = unlimited); `InvalidValue` when negative or not a number."""
    if radius_m is None:
        return None
    try:
        r = float(radius_m)
    except (TypeError, ValueError):
        raise InvalidValue(f"radius {radius_m!r} is not a number") from None
    if math.isnan(r) or r < 0:
        raise InvalidValue(f"radius {radius_m} must be >= 0")
    return None if math.isinf(r) else r


def check_bearing(bearing: tuple[float, float] | None) -> tuple[float, float] | None:
    """A (bearing 0..360, range 0..180) filter in degrees, or None; `InvalidValue` otherwise."""
    if bearing is None:
        return None
    try:
        value, rng = (float(x) for x in bearing)
    except (TypeError, ValueError):
        raise InvalidValue(f"bearing {bearing!r} is not a (value, range) pair of numbers") from None
    if not (0.0 <= value <= 360.0 and 0.0 <= rng <= 180.0):
        raise InvalidValue(f"bearing {bearing!r} out of range: value 0..360, range 0..180 degrees")
    return value, rng

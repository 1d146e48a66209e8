"""GraphHopper's encoded values per road arc: what a custom model's conditions may test (`road_class == MOTORWAY`,
`max_height < 4`), with GraphHopper's names, constants and units, and where each is stored.

The format: one small array per value over the road arcs (declared in `floor.format.arrays`), written by the
build from the OSM tags, or derived from an array every graph has (`arc_class`, `arc_lane_count`). `arc_values`
decodes any of them into what a condition compares: an int code per arc for an enum (the index of its constant in
`EncodedValue.constants`), a float for a number (`inf` when the way states no limit, as GraphHopper's
`Double.POSITIVE_INFINITY`), a bool. The stored codes are on disk: constants are append-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from floor.format.units import ROAD_CLASSES

# GraphHopper's enums (core/src/main/java/com/graphhopper/routing/ev), the index being the stored code
ROAD_CLASS = (
    "OTHER", "MOTORWAY", "TRUNK", "PRIMARY", "SECONDARY", "TERTIARY", "RESIDENTIAL", "UNCLASSIFIED", "SERVICE",
    "ROAD", "TRACK", "BRIDLEWAY", "STEPS", "CYCLEWAY", "PATH", "LIVING_STREET", "FOOTWAY", "PEDESTRIAN", "PLATFORM",
    "CORRIDOR", "CONSTRUCTION", "BUSWAY",
)  # fmt: skip
ROAD_ENVIRONMENT = ("OTHER", "ROAD", "FERRY", "TUNNEL", "BRIDGE", "FORD")
SURFACE = (
    "MISSING", "PAVED", "ASPHALT", "CONCRETE", "PAVING_STONES", "COBBLESTONE", "UNPAVED", "COMPACTED", "FINE_GRAVEL",
    "GRAVEL", "GROUND", "DIRT", "GRASS", "SAND", "WOOD", "OTHER",
)  # fmt: skip
TOLL = ("MISSING", "NO", "HGV", "ALL")
ROAD_ACCESS = ("YES", "DESTINATION", "CUSTOMERS", "DELIVERY", "PRIVATE", "MILITARY", "AGRICULTURAL", "FORESTRY", "NO")

# numbers: stored as unsigned ints of `scale` units; the all-ones code means "no limit stated" (decoded as inf)
NO_LIMIT_U8 = 0xFF
NO_LIMIT_U16 = 0xFFFF
MAX_SPEED_NONE_KMH = 150  # GraphHopper's value for `maxspeed=none` (MaxSpeed.MAXSPEED_150)


@dataclass(frozen=True)
class EncodedValue:
    """One value a custom model may test: GraphHopper's name, its kind, its constants (enums) or unit (numbers), the
    road-arc array it is stored in (None: derived from arrays every graph has) and that array's scale."""

    name: str
    kind: str  # "enum" | "number" | "bool"
    array: str | None
    constants: tuple[str, ...] = ()
    unit: str = ""
    scale: float = 1.0  # number = stored code * scale (the no-limit code decodes as inf)
    doc: str = ""


ENCODED_VALUES: dict[str, EncodedValue] = {
    ev.name: ev
    for ev in (
        EncodedValue("road_class", "enum", None, ROAD_CLASS, doc="the way's highway class; links carry their road's"),
        EncodedValue("road_class_link", "bool", None, doc="a *_link way (motorway_link, ...)"),
        EncodedValue(
            "road_environment", "enum", "arc_environment", ROAD_ENVIRONMENT, doc="ferry, tunnel, bridge, ford"
        ),
        EncodedValue("toll", "enum", "arc_toll", TOLL, doc="toll=yes (ALL), toll:hgv=yes (HGV), toll=no (NO)"),
        EncodedValue("surface", "enum", "arc_surface", SURFACE, doc="the way's surface"),
        EncodedValue("road_access", "enum", "arc_road_access", ROAD_ACCESS, doc="the way's access restriction"),
        EncodedValue("max_speed", "number", "arc_max_speed", unit="km/h", doc="the legal limit in this direction"),
        EncodedValue("lanes", "number", None, unit="lanes", doc="lanes of the way (0 unknown)"),
        EncodedValue("max_height", "number", "arc_max_height", unit="m", scale=0.1, doc="maxheight"),
        EncodedValue("max_width", "number", "arc_max_width", unit="m", scale=0.1, doc="maxwidth"),
        EncodedValue("max_length", "number", "arc_max_length", unit="m", scale=0.1, doc="maxlength"),
        EncodedValue("max_weight", "number", "arc_max_weight", unit="t", scale=0.1, doc="maxweight"),
    )
}


def _road_class_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per `units.ROAD_CLASSES` code: GraphHopper's road class code (a link takes its road's) and whether it is a
    link. Ferries, trains and movable bridges are OTHER, as a way without a highway tag in GraphHopper."""
    gh = np.zeros(len(ROAD_CLASSES), np.uint8)
    link = np.zeros(len(ROAD_CLASSES), bool)
    for code, name in enumerate(ROAD_CLASSES):
        base = name.removesuffix("_link")
        link[code] = base != name
        gh[code] = ROAD_CLASS.index(base.upper()) if base.upper() in ROAD_CLASS else 0
    return gh, link


_GH_CLASS, _IS_LINK = _road_class_tables()


class MissingValue(KeyError):
    """The graph does not store an encoded value (built before it existed): re-run `starroute preprocess`."""


def has_value(arrays: Mapping[str, np.ndarray], name: str) -> bool:
    """Whether a graph's road arcs (`arrays`: its array table) can answer conditions on `name`."""
    ev = ENCODED_VALUES[name]
    return ev.array is None or ev.array in arrays


def arc_values(arrays: Mapping[str, np.ndarray], name: str) -> np.ndarray:
    """One encoded value per road arc: int codes (enum: index into its `constants`), float64 (number; inf = no
    limit stated), bool. `MissingValue` when the graph has not stored it."""
    ev = ENCODED_VALUES[name]
    if name == "road_class":
        return _GH_CLASS[np.asarray(arrays["arc_class"])]
    if name == "road_class_link":
        return _IS_LINK[np.asarray(arrays["arc_class"])]
    if name == "lanes":
        return np.asarray(arrays["arc_lane_count"]).astype(np.float64)
    if ev.array is None or ev.array not in arrays:
        raise MissingValue(f"this graph does not store {name!r}: re-run `starroute preprocess` to add it")
    stored = np.asarray(arrays[ev.array])
    if ev.kind != "number":
        return stored
    none = NO_LIMIT_U8 if stored.dtype == np.uint8 else NO_LIMIT_U16
    out = stored.astype(np.float64) * ev.scale
    out[stored == none] = np.inf
    return out

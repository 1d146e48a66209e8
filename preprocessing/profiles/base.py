"""The profile protocol: what a routing profile tells the graph builder about each OSM way and node.

A profile is a plain module in `preprocessing/profiles/` exposing `NAME`, `MODE`, `WAY_KEYS`, `NODE_KEYS`,
`process_way(tags) -> WayResult | None` and `process_node(tags) -> NodeResult | None`, with OSRM's semantics for
the matching Lua profile. Speeds are km/h; 0 means "not routable in this direction".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from ..units import FLAG_FERRY, FLAG_MOTORWAY, FLAG_RESTRICTED, FLAG_TOLL
from .tags import canonicalize_list

# Classes an arc can carry (OSRM's profile `classes`), as `arc_flags` bits. A profile's `EXCLUDABLE` lists the sets of
# them a request may exclude (OSRM's `excludable`: exactly these combinations, each with its own contraction).
CLASS_FLAGS: dict[str, int] = {
    "ferry": FLAG_FERRY,
    "toll": FLAG_TOLL,
    "motorway": FLAG_MOTORWAY,
    "restricted": FLAG_RESTRICTED,
}
MOTORWAY_CLASSES = frozenset({"motorway", "motorway_link"})  # OSRM's "motorway" class


def class_mask(classes: frozenset[str] | set[str] | tuple[str, ...]) -> int:
    """The `arc_flags` bits of a set of class names."""
    mask = 0
    for c in classes:
        mask |= CLASS_FLAGS[c]
    return mask


# Road class codes stored per arc (`arc_class`); the index is the code. Append only: codes are on disk.
ROAD_CLASSES: tuple[str, ...] = (
    "other",
    "motorway",
    "motorway_link",
    "trunk",
    "trunk_link",
    "primary",
    "primary_link",
    "secondary",
    "secondary_link",
    "tertiary",
    "tertiary_link",
    "unclassified",
    "residential",
    "living_street",
    "service",
    "track",
    "road",
    "path",
    "footway",
    "cycleway",
    "bridleway",
    "pedestrian",
    "steps",
    "ferry",
    "shuttle_train",
    "movable_bridge",
    "platform",
    "corridor",
    "busway",
)
ROAD_CLASS_CODE: dict[str, int] = {name: i for i, name in enumerate(ROAD_CLASSES)}


def road_class_code(highway: str) -> int:
    """Code of a highway value in `ROAD_CLASSES`; unknown values map to 0 ("other")."""
    return ROAD_CLASS_CODE.get(highway, 0)


@dataclass(frozen=True)
class WayResult:
    """How a way may be travelled. Durations (seconds, for the whole way) override speeds, e.g. ferries."""

    forward_kmh: float
    backward_kmh: float
    road_class: str = "other"
    name: str = ""
    ref: str = ""
    forward_duration_s: float | None = None
    backward_duration_s: float | None = None
    forward_mode: str = "driving"
    backward_mode: str = "driving"
    ferry: bool = False
    roundabout: bool = False
    toll: bool = False
    forward_restricted: bool = False
    backward_restricted: bool = False

    @property
    def forward(self) -> bool:
        return self.forward_kmh > 0 or (self.forward_duration_s is not None and self.forward_kmh >= 0)

    @property
    def backward(self) -> bool:
        return self.backward_kmh > 0 or (self.backward_duration_s is not None and self.backward_kmh >= 0)


def directed_way(
    tags: Mapping[str, str],
    *,
    forward: bool,
    backward: bool,
    forward_kmh: float,
    backward_kmh: float,
    road_class: str,
    duration_s: float | None = None,
    forward_mode: str = "driving",
    backward_mode: str = "driving",
    ferry: bool = False,
    toll: bool = False,
    forward_restricted: bool = False,
    backward_restricted: bool = False,
) -> WayResult:
    """The WayResult every profile returns: a closed direction gets speed 0, no duration and mode "inaccessible";
    name, canonical `ref` and the roundabout flag come from the tags."""
    return WayResult(
        forward_kmh=max(forward_kmh, 0.0) if forward else 0.0,
        backward_kmh=max(backward_kmh, 0.0) if backward else 0.0,
        road_class=road_class,
        name=tags.get("name", ""),
        ref=canonicalize_list(tags.get("ref"), ";"),
        forward_duration_s=duration_s if forward else None,
        backward_duration_s=duration_s if backward else None,
        forward_mode=forward_mode if forward else "inaccessible",
        backward_mode=backward_mode if backward else "inaccessible",
        ferry=ferry,
        roundabout=tags.get("junction") == "roundabout",
        toll=toll,
        forward_restricted=forward and forward_restricted,
        backward_restricted=backward and backward_restricted,
    )


@dataclass(frozen=True)
class NodeResult:
    """A node's effect: `barrier` blocks passage through it; `penalty_s` is added to every arc passing it."""

    barrier: bool = False
    penalty_s: float = 0.0


class Profile(Protocol):
    NAME: str
    MODE: str
    EXCLUDABLE: tuple[frozenset[str], ...]  # class sets a request may exclude (CLASS_FLAGS names)
    WAY_KEYS: frozenset[str]  # a way with none of these keys is skipped before process_way
    NODE_KEYS: frozenset[str]  # a node with none of these keys is skipped before process_node

    def process_way(self, tags: Mapping[str, str]) -> WayResult | None: ...

    def process_node(self, tags: Mapping[str, str]) -> NodeResult | None: ...

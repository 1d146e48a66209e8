"""The profile protocol: what a routing profile tells the graph builder about each OSM way and node.

A profile is a plain module in `preprocessing/osm/profiles/` exposing `NAME`, `MODE`, `WAY_KEYS`, `NODE_KEYS`,
`process_way(tags) -> WayResult | None` and `process_node(tags) -> NodeResult | None`, with OSRM's semantics for
the matching Lua profile. Speeds are km/h; 0 means "not routable in this direction".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from floor.format.units import FLAG_FERRY, FLAG_MOTORWAY, FLAG_RESTRICTED, FLAG_TOLL, ROAD_CLASS_CODE
from preprocessing.osm.profiles.tags import canonicalize_list

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
    # guidance (OSRM's turn_lanes, classification and names handlers)
    turn_lanes_forward: str = ""  # turn:lanes of the forward direction, left to right ("left|through|right")
    turn_lanes_backward: str = ""
    lane_count: int = 0  # OSRM's number of lanes: `lanes` (or lanes:forward + lanes:backward), at least the turn lanes
    destinations: str = ""  # "A59: Düsseldorf, Köln" (destination:ref: destination), oneways only
    exits: str = ""  # junction:ref
    pronunciation: str = ""  # name:pronunciation
    tunnel: bool = False
    circular: bool = False
    split: bool = False  # OSRM's is_split (see FLAG_SPLIT)
    # routability: the weight runs at `rate` x the speed (OSRM's rate penalties, <= 1); duration is unchanged
    rate: float = 1.0
    # OSRM's is_startpoint beyond the start modes: False where no waypoint may snap onto the way (car.lua: a private
    # service road)
    startpoint: bool = True

    @property
    def forward(self) -> bool:
        return self.forward_kmh > 0 or (self.forward_duration_s is not None and self.forward_kmh >= 0)

    @property
    def backward(self) -> bool:
        return self.backward_kmh > 0 or (self.backward_duration_s is not None and self.backward_kmh >= 0)


SIDEPATH_HIGHWAYS = frozenset({"footway", "cycleway", "path"})


def way_name(tags: Mapping[str, str]) -> str:
    """A way's name as lib/way_handlers.lua `names` gives it: `name`, else, on an unnamed sidewalk or sidepath (a
    footway, cycleway or path with `footway=sidewalk`, `cycleway=sidepath` or `is_sidepath=yes`), the street's name
    from `is_sidepath:of:name` or `street:name`."""
    name = tags.get("name")
    if name is not None:
        return name
    street = tags.get("is_sidepath:of:name") or tags.get("street:name")
    if street and tags.get("highway") in SIDEPATH_HIGHWAYS:
        if tags.get("footway") == "sidewalk" or tags.get("cycleway") == "sidepath" or tags.get("is_sidepath") == "yes":
            return street
    return ""


class Direction(NamedTuple):
    """One direction of a way as a profile judged it: open or closed, its speed (km/h), travel mode, and whether a
    route entering it pays the restricted-road turn weight (car.lua's `forward_restricted`)."""

    open: bool
    kmh: float
    mode: str = "driving"
    restricted: bool = False


def directed_way(
    tags: Mapping[str, str],
    fwd: Direction,
    bwd: Direction,
    road_class: str,
    *,
    duration_s: float | None = None,
    ferry: bool = False,
    toll: bool = False,
    with_turn_lanes: bool = False,
    with_destinations: bool = False,
    classes_differ: bool = False,
    sidepath_names: bool = True,
) -> WayResult:
    """The WayResult every profile returns from the two directions it judged (`fwd`, `bwd`): a closed direction gets
    speed 0, no duration and mode "inaccessible"; name, canonical `ref`, the roundabout flag and the guidance
    attributes (lane count, exits, pronunciation, tunnel, circular; turn lanes per direction if `with_turn_lanes`,
    destinations of a oneway if `with_destinations`, as OSRM's car.lua reads both and foot.lua only destinations)
    come from the tags. `classes_differ`: the directions carry different classes in a way not given here
    (`toll:forward`); with different speeds, modes, turn lanes or restrictions it makes the way split (OSRM's
    `is_split`). `sidepath_names`: an unnamed sidepath takes its street's name (`way_name`; every profile but
    testbot)."""
    forward, backward = fwd.open, bwd.open
    forward_kmh, backward_kmh, forward_mode, backward_mode = fwd.kmh, bwd.kmh, fwd.mode, bwd.mode
    forward_restricted, backward_restricted = fwd.restricted, bwd.restricted
    fwd_oneway = forward and not backward
    rev_oneway = backward and not forward
    lanes_f, lanes_b = turn_lanes(tags, fwd_oneway, rev_oneway) if with_turn_lanes else ("", "")
    if with_destinations and (fwd_oneway or rev_oneway):
        destinations = canonicalize_list(destination(tags, fwd_oneway), ",")
    else:
        destinations = ""
    tunnel = tags.get("tunnel")
    split = (
        forward
        and backward
        and (
            forward_kmh != backward_kmh
            or forward_mode != backward_mode
            or lanes_f != lanes_b
            or forward_restricted != backward_restricted
            or classes_differ
        )
    )
    return WayResult(
        forward_kmh=max(forward_kmh, 0.0) if forward else 0.0,
        backward_kmh=max(backward_kmh, 0.0) if backward else 0.0,
        road_class=road_class,
        name=way_name(tags) if sidepath_names else tags.get("name", ""),
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
        turn_lanes_forward=lanes_f if forward else "",
        turn_lanes_backward=lanes_b if backward else "",
        lane_count=max(lane_count(tags), _lane_tokens(lanes_f) + _lane_tokens(lanes_b)),
        destinations=destinations,
        exits=canonicalize_list(tags.get("junction:ref"), ";"),
        pronunciation=tags.get("name:pronunciation", ""),
        tunnel=tunnel is not None and tunnel != "no",
        circular=tags.get("junction") == "circular",
        split=split,
    )


_LANE_TOKENS = frozenset(
    {"none", "through", "sharp_left", "left", "slight_left", "slight_right", "right", "sharp_right", "reverse",
     "merge_to_left", "merge_to_right"}
)  # fmt: skip


def _uint(value: str | None) -> int | None:
    """A positive whole number (OSRM guidance.lua's `to_number_uint`), else None."""
    try:
        n = float(value) if value is not None else None
    except ValueError:
        return None
    if n is None or not n > 0 or n % 1 != 0 or n > 255:
        return None
    return int(n)


def _lane_tokens(lanes: str) -> int:
    """The number of lanes a turn:lanes string describes (0 when a value is not one OSRM understands)."""
    if not lanes:
        return 0
    parts = lanes.split("|")
    for part in parts:
        if any(t and t not in _LANE_TOKENS for t in part.split(";")):
            return 0
    return len(parts)


def lane_count(tags: Mapping[str, str]) -> int:
    """OSRM's number of lanes (guidance.lua): `lanes`, else `lanes:forward` + `lanes:backward`; 0 = unknown."""
    if tags.get("lanes") is not None:
        return _uint(tags.get("lanes")) or 0
    total = (_uint(tags.get("lanes:forward")) or 0) + (_uint(tags.get("lanes:backward")) or 0)
    return min(total, 255)


def _oneway_aware(tags: Mapping[str, str], key: str, fwd_oneway: bool, rev_oneway: bool) -> tuple[str | None, ...]:
    """OSRM's `Tags.get_forward_backward_by_key`: `key:forward`/`key:backward`, the plain key going to the one
    direction of a oneway (to both otherwise)."""
    fwd, bwd = tags.get(key + ":forward"), tags.get(key + ":backward")
    if fwd is None or bwd is None:
        common = tags.get(key)
        if fwd_oneway:
            fwd = fwd if fwd is not None else common
        elif rev_oneway:
            bwd = bwd if bwd is not None else common
        else:
            fwd = fwd if fwd is not None else common
            bwd = bwd if bwd is not None else common
    return fwd, bwd


def trim_lanes(lanes: str, count_left: int, count_right: int) -> str:
    """OSRM's `trimLaneString`: drop `count_left` leading and `count_right` trailing empty (psv) lanes."""
    if count_left:
        if count_left < len(lanes) and all(c == "|" for c in lanes[:count_left]):
            lanes = lanes[count_left:]
    if count_right:
        if count_right < len(lanes) and all(c == "|" for c in lanes[len(lanes) - count_right :]):
            lanes = lanes[: len(lanes) - count_right]
    return lanes


def apply_access_tokens(lanes: str, access: str) -> str:
    """OSRM's `applyAccessTokens`: keep the lanes whose `vehicle:lanes` value is `yes`."""
    tokens, acc = lanes.split("|"), access.split("|")
    if len(tokens) != len(acc):
        return lanes
    return "|".join(t for t, a in zip(tokens, acc, strict=True) if a == "yes")


def turn_lanes(tags: Mapping[str, str], fwd_oneway: bool, rev_oneway: bool) -> tuple[str, str]:
    """(forward, backward) turn lanes as OSRM's guidance.lua `get_turn_lanes` gives them: per direction, public
    service lanes at the sides trimmed, lanes closed to vehicles (`vehicle:lanes`) dropped."""

    def psv(direction: int) -> int:
        for key in ("lanes:psv", "lanes:taxi", "lanes:share_taxi", "lanes:minibus", "lanes:bus"):
            v = _oneway_aware(tags, key, fwd_oneway, rev_oneway)[direction]
            if v is not None:
                return _uint(v) or 0
        return 0

    psv_f, psv_b = psv(0), psv(1)
    lanes_f, lanes_b = _oneway_aware(tags, "turn:lanes", fwd_oneway, rev_oneway)
    vehicle_f, vehicle_b = _oneway_aware(tags, "vehicle:lanes", fwd_oneway, rev_oneway)

    def process(lanes: str | None, vehicle: str | None, first: int, second: int) -> str:
        if not lanes:
            return ""
        if vehicle:
            return apply_access_tokens(lanes, vehicle)
        if first or second:
            return trim_lanes(lanes, first, second)
        return lanes

    return process(lanes_f, vehicle_f, psv_b, psv_f), process(lanes_b, vehicle_b, psv_f, psv_b)


def destination(tags: Mapping[str, str], forward: bool) -> str:
    """OSRM's `get_destination`: "destination:ref: destination", else either, else destination:street."""

    def directional(key: str) -> str | None:
        v = tags.get(key + (":forward" if forward else ":backward")) or tags.get(key)
        return v.replace(";", ", ") if v else None

    ref, dest, street = directional("destination:ref"), directional("destination"), directional("destination:street")
    if ref and dest:
        return f"{ref}: {dest}"
    return ref or dest or street or ""


@dataclass(frozen=True)
class NodeResult:
    """A node's effect: `barrier` blocks passage through it; `penalty_s` is charged on every passage through it, in
    both directions; `directed_s` only on a passage arriving along a way's node order (`direction`
    OBSTACLE_FORWARD) or against it (OBSTACLE_BACKWARD), as OSRM's directed obstacles (`traffic_signals:direction`,
    `direction` on signals and signs); `passing_s` only on a passage where OSRM compresses the node away, never on a
    real turn (OSRM's graph compressor charges an obstacle node the profile's cost of a fake turn, whose angle is
    180 degrees: 17.1 s for a bicycle); `turning`: a turning circle, turning loop or mini roundabout, which OSRM's
    compressor keeps and where it allows u-turns (car.lua's obstacles); `minor_stop`: its stop sign (`STOP_SIGN_S`
    of `penalty_s`) counts only entering by the minor road (`stop=minor`), `short_leg_stop`: not on a road leg shorter
    than 20 m onto one longer (a stop sign with no direction, car.lua's guess at where it faces)."""

    barrier: bool = False
    penalty_s: float = 0.0
    directed_s: float = 0.0
    direction: int = 0
    passing_s: float = 0.0
    turning: bool = False
    minor_stop: bool = False
    short_leg_stop: bool = False


STOP_SIGN_S = 2.0  # lib/obstacles.lua's stop sign, which `NodeResult.minor_stop` / `short_leg_stop` may leave out
STOP_LEG_M = 20.0  # car.lua: a stop sign is not for a leg shorter than this onto a longer one


OBSTACLE_FORWARD = 1  # NodeResult.direction: applies arriving along the way's node order (OSRM Direction::Forward)
OBSTACLE_BACKWARD = 2  # arriving against it (OSRM Direction::Backward)
OBSTACLE_DIRECTIONS = {"forward": OBSTACLE_FORWARD, "backward": OBSTACLE_BACKWARD}  # OSRM's obstacle_direction


class Profile(Protocol):
    """What the pipeline reads of a profile module (car, bike, foot, testbot each define all of it)."""

    NAME: str
    MODE: str  # OSRM's travel mode: driving, cycling, walking
    START_MODES: tuple[str, ...]  # modes a waypoint may start or end on (OSRM's is_startpoint)
    EXCLUDABLE: tuple[frozenset[str], ...]  # class sets a request may exclude (CLASS_FLAGS names)
    WAY_KEYS: frozenset[str]  # a way with none of these keys is skipped before process_way
    NODE_KEYS: frozenset[str]  # a node with none of these keys is skipped before process_node
    TURNS: bool  # edge-based search graph by default (turn costs and restrictions)
    WEIGHT_NAME: str  # "duration", or car's "routability"
    CONTINUE_STRAIGHT: bool  # no u-turn at via points by default
    USE_TURN_RESTRICTIONS: bool
    RESTRICTIONS: tuple[str, ...]  # the restriction:<mode> keys read

    def process_way(self, tags: Mapping[str, str]) -> WayResult | None: ...

    def process_node(self, tags: Mapping[str, str]) -> NodeResult | None: ...

    def turn_duration_s(self, t: Turns) -> np.ndarray: ...

    def turn_weight_s(self, t: Turns, duration_s: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Turns:
    """The turns of a junction table, one row each, as a profile's `turn_duration_s` sees them (OSRM's
    `process_turn` arguments, vectorised): the angle in degrees (0 straight, + right, - left, 180 u-turn), the
    number of roads meeting at the junction, whether it is a u-turn, whether the mode changes (e.g. onto a ferry),
    whether the source / target direction is restricted (`FLAG_RESTRICTED`), whether the source / target is
    on a roundabout (`FLAG_ROUNDABOUT`; None: neither), whether traffic drives on the left there
    (`preprocess --driving-side left`; None: nowhere), and whether OSRM compresses the junction away (two compatible
    roads, `floor.format.road_classification.compressed_nodes`: OSRM takes no turn there; None: unknown)."""

    angle: np.ndarray  # float64 degrees
    roads: np.ndarray  # int64
    u_turn: np.ndarray  # bool
    mode_change: np.ndarray  # bool
    source_restricted: np.ndarray  # bool
    target_restricted: np.ndarray  # bool
    source_roundabout: np.ndarray | None = None  # bool
    target_roundabout: np.ndarray | None = None  # bool
    left_hand: np.ndarray | None = None  # bool
    compressed: np.ndarray | None = None  # bool


def sigmoid_turn_s(angle: np.ndarray, penalty_s: float, bias: float | np.ndarray) -> np.ndarray:
    """OSRM car.lua's turn duration: a sigmoid of the angle reaching `penalty_s` at 180 degrees, right turns (angle
    >= 0) cheaper than left ones by `bias` (right-hand driving; 1 / bias where traffic drives on the left, one per
    turn)."""
    a = np.asarray(angle, dtype=np.float64)
    right = penalty_s / (1 + np.exp(-((13 / bias) * a / 180 - 6.5 * bias)))
    left = penalty_s / (1 + np.exp(-((13 * bias) * -a / 180 - 6.5 / bias)))
    return np.where(a >= 0, right, left)


def turn_weight_same(t: Turns, duration_s: np.ndarray) -> np.ndarray:
    """A turn weighs its duration (profiles whose weight is duration)."""
    return duration_s

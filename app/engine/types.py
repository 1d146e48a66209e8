"""Plain data types passed between the router, the search kernels and the API."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

import numpy as np

from floor.format.units import INF_WEIGHT, WEIGHT_PER_SECOND

__all__ = ["INF_WEIGHT"]  # re-exported: the engine's sentinel is the format's (`floor.format.units`)


@dataclass
class HotPath:
    """The one hot-path switch: whether a plain hierarchy leg (`app.engine.route.ch_leg`) and snapping
    (`Snapper`'s `_snap_point` / `_nearest_point`) run as one fused kernel call each, or step by step (the same answers
    from kernels a first start compiles sooner). One object per router, shared by the routers derived from it, its
    snapper and its legs; `app.warmup` turns it off until the fused kernels are loaded (`Router.hot_path`)."""

    fused: bool = True


@dataclass(frozen=True)
class Phantom:
    """A coordinate snapped onto a geometry chain (OSRM's phantom node).

    `fwd_arc` runs along the chain from its first point to its last, `bwd_arc` the other way; either may be -1
    (oneway). `*_before` are the integer weight (ds) and distance (dm) of `fwd_arc` from its tail to the snapped
    point, `*_after` the rest (so before + after == the arc's total); `bwd_*` likewise for `bwd_arc`, measured from
    *its* tail (the chain's last point).
    """

    input_lon: float
    input_lat: float
    lon: float
    lat: float
    distance_m: float  # input point -> snapped point, metres
    chain: int
    segment: int  # index of the chain segment holding the point (point i -> i+1)
    fwd_arc: int
    bwd_arc: int
    fwd_weight_before: int
    fwd_weight_after: int
    fwd_dist_before: int
    fwd_dist_after: int
    bwd_weight_before: int
    bwd_weight_after: int
    bwd_dist_before: int
    bwd_dist_after: int
    component: int  # SCC id of the chain's nodes (0 = largest)
    name: str = ""
    osm_nodes: tuple[int, int] = (0, 0)  # OSM ids of the chain's end nodes (OSRM nearest `nodes`)
    # travel times (ds) split like the weights, where the weight is not the travel time (routability); None: weights
    fwd_time_before: int | None = None
    fwd_time_after: int | None = None
    bwd_time_before: int | None = None
    bwd_time_after: int | None = None
    # on a chain end node: the chains OSRM takes as candidates there too (the roads whose projection of the input
    # point rounds onto that node at 1e-6 degrees, this one included); None: every road at the node
    at_chains: tuple[int, ...] | None = None

    def times(self) -> tuple[int, int, int, int]:
        """(fwd before, fwd after, bwd before, bwd after) travel times in ds (the weights when not given)."""
        if self.fwd_time_before is None:
            return self.fwd_weight_before, self.fwd_weight_after, self.bwd_weight_before, self.bwd_weight_after
        return self.fwd_time_before, self.fwd_time_after, self.bwd_time_before, self.bwd_time_after  # type: ignore


_PHANTOM_FIELDS = tuple(f.name for f in fields(Phantom))
_PHANTOM_DEFAULTS = {f.name: f.default for f in fields(Phantom) if f.default is not MISSING}
_PHANTOM_FACTORIES = tuple((f.name, f.default_factory) for f in fields(Phantom) if f.default_factory is not MISSING)
_PHANTOM_POST_INIT = hasattr(Phantom, "__post_init__")
_PHANTOM_DICT = not hasattr(Phantom, "__slots__")  # a slotted Phantom has no __dict__ to fill: its __init__ then
_new = object.__new__


def new_phantom(*values: Any) -> Phantom:
    """`Phantom(*values)` (positional, the rest at their defaults), its fields set at once: the frozen dataclass's
    own `__init__` sets each of them through `object.__setattr__`, 2.6 us a phantom against 1.4 here, and snapping
    and `/nearest` build one per candidate. Equal (and hashing equal) to the one `__init__` builds."""
    if len(values) > len(_PHANTOM_FIELDS):
        raise TypeError(f"Phantom takes {len(_PHANTOM_FIELDS)} fields, not {len(values)}")
    if not _PHANTOM_DICT:
        return Phantom(*values)
    ph = _new(Phantom)
    d = ph.__dict__
    d.update(_PHANTOM_DEFAULTS)
    for name, make in _PHANTOM_FACTORIES:  # none today; a field added with one gets it, as in `__init__`
        d[name] = make()
    d.update(zip(_PHANTOM_FIELDS, values, strict=False))  # the fields not given keep their defaults
    if _PHANTOM_POST_INIT:  # likewise: none today
        ph.__post_init__()  # type: ignore[attr-defined]
    return ph


@dataclass(frozen=True)
class Seeds:
    """Start (or goal) set of a search: graph nodes with initial weights, plus the virtual point for heuristics."""

    nodes: np.ndarray  # int32 [k]
    weights: np.ndarray  # int64 [k] ds
    dists: np.ndarray  # int64 [k] dm
    lon: float  # degrees, the snapped point
    lat: float
    durations: np.ndarray | None = None  # int64 [k] ds of travel time where it differs from the weight

    def duration_array(self) -> np.ndarray:
        """int64 [k] travel times of the seeds (their weights where none were given)."""
        d = self.weights if self.durations is None else self.durations
        return np.ascontiguousarray(d, dtype=np.int64)


_SEEDS_FIELDS = tuple(f.name for f in fields(Seeds))


def new_seeds(
    nodes: np.ndarray,
    weights: np.ndarray,
    dists: np.ndarray,
    lon: float,
    lat: float,
    durations: np.ndarray | None = None,
) -> Seeds:
    """`Seeds(...)` with its fields set at once, as `new_phantom` (the frozen dataclass's `__init__` costs 2.5 us
    here, and a route through many waypoints makes several seed sets a leg)."""
    s = _new(Seeds)
    s.__dict__.update(zip(_SEEDS_FIELDS, (nodes, weights, dists, lon, lat, durations), strict=True))
    return s


@dataclass
class SearchStats:
    algorithm: str
    settled: int = 0
    relaxed: int = 0
    micros: float = 0.0


@dataclass
class SearchTrace:
    """The nodes a search settled, in settle order: `entries[i] = 2 * node + direction` (0 forward, 1 backward)."""

    entries: np.ndarray  # int32
    meeting: int  # the node where the best path was found (-1: none)
    truncated: bool  # the trace limit was reached before the search ended

    @property
    def nodes(self) -> np.ndarray:
        return self.entries >> 1

    @property
    def directions(self) -> np.ndarray:
        return self.entries & 1


@dataclass
class SearchResult:
    """Best path between two seed sets; `arcs` are original arc ids from the source seed node to the target one."""

    weight: int  # ds incl. seed weights; INF_WEIGHT when unreachable
    arcs: np.ndarray  # int32
    source_seed: int  # index into the source Seeds (-1 when unreachable)
    target_seed: int
    stats: SearchStats
    trace: SearchTrace | None = None


@dataclass
class SearchOptions:
    """What one search is asked beyond its seeds; every search takes it and refuses, by name, what it cannot honour.

    `exclude_flags`: arcs with any of these `arc_flags` bits are not used. `forbidden`: search arc ids not to use
    (areas to avoid). `epsilon` >= 1: weighted A* (cost <= epsilon x optimal). `trace`: record settled nodes, at most
    `trace_limit`. `cutoff` (ds): one-to-many searches settle nothing farther.
    """

    exclude_flags: int = 0
    forbidden: np.ndarray | None = None
    epsilon: float = 1.0
    trace: bool = False
    trace_limit: int = 100_000
    cutoff: int = INF_WEIGHT


def refuse_options(options: SearchOptions, search: str, exclude_flags: int = 0) -> None:
    """`InvalidValue` naming the first option `search` cannot honour: anything but the defaults, its own
    `exclude_flags` (a hierarchy contracted without those classes) and a trace excepted."""
    if (
        options.forbidden is None
        and options.epsilon == 1.0
        and options.cutoff >= INF_WEIGHT
        and options.exclude_flags == exclude_flags
    ):
        return  # every request's plain case, without the import below
    from app.engine.errors import InvalidValue

    if options.forbidden is not None:
        raise InvalidValue(f"areas to avoid need a search that filters arcs, not {search}: use algorithm alt")
    if options.epsilon != 1.0:
        raise InvalidValue(f"epsilon applies to astar and bidirectional-astar, not {search}")
    if options.cutoff < INF_WEIGHT:
        raise InvalidValue(f"a cutoff needs a one-to-many search, not {search}")
    if options.exclude_flags != exclude_flags:
        raise InvalidValue(f"{search} cannot exclude road classes: use the hierarchy without them, or algorithm alt")


@dataclass
class Leg:
    """One waypoint-to-waypoint stretch of a route, with per-piece figures for step building."""

    weight: int  # ds
    duration_s: float
    distance_m: float
    coordinates: np.ndarray  # float64 [k, 2] lon, lat; starts and ends at the snapped points
    piece_arc: np.ndarray  # int32 [p] arc id of each piece (first/last may be partial arcs)
    piece_distance_m: np.ndarray  # float64 [p]
    piece_duration_s: np.ndarray  # float64 [p]
    piece_coord_end: np.ndarray  # int64 [p] index into `coordinates` of each piece's last point
    stats: SearchStats
    source: Phantom
    target: Phantom
    piece_weight: np.ndarray  # float64 [p] the pieces' weights in weight units (s)
    # int64 [k] the shape point behind each coordinate (the snapped points: their segment's start / end node)
    coord_geom: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # float64 [p] the turn's time / weight (s) inside each piece, taken onto its arc (edge-based graphs; None: none);
    # steps count it before the turn, as OSRM's `duration_until_turn`
    piece_turn_s: np.ndarray | None = None
    piece_turn_weight: np.ndarray | None = None

    @property
    def weight_s(self) -> float:
        """The leg's weight in seconds of weight (OSRM's `weight`)."""
        return self.weight / WEIGHT_PER_SECOND


@dataclass
class Route:
    """A route over consecutive legs: totals, and the coordinates of the whole route (waypoints not repeated)."""

    legs: list[Leg]
    algorithm: str
    weight: int = 0
    duration_s: float = 0.0
    distance_m: float = 0.0
    coordinates: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))

    @property
    def weight_s(self) -> float:
        """The route's weight in seconds of weight (OSRM's `weight`)."""
        return self.weight / WEIGHT_PER_SECOND


@dataclass(frozen=True)
class ExcludeSet:
    """A set of road classes a request may exclude (the profile's `EXCLUDABLE`), its `arc_flags` bits, and the
    prefix of the hierarchy contracted without them (None when the graph has none)."""

    classes: frozenset[str]
    mask: int
    prefix: str | None


@dataclass(frozen=True)
class RouteOptions:
    """What a route request asks of the engine beyond its waypoints (the facade's request object).

    `exclude`: the road classes not to use, resolved (`Router.exclude_set`; a set of class names is resolved when the
    route runs); `forbidden`:
    arc ids not to use (areas to avoid, `app.engine.features.areas`); `alternatives`: how many more routes to look for;
    `trace`: return the settled nodes; `epsilon` >= 1: weighted A* / early stop, cost within epsilon of the optimum;
    `continue_straight`: no u-turn at via points (OSRM's option; None: the profile's default), on edge-based graphs;
    `model`: a custom model's view, whose router (its weights) answers instead of the engine's; `plateaus`: whether
    alternatives the via-node method did not find may come from plateaus (tens of milliseconds; off, the result says
    whether any were left unsought: `RouteResult.complete`); `when`: depart at / arrive by that time
    (`app.engine.features.departure`).
    """

    algorithm: str = "ch"
    exclude: ExcludeSet | frozenset[str] | None = None
    forbidden: np.ndarray | None = None
    alternatives: int = 0
    trace: bool = False
    trace_limit: int = 100_000
    epsilon: float = 1.0
    continue_straight: bool | None = None
    model: Any = None  # a custom model's view (`app.engine.models.model_metric.ModelView`): its router answers
    model_info: dict[str, Any] | None = None
    plateaus: bool = True
    when: Any = None  # a departure or arrival time (`app.engine.features.departure.When`): time-dependent legs


@dataclass
class RouteResult:
    """The routes of one request, best first (more when alternatives were asked and found), and what the search
    did: per leg of the best route, its trace when asked; the epsilon it ran with and the guaranteed bound."""

    routes: list[Route]
    traces: list[SearchTrace] = field(default_factory=list)
    epsilon: float = 1.0
    complete: bool = True  # False: fewer alternatives than asked, and plateaus were not tried (`RouteOptions`)
    compile_s: float = 0.0  # kernels compiled or loaded meanwhile (a first use): the legs' `micros` include it

    @property
    def best(self) -> Route:
        return self.routes[0]


@dataclass
class Table:
    """Many-to-many result; NaN where a pair is unreachable."""

    durations_s: np.ndarray  # float64 [S, T]
    distances_m: np.ndarray  # float64 [S, T]
    sources: list[Phantom]
    destinations: list[Phantom]
    departure: str | None = None  # with depart_at: the departure (ISO 8601, local time), durations time-dependent

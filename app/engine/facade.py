"""The one door into the engine: typed requests in, seconds and metres out.

Every API (native GET and POST, OSRM URLs, the CLI) parses its input into one of the request objects
(`app.engine.requests`, importable from here) and hands it to `Engine`, which resolves it once (the exclude set,
the areas to avoid, snapping with the request's radii, bearings and approaches) and answers through the router.
The API never touches the router, the graph's arrays or its manifest: what it shows comes from the answers and
from `Engine`'s metadata.

    engine = Engine(load("graphs/monaco-car"))
    answer = engine.route(RouteRequest(Waypoints(((7.4197, 43.7311), (7.4246, 43.7384)))))
    answer.best.duration_s, answer.best.distance_m
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.engine.errors import EngineError, InvalidValue, NoSegment, NotImplementedOption, TooBig
from app.engine.features.departure import When, isochrone_when, route_when, table_when, when_for
from app.engine.maps.tiles import DebugTile
from app.engine.models.custom_model import CustomModel, parse_model
from app.engine.models.model_metric import ModelCache, ModelView
from app.engine.requests import (
    Contour,
    IsochroneAnswer,
    IsochroneRequest,
    MatchAnswer,
    Matching,
    MatchRequest,
    NearestRequest,
    RouteAnswer,
    RouteRequest,
    TableRequest,
    Tracepoint,
    TripAnswer,
    TripRequest,
    Waypoints,
    only_waypoints,
)
from app.engine.roads import RoadGraph
from app.engine.router import Router
from app.engine.snap.snapper import MIN_COMPONENT_SIZE
from app.engine.types import ExcludeSet, Leg, Phantom, RouteOptions, SearchTrace, Table
from floor.format.encoded_values import ENCODED_VALUES, MissingValue, arc_values
from floor.format.graph import Graph
from floor.format.manifest import Manifest
from floor.format.units import DIST_PER_METRE, WEIGHT_PER_SECOND
from floor.kernels.jit import thread_compile_seconds

# the request and answer types live in `app.engine.requests`; the API imports them from here, its door
__all__ = [
    "Contour", "CustomModel", "Engine", "IsochroneAnswer", "IsochroneRequest", "Limits", "MatchAnswer", "Matching",
    "MatchRequest", "NearestRequest", "RouteAnswer", "RouteRequest", "TableRequest", "Tracepoint", "TripAnswer",
    "TripRequest", "Waypoints", "When", "engine_limits",
]  # fmt: skip


@dataclass(frozen=True)
class Limits:
    """The engine's request limits (from `app.settings.Settings`; the defaults are the settings' defaults)."""

    max_via_points: int = 500
    max_alternatives: int = 3
    max_table_size: int = 100
    max_trip_size: int = 100
    max_nearest: int = 100
    max_matching_size: int = 100
    max_matching_radius_m: float | None = None
    trace_limit: int = 100_000
    max_contours: int = 10
    max_minutes: float = 180.0
    max_distance_m: float = 200_000.0
    max_custom_models: int = 8
    custom_model_cch_max_arcs: int = 1_000_000


class Engine:
    """One per worker: the graph, its router and the request limits; every method answers one typed request."""

    def __init__(
        self,
        graph: Graph,
        limits: Limits | None = None,
        max_snap_m: float | None = None,
        min_component_size: int = MIN_COMPONENT_SIZE,
    ) -> None:
        self.graph = graph
        self.limits = limits or Limits()
        self.router = Router(graph, max_snap_m=max_snap_m, min_component_size=min_component_size)
        self.models = ModelCache(self.router, self.limits.max_custom_models, self.limits.custom_model_cch_max_arcs)

    def with_metric(self, graph: Graph) -> Engine:
        """An engine over `graph`, this engine's build with its current metric (`app.engine.data.same_build`): the
        router shares every table that does not depend on the weights (`Router.with_metric`), custom models start
        afresh (they were built on the old weights)."""
        e = object.__new__(Engine)
        e.graph = graph
        e.limits = self.limits
        e.router = self.router.with_metric(graph)
        e.models = ModelCache(e.router, self.limits.max_custom_models, self.limits.custom_model_cch_max_arcs)
        return e

    # -- custom models ---------------------------------------------------------------------------------------------
    @staticmethod
    def parse_model(obj: Any) -> CustomModel:
        """A custom model (GraphHopper's JSON) parsed and checked (`app.engine.models.custom_model.parse_model`);
        `InvalidValue` names the rule and the reason."""
        return parse_model(obj)

    def model_ready(self, model: CustomModel | None) -> bool:
        """Whether a request with `model` needs no build (no model, or its metric is cached): the API builds it in
        the search pool first otherwise (`prepare_model`)."""
        return model is None or self.models.cached(model)

    def prepare_model(self, model: CustomModel) -> dict[str, Any]:
        """Build (or find) `model`'s metric over this graph: its weights, the router on them, the hierarchy
        customized for it (in the background on graphs up to `custom_model_cch_max_arcs` search arcs). `InvalidValue`
        for a model the graph cannot answer (an encoded value it does not store, a bad area)."""
        view, cached = self.models.get(model)
        return view.info(cached)

    def damaged(self) -> list[str]:
        """The graph's files changed since they were mapped (truncated, rewritten in place), one phrase each: while any
        is listed, no request may read the graph (a truncated mapping kills the reader with SIGBUS)."""
        return self.graph.damaged()

    def custom_models_info(self) -> dict[str, Any]:
        """The custom models this engine keeps built (`/health`): the bound, their keys, how many were built."""
        return self.models.info()

    def _view(self, model: CustomModel | None) -> tuple[Router, ModelView | None, dict[str, Any] | None]:
        if model is None:
            return self.router, None, None
        view, cached = self.models.get(model)
        return view.router, view, view.info(cached)

    def stop_threads(self) -> None:
        """End the threads the engine started (custom models' and departure times' customizations, the tables'
        helper), after their work: a process forks workers only without them (`app.server.prepare_fork`)."""
        from app.engine.features.departure import stop_threads as stop_departure
        from app.engine.features.table import stop_helper

        self.models.stop_threads()
        stop_departure(self.router)
        stop_helper()

    def before_fork(self) -> None:
        """Keep only what workers read (`app.server.prepare_fork`, threads ended): every thread's search objects
        dropped (the warm-up's: workers search on threads of their own) and the graph's mapped pages taken out of
        this process's resident set (the workers fault them in from the page cache as they read them). Otherwise
        the supervisor holds both all its life, counted in the server's memory though no worker uses them."""
        from floor.format.files import release_pages

        for router in (self.router, *self.models.routers()):
            router.forget_thread_state()
        for graph in (self.graph, self.router.search_graph):
            for arr in graph.arrays.values():
                release_pages(arr)

    def warmup(self, algorithms: Sequence[str] | None = None) -> None:
        """A few tiny queries per algorithm (all, or `algorithms`) and a table: kernels loaded, per-graph tables
        built, before a request needs them."""
        self.router.warmup(algorithms)

    # -- metadata -------------------------------------------------------------------------------------------------
    @property
    def meta(self) -> Manifest:
        """The graph's typed manifest."""
        return self.graph.meta

    @property
    def algorithms(self) -> tuple[str, ...]:
        return self.router.algorithms

    @property
    def default_algorithm(self) -> str:
        return self.router.default_algorithm

    @property
    def excludable(self) -> list[ExcludeSet]:
        return self.router.excludable

    @property
    def roads(self) -> RoadGraph:
        """The road graph the step builder reads (`app.engine.roads.RoadView`)."""
        return self.router.roads

    def road_tiles(self) -> Any:
        """The map's road tiles of this graph (`app.engine.maps.tiles.RoadTiles`), indexed on first use."""
        from app.engine.maps.tiles import road_tiles

        return road_tiles(self.router)

    def debug_tile(self, z: int, x: int, y: int) -> DebugTile:
        """OSRM's debug tile z/x/y of the routing graph (`/tile/v1`: segments with speeds, turns with costs, OSM
        nodes, segregated edges; `app.engine.maps.debug_tiles`); the per-graph tables are built on first use."""
        from app.engine.maps.debug_tiles import debug_tiles

        return debug_tiles(self.router).tile(z, x, y)

    @property
    def has_basemap(self) -> bool:
        """Whether the graph carries the map's background layer (`preprocessing.basemap`)."""
        from app.engine.maps.basemap import has_basemap

        return has_basemap(self.graph)

    def basemap_tile(self, z: int, x: int, y: int) -> Any:
        """The background polygons of tile z/x/y (`app.engine.maps.basemap.TileAreas`)."""
        from app.engine.maps.basemap import tile_areas

        return tile_areas(self.graph, z, x, y)

    def leg_segment_figures(self, leg: Leg) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per segment of a leg: distance (m), duration (s) and weight (s), as OSRM's annotations give them."""
        return self.router.legs.segment_figures(leg)

    def leg_nodes(self, leg: Leg) -> np.ndarray:
        """int64 OSM node ids behind a leg's coordinates (OSRM's `annotations=nodes`; 0 where unknown)."""
        return self.router.legs.osm_nodes(leg)

    @property
    def has_time_profiles(self) -> bool:
        """Whether the graph carries time profiles (`td_factor`, `td_arc_row`): departure times change its durations."""
        arrays = self.graph.arrays
        return "td_factor" in arrays and "td_arc_row" in arrays and len(arrays["td_factor"]) > 0

    @property
    def timezone(self) -> str | None:
        """The graph's time zone (departure times' local time; None: UTC)."""
        tz = self.graph.manifest.get("timezone")
        return None if tz is None else str(tz)

    def info(self) -> dict[str, Any]:
        """The router's metadata and the graph's time zone (`timezone`: departure times' local time; None: UTC)."""
        return self.router.info() | {"timezone": self.timezone}

    def sample_points(self) -> tuple[tuple[float, float], tuple[float, float]] | None:
        return self.router.sample_points()

    def check_algorithm(self, algorithm: str) -> None:
        """`InvalidValue` unless this graph answers with `algorithm`."""
        if algorithm not in self.router.algorithms:
            available = ", ".join(self.router.algorithms)
            raise InvalidValue(f"algorithm {algorithm!r} is not available on this graph (available: {available})")

    # -- resolution ------------------------------------------------------------------------------------------------
    def exclude(self, classes: Sequence[str]) -> ExcludeSet | None:
        """The request's exclude set, validated once (`Router.exclude_set`)."""
        return self.router.exclude_set(classes)

    def snap(self, wp: Waypoints, ex: ExcludeSet | None = None, router: Router | None = None) -> list[Phantom]:
        """Snap the waypoints of one request together (the tiny-component rule applies across them); roads of the
        excluded classes are no candidates. `NoSegment` says "Could not find a matching segment for coordinate i"."""
        radiuses = wp.radiuses
        if wp.default_radius_m is not None:
            given = radiuses if radiuses is not None else [None] * len(wp.coordinates)
            radiuses = [wp.default_radius_m if r is None else r for r in given]
        try:
            return (router or self.router).snap_waypoints(
                wp.coordinates, radiuses, wp.bearings, ex.mask if ex else 0, wp.approaches, wp.any_edge
            )
        except NoSegment as exc:
            msg = f"Could not find a matching segment for coordinate {exc.index or 0}"
            detail = exc.message.split(": ", 1)[-1]  # the router's "waypoint i: " off
            if wp.detail:
                msg += ": " + detail
            err = NoSegment(msg)
            err.index, err.detail = exc.index, detail
            raise err from None

    def snap_each(
        self, wp: Waypoints, ex: ExcludeSet | None = None, router: Router | None = None
    ) -> tuple[list[Phantom | None], dict[int, str]]:
        """`snap`, leaving out the points with no road within their radius instead of refusing the request: a
        phantom per point (None where left out; the others snapped together, as `snap` does) and, per point left
        out, why (`NoSegment.detail`: how far the nearest road is, whether lon and lat look swapped). For batches
        (`starroute matrix`) where one bad line must not stop the others; costs nothing more when every point snaps."""
        try:
            return list(self.snap(wp, ex, router)), {}
        except NoSegment:
            pass
        why: dict[int, str] = {}
        for i in range(len(wp.coordinates)):
            try:
                self.snap(only_waypoints(wp, [i]), ex, router)
            except NoSegment as exc:
                why[i] = exc.detail
        keep = [i for i in range(len(wp.coordinates)) if i not in why]
        out: list[Phantom | None] = [None] * len(wp.coordinates)
        if keep:
            for i, ph in zip(keep, self.snap(only_waypoints(wp, keep), ex, router), strict=True):
                out[i] = ph
        return out, why

    def resolve_route(self, req: RouteRequest) -> tuple[str, list[Phantom], RouteOptions]:
        """Check a route request against the limits, resolve its exclude set and areas, snap it: (algorithm,
        phantoms, options). Cheap: the API runs it on the event loop and the search where it belongs."""
        lim = self.limits
        n = len(req.waypoints.coordinates)
        if n > lim.max_via_points:
            raise TooBig(f"Number of points {n} is higher than the maximum ({lim.max_via_points})")
        if req.alternatives > lim.max_alternatives:
            raise TooBig(f"alternatives={req.alternatives} is more than the maximum ({lim.max_alternatives})")
        when = self.when(req)
        if when is not None and (req.custom_model is not None or req.avoid is not None or req.alternatives):
            raise InvalidValue("depart_at / arrive_by cannot be combined with custom_model, avoid or alternatives")
        if when is not None and req.continue_straight and n > 2:
            raise InvalidValue(
                "continue_straight is not applied to departure-time routes (each leg departs where the last arrived, "
                "free to turn back at a via point): leave it out or set it false"
            )
        router, view, info = self._view(req.custom_model)
        default = view.algorithm if view is not None else self.default_algorithm
        if req.avoid is not None and default == "ch":
            default = "alt" if "alt" in router.algorithms else "bidirectional-astar"
        algorithm = req.algorithm or default
        if algorithm not in router.algorithms:
            router.factory(algorithm)  # InvalidValue saying why
        ex = self.exclude(req.exclude)
        phantoms = self.snap(req.waypoints, ex, router)
        forbidden = None
        if req.avoid is not None:
            forbidden = router.forbidden_arcs(req.avoid)
            router.check_outside(phantoms, forbidden)
        options = RouteOptions(
            algorithm=algorithm,
            exclude=ex,
            forbidden=forbidden,
            trace=req.trace,
            trace_limit=lim.trace_limit,
            epsilon=req.epsilon,
            alternatives=req.alternatives if n == 2 else 0,
            continue_straight=req.continue_straight,
            model=view,
            model_info=info,
            when=when,
        )
        return algorithm, phantoms, options

    def when(self, req: RouteRequest | TableRequest | IsochroneRequest) -> When | None:
        """A request's departure or arrival time (`depart_at` / `arrive_by`), checked (`InvalidValue`: both given, a
        bad value, a graph without turns); None when it gives none."""
        if req.depart_at is None and req.arrive_by is None:
            return None
        return when_for(self.router, req.depart_at, req.arrive_by)

    # -- answers ---------------------------------------------------------------------------------------------------
    def routes(self, phantoms: list[Phantom], options: RouteOptions) -> RouteAnswer:
        """The routes through resolved `phantoms` (`resolve_route`), their traces as coordinates when asked."""
        router = options.model.router if options.model is not None else self.router
        if options.when is not None:
            return self._routes_when(phantoms, options)
        compiled = thread_compile_seconds()  # the search runs on this thread: what its figures include
        result = router.query().routes(phantoms, options)
        result.compile_s = thread_compile_seconds() - compiled
        resolved = self.router.exclude_set(options.exclude)
        ex = sorted(resolved.classes) if resolved is not None else []
        traces = [self._trace(tr) for tr in result.traces] if options.trace else []
        return RouteAnswer(result, phantoms, ex, traces, options.model_info)

    def _routes_when(self, phantoms: list[Phantom], options: RouteOptions) -> RouteAnswer:
        """The time-dependent route (`app.engine.features.departure.route_when`)."""
        resolved = self.router.exclude_set(options.exclude)
        compiled = thread_compile_seconds()
        mask = resolved.mask if resolved is not None else 0
        result, depart, arrive = route_when(self.router, phantoms, options.when, mask, options.algorithm)
        result.compile_s = thread_compile_seconds() - compiled
        ex = sorted(resolved.classes) if resolved is not None else []
        return RouteAnswer(result, phantoms, ex, [], None, depart, arrive)

    def route(self, req: RouteRequest) -> RouteAnswer:
        """`resolve_route` then `routes`."""
        _, phantoms, options = self.resolve_route(req)
        return self.routes(phantoms, options)

    def _trace(self, tr: SearchTrace) -> dict[str, Any]:
        pts = np.round(self.router.node_lonlat(tr.nodes), 6)
        settled = np.concatenate([pts, tr.directions[:, None].astype(np.float64)], axis=1) if len(pts) else pts
        meet = np.round(self.router.node_lonlat(np.array([tr.meeting])), 6)[0].tolist() if tr.meeting >= 0 else None
        return {"settled": settled, "meeting": meet, "truncated": tr.truncated}

    def _table_points(self, req: TableRequest) -> tuple[list[int], list[int], ExcludeSet | None]:
        """A table request checked: its source and destination indices and its exclude set."""
        lim = self.limits
        n = len(req.waypoints.coordinates)
        src = list(range(n)) if req.sources is None else list(req.sources)
        dst = list(range(n)) if req.destinations is None else list(req.destinations)
        if len(src) > lim.max_table_size or len(dst) > lim.max_table_size:
            raise TooBig(f"a table has at most {lim.max_table_size} sources and {lim.max_table_size} destinations")
        return src, dst, self.exclude(req.exclude)

    def resolve_table(self, req: TableRequest) -> tuple[list[Phantom], list[Phantom], ExcludeSet | None]:
        """Check a table request, snap it: (sources, destinations, exclude set). With a custom model, the points
        are snapped on its metric: hand the same model to `table`."""
        src, dst, ex = self._table_points(req)
        phantoms = self.snap(req.waypoints, ex, self._view(req.model)[0])
        return [phantoms[i] for i in src], [phantoms[j] for j in dst], ex

    def resolve_table_each(
        self, req: TableRequest
    ) -> tuple[list[Phantom | None], list[Phantom | None], ExcludeSet | None, dict[int, str]]:
        """`resolve_table`, leaving out the points with no road within their radius (`snap_each`): None in their
        places, and why per point left out (its index among the request's waypoints)."""
        src, dst, ex = self._table_points(req)
        phantoms, why = self.snap_each(req.waypoints, ex, self._view(req.model)[0])
        return [phantoms[i] for i in src], [phantoms[j] for j in dst], ex, why

    def table(
        self,
        sources: list[Phantom],
        destinations: list[Phantom],
        exclude: ExcludeSet | None = None,
        model: CustomModel | None = None,
        when: When | None = None,
        reuse_buckets: bool = False,
    ) -> Table:
        """Durations (s) and distances (m), NaN where unreachable; on `model`'s metric when given (the one
        `resolve_table` snapped with); departing at `when` (`Engine.when`), time-dependent. `reuse_buckets`: keep
        the destinations' CH buckets on this thread for the next table with the same destinations (a matrix's
        blocks down one column range; the same answers, the destinations' backward searches run once)."""
        if when is not None:
            if model is not None:
                raise InvalidValue("depart_at cannot be combined with custom_model or avoid")
            mask = exclude.mask if exclude is not None else 0
            dur, dist, depart = table_when(self.router, sources, destinations, when, mask)
            return Table(dur, dist, list(sources), list(destinations), depart)
        return self._view(model)[0].query().table(sources, destinations, exclude, reuse_buckets)

    def road_values(self, name: str, arcs: np.ndarray) -> list[Any]:
        """GraphHopper's encoded value `name` (`floor.format.encoded_values`) of the road arcs `arcs` (a route's
        `piece_arc`), for path details: an enum's constant (`MOTORWAY`), a number (None: no limit stated), a bool.
        `InvalidValue` for a name the graph does not store."""
        ev = ENCODED_VALUES.get(name)
        if ev is None:
            raise InvalidValue(f"no encoded value {name!r}")
        keys = [ev.array] if ev.array is not None else ["arc_class", "arc_lane_count"]
        arrays = self.graph.arrays
        idx = np.asarray(arcs, dtype=np.int64)
        try:
            got = arc_values({k: np.asarray(arrays[k])[idx] for k in keys if k in arrays}, name)
        except (MissingValue, KeyError):
            raise InvalidValue(f"this graph does not store {name!r}: re-run `starroute preprocess` to add it") from None
        if ev.kind == "enum":
            return [ev.constants[int(v)] for v in got]
        if ev.kind == "number":
            return [float(v) if np.isfinite(v) else None for v in got]
        return [bool(v) for v in got]

    def model_info(self, model: CustomModel | None) -> dict[str, Any] | None:
        """What an answer says about `model` (None for none): its key, method, build (`ModelView.info`)."""
        return None if model is None else self._view(model)[2]

    def check_trip(self, req: TripRequest) -> None:
        """OSRM's refusals of a trip before anything is snapped, in its order: fewer than two points
        (`InvalidOptions`), an end that is neither fixed nor returned to (`NotImplemented`), more than
        `max_trip_size` points (`TooBig`)."""
        n = len(req.waypoints.coordinates)
        if n < 2:
            raise EngineError("Number of coordinates needs to be at least two.", "InvalidOptions")
        if req.source not in ("any", "first") or req.destination not in ("any", "last"):
            raise InvalidValue("source is any or first, destination any or last")
        if not (req.roundtrip or req.source == "first" or req.destination == "last"):
            raise NotImplementedOption("This request is not supported")
        if n > self.limits.max_trip_size:
            raise TooBig("Too many trip coordinates")

    def resolve_trip(self, req: TripRequest) -> tuple[list[Phantom], RouteOptions]:
        """`check_trip`, then the exclude set and the snapped waypoints: (phantoms, route options)."""
        self.check_trip(req)
        ex = self.exclude(req.exclude)
        phantoms = self.snap(req.waypoints, ex)
        return phantoms, RouteOptions(algorithm=self.default_algorithm, exclude=ex, continue_straight=False)

    def trip(self, req: TripRequest, phantoms: list[Phantom], options: RouteOptions) -> TripAnswer:
        """The trip through resolved `phantoms` (`resolve_trip`): the order from the table's durations
        (`app.engine.features.trip`), the route in that order. `NoTrips` when some point cannot reach another."""
        from app.engine.features.trip import trip

        fixed = (req.source == "first", req.destination == "last")
        plan, result = trip(self.router.query(), phantoms, options, req.roundtrip, *fixed)
        resolved = self.router.exclude_set(options.exclude)
        ex = sorted(resolved.classes) if resolved is not None else []
        return TripAnswer(plan.order, result.best, phantoms, ex, plan.exact)

    def nearest(self, req: NearestRequest) -> list[Phantom]:
        """Up to `number` snapped points on distinct segments, nearest first; `NoSegment` when none."""
        if req.number > self.limits.max_nearest:
            raise TooBig(f"number {req.number} is higher than the maximum ({self.limits.max_nearest})")
        ex = self.exclude(req.exclude)
        try:
            found = self.router.nearest(req.lon, req.lat, req.number, exclude_mask=ex.mask if ex else 0)
            found = [ph for ph in found if req.radius_m is None or ph.distance_m <= req.radius_m]
        except NoSegment:
            found = []
        if not found:
            raise NoSegment("Could not find a matching segment for coordinate 0")
        return found

    def resolve_isochrone(self, req: IsochroneRequest) -> tuple[Phantom, ExcludeSet | None]:
        """Check an isochrone request's limits, snap its point."""
        lim = self.limits
        top = lim.max_minutes * 60 if req.metric == "duration" else lim.max_distance_m
        if not req.limits or len(req.limits) > lim.max_contours:
            raise InvalidValue(f"give 1 to {lim.max_contours} limits")
        if any(not np.isfinite(v) or v <= 0 or v > top for v in req.limits):
            unit = f"{lim.max_minutes:g} minutes" if req.metric == "duration" else f"{lim.max_distance_m:g} m"
            raise InvalidValue(f"every limit must be > 0 and at most {unit}")
        ex = self.exclude(req.exclude)
        return self.snap(req.waypoints, ex, self._view(req.model)[0])[0], ex

    def isochrone(self, req: IsochroneRequest, phantom: Phantom, ex: ExcludeSet | None) -> IsochroneAnswer:
        """The contour polygon of each limit (largest first), from one search with the largest limit as cutoff."""
        from app.engine.features.contours import contour_polygons

        scale = WEIGHT_PER_SECOND if req.metric == "duration" else DIST_PER_METRE  # seconds -> ds, metres -> dm
        units = [int(round(v * scale)) for v in req.limits]
        router, _, info = self._view(req.model)
        when = self.when(req)
        depart = None
        if when is not None:
            if req.model is not None:
                raise InvalidValue("depart_at cannot be combined with custom_model or avoid")
            mask = ex.mask if ex is not None else 0
            pieces, settled, depart = isochrone_when(router, phantom, units, when, req.reverse, req.metric, mask)
        else:
            pieces, settled = router.query().isochrone(phantom, units, req.metric, req.reverse, ex)
        out = []
        for value, part in zip(req.limits, pieces, strict=True):
            try:
                geometry, tol = contour_polygons(part[:, 0], part[:, 1], part[:, 2], part[:, 3], req.buffer_m)
            except ValueError as exc:
                raise TooBig(f"isochrone of {value:g}: {exc}") from None
            out.append(Contour(float(value), geometry, tol, int(len(part))))
        return IsochroneAnswer(out[::-1], phantom, settled, info, depart)

    def match(self, req: MatchRequest) -> MatchAnswer:
        """Match a trace (`app.engine.features.match`): OSRM's checks and limits, `tidy`, the hidden Markov model,
        one route
        per matched piece. `NoSegment` when no point has a road within 3 standard deviations, `NoMatch` when no two
        consecutive points could be matched, or the request's waypoints were not all matched into one piece."""
        from app.engine.features.match import Matcher, Trace, tidy_trace

        lim = self.limits
        n = len(req.coordinates)
        if n > lim.max_matching_size:
            raise TooBig("Too many trace coordinates")
        cap = lim.max_matching_radius_m
        if cap is not None and any(r is not None and r > cap for r in req.radiuses or ()):
            raise TooBig("Radius search size is too large for map matching.")
        ts = req.timestamps
        if ts and any(b < a for a, b in zip(ts, ts[1:], strict=False)):
            raise InvalidValue("Timestamps need to be monotonically increasing.")
        tidied = tidy_trace(req.coordinates, ts, req.waypoints, req.tidy)
        kept = tidied.kept
        wps = tidied.waypoints
        if wps is not None and (not wps or wps[0] != 0 or wps[-1] != len(kept) - 1):
            raise InvalidValue("First and last coordinates must be specified as waypoints.")

        def pick(values: Sequence[Any] | None) -> list[Any] | None:
            return None if values is None else [values[i] for i in kept]

        trace = Trace([req.coordinates[i] for i in kept], pick(ts) if ts else None, pick(req.radiuses),
                      pick(req.bearings))  # fmt: skip
        parts = Matcher(self.router, self.exclude(req.exclude)).match(trace, req.split_gaps, wps or ())
        if not parts:
            raise EngineError("Could not match the trace.", "NoMatch")
        legs_at = None
        if wps is not None:
            if len(parts) > 1:
                raise EngineError("Could not match the trace with the given waypoints.", "NoMatch")
            matched = set(parts[0].sub.indices)
            if any(w not in matched for w in wps):
                raise EngineError("Requested waypoint parameter could not be matched.", "NoMatch")
            wanted = set(wps)
            legs_at = [k for k, t in enumerate(parts[0].sub.indices) if t in wanted]
        points: list[Tracepoint | None] = [None] * n
        counter = 0
        for m, part in enumerate(parts):
            for k, (t, ph) in enumerate(zip(part.sub.indices, part.sub.phantoms, strict=True)):
                orig = kept[t]
                wp: int | None = k
                if wps is not None:
                    wp = None
                points[orig] = Tracepoint(ph, m, wp, part.sub.alternatives[k])
        if wps is not None:  # OSRM numbers the waypoints over the input points it was given as waypoints
            for i in range(n):
                tp = points[i]
                if tp is not None and tidied.was_waypoint[i]:
                    tp.waypoint = counter
                    counter += 1
        return MatchAnswer([Matching(p.route, p.sub.confidence, legs_at) for p in parts], points)


def engine_limits(settings: Any) -> Limits:
    """`Limits` from an `app.settings.Settings` (every limit is a setting)."""
    return Limits(**{name: getattr(settings, name) for name in Limits.__dataclass_fields__})

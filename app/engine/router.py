"""The engine's router: the algorithm registry, exclude sets, snapping, and the per-thread query objects.

`Router(graph)` is built once per process and shared (immutable); `router.query()` hands each thread its own
`Query`, whose search objects allocate their O(n) arrays once and are reused for every request of that thread. The
work itself lives beside its kernels: the search space (`app.engine.route.space`), legs (`app.engine.route.legs`),
alternatives, isochrones and tables (`app.engine.features.alternatives`, `.isochrone`, `.table`). The API calls the
engine
through `app.engine.facade.Engine`, which resolves a request once and hands it here.

    router = Router(graph)
    a, b = router.snap(7.42, 43.735), router.snap(7.43, 43.74)
    route = router.query().route([a, b], algorithm="ch")
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from app.engine.data import chain_index, derived, excludable, freeze, has_ch, has_landmarks, search_graph
from app.engine.errors import InvalidValue, NoRoute, NoSegment
from app.engine.features.alternatives import alternative_routes
from app.engine.features.isochrone import own_chain, reached
from app.engine.features.table import CHTable, table_units
from app.engine.features.table import table as table_of
from app.engine.roads import RoadGraph
from app.engine.route.assemble import Assembler, join_route
from app.engine.route.legs import Legs, Search
from app.engine.route.space import search_space
from app.engine.search.algorithms import ALGORITHMS, Algorithm
from app.engine.search.cch import Metric
from app.engine.search.cch_query import CCHSearch, has_tree
from app.engine.search.ch import CHSearch
from app.engine.search.searches import CoreSearch, Searcher
from app.engine.search.via_alternatives import ViaSearch
from app.engine.snap.snapper import MIN_COMPONENT_SIZE, Candidates, Snapper, choose
from app.engine.types import ExcludeSet, HotPath, Phantom, Route, RouteOptions, RouteResult, SearchOptions, Table
from floor.format.arrays import CH_PREFIX
from floor.format.graph import Graph
from floor.format.units import COORD_SCALE

_MISSING = {
    "ch": "a contraction hierarchy: re-run `starroute preprocess` without --no-ch",
    "landmarks": "landmarks: re-run `starroute preprocess` with --landmarks N",
}

SearchFactory = Callable[[Graph], Search]


class Router:
    """Shared, immutable routing facade over one graph: snapping index, algorithm registry, per-thread queries.

    `max_snap_m` caps every snap radius (None = unlimited). `min_component_size`: smaller strongly connected
    components are tiny (see `app.engine.snap.snapper`). `algorithms` replaces the registry (name -> factory taking the
    graph), e.g. to plug in a reference search in tests.
    """

    def __init__(
        self,
        graph: Graph,
        max_snap_m: float | None = None,
        algorithms: Mapping[str, SearchFactory] | None = None,
        min_component_size: int = MIN_COMPONENT_SIZE,
    ) -> None:
        t0 = time.perf_counter()
        self.graph = freeze(graph)
        # the searches' graph: the edge-based one (turn costs, restrictions) where the graph has it
        self.search_graph = search_graph(self.graph)
        self.max_snap_m = max_snap_m
        self.chains = chain_index(graph, self.search_graph if self.search_graph is not self.graph else None)
        self.space = search_space(self.graph, self.search_graph, self.chains)
        self.hot_path = HotPath()  # the fused kernels on or off (`app.warmup`), shared with the routers derived
        self.snapper = Snapper(graph, self.chains, min_component_size, self.hot_path)
        self.legs = Legs(self.space, Assembler(graph), self.snapper, self.hot_path)
        self._missing: dict[str, str] = {}
        factories: dict[str, Algorithm | SearchFactory] = {}
        if algorithms is None:
            for name, spec in ALGORITHMS.items():
                if spec.needs == "ch" and not has_ch(graph) or spec.needs == "landmarks" and not has_landmarks(graph):
                    self._missing[name] = f"algorithm {name!r} needs a graph with {_MISSING[spec.needs]}"
                    continue
                factories[name] = spec
            self.tables = has_ch(graph)  # CH bucket tables (else one core search per source)
        else:
            factories.update(algorithms)
            self.tables = False
        self._factories = factories
        self.excludable = excludable(graph)
        # the hierarchies the CH searches and tables query; swapped whole by `set_metric`, never changed in place
        self.metric = Metric.stored(self.search_graph)
        self._local = threading.local()
        self.build_seconds = time.perf_counter() - t0

    # -- the metric ------------------------------------------------------------------------------------------------

    def set_metric(self, metric: Metric) -> None:
        """Serve `metric` (`app.engine.search.cch.Metric`, customized on this graph's search graph) from the next
        request
        on: one attribute store, so a request that has started finishes on the hierarchy it began with, and each
        thread's `Query` drops its search objects of the old metric when it next runs. The core searches (Dijkstra,
        A*, ALT, alternatives' and isochrones' searches) and snapping read the graph's own arc arrays: a metric
        that changes weights must come with a graph carrying them for those too."""
        assert metric.search is self.search_graph, "a metric of this router's search graph"
        self.metric = metric

    def derive(self, graph: Graph, closed: np.ndarray | None = None) -> Router:
        """A router over `graph`, this router's graph with other metric arrays (a custom model's,
        `app.engine.models.model_metric`): everything that does not depend on the weights is shared (chains, the
        snapping
        index, the registry, the exclude sets), the rest reads `graph` (searches, seeds, phantoms, legs). `closed`
        (bool per road arc): roads no point snaps onto. Its metric is the CCH's on first use (`set_metric` to give
        one); `restrict` says which algorithms it answers with. A few milliseconds: no index is rebuilt."""
        t0 = time.perf_counter()
        r = object.__new__(Router)
        r.graph = freeze(graph)
        r.search_graph = search_graph(r.graph)
        r.max_snap_m = self.max_snap_m
        r.chains = self.chains
        r.space = copy.copy(self.space)
        r.space.graph, r.space.search = r.graph, r.search_graph
        if r.space.edge_based:
            r.space.edges = r.space.edges.reweighted(r.graph, r.search_graph)  # type: ignore[attr-defined]
        r.hot_path = self.hot_path
        r.snapper = self.snapper.with_metric(r.graph, closed)
        r.legs = Legs(r.space, Assembler(r.graph), r.snapper, r.hot_path)
        r._missing = dict(self._missing)
        r._factories = dict(self._factories)
        r.tables = self.tables
        r.excludable = self.excludable
        r.metric = Metric(r.search_graph, None, None, None, customized=True, name="derived")
        r._local = threading.local()
        r.build_seconds = time.perf_counter() - t0
        return r

    def with_metric(self, graph: Graph) -> Router:
        """A router over `graph`: this router's build with another metric loaded whole (its stored hierarchy and
        landmark tables, `preprocessing.customize`), sharing everything that does not depend on the weights
        (`derive`); what a server's reload builds when only the metric changed. The algorithms are this router's
        that the new graph can answer."""
        r = self.derive(graph)
        r.metric = Metric.stored(r.search_graph)
        r.excludable = excludable(graph)  # a new metric's excluded sets are customized, not the stored hierarchies
        for name, spec in ALGORITHMS.items():
            if name in r._factories and (
                spec.needs == "ch" and not has_ch(graph) or spec.needs == "landmarks" and not has_landmarks(graph)
            ):
                del r._factories[name]
                r._missing[name] = f"algorithm {name!r} needs a graph with {_MISSING[spec.needs]}"
        r.tables = self.tables and has_ch(graph)
        return r

    def restrict(self, hierarchy: bool, landmarks: bool) -> None:
        """Drop the algorithms this (derived) router cannot answer exactly with: CH without a `hierarchy` customized
        on its weights (and the CH tables with it), ALT without valid `landmarks`."""
        factories = dict(self._factories)
        if not hierarchy and "ch" in factories:
            self._restricted = ("ch", factories.pop("ch"), self.tables)
            self._missing["ch"] = "the hierarchy is not customized for this custom model (yet): use alt or astar"
            self.tables = False
        if not landmarks and "alt" in factories:
            del factories["alt"]
            self._missing["alt"] = "this custom model makes some road faster: landmark bounds do not hold (no alt)"
        self._factories = factories

    def allow_hierarchy(self) -> None:
        """Answer with CH again (`restrict` took it away) once `set_metric` gave a hierarchy of this router's
        weights."""
        restricted = getattr(self, "_restricted", None)
        if restricted is not None:
            name, factory, tables = restricted
            self._factories = {name: factory, **self._factories}  # fastest first
            self._missing.pop(name, None)
            self.tables = tables

    # -- registry and metadata -------------------------------------------------------------------------------------

    @property
    def edges(self) -> Any:
        """The edge-based graph's `EdgeMap` (None on a node-based graph): for tests and diagnostics only."""
        return getattr(self.space, "edges", None)

    @property
    def algorithms(self) -> tuple[str, ...]:
        """Names of the algorithms this graph and build can answer with, fastest first."""
        return tuple(self._factories)

    @property
    def default_algorithm(self) -> str:
        """The algorithm to use when none is asked for: "ch" where available, else the first available one."""
        return "ch" if "ch" in self._factories else next(iter(self._factories), "ch")

    def factory(self, algorithm: str) -> Algorithm | SearchFactory:
        """The registry entry (or a plugged-in factory) of `algorithm`; `InvalidValue` for an unknown or unavailable
        name."""
        f = self._factories.get(algorithm)
        if f is None:
            why = self._missing.get(algorithm)
            if why is None:
                why = f"unknown algorithm {algorithm!r}: choose one of {', '.join(self.algorithms)}"
            raise InvalidValue(why)
        return f

    def exclude_set(self, classes: ExcludeSet | Iterable[str] | None) -> ExcludeSet | None:
        """The excludable set equal to `classes` (None for none; a resolved set as it is); `InvalidValue` for an
        unknown class or a combination the profile does not offer (OSRM's rule: exactly one of its `excludable`
        sets)."""
        if classes is None or isinstance(classes, ExcludeSet):
            return classes
        wanted = frozenset(classes)
        if not wanted:
            return None
        known = sorted({c for e in self.excludable for c in e.classes})
        unknown = sorted(wanted - set(known))
        if unknown:
            offer = ", ".join(known) if known else "none"
            raise InvalidValue(f"exclude: unknown class {unknown[0]!r} (this profile can exclude: {offer})")
        for e in self.excludable:
            if e.classes == wanted:
                return e
        sets = "; ".join("+".join(sorted(e.classes)) for e in self.excludable)
        raise InvalidValue(f"Exclude flag combination is not supported (this profile offers: {sets})")

    def info(self) -> dict[str, Any]:
        """Graph and index metadata for health endpoints."""
        g, mf = self.graph, self.graph.meta
        return {
            "profile": mf.profile,
            "nodes": g.num_nodes,
            "arcs": g.num_arcs,
            "chains": int(g.geom_first.shape[0] - 1),
            "bbox": list(mf.bbox) if mf.bbox is not None else None,
            "fingerprint": mf.fingerprint or None,
            "algorithms": list(self.algorithms),
            "has_ch": has_ch(g),
            "has_landmarks": has_landmarks(g),
            "snap_segments": self.snapper.num_segments,
            "snap_index_seconds": round(self.snapper.build_seconds, 3),
            "router_seconds": round(self.build_seconds, 3),
            "max_snap_m": self.max_snap_m,
        }

    def forbidden_arcs(self, areas: Any) -> np.ndarray:
        """int32 ids of the road arcs touching `areas` (`app.engine.features.areas.Areas`): what a request avoiding
        them may
        not use."""
        from app.engine.features.areas import forbidden_arcs

        return forbidden_arcs(areas, self.graph)

    def search_forbidden(self, road_arcs: np.ndarray | None) -> np.ndarray | None:
        """The search graph's arcs a request forbidding `road_arcs` may not take."""
        return self.space.forbidden(road_arcs)

    def check_outside(self, phantoms: Sequence[Phantom], forbidden: np.ndarray) -> None:
        """`InvalidValue` naming the first waypoint snapped onto a road inside an area to avoid."""
        bad = set(np.asarray(forbidden).tolist())
        for i, p in enumerate(phantoms):
            arcs = [a for a in (p.fwd_arc, p.bwd_arc) if a >= 0]
            if arcs and all(a in bad for a in arcs):
                raise InvalidValue(f"waypoint {i} is on a road inside an area to avoid")

    @property
    def roads(self) -> RoadGraph:
        """The road graph step building reads (names, modes, roundabouts, junction bearings), built on first use."""
        return derived(self, "roads", lambda: RoadGraph(self.graph, self.graph.meta.mode))

    def sample_points(self) -> tuple[tuple[float, float], tuple[float, float]] | None:
        """Two road points far apart in the largest component (example links, warm-up), in degrees; None when the
        graph has no node."""
        g = self.graph
        if g.num_nodes == 0:
            return None
        main = np.flatnonzero(np.asarray(g.node_component) == 0)
        lon = np.asarray(g.node_lon)[main] / COORD_SCALE
        lat = np.asarray(g.node_lat)[main] / COORD_SCALE
        a, b = int(np.argmin(lon + lat)), int(np.argmax(lon + lat))
        return (round(float(lon[a]), 5), round(float(lat[a]), 5)), (round(float(lon[b]), 5), round(float(lat[b]), 5))

    def node_lonlat(self, nodes: np.ndarray) -> np.ndarray:
        """float64 [k, 2] degrees of search nodes (traces): `SearchSpace.node_lonlat`."""
        return self.space.node_lonlat(nodes)

    # -- snapping --------------------------------------------------------------------------------------------------

    def _radius(self, radius_m: float | None) -> float | None:
        if self.max_snap_m is None:
            return radius_m
        if radius_m is None:
            return self.max_snap_m
        return min(float(radius_m), self.max_snap_m) if not math.isnan(float(radius_m)) else radius_m

    def snap(
        self,
        lon: float,
        lat: float,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
    ) -> Phantom:
        """Snap one coordinate (degrees) to its nearest road segment within `radius_m` (capped by `max_snap_m`).

        `bearing` = (degrees 0..360, tolerance 0..180) keeps segments travelled that way; see `Snapper.snap`. For the
        waypoints of one request use `snap_waypoints`, which applies the tiny-component rule across them.
        """
        return self.snapper.snap(lon, lat, self._radius(radius_m), bearing, exclude_mask)

    def candidates(
        self,
        lon: float,
        lat: float,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
        any_edge: bool = False,
    ) -> Candidates:
        """A coordinate's nearest segment and nearest big-component segment (`app.engine.snap.snapper.Candidates`);
        `any_edge`: OSRM's `snapping=any`."""
        return self.snapper.candidates(lon, lat, self._radius(radius_m), bearing, exclude_mask, any_edge)

    def snap_waypoints(
        self,
        points: Sequence[tuple[float, float]],
        radiuses: Sequence[float | None] | None = None,
        bearings: Sequence[tuple[float, float] | None] | None = None,
        exclude_mask: int = 0,
        approaches: Sequence[str | None] | None = None,
        any_edge: bool = False,
    ) -> list[Phantom]:
        """Snap the points of one request together (OSRM's rule, `app.engine.snap.snapper.choose`); roads of excluded
        classes (`exclude_mask`, `Router.exclude_set`) are no candidates, nor roads that refuse waypoints unless
        `any_edge` (OSRM's `snapping=any`). `approaches` (OSRM's `curb`, `opposite`,
        `unrestricted` per point) keep the direction of travel that has the point on its right (curb) or left side.

        `NoSegment` names the first point that found no road within its radius (and how far the nearest road is).
        """
        cands = []
        for i, (lon, lat) in enumerate(points):
            radius = radiuses[i] if radiuses is not None else None
            bearing = bearings[i] if bearings is not None else None
            try:
                cands.append(self.candidates(lon, lat, radius, bearing, exclude_mask, any_edge))
            except NoSegment as exc:
                err = NoSegment(f"waypoint {i}: {exc.message}")
                err.index = i
                raise err from None
        phantoms = choose(cands)
        if approaches is not None:
            sides = list(approaches) + [None] * (len(phantoms) - len(approaches))
            phantoms = [self.space.approach(p, a) for p, a in zip(phantoms, sides, strict=True)]
        return phantoms

    def nearest(
        self,
        lon: float,
        lat: float,
        number: int = 1,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
    ) -> list[Phantom]:
        """Up to `number` phantoms on distinct chains, nearest first."""
        return self.snapper.nearest(lon, lat, number, self._radius(radius_m), bearing, exclude_mask)

    # -- queries ---------------------------------------------------------------------------------------------------

    def forget_thread_state(self) -> None:
        """Drop every thread's query object (their search labels, heaps and bounds: tens of MB on a large graph),
        so that a process about to fork workers does not hand them pages its own warm-up wrote and nobody reads."""
        self._local = threading.local()

    def query(self) -> Query:
        """This thread's query object (created on first use, then reused)."""
        q = getattr(self._local, "query", None)
        if q is None:
            q = Query(self)
            self._local.query = q
        return q

    def route(self, phantoms: Sequence[Phantom], algorithm: str = "ch") -> Route:
        """Shorthand for `self.query().route(...)`."""
        return self.query().route(phantoms, algorithm)

    def table(self, sources: Sequence[Phantom], destinations: Sequence[Phantom], exclude: Iterable[str] = ()) -> Table:
        """Shorthand for `self.query().table(...)`."""
        return self.query().table(sources, destinations, exclude)

    def warmup(self, algorithms: Sequence[str] | None = None) -> None:
        """Run a few tiny queries per algorithm (all available, or `algorithms`) and a table, so numba compiles or
        loads their kernels before the first request."""
        g = self.graph
        arcs = np.flatnonzero(self.snapper.big_chain[np.asarray(g.arc_geom) >> 1])
        if len(arcs) == 0:
            return
        a, b = int(arcs[0]), int(arcs[-1])
        ends = [
            (g.node_lon[g.arc_tail[a]], g.node_lat[g.arc_tail[a]]),
            (g.node_lon[g.arc_head[b]], g.node_lat[g.arc_head[b]]),
        ]
        phs = [self.snap(float(x) / COORD_SCALE, float(y) / COORD_SCALE) for x, y in ends]
        # points mid-chain too, so partial pieces are exercised, and a leg between two such points (a hierarchy's
        # leg in one kernel call, `app.engine.route.ch_leg`, takes phantoms inside a chain; ends are often junctions)
        gf = g.geom_first
        for arc in (a, b):
            c = int(g.arc_geom[arc]) >> 1
            mid = (int(gf[c]) + int(gf[c + 1]) - 1) // 2
            phs.append(self.snap(float(g.geom_lon[mid]) / COORD_SCALE + 1e-6, float(g.geom_lat[mid]) / COORD_SCALE))
        q = self.query()
        for name in self.algorithms if algorithms is None else algorithms:
            for x, y in ((0, 1), (1, 0), (2, 1), (0, 2), (2, 3), (2, 2)):
                try:
                    q.route([phs[x], phs[y]], name)
                except NoRoute:
                    pass
        q.table(phs, phs)


class Query:
    """One thread's search state: search objects per algorithm and hierarchy, created on first use and reused."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self._searches: dict[tuple[str, str | None, int], Search] = {}
        self._tables: dict[int, CHTable] = {}
        self._vias: dict[int, ViaSearch | None] = {}
        self._searchers: dict[str, Searcher] = {}
        self._metric = router.metric  # the metric the search objects above were made for

    def _current(self) -> Metric:
        """The router's metric now; the CH search and table objects of an older one are dropped."""
        metric = self.router.metric
        if metric is not self._metric:
            self._searches = {k: v for k, v in self._searches.items() if not isinstance(v, CHSearch)}
            self._tables = {}
            self._vias = {}
            self._metric = metric
        return metric

    @property
    def searcher(self) -> Searcher:
        """This thread's arrays for the core searches (shared by every core algorithm and the table fallback)."""
        return self.searcher_on("weight")

    def searcher_on(self, metric: str) -> Searcher:
        """This thread's core searcher on the weight, the travel time ("duration") or the distance."""
        s = self._searchers.get(metric)
        if s is None:
            s = self._searchers[metric] = Searcher(self.router.search_graph, metric=metric)
        return s

    def _search(self, algorithm: str, exclude: ExcludeSet | None = None) -> Search:
        """This thread's search object for `algorithm` (on the hierarchy without `exclude` for CH)."""
        metric = self._current()
        prefix = CH_PREFIX if exclude is None else exclude.prefix
        mask = 0 if exclude is None else exclude.mask
        key = (algorithm, prefix, mask)
        s = self._searches.get(key)
        if s is None:
            f = self.router.factory(algorithm)
            if not isinstance(f, Algorithm):
                s = f(self.router.search_graph)
            elif f.engine == "ch":
                hierarchy, ch_prefix = metric.hierarchy(exclude)
                if ch_prefix is None:
                    raise InvalidValue("this graph has no hierarchy without the excluded classes: use algorithm alt")
                tree = has_tree(hierarchy)  # a customized CCH: the elimination-tree walk, no heap
                s = (CCHSearch if tree else CHSearch)(hierarchy, ch_prefix, mask)
            else:
                s = CoreSearch(self.router.search_graph, f, searcher=self.searcher)
            self._searches[key] = s
        return s

    def route(self, phantoms: Sequence[Phantom], algorithm: str = "ch", options: RouteOptions | None = None) -> Route:
        """The route through `phantoms` in order (one leg per consecutive pair); `NoRoute` when a leg is impossible.

        `options` (`app.engine.types.RouteOptions`): excluded classes, forbidden arcs, epsilon, trace; its algorithm
        field is not used here (`algorithm` is).
        """
        return self.routes(phantoms, RouteOptions() if options is None else options, algorithm).best

    def routes(self, phantoms: Sequence[Phantom], options: RouteOptions, algorithm: str | None = None) -> RouteResult:
        """The best route through `phantoms` with `options` (and its alternatives when asked), the search traces
        when asked."""
        if len(phantoms) < 2:
            raise InvalidValue(f"a route needs at least 2 waypoints, got {len(phantoms)}")
        r = self.router
        algorithm = algorithm or options.algorithm
        spec = r.factory(algorithm)
        exclude = r.exclude_set(options.exclude)
        if isinstance(spec, Algorithm) and options.epsilon != 1.0 and not spec.epsilon:
            raise InvalidValue(f"epsilon applies to astar and bidirectional-astar, not {algorithm}")
        search_opts = SearchOptions(
            exclude_flags=exclude.mask if exclude else 0,
            forbidden=r.space.forbidden(options.forbidden),
            epsilon=options.epsilon,
            trace=options.trace,
            trace_limit=options.trace_limit,
        )
        search = self._search(algorithm, exclude)
        check = getattr(search, "check", None)
        if check is not None:  # refused before any leg: a leg along one chain may need no search at all
            check(search_opts)
        straight = options.continue_straight
        if straight is None:
            straight = r.graph.meta.continue_straight
        legs, traces = r.legs.route_legs(search, algorithm, phantoms, search_opts, straight)
        best = join_route(legs, algorithm)
        routes = [best]
        complete = True
        if options.alternatives > 0 and len(phantoms) == 2 and r.legs.direct(*phantoms) is None:
            via = self._via(exclude) if search_opts.forbidden is None else None
            routes += alternative_routes(
                r.legs, self.searcher, phantoms[0], phantoms[1], best, options.alternatives, search_opts, via,
                plateaus=options.plateaus,
            )  # fmt: skip
            complete = options.plateaus or len(routes) > options.alternatives
        return RouteResult(routes, traces, options.epsilon, complete)

    def isochrone(
        self,
        phantom: Phantom,
        limits: Sequence[int],
        metric: str = "duration",
        reverse: bool = False,
        exclude: ExcludeSet | Iterable[str] | None = None,
    ) -> tuple[list[np.ndarray], int]:
        """The network reached from (or, with `reverse`, reaching) `phantom` within each limit (ds of travel time, or
        dm of distance with `metric` "distance"): `app.engine.features.isochrone.reached`."""
        r = self.router
        ex = r.exclude_set(exclude)
        # travel time: the weight itself, or (routability) the durations on a searcher of their own
        timed = metric == "duration" and r.graph.meta.weight_name != "duration"
        searcher = self.searcher_on("weight" if metric == "duration" and not timed else metric)
        return reached(r.space, searcher, phantom, limits, metric, timed, reverse, ex.mask if ex else 0)

    def _own_chain(self, ph: Phantom, reverse: bool, metric: str, exclude_mask: int) -> list[tuple[np.ndarray, int]]:
        """The snapped point's own chain per usable direction (`app.engine.features.isochrone.own_chain`)."""
        return own_chain(self.router.graph, ph, reverse, metric, exclude_mask)

    def table(
        self,
        sources: Sequence[Phantom],
        destinations: Sequence[Phantom],
        exclude: ExcludeSet | Iterable[str] | None = None,
        reuse_buckets: bool = False,
    ) -> Table:
        """Durations (s) and distances (m) for every source x destination; NaN where unreachable
        (`app.engine.features.table.table`: the CH bucket table on the hierarchy without `exclude`, else core
        searches). `reuse_buckets`: this thread's table keeps the destinations' buckets for the next table with the
        same destinations (a matrix's blocks)."""
        ch_table, mask = self._table_search(exclude)
        return table_of(self.router.legs, ch_table, self.searcher, sources, destinations, mask, reuse_buckets)

    def table_units(
        self,
        sources: Sequence[Phantom],
        destinations: Sequence[Phantom],
        exclude: ExcludeSet | Iterable[str] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The same table as int64 weights (ds), distances (dm) and durations (ds), INF_WEIGHT where unreachable
        (`app.engine.features.table.table_units`)."""
        ch_table, mask = self._table_search(exclude)
        return table_units(self.router.legs, ch_table, self.searcher, sources, destinations, mask)

    def _via(self, exclude: ExcludeSet | None) -> ViaSearch | None:
        """This thread's via-node alternatives on the hierarchy without `exclude` (None: no such hierarchy)."""
        r = self.router
        metric = self._current()
        mask = exclude.mask if exclude else 0
        if mask not in self._vias:
            hierarchy, prefix = metric.hierarchy(exclude) if r.tables else (None, None)
            self._vias[mask] = None if prefix is None else ViaSearch(hierarchy, r.search_graph, prefix, mask)
        return self._vias[mask]

    def _table_search(self, exclude: ExcludeSet | Iterable[str] | None) -> tuple[CHTable | None, int]:
        """This thread's CH table object on the hierarchy without `exclude` (None: core searches), and the
        exclude mask."""
        r = self.router
        ex = r.exclude_set(exclude)
        metric = self._current()
        mask = ex.mask if ex else 0
        ch_table = self._tables.get(mask)
        if ch_table is None and r.tables:
            hierarchy, prefix = metric.hierarchy(ex)
            if prefix is not None:
                ch_table = self._tables[mask] = CHTable(hierarchy, prefix)
        return ch_table, mask

"""`starroute.load(graph_dir)` -> `Graph`: routes, tables, nearest roads and isochrones in this process.

A `Graph` is a shell over the engine's one door (`app.engine.facade.Engine`), like the HTTP API: it builds the same
typed requests the native API builds for the same input (the native snapping radius, the same limits) and turns the
engine's answers into `starroute.results` values, so it answers exactly what `GET /route`, `POST /table`,
`GET /nearest` and `GET /isochrone` answer. One difference, on purpose: tables have no size limit (the HTTP server
caps them at `max_table_size`); big ones are computed in blocks, here or on Dask (`scheduler=`).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from app.engine.errors import InvalidValue, NoSegment
from app.engine.facade import (
    Engine,
    IsochroneRequest,
    Limits,
    NearestRequest,
    RouteRequest,
    TableRequest,
    Waypoints,
)
from app.engine.types import Phantom
from app.settings import Settings
from starroute.blocks import AccessSpec
from starroute.matrix import BLOCK, run_access, run_table
from starroute.points import Point, Points, as_lonlat, as_point, pairs
from starroute.progress import Bar
from starroute.results import Accessibility, Isochrone, Matrix, Route, Waypoint
from starroute.sinks import DenseSink

_DEFAULTS = Settings.model_fields
SNAP_RADIUS_M: float = _DEFAULTS["snap_radius_m"].default  # the native API's: a point farther from every road fails
MAX_POLYGONS: int = _DEFAULTS["max_polygons"].default
MAX_VERTICES: int = _DEFAULTS["max_vertices"].default
LIMITS = Limits(max_table_size=sys.maxsize)  # the HTTP server's limits, but tables of any size (in blocks)

Exclude = str | Sequence[str] | None


def _exclude(exclude: Exclude) -> list[str]:
    """`"motorway"`, `"toll,motorway"` or `["toll"]` -> the class list the engine validates."""
    if exclude is None:
        return []
    if isinstance(exclude, str):
        return [c for c in exclude.split(",") if c]
    return [str(c) for c in exclude]


def _values(given: float | Sequence[float], what: str, count: int, top: float) -> list[float]:
    """The native API's check of isochrone limits: 1 to `count` values, each > 0 and at most `top`; sorted, unique."""
    values = [float(given)] if isinstance(given, (int, float)) else [float(v) for v in given]
    if not values or len(values) > count:
        raise InvalidValue(f"{what}: give 1 to {count} values")
    if any(not math.isfinite(v) or v <= 0 or v > top for v in values):
        raise InvalidValue(f"{what}: every value must be > 0 and at most {top:g}")
    return sorted(set(values))


class Graph:
    """A routing graph loaded for this process (memory-mapped, read-only; safe to share between threads).

    >>> graph = starroute.load(GRAPH_DIR)
    >>> graph.profile, "ch" in graph.algorithms
    ('car', True)
    """

    def __init__(self, engine: Engine, path: str | os.PathLike[str]) -> None:
        self.engine = engine
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"<starroute.Graph {self.path} profile={self.profile}>"

    # -- what the graph is -------------------------------------------------------------------------------------------
    @property
    def profile(self) -> str:
        return self.engine.meta.profile

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The search algorithms this graph answers with (`route(algorithm=...)`)."""
        return self.engine.algorithms

    @property
    def excludable(self) -> list[list[str]]:
        """The road class sets a request may exclude (`exclude=`), e.g. `[["motorway"], ["toll"], ["ferry"]]`."""
        return [sorted(e.classes) for e in self.engine.excludable]

    @property
    def bbox(self) -> tuple[float, float, float, float] | None:
        """(min lon, min lat, max lon, max lat) of the graph's nodes."""
        return self.engine.meta.bbox

    # -- requests ----------------------------------------------------------------------------------------------------
    def _waypoints(self, points: list[tuple[float, float]], radius_m: float | None = None) -> Waypoints:
        radiuses = None if radius_m is None else [radius_m] * len(points)
        return Waypoints(points, radiuses, default_radius_m=SNAP_RADIUS_M, detail=True)

    def route(
        self,
        origin: Point,
        destination: Point,
        *,
        via: Points = (),
        algorithm: str | None = None,
        exclude: Exclude = None,
        alternatives: int = 0,
        avoid: Mapping[str, Any] | str | None = None,
        radius_m: float | None = None,
        epsilon: float = 1.0,
        custom_model: Mapping[str, Any] | str | None = None,
        depart_at: str | None = None,
        arrive_by: str | None = None,
    ) -> Route:
        """The fastest route from `origin` through each `via` point to `destination`, points as (lon, lat).

        `algorithm`: one of `algorithms` (None: "ch", or "alt" when avoiding areas); `exclude`: road classes not to
        use ("motorway"); `alternatives`: up to this many more routes (no via points); `avoid`: GeoJSON polygons
        not to enter; `radius_m`: snapping radius of every point (default 1000 m); `epsilon` > 1: weighted A*;
        `custom_model`: GraphHopper's custom model (a dict or its JSON), routed on its weights. `depart_at` /
        `arrive_by`: ISO 8601 or "now", the fastest route for that departure on the graph's time profiles (the
        latest departure arriving in time), its `departure` and `arrival` set.

        >>> r = graph.route((7.4197, 43.7311), (7.4246, 43.7384))
        >>> round(r.distance_m), round(r.duration_s), r.coordinates.shape[1], len(r.legs)
        (1806, 207, 2, 1)
        """
        points = [as_point(origin, "origin")]
        if len(via):
            points += pairs(as_lonlat(via, "via"))
        points.append(as_point(destination, "destination"))
        if alternatives and len(points) != 2:
            raise InvalidValue("alternatives are looked for between two points only: drop the via points")
        areas = None
        if avoid is not None:
            from app.engine.features.areas import parse_areas

            areas = parse_areas(avoid, max_vertices=MAX_VERTICES, max_polygons=MAX_POLYGONS)
        model = None if custom_model is None else self.engine.parse_model(custom_model)
        req = RouteRequest(
            self._waypoints(points, radius_m), algorithm, _exclude(exclude), areas, alternatives, False, epsilon,
            custom_model=model, depart_at=depart_at, arrive_by=arrive_by,
        )  # fmt: skip
        return Route.of(self.engine.route(req))

    def _table_request(
        self,
        sources: Points,
        destinations: Points | None,
        exclude: Exclude,
        model: Any = None,
        radius_m: float | None = None,
    ) -> TableRequest:
        """Sources and destinations as one `POST /table` request (on custom `model`'s metric, parsed; every point
        snapped within `radius_m`, default the native API's)."""
        src = as_lonlat(sources, "sources")
        points = pairs(src)
        dst_idx = None
        if destinations is not None:
            dst = as_lonlat(destinations, "destinations")
            if dst.shape[0] == 0:
                raise InvalidValue("destinations must not be empty")
            dst_idx = list(range(len(points), len(points) + dst.shape[0]))
            points += pairs(dst)
        if src.shape[0] == 0:
            raise InvalidValue("sources must not be empty")
        wps = self._waypoints(points, radius_m)
        return TableRequest(wps, list(range(src.shape[0])), dst_idx, _exclude(exclude), custom_model=model)

    def _snap_table(
        self, sources: Points, destinations: Points | None, exclude: Exclude, model: Any = None
    ) -> tuple[list[Phantom], list[Phantom], tuple[str, ...]]:
        """Sources and destinations snapped together (as one `POST /table`; on custom `model`'s metric, parsed), and
        the exclude set's classes."""
        s, d, ex = self.engine.resolve_table(self._table_request(sources, destinations, exclude, model))
        return s, d, tuple(sorted(ex.classes)) if ex is not None else ()

    def table(
        self,
        sources: Points,
        destinations: Points | None = None,
        *,
        exclude: Exclude = None,
        scheduler: Any = None,
        workers: int = 2,
        block: tuple[int, int] = BLOCK,
        progress: bool = False,
        custom_model: Mapping[str, Any] | str | None = None,
        depart_at: str | None = None,
    ) -> Matrix:
        """Durations (s) and distances (m) from every source to every destination (default: the sources), NaN
        where unreachable, as `Matrix.durations_s` / `.distances_m` [N, M] float64 arrays.

        Computed in blocks of `block` cells: here (`scheduler=None`), or on Dask: a `distributed.Client`, a
        scheduler address "tcp://HOST:PORT" (every worker must read this graph directory at the same path), or
        "local" for a local cluster of `workers` threads in this process, answering with this graph's engine.
        `progress`: a progress bar on stderr. `custom_model`: GraphHopper's custom model (a dict or its JSON), every
        cell on its weights (each Dask worker builds it once).
        `depart_at` (ISO 8601 or "now"): time-dependent durations for that departure, computed here in one call.

        >>> m = graph.table([(7.4197, 43.7311), (7.4246, 43.7384)])
        >>> m.durations_s.round(1).tolist()
        [[0.0, 207.0], [236.2, 0.0]]
        """
        model = None if custom_model is None else self.engine.parse_model(custom_model)
        if depart_at is not None:
            req = replace(self._table_request(sources, destinations, exclude, model), depart_at=depart_at)
            s, d, ex_set = self.engine.resolve_table(req)
            tbl = self.engine.table(s, d, ex_set, req.model, self.engine.when(req))
            return Matrix(tbl.durations_s, tbl.distances_m, [Waypoint.of(p) for p in s], [Waypoint.of(p) for p in d])
        src, dst, ex = self._snap_table(sources, destinations, exclude, model)
        sink = DenseSink(len(src), len(dst))
        self._run(
            lambda bar: run_table(
                self.engine, self.path, src, dst, sink, ex, block=block, scheduler=scheduler, workers=workers,
                progress=bar, model=None if model is None else model.source,
            ),
            len(src) * len(dst),
            progress,
        )  # fmt: skip
        return Matrix(sink.durations, sink.distances, [Waypoint.of(p) for p in src], [Waypoint.of(p) for p in dst])

    def accessibility(
        self,
        sources: Points,
        destinations: Points,
        *,
        minutes: float | Sequence[float],
        weights: Sequence[float] | np.ndarray | str | None = None,
        k: int = 0,
        exclude: Exclude = None,
        scheduler: Any = None,
        workers: int = 2,
        block: tuple[int, int] = BLOCK,
        progress: bool = False,
        custom_model: Mapping[str, Any] | str | None = None,
    ) -> Accessibility:
        """For every source, how many destinations (or, with `weights` per destination, their weighted sum; a
        column name of a `destinations` frame works too) are reachable within each of `minutes`, and its `k`
        nearest destinations by travel time. The same blocks as `table`, reduced where they are computed, so the
        full matrix is never held; `custom_model` as for `table`.

        >>> a = graph.accessibility([(7.4197, 43.7311)], [(7.4246, 43.7384), (7.4200, 43.7350)], minutes=[1, 5], k=1)
        >>> a.reached.tolist(), a.nearest.tolist()
        ([[0.0, 2.0]], [[1]])
        """
        limits = [float(minutes)] if isinstance(minutes, (int, float)) else [float(m) for m in minutes]
        if not limits or any(not math.isfinite(m) or m <= 0 for m in limits):
            raise InvalidValue("minutes: give one or more limits, each > 0")
        if k < 0:
            raise InvalidValue("k must be 0 or more")
        w = None
        if weights is not None:
            column = destinations[weights] if isinstance(weights, str) else weights  # type: ignore[call-overload]
            w = np.asarray(column, dtype=np.float64)
        model = None if custom_model is None else self.engine.parse_model(custom_model)
        src, dst, ex = self._snap_table(sources, destinations, exclude, model)
        if w is not None and w.shape != (len(dst),):
            raise InvalidValue(f"weights has {w.size} values for {len(dst)} destinations")
        spec = AccessSpec(tuple(m * 60.0 for m in limits), k)
        reached, near, near_s, _ = self._run(
            lambda bar: run_access(
                self.engine, self.path, src, dst, spec, w, ex, block=block, scheduler=scheduler, workers=workers,
                progress=bar, model=None if model is None else model.source,
            ),
            len(src) * len(dst),
            progress,
        )  # fmt: skip
        return Accessibility(tuple(limits), reached, near, near_s, [Waypoint.of(p) for p in src])

    @staticmethod
    def _run(job: Any, cells: int, progress: bool) -> Any:
        if not progress:
            return job(None)
        with Bar(cells) as bar:
            return job(bar)

    def nearest(
        self, points: Points, *, number: int = 1, radius_m: float | None = None, exclude: Exclude = None
    ) -> list[list[Waypoint]]:
        """For each point, the `number` nearest points on distinct road segments, nearest first, within `radius_m`
        (default 1000 m); `NoSegment` names the first point with none.

        >>> [w.location for w in graph.nearest((7.4197, 43.7311))[0]]  # doctest: +ELLIPSIS
        [(7.419..., 43.731...)]
        """
        if number < 1:
            raise InvalidValue("number must be at least 1")
        out = []
        classes = _exclude(exclude)
        radius = SNAP_RADIUS_M if radius_m is None else radius_m
        for i, (lon, lat) in enumerate(pairs(as_lonlat(points))):
            try:
                found = self.engine.nearest(NearestRequest(lon, lat, number, radius, classes))
            except NoSegment:
                raise NoSegment(f"Could not find a matching segment for coordinate {i}") from None
            out.append([Waypoint.of(p) for p in found])
        return out

    def isochrone(
        self,
        point: Point,
        minutes: float | Sequence[float] | None = None,
        *,
        distance_m: float | Sequence[float] | None = None,
        reverse: bool = False,
        exclude: Exclude = None,
        buffer_m: float = 50.0,
        custom_model: Mapping[str, Any] | str | None = None,
        depart_at: str | None = None,
    ) -> Isochrone:
        """What is reached from `point` within each of `minutes` (or `distance_m` metres instead); with `reverse`,
        who reaches it. One band per limit, largest first, polygons around the reached roads (`buffer_m`, 5-500);
        `custom_model`: on a custom model's travel times; `depart_at`: on the travel times of that departure.

        >>> iso = graph.isochrone((7.4197, 43.7311), minutes=[2, 4])
        >>> [b.value for b in iso.bands], iso.geojson["features"][0]["geometry"]["type"] in ("Polygon", "MultiPolygon")
        ([4.0, 2.0], True)
        """
        lon, lat = as_point(point)
        if (minutes is None) == (distance_m is None):
            raise InvalidValue("give either minutes or distance_m")
        if not (math.isfinite(buffer_m) and 5 <= buffer_m <= 500):
            raise InvalidValue("buffer_m must be between 5 and 500")
        lim = self.engine.limits
        if minutes is not None:
            values = _values(minutes, "minutes", lim.max_contours, lim.max_minutes)
            metric, limits = "duration", [v * 60.0 for v in values]
        else:
            assert distance_m is not None
            values = _values(distance_m, "distance_m", lim.max_contours, lim.max_distance_m)
            metric, limits = "distance", values
        model = None if custom_model is None else self.engine.parse_model(custom_model)
        req = IsochroneRequest(
            self._waypoints([(lon, lat)]),
            limits,
            metric,
            reverse,
            _exclude(exclude),
            buffer_m,
            model,
            depart_at=depart_at,
        )
        phantom, ex = self.engine.resolve_isochrone(req)
        return Isochrone.of(self.engine.isochrone(req, phantom, ex), values, metric, reverse, buffer_m)


def load(graph_dir: str | os.PathLike[str], *, max_snap_m: float | None = None) -> Graph:
    """Memory-map the graph directory `graph_dir` (built by `starroute.preprocess`); `GraphError` when it is
    missing, corrupt or of another format version. `max_snap_m`: snapping never looks farther (None: unlimited)."""
    from app.engine.data import load as load_graph

    return Graph(Engine(load_graph(graph_dir), LIMITS, max_snap_m=max_snap_m), graph_dir)

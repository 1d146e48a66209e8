"""A custom model's metric: its weights and durations over a graph, the router that answers on them, and the cache.

GraphHopper's formula (`CustomWeighting`), in the graph's units. Per road arc, its own speed is
`v0 = arc_dist / arc_duration` (km/h; node penalties inside the arc included); the model's speed rules give `v`
(capped at the graph's top speed `max(v0)`, GraphHopper's "speed capped at the profile's maximum"), its priority
rules `p` in 0..1, and with the speed ratio `r = v0 / v`:

    duration = max(1, round(arc_duration * r))                                  ds
    weight   = max(1, round(min(arc_weight * r / p, arc_weight * r + 1e6)       ds (GraphHopper's 28 h cap)
                            + arc_dist * distance_influence / 1000))            (dm x s/km -> ds)

`p == 0` or `v == 0` closes the arc: it weighs `CLOSED_DS` as a road a speed file closed (and such a road stays
closed), which no hierarchy holds, no snapped point lies on, and no answer crosses ("no route"). An arc the model
leaves alone keeps its weight exactly. On an edge-based graph a search arc weighs its turn plus its head arc (the
turns are the profile's).

The metric is answered by a `Router` over the graph with these arrays in place of the preprocessed ones (a shallow
view: the other arrays, the chains, the snapping index and the registry are shared), and one of three methods:
- **ch-customized**: the customizable hierarchy customized on the model's weights, when the graph has one and at most
  `cch_max_arcs` search arcs (0.5-1.1 s on Porto's 277 k, in the background); CH queries from then on;
- **alt**: when every search arc weighs at least its preprocessed weight (checked on the arrays), the landmark tables
  stay lower bounds (GraphHopper's rule for query models): bidirectional ALT;
- **bidirectional-astar**: otherwise, with the great-circle bound's top speed measured again on the model's arcs.
Each is exact on the model's metric. Built metrics are kept per model key in a bounded LRU (`ModelCache`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from app.engine.data import freeze, is_edge_based
from app.engine.errors import InvalidValue
from app.engine.geo import node_geo
from app.engine.models.custom_model import ArcContext, CustomModel, closer, evaluate
from app.engine.search.cch import Metric, closed_arcs, customize, has_cch
from floor.format.graph import Graph
from floor.format.units import CLOSED_DS

if TYPE_CHECKING:
    from app.engine.router import Router

log = logging.getLogger("starroute")
PRIORITY_CAP_DS = 1_000_000  # GraphHopper caps a priority's weight increase at 100,000 s
CCH_MAX_ARCS = 1_000_000  # customize the hierarchy for a model up to this many search arcs (see DESIGN.md)
CACHE_SIZE = 8
_SEARCH_CAP = CLOSED_DS + CLOSED_DS // 4  # a search arc's cap (turn + closed arc), as `preprocessing.metric`


@dataclass
class ModelWeights:
    """A model's arrays over one graph: road arcs' weight and duration (ds, int32), and on an edge-based graph the
    search arcs' (`eb_*`); which road arcs it closes; whether no search arc got lighter than preprocessed."""

    road: dict[str, np.ndarray]
    closed: np.ndarray  # bool per road arc
    slower_only: bool
    seconds: dict[str, float] = field(default_factory=dict)


def model_weights(model: CustomModel, graph: Graph, area_arcs: Any) -> ModelWeights:
    """The model's weights and durations over `graph` (the module docstring's formula), vectorised over all arcs.
    `area_arcs(feature) -> int32 road arcs` gives the arcs meeting one of the model's areas."""
    t0 = time.perf_counter()
    model.check_graph(graph.arrays)
    n = graph.num_arcs
    w0 = np.asarray(graph.arc_weight, dtype=np.float64)
    d0 = np.asarray(graph.arc_duration, dtype=np.float64)
    dist = np.asarray(graph.arc_dist, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        v0 = np.where(dist > 0, dist / np.maximum(d0, 1.0) * 3.6, 1e-9)  # dm/ds = m/s
    vtop = float(v0.max()) if n else 1.0

    def area(fid: str) -> np.ndarray:
        mask = np.zeros(n, dtype=bool)
        mask[area_arcs(model.areas[fid])] = True
        return mask

    ctx = ArcContext(graph.arrays, n, area)
    speed, priority = evaluate(model, ctx, v0)
    t1 = time.perf_counter()
    speed = np.minimum(speed, vtop)
    closed = (priority <= 0) | (speed <= 0) | (w0 >= CLOSED_DS)  # a road a speed file closed stays closed
    if n and bool(closed.all()):  # else every request would fail far from its cause ("no road segment near ...")
        raise InvalidValue(
            f"every road of this graph ({n:,} road arcs) is closed by {closer(model)}: nothing is left to route on"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(closed, 1.0, v0 / np.where(closed, 1.0, speed))
        pr = np.where(closed, 1.0, priority)
        secs = w0 * ratio
        weight = np.minimum(secs / pr, secs + PRIORITY_CAP_DS) + dist * model.distance_influence / 1000.0
    top = CLOSED_DS - 1
    arc_w = np.where(closed, CLOSED_DS, np.clip(np.round(weight), 1, top)).astype(np.int32)
    arc_d = np.where(closed, CLOSED_DS, np.clip(np.round(d0 * ratio), 1, top)).astype(np.int32)
    unchanged = (ratio == 1.0) & (pr == 1.0) & (model.distance_influence == 0) & ~closed
    arc_w[unchanged] = np.asarray(graph.arc_weight)[unchanged]  # an arc the model leaves alone keeps its weight
    arc_d[unchanged] = np.asarray(graph.arc_duration)[unchanged]
    road = {"arc_weight": arc_w, "arc_duration": arc_d}
    if is_edge_based(graph):
        a = graph.arrays
        onto = np.asarray(a["eb_node_arc"], dtype=np.int64)[np.asarray(a["eb_arc_head"], dtype=np.int64)]
        eb_w = np.minimum(np.asarray(a["eb_arc_turn"], dtype=np.int64) + arc_w[onto], _SEARCH_CAP).astype(np.int32)
        eb_d = np.minimum(np.asarray(a["eb_arc_turn_duration"], dtype=np.int64) + arc_d[onto], _SEARCH_CAP)
        road["eb_arc_weight"] = eb_w
        road["eb_arc_duration"] = eb_d.astype(np.int32)
        if closed.any():  # distance searches (isochrones by distance) do not cross a closed road either
            eb_dist = np.asarray(a["eb_arc_dist"])
            road["eb_arc_dist"] = np.where(closed[onto], CLOSED_DS, eb_dist).astype(eb_dist.dtype)
        slower = bool(np.all(eb_w >= np.asarray(a["eb_arc_weight"])))
    else:
        slower = bool(np.all(arc_w >= np.asarray(graph.arc_weight)))
    return ModelWeights(road, closed, slower, {"evaluate": t1 - t0, "weights": time.perf_counter() - t1})


def model_graph(graph: Graph, weights: ModelWeights, keep_landmarks: bool) -> Graph:
    """`graph` with the model's metric arrays in place of its own (every other array shared, nothing copied), without
    the stored hierarchies (built on the preprocessed weights; the CCH structure stays) and, unless
    `keep_landmarks`, without the landmark tables; its top speed measured on the model's arcs."""
    arrays = {
        k: v
        for k, v in graph.arrays.items()
        if not (k.startswith("ch_") or k.startswith("chx") or (k.startswith("lm_") and not keep_landmarks))
    }
    arrays.update(weights.road)
    manifest = dict(graph.manifest)
    w = weights.road["arc_weight"].astype(np.float64)
    open_ = ~weights.closed
    top = float(np.max(np.asarray(graph.arc_dist)[open_] / w[open_])) if open_.any() else 1.0  # dm/ds = m/s
    manifest["max_speed_mps"] = max(top, 0.1)
    manifest["excludable"] = [dict(e, prefix=None) for e in manifest.get("excludable") or []]
    return freeze(Graph(graph.path, manifest, arrays, graph.files))


@dataclass
class ModelView:
    """One model over one graph: the router answering on its metric, the method it runs by default, what it cost."""

    key: str
    router: Router
    method: str  # "ch-customized" | "alt" | "bidirectional-astar"
    algorithm: str  # the registry algorithm that method is
    slower_only: bool
    closed_arcs: int
    seconds: dict[str, float]
    uses: int = 0
    customizable: bool = False
    pending: Future[None] | None = None

    def customize(self) -> None:
        """Customize the hierarchy on the model's weights and answer with CH from then on (one attribute store
        each: a request already running finishes with the method it started with)."""
        t0 = time.perf_counter()
        r = self.router
        search = r.search_graph
        hierarchy = customize(search, forbidden=closed_arcs(search.arc_weight))  # no lock held meanwhile
        r.set_metric(Metric.of_hierarchy(search, hierarchy, name=f"model {self.key}"))
        r.allow_hierarchy()
        self.seconds["customize"] = time.perf_counter() - t0
        self.method, self.algorithm = "ch-customized", "ch"

    def info(self, cached: bool) -> dict[str, Any]:
        """What an answer says about the model: its key, the method, whether it was built for this request, the
        time its build took (ms per step), the road arcs it closes."""
        return {
            "key": self.key,
            "method": self.method,
            "cached": cached,
            "closed_arcs": self.closed_arcs,
            "slower_only": self.slower_only,
            "build_ms": {k: round(v * 1000, 1) for k, v in self.seconds.items()},
        }


def build_view(
    base: Router, model: CustomModel, cch_max_arcs: int = CCH_MAX_ARCS, background: bool = False
) -> ModelView:
    """The `ModelView` of `model` over `base`'s graph (module docstring: the weights, the view, the method). The
    hierarchy is customized now, or with `background` left to `ModelView.customize` (the view answers with ALT or
    A* until then)."""
    from app.engine.features.areas import forbidden_arcs, parse_areas

    t0 = time.perf_counter()
    g = base.graph

    def area_arcs(feature: Any) -> np.ndarray:
        try:
            return forbidden_arcs(parse_areas(feature), g)
        except InvalidValue as exc:
            raise InvalidValue(f"custom_model.areas ({feature.get('id')}): {exc.message}") from None

    weights = model_weights(model, g, area_arcs)
    search_arcs = int(base.search_graph.num_arcs)
    customizable = has_cch(base.search_graph) and search_arcs <= cch_max_arcs
    keep_lm = weights.slower_only and "alt" in base.algorithms
    graph = model_graph(g, weights, keep_lm)
    seconds = dict(weights.seconds)
    t1 = time.perf_counter()
    router = base.derive(graph, weights.closed if weights.closed.any() else None)
    router.restrict(False, keep_lm)
    node_geo(router.search_graph)  # the great-circle bound's top speed on the model's arcs, before any request
    seconds["view"] = time.perf_counter() - t1
    algorithm = "alt" if keep_lm else "bidirectional-astar"
    view = ModelView(model.key, router, algorithm, algorithm, weights.slower_only, int(weights.closed.sum()), seconds)
    view.customizable = customizable
    if customizable and not background:
        view.customize()
    seconds["total"] = time.perf_counter() - t0
    return view


class ModelCache:
    """The views built for the models requests named, per model key, the least recently used dropped beyond `size`.
    Two requests for a model not built yet build it once (the second waits for the first)."""

    def __init__(
        self, base: Router, size: int = CACHE_SIZE, cch_max_arcs: int = CCH_MAX_ARCS, background: bool = True
    ) -> None:
        self.base = base
        self.size = max(1, int(size))
        self.cch_max_arcs = cch_max_arcs
        self.background = background
        self._customizer: ThreadPoolExecutor | None = None
        self._views: OrderedDict[str, ModelView] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}
        self.built = 0

    def stop_threads(self) -> None:
        """End the background customization thread, once its work is done (before a fork)."""
        if self._customizer is not None:
            self._customizer.shutdown(wait=True)
            self._customizer = None

    def routers(self) -> list[Router]:
        """The routers of the views built so far."""
        with self._lock:
            return [v.router for v in self._views.values()]

    def cached(self, model: CustomModel) -> bool:
        """Whether `model`'s view is built (a request for it needs no build)."""
        with self._lock:
            return model.key in self._views

    def get(self, model: CustomModel) -> tuple[ModelView, bool]:
        """(the model's view, whether it was in the cache), building it when it was not."""
        with self._lock:
            view = self._views.get(model.key)
            if view is not None:
                self._views.move_to_end(model.key)
                view.uses += 1
                return view, True
            building = self._building.setdefault(model.key, threading.Lock())
        with building:
            with self._lock:
                view = self._views.get(model.key)
                if view is not None:
                    view.uses += 1
                    return view, True
            view = build_view(self.base, model, self.cch_max_arcs, self.background)
            view.uses = 1
            if view.customizable and self.background:
                if self._customizer is None:
                    self._customizer = ThreadPoolExecutor(1, "starroute-customize", initializer=_lower_priority)
                view.pending = self._customizer.submit(view.customize)
                view.pending.add_done_callback(_log_failure)
            with self._lock:
                self._views[model.key] = view
                self.built += 1
                while len(self._views) > self.size:
                    self._views.popitem(last=False)
                self._building.pop(model.key, None)
            return view, False

    def wait(self, model: CustomModel) -> ModelView:
        """The model's view once its background customization (if any) is done: tests and benchmarks."""
        view, _ = self.get(model)
        if view.pending is not None:
            view.pending.result()
        return view

    def info(self) -> dict[str, Any]:
        with self._lock:
            return {"size": self.size, "models": list(self._views), "built": self.built}


def _log_failure(done: Future[None]) -> None:
    """A customization that failed leaves its model on ALT / A* (still exact): say so in the log."""
    exc = done.exception()
    if exc is not None:
        log.error("custom model: the hierarchy's customization failed, the model stays on ALT / A*: %s", exc)


def _lower_priority() -> None:
    """The customizing thread at nice 19 (Linux threads have their own nice value): CH requests preempt it."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass

"""Metrics on the customizable hierarchy: apply new weights to a running engine without rebuilding anything.

A graph built with the CCH stage (`cch_*` arrays, `preprocessing.cch`) can be customized to any metric on its
search arcs in a fraction of a second (`floor.kernels.cch_customize`); the result is a hierarchy in the `ch_*` layout,
so `CHSearch`, `CHTable`, alternatives' and via points' CH legs and exclude all run on it unchanged; it also holds
the CCH's elimination tree (`cch_parent`), on which `cch_query.CCHSearch` answers point-to-point queries without a heap.

A `Metric` is immutable: its arc arrays and, built on first use, one hierarchy per excludable class set (the same
structure customized with that set's arcs forbidden; OSRM's per-exclude metrics, without a hierarchy each on disk).
`Router.set_metric(metric)` swaps it in with one attribute store; a request running at that moment finishes on the
hierarchy it started with (its search objects hold the old arrays), the next one starts on the new metric. Nothing
a query reads is ever written in place.

    metric = Metric.customized_on(router.search_graph, weight=new_w)   # about 0.3 s on Porto
    router.set_metric(metric)
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from app.engine.data import freeze
from app.engine.errors import GraphError
from app.engine.search.cch_query import PARENT, elimination_parent
from app.engine.types import ExcludeSet
from floor.format.arrays import CH_PREFIX
from floor.format.graph import Graph
from floor.format.units import CLOSED_DS
from floor.kernels.cch_customize import customize_arrays
from floor.memory import trim_heap

NO_CCH_MESSAGE = "graph has no customizable hierarchy: re-run `starroute preprocess` (the cch stage)"


def closed_arcs(weight: np.ndarray) -> np.ndarray:
    """bool per search arc: the arcs of a road a speed file closed (`units.CLOSED_DS`), which no path may take."""
    return np.asarray(weight) >= CLOSED_DS


def has_cch(graph: Graph) -> bool:
    """Whether the (search) graph carries the customizable hierarchy's structure (`cch_*` arrays)."""
    return "cch_first" in graph.arrays


def customize(
    search: Graph,
    weight: np.ndarray | None = None,
    dist: np.ndarray | None = None,
    duration: np.ndarray | None = None,
    forbidden: np.ndarray | None = None,
    perfect: bool = True,
) -> Graph:
    """A hierarchy (a frozen in-memory `Graph` holding the `ch_*` arrays, queried as `CHSearch(h)`) of the search
    graph `search` under the metric `weight` (ds), `dist` (dm), `duration` (ds) per search arc (each None: the
    graph's own `arc_*` array). `forbidden` (bool per search arc): arcs no path may take. Its manifest's
    `customize_seconds` holds each step's time. `GraphError` when the graph has no CCH structure.

    >>> h = customize(router.search_graph, weight=w)  # doctest: +SKIP
    >>> CHSearch(h).run(sources, targets)  # doctest: +SKIP
    """
    if not has_cch(search):
        raise GraphError(NO_CCH_MESSAGE)
    seconds: dict[str, float] = {}
    arrays = customize_arrays(
        search.arrays,
        search.arc_tail,
        search.arc_head,
        search.arc_weight if weight is None else weight,
        search.arc_dist if dist is None else dist,
        search.arc_duration if duration is None else duration,
        forbidden,
        perfect,
        seconds,
    )
    arrays[PARENT] = elimination_parent(search.cch_first, search.cch_head)  # the query's walk (`cch_query`)
    t0 = time.perf_counter()
    trim_heap()  # the step arrays just freed (about 50 MB on Porto) would stay resident in the heap
    seconds["trim"] = time.perf_counter() - t0
    manifest = dict(search.manifest)
    manifest["customize_seconds"] = {k: round(v, 4) for k, v in seconds.items()}
    return freeze(Graph(search.path, manifest, arrays, search.files))


class Metric:
    """One metric of a graph: the arrays every search reads its weights from, and the hierarchies to query.

    `Metric.stored(search)` is the graph as preprocessed: its own `ch_*`/`chx*_` hierarchies where it has them
    (`customized=False`), else its default metric customized on the CCH (an excludable set without a stored
    hierarchy, prefix None, always is). `Metric.customized(search, ...)` is a new
    metric on the CCH structure. `hierarchy(exclude)` gives (graph, prefix) to hand `CHSearch`/`CHTable`; a
    customized metric builds the hierarchy without an excluded set the first time that set is asked for.
    """

    def __init__(
        self,
        search: Graph,
        weight: np.ndarray | None,
        dist: np.ndarray | None,
        duration: np.ndarray | None,
        customized: bool,
        name: str = "",
        perfect: bool = True,
    ) -> None:
        self.search = search
        self.weight, self.dist, self.duration = weight, dist, duration
        self.customized = customized
        self.name = name
        self.perfect = perfect
        self.applied_at = time.time()
        self._hierarchies: dict[int, Graph] = {}  # per excluded class mask (0: none), customized on first use
        self._lock = threading.Lock()

    @classmethod
    def stored(cls, search: Graph) -> Metric:
        """The metric the graph was preprocessed with: its witness hierarchies if any, else customized on the CCH."""
        return cls(search, None, None, None, customized="ch_rank" not in search.arrays, name="stored")

    @classmethod
    def customized_on(
        cls,
        search: Graph,
        weight: np.ndarray | None = None,
        dist: np.ndarray | None = None,
        duration: np.ndarray | None = None,
        name: str = "",
        perfect: bool = True,
    ) -> Metric:
        """A new metric on the graph's CCH; the main hierarchy is customized now (about 0.3 s on Porto), those
        without an excludable set on first use. `GraphError` when the graph has no CCH structure."""
        if not has_cch(search):
            raise GraphError(NO_CCH_MESSAGE)
        m = len(search.arc_head)
        for label, a in (("weight", weight), ("dist", dist), ("duration", duration)):
            if a is not None and np.shape(a) != (m,):
                raise ValueError(f"{label}: one value per search arc ({m}), got shape {np.shape(a)}")
        metric = cls(search, weight, dist, duration, customized=True, name=name, perfect=perfect)
        metric.hierarchy(None)
        return metric

    @classmethod
    def of_hierarchy(cls, search: Graph, hierarchy: Graph, name: str = "") -> Metric:
        """The metric of the search graph's own arc arrays whose main hierarchy is `hierarchy` (customized by the
        caller, holding no lock: `customize(search, forbidden=closed_arcs(search.arc_weight))`); the excluded sets
        are customized on first use."""
        metric = cls(search, None, None, None, customized=True, name=name)
        metric._hierarchies[0] = hierarchy
        return metric

    def hierarchy(self, exclude: ExcludeSet | None = None) -> tuple[Graph, str | None]:
        """(graph holding the hierarchy's arrays, their prefix) for the metric without `exclude`'s classes; prefix
        None when there is no such hierarchy (a stored metric whose graph lacks it)."""
        if not self.customized:
            if exclude is None:
                return self.search, CH_PREFIX
            if exclude.prefix is not None or not has_cch(self.search):
                return self.search, exclude.prefix
        mask = 0 if exclude is None else exclude.mask
        got = self._hierarchies.get(mask)
        if got is None:
            with self._lock:  # this metric's own lock: a customization blocks no other graph's derived values
                got = self._hierarchies.get(mask)
                if got is None:
                    got = self._hierarchies[mask] = self._build(mask)
        return got, CH_PREFIX

    def _build(self, mask: int) -> Graph:
        weight = np.asarray(self.search.arc_weight if self.weight is None else self.weight)
        forbidden = closed_arcs(weight)  # a road a speed file closed is in no hierarchy
        if mask:
            forbidden |= (np.asarray(self.search.arc_flags).astype(np.int64) & mask) != 0
        return customize(self.search, self.weight, self.dist, self.duration, forbidden, self.perfect)

    def info(self) -> dict[str, Any]:
        """For /health: the metric's name, whether it is customized and when it was applied (epoch seconds)."""
        return {"name": self.name, "customized": self.customized, "applied_at": round(self.applied_at, 3)}

"""Departure time (issue 44): routes, tables and isochrones for a given departure, and routes arriving by a time.

A request's `depart_at` / `arrive_by` (ISO 8601 with or without offset, or `now`; a time without offset is the
graph's local time, `manifest["timezone"]`, UTC when absent) becomes *week time* (ds since Monday 00:00 local time,
`zoneinfo` handling DST) and the time-dependent searches of `app.engine.search.timedep` run from there on the graph's
time profiles (`td_factor`, `td_arc_row`; without them every time gives the static travel times). They minimise
arrival time: a departure-time answer is the fastest route for that departure, its legs, pieces and steps timed by
the travel-time functions (`_retime`), its weight the path's static weight.

- **Routes**: per leg TD-A* with CH-potentials on the CCH customized on the lower-bound metric (`TDModel.hierarchy`,
  once per graph, as `model_metric` customizes a model's), or the oracle `td_reference` for `algorithm=dijkstra`;
  leg i+1 departs when leg i arrives. The stretch along a shared chain competes as in static legs.
- **arrive_by**: arrival is non-decreasing in departure (FIFO, composed over legs), so the latest departure arriving
  by the time is found by one backward TD-A* per leg from the last (`td_latest_departure`, `td_backward`), then the
  route departing then; the oracle (`algorithm=dijkstra`) searches on departure times instead (`latest_departure`:
  a secant step from the feasible side, bisection when it overshoots); both exact to the decisecond.
- **Tables**: per source one TD-A* until every destination seed is settled or, every destination found, its smallest
  key passes the largest arrival (`timedep.td_tree`), its potential the exact weekly lower-bound distance to the
  nearest destination (`timedep.set_potentials`, once per table), the rows handed one at a time to the calling
  thread and one more (the kernels release the GIL).
- **Isochrones**: one TD-Dijkstra with the largest limit as cutoff; each road arc reached from its entry time, cut
  at the limit in proportion to its travel time at that entry.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from app.engine.data import derived, is_edge_based
from app.engine.errors import InvalidValue, NoRoute
from app.engine.features.isochrone import point_pieces, reached_arc_pieces
from app.engine.route.assemble import AT_FIRST, AT_LAST, BWD, FWD, join_route
from app.engine.route.legs import Legs
from app.engine.search.cch import has_cch
from app.engine.search.td_backward import incoming, latest_along, latest_entry, td_latest
from app.engine.search.td_bounds import LowerBounds
from app.engine.search.td_reference import td_dijkstra
from app.engine.search.timedep import (
    TDArrays,
    TDHierarchy,
    TDState,
    new_state,
    no_hierarchy,
    set_potentials,
    td_arrays,
    td_route,
    td_tree,
    ttf,
    walk_times,
)
from app.engine.types import Leg, Phantom, RouteResult, SearchStats
from floor.format.units import CLOSED_DS, COORD_SCALE, INF_WEIGHT, TD_ONE, WEEK_DS
from floor.kernels.geometry import haversine_m

_STAMP_LIMIT = (1 << 29) - 2
_EXAMPLE = "e.g. 2026-03-02T08:30, 2026-03-02T08:30:00+01:00 or now"


# ------------------------------------------------------------------------------------------------------------ times


@dataclass(frozen=True)
class When:
    """A request's time: `arrive` False departs at `at`, True arrives by it (an aware datetime, whole ds)."""

    at: datetime
    arrive: bool = False


def parse_time(value: str, tz: ZoneInfo, name: str) -> datetime:
    """An aware datetime of an ISO 8601 value (no offset: local time `tz`) or `now`, truncated to the decisecond;
    `InvalidValue` naming the parameter otherwise."""
    v = str(value).strip()
    if v.lower() == "now":
        dt = datetime.now(tz)
    else:
        try:
            dt = datetime.fromisoformat(v)
        except ValueError:
            raise InvalidValue(f"{name}={value!r} is no ISO 8601 date and time ({_EXAMPLE})") from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=tz)
    return dt.replace(microsecond=dt.microsecond // 100_000 * 100_000)


def when_of(depart_at: str | None, arrive_by: str | None, tz: ZoneInfo) -> When | None:
    """The request's `When` (None: neither given); `InvalidValue` for both or a bad value."""
    if depart_at is not None and arrive_by is not None:
        raise InvalidValue("give depart_at or arrive_by, not both")
    if depart_at is not None:
        return When(parse_time(depart_at, tz, "depart_at"))
    if arrive_by is not None:
        return When(parse_time(arrive_by, tz, "arrive_by"), True)
    return None


def week_time(dt: datetime, tz: ZoneInfo) -> int:
    """ds since Monday 00:00 of `dt`'s week in local time `tz`."""
    loc = dt.astimezone(tz)
    secs = loc.weekday() * 86400 + loc.hour * 3600 + loc.minute * 60 + loc.second
    return secs * 10 + loc.microsecond // 100_000


def iso(dt: datetime, tz: ZoneInfo) -> str:
    """ISO 8601 in local time `tz` with its offset (tenths of a second only when there are any)."""
    loc = dt.astimezone(tz)
    return loc.isoformat(timespec="milliseconds" if loc.microsecond else "seconds")


def later(dt: datetime, ds: int) -> datetime:
    """`dt` plus `ds` deciseconds."""
    return dt + timedelta(microseconds=100_000 * int(ds))


# ------------------------------------------------------------------------------------------------------- the model


class TDModel:
    """A router's time-dependent inputs (built once per router, `td_model`): the search graph's `TDArrays`, the road
    arcs' profile rows, the time zone, and the lower-bound hierarchy (customized on first use)."""

    def __init__(self, router: Any, factor: np.ndarray | None, arc_row: np.ndarray | None) -> None:
        g, s = router.graph, router.search_graph
        self.router = router
        self.edge_based = is_edge_based(g)
        tz_name = g.manifest.get("timezone") or "UTC"
        try:
            self.tz = ZoneInfo(tz_name)
        except (ZoneInfoNotFoundError, ValueError):
            self.tz = ZoneInfo("UTC")
        self.profiled = factor is not None and arc_row is not None and len(factor) > 0
        m = int(np.asarray(g.arc_duration).shape[0])
        self.road_row = np.ascontiguousarray(arc_row if self.profiled else np.full(m, -1), dtype=np.int32)
        self.arrays: TDArrays | None = None
        self.bounds: LowerBounds | None = None
        self._local = threading.local()
        if not self.edge_based:
            return
        node_arc = np.asarray(s.node_arc)
        closed = np.asarray(g.arc_weight)[node_arc] >= CLOSED_DS
        node_dur = np.where(closed, -1, np.asarray(g.arc_duration)[node_arc])
        self.arrays = td_arrays(
            s.first_out, s.arc_head, s.arc_tail, s.arc_turn_duration, s.arc_flags, s.arc_dist, node_dur,
            self.road_row[node_arc], factor if self.profiled else None,
        )  # fmt: skip
        self.bounds = LowerBounds(s, self.arrays)

    def check(self) -> TDArrays:
        """The arrays, or `InvalidValue` on a graph without an edge-based search graph."""
        if self.arrays is None:
            raise InvalidValue(
                "departure times need a graph with turns (re-run `starroute preprocess` without --no-turns)"
            )
        return self.arrays

    @property
    def hierarchy(self) -> TDHierarchy | None:
        """The CCH customized on the lower-bound metric of the whole week (None: the graph has no CCH; TD-A* then runs
        without potentials, still exact)."""
        self.check()
        assert self.bounds is not None
        return self.bounds.weekly

    @property
    def customizations(self) -> int:
        """Lower-bound hierarchies customized so far (the weekly one and the windows')."""
        return 0 if self.bounds is None else self.bounds.customizations

    @property
    def hierarchy_seconds(self) -> float:
        return 0.0 if self.bounds is None else self.bounds.seconds

    def stop_threads(self) -> None:
        """End the background customization thread, once its work is done (before a fork)."""
        if self.bounds is not None:
            self.bounds.stop_threads()

    def wait(self) -> None:
        """Until the background customizations asked for so far are done (tests and benchmarks)."""
        if self.bounds is not None:
            self.bounds.wait()

    def state(self) -> tuple[TDState, list[int]]:
        """This thread's search arrays and its query counter (a one-element list)."""
        st = getattr(self._local, "state", None)
        if st is None:
            g = self.check()
            s = self.router.search_graph
            up = int(s.arrays["cch_head"].shape[0]) if has_cch(s) else 0  # bounds every customization's arcs
            st = self._local.state = (new_state(g.node_dur.shape[0], g.arc_head.shape[0], up), [0])
        return st

    def next_query(self, counter: list[int], state: TDState) -> int:
        counter[0] += 1
        if counter[0] > _STAMP_LIMIT:
            for a in (state.st, state.tmark, state.pst, state.bst):
                a.fill(0)
            counter[0] = 1
        return counter[0]

    def at(self, when: When) -> int:
        """Week time of a request's time."""
        return week_time(when.at, self.tz)


def td_model(router: Any) -> TDModel:
    """The router's `TDModel`, from the graph's `td_factor` / `td_arc_row` (none: static times), built once."""
    g = router.graph

    def build() -> TDModel:
        has = "td_factor" in g.arrays and "td_arc_row" in g.arrays
        return TDModel(router, g.arrays["td_factor"] if has else None, g.arrays["td_arc_row"] if has else None)

    return derived(router, "td_model", build)


def stop_threads(router: Any) -> None:
    """End the router's departure-time customization thread, if it ever started one."""
    model = router.__dict__.get("_derived", {}).get("td_model")
    if model is not None:
        model.stop_threads()


def install_profiles(router: Any, factor: np.ndarray, arc_row: np.ndarray) -> TDModel:
    """Time profiles given as arrays (the format's `td_factor` [P, 672], `td_arc_row` [m]) instead of the graph's:
    tests and benchmarks on graphs built without them."""
    model = TDModel(router, factor, arc_row)
    router.__dict__.setdefault("_derived", {})["td_model"] = model
    return model


# ------------------------------------------------------------------------------------------------------------ legs


def _source_seeds(model: TDModel, legs: Legs, ph: Phantom) -> tuple[Any, tuple[np.ndarray, ...]]:
    g = model.check()
    s = legs.space.seeds(ph, True)
    nodes = np.ascontiguousarray(s.seeds.nodes, dtype=np.int32)
    parts = s.seeds.duration_array()
    return s, (nodes, parts, g.node_row[nodes], np.ascontiguousarray(s.seeds.dists, dtype=np.int64))


def _target_rows(model: TDModel, ph: Phantom, kinds: np.ndarray) -> np.ndarray:
    rows = np.full(len(kinds), -1, np.int32)
    for side, arc in ((FWD, ph.fwd_arc), (BWD, ph.bwd_arc)):
        if arc >= 0:
            rows[kinds == side] = model.road_row[arc]
    return rows


def _target_seeds(model: TDModel, legs: Legs, ph: Phantom) -> tuple[Any, tuple[np.ndarray, ...]]:
    t = legs.space.seeds(ph, False)
    nodes = np.ascontiguousarray(t.seeds.nodes, dtype=np.int32)
    turn = np.ascontiguousarray(t.turns[:, 1], dtype=np.int64)
    parts = t.seeds.duration_array() - turn
    at_node = (t.kinds == AT_FIRST) | (t.kinds == AT_LAST)
    parts[at_node] = 0
    rows = _target_rows(model, ph, t.kinds)
    return t, (nodes, turn, parts, rows, np.ascontiguousarray(t.seeds.dists, dtype=np.int64))


def _retime(model: TDModel, leg: Leg, tau0: int) -> int:
    """Time `leg`'s pieces for a departure at week time `tau0` (piece k: its turn, then its arc or part of it by
    the travel-time function); its durations replaced; returns the arrival."""
    g = model.check()
    p = leg.piece_arc.shape[0]
    turn = np.zeros(p) if leg.piece_turn_s is None else leg.piece_turn_s
    turns = np.round(turn * 10).astype(np.int64)
    parts = np.round(leg.piece_duration_s * 10).astype(np.int64) - turns
    rows = model.road_row[leg.piece_arc.astype(np.int64)]
    out = np.zeros(p, np.int64)
    arrive = int(walk_times(leg.piece_arc.astype(np.int32), parts, rows, turns, g.factor, np.int64(tau0), out))
    leg.piece_duration_s = out / 10.0
    leg.duration_s = (arrive - tau0) / 10.0
    return arrive


def td_leg(model: TDModel, legs: Legs, i: int, src: Phantom, tgt: Phantom, tau0: int, excl: int,
           oracle: bool = False) -> tuple[Leg, int]:  # fmt: skip
    """One leg departing at week time `tau0` and its arrival: the earliest-arrival path between the phantoms' seeds
    (TD-A* with CH potentials, or the oracle), or the stretch along their shared chain when it arrives no later."""
    g = model.check()
    t_start = time.perf_counter()
    s, (s_nodes, s_part, s_row, _) = _source_seeds(model, legs, src)
    t, (t_nodes, t_turn, t_part, t_row, _) = _target_seeds(model, legs, tgt)
    best, path, seed_s, seed_t = INF_WEIGHT, None, -1, -1
    stats = SearchStats("td-dijkstra" if oracle else "td-astar")
    if len(s_nodes) and len(t_nodes):
        if oracle:
            arrive, j, lab, pred = td_dijkstra(g, (s_nodes, s_part, s_row), tau0, (t_nodes, t_turn, t_part, t_row),
                                               excl)  # fmt: skip
            if j >= 0:
                back, v = [], int(t_nodes[j])
                while pred[v] >= 0:
                    back.append(int(pred[v]))
                    v = int(g.arc_tail[pred[v]])
                best, path, seed_s, seed_t = arrive, np.array(back[::-1], np.int32), -1 - int(pred[v]), j
        else:
            bounds = model.bounds
            assert bounds is not None
            mins = g.row_min
            upper = _upper_bound(model, src, tgt, tau0) if model.profiled and excl == 0 else None
            if upper is not None:  # arrivals stay before `upper`: a window's lower bounds are tighter
                mins = bounds.window(tau0, upper)
            h = bounds.for_window(mins)
            state, counter = model.state()
            q = model.next_query(counter, state)
            t_lb = t_turn + _lower_bounds(g, t_part, t_row, mins)
            hh = h if h is not None else _stand_in(model)
            td_route(g, hh, h is not None, excl, (s_nodes, s_part, s_row), np.int64(tau0),
                     (t_nodes, t_turn, t_part, t_row, t_lb), state, q)  # fmt: skip
            out = state.out
            stats.settled, stats.relaxed = int(out[2]), int(out[3])
            if out[1] >= 0:
                best, path = int(out[0]) + tau0, state.buf[: int(out[4])].copy()
                seed_s, seed_t = int(out[5]), int(out[6])
    dr = legs.direct(src, tgt)
    if dr is not None and dr[0] < CLOSED_DS:
        arc = src.fwd_arc if dr[2] == FWD else src.bwd_arc
        direct = tau0 + int(ttf(int(dr[3]), int(model.road_row[arc]), g.factor, np.int64(tau0)))
        if direct <= best:
            stats.micros = (time.perf_counter() - t_start) * 1e6
            leg = legs.assembler.direct_leg(src, tgt, dr[2], stats)
            arrive = _retime(model, leg, tau0)
            return leg, arrive
    if path is None:
        raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1}")
    arcs, turns = legs.space.road_path(path, s, seed_s)
    leg = legs.assembler.search_leg(src, int(s.kinds[seed_s]), arcs, tgt, int(t.kinds[seed_t]), stats, turns,
                                    tuple(t.turns[seed_t]))  # fmt: skip
    arrive = _retime(model, leg, tau0)
    assert arrive == best, f"leg timed {arrive}, the search arrived at {best}"
    stats.micros = (time.perf_counter() - t_start) * 1e6
    return leg, arrive


def _lower_bounds(g: TDArrays, parts: np.ndarray, rows: np.ndarray, mins: np.ndarray) -> np.ndarray:
    """int64 lower bounds of partial arcs with per-row factors `mins` (`timedep.lower_bound`, vectorised)."""
    out = parts.astype(np.int64).copy()
    prof = (rows >= 0) & (parts > 0)
    out[prof] = (out[prof] * mins[rows[prof]]) // TD_ONE
    return out


def _upper_bound(model: TDModel, src: Phantom, tgt: Phantom, tau0: int) -> int | None:
    """The arrival of the static route's path departing at `tau0` (a feasible path, so no earlier than the best
    one), or None (no hierarchy, no route)."""
    leg = _static_leg(model, src, tgt)
    return None if leg is None else _retime(model, leg, tau0)


def _static_leg(model: TDModel, src: Phantom, tgt: Phantom) -> Leg | None:
    """The static CH route's leg from `src` to `tgt`, whose path timed for a departure bounds the time-dependent
    search (None: no hierarchy, no route)."""
    r = model.router
    if "ch" not in r.algorithms:
        return None
    try:
        return r.query().route([src, tgt], "ch").legs[0]
    except NoRoute:
        return None


def _stand_in(model: TDModel) -> TDHierarchy:
    return derived(model, "no_hierarchy", lambda: no_hierarchy(model.check().node_dur.shape[0]))


def td_route_at(model: TDModel, legs: Legs, phantoms: Sequence[Phantom], tau0: int, excl: int, algorithm: str,
                oracle: bool = False) -> tuple[RouteResult, int]:  # fmt: skip
    """The route through `phantoms` departing at week time `tau0`, and its arrival (week time)."""
    out, tau = [], tau0
    for i in range(len(phantoms) - 1):
        leg, tau = td_leg(model, legs, i, phantoms[i], phantoms[i + 1], tau, excl, oracle)
        out.append(leg)
    return RouteResult([join_route(out, algorithm)]), tau


def td_latest_departure(model: TDModel, legs: Legs, phantoms: Sequence[Phantom], by: int, excl: int) -> int:
    """The latest departure (week time) through `phantoms` arriving by week time `by`: per leg from the last, one
    backward TD-A* (`td_backward.td_latest`, the leg's stretch along a shared chain too), each leg arriving by the
    next one's latest departure (arrival is non-decreasing in departure, composed over legs). `NoRoute` for none."""
    g = model.check()
    first_in, in_arcs = derived(model, "incoming", lambda: incoming(g))
    state, counter = model.state()
    for i in range(len(phantoms) - 2, -1, -1):
        src, tgt = phantoms[i], phantoms[i + 1]
        _, (s_nodes, s_part, s_row, _) = _source_seeds(model, legs, src)
        _, (t_nodes, t_turn, t_part, t_row, _) = _target_seeds(model, legs, tgt)
        best = -INF_WEIGHT
        if len(s_nodes) and len(t_nodes):
            mins, hier = backward_bounds(model, src, tgt, by, excl)
            hh = hier if hier is not None else _stand_in(model)
            q = model.next_query(counter, state)
            s_lb = _lower_bounds(g, s_part, s_row, mins)
            td_latest(g, first_in, in_arcs, hh, hier is not None, excl, (s_nodes, s_part, s_row, s_lb), np.int64(by),
                      (t_nodes, t_turn, t_part, t_row), state, q)  # fmt: skip
            best = int(state.out[0])
        dr = legs.direct(src, tgt)
        if dr is not None and dr[0] < CLOSED_DS:
            arc = src.fwd_arc if dr[2] == FWD else src.bwd_arc
            best = max(best, int(latest_entry(int(dr[3]), int(model.road_row[arc]), g.factor, np.int64(by))))
        if best <= -INF_WEIGHT:
            raise NoRoute(f"no route from waypoint {i} to waypoint {i + 1}")
        by = best
    return by


def backward_bounds(model: TDModel, src: Phantom, tgt: Phantom, by: int,
                    excl: int) -> tuple[np.ndarray, TDHierarchy | None]:  # fmt: skip
    """The per-row minima and hierarchy of a leg's backward search arriving by `by`: those of the grid window holding
    [D, by], D the static route's latest departure along its path (feasible, so no later than the answer: the
    backward search only enters arcs in [D, by], the forward window argument mirrored), else the weekly ones."""
    bounds = model.bounds
    assert bounds is not None
    low = _feasible_departure(model, src, tgt, by) if model.profiled and excl == 0 else None
    if low is None:
        return model.check().row_min, model.hierarchy
    mins = bounds.window(low, by)
    return mins, bounds.for_window(mins)


def _feasible_departure(model: TDModel, src: Phantom, tgt: Phantom, by: int) -> int | None:
    """The latest departure along the static route's path arriving by `by` (None: no hierarchy, no route)."""
    leg = _static_leg(model, src, tgt)
    if leg is None:
        return None
    turn = np.zeros(leg.piece_arc.shape[0]) if leg.piece_turn_s is None else leg.piece_turn_s
    turns = np.round(turn * 10).astype(np.int64)
    parts = np.round(leg.piece_duration_s * 10).astype(np.int64) - turns
    rows = model.road_row[leg.piece_arc.astype(np.int64)]
    return int(latest_along(parts, rows, turns, model.check().factor, np.int64(by)))


def latest_departure(arrival_of: Callable[[int], tuple[Any, int]], by: int) -> tuple[int, Any, int]:
    """The latest departure D (week time, ds) whose arrival `arrival_of(D)` is at most `by`, with its answer and
    arrival: arrival is non-decreasing in departure (FIFO), so D + 1 arrives after `by`. A secant step from the
    feasible side (exact where travel times do not change), bisection whenever a step overshoots."""
    ans, arr = arrival_of(by)
    if arr <= by:
        return by, ans, arr
    hi = by  # infeasible
    step = max(arr - by, 1)
    lo = by - step
    lo_ans, lo_arr = arrival_of(lo)
    while lo_arr > by:  # earlier still, doubling
        hi = lo
        step *= 2
        if step > 2 * WEEK_DS:
            raise NoRoute("no departure arrives by that time")
        lo = by - step
        lo_ans, lo_arr = arrival_of(lo)
    bisect = False
    while hi - lo > 1:
        mid = (lo + hi) // 2 if bisect else min(lo + max(by - lo_arr, 1), hi - 1)
        ans, arr = arrival_of(mid)
        if arr <= by:
            lo, lo_ans, lo_arr = mid, ans, arr
            bisect = False
        else:
            hi = mid
            bisect = True
    return lo, lo_ans, lo_arr


# ------------------------------------------------------------------------------------------------- tables, isochrone


def _table_targets(model: TDModel, legs: Legs, destinations: Sequence[Phantom]) -> tuple[np.ndarray, ...]:
    cols: list[list[np.ndarray]] = [[] for _ in range(6)]
    for j, ph in enumerate(destinations):
        _, (nodes, turn, parts, rows, dists) = _target_seeds(model, legs, ph)
        for c, a in enumerate((nodes, turn, parts, rows, dists, np.full(len(nodes), j, np.int32))):
            cols[c].append(a)
    flat = [np.concatenate(c) if c else np.zeros(0) for c in cols]
    order = np.argsort(flat[0], kind="stable")
    dt = (np.int32, np.int64, np.int64, np.int32, np.int64, np.int32)
    return tuple(np.ascontiguousarray(a[order], dtype=d) for a, d in zip(flat, dt, strict=True))


def _set_potentials(model: TDModel, targets: tuple[np.ndarray, ...]) -> np.ndarray:
    """int64 per search node: its exact weekly lower-bound distance to the nearest target seed (zeros without a
    hierarchy), shared by every row of a table: TD-A* towards the destination set."""
    g = model.check()
    h = model.hierarchy
    pot = np.zeros(g.node_dur.shape[0], np.int64)
    if h is None or len(targets[0]) == 0:
        return pot
    nodes, turn, parts, rows = targets[:4]
    state, counter = model.state()
    q = model.next_query(counter, state)
    cost = turn + _lower_bounds(g, parts, rows, g.row_min)
    set_potentials(h, np.ascontiguousarray(h.rank[nodes]), np.ascontiguousarray(cost, np.int64), state, q, pot)
    return pot


def td_table(model: TDModel, legs: Legs, sources: Sequence[Phantom], destinations: Sequence[Phantom], tau0: int,
             excl: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Earliest-arrival durations (ds after `tau0`) and the distances (dm) of those paths, INF_WEIGHT unreachable,
    for every source x destination departing at week time `tau0`."""
    g = model.check()
    targets = _table_targets(model, legs, destinations)
    ns, nt = len(sources), len(destinations)
    dur = np.full((ns, nt), INF_WEIGHT, np.int64)
    dist = np.full((ns, nt), INF_WEIGHT, np.int64)
    pot = _set_potentials(model, targets)

    order = iter(range(ns))  # rows handed out one at a time: neither thread idles while the other has work
    take = threading.Lock()

    def rows() -> None:
        state, counter = model.state()
        while True:
            with take:
                i = next(order, -1)
            if i < 0:
                return
            _, src = _source_seeds(model, legs, sources[i])
            q = model.next_query(counter, state)
            td_tree(g, excl, src, np.int64(tau0), targets, np.int64(0), pot, state, q, dur[i], dist[i])
            for j, tgt in enumerate(destinations):
                dr = legs.direct(sources[i], tgt)
                if dr is not None and dr[0] < CLOSED_DS:
                    arc = sources[i].fwd_arc if dr[2] == FWD else sources[i].bwd_arc
                    c = int(ttf(int(dr[3]), int(model.road_row[arc]), g.factor, np.int64(tau0)))
                    if c <= dur[i, j]:
                        dur[i, j], dist[i, j] = c, dr[1]

    helper = None
    if ns >= 2 and ns * nt >= 400:
        helper = threading.Thread(target=rows, name="starroute-td-table")
        helper.start()
    rows()
    if helper is not None:
        helper.join()
    return dur, dist


def td_isochrone(model: TDModel, legs: Legs, phantom: Phantom, limits: Sequence[int], tau0: int,
                 excl: int) -> tuple[list[np.ndarray], int]:  # fmt: skip
    """Per limit (ds), the pieces (lon0, lat0, lon1, lat1) reached departing from `phantom` at week time `tau0`, and
    the number of nodes settled: each road arc from its earliest entry, its share reached in proportion to its
    travel time entered then; the point's own road from the point."""
    g = model.check()
    road = legs.space.graph
    state, counter = model.state()
    _, src = _source_seeds(model, legs, phantom)
    q = model.next_query(counter, state)
    none = (np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32),
            np.zeros(0, np.int64), np.zeros(0, np.int32))  # fmt: skip
    dummy = np.zeros(1, np.int64)
    zeros = derived(model, "no_potentials", lambda: np.zeros(g.node_dur.shape[0], np.int64))
    td_tree(g, excl, src, np.int64(tau0), none, np.int64(max(limits)), zeros, state, q, dummy, dummy.copy())
    settled = int(state.out[0])
    n = g.node_dur.shape[0]
    lab, pred, st = state.lab[:n], state.pred[:n], state.st[:n]
    reached = np.flatnonzero((st >= 2 * q) & (pred >= 0))
    e = pred[reached].astype(np.int64)
    entry = lab[g.arc_tail[e]] + g.arc_turn[e]
    start_v = entry - tau0
    cost_v = lab[reached] - entry
    node_arc = np.asarray(legs.space.search.node_arc)
    m = int(np.asarray(road.arc_duration).shape[0])
    start = np.full(m, np.iinfo(np.int64).max, np.int64)
    cost = np.zeros(m, np.int64)
    order = np.argsort(-start_v, kind="stable")  # the earliest entry assigned last, so it wins
    arcs = node_arc[reached[order]]
    cost[arcs] = cost_v[order]
    np.minimum.at(start, node_arc[reached], start_v)
    known = start < np.iinfo(np.int64).max
    known[node_arc[src[0]]] = False  # the point's own arcs: from the point on, below
    own = []
    gf = road.geom_first
    p0, p1 = int(gf[phantom.chain]), int(gf[phantom.chain + 1])
    chain = np.stack([road.geom_lon[p0:p1], road.geom_lat[p0:p1]], axis=1) / COORD_SCALE
    point = np.array([[phantom.lon, phantom.lat]])
    ahead = np.concatenate([point, chain[phantom.segment + 1 :]])
    behind = np.concatenate([point, chain[phantom.segment :: -1]])
    _, fa, _, ba = phantom.times()
    for arc, after, coords in ((phantom.fwd_arc, fa, ahead), (phantom.bwd_arc, ba, behind)):
        if arc < 0 or (int(road.arc_flags[arc]) & excl):
            continue
        own.append((coords, int(ttf(int(after), int(model.road_row[arc]), g.factor, np.int64(tau0)))))
    out = []
    for limit in limits:
        parts = [reached_arc_pieces(road, start, known, int(limit), True, cost)]
        for coords, c in own:
            share = 1.0 if c <= 0 else min(1.0, float(limit) / c)
            parts.append(point_pieces(coords, share * _length_m(coords)))
        out.append(np.concatenate(parts))
    return out, settled


def _length_m(coords: np.ndarray) -> float:
    if len(coords) < 2:
        return 0.0
    return float(haversine_m(coords[:-1, 0], coords[:-1, 1], coords[1:, 0], coords[1:, 1]).sum())


# ------------------------------------------------------------------------------------------------ the facade's calls


def when_for(router: Any, depart_at: str | None, arrive_by: str | None) -> When | None:
    """A request's time checked against the graph (its time zone; a graph with turns), None when it gives none."""
    model = td_model(router)
    when = when_of(depart_at, arrive_by, model.tz)
    if when is not None:
        model.check()
    return when


def route_when(
    router: Any, phantoms: Sequence[Phantom], when: When, excl: int, algorithm: str
) -> tuple[RouteResult, str, str]:
    """The route departing at (or arriving by) `when`, with its departure and arrival as ISO 8601 local times;
    `algorithm` "dijkstra" answers with the oracle."""
    model = td_model(router)
    oracle = algorithm == "dijkstra"
    name = "td-dijkstra" if oracle else "td-astar"
    if not when.arrive:
        tau0 = model.at(when)
        res, arrive = td_route_at(model, router.legs, phantoms, tau0, excl, name, oracle)
        depart_dt = when.at
    else:
        by = model.at(when)
        if oracle:  # the oracle searches on departures (`latest_departure`); TD-A* searches backward once
            tau0, res, arrive = latest_departure(
                lambda d: td_route_at(model, router.legs, phantoms, d, excl, name, oracle), by
            )
        else:
            tau0 = td_latest_departure(model, router.legs, phantoms, by, excl)
            res, arrive = td_route_at(model, router.legs, phantoms, tau0, excl, name)
            assert arrive <= by, f"departing at {tau0} arrives at {arrive}, after {by}"
        depart_dt = later(when.at, tau0 - by)
    return res, iso(depart_dt, model.tz), iso(later(depart_dt, arrive - tau0), model.tz)


def table_when(router: Any, sources: Sequence[Phantom], destinations: Sequence[Phantom], when: When,
               excl: int) -> tuple[np.ndarray, np.ndarray, str]:  # fmt: skip
    """Durations (s) and distances (m), NaN unreachable, departing at `when`, and the departure (ISO 8601)."""
    model = td_model(router)
    if when.arrive:
        raise InvalidValue("arrive_by is answered on routes; a table takes depart_at")
    dur, dist = td_table(model, router.legs, sources, destinations, model.at(when), excl)
    bad = dur >= INF_WEIGHT
    durations = np.where(bad, np.nan, dur / 10.0)
    distances = np.where(bad, np.nan, dist / 10.0)
    return durations, distances, iso(when.at, model.tz)


def isochrone_when(router: Any, phantom: Phantom, limits: Sequence[int], when: When, reverse: bool, metric: str,
                   excl: int) -> tuple[list[np.ndarray], int, str]:  # fmt: skip
    """The pieces reached departing at `when` (travel time limits, ds) and the departure (ISO 8601)."""
    model = td_model(router)
    if when.arrive or reverse:
        raise InvalidValue("an isochrone with a time departs from its point: use depart_at without reverse")
    if metric != "duration":
        raise InvalidValue("depart_at applies to travel-time isochrones, not distance")
    pieces, settled = td_isochrone(model, router.legs, phantom, limits, model.at(when), excl)
    return pieces, settled, iso(when.at, model.tz)

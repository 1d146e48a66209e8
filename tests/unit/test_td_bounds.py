"""Departure time's lower-bound hierarchies (`app.engine.search.td_bounds`): the grid windows' minima are the exact
window minima, windows with equal minima share one hierarchy, each is customized at most once and within the
budget (no churn however many departures are asked), and routes on them equal the oracle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.engine.data import load
from app.engine.errors import NoRoute
from app.engine.facade import Engine, RouteRequest, Waypoints
from app.engine.features.departure import When, backward_bounds, install_profiles, parse_time, td_model
from app.engine.search import timedep as T
from app.engine.search.td_bounds import LENGTHS, LowerBounds, grid
from floor.format.units import SLOT_DS, SLOTS
from tests.unit.test_departure import pairs, rush_hour


def test_the_grid_holds_each_windows_minimum() -> None:
    rng = np.random.default_rng(4)
    fac = T.factors_from_percent(rng.integers(30, 201, (3, SLOTS)))
    fac[2] = fac[2, 0]  # a constant row
    got = grid(fac)
    assert got.shape == (len(LENGTHS), SLOTS, 3)
    for i, length in enumerate(LENGTHS):
        for s in list(range(0, SLOTS, 37)) + [SLOTS - 1, SLOTS - length]:
            want = T.window_minimum(fac, s * SLOT_DS, (s + length) * SLOT_DS)
            assert np.array_equal(got[i, s], want), (length, s)


@pytest.fixture(scope="module")
def engine(bundled_graph: Path) -> Engine:
    e = Engine(load(bundled_graph))
    install_profiles(e.router, *rush_hour(e.graph))
    return e


def test_windows_are_customized_once_within_the_budget(engine: Engine) -> None:
    model = td_model(engine.router)
    b = model.bounds
    assert b is not None and b.weekly is not None
    distinct = b.distinct()
    assert len(distinct) == 2  # a weekday rush hour on one profile: 50 % and 75 % of free flow, any weekday
    before = b.customizations
    assert b.prepare() == 2 and b.kept() == 2 and b.customizations == before + 2
    assert b.prepare() == 0 and b.customizations == before + 2
    for a, z in pairs(engine, 10, seed=9):
        for when in ("2026-12-07T08:00", "2026-12-08T08:20", "2026-12-09T07:40", "2026-12-12T08:00"):
            for algorithm in ("ch", "dijkstra"):
                req = RouteRequest(Waypoints([a, z], default_radius_m=500), depart_at=when, algorithm=algorithm)
                got = engine.route(req).best.duration_s
                if algorithm == "ch":
                    fast = got
            assert fast == got  # TD-A* on the window bounds equals the oracle
    model.wait()
    assert b.customizations == before + 2  # nothing customized while answering
    h = b.weekly
    each = 8 * (h.up_arcs.shape[0] + h.down_arcs.shape[0]) + 8 * h.up_first.shape[0]
    assert sum(a.nbytes for a in h) < b.nbytes() <= sum(a.nbytes for a in h) + 2.1 * each  # heads and weights only
    assert all(w.rank is h.rank for _, w in b._kept.values())  # the order shared


def test_no_window_beyond_the_budget(engine: Engine) -> None:
    model = td_model(engine.router)
    assert model.arrays is not None
    tight = LowerBounds(engine.router.search_graph, model.arrays, budget=0)
    assert tight.prepare() == 0 and tight.kept() == 0
    monday_8 = 8 * 4 * SLOT_DS
    mins = tight.window(monday_8, monday_8 + 2 * SLOT_DS)  # Monday 08:00 to 08:30
    assert np.all(mins > model.arrays.row_min)  # a tighter window exists ...
    assert tight.for_window(mins) is tight.weekly  # ... but the budget leaves no room: the weekly bounds serve
    tight.wait()
    assert tight.kept() == 0 and tight.customizations == 1


def test_arrive_by_on_window_bounds_equals_the_oracle(engine: Engine) -> None:
    """arrive_by's backward search takes the grid window holding [the static path's latest departure, the arrival]
    (tighter than the weekly bounds at rush hour) and still equals the search on departures (the oracle)."""
    model = td_model(engine.router)
    b = model.bounds
    assert b is not None and b.weekly is not None
    b.prepare()
    tighter = done = 0
    for a, z in pairs(engine, 10, seed=13):
        for by in ("2026-12-07T08:30", "2026-12-07T09:05:10.5", "2026-12-08T07:50", "2026-12-07T03:00"):
            try:
                fast = engine.route(RouteRequest(Waypoints([a, z], default_radius_m=500), arrive_by=by))
            except NoRoute:
                continue
            req = RouteRequest(Waypoints([a, z], default_radius_m=500), arrive_by=by, algorithm="dijkstra")
            oracle = engine.route(req)
            assert (fast.departure, fast.arrival) == (oracle.departure, oracle.arrival), (a, z, by)
            mins, h = backward_bounds(model, fast.phantoms[0], fast.phantoms[1], model.at(When(parse_time(by, model.tz,
                                      "b"), True)), 0)  # fmt: skip
            assert np.all(mins >= model.check().row_min)
            tighter += bool(np.any(mins > model.check().row_min)) and h is not b.weekly
            done += 1
    assert done > 10 and tighter > 5

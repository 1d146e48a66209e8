"""arrive_by by one backward search (`app.engine.search.td_backward`) against the oracle: the latest departure the
forward TD-Dijkstra (`td_reference`) arrives by the time with, found by search on departures
(`departure.latest_departure`), to the decisecond: on random graphs (closed arcs, excluded classes, across midnight
Sunday -> Monday) with and without potentials, and on Monaco with the rush hour through the facade (equal to
`algorithm=dijkstra`'s answer, which keeps the search on departures)."""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.errors import NoRoute
from app.engine.facade import Engine
from app.engine.features.departure import latest_departure, parse_time, td_model
from app.engine.search import timedep as T
from app.engine.search.td_backward import incoming, latest_entry, td_latest
from app.engine.search.td_reference import td_dijkstra
from floor.format.units import INF_WEIGHT, SLOTS, WEEK_DS
from tests.unit.test_departure import engine, pairs, random_case, route  # noqa: F401 (a fixture)


def test_latest_entry_is_the_latest_time_arriving_by() -> None:
    rng = np.random.default_rng(5)
    fac = T.factors_from_percent(rng.integers(40, 201, (2, SLOTS)))
    fac[1] = T.factors_from_percent(np.full((1, SLOTS), 100))[0]
    fac[1, 30:36] = fac[1, 0] * 5  # a steep rush: slopes near the FIFO limit for d = 1000
    for d, row in ((0, 0), (1, 0), (37, 0), (600, 0), (1000, 1), (25, -1)):
        for t in [int(x) for x in rng.integers(-WEEK_DS, 2 * WEEK_DS, 300)] + [30 * 9000 + k * 997 for k in range(60)]:
            tau = int(latest_entry(d, row, fac, t))
            assert tau + int(T.ttf(d, row, fac, tau)) <= t, (d, row, t)
            assert tau + 1 + int(T.ttf(d, row, fac, tau + 1)) > t, (d, row, t)


@pytest.mark.parametrize("seed", range(20))
def test_random_graphs_latest_departure_equals_the_oracle(seed: int) -> None:
    g, ta, h, rng = random_case(seed)
    first_in, in_arcs = incoming(ta)
    st = T.new_state(g.num_nodes, g.num_arcs, h.up_arcs.shape[0])
    q, found = 0, 0
    n = g.num_nodes
    for trial in range(16):
        k, kt = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        sn = rng.choice(n, k, replace=False).astype(np.int32)
        sp, sr = rng.integers(0, 20, k).astype(np.int64), rng.integers(-1, 3, k).astype(np.int32)
        s_lb = np.array([int(T.lower_bound(int(p), int(r), ta.row_min)) for p, r in zip(sp, sr, strict=True)])
        tn = np.sort(rng.choice(n, kt, replace=False)).astype(np.int32)
        tt, tp, tr = rng.integers(0, 5, kt), rng.integers(0, 20, kt), rng.integers(-1, 3, kt).astype(np.int32)
        by = int(rng.integers(0, 3000)) if trial % 3 == 0 else int(rng.integers(0, 2 * WEEK_DS))
        excl = 4 if trial % 4 == 0 else 0

        def arrival(d: int) -> tuple[None, int]:
            ref, _, _, _ = td_dijkstra(ta, (sn, sp, sr), d, (tn, tt, tp, tr), excl)  # noqa: B023
            return None, int(ref)

        try:
            want = latest_departure(arrival, by)[0]
        except NoRoute:
            want = -INF_WEIGHT
        for use_pot in (True, False):
            q += 1
            td_latest(ta, first_in, in_arcs, h, use_pot, excl, (sn, sp, sr, s_lb.astype(np.int64)), np.int64(by),
                      (tn, tt.astype(np.int64), tp.astype(np.int64), tr), st, q)  # fmt: skip
            assert int(st.out[0]) == want, f"seed {seed} trial {trial} potentials {use_pot}"
        found += want > -INF_WEIGHT
    assert found > 0 or n < 5


def test_monaco_arrive_by_equals_the_search_on_departures(engine: Engine) -> None:  # noqa: F811
    m = td_model(engine.router)
    done = 0
    for a, b in pairs(engine, 10, seed=21):
        for by in ("2026-12-07T08:30", "2026-12-07T09:05:10.5", "2026-12-07T07:41", "2026-12-07T03:00"):
            try:
                fast = route(engine, a, b, arrive_by=by)
            except NoRoute:
                continue
            oracle = route(engine, a, b, arrive_by=by, algorithm="dijkstra")
            assert (fast.departure, fast.arrival) == (oracle.departure, oracle.arrival), (a, b, by)
            assert fast.best.duration_s == oracle.best.duration_s
            assert parse_time(fast.arrival, m.tz, "a") <= parse_time(by, m.tz, "b")
            done += 1
    assert done > 10

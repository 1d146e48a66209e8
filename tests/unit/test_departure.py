"""Departure time (issue 44): the time-dependent searches against the oracle, TD-Dijkstra (`td_reference`).

Random graphs (tests.unit.test_ch's: self-loops, parallel arcs, zero weights, separate parts) with random profiles
that keep FIFO: TD-A* with CH-potentials and TD-Dijkstra without them equal the oracle for many departures, across
midnight Sunday -> Monday included. On Monaco (edge-based, turn costs) with a rush-hour profile on the main roads:
routes through the facade equal the oracle's, the potentials are the exact lower-bound distances (so consistent on
every arc), FIFO holds over 24 departures, `arrive_by` round-trips to the decisecond, 03:00 is the static travel
time and 08:00 never faster; tables and isochrones follow the same functions.
"""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np
import pytest

from app.engine.data import load
from app.engine.errors import InvalidValue, NoRoute
from app.engine.facade import Engine, IsochroneRequest, RouteRequest, TableRequest, Waypoints
from app.engine.features.departure import install_profiles, parse_time, td_model, week_time
from app.engine.search import timedep as T
from app.engine.search.cch import customize
from app.engine.search.td_reference import td_dijkstra
from floor.format.units import INF_WEIGHT, ROAD_CLASS_CODE, SLOTS, TD_ONE, WEEK_DS
from tests.unit.test_cch import with_cch
from tests.unit.test_ch import random_graph

MAIN = ("motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link")


def rush_hour(graph) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """One profile row, 50 % of free flow weekdays 07:30-09:00, on every motorway/trunk/primary road and link."""
    pct = np.full((1, SLOTS), 100)
    for day in range(5):
        pct[0, day * 96 + 30 : day * 96 + 36] = 50
    main = [ROAD_CLASS_CODE[c] for c in MAIN]
    row = np.where(np.isin(np.asarray(graph.arc_class), main), 0, -1).astype(np.int32)
    return T.factors_from_percent(pct), row


# ---------------------------------------------------------------------------------------------- the function itself


def test_ttf_is_the_contract_formula_and_fifo() -> None:
    rng = np.random.default_rng(3)
    fac = T.factors_from_percent(rng.integers(50, 201, (2, SLOTS)))
    assert T.factors_from_percent(np.full((1, SLOTS), 100))[0, 0] == TD_ONE
    for d in (0, 1, 7, 120, 3000):
        prev = -1
        for tau in list(range(WEEK_DS - 20_000, WEEK_DS + 20_000, 97)) + list(range(0, 40_000, 131)):
            got = int(T.ttf(d, 1, fac, tau))
            t = tau % WEEK_DS
            s = (t - 4500) % WEEK_DS
            k, r = divmod(s, 9000)
            f0, f1 = int(fac[1, k]), int(fac[1, (k + 1) % SLOTS])
            want = (d * (f0 * (9000 - r) + f1 * r) + 9000 * 32768) // (9000 * TD_ONE)
            assert got == want
            assert got >= int(T.lower_bound(d, 1, fac.min(axis=1).astype(np.int64)))
            assert int(T.ttf(d, 1, fac, tau + WEEK_DS)) == got  # week-periodic
        for tau in range(WEEK_DS - 30_000, WEEK_DS + 30_000):  # FIFO across midnight Sunday -> Monday
            a = tau + int(T.ttf(d, 1, fac, tau))
            assert a >= prev
            prev = a
        assert int(T.ttf(d, -1, fac, 12345)) == d


# --------------------------------------------------------------------------------------------------- random graphs


def random_case(seed: int, n: int = 40, m: int = 120):  # type: ignore[no-untyped-def]
    g = with_cch(random_graph(seed, n, m))
    rng = np.random.default_rng(seed)
    fac = T.factors_from_percent(rng.integers(20, 201, (3, SLOTS)))
    node_dur = rng.integers(0, 30, n).astype(np.int32)  # 30 ds x (2^16 x 5 - 2^15) < 9000 x 2^16: FIFO
    node_row = rng.integers(-1, 3, n).astype(np.int32)
    node_dur[rng.random(n) < 0.05] = -1  # closed
    flags = (rng.random(g.num_arcs) < 0.1).astype(np.uint8) * 4
    ta = T.td_arrays(g.first_out, g.arc_head, g.arc_tail, g.arc_weight, flags, g.arc_dist, node_dur, node_row, fac)
    lbw = T.lower_bound_weights(ta)
    closed = node_dur[np.asarray(g.arc_head)] < 0
    h = customize(g, weight=lbw, dist=np.asarray(g.arc_dist), duration=lbw, forbidden=closed)
    return g, ta, T.hierarchy_of(h), rng


@pytest.mark.parametrize("seed", range(25))
def test_random_graphs_equal_the_oracle(seed: int) -> None:
    g, ta, h, rng = random_case(seed)
    n = g.num_nodes
    st = T.new_state(n, g.num_arcs, h.up_arcs.shape[0])
    q, finite = 0, 0
    for trial in range(24):
        k, kt = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        src = (rng.choice(n, k, replace=False).astype(np.int32), rng.integers(0, 20, k).astype(np.int32),
               rng.integers(-1, 3, k).astype(np.int32))  # fmt: skip
        tn = np.sort(rng.choice(n, kt, replace=False)).astype(np.int32)
        tt, tp, tr = rng.integers(0, 5, kt), rng.integers(0, 20, kt), rng.integers(-1, 3, kt).astype(np.int32)
        tlb = tt + np.array([int(T.lower_bound(int(p), int(r), ta.row_min)) for p, r in zip(tp, tr, strict=True)])
        # across midnight Sunday -> Monday every third departure, else anywhere in two weeks
        tau0 = WEEK_DS - int(rng.integers(0, 3000)) if trial % 3 == 0 else int(rng.integers(0, 2 * WEEK_DS))
        excl = 4 if trial % 4 == 0 else 0
        ref, _, _, _ = td_dijkstra(ta, src, tau0, (tn, tt, tp, tr), excl)
        finite += ref < INF_WEIGHT
        for use_pot in (True, False):
            q += 1
            T.td_route(ta, h, use_pot, excl, src, np.int64(tau0), (tn, tt, tp, tr, tlb.astype(np.int64)), st, q)
            got = int(st.out[0])
            got = INF_WEIGHT if got >= INF_WEIGHT else got + tau0
            assert got == ref, f"seed {seed} trial {trial} potentials {use_pot}: {got} != {ref}"
            if ref < INF_WEIGHT:  # the path found arrives when the search says
                arcs = st.buf[: int(st.out[4])]
                tau = tau0 + int(T.ttf(int(src[1][st.out[5]]), int(src[2][st.out[5]]), ta.factor, tau0))
                for e in arcs:
                    te = tau + int(ta.arc_turn[e])
                    v = int(ta.arc_head[e])
                    tau = te + int(T.ttf(int(ta.node_dur[v]), int(ta.node_row[v]), ta.factor, te))
                j = int(st.out[6])
                te = tau + int(tt[j])
                assert te + int(T.ttf(int(tp[j]), int(tr[j]), ta.factor, te)) == ref
    assert finite > 0 or n < 5


def test_window_minimum_bounds_the_factor_inside_the_window() -> None:
    rng = np.random.default_rng(8)
    fac = T.factors_from_percent(rng.integers(30, 201, (3, SLOTS)))

    def factor(r: int, t: int) -> int:  # the piecewise-linear factor at week time t, floored
        k, x = divmod((t - 4500) % WEEK_DS, 9000)
        return (int(fac[r, k]) * (9000 - x) + int(fac[r, (k + 1) % SLOTS]) * x) // 9000

    for trial in range(60):
        a = WEEK_DS - 2000 if trial < 5 else int(rng.integers(0, 2 * WEEK_DS))  # across Sunday -> Monday too
        b = a + int(rng.integers(0, 5000))
        mins = T.window_minimum(fac, a, b)
        exact = np.array([min(factor(r, t) for t in range(a, b + 1)) for r in range(3)])
        assert np.all(mins <= exact) and np.all(mins >= fac.min(axis=1))
        assert np.all(exact - mins < TD_ONE // 8 + 2)
    assert np.array_equal(T.window_minimum(fac, 0, WEEK_DS), fac.min(axis=1))


@pytest.mark.parametrize("seed", range(10))
def test_window_potentials_stay_exact(seed: int) -> None:
    """Potentials on the lower bounds of the window [departure, any arrival no earlier than the best] are exact."""
    g, ta, _, rng = random_case(seed)
    n = g.num_nodes
    closed = ta.node_dur[np.asarray(g.arc_head)] < 0
    st = T.new_state(n, g.num_arcs, 4 * g.num_arcs + 8)
    q = 0
    for trial in range(15):
        src = (rng.choice(n, 1).astype(np.int32), np.zeros(1, np.int32), np.full(1, -1, np.int32))
        tn = rng.choice(n, 1).astype(np.int32)
        tt, tp, tr = np.zeros(1, np.int64), np.zeros(1, np.int64), np.full(1, -1, np.int32)
        tau0 = int(rng.integers(0, WEEK_DS))
        ref, _, _, _ = td_dijkstra(ta, src, tau0, (tn, tt, tp, tr))
        if ref >= INF_WEIGHT:
            continue
        upper = ref + int(rng.integers(0, 50))  # any feasible arrival
        mins = T.window_minimum(ta.factor, tau0, upper)
        lbw = T.lower_bound_weights(ta._replace(row_min=mins))
        h = T.hierarchy_of(customize(g, weight=lbw, dist=np.asarray(g.arc_dist), duration=lbw, forbidden=closed))
        q += 1
        T.td_route(ta, h, True, 0, src, np.int64(tau0), (tn, tt, tp, tr, np.zeros(1, np.int64)), st, q)
        assert int(st.out[0]) + tau0 == ref, f"seed {seed} trial {trial}"


def test_potentials_are_the_exact_lower_bound_distances() -> None:
    for seed in range(10):
        g, ta, h, rng = random_case(seed, 30, 90)
        n = g.num_nodes
        st = T.new_state(n, g.num_arcs, h.up_arcs.shape[0])
        lbw = T.lower_bound_weights(ta)
        target = int(rng.integers(0, n))
        want = backward_distances(ta, lbw, [(target, 0)])
        q = 7
        T._backward_upward(h, np.array([h.rank[target]], np.int32), np.zeros(1, np.int64), st, q)
        got = [int(T.potential(h, int(h.rank[v]), st, q)) for v in range(n)]
        assert got == want, f"seed {seed}"


def test_set_potentials_are_the_exact_distances_to_the_nearest_target() -> None:
    """A table's potentials (every node at once, several targets with costs) equal a Dijkstra on the reversed
    lower-bound metric from all the targets; a TD-A* table row on them equals the oracle."""
    for seed in range(10):
        g, ta, h, rng = random_case(seed, 30, 90)
        n = g.num_nodes
        st = T.new_state(n, g.num_arcs, h.up_arcs.shape[0])
        lbw = T.lower_bound_weights(ta)
        targets = rng.choice(n, 4, replace=False).astype(np.int32)
        costs = rng.integers(0, 30, 4).astype(np.int64)
        want = backward_distances(ta, lbw, list(zip(targets.tolist(), costs.tolist(), strict=True)))
        pot = np.zeros(n, np.int64)
        T.set_potentials(h, h.rank[targets].astype(np.int32), costs, st, 3, pot)
        assert pot.tolist() == want, f"seed {seed}"
        order = np.argsort(targets, kind="stable")
        tn = np.ascontiguousarray(targets[order])
        zero64, none32 = np.zeros(4, np.int64), np.full(4, -1, np.int32)
        tgt = (tn, zero64, zero64, none32, zero64, np.arange(4, dtype=np.int32))
        T.set_potentials(h, h.rank[tn].astype(np.int32), zero64, st, 4, pot)
        for trial in range(5):
            src = (rng.choice(n, 1).astype(np.int32), np.zeros(1, np.int64), np.full(1, -1, np.int32),
                   np.zeros(1, np.int64))  # fmt: skip
            tau0 = int(rng.integers(0, WEEK_DS))
            got = np.full(4, INF_WEIGHT, np.int64)
            T.td_tree(ta, 0, src, np.int64(tau0), tgt, np.int64(0), pot, st, 10 + trial, got, np.zeros(4, np.int64))
            for j in range(4):
                ref, _, _, _ = td_dijkstra(ta, src[:3], tau0, (tn[j : j + 1], zero64[:1], zero64[:1], none32[:1]))
                want_j = INF_WEIGHT if ref >= INF_WEIGHT else ref - tau0
                assert got[j] == want_j, f"seed {seed} trial {trial} target {j}"


def test_table_rows_stop_once_every_target_is_found() -> None:
    """A table row stops when its smallest key passes the largest arrival found, every target phantom having one:
    a phantom whose far seed node is never settled still gets its exact arrival (the oracle's), and the row settles
    no node beyond that arrival (it used to settle on until the far seed node)."""
    checked = 0
    for seed in range(10):
        g, ta, _, rng = random_case(seed, 30, 90)
        n = g.num_nodes
        st = T.new_state(n, g.num_arcs, 0)
        for trial in range(5):
            src = (rng.choice(n, 1).astype(np.int32), np.zeros(1, np.int64), np.full(1, -1, np.int32),
                   np.zeros(1, np.int64))  # fmt: skip
            tau0 = int(rng.integers(0, WEEK_DS))
            one = np.zeros(1, np.int64)
            _, _, lab, _ = td_dijkstra(ta, src[:3], tau0, (src[0], one, one, np.full(1, -1, np.int32)))
            reached = np.flatnonzero(lab < INF_WEIGHT)
            reached = reached[np.argsort(lab[reached], kind="stable")]
            if len(reached) < 4 or lab[reached[-1]] <= lab[reached[1]]:
                continue
            near, far = int(reached[1]), int(reached[-1])
            tn = np.array(sorted((near, far)), np.int32)
            z2, none2 = np.zeros(2, np.int64), np.full(2, -1, np.int32)
            tgt = (tn, z2, z2, none2, z2, np.zeros(2, np.int32))  # one phantom, two seed nodes
            got, dist = np.full(1, INF_WEIGHT, np.int64), np.zeros(1, np.int64)
            T.td_tree(ta, 0, src, np.int64(tau0), tgt, np.int64(0), np.zeros(n, np.int64), st, 1 + trial, got, dist)
            assert got[0] == lab[near] - tau0, f"seed {seed} trial {trial}"
            assert st.out[0] <= int((lab[reached] <= lab[near]).sum()), f"seed {seed} trial {trial}"
            checked += 1
    assert checked >= 20


def backward_distances(ta: T.TDArrays, lbw: np.ndarray, seeds: list[tuple[int, int]]) -> list[int]:
    """Plain Dijkstra on the reversed lower-bound metric (closed heads left out): the exact distance to the seeds."""
    n = ta.node_dur.shape[0]
    rev: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for u in range(n):
        for e in range(int(ta.first_out[u]), int(ta.first_out[u + 1])):
            v = int(ta.arc_head[e])
            if ta.node_dur[v] >= 0:
                rev[v].append((u, int(lbw[e])))
    dist = [int(INF_WEIGHT)] * n
    pq = []
    for v, c in seeds:
        if c < dist[v]:
            dist[v] = c
            heapq.heappush(pq, (c, v))
    while pq:
        d, v = heapq.heappop(pq)
        if d > dist[v]:
            continue
        for u, w in rev[v]:
            if d + w < dist[u]:
                dist[u] = d + w
                heapq.heappush(pq, (d + w, u))
    return dist


# ------------------------------------------------------------------------------------------- Monaco, with turn costs


@pytest.fixture(scope="module")
def engine(bundled_graph: Path) -> Engine:
    e = Engine(load(bundled_graph))
    install_profiles(e.router, *rush_hour(e.graph))
    return e


def pairs(engine: Engine, k: int, seed: int = 5) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Random pairs of points beside the road nodes of the largest component."""
    g = engine.graph
    big = np.flatnonzero(np.asarray(g.node_component) == 0)
    rng = np.random.default_rng(seed)
    nodes = rng.choice(big, 2 * k)
    pts = [(float(g.node_lon[v]) / 1e7 + 1e-5, float(g.node_lat[v]) / 1e7 + 1e-5) for v in nodes]
    return list(zip(pts[::2], pts[1::2], strict=True))


def route(engine: Engine, a, b, **kw):  # type: ignore[no-untyped-def]
    return engine.route(RouteRequest(Waypoints([a, b], default_radius_m=500), **kw))


def test_monaco_routes_equal_the_oracle_and_potentials_are_consistent(engine: Engine) -> None:
    model = td_model(engine.router)
    ta, h = model.arrays, model.hierarchy
    assert ta is not None and h is not None and model.profiled
    checked = 0
    for a, b in pairs(engine, 25):
        for when in ("2026-12-07T03:00", "2026-12-07T07:40", "2026-12-07T08:10", "2026-12-06T23:58:30+00:00",
                     "2026-12-11T08:59:57"):  # fmt: skip
            try:
                fast = route(engine, a, b, depart_at=when)
            except NoRoute:
                with pytest.raises(NoRoute):
                    route(engine, a, b, depart_at=when, algorithm="dijkstra")
                continue
            slow = route(engine, a, b, depart_at=when, algorithm="dijkstra")
            assert fast.best.duration_s == slow.best.duration_s, (a, b, when)
            assert fast.departure == slow.departure and fast.arrival == slow.arrival
            assert fast.best.legs[0].stats.algorithm == "td-astar"
            assert abs(sum(fast.best.legs[0].piece_duration_s) - fast.best.duration_s) < 0.051
            checked += 1
    assert checked > 60
    # the potentials of one target set: the exact lower-bound distances, hence consistent on every search arc
    lbw = T.lower_bound_weights(ta)
    state, counter = model.state()
    q = model.next_query(counter, state)
    targets = [(int(v), int(c)) for v, c in zip(*np.unique(np.random.default_rng(1).integers(0, len(ta.node_dur), 3),
                                                             return_index=True), strict=True)]  # fmt: skip
    T._backward_upward(h, np.array([h.rank[v] for v, _ in targets], np.int32), np.array([c for _, c in targets]),
                       state, q)  # fmt: skip
    pot = np.array([T.potential(h, int(h.rank[v]), state, q) for v in range(len(ta.node_dur))], np.int64)
    assert pot.tolist() == backward_distances(ta, lbw, targets)
    tail = np.asarray(ta.arc_tail, np.int64)
    head = np.asarray(ta.arc_head, np.int64)
    ok = (pot[head] < INF_WEIGHT) & (ta.node_dur[head] >= 0)
    assert ok.sum() > len(head) // 2
    assert np.all(pot[tail[ok]] <= lbw[ok] + pot[head[ok]])


def test_monaco_fifo_rush_hour_and_night(engine: Engine) -> None:
    slower = 0
    for a, b in pairs(engine, 8, seed=9):
        try:
            night = route(engine, a, b, depart_at="2026-12-07T03:00")
        except NoRoute:
            continue
        static = route(engine, a, b, depart_at="2026-12-07T03:00", algorithm="dijkstra")
        # at 03:00 every factor is free flow: the fastest route's static travel time (the oracle without profiles)
        m = td_model(engine.router)
        legs = engine.router.legs
        from app.engine.features.departure import TDModel, td_route_at

        flat = TDModel(engine.router, None, None)
        plain, _ = td_route_at(flat, legs, night.phantoms, 0, 0, "td", oracle=True)
        assert night.best.duration_s == static.best.duration_s == plain.best.duration_s
        rush = route(engine, a, b, depart_at="2026-12-07T08:00")
        assert rush.best.duration_s >= night.best.duration_s
        slower += rush.best.duration_s > night.best.duration_s
        arrivals = []
        for hour in range(24):  # FIFO: a later departure never arrives earlier
            tau0 = week_time(parse_time(f"2026-12-07T{hour:02d}:00", m.tz, "t"), m.tz)
            for dt in (0, 1):
                res, arr = td_route_at(m, legs, night.phantoms, tau0 + dt, 0, "td")
                arrivals.append(arr)
        assert all(y >= x for x, y in zip(arrivals, arrivals[1:], strict=False))
    assert slower > 0


def test_monaco_arrive_by_round_trips(engine: Engine) -> None:
    from app.engine.features.departure import td_route_at

    m = td_model(engine.router)
    done = 0
    for a, b in pairs(engine, 8, seed=11):
        for by in ("2026-12-07T08:30", "2026-12-07T09:05:10.5", "2026-12-07T03:00"):
            try:
                ans = route(engine, a, b, arrive_by=by)
            except NoRoute:
                continue
            depart = parse_time(ans.departure, m.tz, "d")
            arrive = parse_time(ans.arrival, m.tz, "a")
            limit = parse_time(by, m.tz, "b")
            assert arrive <= limit
            tau = week_time(depart, m.tz)
            again = route(engine, a, b, depart_at=ans.departure)
            assert again.arrival == ans.arrival
            _, later_arr = td_route_at(m, engine.router.legs, ans.phantoms, tau + 1, 0, "td")
            assert later_arr > week_time(limit, m.tz)  # one decisecond later misses the time
            done += 1
    assert done > 5


def test_monaco_table_and_isochrone(engine: Engine) -> None:
    pts = [p for ab in pairs(engine, 5, seed=3) for p in ab]
    req = TableRequest(Waypoints(pts, default_radius_m=500), depart_at="2026-12-07T08:00")
    src, dst, ex = engine.resolve_table(req)
    tbl = engine.table(src, dst, ex, None, engine.when(req))
    assert tbl.departure == "2026-12-07T08:00:00+00:00"
    for i in range(len(pts)):
        for j in range(len(pts)):
            if i == j:
                continue
            try:
                r = route(engine, pts[i], pts[j], depart_at="2026-12-07T08:00")
            except NoRoute:
                assert np.isnan(tbl.durations_s[i, j])
                continue
            assert abs(tbl.durations_s[i, j] - r.best.duration_s) < 1e-9, (i, j)
    plain = engine.isochrone(iso := IsochroneRequest(Waypoints([pts[0]]), [300.0]), *engine.resolve_isochrone(iso))
    night = IsochroneRequest(Waypoints([pts[0]]), [300.0], depart_at="2026-12-07T03:00")
    a = engine.isochrone(night, *engine.resolve_isochrone(night))
    assert a.departure is not None and a.contours[0].pieces > 0
    assert abs(a.contours[0].pieces - plain.contours[0].pieces) <= max(5, plain.contours[0].pieces // 10)


def test_bad_times_are_refused(engine: Engine) -> None:
    a, b = pairs(engine, 1)[0]
    for kw, words in (
        ({"depart_at": "tomorrow"}, "ISO 8601"),
        ({"depart_at": "2026-12-07T08:00", "arrive_by": "2026-12-07T09:00"}, "not both"),
        ({"depart_at": "2026-13-07T08:00"}, "depart_at"),
        ({"depart_at": "now", "alternatives": 1}, "alternatives"),
    ):
        with pytest.raises(InvalidValue, match=words):
            route(engine, a, b, **kw)
    req = TableRequest(Waypoints([a, b], default_radius_m=500), arrive_by="2026-12-07T09:00")
    with pytest.raises(InvalidValue, match="depart_at"):
        engine.table(*engine.resolve_table(req), None, engine.when(req))
    assert route(engine, a, b, depart_at="now").departure is not None


def test_warmup_loads_the_departure_kernels_only_with_profiles(engine: Engine, bundled_graph: Path) -> None:
    from types import SimpleNamespace

    from app.warmup import exercise_departures

    a, b = pairs(engine, 1, seed=2)[0]
    plain = Engine(load(bundled_graph))
    phs = plain.snap(Waypoints([a, b], default_radius_m=500))
    exercise_departures(SimpleNamespace(opened=plain), phs)  # no profiles: nothing built, no search state
    model = td_model(plain.router)
    assert not model.profiled and model.customizations == 0 and not hasattr(model._local, "state")
    fresh = Engine(load(bundled_graph))
    profiled = install_profiles(fresh.router, *rush_hour(fresh.graph))
    exercise_departures(SimpleNamespace(opened=fresh), phs)
    assert profiled.customizations >= 1 and hasattr(profiled._local, "state")

"""Routes through many waypoints under `continue_straight` (`Legs._straight_legs`) assemble only the legs they return,
and those legs are the ones the dynamic programming over every (leaving, arriving) state pair gives when every pair's
leg is assembled (`Legs.leg`, as it was before issue 47, item 2): every figure identical, `NoRoute` alike. On the
hierarchy each step runs one search per arriving state from every leaving state at once (`Legs._joint_step`): the
same legs, on the stored metric and on the CCH customized without each excludable class, in at most one search per
arriving state; and the same total weight as Dijkstra's pairwise programme.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.data import ExcludeSet, excludable, load
from app.engine.errors import NoRoute
from app.engine.route.assemble import Assembler
from app.engine.router import Router
from app.engine.search.ch import CHSearch
from app.engine.types import Leg, RouteOptions, SearchOptions
from tests.unit.test_ch_leg import _figures, _waypoints


def _reference(router: Router, phantoms: list, algorithm: str, exclude: ExcludeSet | None = None) -> list[Leg]:
    """The state-pair dynamic programming with every pair's leg assembled (`Legs.leg`), the first state on ties."""
    legs_of = router.legs
    search = router.query()._search(algorithm, exclude)
    options = SearchOptions(exclude_flags=0 if exclude is None else exclude.mask)
    best: dict = {None: (0, [])}
    places: list = []
    k = len(phantoms)
    for i in range(k - 1):
        last = i == k - 2
        there, targets = ([phantoms[-1]], [(0, None)]) if last else legs_of._via_states(phantoms[i + 1])
        nxt: dict = {}
        for key_in, (w0, legs0) in best.items():
            src, s_dir = (phantoms[i], None) if key_in is None else (places[key_in[0]], key_in[1])
            for j, t_dir in targets:
                try:
                    leg, _, arrive = legs_of.leg(search, algorithm, i, src, there[j], options, s_dir=s_dir, t_dir=t_dir)
                except NoRoute:
                    continue
                key = None if last else (j, arrive)
                if key not in nxt or w0 + leg.weight < nxt[key][0]:
                    nxt[key] = (w0 + leg.weight, [*legs0, leg])
        if not nxt:
            raise NoRoute("no route")
        best, places = nxt, there
    return min(best.values(), key=lambda v: v[0])[1]


def _count_calls(m: pytest.MonkeyPatch, cls: type, name: str, count: list[int]) -> None:
    """Count calls of method `name` of `cls` in `count[0]` while `m` holds."""
    method = getattr(cls, name)

    def counted(self: object, *args: object, **kw: object) -> object:
        count[0] += 1
        return method(self, *args, **kw)

    m.setattr(cls, name, counted)


@pytest.mark.parametrize("algorithm", ["ch", "bidirectional-dijkstra"])
def test_straight_legs_are_every_pair_assembled(bundled_graph, monkeypatch, algorithm: str) -> None:  # type: ignore[no-untyped-def]
    """Monaco (car: `continue_straight` by default), 12 routes of 2 to 16 random waypoints, junction nodes among them:
    the same legs as the reference, and `Assembler.search_leg` called once per searched leg returned, no more."""
    router = Router(load(bundled_graph))
    assert router.graph.meta.continue_straight
    pts = _waypoints(router, 160, seed=7)
    rng = np.random.default_rng(8)
    assembled = [0]
    routed = 0
    for n in (2, 3, 4, 6, 8, 10, 12, 14, 16, 16, 16, 16):
        phantoms = router.snap_waypoints([pts[int(x)] for x in rng.integers(0, len(pts), n)])
        try:
            want = [_figures(leg) for leg in _reference(router, phantoms, algorithm)]
        except NoRoute:
            want = None
        assembled[0] = 0
        with monkeypatch.context() as m:
            _count_calls(m, Assembler, "search_leg", assembled)
            try:
                route = router.query().routes(phantoms, RouteOptions(algorithm=algorithm)).best
            except NoRoute:
                assert want is None, f"{n} waypoints: NoRoute, the reference has a route"
                continue
        got = [_figures(leg) for leg in route.legs]
        assert got == want, f"{n} waypoints: legs differ from every pair assembled"
        assert assembled[0] <= len(route.legs), f"{n} waypoints: {assembled[0]} legs assembled for {len(route.legs)}"
        routed += 1
    assert routed >= 8


def _routes_beside_reference(router: Router, pts: list, seed: int, exclude: ExcludeSet | None, monkeypatch) -> int:  # type: ignore[no-untyped-def]
    """Random routes of 3 to 24 waypoints (some passing one point twice, some two points of one road in a row) on
    the hierarchy: the legs of the pairwise programme on the same hierarchy, the total weight of Dijkstra's, and at
    most one search per arriving state. Returns how many routes there were."""
    rng = np.random.default_rng(seed)
    runs = [0]
    routed = 0
    for n in (3, 4, 5, 8, 12, 16, 24, 24):
        picks = [int(x) for x in rng.integers(0, len(pts), n)]
        if n in (5, 16):
            picks[2] = picks[1]  # one place twice in a row
        if n in (8, 24):
            picks[3:5] = [len(pts) - 2, len(pts) - 1]  # the two ends of one road: a stretch along it, or a search
        phantoms = router.snap_waypoints([pts[i] for i in picks])
        options = RouteOptions(exclude=exclude)
        try:
            want = [_figures(leg) for leg in _reference(router, phantoms, "ch", exclude)]
            oracle = sum(leg.weight for leg in _reference(router, phantoms, "dijkstra", exclude))
        except NoRoute:
            want = None
        runs[0] = 0
        with monkeypatch.context() as m:
            _count_calls(m, CHSearch, "run", runs)
            try:
                route = router.query().routes(phantoms, options).best
            except NoRoute:
                assert want is None, f"{n} waypoints: NoRoute, the reference has a route"
                continue
        assert want is not None, f"{n} waypoints: a route, the reference has none"
        got = [_figures(leg) for leg in route.legs]
        assert got == want, f"{n} waypoints: legs differ from the pairwise programme's"
        assert route.weight == oracle, f"{n} waypoints: weight {route.weight}, Dijkstra's programme {oracle}"
        arriving = 1 + sum(len(router.legs._via_states(ph)[1]) for ph in phantoms[1:-1])
        assert runs[0] <= arriving, f"{n} waypoints: {runs[0]} searches for {arriving} arriving states"
        routed += 1
    return routed


def test_joint_step_on_monaco(bundled_graph, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Monaco's hierarchy: `_joint_step` gives the pairwise programme's legs, Dijkstra's weight, one search per
    arriving state at most."""
    router = Router(load(bundled_graph))
    assert _routes_beside_reference(router, _waypoints(router, 160, seed=11), 12, None, monkeypatch) >= 6


def test_joint_step_on_andorra_with_each_exclude(graph_cache, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Andorra, the stored hierarchy and the CCH customized without each excludable class (toll, motorway, ferry):
    the same as on Monaco."""
    router = Router(load(graph_cache("andorra.osm.pbf", "car", ch=True, landmarks=8)))
    pts = _waypoints(router, 200, seed=21)
    sets = excludable(router.graph)
    assert sets, "Andorra's car graph has excludable classes"
    for k, exclude in enumerate([None, *sets]):
        assert _routes_beside_reference(router, pts, 30 + k, exclude, monkeypatch) >= 5, f"exclude {exclude}"


def test_seed_sets_are_each_waypoints_seeds(bundled_graph) -> None:  # type: ignore[no-untyped-def]
    """`EdgeSpace.seed_sets` (every waypoint's seeds in one kernel call) gives each plain waypoint the arrays
    `seeds` gives it, as source and as target, and None exactly for those on a junction node with candidate roads or
    on a barrier's copies."""
    router = Router(load(bundled_graph))
    space = router.space
    phantoms = router.snap_waypoints(_waypoints(router, 120, seed=5))
    for as_source in (True, False):
        sets = space.seed_sets(phantoms, as_source)
        assert len(sets) == len(phantoms)
        plain = 0
        for ph, got in zip(phantoms, sets, strict=True):
            assert (got is None) == (space.plain_place(ph) is None)
            if got is None:
                continue
            want = space.seeds(ph, as_source)
            for a, b in ((got.seeds.nodes, want.seeds.nodes), (got.seeds.weights, want.seeds.weights),
                         (got.seeds.dists, want.seeds.dists), (got.seeds.duration_array(), want.seeds.duration_array()),
                         (got.kinds, want.kinds), (got.turns, want.turns)):  # fmt: skip
                assert a.dtype == b.dtype and np.array_equal(a, b)
            plain += 1
        assert 0 < plain < len(phantoms), "both kinds of waypoint: made at once and made one by one"


def test_new_seeds_is_the_dataclass_seeds() -> None:
    """`new_seeds` (the fast constructor) builds what `Seeds(...)` builds: the same fields, the same repr, still
    frozen; with and without travel times."""
    from dataclasses import FrozenInstanceError, fields

    from app.engine.types import Seeds, new_seeds

    nodes, w, d = np.array([3, 5], np.int32), np.array([10, 20], np.int64), np.array([1, 2], np.int64)
    for times in (None, np.array([11, 22], np.int64)):
        a, b = new_seeds(nodes, w, d, 7.4, 43.7, times), Seeds(nodes, w, d, 7.4, 43.7, times)
        assert [f.name for f in fields(a)] == [f.name for f in fields(b)]
        assert all(getattr(a, f.name) is getattr(b, f.name) for f in fields(b)) and repr(a) == repr(b)
        assert np.array_equal(a.duration_array(), b.duration_array())
        with pytest.raises(FrozenInstanceError):
            a.lon = 0.0  # type: ignore[misc]

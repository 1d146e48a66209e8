"""Routes through many waypoints under `continue_straight` (`Legs._straight_legs`) assemble only the legs they return,
and those legs are the ones the dynamic programming over every (leaving, arriving) state pair gives when every pair's
leg is assembled (`Legs.leg`, as it was before issue 47, item 2): every figure identical, `NoRoute` alike.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.data import load
from app.engine.errors import NoRoute
from app.engine.route.assemble import Assembler
from app.engine.router import Router
from app.engine.types import Leg, RouteOptions, SearchOptions
from tests.unit.test_ch_leg import _figures, _waypoints


def _reference(router: Router, phantoms: list, algorithm: str) -> list[Leg]:
    """The state-pair dynamic programming with every pair's leg assembled (`Legs.leg`), the first state on ties."""
    legs_of = router.legs
    search = router.query()._search(algorithm)
    options = SearchOptions()
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


@pytest.mark.parametrize("algorithm", ["ch", "bidirectional-dijkstra"])
def test_straight_legs_are_every_pair_assembled(bundled_graph, monkeypatch, algorithm: str) -> None:  # type: ignore[no-untyped-def]
    """Monaco (car: `continue_straight` by default), 12 routes of 2 to 16 random waypoints, junction nodes among them:
    the same legs as the reference, and `Assembler.search_leg` called once per searched leg returned, no more."""
    router = Router(load(bundled_graph))
    assert router.graph.meta.continue_straight
    pts = _waypoints(router, 160, seed=7)
    rng = np.random.default_rng(8)
    assembled = [0]
    search_leg = Assembler.search_leg

    def counted(self: Assembler, *args: object, **kw: object) -> Leg:
        assembled[0] += 1
        return search_leg(self, *args, **kw)  # type: ignore[arg-type]

    routed = 0
    for n in (2, 3, 4, 6, 8, 10, 12, 14, 16, 16, 16, 16):
        phantoms = router.snap_waypoints([pts[int(x)] for x in rng.integers(0, len(pts), n)])
        try:
            want = [_figures(leg) for leg in _reference(router, phantoms, algorithm)]
        except NoRoute:
            want = None
        assembled[0] = 0
        with monkeypatch.context() as m:
            m.setattr(Assembler, "search_leg", counted)
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

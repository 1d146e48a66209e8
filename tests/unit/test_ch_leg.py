"""A hierarchy leg in one kernel call (`app.engine.route.ch_leg`) equals the leg built step by step, to the bit.

The same random waypoints (and waypoints on junction nodes, on one chain, across excluded classes) are routed twice:
through `Legs.leg`'s one-call path, and with that path turned off (every phantom sent the step-by-step way). Every
figure of every leg must be identical, `NoRoute` where the other has none is a failure, and most legs must have
taken the one-call path (else the comparison proves nothing).
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from app.engine.data import load
from app.engine.errors import NoRoute
from app.engine.route import ch_leg, legs
from app.engine.route.space import EdgeSpace
from app.engine.router import Router
from app.engine.types import Leg, RouteOptions
from floor.format.units import COORD_SCALE

# the graphs these tests ask `graph_cache` for, built ahead by conftest's background builder
GRAPHS = [("andorra.osm.pbf", "car", True, 8)]


def _waypoints(router: Router, n: int, seed: int) -> list[tuple[float, float]]:
    """Random points near the graph's roads, road nodes themselves (junctions), and points on one chain."""
    g = router.graph
    rng = np.random.default_rng(seed)
    lon, lat = np.asarray(g.node_lon) / COORD_SCALE, np.asarray(g.node_lat) / COORD_SCALE
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    pts = []
    for _ in range(n):
        v = int(rng.choice(main))
        jitter = rng.uniform(-3e-4, 3e-4, 2) if rng.random() < 0.7 else np.zeros(2)  # exactly on a node: a junction
        pts.append((float(lon[v] + jitter[0]), float(lat[v] + jitter[1])))
    gf, glon, glat = np.asarray(g.geom_first), np.asarray(g.geom_lon), np.asarray(g.geom_lat)
    for c in rng.integers(0, len(gf) - 1, n // 4):  # two points along one chain: a direct stretch or a search
        p0, p1 = int(gf[c]), int(gf[c + 1]) - 1
        for q in (p0, p1) if p1 > p0 else ():
            pts.append((float(glon[q]) / COORD_SCALE + 1e-6, float(glat[q]) / COORD_SCALE))
    return pts


def _figures(leg: Leg) -> dict[str, object]:
    out: dict[str, object] = {}
    for f in fields(leg):
        v = getattr(leg, f.name)
        if f.name == "stats":
            continue
        out[f.name] = (v.dtype.str, v.shape, v.tobytes()) if isinstance(v, np.ndarray) else v
    return out


def _routes(router: Router, pairs: list, options: RouteOptions) -> list[object]:
    got: list[object] = []
    ex = router.exclude_set(options.exclude)
    for a, b in pairs:
        phantoms = router.snap_waypoints([a, b], exclude_mask=ex.mask if ex else 0)
        try:
            route = router.query().routes(phantoms, options).best
        except NoRoute:
            got.append("no route")
            continue
        got.append([_figures(leg) for leg in route.legs])
    return got


def _compare(router: Router, monkeypatch: pytest.MonkeyPatch, seed: int, n: int) -> None:
    assert isinstance(router.space, EdgeSpace), "the one-call leg runs on edge-based graphs"
    pts = _waypoints(router, n, seed)
    rng = np.random.default_rng(seed + 1)
    pairs = [(pts[i], pts[j]) for i, j in rng.integers(0, len(pts), (n, 2))]
    pairs += list(zip(pts[n::2], pts[n + 1 :: 2], strict=False))  # the chains' two ends
    calls = [0]
    one_call = ch_leg.ch_leg

    def counted(*args: object, **kw: object) -> object:
        calls[0] += 1
        return one_call(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(legs, "ch_leg", counted)
    assert router.hot_path.fused  # as after a server's warm-up
    for exclude in (None, frozenset({"motorway"})):
        options = RouteOptions(exclude=exclude)
        fast = _routes(router, pairs, options)
        used = calls[0]
        with monkeypatch.context() as m:
            m.setattr(EdgeSpace, "plain_place", lambda self, ph: None)
            slow = _routes(router, pairs, options)
        assert calls[0] == used, "the step-by-step run took the one-call path"
        assert used >= len(pairs) // 4, f"only {used} of {len(pairs)} legs took the one-call path"
        for k, (x, y) in enumerate(zip(fast, slow, strict=True)):
            assert x == y, f"pair {k} {pairs[k]} (exclude {exclude}): one call and the steps differ"
        calls[0] = 0


def test_one_call_leg_is_the_step_by_step_leg_on_monaco(bundled_graph, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    _compare(Router(load(bundled_graph)), monkeypatch, seed=3, n=160)


@pytest.mark.extracts
def test_one_call_leg_is_the_step_by_step_leg_on_andorra(graph_cache, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    _compare(Router(load(graph_cache("andorra.osm.pbf", "car", True, 8))), monkeypatch, seed=5, n=200)


def test_warm_compiles_what_a_route_runs(bundled_graph) -> None:  # type: ignore[no-untyped-def]
    """`ch_leg.warm` (a first start's compile job, on a graph without hierarchy) compiles the very signatures a
    route on a graph with one calls: afterwards the kernel holds two (the heap search's, the customized CCH's tree
    walk's), and a route adds none."""
    plain = Router(load(bundled_graph))  # its arrays' types are a plain graph's too (read-only, same dtypes)
    ch_leg.warm(plain.space.edges, plain.legs.assembler)  # type: ignore[attr-defined]
    assert len(ch_leg._ch_leg.signatures) == 2
    plain.warmup(("ch",))
    assert len(ch_leg._ch_leg.signatures) == 2

"""Tables on the edge-based Monaco graph: the seeds of many phantoms in one kernel call are each phantom's own seeds,
and every table cell is the plain CH route's weight, distance and duration between its two points."""

from __future__ import annotations

import numpy as np
import pytest

from app.engine.data import load
from app.engine.route.space import SeedSet, _merged, flat_seeds
from app.engine.router import Router
from app.engine.types import RouteOptions, Seeds
from floor.format.units import COORD_SCALE, WEIGHT_PER_SECOND


@pytest.fixture(scope="module")
def monaco(bundled_graph) -> Router:
    return Router(load(bundled_graph))


def some_phantoms(router: Router, k: int, seed: int) -> list:
    """k phantoms near random nodes, every third exactly on a node (a chain's end, seeded on its arcs)."""
    g = router.graph
    rng = np.random.default_rng(seed)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    lon, lat = np.asarray(g.node_lon) / COORD_SCALE, np.asarray(g.node_lat) / COORD_SCALE
    pts = []
    for i, v in enumerate(rng.choice(main, k, replace=False)):
        jitter = (0.0, 0.0) if i % 3 == 0 else tuple(rng.normal(0, 2e-5, 2))
        pts.append((float(lon[v] + jitter[0]), float(lat[v] + jitter[1])))
    return router.snap_waypoints(pts)


def test_seeds_many_are_each_phantoms_seeds(monaco: Router) -> None:
    space = monaco.space
    assert space.edge_based, "the bundled car graph has turns"
    phantoms = some_phantoms(monaco, 40, seed=7)
    assert any(space.at_chain_end(p)[0] >= 0 for p in phantoms), "some phantom on a chain's end"
    assert any(p.at_chains is not None for p in phantoms), "some phantom with its candidate roads (seeded alone)"
    nodes, kinds = space.at_chain_ends(phantoms)
    assert list(zip(nodes.tolist(), kinds.tolist(), strict=True)) == [space.at_chain_end(p) for p in phantoms]
    for as_source in (True, False):
        many = space.seeds_many(phantoms, as_source)
        one = flat_seeds([space.seeds(p, as_source).seeds for p in phantoms])
        for name, a, b in zip(many._fields, many, one, strict=True):
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), f"as_source={as_source}: {name} differs"


def test_table_cells_are_the_routes(monaco: Router) -> None:
    phantoms = some_phantoms(monaco, 12, seed=11)
    q = monaco.query()
    tbl = q.table(phantoms[:6], phantoms[6:])
    for i, a in enumerate(phantoms[:6]):
        for j, b in enumerate(phantoms[6:]):
            best = q.routes([a, b], RouteOptions()).best
            assert round(tbl.durations_s[i, j] * WEIGHT_PER_SECOND) == round(best.duration_s * WEIGHT_PER_SECOND)
            assert abs(tbl.distances_m[i, j] - best.distance_m) <= 1.0  # decimetre arcs vs OSRM formula


def test_merged_seed_sets_may_all_be_empty() -> None:
    """A point on a junction whose own arcs and candidate roads seed nothing (a target no turn reaches) has no seeds:
    a NoRoute, not an error."""
    z = np.zeros(0, dtype=np.int64)
    empty = SeedSet(Seeds(np.zeros(0, dtype=np.int32), z, z, 0.0, 0.0, z), z, np.zeros((0, 2), dtype=np.int64))
    got = _merged([empty, empty])
    assert len(got.seeds.nodes) == 0 and got.turns.shape == (0, 2)


def test_matrix_blocks_with_kept_buckets_are_the_whole_table(monaco: Router) -> None:
    """A matrix's blocks (`reuse_buckets`, column ranges asked again and again) give the whole table's cells: points
    mid-chain and on nodes, the same point on both sides, unreachable pairs (a destination on a tiny component), and
    with an exclude class."""
    g = monaco.graph
    phantoms = some_phantoms(monaco, 30, seed=5)
    tiny = np.flatnonzero(np.asarray(g.node_component) != 0)
    assert len(tiny), "Monaco has nodes off the main component"
    v = int(tiny[0])
    off = monaco.snap_waypoints([(float(g.node_lon[v]) / COORD_SCALE, float(g.node_lat[v]) / COORD_SCALE)])
    dst = phantoms[10:] + off
    for exclude in ((), ("motorway",)):
        whole = monaco.query().table(phantoms, dst, exclude)
        q = monaco.query()
        for _ in range(2):
            for j in range(0, len(dst), 7):  # down each column range, twice: the second pass all from kept buckets
                for i in range(0, len(phantoms), 9):
                    part = q.table(phantoms[i : i + 9], dst[j : j + 7], exclude, reuse_buckets=True)
                    for got, want in ((part.durations_s, whole.durations_s), (part.distances_m, whole.distances_m)):
                        np.testing.assert_array_equal(got, want[i : i + 9, j : j + 7])
        assert np.isnan(whole.durations_s).any() or exclude, "some pair unreachable"

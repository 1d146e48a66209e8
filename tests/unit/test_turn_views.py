"""The turn stage's numba kernels (`floor.intersections.views`, `geo_kernels`) give the Python intersection
model's numbers bit for bit: every turn of the bundled Monaco through `osrm_turn_views` (kernels, the Python model
where roads may merge) equals the Python model alone, and the geometry kernels equal `geo` / `coordinates` on
random shapes. `bench/turn_stage.py --compare` checks the whole stage's arrays on bigger extracts."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from floor.format.road_classification import compressed_nodes
from floor.intersections import coordinates, geo, geo_kernels
from floor.intersections.views import turn_views
from floor.kernels.jit import kernel
from preprocessing.build import build_arrays
from preprocessing.osm.profiles import car
from preprocessing.osm.read import read_nodes, read_ways
from preprocessing.osm.restrictions import osrm_via_nodes, read_restrictions
from preprocessing.turns import candidate_turns, osrm_turn_views, python_turn_views

MONACO = Path(__file__).resolve().parents[2] / "data" / "monaco.osm.pbf"


@pytest.fixture(scope="module")
def monaco() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Monaco's car road graph as the turn stage gets it, and its turns at the nodes OSRM keeps."""
    ways = read_ways(MONACO, car)
    nodes = read_nodes(MONACO, np.unique(ways.refs), car)
    restrictions, _ = read_restrictions(MONACO, car)
    vias = osrm_via_nodes(restrictions, ways.osm_id, ways.first, ways.refs)
    arrays, _ = build_arrays(ways, nodes, obstacles_on_turns=True, hard_osm_ids=vias)
    fa, ta = candidate_turns(arrays)
    keep = ~compressed_nodes(arrays)[arrays["arc_head"][fa]]
    return arrays, fa[keep], ta[keep]


def test_turn_views_equal_the_python_model(monaco: tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]) -> None:
    arrays, fa, ta = monaco
    fast = osrm_turn_views(arrays, "car", fa, ta)
    slow = python_turn_views(arrays, "car", fa, ta)
    names = ("got", "angle", "roads", "u_turn", "against_roundabout", "stop_skipped")
    for name, a, b in zip(names, fast, slow, strict=True):
        assert a.dtype == b.dtype, name
        assert np.array_equal(a, b), f"{name}: {np.flatnonzero(a != b)[:10]}"
    assert slow[0].sum() > 0.9 * len(fa) and slow[3].any()  # the views have the roads; some turns are u-turns


def test_the_kernels_give_most_turns(monaco: tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]) -> None:
    """Only junctions where roads may merge (or near one) go to the Python model: the kernels' own numbers cover
    most turns, and equal the model's there."""
    arrays, fa, ta = monaco
    got, angle, roads, u_turn, against, todo = turn_views(arrays, "car", fa, ta)
    assert 0 < todo.sum() < 0.25 * len(fa)
    ok = ~todo
    s_got, s_angle, s_roads, s_u, s_against, _ = python_turn_views(arrays, "car", fa[ok], ta[ok])
    assert np.array_equal(got[ok], s_got) and np.array_equal(angle[ok], s_angle)
    assert np.array_equal(roads[ok], s_roads) and np.array_equal(u_turn[ok], s_u)
    assert np.array_equal(against[ok], s_against)


def _shape(rng: np.random.Generator, n: int) -> list[tuple[int, int]]:
    """A random walk of n points near Monaco (1e-6 degrees), steps of a few metres, some repeated points."""
    x, y = 7_420_000 + int(rng.integers(-5000, 5000)), 43_735_000 + int(rng.integers(-5000, 5000))
    pts = [(x, y)]
    heading = rng.uniform(0, 2 * math.pi)
    for _ in range(n - 1):
        heading += rng.normal(0, 0.6)
        step = 0 if rng.random() < 0.05 else rng.uniform(1, 40)
        x += int(step * math.sin(heading) * 12)
        y += int(step * math.cos(heading) * 9)
        pts.append((x, y))
    return pts


@kernel
def _geometry(xs: np.ndarray, ys: np.ndarray, rulers: np.ndarray) -> tuple:  # type: ignore[type-arg]
    """The geometry kernels on one shape (they are `inner`: callable from kernels only)."""
    n = len(xs)
    none = np.zeros(1, np.float64)
    return (
        geo_kernels._distance(xs[0], ys[0], xs[n - 1], ys[n - 1], rulers),
        geo_kernels._bearing(xs[0], ys[0], xs[n - 1], ys[n - 1], rulers),
        geo_kernels._length(xs, ys, rulers),
        geo_kernels._regression(xs, ys),
        geo_kernels._at_length(7.5, xs, ys, none, False, rulers),
        geo_kernels._trim(xs, ys, 12.0, none, False, rulers),
        geo_kernels._sample(xs, ys, 40.0, 1.0, rulers),
    )


@pytest.mark.parametrize("seed", range(3))
def test_geometry_kernels_equal_geo(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rulers = geo_kernels.rulers()
    for _ in range(300):
        pts = _shape(rng, int(rng.integers(2, 12)))
        xs, ys = (np.array(c, dtype=np.int64) for c in zip(*pts, strict=True))
        distance, bearing, length, regression, at_length, (tx, ty), (sx, sy) = _geometry(xs, ys, rulers)
        assert distance == geo.distance(pts[0], pts[-1])
        assert bearing == geo.bearing(pts[0], pts[-1])
        assert length == geo.length(pts)
        assert regression == tuple(c for p in geo.regression(pts) for c in p)
        assert at_length == coordinates.coordinate_at_length(7.5, pts)
        assert list(zip(tx.tolist(), ty.tolist(), strict=True)) == coordinates.trim_to_length(pts, 12.0)
        assert list(zip(sx.tolist(), sy.tolist(), strict=True)) == coordinates.sample(pts, 40.0, 1.0)


def test_views_in_processes_equal_one_process_and_a_dead_process_is_an_error(
    monaco: tuple[dict[str, np.ndarray], np.ndarray, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Big graphs compute the Python model's views in forked processes: the same numbers as in one process; a
    process that dies (as the OOM killer ends one) stops the stage with an error instead of waiting for it forever."""
    import os
    import signal

    from preprocessing import turns

    arrays, fa, ta = monaco
    one = python_turn_views(arrays, "car", fa, ta)
    monkeypatch.setattr(turns, "_PARALLEL_VIEWS_FROM", 0)
    forked = python_turn_views(arrays, "car", fa, ta)
    for a, b in zip(one, forked, strict=True):
        assert np.array_equal(a, b)

    real = turns._view_chunk

    def dies_on_the_first_chunk(bounds: tuple[int, int]):  # type: ignore[no-untyped-def]
        if bounds[0] == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(bounds)

    # pickled by name, as the real one: the forked processes find it in their copy of the module
    dies_on_the_first_chunk.__module__, dies_on_the_first_chunk.__qualname__ = turns.__name__, "_view_chunk"
    monkeypatch.setattr(turns, "_view_chunk", dies_on_the_first_chunk)
    with pytest.raises(RuntimeError, match="died"):
        python_turn_views(arrays, "car", fa, ta)

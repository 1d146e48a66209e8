"""`floor.kernels.measure`: the numpy twins the light commands use give the kernels' numbers bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from floor.format.graph import load_graph
from floor.kernels.geometry import osrm_distances_m
from floor.kernels.measure import osrm_lengths_m


def test_segment_lengths_equal_the_kernels_on_a_real_extract(bundled_graph: Path) -> None:
    g = load_graph(bundled_graph, metric=False)
    lon = np.asarray(g.geom_lon, dtype=np.float64) / 1e7
    lat = np.asarray(g.geom_lat, dtype=np.float64) / 1e7
    want = osrm_distances_m(lon[:-1], lat[:-1], lon[1:], lat[1:])
    got = osrm_lengths_m(lon[:-1], lat[:-1], lon[1:], lat[1:])
    assert len(got) > 5000 and np.array_equal(got, want)


@pytest.mark.parametrize("spread", [0.001, 2.0, 90.0])
def test_segment_lengths_equal_the_kernels_anywhere(spread: float) -> None:
    """Random pairs over the whole globe (both hemispheres, the poles' bands, across the antimeridian)."""
    rng = np.random.default_rng(int(spread * 1000))
    n = 200_000
    lon1, lat1 = rng.uniform(-180, 180, n), rng.uniform(-90, 90, n)
    lon2 = np.clip(lon1 + rng.normal(0, spread, n), -180, 180)
    lat2 = np.clip(lat1 + rng.normal(0, spread, n), -90, 90)
    lon2[:500] = -lon1[:500]
    lon1[500:1000], lon2[500:1000] = 179.9999995, -179.9999995  # halves at the fixed point's rounding
    assert np.array_equal(osrm_lengths_m(lon1, lat1, lon2, lat2), osrm_distances_m(lon1, lat1, lon2, lat2))

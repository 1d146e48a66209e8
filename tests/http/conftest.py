"""Fixtures the dialect clients' tests share (OSRM's, Valhalla's and GraphHopper's through routingpy): the bundled
Monaco's session server (`base`), a client of it (`client`), and seeded road points (`points`, `ROAD_PAIRS` pairs).
A module that defines a fixture of the same name uses its own."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from harness import api_server
from tests.osrm.test_osrm_api import random_points

ROAD_PAIRS = 6  # seeded point pairs per check


@pytest.fixture(scope="module")
def base(bundled_graph: Path) -> str:
    return api_server.shared(bundled_graph)


@pytest.fixture(scope="module")
def client(base: str):
    with httpx.Client(base_url=base, timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def points(bundled_graph: Path) -> list[tuple[float, float]]:
    from app.engine.data import load

    return random_points(load(bundled_graph), 2 * ROAD_PAIRS, 43)

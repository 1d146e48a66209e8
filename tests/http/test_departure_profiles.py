"""Departure time end to end (issue 44): a copy of Monaco customized with hand-written profile files (`starroute
customize --time-profiles --segment-profiles`: a weekday rush hour on every primary road) served by the app; over
HTTP a Monday 08:00 departure takes longer than 03:00 across the profiled roads, equals the oracle
(`algorithm=dijkstra` with the same `depart_at`), 03:00 equals the graph without profiles; that graph answers
`depart_at` with its static durations at any time (the fastest route by travel time: never slower than the static
route, which minimises the profile's weight)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from floor.format.graph import load_graph
from preprocessing.customize import customize
from preprocessing.metric import arc_segments
from preprocessing.osm.time_profiles import PROFILE_HEADER, SEGMENT_HEADER

MONDAY_8, MONDAY_3 = "2026-03-02T08:00", "2026-03-02T03:00"
RUSH = [50 if 30 <= q < 36 else 100 for q in range(96)]  # 50 % from 07:30 to 09:00


class App:
    """The app on a graph directory, asked in process (ASGI)."""

    def __init__(self, graph: Path) -> None:
        from app.main import create_app
        from app.settings import Settings

        self.app = create_app(Settings(graph_dir=graph))
        self.app.state.service.open()

    def get(self, path: str, **params: Any) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                return await c.get(path, params=params, timeout=120)

        return asyncio.run(go())

    def duration(self, a: tuple[float, float], b: tuple[float, float], **params: str) -> float:
        r = self.get("/route", **{"from": f"{a[0]},{a[1]}", "to": f"{b[0]},{b[1]}", "overview": "false", **params})
        assert r.status_code == 200, r.text
        return float(r.json()["properties"]["duration_s"])


def rush_hour_copy(bundled_graph: Path, tmp: Path) -> Path:
    """A copy of Monaco in `tmp` customized with profile files: `RUSH` on weekdays on every primary road."""
    g = tmp / "monaco"
    shutil.copytree(bundled_graph, g)
    arrays = dict(load_graph(g, metric=False).arrays)
    arc, a, b, _ = arc_segments(arrays, lengths=False)
    osm = np.asarray(arrays["geom_osm_id"])
    primary = np.flatnonzero(np.asarray(arrays["arc_class"])[arc] == 5)
    week = ",".join(["rush"] * 5 + ["free"] * 2)
    tp = tmp / "time_profiles.csv"
    tp.write_text(
        "\n".join([",".join(PROFILE_HEADER), "rush," + ",".join(map(str, RUSH)), "free" + ",100" * 96]) + "\n"
    )
    sp = tmp / "segment_profiles.csv"
    lines = {f"{osm[a[i]]},{osm[b[i]]},{week}" for i in primary}
    sp.write_text("\n".join([",".join(SEGMENT_HEADER), *sorted(lines)]) + "\n")
    done = customize(g, time_profiles=tp, segment_profiles=[sp])
    assert done.time is not None and done.time.arcs_timed > 0
    return g


@pytest.fixture(scope="module")
def profiled(bundled_graph: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    yield App(rush_hour_copy(bundled_graph, tmp_path_factory.mktemp("monaco-td")))


def points(graph: Path, k: int) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    g = load_graph(graph, metric=False)
    big = np.flatnonzero(np.asarray(g.node_component) == 0)
    nodes = np.random.default_rng(11).choice(big, 2 * k)
    pts = [(float(g.node_lon[v]) / 1e7 + 1e-5, float(g.node_lat[v]) / 1e7 + 1e-5) for v in nodes]
    return list(zip(pts[::2], pts[1::2], strict=True))


@pytest.fixture(scope="module")
def plain(bundled_graph: Path) -> App:
    return App(bundled_graph)


def test_a_customized_graph_answers_the_rush_hour(profiled: App, plain: App, bundled_graph: Path) -> None:
    longer = 0
    for a, b in points(bundled_graph, 12):
        free = plain.duration(a, b, depart_at=MONDAY_8)
        night = profiled.duration(a, b, depart_at=MONDAY_3)
        rush = profiled.duration(a, b, depart_at=MONDAY_8)
        oracle = profiled.duration(a, b, depart_at=MONDAY_8, algorithm="dijkstra")
        assert night == free  # 100 % at 03:00: the static travel times
        assert rush == oracle and rush >= night
        longer += rush > night + 1
    assert longer >= 6, longer  # most of Monaco's routes cross a primary road


def test_a_graph_without_profiles_answers_static_durations(plain: App, bundled_graph: Path) -> None:
    for a, b in points(bundled_graph, 6):
        rush = plain.duration(a, b, depart_at=MONDAY_8)
        assert rush == plain.duration(a, b, depart_at=MONDAY_3) == plain.duration(a, b, depart_at="2026-03-07T17:45")
        assert rush == plain.duration(a, b, depart_at=MONDAY_8, algorithm="dijkstra")
        assert rush <= plain.duration(a, b) + 0.05  # the static route minimises the weight, this the travel time


def test_health_says_whether_the_graph_has_time_profiles(profiled: App, plain: App) -> None:
    """The map page shows its departure-time controls only where `/health` says the graph has time profiles."""
    graph = profiled.get("/health").json()["graph"]
    assert graph["time_profiles"] is True and graph["timezone"]
    assert plain.get("/health").json()["graph"]["time_profiles"] is False

"""OSRM's own guidance features replayed: every route row of the car scenarios of OSRM's features/guidance/*.feature
files, starroute's answer against osrm-routed 26.10's on the same map.

`tests/osrm/guidance_features.json` is written by `python -m harness.osrm_guidance_features --features DIR
--record tests/osrm/guidance_features.json`, which ran both servers on one map of every scenario: it holds the scenarios
(drawing, ways, nodes, relations, grid) and, per route row, osrm-routed's answer (`route`, `turns` with type,
modifier and roundabout exit, `lanes`, ... as OSRM's harness writes them) and whether starroute agreed then. Rows that
agreed must keep agreeing; rows that did not are strict xfails, so a fix that makes one agree fails here until the
record is written again. All scenarios go into one map in the record's order, so each lies where osrm-routed saw it
(`tests/osrm/test_guidance_http.py`'s harness), one server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness import api_server
from harness.guidance_scenarios import Scenario, all_osm, answer, request
from preprocessing.pipeline import preprocess

RECORD = json.loads(Path(__file__).with_name("guidance_features.json").read_text(encoding="utf-8"))
SCENARIOS = {
    f"{feature}: {title}": Scenario(**sc) for feature, rec in RECORD.items() for title, sc in rec["scenarios"].items()
}
DIFFERS = pytest.mark.xfail(strict=True, reason="differs from osrm-routed (harness/osrm_guidance_features.py)")
ROWS = [
    pytest.param(
        f"{feature}: {r['scenario']}",
        r,
        marks=() if r["agree"] else DIFFERS,
        id=f"{feature}: {r['scenario']}: {r['row'].get('waypoints') or r['row']['from'] + ',' + r['row']['to']}",
    )
    for feature, rec in RECORD.items()
    for r in rec["rows"]
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    tmp = tmp_path_factory.mktemp("guidance_features")
    osm = tmp / "features.osm"
    osm.write_text(all_osm(SCENARIOS), encoding="utf-8")
    graph = preprocess(osm, tmp / "graph", profile="car", ch=True, landmarks=0, force=True, quiet=True)
    base = api_server.shared(graph, env={"STARROUTE_MIN_COMPONENT_SIZE": "1"})
    with httpx.Client(base_url=base, timeout=30.0) as c:
        yield c


@pytest.mark.parametrize(("name", "rec"), ROWS)
def test_feature_row(client: httpx.Client, name: str, rec: dict[str, Any]) -> None:
    path, query = request(name, rec["row"], SCENARIOS)
    body = client.get(path, params=query).json()
    got = answer(body, list(rec["osrm"])) if body.get("code") == "Ok" else {"code": body.get("code")}
    assert got == rec["osrm"]


def test_record_covers_the_groups() -> None:
    """The issue's guidance layouts are all in the record."""
    assert {"roundabout", "rotary", "collapse", "merge-segregated-roads", "dedicated-turn-roads"} <= set(RECORD)
    assert {"turn-angles", "advanced-lanes", "maneuver-tag"} <= set(RECORD)

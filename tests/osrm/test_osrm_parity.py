"""OSRM's behaviour in its last corners (issue 46), as map tables through the real server: every row is osrm-routed
26.10's answer on the same drawn map (step names, distance m, duration s, weight).

Each case is a small map of the kind OSRM's own feature files draw (`harness/asciimap.py`), preprocessed by starroute
and served as a client sees it; the rows were recorded from osrm-routed (the `osrm-bindings` wheel) on the same OSM
file. `test_rows_are_osrm_routeds` checks the recordings against a live osrm-routed where it can be installed;
`python -m tests.osrm.test_osrm_parity [CASE ...]` prints osrm-routed's rows to paste into `parity_cases.py` (the cases
and their rows) when a case changes.

Groups:
- turns at junctions as OSRM's intersection model sees them: perceived bearings a few metres from a junction (a
  hairpin or a tunnel bend can be a u-turn there), the nodes OSRM's graph compressor keeps (one of two roads between
  the same junctions keeps a node), u-turns at turning circles and only where one road arrives.
- snapping: no waypoint on a private service road (unless `snapping=any`; `/nearest` never), a phantom's share of
  its segment along OSRM's edge.
- node penalties: car.lua's conditional stop signs (`stop=minor`, a stop sign with no direction near a junction);
  a segment speed file keeps a signal's penalty in its direction (`test_speed_file_keeps_signals`).
- access: lib/access.lua's `;`-lists (car, bicycle, foot) and car.lua's access values; bicycle.lua's closed
  directions and carriageways whose cycleway is mapped apart, `cycleway:both`.
- turn restrictions: `restriction:bicycle` and `except=` for bicycles (items as written), none for foot, a car
  `only_*` over two via ways.
- smaller: a ferry's duration, car.lua's access with conditional values, gates with access tags, surface and
  maxspeed; bicycle pushing on a pedestrian area and `use_sidepath`; foot over a bridge without a shared node and a
  name suffix change.
- via points exactly on a node (OSRM's candidates: one phantom per road there): `continue_straight` at 3-way and
  4-way junctions, a dead end and a node inside a straight road (car, testbot); the legs' rounded distances summed.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import httpx
import pytest

from harness import api_server, asciimap
from tests.osrm.parity_cases import CASES, URL_PROFILE, Answer, Case, Point, Row


def _lonlat(built_coords: Mapping[str, tuple[int, int]], p: Point) -> str:
    if isinstance(p, str):
        lon, lat = built_coords[p]
    else:
        (ax, ay), (bx, by) = built_coords[p[0]], built_coords[p[1]]
        lon, lat = ax + p[2] * (bx - ax), ay + p[2] * (by - ay)
    return f"{lon / 1e7:.6f},{lat / 1e7:.6f}"


def answer(base: str, case: Case, row: Row) -> Answer:
    """A server's answer to a row's request: (step names, distance m, duration s, weight), or the error code."""
    coords = asciimap.coordinates(case.drawing, case.grid_m)
    pts = ";".join(_lonlat(coords, p) for p in (row.a, row.via, row.b) if p is not None)
    body = httpx.get(f"{base}/route/v1/{URL_PROFILE[case.profile]}/{pts}?steps=true{row.query}", timeout=60).json()
    if body.get("code") != "Ok":
        return str(body.get("code"))
    r = body["routes"][0]
    names = ",".join(s["name"] for leg in r["legs"] for s in leg["steps"])
    return names, round(r["distance"], 1), round(r["duration"], 1), round(r["weight"], 1)


def _write(tmp: Path, case: Case) -> Path:
    return asciimap.write_osm(tmp / "map.osm", case.drawing, case.ways, case.nodes, case.grid_m, case.relations)


def _cases() -> list:
    """The case names, a case with a known gap as a strict xfail (it must fail until the gap is closed)."""
    gap = pytest.mark.xfail
    return [pytest.param(n, marks=gap(strict=True, reason=CASES[n].known_gap)) if CASES[n].known_gap else n
            for n in sorted(CASES)]  # fmt: skip


@pytest.mark.parametrize("name", _cases())
def test_as_osrm_routed(name: str, tmp_path: Path) -> None:
    from preprocessing.pipeline import preprocess

    case = CASES[name]
    assert case.rows, f"{name} has no rows: record them (python -m tests.osrm.test_osrm_parity {name})"
    graph = preprocess(_write(tmp_path, case), tmp_path / "graph", profile=case.profile, landmarks=0, quiet=True)
    base = api_server.shared(graph)
    got = [answer(base, case, row) for row in case.rows]
    assert got == [row.expected for row in case.rows]


@pytest.mark.parametrize(
    "direction, along, against",
    [(None, 35.2, 35.2), ("forward", 35.2, 33.2), ("backward", 33.2, 35.2)],
)
def test_speed_file_keeps_signals(direction: str | None, along: float, against: float, tmp_path: Path) -> None:
    """OSRM's traffic_light_penalties.feature, "Traffic update on the edge with a traffic signal": a segment speed
    file (osrm-contract's `--segment-speed-file`, here `starroute customize`) replaces the speeds but keeps the
    signal's 2 s in its direction. osrm-routed 26.10's durations on the same map, a -> c and c -> a."""
    from preprocessing.customize import customize
    from preprocessing.pipeline import preprocess

    drawing = "a  b  c"
    signal = {"highway": "traffic_signals", **({"traffic_signals:direction": direction} if direction else {})}
    osm = asciimap.write_osm(tmp_path / "map.osm", drawing, [("abc", {"highway": "primary"})], {"b": signal})
    graph = preprocess(osm, tmp_path / "graph", landmarks=0, quiet=True)
    speeds = tmp_path / "speeds.csv"
    speeds.write_text("1,2,65\n2,1,65\n")
    customize(graph, [speeds])
    base = api_server.shared(graph)
    coords = asciimap.coordinates(drawing)
    got = []
    for a, b in (("a", "c"), ("c", "a")):
        pts = f"{_lonlat(coords, a)};{_lonlat(coords, b)}"
        route = httpx.get(f"{base}/route/v1/driving/{pts}", timeout=60).json()["routes"][0]
        got.append((round(route["duration"], 1), round(route["weight"], 1)))
    assert got == [(along, along), (against, against)]


def test_nearest_ignores_snapping_any(tmp_path: Path) -> None:
    """osrm-routed's `/nearest` never snaps onto a road that refuses waypoints, `snapping=any` or not (its plugin
    does not pass the option on): Street 59.9 m away, not the private driveway under the point."""
    from preprocessing.pipeline import preprocess

    case = CASES["private_service"]
    graph = preprocess(_write(tmp_path, case), tmp_path / "graph", landmarks=0, quiet=True)
    base = api_server.shared(graph)
    point = _lonlat(asciimap.coordinates(case.drawing, case.grid_m), ("b", "d", 0.6))
    for query in ("", "&snapping=any"):
        body = httpx.get(f"{base}/nearest/v1/driving/{point}?number=1{query}", timeout=60).json()
        assert [(w["name"], round(w["distance"], 1)) for w in body["waypoints"]] == [("Street", 59.9)]


def osrm_rows(name: str, bin_dir: Path) -> list[Row]:
    """osrm-routed's answers to a case's requests, on the same map."""
    from harness.osrm_peer import prepare_osrm_profile
    from harness.servers import start_osrm, stop

    case = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_osrm(bin_dir, prepare_osrm_profile(bin_dir, _write(Path(tmp), case), case.profile))
        try:
            return [Row(r.a, r.b, r.query, answer(base, case, r), r.via) for r in case.rows]
        finally:
            stop(proc)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_rows_are_osrm_routeds(name: str) -> None:
    """The recorded rows are what osrm-routed 26.10 answers on the same map (skipped where it cannot be installed)."""
    from harness.osrm_peer import ensure_osrm

    bin_dir = ensure_osrm(Path(tempfile.gettempdir()) / "starroute-osrm")
    if bin_dir is None:
        pytest.skip("osrm-bindings (osrm-routed) cannot be installed here")
    live = osrm_rows(name, bin_dir)
    assert live == list(CASES[name].rows), "\n".join(repr(r) for r in live)


if __name__ == "__main__":  # print osrm-routed's rows of the cases named (all by default), to paste above
    from harness.osrm_peer import ensure_osrm

    found = ensure_osrm(Path(tempfile.gettempdir()) / "starroute-osrm")
    assert found is not None, "osrm-bindings cannot be installed here"
    for case_name in sys.argv[1:] or sorted(CASES):
        print(case_name)
        for row in osrm_rows(case_name, found):
            print(f"    {row!r},")

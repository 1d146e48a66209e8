"""The Python library (`import starroute`): it answers exactly what the HTTP API answers for the same request, on
the bundled Monaco graph, for every method; its inputs, outputs, blocks, accessibility and retries; its doctests."""

from __future__ import annotations

import doctest
import math
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import orjson
import pytest

import starroute
from harness import api_server
from starroute.blocks import AccessSpec, access_block
from starroute.runner import Block, plan, run_local
from starroute.sinks import DenseSink
from tests.osrm.test_osrm_api import random_points

A, B, VIA = (7.4197, 43.7311), (7.4246, 43.7384), (7.4200, 43.7350)


def _ll(p: tuple[float, float]) -> str:
    return f"{p[0]},{p[1]}"


def _json(x: Any) -> Any:
    """Through JSON, as the HTTP API serialises it (numpy arrays as lists)."""
    return orjson.loads(orjson.dumps(x, option=orjson.OPT_SERIALIZE_NUMPY))


@pytest.fixture(scope="module")
def graph(bundled_graph: Path) -> starroute.Graph:
    return starroute.load(bundled_graph)


@pytest.fixture(scope="module")
def http(bundled_graph: Path):
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def points(graph: starroute.Graph) -> list[tuple[float, float]]:
    return random_points(graph.engine.graph, 24, seed=22)


# -- the same answers as the HTTP API --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"via": [VIA]},
        {"algorithm": "alt"},
        {"algorithm": "dijkstra", "via": [VIA]},
        {"exclude": "motorway"},
        {"alternatives": 1},
    ],
)
def test_route_is_the_http_route(graph: starroute.Graph, http: httpx.Client, kwargs: dict[str, Any]) -> None:
    params: dict[str, Any] = {"from": _ll(A), "to": _ll(B)}
    if "via" in kwargs:
        params["via"] = ";".join(_ll(p) for p in kwargs["via"])
    params.update({k: v for k, v in kwargs.items() if k != "via"})
    body = http.get("/route", params=params).json()
    r = graph.route(A, B, **kwargs)
    props = body["properties"]
    assert (r.duration_s, r.distance_m, r.algorithm) == (props["duration_s"], props["distance_m"], props["algorithm"])
    assert np.round(r.coordinates, 7).tolist() == body["geometry"]["coordinates"]
    assert [(leg.duration_s, leg.distance_m) for leg in r.legs] == [
        (leg["duration_s"], leg["distance_m"]) for leg in props["legs"]
    ]
    assert [(list(w.location), w.distance_m, w.name) for w in r.waypoints] == [
        (w["location"], w["distance_m"], w["name"]) for w in props["waypoints"]
    ]
    assert list(r.exclude) == props["exclude"]
    alts = props.get("alternatives", [])
    assert [(a.duration_s, a.distance_m) for a in r.alternatives] == [
        (a["properties"]["duration_s"], a["properties"]["distance_m"]) for a in alts
    ]
    assert r.geojson["geometry"] == body["geometry"]


def test_table_is_the_http_table(graph: starroute.Graph, http: httpx.Client, points: list) -> None:
    src, dst = points[:10], points[10:]
    body = http.post("/table", json={"sources": src, "destinations": dst}).json()
    m = graph.table(src, dst)
    assert m.shape == (10, 14)
    for ours, theirs in ((m.durations_s, body["durations_s"]), (m.distances_m, body["distances_m"])):
        expected = np.array([[math.nan if v is None else v for v in row] for row in theirs])
        np.testing.assert_array_equal(ours, expected)
    for ours_w, theirs_w in ((m.sources, body["sources"]), (m.destinations, body["destinations"])):
        assert [(list(w.location), w.distance_m) for w in ours_w] == [
            (w["location"], w["distance_m"]) for w in theirs_w
        ]
    square = http.post("/table", json={"sources": src}).json()
    np.testing.assert_array_equal(graph.table(src).durations_s, np.array(square["durations_s"], dtype=float))


def test_table_is_the_osrm_table(graph: starroute.Graph, http: httpx.Client, points: list) -> None:
    """OSRM's `/table/v1` rounds to 0.1: the library's cells, rounded, are its cells."""
    pts = points[:12]
    coords = ";".join(f"{lon!r},{lat!r}" for lon, lat in pts)
    body = http.get(f"/table/v1/driving/{coords}", params={"annotations": "duration,distance"}).json()
    m = graph.table(pts)
    assert body["code"] == "Ok"
    np.testing.assert_array_equal(np.round(m.durations_s, 1), np.array(body["durations"], dtype=float))
    np.testing.assert_array_equal(np.round(m.distances_m, 1), np.array(body["distances"], dtype=float))


def test_nearest_is_the_http_nearest(graph: starroute.Graph, http: httpx.Client, points: list) -> None:
    for p in [A, *points[:3]]:
        body = http.get("/nearest", params={"point": _ll(p), "number": 3}).json()
        [found] = graph.nearest(p, number=3)
        assert [(list(w.location), w.distance_m, w.name, list(w.nodes)) for w in found] == [
            (
                f["geometry"]["coordinates"],
                f["properties"]["distance_m"],
                f["properties"]["name"],
                f["properties"]["nodes"],
            )
            for f in body["features"]
        ]
    many = graph.nearest(np.array(points[:3]))
    assert [w[0].location for w in many] == [graph.nearest(p)[0][0].location for p in points[:3]]


@pytest.mark.parametrize(
    "kwargs, params",
    [
        ({"minutes": [2, 4]}, {"minutes": "2,4"}),
        ({"distance_m": 800, "reverse": True}, {"distance_m": "800", "reverse": "true"}),
    ],
)
def test_isochrone_is_the_http_isochrone(
    graph: starroute.Graph, http: httpx.Client, kwargs: dict[str, Any], params: dict[str, str]
) -> None:
    body = http.get("/isochrone", params={"point": _ll(A), **params}).json()
    iso = graph.isochrone(A, **kwargs)
    assert _json(iso.geojson) == body


@pytest.mark.parametrize(
    "call, request_",
    [
        (lambda g: g.route((7.5, 43.9), B), ("GET", "/route", {"from": "7.5,43.9", "to": _ll(B)})),
        (
            lambda g: g.route(A, B, exclude="bridges"),
            ("GET", "/route", {"from": _ll(A), "to": _ll(B), "exclude": "bridges"}),
        ),
        (lambda g: g.route(A, B, alternatives=4), ("GET", "/route", {"from": _ll(A), "to": _ll(B), "alternatives": 4})),
        (lambda g: g.nearest((7.5, 43.9)), ("GET", "/nearest", {"point": "7.5,43.9"})),
        (lambda g: g.isochrone(A, minutes=500), ("GET", "/isochrone", {"point": _ll(A), "minutes": "500"})),
        (lambda g: g.table([A, (7.5, 43.9)]), ("POST", "/table", {"sources": [list(A), [7.5, 43.9]]})),
    ],
)
def test_errors_are_the_http_errors(graph: starroute.Graph, http: httpx.Client, call: Any, request_: tuple) -> None:
    method, path, args = request_
    r = http.get(path, params=args) if method == "GET" else http.post(path, json=args)
    assert r.status_code == 400
    body = r.json()
    with pytest.raises(starroute.RoutingError) as err:
        call(graph)
    assert err.value.code == body["code"]
    if body["code"] != "InvalidValue" or path != "/route" or "alternatives" not in args:  # pydantic words the last
        assert err.value.message == body["message"]


def test_typed_errors(graph: starroute.Graph, tmp_path: Path) -> None:
    with pytest.raises(starroute.NoSegment) as e:
        graph.route((7.5, 43.9), B)
    assert e.value.code == "NoSegment"
    with pytest.raises(starroute.InvalidValue):
        graph.table([(200.0, 43.7)])
    with pytest.raises(starroute.InvalidValue):
        graph.route(A, B, via=[VIA], alternatives=1)
    with pytest.raises(starroute.GraphError):
        starroute.load(tmp_path / "missing")
    with pytest.raises(starroute.PreprocessError):
        starroute.preprocess(tmp_path / "missing.osm.pbf", tmp_path / "out")


def test_printed_results_are_one_line(graph: starroute.Graph) -> None:
    """`print(route)` was 17,500 characters of arrays (42,000 with alternatives): a result prints as one short line
    with its figures, the rest stays in its fields."""
    r = graph.route(A, B, alternatives=2)
    text = repr(r)
    assert len(text) < 200 and "\n" not in text, text
    assert text.startswith(f"<starroute.Route {r.distance_m:.1f} m, {r.duration_s:.1f} s by ch from ")
    assert repr(r.waypoints[0].name) in text and f"{len(r.coordinates)} points" in text
    assert f"{len(r.alternatives)} alternatives>" in text and str(r) == text
    assert repr(r.legs[0]) == f"<starroute.Leg {r.legs[0].distance_m:.1f} m, {r.legs[0].duration_s:.1f} s, " + (
        f"{len(r.legs[0].coordinates)} points>"
    )
    assert "2 legs" in repr(graph.route(A, B, via=[VIA]))
    assert repr(graph.table([A, B, (7.4200, 43.7350)])) == "<starroute.Matrix 3 x 3, 0 pairs unreachable>"
    iso = graph.isochrone(A, minutes=[2, 4])
    assert repr(iso).startswith("<starroute.Isochrone 4, 2 min from ") and len(repr(iso)) < 120, repr(iso)
    assert all(len(repr(b)) < 80 for b in iso.bands), iso.bands


def test_a_missing_extra_says_how_to_install_it_from_the_clone(
    graph: starroute.Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """starroute is not on PyPI: a missing extra names the command that installs it from this clone into the Python
    that runs (it said `pip install 'starroute[dask]'`)."""
    import sys

    from app.cli import run as cli
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` raises ImportError
    want = "-m pip install -c constraints.txt -e '.[dask]'"
    with pytest.raises(ImportError) as e:
        graph.table([A, B], scheduler="local")
    assert want in str(e.value) and "starroute[" not in str(e.value), e.value
    (tmp_path / "p.csv").write_text(f"lon,lat\n{_ll(A)}\n")
    assert cli(["matrix", str(graph.path), str(tmp_path / "p.csv"), "-o", str(tmp_path / "m.npz")]) == 2
    err = capsys.readouterr().err
    assert want in err and "starroute[" not in err, err
    monkeypatch.chdir(tmp_path)  # elsewhere: the clone's paths in full
    with pytest.raises(ImportError) as e:
        graph.table([A, B], scheduler="local")
    assert f"-c {ROOT / 'constraints.txt'} -e '{ROOT}[dask]'" in str(e.value), e.value


# -- inputs and outputs ------------------------------------------------------------------------------------------------
def test_points_as_pairs_arrays_and_frames(graph: starroute.Graph, points: list) -> None:
    pd = pytest.importorskip("pandas")
    pts = points[:6]
    expected = graph.table(pts).durations_s
    arr = np.array(pts)
    frame = pd.DataFrame({"name": list("abcdef"), "lon": arr[:, 0], "lat": arr[:, 1]})
    for given in (arr, [list(p) for p in pts], frame, frame.rename(columns={"lon": "longitude", "lat": "latitude"})):
        np.testing.assert_array_equal(graph.table(given).durations_s, expected)
    gpd = pytest.importorskip("geopandas")
    gdf = gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(arr[:, 0], arr[:, 1]), crs="EPSG:4326")
    np.testing.assert_array_equal(graph.table(gdf).durations_s, expected)
    mercator = gdf.to_crs("EPSG:3857")  # reprojected back to WGS 84 on the way in
    np.testing.assert_allclose(graph.table(mercator.geometry).durations_s, expected, atol=0.2)
    frame["jobs"] = [3.0, 0.0, 1.0, 2.0, 5.0, 1.0]  # weights by column name, as pandana users pass them
    by_name = graph.accessibility(arr[:2], frame, minutes=[3], weights="jobs").reached[:, 0]
    np.testing.assert_allclose(
        by_name, (np.nan_to_num(graph.table(arr[:2], frame).durations_s, nan=1e9) <= 180) @ frame["jobs"]
    )
    for bad in ([(1.0, 2.0, 3.0)], "7.4,43.7", pd.DataFrame({"x": [1.0]}), [(math.nan, 43.7)]):
        with pytest.raises(starroute.InvalidValue):
            graph.table(bad)


def test_one_point_without_numpy_is_the_array_path() -> None:
    """`as_point` checks a plain pair without building an array: the same floats as the array path for every kind
    of pair, and every other input refused (or taken) with the array path's sentence."""
    from starroute.points import as_lonlat, as_point

    def by_array(p: Any) -> tuple[float, float]:
        arr = as_lonlat(p, "origin")
        if arr.shape[0] != 1:
            raise starroute.InvalidValue("origin must be one (lon, lat) pair")
        return float(arr[0, 0]), float(arr[0, 1])

    def outcome(fn: Any, p: Any) -> object:
        try:
            got = fn(p)
        except starroute.InvalidValue as exc:
            return str(exc)
        assert all(type(x) is float for x in got)
        return got

    given = [(7.4, 43.7), [7, 43], np.array([7.4, 43.7]), np.array([7, 43], dtype=np.int32), (np.float32(7.4), 43.7)]
    given += [("7.4", "43.7"), (True, 1), (-180, 90), (180.0, -90.0), np.array([[7.4, 43.7]]), ((7.4, 43.7),)]
    given += [(200, 1), (1, math.nan), (1, math.inf), (1,), (1, 2, 3), ((1, 2), (3, 4)), ("x", 1), None, (1, None)]
    given += [np.array([7.0, 95.0]), [], "7.4,43.7"]
    for p in given:
        assert outcome(lambda q: as_point(q, "origin"), p) == outcome(by_array, p), p


def test_geometries(graph: starroute.Graph) -> None:
    shapely = pytest.importorskip("shapely")
    r = graph.route(A, B)
    line = r.shape
    assert isinstance(line, shapely.LineString) and np.allclose(np.asarray(line.coords), r.coordinates)
    assert r.geojson["properties"]["duration_s"] == r.duration_s
    iso = graph.isochrone(A, minutes=[2, 4])
    big, small = iso.shapes
    assert big.is_valid and small.is_valid and big.area > small.area and big.contains(small.representative_point())
    assert [b.value for b in iso.bands] == [4.0, 2.0] and iso.point.distance_m < 100


def test_blocks_change_nothing_and_accessibility(graph: starroute.Graph, points: list) -> None:
    src, dst = points[:11], points[5:]
    whole = graph.table(src, dst)
    blocked = graph.table(src, dst, block=(4, 3))
    np.testing.assert_array_equal(blocked.durations_s, whole.durations_s)
    np.testing.assert_array_equal(blocked.distances_m, whole.distances_m)
    w = np.arange(len(dst), dtype=float) + 0.5
    limits = [2.0, 5.0]
    acc = graph.accessibility(src, dst, minutes=limits, weights=w, k=4, block=(4, 3))
    d = np.where(np.isnan(whole.durations_s), np.inf, whole.durations_s)
    for i, lim in enumerate(limits):
        np.testing.assert_allclose(acc.reached[:, i], (d <= lim * 60) @ w)
    order = np.lexsort((np.broadcast_to(np.arange(d.shape[1]), d.shape), d), axis=-1)[:, :4]
    np.testing.assert_array_equal(acc.nearest, order)
    np.testing.assert_array_equal(acc.nearest_s, np.take_along_axis(d, order, axis=1))
    counts = graph.accessibility(src, dst, minutes=5, block=(100, 100))
    np.testing.assert_array_equal(counts.reached[:, 0], (d <= 300).sum(axis=1))
    assert counts.nearest.shape == (len(src), 0)


def test_access_block_ties_and_unreachable() -> None:
    dur = np.array([[5.0, np.nan, 5.0, 1.0], [np.nan, np.nan, np.nan, np.nan]])
    reached, idx, near = access_block(dur, AccessSpec((4.0, 5.0), k=3), np.array([1.0, 1.0, 2.0, 3.0]))
    assert reached.tolist() == [[3.0, 6.0], [0.0, 0.0]]
    assert idx.tolist() == [[3, 0, 2], [-1, -1, -1]]
    assert near[0].tolist() == [1.0, 5.0, 5.0] and np.isnan(near[1]).all()


def test_failed_block_is_retried_and_reported() -> None:
    blocks = plan(5, 4, 2, 3)
    assert len(blocks) == 6 and sum(b.cells for b in blocks) == 20
    notes: list[str] = []

    class Notes:
        def advance(self, cells: int) -> None:
            pass

        def note(self, message: str) -> None:
            notes.append(message)

    failures = {Block(2, 4, 0, 3): 1}

    def compute(b: Block) -> tuple[np.ndarray, np.ndarray]:
        if failures.get(b, 0) > 0:
            failures[b] -= 1
            raise RuntimeError("worker lost")
        ones = np.ones((b.i1 - b.i0, b.j1 - b.j0))
        return ones, 2 * ones

    sink = DenseSink(5, 4)
    out = run_local(blocks, compute, lambda b, r: sink.write(b, *r), Notes(), retries=1)
    assert out.retried == [(2, 0)] and out.cells == 20 and not np.isnan(sink.durations).any()
    assert notes == ["block 2:4 x 0:3 failed (try 1): RuntimeError('worker lost')"]
    failures[Block(4, 5, 3, 4)] = 5
    with pytest.raises(starroute.MatrixError) as err:
        run_local(blocks, compute, lambda b, r: None, None, retries=2)
    assert err.value.blocks == [(4, 3)] and "worker lost" in str(err.value)


# -- the documentation runs ------------------------------------------------------------------------------------------
def test_docstring_examples_run(graph: starroute.Graph, bundled_graph: Path) -> None:
    import starroute.graph as module

    globs = {"starroute": starroute, "graph": graph, "GRAPH_DIR": bundled_graph}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = doctest.DocTestFinder().find(module, globs=globs)
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 8 and result.failed == 0


def test_readme_example_runs(bundled_graph: Path) -> None:
    from tests.unit.test_readme import README, code_blocks

    block = next(b for b in code_blocks(README) if b[0] == "import starroute")
    scope: dict[str, Any] = {}
    exec("\n".join(block).replace("graphs/monaco-car", str(bundled_graph)), scope)
    m = scope["m"]
    assert m.durations_s.shape == (2, 2) and m.durations_s[0, 1] > 0 and m.distances_m[1, 0] > 0

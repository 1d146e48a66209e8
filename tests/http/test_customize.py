"""Live weights: OSRM's speed / turn penalty files (`preprocessing.osm.speeds`), the new metric's arithmetic
(`preprocessing.metric`), `starroute customize` (written atomically, every algorithm exact on the new metric,
landmark bounds still lower bounds), and a running server applying it on SIGHUP and over the admin endpoint with no
failed request."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.engine.types import RouteOptions
from floor.format.arrays import METRIC_LINK
from floor.format.checks import check_segments
from floor.format.graph import load_graph
from floor.format.metrics import read_metric
from floor.format.units import CLOSED_DS
from harness import api_server, asciimap
from preprocessing.customize import customize, reset
from preprocessing.metric import arc_segments, new_metric
from preprocessing.osm.speeds import MetricFileError, read_segment_speeds, read_turn_penalties

TOKEN = "s3cret-token"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- the files --------------------------------------------------------------------------------------------------------
def test_speed_files_follow_osrms_grammar_and_precedence(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.csv", "1,2,50\n2,1,30,\n3,4,20,5.5\n1,2,60,,a comment column\n\n")
    b = _write(tmp_path / "b.csv", "3,4,25\n")
    s = read_segment_speeds([a, b])
    got = {
        (int(f), int(t)): (v, r, h)
        for f, t, v, r, h in zip(s.from_id, s.to_id, s.speed_kmh, s.rate, s.has_rate, strict=True)
    }
    assert s.lines == 5 and len(s) == 3
    assert got[(1, 2)][0] == 60  # the later line wins
    assert got[(2, 1)][0] == 30 and np.isnan(got[(2, 1)][1]) and got[(2, 1)][2]  # empty rate: keep the weight
    assert got[(3, 4)][0] == 25 and not got[(3, 4)][2]  # the later file wins, without a rate
    t = read_turn_penalties([_write(tmp_path / "t.csv", "1,2,3,4.5\n1,2,3,-2,7\n5,6,7,1.5,3\n")])
    assert len(t) == 2 and t.lines == 3
    i = int(np.flatnonzero(t.from_id == 1)[0])
    assert t.penalty_s[i] == -2 and t.weight_s[i] == 7


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1,2,50\n1,2\n", "line 2: expected from_osm_node_id,to_osm_node_id,speed_kmh"),
        ("1,2,50\nx,2,50\n", "line 2: from_osm_node_id 'x' is not an OSM node id"),
        ("1,2,-5\n", "line 1: speed_kmh '-5' must be a number >= 0"),
        ("1,2,fast\n", "line 1: speed_kmh 'fast' is not a number"),
        ("1,2,nan\n", "line 1: speed_kmh 'nan' is not a finite number"),
        ("1,-2,5\n", "line 1: to_osm_node_id '-2' is not an OSM node id"),
    ],
)
def test_a_malformed_speed_file_is_refused_with_its_line_and_reason(tmp_path: Path, text: str, why: str) -> None:
    f = _write(tmp_path / "bad.csv", text)
    with pytest.raises(MetricFileError) as err:
        read_segment_speeds([f])
    assert str(err.value) == f"{f} {why}" or str(err.value).startswith(f"{f} {why}")


def test_a_malformed_turn_file_and_bytes_that_are_not_text(tmp_path: Path) -> None:
    with pytest.raises(MetricFileError, match=r"t.csv line 2: penalty_s 'x' is not a number"):
        read_turn_penalties([_write(tmp_path / "t.csv", "1,2,3,4\n1,2,3,x\n")])
    with pytest.raises(MetricFileError, match="body line 2: not UTF-8 text"):
        read_segment_speeds([("body", b"1,2,3\n\xff\xfe\n")])


# -- the arithmetic on a drawn map -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> asciimap.Built:
    """a..d one primary way (b, c shape points: one chain), a side road b-e-f (e a shape point), turns on."""
    return asciimap.build(
        tmp_path_factory.mktemp("drawn"),
        """
        a b c d
          e
          f
        """,
        ways=[("abcd", {"highway": "primary"}), ("bef", {"highway": "residential"})],
        profile="car",
        ch=True,
        landmarks=2,
    )


def _segment_ds(length_m: float, kmh: float) -> int:
    return max(1, round(length_m / (kmh / 3.6) * 10))


def test_updated_segments_take_osrms_deciseconds_and_the_rest_keep_their_share(drawn: asciimap.Built) -> None:
    arrays = dict(drawn.graph.arrays)
    arc, a, b, length = arc_segments(arrays)
    osm = np.asarray(arrays["geom_osm_id"])
    ids = {ch: asciimap.node_id(ch) for ch in "abcdef"}
    seg = {(int(osm[x]), int(osm[y])): (int(r), float(m)) for r, x, y, m in zip(arc, a, b, length, strict=True)}
    ab_arc, ab_len = seg[(ids["a"], ids["b"])]
    bc_arc, bc_len = seg[(ids["b"], ids["c"])]
    cd_len = seg[(ids["c"], ids["d"])][1]  # b -> c -> d is one arc (c is a shape point)
    # every segment of a -> b -> c -> d at 36 km/h: an arc is the exact sum of OSRM's per-segment values
    lines = "".join(f"{ids[x]},{ids[y]},36\n" for x, y in ("ab", "bc", "cd"))
    out, rep = new_metric(arrays, read_segment_speeds([("f", lines.encode())]), None)
    assert rep.segment_keys_applied == 3 and rep.segment_keys_unmatched == 0
    assert out["arc_duration"][ab_arc] == _segment_ds(ab_len, 36)
    assert out["arc_duration"][bc_arc] == _segment_ds(bc_len, 36) + _segment_ds(cd_len, 36)
    assert out["arc_weight"][ab_arc] == out["arc_duration"][ab_arc]  # no rate column: the weight follows
    # the reverse directions and every other arc are untouched
    changed = np.flatnonzero(out["arc_duration"] != arrays["arc_duration"])
    assert set(changed.tolist()) <= {ab_arc, bc_arc}
    # half a chain updated: the other half keeps its own per-segment value (`geom_seg_duration`), exactly
    e_arc, e_len = seg[(ids["b"], ids["e"])]
    pts = {(int(osm[x]), int(osm[y])): (int(x), int(y)) for x, y in zip(a, b, strict=True)}
    fx, fy = pts[(ids["e"], ids["f"])]
    ef_d = int(arrays["geom_seg_duration"][max(fx, fy), 0 if fy > fx else 1])
    s = read_segment_speeds([("f", f"{ids['b']},{ids['e']},10,\n".encode())])  # empty rate: weight stays
    out, rep = new_metric(arrays, s, None)
    old_w = int(arrays["arc_weight"][e_arc])
    assert int(out["arc_duration"][e_arc]) == ef_d + _segment_ds(e_len, 10)
    assert out["arc_weight"][e_arc] == old_w
    # the metric carries its per-segment values, and they sum to its arcs
    check_segments({**arrays, **out}, len(out["arc_weight"]), len(arrays["geom_lon"]))
    # a graph built before the per-segment values: the other half keeps its share of the old value (by length)
    old = {k: v for k, v in arrays.items() if not k.startswith("geom_seg_")}
    out, rep = new_metric(old, s, None)
    ef_len = seg[(ids["e"], ids["f"])][1]
    expect = round(int(arrays["arc_duration"][e_arc]) * ef_len / (e_len + ef_len) + _segment_ds(e_len, 10))
    assert abs(int(out["arc_duration"][e_arc]) - expect) <= 1 and "geom_seg_duration" not in out
    # the search graph's arcs follow their road arc: turn + the new whole arc
    node_arc = np.asarray(arrays["eb_node_arc"])
    onto = node_arc[np.asarray(arrays["eb_arc_head"])]
    assert np.array_equal(out["eb_arc_weight"], out["eb_arc_turn"] + out["arc_weight"][onto])


def test_a_turn_penalty_and_a_closure_change_the_routes(drawn: asciimap.Built, tmp_path: Path) -> None:
    from app.engine.errors import NoRoute
    from app.engine.router import Router

    g = tmp_path / "g"
    shutil.copytree(drawn.graph.path, g)
    ids = {ch: asciimap.node_id(ch) for ch in "abcdef"}
    lonlat = {k: (v[0] / 1e7, v[1] / 1e7) for k, v in drawn.coords.items()}

    def weight(algorithm: str, x: str, y: str) -> int:
        from app.engine.data import load

        r = Router(load(g))
        return r.route([r.snap(*lonlat[x]), r.snap(*lonlat[y])], algorithm).weight

    before = weight("dijkstra", "a", "f")
    pen = _write(tmp_path / "turn.csv", f"{ids['a']},{ids['b']},{ids['e']},5\n")
    done = customize(g, turn_files=[pen])
    assert done.report.turn_keys_applied == 1 and done.landmarks == "kept"
    old_turn = _turn_ds(drawn, ids["a"], ids["b"], ids["e"])
    for alg in ("dijkstra", "ch", "alt", "astar"):
        assert weight(alg, "a", "f") == before - old_turn + 50, alg
    closed = _write(tmp_path / "closed.csv", f"{ids['e']},{ids['f']},0\n")
    done = customize(g, segment_files=[closed])
    assert done.report.arcs_closed == 1
    for alg in ("dijkstra", "ch", "alt", "astar"):
        with pytest.raises(NoRoute):
            weight(alg, "a", "f")
    assert weight("ch", "f", "a") > 0  # the other direction is open
    assert reset(g) and read_metric(g) is None and weight("ch", "a", "f") == before


def test_a_graph_without_the_customizable_hierarchy_is_contracted_again(tmp_path: Path) -> None:
    """The fallback for graphs built with `cch=False`: the witness hierarchies (main and excluded sets) contracted on
    the new weights, every algorithm still exact."""
    from app.engine.data import load
    from app.engine.router import Router
    from preprocessing.pipeline import preprocess

    drawing = """
        a b c d
          e   f
        """
    osm = asciimap.write_osm(
        tmp_path / "m.osm",
        drawing,
        [("abcd", {"highway": "primary"}), ("be", {"highway": "residential"}),
         ("cf", {"highway": "motorway", "oneway": "yes"}), ("ef", {"highway": "residential"})],
    )  # fmt: skip
    g = preprocess(osm, tmp_path / "g", profile="car", ch=True, landmarks=2, force=True, quiet=True, cch=False)
    assert "cch_first" not in load_graph(g).arrays
    ids = {ch: asciimap.node_id(ch) for ch in "abcdef"}
    speeds = _write(tmp_path / "s.csv", f"{ids['a']},{ids['b']},150\n{ids['b']},{ids['e']},0\n")
    done = customize(g, [speeds], stages=True)  # the stages at once, in the command
    assert done.hierarchy.startswith("contracted again") and done.landmarks == "recomputed"
    r = Router(load(g))
    coords = asciimap.coordinates(drawing)
    pts = {k: r.snap(v[0] / 1e7, v[1] / 1e7) for k, v in coords.items()}
    for x in "abcdef":
        for y in "abcdef":
            if x == y:
                continue
            got = set()
            for alg in ("dijkstra", "ch", "alt"):
                try:
                    got.add(r.route([pts[x], pts[y]], alg).weight)
                except Exception as exc:  # noqa: BLE001 - NoRoute on every algorithm alike
                    got.add(type(exc).__name__)
            assert len(got) == 1, (x, y, got)


def test_the_command_leaves_the_search_stages_to_the_first_load(drawn: asciimap.Built, tmp_path: Path) -> None:
    """`customize` writes the weights only, the stages pending: until they are added no loaded graph holds the
    preprocessed metric's hierarchy or (a road got faster) landmark tables; the first engine load computes them and
    adds them to the metric's directory, every later load maps them, and the answers are Dijkstra's."""
    from app.engine.data import load
    from app.engine.router import Router
    from floor.format.metrics import save_metric_stages
    from preprocessing.customize import complete_metric

    g = tmp_path / "g"
    shutil.copytree(drawn.graph.path, g)
    ids = {ch: asciimap.node_id(ch) for ch in "abcdef"}
    done = customize(g, [_write(tmp_path / "s.csv", f"{ids['b']},{ids['c']},150\n{ids['e']},{ids['f']},7\n")])
    assert done.hierarchy == done.landmarks == "pending"
    metric = read_metric(g)
    assert metric is not None and metric["pending"] == ["hierarchy", "landmarks"]
    raw = load_graph(g)
    assert "ch_rank" not in raw.arrays and "lm_from" not in raw.arrays and "cch_first" in raw.arrays
    assert raw.manifest["metric"]["pending"] == ["hierarchy", "landmarks"]
    early = complete_metric(g, write=False)  # another process computing them at the same time
    assert early is not None and not early.written and not (g / METRIC_LINK / "stages").exists()
    graph = load(g)  # computes the stages and adds them
    assert graph.manifest["metric"]["pending"] == [] and (g / METRIC_LINK / "stages" / "stages.json").is_file()
    assert not save_metric_stages(g, early.metric_id, early.arrays, early.manifest, {})  # the first one stands
    assert "ch_rank" in graph.arrays and "lm_from" in graph.arrays
    assert complete_metric(g) is None  # nothing left to do
    r = Router(graph)
    lonlat = {k: (v[0] / 1e7, v[1] / 1e7) for k, v in drawn.coords.items()}
    pts = {k: r.snap(*lonlat[k]) for k in "adf"}
    for x, y in (("a", "d"), ("a", "f"), ("f", "d"), ("d", "a")):
        want = r.route([pts[x], pts[y]], "dijkstra").weight
        assert {r.route([pts[x], pts[y]], alg).weight for alg in ("ch", "alt", "astar")} == {want}, (x, y)


def test_a_graph_directory_that_cannot_take_the_stages_keeps_them_in_memory(
    drawn: asciimap.Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import preprocessing.customize as pc
    from app.engine.data import load
    from app.engine.router import Router

    g = tmp_path / "g"
    shutil.copytree(drawn.graph.path, g)
    ids = {ch: asciimap.node_id(ch) for ch in "abcdef"}
    customize(g, [_write(tmp_path / "s.csv", f"{ids['a']},{ids['b']},140\n")])

    def read_only(*args: object, **kwargs: object) -> bool:
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(pc, "save_metric_stages", read_only)
    graph = load(g)
    assert graph.manifest["metric"]["pending"] == [] and graph.manifest["metric"]["stages"] == {"in_memory": True}
    assert not (g / METRIC_LINK / "stages").exists() and "ch_rank" in graph.arrays
    r = Router(graph)
    lonlat = {k: (v[0] / 1e7, v[1] / 1e7) for k, v in drawn.coords.items()}
    s, t = r.snap(*lonlat["a"]), r.snap(*lonlat["d"])
    assert r.route([s, t], "ch").weight == r.route([s, t], "dijkstra").weight == r.route([s, t], "alt").weight


def test_the_command_runs_without_numba(monaco_metric: Path, tmp_path: Path) -> None:
    """The command's whole run is numpy (importing numba alone is 0.3 s): nothing it imports pulls numba in."""
    g = tmp_path / "g"
    shutil.copytree(monaco_metric, g, symlinks=True)
    osm = np.asarray(load_graph(g, metric=False).geom_osm_id)
    speeds = _write(tmp_path / "s.csv", f"{osm[0]},{osm[1]},33\n")
    code = (
        "import sys; from app.cli import run; rc = run(['customize', sys.argv[1], '--segment-speed-file', "
        "sys.argv[2], '-q']); print(rc, 'numba' in sys.modules)"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(g), str(speeds)],
        capture_output=True,
        text=True,
        cwd=api_server.ROOT,
        timeout=120,
    )
    assert r.stdout.split() == ["0", "False"], r.stdout + r.stderr


def _turn_ds(built: asciimap.Built, f: int, v: int, t: int) -> int:
    g = built.graph
    osm, gf, geom = np.asarray(g.geom_osm_id), np.asarray(g.geom_first), np.asarray(g.arc_geom)
    node_arc = np.asarray(g.eb_node_arc)
    for i in range(len(g.eb_arc_head)):
        a, b = node_arc[g.eb_arc_tail[i]], node_arc[g.eb_arc_head[i]]
        pa = np.arange(gf[geom[a] >> 1], gf[(geom[a] >> 1) + 1])[:: -1 if geom[a] & 1 else 1]
        pb = np.arange(gf[geom[b] >> 1], gf[(geom[b] >> 1) + 1])[:: -1 if geom[b] & 1 else 1]
        if (osm[pa[-2]], osm[pa[-1]], osm[pb[1]]) == (f, v, t):
            return int(g.eb_arc_turn[i])
    raise AssertionError("turn not found")


# -- exact on a real extract ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def monaco_metric(bundled_graph: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled Monaco with random speeds on a third of its segments (some faster than the profile, some closed)
    and random turn penalties, as its current metric."""
    g = tmp_path_factory.mktemp("metric") / "monaco"
    shutil.copytree(bundled_graph, g)
    base = load_graph(g)
    arrays = dict(base.arrays)
    _, a, b, _ = arc_segments(arrays)
    osm = np.asarray(arrays["geom_osm_id"])
    rng = np.random.default_rng(7)
    pick = rng.choice(len(a), len(a) // 3, replace=False)
    speeds = rng.integers(5, 140, len(pick)).astype(float)
    speeds[rng.random(len(pick)) < 0.02] = 0.0
    lines = [f"{osm[a[i]]},{osm[b[i]]},{v:g}" for i, v in zip(pick, speeds, strict=True)]
    seg = _write(g.parent / "speeds.csv", "\n".join(lines) + "\n")
    node_arc = np.asarray(arrays["eb_node_arc"])
    tails, heads = np.asarray(arrays["eb_arc_tail"]), np.asarray(arrays["eb_arc_head"])
    gf, geom = np.asarray(arrays["geom_first"]), np.asarray(arrays["arc_geom"])
    turns = []
    for i in rng.choice(len(tails), 300, replace=False):
        x, y = node_arc[tails[i]], node_arc[heads[i]]
        cx, cy = geom[x] >> 1, geom[y] >> 1
        px = np.arange(gf[cx], gf[cx + 1])[:: -1 if geom[x] & 1 else 1]
        py = np.arange(gf[cy], gf[cy + 1])[:: -1 if geom[y] & 1 else 1]
        turns.append(f"{osm[px[-2]]},{osm[px[-1]]},{osm[py[1]]},{rng.integers(0, 60)}")
    turn = _write(g.parent / "turns.csv", "\n".join(turns) + "\n")
    done = customize(g, [seg], [turn])  # the search stages pending: the first load adds them
    assert done.hierarchy == done.landmarks == "pending" and done.report.arcs_closed > 0
    assert done.report.segment_keys_unmatched == 0 and done.report.turn_keys_unmatched == 0
    return g


def test_every_algorithm_is_exact_on_the_new_metric(monaco_metric: Path) -> None:
    from app.engine.data import load
    from app.engine.errors import NoRoute
    from app.engine.router import Router

    graph = load(monaco_metric)
    assert graph.meta.raw["metric"]["id"] and os.path.islink(monaco_metric / METRIC_LINK)
    assert graph.meta.raw["metric"]["pending"] == [] and (monaco_metric / METRIC_LINK / "stages").is_dir()
    r = Router(graph)
    base = load_graph(monaco_metric, metric=False)
    assert not np.array_equal(graph.arc_duration, base.arc_duration)
    rng = np.random.default_rng(3)
    lon, lat = np.asarray(graph.node_lon) / 1e7, np.asarray(graph.node_lat) / 1e7
    algorithms = ("dijkstra", "ch", "alt", "bidirectional-astar", "astar")
    phantoms = []
    for _ in range(40):
        i, j = rng.integers(len(lon), size=2)
        s, t = r.snap(lon[i], lat[i]), r.snap(lon[j], lat[j])
        phantoms += [s, t]
        got = {}
        for alg in algorithms:
            try:
                got[alg] = r.route([s, t], alg).weight
            except NoRoute:
                got[alg] = None
        assert len(set(got.values())) == 1, got
    weights, _, _ = r.query().table_units(phantoms[:6], phantoms[6:12], None)
    table = r.table(phantoms[:6], phantoms[6:12])
    for x in range(6):
        for y in range(6):
            try:
                route = r.route([phantoms[x], phantoms[6 + y]], "dijkstra")
            except NoRoute:
                assert np.isnan(table.durations_s[x, y])
                continue
            assert weights[x, y] == route.weight


def test_a_served_engine_takes_a_new_metric_as_a_fresh_one_would(
    bundled_graph: Path, monaco_metric: Path, tmp_path: Path
) -> None:
    """A server's reload when only the metric changed builds the engine on the served one (`Engine.with_metric`:
    unchanged arrays and weight-independent tables shared): every answer, routes with excludes and tables, equals
    an engine built from scratch on the same directory; and going back to the preprocessed metric likewise."""
    from app.engine.data import load, same_build
    from app.engine.errors import NoRoute
    from app.engine.facade import Engine
    from app.engine.router import Router
    from floor.format.graph import Graph

    g = tmp_path / "g"
    shutil.copytree(bundled_graph, g)
    served = Engine(load(g))
    served.warmup(("ch",))
    customize(g, [monaco_metric.parent / "speeds.csv"], [monaco_metric.parent / "turns.csv"])

    def compare(a: Router, b: Router, seed: int) -> None:
        rng = np.random.default_rng(seed)
        lon, lat = np.asarray(b.graph.node_lon) / 1e7, np.asarray(b.graph.node_lat) / 1e7
        sets = [None, *(b.exclude_set(e.classes) for e in b.excludable)]
        phs = []
        for k in range(30):
            i, j = rng.integers(len(lon), size=2)
            pa, pb = [a.snap(lon[i], lat[i]), a.snap(lon[j], lat[j])], [b.snap(lon[i], lat[i]), b.snap(lon[j], lat[j])]
            assert pa == pb
            phs += pb
            for alg in ("ch", "alt", "dijkstra"):
                ex = sets[k % len(sets)] if alg != "alt" else None
                try:
                    ra = a.query().routes(pa, RouteOptions(algorithm=alg, exclude=ex), alg).best
                    got = (ra.weight, ra.duration_s, ra.distance_m)
                except NoRoute:
                    got = None
                try:
                    rb = b.query().routes(pb, RouteOptions(algorithm=alg, exclude=ex), alg).best
                    want = (rb.weight, rb.duration_s, rb.distance_m)
                except NoRoute:
                    want = None
                assert got == want, (k, alg, ex)
        ta, tb = a.table(phs[:8], phs[8:16]), b.table(phs[:8], phs[8:16])
        assert np.array_equal(ta.durations_s, tb.durations_s, equal_nan=True)

    graph = load(g, reuse=served.graph)
    assert same_build(served.graph, graph) and graph.arrays["geom_lon"] is served.graph.arrays["geom_lon"]
    rebuilt = {**served.graph.manifest, "built_at": "2030-01-01T00:00:00+00:00"}  # the same extract built again
    assert not same_build(Graph(g, rebuilt, {}), graph)
    derived = served.with_metric(graph)
    assert derived.router.chains is served.router.chains and derived.router.metric.search is derived.router.search_graph
    compare(derived.router, Engine(load(g)).router, 5)
    reset(g)  # and back to the preprocessed metric
    back = derived.with_metric(load(g, reuse=derived.graph))
    compare(back.router, Engine(load(g)).router, 6)


def test_landmark_bounds_hold_on_the_new_metric(monaco_metric: Path) -> None:
    from app.engine.data import load, search_graph
    from app.engine.search.reference import dijkstra_weights

    sg = search_graph(load(monaco_metric))
    lm_from = np.asarray(sg.lm_from, dtype=np.int64)
    lm_to = np.asarray(sg.lm_to, dtype=np.int64)
    rng = np.random.default_rng(11)
    main = np.flatnonzero(np.asarray(sg.node_component) == 0)
    for s in rng.choice(main, 6, replace=False):
        d = dijkstra_weights(sg, int(s))
        ok = (d < CLOSED_DS) & (np.asarray(sg.node_component) == 0)
        bound = np.maximum(lm_from[ok] - lm_from[s], lm_to[s] - lm_to[ok]).max(axis=1)  # lower bound on d(s, t)
        assert np.all(bound <= d[ok])


def test_landmark_tables_from_the_hierarchy_equal_dijkstras(monaco_metric: Path) -> None:
    """The tables a customization writes (two sweeps over the new hierarchy per landmark) are exactly the ones a
    Dijkstra per landmark gives on the new weights, except that a pair joined only over a closed road has no entry
    (LM_NONE: no bound, always valid) where Dijkstra finds that road's CLOSED_DS."""
    from app.engine.data import load, search_graph
    from floor.format.units import LM_NONE
    from preprocessing.landmarks import landmark_tables

    sg = search_graph(load(monaco_metric))
    ref = landmark_tables(sg, np.asarray(sg.lm_nodes))
    for name in ("lm_from", "lm_to"):
        got, want = np.asarray(getattr(sg, name)), ref[name]
        assert np.array_equal(got[got != LM_NONE], want[got != LM_NONE]), name
        assert np.all(want[got == LM_NONE] >= CLOSED_DS), name
        assert np.count_nonzero(got != LM_NONE) > 1000  # not all left out


def test_the_cli_writes_nothing_for_a_bad_file_and_reports_the_counts(monaco_metric: Path, tmp_path: Path) -> None:
    g = tmp_path / "g"
    shutil.copytree(monaco_metric, g, symlinks=True)
    before = os.readlink(g / METRIC_LINK)
    bad = _write(tmp_path / "bad.csv", "1,2,30\n3,4\n")
    cmd = [sys.executable, "-m", "app.cli", "customize", str(g), "--segment-speed-file", str(bad)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=api_server.ROOT, timeout=120)
    assert r.returncode == 2 and f"{bad} line 2: expected" in r.stderr and "not changed" in r.stderr, r.stderr
    assert os.readlink(g / METRIC_LINK) == before
    ok = _write(tmp_path / "ok.csv", "1,2,30\n")
    cmd[-1] = str(ok)
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=api_server.ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "1 lines, 1 segments, 0 applied" in r.stdout and "1 matched no segment" in r.stdout, r.stdout
    assert os.readlink(g / METRIC_LINK) != before


# -- a running server ------------------------------------------------------------------------------------------------
def _metric_ids(base: str, workers: int, timeout: float = 10.0) -> dict[int, str]:
    """The metric each worker serves (new connections until every worker answered)."""
    seen: dict[int, str] = {}
    deadline = time.monotonic() + timeout
    while len(seen) < workers and time.monotonic() < deadline:
        with httpx.Client(base_url=base, timeout=10) as c:
            h = c.get("/health").json()
            seen[h["pid"]] = h["metric"]["id"]
    return seen


def test_sighup_and_the_admin_endpoint_apply_a_metric_under_load(bundled_graph: Path, tmp_path: Path) -> None:
    g = tmp_path / "monaco"
    shutil.copytree(bundled_graph, g)
    env = {"STARROUTE_ADMIN_TOKEN": TOKEN, "STARROUTE_ADMIN_MAX_BODY_BYTES": "100000"}
    proc, base = api_server.start(g, "--workers", "2", env=env)
    try:
        assert set(_metric_ids(base, 2).values()) == {"preprocessed"}
        arrays = dict(load_graph(g).arrays)
        _, a, b, _ = arc_segments(arrays)
        osm = np.asarray(arrays["geom_osm_id"])
        body = "".join(f"{osm[x]},{osm[y]},20\n" for x, y in zip(a[::5], b[::5], strict=True)).encode()
        url = "/route/v1/driving/7.4190,43.7311;7.4290,43.7400"
        failures: list[str] = []
        durations: set[float] = set()
        stop = threading.Event()

        def load() -> None:
            with httpx.Client(base_url=base, timeout=30) as c:
                while not stop.is_set():
                    try:
                        resp = c.get(url)
                        if resp.status_code != 200:
                            failures.append(resp.text)
                        else:
                            durations.add(resp.json()["routes"][0]["duration"])
                    except httpx.HTTPError as exc:
                        failures.append(repr(exc))

        clients = [threading.Thread(target=load) for _ in range(3)]
        for t in clients:
            t.start()
        with httpx.Client(base_url=base, timeout=120) as c:
            # the rules of the door: no token, a wrong one, a malformed file, too large a body: nothing changes
            assert c.post("/admin/metric", content=body).status_code == 401
            wrong = c.post("/admin/metric", content=body, headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
            auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/csv"}
            bad = c.post("/admin/metric", content=b"1,2,30\n1,x,3\n", headers=auth)
            assert bad.status_code == 400 and "request body line 2" in bad.json()["message"], bad.text
            assert c.post("/admin/metric", content=b"1,2,3\n" * 20000, headers=auth).status_code == 413
            assert not os.path.lexists(g / METRIC_LINK)
            ok = c.post("/admin/metric", content=body, headers=auth)
            assert ok.status_code == 200, ok.text
            mid = ok.json()["metric"]
            assert ok.json()["report"]["segment_keys_unmatched"] == 0
        time.sleep(1.0)  # every worker within the same second
        assert set(_metric_ids(base, 2).values()) == {mid}
        # a metric written by the command, applied by SIGHUP to the supervisor
        done = customize(g, [("slow", body.replace(b",20\n", b",10\n"))])
        os.kill(proc.pid, signal.SIGHUP)
        time.sleep(1.0)
        assert set(_metric_ids(base, 2).values()) == {done.metric_id}
        stop.set()
        for t in clients:
            t.join()
        assert not failures, failures[:3]
        assert len(durations) >= 3  # the route's duration changed twice while it was asked for
        # the supervisor reloaded too: a worker it forks in place of one that died serves the new metric
        victim = next(iter(_metric_ids(base, 2)))
        os.kill(victim, signal.SIGKILL)
        seen: dict[int, str] = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (len(seen) == 2 and victim not in seen):
            time.sleep(0.3)
            try:
                seen = _metric_ids(base, 2, timeout=3.0)
            except httpx.HTTPError:
                seen = {}
        assert len(seen) == 2 and victim not in seen and set(seen.values()) == {done.metric_id}, (victim, seen)
    finally:
        api_server.stop(proc)


def test_the_admin_endpoint_is_off_without_a_token(bundled_graph: Path) -> None:
    base = api_server.shared(bundled_graph)
    r = httpx.post(f"{base}/admin/metric", content=b"1,2,3\n", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 404 and "STARROUTE_ADMIN_TOKEN" in r.json()["message"]


class ServerLog:
    """A server process (`python -m app.server`, log level info) whose output lines are collected as they come."""

    def __init__(self, graph: Path, workers: int) -> None:
        self.port = api_server.free_port()
        env = {**os.environ, "STARROUTE_ADMIN_TOKEN": TOKEN}
        cmd = [sys.executable, "-m", "app.server", str(graph), "--port", str(self.port), "--workers", str(workers)]
        self.proc = subprocess.Popen(
            cmd, cwd=api_server.ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.proc.stdout or ()), daemon=True).start()
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 120
        while len(_metric_ids_or_none(self.base, workers)) < workers:
            assert self.proc.poll() is None and time.monotonic() < deadline, "".join(self.lines)
            time.sleep(0.2)

    def starroute_lines_after(self, action, settle_s: float = 1.5) -> list[str]:  # type: ignore[no-untyped-def]
        """starroute's log lines (not uvicorn's own) written while `action()` ran and `settle_s` after it."""
        start = len(self.lines)
        action()
        time.sleep(settle_s)
        uvicorns = ("Started", "Waiting", "Application", "Uvicorn", "Shutting", "Finished")
        return [ln for ln in self.lines[start:] if not ln.split(":", 1)[-1].strip().startswith(uvicorns)]


def _metric_ids_or_none(base: str, workers: int) -> dict[int, str]:
    try:
        return _metric_ids(base, workers, timeout=2.0)
    except httpx.HTTPError:
        return {}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_reload_and_an_admin_update_log_one_line_each(bundled_graph: Path, tmp_path: Path, workers: int) -> None:
    """SIGHUP: one line saying what was loaded from which directory and how long it took (with several workers the
    supervisor's; they reload quietly). An admin update: one line saying what it applied where and how long it took
    (with several workers the supervisor's reload line follows, as for any SIGHUP)."""
    g = tmp_path / "monaco"
    shutil.copytree(bundled_graph, g)
    server = ServerLog(g, workers)
    try:
        hup = server.starroute_lines_after(lambda: os.kill(server.proc.pid, signal.SIGHUP))
        assert len(hup) == 1, hup
        assert "SIGHUP: reloaded" in hup[0] and str(g) in hup[0] and "metric the preprocessed one" in hup[0], hup
        assert " s" in hup[0].split(" in ")[-1] and (workers == 1 or "2 workers reload it" in hup[0]), hup
        auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/csv"}
        posted: list[httpx.Response] = []
        post = lambda: posted.append(httpx.post(f"{server.base}/admin/metric", content=b"", headers=auth, timeout=60))  # noqa: E731
        admin = server.starroute_lines_after(post)
        assert posted[0].status_code == 200, posted[0].text
        mid = posted[0].json()["metric"]
        assert len(admin) == (1 if workers == 1 else 2), admin
        # with several workers the worker's line and its supervisor's reload line come from two processes: either order
        said = [line for line in admin if "admin: metric" in line]
        assert len(said) == 1, admin
        assert f"admin: metric {mid} (segment-speeds, 0 lines, 0 arcs changed) written into {g} in " in said[0], admin
        if workers > 1:
            (reload,) = [line for line in admin if line is not said[0]]
            assert "SIGHUP: reloaded" in reload and f"metric {mid}" in reload, admin
    finally:
        api_server.stop(server.proc)


def test_a_worker_signals_its_recorded_supervisor_only_and_answers_503_once_it_is_gone(
    bundled_graph: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With several workers the admin endpoint makes the supervisor reload them all (SIGHUP): the supervisor recorded
    at the fork, never whatever is the parent now (init, after a crash of the supervisor); gone, 503 and nothing
    written."""
    import asyncio

    from app.api import admin
    from app.main import create_app
    from app.settings import Settings

    g = tmp_path / "monaco"
    shutil.copytree(bundled_graph, g)
    app = create_app(Settings(graph_dir=g, workers=2, admin_token=TOKEN))
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(admin.os, "kill", lambda pid, sig: sent.append((pid, sig)))

    def post() -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/csv"}
                return await c.post("/admin/metric", content=b"", headers=auth)

        return asyncio.run(go())

    app.state.service.master_pid = os.getpid()  # recorded at the fork; the parent now is another process
    gone = post()
    assert gone.status_code == 503 and "supervisor" in gone.json()["message"], gone.text
    assert sent == [] and not os.path.lexists(g / METRIC_LINK)
    app.state.service.master_pid = os.getppid()  # still the parent
    ok = post()
    assert ok.status_code == 200 and sent == [(os.getppid(), signal.SIGHUP)], ok.text

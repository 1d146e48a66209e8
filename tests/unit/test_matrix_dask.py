"""Matrices on real local Dask clusters (two worker processes; the default local one's two threads):
`graph.table(scheduler=...)`, accessibility, and
`starroute matrix` from CSV to Parquet and .npz, read back cell by cell; a block that fails is retried and reported.
Skips without Dask (the `[dask]` extra)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import starroute
from app.cli import run as cli
from starroute.blocks import table_task
from starroute.runner import Block, plan, run_dask
from starroute.sinks import DenseSink
from tests.osrm.test_osrm_api import random_points

pytest.importorskip("distributed", reason="Dask is not installed (pip install -c constraints.txt -e '.[dask]')")
pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install -c constraints.txt -e '.[dask]')")


@pytest.fixture(scope="module")
def graph(bundled_graph: Path) -> starroute.Graph:
    return starroute.load(bundled_graph)


@pytest.fixture(scope="module")
def client():
    """A cluster of two single-threaded worker processes, as a remote cluster's workers are: each loads the graph
    itself and gets every block's points pickled (`starroute matrix --workers` runs threads instead: below)."""
    import distributed

    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as c,
    ):
        assert len(c.scheduler_info()["workers"]) == 2
        yield c


def test_local_cluster_is_threads_answering_with_the_callers_engine(
    graph: starroute.Graph, pts: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`scheduler="local"` (`starroute matrix --workers 2`): two worker threads of this process, which answer with
    this graph's engine (no graph loaded again), the same cells as in process; the engine is let go after."""
    import os
    import threading

    from starroute import blocks
    from starroute.cluster import client_for

    here = graph.table(pts[:33], pts[10:])
    engines = dict(blocks._ENGINES)
    threads: set[int] = set()
    table = graph.engine.table

    def spy(*args, **kw):
        threads.add(threading.get_ident())
        return table(*args, **kw)

    monkeypatch.setattr(graph.engine, "table", spy)
    with client_for("local", workers=2) as c:
        idents = c.run(threading.get_ident)
        assert len(idents) == 2 and set(c.run(os.getpid).values()) == {os.getpid()}
        there = graph.table(pts[:33], pts[10:], scheduler=c, block=(8, 12))
    np.testing.assert_array_equal(there.durations_s, here.durations_s)
    np.testing.assert_array_equal(there.distances_m, here.distances_m)
    assert threads and threading.get_ident() not in threads, "the blocks ran on this engine, in worker threads"
    assert blocks._ENGINES == engines, "no graph loaded again, and the shared engine let go"


@pytest.fixture(scope="module")
def pts(graph: starroute.Graph) -> np.ndarray:
    return np.array(random_points(graph.engine.graph, 60, seed=7))


def test_table_on_dask_equals_in_process(graph: starroute.Graph, client, pts: np.ndarray) -> None:
    here = graph.table(pts[:45], pts[20:])
    there = graph.table(pts[:45], pts[20:], scheduler=client, block=(16, 16))
    np.testing.assert_array_equal(there.durations_s, here.durations_s)
    np.testing.assert_array_equal(there.distances_m, here.distances_m)
    # each worker loaded the graph once and answered its blocks with it
    loaded = client.run(lambda: sorted(__import__("starroute.blocks").blocks._ENGINES))
    assert set(map(len, loaded.values())) <= {1} and sum(map(len, loaded.values())) >= 1
    acc_here = graph.accessibility(pts[:45], pts[20:], minutes=[1, 3], k=3)
    acc_there = graph.accessibility(pts[:45], pts[20:], minutes=[1, 3], k=3, scheduler=client, block=(16, 16))
    np.testing.assert_array_equal(acc_there.reached, acc_here.reached)
    np.testing.assert_array_equal(acc_there.nearest, acc_here.nearest)


def test_a_custom_model_table_on_dask_equals_in_process(graph: starroute.Graph, client, pts: np.ndarray) -> None:
    """The model travels as its JSON; each worker builds its metric once and answers every block on it."""
    slow = {"speed": [{"if": "road_class == PRIMARY || road_class == SECONDARY", "multiply_by": 0.5}]}
    here = graph.table(pts[:30], pts[20:], custom_model=slow)
    there = graph.table(pts[:30], pts[20:], scheduler=client, block=(16, 16), custom_model=slow)
    np.testing.assert_array_equal(there.durations_s, here.durations_s)
    plain = graph.table(pts[:30], pts[20:])
    assert np.nansum(here.durations_s) > np.nansum(plain.durations_s)
    acc = graph.accessibility(pts[:30], pts[20:], minutes=[2], scheduler=client, block=(16, 16), custom_model=slow)
    np.testing.assert_array_equal(acc.reached[:, 0], (here.durations_s <= 120).sum(axis=1))


def flaky_table(marker: str, graph_dir: str, src, dst, exclude):
    """Fails the first time it runs for `marker` (a file: the attempts run in other processes)."""
    p = Path(marker)
    if not p.exists():
        p.touch()
        raise RuntimeError("worker lost")
    return table_task(graph_dir, src, dst, exclude)


def test_failed_block_on_dask_is_retried(graph: starroute.Graph, client, pts: np.ndarray, tmp_path: Path) -> None:
    src, dst, _ = graph._snap_table(pts[:20], None, None)
    blocks = plan(20, 20, 10, 10)
    sink = DenseSink(20, 20)
    notes: list[str] = []

    class Notes:
        def advance(self, cells: int) -> None:
            pass

        def note(self, message: str) -> None:
            notes.append(message)

    def submit(b: Block):
        marker = str(tmp_path / f"{b.i0}-{b.j0}") if (b.i0, b.j0) == (10, 0) else str(tmp_path / "never")
        if (b.i0, b.j0) != (10, 0):
            (tmp_path / "never").touch()
        return client.submit(flaky_table, marker, str(graph.path), src[b.i0 : b.i1], dst[b.j0 : b.j1], (), pure=False)

    out = run_dask(client, blocks, submit, lambda b, r: sink.write(b, *r), Notes(), retries=1)
    assert out.retried == [(10, 0)] and len(notes) == 1 and "worker lost" in notes[0]
    np.testing.assert_array_equal(sink.durations, graph.table(pts[:20]).durations_s)


def _csv(path: Path, pts: np.ndarray, ids: list | None = None) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "lat", "lon"] if ids is not None else ["lon", "lat"])
        for k, (lon, lat) in enumerate(pts):
            w.writerow([ids[k], lat, lon] if ids is not None else [lon, lat])
    return path


def test_matrix_command_parquet_and_npz(graph: starroute.Graph, client, pts: np.ndarray, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    src_ids = [f"s{k}" for k in range(40)]
    sources = _csv(tmp_path / "sources.csv", pts[:40], src_ids)
    dests = _csv(tmp_path / "dest.csv", pts[25:])
    expected = graph.table(pts[:40], pts[25:])
    address = client.scheduler.address
    out = tmp_path / "m.parquet"
    args = ["matrix", str(graph.path), str(sources), "--destinations", str(dests), "-o", str(out), "--block", "16x9"]
    assert cli([*args, "--scheduler", address, "-q"]) == 0
    t = pq.read_table(out).to_pandas()
    assert list(t.columns) == ["source", "destination", "duration_s", "distance_m"] and len(t) == 40 * 35
    i = t["source"].str[1:].astype(int).to_numpy()
    j = t["destination"].to_numpy()
    for col, want in (("duration_s", expected.durations_s), ("distance_m", expected.distances_m)):
        got = np.full(want.shape, -1.0)
        got[i, j] = t[col].to_numpy(dtype=float, na_value=np.nan)
        np.testing.assert_array_equal(got, want)
    npz = tmp_path / "m.npz"
    assert cli(["matrix", str(graph.path), str(sources), "-o", str(npz), "--scheduler", address, "-q"]) == 0
    with np.load(npz) as z:
        square = graph.table(pts[:40])
        np.testing.assert_array_equal(z["durations_s"], square.durations_s)
        np.testing.assert_array_equal(z["distances_m"], square.distances_m)
        assert z["source_id"].tolist() == src_ids == z["destination_id"].tolist()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest.csv", "m.npz", "m.parquet", "sources.csv"]


def test_matrix_command_refuses_bad_input(graph: starroute.Graph, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n1,2\n")
    good = _csv(tmp_path / "good.csv", np.array([[7.4197, 43.7311]]))
    off = _csv(tmp_path / "off.csv", np.array([[7.4197, 43.7311], [120.5, 100.0]]))
    empty = tmp_path / "empty.csv"  # a cell left empty: a null in the column, no coordinate
    empty.write_text("lon,lat\n7.4197,43.7311\n7.42,\n")
    text = tmp_path / "text.csv"
    text.write_text("lon,lat\n7.4197,43.7311\nabc,43.7\n")
    cases = [
        ([str(graph.path), str(empty), "-o", str(tmp_path / "m.npz")], "empty.csv: line 3: (7.42, nan) is no lon, lat"),
        ([str(graph.path), str(text), "-o", str(tmp_path / "m.npz")], "lon and lat must be numbers"),
        ([str(graph.path), str(off), "-o", str(tmp_path / "m.npz")], "off.csv: line 3: (120.5, 100.0) is no lon, lat"),
        ([str(graph.path), str(bad), "-o", str(tmp_path / "m.npz")], "lon and lat"),
        ([str(graph.path), str(good), "-o", str(tmp_path / "m.csv")], ".parquet or .npz"),
        ([str(tmp_path / "nograph"), str(good), "-o", str(tmp_path / "m.npz")], "nograph"),
        ([str(graph.path), str(good), "-o", str(tmp_path / "m.npz"), "--exclude", "bridges"], "bridges"),
    ]
    for args, words in cases:
        assert cli(["matrix", *args]) == 2
        assert words in capsys.readouterr().err
    assert not list(tmp_path.glob("m.*"))


def test_matrix_command_leaves_out_points_off_the_map(graph: starroute.Graph, client, pts: np.ndarray, tmp_path: Path,
                                                      capsys) -> None:  # fmt: skip
    """A point with no road within the radius does not stop the job: it is reported by file, line and id (how far
    the nearest road is, lon and lat swapped?), its cells are null, every other cell is the table's; `--radius`
    looks farther."""
    import pyarrow.parquet as pq

    good = pts[:6]
    rows = [good[0], (0.0, 0.0), good[1], good[2], (43.7311, 7.4197), good[3], (7.5, 43.8), good[4], good[5]]
    ids = [f"p{k}" for k in range(len(rows))]
    sources = _csv(tmp_path / "points.csv", np.array(rows), ids)
    dests = _csv(tmp_path / "dest.csv", np.array([good[5], (0.0, 0.0), good[0]]))
    out = tmp_path / "m.parquet"
    args = ["matrix", str(graph.path), str(sources), "--destinations", str(dests), "-o", str(out)]
    assert cli([*args, "--scheduler", client.scheduler.address, "--block", "4x2"]) == 0
    err = capsys.readouterr().err
    assert "4 point(s) have no road within 1000 m" in err, err
    for line, ident in ((3, "p1"), (6, "p4"), (8, "p6")):
        assert f"{sources} line {line} (id {ident}): no road segment within 1000 m" in err, err
    assert f"{dests} line 3 (id 1): no road segment within 1000 m of (0.0, 0.0)" in err, err
    swapped = next(s for s in err.splitlines() if "(id p4)" in s)
    assert "did you swap them? (7.4197, 43.7311) is" in swapped, swapped
    far = next(s for s in err.splitlines() if "(id p6)" in s)
    assert "the nearest is" in far and "did you swap" not in far, far

    t = pq.read_table(out).to_pandas()
    assert len(t) == len(rows) * 3
    kept_src, kept_dst = [0, 2, 3, 5, 7, 8], [0, 2]
    want = graph.table(np.array(rows)[kept_src], np.array([good[5], good[0]]))
    got = np.full((len(rows), 3), -1.0)
    got[t["source"].str[1:].astype(int).to_numpy(), t["destination"].to_numpy()] = t["duration_s"].to_numpy(
        dtype=float, na_value=np.nan
    )
    np.testing.assert_array_equal(got[np.ix_(kept_src, kept_dst)], want.durations_s)
    left = np.ones(got.shape, dtype=bool)
    left[np.ix_(kept_src, kept_dst)] = False
    assert np.isnan(got[left]).all()

    # farther: the point 7 km out snaps; the others stay left out
    assert cli([*args, "--scheduler", client.scheduler.address, "--radius", "8000", "-q"]) == 0
    err = capsys.readouterr().err
    assert "3 point(s) have no road within 8000 m" in err and "(id p6)" not in err, err


def test_npz_blocks_written_in_place_in_any_order(tmp_path: Path) -> None:
    """`NpzSink` writes each block straight into the archive: blocks in any order give the whole matrices (NaN
    kept), the ids, members whose CRCs check, and nothing beside the output; an aborted one leaves nothing."""
    import zipfile

    from starroute.sinks import NpzSink

    rng = np.random.default_rng(3)
    n, m = 37, 23
    dur = rng.random((n, m))
    dur[rng.random((n, m)) < 0.1] = np.nan
    dist = rng.random((n, m))
    out = tmp_path / "m.npz"
    sink = NpzSink(out, n, m, np.arange(n), np.array([f"d{j}" for j in range(m)]))
    blocks = plan(n, m, 8, 5, by_columns=True)
    for b in blocks[::-1]:
        sink.write(b, dur[b.i0 : b.i1, b.j0 : b.j1], dist[b.i0 : b.i1, b.j0 : b.j1])
    sink.close()
    with zipfile.ZipFile(out) as z:
        assert z.testzip() is None
    with np.load(out) as got:
        np.testing.assert_array_equal(got["durations_s"], dur)
        np.testing.assert_array_equal(got["distances_m"], dist)
        assert got["source_id"].tolist() == list(range(n)) and got["destination_id"].tolist()[-1] == "d22"
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]
    NpzSink(tmp_path / "x.npz", 3, 3, np.arange(3), np.arange(3)).abort()
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]

"""The preprocess's memory helpers: the heap trimmed between stages, and the comparison that shows a leaner build is
the same graph (`harness.graph_bytes`)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np

from floor.format.graph import graph_in_memory, save_graph
from floor.memory import trim_heap
from floor.report import Reporter
from harness.graph_bytes import differences, table
from preprocessing.graph import arrays_from_arcs


def _graph(path: Path, weights: list[int], built_at: str) -> Path:
    arrays = arrays_from_arcs([0, 1, 1, 2], [1, 0, 2, 1], weights)
    manifest = {"built_at": built_at, "stages": {"build graph": {"seconds": 0.1, "peak_rss_mb": 9.0}}, "counts": {}}
    manifest["counts"] = {"nodes": 3, "arcs": 4}
    return save_graph(path, arrays, manifest)


def test_trim_heap_hands_freed_pages_back() -> None:
    assert trim_heap()  # glibc here: malloc_trim ran


def test_a_stage_ends_with_the_heap_trimmed(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls = []
    monkeypatch.setattr("floor.report.trim_heap", lambda: calls.append(1) or True)
    rep = Reporter(quiet=True)
    with rep.stage("build graph"):
        pass
    assert calls == [1] and "build graph" in rep.stages


def test_same_graph_whatever_the_timings(tmp_path: Path) -> None:
    a = _graph(tmp_path / "a", [10, 10, 20, 20], "2025-01-01T00:00:00+00:00")
    b = _graph(tmp_path / "b", [10, 10, 20, 20], "2025-06-01T00:00:00+00:00")
    assert differences(a, b) == []
    lines = table(a)
    assert lines[-1].startswith("total") and any(line.startswith("arc_weight ") for line in lines)


def test_other_bytes_or_dtype_are_differences(tmp_path: Path) -> None:
    a = _graph(tmp_path / "a", [10, 10, 20, 20], "x")
    b = _graph(tmp_path / "b", [10, 10, 20, 21], "x")
    diffs = differences(a, b)
    assert "array arc_weight: other bytes" in diffs
    np.save(b / "extra.npy", np.zeros(2, dtype=np.int8))
    assert any(d.startswith("array extra: only in") for d in differences(a, b))


def _grid(k: int) -> dict[str, np.ndarray]:
    """A k x k grid of two-way roads with random weights: a graph whose hierarchy has shortcuts."""
    rng = np.random.default_rng(1)
    tail: list[int] = []
    head: list[int] = []
    weight: list[int] = []
    for v in range(k * k):
        for u in (v + 1 if (v + 1) % k else -1, v + k if v + k < k * k else -1):
            if u >= 0:
                w = int(rng.integers(10, 100))
                tail += [v, u]
                head += [u, v]
                weight += [w, w]
    return arrays_from_arcs(tail, head, weight, [10 * w for w in weight])


def test_the_hierarchys_finalize_holds_little_beside_its_output(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`contract._finalize` runs at the contraction's peak: its temporaries (int32, each dropped once spent, the
    durations written into the arc rows) stay under twice the arrays it returns (int64 copies and a second copy of
    the arc rows for the durations were 3.7x)."""
    import preprocessing.contract as contract

    inner, extra = contract._finalize, []

    def measured(*args):  # type: ignore[no-untyped-def]
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = inner(*args)
        extra.append(tracemalloc.get_traced_memory()[1] - start)
        return out

    monkeypatch.setattr(contract, "_finalize", measured)
    graph = graph_in_memory(_grid(60))
    tracemalloc.start()
    try:
        arrays, meta = contract.build_ch(graph)
    finally:
        tracemalloc.stop()
    assert meta["shortcuts"] > 0 and arrays["ch_up_arcs"].shape[1] == 4
    assert extra[0] < 2 * sum(a.nbytes for a in arrays.values())


# The memory budget (issue 45): an estimate before the run, the side stages beside or after, a clear stop.


def _preprocess(out: Path, **kw):  # type: ignore[no-untyped-def]
    from preprocessing.pipeline import preprocess
    from tests.conftest import BUNDLED

    return preprocess(BUNDLED, out, landmarks=4, quiet=True, basemap=False, **kw)


def test_the_estimate_grows_with_the_extract_and_reads_its_format(tmp_path: Path) -> None:
    from preprocessing import memory_budget as mb

    small, big, xml = tmp_path / "a.osm.pbf", tmp_path / "b.osm.pbf", tmp_path / "b.osm"
    small.write_bytes(b"x" * 2**20)
    big.write_bytes(b"x" * 9 * 2**20)
    xml.write_bytes(b"x" * 9 * 2**20)
    one, nine = mb.run_estimate(small), mb.run_estimate(big)
    assert nine.after > one.after > mb.BASE_AFTER_MIB and nine.beside > nine.after
    assert 670 < nine.beside < 720 and 620 < nine.after < 660  # the 1 M network's 8.58 MiB: 692 and 638 measured
    twenty = tmp_path / "c.osm.pbf"  # the 20 M network's 171.6 MiB: 7,679 measured (build graph)
    with twenty.open("wb") as f:
        f.truncate(179_929_422)
    assert 7_500 < mb.run_estimate(twenty).beside < 7_900 and 7_500 < mb.build_estimate(twenty) < 7_900
    assert mb.run_estimate(xml).after < one.after  # XML holds a PBF's nodes in some 17 times the bytes


def test_available_memory_can_be_said(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from preprocessing import memory_budget as mb

    monkeypatch.setenv(mb.AVAILABLE_ENV, "1234")
    assert mb.available_mib() == 1234.0
    monkeypatch.delenv(mb.AVAILABLE_ENV)
    assert (mb.available_mib() or 0) > 0 and mb.rss_mib() > 0  # this machine's, from /proc


def test_side_stages_beside_only_when_they_fit_and_the_graph_is_the_same(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from preprocessing import memory_budget as mb

    monkeypatch.setattr(mb, "rss_mib", lambda: 0.0)
    monkeypatch.setenv(mb.AVAILABLE_ENV, "100000")
    beside = _preprocess(tmp_path / "beside")
    low = _preprocess(tmp_path / "low", low_memory=True)
    monkeypatch.setenv(mb.AVAILABLE_ENV, "100")  # holds each stage, not the margin the three together need
    monkeypatch.setattr(mb, "run_estimate", lambda path: mb.RunEstimate(90.0, 95.0))
    monkeypatch.setattr(mb, "build_estimate", lambda path: 90.0)
    short = _preprocess(tmp_path / "short")
    memory = {g.name: json.loads((g / "manifest.json").read_text())["memory"] for g in (beside, low, short)}
    assert memory["beside"]["side_stages"] == "beside" and memory["beside"]["available_mib"] == 100000
    assert (memory["low"]["side_stages"], memory["low"]["why"]) == ("after", "--low-memory")
    assert (memory["short"]["side_stages"], memory["short"]["why"]) == (
        "after",
        "beside would not fit the available memory",
    )
    stages = json.loads((beside / "manifest.json").read_text())["stages"]
    assert stages["cch (order)"]["beside"] == "contract (CH)"
    assert "beside" not in json.loads((low / "manifest.json").read_text())["stages"]["cch (order)"]
    assert differences(beside, low) == [] and differences(beside, short) == []


def test_an_extract_the_machine_cannot_hold_stops_before_reading(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from preprocessing import memory_budget as mb
    from tests.conftest import BUNDLED
    from tests.unit.test_preprocess_cli import leftovers, run

    monkeypatch.setattr(mb, "rss_mib", lambda: 0.0)
    monkeypatch.setenv(mb.AVAILABLE_ENV, "20")
    out = tmp_path / "g"
    res = run(str(BUNDLED), "-o", str(out))
    assert res.exit_code == 1, res.output
    assert "this machine has 20 MiB available" in res.output and "no graph was written" in res.output
    assert "--force-memory" in res.output and "read ways" not in res.output  # stopped before the first stage
    assert leftovers(tmp_path) == []
    res = run(str(BUNDLED), "-o", str(out), "--force-memory", "--landmarks", "2")
    assert res.exit_code == 0, res.output
    assert "CCH order and landmarks after the contraction" in res.output  # the summary says the choice


def test_a_stage_short_of_memory_stops_and_leaves_the_old_graph(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The check before the search stages: the contraction would take more than is available, so the run stops
    with the reason, and the graph directory it was to replace is untouched (nothing half-written beside it)."""
    from preprocessing import memory_budget as mb

    monkeypatch.setenv(mb.AVAILABLE_ENV, "100000")
    old = _preprocess(tmp_path / "g")
    before = {f.name: f.stat().st_mtime_ns for f in old.iterdir()}
    monkeypatch.setattr(mb, "search_extra_mib", lambda *a, **k: mb.SearchExtra(200000.0, 1.0, 1.0))
    try:
        _preprocess(tmp_path / "g", force=True)
    except mb.NotEnoughMemory as exc:
        assert str(exc).startswith("contract (CH) needs about 200,000 MiB more"), exc
    else:
        raise AssertionError("the contraction ran without the memory it needs")
    assert {f.name: f.stat().st_mtime_ns for f in old.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]


def test_the_road_graph_waits_on_disk_while_the_search_stages_run(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Once the edge-based search graph is built, the road graph's arrays are spilled to a scratch folder and mapped
    back read-only (out of the resident set) while the hierarchy contracts, the CH's own arrays after it; the graph
    written is the same as with everything in memory, and no scratch folder is left."""
    import preprocessing.pipeline as pipeline
    import preprocessing.spill as spill_module
    from preprocessing.spill import Spill

    monkeypatch.setattr(spill_module, "MIN_BYTES", 0)  # Monaco's arrays are small
    monkeypatch.setattr(pipeline, "CONTRACT_THREADS", 1)  # the side stages after the contraction: ch_* spilled first
    inner, seen = pipeline._contract_all, {}

    def contract_all(graph, arrays, *args, **kw):  # type: ignore[no-untyped-def]
        seen.update({name: isinstance(a, np.memmap) for name, a in arrays.items()})
        return inner(graph, arrays, *args, **kw)

    monkeypatch.setattr(pipeline, "_contract_all", contract_all)
    spilled = _preprocess(tmp_path / "spilled")
    assert seen["geom_lon"] and seen["arc_head"] and not seen["eb_arc_head"]
    memory = json.loads((spilled / "manifest.json").read_text())["memory"]
    assert memory["spilled_mib"] > 0
    monkeypatch.setattr(pipeline, "CONTRACT_THREADS", 2)
    monkeypatch.setenv("STARROUTE_AVAILABLE_MIB", "100000")  # the CCH order and landmarks beside, spilled there
    beside = _preprocess(tmp_path / "beside")
    memory = json.loads((beside / "manifest.json").read_text())["memory"]
    assert memory["side_stages"] == "beside" and memory["spilled_mib"] > 0
    monkeypatch.setattr(Spill, "out", lambda self, arrays, names: 0)
    kept = _preprocess(tmp_path / "kept")
    assert differences(spilled, kept) == [] and differences(beside, kept) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["beside", "kept", "spilled"]


def test_a_spill_that_cannot_be_written_keeps_the_arrays(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import preprocessing.spill as spill_module

    arrays = {"a": np.arange(100_000, dtype=np.int32), "small": np.arange(3, dtype=np.int32)}
    from floor.format import files

    with spill_module.Spill(tmp_path / "g") as spill:
        assert spill.dir in files._TRACKED  # a signal's `abandon` removes it with the other temporaries
        assert spill.out(arrays, ["a", "small"]) == 400_000
        assert isinstance(arrays["a"], np.memmap) and not isinstance(arrays["small"], np.memmap)
        assert np.array_equal(arrays["a"], np.arange(100_000)) and not arrays["a"].flags.writeable

        def full(path, a):  # type: ignore[no-untyped-def]
            path.write_bytes(b"x")
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(spill_module, "save_array", full)
        b = {"b": np.ones(50_000, dtype=np.int64)}
        assert spill.out(b, ["b"]) == 0 and not isinstance(b["b"], np.memmap)
        folder = spill.dir
    assert list(tmp_path.iterdir()) == [] and folder not in files._TRACKED


def test_the_record_table_holds_the_whole_hierarchy_from_the_start() -> None:
    """The contraction's record table is made with room for the shortcuts (untouched rows take no memory), so it
    is not copied into a larger one mid-contraction, old and new resident at once (2 rows per base arc: 1.5x copies)."""
    import preprocessing.contract as contract

    graph = graph_in_memory(_grid(60))
    rec, base = contract._base_records(graph)
    arrays, meta = contract.build_ch(graph)
    assert meta["base_arcs"] == base and meta["ch_arcs"] > 2 * base + 16  # more than the former first capacity
    assert meta["ch_arcs"] <= rec.shape[0]


def test_the_finalize_starts_without_the_rounds_state(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """When `contract._finalize` starts (the contraction's peak), the rounds' adjacency lists, witness rows and
    order state are gone (before: held through their tuples, the witness heap too): only the record table
    and the per-node ranks and offsets (12 bytes a node) remain of what build_ch allocated."""
    import preprocessing.contract as contract

    inner, held = contract._finalize, []

    def measured(n, rec, *args):  # type: ignore[no-untyped-def]
        held.append((tracemalloc.get_traced_memory()[0], rec.base.nbytes if rec.base is not None else rec.nbytes, n))
        return inner(n, rec, *args)

    monkeypatch.setattr(contract, "_finalize", measured)
    graph = graph_in_memory(_grid(60))
    tracemalloc.start()
    try:
        contract.build_ch(graph)
    finally:
        tracemalloc.stop()
    traced, records, n = held[0]
    assert traced - records < 40 * n + 65536, (traced, records, n)

"""The preprocess's memory helpers: the heap trimmed between stages, and the comparison that shows a leaner build is
the same graph (`harness.graph_bytes`)."""

from __future__ import annotations

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

"""The preprocess's memory helpers: the heap trimmed between stages, and the comparison that shows a leaner build is
the same graph (`harness.graph_bytes`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from floor.format.graph import save_graph
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

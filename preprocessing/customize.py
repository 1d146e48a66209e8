"""`starroute customize`: a new metric for a built graph from OSRM's speed and turn penalty files, written beside it.

read the files (a malformed one stops everything here, nothing written) -> load the graph's preprocessed metric ->
`preprocessing.metric.new_metric` (road arcs, turns, search arcs) -> the hierarchies on the new weights -> the
landmark tables again if any arc got lighter (old bounds would overestimate), else the old ones stand ->
`preprocessing.artifacts.save_metric` (atomic; a running server applies it on SIGHUP).
"""

from __future__ import annotations

import copy
import hashlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .artifacts import (
    CH_PREFIX,
    METRIC_MANIFEST_KEYS,
    Graph,
    built_on_search_graph,
    clear_metric,
    graph_in_memory,
    load_graph,
    save_metric,
    search_view_arrays,
)
from .geometry import measured_max_speed_mps
from .metric import MetricReport, new_metric
from .speeds import Source, read_segment_speeds, read_turn_penalties
from .units import CLOSED_DS


@dataclass
class Customized:
    """What a customization did: the metric's id, the report, seconds per step."""

    metric_id: str | None
    report: MetricReport
    seconds: dict[str, float] = field(default_factory=dict)
    landmarks: str = "none"  # "kept" (no arc got lighter), "recomputed", or "none" (the graph has none)
    hierarchy: str = "none"  # how the hierarchies were made for the metric


def _sources(kind: str, paths: Sequence[Source]) -> list[dict[str, Any]]:
    out = []
    for p in paths:
        if isinstance(p, tuple):
            name, data = p
        else:
            name, data = os.path.abspath(p), open(p, "rb").read()  # noqa: SIM115 - read once, already parsed
        out.append({"kind": kind, "path": name, "sha256": hashlib.sha256(data).hexdigest()})
    return out


def metric_arrays(
    base: Graph, arrays: dict[str, np.ndarray], say: Callable[[str], None] | None = None
) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, str]]:
    """The search stages on a new metric's road and turn `arrays` over the `base` graph (its preprocessed metric):
    the hierarchies, and the landmark tables where an arc got lighter. Returns (arrays to store with the metric,
    manifest fields, how each stage was made)."""
    merged = {**base.arrays, **arrays}
    manifest = copy.deepcopy(dict(base.manifest))
    fields: dict[str, Any] = {"max_speed_mps": measured_max_speed_mps(merged)}
    how = {"hierarchy": "none", "landmarks": "none"}
    edge = "eb_arc_weight" in merged and base.meta.search_graph == "edge"
    view_arrays = search_view_arrays(merged) if edge else dict(merged)
    view_arrays.update({k: v for k, v in base.arrays.items() if built_on_search_graph(k)})
    view = graph_in_memory(view_arrays, manifest)
    out = dict(arrays)
    if "cch_first" in base.arrays:  # the customizable hierarchy: customized in a fraction of a second
        from .cch_customize import customize_arrays

        t0 = time.perf_counter()
        closed = np.asarray(view.arc_weight) >= CLOSED_DS  # a closed road is in no hierarchy
        out.update(
            customize_arrays(
                base.arrays, view.arc_tail, view.arc_head, view.arc_weight, view.arc_dist, view.arc_duration, closed
            )
        )
        fields["ch"] = {**dict(manifest.get("ch") or {}), "customized": True, "shortcuts": None}
        fields["excludable"] = [
            {**e, "prefix": None if e.get("prefix") not in (None, CH_PREFIX) else e.get("prefix")}
            for e in manifest.get("excludable", [])
        ]
        how["hierarchy"] = f"customized on the CCH ({time.perf_counter() - t0:.2f} s)"
    elif "ch_rank" in base.arrays:
        from .pipeline import _contract_all  # noqa: PLC2701 - the pipeline's contraction, run again on new weights
        from .report import Reporter

        t0 = time.perf_counter()
        ch_out: dict[str, np.ndarray] = {}
        _contract_all(view, ch_out, manifest, Reporter(quiet=True))  # every hierarchy, the excluded sets' too
        out.update(ch_out)
        fields["ch"] = manifest.get("ch")
        fields["excludable"] = manifest.get("excludable")
        how["hierarchy"] = f"contracted again ({time.perf_counter() - t0:.1f} s)"
        if say:
            say(f"hierarchies contracted on the new weights in {time.perf_counter() - t0:.1f} s")
    if "lm_nodes" in base.arrays:
        base_w = np.asarray(base.arrays["eb_arc_weight" if edge else "arc_weight"])
        new_w = np.asarray(view_arrays["arc_weight"])
        if np.any(new_w < base_w):
            from .landmarks import landmark_tables, landmark_tables_on_hierarchy

            t0 = time.perf_counter()
            nodes = np.asarray(base.arrays["lm_nodes"])
            if "ch_rank" in out:  # the new main hierarchy: two sweeps per landmark instead of a Dijkstra
                out.update(landmark_tables_on_hierarchy(out, nodes))
            else:
                out.update(landmark_tables(view, nodes))
            how["landmarks"] = "recomputed"
            lm = dict(manifest.get("landmarks") or {})
            lm["seconds"] = round(time.perf_counter() - t0, 3)
            fields["landmarks"] = lm
        else:
            how["landmarks"] = "kept"
    return out, {k: v for k, v in fields.items() if k in METRIC_MANIFEST_KEYS}, how


def customize(
    graph_dir: str | os.PathLike[str],
    segment_files: Sequence[Source] = (),
    turn_files: Sequence[Source] = (),
    say: Callable[[str], None] | None = None,
) -> Customized:
    """Apply OSRM speed and turn penalty files to the graph in `graph_dir` (always on top of its preprocessed
    metric) and make the result its current metric. `MetricFileError` for a malformed file and `FormatError` for a
    bad graph, both before anything is written."""
    t0 = time.perf_counter()
    secs: dict[str, float] = {}
    speeds = read_segment_speeds(segment_files) if segment_files else None
    turns = read_turn_penalties(turn_files) if turn_files else None
    secs["read files"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    base = load_graph(graph_dir, metric=False, check=False)  # checked when it was written; the metric is at load
    arrays, report = new_metric(dict(base.arrays), speeds, turns)
    if turns is None:  # the turns' own values stay the preprocessed ones: nothing to store
        arrays = {k: v for k, v in arrays.items() if k not in ("eb_arc_turn", "eb_arc_turn_duration")}
    secs["apply"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    stored, fields, how = metric_arrays(base, arrays, say)
    secs["search stages"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    info = {
        "sources": _sources("segment_speeds", segment_files) + _sources("turn_penalties", turn_files),
        "report": report.as_dict(),
        "stages": how,
    }
    secs["write"] = 0.0
    info["seconds"] = {k: round(v, 3) for k, v in secs.items()}
    mid = save_metric(graph_dir, stored, fields, info)
    secs["write"] = time.perf_counter() - t3
    return Customized(mid, report, secs, how["landmarks"], how["hierarchy"])


def reset(graph_dir: str | os.PathLike[str]) -> bool:
    """Serve the preprocessed metric again; False when it already was."""
    load_graph(graph_dir, metric=False, check=False)  # a graph directory, or FormatError
    return clear_metric(graph_dir)

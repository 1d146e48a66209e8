"""`starroute customize`: a new metric for a built graph from OSRM's speed and turn penalty files, written beside it.

read the files (a malformed one stops everything here, nothing written) -> load the graph's preprocessed metric ->
`preprocessing.metric.new_metric` (road arcs, turns, search arcs) -> `floor.format.metrics.save_metric` (atomic;
a running server applies it on SIGHUP). That much is plain numpy: the command never imports numba, and takes a
third of a second on a city. The search stages follow from the weights and come after (`complete_metric`, or
`stages=True` at once): the hierarchy customized on the new weights, and the landmark tables again if any arc got
lighter (old bounds would overestimate), else the old ones stand. The first process to load a metric without them
(a server on SIGHUP: its supervisor, before any worker) computes them and adds them to the metric's directory, so
every later load maps them.
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

from floor.format.arrays import CH_PREFIX, METRIC_MANIFEST_KEYS, FormatError, built_on_search_graph, search_view_arrays
from floor.format.graph import Graph, graph_in_memory, load_graph
from floor.format.metrics import (
    clear_metric,
    load_metric_arrays,
    metric_pending,
    read_metric,
    save_metric,
    save_metric_stages,
)
from floor.format.units import CLOSED_DS
from floor.kernels.measure import measured_max_speed_mps
from preprocessing.metric import MetricReport, new_metric
from preprocessing.osm.speeds import MetricFileError, Source, read_segment_speeds, read_turn_penalties
from preprocessing.osm.time_profiles import read_segment_profiles, read_time_profiles
from preprocessing.time_metric import TimeReport, time_metric
from preprocessing.timezones import TimezoneError, check_timezone, default_timezone

# what `new_metric` and the new metric's top speed read of the preprocessed graph
METRIC_INPUTS = frozenset(
    {"geom_osm_id", "geom_first", "geom_lon", "geom_lat", "geom_seg_weight", "geom_seg_duration"}
    | {"arc_geom", "arc_weight", "arc_duration", "arc_dist"}
    | {"eb_node_arc", "eb_arc_tail", "eb_arc_head", "eb_arc_weight", "eb_arc_duration", "eb_arc_turn"}
    | {"eb_arc_turn_duration"}
)


@dataclass
class Customized:
    """What a customization did: the metric's id, the report, seconds per step."""

    metric_id: str | None
    report: MetricReport
    seconds: dict[str, float] = field(default_factory=dict)
    landmarks: str = "none"  # "kept" (no arc got lighter), "recomputed", "pending", or "none" (the graph has none)
    hierarchy: str = "none"  # how the hierarchies were made for the metric ("pending": at its first load)
    time: TimeReport | None = None  # what the time profiles did (None: the metric has none)
    timezone: str | None = None  # the time profiles' zone


@dataclass
class MetricStages:
    """A metric's search stages (`complete_metric`): the arrays and manifest fields, how each stage was made, the
    seconds, and whether they were added to the metric's directory (False: it is read-only, or another process
    added them first)."""

    metric_id: str
    arrays: dict[str, np.ndarray]
    manifest: dict[str, Any]
    how: dict[str, str]
    seconds: float
    written: bool


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
        from floor.kernels.cch_customize import customize_arrays

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
        from floor.report import Reporter
        from preprocessing.pipeline import _contract_all  # noqa: PLC2701 - the pipeline's contraction, run again on new weights

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
            from preprocessing.landmarks import landmark_tables, landmark_tables_on_hierarchy

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
    stages: bool = False,
    time_profiles: Source | None = None,
    segment_profiles: Sequence[Source] = (),
    timezone: str | None = None,
) -> Customized:
    """Apply OSRM speed and turn penalty files, and time profiles (`time_profiles` with its `segment_profiles`,
    in `timezone`, by default the graph's: `preprocessing.timezones`), to the graph in `graph_dir` (always on top
    of its preprocessed metric) and make the result its current metric, its search stages pending (`stages`:
    computed and added now; time profiles alone need none: the static weights stay the preprocessed ones).
    `MetricFileError` for a malformed file or option and `FormatError` for a bad graph, both before anything is
    written."""
    t0 = time.perf_counter()
    secs: dict[str, float] = {}
    if (time_profiles is None) != (not segment_profiles):
        raise MetricFileError("time profiles need both files: --time-profiles and --segment-profiles")
    if timezone is not None and time_profiles is None:
        raise MetricFileError("--timezone goes with time profiles (--time-profiles, --segment-profiles)")
    if timezone is not None:
        try:
            check_timezone(timezone)
        except TimezoneError as exc:
            raise MetricFileError(str(exc)) from None
    speeds = read_segment_speeds(segment_files) if segment_files else None
    turns = read_turn_penalties(turn_files) if turn_files else None
    profiles = read_time_profiles(time_profiles) if time_profiles is not None else None
    seg_prof = read_segment_profiles(segment_profiles, profiles) if profiles is not None else None
    secs["read files"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    # checked when it was written (the metric is, at load); only what a metric is computed from
    base = load_graph(graph_dir, metric=False, check=False, names=METRIC_INPUTS)
    arrays, report = new_metric(dict(base.arrays), speeds, turns)
    if turns is None:  # the turns' own values stay the preprocessed ones: nothing to store
        arrays = {k: v for k, v in arrays.items() if k not in ("eb_arc_turn", "eb_arc_turn_duration")}
    secs["apply"] = time.perf_counter() - t1
    fields: dict[str, Any] = {"max_speed_mps": measured_max_speed_mps({**base.arrays, **arrays})}
    timed: TimeReport | None = None
    if profiles is not None and seg_prof is not None:
        t2 = time.perf_counter()
        td, timed = time_metric({**base.arrays, **arrays}, profiles, seg_prof)
        report.extra["time_profiles"] = timed.as_dict()
        timezone = timezone or default_timezone(base.manifest)
        fields["timezone"] = timezone
        if speeds is None and turns is None:  # the static metric stays the preprocessed one, its stages with it
            arrays = {}
        arrays.update(td)
        secs["time profiles"] = time.perf_counter() - t2
    pending = _pending(base, arrays)
    t3 = time.perf_counter()
    sources = _sources("segment_speeds", segment_files) + _sources("turn_penalties", turn_files)
    if time_profiles is not None:
        sources += _sources("time_profiles", [time_profiles]) + _sources("segment_profiles", segment_profiles)
    info = {"sources": sources, "report": report.as_dict(), "pending": pending}
    secs["write"] = 0.0
    info["seconds"] = {k: round(v, 3) for k, v in secs.items()}
    mid = save_metric(graph_dir, arrays, fields, info)
    secs["write"] = time.perf_counter() - t3
    has_lm = "lm_nodes" in base.manifest["arrays"]
    done = Customized(mid, report, secs, "pending" if "landmarks" in pending else "kept" if has_lm else "none")
    done.hierarchy = "pending" if "hierarchy" in pending else "none"
    done.time, done.timezone = timed, fields.get("timezone")
    if stages and pending:
        got = complete_metric(graph_dir, mid, say)
        if got is not None:
            secs["search stages"] = got.seconds
            done.hierarchy, done.landmarks = got.how["hierarchy"], got.how["landmarks"]
    return done


def _pending(base: Graph, arrays: dict[str, np.ndarray]) -> list[str]:
    """The search stages a metric of `arrays` over `base` needs: its hierarchy where the graph has one, and new
    landmark tables where some search arc got lighter (the preprocessed bounds would overestimate)."""
    out: list[str] = []
    if "arc_weight" not in arrays:  # time profiles alone: the preprocessed weights, and stages, stand
        return out
    stored = base.manifest["arrays"]  # every array of the graph, mapped or not
    if "cch_first" in stored or "ch_rank" in stored:
        out.append("hierarchy")
    if "lm_nodes" in stored:
        name = "eb_arc_weight" if "eb_arc_weight" in arrays else "arc_weight"
        if np.any(np.asarray(arrays[name]) < np.asarray(base.arrays[name])):
            out.append("landmarks")
    return out


def complete_metric(
    graph_dir: str | os.PathLike[str],
    metric_id: str | None = None,
    say: Callable[[str], None] | None = None,
    write: bool = True,
) -> MetricStages | None:
    """The search stages of the graph's current metric (`metric_id`, when given, must be it), added to its directory
    unless `write` is False or it cannot be written; None when the current metric needs none (or is another one).
    Seconds on a city: the hierarchy customized on the CCH, landmark tables on it."""
    current = read_metric(graph_dir)
    if current is None or (metric_id is not None and current.get("id") != metric_id) or not metric_pending(current):
        return None
    t0 = time.perf_counter()
    base = load_graph(graph_dir, metric=False, check=False)
    arrays = load_metric_arrays(current)
    stored, fields, how = metric_arrays(base, arrays, say)
    stage_arrays = {k: v for k, v in stored.items() if k not in arrays}
    stage_fields = {k: v for k, v in fields.items() if k != "max_speed_mps"}
    seconds = time.perf_counter() - t0
    written = False
    if write:
        try:
            written = save_metric_stages(
                graph_dir, current["id"], stage_arrays, stage_fields, {"how": how, "seconds": round(seconds, 3)}
            )
        except (OSError, FormatError):
            written = False  # a read-only graph directory, or a newer metric replaced it: kept in memory
    return MetricStages(current["id"], stage_arrays, stage_fields, how, seconds, written)


def reset(graph_dir: str | os.PathLike[str]) -> bool:
    """Serve the preprocessed metric again; False when it already was."""
    load_graph(graph_dir, metric=False, check=False)  # a graph directory, or FormatError
    return clear_metric(graph_dir)

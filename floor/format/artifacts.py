"""The graph-directory format, owned here alone: every stage's arrays (`ARRAYS`: name, dtype, shape rule, unit,
writer, readers), the typed `Manifest`, version, fingerprint, atomic save, load (with `floor.format.checks`).

A graph directory holds `manifest.json` plus one `.npy` per array. It is written into a temporary sibling
directory and renamed into place, so an interrupted build never leaves a half-written graph. Loading memory-maps
every array read-only and refuses a format-version or fingerprint mismatch with a sentence saying what to do.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from floor.format.files import committing, keep_created, make_parents, remove_created, save_array, track, umask, untrack
from floor.format.integrity import (
    DIGEST,
    FileState,
    changed,
    digest,
    exchange,
    file_state,
    no_space,
    space_sentence,
    sweep_stale,
)

FORMAT_VERSION = 6  # 6: arc_head_penalty (a junction's obstacles charged on the turns passing it, as OSRM's), and
# within 6, optional (older graphs load without them): the encoded values arc_environment ... arc_max_weight, the
# per-segment values geom_seg_weight / geom_seg_duration, the travel mode arc_mode (and manifest `start_modes`);
# 5: geom_osm_id (OSRM's annotations=nodes, speed files by OSM node pairs);
# 4: arc_way, arc_duration, the turn stage (edge-based graph, `eb_*`, manifest `search_graph`);
# 3: guidance arrays (arc_lanes, arc_signs, arc_lane_count) and the guidance flags FLAG_TUNNEL / FLAG_CIRCULAR /
# FLAG_SPLIT in arc_flags; 2: FLAG_MOTORWAY set, per-exclude hierarchies (chx*_)
MANIFEST = "manifest.json"
# A metric (`starroute customize`): replacement arrays in `metrics/<id>/` with `metric.json`, made current by the
# symlink `metric` -> `metrics/<id>` (swapped atomically); loading a graph overlays its current metric.
METRIC_LINK = "metric"
METRICS_DIR = "metrics"
METRIC_MANIFEST = "metric.json"
METRIC_KEEP = 2  # metric directories kept: the current one and the one before (a server may still be reading it)
# A metric's search stages (its hierarchy, and its landmark tables where an arc got lighter) may come later than its
# weights: `starroute customize` writes the weights only and says which stages are pending (`metric.json`
# "pending"); the first process to load it (a server on SIGHUP) computes them and adds them in `metrics/<id>/stages/`
# with `stages.json` (renamed into place whole, so a reader sees all of them or none). Until then a loaded graph
# holds no hierarchy or landmark table of another metric: the preprocessed ones are left out.
METRIC_STAGES = "stages"
STAGES_MANIFEST = "stages.json"


@dataclass(frozen=True)
class ArraySpec:
    """One array of the format: its name (CH arrays under the main hierarchy's `ch_` prefix), dtype, shape rule in
    the graph's sizes, unit or meaning, the stage that writes it and who reads it.

    Sizes: n road nodes, m road arcs, c chains, p shape points, s strings, N search nodes and T turns (edge-based
    graph), r CH ranks (= the search graph's nodes), u/d upward/downward CH arcs, A CCH arcs, k landmarks.
    """

    name: str
    dtype: str
    shape: str
    meaning: str
    stage: str
    readers: str


_CORE = "preprocessing.graph"
_ENGINE = "engine"
_TURNS = "preprocessing.turns"
_CH = "preprocessing.contract"
_CCH = "preprocessing.cch"
_LM = "preprocessing.landmarks"
_BG = "preprocessing.basemap"
_PEN = "preprocessing.osm.penalties"
_EV = "preprocessing.osm.way_values"  # written by preprocessing.build; optional: graphs built before have none
_SEG = "preprocessing.build"  # per-segment values of the chains, and more; optional: graphs built before have none
_MODE = "preprocessing.build"  # the travel mode per arc; optional: graphs built before have none

# Every array of every stage, in one table. The core arrays are written by `preprocessing.graph.finalize_arrays`.
ARRAYS: tuple[ArraySpec, ...] = (
    ArraySpec("node_lon", "int32", "[n]", "1e-7 degree", _CORE, "engine, tiles"),
    ArraySpec("node_lat", "int32", "[n]", "1e-7 degree", _CORE, "engine, tiles"),
    ArraySpec("node_osm_id", "int64", "[n]", "OSM node id", _CORE, "nearest, guidance"),
    ArraySpec("node_component", "int32", "[n]", "SCC id, 0 the largest", _CORE, "snapping"),
    ArraySpec("first_out", "int32", "[n+1]", "CSR offsets of the arcs leaving each node", _CORE, "searches"),
    ArraySpec("arc_tail", "int32", "[m]", "node id", _CORE, "searches"),
    ArraySpec("arc_head", "int32", "[m]", "node id", _CORE, "searches"),
    ArraySpec("arc_weight", "int32", "[m]", "decisecond of weight", _CORE, "searches"),
    ArraySpec("arc_duration", "int32", "[m]", "decisecond of travel time", _CORE, "legs, tables, isochrones"),
    ArraySpec("arc_dist", "int32", "[m]", "decimetre", _CORE, "legs, tables"),
    ArraySpec("arc_geom", "int32", "[m]", "2 * chain + (1 if against the chain's order)", _CORE, "legs, snapping"),
    ArraySpec("arc_name", "int32", "[m]", "string id", _CORE, "steps"),
    ArraySpec("arc_ref", "int32", "[m]", "string id", _CORE, "steps"),
    ArraySpec("arc_class", "uint8", "[m]", "road class code (units.ROAD_CLASSES)", _CORE, "guidance, tiles"),
    ArraySpec("arc_flags", "uint8", "[m]", "FLAG_* bits (units)", _CORE, "exclude, guidance"),
    ArraySpec(
        "arc_lanes", "int32", "[m]", "string id of the turn:lanes of the arc's direction (0 none)", _CORE, "guidance"
    ),  # fmt: skip
    ArraySpec(
        "arc_signs", "int32", "[m]", 'string id of "destinations\x1fexits\x1fpronunciation" (0 none)', _CORE, "guidance"
    ),  # fmt: skip
    ArraySpec("arc_lane_count", "uint8", "[m]", "lanes of the way (0 unknown)", _CORE, "guidance"),
    ArraySpec("arc_way", "int64", "[m]", "OSM way id (restrictions name ways)", _CORE, "turns"),
    ArraySpec(
        "arc_head_penalty",
        "int32",
        "[m]",
        "decisecond of the obstacles at the head node (signals, signs, gates) the turns out of the arc charge; "
        "0 in a node-based graph, where the arc's own weight and duration hold them",
        _CORE,
        "turns",
    ),  # fmt: skip
    ArraySpec(
        "node_passing_penalty",
        "int32",
        "[n]",
        "decisecond charged on a passage through the node where OSRM compresses it away, on top of its obstacles "
        "(the turns add it; bicycle: OSRM's fake turn through a signal); optional, absent when all 0",
        _SEG,
        "turns",
    ),  # fmt: skip
    ArraySpec(
        "node_flags",
        "uint8",
        "[n]",
        "NODE_* bits (units): OSRM's graph compressor removes the node, a turning obstacle; optional: graphs built "
        "before it compute the first (road_classification.compressed_nodes) and have none of the second",
        _SEG,
        "turns, guidance",
    ),
    ArraySpec("in_first_out", "int32", "[n+1]", "CSR offsets of the arcs entering each node", _CORE, "searches"),
    ArraySpec("in_arc", "int32", "[m]", "arc id, by head", _CORE, "searches"),
    ArraySpec("geom_first", "int64", "[c+1]", "offsets of each chain's shape points", _CORE, "legs, snapping"),
    ArraySpec("geom_lon", "int32", "[p]", "1e-7 degree", _CORE, "legs, snapping"),
    ArraySpec("geom_lat", "int32", "[p]", "1e-7 degree", _CORE, "legs, snapping"),
    ArraySpec(
        "geom_osm_id",
        "int64",
        "[p]",
        "OSM node id of each shape point (0 unknown)",
        _CORE,
        "annotations=nodes, nearest",
    ),  # fmt: skip
    # OSRM's compressed geometry values (optional: graphs built before them split a phantom's arc by length)
    ArraySpec(
        "geom_seg_weight",
        "int32",
        "[p, 4]",
        "decisecond of weight at each shape point: the segment ending there travelled along the chain / against "
        "it, the node obstacles there charged along / against it (0 where no arc goes; an arc sums its column pair)",
        _SEG,
        "snapping (phantoms), metrics",
    ),
    ArraySpec(
        "geom_seg_duration", "int32", "[p, 4]", "decisecond of travel time, likewise", _SEG, "snapping, metrics"
    ),  # fmt: skip
    # OSRM's travel mode per arc (optional: graphs built before it derive the mode from FLAG_FERRY and the profile)
    ArraySpec(
        "arc_mode",
        "uint8",
        "[m]",
        "travel mode code of the arc's direction (units.TRAVEL_MODES: the profile's WayResult mode; never 0)",
        _MODE,
        "guidance (step modes), snapping (start modes), turns (mode changes)",
    ),
    ArraySpec(
        "arc_startpoint",
        "uint8",
        "[m]",
        "1 where a waypoint may snap onto the arc's way (OSRM's is_startpoint beyond the start modes: car.lua "
        "refuses a private service road); optional: graphs built before it have every arc",
        _MODE,
        "snapping",
    ),
    ArraySpec(
        "str_offsets", "int64", "[s+1]", "byte offsets of the string table (string 0 is empty)", _CORE, "names"
    ),  # fmt: skip
    ArraySpec("str_bytes", "uint8", "[*]", "UTF-8", _CORE, "names"),
    # GraphHopper's encoded values per road arc (`floor.format.encoded_values`: constants, units, decoding), from the
    # way's tags (`preprocessing.osm.way_values`); absent in graphs built before them (`encoded_values.has_value`)
    ArraySpec("arc_environment", "uint8", "[m]", "ROAD_ENVIRONMENT code", _EV, "custom models"),
    ArraySpec("arc_toll", "uint8", "[m]", "TOLL code of the arc's direction", _EV, "custom models"),
    ArraySpec("arc_surface", "uint8", "[m]", "SURFACE code", _EV, "custom models"),
    ArraySpec("arc_road_access", "uint8", "[m]", "ROAD_ACCESS code (a car's, every profile)", _EV, "custom models"),
    ArraySpec("arc_max_speed", "uint8", "[m]", "km/h limit of the arc's direction (0xFF none)", _EV, "custom models"),
    ArraySpec("arc_max_height", "uint8", "[m]", "decimetre (0xFF none, 254 for 25.4 m and more)", _EV, "custom models"),
    ArraySpec("arc_max_width", "uint8", "[m]", "decimetre (0xFF none, 254 for 25.4 m and more)", _EV, "custom models"),
    ArraySpec("arc_max_length", "uint8", "[m]", "decimetre (0xFF none, 254 for 25.4 m and more)", _EV, "custom models"),
    ArraySpec(
        "arc_max_weight", "uint16", "[m]", "0.1 t (0xFFFF none, 65534 for 6553.4 t and more)", _EV, "custom models"
    ),
    # the turn stage: an edge-based search graph (search node = road arc), under `eb_` + its road twin's name
    ArraySpec("eb_first_out", "int32", "[N+1]", "CSR offsets", _TURNS, "searches (search_view_arrays)"),
    ArraySpec("eb_arc_tail", "int32", "[T]", "search node id", _TURNS, "searches"),
    ArraySpec("eb_arc_head", "int32", "[T]", "search node id", _TURNS, "searches"),
    ArraySpec(
        "eb_arc_weight", "int32", "[T]", "decisecond: the turn plus the whole head road arc", _TURNS, "searches"
    ),  # fmt: skip
    ArraySpec("eb_arc_duration", "int32", "[T]", "decisecond of travel time, likewise", _TURNS, "tables"),
    ArraySpec("eb_arc_dist", "int32", "[T]", "decimetre of the head road arc", _TURNS, "tables"),
    ArraySpec("eb_arc_flags", "uint8", "[T]", "the head road arc's", _TURNS, "exclude"),
    ArraySpec("eb_arc_class", "uint8", "[T]", "the head road arc's", _TURNS, "exclude"),
    ArraySpec("eb_in_first_out", "int32", "[N+1]", "CSR offsets by head", _TURNS, "searches"),
    ArraySpec("eb_in_arc", "int32", "[T]", "search arc id, by head", _TURNS, "searches"),
    ArraySpec("eb_node_lon", "int32", "[N]", "1e-7 degree of the road arc's head", _TURNS, "heuristics"),
    ArraySpec("eb_node_lat", "int32", "[N]", "1e-7 degree of the road arc's head", _TURNS, "heuristics"),
    ArraySpec("eb_node_component", "int32", "[N]", "SCC id, 0 the largest", _TURNS, "snapping"),
    ArraySpec("eb_node_arc", "int32", "[N]", "the road arc of each search node", _TURNS, "path mapping"),
    ArraySpec("eb_arc_turn", "int32", "[T]", "decisecond of the turn's own weight", _TURNS, "legs"),
    ArraySpec("eb_arc_turn_duration", "int32", "[T]", "decisecond of the turn's own travel time", _TURNS, "legs"),
    # contraction hierarchies of the search graph: `ch_` the main one, `chx{i}_` the one without excludable set i
    ArraySpec("ch_rank", "int32", "[r]", "CH rank of each search node", _CH, "CH search, tables"),
    ArraySpec("ch_order", "int32", "[r]", "search node of each rank", _CH, "diagnostics"),
    ArraySpec("ch_up_first", "int32", "[r+1]", "CSR offsets of the upward arcs, by tail rank", _CH, "CH search"),
    ArraySpec("ch_up_arcs", "int32", "[u, 4]", "head rank, weight ds, dist dm, duration ds", _CH, "CH search"),
    ArraySpec(
        "ch_down_first", "int32", "[r+1]", "CSR offsets of the downward arcs, by head rank", _CH, "CH search"
    ),  # fmt: skip
    ArraySpec("ch_down_arcs", "int32", "[d, 4]", "tail rank, weight ds, dist dm, duration ds", _CH, "CH search"),
    ArraySpec(
        "ch_unpack", "int32", "[u+d, 2]", "original arc, -1 / the two CH arcs of a shortcut", _CH, "path unpacking"
    ),  # fmt: skip
    # the customizable hierarchy's metric-independent structure (nested-dissection order, chordal supergraph); a
    # metric customized on it (`floor.kernels.cch_customize`) is a hierarchy in the `ch_*` layout above
    ArraySpec("cch_rank", "int32", "[r]", "nested-dissection rank of each search node", _CCH, "customization"),
    ArraySpec(
        "cch_first", "int32", "[r+1]", "CSR offsets of the CCH arcs, by their lower rank", _CCH, "customization"
    ),  # fmt: skip
    ArraySpec("cch_head", "int32", "[A]", "the higher rank of each CCH arc, ascending in a row", _CCH, "customization"),
    ArraySpec(
        "cch_arc_of", "int32", "[T]", "the CCH arc of each search arc (-1 a self-loop)", _CCH, "customization"
    ),  # fmt: skip
    # ALT landmarks on the search graph
    ArraySpec("lm_nodes", "int32", "[k]", "landmark search nodes", _LM, "ALT"),
    ArraySpec("lm_from", "uint32", "[r, k]", "decisecond from each landmark (units.LM_NONE unreachable)", _LM, "ALT"),
    ArraySpec("lm_to", "uint32", "[r, k]", "decisecond to each landmark (units.LM_NONE unreachable)", _LM, "ALT"),
    # the map's background (optional, `--basemap`): polygons of water, land use, parks, buildings
    ArraySpec("bg_kind", "uint8", "[g]", "kind of each polygon: index into the manifest's basemap.kinds", _BG, "map"),
    ArraySpec("bg_min_zoom", "int8", "[g]", "zoom from which the polygon is drawn", _BG, "map"),
    ArraySpec("bg_bbox", "int32", "[g, 4]", "min x, min y, max x, max y on the 2^30 Web Mercator grid", _BG, "map"),
    ArraySpec(
        "bg_poly_ring", "int64", "[g+1]", "first ring of each polygon (its outer ring), then its holes", _BG, "map"
    ),  # fmt: skip
    ArraySpec("bg_ring_first", "int64", "[rings+1]", "first point of each ring", _BG, "map"),
    ArraySpec("bg_x", "int32", "[q]", "ring points: Web Mercator x on the 2^30 grid", _BG, "map"),
    ArraySpec("bg_y", "int32", "[q]", "ring points: Web Mercator y on the 2^30 grid (down)", _BG, "map"),
    # node penalties of 10 s or more (gates, barriers), for the steps that pass them
    ArraySpec("pen_lon", "int32", "[e]", "1e-7 degree of each penalised node, sorted by (lon, lat)", _PEN, "steps"),
    ArraySpec("pen_lat", "int32", "[e]", "1e-7 degree", _PEN, "steps"),
    ArraySpec("pen_ds", "int32", "[e]", "decisecond of penalty charged to every arc passing it", _PEN, "steps"),
    ArraySpec("man_seq", "int32", "[o]", "maneuver overrides (maneuvers.py)", "preprocessing.osm.maneuvers", "steps"),
)
SPECS: dict[str, ArraySpec] = {a.name: a for a in ARRAYS}
CORE_ARRAYS: dict[str, str] = {a.name: a.dtype for a in ARRAYS if a.stage == _CORE}
CH_PREFIX = "ch_"  # the main hierarchy
EB_PREFIX = "eb_"
CH_ARRAYS = tuple(a.name for a in ARRAYS if a.stage == _CH)
CCH_ARRAYS = tuple(a.name for a in ARRAYS if a.stage == _CCH)
# the search-graph arrays the view exposes under their road-graph twin's name (plus node_arc and the turn weights)
VIEW_NAMES = tuple(a.name[len(EB_PREFIX) :] for a in ARRAYS if a.stage == _TURNS)


def exclude_prefix(i: int) -> str:
    """The prefix of the hierarchy contracted without the profile's i-th excludable class set."""
    return f"chx{i}_"


def ch_names(prefix: str = CH_PREFIX) -> dict[str, str]:
    """`ch_*` name -> the stored name of that array in the hierarchy under `prefix`."""
    return {name: prefix + name[len(CH_PREFIX) :] for name in CH_ARRAYS}


def spec_of(name: str) -> ArraySpec | None:
    """The declaration of a stored array (an excluded hierarchy's arrays by their `ch_` twin); None if undeclared."""
    if name.startswith("chx") and "_" in name:
        name = CH_PREFIX + name.split("_", 1)[1]
    return SPECS.get(name)


def built_on_search_graph(name: str) -> bool:
    """Whether a stored array belongs to a stage built on the search graph (CH, landmarks)."""
    spec = spec_of(name)
    return spec is not None and spec.stage in (_CH, _CCH, _LM)


METRIC_ARRAYS = ("arc_weight", "arc_duration", "geom_seg_weight", "geom_seg_duration") + tuple(
    EB_PREFIX + name for name in ("arc_weight", "arc_duration", "arc_turn", "arc_turn_duration")
)
METRIC_MANIFEST_KEYS = ("ch", "excludable", "landmarks", "max_speed_mps")  # what a metric replaces in the manifest


def _metric_free(name: str) -> bool:
    """Whether the stored array `name` is the same under every metric (the CCH structure included)."""
    return not metric_dependent(name) or getattr(spec_of(name), "stage", None) == _CCH


def metric_dependent(name: str) -> bool:
    """Whether a metric may replace the stored array `name`: the weights and durations of arcs and turns, and the
    hierarchies and landmark tables built on them (not the landmarks' choice)."""
    return name in METRIC_ARRAYS or (built_on_search_graph(name) and name != "lm_nodes")


def search_view_arrays(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The edge-based search graph's `eb_*` arrays under their road-graph names, for the search stages."""
    return {name: arrays[EB_PREFIX + name] for name in VIEW_NAMES}


@dataclass(frozen=True)
class ExcludableSet:
    """One class set the profile lets a request exclude: its classes, `arc_flags` bits, and the prefix of its
    hierarchy (None: the graph has no CH)."""

    classes: tuple[str, ...]
    mask: int
    prefix: str | None = None
    shortcuts: int | None = None


@dataclass(frozen=True)
class Manifest:
    """The typed manifest: what the pipeline writes beside the arrays and every reader reads (by field, not key).

    `raw` keeps the whole JSON (report, stage timings, array table) for `starroute info` and `/health`.
    """

    format_version: int
    fingerprint: str
    profile: str
    mode: str
    weight_name: str
    search_graph: str  # "edge" (turn costs and restrictions) or "node"
    continue_straight: bool
    excludable: tuple[ExcludableSet, ...]
    max_speed_mps: float | None
    counts: Mapping[str, int]
    bbox: tuple[float, float, float, float] | None
    built_at: str | None
    raw: Mapping[str, Any]
    driving_side: str = "right"  # the side traffic keeps to (`preprocess --driving-side`), which turn costs mirror
    # the travel modes a waypoint may start or end on (OSRM's `is_startpoint`: a way with one of them either way;
    # bicycle.lua's allowed_start_modes); None: not recorded (graphs built before `arc_mode`: no ferry)
    start_modes: tuple[str, ...] | None = None

    @classmethod
    def of(cls, mf: Mapping[str, Any]) -> Manifest:
        """Read the typed fields of a manifest dict (in-memory graphs may omit any: defaults for a bare graph)."""
        ex = tuple(
            ExcludableSet(tuple(e["classes"]), int(e["mask"]), e.get("prefix"), e.get("shortcuts"))
            for e in mf.get("excludable", ())
        )
        bbox = mf.get("bbox")
        speed = mf.get("max_speed_mps")
        return cls(
            format_version=int(mf.get("format_version", FORMAT_VERSION)),
            fingerprint=str(mf.get("fingerprint", "")),
            profile=str(mf.get("profile", "car")),
            mode=str(mf.get("mode", "driving")),
            weight_name=str(mf.get("weight_name", "duration")),
            search_graph=str(mf.get("search_graph", "node")),
            continue_straight=bool(mf.get("continue_straight", False)),
            excludable=ex,
            max_speed_mps=None if speed is None else float(speed),
            counts=dict(mf.get("counts") or {}),
            bbox=None if bbox is None else (float(bbox[0]), float(bbox[1]), float(bbox[2]), float(bbox[3])),
            built_at=mf.get("built_at"),
            raw=mf,
            driving_side=str(mf.get("driving_side", "right")),
            start_modes=None if mf.get("start_modes") is None else tuple(str(m) for m in mf["start_modes"]),
        )


class FormatError(Exception):
    """A graph directory that cannot be used as it is; the message says what to do."""


class _Arrays(dict[str, np.ndarray]):
    """A graph's arrays by name, each mirrored as an attribute of the graph (`graph.first_out`), however the mapping
    changes: a plain attribute lookup, where a `__getattr__` fallback costs ~0.4 us, paid ~15 times per route request.
    Names the graph itself uses (`path`, `meta`, `has`, ...) stay the graph's, as before."""

    __slots__ = ("_attrs",)

    def __init__(self, attrs: dict[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        super().__init__()
        self._attrs = attrs
        self.update(arrays)

    def _mirror(self, name: str) -> None:
        if name.startswith("str_"):  # the string table changed: `Graph.string` decodes afresh
            self._attrs.get("_strings", {}).clear()
        if name in _GRAPH_OWN:
            return
        if name in self:
            self._attrs[name] = dict.__getitem__(self, name)
        else:
            self._attrs.pop(name, None)

    def __setitem__(self, name: str, value: np.ndarray) -> None:
        super().__setitem__(name, value)
        self._mirror(name)

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name)
        self._mirror(name)

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        for name, value in dict(*args, **kwargs).items():
            self[name] = value

    def pop(self, name: str, *default: Any) -> Any:  # type: ignore[override]
        value = super().pop(name, *default)
        self._mirror(name)
        return value

    def setdefault(self, name: str, value: np.ndarray) -> np.ndarray:  # type: ignore[override]
        if name not in self:
            self[name] = value
        return dict.__getitem__(self, name)

    def popitem(self) -> tuple[str, np.ndarray]:
        name, value = super().popitem()
        self._mirror(name)
        return name, value

    def clear(self) -> None:
        for name in list(self):
            del self[name]

    def __ior__(self, other: Any) -> _Arrays:  # type: ignore[override,misc]
        self.update(other)
        return self


class Graph:
    """A loaded graph directory: read-only arrays (attribute access, e.g. `graph.first_out`) and the manifest."""

    def __init__(
        self,
        path: Path,
        manifest: dict[str, Any],
        arrays: Mapping[str, np.ndarray],
        files: Mapping[str, FileState] | None = None,
    ) -> None:
        self.path = path
        self.manifest = manifest  # the raw JSON; read fields through `meta`
        self.meta = Manifest.of(manifest)
        self._strings: dict[int, str] = {}  # `string`'s answers (a name is decoded once, not on every phantom)
        self.files: dict[str, FileState] = dict(files or {})  # each mapped array's file as it was when mapped
        self.arrays: dict[str, np.ndarray] = _Arrays(self.__dict__, arrays)

    def __getattr__(self, name: str) -> np.ndarray:  # only names the graph has no array of (`_Arrays` mirrors them)
        raise AttributeError(name)

    @property
    def num_nodes(self) -> int:
        return int(self.arrays["first_out"].shape[0] - 1)

    @property
    def num_arcs(self) -> int:
        return int(self.arrays["arc_head"].shape[0])

    def has(self, name: str) -> bool:
        return name in self.arrays

    def damaged(self) -> list[str]:
        """The mapped files whose bytes changed since they were mapped (`floor.format.integrity.changed`): while
        any is listed the graph must not be read (a truncated mapping kills the reader with SIGBUS)."""
        return changed(self.files.values())

    def string(self, i: int) -> str:
        """String `i` of the name/ref table ("" for 0)."""
        got = self._strings.get(i)
        if got is None:
            off = self.arrays["str_offsets"]
            got = self._strings[i] = bytes(self.arrays["str_bytes"][off[i] : off[i + 1]]).decode("utf-8")
        return got


_GRAPH_OWN = frozenset(dir(Graph)) | {
    "path",
    "manifest",
    "meta",
    "arrays",
    "_strings",
    "files",
}  # never shadowed by an array


def same_build(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two manifests are of the same preprocessing run (fingerprint and build time), whatever metric each
    graph serves: a rebuild of the same extract has the same fingerprint but maybe other arrays."""
    keys = ("fingerprint", "built_at")
    return all(a.get(k) is not None and a.get(k) == b.get(k) for k in keys)


def fingerprint(manifest: Mapping[str, Any]) -> str:
    """sha256 over the array table and the fields that define the graph; stable across re-serialisation."""
    core = {
        "format_version": manifest["format_version"],
        "profile": manifest.get("profile"),
        "counts": manifest.get("counts"),
        "arrays": manifest["arrays"],
        "source_sha256": manifest.get("source", {}).get("sha256"),
    }
    return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()


def validate_arrays(arrays: Mapping[str, np.ndarray]) -> None:
    """Refuse arrays the format does not declare, or with another dtype, and a missing core array."""
    for name in CORE_ARRAYS:
        if name not in arrays:
            raise FormatError(f"array {name!r} is missing")
    for name, a in arrays.items():
        spec = spec_of(name)
        if spec is None:
            raise FormatError(f"array {name!r} belongs to no stage of the format (floor.format.artifacts.ARRAYS)")
        if str(a.dtype) != spec.dtype:
            raise FormatError(f"array {name!r} has dtype {a.dtype}, the format says {spec.dtype}")


def _save_arrays(folder: Path, arrays: Mapping[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """Every array into `folder` as `<name>.npy` (by name), C-contiguous; the table of dtypes, shapes and checksums
    a manifest holds of them."""
    table = {}
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        save_array(folder / f"{name}.npy", arr)
        table[name] = {"dtype": str(arr.dtype), "shape": list(arr.shape), DIGEST: digest(arr)}
    return table


def _write_json(path: Path, obj: Mapping[str, Any]) -> None:
    """A manifest as the format writes them: indented, keys sorted, a final newline."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2, sort_keys=True)
        fh.write("\n")


def save_graph(
    out_dir: str | os.PathLike[str],
    arrays: Mapping[str, np.ndarray],
    manifest: Mapping[str, Any],
    force: bool = False,
) -> Path:
    """Write `arrays` and `manifest` to `out_dir` atomically (temp dir, then one rename: an existing graph is swapped
    for the new one in a single exchange where the file system can); refuse to overwrite unless `force`. Temporary
    folders of killed runs beside it are removed first; a full disk is one sentence (`FormatError`), nothing left."""
    out = Path(out_dir)
    if out.exists() and not force:
        raise FormatError(f"output {out} already exists: pass --force to replace it")
    validate_arrays(arrays)
    created = make_parents(out.parent)
    sweep_stale(out.parent, (f".{out.name}.tmp-", f".{out.name}.old-"))
    tmp = track(Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=out.parent)))
    try:
        full = dict(manifest)
        full["format_version"] = FORMAT_VERSION
        full["arrays"] = _save_arrays(tmp, arrays)
        full["fingerprint"] = fingerprint(full)
        _write_json(tmp / MANIFEST, full)
        os.chmod(tmp, 0o777 & ~umask())  # mkdtemp makes 0700: a graph must be readable by other users
        with committing():
            if out.is_dir() and not out.is_symlink() and exchange(tmp, out):
                shutil.rmtree(tmp, ignore_errors=True)  # now the old graph (a server may still map its files)
            elif out.exists():
                trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-{os.getpid()}-", dir=out.parent))
                os.replace(out, trash / "g")
                os.replace(tmp, out)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                os.replace(tmp, out)
            untrack(tmp)
            keep_created(created)
    except BaseException as exc:
        untrack(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        remove_created(created)
        if no_space(exc):
            raise FormatError(space_sentence(out.parent, arrays, f"graph {out.name}")) from None
        raise
    return out


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of a graph directory, checked for format version and fingerprint."""
    p = Path(path)
    mf = p / MANIFEST
    if not mf.is_file():
        raise FormatError(f"{p} is not a starroute graph (no {MANIFEST}): run `starroute preprocess` first")
    try:
        manifest = json.loads(mf.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FormatError(f"{mf} is unreadable ({exc}): re-run `starroute preprocess`") from None
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise FormatError(
            f"graph format version {version}, this starroute reads {FORMAT_VERSION}: re-run `starroute preprocess`"
        )
    if manifest.get("fingerprint") != fingerprint(manifest):
        raise FormatError(f"{mf} fingerprint mismatch (edited or corrupt): re-run `starroute preprocess`")
    return manifest


def load_graph(
    path: str | os.PathLike[str],
    mmap: bool = True,
    check: bool = True,
    metric: bool = True,
    reuse: Graph | None = None,
    names: Collection[str] | None = None,
) -> Graph:
    """Memory-map (read-only) every array of a graph directory after checking version, fingerprint and shapes, with
    its current metric (`metric`; False: the preprocessed one), and (`check`) the invariants of every stage it holds
    (`floor.format.checks`). `reuse`: a graph of the same build (same fingerprint) already loaded, whose arrays no
    metric replaces are taken as they are instead of mapped again (a server applying a new metric keeps the pages
    its workers share). `names`: map only these arrays (the manifest still lists every one); no metric, no checks."""
    p = Path(path)
    manifest = read_manifest(p)
    arrays: dict[str, np.ndarray] = {}
    files: dict[str, FileState] = {}
    # a reused graph's files must be as they were mapped: pages of a file truncated since would kill this process
    same = reuse is not None and same_build(reuse.manifest, manifest) and not reuse.damaged()
    if names is not None and (metric or check):
        raise ValueError("load_graph(names=...) maps part of the preprocessed graph: metric=False, check=False")
    for name, meta in manifest["arrays"].items():
        if names is not None and name not in names:
            continue
        if same and reuse is not None and name in reuse.arrays and _metric_free(name):
            arrays[name] = reuse.arrays[name]
            if name in reuse.files:
                files[name] = reuse.files[name]
            continue
        arrays[name], files[name] = _map_array(p / f"{name}.npy", meta, mmap, "re-run `starroute preprocess`")
    missing = [n for n in CORE_ARRAYS if n not in manifest["arrays"]]
    if missing:
        raise FormatError(f"graph {p} lacks arrays {missing}: re-run `starroute preprocess`")
    current = read_metric(p, manifest) if metric else None
    if current is not None:
        manifest = overlay_metric(p, manifest, arrays, current, mmap, files)
    if check:
        from floor.format.checks import check_graph

        try:
            check_graph(arrays, structure=not same)  # a reused graph's weight-free structure was checked already
        except FormatError as exc:
            raise FormatError(f"graph {p}: {exc}: re-run `starroute preprocess`") from None
    return Graph(p, manifest, arrays, files)


def _map_array(f: Path, meta: Mapping[str, Any], mmap: bool, fix: str) -> tuple[np.ndarray, FileState]:
    """One array file memory-mapped (read-only) after its size, dtype and shape, and its checksum where the table
    has one (graphs written before checksums have none), agree with its table entry `meta`; `FormatError` naming
    the file and `fix` otherwise. Also the file's state as mapped."""
    try:
        state = file_state(f)
        arr = np.load(f, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise FormatError(f"array file {f} is missing or corrupt ({exc}): {fix}") from None
    if str(arr.dtype) != meta["dtype"] or list(arr.shape) != list(meta["shape"]):
        raise FormatError(
            f"array file {f} is {arr.dtype}{list(arr.shape)}, its table says {meta['dtype']}{meta['shape']}: {fix}"
        )
    want = meta.get(DIGEST)
    if want is not None and digest(arr) != want:
        raise FormatError(f"array file {f} does not hold what was written (its {DIGEST} checksum differs): {fix}")
    return arr, state


def read_metric(path: str | os.PathLike[str], manifest: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The `metric.json` of the graph's current metric (None: it serves its preprocessed metric), its directory
    resolved once under `"dir"`; `FormatError` for a metric made for another graph or unreadable."""
    link = Path(path) / METRIC_LINK
    if not os.path.lexists(link):
        return None
    where = Path(os.path.realpath(link))
    try:
        metric = json.loads((where / METRIC_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FormatError(f"metric {where} is unreadable ({exc}): re-run `starroute customize` or --reset") from None
    manifest = manifest if manifest is not None else read_manifest(path)
    if metric.get("base_fingerprint") != manifest.get("fingerprint"):
        raise FormatError(f"metric {where} was made for another build of this graph: re-run `starroute customize`")
    metric["dir"] = str(where)
    if metric.get("pending"):
        try:
            stages = json.loads((where / METRIC_STAGES / STAGES_MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            stages = None
        except (OSError, ValueError) as exc:
            raise FormatError(f"metric stages {where / METRIC_STAGES} are unreadable ({exc})") from None
        if stages is not None and stages.get("metric") == metric.get("id"):
            metric["search_stages"] = stages
    return metric


def load_metric_arrays(metric: Mapping[str, Any], mmap: bool = True) -> dict[str, np.ndarray]:
    """The weight and turn arrays of a metric (`read_metric`) as written by `starroute customize`, memory-mapped."""
    return _load_listed(Path(metric["dir"]), metric["arrays"], mmap)


def _load_listed(
    home: Path, table: Mapping[str, Any], mmap: bool, files: dict[str, FileState] | None = None
) -> dict[str, np.ndarray]:
    """The arrays a metric's (or its stages') table lists, from `home`, each a metric's to hold and as the table says
    (`_map_array`); `FormatError` otherwise. `files`: where to note each file's state as mapped."""
    out = {}
    for name, meta in table.items():
        if not metric_dependent(name):
            raise FormatError(f"metric {home} holds {name!r}, which no metric may replace")
        out[name], state = _map_array(home / f"{name}.npy", meta, mmap, "re-run `starroute customize`")
        if files is not None:
            files[name] = state
    return out


def metric_pending(metric: Mapping[str, Any] | None) -> list[str]:
    """The search stages (`"hierarchy"`, `"landmarks"`) a metric (`read_metric`) still lacks: empty when it was
    written with them, or when they have been added since."""
    if metric is None or metric.get("search_stages") is not None:
        return []
    return list(metric.get("pending") or [])


def overlay_metric(
    path: Path,
    manifest: dict[str, Any],
    arrays: dict[str, np.ndarray],
    metric: Mapping[str, Any],
    mmap: bool = True,
    files: dict[str, FileState] | None = None,
) -> dict[str, Any]:
    """Replace `arrays` by the metric's (in place; same shapes for the arc and turn arrays) and return the manifest
    with the metric's fields (`METRIC_MANIFEST_KEYS`) and a `metric` entry (id, built_at, sources, report)."""
    where = Path(metric["dir"])
    merged = dict(manifest)
    stages = metric.get("search_stages")
    parts = [(where, metric)] + ([(where / METRIC_STAGES, stages)] if stages is not None else [])
    for home, table in parts:
        for name, arr in _load_listed(home, table["arrays"], mmap, files).items():
            if name in METRIC_ARRAYS and (name not in arrays or arrays[name].shape != arr.shape):
                raise FormatError(f"metric array {name} does not fit graph {path}: re-run `starroute customize`")
            arrays[name] = arr
        merged.update({k: v for k, v in table.get("manifest", {}).items() if k in METRIC_MANIFEST_KEYS})
    pending = metric_pending(metric)
    if pending:  # the preprocessed metric's stages do not hold on these weights: leave them out
        stale = (_CH, _LM) if "landmarks" in pending else (_CH,)
        drop = [n for n in arrays if getattr(spec_of(n), "stage", None) in stale]
        for name in drop:
            del arrays[name]
        merged["excludable"] = [{**e, "prefix": None} for e in merged.get("excludable", [])]
    merged["metric"] = {k: metric.get(k) for k in ("id", "built_at", "sources", "report", "seconds")}
    merged["metric"]["pending"] = pending
    if stages is not None:
        merged["metric"]["stages"] = {k: stages.get(k) for k in ("how", "seconds", "built_at")}
    return merged


def save_metric(
    graph_dir: str | os.PathLike[str],
    arrays: Mapping[str, np.ndarray],
    manifest: Mapping[str, Any],
    info: Mapping[str, Any],
) -> str:
    """Write a metric into `graph_dir` and make it current atomically (its directory is complete before the
    `metric` link is swapped onto it); keep the previous one, remove older ones. `manifest`: the manifest fields it
    replaces (`METRIC_MANIFEST_KEYS`); `info`: sources and report. Returns the metric's id."""
    base = read_manifest(graph_dir)
    g = Path(graph_dir)
    for name, a in arrays.items():
        spec = spec_of(name)
        if spec is None or not metric_dependent(name):
            raise FormatError(f"array {name!r} is not part of a metric")
        if str(a.dtype) != spec.dtype:
            raise FormatError(f"metric array {name!r} has dtype {a.dtype}, the format says {spec.dtype}")
    root = g / METRICS_DIR
    root.mkdir(exist_ok=True)
    sweep_stale(root, (".tmp-",))
    tmp = track(Path(tempfile.mkdtemp(prefix=f".tmp-{os.getpid()}-", dir=root)))
    try:
        # the id names the inputs (base graph, sources), not the bytes: hashing 100+ MB would cost more than writing
        digest = hashlib.sha256(str(base["fingerprint"]).encode())
        digest.update(json.dumps(info.get("sources", []), sort_keys=True).encode())
        import datetime

        now = datetime.datetime.now(datetime.UTC)
        mid = f"{now.strftime('%Y%m%dT%H%M%S%f')}-{digest.hexdigest()[:12]}"
        meta = {"id": mid, "base_fingerprint": base["fingerprint"], "built_at": now.isoformat(timespec="milliseconds")}
        _fill_dir(tmp, arrays, METRIC_MANIFEST, meta, manifest, info)
        with committing():
            os.replace(tmp, root / mid)
            untrack(tmp)
            _point_metric(g, Path(METRICS_DIR) / mid)
    except BaseException as exc:
        untrack(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        if no_space(exc):
            raise FormatError(space_sentence(root, arrays, "the metric")) from None
        raise
    _prune_metrics(g)
    return mid


def _fill_dir(
    tmp: Path,
    arrays: Mapping[str, np.ndarray],
    json_name: str,
    meta: dict[str, Any],
    manifest: Mapping[str, Any],
    info: Mapping[str, Any],
) -> None:
    """A metric's (or its stages') directory before it is renamed into place: the arrays, then `json_name` holding
    `meta`, the array table, the manifest fields they replace and `info` (which never overrides those), the
    directory's mode after the umask."""
    out = {
        **meta,
        "arrays": _save_arrays(tmp, arrays),
        "manifest": {k: v for k, v in manifest.items() if k in METRIC_MANIFEST_KEYS},
        **{k: v for k, v in info.items() if k not in (*meta, "arrays", "manifest")},
    }
    _write_json(tmp / json_name, out)
    os.chmod(tmp, 0o777 & ~umask())


def save_metric_stages(
    graph_dir: str | os.PathLike[str],
    metric_id: str,
    arrays: Mapping[str, np.ndarray],
    manifest: Mapping[str, Any],
    info: Mapping[str, Any],
) -> bool:
    """Add the search stages (`arrays`: hierarchy, landmark tables; `manifest`: the fields they replace) to the
    metric `metric_id` of `graph_dir`, whole or not at all (a directory renamed into place). False when another
    process added them first (its stages serve; these are dropped). `FormatError` when that metric is gone."""
    where = Path(graph_dir) / METRICS_DIR / metric_id
    if not (where / METRIC_MANIFEST).is_file():
        raise FormatError(f"metric {where} is gone (a newer one replaced it): nothing to add its stages to")
    for name, a in arrays.items():
        spec = spec_of(name)
        if spec is None or spec.stage not in (_CH, _LM) or name == "lm_nodes":
            raise FormatError(f"array {name!r} is not a search stage of a metric")
        if str(a.dtype) != spec.dtype:
            raise FormatError(f"metric array {name!r} has dtype {a.dtype}, the format says {spec.dtype}")
    if (where / METRIC_STAGES).exists():
        return False
    sweep_stale(where, (".stages-tmp-",))
    tmp = track(Path(tempfile.mkdtemp(prefix=f".stages-tmp-{os.getpid()}-", dir=where)))
    try:
        import datetime

        meta = {"metric": metric_id, "built_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")}
        _fill_dir(tmp, arrays, STAGES_MANIFEST, meta, manifest, info)
        with committing():
            try:
                os.rename(tmp, where / METRIC_STAGES)
            except OSError:
                if not (where / METRIC_STAGES).is_dir():
                    raise
                shutil.rmtree(tmp, ignore_errors=True)  # another process added them first
                return False
            finally:
                untrack(tmp)
    except BaseException:
        untrack(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return True


def clear_metric(graph_dir: str | os.PathLike[str]) -> bool:
    """Serve the preprocessed metric again (the `metric` link removed atomically); False if none was current."""
    link = Path(graph_dir) / METRIC_LINK
    if not os.path.lexists(link):
        return False
    os.remove(link)
    _prune_metrics(Path(graph_dir))
    return True


def _point_metric(g: Path, target: Path) -> None:
    tmp_link = g / f".{METRIC_LINK}.tmp-{os.getpid()}"
    if os.path.lexists(tmp_link):
        os.remove(tmp_link)
    os.symlink(target, tmp_link)
    os.replace(tmp_link, g / METRIC_LINK)


def _prune_metrics(g: Path) -> None:
    root = g / METRICS_DIR
    if not root.is_dir():
        return
    current = os.path.realpath(g / METRIC_LINK) if os.path.lexists(g / METRIC_LINK) else None
    done = sorted((d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")), key=lambda d: d.name)
    keep = {str(d) for d in done[-METRIC_KEEP:]}
    for d in done:
        if str(d) not in keep and os.path.realpath(d) != current:
            shutil.rmtree(d, ignore_errors=True)


def graph_in_memory(arrays: Mapping[str, np.ndarray], manifest: Mapping[str, Any] | None = None) -> Graph:
    """A Graph over in-memory arrays (tests, and stages that run before the directory is written)."""
    return Graph(Path("<memory>"), dict(manifest or {}), dict(arrays))

"""The graph-directory format's arrays, owned here alone: the table of every stage's arrays (`ARRAYS`: name, dtype,
shape rule, unit, writer, readers), the names derived from it, and one array file written, checked and mapped."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from floor.format.files import save_array
from floor.format.integrity import (
    DIGEST,
    FileState,
    digest,
    file_state,
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
_TURNS = "preprocessing.turns"
STAGE_CH = "preprocessing.contract"
_CCH = "preprocessing.cch"
STAGE_LM = "preprocessing.landmarks"
_BG = "preprocessing.basemap"
_PEN = "preprocessing.osm.penalties"
_EV = "preprocessing.osm.way_values"  # written by preprocessing.build; optional: graphs built before have none
_SEG = "preprocessing.build"  # per-segment values of the chains, and more; optional: graphs built before have none
_MODE = "preprocessing.build"  # the travel mode per arc; optional: graphs built before have none
STAGE_TD = "preprocessing.time_metric"  # time profiles: written with a metric (`starroute customize`), never preprocess


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
    ArraySpec("ch_rank", "int32", "[r]", "CH rank of each search node", STAGE_CH, "CH search, tables"),
    ArraySpec("ch_order", "int32", "[r]", "search node of each rank", STAGE_CH, "diagnostics"),
    ArraySpec("ch_up_first", "int32", "[r+1]", "CSR offsets of the upward arcs, by tail rank", STAGE_CH, "CH search"),
    ArraySpec("ch_up_arcs", "int32", "[u, 4]", "head rank, weight ds, dist dm, duration ds", STAGE_CH, "CH search"),
    ArraySpec(
        "ch_down_first", "int32", "[r+1]", "CSR offsets of the downward arcs, by head rank", STAGE_CH, "CH search"
    ),  # fmt: skip
    ArraySpec("ch_down_arcs", "int32", "[d, 4]", "tail rank, weight ds, dist dm, duration ds", STAGE_CH, "CH search"),
    ArraySpec(
        "ch_unpack", "int32", "[u+d, 2]", "original arc, -1 / the two CH arcs of a shortcut", STAGE_CH, "path unpacking"
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
    ArraySpec("lm_nodes", "int32", "[k]", "landmark search nodes", STAGE_LM, "ALT"),
    ArraySpec(
        "lm_from", "uint32", "[r, k]", "decisecond from each landmark (units.LM_NONE unreachable)", STAGE_LM, "ALT"
    ),
    ArraySpec("lm_to", "uint32", "[r, k]", "decisecond to each landmark (units.LM_NONE unreachable)", STAGE_LM, "ALT"),
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
    # departure time (`starroute customize --time-profiles`): a metric's arrays only, never the preprocessed graph's;
    # week time, slots and factor units in `units` (WEEK_DS, SLOT_DS, SLOTS, TD_ONE); absent: static durations
    ArraySpec(
        "td_factor",
        "int32",
        "[P, 672]",
        "travel-time factor per profile row and weekly 15-minute slot, at the slot's midpoint, in 1/65536 (65536 = "
        "free flow; linear between midpoints, wrapping around the week); rows shared by every arc timed alike",
        STAGE_TD,
        "departure-time searches",
    ),
    ArraySpec(
        "td_arc_row",
        "int32",
        "[m]",
        "the td_factor row timing each road arc (-1: static, always arc_duration)",
        STAGE_TD,
        "departure-time searches",
    ),
)


SPECS: dict[str, ArraySpec] = {a.name: a for a in ARRAYS}
CORE_ARRAYS: dict[str, str] = {a.name: a.dtype for a in ARRAYS if a.stage == _CORE}
CH_PREFIX = "ch_"  # the main hierarchy
EB_PREFIX = "eb_"
CH_ARRAYS = tuple(a.name for a in ARRAYS if a.stage == STAGE_CH)
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
    return spec is not None and spec.stage in (STAGE_CH, _CCH, STAGE_LM)


METRIC_ARRAYS = ("arc_weight", "arc_duration", "geom_seg_weight", "geom_seg_duration") + tuple(
    EB_PREFIX + name for name in ("arc_weight", "arc_duration", "arc_turn", "arc_turn_duration")
)


# a metric's own arrays the preprocessed graph never has (its time profiles): overlaid when present, absent otherwise
TD_ARRAYS = tuple(a.name for a in ARRAYS if a.stage == STAGE_TD)


# what a metric replaces in (or adds to) the manifest; "timezone": the IANA zone of the time profiles' week time
METRIC_MANIFEST_KEYS = ("ch", "excludable", "landmarks", "max_speed_mps", "timezone")


def metric_free(name: str) -> bool:
    """Whether the stored array `name` is the same under every metric (the CCH structure included)."""
    return not metric_dependent(name) or getattr(spec_of(name), "stage", None) == _CCH


def metric_dependent(name: str) -> bool:
    """Whether a metric may replace the stored array `name`: the weights and durations of arcs and turns, the time
    profiles, and the hierarchies and landmark tables built on them (not the landmarks' choice)."""
    return name in METRIC_ARRAYS or name in TD_ARRAYS or (built_on_search_graph(name) and name != "lm_nodes")


def search_view_arrays(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The edge-based search graph's `eb_*` arrays under their road-graph names, for the search stages."""
    return {name: arrays[EB_PREFIX + name] for name in VIEW_NAMES}


class FormatError(Exception):
    """A graph directory that cannot be used as it is; the message says what to do."""


def validate_arrays(arrays: Mapping[str, np.ndarray]) -> None:
    """Refuse arrays the format does not declare, or with another dtype, and a missing core array."""
    for name in CORE_ARRAYS:
        if name not in arrays:
            raise FormatError(f"array {name!r} is missing")
    for name, a in arrays.items():
        spec = spec_of(name)
        if spec is None:
            raise FormatError(f"array {name!r} belongs to no stage of the format (floor.format.arrays.ARRAYS)")
        if str(a.dtype) != spec.dtype:
            raise FormatError(f"array {name!r} has dtype {a.dtype}, the format says {spec.dtype}")


def save_arrays(folder: Path, arrays: Mapping[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """Every array into `folder` as `<name>.npy` (by name), C-contiguous; the table of dtypes, shapes and checksums
    a manifest holds of them."""
    table = {}
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        save_array(folder / f"{name}.npy", arr)
        table[name] = {"dtype": str(arr.dtype), "shape": list(arr.shape), DIGEST: digest(arr)}
    return table


def write_json(path: Path, obj: Mapping[str, Any]) -> None:
    """A manifest as the format writes them: indented, keys sorted, a final newline."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2, sort_keys=True)
        fh.write("\n")


def map_array(f: Path, meta: Mapping[str, Any], mmap: bool, fix: str) -> tuple[np.ndarray, FileState]:
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

"""Streaming OSM import through pyosmium: routable ways (pass 1) then only the nodes they use (pass 2).

Memory grows with the road network, not the file: pass 1 keeps node-id lists of the ways the profile accepts; pass 2
reads locations and tags of just those node ids (an id filter inside libosmium) into sorted numpy arrays, which is
the node-location index used to build the graph.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
import osmium

from floor.format.units import COORD_SCALE, TRAVEL_MODE_CODE
from preprocessing.osm.profiles.base import WayResult, road_class_code
from preprocessing.osm.way_values import COLUMNS, is_ford_node, way_row

SUFFIXES = (".osm.pbf", ".pbf", ".osm", ".osm.gz", ".osm.bz2", ".xml", ".osm.xml")

Progress = Callable[[int], None]  # called with the number of objects processed since the last call


class OsmInputError(Exception):
    """The input is not a readable OSM extract; the message is one sentence for the user."""


@dataclass
class WayTable:
    """Accepted ways: concatenated node refs plus one row of attributes per way."""

    refs: np.ndarray  # int64 OSM node ids, all ways concatenated
    first: np.ndarray  # int64 [w+1] offsets into refs
    osm_id: np.ndarray  # int64 [w]
    fwd_kmh: np.ndarray  # float64 [w], 0 = closed in that direction
    bwd_kmh: np.ndarray
    fwd_duration_s: np.ndarray  # float64 [w], NaN = use the speed
    bwd_duration_s: np.ndarray
    road_class: np.ndarray  # uint8 [w]
    flags_fwd: np.ndarray  # uint8 [w] arc flags (units.FLAG_*) of the forward direction
    flags_bwd: np.ndarray
    name: np.ndarray  # int32 [w] string ids
    ref: np.ndarray
    strings: list[str]
    lanes_fwd: np.ndarray | None = None  # int32 [w] string id of the forward turn:lanes (0 = none)
    lanes_bwd: np.ndarray | None = None
    signs: np.ndarray | None = None  # int32 [w] string id of "destinations\x1fexits\x1fpronunciation" (0 = none)
    lane_count: np.ndarray | None = None  # uint8 [w] OSRM's number of lanes (0 = unknown)
    rate: np.ndarray | None = None  # float64 [w] routability rate penalty (weight only; 1 = none)
    values: np.ndarray | None = None  # uint16 [w, len(way_values.COLUMNS)] GraphHopper's encoded values (codes)
    mode_fwd: np.ndarray | None = None  # uint8 [w] travel mode code (units.TRAVEL_MODES) of the forward direction
    mode_bwd: np.ndarray | None = None
    startpoint: np.ndarray | None = None  # bool [w] WayResult.startpoint
    report: dict[str, int] = field(default_factory=dict)


@dataclass
class NodeTable:
    """Locations and profile effects of the nodes the ways use, sorted by OSM id."""

    osm_id: np.ndarray  # int64 [k] ascending
    lon: np.ndarray  # int32 1e-7 deg
    lat: np.ndarray
    barrier: np.ndarray  # bool [k] blocks passage
    penalty_ds: np.ndarray  # int32 [k] charged on passages through the node, both directions
    directed_ds: np.ndarray | None = None  # int32 [k] charged only in `direction` of the ways through it
    direction: np.ndarray | None = None  # uint8 [k] profiles.base.OBSTACLE_FORWARD / OBSTACLE_BACKWARD (0: none)
    ford: np.ndarray | None = None  # bool [k] a ford node (`way_values.is_ford_node`)
    passing_ds: np.ndarray | None = None  # int32 [k] charged on passages where OSRM compresses the node away
    turning: np.ndarray | None = None  # bool [k] a turning obstacle (NodeResult.turning)
    minor_stop: np.ndarray | None = None  # bool [k] NodeResult.minor_stop
    short_leg_stop: np.ndarray | None = None  # bool [k] NodeResult.short_leg_stop


def check_input(path: Path) -> None:
    """Refuse a missing file or one whose name osmium cannot read, before any work starts."""
    if not path.exists():
        raise OsmInputError(f"input file {path} does not exist")
    if not path.is_file():
        raise OsmInputError(f"input {path} is not a file")
    name = path.name.lower()
    if not name.endswith(SUFFIXES):
        raise OsmInputError(f"input {path.name} is not an OSM extract: expected one of {', '.join(SUFFIXES)}")
    if path.stat().st_size == 0:
        raise OsmInputError(f"input {path} is empty")


def _osmium_error(path: Path, exc: Exception) -> OsmInputError:
    return OsmInputError(
        f"cannot read {path.name} as OSM data ({str(exc).strip() or type(exc).__name__}); "
        "the file is corrupt, truncated or not an OSM extract"
    )


def _add_flags(res: WayResult, restricted: bool) -> int:
    from floor.format.units import (
        FLAG_CIRCULAR,
        FLAG_FERRY,
        FLAG_MOTORWAY,
        FLAG_RESTRICTED,
        FLAG_ROUNDABOUT,
        FLAG_SPLIT,
        FLAG_TOLL,
        FLAG_TUNNEL,
    )
    from preprocessing.osm.profiles.base import MOTORWAY_CLASSES

    f = 0
    if res.road_class in MOTORWAY_CLASSES:
        f |= FLAG_MOTORWAY
    if res.ferry:
        f |= FLAG_FERRY
    if res.roundabout:
        f |= FLAG_ROUNDABOUT
    if res.toll:
        f |= FLAG_TOLL
    if restricted:
        f |= FLAG_RESTRICTED
    if res.tunnel:
        f |= FLAG_TUNNEL
    if res.circular:
        f |= FLAG_CIRCULAR
    if res.split:
        f |= FLAG_SPLIT
    return f


def mode_code(mode: str) -> int:
    """The `arc_mode` code of a profile's travel mode name (`units.TRAVEL_MODES`)."""
    code = TRAVEL_MODE_CODE.get(mode)
    assert code is not None, f"travel mode {mode!r} is not in units.TRAVEL_MODES: append it there"
    return code


def signs_string(res: WayResult) -> str:
    """The guidance signage of a way as one string (`arc_signs`): destinations, exits and pronunciation joined by
    the unit separator, "" when all three are empty."""
    if not (res.destinations or res.exits or res.pronunciation):
        return ""
    return "\x1f".join((res.destinations, res.exits, res.pronunciation))


def read_ways(path: Path, profile: ModuleType, progress: Progress | None = None) -> WayTable:
    """Pass 1: every way the profile accepts, with its node refs (consecutive duplicates removed)."""
    way_keys = tuple(sorted(profile.WAY_KEYS))
    refs = array("q")  # 8 bytes a node ref, not a Python int object (some 36 bytes) each
    first = array("q", [0])
    cols: dict[str, list] = {
        k: []
        for k in (
            "osm_id", "fk", "bk", "fd", "bd", "cls", "ff", "bf", "name", "ref", "lf", "lb", "signs", "lc", "rate",
            "fm", "bm", "st",
        )
    }  # fmt: skip
    values = array("H")  # way_values.way_row of each way, flat
    strings: list[str] = [""]
    string_id: dict[str, int] = {"": 0}
    report = {"ways_read": 0, "ways_routable": 0, "ways_rejected": 0, "ways_too_short": 0}

    def sid(s: str) -> int:
        i = string_id.get(s)
        if i is None:
            i = string_id[s] = len(strings)
            strings.append(s)
        return i

    done = 0
    try:
        fp = osmium.FileProcessor(str(path), osmium.osm.WAY).with_filter(osmium.filter.KeyFilter(*way_keys))
        for w in fp:
            done += 1
            if progress is not None and done % 4096 == 0:
                progress(4096)
            report["ways_read"] += 1
            tags = {t.k: t.v for t in w.tags}
            res = profile.process_way(tags)
            if res is None or not (res.forward or res.backward):
                report["ways_rejected"] += 1
                continue
            nodes = []
            last = None
            for n in w.nodes:  # type: ignore[union-attr]
                r = n.ref
                if r != last:
                    nodes.append(r)
                    last = r
            if len(nodes) < 2:
                report["ways_too_short"] += 1
                continue
            report["ways_routable"] += 1
            refs.extend(nodes)
            first.append(len(refs))
            cols["osm_id"].append(w.id)
            cols["fk"].append(res.forward_kmh if res.forward else 0.0)
            cols["bk"].append(res.backward_kmh if res.backward else 0.0)
            fd = res.forward_duration_s if res.forward else None
            bd = res.backward_duration_s if res.backward else None
            cols["fd"].append(math.nan if fd is None else float(fd))
            cols["bd"].append(math.nan if bd is None else float(bd))
            cols["cls"].append(road_class_code(res.road_class))
            cols["ff"].append(_add_flags(res, res.forward_restricted))
            cols["bf"].append(_add_flags(res, res.backward_restricted))
            cols["name"].append(sid(res.name or ""))
            cols["ref"].append(sid(res.ref or ""))
            cols["lf"].append(sid(res.turn_lanes_forward))
            cols["lb"].append(sid(res.turn_lanes_backward))
            cols["signs"].append(sid(signs_string(res)))
            cols["lc"].append(min(max(int(res.lane_count), 0), 255))
            cols["rate"].append(min(max(float(res.rate), 0.01), 1.0))
            cols["fm"].append(mode_code(res.forward_mode) if res.forward else 0)
            cols["bm"].append(mode_code(res.backward_mode) if res.backward else 0)
            cols["st"].append(bool(res.startpoint))
            values.extend(way_row(tags))
    except (RuntimeError, ValueError, OSError) as exc:
        raise _osmium_error(path, exc) from None
    if progress is not None:
        progress(done % 4096)
    return WayTable(
        refs=_take_int64(refs),
        first=_take_int64(first),
        osm_id=np.asarray(cols["osm_id"], dtype=np.int64),
        fwd_kmh=np.asarray(cols["fk"], dtype=np.float64),
        bwd_kmh=np.asarray(cols["bk"], dtype=np.float64),
        fwd_duration_s=np.asarray(cols["fd"], dtype=np.float64),
        bwd_duration_s=np.asarray(cols["bd"], dtype=np.float64),
        road_class=np.asarray(cols["cls"], dtype=np.uint8),
        flags_fwd=np.asarray(cols["ff"], dtype=np.uint8),
        flags_bwd=np.asarray(cols["bf"], dtype=np.uint8),
        name=np.asarray(cols["name"], dtype=np.int32),
        ref=np.asarray(cols["ref"], dtype=np.int32),
        strings=strings,
        report=report,
        lanes_fwd=np.asarray(cols["lf"], dtype=np.int32),
        lanes_bwd=np.asarray(cols["lb"], dtype=np.int32),
        signs=np.asarray(cols["signs"], dtype=np.int32),
        lane_count=np.asarray(cols["lc"], dtype=np.uint8),
        rate=np.asarray(cols["rate"], dtype=np.float64),
        values=np.frombuffer(values, dtype=np.uint16).reshape(-1, len(COLUMNS)).copy(),
        mode_fwd=np.asarray(cols["fm"], dtype=np.uint8),
        mode_bwd=np.asarray(cols["bm"], dtype=np.uint8),
        startpoint=np.asarray(cols["st"], dtype=bool),
    )


def _take_int64(values: array) -> np.ndarray:
    """An int64 array of an `array("q")`'s values, the array emptied (its memory freed before the next copy)."""
    out = np.frombuffer(values, dtype=np.int64).copy()
    del values[:]
    return out


def read_nodes(path: Path, needed: np.ndarray, profile: ModuleType, progress: Progress | None = None) -> NodeTable:
    """Pass 2: location and barrier/penalty of each node id in `needed` (sorted unique int64) present in the file.

    Nodes stream through fixed-size chunks that are filtered against `needed` with a vectorised sorted lookup, so
    memory holds the road network's nodes plus one chunk (libosmium's IdFilter allocates by the largest OSM id,
    which costs ~1 GB on real extracts).
    """
    node_keys = profile.NODE_KEYS
    chunk = 1 << 18
    buf_id = np.empty(chunk, dtype=np.int64)
    buf_x = np.empty(chunk, dtype=np.int32)
    buf_y = np.empty(chunk, dtype=np.int32)
    kept_id: list[np.ndarray] = []
    kept_x: list[np.ndarray] = []
    kept_y: list[np.ndarray] = []
    tagged: dict[int, tuple[bool, int, int, int, int, bool, bool, bool]] = {}
    fords: list[int] = []
    k = len(needed)

    def flush(count: int) -> None:
        ids = buf_id[:count]
        pos = np.searchsorted(needed, ids)
        hit = pos < k
        hit[hit] = needed[pos[hit]] == ids[hit]
        kept_id.append(ids[hit].copy())
        kept_x.append(buf_x[:count][hit].copy())
        kept_y.append(buf_y[:count][hit].copy())
        if progress is not None:
            progress(int(hit.sum()))

    i = 0
    try:
        for n in osmium.FileProcessor(str(path), osmium.osm.NODE):
            loc = n.location  # type: ignore[union-attr]
            if not loc.valid():
                continue
            nid = n.id
            buf_id[i] = nid
            buf_x[i] = loc.x  # libosmium's fixed point is 1e-7 degrees, our own precision
            buf_y[i] = loc.y
            i += 1
            tags = n.tags
            if len(tags) and any(key in tags for key in node_keys):
                res = profile.process_node({t.k: t.v for t in tags})
                if res is not None and (res.barrier or res.penalty_s or res.directed_s or res.passing_s or res.turning):
                    pen, directed = int(round(res.penalty_s * 10)), int(round(res.directed_s * 10))
                    passing_ds, stops = int(res.passing_s * 10), (res.minor_stop, res.short_leg_stop)
                    tagged[nid] = (res.barrier, pen, directed, res.direction, passing_ds, res.turning, *stops)
            if len(tags) and "ford" in tags and is_ford_node(tags["ford"]):
                fords.append(nid)
            if i == chunk:
                flush(i)
                i = 0
    except (RuntimeError, ValueError, OSError) as exc:
        raise _osmium_error(path, exc) from None
    flush(i)
    assert COORD_SCALE == 10_000_000, "node coordinates are copied from libosmium's 1e-7 fixed point"
    ids = np.concatenate(kept_id)
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    if len(ids) > 1:  # a node listed twice (merged extracts): keep its first copy
        first = np.ones(len(ids), dtype=bool)
        first[1:] = ids[1:] != ids[:-1]
        order, ids = order[first], ids[first]
    barrier = np.zeros(len(ids), dtype=bool)
    penalty = np.zeros(len(ids), dtype=np.int32)
    directed_ds = np.zeros(len(ids), dtype=np.int32)
    direction = np.zeros(len(ids), dtype=np.uint8)
    passing = np.zeros(len(ids), dtype=np.int32)
    turning = np.zeros(len(ids), dtype=bool)
    minor = np.zeros(len(ids), dtype=bool)
    short_leg = np.zeros(len(ids), dtype=bool)
    if tagged:
        tid = np.fromiter(tagged.keys(), dtype=np.int64, count=len(tagged))
        pos = np.searchsorted(ids, tid)
        ok = pos < len(ids)
        ok[ok] = ids[pos[ok]] == tid[ok]
        vals = list(tagged.values())
        barrier[pos[ok]] = np.array([v[0] for v in vals], dtype=bool)[ok]
        penalty[pos[ok]] = np.array([v[1] for v in vals], dtype=np.int32)[ok]
        directed_ds[pos[ok]] = np.array([v[2] for v in vals], dtype=np.int32)[ok]
        direction[pos[ok]] = np.array([v[3] for v in vals], dtype=np.uint8)[ok]
        passing[pos[ok]] = np.array([v[4] for v in vals], dtype=np.int32)[ok]
        turning[pos[ok]] = np.array([v[5] for v in vals], dtype=bool)[ok]
        minor[pos[ok]] = np.array([v[6] for v in vals], dtype=bool)[ok]
        short_leg[pos[ok]] = np.array([v[7] for v in vals], dtype=bool)[ok]
    ford = np.zeros(len(ids), dtype=bool)
    if fords and len(ids):
        fid = np.asarray(fords, dtype=np.int64)
        pos = np.minimum(np.searchsorted(ids, fid), len(ids) - 1)
        ford[pos[ids[pos] == fid]] = True
    lon, lat = np.concatenate(kept_x)[order], np.concatenate(kept_y)[order]
    return NodeTable(ids, lon, lat, barrier, penalty, directed_ds, direction, ford, passing, turning, minor, short_leg)

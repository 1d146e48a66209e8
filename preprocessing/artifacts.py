"""The graph-directory format, owned here alone: array names, dtypes, version, fingerprint, atomic save, load.

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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .files import committing, keep_created, make_parents, remove_created, track, umask, untrack

FORMAT_VERSION = 4  # 4: arc_way, arc_duration, the turn stage (edge-based graph, `eb_*`, manifest `search_graph`);
# 3: guidance arrays (arc_lanes, arc_signs, arc_lane_count) and the guidance flags FLAG_TUNNEL / FLAG_CIRCULAR /
# FLAG_SPLIT in arc_flags; 2: FLAG_MOTORWAY set, per-exclude hierarchies (chx*_)
MANIFEST = "manifest.json"

# name -> dtype of every core array (written by preprocessing.graph). Stage arrays (`ch_*`, `lm_*`) are free-form
# but get recorded in the manifest like these and checked on load.
CORE_ARRAYS: dict[str, str] = {
    "node_lon": "int32",
    "node_lat": "int32",
    "node_osm_id": "int64",
    "node_component": "int32",
    "first_out": "int32",
    "arc_tail": "int32",
    "arc_head": "int32",
    "arc_weight": "int32",
    "arc_duration": "int32",  # travel time (ds) when the weight is not (routability)
    "arc_dist": "int32",
    "arc_geom": "int32",
    "arc_name": "int32",
    "arc_ref": "int32",
    "arc_class": "uint8",
    "arc_flags": "uint8",
    "arc_lanes": "int32",  # string id of the turn:lanes of the arc's direction (0 = none)
    "arc_signs": "int32",  # string id of "destinations\x1fexits\x1fpronunciation" (0 = none)
    "arc_lane_count": "uint8",  # OSRM's number of lanes of the way (0 = unknown)
    "arc_way": "int64",  # OSM way id of the arc (turn restrictions name ways)
    "in_first_out": "int32",
    "in_arc": "int32",
    "geom_first": "int64",
    "geom_lon": "int32",
    "geom_lat": "int32",
    "str_offsets": "int64",
    "str_bytes": "uint8",
}
STAGE_PREFIXES = ("ch_", "lm_", "chx", "eb_", "bg_", "pen_")  # chx{i}_*: the hierarchy without the i-th excludable
# class set; bg_*: the map's background (preprocessing.basemap.ARRAYS); pen_*: large node penalties (.penalties)


class FormatError(Exception):
    """A graph directory that cannot be used as it is; the message says what to do."""


class Graph:
    """A loaded graph directory: read-only arrays (attribute access, e.g. `graph.first_out`) and the manifest."""

    def __init__(self, path: Path, manifest: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        self.path = path
        self.manifest = manifest
        self.arrays = arrays

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self.__dict__["arrays"][name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def num_nodes(self) -> int:
        return int(self.arrays["first_out"].shape[0] - 1)

    @property
    def num_arcs(self) -> int:
        return int(self.arrays["arc_head"].shape[0])

    def has(self, name: str) -> bool:
        return name in self.arrays

    def string(self, i: int) -> str:
        """String `i` of the name/ref table ("" for 0)."""
        off = self.arrays["str_offsets"]
        return bytes(self.arrays["str_bytes"][off[i] : off[i + 1]]).decode("utf-8")


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
    """Assert every core array is present with its dtype and that stage arrays are named by stage."""
    for name, dtype in CORE_ARRAYS.items():
        if name not in arrays:
            raise FormatError(f"array {name!r} is missing")
        if str(arrays[name].dtype) != dtype:
            raise FormatError(f"array {name!r} has dtype {arrays[name].dtype}, the format says {dtype}")
    for name in arrays:
        if name not in CORE_ARRAYS and not name.startswith(STAGE_PREFIXES):
            raise FormatError(f"array {name!r} belongs to no known stage")


def save_graph(
    out_dir: str | os.PathLike[str],
    arrays: Mapping[str, np.ndarray],
    manifest: Mapping[str, Any],
    force: bool = False,
) -> Path:
    """Write `arrays` and `manifest` to `out_dir` atomically (temp dir + rename); refuse to overwrite unless `force`."""
    out = Path(out_dir)
    if out.exists() and not force:
        raise FormatError(f"output {out} already exists: pass --force to replace it")
    validate_arrays(arrays)
    created = make_parents(out.parent)
    tmp = track(Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent)))
    try:
        table = {}
        for name in sorted(arrays):
            arr = np.ascontiguousarray(arrays[name])
            np.save(tmp / f"{name}.npy", arr, allow_pickle=False)
            table[name] = {"dtype": str(arr.dtype), "shape": list(arr.shape)}
        full = dict(manifest)
        full["format_version"] = FORMAT_VERSION
        full["arrays"] = table
        full["fingerprint"] = fingerprint(full)
        with open(tmp / MANIFEST, "w", encoding="utf-8") as fh:
            json.dump(full, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.chmod(tmp, 0o777 & ~umask())  # mkdtemp makes 0700: a graph must be readable by other users
        with committing():
            if out.exists():
                trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
                os.replace(out, trash / "g")
                os.replace(tmp, out)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                os.replace(tmp, out)
            untrack(tmp)
            keep_created(created)
    except BaseException:
        untrack(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        remove_created(created)
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


def load_graph(path: str | os.PathLike[str], mmap: bool = True) -> Graph:
    """Memory-map (read-only) every array of a graph directory after checking version, fingerprint and shapes."""
    p = Path(path)
    manifest = read_manifest(p)
    arrays: dict[str, np.ndarray] = {}
    for name, meta in manifest["arrays"].items():
        f = p / f"{name}.npy"
        try:
            arr = np.load(f, mmap_mode="r" if mmap else None, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise FormatError(f"array file {f} is missing or corrupt ({exc}): re-run `starroute preprocess`") from None
        if str(arr.dtype) != meta["dtype"] or list(arr.shape) != list(meta["shape"]):
            raise FormatError(
                f"array {name} is {arr.dtype}{list(arr.shape)}, the manifest says {meta['dtype']}{meta['shape']}: "
                "re-run `starroute preprocess`"
            )
        arrays[name] = arr
    missing = [n for n in CORE_ARRAYS if n not in arrays]
    if missing:
        raise FormatError(f"graph {p} lacks arrays {missing}: re-run `starroute preprocess`")
    return Graph(p, manifest, arrays)


def graph_in_memory(arrays: Mapping[str, np.ndarray], manifest: Mapping[str, Any] | None = None) -> Graph:
    """A Graph over in-memory arrays (tests, and stages that run before the directory is written)."""
    return Graph(Path("<memory>"), dict(manifest or {}), dict(arrays))

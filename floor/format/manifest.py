"""A graph directory's manifest (`manifest.json`): read, typed (`Manifest`), and the fingerprint that ties a metric or a
reused stage to the build it belongs to."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from floor.format.arrays import (
    FORMAT_VERSION,
    MANIFEST,
    FormatError,
)


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

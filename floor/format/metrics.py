"""Metric directories beside a graph (`starroute customize`, `POST /admin/metric`): new weights and durations written
whole, pointed to by a link, overlaid on the graph's arrays when it is loaded, old ones pruned."""

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

from floor.format.arrays import (
    METRIC_ARRAYS,
    METRIC_KEEP,
    METRIC_LINK,
    METRIC_MANIFEST,
    METRIC_MANIFEST_KEYS,
    METRIC_STAGES,
    METRICS_DIR,
    STAGE_CH,
    STAGE_LM,
    STAGES_MANIFEST,
    FormatError,
    map_array,
    metric_dependent,
    save_arrays,
    spec_of,
    write_json,
)
from floor.format.files import committing, track, umask, untrack
from floor.format.integrity import (
    FileState,
    no_space,
    space_sentence,
    sweep_stale,
)
from floor.format.manifest import read_manifest


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
    (`map_array`); `FormatError` otherwise. `files`: where to note each file's state as mapped."""
    out = {}
    for name, meta in table.items():
        if not metric_dependent(name):
            raise FormatError(f"metric {home} holds {name!r}, which no metric may replace")
        out[name], state = map_array(home / f"{name}.npy", meta, mmap, "re-run `starroute customize`")
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
        stale = (STAGE_CH, STAGE_LM) if "landmarks" in pending else (STAGE_CH,)
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
        "arrays": save_arrays(tmp, arrays),
        "manifest": {k: v for k, v in manifest.items() if k in METRIC_MANIFEST_KEYS},
        **{k: v for k, v in info.items() if k not in (*meta, "arrays", "manifest")},
    }
    write_json(tmp / json_name, out)
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
        if spec is None or spec.stage not in (STAGE_CH, STAGE_LM) or name == "lm_nodes":
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

"""A graph directory as a whole: saved atomically (a temporary sibling renamed into place, so an interrupted build never
leaves a half-written graph), loaded memory-mapped read-only and checked, refusing a format-version or fingerprint
mismatch with a sentence saying what to do."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from floor.format.arrays import (
    CORE_ARRAYS,
    FORMAT_VERSION,
    MANIFEST,
    FormatError,
    map_array,
    metric_free,
    save_arrays,
    validate_arrays,
    write_json,
)
from floor.format.files import (
    committing,
    keep_created,
    make_parents,
    release_pages,
    remove_created,
    track,
    umask,
    untrack,
)
from floor.format.integrity import (
    FileState,
    changed,
    exchange,
    no_space,
    space_sentence,
    sweep_stale,
)
from floor.format.manifest import Manifest, fingerprint, read_manifest, same_build
from floor.format.metrics import (
    overlay_metric,
    read_metric,
)


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
        full["arrays"] = save_arrays(tmp, arrays)
        full["fingerprint"] = fingerprint(full)
        write_json(tmp / MANIFEST, full)
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
        if same and reuse is not None and name in reuse.arrays and metric_free(name):
            arrays[name] = reuse.arrays[name]
            if name in reuse.files:
                files[name] = reuse.files[name]
            continue
        arrays[name], files[name] = map_array(p / f"{name}.npy", meta, mmap, "re-run `starroute preprocess`")
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
    for name, arr in arrays.items():  # the checksums and checks read every page: none stays resident for them
        if reuse is None or arr is not reuse.arrays.get(name):
            release_pages(arr)
    return Graph(p, manifest, arrays, files)


def graph_in_memory(arrays: Mapping[str, np.ndarray], manifest: Mapping[str, Any] | None = None) -> Graph:
    """A Graph over in-memory arrays (tests, and stages that run before the directory is written)."""
    return Graph(Path("<memory>"), dict(manifest or {}), dict(arrays))

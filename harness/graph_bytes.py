"""What a graph directory's arrays weigh (`table`: a line per array with dtype, shape, MiB, bytes per node and per
arc of the road graph, then the totals) and whether two builds are the same graph (`differences`), for
`bench/graph_bytes.py` and the tests.

`differences` compares every array by name, dtype, shape and bytes, and the manifests without what says when and how
fast they were built (`built_at`, the stages' seconds and peaks, the hierarchies' and landmarks' `seconds`, the
`memory` figures and choice); it
prints each difference and exits 1 if there is one: the check that a change to the preprocess kept its answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

# manifest keys (at any depth) that say how a build went, not what: `memory` is the machine's and the choice of
# running the CCH order and landmarks beside the contraction or after it, the same arrays either way
TIMING_KEYS = ("built_at", "stages", "seconds", "memory")
DERIVED = ("fingerprint", "arrays")  # checksums of the arrays, compared through the arrays themselves


def arrays_of(graph: Path) -> dict[str, np.ndarray]:
    """Every `.npy` of a graph directory, memory-mapped (read-only)."""
    return {f.stem: np.load(f, mmap_mode="r") for f in sorted(graph.glob("*.npy"))}


def manifest_of(graph: Path) -> dict[str, Any]:
    return dict(json.loads((graph / "manifest.json").read_text(encoding="utf-8")))


def table(graph: Path) -> list[str]:
    """The per-array lines and the totals: bytes per node and per arc of the road graph (manifest counts)."""
    counts = manifest_of(graph)["counts"]
    n, m = int(counts["nodes"]), int(counts["arcs"])
    arrays = arrays_of(graph)
    head = f"{'array':<28} {'dtype':<8} {'shape':<16} {'MiB':>8} {'B/node':>8} {'B/arc':>8}"
    lines = [f"{graph}: {n:,} nodes, {m:,} arcs", head]

    def row(name: str, b: int, dtype: str = "", shape: str = "") -> str:
        return f"{name:<28} {dtype:<8} {shape:<16} {b / 2**20:8.2f} {b / max(n, 1):8.2f} {b / max(m, 1):8.2f}"

    total = 0
    by_prefix: dict[str, int] = {}
    for name, a in arrays.items():
        total += a.nbytes
        prefix = name.split("_", 1)[0]
        by_prefix[prefix] = by_prefix.get(prefix, 0) + a.nbytes
        lines.append(row(name, a.nbytes, str(a.dtype), str(tuple(a.shape))))
    for prefix, b in sorted(by_prefix.items(), key=lambda kv: -kv[1]):
        lines.append(row(f"  {prefix}_*", b))
    lines.append(row("total", total, "", f"{len(arrays)} arrays"))
    return lines


def _without_timing(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _without_timing(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [_without_timing(v) for v in obj]
    return obj


def differences(graph: Path, other: Path) -> list[str]:
    """What differs between two graph directories' arrays (name, dtype, shape, bytes) and manifests (timings aside)."""
    a, b = arrays_of(graph), arrays_of(other)
    out = [f"array {name}: only in {graph if name in a else other}" for name in sorted(set(a) ^ set(b))]
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        if x.dtype != y.dtype or x.shape != y.shape:
            out.append(f"array {name}: {x.dtype}{x.shape} against {y.dtype}{y.shape}")
        elif np.asarray(x).tobytes() != np.asarray(y).tobytes():
            out.append(f"array {name}: other bytes")
    ma, mb = (_without_timing({k: v for k, v in manifest_of(g).items() if k not in DERIVED}) for g in (graph, other))
    for key in sorted(set(ma) | set(mb)):
        if ma.get(key) != mb.get(key):
            out.append(f"manifest {key}: {json.dumps(ma.get(key))[:200]} against {json.dumps(mb.get(key))[:200]}")
    return out

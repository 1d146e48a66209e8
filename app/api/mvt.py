"""Mapbox Vector Tiles (version 2) written with numpy: the protobuf varints and fields, and a layer built from
`Column`s (`value_table`, `tag_stream`), geometry command streams (`line_geometry`, `point_geometry`) and
`layer_bytes`. The one writer of the map's road tiles (`app.api.tiles`), its background (`app.api.basemap`) and
OSRM's debug tiles (`app.api.osrm.tile`); vectorised, no per-point Python loop and no numba kernel to compile."""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.engine.maps.tiles import EXTENT

# -- protobuf, vectorised ---------------------------------------------------------------------------------------------


def varint_sizes(v: np.ndarray) -> np.ndarray:
    """Bytes each unsigned value takes as a protobuf varint."""
    v = np.asarray(v, dtype=np.uint64)
    n = np.ones(v.shape, dtype=np.int64)
    for k in range(7, 64, 7):
        n += v >= np.uint64(1 << k)
    return n


def varints(v: np.ndarray) -> bytes:
    """Unsigned values as consecutive protobuf varints."""
    v = np.asarray(v, dtype=np.uint64).ravel()
    if v.shape[0] == 0:
        return b""
    sizes = varint_sizes(v)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    out = np.empty(int(ends[-1]), dtype=np.uint8)
    for j in range(int(sizes.max())):
        m = sizes > j
        byte = (v[m] >> np.uint64(7 * j)) & np.uint64(0x7F)
        more = (sizes[m] > j + 1).astype(np.uint64) << np.uint64(7)
        out[starts[m] + j] = (byte | more).astype(np.uint8)
    return out.tobytes()


def uvarint(n: int) -> bytes:
    """One unsigned value as a protobuf varint (plain Python: numpy costs more than it saves on one value)."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(tag: int, payload: bytes) -> bytes:
    """A length-delimited field: key byte(s), length, payload."""
    return uvarint(tag) + uvarint(len(payload)) + payload


def zigzag(n: np.ndarray) -> np.ndarray:
    """Signed values as protobuf's zigzag-encoded unsigned ones (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...)."""
    n = np.asarray(n, dtype=np.int64)
    return ((n << 1) ^ (n >> 63)).astype(np.uint64)


def value_message(kind: str, v: Any) -> bytes:
    """An MVT Value message of one type: string (field 1), float (2), double (3), uint (5), sint (6), bool (7)."""
    if kind == "string":
        return field(0x0A, str(v).encode("utf-8"))
    if kind == "float":
        return b"\x15" + struct.pack("<f", v)
    if kind == "double":
        return b"\x19" + struct.pack("<d", v)
    if kind == "uint":
        return b"\x28" + uvarint(int(v))
    if kind == "sint":
        return b"\x30" + uvarint((int(v) << 1) ^ (int(v) >> 63))
    if kind == "bool":
        return b"\x38" + uvarint(int(bool(v)))
    raise ValueError(f"unknown MVT value type {kind!r}")


def grouped(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For items grouped by feature with `counts` per feature: each item's feature and its index within it."""
    f = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    firsts = np.cumsum(counts) - counts
    return f, np.arange(int(counts.sum()), dtype=np.int64) - firsts[f]


# -- Mapbox Vector Tile layers ----------------------------------------------------------------------------------------

POINT, LINESTRING = 1, 2  # MVT geometry types


@dataclass(frozen=True)
class Column:
    """One property of a layer's features: its `key`, its MVT value type `kind` ("string", "float", "double",
    "uint", "sint", "bool"), per feature its value (`data`; for a string, a code that `label` turns into the text)
    and whether the feature carries it at all (`present`; None: every feature does)."""

    key: str
    kind: str
    data: np.ndarray
    present: np.ndarray | None = None
    label: Callable[[int], str] | None = None


def value_table(columns: Sequence[Column], n: int) -> tuple[list[tuple[str, Any]], np.ndarray, np.ndarray]:
    """A layer's value table, each distinct (type, value) once, and per feature and column the index of its value
    in it ([n, columns]) and whether the feature carries that column ([n, columns] bool)."""
    values: list[tuple[str, Any]] = []
    index: dict[tuple[str, Any], int] = {}
    vals = np.zeros((n, len(columns)), dtype=np.int64)
    mask = np.ones((n, len(columns)), dtype=bool)
    for j, col in enumerate(columns):
        if col.present is not None:
            mask[:, j] = np.asarray(col.present, dtype=bool)
        rows = np.flatnonzero(mask[:, j])
        if rows.shape[0] == 0:
            continue
        uniq, inv = np.unique(np.asarray(col.data)[rows], return_inverse=True)
        ids = np.empty(uniq.shape[0], dtype=np.int64)
        for i, u in enumerate(uniq.tolist()):
            key = (col.kind, col.label(u) if col.label is not None else u)
            at = index.get(key)
            if at is None:
                at = index[key] = len(values)
                values.append(key)
            ids[i] = at
        vals[rows, j] = ids[inv.reshape(-1)]
    return values, vals, mask


def tag_stream(vals: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Features' tags as one stream (key index, value index, ... per feature, the columns a feature carries in
    column order) and the stream's length per feature."""
    kv = np.stack([np.broadcast_to(np.arange(vals.shape[1]), mask.shape), vals], axis=2)
    return kv[mask].reshape(-1).astype(np.uint64), 2 * mask.sum(axis=1).astype(np.int64)


def line_geometry(
    npts: np.ndarray, line_feature: np.ndarray, px: np.ndarray, py: np.ndarray, nf: int
) -> tuple[np.ndarray, np.ndarray]:
    """Geometry commands of line features: line i has `npts[i]` (>= 2) points of `px`, `py` (tile grid, lines one
    after the other) and belongs to feature `line_feature[i]` (non-decreasing, so a feature's lines are
    consecutive). Per line MoveTo(1) dx dy, LineTo(k - 1) dx dy ...; the cursor runs on through a feature's lines and
    starts at (0, 0) in each feature. Returns the command stream and its length per feature."""
    npts = np.asarray(npts, dtype=np.int64)
    line_feature = np.asarray(line_feature, dtype=np.int64)
    pline, pidx = grouped(npts)
    px, py = np.asarray(px, dtype=np.int64), np.asarray(py, dtype=np.int64)
    dx, dy = px.copy(), py.copy()
    if px.shape[0]:
        dx[1:] -= px[:-1]
        dy[1:] -= py[:-1]
        fstart = np.searchsorted(line_feature[pline], np.arange(nf))  # first point of each feature
        fstart = fstart[fstart < px.shape[0]]
        dx[fstart], dy[fstart] = px[fstart], py[fstart]
    per_line = 2 * npts + 2
    base = np.cumsum(per_line) - per_line
    geom = np.empty(int(per_line.sum()), dtype=np.uint64)
    geom[base] = 9  # MoveTo, count 1
    geom[base + 3] = (((npts - 1) << 3) | 2).astype(np.uint64)  # LineTo, count k - 1
    at = base[pline] + np.where(pidx == 0, 1, 2 * pidx + 2)
    geom[at] = zigzag(dx)
    geom[at + 1] = zigzag(dy)
    return geom, np.bincount(line_feature, weights=per_line, minlength=nf).astype(np.int64)


def point_geometry(px: np.ndarray, py: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Geometry commands of point features, one point each: MoveTo(1) x y."""
    n = np.asarray(px).shape[0]
    geom = np.empty((n, 3), dtype=np.uint64)
    geom[:, 0] = 9
    geom[:, 1] = zigzag(np.asarray(px))
    geom[:, 2] = zigzag(np.asarray(py))
    return geom.reshape(-1), np.full(n, 3, dtype=np.int64)


def layer_bytes(
    name: str,
    keys: Sequence[str],
    values: Sequence[tuple[str, Any]],
    tags: np.ndarray,
    ntags: np.ndarray,
    geom_type: int,
    geom: np.ndarray,
    ngeom: np.ndarray,
    extent: int = EXTENT,
    ids: np.ndarray | None = None,
) -> bytes:
    """One MVT layer (version 2) as the tile's field 3: the features (optional `id`, the `tags` stream with
    `ntags` per feature, `geom_type`, the `geom` command stream with `ngeom` per feature), then the keys and the
    value table. Features without tags carry no tags field."""
    nf = ntags.shape[0]
    tag_sizes = np.bincount(grouped(ntags)[0], weights=varint_sizes(tags), minlength=nf).astype(np.int64)
    geom_sizes = np.bincount(grouped(ngeom)[0], weights=varint_sizes(geom), minlength=nf).astype(np.int64)
    has_tags = ntags > 0
    head = np.where(has_tags, 2, 0)  # 0x12 tlen
    id_len = np.zeros(nf, dtype=np.int64) if ids is None else np.full(nf, 2, dtype=np.int64)  # 0x08 id
    feat_sizes = 2 + 1 + varint_sizes(geom_sizes) + geom_sizes
    feat_sizes += np.where(has_tags, 1 + varint_sizes(tag_sizes) + tag_sizes, 0)
    if ids is not None:
        feat_sizes += 1 + varint_sizes(ids)
    # the features as one stream of varints: 0x12 len | [0x08 id] | [0x12 tlen tags..] | 0x18 type | 0x22 glen geom..
    per = 2 + id_len + head + ntags + 4 + ngeom
    base = np.cumsum(per) - per
    stream = np.zeros(int(per.sum()), dtype=np.uint64)
    stream[base] = 0x12
    stream[base + 1] = feat_sizes
    if ids is not None:
        stream[base + 2] = 0x08
        stream[base + 3] = np.asarray(ids, dtype=np.uint64)
    t0 = base + 2 + id_len
    stream[t0[has_tags]] = 0x12
    stream[t0[has_tags] + 1] = tag_sizes[has_tags]
    tf, tpos = grouped(ntags)
    stream[t0[tf] + head[tf] + tpos] = tags
    g0 = t0 + head + ntags
    stream[g0] = 0x18
    stream[g0 + 1] = geom_type
    stream[g0 + 2] = 0x22
    stream[g0 + 3] = geom_sizes
    gf, gpos = grouped(ngeom)
    stream[g0[gf] + 4 + gpos] = geom
    layer = b"\x78\x02" + field(0x0A, name.encode())
    layer += varints(stream)
    layer += b"".join(field(0x1A, k.encode()) for k in keys)
    layer += b"".join(field(0x22, value_message(kind, v)) for kind, v in values)
    layer += b"\x28" + uvarint(extent)
    return field(0x1A, layer)

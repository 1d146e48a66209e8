"""The road network as vector tiles: `GET /tile/{z}/{x}/{y}` (`.mvt` optional), the map page's background.

Mapbox Vector Tiles 2.1 (protobuf), one layer named `speeds` as in osrm-routed's `/tile/v1` debug tiles, extent 4096,
lines with the properties `class` (OSM highway class, or `ferry`), `speed` (km/h, uint), `name` and `ref` (when the
road has one), `oneway` and `is_small` (only when true; `is_small` as OSRM: a strongly connected component too small
to start a route in). A road between two junctions is one line; roads with equal properties share one
MultiLineString feature (per-feature overhead is most of a low-zoom tile otherwise). Features come in drawing order,
small roads first. A tile without roads is a valid tile with an empty layer. A bad z/x/y answers 400 `{code, message}`.

The encoder is vectorised numpy (no per-point Python loop, no numba kernel to compile): a city tile on Porto encodes
in milliseconds. Its layer builder (`Column`s -> `value_table`, `tag_stream`, `line_geometry` / `point_geometry`,
`layer_bytes`) writes OSRM's debug tiles too (`app.api.osrm.tile`). Encoded tiles are kept in a small LRU cache and
answered from it on the event loop; the others are cut in the search thread pool. Answers carry an ETag from the
graph fingerprint (a page that adds `?v=<fingerprint>` to the URL gets them cached for a day).
`GET /tile/tilejson.json` describes the source (TileJSON 3.0) for other vector-tile clients; `GET /osrm-client` is
the map's second page (Leaflet Routing Machine).
"""

from __future__ import annotations

import re
import struct
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Annotated, Any

import numpy as np
import orjson
from fastapi import APIRouter, Path, Query, Request
from starlette.responses import FileResponse, Response

from app.api.schemas import ErrorBody
from app.engine.errors import EngineError, InvalidValue
from app.engine.facade import Engine
from app.engine.maps.tiles import BUFFER, CLASS_NAMES, EXTENT, MAX_ZOOM, TileRoads, check_tile

router = APIRouter(tags=["map"])

MVT_TYPE = "application/vnd.mapbox-vector-tile"
_ERROR = {
    "description": "a tile that does not exist, or a malformed tile URL: `{code, message}`",
    "content": {"application/json": {"schema": ErrorBody.model_json_schema()}},
}
_TILE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the tile (Mapbox Vector Tile 2.1, one layer `speeds`)",
        "content": {MVT_TYPE: {"schema": {"type": "string", "format": "binary"}}},
    },
    304: {"description": "not modified (`If-None-Match` with the tile's ETag)"},
    400: _ERROR,
}
LAYER = "speeds"
KEYS = ("class", "speed", "name", "ref", "oneway", "is_small")
_INT = re.compile(r"\d{1,8}")


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


def _field(tag: int, payload: bytes) -> bytes:
    """A length-delimited field: key byte(s), length, payload."""
    return uvarint(tag) + uvarint(len(payload)) + payload


def _zigzag(n: np.ndarray) -> np.ndarray:
    n = np.asarray(n, dtype=np.int64)
    return ((n << 1) ^ (n >> 63)).astype(np.uint64)


def _value(kind: str, v: Any) -> bytes:
    """An MVT Value message of one type: string (field 1), float (2), double (3), uint (5), sint (6), bool (7)."""
    if kind == "string":
        return _field(0x0A, str(v).encode("utf-8"))
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


def _grouped(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    pline, pidx = _grouped(npts)
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
    geom[at] = _zigzag(dx)
    geom[at + 1] = _zigzag(dy)
    return geom, np.bincount(line_feature, weights=per_line, minlength=nf).astype(np.int64)


def point_geometry(px: np.ndarray, py: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Geometry commands of point features, one point each: MoveTo(1) x y."""
    n = np.asarray(px).shape[0]
    geom = np.empty((n, 3), dtype=np.uint64)
    geom[:, 0] = 9
    geom[:, 1] = _zigzag(np.asarray(px))
    geom[:, 2] = _zigzag(np.asarray(py))
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
    tag_sizes = np.bincount(_grouped(ntags)[0], weights=varint_sizes(tags), minlength=nf).astype(np.int64)
    geom_sizes = np.bincount(_grouped(ngeom)[0], weights=varint_sizes(geom), minlength=nf).astype(np.int64)
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
    tf, tpos = _grouped(ntags)
    stream[t0[tf] + head[tf] + tpos] = tags
    g0 = t0 + head + ntags
    stream[g0] = 0x18
    stream[g0 + 1] = geom_type
    stream[g0 + 2] = 0x22
    stream[g0 + 3] = geom_sizes
    gf, gpos = _grouped(ngeom)
    stream[g0[gf] + 4 + gpos] = geom
    layer = b"\x78\x02" + _field(0x0A, name.encode())
    layer += varints(stream)
    layer += b"".join(_field(0x1A, k.encode()) for k in keys)
    layer += b"".join(_field(0x22, _value(kind, v)) for kind, v in values)
    layer += b"\x28" + uvarint(extent)
    return _field(0x1A, layer)


def _class_name(code: int) -> str:
    return CLASS_NAMES[code] if code < len(CLASS_NAMES) else "other"


def encode(roads: TileRoads, string: Any) -> bytes:
    """`roads` as an MVT tile (bytes) with one layer, `LAYER`; `string(id)` gives names and refs.

    Roads with the same properties become one MultiLineString feature (one line per road, in the roads' order; the
    feature sits where its first road was, so the drawing order holds): per-feature overhead is most of a tile at
    low zoom, where a city's main roads are thousands of short pieces between junctions.
    """
    nr = roads.num_features
    yes = np.ones(nr, dtype=bool)
    columns = [
        Column("class", "string", roads.road_class, label=_class_name),
        Column("speed", "uint", roads.speed_kmh),
        Column("name", "string", roads.name, np.asarray(roads.name) != 0, string),
        Column("ref", "string", roads.ref, np.asarray(roads.ref) != 0, string),
        Column("oneway", "bool", yes, roads.oneway),
        Column("is_small", "bool", yes, roads.small),
    ]
    values, vals, mask = value_table(columns, nr)

    # group roads by their tags; groups in order of their first road, roads in order within a group
    key = np.where(mask, vals, -1)
    if nr:
        _, first_road, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
        rank = np.empty(first_road.shape[0], dtype=np.int64)
        rank[np.argsort(first_road, kind="stable")] = np.arange(first_road.shape[0])
        group = rank[inv.reshape(-1)]
        order = np.argsort(group, kind="stable")
        lead = first_road[np.argsort(first_road, kind="stable")]  # each group's first road
    else:
        group = order = lead = np.zeros(0, dtype=np.int64)
    tags, ntags = tag_stream(vals[lead], mask[lead])  # each group's tags: its first road's

    npts = np.diff(roads.first)[order]
    pfeat, pidx = _grouped(npts)
    src = roads.first[:-1][order][pfeat] + pidx  # point index in `roads`, points in feature order
    geom, ngeom = line_geometry(npts, group[order], roads.px[src], roads.py[src], lead.shape[0])
    return layer_bytes(LAYER, KEYS, values, tags, ntags, LINESTRING, geom, ngeom, roads.extent)


# -- endpoints --------------------------------------------------------------------------------------------------------


class TileCache:
    """The most recently used encoded tiles (bytes), shared by the worker's threads."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, int, int, int], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int, int, int]) -> bytes | None:
        with self._lock:
            body = self._items.get(key)
            if body is not None:
                self._items.move_to_end(key)
            return body

    def put(self, key: tuple[str, int, int, int], body: bytes) -> None:
        with self._lock:
            self._items[key] = body
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


CACHE = TileCache()


def _key(engine: Engine, z: int, x: int, y: int) -> tuple[str, int, int, int]:
    """Cache key: the graph's fingerprint (its content), the tile."""
    return engine.meta.fingerprint or str(id(engine)), z, x, y


def tile_bytes(engine: Engine, z: int, x: int, y: int) -> bytes:
    """The MVT tile z/x/y of the engine's road network (cached); `InvalidValue` for a tile that does not exist."""
    key = _key(engine, z, x, y)
    body = CACHE.get(key)
    if body is None:
        tiles = engine.road_tiles()
        body = encode(tiles.tile(z, x, y), tiles.string)
        CACHE.put(key, body)
    return body


def _int(text: str, what: str) -> int:
    if not _INT.fullmatch(text):
        raise InvalidValue(f"tile {what} must be a non-negative integer, got {text[:20]!r}")
    return int(text)


@router.get("/tile/tilejson.json", summary="TileJSON 3.0 of the road tiles")
async def tilejson(request: Request) -> Response:
    """Where the tiles are, their zoom range and bounds, and the fields of their one layer (for MapLibre and co.)."""
    svc = request.app.state.service
    mf = svc.opened.meta
    bbox = list(mf.bbox) if mf.bbox is not None else [-180.0, -85.0, 180.0, 85.0]
    base = str(request.base_url).rstrip("/")
    body = {
        "tilejson": "3.0.0",
        "name": f"starroute {mf.profile} roads",
        "attribution": "© OpenStreetMap contributors (ODbL 1.0)",
        "tiles": [f"{base}/tile/{{z}}/{{x}}/{{y}}.mvt?v={mf.fingerprint[:16]}"],
        "minzoom": 0,
        "maxzoom": MAX_ZOOM,
        "bounds": bbox,
        "center": [(bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2, 14],
        "vector_layers": [
            {
                "id": LAYER,
                "description": "roads between junctions, small roads first",
                "fields": {
                    "class": "String",
                    "speed": "Number",
                    "name": "String",
                    "ref": "String",
                    "oneway": "Boolean",
                    "is_small": "Boolean",
                },
            }
        ],
        "extent": EXTENT,
        "buffer": BUFFER,
    }
    return Response(orjson.dumps(body), media_type="application/json")


@router.get(
    "/tile/{z}/{x}/{y}", summary="Road network vector tile (MVT)", response_class=Response, responses=_TILE_RESPONSES
)
async def tile(
    request: Request,
    z: Annotated[str, Path(description=f"zoom, 0..{MAX_ZOOM}", examples=["15"])],
    x: Annotated[str, Path(description="column, 0..2^z - 1 (XYZ tiling, as OpenStreetMap's)", examples=["17059"])],
    y: Annotated[str, Path(description="row, 0..2^z - 1, `.mvt` optional", examples=["11948.mvt"])],
    v: Annotated[str | None, Query(description="the graph fingerprint (16 hex digits): cached for a day")] = None,
) -> Response:
    """The roads of tile z/x/y as a Mapbox Vector Tile (layer `speeds`); `y` may end in `.mvt`."""
    yy = y[:-4] if y.endswith(".mvt") else y
    zi, xi, yi = _int(z, "z"), _int(x, "x"), _int(yy, "y")
    check_tile(zi, xi, yi)
    svc = request.app.state.service
    engine = svc.opened
    fp = engine.meta.fingerprint[:16]
    etag = f'"{fp}-{zi}-{xi}-{yi}"'
    cache = "public, max-age=86400" if v is not None and v == fp else "no-cache"
    headers = {"ETag": etag, "Cache-Control": cache}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    key = _key(engine, zi, xi, yi)
    body = CACHE.get(key)
    if body is None:  # cut and encoded in a search process (milliseconds; the first tile also indexes the roads)
        body = await svc.tile("road", zi, xi, yi, lambda: tile_bytes(engine, zi, xi, yi))
        CACHE.put(key, body)
    return Response(body, media_type=MVT_TYPE, headers=headers)


@router.get("/tile/{rest:path}", include_in_schema=False)
async def bad_tile(rest: str) -> Response:
    """Any other path under /tile/: OSRM-style 400 instead of a 404."""
    raise EngineError(f"tile URLs are /tile/{{z}}/{{x}}/{{y}}[.mvt], got /tile/{rest[:40]}", "InvalidUrl")


# The map page's second page lives here beside its tiles (`GET /` is `app.api.pages`): Leaflet Routing Machine, an
# unmodified OSRM front end, pointed at this server's `/route/v1`.
OSRM_CLIENT_PAGE = FilePath(__file__).resolve().parent.parent / "static" / "map" / "osrm-client.html"


@router.get("/osrm-client", include_in_schema=False)
async def osrm_client() -> Response:
    """Leaflet Routing Machine on this server's OSRM API: proof that OSRM front ends work unchanged."""
    if not OSRM_CLIENT_PAGE.is_file():
        raise EngineError("the map pages are not installed", "NotFound")
    return FileResponse(OSRM_CLIENT_PAGE, media_type="text/html")

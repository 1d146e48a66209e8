"""The map's background as vector tiles: `GET /bgtile/{z}/{x}/{y}` (`.mvt` optional), drawn under the road tiles.

Mapbox Vector Tiles 2.1, one layer `background`, extent 4096: one MultiPolygon feature per kind present in the
tile (`kind`: water, wetland, wood, park, grass, farmland, residential, commercial, industrial, cemetery, beach,
rail, building), outer rings clockwise and holes anticlockwise (y down). Built at preprocess from the same extract
(`preprocessing.basemap`, `--basemap`); a graph without it answers 404 `NotFound`, and `/health` says
`graph.basemap: false` so the map page does not ask. Tiles are cached beside the road tiles' cache, with the same
ETag and `?v=<fingerprint>` rules (`app.api.tiles`).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from app.api.mvt import field, uvarint, varints, zigzag
from app.api.tiles import _ERROR, MVT_TYPE, TileCache
from app.engine.errors import EngineError, InvalidValue
from app.engine.facade import Engine
from app.engine.maps.basemap import TileAreas
from app.engine.maps.tiles import MAX_ZOOM, check_tile

router = APIRouter(tags=["map"])
LAYER = "background"
CACHE = TileCache(256)


def _geometry(t: TileAreas, polys: np.ndarray) -> bytes:
    """MoveTo, LineTo.., ClosePath per ring of `polys` (the cursor runs on through the feature)."""
    r0, r1 = int(t.poly_ring[polys[0]]), int(t.poly_ring[polys[-1] + 1])
    first = t.ring_first[r0 : r1 + 1]
    k = np.diff(first)  # points per ring (>= 3)
    p0, p1 = int(first[0]), int(first[-1])
    x, y = t.px[p0:p1], t.py[p0:p1]
    dx, dy = np.diff(x, prepend=0), np.diff(y, prepend=0)
    per = 2 * k + 3
    base = np.cumsum(per) - per
    out = np.empty(int(per.sum()), dtype=np.uint64)
    out[base] = 9  # MoveTo 1
    out[base + 3] = ((k - 1) << 3) | 2  # LineTo k - 1
    out[base + per - 1] = 15  # ClosePath 1
    ring = np.repeat(np.arange(k.shape[0]), k)
    idx = np.arange(p1 - p0) - np.repeat(first[:-1] - p0, k)  # point index within its ring
    at = base[ring] + np.where(idx == 0, 1, 2 * idx + 2)
    out[at] = zigzag(dx)
    out[at + 1] = zigzag(dy)
    return varints(out)


def encode(t: TileAreas, extent: int = 4096) -> bytes:
    """The tile's polygons as an MVT tile, one MultiPolygon feature per kind."""
    feats: list[bytes] = []
    values: list[str] = []
    kinds = np.asarray(t.kind)
    for code in np.unique(kinds).tolist():
        polys = np.flatnonzero(kinds == code)
        tags = b"\x00" + uvarint(len(values))  # key 0 ("kind"), value index
        values.append(t.kinds[code] if code < len(t.kinds) else "other")
        body = field(0x12, tags) + b"\x18\x03" + field(0x22, _geometry(t, polys))
        feats.append(field(0x12, body))
    layer = b"\x78\x02" + field(0x0A, LAYER.encode()) + b"".join(feats) + field(0x1A, b"kind")
    layer += b"".join(field(0x22, field(0x0A, v.encode())) for v in values)
    layer += b"\x28" + uvarint(extent)
    return field(0x1A, layer)


def _key(engine: Engine, z: int, x: int, y: int) -> tuple[str, int, int, int]:
    """A background tile's key in `CACHE`: the graph's fingerprint and the tile."""
    return (engine.meta.fingerprint or str(id(engine)), z, x, y)


def bg_tile_bytes(engine: Engine, z: int, x: int, y: int) -> bytes:
    key = _key(engine, z, x, y)
    body = CACHE.get(key)
    if body is None:
        body = encode(engine.basemap_tile(z, x, y))
        CACHE.put(key, body)
    return body


def _int(text: str, what: str) -> int:
    if not (text.isdigit() and len(text) <= 8):
        raise InvalidValue(f"tile {what} must be a non-negative integer, got {text[:20]!r}")
    return int(text)


@router.get(
    "/bgtile/{z}/{x}/{y}",
    summary="Background vector tile (MVT): water, land use, parks, buildings",
    response_class=Response,
    responses={
        200: {
            "description": "the tile (MVT, one layer `background`)",
            "content": {MVT_TYPE: {"schema": {"type": "string", "format": "binary"}}},
        },
        304: {"description": "not modified (`If-None-Match` with the tile's ETag)"},
        400: _ERROR,
        404: {**_ERROR, "description": "the graph was built without a background (`--no-basemap`)"},
    },  # fmt: skip
)
async def bgtile(
    request: Request,
    z: Annotated[str, Path(description=f"zoom, 0..{MAX_ZOOM}")],
    x: Annotated[str, Path(description="column")],
    y: Annotated[str, Path(description="row, `.mvt` optional")],
    v: Annotated[str | None, Query(description="the graph fingerprint (16 hex digits): cached for a day")] = None,
) -> Response:
    """The background of tile z/x/y (layer `background`, one MultiPolygon per `kind`)."""
    yy = y[:-4] if y.endswith(".mvt") else y
    zi, xi, yi = _int(z, "z"), _int(x, "x"), _int(yy, "y")
    check_tile(zi, xi, yi)
    svc = request.app.state.service
    engine = svc.opened
    if not engine.has_basemap:
        raise EngineError("this graph has no background layer: preprocess it with --basemap", "NotFound")
    fp = engine.meta.fingerprint[:16]
    etag = f'"bg-{fp}-{zi}-{xi}-{yi}"'
    headers = {"ETag": etag, "Cache-Control": "public, max-age=86400" if v is not None and v == fp else "no-cache"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    key = _key(engine, zi, xi, yi)
    body = CACHE.get(key)
    if body is None:  # drawn in a search process
        body = await svc.tile(bg_tile_bytes, zi, xi, yi)
        CACHE.put(key, body)
    return Response(body, media_type=MVT_TYPE, headers=headers)

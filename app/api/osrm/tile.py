"""OSRM's tile service: `GET /tile/v1/{profile}/tile({x},{y},{zoom}).mvt`, osrm-routed's debug vector tiles.

A Mapbox Vector Tile (version 2, extent 4096, `application/x-protobuf`) with osrm-routed's layers, property names
and value types, so OSRM's debug map and scripts read it unchanged (`app.engine.maps.debug_tiles` says what each value
is and how it is found):
- `speeds`: a LineString per directed road segment, ids from 1: `speed` (uint, km/h), `is_small` (bool),
  `datasource` ("lua profile"), `weight`, `duration` (s) and `rate` (double), `name`, `is_startpoint` (bool);
- `turns` (zoom 15 and up): a Point per turn, ids from 1: `bearing_in`, `turn_angle` (sint, degrees), `cost`,
  `weight` (float, s), `type`, `modifier` (guidance's names, OSRM's internal ones: "(suppressed)", "turn", ...);
- `osmnodes`: a Point per shape point, its OSM node id as the feature id, no properties;
- `internal-nodes`: the segregated edges (guidance's), LineStrings without properties.
Layers without features are left out, as vtzero leaves them out (an empty tile is 0 bytes).

The grammar is osrm-routed's (`tile(` uint `,` uint `,` uint `).mvt`, nothing after it, no query string): a
malformed URL is `InvalidQuery` "Query string malformed close to position N" where OSRM's parser stops; a zoom
outside 12..19 or a tile that does not exist is `InvalidOptions` with OSRM's message (typo included), followed by
what is wrong (OSRM's text says "12+" even of zoom 20). Tiles are
encoded with the map tiles' encoder (`app.api.tiles`), cut in the search pool and kept in a small LRU cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from app.api.errors import JSON_TYPE
from app.api.tiles import (
    LINESTRING,
    POINT,
    Column,
    TileCache,
    layer_bytes,
    line_geometry,
    point_geometry,
    tag_stream,
    value_table,
)
from app.engine.errors import EngineError
from app.engine.maps.tiles import (
    EXTENT,
    MODIFIER_NAMES,
    OSRM_MAX_ZOOM,
    OSRM_MIN_ZOOM,
    TURN_TYPE_NAMES,
    DebugTile,
)

if TYPE_CHECKING:
    from app.api.osrm.handlers import OsrmRequest
    from app.api.service import Service

TILE_TYPE = "application/x-protobuf"  # osrm-routed's Content-Type for tiles
DATASOURCE = "lua profile"  # the one data source (no traffic updates)
_UINT_MAX = 2**32 - 1  # x3::uint_ (unsigned int) refuses more
INVALID_TILE = "Invalid coodinates. Only zoomlevel 12+ is supported"  # sic, osrm-routed's message


class Protobuf(bytes):
    """A tile answer: bytes that name their media type (`app.api.osrm.handlers.media_type` reads it for the
    Content-Type)."""

    media_type = TILE_TYPE


def _query_error(pos: int) -> EngineError:
    return EngineError(f"Query string malformed close to position {pos}", "InvalidQuery")


def parse_tile(url: str, pos: int) -> tuple[int, int, int]:
    """`tile(x,y,z).mvt` from `url[pos:]` to its end, as osrm-routed's x3 grammar reads it: (x, y, z), or
    `InvalidQuery` at the position the parser stopped (the start when `tile(` is missing, else the element it
    expected); then OSRM's validity check (`InvalidOptions`)."""
    if not url.startswith("tile(", pos):
        raise _query_error(pos)
    p = pos + 5
    numbers = []
    for sep in (",", ",", ").mvt"):
        end = p
        while end < len(url) and url[end].isdigit() and url[end].isascii():
            end += 1
        if end == p or int(url[p:end]) > _UINT_MAX:
            raise _query_error(p)
        numbers.append(int(url[p:end]))
        if not url.startswith(sep, end):
            raise _query_error(end)
        p = end + len(sep)
    if p != len(url):  # anything after `.mvt`, a query string included
        raise _query_error(p)
    x, y, z = numbers
    if not OSRM_MIN_ZOOM <= z <= OSRM_MAX_ZOOM:  # osrm-routed's words, then which bound (its text names one only)
        raise EngineError(f"{INVALID_TILE}: zoom {z} is outside {OSRM_MIN_ZOOM}..{OSRM_MAX_ZOOM}", "InvalidOptions")
    if not (x < (1 << z) and y < (1 << z)):
        raise EngineError(f"{INVALID_TILE}: x and y are 0..{(1 << z) - 1} at zoom {z}", "InvalidOptions")
    return x, y, z


# -- encoding ---------------------------------------------------------------------------------------------------------


def _speeds(t: DebugTile) -> bytes:
    s = t.seg_x0.shape[0]
    columns = [
        Column("speed", "uint", t.seg_speed_kmh),
        Column("is_small", "bool", t.seg_small),
        Column("datasource", "string", np.zeros(s, dtype=np.int64), label=lambda _: DATASOURCE),
        Column("weight", "double", t.seg_weight_s),  # float precision in a double, as vtzero's index keeps them
        Column("duration", "double", t.seg_duration_s),
        Column("name", "string", t.seg_name, label=lambda i: t.names[i]),
        Column("rate", "double", t.seg_rate),
        Column("is_startpoint", "bool", t.seg_startpoint),
    ]
    values, vals, mask = value_table(columns, s)
    tags, ntags = tag_stream(vals, mask)
    px = np.stack([t.seg_x0, t.seg_x1], axis=1).reshape(-1)
    py = np.stack([t.seg_y0, t.seg_y1], axis=1).reshape(-1)
    geom, ngeom = line_geometry(np.full(s, 2), np.arange(s), px, py, s)
    keys = [c.key for c in columns]
    ids = np.arange(1, s + 1, dtype=np.uint64)
    return layer_bytes("speeds", keys, values, tags, ntags, LINESTRING, geom, ngeom, EXTENT, ids)


def _turns(t: DebugTile) -> bytes:
    n = t.turn_x.shape[0]
    columns = [
        Column("bearing_in", "sint", t.turn_bearing_in),
        Column("turn_angle", "sint", t.turn_angle),
        Column("cost", "float", t.turn_cost_s),
        Column("weight", "float", t.turn_weight_s),
        Column("type", "string", t.turn_type, label=lambda i: TURN_TYPE_NAMES[i]),
        Column("modifier", "string", t.turn_modifier, label=lambda i: MODIFIER_NAMES[i]),
    ]
    values, vals, mask = value_table(columns, n)
    tags, ntags = tag_stream(vals, mask)
    geom, ngeom = point_geometry(t.turn_x, t.turn_y)
    keys = [c.key for c in columns]
    ids = np.arange(1, n + 1, dtype=np.uint64)
    return layer_bytes("turns", keys, values, tags, ntags, POINT, geom, ngeom, EXTENT, ids)


def _osmnodes(t: DebugTile) -> bytes:
    geom, ngeom = point_geometry(t.node_x, t.node_y)
    ntags = np.zeros(t.node_x.shape[0], dtype=np.int64)
    ids = t.node_osm_id.astype(np.uint64)
    return layer_bytes("osmnodes", [], [], np.zeros(0, np.uint64), ntags, POINT, geom, ngeom, EXTENT, ids)


def _internal_nodes(t: DebugTile) -> bytes:
    nf = t.num_line_features
    geom, ngeom = line_geometry(np.diff(t.line_first), t.line_feature, t.line_x, t.line_y, nf)
    ntags = np.zeros(nf, dtype=np.int64)
    return layer_bytes("internal-nodes", [], [], np.zeros(0, np.uint64), ntags, LINESTRING, geom, ngeom, EXTENT)


def encode(t: DebugTile) -> bytes:
    """The tile's layers as one MVT tile, in osrm-routed's order; layers without features are left out."""
    parts = []
    if t.seg_x0.shape[0]:
        parts.append(_speeds(t))
    if t.turn_x.shape[0]:
        parts.append(_turns(t))
    if t.node_x.shape[0]:
        parts.append(_osmnodes(t))
    if t.num_line_features:
        parts.append(_internal_nodes(t))
    return b"".join(parts)


# -- the service ------------------------------------------------------------------------------------------------------

CACHE = TileCache(256)


async def tile(svc: Service, req: OsrmRequest) -> Protobuf:
    """Answer `/tile/v1`: the encoded debug tile (cached per graph fingerprint and tile)."""
    x, y, z = req.options["x"], req.options["y"], req.options["z"]
    engine = svc.opened
    key = ((engine.meta.fingerprint or str(id(engine))) + ":osrm", z, x, y)
    body = CACHE.get(key)
    if body is None:  # cut and encoded in a search process (milliseconds; the first tile also indexes the graph)
        body = await svc.tile("osrm", z, x, y, lambda: encode(engine.debug_tile(z, x, y)))
        CACHE.put(key, body)
    return Protobuf(body)


# -- OpenAPI documentation (the front door answers the path before routing, as for the other OSRM services) ----------

router = APIRouter(tags=["osrm"])
_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the debug tile (Mapbox Vector Tile 2: layers speeds, turns, osmnodes, internal-nodes)",
        "content": {TILE_TYPE: {"schema": {"type": "string", "format": "binary"}}},
    },
    400: {
        "description": "OSRM error: `{code, message}` (InvalidQuery, InvalidOptions, ...)",
        "content": {JSON_TYPE.split(";")[0]: {"schema": {"type": "object"}}},
    },
}


@router.get("/tile/v1/{profile}/{tile}", summary="OSRM tile service", response_class=Response, responses=_RESPONSES)
async def osrm_tile(
    request: Request,
    profile: str,
    tile: Annotated[
        str, Path(description="`tile({x},{y},{zoom}).mvt`, zoom 12..19", examples=["tile(17059,11948,15).mvt"])
    ],
) -> Response:
    """OSRM's debug vector tile: every road segment with its speed, weight and duration, every turn with its cost."""
    from app.api.osrm.handlers import handle, media_type

    status, body = await handle(request.app.state.service, request.url.path, request.scope.get("query_string", b""))
    return Response(body, status_code=status, media_type=media_type(body))

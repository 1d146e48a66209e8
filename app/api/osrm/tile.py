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

The grammar is osrm-routed's (`tile(` uint `,` uint `,` uint `).mvt`, nothing after it, no query string;
`app.api.osrm.grammar.parse_tile`). Tiles are written with the MVT writer the map's tiles use (`app.api.mvt`), cut in a
search process and kept in a small LRU cache.
"""

from __future__ import annotations

import numpy as np

from app.api.mvt import LINESTRING, POINT, Column, layer_bytes, line_geometry, point_geometry, tag_stream, value_table
from app.api.osrm.grammar import OsrmRequest, OsrmTileOptions
from app.api.service import Service
from app.api.tiles import TileCache
from app.engine.facade import Engine
from app.engine.maps.tiles import EXTENT, MODIFIER_NAMES, TURN_TYPE_NAMES, DebugTile

TILE_TYPE = "application/x-protobuf"  # osrm-routed's Content-Type for tiles
DATASOURCE = "lua profile"  # the one data source (no traffic updates)


class Protobuf(bytes):
    """A tile answer: bytes that name their media type (`app.api.osrm.dispatch.media_type` reads it for the
    Content-Type)."""

    media_type = TILE_TYPE


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


def draw(engine: Engine, z: int, x: int, y: int) -> bytes:
    """The debug tile z/x/y cut and encoded (in a search process, `Service.tile`)."""
    return encode(engine.debug_tile(z, x, y))


async def tile(svc: Service, req: OsrmRequest[OsrmTileOptions]) -> Protobuf:
    """Answer `/tile/v1`: the encoded debug tile (cached per graph fingerprint and tile)."""
    x, y, z = req.options.x, req.options.y, req.options.z
    engine = svc.opened
    key = ((engine.meta.fingerprint or str(id(engine))) + ":osrm", z, x, y)
    body = CACHE.get(key)
    if body is None:  # cut and encoded in a search process (milliseconds; the first tile also indexes the graph)
        body = await svc.tile(draw, z, x, y)
        CACHE.put(key, body)
    return Protobuf(body)

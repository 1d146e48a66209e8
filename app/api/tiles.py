"""The road network as vector tiles: `GET /tile/{z}/{x}/{y}` (`.mvt` optional), the map page's background.

Mapbox Vector Tiles 2.1 (protobuf), one layer named `speeds` as in osrm-routed's `/tile/v1` debug tiles, extent 4096,
lines with the properties `class` (OSM highway class, or `ferry`), `speed` (km/h, uint), `name` and `ref` (when the
road has one), `oneway` and `is_small` (only when true; `is_small` as OSRM: a strongly connected component too small
to start a route in). A road between two junctions is one line; roads with equal properties share one
MultiLineString feature (per-feature overhead is most of a low-zoom tile otherwise). Features come in drawing order,
small roads first. A tile without roads is a valid tile with an empty layer. A bad z/x/y answers 400 `{code, message}`.

The encoder is the vectorised MVT writer `app.api.mvt` (no per-point Python loop, no numba kernel to compile): a city
tile on Porto encodes in milliseconds; the same writer writes the background (`app.api.basemap`) and OSRM's debug
tiles (`app.api.osrm.tile`). Encoded tiles are kept in a small LRU cache and
answered from it on the event loop; the others are cut in the search thread pool. Answers carry an ETag from the
graph fingerprint (a page that adds `?v=<fingerprint>` to the URL gets them cached for a day).
`GET /tile/tilejson.json` describes the source (TileJSON 3.0) for other vector-tile clients; `GET /osrm-client` is
the map's second page (Leaflet Routing Machine).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from pathlib import Path as FilePath
from typing import Annotated, Any

import numpy as np
import orjson
from fastapi import APIRouter, Path, Query, Request
from starlette.responses import FileResponse, Response

from app.api.mvt import LINESTRING, Column, grouped, layer_bytes, line_geometry, tag_stream, value_table
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
    pfeat, pidx = grouped(npts)
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
        body = await svc.tile(tile_bytes, zi, xi, yi)
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

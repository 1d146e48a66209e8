"""The road network cut into web-map tiles: which roads cross a tile, their shape in tile coordinates, class, speed,
name. The map page draws its background from these (the API encodes them as Mapbox Vector Tiles, `app.api.tiles`).

One feature per geometry chain (a road between two junctions), not per directed arc: a two-way street is drawn once.
Everything per chain is computed once per graph (`road_tiles(router)`, on the first tile): its bounding box in Web
Mercator, the zoom from which it is drawn, its draw rank (about 60 bytes per chain, nothing per shape point). A tile
is then a vectorised scan of the chain boxes (well under a millisecond for the 84k chains of Porto; linear in the
chains, so a country-sized graph would want a grid index) and a gather of the chosen chains' shape points, projected
and rounded to the tile grid, with points that fall into the same grid cell as their predecessor dropped (lines keep
their ends) and lines within one cell left out, so low zooms stay small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from app.engine.data import derived
from app.engine.errors import InvalidValue
from floor.format.units import COORD_SCALE, DIST_PER_METRE, FLAG_FERRY, ROAD_CLASSES, WEIGHT_PER_SECOND

if TYPE_CHECKING:
    from app.engine.router import Router
    from floor.format.graph import Graph

MAX_ZOOM = 22
EXTENT = 4096  # tile coordinate grid (the MVT default)
BUFFER = 64  # grid units around a tile whose roads are included too (lines are drawn whole across tile edges)
MAX_LAT = 85.0511287798066  # Web Mercator's limit

CLASS_NAMES: tuple[str, ...] = ROAD_CLASSES  # `arc_class` code -> road class name ("other", "motorway", ...)

# From which zoom a class is drawn (a city at zoom 11 shows its main roads, every street from 13 on); unknown: 15.
_MIN_ZOOM = {
    "motorway": 0, "trunk": 0, "primary": 9, "ferry": 9, "shuttle_train": 9, "motorway_link": 10, "trunk_link": 10,
    "secondary": 10, "primary_link": 11, "tertiary": 11, "movable_bridge": 11, "secondary_link": 12,
    "tertiary_link": 12, "unclassified": 13, "residential": 13, "road": 13, "busway": 13, "living_street": 14,
    "service": 14, "track": 14, "pedestrian": 15, "other": 15,
}  # fmt: skip
# Drawing order, bottom first: small roads under big ones.
_RANK = {
    "motorway": 9, "trunk": 8, "primary": 7, "motorway_link": 6, "trunk_link": 6, "secondary": 6, "primary_link": 5,
    "tertiary": 5, "secondary_link": 4, "tertiary_link": 4, "unclassified": 3, "residential": 3, "road": 3,
    "living_street": 2, "busway": 2, "ferry": 1, "shuttle_train": 1, "movable_bridge": 3,
}  # fmt: skip


def check_tile(z: int, x: int, y: int) -> None:
    """`InvalidValue` unless 0 <= z <= MAX_ZOOM and 0 <= x, y < 2**z (the tile exists)."""
    if not 0 <= z <= MAX_ZOOM:
        raise InvalidValue(f"tile zoom must be 0..{MAX_ZOOM}, got {z}")
    n = 1 << z
    if not (0 <= x < n and 0 <= y < n):
        raise InvalidValue(f"tile x and y must be 0..{n - 1} at zoom {z}, got x={x}, y={y}")


def mercator(lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Degrees -> Web Mercator in units of the world (0..1 both ways, y downwards as in tile numbering)."""
    mx = (np.asarray(lon, dtype=np.float64) + 180.0) / 360.0
    s = np.sin(np.radians(np.clip(np.asarray(lat, dtype=np.float64), -MAX_LAT, MAX_LAT)))
    my = 0.5 - np.log((1.0 + s) / (1.0 - s)) / (4.0 * math.pi)
    return mx, my


def chain_boxes(g: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every geometry chain's bounding box in Web Mercator world units: min x, min y, max x, max y [c]."""
    gf = np.asarray(g.geom_first, dtype=np.int64)
    mx, my = mercator(np.asarray(g.geom_lon) / COORD_SCALE, np.asarray(g.geom_lat) / COORD_SCALE)  # transient
    if gf.shape[0] <= 1 or not mx.shape[0]:
        return np.empty(0), np.empty(0), np.empty(0), np.empty(0)
    # chains are contiguous runs of shape points: bounding boxes of every chain by reduceat over the runs
    at = np.minimum(gf[:-1], mx.shape[0] - 1)
    return (np.minimum.reduceat(mx, at), np.minimum.reduceat(my, at),
            np.maximum.reduceat(mx, at), np.maximum.reduceat(my, at))  # fmt: skip


def small_chains(router: Router) -> np.ndarray:
    """Per chain: on a strongly connected component smaller than the snapping threshold, where routes cannot start
    (OSRM's `is_tiny`, the tiles' `is_small`); the largest component never is."""
    ch = router.chains
    return (ch.component != 0) & (ch.component_size < router.snapper.min_component_size)


def tile_grid(
    mx: np.ndarray, my: np.ndarray, z: int, x: int, y: int, extent: int = EXTENT
) -> tuple[np.ndarray, np.ndarray]:
    """Web Mercator world units -> tile z/x/y's grid (0..extent inside the tile, y down), unrounded."""
    n = float(1 << z)
    return (np.asarray(mx) * n - x) * extent, (np.asarray(my) * n - y) * extent


@dataclass(frozen=True)
class TileRoads:
    """The roads of one tile, in drawing order (small roads first).

    Road i has points `px[first[i]:first[i+1]]`, `py[...]` (int32 tile grid, 0..extent inside the tile, y down; a
    line may run outside, to its next point beyond the buffer), at least two distinct ones, in the chain's order.
    `road_class` (codes into `CLASS_NAMES`), `speed_kmh` (travel speed along the chain's forward arc, else its
    backward one: distance over travel time, node penalties included), `name` and `ref` (string ids,
    `RoadTiles.string`), `oneway`, `small` (in a strongly connected component smaller than the snapping threshold:
    routes cannot start there), `chain` (geometry chain id).
    """

    z: int
    x: int
    y: int
    extent: int
    first: np.ndarray  # int64 [f + 1]
    px: np.ndarray  # int32 [k]
    py: np.ndarray  # int32 [k]
    chain: np.ndarray  # int64 [f]
    road_class: np.ndarray  # uint8 [f]
    speed_kmh: np.ndarray  # int32 [f]
    name: np.ndarray  # int32 [f]
    ref: np.ndarray  # int32 [f]
    oneway: np.ndarray  # bool [f]
    small: np.ndarray  # bool [f]

    @property
    def num_features(self) -> int:
        return int(self.first.shape[0] - 1)


class RoadTiles:
    """Per-chain drawing data of one graph, and `tile(z, x, y)` cutting it into tiles. Immutable, thread-safe."""

    def __init__(self, router: Router) -> None:
        g, ch = router.graph, router.chains
        used = np.flatnonzero(ch.used)
        arc = np.where(ch.fwd_arc[used] >= 0, ch.fwd_arc[used], ch.bwd_arc[used]).astype(np.int64)
        codes = np.asarray(g.arc_class, dtype=np.uint8)[arc]
        ferry = (np.asarray(g.arc_flags)[arc] & FLAG_FERRY) != 0
        codes = np.where(ferry, np.uint8(CLASS_NAMES.index("ferry")), codes).astype(np.uint8)
        names = [CLASS_NAMES[c] if c < len(CLASS_NAMES) else "other" for c in range(256)]
        min_zoom = np.array([_MIN_ZOOM.get(n, 15) for n in names], dtype=np.int8)[codes]
        rank = np.array([_RANK.get(n, 0) for n in names], dtype=np.int8)[codes]
        order = np.lexsort((used, rank))  # bottom classes first; chains of one class in graph (Hilbert) order
        used, arc, codes, min_zoom = used[order], arc[order], codes[order], min_zoom[order]
        dist = np.asarray(g.arc_dist, dtype=np.float64)[arc] / DIST_PER_METRE
        secs = np.asarray(g.arc_duration, dtype=np.float64)[arc] / WEIGHT_PER_SECOND
        speed = np.where(secs > 0, dist / np.where(secs > 0, secs, 1.0) * 3.6, 0.0)
        gf = np.asarray(g.geom_first, dtype=np.int64)
        starts = gf[used]
        bb = [b[used] for b in chain_boxes(g)]
        self.chain = used
        self.code = codes
        self.min_zoom = min_zoom
        self.speed_kmh = np.round(speed).astype(np.int32)
        self.name = np.asarray(g.arc_name, dtype=np.int32)[arc]
        self.ref = np.asarray(g.arc_ref, dtype=np.int32)[arc]
        self.oneway = (ch.fwd_arc[used] < 0) | (ch.bwd_arc[used] < 0)
        self.small = small_chains(router)[used]
        self.minx, self.miny, self.maxx, self.maxy = bb
        self.start = starts
        self.count = gf[used + 1] - starts
        self._lon, self._lat = g.geom_lon, g.geom_lat  # shape points are projected per tile: no copy per point
        self._strings = router.roads

    def string(self, string_id: int) -> str:
        """A name or ref by its string id ("" for 0)."""
        return self._strings.name(int(string_id))

    def tile(self, z: int, x: int, y: int, extent: int = EXTENT, buffer: int = BUFFER) -> TileRoads:
        """The roads drawn at zoom `z` that cross tile z/x/y (plus `buffer` grid units around it); `InvalidValue` for
        a tile that does not exist."""
        check_tile(z, x, y)
        n = float(1 << z)
        pad = buffer / extent / n
        x0, x1 = x / n - pad, (x + 1) / n + pad
        y0, y1 = y / n - pad, (y + 1) / n + pad
        hit = (self.minx <= x1) & (self.maxx >= x0) & (self.miny <= y1) & (self.maxy >= y0) & (self.min_zoom <= z)
        idx = np.flatnonzero(hit)
        counts = self.count[idx]
        total = int(counts.sum())
        feat = np.repeat(np.arange(idx.shape[0], dtype=np.int64), counts)
        first_of = np.cumsum(counts) - counts
        pos = np.repeat(self.start[idx] - first_of, counts) + np.arange(total, dtype=np.int64)
        gx, gy = tile_grid(*mercator(self._lon[pos] / COORD_SCALE, self._lat[pos] / COORD_SCALE), z, x, y, extent)
        px = np.floor(gx + 0.5).astype(np.int64)
        py = np.floor(gy + 0.5).astype(np.int64)
        # drop points in the same grid cell as the point before them (a cell is half a pixel of a 256-pixel tile, a
        # pixel below zoom 14), keep every line's last point; a line within one cell is not drawn at this zoom
        cell = max(1, extent // (512 if z >= 14 else 256))
        cx, cy = px // cell, py // cell
        moved = np.zeros(total, dtype=bool)
        if total:
            moved[1:] = ((cx[1:] != cx[:-1]) | (cy[1:] != cy[:-1])) & (feat[1:] == feat[:-1])
        steps = np.bincount(feat, weights=moved, minlength=idx.shape[0]) if total else np.zeros(0)
        keep = moved.copy()
        if total:
            keep[np.cumsum(counts) - counts] = True  # first points
            keep[np.cumsum(counts) - 1] = True  # last points (chains have at least two)
        ok = steps > 0
        keep &= ok[feat]
        px, py, feat = px[keep], py[keep], feat[keep]
        if px.shape[0]:  # a kept last point on exactly the point before it adds nothing
            dup = np.zeros(px.shape[0], dtype=bool)
            dup[1:] = (px[1:] == px[:-1]) & (py[1:] == py[:-1]) & (feat[1:] == feat[:-1])
            px, py, feat = px[~dup], py[~dup], feat[~dup]
        kept = np.bincount(feat, minlength=idx.shape[0])
        idx, kept = idx[ok], kept[ok]
        first = np.zeros(idx.shape[0] + 1, dtype=np.int64)
        np.cumsum(kept, out=first[1:])
        return TileRoads(
            z=z,
            x=x,
            y=y,
            extent=extent,
            first=first,
            px=px.astype(np.int32),
            py=py.astype(np.int32),
            chain=self.chain[idx].astype(np.int64),
            road_class=self.code[idx],
            speed_kmh=self.speed_kmh[idx],
            name=self.name[idx],
            ref=self.ref[idx],
            oneway=self.oneway[idx],
            small=self.small[idx],
        )


def road_tiles(router: Router) -> RoadTiles:
    """The `RoadTiles` of a router's graph, built on first use (tens of milliseconds on a city) and kept as long as
    the router lives."""
    return derived(router, "road_tiles", lambda: RoadTiles(router))


# -- OSRM's debug tiles (`/tile/v1`, built by `app.engine.maps.debug_tiles`)
# ------------------------------------------------

OSRM_MIN_ZOOM, OSRM_MAX_ZOOM = 12, 19  # osrm-routed answers InvalidOptions outside (TileParameters::IsValid)
OSRM_TURNS_ZOOM = 15  # turns from this zoom on (tile.cpp's MIN_ZOOM_FOR_TURNS)
OSRM_CLIP = 128  # lines are clipped, points kept, within this many grid units around the tile (vector_tile::BUFFER)
# OSRM's internal turn type names (guidance's type codes index them; tile.cpp shows these, not the API's names)
TURN_TYPE_NAMES: tuple[str, ...] = (
    "(not set)", "new name", "continue", "turn", "merge", "on ramp", "off ramp", "fork", "end of road",
    "notification", "enter roundabout", "enter and exit roundabout", "enter rotary", "enter and exit rotary",
    "enter roundabout turn", "enter and exit roundabout turn", "use lane", "(noturn)", "(suppressed)", "roundabout",
    "exit roundabout", "rotary", "exit rotary", "roundabout turn", "exit roundabout turn", "(stay on roundabout)",
    "(sliproad)",
)  # fmt: skip
MODIFIER_NAMES: tuple[str, ...] = (
    "uturn", "sharp right", "right", "slight right", "straight", "slight left", "left", "sharp left",
)  # fmt: skip


@dataclass(frozen=True)
class DebugTile:
    """OSRM's debug tile z/x/y of the routing graph, layer by layer, on the tile grid (0..EXTENT, y down).

    `speeds`: one directed road segment (between consecutive shape points) each, from (`seg_x0`, `seg_y0`) to
    (`seg_x1`, `seg_y1`), clipped to `OSRM_CLIP` around the tile; its arc's speed (km/h) and rate (metres per second
    of weight, / 10, as OSRM), its share of the arc's weight and duration (s, split by length), whether it is on a
    small component (`seg_small`) and may start a route (`seg_startpoint`), its name (index into `names`).
    `turns` (from `OSRM_TURNS_ZOOM` on, else empty): one per turn the router may take at a junction inside the clip
    box: the bearing in, the turn angle (degrees, + right), its duration (`turn_cost_s`) and weight, guidance's
    type and modifier (indices into `TURN_TYPE_NAMES`, `MODIFIER_NAMES`).
    `osmnodes`: every shape point inside the clip box once, with its OSM node id (0 unknown).
    `internal-nodes`: the segregated edges (the short inner roads of dual carriageway junctions, as guidance finds
    them): feature i has lines `line_feature == i`, line j the points `line_first[j]:line_first[j + 1]`.
    """

    z: int
    x: int
    y: int
    seg_x0: np.ndarray  # int32 [s]
    seg_y0: np.ndarray
    seg_x1: np.ndarray
    seg_y1: np.ndarray
    seg_speed_kmh: np.ndarray  # int32 [s]
    seg_rate: np.ndarray  # float32 [s]
    seg_weight_s: np.ndarray  # float32 [s]
    seg_duration_s: np.ndarray  # float32 [s]
    seg_small: np.ndarray  # bool [s]
    seg_startpoint: np.ndarray  # bool [s]
    seg_name: np.ndarray  # int32 [s], index into `names`
    names: tuple[str, ...]
    turn_x: np.ndarray  # int32 [t]
    turn_y: np.ndarray
    turn_bearing_in: np.ndarray  # int32 [t], 0..359
    turn_angle: np.ndarray  # int32 [t], -180..180
    turn_cost_s: np.ndarray  # float32 [t]
    turn_weight_s: np.ndarray  # float32 [t]
    turn_type: np.ndarray  # uint8 [t], index into TURN_TYPE_NAMES
    turn_modifier: np.ndarray  # uint8 [t], index into MODIFIER_NAMES
    node_x: np.ndarray  # int32 [k]
    node_y: np.ndarray
    node_osm_id: np.ndarray  # int64 [k], 0 unknown
    line_feature: np.ndarray  # int64 [l], non-decreasing
    line_first: np.ndarray  # int64 [l + 1]
    line_x: np.ndarray  # int32
    line_y: np.ndarray
    num_line_features: int

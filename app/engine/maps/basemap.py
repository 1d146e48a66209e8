"""The map's background (water, land use, parks, buildings; `preprocessing.basemap`) cut into web-map tiles.

A tile is a vectorised scan of the polygon boxes (those drawn at this zoom that reach the tile plus a buffer), a
gather of their rings' points moved to the tile grid, with points in the same grid cell as the point before them
dropped; a ring left with fewer than three points is not drawn, nor are the holes of an outer ring that was not.
Polygons are not clipped to the tile: a large park comes whole into each tile it covers (city extracts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from app.engine.maps.tiles import BUFFER, EXTENT, check_tile

if TYPE_CHECKING:
    from floor.format.graph import Graph


@dataclass(frozen=True)
class TileAreas:
    """The background of one tile: polygons in drawing order of their kinds' codes, rings and points.

    Polygon i has rings `poly_ring[i]:poly_ring[i+1]` (its outer ring first), ring r has points
    `ring_first[r]:ring_first[r+1]` in `px`, `py` (tile grid, y down, may reach beyond the tile); `kind` codes index
    `kinds`."""

    kinds: tuple[str, ...]
    kind: np.ndarray  # uint8 [polygons]
    poly_ring: np.ndarray  # int64 [polygons + 1]
    ring_first: np.ndarray  # int64 [rings + 1]
    px: np.ndarray  # int64 [points]
    py: np.ndarray  # int64 [points]


def has_basemap(graph: Graph) -> bool:
    return bool(graph.manifest.get("basemap")) and graph.has("bg_kind")


def _ranges(first: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For items `idx` of a CSR index `first`: the counts and the concatenated member positions."""
    counts = (first[idx + 1] - first[idx]).astype(np.int64)
    total = int(counts.sum())
    starts = np.repeat(first[idx] - (np.cumsum(counts) - counts), counts)
    return counts, starts + np.arange(total, dtype=np.int64)


def tile_areas(graph: Graph, z: int, x: int, y: int, extent: int = EXTENT, buffer: int = BUFFER) -> TileAreas:
    """The background polygons drawn at zoom z that reach tile z/x/y; `InvalidValue` for a tile that does not exist."""
    check_tile(z, x, y)
    mf = graph.manifest["basemap"]
    grid = int(mf["grid"])
    size = grid / (1 << z)
    pad = buffer / extent * size
    x0, y0 = x * size, y * size
    box = np.asarray(graph.bg_bbox)
    hit = (
        (box[:, 0] <= x0 + size + pad)
        & (box[:, 2] >= x0 - pad)
        & (box[:, 1] <= y0 + size + pad)
        & (box[:, 3] >= y0 - pad)
        & (np.asarray(graph.bg_min_zoom) <= z)
    )
    polys = np.flatnonzero(hit)
    polys = polys[np.argsort(np.asarray(graph.bg_kind)[polys], kind="stable")]  # grouped by kind
    nrings, rings = _ranges(np.asarray(graph.bg_poly_ring), polys)
    npts, pts = _ranges(np.asarray(graph.bg_ring_first), rings)
    scale = extent / size
    px = np.floor((np.asarray(graph.bg_x)[pts] - x0) * scale + 0.5).astype(np.int64)
    py = np.floor((np.asarray(graph.bg_y)[pts] - y0) * scale + 0.5).astype(np.int64)
    ring_of = np.repeat(np.arange(rings.shape[0], dtype=np.int64), npts)
    cell = max(1, extent // (512 if z >= 14 else 256))
    cx, cy = px // cell, py // cell
    keep = np.ones(px.shape[0], dtype=bool)
    if px.shape[0]:
        keep[1:] = (cx[1:] != cx[:-1]) | (cy[1:] != cy[:-1]) | (ring_of[1:] != ring_of[:-1])
    kept = np.bincount(ring_of[keep], minlength=rings.shape[0])
    ring_ok = kept >= 3
    poly_of_ring = np.repeat(np.arange(polys.shape[0], dtype=np.int64), nrings)
    outer_first = np.cumsum(nrings) - nrings
    poly_ok = ring_ok[outer_first] if polys.shape[0] else np.zeros(0, dtype=bool)
    ring_ok &= poly_ok[poly_of_ring] if rings.shape[0] else ring_ok
    keep &= ring_ok[ring_of] if px.shape[0] else keep
    ring_first = np.zeros(int(ring_ok.sum()) + 1, dtype=np.int64)
    np.cumsum(kept[ring_ok], out=ring_first[1:])
    rings_per_poly = np.bincount(poly_of_ring[ring_ok], minlength=polys.shape[0])[poly_ok]
    poly_ring = np.zeros(rings_per_poly.shape[0] + 1, dtype=np.int64)
    np.cumsum(rings_per_poly, out=poly_ring[1:])
    return TileAreas(
        kinds=tuple(mf["kinds"]),
        kind=np.asarray(graph.bg_kind)[polys][poly_ok],
        poly_ring=poly_ring,
        ring_first=ring_first,
        px=px[keep],
        py=py[keep],
    )

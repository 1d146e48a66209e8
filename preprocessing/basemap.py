"""The map's light background, drawn from the same extract: water, land use, parks, woods, buildings.

An extra pass over the extract at preprocess (pyosmium's area assembly: closed ways and multipolygon relations
become polygons with holes), when asked or the extract is small enough (`wanted`: `--basemap/--no-basemap`, auto
up to `AUTO_MAX_BYTES`). Each area of a known kind (`kind_of`) becomes a polygon: its rings projected to Web
Mercator, quantized to a 2^30 world grid (about 4 cm), thinned (a point within `THIN_M` of the previous one kept
is dropped), outer rings clockwise and holes anticlockwise on the y-down grid (as Mapbox Vector Tiles want them).
Everything is flat numpy arrays with the `bg_` prefix, declared once in `ARRAYS`; the manifest gets a `basemap`
section (counts, kinds). `app.engine.maps.basemap` cuts them into tiles, `app.api.basemap` serves them as `/bgtile/`.

Without coastline processing the sea is not drawn (coastlines are lines, not areas); lakes, rivers mapped as areas,
reservoirs and pools are.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from floor.format.arrays import ARRAYS as FORMAT_ARRAYS

GRID = 1 << 30  # Web Mercator world -> int32 grid units
AUTO_MAX_BYTES = 64 << 20  # `--basemap` by default up to this extract size (a city, a small country)
THIN_M = 1.0  # drop a ring point closer than this to the previous kept one (metres at the equator, ~0.75 m at 40°)
MIN_AREA_PX16 = 4.0  # polygons smaller than this many square pixels at zoom 16 are dropped (4 px ≈ 23 m² at 40°)

# The arrays, in one place: (name, dtype, meaning). Polygon p has rings bg_poly_ring[p] .. bg_poly_ring[p+1]-1, the
# first its outer ring; ring r has points bg_ring_first[r] .. bg_ring_first[r+1]-1 (closed: the last is not the first
# repeated).
ARRAYS: tuple[tuple[str, str, str], ...] = tuple(  # this stage's arrays, as the format declares them
    (a.name, a.dtype, a.meaning) for a in FORMAT_ARRAYS if a.stage == "preprocessing.basemap"
)

KINDS: tuple[str, ...] = (
    "water", "wetland", "wood", "park", "grass", "farmland", "residential", "commercial", "industrial", "cemetery",
    "beach", "rail", "building",
)  # fmt: skip
_MIN_ZOOM = {"building": 15, "residential": 12, "commercial": 12, "industrial": 12, "rail": 13, "cemetery": 13}

_LANDUSE = {
    "reservoir": "water", "basin": "water", "forest": "wood", "grass": "grass", "meadow": "grass",
    "village_green": "grass", "recreation_ground": "park", "farmland": "farmland", "orchard": "farmland",
    "vineyard": "farmland", "allotments": "farmland", "residential": "residential", "commercial": "commercial",
    "retail": "commercial", "industrial": "industrial", "cemetery": "cemetery", "railway": "rail",
}  # fmt: skip
_NATURAL = {"water": "water", "wood": "wood", "wetland": "wetland", "beach": "beach", "sand": "beach",
            "grassland": "grass", "scrub": "grass", "heath": "grass"}  # fmt: skip
_LEISURE = {"park": "park", "garden": "park", "pitch": "grass", "golf_course": "grass", "swimming_pool": "water",
            "nature_reserve": "park", "playground": "park"}  # fmt: skip
KEYS = ("building", "landuse", "natural", "leisure", "waterway", "water", "amenity")


def kind_of(tags: Mapping[str, str]) -> str | None:
    """The background kind of an area's tags, None for areas not drawn."""
    b = tags.get("building")
    if b and b != "no":
        return "building"
    if tags.get("waterway") in ("riverbank", "dock") or tags.get("water"):
        return "water"
    for key, table in (("natural", _NATURAL), ("leisure", _LEISURE), ("landuse", _LANDUSE)):
        k = table.get(tags.get(key, ""))
        if k is not None:
            return k
    if tags.get("amenity") == "grave_yard":
        return "cemetery"
    return None


def wanted(src: Path, basemap: bool | None) -> bool:
    """`basemap` when given, else whether the extract is small enough to build it by default."""
    return bool(basemap) if basemap is not None else os.path.getsize(src) <= AUTO_MAX_BYTES


def _project(lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = (lon + 180.0) / 360.0
    s = np.sin(np.radians(np.clip(lat, -85.0511287798066, 85.0511287798066)))
    y = 0.5 - np.log((1.0 + s) / (1.0 - s)) / (4.0 * math.pi)
    return np.floor(x * GRID + 0.5).astype(np.int64), np.floor(y * GRID + 0.5).astype(np.int64)


_THIN = THIN_M / 40_075_016.7 * GRID  # grid units (at the equator)
_MIN_AREA = MIN_AREA_PX16 * (GRID / (256 * 2**16)) ** 2


def _ring(lon: list[float], lat: list[float], outer: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """One ring on the grid, thinned, closing point dropped, oriented; None when it collapses."""
    x, y = _project(np.asarray(lon, dtype=np.float64), np.asarray(lat, dtype=np.float64))
    if x.shape[0] >= 2 and x[0] == x[-1] and y[0] == y[-1]:
        x, y = x[:-1], y[:-1]
    if x.shape[0] < 3:
        return None
    keep = np.ones(x.shape[0], dtype=bool)
    step = np.hypot(np.diff(x), np.diff(y))
    if x.shape[0] > 8 and float(np.median(step)) < _THIN:  # dense ring: greedy thinning (a python loop, rare)
        last = 0
        for i in range(1, x.shape[0]):
            if math.hypot(float(x[i] - x[last]), float(y[i] - y[last])) < _THIN:
                keep[i] = False
            else:
                last = i
        x, y = x[keep], y[keep]
        if x.shape[0] < 3:
            return None
    area2 = float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))  # > 0: clockwise on a y-down grid
    if abs(area2) / 2 < _MIN_AREA and outer:
        return None
    if (area2 > 0) != outer:
        x, y = x[::-1], y[::-1]
    return x, y


def build_basemap(src: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read the extract's areas; the `bg_*` arrays and the manifest's `basemap` section."""
    import osmium

    kinds: list[int] = []
    poly_ring: list[int] = [0]
    ring_first: list[int] = [0]
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    bbox: list[tuple[int, int, int, int]] = []
    npts = 0
    fp = osmium.FileProcessor(str(src)).with_areas(osmium.filter.KeyFilter(*KEYS))
    fp = fp.with_filter(osmium.filter.EntityFilter(osmium.osm.AREA))
    for area in fp:
        kind = kind_of({t.k: t.v for t in area.tags})
        if kind is None:
            continue
        for outer in area.outer_rings():  # type: ignore[union-attr]
            rings = []
            r = _ring([n.lon for n in outer], [n.lat for n in outer], True)
            if r is None:
                continue
            rings.append(r)
            for inner in area.inner_rings(outer):  # type: ignore[union-attr]
                h = _ring([n.lon for n in inner], [n.lat for n in inner], False)
                if h is not None:
                    rings.append(h)
            for x, y in rings:
                xs.append(x)
                ys.append(y)
                npts += x.shape[0]
                ring_first.append(npts)
            poly_ring.append(len(ring_first) - 1)
            kinds.append(KINDS.index(kind))
            ox, oy = rings[0]
            bbox.append((int(ox.min()), int(oy.min()), int(ox.max()), int(oy.max())))
    kind_arr = np.asarray(kinds, dtype=np.uint8)
    box = np.asarray(bbox, dtype=np.int64).reshape(-1, 4)
    # small areas from a later zoom: drawn once they span about 2 pixels
    span = np.maximum(box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]).astype(np.float64) if len(box) else np.zeros(0)
    by_size = np.clip(np.ceil(np.log2(np.maximum(2.0 * GRID / 256 / np.maximum(span, 1.0), 1.0))), 0, 18)
    base = np.array([_MIN_ZOOM.get(k, 0) for k in KINDS], dtype=np.int64)[kind_arr] if len(kinds) else np.zeros(0)
    arrays = {
        "bg_kind": kind_arr,
        "bg_min_zoom": np.maximum(base, by_size).astype(np.int8),
        "bg_bbox": box.astype(np.int32),
        "bg_poly_ring": np.asarray(poly_ring, dtype=np.int64),
        "bg_ring_first": np.asarray(ring_first, dtype=np.int64),
        "bg_x": (np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)).astype(np.int32),
        "bg_y": (np.concatenate(ys) if ys else np.zeros(0, dtype=np.int64)).astype(np.int32),
    }
    for name, dtype, _ in ARRAYS:
        assert str(arrays[name].dtype) == dtype, name
    counts = np.bincount(kind_arr, minlength=len(KINDS))
    meta = {
        "kinds": list(KINDS),
        "grid": GRID,
        "polygons": int(kind_arr.shape[0]),
        "rings": len(ring_first) - 1,
        "points": npts,
        "by_kind": {k: int(c) for k, c in zip(KINDS, counts, strict=True) if c},
    }
    return arrays, meta

"""Isochrone contours: the part of a road network reached within a limit, as GeoJSON polygons with holes.

What. `contour_polygons(lon0, lat0, lon1, lat1, buffer_m)` takes the reached road pieces (one row per straight
segment piece, in degrees; the caller has already cut partly reached segments where the limit is hit) and returns
`(geometry, tolerance_m)`: a GeoJSON `MultiPolygon` (RFC 7946: `[lon, lat]`, outer rings counter-clockwise, holes
clockwise, every ring closed, coordinates rounded to 6 decimals) and the tolerance it guarantees, in metres:

- every point within `buffer_m - tolerance_m` of some piece is inside the geometry;
- every point farther than `buffer_m + tolerance_m` from every piece is outside it

(inside = the even-odd rule over all rings, `point_in_geometry`). Areas ringed by reached streets whose interior is
farther than `buffer_m` from every piece (a city block, a lake inside a ring road) come out as holes.

Distance. A piece is the straight segment between its endpoints in lon/lat, which is how GeoJSON draws it. The
distance from a point to a piece is measured in metres in the tangent plane at the point's latitude (x = R cos(lat)
dlon, y = R dlat, R = `EARTH_RADIUS_M`); for the tens to hundreds of metres that matter here it equals the
great-circle distance to within (d^2 / R) tan|lat|, a few millimetres, which the tolerance includes.

Method (why a grid). The region within `buffer_m` of a set of segments is a union of stadiums; an exact vector
union of tens of thousands of them (arcs, then polygon clipping) is slow and fragile, while a raster with a proven
error bound is fast, robust and simple. So:

1. Grid. A regular lattice affine in lon/lat (an equirectangular frame, so straight pieces stay straight), with
   `cell_m` metres between rows (default `buffer_m / 2`, at least `MIN_CELL_M`) and `cell_m` metres between
   columns at the latitude of the extent nearest the equator, so no cell is wider than `cell_m` anywhere. The
   extent is the pieces' bounding box plus the buffer and two empty cells on each side. More than `MAX_CELLS`
   cells, a longitude span of 180 degrees or more (the antimeridian is not handled) or a latitude span over which
   cells shrink below half their width (near a pole) raise `ValueError` before anything is allocated.
2. Mark (numba kernel, cost proportional to the pieces, not the grid). For each piece and each lattice row within
   `buffer_m` of it, only the columns near the part of the piece within `buffer_m` of that row are visited; a
   lattice point is marked when its exact point-to-segment distance, in metres in the plane of its own row's
   latitude, is at most `buffer_m`.
3. Boundary. Marching squares over the lattice, with vertices at the midpoints between a marked and an unmarked
   lattice point and the marked side on the left, so outer rings come out counter-clockwise and holes clockwise.
   At a saddle (two diagonal marked points) the marked points are joined, matching the 8-connected component
   labelling of marked points. Rings never touch themselves or each other: every vertex lies on exactly one
   marked/unmarked lattice edge and a square holds at most two segments, sqrt(2)/2 cell apart, so they are simple
   and disjoint. Vertices whose incoming and outgoing directions are equal
   (marching squares produces 8 directions only, compared exactly in integer half-cell coordinates) are dropped;
   that removes only straight-through points, so the rings stay exactly the same point sets.
4. Rings to polygons. Each ring separates one 8-connected component of marked points (the one on its left) from
   the unmarked rest; a component has exactly one counter-clockwise ring, its outer boundary, and its clockwise
   rings are its holes. Signed areas are exact integer sums, so the classification needs no floating-point
   point-in-polygon tests. Polygons come in row-major order of their components.

Tolerance (returned), the sum of:

- the grid: a point inside the marching-squares polygon lies within a cell_m * sqrt(10) / 4 (0.79 cell) of a
  marked lattice point, and a point outside it within as much of an unmarked one (the worst case is a corner cut
  off by a single marked point); distances to the pieces are 1-Lipschitz, so the classification is right for every
  point farther than that from the `buffer_m` level;
- the rounding to 6 decimals: each vertex moves by at most 0.5e-6 degree in lon and lat (0.08 m), and a point
  changes side only if the boundary passes over it;
- the tangent-plane metric: (buffer_m + 2 cell_m)^2 (1 + tan|lat|max) / R.

With the default cell (buffer_m / 2) that is about 0.4 buffer_m, under one cell; pass a smaller `cell_m` for a
finer contour (the cost of the grid scans grows as 1 / cell_m^2). Holes are kept whatever their size: even a
single unmarked lattice point is a point farther than `buffer_m` from every piece. Rounding cannot make rings
touch or cross: non-adjacent edges of the contour are at least sqrt(2)/2 of the narrowest cell apart (cells are at
least `MIN_CELL_M` x `MIN_COS_RATIO` = 0.5 m wide, so 0.35 m), while vertices move by at most 0.08 m.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from floor.format.units import EARTH_RADIUS_M
from floor.kernels.jit import I64, U8, arr, kernel

MAX_CELLS = 4_000_000  # lattice points; at most about 50 MB of working arrays (marks, labels, fill stack, visits)
MIN_CELL_M = 1.0  # finer cells would let the 6-decimal rounding (0.08 m) bring rings close to crossing
MIN_COS_RATIO = 0.5  # cells may narrow to half their width across the extent's latitudes, no more
DECIMALS = 6  # coordinates in the output, as in OSRM's polyline6 (0.11 m)

_M_PER_DEG = EARTH_RADIUS_M * math.pi / 180.0  # metres per degree of latitude
_EMPTY_EPS = 1e-7  # cells of slack in the candidate ranges of the marking kernel (the exact test decides)


@kernel
def _mark(gx0, gy0, gx1, gy1, wx, wy, buffer_m, grid):  # pragma: no cover - numba
    """Set grid[j, i] = 1 where lattice point (i, j) is within buffer_m of a piece (grid units in, metres inside).

    Pieces run from (gx0, gy0) to (gx1, gy1) in lattice units; row j's points are wx[j] metres apart, rows wy.
    """
    ny, nx = grid.shape
    b2 = buffer_m * buffer_m
    rb_y = buffer_m / wy + _EMPTY_EPS
    for k in range(gx0.shape[0]):
        x0 = gx0[k]
        y0 = gy0[k]
        x1 = gx1[k]
        y1 = gy1[k]
        dxg = x1 - x0
        dyg = y1 - y0
        jlo = max(0, int(math.ceil(min(y0, y1) - rb_y)))
        jhi = min(ny - 1, int(math.floor(max(y0, y1) + rb_y)))
        for j in range(jlo, jhi + 1):
            # the part of the piece within buffer_m of row j vertically: parameters ta..tb
            ta = 0.0
            tb = 1.0
            if dyg != 0.0:
                ta = (j - rb_y - y0) / dyg
                tb = (j + rb_y - y0) / dyg
                if ta > tb:
                    ta, tb = tb, ta
                if ta < 0.0:
                    ta = 0.0
                if tb > 1.0:
                    tb = 1.0
                if ta > tb:
                    continue
            xa = x0 + ta * dxg
            xb = x0 + tb * dxg
            w = wx[j]
            rb_x = buffer_m / w + _EMPTY_EPS
            ilo = max(0, int(math.ceil(min(xa, xb) - rb_x)))
            ihi = min(nx - 1, int(math.floor(max(xa, xb) + rb_x)))
            ay = (y0 - j) * wy
            ey = dyg * wy
            ex = dxg * w
            ee = ex * ex + ey * ey
            for i in range(ilo, ihi + 1):
                if grid[j, i] != 0:
                    continue
                ax = (x0 - i) * w
                t = 0.0
                if ee > 0.0:
                    t = -(ax * ex + ay * ey) / ee
                    if t < 0.0:
                        t = 0.0
                    elif t > 1.0:
                        t = 1.0
                qx = ax + t * ex
                qy = ay + t * ey
                if qx * qx + qy * qy <= b2:
                    grid[j, i] = 1


@kernel
def _label(grid, labels):  # pragma: no cover - numba
    """8-connected components of the marked lattice points, numbered 1.. in row-major order; returns their count."""
    ny, nx = grid.shape
    marked = 0
    for j in range(ny):
        for i in range(nx):
            if grid[j, i] != 0:
                marked += 1
    stack = np.empty(max(marked, 1), dtype=np.int32)  # lattice indices j * nx + i < MAX_CELLS
    n = 0
    for j in range(ny):
        for i in range(nx):
            if grid[j, i] == 0 or labels[j, i] != 0:
                continue
            n += 1
            labels[j, i] = n
            stack[0] = j * nx + i
            top = 1
            while top > 0:
                top -= 1
                c = stack[top]
                cj = c // nx
                ci = c - cj * nx
                for jj in range(max(cj - 1, 0), min(cj + 2, ny)):
                    for ii in range(max(ci - 1, 0), min(ci + 2, nx)):
                        if grid[jj, ii] != 0 and labels[jj, ii] == 0:
                            labels[jj, ii] = n
                            stack[top] = jj * nx + ii
                            top += 1
    return n


@kernel(I64(arr(U8, 2), I64, I64, I64))
def _exit_side(grid, i, j, s):  # pragma: no cover - numba
    """Marching squares: the side a contour entering square (i, j) through side s leaves by (marked on the left).

    Corners counter-clockwise a=(i, j), b=(i+1, j), c=(i+1, j+1), d=(i, j+1); side k runs from corner k to k+1.
    A contour enters through sides marked -> unmarked and leaves through sides unmarked -> marked; at a saddle the
    marked corners are joined (exit = the next side counter-clockwise).
    """
    va = grid[j, i]
    vb = grid[j, i + 1]
    vc = grid[j + 1, i + 1]
    vd = grid[j + 1, i]
    if va == vc and vb == vd and va != vb:
        return (s + 1) % 4
    if va == 0 and vb != 0:
        return 0
    if vb == 0 and vc != 0:
        return 1
    if vc == 0 and vd != 0:
        return 2
    return 3


@kernel
def _trace(grid, labels):  # pragma: no cover - numba
    """All contour rings of the marked lattice points, straight-through vertices dropped.

    Returns (vx, vy, ring_off, ring_label, ring_area2, n_rings): vertices in doubled lattice units (lattice point
    (i, j) is (2i, 2j)), ring r = vertices ring_off[r]:ring_off[r+1] (not repeated at the end), its component label
    (of the marked points on its left) and twice its signed area in doubled units (> 0: counter-clockwise).
    """
    ny, nx = grid.shape
    total = 0  # every marked/unmarked lattice edge carries exactly one contour vertex
    for j in range(ny):
        for i in range(nx - 1):
            if (grid[j, i] != 0) != (grid[j, i + 1] != 0):
                total += 1
    for j in range(ny - 1):
        for i in range(nx):
            if (grid[j, i] != 0) != (grid[j + 1, i] != 0):
                total += 1
    hvis = np.zeros((ny, nx), dtype=np.uint8)  # lattice edge (i, j)-(i+1, j) visited
    vvis = np.zeros((ny, nx), dtype=np.uint8)  # lattice edge (i, j)-(i, j+1) visited
    tx = np.empty(max(total, 1), dtype=np.int64)
    ty = np.empty(max(total, 1), dtype=np.int64)
    vx = np.empty(max(total, 1), dtype=np.int64)
    vy = np.empty(max(total, 1), dtype=np.int64)
    ring_off = np.zeros(total // 4 + 2, dtype=np.int64)  # a ring has at least 4 vertices
    ring_label = np.zeros(total // 4 + 1, dtype=np.int64)
    ring_area2 = np.zeros(total // 4 + 1, dtype=np.int64)
    nr = 0
    nv = 0
    for j0 in range(ny):
        for i0 in range(nx - 1):
            if (grid[j0, i0] != 0) == (grid[j0, i0 + 1] != 0) or hvis[j0, i0] != 0:
                continue
            # every ring crosses some horizontal lattice edge: start at the first one in row-major order
            if grid[j0, i0] != 0:
                ci, cj, s = i0, j0, 0
                lab = labels[j0, i0]
            else:
                ci, cj, s = i0, j0 - 1, 2
                lab = labels[j0, i0 + 1]
            m = 0
            while True:
                if s == 0:
                    tx[m] = 2 * ci + 1
                    ty[m] = 2 * cj
                    hvis[cj, ci] = 1
                elif s == 1:
                    tx[m] = 2 * ci + 2
                    ty[m] = 2 * cj + 1
                    vvis[cj, ci + 1] = 1
                elif s == 2:
                    tx[m] = 2 * ci + 1
                    ty[m] = 2 * cj + 2
                    hvis[cj + 1, ci] = 1
                else:
                    tx[m] = 2 * ci
                    ty[m] = 2 * cj + 1
                    vvis[cj, ci] = 1
                m += 1
                e = _exit_side(grid, ci, cj, s)
                if e == 0:
                    cj -= 1
                    s = 2
                    done = hvis[cj + 1, ci] != 0
                elif e == 1:
                    ci += 1
                    s = 3
                    done = vvis[cj, ci] != 0
                elif e == 2:
                    cj += 1
                    s = 0
                    done = hvis[cj, ci] != 0
                else:
                    ci -= 1
                    s = 1
                    done = vvis[cj, ci + 1] != 0
                if done:  # only the start edge can be visited already: each edge belongs to one ring
                    break
            start = nv
            for k in range(m):
                kp = k - 1 if k > 0 else m - 1
                kn = k + 1 if k < m - 1 else 0
                din_x = np.sign(tx[k] - tx[kp])
                din_y = np.sign(ty[k] - ty[kp])
                dout_x = np.sign(tx[kn] - tx[k])
                dout_y = np.sign(ty[kn] - ty[k])
                if din_x != dout_x or din_y != dout_y:
                    vx[nv] = tx[k]
                    vy[nv] = ty[k]
                    nv += 1
            area2 = 0
            for k in range(start, nv):
                kn = k + 1 if k < nv - 1 else start
                area2 += vx[k] * vy[kn] - vx[kn] * vy[k]
            ring_label[nr] = lab
            ring_area2[nr] = area2
            nr += 1
            ring_off[nr] = nv
    return vx, vy, ring_off, ring_label, ring_area2, nr


@kernel
def _even_odd(px, py, rx, ry, ring_off, bbox, out):  # pragma: no cover - numba
    """out[p] = point p lies inside an odd number of rings (edges k -> k+1 of each ring, and last -> first)."""
    for p in range(px.shape[0]):
        x = px[p]
        y = py[p]
        inside = False
        for r in range(ring_off.shape[0] - 1):
            if x < bbox[r, 0] or y < bbox[r, 1] or x > bbox[r, 2] or y > bbox[r, 3]:
                continue
            lo = ring_off[r]
            hi = ring_off[r + 1]
            for k in range(lo, hi):
                kn = k + 1 if k < hi - 1 else lo
                y1 = ry[k]
                y2 = ry[kn]
                if (y1 > y) != (y2 > y):
                    xc = rx[k] + (y - y1) * (rx[kn] - rx[k]) / (y2 - y1)
                    if x < xc:
                        inside = not inside
        out[p] = inside


def _pieces(lon0: npt.ArrayLike, lat0: npt.ArrayLike, lon1: npt.ArrayLike, lat1: npt.ArrayLike) -> list[np.ndarray]:
    arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in (lon0, lat0, lon1, lat1)]
    if any(a.ndim != 1 for a in arrays) or len({a.shape[0] for a in arrays}) != 1:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(f"lon0, lat0, lon1, lat1 must be 1-D arrays of one length, got shapes {shapes}")
    for name, a in zip(("lon0", "lat0", "lon1", "lat1"), arrays, strict=True):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} holds a value that is not finite")
    for name, a in (("lat0", arrays[1]), ("lat1", arrays[3])):
        if a.size and np.abs(a).max() > 90.0:
            raise ValueError(f"{name} holds a latitude outside -90..90")
    return arrays


def _tolerance_m(cell_m: float, buffer_m: float, cos_ref: float, abs_lat_max_deg: float) -> float:
    """The guarantee (see the module docstring): grid + 6-decimal rounding + tangent-plane metric terms."""
    grid_m = cell_m * math.sqrt(10.0) / 4.0
    round_m = 0.5 * 10.0**-DECIMALS * _M_PER_DEG * math.sqrt(1.0 + cos_ref * cos_ref)
    d = buffer_m + 2.0 * cell_m
    metric_m = d * d * (1.0 + math.tan(math.radians(min(abs_lat_max_deg, 89.9)))) / EARTH_RADIUS_M
    return grid_m + round_m + metric_m


@dataclass(frozen=True)
class _Frame:
    """The lattice: `dlon` x `dlat` degrees per cell, `pad_x` / `pad_y` empty cells beyond the pieces' box."""

    dlon: float
    dlat: float
    pad_x: int
    pad_y: int
    nx: int
    ny: int
    cos_ref: float  # cos of the extent's latitude nearest the equator: there a column step is exactly cell_m
    abs_lat_max: float  # the extent's largest |latitude|, degrees

    @property
    def cells(self) -> int:
        return self.nx * self.ny


def _frame(lon_min: float, lon_max: float, lat_min: float, lat_max: float, buffer_m: float, cell_m: float) -> _Frame:
    """Rows cell_m metres apart; columns cell_m metres apart where the extent is nearest the equator (narrower
    elsewhere, never below MIN_COS_RATIO of it); buffer_m plus two cells of empty margin on every side."""
    dlat = cell_m / _M_PER_DEG
    pad_y = int(math.ceil(buffer_m / cell_m)) + 2
    lat_lo = lat_min - pad_y * dlat
    lat_hi = lat_max + pad_y * dlat
    lat_ref = 0.0 if lat_lo <= 0.0 <= lat_hi else min(abs(lat_lo), abs(lat_hi))
    abs_lat_max = max(abs(lat_lo), abs(lat_hi))
    cos_ref = math.cos(math.radians(lat_ref))
    cos_ratio = math.cos(math.radians(min(abs_lat_max, 90.0))) / cos_ref
    if cos_ratio < MIN_COS_RATIO:
        raise ValueError(
            f"the pieces reach latitudes {lat_min:.4f}..{lat_max:.4f}: grid cells would narrow to {cos_ratio:.2f} "
            f"of their width across them (at least {MIN_COS_RATIO} is needed); contour smaller areas or away from "
            "the poles"
        )
    dlon = cell_m / (_M_PER_DEG * cos_ref)
    pad_x = int(math.ceil(buffer_m / (cell_m * cos_ratio))) + 2
    nx = int(math.ceil((lon_max - lon_min) / dlon)) + 2 * pad_x + 1
    ny = int(math.ceil((lat_max - lat_min) / dlat)) + 2 * pad_y + 1
    return _Frame(dlon, dlat, pad_x, pad_y, nx, ny, cos_ref, abs_lat_max)


def contour_polygons(
    lon0: npt.ArrayLike,
    lat0: npt.ArrayLike,
    lon1: npt.ArrayLike,
    lat1: npt.ArrayLike,
    buffer_m: float,
    cell_m: float | None = None,
) -> tuple[dict[str, Any], float]:
    """The area within `buffer_m` metres of the pieces (lon0, lat0) -> (lon1, lat1) as a GeoJSON MultiPolygon.

    Returns `(geometry, tolerance_m)`: points within `buffer_m - tolerance_m` of a piece are inside, points farther
    than `buffer_m + tolerance_m` from every piece outside (even-odd rule). `cell_m` is the grid step in metres,
    default `max(buffer_m / 2, MIN_CELL_M)`. No pieces give an empty MultiPolygon, exact (tolerance 0).
    Raises ValueError for bad input, for `cell_m < MIN_CELL_M`, and when the extent needs more than `MAX_CELLS`
    grid points (the message says which `cell_m` would fit), spans 180 degrees of longitude or more, or comes so
    near a pole that cells would narrow below half their width.
    """
    x0, y0, x1, y1 = _pieces(lon0, lat0, lon1, lat1)
    buffer_m = float(buffer_m)
    if not (math.isfinite(buffer_m) and buffer_m > 0.0):
        raise ValueError(f"buffer_m must be a positive number of metres, got {buffer_m}")
    if cell_m is None:
        cell_m = max(buffer_m / 2.0, MIN_CELL_M)
    cell_m = float(cell_m)
    if not (math.isfinite(cell_m) and cell_m >= MIN_CELL_M):
        raise ValueError(f"cell_m must be at least {MIN_CELL_M} m (6-decimal output coordinates), got {cell_m}")
    if x0.size == 0:
        return {"type": "MultiPolygon", "coordinates": []}, 0.0

    lon_min = float(min(x0.min(), x1.min()))
    lon_max = float(max(x0.max(), x1.max()))
    lat_min = float(min(y0.min(), y1.min()))
    lat_max = float(max(y0.max(), y1.max()))
    if lon_max - lon_min >= 180.0:
        raise ValueError(
            f"the pieces span {lon_max - lon_min:.1f} degrees of longitude; contours need less than 180 "
            "(pieces across the antimeridian are not supported)"
        )

    frame = _frame(lon_min, lon_max, lat_min, lat_max, buffer_m, cell_m)
    nx, ny = frame.nx, frame.ny
    if nx * ny > MAX_CELLS:
        fit_m = cell_m * math.sqrt(nx * ny / MAX_CELLS)
        while _frame(lon_min, lon_max, lat_min, lat_max, buffer_m, fit_m).cells > MAX_CELLS:
            fit_m *= 1.01
        fit_m = math.ceil(fit_m * 10.0) / 10.0
        raise ValueError(
            f"the reached area ({(lon_max - lon_min) * _M_PER_DEG * frame.cos_ref / 1000:.1f} km x "
            f"{(lat_max - lat_min) * _M_PER_DEG / 1000:.1f} km) needs a {nx} x {ny} grid = {nx * ny:,} cells at "
            f"cell_m={cell_m:g} m, more than the limit of {MAX_CELLS:,} cells; pass a larger cell_m "
            f"({fit_m:g} m would fit) or contour a smaller area"
        )
    dlon, dlat, cos_ref = frame.dlon, frame.dlat, frame.cos_ref
    lon_o = lon_min - frame.pad_x * dlon
    lat_o = lat_min - frame.pad_y * dlat
    row_lat = np.radians(lat_o + np.arange(ny, dtype=np.float64) * dlat)
    wx = cell_m * np.cos(row_lat) / cos_ref  # metres between the lattice points of each row

    grid = np.zeros((ny, nx), dtype=np.uint8)
    gx0, gy0, gx1, gy1 = (x0 - lon_o) / dlon, (y0 - lat_o) / dlat, (x1 - lon_o) / dlon, (y1 - lat_o) / dlat
    _mark(gx0, gy0, gx1, gy1, wx, cell_m, buffer_m, grid)
    if grid[0].any() or grid[-1].any() or grid[:, 0].any() or grid[:, -1].any():  # the padding keeps them empty
        raise RuntimeError("contour grid: a border lattice point was marked (padding too small)")
    labels = np.zeros((ny, nx), dtype=np.int32)
    _label(grid, labels)
    vx, vy, ring_off, ring_label, ring_area2, n_rings = _trace(grid, labels)

    lon = np.round(lon_o + vx * (dlon / 2.0), DECIMALS)
    lat = np.round(lat_o + vy * (dlat / 2.0), DECIMALS)
    polygons: dict[int, list[list[list[list[float]]]]] = {}
    holes: dict[int, list[list[list[float]]]] = {}
    for r in range(n_rings):
        a, b = int(ring_off[r]), int(ring_off[r + 1])
        ring = np.column_stack((np.append(lon[a:b], lon[a]), np.append(lat[a:b], lat[a]))).tolist()
        lab = int(ring_label[r])
        if ring_area2[r] > 0:
            if lab in polygons:
                raise RuntimeError(f"contour component {lab} has two outer rings")
            polygons[lab] = [ring]
        else:
            holes.setdefault(lab, []).append(ring)
    if set(holes) - set(polygons):
        raise RuntimeError("contour: a hole without its outer ring")
    coordinates = []
    for lab in sorted(polygons):
        coordinates.append(polygons[lab] + holes.get(lab, []))
    tolerance_m = _tolerance_m(cell_m, buffer_m, cos_ref, frame.abs_lat_max)
    return {"type": "MultiPolygon", "coordinates": coordinates}, tolerance_m


def _rings(geometry: dict[str, Any]) -> list[Any]:
    kind = geometry.get("type")
    if kind == "MultiPolygon":
        return [ring for polygon in geometry["coordinates"] for ring in polygon]
    if kind == "Polygon":
        return list(geometry["coordinates"])
    raise ValueError(f"expected a Polygon or MultiPolygon geometry, got {kind!r}")


def points_in_geometry(lon: npt.ArrayLike, lat: npt.ArrayLike, geometry: dict[str, Any]) -> np.ndarray:
    """For each point, whether it lies inside a Polygon / MultiPolygon by the even-odd rule over all its rings."""
    px = np.ascontiguousarray(lon, dtype=np.float64).ravel()
    py = np.ascontiguousarray(lat, dtype=np.float64).ravel()
    if px.shape != py.shape:
        raise ValueError(f"lon and lat differ in length: {px.shape[0]} and {py.shape[0]}")
    rings = [np.asarray(r, dtype=np.float64).reshape(-1, 2) for r in _rings(geometry)]
    rings = [r for r in rings if r.shape[0] >= 2]
    out = np.zeros(px.shape[0], dtype=np.bool_)
    if not rings:
        return out
    pts = np.ascontiguousarray(np.concatenate(rings))
    ring_off = np.zeros(len(rings) + 1, dtype=np.int64)
    ring_off[1:] = np.cumsum([r.shape[0] for r in rings])
    bbox = np.array([[*r.min(axis=0), *r.max(axis=0)] for r in rings], dtype=np.float64)
    _even_odd(px, py, np.ascontiguousarray(pts[:, 0]), np.ascontiguousarray(pts[:, 1]), ring_off, bbox, out)
    return out


def point_in_geometry(lon: float, lat: float, geometry: dict[str, Any]) -> bool:
    """Whether (lon, lat) lies inside a Polygon / MultiPolygon by the even-odd rule over all its rings."""
    return bool(points_in_geometry(np.array([lon]), np.array([lat]), geometry)[0])

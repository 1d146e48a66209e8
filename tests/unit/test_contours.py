"""Isochrone contours (app.engine.features.contours): buffered road pieces as GeoJSON polygons with holes.

Every geometry is checked against an independent distance oracle (point-to-segment distance in the tangent plane at
each test point's own latitude) with the tolerance the function states, and for validity: rings closed, outer rings
counter-clockwise, holes clockwise, no two edges meeting except neighbours at their shared vertex (exact integer
arithmetic on the 6-decimal coordinates), holes inside their outer ring, polygons not inside one another.
Shapes are drawn in local metres (x east, y north of an origin) and converted to degrees at real latitudes.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from app.engine.features.contours import MAX_CELLS, contour_polygons, point_in_geometry, points_in_geometry

M_PER_DEG = 6_371_008.8 * math.pi / 180.0
PORTO = (-8.61, 41.15)


def to_lonlat(x_m: np.ndarray, y_m: np.ndarray, origin: tuple[float, float] = PORTO) -> tuple[np.ndarray, np.ndarray]:
    """Local metres around `origin` -> degrees."""
    lon0, lat0 = origin
    lat = lat0 + np.asarray(y_m, dtype=np.float64) / M_PER_DEG
    lon = lon0 + np.asarray(x_m, dtype=np.float64) / (M_PER_DEG * math.cos(math.radians(lat0)))
    return lon, lat


def pieces_lonlat(xy: np.ndarray, origin: tuple[float, float] = PORTO) -> tuple[np.ndarray, ...]:
    """Rows (x0, y0, x1, y1) in metres -> lon0, lat0, lon1, lat1."""
    xy = np.asarray(xy, dtype=np.float64).reshape(-1, 4)
    lon0, lat0 = to_lonlat(xy[:, 0], xy[:, 1], origin)
    lon1, lat1 = to_lonlat(xy[:, 2], xy[:, 3], origin)
    return lon0, lat0, lon1, lat1


def polyline(points: list[tuple[float, float]]) -> np.ndarray:
    """Consecutive points -> pieces (x0, y0, x1, y1)."""
    p = np.asarray(points, dtype=np.float64)
    return np.hstack([p[:-1], p[1:]])


def distances_m(plon: np.ndarray, plat: np.ndarray, pieces: tuple[np.ndarray, ...]) -> np.ndarray:
    """Oracle: metres from each point to its nearest piece, in the tangent plane at the point's latitude."""
    lon0, lat0, lon1, lat1 = pieces
    out = np.empty(plon.shape[0])
    for s in range(0, plon.shape[0], 2048):
        px = plon[s : s + 2048, None]
        py = plat[s : s + 2048, None]
        kx = M_PER_DEG * np.cos(np.radians(py))
        ax, ay = (lon0[None] - px) * kx, (lat0[None] - py) * M_PER_DEG
        ex, ey = (lon1[None] - px) * kx - ax, (lat1[None] - py) * M_PER_DEG - ay
        ee = ex * ex + ey * ey
        t = np.where(ee > 0, np.clip(-(ax * ex + ay * ey) / np.where(ee > 0, ee, 1.0), 0.0, 1.0), 0.0)
        out[s : s + 2048] = np.hypot(ax + t * ex, ay + t * ey).min(axis=1)
    return out


def assert_classifies(geometry: dict, tol: float, pieces: tuple, buffer_m: float, plon, plat, what: str) -> None:
    """Points within buffer - tol of a piece are inside, points beyond buffer + tol outside."""
    d = distances_m(plon, plat, pieces)
    inside = points_in_geometry(plon, plat, geometry)
    missed = np.flatnonzero((d <= buffer_m - tol) & ~inside)
    extra = np.flatnonzero((d > buffer_m + tol) & inside)
    for bad, kind in ((missed, "outside the geometry but within buffer - tol"), (extra, "inside but beyond + tol")):
        if bad.size:
            k = bad[0]
            raise AssertionError(
                f"{what}: {bad.size} points {kind} (buffer {buffer_m} m, tol {tol:.3f} m), e.g. "
                f"({plon[k]:.7f}, {plat[k]:.7f}) at {d[k]:.3f} m"
            )


def ring_arrays(geometry: dict) -> list[list[np.ndarray]]:
    """Polygons as lists of rings, each an int64 array of micro-degrees (exact for 6-decimal coordinates)."""
    return [
        [np.rint(np.asarray(r, dtype=np.float64) * 1e6).astype(np.int64) for r in poly]
        for poly in geometry["coordinates"]
    ]


def signed_area2(ring: np.ndarray) -> int:
    """Twice the signed area of a closed ring (exact integers; > 0 counter-clockwise)."""
    r = ring - ring.min(axis=0)
    return int(np.sum(r[:-1, 0] * r[1:, 1] - r[1:, 0] * r[:-1, 1]))


def _orient(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.sign(
        (b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0])
    )


def _on_segment(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """p within the bounding box of a-b (with orientation 0: on the segment)."""
    lo = np.minimum(a, b)
    hi = np.maximum(a, b)
    return np.all((lo <= p) & (p <= hi), axis=-1)


def segments_meet(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Whether closed segments a-b and c-d share any point (exact, integer coordinates)."""
    o1, o2, o3, o4 = _orient(a, b, c), _orient(a, b, d), _orient(c, d, a), _orient(c, d, b)
    meet = (o1 * o2 < 0) & (o3 * o4 < 0)
    meet |= (o1 == 0) & _on_segment(a, b, c)
    meet |= (o2 == 0) & _on_segment(a, b, d)
    meet |= (o3 == 0) & _on_segment(c, d, a)
    meet |= (o4 == 0) & _on_segment(c, d, b)
    return meet


def assert_valid(geometry: dict) -> None:
    """Closed rings, outer CCW / holes CW, no edges meeting but ring neighbours, holes inside, polygons apart."""
    assert geometry["type"] == "MultiPolygon"
    polys = ring_arrays(geometry)
    starts, ends, ring_id, index, ring_len = [], [], [], [], []
    for p, poly in enumerate(polys):
        assert poly, f"polygon {p} has no rings"
        for h, ring in enumerate(poly):
            assert ring.shape[0] >= 4, f"polygon {p} ring {h} has {ring.shape[0]} points"
            assert np.array_equal(ring[0], ring[-1]), f"polygon {p} ring {h} is not closed"
            area = signed_area2(ring)
            assert (area > 0) if h == 0 else (area < 0), (
                f"polygon {p} ring {h}: signed area {area} (outer CCW, holes CW)"
            )
            n = ring.shape[0] - 1
            prev_dir = ring[:-1] - np.roll(ring[:-1], 1, axis=0)
            next_dir = ring[1:] - ring[:-1]
            assert np.all(np.any(next_dir != 0, axis=1)), f"polygon {p} ring {h} repeats a point"
            cross = prev_dir[:, 0] * next_dir[:, 1] - prev_dir[:, 1] * next_dir[:, 0]
            dot = np.sum(prev_dir * next_dir, axis=1)
            assert not np.any((cross == 0) & (dot < 0)), f"polygon {p} ring {h} folds back on itself"
            starts.append(ring[:-1])
            ends.append(ring[1:])
            ring_id.append(np.full(n, len(ring_len)))
            index.append(np.arange(n))
            ring_len.append(n)
    a, b = np.concatenate(starts), np.concatenate(ends)
    rid, idx = np.concatenate(ring_id), np.concatenate(index)
    rlen = np.asarray(ring_len)[rid]
    m = a.shape[0]
    for s in range(0, m, 256):
        i = np.arange(s, min(s + 256, m))[:, None]
        j = np.arange(m)[None, :]
        same = rid[i] == rid[j]
        neighbours = same & ((np.abs(idx[i] - idx[j]) == 1) | (np.abs(idx[i] - idx[j]) == rlen[i] - 1))
        check = (j > i) & ~neighbours
        meet = segments_meet(a[i], b[i], a[j], b[j]) & check
        if meet.any():
            k, l = np.argwhere(meet)[0]
            raise AssertionError(f"edges {s + k} and {l} meet (rings {rid[s + k]} and {rid[l]})")
    coords = geometry["coordinates"]
    for p, poly in enumerate(coords):
        outer = {"type": "Polygon", "coordinates": [poly[0]]}
        firsts = np.array([ring[0] for ring in poly[1:]]).reshape(-1, 2)
        for h, hole in enumerate(poly[1:], start=1):
            hx, hy = np.asarray(hole).T
            assert points_in_geometry(hx, hy, outer).all(), f"polygon {p}: hole {h} is not inside its outer ring"
            nested = points_in_geometry(firsts[:, 0], firsts[:, 1], {"type": "Polygon", "coordinates": [hole]})
            nested[h - 1] = False
            assert not nested.any(), f"polygon {p}: a hole inside hole {h}"
    firsts = np.array([poly[0][0] for poly in coords]).reshape(-1, 2)
    for q, other in enumerate(coords):
        inside = points_in_geometry(firsts[:, 0], firsts[:, 1], {"type": "Polygon", "coordinates": other})
        inside[q] = False
        assert not inside.any(), f"polygon {int(np.argmax(inside))} lies inside polygon {q}"


def area_m2(ring: list, origin: tuple[float, float]) -> float:
    """Signed area of a lon/lat ring in square metres (local frame at the origin's latitude)."""
    r = np.asarray(ring, dtype=np.float64)
    x = (r[:, 0] - origin[0]) * M_PER_DEG * math.cos(math.radians(origin[1]))
    y = (r[:, 1] - origin[1]) * M_PER_DEG
    return 0.5 * float(np.sum(x[:-1] * y[1:] - x[1:] * y[:-1]))


def grid_points(x0: float, y0: float, x1: float, y1: float, step: float, origin=PORTO) -> tuple[np.ndarray, ...]:
    xs, ys = np.meshgrid(np.arange(x0, x1, step), np.arange(y0, y1, step))
    return to_lonlat(xs.ravel(), ys.ravel(), origin)


def test_single_piece_is_a_stadium() -> None:
    xy = np.array([[0.0, 0.0, 400.0, 150.0]])
    pieces = pieces_lonlat(xy)
    buffer_m = 50.0
    geometry, tol = contour_polygons(*pieces, buffer_m)
    assert 0 < tol < buffer_m / 2  # under one cell (the default cell is buffer_m / 2)
    assert len(geometry["coordinates"]) == 1 and len(geometry["coordinates"][0]) == 1
    assert_valid(geometry)
    plon, plat = grid_points(-120, -120, 520, 270, 3.7)
    assert_classifies(geometry, tol, pieces, buffer_m, plon, plat, "stadium")
    length = math.hypot(400.0, 150.0)
    area = area_m2(geometry["coordinates"][0][0], PORTO)

    def stadium(r: float) -> float:
        return math.pi * r * r + 2 * r * length

    assert stadium(buffer_m - tol) < area < stadium(buffer_m + tol)
    assert point_in_geometry(*to_lonlat(200.0, 75.0), geometry)


def test_finer_cells_give_a_smaller_tolerance() -> None:
    pieces = pieces_lonlat(np.array([[0.0, 0.0, 300.0, -200.0]]))
    _, tol_default = contour_polygons(*pieces, 50.0)
    geometry, tol_fine = contour_polygons(*pieces, 50.0, cell_m=5.0)
    assert tol_fine < 5.0 < tol_default < 25.0
    assert_valid(geometry)
    plon, plat = grid_points(-100, -300, 400, 100, 2.3)
    assert_classifies(geometry, tol_fine, pieces, 50.0, plon, plat, "fine cells")


def test_square_ring_of_streets_has_one_hole() -> None:
    xy = polyline([(0, 0), (1000, 0), (1000, 1000), (0, 1000), (0, 0)])
    pieces = pieces_lonlat(xy)
    buffer_m = 50.0
    geometry, tol = contour_polygons(*pieces, buffer_m)
    assert len(geometry["coordinates"]) == 1
    assert len(geometry["coordinates"][0]) == 2  # outer ring + one hole
    assert_valid(geometry)
    assert not point_in_geometry(*to_lonlat(500.0, 500.0), geometry)
    s = np.linspace(0.0, 1000.0, 101)
    for x, y in ((s, 0 * s), (s, 0 * s + 1000), (0 * s, s), (0 * s + 1000, s)):
        assert points_in_geometry(*to_lonlat(x, y), geometry).all()
    inner = 1000.0 - 2 * buffer_m
    hole = -area_m2(geometry["coordinates"][0][1], PORTO)
    assert (inner - 2 * tol) ** 2 < hole < (inner + 2 * tol) ** 2
    plon, plat = grid_points(-150, -150, 1150, 1150, 9.1)
    assert_classifies(geometry, tol, pieces, buffer_m, plon, plat, "square ring")


def test_city_blocks_give_one_hole_each() -> None:
    block = 300.0
    lines = [polyline([(0, k * block), (3 * block, k * block)]) for k in range(4)]
    lines += [polyline([(k * block, 0), (k * block, 3 * block)]) for k in range(4)]
    pieces = pieces_lonlat(np.vstack(lines))
    geometry, tol = contour_polygons(*pieces, 50.0)
    assert len(geometry["coordinates"]) == 1
    assert len(geometry["coordinates"][0]) == 1 + 9
    assert_valid(geometry)
    centres = (np.arange(3) + 0.5) * block
    cx, cy = np.meshgrid(centres, centres)
    assert not points_in_geometry(*to_lonlat(cx.ravel(), cy.ravel()), geometry).any()
    plon, plat = grid_points(-100, -100, 1000, 1000, 7.3)
    assert_classifies(geometry, tol, pieces, 50.0, plon, plat, "city blocks")


def test_lake_inside_a_ring_road_is_a_hole() -> None:
    angles = np.linspace(0.0, 2 * math.pi, 49)
    xy = polyline(list(zip(600 * np.cos(angles), 600 * np.sin(angles), strict=True)))
    origin = (10.75, 59.91)  # Oslo: a high latitude, where the local frame matters more
    pieces = pieces_lonlat(xy, origin)
    geometry, tol = contour_polygons(*pieces, 40.0)
    assert [len(p) for p in geometry["coordinates"]] == [2]
    assert_valid(geometry)
    assert not point_in_geometry(*to_lonlat(0.0, 0.0, origin), geometry)
    assert not point_in_geometry(*to_lonlat(0.0, 500.0, origin), geometry)
    assert point_in_geometry(*to_lonlat(0.0, 600.0, origin), geometry)
    plon, plat = grid_points(-700, -700, 700, 700, 8.9, origin)
    assert_classifies(geometry, tol, pieces, 40.0, plon, plat, "ring road")


def test_far_apart_pieces_give_two_polygons() -> None:
    xy = np.array([[0.0, 0.0, 200.0, 0.0], [3000.0, 2000.0, 3000.0, 2300.0]])
    pieces = pieces_lonlat(xy)
    geometry, tol = contour_polygons(*pieces, 50.0)
    assert [len(p) for p in geometry["coordinates"]] == [1, 1]  # two polygons, no holes
    assert_valid(geometry)
    assert point_in_geometry(*to_lonlat(100.0, 0.0), geometry)
    assert point_in_geometry(*to_lonlat(3000.0, 2150.0), geometry)
    assert not point_in_geometry(*to_lonlat(1500.0, 1000.0), geometry)


def test_point_and_zero_length_pieces() -> None:
    xy = np.array([[0.0, 0.0, 0.0, 0.0], [500.0, 0.0, 500.0, 0.0]])
    pieces = pieces_lonlat(xy)
    geometry, tol = contour_polygons(*pieces, 30.0, cell_m=3.0)
    assert len(geometry["coordinates"]) == 2
    assert_valid(geometry)
    plon, plat = grid_points(-60, -60, 560, 60, 1.7)
    assert_classifies(geometry, tol, pieces, 30.0, plon, plat, "points")


def random_pieces(rng: np.random.Generator, n: int, size_m: float) -> np.ndarray:
    """Street-like pieces in metres: wandering polylines, straight grid streets, isolated and zero-length pieces."""
    out: list[tuple[float, float, float, float]] = []
    while len(out) < n:
        kind = rng.integers(3)
        x, y = rng.uniform(0.0, size_m, 2)
        if kind == 0:  # a wandering street
            heading = rng.uniform(0.0, 2 * math.pi)
            for _ in range(int(rng.integers(1, 8))):
                heading += rng.normal(0.0, 0.7)
                step = rng.uniform(5.0, 250.0)
                nx, ny = x + step * math.cos(heading), y + step * math.sin(heading)
                out.append((x, y, nx, ny))
                x, y = nx, ny
        elif kind == 1:  # an axis-aligned street (aligned with the grid: exact ties at the buffer distance)
            step = rng.uniform(50.0, 600.0)
            out.append((x, y, x + step, y) if rng.random() < 0.5 else (x, y, x, y + step))
        else:  # a short piece or a point (a segment cut right at its start)
            step = rng.choice([0.0, rng.uniform(0.5, 30.0)])
            heading = rng.uniform(0.0, 2 * math.pi)
            out.append((x, y, x + step * math.cos(heading), y + step * math.sin(heading)))
    return np.asarray(out[:n])


RANDOM_CASES = [
    # seed, origin, buffer_m, cell_m
    (0, PORTO, 50.0, None),
    (1, PORTO, 50.0, 7.0),
    (2, (18.42, -33.92), 35.0, None),  # Cape Town: southern hemisphere
    (3, (-78.5, -0.005), 60.0, None),  # Quito: straddles the equator
    (4, (10.75, 59.91), 50.0, 12.0),  # Oslo
    (5, (18.96, 69.65), 25.0, None),  # Tromso: the frame's cos(lat) matters most
    (6, (-0.0005, 51.48), 80.0, 1.0),  # Greenwich: straddles the prime meridian, smallest cells
    (7, PORTO, 15.0, 2.5),
]


@pytest.mark.parametrize(("seed", "origin", "buffer_m", "cell_m"), RANDOM_CASES)
def test_random_pieces_classify_points(seed: int, origin: tuple[float, float], buffer_m: float, cell_m) -> None:
    rng = np.random.default_rng(seed)
    size = 1200.0 if (cell_m or buffer_m / 2) >= 5 else 400.0
    xy = random_pieces(rng, int(rng.integers(20, 60)), size)
    pieces = pieces_lonlat(xy, origin)
    geometry, tol = contour_polygons(*pieces, buffer_m, cell_m=cell_m)
    what = f"seed {seed} at {origin}, buffer {buffer_m}, cell {cell_m}"
    try:
        assert_valid(geometry)
    except AssertionError as e:
        raise AssertionError(f"{what}: {e}") from None
    # uniform points, and points near the boundary band: at buffer +- 1.5 tol from a random point of a random piece
    ux = rng.uniform(-buffer_m - 50, size + buffer_m + 50, 6000)
    uy = rng.uniform(-buffer_m - 50, size + buffer_m + 50, 6000)
    k = rng.integers(0, xy.shape[0], 6000)
    t = rng.random(6000)
    r = rng.uniform(buffer_m - 1.5 * tol, buffer_m + 1.5 * tol, 6000)
    a = rng.uniform(0.0, 2 * math.pi, 6000)
    bx = xy[k, 0] + t * (xy[k, 2] - xy[k, 0]) + r * np.cos(a)
    by = xy[k, 1] + t * (xy[k, 3] - xy[k, 1]) + r * np.sin(a)
    plon, plat = to_lonlat(np.concatenate([ux, bx]), np.concatenate([uy, by]), origin)
    assert_classifies(geometry, tol, pieces, buffer_m, plon, plat, what)


def test_speckle_of_points_stays_valid() -> None:
    """Many tiny blobs at the smallest cell: saddles everywhere, and the 6-decimal rounding at its relative worst."""
    rng = np.random.default_rng(11)
    p = rng.uniform(0.0, 90.0, (300, 2))
    xy = np.hstack([p, p + rng.normal(0.0, 0.3, p.shape) * (rng.random((300, 1)) < 0.5)])
    origin = (18.96, 69.65)
    pieces = pieces_lonlat(xy, origin)
    geometry, tol = contour_polygons(*pieces, 1.6, cell_m=1.0)
    assert len(geometry["coordinates"]) > 50
    assert any(len(poly) > 1 for poly in geometry["coordinates"])
    assert_valid(geometry)
    plon, plat = grid_points(-5, -5, 95, 95, 0.37, origin)
    assert_classifies(geometry, tol, pieces, 1.6, plon, plat, "speckle")


def _square(x: float, y: float, s: float, ccw: bool = True) -> list[list[float]]:
    ring = [[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]
    return ring if ccw else ring[::-1]


@pytest.mark.parametrize(
    ("coordinates", "message"),
    [
        ([[_square(0, 0, 0.01, ccw=False)]], "signed area"),
        ([[_square(0, 0, 0.01), _square(0.002, 0.002, 0.002)]], "signed area"),
        ([[_square(0, 0, 0.01)[:-1]]], "not closed"),
        (
            [
                [
                    [
                        [0, 0],
                        [0.01, 0],
                        [0.01, 0.01],
                        [0, 0.01],
                        [0, 0.006],
                        [0.003, 0.004],
                        [0.003, 0.006],
                        [0, 0.004],
                        [0, 0],
                    ]
                ]
            ],
            "meet",
        ),
        ([[[[0, 0], [0.01, 0], [0.01, 0.01], [0.005, 0.005], [0, 0.01], [0, 0.005], [0.005, 0.005], [0, 0]]]], "meet"),
        ([[_square(0, 0, 0.01), _square(0.0, 0.002, 0.002, ccw=False)]], "meet"),
        ([[_square(0, 0, 0.01), _square(0.02, 0.002, 0.002, ccw=False)]], "not inside its outer ring"),
        ([[_square(0, 0, 0.01)], [_square(0.01, 0.01, 0.01)]], "meet"),
        ([[_square(0, 0, 0.01)], [_square(0.002, 0.002, 0.002)]], "lies inside"),
    ],
)
def test_validity_check_rejects_bad_geometries(coordinates: list, message: str) -> None:
    """The checker above is not vacuous: crossing, touching, misoriented, unclosed and misplaced rings fail it."""
    with pytest.raises(AssertionError, match=message):
        assert_valid({"type": "MultiPolygon", "coordinates": coordinates})
    assert_valid({"type": "MultiPolygon", "coordinates": [[_square(0, 0, 0.01), _square(0.002, 0.002, 0.002, False)]]})


def test_grid_limit_raises_with_a_clear_message() -> None:
    lon0, lat0 = np.array([-8.6]), np.array([41.1])
    lon1, lat1 = np.array([-8.1]), np.array([41.6])
    with pytest.raises(ValueError, match=r"needs a \d+ x \d+ grid = [\d,]+ cells .* limit of [\d,]+ cells") as info:
        contour_polygons(lon0, lat0, lon1, lat1, 10.0)
    assert f"{MAX_CELLS:,}" in str(info.value)
    fit = float(re.search(r"\(([\d.]+) m would fit\)", str(info.value)).group(1))
    geometry, tol = contour_polygons(lon0, lat0, lon1, lat1, 10.0, cell_m=fit)  # the suggestion is honest
    assert len(geometry["coordinates"]) == 1 and tol < fit


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([0.0], [0.0], [1.0, 2.0], [0.0], 50.0), {}, "1-D arrays of one length"),
        (([0.0], [np.nan], [0.0], [0.0], 50.0), {}, "lat0 holds a value that is not finite"),
        (([0.0], [95.0], [0.0], [0.0], 50.0), {}, "latitude outside"),
        (([0.0], [0.0], [0.0], [0.0], 0.0), {}, "buffer_m must be a positive"),
        (([0.0], [0.0], [0.0], [0.0], 50.0), {"cell_m": 0.5}, "cell_m must be at least"),
        (([-179.9], [0.0], [179.9], [0.0], 50.0), {}, "antimeridian"),
        (([0.0], [89.999], [0.001], [89.999], 50.0), {}, "narrow"),
    ],
)
def test_bad_input_raises(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        contour_polygons(*args, **kwargs)


def test_empty_input() -> None:
    empty = np.zeros(0)
    geometry, tol = contour_polygons(empty, empty, empty, empty, 50.0)
    assert geometry == {"type": "MultiPolygon", "coordinates": []}
    assert tol == 0.0
    assert not point_in_geometry(-8.61, 41.15, geometry)


def test_point_in_geometry_even_odd() -> None:
    outer = [[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0], [0.0, 0.0]]
    hole = [[1.0, 1.0], [1.0, 3.0], [3.0, 3.0], [3.0, 1.0], [1.0, 1.0]]
    polygon = {"type": "Polygon", "coordinates": [outer, hole]}
    assert point_in_geometry(0.5, 0.5, polygon)
    assert not point_in_geometry(2.0, 2.0, polygon)
    assert not point_in_geometry(5.0, 2.0, polygon)
    multi = {"type": "MultiPolygon", "coordinates": [[outer, hole], [[[10, 0], [11, 0], [11, 1], [10, 0]]]]}
    assert points_in_geometry([0.5, 2.0, 10.9, 10.1], [0.5, 2.0, 0.5, 0.5], multi).tolist() == [
        True,
        False,
        True,
        False,
    ]
    with pytest.raises(ValueError, match="Polygon or MultiPolygon"):
        point_in_geometry(0.0, 0.0, {"type": "Point", "coordinates": [0, 0]})

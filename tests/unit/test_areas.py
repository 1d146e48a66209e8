"""Avoid areas: every validation error and its message, the compact and GeoJSON forms, holes, and the exact set of
arcs an area forbids -- on hand-made graphs (straight and multi-point chains, touching cases), on random chains
against a brute-force reference with exact integer predicates, and on the bundled Monaco extract.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from app.engine.errors import InvalidValue
from app.engine.features.areas import Areas, forbidden_arcs, parse_areas, parse_compact
from floor.format.graph import Graph, graph_in_memory
from floor.format.units import COORD_SCALE
from preprocessing.graph import arrays_from_arcs, finalize_arrays

ROOT = Path(__file__).resolve().parents[2]
SQUARE = [[0.0, 0.0], [0.01, 0.0], [0.01, 0.01], [0.0, 0.01], [0.0, 0.0]]
HOLE = [[0.004, 0.004], [0.006, 0.004], [0.006, 0.006], [0.004, 0.006], [0.004, 0.004]]


def polygon(*rings: list) -> dict:
    return {"type": "Polygon", "coordinates": [list(r) for r in rings]}


def refuse(obj: object, pattern: str, **limits: int) -> str:
    """Parse `obj` (str: compact form, else GeoJSON), expect `InvalidValue` matching `pattern`; return the message."""
    with pytest.raises(InvalidValue) as info:
        if isinstance(obj, str):
            parse_compact(obj, **limits)
        else:
            parse_areas(obj, **limits)
    msg = info.value.message
    assert info.value.code == "InvalidValue"
    assert re.search(pattern, msg), msg
    assert ". " not in msg and "\n" not in msg, f"not one sentence: {msg}"
    return msg


# ---------------------------------------------------------------------------------------------------------------------
# Parsing and validation


def test_polygon_with_hole_parses_into_closed_float_rings() -> None:
    areas = parse_areas(polygon(SQUARE, HOLE))
    assert isinstance(areas, Areas)
    assert areas.num_polygons == 1 and areas.num_vertices == 8
    ext, hole = areas.polygons[0]
    assert ext.dtype == np.float64 and ext.shape == (5, 2) and hole.shape == (5, 2)
    assert np.array_equal(ext, np.array(SQUARE)) and not ext.flags.writeable
    assert areas.bbox == (0.0, 0.0, 0.01, 0.01)
    with pytest.raises(AttributeError):
        areas.bbox = (0.0, 0.0, 1.0, 1.0)  # type: ignore[misc]


def test_multipolygon_feature_and_feature_collection() -> None:
    tri = [[1.0, 1.0], [1.01, 1.0], [1.0, 1.01], [1.0, 1.0]]
    multi = {"type": "MultiPolygon", "coordinates": [[SQUARE, HOLE], [tri]]}
    a = parse_areas(multi)
    assert a.num_polygons == 2 and [len(p) for p in a.polygons] == [2, 1]
    assert a.bbox == (0.0, 0.0, 1.01, 1.01)
    feature = {"type": "Feature", "properties": {"name": "x"}, "geometry": multi}
    assert parse_areas(feature).num_vertices == a.num_vertices == 11
    fc = {
        "type": "FeatureCollection",
        "features": [{"type": "Feature", "properties": {}, "geometry": polygon(tri)}, feature],
    }
    b = parse_areas(fc)
    assert b.num_polygons == 3 and np.array_equal(b.polygons[0][0], np.array(tri))
    assert parse_areas(json.dumps(fc)).num_polygons == 3  # JSON text too
    # Altitudes are allowed and ignored; tuples work as well as lists.
    c = parse_areas({"type": "Polygon", "coordinates": (tuple((x, y, 5.0) for x, y in SQUARE),)})
    assert c.polygons[0][0].shape == (5, 2)


def test_compact_form() -> None:
    a = parse_compact("7.41,43.73;7.42,43.73;7.42,43.74;7.41,43.74")
    ring = a.polygons[0][0]
    assert ring.shape == (5, 2) and tuple(ring[-1]) == (7.41, 43.73) and a.num_vertices == 4
    b = parse_compact(" 7.41, 43.73 ;7.42,43.73;7.42,43.74;7.41,43.74;7.41,43.73")  # closing vertex given
    assert np.array_equal(b.polygons[0][0], ring)
    c = parse_compact("7.41,43.73;7.42,43.73;7.42,43.74|8,44;8.01,44;8,44.01")
    assert c.num_polygons == 2 and c.num_vertices == 6 and c.bbox == (7.41, 43.73, 8.01, 44.01)


@pytest.mark.parametrize(
    ("obj", "pattern"),
    [
        ([1, 2], r"must be a GeoJSON object .*not list"),
        ("{not json", r"not valid JSON"),  # a str is JSON for parse_areas: see below
        ({"type": "Point", "coordinates": [7.4, 43.7]}, r"GeoJSON type 'Point' is not supported"),
        ({"coordinates": [SQUARE]}, r"GeoJSON type None is not supported"),
        ({"type": "Polygon"}, r"the Polygon has no coordinates"),
        ({"type": "Polygon", "coordinates": []}, r"polygon 0 coordinates must be a non-empty list of rings"),
        ({"type": "MultiPolygon", "coordinates": 3}, r"the MultiPolygon coordinates must be a list of polygons"),
        ({"type": "MultiPolygon", "coordinates": []}, r"contain no polygon"),
        ({"type": "Feature", "geometry": None}, r"the Feature has no geometry"),
        ({"type": "Feature", "geometry": {"type": "LineString", "coordinates": []}}, r"type 'LineString'"),
        ({"type": "FeatureCollection"}, r"no list of features"),
        ({"type": "FeatureCollection", "features": [{"type": "Polygon"}]}, r"feature 0 is not a GeoJSON Feature"),
        (polygon([[0, 0], [1, 0], "x", [0, 0]]), r"polygon 0 ring 0 \(the exterior\) position 2 is not a \[lon, lat\]"),
        (polygon([[0, 0], [1, "0"], [1, 1], [0, 0]]), r"position 1 is not a \[lon, lat\] pair of numbers"),
        (polygon([[0, 0], [1, True], [1, 1], [0, 0]]), r"position 1 is not a \[lon, lat\] pair of numbers"),
        (polygon([[0, 0], [1], [1, 1], [0, 0]]), r"position 1 is not a \[lon, lat\] pair of numbers"),
        (polygon([[0, 0], [1, float("nan")], [1, 1], [0, 0]]), r"position 1 \(1.0, nan\) is not finite"),
        (polygon([[0, 0], [float("inf"), 0], [1, 1], [0, 0]]), r"position 1 \(inf, 0.0\) is not finite"),
        (polygon([[0, 0], [181, 0], [1, 1], [0, 0]]), r"position 1 \(181.0, 0.0\) is out of range: longitude"),
        (polygon([[0, 0], [1, -90.5], [1, 1], [0, 0]]), r"out of range: longitude -180..180, latitude -90..90"),
        (polygon([[0, 0], [1, 0], [0, 0]]), r"ring 0 \(the exterior\) has 3 positions: .* at least 4"),
        (polygon([[0, 0], [1, 0], [1, 1], [0, 1]]), r"is not closed: its first position \[0.0, 0.0\] differs"),
        (polygon([[0, 0], [1, 0], [0, 0], [1, 0], [0, 0]]), r"ring 0 \(the exterior\) has fewer than 3 distinct"),
        (polygon([[0, 0], [1, 0], [1, 1e-8], [0, 0]]), r"fewer than 3 distinct vertices \(at 1e-7 degree"),
        (polygon([[0, 0], [1, 0], [1, 0], [1, 1], [0, 0]]), r"edge 1 has zero length: vertices 1 and 2 coincide"),
        (polygon([[0, 0], [1, 0], [2, 0], [0, 0]]), r"polygon 0 ring 0 \(the exterior\) has zero area"),
        (polygon([[0, 0], [1, 0], [3, 0], [2, 0], [0, 0]]), r"has zero area: all its vertices lie on one line"),
        (polygon([[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]), r"is self-intersecting: edges 0 and 2 intersect or touch"),
        (polygon([[0, 0], [4, 0], [4, 4], [2, 0], [0, 4], [0, 0]]), r"self-intersecting: edges 0 and 2 intersect or"),
        (polygon([[0, 0], [2, -1], [2, 1], [0, 0], [-2, 1], [-2, -1], [0, 0]]), r"self-intersecting: edges 0 and 2"),
        (polygon([[0, 0], [2, 0], [2, 2], [1, 2], [1, 3], [1, 2], [0, 2], [0, 0]]), r"fold back .* at vertex 4"),
        (polygon([[0, 0], [2, 0], [2, 2], [0, 2], [0, 0], [-1, 1], [0, 0]]), r"edges 4 and 5 fold back .* vertex 5"),
        (polygon([[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[5, 5], [6, 5], [6, 6], [5, 5]]), r"lies outside it"),
        (polygon([[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[3, 1], [5, 1], [5, 2], [3, 1]]), r"edge 0 meets the"),
        (polygon([[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[4, 1], [3, 1], [3, 2], [4, 1]]), r"not inside its ext"),
        (polygon([[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[1, 1], [2, 1], [2, 1], [1, 1]]), r"ring 1 \(a hole\)"),
    ],
)
def test_refused_geojson(obj: object, pattern: str) -> None:
    if isinstance(obj, str):  # JSON text goes to parse_areas, not parse_compact
        with pytest.raises(InvalidValue, match=pattern):
            parse_areas(obj)
        return
    refuse(obj, pattern)


def test_error_names_polygon_and_ring() -> None:
    ok = [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]
    bad_hole = [[1, 1], [3, 3], [3, 1], [1, 3], [1, 1]]  # a bow tie
    multi = {"type": "MultiPolygon", "coordinates": [[ok], [ok, [[1, 1], [2, 1], [2, 2], [1, 1]], bad_hole]]}
    refuse(multi, r"^polygon 1 ring 2 \(a hole\) is self-intersecting: edges 0 and 2 intersect or touch$")
    fc = {"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": polygon(ok)}] * 2}
    fc["features"].append({"type": "Feature", "geometry": polygon([[0, 0], [1, 0], [1, 1], [0, 1]])})
    refuse(fc, r"^polygon 2 ring 0 \(the exterior\) is not closed")


def test_limits() -> None:
    ring = [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]  # 4 vertices
    refuse({"type": "MultiPolygon", "coordinates": [[ring]] * 21}, r"too many avoid-area polygons: at most 20$")
    assert parse_areas({"type": "MultiPolygon", "coordinates": [[ring]] * 20}).num_polygons == 20
    refuse({"type": "MultiPolygon", "coordinates": [[ring]] * 3}, r"at most 2$", max_polygons=2)
    refuse(polygon(ring, ring), r"too many avoid-area vertices: at most 7 in total", max_vertices=7)
    assert parse_areas(polygon(ring), max_vertices=4).num_vertices == 4
    big = [[np.cos(t), np.sin(t)] for t in np.linspace(0, 2 * np.pi, 1002)[:-1].tolist()]
    refuse(polygon([*big, big[0]]), r"too many avoid-area vertices: at most 1000 in total")
    assert parse_areas(polygon([*big[:-1], big[0]])).num_vertices == 1000
    refuse("|".join(["0,0;1,0;1,1"] * 21), r"too many avoid-area polygons: at most 20$")
    refuse("0,0;1,0;1,1;0,1", r"at most 3 in total", max_vertices=3)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("", r"empty"),
        ("  ", r"empty"),
        ("7.41,43.73;7.42;7.42,43.74", r"polygon 0 ring 0 \(the exterior\) vertex 1 '7.42' is not a lon,lat pair"),
        ("7.41,43.73;7.42,43.73;a,43.74", r"vertex 2 'a,43.74' is not a lon,lat pair of numbers"),
        ("7.41,43.73;7.42,43.73,1;7.42,43.74", r"vertex 1 '7.42,43.73,1' is not a lon,lat pair"),
        ("0,0;1,0;1,1|0,0;1,0;nan,1", r"polygon 1 ring 0 \(the exterior\) vertex 2 \(nan, 1.0\) is not finite"),
        ("0,0;1,0;1,inf", r"vertex 2 \(1.0, inf\) is not finite"),
        ("0,0;1,0;1,91", r"vertex 2 \(1.0, 91.0\) is out of range"),
        ("0,0;1,0;0,0", r"has 2 vertices: a polygon needs at least 3"),
        ("0,0;1,0", r"has 2 vertices: a polygon needs at least 3"),
        ("0,0;1,0;1,0", r"fewer than 3 distinct"),
        ("0,0;1,0;1,0;1,1", r"edge 1 has zero length"),
        ("0,0;1,0;2,0", r"zero area"),
        ("0,0;1,1;1,0;0,1", r"self-intersecting: edges 0 and 2"),
        ("0,0;1,0;1,1|0,0;2,0;1,1;2,2;0,2;1,0", r"polygon 1 ring 0 \(the exterior\) is self-intersecting"),
    ],
)
def test_refused_compact(text: str, pattern: str) -> None:
    refuse(text, pattern)


# ---------------------------------------------------------------------------------------------------------------------
# Forbidden arcs on hand-made graphs


def chain_graph(chains: list[list[tuple[float, float]]], oneway: frozenset[int] = frozenset()) -> Graph:
    """A graph with one geometry chain per entry (degrees, 2+ points) and two end nodes per chain; an arc along the
    chain (`arc_geom = 2c`) and, unless the chain is in `oneway`, one against it (`2c + 1`)."""
    k = len(chains)
    ends = [p for ch in chains for p in (ch[0], ch[-1])]
    node_lon = np.round(np.array([p[0] for p in ends]) * COORD_SCALE).astype(np.int32)
    node_lat = np.round(np.array([p[1] for p in ends]) * COORD_SCALE).astype(np.int32)
    geom_first = np.zeros(k + 1, dtype=np.int64)
    np.cumsum([len(ch) for ch in chains], out=geom_first[1:])
    pts = np.array([p for ch in chains for p in ch], dtype=np.float64)
    geom_lon = np.round(pts[:, 0] * COORD_SCALE).astype(np.int32)
    geom_lat = np.round(pts[:, 1] * COORD_SCALE).astype(np.int32)
    tail, head, geom = [], [], []
    for c in range(k):
        tail.append(2 * c), head.append(2 * c + 1), geom.append(2 * c)
        if c not in oneway:
            tail.append(2 * c + 1), head.append(2 * c), geom.append(2 * c + 1)
    m = len(tail)
    arrays = finalize_arrays(
        {"node_lon": node_lon, "node_lat": node_lat, "node_osm_id": np.arange(2 * k, dtype=np.int64) + 1},
        {
            "arc_tail": np.array(tail),
            "arc_head": np.array(head),
            "arc_weight": np.ones(m, dtype=np.int32),
            "arc_dist": np.zeros(m, dtype=np.int32),
            "arc_geom": np.array(geom),
            "arc_name": np.zeros(m, dtype=np.int32),
            "arc_ref": np.zeros(m, dtype=np.int32),
            "arc_class": np.zeros(m, dtype=np.uint8),
            "arc_flags": np.zeros(m, dtype=np.uint8),
        },
        {"geom_first": geom_first, "geom_lon": geom_lon, "geom_lat": geom_lat},
        [""],
    )
    return graph_in_memory(arrays, {"max_speed_mps": 20.0})


def arcs_of_chains(graph: Graph, chains: set[int] | list[int]) -> list[int]:
    return sorted(np.flatnonzero(np.isin(np.asarray(graph.arc_geom) >> 1, list(chains))).tolist())


def forbidden_chain_set(areas: Areas, graph: Graph) -> set[int]:
    arcs = forbidden_arcs(areas, graph)
    assert arcs.dtype == np.int32 and np.all(np.diff(arcs) > 0), arcs
    chains = set((np.asarray(graph.arc_geom)[arcs] >> 1).tolist())
    assert arcs.tolist() == arcs_of_chains(graph, chains), "a chain's arcs must come together"
    return chains


def test_straight_two_point_arcs() -> None:
    """Straight arcs from `arrays_from_arcs`: crossing, inside, in the hole, on a corner, far away."""
    lon = [-0.005, 0.015, 0.002, 0.003, 0.0045, 0.0055, -0.005, 0.005, 1.0, 1.01, -0.005, -0.001, -0.005, 0.004]
    lat = [0.002, 0.002, 0.002, 0.003, 0.0045, 0.0055, 0.005, -0.005, 1.0, 1.01, 0.0, 0.0, 0.0, 0.005]
    tail = np.array([0, 2, 4, 6, 8, 10, 12, 13])
    head = np.array([1, 3, 5, 7, 9, 11, 0, 5])
    graph = graph_in_memory(arrays_from_arcs(tail, head, np.ones(8), None, lon, lat), {"max_speed_mps": 20.0})
    areas = parse_areas(polygon(SQUARE, HOLE))
    arcs = forbidden_arcs(areas, graph)
    got = {(int(graph.arc_tail[a]), int(graph.arc_head[a])) for a in arcs}
    # 0-1 crosses without a vertex inside; 2-3 lies inside; 6-7 meets only the corner (0, 0); 13-5 ends in the hole
    # but starts on the hole's edge; 4-5 lies in the hole; 8-9 is far away; 10-11 stops short of the corner on the
    # line of the bottom edge; 12-0 runs outside.
    assert got == {(0, 1), (2, 3), (6, 7), (13, 5)}
    assert arcs.dtype == np.int32


def test_multi_point_chains() -> None:
    chains = [
        [(-0.003, 0.002), (0.002, 0.002), (-0.003, 0.003)],  # 0 bends into the square, both ends outside
        [(-0.003, 0.002), (-0.0001, 0.002), (-0.003, 0.003)],  # 1 bends towards it, stays outside
        [(-0.003, 0.0015), (-0.001, 0.0015), (0.0015, -0.001), (0.0015, -0.003)],  # 2 cuts the corner, no point in
        [(-0.003, 0.005), (-0.001, 0.005), (0.0, 0.007), (-0.001, 0.009), (-0.003, 0.009)],  # 3 a point on the edge
        [(0.0045, 0.0045), (0.0055, 0.0045), (0.0055, 0.0055), (0.0045, 0.0055)],  # 4 inside the hole
        [(0.0045, 0.0045), (0.005, 0.0065), (0.0055, 0.0045)],  # 5 leaves the hole and comes back
        [(0.001, 0.001), (0.002, 0.001), (0.003, 0.002), (0.002, 0.003), (0.001, 0.001)],  # 6 a closed loop inside
        [(0.001, 0.009), (0.009, 0.009), (0.009, 0.008)],  # 7 inside, one way only
        [(0.02, -0.01), (0.02, 0.02), (-0.01, 0.02), (-0.01, -0.01)],  # 8 around the square, never touching
        [(0.005, -0.002), (0.005, 0.0), (0.006, -0.002)],  # 9 touches the bottom edge with a shape point
        [(0.004, 0.005), (0.0045, 0.0048), (0.005, 0.005)],  # 10 starts on the hole's edge, inside the hole
        [(0.009, 0.011), (0.011, 0.009), (0.012, 0.012)],  # 11 a segment through the corner (0.01, 0.01) only
    ]
    graph = chain_graph(chains, oneway=frozenset({7}))
    areas = parse_areas(polygon(SQUARE, HOLE))
    assert forbidden_chain_set(areas, graph) == {0, 2, 3, 5, 6, 7, 9, 10, 11}
    assert len(arcs_of_chains(graph, [7])) == 1 and len(arcs_of_chains(graph, [0])) == 2
    # Without the hole, the hole's chains are inside; far away, nothing is.
    assert forbidden_chain_set(parse_areas(polygon(SQUARE)), graph) == {0, 2, 3, 4, 5, 6, 7, 9, 10, 11}
    far = parse_compact("1,1;1.01,1;1.01,1.01")
    assert forbidden_arcs(far, graph).tolist() == [] and forbidden_arcs(far, graph).dtype == np.int32
    # A MultiPolygon is the union of its members; the same areas in any order give the same arcs.
    two = parse_compact("-0.0031,0.0089;-0.0029,0.0089;-0.003,0.0091|0.0045,0.0045;0.0046,0.0045;0.0046,0.0046")
    assert forbidden_chain_set(two, graph) == {3, 4, 5}
    everything = parse_compact("-1,-1;1,-1;1,1;-1,1")
    assert forbidden_arcs(everything, graph).tolist() == list(range(graph.num_arcs))


def test_on_realistic_coordinates_and_grid_rounding() -> None:
    """At 7.4E 43.7N (Monaco), vertices 1e-7 degree apart: touching is decided on the 1e-7 grid, exactly."""
    x0, y0 = 7.4200000, 43.7300000
    chains = [
        [(x0 - 0.001, y0 - 0.0000001), (x0 + 0.001, y0 - 0.0000001)],  # 0 one grid step below the bottom edge
        [(x0 - 0.001, y0), (x0 - 0.0000001, y0)],  # 1 on the edge's line, one step short of the corner
        [(x0 - 0.001, y0), (x0, y0)],  # 2 ends on the corner
        [(x0 - 0.001, y0 + 0.0010001), (x0 + 0.001, y0 - 0.0009999)],  # 3 crosses the left edge 1e-7 above the corner
        [(x0 - 0.001, y0 + 0.0009999), (x0 + 0.001, y0 - 0.0010001)],  # 4 passes 1e-7 below and left of the corner
        [(x0 + 0.0030001, y0 + 0.001), (x0 + 0.004, y0 + 0.001)],  # 5 starts one grid step right of the right edge
        [(x0 + 0.003, y0 + 0.001), (x0 + 0.004, y0 + 0.001)],  # 6 starts on the right edge
    ]
    graph = chain_graph(chains)
    areas = parse_compact(f"{x0},{y0};{x0 + 0.003},{y0};{x0 + 0.003},{y0 + 0.003};{x0},{y0 + 0.003}")
    assert forbidden_chain_set(areas, graph) == {2, 3, 6}


# ---------------------------------------------------------------------------------------------------------------------
# Brute-force reference: plain Python, exact integer predicates (independent formulation: CLRS segment test, winding
# numbers)


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


def _orient(a: tuple[int, int], b: tuple[int, int], c: tuple[int, int]) -> int:
    return _sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))


def _on_segment(p: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> bool:
    return (
        _orient(a, b, p) == 0
        and min(a[0], b[0]) <= p[0] <= max(a[0], b[0])
        and min(a[1], b[1]) <= p[1] <= max(a[1], b[1])
    )


def _segments_meet(a: tuple[int, int], b: tuple[int, int], c: tuple[int, int], d: tuple[int, int]) -> bool:
    o1, o2, o3, o4 = _orient(a, b, c), _orient(a, b, d), _orient(c, d, a), _orient(c, d, b)
    if o1 * o2 < 0 and o3 * o4 < 0:
        return True
    return _on_segment(c, a, b) or _on_segment(d, a, b) or _on_segment(a, c, d) or _on_segment(b, c, d)


def _winding(p: tuple[int, int], ring: list[tuple[int, int]]) -> int:
    w = 0
    for a, b in zip(ring[:-1], ring[1:], strict=True):
        if a[1] <= p[1]:
            if b[1] > p[1] and _orient(a, b, p) > 0:
                w += 1
        elif b[1] <= p[1] and _orient(a, b, p) < 0:
            w -= 1
    return w


def reference_chains(areas: Areas, graph: Graph) -> set[int]:
    polys = [
        [[(round(x * COORD_SCALE), round(y * COORD_SCALE)) for x, y in ring.tolist()] for ring in rings]
        for rings in areas.polygons
    ]
    edges = [[(a, b) for ring in rings for a, b in zip(ring[:-1], ring[1:], strict=True)] for rings in polys]
    gf, glon, glat = graph.geom_first.tolist(), graph.geom_lon.tolist(), graph.geom_lat.tolist()
    out = set()
    for c in range(len(gf) - 1):
        pts = list(zip(glon[gf[c] : gf[c + 1]], glat[gf[c] : gf[c + 1]], strict=True))
        segs = list(zip(pts[:-1], pts[1:], strict=True))
        for rings, ring_edges in zip(polys, edges, strict=True):
            inside = any(
                any(_on_segment(p, a, b) for a, b in ring_edges)
                or (_winding(p, rings[0]) != 0 and all(_winding(p, h) == 0 for h in rings[1:]))
                for p in pts
            )
            if inside or any(_segments_meet(s, t, a, b) for s, t in segs for a, b in ring_edges):
                out.add(c)
                break
    return out


def random_star(rng: random.Random, cx: int, cy: int, k: int, r_lo: float, r_hi: float) -> list[list[int]]:
    """A closed star-shaped ring of k integer vertices around (cx, cy) (rounding may make it invalid)."""
    angles = sorted(rng.uniform(0, 2 * np.pi) for _ in range(k))
    ring = [[cx + round(r * np.cos(t)), cy + round(r * np.sin(t))] for t in angles for r in [rng.uniform(r_lo, r_hi)]]
    return [*ring, ring[0]]


def random_polygon(rng: random.Random, unit: float, big: bool) -> list[list[list[float]]]:
    """Rings (degrees, on a grid of `unit`) of a valid random polygon: small (3-9 vertices) or big (12-40 vertices,
    with a star-shaped hole), placed in the 0..24 units square."""
    while True:
        cx, cy = rng.randint(4, 20), rng.randint(4, 20)
        if big:
            rings = [random_star(rng, cx, cy, rng.randint(12, 40), 8, 14), random_star(rng, cx, cy, 6, 2, 5)]
        else:
            rings = [random_star(rng, cx, cy, rng.randint(3, 9), 2, 9)]
        rings = [[[x * unit, y * unit] for x, y in ring] for ring in rings]
        try:
            parse_areas(polygon(*rings))
        except InvalidValue:
            continue
        return rings


@pytest.mark.parametrize("seed", range(6))
def test_random_chains_against_brute_force(seed: int) -> None:
    """Random chains with 2-5 points on a coarse grid (so touching, collinear and shared points are frequent) against
    random areas: a concave polygon with a hole, a small random star and a big one with a hole (many edges, so the
    edge bands are exercised)."""
    rng = random.Random(seed)
    unit = 1e-5  # coarse grid: 100 fixed-point steps
    concave = [[0, 0], [12, 0], [12, 12], [8, 12], [8, 4], [4, 4], [4, 12], [0, 12], [0, 0]]
    hole = [[1, 6], [3, 6], [3, 10], [2, 8], [1, 10], [1, 6]]
    rings = [[[x * unit, y * unit] for x, y in r] for r in (concave, hole)]
    small, big = random_polygon(rng, unit, False), random_polygon(rng, unit, True)
    areas = parse_areas({"type": "MultiPolygon", "coordinates": [rings, small, big]})
    chains = []
    for _ in range(400):
        n = rng.choice([2, 2, 3, 4, 5])
        x, y = rng.randint(-3, 27), rng.randint(-3, 27)
        pts = []
        for _ in range(n):
            pts.append((x * unit, y * unit))
            x, y = x + rng.randint(-4, 4), y + rng.randint(-4, 4)
        chains.append(pts)
    graph = chain_graph(chains, oneway=frozenset(range(0, 400, 7)))
    got = forbidden_chain_set(areas, graph)
    want = reference_chains(areas, graph)
    assert got == want, f"seed {seed}: missing {sorted(want - got)[:10]}, extra {sorted(got - want)[:10]}"
    assert 0 < len(got) < len(chains), f"seed {seed}: degenerate test ({len(got)} forbidden)"


@pytest.mark.parametrize("seed", range(3))
def test_world_scale_coordinates_are_exact(seed: int) -> None:
    """Polygons and chains spanning the whole lon/lat range, with vertices at the extremes and one grid step inside
    them: the cross products come near 2**63 and many cases are nearly collinear; the result must still be exact."""
    rng = random.Random(seed)
    xs = [-180.0, -179.9999999, -90.0, 0.0, 0.0000001, 90.0, 179.9999999, 180.0]
    ys = [-90.0, -89.9999999, -45.0, 0.0, 0.0000001, 45.0, 89.9999999, 90.0]
    world = [[-180.0, -90.0], [180.0, -90.0], [180.0, 90.0], [-180.0, 90.0], [-180.0, -90.0]]
    thin = [[-180.0, -90.0], [180.0, 89.9999999], [179.9999999, 90.0], [-180.0, -90.0]]
    hole = [[-90.0, -45.0], [90.0, -45.0], [0.0, 45.0], [-90.0, -45.0]]
    chains = [[(rng.choice(xs), rng.choice(ys)) for _ in range(rng.randint(2, 4))] for _ in range(300)]
    graph = chain_graph(chains)
    for rings in ([thin], [world, hole]):
        areas = parse_areas(polygon(*rings))
        got = forbidden_chain_set(areas, graph)
        want = reference_chains(areas, graph)
        assert got == want, f"seed {seed}: missing {sorted(want - got)[:10]}, extra {sorted(got - want)[:10]}"


# ---------------------------------------------------------------------------------------------------------------------
# The bundled Monaco extract


def test_monaco_harbour(tmp_path: Path) -> None:
    from app.engine.data import load
    from preprocessing.pipeline import preprocess

    preprocess(ROOT / "data" / "monaco.osm.pbf", tmp_path / "g", landmarks=0, ch=False, force=True, quiet=True)
    graph = load(tmp_path / "g")
    # Port Hercule and the streets around it (about 600 m x 550 m), with a hole in its south-west corner.
    harbour = {
        "type": "Feature",
        "properties": {},
        "geometry": polygon(
            [[7.4195, 43.7315], [7.4275, 43.7315], [7.4285, 43.7365], [7.4215, 43.7370], [7.4195, 43.7315]],
            [[7.4205, 43.7320], [7.4225, 43.7320], [7.4225, 43.7335], [7.4205, 43.7335], [7.4205, 43.7320]],
        ),
    }
    areas = parse_areas(harbour)
    arcs = forbidden_arcs(areas, graph)
    assert 40 <= len(arcs) <= 600, len(arcs)
    chains = set((np.asarray(graph.arc_geom)[arcs] >> 1).tolist())
    assert chains == reference_chains(areas, graph)
    assert arcs.tolist() == arcs_of_chains(graph, chains)
    # Every forbidden chain's box meets the areas' box.
    lon0, lat0, lon1, lat1 = (round(v * COORD_SCALE) for v in areas.bbox)
    gf = graph.geom_first
    for c in chains:
        lo = graph.geom_lon[gf[c] : gf[c + 1]]
        la = graph.geom_lat[gf[c] : gf[c + 1]]
        assert lo.max() >= lon0 and lo.min() <= lon1 and la.max() >= lat0 and la.min() <= lat1

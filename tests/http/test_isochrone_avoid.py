"""Isochrones and areas to avoid on the bundled Monaco, against the reference Dijkstra, and through the server.

Isochrones: points sampled along arcs fall inside a contour exactly when the reference Dijkstra reaches them within
its limit: a reached point must be inside; a point the reference does not reach must be outside unless it lies
within the polygon's buffer (plus its stated tolerance) of some piece the reference reaches.
Avoid areas: routes equal the reference Dijkstra on the graph without the arcs touching the areas, never use one,
and bad geometry or a waypoint inside an area is a 400 with the reason.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import pytest

from app.engine.data import load
from app.engine.features.areas import parse_compact
from app.engine.features.contours import contour_polygons, point_in_geometry
from app.engine.features.isochrone import point_pieces, reached_arc_pieces, reached_pieces
from app.engine.router import Router
from app.engine.search.reference import DijkstraSearch
from app.engine.types import INF_WEIGHT, RouteOptions, Seeds
from floor.format.graph import graph_in_memory
from floor.kernels.geometry import haversine_m
from harness import api_server
from tests.unit.test_heuristics import reversed_graph
from tests.unit.test_search_options import filtered

BUFFER_M = 40.0
# A box over the middle of Monaco (Monte-Carlo), and points on either side of it
BOX = "7.4230,43.7360;7.4270,43.7360;7.4270,43.7380;7.4230,43.7380"
WEST, EAST = (7.4197, 43.7311), (7.4300, 43.7420)


@pytest.fixture(scope="module")
def router(bundled_graph: Path) -> Router:
    return Router(load(bundled_graph))


def reference_labels(router: Router, seeds: Seeds, reverse: bool) -> np.ndarray:
    """Reference Dijkstra travel times from `seeds` on the graph the router searches (on an edge-based graph, per
    search node: the time at the end of its road arc, or from it backwards); routability weights replaced by the
    durations, as isochrones measure time."""
    g = router.search_graph
    g = graph_in_memory({**g.arrays, "arc_weight": g.arc_duration}, g.manifest)
    seeds = Seeds(seeds.nodes, seeds.duration_array(), seeds.dists, seeds.lon, seeds.lat)
    oracle = DijkstraSearch(reversed_graph(g) if reverse else g)
    return oracle.one_to_all(seeds)


def sample_points(router: Router, rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(arc, fraction along its geometry, lon/lat) of k random points on arcs (straight chains only, for exactness)."""
    g = router.graph
    gf = np.asarray(g.geom_first)
    chains = np.asarray(g.arc_geom) >> 1
    straight = np.flatnonzero(gf[chains + 1] - gf[chains] == 2)
    arcs = rng.choice(straight, k)
    f = rng.random(k)
    c = chains[arcs]
    rev = (np.asarray(g.arc_geom)[arcs] & 1).astype(bool)
    a = np.where(rev, gf[c] + 1, gf[c])
    b = np.where(rev, gf[c], gf[c] + 1)
    lon = (g.geom_lon[a] + f * (g.geom_lon[b].astype(np.float64) - g.geom_lon[a])) / 1e7
    lat = (g.geom_lat[a] + f * (g.geom_lat[b].astype(np.float64) - g.geom_lat[a])) / 1e7
    return arcs, f, np.stack([lon, lat], axis=1)


def _length(coords: np.ndarray) -> float:
    return float(haversine_m(coords[:-1, 0], coords[:-1, 1], coords[1:, 0], coords[1:, 1]).sum())


def distance_to_pieces(p: np.ndarray, pieces: np.ndarray) -> float:
    """Metres from a point to the nearest piece (local equirectangular frame)."""
    if len(pieces) == 0:
        return np.inf
    kx = 111_195.0 * np.cos(np.radians(p[1]))
    ky = 111_195.0
    ax, ay = (pieces[:, 0] - p[0]) * kx, (pieces[:, 1] - p[1]) * ky
    bx, by = (pieces[:, 2] - p[0]) * kx, (pieces[:, 3] - p[1]) * ky
    ex, ey = bx - ax, by - ay
    ee = ex * ex + ey * ey
    t = np.clip(-(ax * ex + ay * ey) / np.where(ee > 0, ee, 1), 0, 1)
    return float(np.min(np.hypot(ax + t * ex, ay + t * ey)))


@pytest.mark.parametrize(("reverse", "minutes"), [(False, 1.5), (False, 4), (True, 3)])
def test_isochrone_contains_what_dijkstra_reaches(router: Router, reverse: bool, minutes: float) -> None:
    g = router.graph
    phantom = router.snap_waypoints([WEST])[0]
    limit = int(minutes * 600)
    pieces, _ = router.query().isochrone(phantom, [limit], reverse=reverse)
    geometry, tol = contour_polygons(pieces[0][:, 0], pieces[0][:, 1], pieces[0][:, 2], pieces[0][:, 3], BUFFER_M)
    # the reference: labels from the same seeds, the same piece rule on them
    seeds = router.space.seeds(phantom, not reverse).seeds
    labels = reference_labels(router, seeds, reverse)
    own_arcs = {phantom.fwd_arc, phantom.bwd_arc}
    if router.edges is None:
        ref_pieces = reached_pieces(g, labels, labels < INF_WEIGHT, limit, not reverse, g.arc_duration)
    else:  # per road arc: when the reference reaches its start (forward) or from its end (backward)
        node_arc = np.asarray(router.edges.node_arc)
        w_node = np.asarray(g.arc_duration)[node_arc].astype(np.int64)
        val = np.where(labels < INF_WEIGHT, labels - (w_node if not reverse else 0), INF_WEIGHT)
        start = np.full(g.num_arcs, INF_WEIGHT, dtype=np.int64)
        np.minimum.at(start, node_arc, val)
        ref_pieces = reached_arc_pieces(g, start, start < INF_WEIGHT, limit, not reverse, g.arc_duration)
    own = router.query()._own_chain(phantom, reverse, "duration", 0)  # the snapped point's own chain, as the engine
    ref_pieces = np.concatenate(
        [ref_pieces, *(point_pieces(c, _length(c) * min(1.0, limit / max(w, 1))) for c, w in own)]
    )
    rng = np.random.default_rng(5 if reverse else int(minutes * 10))
    arcs, f, pts = sample_points(router, rng, 800)  # 400 left only 10 inside 1.5 min once the turns became OSRM's
    inside = outside = 0
    for arc, frac, p in zip(arcs, f, pts, strict=True):
        w = int(g.arc_duration[arc])
        if router.edges is None:
            node = int(g.arc_tail[arc]) if not reverse else int(g.arc_head[arc])
            need = labels[node] + (frac * w if not reverse else (1 - frac) * w)
        elif arc in own_arcs and not reverse:
            continue  # the source's own arc: its label is the seed's, not a start time
        else:
            need = start[arc] + (frac * w if not reverse else (1 - frac) * w)
        msg = f"reverse={reverse} minutes={minutes} arc={arc} f={frac:.3f} needs {need} of {limit}"
        got = point_in_geometry(float(p[0]), float(p[1]), geometry)
        if need <= limit - 1:  # reached (1 ds from the boundary: the cut point is exact, the label is integer)
            assert got, msg
            inside += 1
        elif distance_to_pieces(p, ref_pieces) > BUFFER_M + tol + 1.0:
            assert not got, msg
            outside += 1
    assert inside > 10 and outside > 10, (inside, outside)


def test_isochrone_distance_metric_and_nesting(router: Router) -> None:
    phantom = router.snap_waypoints([WEST])[0]
    pieces, settled = router.query().isochrone(phantom, [5000, 10000], metric="distance")  # 500 m and 1 km
    assert settled > 0 and len(pieces[1]) > len(pieces[0]) > 0
    lengths = [float(haversine_m(p[:, 0], p[:, 1], p[:, 2], p[:, 3]).sum()) for p in pieces]
    assert lengths[1] > lengths[0]


def test_avoid_equals_dijkstra_without_the_area(router: Router) -> None:
    g = router.graph
    areas = parse_compact(BOX)
    forbidden = router.forbidden_arcs(areas)
    assert 50 < len(forbidden) < g.num_arcs // 2
    sg = router.search_graph
    keep = np.ones(sg.num_arcs, dtype=bool)
    if router.edges is None:
        keep[forbidden] = False
    else:  # no turn onto a forbidden road arc (worked out here, not with the engine's mapping)
        keep &= ~np.isin(np.asarray(router.edges.node_arc)[np.asarray(sg.arc_head)], forbidden)
    oracle = DijkstraSearch(filtered(sg, keep))
    rng = np.random.default_rng(9)
    x0, y0, x1, y1 = g.manifest["bbox"]
    done = 0
    for _ in range(40):
        pts = [(rng.uniform(x0, x1), rng.uniform(y0, y1)) for _ in range(2)]
        phs = router.snap_waypoints(pts)
        try:
            router.check_outside(phs, forbidden)
        except Exception:  # noqa: BLE001 - a waypoint inside the box: not a test case
            continue
        for alg in ("alt", "bidirectional-astar", "astar", "dijkstra"):
            try:
                route = router.query().route(phs, alg, RouteOptions(algorithm=alg, forbidden=forbidden))
            except Exception as exc:  # noqa: BLE001
                assert type(exc).__name__ == "NoRoute", exc
                continue
            arcs = np.concatenate([leg.piece_arc for leg in route.legs])
            assert not np.isin(arcs, forbidden).any(), alg
        # the weight of the network part equals the oracle's (seeds as the router builds them)
        src = router.space.seeds(phs[0], True).seeds
        dst = router.space.seeds(phs[1], False).seeds
        from app.engine.search.searches import CoreSearch, SearchOptions

        res = CoreSearch(sg, "alt").run(src, dst, SearchOptions(forbidden=router.search_forbidden(forbidden)))
        assert res.weight == oracle.run(src, dst).weight
        done += 1
    assert done > 10


# --- through the server -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(bundled_graph: Path):  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60) as c:
        yield c


def test_avoid_http(client: httpx.Client) -> None:
    params = {"from": f"{WEST[0]},{WEST[1]}", "to": f"{EAST[0]},{EAST[1]}"}
    plain = client.get("/route", params=params).json()
    avoided = client.get("/route", params={**params, "avoid": BOX}).json()
    assert avoided["properties"]["algorithm"] == "alt"
    assert avoided["properties"]["duration_s"] >= plain["properties"]["duration_s"]
    box = parse_compact(BOX)
    line = np.array(avoided["geometry"]["coordinates"])
    inside = (
        (line[:, 0] > box.bbox[0] + 1e-5) & (line[:, 0] < box.bbox[2] - 1e-5)
        & (line[:, 1] > box.bbox[1] + 1e-5) & (line[:, 1] < box.bbox[3] - 1e-5)
    )  # fmt: skip
    assert not inside.any(), "the route enters the area to avoid"
    ring = [[float(x), float(y)] for x, y in (p.split(",") for p in BOX.split(";"))]
    body = {
        "coordinates": [list(WEST), list(EAST)],
        "avoid": {"type": "Polygon", "coordinates": [[*ring, ring[0]]]},
        "algorithm": "bidirectional-astar",
    }
    posted = client.post("/route", json=body).json()
    assert posted["properties"]["duration_s"] == avoided["properties"]["duration_s"]


@pytest.mark.parametrize(
    ("avoid", "reason"),
    [
        ("7.42,43.73;7.43,43.73", "at least 3"),
        ("7.42,43.73;7.43,43.74;7.43,43.73;7.42,43.74", "self-intersecting"),
        (";".join(f"{7.42 + i * 1e-5},{43.73 + (i % 2) * 1e-3}" for i in range(1200)), "vertices"),
        ("seven,north", "number"),
    ],
)
def test_avoid_bad_geometry_is_a_400_with_the_reason(client: httpx.Client, avoid: str, reason: str) -> None:
    r = client.get("/route", params={"from": f"{WEST[0]},{WEST[1]}", "to": f"{EAST[0]},{EAST[1]}", "avoid": avoid})
    assert r.status_code == 400 and reason in r.json()["message"], r.text


def test_avoid_refusals(client: httpx.Client) -> None:
    body = {"coordinates": [list(WEST), list(EAST)], "avoid": {"type": "Polygon", "coordinates": [[[7.42, 43.73],
            [7.43, 43.73], [7.43, 43.74], [7.42, 43.74]]]}}  # fmt: skip
    r = client.post("/route", json=body)
    assert r.status_code == 400 and "closed" in r.json()["message"], r.text
    r = client.post("/route", json={**body, "avoid": {"type": "Point", "coordinates": [7.42, 43.73]}})
    assert r.status_code == 400, r.text
    inside = {"from": "7.4250,43.7370", "to": f"{EAST[0]},{EAST[1]}", "avoid": BOX}
    r = client.get("/route", params=inside)
    assert r.status_code == 400 and "inside an area to avoid" in r.json()["message"], r.text
    r = client.get("/route", params={"from": f"{WEST[0]},{WEST[1]}", "to": f"{EAST[0]},{EAST[1]}", "avoid": BOX,
                                     "algorithm": "ch"})  # fmt: skip
    assert r.status_code == 400 and "use algorithm alt" in r.json()["message"], r.text
    # an area around the whole map: nothing can avoid it
    whole = "7.40,43.72;7.45,43.72;7.45,43.76;7.40,43.76"
    r = client.get("/route", params={"from": f"{WEST[0]},{WEST[1]}", "to": f"{EAST[0]},{EAST[1]}", "avoid": whole})
    assert r.status_code == 400 and r.json()["code"] in ("NoRoute", "InvalidValue"), r.text


def test_isochrone_http(client: httpx.Client) -> None:
    fc = client.get("/isochrone", params={"point": f"{WEST[0]},{WEST[1]}", "minutes": "1,3"}).json()
    assert fc["type"] == "FeatureCollection" and [f["properties"]["value"] for f in fc["features"]] == [3, 1]
    for f in fc["features"]:
        assert f["geometry"]["type"] == "MultiPolygon" and f["geometry"]["coordinates"]
        assert f["properties"]["unit"] == "min" and f["properties"]["tolerance_m"] > 0
    big, small = fc["features"]
    assert big["properties"]["pieces"] > small["properties"]["pieces"]
    rev = client.get("/isochrone", params={"point": f"{WEST[0]},{WEST[1]}", "minutes": "2", "reverse": "true"}).json()
    assert rev["features"][0]["properties"]["reverse"] is True
    dist = client.get("/isochrone", params={"point": f"{WEST[0]},{WEST[1]}", "distance_m": "800"}).json()
    assert dist["features"][0]["properties"]["unit"] == "m"
    for bad in ({"minutes": "0"}, {"minutes": "1", "distance_m": "5"}, {}, {"minutes": "x"}, {"minutes": "999"}):
        r = client.get("/isochrone", params={"point": f"{WEST[0]},{WEST[1]}", **bad})
        assert r.status_code == 400, (bad, r.text)

"""Snapping onto small drawn maps: mid-edge, multi-point chains, oneways, beyond the last node, radius, components.

Maps are ASCII pictures (one character = `SCALE_M` metres, one line = `SCALE_M` metres) whose letters are points;
ways are letter strings. Letters at way ends or shared by ways become graph nodes, the others shape points, as the
real pipeline's degree-2 compression does. Arc weights are travel times at `SPEED_MPS` (1 ds per metre).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from app.engine.data import chain_index
from app.engine.errors import InvalidValue, NoSegment
from app.engine.snap.index import _project
from app.engine.snap.snapper import Snapper, choose, haversine
from app.engine.types import Phantom, new_phantom
from floor.format.graph import Graph, graph_in_memory
from floor.format.units import COORD_SCALE, FLAG_FERRY
from floor.kernels.geometry import osrm_distance_m
from floor.kernels.measure import measured_max_speed_mps
from preprocessing.graph import finalize_arrays

SCALE_M = 100.0
SPEED_MPS = 10.0
ORIGIN = (7.0, 43.0)
M_PER_DEG = 6_371_008.8 * math.pi / 180


def to_lonlat(x_m: float, y_m: float) -> tuple[float, float]:
    """Local metres (x east, y north of ORIGIN) -> degrees."""
    return ORIGIN[0] + x_m / (M_PER_DEG * math.cos(math.radians(ORIGIN[1]))), ORIGIN[1] + y_m / M_PER_DEG


def parse_picture(picture: str) -> dict[str, tuple[float, float]]:
    """Letter -> (lon, lat) of an ASCII picture."""
    pts = {}
    for row, line in enumerate(picture.strip("\n").splitlines()):
        for col, ch in enumerate(line):
            if ch.isalpha():
                pts[ch] = to_lonlat(col * SCALE_M, -row * SCALE_M)
    return pts


def build_map(
    picture: str | dict[str, tuple[float, float]], ways: list[str | tuple[str, str]], speed_mps: float = SPEED_MPS
) -> tuple[Graph, dict[str, tuple[float, float]]]:
    """A graph from a picture and ways: "abc" two-way, ("abc", "oneway") forward only, ("abc", "reverse") backward
    only, ("abc", "ferry") a two-way ferry; an optional third item is the way's speed in m/s."""
    pts = parse_picture(picture) if isinstance(picture, str) else dict(picture)
    ways = [(w, "both", speed_mps) if isinstance(w, str) else (*w, speed_mps)[:3] for w in ways]
    uses: dict[str, int] = {}
    for w, _, _ in ways:
        for i, ch in enumerate(w):
            uses[ch] = uses.get(ch, 0) + (2 if i in (0, len(w) - 1) else 1)
    node_letters = sorted(ch for ch, k in uses.items() if k >= 2)
    node_id = {ch: i for i, ch in enumerate(node_letters)}
    tail, head, weight, dist, geom, flags = [], [], [], [], [], []
    glon, glat, gfirst = [], [], [0]
    for w, kind, speed in ways:
        cuts = [i for i, ch in enumerate(w) if ch in node_id]
        for a, b in zip(cuts, cuts[1:], strict=False):
            seq = w[a : b + 1]
            c = len(gfirst) - 1
            length = sum(haversine(*pts[p], *pts[q]) for p, q in zip(seq, seq[1:], strict=False))
            # the weight is the drawing's (its metres on the sphere), the distance OSRM's formula's, as the build's
            fixed = [(round(pts[ch][0] * COORD_SCALE), round(pts[ch][1] * COORD_SCALE)) for ch in seq]
            fixed = [(x / COORD_SCALE, y / COORD_SCALE) for x, y in fixed]  # as stored (1e-7 degrees)
            osrm_m = sum(osrm_distance_m(*p, *q) for p, q in zip(fixed, fixed[1:], strict=False))
            for ch in seq:
                glon.append(round(pts[ch][0] * COORD_SCALE))
                glat.append(round(pts[ch][1] * COORD_SCALE))
            gfirst.append(len(glon))
            wt, dm = max(1, round(length / speed * 10)), round(osrm_m * 10)
            u, v = node_id[seq[0]], node_id[seq[-1]]
            fl = FLAG_FERRY if kind == "ferry" else 0
            if kind in ("both", "oneway", "ferry"):
                tail.append(u), head.append(v), weight.append(wt), dist.append(dm), geom.append(2 * c), flags.append(fl)
            if kind in ("both", "reverse", "ferry"):
                tail.append(v), head.append(u), weight.append(wt), dist.append(dm)
                geom.append(2 * c + 1), flags.append(fl)
    m = len(tail)
    arrays = finalize_arrays(
        {
            "node_lon": np.array([round(pts[ch][0] * COORD_SCALE) for ch in node_letters]),
            "node_lat": np.array([round(pts[ch][1] * COORD_SCALE) for ch in node_letters]),
            "node_osm_id": np.arange(len(node_letters)) + 100,
        },
        {
            "arc_tail": np.array(tail),
            "arc_head": np.array(head),
            "arc_weight": np.array(weight),
            "arc_dist": np.array(dist),
            "arc_geom": np.array(geom),
            "arc_name": np.ones(m, dtype=np.int32),
            "arc_ref": np.zeros(m, dtype=np.int32),
            "arc_class": np.zeros(m, dtype=np.uint8),
            "arc_flags": np.array(flags, dtype=np.uint8),
        },
        {"geom_first": np.array(gfirst), "geom_lon": np.array(glon), "geom_lat": np.array(glat)},
        ["", "Main Street"],
    )
    return graph_in_memory(arrays, {"profile": "testbot", "max_speed_mps": measured_max_speed_mps(arrays)}), pts


def at(x_m: float, y_m: float) -> tuple[float, float]:
    """A query point in picture metres (column * SCALE_M, -row * SCALE_M)."""
    return to_lonlat(x_m, y_m)


def check_phantom(graph: Graph, ph: Phantom) -> None:
    """Partial figures add up to the arcs' totals; absent arcs carry zeros."""
    for arc, wb, wa, db, da in (
        (ph.fwd_arc, ph.fwd_weight_before, ph.fwd_weight_after, ph.fwd_dist_before, ph.fwd_dist_after),
        (ph.bwd_arc, ph.bwd_weight_before, ph.bwd_weight_after, ph.bwd_dist_before, ph.bwd_dist_after),
    ):
        if arc < 0:
            assert wb == wa == db == da == 0
        else:
            assert wb + wa == graph.arc_weight[arc] and db + da == graph.arc_dist[arc]
            assert min(wb, wa, db, da) >= 0
    if ph.fwd_arc >= 0:
        assert graph.arc_geom[ph.fwd_arc] == 2 * ph.chain
    if ph.bwd_arc >= 0:
        assert graph.arc_geom[ph.bwd_arc] == 2 * ph.chain + 1


LINE = """
a    b    c
"""


def test_mid_edge_point() -> None:
    g, pts = build_map(LINE, ["abc"])  # b is a shape point: one chain a..c with two segments
    s = Snapper(g)
    ph = s.snap(*at(250, 20))  # 20 m north of the middle of a-c's first half... second segment's start half
    assert ph.chain == 0 and ph.segment == 0
    assert ph.distance_m == pytest.approx(20, abs=0.05)
    # the snapped point is OSRM's: a 1e-6 degree fixed-point coordinate
    assert ph.lon == round(at(250, 0)[0], 6) and ph.lat == pytest.approx(ORIGIN[1], abs=1e-7)
    # 250 m of 1000 m: a quarter of the weight before (ds = m at 10 m/s)
    assert ph.fwd_weight_before == 250 and ph.fwd_weight_after == 750
    assert ph.bwd_weight_before == 750 and ph.bwd_weight_after == 250
    # a quarter of the arc's OSRM length (1003 m at 43 degrees, drawn as 1000 m on the sphere), within a decimetre
    # (the snapped point is rounded to 1e-6 degrees)
    d = int(g.arc_dist[ph.fwd_arc])
    assert ph.fwd_dist_before == pytest.approx(d / 4, abs=1) and ph.fwd_dist_before + ph.bwd_dist_before == d
    assert ph.name == "Main Street" and ph.osm_nodes == (100, 101) and ph.component == 0
    check_phantom(g, ph)
    ph2 = s.snap(*at(700, -30))
    assert ph2.segment == 1 and ph2.fwd_weight_before == 700 and ph2.distance_m == pytest.approx(30, abs=0.05)
    check_phantom(g, ph2)


ELL = """
a
b
c  d  e
"""


def test_bent_chain_and_vertex() -> None:
    g, _ = build_map(ELL, ["abcde"])
    s = Snapper(g)
    # outside the corner c: the nearest point is the corner itself, snapped exactly onto the shape point
    ph = s.snap(*at(-30, -230))
    assert ph.lon == g.geom_lon[2] / COORD_SCALE and ph.lat == g.geom_lat[2] / COORD_SCALE
    # OSRM's distances (the WGS84 ruler at 43 degrees) differ from the local metric frame of the drawing by ~0.3 %
    assert abs(ph.fwd_weight_before - 200) <= 1 and ph.distance_m == pytest.approx(math.hypot(30, 30), rel=5e-3)
    check_phantom(g, ph)
    ph = s.snap(*at(150, -190))
    assert ph.segment == 2 and ph.fwd_weight_before == 350


def test_beside_a_oneway() -> None:
    g, _ = build_map(LINE, [("ac", "oneway"), ("ca", "oneway")])  # two separate oneway chains, same place
    ch = chain_index(g)
    assert (ch.fwd_arc >= 0).all() and (ch.bwd_arc < 0).all()
    ph = Snapper(g).snap(*at(300, 10))
    assert ph.bwd_arc == -1 and ph.fwd_arc >= 0
    check_phantom(g, ph)
    g, _ = build_map(LINE, [("abc", "reverse")])
    ph = Snapper(g).snap(*at(400, 10))
    assert ph.fwd_arc == -1 and ph.bwd_arc >= 0
    assert ph.bwd_weight_before == 600 and ph.bwd_weight_after == 400  # measured from c, the bwd arc's tail
    check_phantom(g, ph)


def test_beyond_the_last_node() -> None:
    g, pts = build_map(LINE, ["abc"])
    ph = Snapper(g).snap(*at(1300, 40))
    assert (ph.lon, ph.lat) == (g.node_lon[1] / COORD_SCALE, g.node_lat[1] / COORD_SCALE)
    assert ph.fwd_weight_after == 0 and ph.bwd_weight_before == 0 and ph.segment == 1
    assert ph.distance_m == pytest.approx(math.hypot(300, 40), rel=5e-3)  # OSRM's ruler vs the local frame


def test_radius_limit() -> None:
    g, _ = build_map(LINE, ["abc"])
    s = Snapper(g)
    far = at(500, 5000)
    with pytest.raises(NoSegment):
        s.snap(*far, radius_m=1000)
    assert s.snap(*far).distance_m == pytest.approx(5000, rel=1e-3)
    assert s.snap(*far, radius_m=5100).chain == 0
    with pytest.raises(NoSegment):
        s.nearest(*far, 3, radius_m=100)
    with pytest.raises(InvalidValue):
        s.snap(*far, radius_m=-1)


ISLAND = """
a         b

    c  d
"""


def test_tiny_component_candidates_and_choice() -> None:
    # main road a-b-e (3 nodes, the largest SCC); island c-d: a 2-node SCC, tiny
    pic = parse_picture(ISLAND) | {"e": to_lonlat(1000, 300)}
    g, _ = build_map(pic, ["ab", "be", "cd"])
    assert list(g.node_component) == [0, 0, 1, 1, 0]
    s = Snapper(g, min_component_size=3)  # the main road (3 nodes) big, the island tiny
    q = at(500, -190)  # 10 m from the island, 190 m from the main road
    cand = s.candidates(*q)
    assert cand.nearest.component == 1 and cand.nearest.distance_m == pytest.approx(10, abs=0.1)
    assert cand.big is not None and cand.big.component == 0 and cand.big.distance_m == pytest.approx(190, rel=5e-3)
    assert cand.tiny
    assert s.snap(*q).component == 1  # one point alone: its nearest segment
    main = s.candidates(*at(100, 10))
    assert main.big is main.nearest and not main.tiny
    island = s.candidates(*at(700, -210))
    # a request inside the island stays there; one that also touches the main road moves the island point
    assert [p.component for p in choose([cand, island])] == [1, 1]
    assert [p.component for p in choose([cand, main])] == [0, 0]
    assert [p.component for p in choose([main, cand, island])] == [0, 0, 0]
    near_only = s.candidates(*q, radius_m=100)  # nothing big within 100 m: the island point cannot move
    assert near_only.big is None and choose([near_only, main])[0].component == 1
    near = s.nearest(*q, 5)
    assert [p.component for p in near] == [1, 0, 0]
    assert [p.distance_m for p in near] == sorted(p.distance_m for p in near)


def test_min_component_size_makes_small_networks_tiny() -> None:
    pic = parse_picture(ISLAND) | {"e": to_lonlat(1000, 300)}
    g, _ = build_map(pic, ["ab", "be", "cd"])
    q = at(500, -190)
    assert Snapper(g, min_component_size=2).candidates(*q).big.component == 1  # both components big: nearest wins
    assert Snapper(g, min_component_size=3).candidates(*q).big.component == 0


def test_ferries_are_no_start_points() -> None:
    pic = parse_picture(ISLAND)
    g, _ = build_map(pic, ["ab", ("cd", "ferry")])
    assert Snapper(g).snap(*at(500, -190)).chain == 0
    with pytest.raises(NoSegment, match=r"within 50 m .*the nearest is 190 m away"):
        Snapper(g).snap(*at(500, -190), radius_m=50)


@pytest.mark.parametrize(
    "lon,lat",
    [(181, 0), (-180.5, 0), (0, 90.01), (0, -91), (float("nan"), 0), (0, float("inf")), ("x", 0), (None, 1)],
)
def test_invalid_coordinates(lon: object, lat: object) -> None:
    g, _ = build_map(LINE, ["abc"])
    s = Snapper(g)
    with pytest.raises(InvalidValue):
        s.snap(lon, lat)  # type: ignore[arg-type]
    with pytest.raises(InvalidValue):
        s.nearest(lon, lat, 1)  # type: ignore[arg-type]


def test_nearest_distinct_chains() -> None:
    g, _ = build_map(ELL + "\nf  g  h\n", ["abc", "cde", "cf", "fgh"])
    s = Snapper(g)
    near = s.nearest(*at(100, -210), 10)
    assert len(near) == len({p.chain for p in near}) == 4
    assert [p.distance_m for p in near] == sorted(p.distance_m for p in near)
    assert near[0].chain == 1 and near[0].distance_m == pytest.approx(10, abs=0.05)
    assert len(s.nearest(*at(100, -210), 2)) == 2
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidValue):
            s.nearest(*at(0, 0), bad)  # type: ignore[arg-type]


def random_map(rng: np.random.Generator, n: int = 60) -> Graph:
    """Random chains of 2..6 points near ORIGIN, lengths from 1 m to 20 km (few long ones)."""
    pts = {}
    ways = []
    letters = iter(chr(c) for c in range(0x4E00, 0x9FFF))  # CJK ideographs are alphabetic: plenty of letters
    for _ in range(n):
        k = int(rng.integers(2, 7))
        step = float(rng.choice([1.0, 30.0, 300.0, 5000.0], p=[0.2, 0.5, 0.25, 0.05]))
        x, y = rng.uniform(-3000, 3000, 2)
        name = ""
        for _ in range(k):
            ch = next(letters)
            pts[ch] = to_lonlat(x, y)
            name += ch
            x, y = x + rng.normal(0, step), y + rng.normal(0, step)
        ways.append(name if rng.random() < 0.7 else (name, "oneway"))
    return build_map(pts, ways)[0]


def local_m(q: tuple[float, float], ph: Phantom) -> float:
    """Distance from q to the phantom in the snapper's local equirectangular frame centred on q."""
    ky = M_PER_DEG
    kx = ky * math.cos(math.radians(q[1]))
    return math.hypot((ph.lon - q[0]) * kx, (ph.lat - q[1]) * ky)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_snap_is_exact_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    g = random_map(rng)
    s = Snapper(g)
    gf = np.asarray(g.geom_first)
    segs = np.concatenate([np.arange(gf[c], gf[c + 1] - 1) for c in range(len(gf) - 1)])
    for _ in range(200):
        q = to_lonlat(*rng.uniform(-6000, 6000, 2))
        d2, _ = _project(segs, q[0], q[1], g.geom_lon, g.geom_lat)
        ph = s.snap(*q)
        best = math.sqrt(d2.min())
        # the snapped point is OSRM's: its projection in Web Mercator rounded to 1e-6 degrees, within one 1e-6 step of
        # ours (`_phantom_figures`): up to ~0.2 m off the local frame's exact projection
        assert local_m(q, ph) == pytest.approx(best, rel=1e-9, abs=0.2), f"seed {seed} query {q}"
        assert ph.distance_m == pytest.approx(best, rel=5e-3, abs=0.2)  # OSRM's ruler and point vs the local frame
        check_phantom(g, ph)
        near = s.nearest(*q, 5)
        chain_of = np.searchsorted(gf, segs, side="right") - 1
        per_chain = np.full(len(gf) - 1, np.inf)
        np.minimum.at(per_chain, chain_of, np.sqrt(d2))
        want = np.sort(per_chain)[:5]
        got = np.array([local_m(q, p) for p in near])
        assert got == pytest.approx(want, rel=1e-9, abs=0.1), f"seed {seed} query {q}"


def test_bearing_filter() -> None:
    g, _ = build_map(LINE, [("ac", "oneway"), ("ca", "oneway")])  # a->c heads east, c->a west
    s = Snapper(g)
    east = s.snap(*at(300, 10), bearing=(90, 30))
    west = s.snap(*at(300, 10), bearing=(270, 30))
    assert east.chain != west.chain
    assert g.arc_tail[east.fwd_arc] < g.arc_head[east.fwd_arc]  # node 0 = a (west end), 1 = c
    assert g.arc_tail[west.fwd_arc] > g.arc_head[west.fwd_arc]
    with pytest.raises(NoSegment):
        s.snap(*at(300, 10), bearing=(0, 45))
    g, _ = build_map(LINE, ["abc"])  # two-way: the bearing picks the direction
    s = Snapper(g)
    ph = s.snap(*at(300, 10), bearing=(95, 20))
    assert ph.fwd_arc >= 0 and ph.bwd_arc == -1 and ph.bwd_weight_before == ph.bwd_weight_after == 0
    ph = s.snap(*at(300, 10), bearing=(265, 20))
    assert ph.fwd_arc == -1 and ph.bwd_arc >= 0 and ph.fwd_weight_before == ph.fwd_weight_after == 0
    both = s.snap(*at(300, 10), bearing=(0, 180))
    assert both.fwd_arc >= 0 and both.bwd_arc >= 0
    near = s.nearest(*at(300, 10), 3, bearing=(90, 10))
    assert len(near) == 1 and near[0].fwd_arc >= 0 and near[0].bwd_arc == -1
    for bad in ((400, 10), (10, 200), (-1, 5), ("x", 1), (1,)):
        with pytest.raises(InvalidValue):
            s.snap(*at(0, 0), bearing=bad)  # type: ignore[arg-type]


def _both_ways(
    snapper: Snapper,
    answers: dict[bool, list[object]],
    ask: Callable[..., object],
    *args: object,
    **kw: object,
) -> None:
    """`ask(*args, **kw)` with `snapper`'s fused kernels (its `hot_path` switch) on and off, each answer (or the
    `NoSegment` message) appended to `answers[flag]`."""
    for flag in (True, False):
        snapper.hot_path.fused = flag
        try:
            answers[flag].append(ask(*args, **kw))
        except NoSegment as exc:
            answers[flag].append(str(exc))


def test_one_call_snapping_equals_the_steps(bundled_graph, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Snapper.candidates` in one kernel call (`_snap_point`) and step by step (what a first start serves until
    that kernel is compiled): the same candidates, with bearings, radiuses and excluded classes among the points."""
    import random

    from app.engine.data import load

    g = load(bundled_graph)
    snapper = Snapper(g)
    rng = random.Random(3)
    lon, lat = g.node_lon / COORD_SCALE, g.node_lat / COORD_SCALE

    def candidate_parts(*args: Any, **kw: Any) -> tuple[object, ...]:
        c = snapper.candidates(*args, **kw)
        return c.nearest, c.big, c.alternatives

    answers: dict[bool, list[object]] = {True: [], False: []}
    tiny = junction = 0
    for i in range(1500):
        v = rng.randrange(len(lon))
        x, y = float(lon[v]) + rng.uniform(-6e-4, 6e-4), float(lat[v]) + rng.uniform(-6e-4, 6e-4)
        kw: dict[str, object] = {}
        if i % 7 == 1:
            kw["bearing"] = (rng.uniform(0, 360), rng.uniform(5, 90))
        if i % 11 == 2:
            kw["radius_m"] = rng.uniform(1, 40)
        if i % 13 == 3:
            kw["exclude_mask"] = 1
        _both_ways(snapper, answers, candidate_parts, x, y, **kw)
        got = answers[True][-1]
        if isinstance(got, tuple):
            tiny += got[0] != got[1]
            junction += bool(got[2])
    assert answers[True] == answers[False]
    assert tiny and junction, "points next to tiny components and on junctions are among them"


def test_new_phantom_is_the_dataclass_phantom() -> None:
    """`new_phantom` (snapping's fast constructor) builds what `Phantom(...)` builds: equal, hashing alike, the same
    repr (so the same value types), the fields not given at their defaults; more values than fields are refused."""
    full = (7.1, 43.2, 7.15, 43.25, 3.5, 5, 6, 7, -1, 9, 10, 11, 12, 0, 0, 0, 0, 1, "Rua", (11, 12), 1, 2, 0, 0, (5, 8))
    for values in (full, full[:18], full[:20], full[:24]):
        a, b = new_phantom(*values), Phantom(*values)
        assert a == b and hash(a) == hash(b) and repr(a) == repr(b)
    assert new_phantom(*full[:18]).at_chains is None and new_phantom(*full[:18]).name == ""
    with pytest.raises(TypeError):
        new_phantom(*full, 1)


def test_one_call_nearest_equals_the_steps(bundled_graph, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Snapper.nearest` in one kernel call (`_nearest_point`) and step by step: the same phantoms in the same order
    for several numbers of results, radiuses, bearings and excluded classes, off the roads and on shape points."""
    import random

    from app.engine.data import load

    g = load(bundled_graph)
    snapper = Snapper(g)
    rng = random.Random(4)
    glon, glat = g.geom_lon / COORD_SCALE, g.geom_lat / COORD_SCALE
    answers: dict[bool, list[object]] = {True: [], False: []}
    for i in range(1200):
        p = rng.randrange(len(glon))
        x, y = float(glon[p]), float(glat[p])
        if i % 3:
            x, y = x + rng.uniform(-2e-3, 2e-3), y + rng.uniform(-2e-3, 2e-3)
        kw: dict[str, object] = {"number": rng.choice((1, 1, 2, 3, 5, 12))}
        if i % 5 == 1:
            kw["bearing"] = (rng.uniform(0, 360), rng.uniform(5, 90))
        if i % 4 == 2:
            kw["radius_m"] = rng.uniform(1, 80)
        if i % 9 == 3:
            kw["exclude_mask"] = 1
        _both_ways(snapper, answers, snapper.nearest, x, y, **kw)
    assert answers[True] == answers[False]
    assert sum(isinstance(a, list) and len(a) > 2 for a in answers[True]) > 100  # many answers of several phantoms
    assert sum(isinstance(a, str) for a in answers[True]) > 10  # and radiuses that left none

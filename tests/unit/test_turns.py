"""Turn costs, turn restrictions and the edge-based search graph (`preprocessing.turns`, `app.engine.route.edges`).

- drawn maps (testbot, whose turn rule is 20 s per u-turn; 100 m of primary = 10 s) with every restriction kind,
  routed through a real server (OSRM and native API, every algorithm), times by mental arithmetic; approaches,
  continue_straight and car's routability weight;
- the edge-based graph against an independent oracle: networkx Dijkstra over (last arcs driven) states on random
  road graphs with random forbidden sequences, using only the turn table;
- every algorithm equals the reference Dijkstra on the edge-based graph, on a real extract with its restrictions.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import httpx
import networkx as nx
import numpy as np
import pytest

from app.engine.data import load
from app.engine.errors import NoRoute
from app.engine.router import Router
from app.engine.search.algorithms import ALGORITHMS
from floor.format.arrays import search_view_arrays
from floor.format.graph import graph_in_memory
from harness import api_server
from harness.asciimap import build
from preprocessing.graph import arrays_from_arcs
from preprocessing.osm.profiles import car, testbot
from preprocessing.osm.profiles.base import Turns, sigmoid_turn_s
from preprocessing.pipeline import preprocess
from preprocessing.turns import edge_based_graph, turn_table
from tests.unit.test_router import RefDijkstra

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "osm"
PRIMARY = {"highway": "primary"}

PLUS = """
 a
bcd
 e
"""
PLUS_WAYS = [("ac", PRIMARY), ("bc", PRIMARY), ("dc", PRIMARY), ("ec", PRIMARY)]


def restriction(kind: str, frm: str, via: str, to: str, **tags: str) -> tuple[list, dict]:
    """A restriction relation over drawn ways: `via` is a node letter, or ways joined by "+" ("bc+cd")."""
    members = [("way", frm, "from")]
    if len(via) == 1:
        members.append(("node", via, "via"))
    else:
        members += [("way", w, "via") for w in via.split("+")]
    members.append(("way", to, "to"))
    return members, {"type": "restriction", "restriction": kind, **tags}


def served_seconds(built, routes: str) -> dict[tuple[str, str], float]:  # type: ignore[no-untyped-def]
    """Through a real server on the built graph (CH): the OSRM duration of each letter pair in `routes` ("eb,ed"),
    checked against the native route with every algorithm; the server stops afterwards."""
    proc, base = api_server.start(built.graph.path)
    out = {}
    try:
        with httpx.Client(base_url=base, timeout=30) as c:
            for pair in routes.split(","):
                a, b = (",".join(f"{x / 1e7:.7f}" for x in built.coords[k]) for k in pair)
                j = c.get(f"/route/v1/driving/{a};{b}").json()
                assert j["code"] == "Ok", (pair, j)
                out[(pair[0], pair[1])] = j["routes"][0]["duration"]
                for alg in ALGORITHMS:
                    f = c.get("/route", params={"from": a, "to": b, "algorithm": alg}).json()
                    assert f["properties"]["duration_s"] == pytest.approx(out[(pair[0], pair[1])]), (pair, alg)
    finally:
        api_server.stop(proc)
    return out


# -- turn costs ------------------------------------------------------------------------------------------------------


def test_car_turn_sigmoid_is_osrms() -> None:
    """car.lua's sigmoid at the angles the reference digest lists (seconds, 3 decimals)."""
    right = sigmoid_turn_s(np.array([0, 30, 45, 90, 135, 180.0]), 7.5, 1.075)
    left = sigmoid_turn_s(np.array([-30, -45, -90, -135, -179.0]), 7.5, 1.075)
    assert np.round(right, 3).tolist() == [0.007, 0.052, 0.14, 2.105, 6.669, 7.455]
    assert np.round(left, 3).tolist() == [0.178, 0.542, 5.395, 7.412, 7.497]


def test_car_charges_turns_only_where_more_than_two_roads_meet() -> None:
    t = Turns(
        angle=np.array([90.0, 90.0, -90.0, 10.0, 90.0]),
        roads=np.array([2, 3, 3, 2, 2]),
        u_turn=np.array([False, False, False, True, False]),
        mode_change=np.array([False, False, False, False, True]),
        source_restricted=np.zeros(5, bool),
        target_restricted=np.zeros(5, bool),
    )
    s = car.turn_duration_s(t)
    assert s[0] == 0.0  # a bend between two ways
    # a left turn crosses oncoming traffic: + 2 s * 1 / (1 + e^-(13 * 90 / 180 - 3.25)) = 1.925 s (the car.lua
    # osrm-routed ships); not at a bend, a u-turn, onto a ferry at two roads, or where a leg is a roundabout
    assert s[1] == pytest.approx(2.105, abs=1e-3) and s[2] == pytest.approx(5.395 + 1.925, abs=1e-3)
    assert s[3] == pytest.approx(7.455 + 20.0, abs=1e-3)  # a u-turn: angle 180 and 20 s
    assert s[4] == pytest.approx(2.105, abs=1e-3)  # onto a ferry
    on_roundabout = Turns(**{**t.__dict__, "target_roundabout": np.ones(5, bool)})
    assert car.turn_duration_s(on_roundabout)[2] == pytest.approx(5.395, abs=1e-3)
    # where traffic keeps left (car.lua's left-hand driving) the sides swap: 1 / turn_bias, and a right turn crosses
    left = car.turn_duration_s(Turns(**{**t.__dict__, "angle": -t.angle, "left_hand": np.ones(5, bool)}))
    keep = [0, 1, 2, 4]
    assert left[keep] == pytest.approx(s[keep], abs=1e-9)
    assert left[3] == pytest.approx(7.497 + 20.0, abs=1e-3)  # a u-turn (+180) now on the sharper side


def test_driving_side_left_mirrors_the_turns_and_says_so(tmp_path: Path) -> None:
    """`preprocess --driving-side left`: at the drawn junction c a right turn costs what a left turn costs keeping
    right and the reverse; the manifest and the steps say which side."""
    from harness.asciimap import write_osm

    osm = write_osm(tmp_path / "plus.osm", PLUS, PLUS_WAYS, None, 100.0, None)
    sides = {}
    for side in ("right", "left"):
        out = preprocess(osm, tmp_path / side, profile="car", ch=False, landmarks=0, force=True, quiet=True,
                         basemap=False, driving_side=side)  # fmt: skip
        router = Router(load(out))
        g = router.graph
        assert g.meta.driving_side == side and router.roads.driving_side == side
        arrays = {k: np.asarray(v) for k, v in g.arrays.items()}
        fa, ta, _, td, _ = turn_table(arrays, car, None, side == "left")
        tail, head = arrays["arc_tail"], arrays["arc_head"]
        lon, lat = arrays["node_lon"], arrays["node_lat"]
        east = int(np.argmax(lon))
        west = int(np.argmin(lon))
        south = int(np.argmin(lat))
        into = (head[fa] != south) & (tail[fa] == south)  # northbound from the south end
        right = int(td[into & (head[ta] == east)][0])
        left = int(td[into & (head[ta] == west)][0])
        sides[side] = (right, left)
    assert sides["right"][0] < sides["right"][1]  # keeping right, a left turn waits for oncoming traffic
    assert sides["left"] == (sides["right"][1], sides["right"][0])
    with pytest.raises(Exception, match="driving-side"):
        preprocess(osm, tmp_path / "bad", profile="car", ch=False, landmarks=0, force=True, quiet=True,
                   driving_side="middle")  # fmt: skip


def test_turn_table_angles_and_u_turns(tmp_path: Path) -> None:
    """At c (four two-way roads) no u-turn; at the dead ends a, b, d, e a u-turn; right turns have positive angles."""
    built = build(tmp_path, PLUS, PLUS_WAYS, profile="testbot", turns=False)
    arrays = {k: np.asarray(v) for k, v in built.graph.arrays.items()}
    fa, ta, tw, _, report = turn_table(arrays, testbot)
    tail, head = arrays["arc_tail"], arrays["arc_head"]
    ids = {}
    for letter in "abcde":
        (ids[letter],) = built.nodes(letter)
    at_c = head[fa] == ids["c"]
    assert not np.any(at_c & (tail[fa] == head[ta]))  # no u-turn at c
    assert int((~at_c).sum()) == 4 and np.all(tw[~at_c] == 200)  # each dead end: its u-turn, 20 s
    assert report["u_turns_not_allowed"] == 4
    # e -> c -> d (northbound, then east) is a right turn; e -> c -> b a left one (testbot charges neither)
    from preprocessing.turns import _bearings

    leave, arrive = _bearings(arrays)

    def arc(u: str, v: str) -> int:
        return int(np.flatnonzero((tail == ids[u]) & (head == ids[v]))[0])

    def angle(a: int, b: int) -> float:
        return float((leave[b] - arrive[a] + 540.0) % 360.0 - 180.0)

    assert angle(arc("e", "c"), arc("c", "d")) == pytest.approx(90.0, abs=0.5)
    assert angle(arc("e", "c"), arc("c", "b")) == pytest.approx(-90.0, abs=0.5)
    assert angle(arc("e", "c"), arc("c", "a")) == pytest.approx(0.0, abs=0.5)


# OSRM's roundabout.feature "Mixed Entry and Exit": four oneways crossing a roundabout at its nodes, each leaving on
# the side it came from (counter-clockwise flow: b k h e), and the same with the oneways drawn so that each would turn
# onto its own continuation against the flow
MIXED = """
  c   a
j   b   f
  k   e
l   h   d
  g   i
"""
SEGREGATED = """
    a   c

l     b     d
    k   e
j     h     f

    i   g
"""
ONEWAY = {"highway": "primary", "oneway": "yes"}
CROSSING = [("abc", ONEWAY), ("def", ONEWAY), ("ghi", ONEWAY), ("jkl", ONEWAY)]
ROUNDABOUT = ("bkheb", {"highway": "primary", "junction": "roundabout"})


@pytest.mark.parametrize(("drawing", "against"), [(MIXED, False), (SEGREGATED, True)])
def test_no_turn_against_a_roundabouts_flow(tmp_path: Path, drawing: str, against: bool) -> None:
    """OSRM's isTurnAllowed: a oneway crossing a roundabout node may not turn onto its own continuation when that
    turns against the roundabout's flow (it drives round instead); turning off on the side of the flow stays."""
    built = build(tmp_path, drawing, [*CROSSING, ROUNDABOUT], profile="car", turns=False)
    arrays = {k: np.asarray(v) for k, v in built.graph.arrays.items()}
    fa, ta, _, _, report = turn_table(arrays, car)
    tail, head = arrays["arc_tail"], arrays["arc_head"]
    ids = {x: built.nodes(x)[0] for x in "abcdefghijkl"}
    for u, v, w in ("abc", "def", "ghi", "jkl"):
        into = np.flatnonzero((tail[fa] == ids[u]) & (head[fa] == ids[v]) & (head[ta] == ids[w]))
        assert len(into) == (0 if against else 1), (u, v, w)
    assert report["turns_against_roundabout"] == (4 if against else 0)


# -- restrictions on drawn maps ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relations", "route", "expected_s"),
    [
        ([], "eb", 20.0),
        # turning left is forbidden: on to the dead end a, back (20 s u-turn), then right
        ([restriction("no_left_turn", "ec", "c", "bc")], "eb", 60.0),
        ([restriction("no_left_turn", "ec", "c", "bc")], "ed", 20.0),
        ([restriction("no_left_turn", "ec", "c", "bc")], "ab", 20.0),
        ([restriction("no_right_turn", "ec", "c", "dc")], "ed", 60.0),
        ([restriction("no_straight_on", "ec", "c", "ac")], "ea", 60.0),
        # only straight on: every other exit is forbidden
        ([restriction("only_straight_on", "ec", "c", "ac")], "eb", 60.0),
        ([restriction("only_straight_on", "ec", "c", "ac")], "ed", 60.0),
        ([restriction("only_straight_on", "ec", "c", "ac")], "ea", 20.0),
        # except= a mode testbot is not: still applies; the restriction for another mode only: does not
        ([restriction("no_left_turn", "ec", "c", "bc", **{"except": "bicycle"})], "eb", 60.0),
        (
            [
                (
                    [("way", "ec", "from"), ("node", "c", "via"), ("way", "bc", "to")],
                    {"type": "restriction", "restriction:bicycle": "no_left_turn"},
                )
            ],
            "eb",
            20.0,
        ),  # fmt: skip
        ([restriction("no_left_turn", "ec", "c", "bc", **{"restriction:conditional": "none @ (Mo-Fr)"})], "eb", 60.0),
        # duplicated and conflicting relations (only_ and no_ on one from way) both apply
        ([restriction("no_left_turn", "ec", "c", "bc")] * 2, "eb", 60.0),
    ],
)
def test_via_node_restrictions(tmp_path: Path, relations: list, route: str, expected_s: float) -> None:
    built = build(tmp_path, PLUS, PLUS_WAYS, profile="testbot", turns=True, relations=relations, ch=True, landmarks=2)
    assert served_seconds(built, route)[(route[0], route[1])] == pytest.approx(expected_s)


def test_every_profile_is_edge_based_by_default(tmp_path: Path) -> None:
    """As in OSRM, whose profiles are all edge-based: testbot, bicycle and foot read their restriction keys and
    charge their turn functions without being asked (`--no-turns` builds the node-based graph)."""
    no_left = [restriction("no_left_turn", "ec", "c", "bc")]
    for sub in "tnbr":
        (tmp_path / sub).mkdir()
    testbot = build(tmp_path / "t", PLUS, PLUS_WAYS, profile="testbot", relations=no_left, ch=True, landmarks=2)
    assert testbot.graph.meta.search_graph == "edge"
    # around the restriction: e -> c -> d (20 s), the u-turn at the dead end d (20 s), d -> c -> b (20 s)
    assert served_seconds(testbot, "eb")[("e", "b")] == pytest.approx(60.0)
    plain = build(tmp_path / "n", PLUS, PLUS_WAYS, profile="bike", turns=False, ch=True, landmarks=2)
    edge = build(tmp_path / "b", PLUS, PLUS_WAYS, profile="bike", ch=True, landmarks=2)
    t_plain = served_seconds(plain, "eb,ed")
    t_edge = served_seconds(edge, "eb,ed")
    # bicycle.lua's turn cost where four roads meet: (angle / 90)^2 x 6 s, left turns x 1.4, right ones / 1.4
    assert t_edge[("e", "b")] == pytest.approx(t_plain[("e", "b")] + 6 * 1.4, abs=0.15)
    assert t_edge[("e", "d")] == pytest.approx(t_plain[("e", "d")] + 6 / 1.4, abs=0.15)
    bike_only = [
        ([("way", "ec", "from"), ("node", "c", "via"), ("way", "bc", "to")],
         {"type": "restriction", "restriction:bicycle": "no_left_turn"}),
    ]  # fmt: skip
    restricted = build(tmp_path / "r", PLUS, PLUS_WAYS, profile="bike", relations=bike_only, ch=True, landmarks=2)
    assert served_seconds(restricted, "eb")[("e", "b")] > t_edge[("e", "b")] + 20.0  # round the restriction


@pytest.mark.parametrize("conflicting", [False, True])
def test_a_road_no_route_can_leave_is_a_tiny_component(tmp_path: Path, conflicting: bool) -> None:
    """Every exit from e's road forbidden (three no_*, or an only_ and a no_ on the same turn): the only turn left at
    c is back (OSRM allows a u-turn where one exit is allowed), so e's road is a trap: an island of the edge-based
    graph although the road graph is one component. As in OSRM, snapping treats it as a tiny component: a point at e
    is snapped onto the nearest road of the big one, and the route leaves from there."""
    rel = [restriction(k, "ec", "c", w) for k, w in (("no_left_turn", "bc"), ("no_right_turn", "dc"),
                                                      ("no_straight_on", "ac"))]  # fmt: skip
    if conflicting:
        rel = [restriction("only_straight_on", "ec", "c", "ac"), restriction("no_straight_on", "ec", "c", "ac")]
    built = build(tmp_path, PLUS, PLUS_WAYS, profile="testbot", turns=True, relations=rel)
    router = Router(load(built.graph.path), min_component_size=3)  # the rest big beside the trap, as on a real map
    (ex, ey), (cx, cy), (ax, ay) = (built.coords[x] for x in "eca")
    e, a = (ex / 1e7 + 1e-5, ey / 1e7), (ax / 1e7, ay / 1e7)
    alone = router.snap(*e)
    assert alone.component != 0  # e's road on its own: the small island
    phs = router.snap_waypoints([e, a])
    assert phs[0].component == 0 and phs[0].chain != alone.chain
    route = router.query().route(phs, "dijkstra")
    assert route.distance_m < 250  # from the nearest big road (around c), not through the trap


def test_both_directions_of_a_two_way_road_share_a_component(tmp_path: Path) -> None:
    """OSRM's `FindComponents` ties the two directions of a two-way road: r -> p only leads into the dead end z and
    p -> r is only reached from the dead end w (no u-turn at p, where two roads arrive), so neither direction is
    strongly connected to the rest, yet OSRM counts the road in the big component and snaps a point beside it onto
    it (as Monaco's Boulevard du Jardin Exotique, issue 46)."""
    drawing = """
        w   z
          p
          .
        m r n
        """
    oneway = {"highway": "primary", "oneway": "yes"}
    ways = [("wp", oneway), ("pz", oneway), ("pr", {"highway": "primary"}), ("mrn", {"highway": "primary"})]
    built = build(tmp_path, drawing, ways, profile="testbot", turns=True)
    router = Router(load(built.graph.path), min_component_size=3)  # the rest big beside it, as on a real map
    (px, py), ry = built.coords["p"], built.coords["r"][1]
    beside = (px / 1e7 + 1e-4, (py + ry) / 2e7)  # 11 m east of the middle of p-r
    phs = router.snap_waypoints([beside, (built.coords["m"][0] / 1e7, built.coords["m"][1] / 1e7)])
    assert phs[0].component == 0 and phs[0].distance_m < 12


LINE = """
abcd
 ef
"""
LINE_WAYS = [("ab", PRIMARY), ("bc", PRIMARY), ("cd", PRIMARY), ("eb", PRIMARY), ("fc", PRIMARY)]


@pytest.mark.parametrize(
    ("relations", "route", "expected_s"),
    [
        ([], "ef", 30.0),
        # no e -> b -> c -> f: back from a dead end (20 s) on either side
        ([restriction("no_left_turn", "eb", "bc", "fc")], "ef", 70.0),
        ([restriction("no_left_turn", "eb", "bc", "fc")], "af", 30.0),  # the via way from elsewhere: free
        ([restriction("no_left_turn", "eb", "bc", "fc")], "ed", 30.0),
        ([restriction("no_left_turn", "eb", "bc", "fc")], "ec", 20.0),  # stopping on the via way is fine
        # only e -> b -> c -> d: f is out of reach that way, and so is a (leaving the via path at b)
        ([restriction("only_straight_on", "eb", "bc", "cd")], "ef", 70.0),
        ([restriction("only_straight_on", "eb", "bc", "cd")], "ed", 30.0),
    ],
)
def test_via_way_restrictions(tmp_path: Path, relations: list, route: str, expected_s: float) -> None:
    built = build(tmp_path, LINE, LINE_WAYS, profile="testbot", turns=True, relations=relations, ch=True, landmarks=2)
    assert served_seconds(built, route)[(route[0], route[1])] == pytest.approx(expected_s)


LONG = """
abcdg
 e f
"""


def test_multi_via_way_chain(tmp_path: Path) -> None:
    """from eb via bc and cd (listed in the wrong order) to fd: e -> f must leave the path; a -> f need not."""
    ways = [("ab", PRIMARY), ("bc", PRIMARY), ("cd", PRIMARY), ("dg", PRIMARY), ("eb", PRIMARY), ("fd", PRIMARY)]
    rel = [([("way", "eb", "from"), ("way", "cd", "via"), ("way", "bc", "via"), ("way", "fd", "to")],
            {"type": "restriction", "restriction": "no_right_turn"})]  # fmt: skip
    built = build(tmp_path, LONG, ways, profile="testbot", turns=True, relations=rel, ch=True, landmarks=2)
    got = served_seconds(built, "ef,af")
    assert got[("e", "f")] == pytest.approx(40.0 + 40.0)  # to g, back (20 s), then f: 10+20+10+10+20+10
    assert got[("a", "f")] == pytest.approx(40.0)


def test_restriction_on_the_start_segment(tmp_path: Path) -> None:
    """Starting mid-way on the from way, the restriction still holds: 5 s on, around a (40 s), right 10 s."""
    built = build(tmp_path, PLUS, PLUS_WAYS, profile="testbot", turns=True,
                  relations=[restriction("no_left_turn", "ec", "c", "bc")])  # fmt: skip
    router = Router(load(built.graph.path))
    (ex, ey), (cx, cy), (bx, by) = (built.coords[x] for x in "ecb")
    mid = ((ex + cx) / 2e7, (ey + cy) / 2e7)
    phs = router.snap_waypoints([mid, (bx / 1e7, by / 1e7)])
    assert router.query().route(phs, "dijkstra").duration_s == pytest.approx(5.0 + 40.0 + 10.0, abs=0.15)


def test_through_the_real_server(tmp_path: Path) -> None:
    """OSRM /route on a graph with CH and landmarks: the forbidden left turn costs the detour in every algorithm."""
    built = build(tmp_path, PLUS, PLUS_WAYS, profile="testbot", turns=True, ch=True, landmarks=2,
                  relations=[restriction("no_left_turn", "ec", "c", "bc")])  # fmt: skip
    base = api_server.shared(built.graph.path)
    e = ",".join(f"{c / 1e7:.7f}" for c in built.coords["e"])
    b = ",".join(f"{c / 1e7:.7f}" for c in built.coords["b"])
    r = httpx.get(f"{base}/route/v1/driving/{e};{b}", params={"overview": "full"}, timeout=30)
    assert r.status_code == 200, r.text
    route = r.json()["routes"][0]
    assert route["duration"] == pytest.approx(60.0) and route["distance"] == pytest.approx(400.0, rel=1e-3)
    for alg in ALGORITHMS:
        f = httpx.get(f"{base}/route", params={"from": e, "to": b, "algorithm": alg}, timeout=30).json()
        assert f["properties"]["duration_s"] == pytest.approx(60.0), (alg, f)
    t = httpx.get(f"{base}/table/v1/driving/{e};{b}", timeout=30).json()
    assert t["durations"][0][1] == pytest.approx(60.0) and t["durations"][1][0] == pytest.approx(20.0)


# -- the edge-based graph against an independent oracle --------------------------------------------------------------


def random_road(seed: int, n: int = 14, m: int = 40) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    tail = rng.integers(0, n, m)
    head = rng.integers(0, n, m)
    keep = tail != head
    tail, head = tail[keep], head[keep]
    lon, lat = rng.uniform(0, 0.01, n), rng.uniform(0, 0.01, n)
    return arrays_from_arcs(tail, head, rng.integers(1, 50, len(tail)), None, lon, lat, n)


def random_sequences(arrays: dict[str, np.ndarray], seed: int, k: int = 8) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    fo, head = arrays["first_out"], arrays["arc_head"]
    out = []
    for _ in range(k):
        s = [int(rng.integers(len(head)))]
        for _ in range(int(rng.integers(1, 4))):
            v = head[s[-1]]
            if fo[v] == fo[v + 1]:
                break
            s.append(int(rng.integers(fo[v], fo[v + 1])))
        if len(s) >= 2:
            out.append(tuple(s))
    return out


def oracle_costs(arrays: dict[str, np.ndarray], seqs: list[tuple[int, ...]], source: int) -> np.ndarray:
    """From the end of road arc `source`: the cheapest cost to the end of every arc, by Dijkstra over states = the
    last L-1 arcs driven, refusing any state whose history ends with a forbidden sequence. Uses the turn table's
    allowed pairs and costs, nothing of the edge-based construction."""
    fa, ta, tw, _, _ = turn_table(arrays, car, np.array([s for s in seqs if len(s) == 2], np.int64).reshape(-1, 2))
    turns: dict[int, list[tuple[int, int]]] = {}
    for a, b, w in zip(fa.tolist(), ta.tolist(), tw.tolist(), strict=True):
        turns.setdefault(a, []).append((b, w))
    L = max([len(s) for s in seqs] + [2])
    full = set(seqs)
    G = nx.DiGraph()
    start = (source,)
    stack, seen = [start], {start}
    while stack:
        h = stack.pop()
        for b, w in turns.get(h[-1], []):
            q = h + (b,)
            if any(q[i:] in full for i in range(len(q) - 1)):
                continue
            nh = q[-(L - 1) :]
            G.add_edge(h, nh, weight=w + int(arrays["arc_weight"][b]))
            if nh not in seen:
                seen.add(nh)
                stack.append(nh)
    G.add_node(start)
    dist = nx.single_source_dijkstra_path_length(G, start)
    out = np.full(len(arrays["arc_head"]), -1, dtype=np.int64)
    for h, d in dist.items():
        if out[h[-1]] < 0 or d < out[h[-1]]:
            out[h[-1]] = d
    out[source] = 0
    return out


@pytest.mark.parametrize("seed", range(12))
def test_edge_based_graph_equals_the_history_oracle(seed: int) -> None:
    from app.engine.search.reference import dijkstra_weights

    arrays = random_road(seed)
    seqs = random_sequences(arrays, seed + 100)
    eb, _ = edge_based_graph(arrays, car, seqs)
    view = graph_in_memory(search_view_arrays(eb_with(arrays, eb)))
    node_arc = np.asarray(view.node_arc)
    for source in range(0, len(arrays["arc_head"]), 3):
        want = oracle_costs(arrays, seqs, source)
        got = dijkstra_weights(view, source)
        per_arc = np.full(len(want), -1, dtype=np.int64)
        for e in range(len(node_arc)):
            if got[e] < 1 << 60:
                a = int(node_arc[e])
                per_arc[a] = got[e] if per_arc[a] < 0 else min(per_arc[a], got[e])
        per_arc[source] = 0
        assert per_arc.tolist() == want.tolist(), (seed, source)


def eb_with(arrays: dict[str, np.ndarray], eb: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {**arrays, **eb}


# -- every algorithm equals Dijkstra on the edge-based graph of a real extract -----------------------------------------


@pytest.fixture(scope="module")
def andorra_turns(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = SHARED / "andorra-latest.osm.pbf"
    if not src.exists():
        pytest.skip("andorra-latest extract not available")
    out = tmp_path_factory.mktemp("andorra") / "car-turns"
    return preprocess(src, out, profile="car", ch=True, landmarks=8, quiet=True, turns=True)


@pytest.mark.extracts
def test_every_algorithm_equals_dijkstra_with_turns(andorra_turns: Path) -> None:
    graph = load(andorra_turns)
    mf = graph.manifest
    assert mf["search_graph"] == "edge" and mf["report"]["restrictions_used"] > 50
    real = Router(graph)
    ref = Router(graph, algorithms={"reference": RefDijkstra})  # type: ignore[dict-item]
    rng = np.random.default_rng(7)
    g = graph
    pts = []
    for _ in range(120):
        a = int(rng.integers(g.num_arcs))
        c = int(g.arc_geom[a]) >> 1
        p = int(g.geom_first[c])
        pts.append((float(g.geom_lon[p]) / 1e7 + 2e-5, float(g.geom_lat[p]) / 1e7 + 1e-5))
    compared = 0
    for s, t in itertools.pairwise(pts):
        phs = real.snap_waypoints([s, t])
        try:
            want = ref.query().route(phs, "reference")
        except NoRoute:
            for alg in real.algorithms:
                with pytest.raises(NoRoute):
                    real.query().route(phs, alg)
            continue
        compared += 1
        for alg in real.algorithms:
            got = real.query().route(phs, alg)
            assert got.weight == want.weight, (alg, s, t)
            assert got.distance_m == pytest.approx(want.distance_m, abs=0.2) or got.weight == want.weight
    assert compared > 80
    # the table equals the routes
    phs = real.snap_waypoints(pts[:12])
    tbl = real.query().table(phs, phs)
    for i, j in itertools.product(range(12), repeat=2):
        if i == j:
            continue
        try:
            w = ref.query().route([phs[i], phs[j]], "reference").duration_s
        except NoRoute:
            assert np.isnan(tbl.durations_s[i, j])
            continue
        assert tbl.durations_s[i, j] == pytest.approx(w), (i, j)


# -- approaches on edge-based seeds ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("side", "turns", "expected_s"),
                         [(None, True, 10.0), ("unrestricted", True, 10.0), ("opposite", True, 10.0),
                          ("curb", True, 50.0), ("curb", False, 30.0)])  # fmt: skip
def test_approach_curb_arrives_with_the_point_on_the_right(
    tmp_path: Path, side: str | None, turns: bool, expected_s: float
) -> None:
    """A point 20 m north of the middle of a west-east road, reached from its west end: with `curb` the car must
    arrive westbound, so it drives on to the east end, turns back there (20 s with turns) and comes back."""
    built = build(tmp_path, "abc", [("abc", PRIMARY)], profile="testbot", turns=turns)
    router = Router(load(built.graph.path))
    (ax, ay), (bx, by) = built.coords["a"], built.coords["b"]
    point = (bx / 1e7, by / 1e7 + 20 / 111_195)
    phs = router.snap_waypoints([(ax / 1e7, ay / 1e7), point], approaches=[None, side])
    assert router.query().route(phs, "dijkstra").duration_s == pytest.approx(expected_s, abs=0.11)


def test_approaches_through_osrm_api(tmp_path: Path) -> None:
    built = build(tmp_path, "abc", [("abc", PRIMARY)], profile="testbot", turns=True, ch=True)
    base = api_server.shared(built.graph.path)
    (ax, ay), (bx, by) = built.coords["a"], built.coords["b"]
    coords = f"{ax / 1e7:.7f},{ay / 1e7:.7f};{bx / 1e7:.7f},{by / 1e7 + 20 / 111_195:.7f}"
    for approaches, expected in (("unrestricted;unrestricted", 10.0), (";curb", 50.0), (";opposite", 10.0)):
        j = httpx.get(f"{base}/route/v1/driving/{coords}", params={"approaches": approaches}, timeout=30).json()
        assert j["code"] == "Ok", j
        assert j["routes"][0]["duration"] == pytest.approx(expected, abs=0.11), approaches


# -- continue_straight at via points -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("straight", "expected_s"), [(None, 60.0), (True, 60.0), (False, 20.0)])
def test_continue_straight_at_via_points(tmp_path: Path, straight: bool | None, expected_s: float) -> None:
    """a -> b (mid-road via) -> a on a west-east road: without turning back at b the car drives on to c, turns
    there (20 s) and comes back (10 + 10 + 20 + 20 s); allowed to turn at b: 10 + 10 s. testbot's default: straight."""
    from app.engine.types import RouteOptions

    built = build(tmp_path, "abc", [("abc", PRIMARY)], profile="testbot", turns=True)
    router = Router(load(built.graph.path))
    a, b = (tuple(c / 1e7 for c in built.coords[x]) for x in "ab")
    phs = router.snap_waypoints([a, b, a])
    for alg in ("dijkstra", "bidirectional-astar"):
        opts = RouteOptions(algorithm=alg, continue_straight=straight)
        route = router.query().routes(phs, opts).best
        assert route.duration_s == pytest.approx(expected_s), alg
        assert [round(leg.duration_s) for leg in route.legs] == ([10, 50] if expected_s == 60 else [10, 10])


def test_continue_straight_through_osrm_api(tmp_path: Path) -> None:
    built = build(tmp_path, "abc", [("abc", PRIMARY)], profile="testbot", turns=True, ch=True)
    base = api_server.shared(built.graph.path)
    a, b = (",".join(f"{c / 1e7:.7f}" for c in built.coords[x]) for x in "ab")
    for value, expected in (("default", 60.0), ("true", 60.0), ("false", 20.0)):
        j = httpx.get(f"{base}/route/v1/driving/{a};{b};{a}", params={"continue_straight": value}, timeout=30).json()
        assert j["code"] == "Ok" and j["routes"][0]["duration"] == pytest.approx(expected), (value, j)


# -- weight apart from duration (car: routability) ---------------------------------------------------------------------


@pytest.mark.parametrize("turns", [True, False])
def test_routability_chooses_by_weight_and_reports_duration(tmp_path: Path, turns: bool) -> None:
    """a -> b: 100 m of parking aisle (15 km/h: 24 s, but its rate penalty 0.5 makes it weigh 48 s) or 300 m of
    residential street (25 km/h: 43.2 s, weight the same). The route takes the street; its duration is the street's
    time and its weight OSRM's routability weight; the table agrees."""
    ways = [("ab", {"highway": "service", "service": "parking_aisle"}), ("acdb", {"highway": "residential"})]
    built = build(tmp_path, "ab\ncd", ways, profile="car", turns=turns, ch=True)
    assert built.graph.manifest["weight_name"] == "routability"
    router = Router(load(built.graph.path))
    a, b = (tuple(c / 1e7 for c in built.coords[x]) for x in "ab")
    phs = router.snap_waypoints([a, b])
    street_s = math.ceil(built.metres("acdb") / (25 / 3.6) * 10 - 1e-9) / 10
    aisle_s = math.ceil(built.metres("ab") / (15 / 3.6) * 10 - 1e-9) / 10
    assert aisle_s < street_s  # by time the aisle wins
    for alg in ("ch", "dijkstra", "bidirectional-astar"):
        route = router.query().route(phs, alg)
        assert route.distance_m == pytest.approx(built.metres("acdb"), abs=0.2), alg
        assert route.duration_s == pytest.approx(street_s) and route.weight == round(street_s * 10), alg
    tbl = router.query().table(phs, phs)
    assert tbl.durations_s[0, 1] == pytest.approx(street_s)
    # the aisle alone, as a route's last stretch: its duration is its time, its weight twice that
    c = tuple(x / 1e7 for x in built.coords["c"])
    mid_ab = ((a[0] + b[0]) / 2, a[1])
    route = router.query().route(router.snap_waypoints([mid_ab, b]), "dijkstra")
    assert route.duration_s == pytest.approx(aisle_s / 2, abs=0.11)
    assert route.weight == pytest.approx(2 * route.duration_s * 10, abs=2)
    assert c  # the map's other corner is a plain street node


def test_turn_into_a_restricted_road_weighs_the_maximum(tmp_path: Path) -> None:
    """car: a -> c through a private road (b-c, destination access) saves 200 m, but turning onto it from an open road
    weighs OSRM's max turn weight (3276.7 s), so the route goes round unless it starts on the private road."""
    ways = [("ab", {"highway": "residential"}), ("bc", {"highway": "residential", "access": "private"}),
            ("adefc", {"highway": "residential"})]  # fmt: skip
    built = build(tmp_path, "abc\nd.f\n.e.", ways, profile="car", turns=True)
    router = Router(load(built.graph.path))
    a, b, c = (tuple(x / 1e7 for x in built.coords[k]) for k in "abc")
    route = router.query().route(router.snap_waypoints([a, c]), "dijkstra")
    assert route.distance_m > 300  # round, not through b
    mid_bc = ((b[0] + c[0]) / 2, b[1])
    inside = router.query().route(router.snap_waypoints([mid_bc, c]), "dijkstra")
    assert inside.distance_m == pytest.approx(50, abs=1) and inside.weight < 100  # starting on it: no max turn


@pytest.mark.parametrize("profile", ["bike", "foot", "testbot"])
def test_every_profile_builds_and_routes_with_turns(tmp_path: Path, profile: str) -> None:
    """`--turns` on the profiles that default to node-based graphs: the edge-based graph (with the profile's turn
    costs) builds with CH and landmarks, and every algorithm agrees with Dijkstra on a route through a via point."""
    ways = [("abc", {"highway": "residential"}), ("bd", {"highway": "residential"})]
    built = build(tmp_path, "abc\n.d.", ways, profile=profile, turns=True, ch=True, landmarks=2)
    assert built.graph.manifest["search_graph"] == "edge"
    router = Router(load(built.graph.path))
    a, b, c = (tuple(x / 1e7 for x in built.coords[k]) for k in "abc")
    mid_ab = ((a[0] + b[0]) / 2, a[1])
    phs = router.snap_waypoints([mid_ab, a, c])
    from app.engine.types import RouteOptions

    for alg in ("ch", "dijkstra", "alt"):
        route = router.query().routes(phs, RouteOptions(algorithm=alg, continue_straight=False)).best
        assert route.weight == router.query().routes(phs, RouteOptions(algorithm="dijkstra",
                                                                      continue_straight=False)).best.weight  # fmt: skip
    legs = router.query().routes(phs, RouteOptions(algorithm="dijkstra", continue_straight=False)).best.legs
    assert legs[1].distance_m == pytest.approx(built.metres("abc"), abs=0.5)


def test_a_search_refuses_seeds_outside_its_graph(tmp_path: Path) -> None:
    """Search nodes of the edge-based graph are not road nodes: handing them to a search over the road graph is a
    ValueError, not a write outside the kernel's arrays."""
    from app.engine.search.searches import CoreSearch
    from app.engine.types import Seeds

    built = build(tmp_path, PLUS, PLUS_WAYS, profile="testbot", turns=True)
    g = load(built.graph.path)
    road_nodes = g.num_nodes
    bad = Seeds(np.array([road_nodes + 3], np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), 0.0, 0.0)
    ok = Seeds(np.array([0], np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), 0.0, 0.0)
    with pytest.raises(ValueError, match="out of range"):
        CoreSearch(g, "dijkstra").run(bad, ok)

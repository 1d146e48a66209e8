"""The turn stage: the road graph's junctions -> an edge-based search graph with turn costs and turn restrictions.

Search nodes are directed road arcs; a search arc `a -> b` is a turn allowed at the junction `head(a) == tail(b)`,
weighing the profile's turn duration plus the whole of `b` (a search node's label is the cost of reaching the *end*
of its road arc). So a search starts at its source arc's remaining part and ends at the arcs that turn into the
target arc, the turn and the target arc's first part as the seed weight: all weights stay non-negative and the
search code (core, CH, ALT, tables) runs unchanged on this graph.

Turn restrictions arrive as forbidden arc sequences (`preprocessing.osm.restrictions`): a pair (via node) removes one
turn; a longer one (via ways) duplicates the search nodes along its proper prefixes, an Aho-Corasick automaton over
the sequences, so that a route entering the via path remembers it and is refused only the last turn. Duplicates map
back to their road arc (`eb_node_arc`).

U-turns follow OSRM (`isTurnAllowed`): only at dead ends (one road), where at most one road may be arrived on, where
only one exit is allowed, at turning obstacles (`node_flags`), where a turn lane of the road arriving has a u-turn
arrow, and at barriers (each barrier copy is a dead end here); a u-turn there is every turn back to the node the route
came from, along the same road or another one joining the two nodes (OSRM's `from.node == destination_node`). Nor, as in
OSRM, a turn against a roundabout's flow: a
way crossing a roundabout node does not turn onto its own continuation there when that leaves within the sector
between the roundabout arriving and the road arrived on (`Extractor.against_roundabout`); it drives round.

A turn's angle, the number of roads and whether it is a u-turn are OSRM's (`osrm_turn_views`): the intersection view
of the road arriving (`floor.intersections`, which guidance reads too), at the nodes OSRM's graph compressor
keeps (`node_flags`, `road_classification.osrm_compression`); a hairpin whose perceived angle comes near 0 is a
u-turn there, as in OSRM.

Arrays (prefix `eb_`, N search nodes, T turns; declared in `floor.format.arrays.ARRAYS`), each named as its
road-graph twin so the search stages read the view (`floor.format.arrays.search_view_arrays`, the engine's
`app.engine.data.search_graph`) like any graph: `eb_first_out` [N+1],
`eb_arc_tail`/`eb_arc_head` [T], `eb_arc_weight` (turn + head arc weight, ds), `eb_arc_dist` (head arc's dm),
`eb_arc_flags`/`eb_arc_class` (head arc's), `eb_in_first_out`/`eb_in_arc`, `eb_node_lon`/`eb_node_lat` (the road arc's
head), `eb_node_component` (SCC, 0 the largest), and `eb_node_arc` [N] (the road arc of each search node), `eb_arc_turn`
[T] (the turn's own weight, ds), `eb_arc_duration` / `eb_arc_turn_duration` the same in travel time (the profile's
`turn_weight_s` may weigh a turn more than it takes, e.g. car into a restricted road).
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from floor.format.arrays import EB_PREFIX
from floor.format.road_classification import chain_arcs, compressed_nodes, travel_modes
from floor.format.units import (
    COORD_SCALE,
    FLAG_RESTRICTED,
    FLAG_ROUNDABOUT,
    NODE_MINOR_STOP,
    NODE_SHORT_LEG_STOP,
    NODE_TURNING,
    WEIGHT_PER_SECOND,
)
from floor.kernels.geometry import csr_offsets, osrm_bearings_deg
from preprocessing.graph import strong_components
from preprocessing.osm.profiles.base import STOP_LEG_M, STOP_SIGN_S, Turns


def chain_ends(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per node: the number of road ends meeting there (a two-way road counts once) and how many of them a route may
    arrive on (OSRM's `bidirectional_edges` in `isTurnAllowed`, which counts the roads whose edge into the node is
    open)."""
    n = len(arrays["node_lon"])
    tail, head, geom = arrays["arc_tail"], arrays["arc_head"], arrays["arc_geom"].astype(np.int64)
    chain, rev = geom >> 1, geom & 1
    # a road end: (node, chain, which end of the chain), as one key
    span = 2 * (int(chain.max(initial=0)) + 1)
    nodes = np.concatenate([tail, head]).astype(np.int64)
    ends = np.concatenate([2 * chain + rev, 2 * chain + (1 - rev)])
    key = np.unique(nodes * span + ends)
    roads = np.bincount(key // span, minlength=n)
    arriving = np.unique(head.astype(np.int64) * span + 2 * chain + (1 - rev))
    return roads, np.bincount(arriving // span, minlength=n)


def _bearings(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per arc, degrees clockwise from north: the direction it leaves its tail and the direction it arrives at its
    head, toward and from the neighbouring shape point, each looking out from the junction as OSRM's intersection
    model does (`osrm_bearings_deg`: its formula, its 1e-6 degree coordinates)."""
    geom = arrays["arc_geom"].astype(np.int64)
    chain, rev = geom >> 1, (geom & 1).astype(bool)
    gf = arrays["geom_first"]
    p0, p1 = gf[chain], gf[chain + 1] - 1
    lon = arrays["geom_lon"].astype(np.float64) / COORD_SCALE
    lat = arrays["geom_lat"].astype(np.float64) / COORD_SCALE
    first, second = np.where(rev, p1, p0), np.where(rev, p1 - 1, p0 + 1)
    last, before = np.where(rev, p0, p1), np.where(rev, p0 + 1, p1 - 1)
    leave = osrm_bearings_deg(lon[first], lat[first], lon[second], lat[second])
    back = osrm_bearings_deg(lon[last], lat[last], lon[before], lat[before])
    return leave, (back + 180.0) % 360.0


def candidate_turns(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Every (from arc, to arc) pair meeting head to tail, grouped by from arc: the junction table before rules."""
    first_out, head = arrays["first_out"].astype(np.int64), arrays["arc_head"].astype(np.int64)
    m = len(head)
    deg = first_out[head + 1] - first_out[head]
    fa = np.repeat(np.arange(m, dtype=np.int64), deg)
    starts = np.repeat(first_out[head], deg)
    offs = np.arange(len(fa), dtype=np.int64) - np.repeat(np.cumsum(deg) - deg, deg)
    return fa, starts + offs


def turn_table(
    arrays: dict[str, np.ndarray],
    profile: ModuleType,
    forbidden_pairs: np.ndarray | None = None,
    left_hand: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, int]]:
    """The allowed turns (from arc, to arc, turn weight ds, turn duration ds) of the road graph under the profile's
    rules and the forbidden (from, to) pairs (int64 [k, 2], via-node restrictions), and counts for the report.
    `left_hand`: traffic keeps left (`preprocess --driving-side left`), which the profile's turn costs mirror."""
    fa, ta = candidate_turns(arrays)
    m = len(arrays["arc_head"])
    report: dict[str, int] = {"turns_candidate": int(len(fa))}
    keep = np.ones(len(fa), dtype=bool)
    if forbidden_pairs is not None and len(forbidden_pairs):
        key = fa * m + ta
        bad = np.unique(forbidden_pairs[:, 0].astype(np.int64) * m + forbidden_pairs[:, 1].astype(np.int64))
        keep &= ~np.isin(key, bad)
    report["turns_restricted"] = int((~keep).sum())
    tail, head, geom = arrays["arc_tail"], arrays["arc_head"], arrays["arc_geom"].astype(np.int64)
    roads, arriving = chain_ends(arrays)
    via = head[fa]
    u_turn = (tail[fa] == head[ta]) & ((geom[fa] >> 1) == (geom[ta] >> 1))
    # OSRM's isTurnAllowed for u-turns: dead ends, at most one road to arrive on, one allowed exit (restrictions
    # counted), turning obstacles, a turn lane with a u-turn arrow on the road arriving. OSRM asks it of every turn
    # back to the node the route came from (`from.node == destination_node`), along the same road or another one
    # joining the same two nodes (two parallel ways, a loop of two roads)
    back = tail[fa] == head[ta]
    exits = np.bincount(fa[keep], minlength=m)[fa]
    node_flags = arrays.get("node_flags")
    turning = (node_flags & NODE_TURNING) != 0 if node_flags is not None else np.zeros(len(roads), dtype=bool)
    u_ok = (roads[via] == 1) | (arriving[via] <= 1) | (exits == 1) | turning[via] | _u_turn_lanes(arrays)[fa]
    dropped = back & keep & ~u_ok
    report["u_turns_not_allowed"] = int(dropped.sum())
    keep &= ~dropped
    fa, ta, u_turn, via = fa[keep], ta[keep], u_turn[keep], via[keep]
    leave, arrive = _bearings(arrays)
    angle = np.where(u_turn, 180.0, (leave[ta] - arrive[fa] + 540.0) % 360.0 - 180.0)  # (-180, 180], + = right
    n_roads = roads[via].astype(np.int64)
    flags = arrays["arc_flags"]
    osrm_nodes = ~compressed_nodes(arrays)
    compressed = ~osrm_nodes
    if forbidden_pairs is not None and len(forbidden_pairs):
        compressed[head[forbidden_pairs[:, 0]]] = False  # OSRM keeps a restriction's via node
    # where OSRM takes a turn, its angle, road count and u-turns are those of its intersection view
    view = osrm_nodes[via]
    got, v_angle, v_roads, v_u_turn, v_against, v_skip = osrm_turn_views(
        arrays, str(getattr(profile, "NAME", "car")), fa[view], ta[view]
    )
    # OSRM's isTurnAllowed refuses a turn against a roundabout's flow (after the u-turn rules, whose exit count
    # still has it): a way crossing a roundabout node does not turn onto its own continuation there
    report["turns_against_roundabout"] = int(v_against.sum())
    if v_against.any():
        ok = np.ones(len(fa), dtype=bool)
        ok[np.flatnonzero(view)[v_against]] = False
        fa, ta, u_turn, via, angle, n_roads, view = (x[ok] for x in (fa, ta, u_turn, via, angle, n_roads, view))
        got, v_angle, v_roads, v_u_turn, v_skip = (x[~v_against] for x in (got, v_angle, v_roads, v_u_turn, v_skip))
    sel = np.flatnonzero(view)[got]
    angle[sel], n_roads[sel] = v_angle[got], v_roads[got]
    u_turn = u_turn.copy()
    u_turn[sel] = v_u_turn[got]
    stop_out = np.zeros(len(fa), dtype=bool)
    stop_out[sel] = v_skip[got]
    stop_out[~view] = _compressed_stops_left_out(arrays, fa[~view], ta[~view])
    report["turns_without_osrm_view"] = int(view.sum() - got.sum())
    mode = travel_modes(arrays)
    turns = Turns(
        angle=angle,
        roads=n_roads,
        u_turn=u_turn,
        mode_change=mode[fa] != mode[ta],
        source_restricted=(flags[fa] & FLAG_RESTRICTED) != 0,
        target_restricted=(flags[ta] & FLAG_RESTRICTED) != 0,
        source_roundabout=(flags[fa] & FLAG_ROUNDABOUT) != 0,
        target_roundabout=(flags[ta] & FLAG_ROUNDABOUT) != 0,
        left_hand=np.full(len(fa), left_hand, dtype=bool),
        compressed=compressed[via],
    )
    # OSRM's process_turn: the obstacles at the via node met arriving on the from arc (`arc_head_penalty`, left out
    # of the arc by the build), then the angle's cost; the weight from that duration; both truncated to
    # deciseconds (OSRM's numeric_cast of seconds * 10)
    head_pen = arrays.get("arc_head_penalty")
    obstacle_s = head_pen[fa] / WEIGHT_PER_SECOND if head_pen is not None else np.zeros(len(fa))
    obstacle_s = np.where(stop_out, np.maximum(obstacle_s - STOP_SIGN_S, 0.0), obstacle_s)
    secs = obstacle_s + np.asarray(profile.turn_duration_s(turns), dtype=np.float64)
    w_secs = np.asarray(profile.turn_weight_s(turns, secs), dtype=np.float64)
    duration = _deciseconds(secs)
    weight = _deciseconds(w_secs)
    passing = arrays.get("node_passing_penalty")
    if passing is not None:  # where OSRM compresses the junction away, it charges its fake turn through the node
        extra = np.where(compressed[via], passing[via], 0).astype(np.int64)
        duration, weight = duration + extra, weight + extra
    report["turns_allowed"] = int(len(fa))
    report["turns_u_turns"] = int(u_turn.sum())
    report["turns_with_cost"] = int((weight > 0).sum())
    report["turns_into_restricted"] = int((weight > duration).sum())
    return fa, ta, weight, duration, report


TURN_VIEW_PROCESSES = 2  # the Python model's views: big graphs compute them in this many forked processes
_PARALLEL_VIEWS_FROM = 40_000  # turns left to the Python model; fewer run in the process itself
_VIEW_CHUNKS = 8  # per process, for balance


def osrm_turn_views(
    arrays: dict[str, np.ndarray], profile_name: str, fa: np.ndarray, ta: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The turns `fa -> ta` (road arcs meeting at a node OSRM keeps) as OSRM's turn stage sees them, from the
    intersection view of the road arriving (`intersections.intersection_analysis`: perceived bearings, dual
    carriageways merged, its u-turn rule near 0 degrees, the order adjustments): whether the view has the road
    taken, the angle for the profile (degrees, 0 straight, + right), the number of roads (`number_of_roads`: the
    view's roads, a u-turn to another road than the first not counting itself) and whether it is a u-turn (its
    angle is 0, `getTurnDirection`); whether isTurnAllowed refuses it as a turn against a roundabout's flow
    (`Extractor.against_roundabout`); and, at a node with a conditional stop sign (`NODE_MINOR_STOP`,
    `NODE_SHORT_LEG_STOP`), whether car.lua leaves the sign out of the turn (`stop_skipped`).

    The numba kernels (`intersections.views`) give the views at every junction where no roads can merge; the rest
    (junctions where a pair of roads may be a dual carriageway, or near one, and those with a conditional stop sign)
    come from the Python model, taken in node order (neighbours share its caches), in `TURN_VIEW_PROCESSES` forked
    processes when they are many."""
    from floor.intersections.views import turn_views

    skip = np.zeros(len(fa), dtype=bool)
    node_flags = arrays.get("node_flags")
    stops = (node_flags & (NODE_MINOR_STOP | NODE_SHORT_LEG_STOP)) != 0 if node_flags is not None else None
    got, angle, roads, u_turn, against, todo = turn_views(arrays, profile_name, fa, ta, stops)
    rest = np.flatnonzero(todo)
    if len(rest):
        got[rest], angle[rest], roads[rest], u_turn[rest], against[rest], skip[rest] = python_turn_views(
            arrays, profile_name, fa[rest], ta[rest]
        )
    return got, angle, roads, u_turn, against, skip


def python_turn_views(
    arrays: dict[str, np.ndarray], profile_name: str, fa: np.ndarray, ta: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`osrm_turn_views`' six arrays from the Python model alone (`Extractor.intersection`), for the turns the
    kernels leave to it (and as the kernels' reference in the tests)."""
    k = len(fa)
    got = np.zeros(k, dtype=bool)
    angle, roads, u_turn = np.zeros(k), np.zeros(k, dtype=np.int64), np.zeros(k, dtype=bool)
    against, skip = np.zeros(k, dtype=bool), np.zeros(k, dtype=bool)
    if not k:
        return got, angle, roads, u_turn, against, skip
    order = np.lexsort((ta, fa, arrays["arc_head"][fa]))
    parallel = k >= _PARALLEL_VIEWS_FROM and TURN_VIEW_PROCESSES > 1 and "fork" in mp.get_all_start_methods()
    # chunk bounds on from-arc boundaries
    pieces = TURN_VIEW_PROCESSES * _VIEW_CHUNKS if parallel else 1
    cuts = np.linspace(0, k, pieces + 1).astype(np.int64)[1:-1]
    new_from = np.flatnonzero(np.diff(fa[order]) != 0) + 1
    at = new_from[np.minimum(np.searchsorted(new_from, cuts), max(len(new_from) - 1, 0))]
    bounds = np.unique(np.concatenate([[0], at, [k]]))
    chunks = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]
    global _VIEW_STATE
    _VIEW_STATE = (arrays, profile_name, fa, ta, order)
    try:
        if parallel:
            parts = _views_in_processes(chunks)
        else:
            parts = [_view_chunk(c) for c in chunks]
    finally:
        _VIEW_STATE = None
    for idx, g, a, r, u, ag, sk in parts:
        got[idx], angle[idx], roads[idx], u_turn[idx], against[idx], skip[idx] = g, a, r, u, ag, sk
    return got, angle, roads, u_turn, against, skip


_VIEW_STATE: tuple[dict[str, np.ndarray], str, np.ndarray, np.ndarray, np.ndarray] | None = None


def _views_in_processes(chunks: list[tuple[int, int]]) -> list[Any]:
    """`_view_chunk` of every chunk in `TURN_VIEW_PROCESSES` forked processes (forked before any thread of the
    executor starts). A process that dies (the kernel's OOM killer, a signal) ends the stage with a clear error: a
    `multiprocessing.Pool` would replace it and wait forever for the chunk it held."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("fork")
    with ProcessPoolExecutor(TURN_VIEW_PROCESSES, mp_context=ctx, initializer=_die_with_parent) as pool:
        try:
            return list(pool.map(_view_chunk, chunks))
        except BrokenProcessPool as exc:
            raise RuntimeError(
                "turns: a process computing the turn views died (out of memory, or killed); nothing was written"
            ) from exc


def _die_with_parent() -> None:
    """A view process ends with the preprocess that forked it (a stop ends that one at once)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM
    except (OSError, AttributeError):
        pass


def _view_chunk(
    bounds: tuple[int, int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`osrm_turn_views` of the turns `order[lo:hi]` (`_VIEW_STATE`, set before forking): (their indices, got,
    angle, roads, u-turn, against a roundabout, stop sign left out)."""
    from floor.format.graph import graph_in_memory
    from floor.intersections.graph import GuidanceGraph
    from floor.intersections.intersection_analysis import Extractor

    assert _VIEW_STATE is not None, "osrm_turn_views sets the state its chunks read"
    arrays, profile_name, fa, ta, order = _VIEW_STATE
    idx = order[bounds[0] : bounds[1]]
    n = len(idx)
    got, angle, roads, u_turn = np.zeros(n, dtype=bool), np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n, bool)
    against, skip = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    gg = GuidanceGraph(graph_in_memory(arrays, {"profile": profile_name}))
    ex = Extractor(gg)
    geom, head = arrays["arc_geom"], arrays["arc_head"]
    node_flags = arrays.get("node_flags")
    stops = node_flags & (NODE_MINOR_STOP | NODE_SHORT_LEG_STOP) if node_flags is not None else None
    last_from = -1
    where: dict[int, tuple[int, float, int]] = {}
    inter: list = []
    e_in = -1
    for j, (a, b) in enumerate(zip(fa[idx].tolist(), ta[idx].tolist(), strict=True)):
        if a != last_from:
            last_from = a
            e_in = gg.edge_start(int(geom[a]))
            inter = ex.intersection(e_in)
            where = {r.eid: (i, r.angle, len(inter)) for i, r in enumerate(inter)}
        against[j] = ex.against_roundabout(e_in, int(geom[b]))
        hit = where.get(int(geom[b]))
        if hit is None:
            continue
        i, a_osrm, size = hit
        is_u = not (0.0 < a_osrm < 360.0)
        got[j], angle[j], u_turn[j] = True, 180.0 - a_osrm, is_u
        roads[j] = size - (1 if is_u and i != 0 else 0)
        if stops is not None and stops[head[a]]:
            skip[j] = _stop_left_out(arrays, gg, ex, int(stops[head[a]]), e_in, inter, i, int(roads[j]))
    return idx, got, angle, roads, u_turn, against, skip


def _stop_left_out(
    arrays: dict[str, np.ndarray], gg: Any, ex: Any, flags: int, e_in: int, inter: list, i: int, roads: int
) -> bool:
    """car.lua's `process_turn` on the turn onto road `i` of intersection `inter` (arriving by edge `e_in`): whether
    the node's conditional stop sign is left out. `stop=minor` unless entering by the minor road (a road there, the
    one taken included, faster than the one arriving: speeds in whole km/h of OSRM's edges, length over duration);
    a stop sign with no direction where two roads meet, arriving from a leg shorter than 20 m onto a longer one."""
    geoms, _ = ex.merged_geometries(gg.target(e_in))
    back = gg.reverse(e_in)
    src_len = geoms[back][2] if back in geoms else 0.0
    if flags & NODE_SHORT_LEG_STOP:
        return roads == 2 and src_len < STOP_LEG_M < inter[i].segment_length
    duration = arrays["arc_duration"]

    def speed(e: int, length: float) -> int:
        arcs = [gg.half_arc(h) for h in gg.halves(e)]
        if any(x < 0 for x in arcs):
            arcs = [gg.half_arc(h ^ 1) for h in gg.halves(gg.reverse(e))]
        ds = sum(int(duration[x]) for x in arcs if x >= 0)
        return int(36.0 * length / ds) if ds > 0 else 0

    source = speed(e_in, src_len)
    return not any(speed(r.eid, r.segment_length) > source for r in inter[1:])


def _compressed_stops_left_out(arrays: dict[str, np.ndarray], fa: np.ndarray, ta: np.ndarray) -> np.ndarray:
    """For turns `fa -> ta` through nodes OSRM compresses away: whether the node's conditional stop sign is left
    out of them, as OSRM's compressor's fake turn there has it: a `stop=minor` sign always (no minor road), one with
    no direction arriving from a leg shorter than 20 m onto a longer one (the arcs' lengths)."""
    flags = arrays.get("node_flags")
    if flags is None:
        return np.zeros(len(fa), dtype=bool)
    via = flags[arrays["arc_head"][fa]]
    src, dst = arrays["arc_dist"][fa] / 10.0, arrays["arc_dist"][ta] / 10.0
    short = (via & NODE_SHORT_LEG_STOP) != 0
    return ((via & NODE_MINOR_STOP) != 0) | (short & (src < STOP_LEG_M) & (dst > STOP_LEG_M))


def _u_turn_lanes(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """Per road arc: whether its `turn:lanes` has a lane with a u-turn arrow (`reverse`), where OSRM allows a
    u-turn at the junction ahead."""
    lanes = arrays.get("arc_lanes")
    if lanes is None or "str_offsets" not in arrays:
        return np.zeros(len(arrays["arc_head"]), dtype=bool)
    off, data = arrays["str_offsets"], arrays["str_bytes"]
    ids = np.unique(lanes)
    has = np.zeros(int(ids.max(initial=0)) + 1, dtype=bool)
    for sid in ids[ids > 0].tolist():
        text = bytes(data[off[sid] : off[sid + 1]]).decode("utf-8")
        has[sid] = any("reverse" in lane.split(";") for lane in text.split("|"))
    return has[lanes]


def _deciseconds(secs: np.ndarray) -> np.ndarray:
    """Seconds to whole deciseconds as OSRM stores a turn's penalties: `numeric_cast` of seconds x 10, truncated
    with no slack (bicycle.lua's 90-degree left turn, 6 x 1.4 s, is 8.399999999999999 s: 83 ds)."""
    return np.floor(secs * WEIGHT_PER_SECOND).astype(np.int64)


def split_sequences(sequences: Iterable[Sequence[int]]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Forbidden arc sequences -> (pairs int64 [k, 2] for the via-node ones, the longer ones deduplicated)."""
    pairs, longer = set(), set()
    for s in sequences:
        t = tuple(int(a) for a in s)
        if len(t) == 2:
            pairs.add(t)
        elif len(t) > 2:
            longer.add(t)
    arr = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    # a longer sequence containing a forbidden pair can never be driven anyway
    return arr, sorted(t for t in longer if not any(t[i : i + 2] in pairs for i in range(len(t) - 1)))


def edge_based_graph(
    arrays: dict[str, np.ndarray],
    profile: ModuleType,
    sequences: Iterable[Sequence[int]] = (),
    left_hand: bool = False,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The `eb_*` arrays of the search graph and a report; `sequences` are the forbidden arc sequences, `left_hand`
    whether traffic keeps left."""
    pairs, longer = split_sequences(sequences)
    fa, ta, tw, td, report = turn_table(arrays, profile, pairs, left_hand)
    m = len(arrays["arc_head"])
    node_arc = np.arange(m, dtype=np.int64)
    if longer:
        fa, ta, tw, td, node_arc, dup_report = _via_way_states(arrays, fa, ta, tw, td, longer)
        report.update(dup_report)
    report["search_nodes"] = int(len(node_arc))
    report["search_arcs"] = int(len(fa))
    return _search_arrays(arrays, fa, ta, tw, td, node_arc), report


def _via_way_states(
    arrays: dict[str, np.ndarray],
    fa: np.ndarray,
    ta: np.ndarray,
    tw: np.ndarray,
    td: np.ndarray,
    longer: list[tuple[int, ...]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, int]]:
    """Duplicate search nodes for the proper prefixes (length >= 2) of the forbidden sequences (an Aho-Corasick
    automaton): the turn into a prefix's next arc goes to that prefix's copy, and the copy is refused the turn that
    completes a sequence. Returns the new turn list and node -> road arc map."""
    m = len(arrays["arc_head"])
    full = set(longer)
    prefixes: dict[tuple[int, ...], int] = {}
    for s in longer:
        for i in range(2, len(s)):
            prefixes.setdefault(s[:i], 0)
    for i, p in enumerate(sorted(prefixes)):
        prefixes[p] = m + i
    order = np.lexsort((ta, fa))
    fa, ta, tw, td = fa[order], ta[order], tw[order], td[order]
    starts = np.searchsorted(fa, np.arange(m + 1))

    def exits(a: int) -> list[tuple[int, int, int]]:
        return [(int(ta[k]), int(tw[k]), int(td[k])) for k in range(int(starts[a]), int(starts[a + 1]))]

    def target(state: tuple[int, ...], b: int) -> int | None:
        """The search node after turning onto b from `state` (None: a forbidden sequence completes)."""
        q = state + (b,)
        for i in range(len(q) - 1):  # every suffix of length >= 2
            if q[i:] in full:
                return None
        for i in range(len(q) - 1):  # the longest suffix that is a prefix
            if q[i:] in prefixes:
                return prefixes[q[i:]]
        return b

    redirect: dict[tuple[int, int], int] = {}  # (from arc, to arc) of an original node -> duplicate node
    for p, node in prefixes.items():
        if len(p) == 2:
            redirect[(p[0], p[1])] = node
    new_head = ta.copy()
    if redirect:
        for k in np.flatnonzero(np.isin(fa, np.array(sorted({a for a, _ in redirect}), dtype=np.int64))):
            node = redirect.get((int(fa[k]), int(ta[k])))  # type: ignore[assignment]
            if node is not None:
                new_head[k] = node
    # original nodes whose single-arc state completes a sequence of length 2 are pairs (removed before); the rest:
    extra_f, extra_t, extra_w, extra_d = [], [], [], []
    for p, node in sorted(prefixes.items(), key=lambda kv: kv[1]):
        for b, w, d in exits(p[-1]):
            t = target(p, b)
            if t is None:
                continue
            extra_f.append(node)
            extra_t.append(t)
            extra_w.append(w)
            extra_d.append(d)
    fa = np.concatenate([fa, np.array(extra_f, dtype=np.int64)])
    ta = np.concatenate([new_head, np.array(extra_t, dtype=np.int64)])
    tw = np.concatenate([tw, np.array(extra_w, dtype=np.int64)])
    td = np.concatenate([td, np.array(extra_d, dtype=np.int64)])
    node_arc = np.concatenate([np.arange(m, dtype=np.int64), np.array([p[-1] for p in sorted(prefixes)], np.int64)])
    return fa, ta, tw, td, node_arc, {"restriction_states": len(prefixes)}


def _components(arrays: dict[str, np.ndarray], n: int, tail: np.ndarray, head: np.ndarray) -> np.ndarray:
    """The search nodes' components as OSRM's `FindComponents` has them (0 the largest): strongly connected over the
    turns and, both ways, between the two directions of every two-way road, which OSRM ties into one component
    whatever the u-turns (its snapping judges a road tiny or not by it)."""
    fwd, bwd, _, _ = chain_arcs(arrays)
    both = (fwd >= 0) & (bwd >= 0)
    a, b = fwd[both], bwd[both]
    return strong_components(
        n, np.concatenate([tail, a, b]).astype(np.int32), np.concatenate([head, b, a]).astype(np.int32)
    )


def _search_arrays(
    arrays: dict[str, np.ndarray],
    fa: np.ndarray,
    ta: np.ndarray,
    tw: np.ndarray,
    td: np.ndarray,
    node_arc: np.ndarray,
) -> dict[str, np.ndarray]:
    """CSR of the turns (sorted by tail, head, weight), their attributes from the head arc, the nodes' places."""
    n = len(node_arc)
    road_to = node_arc[ta]
    weight = tw + arrays["arc_weight"][road_to].astype(np.int64)
    duration = td + arrays["arc_duration"][road_to].astype(np.int64)
    if len(weight) and int(weight.max()) >= 2**31:
        raise ValueError("a turn weight overflows int32 deciseconds")
    order = np.lexsort((weight, ta, fa))
    tail, head = fa[order].astype(np.int32), ta[order].astype(np.int32)
    road_to = road_to[order]
    rhead = arrays["arc_head"][node_arc]
    out = {
        "first_out": csr_offsets(tail, n),
        "arc_tail": tail,
        "arc_head": head,
        "arc_weight": weight[order].astype(np.int32),
        "arc_duration": duration[order].astype(np.int32),
        "arc_dist": arrays["arc_dist"][road_to].astype(np.int32),
        "arc_flags": arrays["arc_flags"][road_to].astype(np.uint8),
        "arc_class": arrays["arc_class"][road_to].astype(np.uint8),
        "node_lon": arrays["node_lon"][rhead].astype(np.int32),
        "node_lat": arrays["node_lat"][rhead].astype(np.int32),
        "node_component": _components(arrays, n, tail, head),
        "node_arc": node_arc.astype(np.int32),
        "arc_turn": tw[order].astype(np.int32),
        "arc_turn_duration": td[order].astype(np.int32),
    }
    in_arc = np.lexsort((np.arange(len(head)), head)).astype(np.int32)
    out["in_arc"] = in_arc
    out["in_first_out"] = csr_offsets(head[in_arc], n)
    return {EB_PREFIX + k: v for k, v in out.items()}

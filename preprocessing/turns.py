"""The turn stage: the road graph's junctions -> an edge-based search graph with turn costs and turn restrictions.

Search nodes are directed road arcs; a search arc `a -> b` is a turn allowed at the junction `head(a) == tail(b)`,
weighing the profile's turn duration plus the whole of `b` (a search node's label is the cost of reaching the *end*
of its road arc). So a search starts at its source arc's remaining part and ends at the arcs that turn into the
target arc, the turn and the target arc's first part as the seed weight: all weights stay non-negative and the
search code (core, CH, ALT, tables) runs unchanged on this graph.

Turn restrictions arrive as forbidden arc sequences (`preprocessing.restrictions`): a pair (via node) removes one
turn; a longer one (via ways) duplicates the search nodes along its proper prefixes, an Aho-Corasick automaton over
the sequences, so that a route entering the via path remembers it and is refused only the last turn. Duplicates map
back to their road arc (`eb_node_arc`).

U-turns follow OSRM (`isTurnAllowed`): only at dead ends (one road), where at most one road is two-way, where only one
exit is allowed, and at barriers (each barrier copy is a dead end here).

Arrays (prefix `eb_`, N search nodes, T turns; declared in `preprocessing.artifacts.ARRAYS`), each named as its
road-graph twin so the search stages read the view (`preprocessing.artifacts.search_view_arrays`, the engine's
`app.engine.data.search_graph`) like any graph: `eb_first_out` [N+1],
`eb_arc_tail`/`eb_arc_head` [T], `eb_arc_weight` (turn + head arc weight, ds), `eb_arc_dist` (head arc's dm),
`eb_arc_flags`/`eb_arc_class` (head arc's), `eb_in_first_out`/`eb_in_arc`, `eb_node_lon`/`eb_node_lat` (the road arc's
head), `eb_node_component` (SCC, 0 the largest), and `eb_node_arc` [N] (the road arc of each search node), `eb_arc_turn`
[T] (the turn's own weight, ds), `eb_arc_duration` / `eb_arc_turn_duration` the same in travel time (the profile's
`turn_weight_s` may weigh a turn more than it takes, e.g. car into a restricted road).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from .artifacts import EB_PREFIX
from .geometry import csr_offsets, osrm_bearings_deg
from .graph import strong_components
from .profiles.base import Turns
from .road_classification import compressed_nodes, travel_modes
from .units import COORD_SCALE, FLAG_RESTRICTED, FLAG_ROUNDABOUT, WEIGHT_PER_SECOND


def chain_ends(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per node: the number of road ends meeting there (a two-way road counts once) and how many of them are
    two-way."""
    n = len(arrays["node_lon"])
    tail, head, geom = arrays["arc_tail"], arrays["arc_head"], arrays["arc_geom"].astype(np.int64)
    chain, rev = geom >> 1, geom & 1
    # a road end: (node, chain, which end of the chain), as one key
    span = 2 * (int(chain.max(initial=0)) + 1)
    nodes = np.concatenate([tail, head]).astype(np.int64)
    ends = np.concatenate([2 * chain + rev, 2 * chain + (1 - rev)])
    key = np.unique(nodes * span + ends)
    end_node, end_chain = key // span, (key % span) >> 1
    two_way_chain = np.bincount(chain, minlength=span // 2) >= 2
    roads = np.bincount(end_node, minlength=n)
    two_way = np.bincount(end_node, weights=two_way_chain[end_chain], minlength=n).astype(np.int64)
    return roads, two_way


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
    roads, two_way = chain_ends(arrays)
    via = head[fa]
    u_turn = (tail[fa] == head[ta]) & ((geom[fa] >> 1) == (geom[ta] >> 1))
    # OSRM's isTurnAllowed for u-turns: dead ends, at most one two-way road, one allowed exit (restrictions counted)
    exits = np.bincount(fa[keep & ~u_turn], minlength=m)[fa] + (u_turn & keep)
    u_ok = (roads[via] == 1) | (two_way[via] <= 1) | (exits == 1)
    dropped = u_turn & keep & ~u_ok
    report["u_turns_not_allowed"] = int(dropped.sum())
    keep &= ~dropped
    fa, ta, u_turn, via = fa[keep], ta[keep], u_turn[keep], via[keep]
    leave, arrive = _bearings(arrays)
    angle = (leave[ta] - arrive[fa] + 540.0) % 360.0 - 180.0  # (-180, 180], + = right
    flags = arrays["arc_flags"]
    compressed = compressed_nodes(arrays)
    if forbidden_pairs is not None and len(forbidden_pairs):
        compressed[head[forbidden_pairs[:, 0]]] = False  # OSRM keeps a restriction's via node
    mode = travel_modes(arrays)
    turns = Turns(
        angle=np.where(u_turn, 180.0, angle),
        roads=roads[via].astype(np.int64),
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
        "node_component": strong_components(n, tail, head),
        "node_arc": node_arc.astype(np.int32),
        "arc_turn": tw[order].astype(np.int32),
        "arc_turn_duration": td[order].astype(np.int32),
    }
    in_arc = np.lexsort((np.arange(len(head)), head)).astype(np.int32)
    out["in_arc"] = in_arc
    out["in_first_out"] = csr_offsets(head[in_arc], n)
    return {EB_PREFIX + k: v for k, v in out.items()}

"""Alternative routes: via nodes on the hierarchy first, plateaus (choice routing) for what they do not find.

**Via nodes** (`app.engine.search.via_alternatives`, OSRM's CH alternatives): one bidirectional upward search without
stalling to the stretch bound collects the nodes v with `f(v) + b(v) <= 1.25 W` (W the best route's weight),
ranked by OSRM's order; each candidate's route `s -> v -> t` is two exact shortest paths, kept when it obeys the
rules below, its local optimality checked by OSRM's T-test (one CH query around v). Needs a hierarchy for the
request's excluded classes and no areas to avoid; about a millisecond on Porto, against tens for plateaus.

**Plateaus** (when the hierarchy gives fewer than asked, or none holds for the request): two bounded one-to-all
searches of the core, no precomputation. From the source seeds forward and from the target seeds backward, each
over the nodes whose label plus the consistent bound to the other end is at most `MAX_STRETCH` times W
(`Searcher.bounded_tree`: every node a route within the stretch can use, an ellipse rather than a disc). An arc that
lies on both shortest-path trees (the forward tree reaches its head through it, the backward tree leaves its tail
through it) is a plateau arc; plateau arcs chain into plateaus (`plateaus` visits only the nodes both trees settled
and their tree arcs). Each plateau P from x to y gives the route `s ->(forward tree) x ->(P) y ->(backward tree) t`
of weight `d_f(x) + d_b(x)`. Its prefix `s..y` lies on the forward tree and its suffix `x..t` on the backward tree,
so every subpath of weight at most `w(P)` is a shortest path: the route is locally optimal up to the plateau's
weight. Plateaus are taken longest first (the most "natural" detours), ties on the lower weight.

Quality rules, both methods (OSRM's numbers): weight at most `MAX_STRETCH` x W (1.25), sharing at most
`MAX_SHARING` (0.75) of its weight with the best route and with every alternative taken before it, locally optimal
up to `MIN_PLATEAU` x W (0.10: every stretch of the route weighing at most a tenth of the best route is a shortest
path), and no node twice (a route whose two halves cross is a loop, skipped).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from app.engine.route.assemble import join_route
from app.engine.route.legs import Legs
from app.engine.route.space import SearchSpace, SeedSet
from app.engine.search.searches import Searcher
from app.engine.search.via_alternatives import ViaSearch
from app.engine.types import Phantom, Route, SearchOptions, SearchStats
from floor.format.graph import Graph
from floor.format.units import INF_WEIGHT
from floor.kernels.jit import kernel

MAX_STRETCH = 1.25
MAX_SHARING = 0.75
MIN_PLATEAU = 0.10


@kernel
def plateaus(nodes, dist_f, pred_f, dist_b, pred_b, done_b, arc_tail, arc_head, arc_weight, limit):  # pragma: no cover
    """Every plateau as rows (first arc, last arc, plateau weight, route weight), route weight <= limit.

    `nodes`: the nodes both trees settled; only they and their tree arcs are visited. Arc a = pred_f[v] is a plateau
    arc when the backward tree leaves its tail through it too, so a plateau arc is known by its head (`on[v]`)."""
    n = dist_f.shape[0]
    on = np.zeros(n, dtype=np.bool_)
    for i in range(nodes.shape[0]):
        v = nodes[i]
        a = pred_f[v]
        if a < 0:
            continue
        u = arc_tail[a]
        if done_b[u] and pred_b[u] == a and dist_f[v] + dist_b[v] <= limit:
            on[v] = True
    k = 0
    for i in range(nodes.shape[0]):
        v = nodes[i]
        if on[v] and not on[arc_tail[pred_f[v]]]:  # a plateau starts at this arc (its tail's own arc is none)
            k += 1
    out = np.empty((k, 4), dtype=np.int64)
    k = 0
    for i in range(nodes.shape[0]):
        v = nodes[i]
        if not on[v]:
            continue
        a = pred_f[v]
        if on[arc_tail[a]]:
            continue
        length = 0
        last = a
        b = a
        while True:
            length += arc_weight[b]
            last = b
            nxt = pred_b[arc_head[b]]
            if nxt < 0 or not on[arc_head[nxt]] or pred_f[arc_head[nxt]] != nxt:
                break
            b = nxt
        x = arc_tail[a]
        out[k, 0] = a
        out[k, 1] = last
        out[k, 2] = length
        out[k, 3] = dist_f[x] + dist_b[x]
        k += 1
    return out


@kernel
def via_path(first, last, pred_f, pred_b, arc_tail, arc_head):  # pragma: no cover - numba
    """(arcs of `source seed -> first ... last -> target seed`, source seed, target seed) through the two trees."""
    k = 0
    v = arc_tail[first]
    while pred_f[v] >= 0:  # count the forward part
        k += 1
        v = arc_tail[pred_f[v]]
    s_seed = -1 - pred_f[v]
    n_plateau = 1
    b = first
    while b != last:
        b = pred_b[arc_head[b]]
        n_plateau += 1
    j = 0
    v = arc_head[last]
    while pred_b[v] >= 0:
        j += 1
        v = arc_head[pred_b[v]]
    t_seed = -1 - pred_b[v]
    out = np.empty(k + n_plateau + j, dtype=np.int32)
    i = k - 1
    v = arc_tail[first]
    while pred_f[v] >= 0:
        out[i] = pred_f[v]
        i -= 1
        v = arc_tail[pred_f[v]]
    i = k
    b = first
    out[i] = b
    while b != last:
        b = pred_b[arc_head[b]]
        i += 1
        out[i] = b
    v = arc_head[last]
    while pred_b[v] >= 0:
        i += 1
        out[i] = pred_b[v]
        v = arc_head[pred_b[v]]
    return out, s_seed, t_seed


@kernel
def _route_checks(arcs, kept, kept_first, weight, tail, n, m):  # pragma: no cover - numba
    """(whether `arcs` visits a node twice, the largest weight it shares with one of the routes `kept` holds, each
    `kept[kept_first[i]:kept_first[i + 1]]`)."""
    seen = np.zeros(n, dtype=np.bool_)
    for i in range(arcs.shape[0]):
        u = tail[arcs[i]]
        if seen[u]:
            return True, 0
        seen[u] = True
    on = np.zeros(m, dtype=np.bool_)
    most = 0
    for r in range(kept_first.shape[0] - 1):
        for i in range(kept_first[r], kept_first[r + 1]):
            on[kept[i]] = True
        shared = 0
        for i in range(arcs.shape[0]):  # arcs are distinct: no node twice
            if on[arcs[i]]:
                shared += weight[arcs[i]]
        most = max(most, shared)
        for i in range(kept_first[r], kept_first[r + 1]):
            on[kept[i]] = False
    return False, most


def acceptable(arcs: np.ndarray, total: int, best_weight: int, kept: list[np.ndarray], graph: Graph) -> bool:
    """Whether a route of road `arcs` weighing `total` ds keeps the stretch, visits no node twice (a plateau's prefix
    and suffix, or a via route's halves, cross), shares at most `MAX_SHARING` of its weight with each route in
    `kept` (road arcs of `graph`) and is not one of them again."""
    if total > MAX_STRETCH * best_weight or total >= INF_WEIGHT:
        return False
    ends = [0]
    for k in kept:  # a handful of routes: a loop costs less than numpy's conversion of the list
        ends.append(ends[-1] + len(k))
    first = np.array(ends, dtype=np.int64)
    flat = np.concatenate(kept).astype(np.int32, copy=False)
    road = np.asarray(arcs, dtype=np.int32)
    weight = graph.arc_weight
    twice, shared = _route_checks(road, flat, first, weight, graph.arc_tail, graph.num_nodes, len(weight))
    # OSRM's rule counts the shared road arcs' weight against the whole weight, turns included; a route all of whose
    # road arcs another one holds is that route again (its turns alone once kept a copy of the best under the bound)
    own = int(np.asarray(weight)[road].sum(dtype=np.int64)) if len(road) else 0
    return not twice and shared <= MAX_SHARING * total and (shared < own or own == 0)


def warm(hierarchy: Graph, search_graph: Graph, graph: Graph) -> None:
    """Load (or compile) the via-node kernels on `hierarchy` and the route checks, outside any request (the plateau
    kernels run in the warm-up's route that avoids an area)."""
    ViaSearch(hierarchy, search_graph).warm()
    empty = np.zeros(0, dtype=np.int32)
    _route_checks(empty, empty, np.zeros(1, dtype=np.int64), graph.arc_weight, graph.arc_tail, graph.num_nodes, 0)


Found = tuple[np.ndarray, "np.ndarray | None", int, int, int]  # road arcs, turns onto them, source/target seed, ds


def plateau_routes(
    space: SearchSpace, searcher: Searcher, s: SeedSet, t: SeedSet, best_weight: int, want: int,
    options: SearchOptions, kept: list[np.ndarray],
) -> list[Found]:  # fmt: skip
    """Up to `want` alternatives by plateaus (the module's rules; `kept`: the routes so far, extended)."""
    sg = space.search
    g = space.graph
    cutoff = int(MAX_STRETCH * best_weight) + 1
    opts = replace(options, cutoff=cutoff, trace=False, epsilon=1.0)
    dist_f, pred_f, done_f = searcher.bounded_tree(s.seeds, t.seeds, True, opts)
    dist_b, pred_b, done_b = searcher.bounded_tree(t.seeds, s.seeds, False, opts)
    both = np.flatnonzero(done_f & done_b).astype(np.int32)
    rows = plateaus(both, dist_f, pred_f, dist_b, pred_b, done_b, sg.arc_tail, sg.arc_head, sg.arc_weight, cutoff)
    taken: list[Found] = []
    for r in np.lexsort((rows[:, 3], -rows[:, 2])).tolist():
        first, last, plateau, total = (int(x) for x in rows[r])
        if plateau < MIN_PLATEAU * best_weight or total > MAX_STRETCH * best_weight:
            continue
        arcs, s_seed, t_seed = via_path(first, last, pred_f, pred_b, sg.arc_tail, sg.arc_head)
        road, turns = space.road_path(arcs, s, s_seed)
        if not acceptable(road, total, best_weight, kept, g):
            continue
        taken.append((road, turns, s_seed, t_seed, total))
        kept.append(road)
        if len(taken) == want:
            break
    return taken


def via_routes(
    space: SearchSpace, via: ViaSearch, s: SeedSet, t: SeedSet, best_weight: int, want: int, kept: list[np.ndarray]
) -> list[Found]:
    """Up to `want` alternatives through via nodes on the hierarchy (`app.engine.search.via_alternatives`), the module's
    rules checked exactly, local optimality by the T-test (`kept`: the routes so far, extended)."""
    g = space.graph
    window = MIN_PLATEAU * best_weight
    taken: list[Found] = []
    for arcs, before, s_seed, t_seed, total in via.candidates(s.seeds, t.seeds, MAX_STRETCH):
        road, turns = space.road_path(arcs, s, s_seed)
        if not acceptable(road, total, best_weight, kept, g):
            continue
        if not via.locally_optimal(arcs, before, window):
            continue
        taken.append((road, turns, s_seed, t_seed, total))
        kept.append(road)
        if len(taken) == want:
            break
    return taken


def alternative_routes(
    legs: Legs, searcher: Searcher, src: Phantom, tgt: Phantom, best: Route, want: int, options: SearchOptions,
    via: ViaSearch | None = None, plateaus: bool = True,
) -> list[Route]:  # fmt: skip
    """Up to `want` alternatives to `best` between two phantoms, on the search graph with `options`' filters
    (excluded classes, forbidden arcs): via nodes on the hierarchy `via` (None: none for these options), then
    plateaus for the rest unless `plateaus` is off; the module's rules."""
    space = legs.space
    s = space.seeds(src, True)
    t = space.seeds(tgt, False)
    kept = [np.concatenate([leg.piece_arc for leg in best.legs])]
    found = via_routes(space, via, s, t, best.weight, want, kept) if via is not None else []
    if len(found) < want and plateaus:
        found += plateau_routes(space, searcher, s, t, best.weight, want - len(found), options, kept)
    out = []
    for arcs, turns, s_seed, t_seed, total in found:
        leg = legs.assembler.search_leg(
            src, int(s.kinds[s_seed]), arcs, tgt, int(t.kinds[t_seed]), SearchStats("alternatives"), turns,
            tuple(t.turns[t_seed]),
        )  # fmt: skip
        assert leg.weight == total, f"alternative weighs {leg.weight} ds, its search said {total}"
        out.append(join_route([leg], best.algorithm))
    return out

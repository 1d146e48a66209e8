"""Alternative routes by plateaus (choice routing): two bounded one-to-all searches of the core, no precomputation.

From the source seeds forward and from the target seeds backward, each over the nodes whose label plus the
consistent bound to the other end is at most `MAX_STRETCH` times the best route's weight W (`Searcher.bounded_tree`:
every node a route within the stretch can use, an ellipse rather than a disc). An arc that lies on both
shortest-path trees (the forward tree reaches its head through it, the backward tree leaves its tail through it) is a
plateau arc; plateau arcs chain into plateaus. Each plateau P from x to y gives the route
`s ->(forward tree) x ->(P) y ->(backward tree) t` of weight `d_f(x) + d_b(x)`. Its prefix `s..y` lies on the
forward tree and its suffix `x..t` on the backward tree, so every subpath of weight at most `w(P)` is a shortest
path: the route is locally optimal up to the plateau's weight.

Quality rules (OSRM's multi-level alternatives use the same numbers): weight at most `MAX_STRETCH` x W (1.25),
sharing at most `MAX_SHARING` (0.75) of its weight with the best route and with every alternative taken before it,
and a plateau of at least `MIN_PLATEAU` x W (0.10: locally optimal around the detour for at least a tenth of the
route). Candidates are taken by plateau weight, longest first (the most "natural" detours), ties on the lower
weight. A candidate whose tree prefix and suffix cross (a loop) is not a route and is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from preprocessing.jit import kernel
from preprocessing.units import INF_WEIGHT

from .assemble import join_route
from .legs import Legs
from .search import Searcher
from .types import Phantom, Route, SearchOptions, SearchStats

MAX_STRETCH = 1.25
MAX_SHARING = 0.75
MIN_PLATEAU = 0.10


@kernel
def plateaus(dist_f, pred_f, done_f, dist_b, pred_b, done_b, arc_tail, arc_head, arc_weight, limit):  # pragma: no cover
    """Every plateau as rows (first arc, last arc, plateau weight, route weight), route weight <= limit."""
    m = arc_tail.shape[0]
    on = np.zeros(m, dtype=np.bool_)
    for a in range(m):
        u = arc_tail[a]
        v = arc_head[a]
        if done_f[v] and done_b[u] and pred_f[v] == a and pred_b[u] == a and dist_f[v] + dist_b[v] <= limit:
            on[a] = True
    k = 0
    for a in range(m):
        if on[a]:
            p = pred_f[arc_tail[a]]
            if not (p >= 0 and on[p]):  # a plateau starts here
                k += 1
    out = np.empty((k, 4), dtype=np.int64)
    k = 0
    for a in range(m):
        if not on[a]:
            continue
        p = pred_f[arc_tail[a]]
        if p >= 0 and on[p]:
            continue
        length = 0
        last = a
        b = a
        while True:
            length += arc_weight[b]
            last = b
            nxt = pred_b[arc_head[b]]
            if nxt < 0 or not on[nxt]:
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


def shared_weight(arcs: np.ndarray, other: np.ndarray, weight: np.ndarray) -> int:
    """Weight (ds) of the arcs of `arcs` that `other` uses too."""
    common = np.intersect1d(np.asarray(arcs), np.asarray(other))
    return int(np.asarray(weight)[common].sum())


def choose(
    rows: np.ndarray,
    best_weight: int,
    want: int,
    path: Callable[[int, int], tuple[np.ndarray, int, int]],  # (first arc, last arc) -> (arcs, source/target seed)
    best_arcs: np.ndarray,
    weight: np.ndarray,
    tail: np.ndarray,
) -> list[tuple[np.ndarray, int, int, int]]:
    """Up to `want` alternatives as (arcs, source seed, target seed, route weight) by the module's rules; `weight` and
    `tail` are the graph's arc weights and tails."""
    limit = MAX_STRETCH * best_weight
    order = np.lexsort((rows[:, 3], -rows[:, 2]))
    taken: list[tuple[np.ndarray, int, int, int]] = []
    kept = [np.asarray(best_arcs)]
    for r in order.tolist():
        first, last, plateau, total = (int(x) for x in rows[r])
        if total > limit or total >= INF_WEIGHT or plateau < MIN_PLATEAU * best_weight:
            continue
        arcs, s_seed, t_seed = path(first, last)
        if np.unique(np.asarray(tail)[arcs]).size < arcs.size:  # a node twice: the prefix and suffix cross
            continue
        if any(shared_weight(arcs, other, weight) > MAX_SHARING * total for other in kept):
            continue
        taken.append((arcs, s_seed, t_seed, total))
        kept.append(arcs)
        if len(taken) == want:
            break
    return taken


def alternative_routes(
    legs: Legs, searcher: Searcher, src: Phantom, tgt: Phantom, best: Route, want: int, options: SearchOptions
) -> list[Route]:
    """Up to `want` alternatives to `best` between two phantoms, on the search graph with `options`' filters
    (excluded classes, forbidden arcs): two bounded trees, their plateaus, the module's rules."""
    space = legs.space
    g, sg = space.graph, space.search
    s = space.seeds(src, True)
    t = space.seeds(tgt, False)
    cutoff = int(MAX_STRETCH * best.weight) + 1
    opts = replace(options, cutoff=cutoff, trace=False, epsilon=1.0)
    dist_f, pred_f, done_f = searcher.bounded_tree(s.seeds, t.seeds, True, opts)
    dist_b, pred_b, done_b = searcher.bounded_tree(t.seeds, s.seeds, False, opts)
    rows = plateaus(dist_f, pred_f, done_f, dist_b, pred_b, done_b, sg.arc_tail, sg.arc_head, sg.arc_weight, cutoff)
    best_arcs = np.concatenate([leg.piece_arc for leg in best.legs])
    turns_of: dict[bytes, np.ndarray | None] = {}

    def path(first: int, last: int) -> tuple[np.ndarray, int, int]:
        """The plateau's route as road arcs (the turns onto them kept for the leg)."""
        arcs, s_seed, t_seed = via_path(first, last, pred_f, pred_b, sg.arc_tail, sg.arc_head)
        road, turns = space.road_path(arcs, s, s_seed)
        turns_of[road.tobytes()] = turns
        return road, s_seed, t_seed

    out = []
    for arcs, s_seed, t_seed, total in choose(rows, best.weight, want, path, best_arcs, g.arc_weight, g.arc_tail):
        turns = turns_of.get(np.asarray(arcs, dtype=np.int32).tobytes())
        leg = legs.assembler.search_leg(
            src, int(s.kinds[s_seed]), arcs, tgt, int(t.kinds[t_seed]), SearchStats("alternatives"), turns,
            tuple(t.turns[t_seed]),
        )  # fmt: skip
        assert leg.weight == total, f"alternative weighs {leg.weight} ds, its plateau said {total}"
        out.append(join_route([leg], best.algorithm))
    return out

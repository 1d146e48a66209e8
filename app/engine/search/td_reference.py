"""The time-dependent oracle: plain TD-Dijkstra over the same travel-time functions, kept apart from the fast
searches (`app.engine.search.timedep`) on purpose, as `reference` is for the static ones.

It shares only the travel-time function `timedep.ttf` (the one formula every search must use) and the heap. No
potentials, no stopping rule but the obvious one, fresh arrays per call: slow and simple. `algorithm=dijkstra` with a
departure time answers with it; tests hold every other time-dependent answer to it.
"""

from __future__ import annotations

import numpy as np

from app.engine.search.timedep import TDArrays, ttf
from floor.format.units import INF_WEIGHT
from floor.kernels.heap import heap_pop, heap_push
from floor.kernels.jit import kernel


@kernel
def _td_dijkstra(g, excl, s_nodes, s_part, s_row, tau0, t_nodes, t_turn, t_part, t_row, lab, pred):  # pragma: no cover
    """Earliest arrival at every node (`lab`, week time; INF_WEIGHT unreached) and the predecessor arc (-1 - seed at a
    source); returns (best arrival at a target seed, its seed index, settled nodes)."""
    n = lab.shape[0]
    for v in range(n):
        lab[v] = INF_WEIGHT
        pred[v] = -1
    done = np.zeros(n, np.bool_)
    hk = np.empty(g.arc_head.shape[0] + s_nodes.shape[0] + 8, np.int64)
    hn = np.empty(hk.shape[0], np.int32)
    size = 0
    for i in range(s_nodes.shape[0]):
        v = s_nodes[i]
        a = tau0 + ttf(s_part[i], s_row[i], g.factor, tau0)
        if a < lab[v]:
            lab[v] = a
            pred[v] = -1 - i
            size = heap_push(hk, hn, size, a, v)
    settled = 0
    while size > 0:
        key, u, size = heap_pop(hk, hn, size)
        if done[u] or key > lab[u]:
            continue
        done[u] = True
        settled += 1
        for e in range(g.first_out[u], g.first_out[u + 1]):
            if g.arc_flags[e] & excl:
                continue
            v = g.arc_head[e]
            d = g.node_dur[v]
            if d < 0:
                continue
            te = key + g.arc_turn[e]
            a = te + ttf(d, g.node_row[v], g.factor, te)
            if a < lab[v]:
                lab[v] = a
                pred[v] = e
                size = heap_push(hk, hn, size, a, v)
    best = INF_WEIGHT
    best_j = -1
    for j in range(t_nodes.shape[0]):
        u = t_nodes[j]
        if lab[u] >= INF_WEIGHT:
            continue
        tt = lab[u] + t_turn[j]
        c = tt + ttf(t_part[j], t_row[j], g.factor, tt)
        if c < best:
            best = c
            best_j = j
    return best, best_j, settled


def td_dijkstra(
    g: TDArrays,
    sources: tuple[np.ndarray, np.ndarray, np.ndarray],
    tau0: int,
    targets: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    excl: int = 0,
) -> tuple[int, int, np.ndarray, np.ndarray]:
    """(arrival week time at the best target seed or INF_WEIGHT, its seed index, labels, predecessor arcs) of a
    departure at week time `tau0`; `sources` = (nodes, parts, rows), `targets` = (nodes, turns, parts, rows)."""
    n = g.node_dur.shape[0]
    lab = np.empty(n, np.int64)
    pred = np.empty(n, np.int32)
    best, j, _ = _td_dijkstra(g, int(excl), *sources, np.int64(tau0), *targets, lab, pred)
    return int(best), int(j), lab, pred

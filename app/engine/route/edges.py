"""Where the edge-based search graph (`preprocessing.turns`) meets the road graph: seeds and paths.

A search node is a road arc (or a copy of one a via-way restriction made), labelled with the cost of reaching the
arc's *end*; a search arc is a turn weighing the turn plus its whole head arc. So a phantom seeds the search

- as a source: its own arc(s) at the part left after the snapped point (no turn: the route starts on that arc);
- as a target: every search node that may turn into its arc (any copy of it), at that turn plus the part before the
  snapped point. A forbidden turn has no search arc, so it seeds nothing.

A search path (turn ids) maps back to the road arcs it drives, each with the turn taken onto it; the target's turn
is kept per seed. Snapping, geometry and guidance stay on the road graph.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np

from app.engine.types import Phantom, Seeds, new_seeds
from floor.format.graph import Graph
from floor.kernels.geometry import csr_offsets
from floor.kernels.jit import Entries, kernel

FWD, BWD, AT_FIRST, AT_LAST = 0, 1, 2, 3  # as app.engine.route.assemble


class FlatSeeds(NamedTuple):
    """The seeds of many phantoms in flat arrays: phantom i's at off[i]..off[i+1]-1 (node ids int32; weights (ds),
    dists (dm), travel times (ds) int64), each phantom's as its `Seeds` lists them (the kernels' input)."""

    nodes: np.ndarray
    weights: np.ndarray
    dists: np.ndarray
    times: np.ndarray
    off: np.ndarray


class SeedArrays(NamedTuple):
    """What `_edge_seeds` reads of the road graph and the search graph: built once per `EdgeMap` (and again by
    `EdgeMap.reweighted`, a derived router's weights)."""

    road_first_out: np.ndarray  # road graph CSR
    road_in_first: np.ndarray
    road_in_arc: np.ndarray
    road_weight: np.ndarray  # per road arc: weight (ds), dist (dm), travel time (ds)
    road_dist: np.ndarray
    road_time: np.ndarray
    copies_first: np.ndarray  # road arc -> its search nodes (`EdgeMap.copies`), when `has_copies`
    copies: np.ndarray
    has_copies: bool
    in_first: np.ndarray  # search graph in-arcs CSR
    in_arc: np.ndarray
    s_tail: np.ndarray  # per search arc: tail, turn weight, turn time
    arc_turn: np.ndarray
    arc_turn_time: np.ndarray


class PathArrays(NamedTuple):
    """What `_road_path` reads after a search path: per search node its road arc, per search arc its head and turn."""

    node_arc: np.ndarray
    s_head: np.ndarray
    arc_turn: np.ndarray
    arc_turn_time: np.ndarray


def seed_figures(ph: Phantom, as_source: bool) -> tuple[int, int, int, int, int, int, int, int]:
    """What a phantom seeds a search with, along each of its arcs: (fwd arc, weight, dist, travel time, bwd arc,
    weight, dist, travel time), the part after the point for a source, the part before it for a target."""
    fb, fa, bb, ba = ph.times()
    if as_source:
        return (ph.fwd_arc, ph.fwd_weight_after, ph.fwd_dist_after, fa,
                ph.bwd_arc, ph.bwd_weight_after, ph.bwd_dist_after, ba)  # fmt: skip
    return (ph.fwd_arc, ph.fwd_weight_before, ph.fwd_dist_before, fb,
            ph.bwd_arc, ph.bwd_weight_before, ph.bwd_dist_before, bb)  # fmt: skip


def _many_inputs(
    phantoms: list[Phantom], as_source: bool, at_nodes: np.ndarray, at_kinds: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arguments `_edge_seed_rows` takes for many phantoms: (at nodes, at kinds, `seed_figures` [p, 8]) int64."""
    f = np.array([seed_figures(ph, as_source) for ph in phantoms], dtype=np.int64).reshape(-1, 8)
    return np.asarray(at_nodes, dtype=np.int64), np.asarray(at_kinds, dtype=np.int64), f


class EdgeMap:
    """Seeds of phantoms and road paths of search paths on one edge-based graph (immutable, shared)."""

    def __init__(self, road: Graph, search: Graph) -> None:
        self.search = search
        self.node_arc = np.asarray(search.node_arc)
        self.arc_turn = np.asarray(search.arc_turn)
        self.arc_turn_time = np.asarray(search.arc_turn_duration)
        self.s_head = np.asarray(search.arc_head)
        self.s_tail = np.asarray(search.arc_tail)
        self.in_first = np.asarray(search.in_first_out)
        self.in_arc = np.asarray(search.in_arc)
        self.road_first_out = np.asarray(road.first_out)
        self.road_in_first = np.asarray(road.in_first_out)
        self.road_in_arc = np.asarray(road.in_arc)
        self.road_weight = np.asarray(road.arc_weight)
        self.road_time = np.asarray(road.arc_duration)
        self.road_dist = np.asarray(road.arc_dist)
        m = int(road.arc_head.shape[0])
        order = np.argsort(self.node_arc, kind="stable").astype(np.int32)
        self._copies = order
        self._copies_first = csr_offsets(self.node_arc[order], m)
        self._has_copies = len(self.node_arc) > m
        self._tuples()

    def _tuples(self) -> None:
        """(Re)build the kernels' arguments from the arrays: `seed_arrays` (`_edge_seeds`) and `path_arrays`."""
        self.seed_arrays = SeedArrays(
            self.road_first_out, self.road_in_first, self.road_in_arc, self.road_weight, self.road_dist,
            self.road_time, self._copies_first, self._copies, self._has_copies, self.in_first, self.in_arc,
            self.s_tail, self.arc_turn, self.arc_turn_time,
        )  # fmt: skip
        self.path_arrays = PathArrays(self.node_arc, self.s_head, self.arc_turn, self.arc_turn_time)

    def reweighted(self, road: Graph, search: Graph) -> EdgeMap:
        """This map over the same graphs with another metric's weights and travel times (`Router.derive`): the
        arrays copied by reference, the weights replaced."""
        edges = copy.copy(self)
        edges.search = search
        edges.road_weight = np.asarray(road.arc_weight)
        edges.road_time = np.asarray(road.arc_duration)
        edges.arc_turn = np.asarray(search.arc_turn)
        edges.arc_turn_time = np.asarray(search.arc_turn_duration)
        edges._tuples()
        return edges

    def copies(self, arc: int) -> np.ndarray:
        """The search nodes standing for road arc `arc` (the arc itself first)."""
        if not self._has_copies:
            return np.array([arc], dtype=np.int32)
        return self._copies[self._copies_first[arc] : self._copies_first[arc + 1]]

    def seeds(
        self, ph: Phantom, as_source: bool, at_node: int = -1, at_kind: int = AT_FIRST, own_arcs: bool = True
    ) -> tuple[Seeds, np.ndarray, np.ndarray]:
        """(Seeds, kind per seed, the turn inside each seed's figures as int64 [k, 2] (weight, travel time)) of a
        phantom; one seed per search node, the cheapest (then the shortest; the first on ties), by node id. A phantom
        exactly on road node `at_node` (kind `at_kind`) also starts on any arc leaving that node (its whole weight,
        no turn), or ends on any arc arriving there (at 0). Without `own_arcs`, only those: none on the phantom's
        own arcs."""
        fwd, fw, fd, ft, bwd, bw, bd, bt = seed_figures(ph, as_source)
        if not own_arcs:
            fwd = bwd = -1
        args = (bool(as_source), at_node, at_kind, fwd, fw, fd, ft, bwd, bw, bd, bt, self.seed_arrays)
        nodes, w, d, t, kinds, turns = _SEED_SET.get(args, (self.seed_arrays,))(*args)
        return new_seeds(nodes, w, d, ph.lon, ph.lat, t), kinds, turns

    def seeds_many(
        self, phantoms: list[Phantom], as_source: bool, at_nodes: np.ndarray, at_kinds: np.ndarray
    ) -> FlatSeeds:
        """The seeds of many phantoms at once, flattened (`FlatSeeds`; phantom i's at off[i]..off[i+1]-1): the same
        seeds as `seeds` gives for each, in one kernel call (a table's sources or destinations)."""
        flat = _edge_seeds_many(as_source, *_many_inputs(phantoms, as_source, at_nodes, at_kinds), self.seed_arrays)
        return FlatSeeds(*flat)

    def seed_sets(
        self, phantoms: list[Phantom], as_source: bool, at_nodes: np.ndarray, at_kinds: np.ndarray
    ) -> list[tuple[Seeds, np.ndarray, np.ndarray]]:
        """`seeds` of many phantoms (each on `at_nodes[i]` of kind `at_kinds[i]`, or -1) in one kernel call: each
        phantom's (Seeds, kinds, turns) as views of the flat arrays."""
        inputs = _many_inputs(phantoms, as_source, at_nodes, at_kinds)
        nodes, w, d, t, kind, turns, off = _edge_seed_sets(bool(as_source), *inputs, self.seed_arrays)
        bounds = off.tolist()
        return [
            (new_seeds(nodes[lo:hi], w[lo:hi], d[lo:hi], ph.lon, ph.lat, t[lo:hi]), kind[lo:hi], turns[lo:hi])
            for ph, lo, hi in zip(phantoms, bounds, bounds[1:], strict=False)
        ]

    def road_path(self, search_arcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(road arcs int32, the turn onto each as int64 [n, 2] (weight, travel time)) of a search path between its
        seed nodes."""
        return _road_path(np.asarray(search_arcs), self.path_arrays)

    def with_first(self, node: int, arcs: np.ndarray, turns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A road path with the whole arc of search node `node` in front (a leg that starts on a node, no turn)."""
        first = np.array([self.node_arc[node]], dtype=np.int32)
        return np.concatenate([first, arcs]).astype(np.int32), np.concatenate([np.zeros((1, 2), np.int64), turns])

    def forbidden(self, road_arcs: np.ndarray) -> np.ndarray:
        """The turns (search arc ids, int32) onto any of `road_arcs`: what a request forbidding those arcs may not
        take."""
        out = []
        for a in np.asarray(road_arcs, dtype=np.int64).tolist():
            for e in self.copies(a).tolist():
                out.append(self.in_arc[int(self.in_first[e]) : int(self.in_first[e + 1])])
        return np.concatenate(out).astype(np.int32) if out else np.zeros(0, dtype=np.int32)


@kernel
def _road_path(search_arcs, path_arrays):  # pragma: no cover - numba
    """`EdgeMap.road_path` in one pass (`path_arrays` a `PathArrays`)."""
    node_arc, s_head, arc_turn, arc_turn_time = path_arrays
    n = search_arcs.shape[0]
    road = np.empty(n, np.int32)
    turns = np.empty((n, 2), np.int64)
    for i in range(n):
        a = search_arcs[i]
        road[i] = node_arc[s_head[a]]
        turns[i, 0], turns[i, 1] = arc_turn[a], arc_turn_time[a]
    return road, turns


@kernel
def _seed_columns(rows):  # pragma: no cover - numba
    """`_edge_seeds`' rows as contiguous columns: weight, dist, time, kind, and the turn [k, 2]."""
    k = rows.shape[0]
    w, d, t, kind = np.empty(k, np.int64), np.empty(k, np.int64), np.empty(k, np.int64), np.empty(k, np.int64)
    turns = np.empty((k, 2), np.int64)
    for i in range(k):
        w[i], d[i], t[i], kind[i] = rows[i, 0], rows[i, 1], rows[i, 2], rows[i, 3]
        turns[i, 0], turns[i, 1] = rows[i, 4], rows[i, 5]
    return w, d, t, kind, turns


@kernel
def _edge_seed_set(as_source, at_node, at_kind, fwd, fw, fd, ft, bwd, bw, bd, bt, arrays):  # pragma: no cover - numba
    """`_edge_seeds` in the columns of `_seed_columns`: (nodes, weight, dist, time, kind, turns [k, 2]), one call."""
    nodes, rows = _edge_seeds(as_source, at_node, at_kind, fwd, fw, fd, ft, bwd, bw, bd, bt, arrays)
    w, d, t, kind, turns = _seed_columns(rows)
    return nodes, w, d, t, kind, turns


# `_edge_seed_set` through its compiled entry point, kept per `SeedArrays` (the struct numba would type per call);
# the other arguments are a bool and Python ints
_SEED_SET = Entries(_edge_seed_set)


@kernel
def _edge_seeds(as_source, at_node, at_kind, fwd, fw, fd, ft, bwd, bw, bd, bt, arrays):  # pragma: no cover - numba
    """(nodes int32 [k], rows int64 [k, 6] = weight, dist, time, kind, turn weight, turn time) of `EdgeMap.seeds`;
    `arrays` is a `SeedArrays`."""
    (road_first_out, road_in_first, road_in_arc, road_weight, road_dist, road_time, copies_first, copies, has_copies,
     in_first, in_arc, s_tail, arc_turn, arc_turn_time) = arrays  # fmt: skip
    cap = 8
    if at_node >= 0:
        if as_source:
            cap += road_first_out[at_node + 1] - road_first_out[at_node]
        else:
            for k in range(road_in_first[at_node], road_in_first[at_node + 1]):
                a = road_in_arc[k]
                cap += (copies_first[a + 1] - copies_first[a]) if has_copies else 1
    if not as_source:
        for arc in (fwd, bwd):
            if arc >= 0:
                lo, hi = (copies_first[arc], copies_first[arc + 1]) if has_copies else (0, 1)
                for c in range(lo, hi):
                    e = copies[c] if has_copies else arc
                    cap += in_first[e + 1] - in_first[e]
    nodes = np.empty(cap, dtype=np.int32)
    rows = np.empty((cap, 6), dtype=np.int64)
    k = 0
    if at_node >= 0:
        if as_source:
            for a in range(road_first_out[at_node], road_first_out[at_node + 1]):
                nodes[k] = a
                rows[k, 0], rows[k, 1], rows[k, 2] = road_weight[a], road_dist[a], road_time[a]
                rows[k, 3], rows[k, 4], rows[k, 5] = at_kind, 0, 0
                k += 1
        else:
            for i in range(road_in_first[at_node], road_in_first[at_node + 1]):
                a = road_in_arc[i]
                lo, hi = (copies_first[a], copies_first[a + 1]) if has_copies else (0, 1)
                for c in range(lo, hi):
                    nodes[k] = copies[c] if has_copies else a
                    rows[k, 0], rows[k, 1], rows[k, 2], rows[k, 3], rows[k, 4], rows[k, 5] = 0, 0, 0, at_kind, 0, 0
                    k += 1
    for side in range(2):
        arc = fwd if side == 0 else bwd
        if arc < 0:
            continue
        w = fw if side == 0 else bw
        d = fd if side == 0 else bd
        t = ft if side == 0 else bt
        if as_source:
            nodes[k] = arc
            rows[k, 0], rows[k, 1], rows[k, 2], rows[k, 3], rows[k, 4], rows[k, 5] = w, d, t, side, 0, 0
            k += 1
            continue
        lo, hi = (copies_first[arc], copies_first[arc + 1]) if has_copies else (0, 1)
        for c in range(lo, hi):
            e = copies[c] if has_copies else arc
            for i in range(in_first[e], in_first[e + 1]):
                g = in_arc[i]
                nodes[k] = s_tail[g]
                rows[k, 0], rows[k, 1], rows[k, 2] = arc_turn[g] + w, d, arc_turn_time[g] + t
                rows[k, 3], rows[k, 4], rows[k, 5] = side, arc_turn[g], arc_turn_time[g]
                k += 1
    # one per node: the cheapest (weight, dist), the first on ties; then by node id
    keep = np.ones(k, dtype=np.bool_)
    for i in range(k):
        for j in range(k):
            if i != j and nodes[i] == nodes[j]:
                if rows[j, 0] < rows[i, 0] or (rows[j, 0] == rows[i, 0] and (rows[j, 1] < rows[i, 1] or (
                        rows[j, 1] == rows[i, 1] and j < i))):  # fmt: skip
                    keep[i] = False
    m = 0
    for i in range(k):
        if keep[i]:
            m += 1
    out_n = np.empty(m, dtype=np.int32)
    out_r = np.empty((m, 6), dtype=np.int64)
    m = 0
    for i in range(k):
        if keep[i]:
            # insertion by node id
            p = m
            while p > 0 and out_n[p - 1] > nodes[i]:
                out_n[p] = out_n[p - 1]
                for col in range(6):
                    out_r[p, col] = out_r[p - 1, col]
                p -= 1
            out_n[p] = nodes[i]
            for col in range(6):
                out_r[p, col] = rows[i, col]
            m += 1
    return out_n, out_r


@kernel
def _edge_seed_rows(as_source, at_nodes, at_kinds, f, arrays):  # pragma: no cover - numba
    """`_edge_seeds` of every phantom (f [p, 8] = fwd arc, weight, dist, time, bwd arc, weight, dist, time), flat:
    (nodes int32 [k], rows int64 [k, 6] as `_edge_seeds` gives them, off int64 [p + 1])."""
    p = f.shape[0]
    off = np.zeros(p + 1, dtype=np.int64)
    cap = 8 * p + 8
    nodes = np.empty(cap, dtype=np.int32)
    vals = np.empty((cap, 6), dtype=np.int64)
    k = 0
    for i in range(p):
        n_i, r_i = _edge_seeds(
            as_source, at_nodes[i], at_kinds[i], f[i, 0], f[i, 1], f[i, 2], f[i, 3], f[i, 4], f[i, 5], f[i, 6],
            f[i, 7], arrays,
        )  # fmt: skip
        m = n_i.shape[0]
        if k + m > cap:
            cap = 2 * (k + m)
            bigger_n = np.empty(cap, dtype=np.int32)
            bigger_v = np.empty((cap, 6), dtype=np.int64)
            for j in range(k):
                bigger_n[j] = nodes[j]
                for c in range(6):
                    bigger_v[j, c] = vals[j, c]
            nodes, vals = bigger_n, bigger_v
        for j in range(m):
            nodes[k] = n_i[j]
            for c in range(6):
                vals[k, c] = r_i[j, c]
            k += 1
        off[i + 1] = k
    return nodes[:k].copy(), vals[:k].copy(), off


@kernel
def _edge_seeds_many(as_source, at_nodes, at_kinds, f, arrays):  # pragma: no cover - numba
    """`_edge_seed_rows` as `FlatSeeds`' columns: (nodes int32, weights, dists, times int64, off int64 [p + 1])."""
    nodes, rows, off = _edge_seed_rows(as_source, at_nodes, at_kinds, f, arrays)
    k = nodes.shape[0]
    w = np.empty(k, dtype=np.int64)
    d = np.empty(k, dtype=np.int64)
    t = np.empty(k, dtype=np.int64)
    for j in range(k):
        w[j] = rows[j, 0]
        d[j] = rows[j, 1]
        t[j] = rows[j, 2]
    return nodes, w, d, t, off


@kernel
def _edge_seed_sets(as_source, at_nodes, at_kinds, f, arrays):  # pragma: no cover - numba
    """`_edge_seed_rows` in `_seed_columns`' columns: (nodes int32, weight, dist, time, kind, turns [k, 2], off)."""
    nodes, rows, off = _edge_seed_rows(as_source, at_nodes, at_kinds, f, arrays)
    w, d, t, kind, turns = _seed_columns(rows)
    return nodes, w, d, t, kind, turns, off

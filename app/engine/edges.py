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

import numpy as np

from preprocessing.artifacts import Graph
from preprocessing.graph import csr_offsets

from .types import Phantom, Seeds

FWD, BWD, AT_FIRST, AT_LAST = 0, 1, 2, 3  # as app.engine.assemble


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

    def copies(self, arc: int) -> np.ndarray:
        """The search nodes standing for road arc `arc` (the arc itself first)."""
        if not self._has_copies:
            return np.array([arc], dtype=np.int32)
        return self._copies[self._copies_first[arc] : self._copies_first[arc + 1]]

    def seeds(
        self, ph: Phantom, as_source: bool, at_node: int = -1, at_kind: int = AT_FIRST
    ) -> tuple[Seeds, np.ndarray, np.ndarray]:
        """(Seeds, kind per seed, the turn inside each seed's figures as int64 [k, 2] (weight, travel time)) of a
        phantom; one seed per search node, the cheapest (then the shortest). A phantom exactly on road node
        `at_node` (kind `at_kind`) also starts on any arc leaving that node (its whole weight, no turn), or ends on
        any arc arriving there (at 0)."""
        best: dict[int, tuple[int, int, int, int, int, int]] = {}  # node -> (weight, dist, time, kind, turn w, t)
        if at_node >= 0:
            if as_source:
                for a in range(int(self.road_first_out[at_node]), int(self.road_first_out[at_node + 1])):
                    best[a] = (int(self.road_weight[a]), int(self.road_dist[a]), int(self.road_time[a]), at_kind, 0, 0)
            else:
                for k in range(int(self.road_in_first[at_node]), int(self.road_in_first[at_node + 1])):
                    for e in self.copies(int(self.road_in_arc[k])).tolist():
                        best[e] = (0, 0, 0, at_kind, 0, 0)
        fb, fa, bb, ba = ph.times()
        for kind, arc, after, d_after, t_after, before, d_before, t_before in (
            (FWD, ph.fwd_arc, ph.fwd_weight_after, ph.fwd_dist_after, fa, ph.fwd_weight_before, ph.fwd_dist_before,
             fb),
            (BWD, ph.bwd_arc, ph.bwd_weight_after, ph.bwd_dist_after, ba, ph.bwd_weight_before, ph.bwd_dist_before,
             bb),
        ):  # fmt: skip
            if arc < 0:
                continue
            if as_source:
                cand = [(int(arc), int(after), int(d_after), int(t_after), 0, 0)]
            else:
                cand = []
                for e in self.copies(int(arc)).tolist():
                    for k in range(int(self.in_first[e]), int(self.in_first[e + 1])):
                        t = int(self.in_arc[k])
                        tw, tt = int(self.arc_turn[t]), int(self.arc_turn_time[t])
                        cand.append((int(self.s_tail[t]), tw + int(before), int(d_before), tt + int(t_before), tw, tt))
            for node, w, d, tm, tw, tt in cand:
                old = best.get(node)
                if old is None or (w, d) < (old[0], old[1]):
                    best[node] = (w, d, tm, kind, tw, tt)
        nodes = np.array(sorted(best), dtype=np.int32)
        vals = np.array([best[v] for v in nodes.tolist()], dtype=np.int64).reshape(-1, 6)
        seeds = Seeds(nodes, vals[:, 0].copy(), vals[:, 1].copy(), ph.lon, ph.lat, vals[:, 2].copy())
        return seeds, vals[:, 3].copy(), vals[:, 4:6].copy()

    def road_path(self, search_arcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(road arcs int32, the turn onto each as int64 [n, 2] (weight, travel time)) of a search path between its
        seed nodes."""
        arcs = np.asarray(search_arcs, dtype=np.int64)
        turns = np.stack([self.arc_turn[arcs], self.arc_turn_time[arcs]], axis=1).astype(np.int64)
        return self.node_arc[self.s_head[arcs]].astype(np.int32), turns.reshape(-1, 2)

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

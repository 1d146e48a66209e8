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

FWD, BWD = 0, 1  # as app.engine.assemble


class EdgeMap:
    """Seeds of phantoms and road paths of search paths on one edge-based graph (immutable, shared)."""

    def __init__(self, road: Graph, search: Graph) -> None:
        self.search = search
        self.node_arc = np.asarray(search.node_arc)
        self.arc_turn = np.asarray(search.arc_turn)
        self.s_head = np.asarray(search.arc_head)
        self.s_tail = np.asarray(search.arc_tail)
        self.in_first = np.asarray(search.in_first_out)
        self.in_arc = np.asarray(search.in_arc)
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

    def seeds(self, ph: Phantom, as_source: bool) -> tuple[Seeds, np.ndarray, np.ndarray]:
        """(Seeds, kind FWD/BWD per seed, turn weight inside each seed's weight) of a phantom; one seed per search
        node, the cheapest (then the shortest)."""
        best: dict[int, tuple[int, int, int, int]] = {}  # node -> (weight, dist, kind, turn)
        for kind, arc, after, d_after, before, d_before in (
            (FWD, ph.fwd_arc, ph.fwd_weight_after, ph.fwd_dist_after, ph.fwd_weight_before, ph.fwd_dist_before),
            (BWD, ph.bwd_arc, ph.bwd_weight_after, ph.bwd_dist_after, ph.bwd_weight_before, ph.bwd_dist_before),
        ):
            if arc < 0:
                continue
            if as_source:
                cand = [(int(arc), int(after), int(d_after), 0)]
            else:
                cand = []
                for e in self.copies(int(arc)).tolist():
                    for k in range(int(self.in_first[e]), int(self.in_first[e + 1])):
                        t = int(self.in_arc[k])
                        turn = int(self.arc_turn[t])
                        cand.append((int(self.s_tail[t]), turn + int(before), int(d_before), turn))
            for node, w, d, turn in cand:
                old = best.get(node)
                if old is None or (w, d) < (old[0], old[1]):
                    best[node] = (w, d, kind, turn)
        nodes = np.array(sorted(best), dtype=np.int32)
        vals = [best[v] for v in nodes.tolist()]
        weights = np.array([v[0] for v in vals], dtype=np.int64)
        dists = np.array([v[1] for v in vals], dtype=np.int64)
        kinds = np.array([v[2] for v in vals], dtype=np.int64)
        turns = np.array([v[3] for v in vals], dtype=np.int64)
        return Seeds(nodes, weights, dists, ph.lon, ph.lat), kinds, turns

    def road_path(self, search_arcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(road arcs int32, the turn weight onto each, int64) of a search path between its seed nodes."""
        arcs = np.asarray(search_arcs, dtype=np.int64)
        return self.node_arc[self.s_head[arcs]].astype(np.int32), self.arc_turn[arcs].astype(np.int64)

    def forbidden(self, road_arcs: np.ndarray) -> np.ndarray:
        """The turns (search arc ids, int32) onto any of `road_arcs`: what a request forbidding those arcs may not
        take."""
        out = []
        for a in np.asarray(road_arcs, dtype=np.int64).tolist():
            for e in self.copies(a).tolist():
                out.append(self.in_arc[int(self.in_first[e]) : int(self.in_first[e + 1])])
        return np.concatenate(out).astype(np.int32) if out else np.zeros(0, dtype=np.int32)

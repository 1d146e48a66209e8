"""Export a graph to networkx (the test oracle and the benchmark's baseline); networkx is imported lazily.

Nodes are the graph's node ids with `lon`/`lat` (degrees) attributes. Edge attributes: `weight` (ds), `dist` (dm)
and `arc` (the arc id). `MultiDiGraph` keeps every arc (edge key = arc id, self-loops and parallel arcs included);
`DiGraph` keeps, per (tail, head), the arc of least weight (the smallest arc id among equals).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from floor.format.graph import Graph
from floor.format.units import COORD_SCALE, EARTH_RADIUS_M


def to_networkx(graph: Graph, multigraph: bool = True) -> Any:
    """The graph as a `networkx.MultiDiGraph` (default) or `networkx.DiGraph` (see the module docstring).

    >>> G = to_networkx(graph)  # doctest: +SKIP
    >>> networkx.bidirectional_dijkstra(G, 0, 5, weight="weight")  # doctest: +SKIP
    """
    import networkx as nx

    n = graph.num_nodes
    tail = np.asarray(graph.arc_tail).tolist()
    head = np.asarray(graph.arc_head).tolist()
    weight = np.asarray(graph.arc_weight).tolist()
    dist = np.asarray(graph.arc_dist).tolist()
    lon = (np.asarray(graph.node_lon, dtype=np.float64) / COORD_SCALE).tolist()
    lat = (np.asarray(graph.node_lat, dtype=np.float64) / COORD_SCALE).tolist()
    G = nx.MultiDiGraph() if multigraph else nx.DiGraph()
    G.add_nodes_from((v, {"lon": lon[v], "lat": lat[v]}) for v in range(n))
    if multigraph:
        G.add_edges_from(
            (tail[a], head[a], a, {"weight": weight[a], "dist": dist[a], "arc": a}) for a in range(len(tail))
        )
    else:
        # Arcs are sorted by (tail, head, weight): the first arc of each (tail, head) run is the lightest.
        seen: set[tuple[int, int]] = set()
        for a in range(len(tail)):
            key = (tail[a], head[a])
            if key not in seen:
                seen.add(key)
                G.add_edge(tail[a], head[a], weight=weight[a], dist=dist[a], arc=a)
    return G


def networkx_astar_heuristic(graph: Graph, vmax_mps: float) -> Callable[[int, int], float]:
    """A consistent `heuristic(u, v)` for `networkx.astar_path`: great-circle metres * 10 / `vmax_mps` (ds).

    Pass the same `vmax_mps` the engine uses (`app.engine.geo.node_geo(graph).vmax_mps`) for a like-for-like bound.
    """
    lat = np.radians(np.asarray(graph.node_lat, dtype=np.float64) / COORD_SCALE)
    lon = np.radians(np.asarray(graph.node_lon, dtype=np.float64) / COORD_SCALE)
    cos = np.cos(lat)
    lat_l, lon_l, cos_l = lat.tolist(), lon.tolist(), cos.tolist()
    scale = 0.0 if vmax_mps <= 0 or not np.isfinite(vmax_mps) else 2.0 * EARTH_RADIUS_M * 10.0 / vmax_mps

    def heuristic(u: int, v: int) -> float:
        s1 = math.sin((lat_l[v] - lat_l[u]) * 0.5)
        s2 = math.sin((lon_l[v] - lon_l[u]) * 0.5)
        a = min(s1 * s1 + cos_l[u] * cos_l[v] * s2 * s2, 1.0)
        return scale * math.asin(math.sqrt(a))

    return heuristic

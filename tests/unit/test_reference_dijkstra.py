"""The reference Dijkstra over real built graphs equals networkx on the exported graph (1000 random pairs)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from app.engine.data import search_graph  # the graph the searches run on (edge-based where turns are on)
from app.engine.search.reference import DijkstraSearch
from app.engine.types import INF_WEIGHT, Seeds
from floor.format.graph import load_graph
from preprocessing.export import to_networkx


def seed(node: int) -> Seeds:
    return Seeds(np.array([node], np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64), 0.0, 0.0)


@pytest.mark.extracts
@pytest.mark.parametrize("name", ["andorra.osm.pbf", "monaco.osm.gz"])
def test_reference_dijkstra_equals_networkx(graph_cache, name: str) -> None:
    g = search_graph(load_graph(graph_cache(name, "car", ch=True, landmarks=8)))
    nxg = to_networkx(g, multigraph=False)
    rng = np.random.default_rng(20261201)
    n = g.num_nodes
    pairs = rng.integers(0, n, size=(1000, 2))
    search = DijkstraSearch(g)
    by_source: dict[int, dict[int, int]] = {}
    unreachable = 0
    for s, t in pairs:
        s, t = int(s), int(t)
        res = search.run(seed(s), seed(t))
        if s not in by_source:
            by_source[s] = nx.single_source_dijkstra_path_length(nxg, s, weight="weight")
        expected = by_source[s].get(t)
        if expected is None:
            unreachable += 1
            assert res.weight == INF_WEIGHT, (name, s, t)
        else:
            assert res.weight == expected, (name, s, t)
            assert int(np.asarray(g.arc_weight)[res.arcs].sum()) == expected
    assert unreachable < 500  # most random pairs are connected (the largest SCC dominates)

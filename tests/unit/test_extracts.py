"""Every real extract in ../shared/data/osm preprocesses for car, bike and foot, with sane manifest counts."""

from __future__ import annotations

import numpy as np
import pytest

from floor.format.graph import load_graph
from floor.format.units import COORD_SCALE
from tests.conftest import all_extracts

PROFILES = ("car", "bike", "foot")
# the graphs these tests ask `graph_cache` for, built ahead by conftest's background builder
GRAPHS = [(n, "car", False, 0) for n in ("maribor_clean.osm.gz", "heidelberg.ors.pbf", "apidb-test-data.pbf")]


def graph_key(name: str, profile: str) -> tuple[str, str, bool, int]:
    """car and foot graphs get CH + landmarks (the query tests reuse them); bike checks import and graph only."""
    full = profile in ("car", "foot")
    return (name, profile, full, 8 if full else 0)


@pytest.mark.extracts
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", all_extracts())
def test_extract_preprocesses(graph_cache, name: str, profile: str) -> None:
    g = load_graph(graph_cache(*graph_key(name, profile)))
    mf = g.manifest
    c = mf["counts"]
    n, m = g.num_nodes, g.num_arcs
    assert c["nodes"] == n > 0 and c["arcs"] == m > 0
    assert c["chains"] <= m <= 2 * c["chains"]
    assert c["shape_points"] == len(g.geom_lon) - 2 * c["chains"]
    # CSR invariants
    assert g.first_out[0] == 0 and g.first_out[-1] == m and np.all(np.diff(g.first_out) >= 0)
    assert np.array_equal(np.repeat(np.arange(n), np.diff(g.first_out)), g.arc_tail)
    assert np.all(g.arc_weight >= 1) and np.all(g.arc_dist >= 0)
    assert np.array_equal(np.sort(g.in_arc), np.arange(m))
    # components: 0 is the largest
    sizes = np.bincount(g.node_component)
    assert sizes[0] == sizes.max() == c["largest_component_nodes"]
    assert c["largest_component_nodes"] >= 0.3 * n
    # bbox comes from the data, not the header (heidelberg's header says 0,0,180,90)
    lon = np.asarray(g.geom_lon) / COORD_SCALE
    lat = np.asarray(g.geom_lat) / COORD_SCALE
    assert mf["bbox"] == pytest.approx([lon.min(), lat.min(), lon.max(), lat.max()])
    # geometry chains start/end at their arcs' nodes
    chain = g.arc_geom // 2
    rev = g.arc_geom % 2
    first_pt = np.where(rev == 0, g.geom_first[chain], g.geom_first[chain + 1] - 1)
    assert np.array_equal(g.geom_lon[first_pt], g.node_lon[g.arc_tail])
    assert np.array_equal(g.geom_lat[first_pt], g.node_lat[g.arc_tail])
    assert 0 < mf["max_speed_mps"] < 100
    if graph_key(name, profile)[2]:
        assert "ch" in mf and "landmarks" in mf


@pytest.mark.extracts
def test_quirks_are_counted(graph_cache) -> None:
    mb = load_graph(graph_cache("maribor_clean.osm.gz", "car", ch=False, landmarks=0)).manifest
    assert mb["report"]["missing_node_refs"] > 0  # ways refer to nodes absent from the file: counted, not fatal
    hd = load_graph(graph_cache("heidelberg.ors.pbf", "car", ch=False, landmarks=0)).manifest
    min_lon, min_lat, max_lon, max_lat = hd["bbox"]
    # within the node bbox SOURCES.md gives (7.7085, 49.3073, 9.1046, 49.5168), not the bogus header 0,0,180,90
    assert 7.70 < min_lon < max_lon < 9.11 and 49.30 < min_lat < max_lat < 49.52
    ap = load_graph(graph_cache("apidb-test-data.pbf", "car", ch=False, landmarks=0))
    comp = np.asarray(ap.node_component)
    lon = np.asarray(ap.node_lon) / COORD_SCALE
    # two unconnected regions (Liechtenstein near 9.5 E, Alabama near 87 W): each holds a big component
    big = [k for k, s in enumerate(np.bincount(comp)) if s > 1000]
    sides = {bool(np.median(lon[comp == k]) > 0) for k in big}
    assert sides == {True, False}

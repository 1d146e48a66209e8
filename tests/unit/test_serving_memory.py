"""What a serving process keeps resident of a graph: a checksum's pass over the mapped files leaves none of their
pages, and a supervisor about to fork workers drops its warm-up's search objects and the graph pages it read."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from app.engine.data import load
from app.engine.facade import Engine, Waypoints
from floor.format.files import release_pages


def resident_kb(folder: Path) -> int:
    """RSS (kB) of this process's mappings of files under `folder`."""
    total, inside = 0, False
    root = str(folder.resolve())
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and not line[0].isupper():
                inside = len(head) > 5 and head[5].startswith(root)
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


def test_release_pages_takes_a_mapped_array_out_of_the_resident_set(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.arange(1 << 20, dtype=np.int64))  # 8 MiB
    a = np.load(tmp_path / "a.npy", mmap_mode="r")
    view = a[10:].view(np.ndarray)
    assert int(view.sum()) == sum(range(10, 1 << 20))
    assert resident_kb(tmp_path) >= 8000
    assert release_pages(view)
    assert resident_kb(tmp_path) == 0
    assert int(view[123]) == 133  # read again: the page comes back
    assert not release_pages(np.zeros(4))  # not a file mapping: nothing to do


def own_copy(graph: Path, tmp_path: Path) -> Path:
    """The graph copied to a folder no other test maps (their graphs may live on, mapped, in this process)."""
    return Path(shutil.copytree(graph, tmp_path / graph.name))


def test_loading_a_graph_leaves_no_page_its_checksums_read(bundled_graph: Path, tmp_path: Path) -> None:
    g = own_copy(bundled_graph, tmp_path)
    graph = load(g)
    assert graph.arrays["arc_head"].shape[0] > 1000
    assert resident_kb(g) < 64, "the checksums' pass keeps no graph page resident"


def test_before_fork_drops_the_warm_up_search_state_and_graph_pages(bundled_graph: Path, tmp_path: Path) -> None:
    bundled_graph = own_copy(bundled_graph, tmp_path)
    engine = Engine(load(bundled_graph))
    phs = engine.snap(Waypoints([(7.4197, 43.7325), (7.4292, 43.7431)], default_radius_m=500))
    route = engine.router.route(phs)
    warm = engine.router.query()
    assert resident_kb(bundled_graph) > 0
    engine.before_fork()
    assert resident_kb(bundled_graph) < 64
    assert engine.router.query() is not warm  # a new thread state, its arrays not the warm-up's
    again = engine.router.route(phs)
    assert again.weight == route.weight and np.array_equal(again.coordinates, route.coordinates)

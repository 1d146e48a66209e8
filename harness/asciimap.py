"""ASCII-art map fixtures (OSRM cucumber style): a drawn map plus a ways table -> OSM XML -> the real pipeline.

    built = asciimap.build(
        tmp_path,
        '''
        a b c
            d
        ''',
        ways=[("abc", {"highway": "primary"}), ("cd", {"highway": "secondary", "oneway": "yes"})],
        nodes={"b": {"highway": "traffic_signals"}},
        profile="testbot",
    )
    assert built.weight("a", "c") == built.expect_ds("abc", 36) + 70

Conventions:
- Every letter or digit of the drawing is a node; any other character (spaces, `-`, `|`, `/`, `.`, ...) is
  decoration. The drawing is dedented and leading/trailing blank lines are dropped.
- One character column to the right is `grid_m` metres east, one row down is `grid_m` metres south (so `a b` is
  2 grid units apart, `ab` one). The origin (top-left character) is at lon 1.0, lat 0.0, on the equator. Distances
  are OSRM's (`floor.kernels.geometry.osrm_distance_m`: 1e-6 degree coordinates, the WGS84 cheap ruler), so a grid
  unit is `grid_m` rounded *down* to whole 1e-6 degrees on each axis: east 898e-6 degrees = 99.965 m, south 904e-6
  degrees = 99.959 m for 100 m. Times are per segment `distance / speed` rounded to whole deciseconds
  (`preprocessing.build.segment_ds`), so a 100 m unit at 36 km/h takes exactly 10 s either way.
- OSM node ids are fixed per character: `a`..`z` = 1..26, `A`..`Z` = 27..52, `0`..`9` = 53..62. Way ids are 1, 2,
  ... in table order. A way is a string of node letters; it may repeat a letter to close a loop (`"abcda"`).
- Relations (`relations=[([("way", "ab", "from"), ("node", "b", "via"), ("way", "bc", "to")], {"type":
  "restriction", "restriction": "no_left_turn"})]`) get ids 1, 2, ... in list order and follow the ways. A member
  names a way by its letters (the first way drawn so) or its id, a node by its letter or its id; an id not on the
  map makes a member the extract does not have.
- Degree-2 nodes are collapsed into chains by the pipeline: assert on arcs between junctions, way ends and barriers.
"""

from __future__ import annotations

import math
import string
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from floor.format.graph import Graph, load_graph
from floor.format.units import COORD_SCALE, INF_WEIGHT
from floor.kernels.geometry import osrm_distance_m, osrm_distances_m
from preprocessing.pipeline import preprocess

NODE_CHARS = string.ascii_lowercase + string.ascii_uppercase + string.digits
ORIGIN_LON_E7 = 1 * COORD_SCALE
ORIGIN_LAT_E7 = 0

Ways = Sequence[tuple[str, Mapping[str, str]]]
# (members, tags); a member is (type "way" | "node", ref, role): a way by its letters as given in `ways` or by its
# id (1-based index in `ways`; any other id names a way not in the map), a node by its letter or by an id
Member = tuple[str, str | int, str]
Relations = Sequence[tuple[Sequence[Member], Mapping[str, str]]]


def node_id(letter: str) -> int:
    """The OSM node id of a map letter (`a` = 1)."""
    assert len(letter) == 1 and letter in NODE_CHARS, f"{letter!r} is not a map node (use a letter or digit)"
    return NODE_CHARS.index(letter) + 1


def grid_units_e7(grid_m: float) -> tuple[int, int]:
    """One grid unit east and one south in 1e-7 degrees: `grid_m` metres on the equator in OSRM's distance
    formula, rounded down to whole 1e-6 degrees (OSRM's precision)."""
    e6 = COORD_SCALE // 1_000_000
    ux = int(math.floor(grid_m / osrm_distance_m(0.0, 0.0, 0.001, 0.0) * 1e3)) * e6
    uy = int(math.floor(grid_m / osrm_distance_m(0.0, 0.0, 0.0, 0.001) * 1e3)) * e6
    return ux, uy


def grid_unit_e7(grid_m: float) -> int:
    """One grid unit east in 1e-7 degrees (`grid_units_e7`)."""
    return grid_units_e7(grid_m)[0]


def parse_map(drawing: str) -> dict[str, tuple[int, int]]:
    """Letter -> (column, row) of a drawn map; raises on a letter drawn twice."""
    lines = textwrap.dedent(drawing).split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    pos: dict[str, tuple[int, int]] = {}
    for row, line in enumerate(lines):
        for col, ch in enumerate(line):
            if ch in NODE_CHARS:
                assert ch not in pos, f"node {ch!r} is drawn twice"
                pos[ch] = (col, row)
    assert pos, "the map has no nodes"
    return pos


def draw(points: Mapping[str, tuple[int, int]]) -> str:
    """A drawing from letters at (x east, y north) grid positions, for maps whose shape matters to the metre
    (junction bearings: draw them with a small `grid_m`)."""
    xs, ys = [p[0] for p in points.values()], [p[1] for p in points.values()]
    rows = [[" "] * (max(xs) - min(xs) + 1) for _ in range(max(ys) - min(ys) + 1)]
    for letter, (x, y) in points.items():
        assert rows[max(ys) - y][x - min(xs)] == " ", f"two letters at {x},{y}"
        rows[max(ys) - y][x - min(xs)] = letter
    return "\n".join("".join(r).rstrip() for r in rows)


def coordinates(drawing: str, grid_m: float = 100.0) -> dict[str, tuple[int, int]]:
    """Letter -> (lon, lat) in 1e-7 degrees."""
    ux, uy = grid_units_e7(grid_m)
    return {ch: (ORIGIN_LON_E7 + c * ux, ORIGIN_LAT_E7 - r * uy) for ch, (c, r) in parse_map(drawing).items()}


def _tags_xml(tags: Mapping[str, str], indent: str) -> str:
    return "".join(f"{indent}<tag k={quoteattr(k)} v={quoteattr(str(v))}/>\n" for k, v in tags.items())


def _member_xml(member: Member, ways: Ways) -> str:
    kind, ref, role = member
    assert kind in ("way", "node"), f"member type {kind!r} must be 'way' or 'node'"
    if isinstance(ref, str):
        if kind == "node":
            ref = node_id(ref)
        else:
            ids = [i for i, (letters, _) in enumerate(ways, start=1) if letters == ref]
            assert ids, f"relation member way {ref!r} is not one of the ways"
            ref = ids[0]
    return f'    <member type={quoteattr(kind)} ref="{int(ref)}" role={quoteattr(role)}/>\n'


def to_osm(
    drawing: str,
    ways: Ways,
    nodes: Mapping[str, Mapping[str, str]] | None = None,
    grid_m: float = 100.0,
    relations: Relations | None = None,
) -> str:
    """OSM XML for a drawn map, its ways (`[("abc", {"highway": "primary"}), ...]`), node tags and relations."""
    coords = coordinates(drawing, grid_m)
    nodes = nodes or {}
    for letter in nodes:
        assert letter in coords, f"node {letter!r} has tags but is not on the map"
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6" generator="starroute-tests">\n']
    for letter in sorted(coords, key=node_id):
        lon, lat = coords[letter]
        head = f'  <node id="{node_id(letter)}" version="1" lat="{lat / COORD_SCALE:.7f}" lon="{lon / COORD_SCALE:.7f}"'
        tags = nodes.get(letter, {})
        if tags:
            out.append(head + ">\n" + _tags_xml(tags, "    ") + "  </node>\n")
        else:
            out.append(head + "/>\n")
    for i, (letters, tags) in enumerate(ways, start=1):
        assert len(letters) >= 2, f"way {letters!r} needs at least two nodes"
        for ch in letters:
            assert ch in coords, f"way {letters!r} uses node {ch!r} which is not on the map"
        out.append(f'  <way id="{i}" version="1">\n')
        out.extend(f'    <nd ref="{node_id(ch)}"/>\n' for ch in letters)
        out.append(_tags_xml(tags, "    ") + "  </way>\n")
    for i, (members, tags) in enumerate(relations or (), start=1):
        out.append(f'  <relation id="{i}" version="1">\n')
        out.extend(_member_xml(m, ways) for m in members)
        out.append(_tags_xml(tags, "    ") + "  </relation>\n")
    out.append("</osm>\n")
    return "".join(out)


@dataclass
class Built:
    """A graph built from a drawn map through the real pipeline, with queries by map letter."""

    graph: Graph
    coords: dict[str, tuple[int, int]]

    def nodes(self, letter: str) -> list[int]:
        """Graph node ids of a letter: none if not a graph node, several for a blocking barrier's copies."""
        return [int(v) for v in np.flatnonzero(np.asarray(self.graph.node_osm_id) == node_id(letter))]

    def arcs(self, a: str, b: str) -> list[tuple[int, int]]:
        """(weight ds, dist dm) of every arc from graph node `a` to graph node `b`, sorted."""
        g = self.graph
        heads = set(self.nodes(b))
        found = []
        for u in self.nodes(a):
            for e in range(int(g.first_out[u]), int(g.first_out[u + 1])):
                if int(g.arc_head[e]) in heads:
                    found.append((int(g.arc_weight[e]), int(g.arc_dist[e])))
        return sorted(found)

    def has_arc(self, a: str, b: str) -> bool:
        """Whether some arc leads from letter a to letter b."""
        return bool(self.arcs(a, b))

    def weight(self, a: str, b: str) -> int | None:
        """Smallest weight (ds) of an arc a -> b, None when there is none."""
        arcs = self.arcs(a, b)
        return arcs[0][0] if arcs else None

    def dist_dm(self, a: str, b: str) -> int | None:
        """Distance (dm) of the fastest arc a -> b, None when there is none."""
        arcs = self.arcs(a, b)
        return arcs[0][1] if arcs else None

    def arc_count(self) -> int:
        """Number of arcs in the graph."""
        return int(len(self.graph.arc_head))

    def route_ds(self, a: str, b: str) -> int | None:
        """Shortest travel time (ds) from letter a to letter b over the graph's arcs, None when unreachable."""
        src, dst = self.nodes(a), self.nodes(b)
        if not src or not dst:
            return None
        from app.engine.search.reference import dijkstra_weights

        best = min(int(dijkstra_weights(self.graph, s)[v]) for s in src for v in dst)
        return None if best >= INF_WEIGHT else best

    def turn_route_ds(self, a: str, b: str) -> int | None:
        """Shortest travel time (ds) from letter a to letter b over the edge-based search graph: the turns' costs
        and the junctions' obstacles (charged on the turns passing them, as OSRM's) included; None when
        unreachable. A search node is a road arc, its label the cost of reaching the arc's head."""
        from app.engine.data import search_graph
        from app.engine.search.reference import dijkstra_weights

        src, dst = set(self.nodes(a)), set(self.nodes(b))
        g, sg = self.graph, search_graph(self.graph)
        node_arc = np.asarray(sg.node_arc) if "node_arc" in sg.arrays else np.arange(g.num_arcs)
        tail, head, weight = np.asarray(g.arc_tail), np.asarray(g.arc_head), np.asarray(g.arc_weight)
        best = INF_WEIGHT
        for s in np.flatnonzero(np.isin(tail[node_arc], list(src))):
            dist = dijkstra_weights(sg, int(s))
            ends = np.isin(head[node_arc], list(dst))
            if ends.any():
                best = min(best, int(weight[node_arc[s]]) + int(dist[ends].min()))
        return None if best >= INF_WEIGHT else best

    def point(self, a: str, b: str, t: float) -> tuple[float, float]:
        """(lon, lat) degrees at fraction `t` of the straight line from letter a to letter b."""
        (ax, ay), (bx, by) = self.coords[a], self.coords[b]
        return (ax + t * (bx - ax)) / COORD_SCALE, (ay + t * (by - ay)) / COORD_SCALE

    def route_s(self, *points: tuple[float, float]) -> tuple[float, float]:
        """(duration s, weight s) of the engine's route through `points` (lon, lat degrees), snapped as OSRM
        snaps them (phantoms in the middle of arcs), by plain Dijkstra."""
        from app.engine.data import load
        from app.engine.facade import Engine, RouteRequest, Waypoints

        engine = Engine(load(self.graph.path), min_component_size=1)
        best = engine.route(RouteRequest(Waypoints(tuple(points)), algorithm="dijkstra")).best
        return round(best.duration_s, 1), round(best.weight_s, 1)

    def segments_m(self, path: str) -> np.ndarray:
        """Length (m) of each segment along a string of letters, in OSRM's formula as the pipeline measures it."""
        pts = np.array([self.coords[ch] for ch in path], dtype=np.float64) / COORD_SCALE
        return np.asarray(osrm_distances_m(pts[:-1, 0], pts[:-1, 1], pts[1:, 0], pts[1:, 1]))

    def metres(self, path: str) -> float:
        """Length (m) along a string of letters, as the pipeline measures it."""
        return float(np.sum(self.segments_m(path)))

    def expect_ds(self, path: str, kmh: float) -> int:
        """The pipeline's arc weight for driving `path` at `kmh`: per segment max(1, round(metres / m/s * 10))."""
        return sum(max(1, math.floor(m / (kmh / 3.6) * 10.0 + 0.5)) for m in self.segments_m(path))

    def expect_dm(self, path: str) -> int:
        """The pipeline's arc distance (dm) along `path`."""
        return int(round(self.metres(path) * 10))


def write_osm(
    path: Path,
    drawing: str,
    ways: Ways,
    nodes: Mapping[str, Mapping[str, str]] | None = None,
    grid_m: float = 100.0,
    relations: Relations | None = None,
) -> Path:
    """Write the map's OSM XML to `path` and return it."""
    path.write_text(to_osm(drawing, ways, nodes, grid_m, relations), encoding="utf-8")
    return path


def build(
    tmp_path: Path,
    drawing: str,
    ways: Ways,
    nodes: Mapping[str, Mapping[str, str]] | None = None,
    profile: str = "testbot",
    grid_m: float = 100.0,
    name: str = "map",
    relations: Relations | None = None,
    turns: bool | None = None,
    ch: bool = False,
    landmarks: int = 0,
) -> Built:
    """Run the real pipeline (by default no CH, no landmarks; `turns` as the profile says) on a drawn map and load
    the resulting graph."""
    osm = write_osm(tmp_path / f"{name}.osm", drawing, ways, nodes, grid_m, relations)
    out = preprocess(
        osm,
        tmp_path / f"{name}-{profile}",
        profile=profile,
        ch=ch,
        landmarks=landmarks,
        force=True,
        quiet=True,
        turns=turns,
    )
    return Built(graph=load_graph(out), coords=coordinates(drawing, grid_m))


def letters_with_arcs(built: Built, letters: Iterable[str]) -> set[tuple[str, str]]:
    """All (a, b) pairs among `letters` joined by an arc a -> b: a compact way to assert a whole arc set."""
    ls = list(letters)
    return {(a, b) for a in ls for b in ls if a != b and built.has_arc(a, b)}

"""The road graph as OSRM's guidance sees it: a node-based graph with compatible degree-2 nodes compressed away.

Built lazily over the read-only graph arrays, beside the search graph and never on its hot path (only a route with
`steps=true` touches it). Terms follow OSRM:

- a *half edge* `e = 2 * chain + d` leaves a node along a geometry chain (`d = 0` from the chain's first point,
  `d = 1` from its last), whether or not an arc may be driven that way (`reversed` then);
- a graph node is an *intersection* unless it joins exactly two roads whose data are the same both ways (name
  record, classes, mode, road classification, roundabout flags, oneway-ness): such a node is compressed away, as
  OSRM's graph compressor does, and an *edge* runs from an intersection through compressed nodes to the next one.
  An edge is named by its first half edge;
- `EdgeData` carries what guidance reads of an edge: the name record id, OSRM's road classification (priority,
  motorway/link class, may be ignored, number of lanes), roundabout/circular, restricted, classes, travel mode and
  the turn lanes of its direction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from floor.format.graph import Graph
from floor.format.road_classification import (  # noqa: F401 (priority classes guidance modules import from here)
    CLASS_BITS,
    CLASS_MASK,
    CONNECTIVITY,
    MOTORWAY,
    MOTORWAY_LINK,
    MOTORWAY_TYPES,
    PRIMARY,
    PRIMARY_LINK,
    PRIORITY,
    ROAD_TYPES,
    SECONDARY,
    SECONDARY_LINK,
    SIDE_RESIDENTIAL,
    TERTIARY,
    TERTIARY_LINK,
    TRUNK,
    TRUNK_LINK,
    chain_arcs,
    compressed_nodes,
)
from floor.format.units import (
    FLAG_CIRCULAR,
    FLAG_FERRY,
    FLAG_RESTRICTED,
    FLAG_ROUNDABOUT,
    FLAG_SPLIT,
    OSRM_MODE_NAMES,
    ROAD_CLASSES,
)
from floor.intersections.geo import Coord, fixed_array, fixed_from_e7
from floor.intersections.names import CAR_SUFFIXES, NameRecord, NameTable

_GROUPS = [0, 0, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 5, 7, 6] + [7] * 13  # OSRM's getRoadGroup

# OSRM's TurnLaneType masks
LANE_NONE, LANE_STRAIGHT, LANE_SHARP_LEFT, LANE_LEFT, LANE_SLIGHT_LEFT = 1, 2, 4, 8, 16
LANE_SLIGHT_RIGHT, LANE_RIGHT, LANE_SHARP_RIGHT, LANE_UTURN = 32, 64, 128, 256
LANE_MERGE_TO_LEFT, LANE_MERGE_TO_RIGHT = 512, 1024
LANE_NAMES = ("none", "straight", "sharp left", "left", "slight left", "slight right", "right", "sharp right",
              "uturn", "merge to left", "merge to right")  # fmt: skip
_LANE_TAGS = {
    "none": LANE_NONE, "through": LANE_STRAIGHT, "sharp_left": LANE_SHARP_LEFT, "left": LANE_LEFT,
    "slight_left": LANE_SLIGHT_LEFT, "slight_right": LANE_SLIGHT_RIGHT, "right": LANE_RIGHT,
    "sharp_right": LANE_SHARP_RIGHT, "reverse": LANE_UTURN, "merge_to_left": LANE_MERGE_TO_LEFT,
    "merge_to_right": LANE_MERGE_TO_RIGHT,
}  # fmt: skip


def lane_description(text: str) -> tuple[int, ...] | None:
    """OSRM's `laneStringToDescription`: one mask per `|` lane (left to right), None without lanes, () when a
    value is not understood (OSRM then ignores the lanes of that way)."""
    if not text:
        return None
    out = []
    for token in text.split("|"):
        parts = [p for p in token.split(";") if p]
        mask = 0 if parts else LANE_NONE
        for p in parts:
            m = _LANE_TAGS.get(p)
            if m is None:
                return ()
            mask |= m
        out.append(mask)
    return tuple(out)


def road_group(priority: int) -> int:
    """OSRM's `getRoadGroup`."""
    return _GROUPS[priority] if priority < len(_GROUPS) else 7


@dataclass(frozen=True, slots=True)
class EdgeData:
    """What guidance knows of one direction of a road (OSRM's NodeBasedEdgeData + annotation)."""

    reversed: bool  # this direction may not be driven
    name: int  # name record id (0 = empty)
    priority: int
    motorway_flag: bool  # OSRM's `motorway_class` bit (motorway, trunk and their links)
    link: bool
    ignorable: bool  # OSRM's `may_be_ignored`: not a road a car driver names a street
    num_lanes: int
    roundabout: bool
    circular: bool
    restricted: bool
    two_way: bool  # the road may be driven both ways
    split: bool  # OSRM's is_split: a two-way road whose directions are kept apart (they differ)
    classes: int  # arc_flags bits of CLASS_BITS
    mode: str
    lanes: tuple[int, ...] | None  # turn lane masks of this direction, left to right
    lane_text: str

    @property
    def is_motorway(self) -> bool:
        """A motorway-class road that is not a link (motorway, trunk)."""
        return self.motorway_flag and not self.link

    @property
    def is_ramp(self) -> bool:
        """A motorway-class link (motorway_link, trunk_link)."""
        return self.motorway_flag and self.link

    @property
    def classification(self) -> tuple[bool, bool, bool, int]:
        """OSRM's RoadClassification equality key (the number of lanes does not count)."""
        return self.motorway_flag, self.link, self.ignorable, self.priority

    @property
    def flags(self) -> tuple:
        """OSRM's NodeBasedEdgeClassification equality key (`backward` is set on unsplit two-way roads only)."""
        return (self.classification, self.two_way and not self.split, self.split, self.roundabout, self.circular,
                self.restricted)  # fmt: skip

    def combines_with(self, other: EdgeData) -> bool:
        """OSRM's annotation `CanCombineWith`: same name record, classes and travel mode."""
        return self.name == other.name and self.classes == other.classes and self.mode == other.mode

    def class_names(self) -> list[str]:
        """The OSRM classes of the road (toll, motorway, ferry, restricted, tunnel) as shown in intersections."""
        return [n for n, bit in CLASS_BITS if self.classes & bit]


def strictly_less(lhs: EdgeData, rhs: EdgeData) -> bool:
    """OSRM's `strictlyLess`: lhs belongs to a lower general category of roads than rhs."""
    if not lhs.ignorable and rhs.ignorable:
        return False
    if lhs.ignorable and not rhs.ignorable:
        return True
    return road_group(lhs.priority) > road_group(rhs.priority)


_LINK_OF = {MOTORWAY_LINK: MOTORWAY, TRUNK_LINK: TRUNK, PRIMARY_LINK: PRIMARY, SECONDARY_LINK: SECONDARY,
            TERTIARY_LINK: TERTIARY}  # fmt: skip


def is_link_to(link: EdgeData, road: EdgeData) -> bool:
    """OSRM's `isLinkTo`: `link` is the link class of `road`."""
    if not link.link or road.link:
        return False
    return _LINK_OF.get(link.priority, -1) == road.priority


def obvious_by_road_class(in_c: EdgeData, obvious: EdgeData, compare: EdgeData) -> bool:
    """OSRM's `obviousByRoadClass`."""
    has_high_priority = 1.75 * obvious.priority < compare.priority
    continues_on_same_class = in_c.classification == obvious.classification
    return (has_high_priority and continues_on_same_class) or (
        not obvious.ignorable and not in_c.ignorable and compare.ignorable
    )


def can_be_seen_as_fork(a: EdgeData, b: EdgeData) -> bool:
    """OSRM's canBeSeenAsFork: two roads of neighbouring priority may form a fork."""
    return abs(a.priority - b.priority) <= 1


class GuidanceGraph:
    """OSRM's compressed node-based graph over a loaded graph, built piece by piece as routes ask (caches)."""

    def __init__(self, graph: Graph, mode: str = "driving") -> None:
        g = self.g = graph
        self.mode = mode
        profile = str(graph.manifest.get("profile", "car"))
        self.names = NameTable(CAR_SUFFIXES if profile == "car" else frozenset())
        self.fwd_arc, self.bwd_arc, self.first_node, self.last_node = chain_arcs(graph.arrays)
        self.first_out = np.asarray(g.first_out)
        self.in_first_out = np.asarray(g.in_first_out)
        self.in_arc = np.asarray(g.in_arc)
        self.arc_geom = np.asarray(g.arc_geom)
        self.geom_first = np.asarray(g.geom_first)
        self.geom_lon = np.asarray(g.geom_lon)
        self.geom_lat = np.asarray(g.geom_lat)
        self.node_lon = np.asarray(g.node_lon)
        self.node_lat = np.asarray(g.node_lat)
        self.has_lanes = g.has("arc_lanes")
        self.has_modes = g.has("arc_mode")
        self.arc_mode = np.asarray(g.arc_mode) if self.has_modes else np.zeros(0, dtype=np.uint8)
        self._strings: dict[int, str] = {}
        self._adj: dict[int, tuple[int, ...]] = {}
        self._compressed: np.ndarray | None = None
        self._arc_data: dict[int, EdgeData] = {}
        self._edge: dict[int, tuple[int, tuple[int, ...], int]] = {}  # e -> (target, half edges, last)
        self._data: dict[int, EdgeData] = {}
        self._geom: dict[int, list[Coord]] = {}
        self._chain_geom: dict[int, list[Coord]] = {}
        self._start: dict[int, int] = {}
        self._lane_desc: dict[int, tuple[int, ...] | None] = {}

    def clear_caches(self) -> None:
        """Forget the edges, geometries and strings built so far (bounds memory on large graphs)."""
        for cache in (self._strings, self._adj, self._arc_data, self._edge, self._data, self._geom,
                      self._chain_geom, self._start, self._lane_desc):  # fmt: skip
            cache.clear()

    # -- basics ------------------------------------------------------------------------------------------------
    def string(self, sid: int) -> str:
        """A graph string (name, ref, lanes, signs) by id, cached."""
        s = self._strings.get(sid)
        if s is None:
            s = self._strings[sid] = self.g.string(int(sid)) if sid else ""
        return s

    def coord(self, v: int) -> Coord:
        """OSRM's fixed coordinate of a graph node."""
        return fixed_from_e7(int(self.node_lon[v])), fixed_from_e7(int(self.node_lat[v]))

    def chain_coords(self, chain: int) -> list[Coord]:
        """A chain's points (fixed), first to last."""
        c = self._chain_geom.get(chain)
        if c is None:
            lo, hi = int(self.geom_first[chain]), int(self.geom_first[chain + 1])
            c = list(zip(fixed_array(self.geom_lon[lo:hi]), fixed_array(self.geom_lat[lo:hi]), strict=True))
            self._chain_geom[chain] = c
        return c

    def half_source(self, h: int) -> int:
        """The node a half edge starts at."""
        c = h >> 1
        return int(self.first_node[c]) if h & 1 == 0 else int(self.last_node[c])

    def half_target(self, h: int) -> int:
        """The node a half edge ends at."""
        c = h >> 1
        return int(self.last_node[c]) if h & 1 == 0 else int(self.first_node[c])

    def half_arc(self, h: int) -> int:
        """The arc driving half edge h, -1 when that direction is closed."""
        c = h >> 1
        return int(self.fwd_arc[c]) if h & 1 == 0 else int(self.bwd_arc[c])

    def adjacent(self, v: int) -> tuple[int, ...]:
        """Half edges leaving node v, one per road end there (sorted by target node, then id)."""
        a = self._adj.get(v)
        if a is not None:
            return a
        hs = set()
        for arc in range(int(self.first_out[v]), int(self.first_out[v + 1])):
            hs.add(int(self.arc_geom[arc]))
        for k in range(int(self.in_first_out[v]), int(self.in_first_out[v + 1])):
            hs.add(int(self.arc_geom[int(self.in_arc[k])]) ^ 1)
        a = tuple(sorted(hs, key=lambda h: (self.half_target(h), h)))
        self._adj[v] = a
        return a

    def lanes_of_arc(self, arc: int) -> tuple[tuple[int, ...] | None, str]:
        """The lane description (arrows per lane, left to right) and the raw turn:lanes string of an arc."""
        if not self.has_lanes:
            return None, ""
        sid = int(self.g.arc_lanes[arc])
        if sid not in self._lane_desc:
            self._lane_desc[sid] = lane_description(self.string(sid))
        return self._lane_desc[sid], self.string(sid)

    def arc_data(self, arc: int, reversed_: bool = False) -> EdgeData:
        """The guidance data of an arc (`reversed_`: of the closed opposite direction, OSRM's reversed copy)."""
        key = arc * 2 + int(reversed_)
        d = self._arc_data.get(key)
        if d is not None:
            return d
        g = self.g
        flags = int(g.arc_flags[arc])
        code = int(g.arc_class[arc])
        hw = ROAD_CLASSES[code] if code < len(ROAD_CLASSES) else "other"
        signs = self.string(int(g.arc_signs[arc])) if g.has("arc_signs") else ""
        dest, exits, pron = (signs.split("\x1f") + ["", "", ""])[:3] if signs else ("", "", "")
        rec = NameRecord(
            name=self.string(int(g.arc_name[arc])),
            destinations=dest,
            pronunciation=pron,
            ref=self.string(int(g.arc_ref[arc])),
            exits=exits,
        )
        lanes, text = self.lanes_of_arc(arc)
        chain = int(self.arc_geom[arc]) >> 1
        two_way = int(self.fwd_arc[chain]) >= 0 and int(self.bwd_arc[chain]) >= 0
        d = EdgeData(
            reversed=reversed_,
            name=self.names.intern(rec),
            priority=PRIORITY.get(hw, CONNECTIVITY),
            motorway_flag=hw in MOTORWAY_TYPES,
            link=hw.endswith("_link"),
            ignorable=hw not in ROAD_TYPES,
            num_lanes=int(g.arc_lane_count[arc]) if g.has("arc_lane_count") else 0,
            roundabout=bool(flags & FLAG_ROUNDABOUT),
            circular=bool(flags & FLAG_CIRCULAR),
            restricted=bool(flags & FLAG_RESTRICTED),
            two_way=two_way,
            split=two_way and bool(flags & FLAG_SPLIT),
            classes=flags & CLASS_MASK,
            mode=self.mode_of(arc, flags, hw),
            lanes=lanes,
            lane_text=text,
        )
        self._arc_data[key] = d
        return d

    def mode_of(self, arc: int, flags: int, hw: str) -> str:
        """OSRM's travel mode of an arc as its API says it ("driving", "pushing bike", "ferry", ...): the stored
        `arc_mode`; a graph built before it: the profile's mode, or ferry on a ferry (train on a shuttle train)."""
        if self.has_modes:
            code = int(self.arc_mode[arc])
            return OSRM_MODE_NAMES[code] if code < len(OSRM_MODE_NAMES) else "other"
        if flags & FLAG_FERRY:
            return "train" if hw == "shuttle_train" else "ferry"
        return self.mode

    def half_data(self, h: int) -> EdgeData:
        """Data of one half edge (its own arc, or the opposite arc's marked reversed)."""
        arc = self.half_arc(h)
        if arc >= 0:
            return self.arc_data(arc)
        return self.arc_data(self.half_arc(h ^ 1), True)

    # -- compression -------------------------------------------------------------------------------------------
    def is_intersection(self, v: int) -> bool:
        """Whether v stays a node of OSRM's compressed graph (not a compatible degree-2 node; the rule is
        `floor.format.road_classification.compressed_nodes`, computed for the whole graph on first use)."""
        if self._compressed is None:
            self._compressed = compressed_nodes(self.g.arrays)
        return not bool(self._compressed[v])

    def _walk(self, e: int) -> tuple[int, tuple[int, ...], int]:
        r = self._edge.get(e)
        if r is not None:
            return r
        halves = [e]
        start = self.half_source(e)
        v = self.half_target(e)
        h = e
        while v != start and not self.is_intersection(v) and len(halves) < 100000:
            a, b = self.adjacent(v)
            h = b if a == (h ^ 1) else a
            halves.append(h)
            v = self.half_target(h)
        r = (v, tuple(halves), h)
        self._edge[e] = r
        return r

    def target(self, e: int) -> int:
        """The intersection an edge leads to."""
        return self._walk(e)[0]

    def halves(self, e: int) -> tuple[int, ...]:
        """The half edges an edge is made of, in travel order."""
        return self._walk(e)[1]

    def reverse(self, e: int) -> int:
        """The edge running the other way along the same road."""
        return self._walk(e)[2] ^ 1

    def edge_start(self, h: int) -> int:
        """The edge a half edge belongs to (walking back through compressed nodes)."""
        r = self._start.get(h)
        if r is not None:
            return r
        cur = h
        v = self.half_source(h)
        seen = 0
        while not self.is_intersection(v) and seen < 100000:
            a, b = self.adjacent(v)
            # the half edge arriving at v from the other side, as a leaving half edge reversed
            other = b if a == cur else a
            cur = other ^ 1
            v = self.half_source(cur)
            seen += 1
            if cur == h:
                break
        self._start[h] = cur
        return cur

    def data(self, e: int) -> EdgeData:
        """An edge's data: its first half edge's, with the turn lanes closest to its end (OSRM's compressor)."""
        d = self._data.get(e)
        if d is not None:
            return d
        halves = self.halves(e)
        d = self.half_data(halves[0])
        if len(halves) > 1:
            for h in reversed(halves):
                hd = self.half_data(h)
                if hd.lanes is not None:
                    if hd.lanes != d.lanes:
                        d = replace(d, lanes=hd.lanes, lane_text=hd.lane_text)
                    break
        self._data[e] = d
        return d

    def geometry(self, e: int) -> list[Coord]:
        """The points of an edge from its source node to its target (consecutive duplicates dropped)."""
        c = self._geom.get(e)
        if c is not None:
            return c
        out: list[Coord] = []
        for h in self.halves(e):
            pts = self.chain_coords(h >> 1)
            if h & 1:
                pts = pts[::-1]
            for p in pts:
                if not out or out[-1] != p:
                    out.append(p)
        if len(out) == 1:
            out.append(out[0])
        self._geom[e] = out
        return out

    def out_degree(self, v: int) -> int:
        """Number of roads at node v, open or not."""
        return len(self.adjacent(v))

    def directed_out_degree(self, v: int) -> int:
        """Number of roads at node v that may be driven away from v."""
        return sum(1 for h in self.adjacent(v) if self.half_arc(h) >= 0)

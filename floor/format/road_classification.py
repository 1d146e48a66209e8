"""OSRM's road classification of a way and its graph compressor's rule, over the road graph's arrays.

OSRM classifies every way (`lib/guidance.lua`: a priority class from `highway`, the motorway and link bits, whether
a car driver may ignore it) and removes the degree-2 nodes between two compatible roads before it builds turns
(`GraphCompressor`): no turn is taken there, so no turn cost is charged (the bicycle profile charges every turn it
sees, even where only two roads meet), and guidance sees no intersection. One rule serves both: the turn stage
(`preprocessing.turns`) and guidance (`app.engine.guidance.graph`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from floor.format.units import (
    FLAG_CIRCULAR,
    FLAG_FERRY,
    FLAG_MOTORWAY,
    FLAG_RESTRICTED,
    FLAG_ROUNDABOUT,
    FLAG_SPLIT,
    FLAG_TOLL,
    FLAG_TUNNEL,
    NODE_COMPRESSED,
    ROAD_CLASSES,
    TRAVEL_MODE_CODE,
)

# OSRM's RoadPriorityClass values
MOTORWAY, MOTORWAY_LINK, TRUNK, TRUNK_LINK, PRIMARY, PRIMARY_LINK = 0, 1, 2, 3, 4, 5
SECONDARY, SECONDARY_LINK, TERTIARY, TERTIARY_LINK = 6, 7, 8, 9
MAIN_RESIDENTIAL, SIDE_RESIDENTIAL, ALLEY, PARKING, LINK_ROAD, UNCLASSIFIED = 10, 11, 12, 13, 14, 15
BIKE_PATH, FOOT_PATH, CONNECTIVITY = 16, 18, 31

# lib/guidance.lua's highway_classes (anything else: connectivity)
PRIORITY = {
    "motorway": MOTORWAY, "motorway_link": MOTORWAY_LINK, "trunk": TRUNK, "trunk_link": TRUNK_LINK,
    "primary": PRIMARY, "primary_link": PRIMARY_LINK, "secondary": SECONDARY, "secondary_link": SECONDARY_LINK,
    "tertiary": TERTIARY, "tertiary_link": TERTIARY_LINK, "unclassified": UNCLASSIFIED,
    "residential": MAIN_RESIDENTIAL, "service": ALLEY, "living_street": SIDE_RESIDENTIAL, "track": BIKE_PATH,
    "path": BIKE_PATH, "footway": FOOT_PATH, "pedestrian": FOOT_PATH, "steps": FOOT_PATH,
}  # fmt: skip
MOTORWAY_TYPES = frozenset({"motorway", "motorway_link", "trunk", "trunk_link"})
ROAD_TYPES = frozenset(
    {"motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link", "secondary", "secondary_link",
     "tertiary", "tertiary_link", "unclassified", "residential", "living_street"}
)  # fmt: skip

# OSRM's classes, in the order the car profile lists them (the order `classes` are reported in)
CLASS_BITS: tuple[tuple[str, int], ...] = (
    ("toll", FLAG_TOLL),
    ("motorway", FLAG_MOTORWAY),
    ("ferry", FLAG_FERRY),
    ("restricted", FLAG_RESTRICTED),
    ("tunnel", FLAG_TUNNEL),
)
CLASS_MASK = FLAG_TOLL | FLAG_MOTORWAY | FLAG_FERRY | FLAG_RESTRICTED | FLAG_TUNNEL


def classification_key(code: int) -> int:
    """OSRM's RoadClassification equality key of a road class code (priority, motorway and link bits, may be
    ignored; the number of lanes does not count) as one integer."""
    hw = ROAD_CLASSES[code] if code < len(ROAD_CLASSES) else "other"
    prio = PRIORITY.get(hw, CONNECTIVITY)
    return prio * 8 + (hw in MOTORWAY_TYPES) * 4 + hw.endswith("_link") * 2 + (hw not in ROAD_TYPES)


_CLASS_KEYS = np.array([classification_key(c) for c in range(256)], dtype=np.int64)


def chain_arcs(arrays: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per chain: its forward and backward arc (-1 when that way is closed; the smallest id should a chain carry
    two one way) and its first and last node (-1 for a chain with no arc)."""
    c = len(arrays["geom_first"]) - 1
    geom = arrays["arc_geom"].astype(np.int64)
    arcs = np.arange(len(geom), dtype=np.int64)
    chain, rev = geom >> 1, (geom & 1).astype(bool)
    fwd = np.full(c, -1, dtype=np.int64)
    bwd = np.full(c, -1, dtype=np.int64)
    fwd[chain[~rev][::-1]] = arcs[~rev][::-1]
    bwd[chain[rev][::-1]] = arcs[rev][::-1]
    tail, head = arrays["arc_tail"].astype(np.int64), arrays["arc_head"].astype(np.int64)
    f, b = np.maximum(fwd, 0), np.maximum(bwd, 0)
    first = np.where(fwd >= 0, tail[f], np.where(bwd >= 0, head[b], -1))
    last = np.where(fwd >= 0, head[f], np.where(bwd >= 0, tail[b], -1))
    return fwd, bwd, first, last


def travel_modes(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """The travel mode code of every arc (`arc_mode`, `units.TRAVEL_MODES`); a graph built before it: ferry on a
    ferry (train on a shuttle train), else none (0)."""
    mode = arrays.get("arc_mode")
    if mode is not None:
        return np.asarray(mode)
    ferry = (np.asarray(arrays["arc_flags"]) & FLAG_FERRY) != 0
    train = np.asarray(arrays["arc_class"]) == ROAD_CLASSES.index("shuttle_train")
    codes = np.where(train, TRAVEL_MODE_CODE["train"], TRAVEL_MODE_CODE["ferry"])
    return np.where(ferry, codes, 0).astype(np.uint8)


def compressed_nodes(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """Per road-graph node: whether OSRM's graph compressor removes it, bool [n]: as the build recorded it in
    `node_flags` (`osrm_compression`, with turning obstacles and restriction via nodes kept), or for a graph built
    before it `osrm_compression` without them."""
    stored = arrays.get("node_flags")
    if stored is not None:
        return (np.asarray(stored) & NODE_COMPRESSED) != 0
    return osrm_compression(arrays)[0]


def osrm_compression(arrays: Mapping[str, np.ndarray], hard: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """OSRM's `GraphCompressor` on the road graph: (per node whether it is removed, bool [n]; the chain-interior
    shape points OSRM keeps as nodes, positions into `geom_*`).

    A node may go when exactly two roads meet there and, in each direction of travel through it, the road arriving
    and the road leaving have the same classification flags (road classification, two-way, split, roundabout,
    circular, restricted), are both open or both closed, carry the same name record (name, ref, signs), classes
    and travel mode (`travel_modes`), and each road has one name record both ways; `hard` nodes (turning obstacles,
    restriction via nodes) stay. OSRM then removes such nodes one at a time in the order of their OSM ids, but never
    one whose two neighbours are already joined by an edge, which keeps a node on all but one of two roads between
    the same junctions and three on a closed loop (`_parallel_rule`); that node may be a shape point inside a chain
    here, which the build then makes a node of its own.
    """
    n = len(arrays["node_lon"])
    v, h1, h2 = _compatible_pairs(arrays)
    candidate = np.zeros(n, dtype=bool)
    candidate[v] = True
    if hard is not None:
        candidate &= ~np.asarray(hard, dtype=bool)
    keep = candidate[v]
    kept_nodes, kept_points = _parallel_rule(arrays, candidate, v[keep], h1[keep], h2[keep])
    candidate[kept_nodes] = False
    return candidate, kept_points


def _compatible_pairs(arrays: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nodes where exactly two road ends meet with compatible data both ways (`osrm_compression`), and their two
    half edges h1, h2 (`h = 2 * chain + d`, leaving the chain's first node for d = 0, its last for d = 1)."""
    n = len(arrays["node_lon"])
    fwd, bwd, first, last = chain_arcs(arrays)
    c = len(fwd)
    flags = arrays["arc_flags"].astype(np.int64)
    mode = travel_modes(arrays).astype(np.int64)
    signs = arrays.get("arc_signs")
    record = np.stack(
        [
            arrays["arc_name"].astype(np.int64),
            arrays["arc_ref"].astype(np.int64),
            signs.astype(np.int64) if signs is not None else np.zeros(len(flags), dtype=np.int64),
        ],
        axis=1,
    )
    record_id = np.unique(record, axis=0, return_inverse=True)[1].reshape(-1) if len(record) else record[:, 0]
    two_way = (fwd >= 0) & (bwd >= 0)

    # a half edge h = 2 * chain + d leaves `first` (d = 0) or `last` (d = 1) of its chain; its data are those of its
    # own arc, or of the opposite arc marked reversed
    h_arc = np.stack([fwd, bwd], axis=1).reshape(-1)
    h_rev = h_arc < 0
    h_data_arc = np.where(h_rev, np.stack([bwd, fwd], axis=1).reshape(-1), h_arc)
    ok = h_data_arc >= 0
    a = np.maximum(h_data_arc, 0)
    h_chain = np.arange(2 * c, dtype=np.int64) >> 1
    split = two_way[h_chain] & ((flags[a] & FLAG_SPLIT) != 0)
    h_flags = (
        _CLASS_KEYS[arrays["arc_class"].astype(np.int64)[a]] * 64
        + (two_way[h_chain] & ~split) * 32
        + split * 16
        + ((flags[a] & FLAG_ROUNDABOUT) != 0) * 8
        + ((flags[a] & FLAG_CIRCULAR) != 0) * 4
        + ((flags[a] & FLAG_RESTRICTED) != 0) * 2
    )
    h_name = record_id[a]
    h_combine = (h_name * 256 + (flags[a] & CLASS_MASK)) * 16 + mode[a]
    h_source = np.stack([first, last], axis=1).reshape(-1)

    # the two road ends at nodes where exactly two meet
    ends = np.flatnonzero(ok & (h_source >= 0))
    order = ends[np.argsort(h_source[ends], kind="stable")]
    src = h_source[order]
    count = np.bincount(src, minlength=n)
    start = np.searchsorted(src, np.flatnonzero(count == 2))
    h1, h2 = order[start], order[start + 1]
    v = src[start]

    def same(x: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return x[p] == x[q]

    # u -> v -> w arrives by h1 ^ 1 and leaves by h2; w -> v -> u arrives by h2 ^ 1 and leaves by h1
    keep = np.ones(len(v), dtype=bool)
    for x in (h_flags, h_rev, h_combine):
        keep &= same(x, h1 ^ 1, h2) & same(x, h2 ^ 1, h1)
    keep &= same(h_name, h1 ^ 1, h1) & same(h_name, h2, h2 ^ 1)
    return v[keep], h1[keep], h2[keep]


def _parallel_rule(
    arrays: Mapping[str, np.ndarray], candidate: np.ndarray, v: np.ndarray, h1: np.ndarray, h2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The candidate nodes (`v`, joining the chains of half edges h1 and h2) and chain-interior shape points OSRM's
    compressor keeps for the neighbour rule (`osrm_compression`): (node ids, geom positions).

    The candidates and the interior points (always removable: one way on both sides) form paths between the nodes
    that stay (or closed cycles). OSRM removes them in the order of their OSM ids; on a path, a removal is refused
    only for its last point, and only when another path already joins the same two ends directly. So of the paths
    between the same two nodes, the one whose highest id is lowest is removed whole and every other keeps its highest
    point; a path from a node back to itself keeps its two highest points, a cycle with no node that stays its three
    highest (a triangle cannot shrink)."""
    fwd, _, first, last = chain_arcs(arrays)
    c = len(fwd)
    gf = np.asarray(arrays["geom_first"], dtype=np.int64)
    label = _components(c, h1 >> 1, h2 >> 1)
    used = first >= 0
    # items a path may keep: interior shape points of its chains, and the candidate nodes joining them
    npts = np.diff(gf)
    chain_of = np.repeat(np.arange(c, dtype=np.int64), npts)
    pos = np.arange(int(gf[-1]), dtype=np.int64)
    interior = (pos != gf[chain_of]) & (pos != gf[chain_of + 1] - 1) & used[chain_of]
    p_pos = pos[interior]
    item_label = np.concatenate([label[chain_of[p_pos]], label[h1 >> 1]])
    item_osm = np.concatenate([np.asarray(arrays["geom_osm_id"], dtype=np.int64)[p_pos],
                               np.asarray(arrays["node_osm_id"], dtype=np.int64)[v]])  # fmt: skip
    item_ref = np.concatenate([p_pos, -1 - v.astype(np.int64)])  # >= 0: a shape point, < 0: node -1 - ref
    order = np.lexsort((-item_osm, item_label))
    item_label, item_osm, item_ref = item_label[order], item_osm[order], item_ref[order]
    head = np.ones(len(order), dtype=bool)
    head[1:] = item_label[1:] != item_label[:-1]
    starts = np.flatnonzero(head)
    rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.append(starts, len(order))))
    top = np.full(c, -1, dtype=np.int64)  # per path (its label): the highest id of its items, -1 none
    top[item_label[starts]] = item_osm[starts]

    # the ends of each path: chain ends at nodes that stay
    end_node = np.concatenate([first[used], last[used]])
    end_label = np.concatenate([label[used], label[used]])
    hard_end = ~candidate[end_node]
    end_node, end_label = end_node[hard_end], end_label[hard_end]
    o = np.lexsort((end_node, end_label))
    end_node, end_label = end_node[o], end_label[o]
    paths = np.unique(label[used])
    lo = np.full(c, -1, dtype=np.int64)
    hi = np.full(c, -1, dtype=np.int64)
    first_end = np.ones(len(end_label), dtype=bool)
    first_end[1:] = end_label[1:] != end_label[:-1]
    lo[end_label[first_end]] = end_node[first_end]
    last_end = np.ones(len(end_label), dtype=bool)
    last_end[:-1] = end_label[1:] != end_label[:-1]
    hi[end_label[last_end]] = end_node[last_end]

    keep_rank = np.zeros(c, dtype=np.int64)  # per path: how many of its highest items stay
    cycle = paths[lo[paths] < 0]
    keep_rank[cycle] = 3
    loop = paths[(lo[paths] >= 0) & (lo[paths] == hi[paths])]
    keep_rank[loop] = 2
    between = paths[(lo[paths] >= 0) & (lo[paths] != hi[paths])]
    if len(between):
        o = np.lexsort((top[between], hi[between], lo[between]))
        b = between[o]
        same_ends = (lo[b][1:] == lo[b][:-1]) & (hi[b][1:] == hi[b][:-1])
        later = np.concatenate([[False], same_ends])  # not the first of its group to be removed whole
        keep_rank[b[later]] = 1
    kept = rank < keep_rank[item_label]
    ref = item_ref[kept]
    return (-1 - ref[ref < 0]).astype(np.int64), ref[ref >= 0]


def osrm_edge_flip(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """Per chain: whether OSRM's edge along it runs against the chain's point order, bool [c]. OSRM's edge-based node
    runs a oneway's way, and a two-way road's from the end of its compressed edge (through the nodes its compressor
    removes, `compressed_nodes`) with the lower OSM id (`GenerateEdgeExpandedNodes`); a phantom's split of its
    segment truncates along that direction (`MakePhantomNode`), and its first segment wins at an inner point."""
    fwd, bwd, first, last = chain_arcs(arrays)
    flip = (fwd < 0) & (bwd >= 0)
    two_way = np.flatnonzero((fwd >= 0) & (bwd >= 0))
    if not len(two_way):
        return flip
    osm = np.asarray(arrays["node_osm_id"], dtype=np.int64)
    compressed = compressed_nodes(arrays)
    end_first, end_last = first[two_way].copy(), last[two_way].copy()
    walk = compressed[end_first] | compressed[end_last]
    if walk.any():
        v, h1, h2 = _compatible_pairs(arrays)
        keep = compressed[v]
        other = {int(x): (int(a) >> 1, int(b) >> 1) for x, a, b in zip(v[keep], h1[keep], h2[keep], strict=True)}

        def edge_end(c: int, node: int) -> int:
            """The node OSRM's edge through chain c ends at beyond `node` (its end on that side)."""
            for _ in range(len(first)):
                pair = other.get(node)
                if pair is None:
                    return node
                c = pair[1] if pair[0] == c else pair[0]
                node = int(last[c]) if int(first[c]) == node else int(first[c])
            return node

        for k in np.flatnonzero(walk).tolist():
            c = int(two_way[k])
            end_first[k] = edge_end(c, int(first[c]))
            end_last[k] = edge_end(c, int(last[c]))
    flip[two_way] = osm[end_first] > osm[end_last]
    return flip


def _components(c: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected components of `c` items joined by the pairs (a, b): per item the smallest item of its component
    (hooking larger roots under smaller ones, then pointer jumping, until every pair agrees)."""
    label = np.arange(c, dtype=np.int64)
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    while True:
        la, lb = label[a], label[b]
        differ = la != lb
        if not differ.any():
            return label
        np.minimum.at(label, np.maximum(la, lb)[differ], np.minimum(la, lb)[differ])
        while True:
            nxt = label[label]
            if (nxt == label).all():
                break
            label = nxt

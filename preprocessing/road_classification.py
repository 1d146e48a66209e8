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

from .units import (
    FLAG_CIRCULAR,
    FLAG_FERRY,
    FLAG_MOTORWAY,
    FLAG_RESTRICTED,
    FLAG_ROUNDABOUT,
    FLAG_SPLIT,
    FLAG_TOLL,
    FLAG_TUNNEL,
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
    """Per road-graph node: whether OSRM's graph compressor removes it, bool [n].

    A node goes when exactly two roads (two different chains, not both leading to the same node) meet there and,
    in each direction of travel through it, the road arriving and the road leaving have the same classification
    flags (road classification, two-way, split, roundabout, circular, restricted), are both open or both closed,
    carry the same name record (name, ref, signs), classes and travel mode (`travel_modes`), and each road has one
    name record both ways. Turn restrictions' via nodes and turning obstacles, which OSRM keeps too, are the
    caller's to add.
    """
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
    h_target = np.stack([last, first], axis=1).reshape(-1)

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
    keep = (h1 >> 1) != (h2 >> 1)
    keep &= h_target[h1] != h_target[h2]
    for x in (h_flags, h_rev, h_combine):
        keep &= same(x, h1 ^ 1, h2) & same(x, h2 ^ 1, h1)
    keep &= same(h_name, h1 ^ 1, h1) & same(h_name, h2, h2 ^ 1)
    out = np.zeros(n, dtype=bool)
    out[v[keep]] = True
    return out

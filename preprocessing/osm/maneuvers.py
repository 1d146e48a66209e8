"""OSM maneuver overrides (`type=maneuver` / `type=manoeuvre` relations): read, resolved onto arcs, packed for
guidance, which applies them to the steps (`app.engine.guidance.overrides`, which reads the records back).

Reading follows OSRM's `ManeuverOverrideRelationParser::TryParse`: the instruction is `manoeuvre` (when present) or
`maneuver`, the modifier `direction`; members `from` and `to` (one way each), `via` one node (required: the
instruction node) and any number of via ways. Types and directions are OSRM's `strings_to_turn_type_and_direction`:
`uturn` (a turn, modifier u-turn), `continue`, `turn`, `fork`, `suppress`; `left`, `slight_left`, `sharp_left`,
`right`, `slight_right`, `sharp_right`, `straight`; anything else keeps the step's own. A relation with neither is
dropped, as is one whose via node is not a node of its path (OSRM's `Valid`).

The path is resolved as a turn restriction's (`preprocessing.osm.restrictions`: the from way's end piece into the via,
the via ways chained, the to way's piece out of it) into arc sequences. One array, `man_seq` (int32), packs every
override as a record `k, instruction node, type, direction, arc_0 .. arc_k-1` (`units.MAN_HEADER`; type and
direction `units.MAN_KEEP`: keep the step's), one record per arc path of a relation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import osmium

from floor.format.units import MAN_KEEP as KEEP
from floor.intersections.intersection import (
    CONTINUE,
    FORK,
    LEFT,
    RIGHT,
    SHARP_LEFT,
    SHARP_RIGHT,
    SLIGHT_LEFT,
    SLIGHT_RIGHT,
    STRAIGHT,
    SUPPRESSED,
    TURN,
    UTURN,
)
from preprocessing.osm.restrictions import Restriction, resolve_restrictions

TYPES = {"uturn": (TURN, UTURN), "continue": (CONTINUE, KEEP), "turn": (TURN, KEEP), "fork": (FORK, KEEP)}
TYPES["suppress"] = (SUPPRESSED, KEEP)
DIRECTIONS = {
    "left": LEFT, "slight_left": SLIGHT_LEFT, "sharp_left": SHARP_LEFT, "right": RIGHT, "slight_right": SLIGHT_RIGHT,
    "sharp_right": SHARP_RIGHT, "straight": STRAIGHT,
}  # fmt: skip


@dataclass(frozen=True)
class ManeuverOverride:
    """One maneuver relation in OSM ids and its instruction (type, direction: KEEP for none)."""

    osm_id: int
    from_way: int
    via_node: int
    via_ways: tuple[int, ...]
    to_way: int
    kind: int
    direction: int


def parse_relation(
    osm_id: int, tags: Mapping[str, str], members: Sequence[tuple[str, int, str]]
) -> ManeuverOverride | None:
    """One relation as OSRM's parser reads it (`members` as (type "n"/"w", ref, role)); None when not valid."""
    if tags.get("type") not in ("maneuver", "manoeuvre"):
        return None
    text = tags["manoeuvre"] if "manoeuvre" in tags else tags.get("maneuver", "")
    kind, direction = TYPES.get(text, (KEEP, KEEP))
    direction = DIRECTIONS.get(tags.get("direction", ""), direction)
    if kind == KEEP and direction == KEEP:
        return None
    frm: list[int] = []
    to: list[int] = []
    via_nodes: list[int] = []
    via_ways: list[int] = []
    for mtype, ref, role in members:
        if mtype == "n" and role == "via":
            via_nodes.append(int(ref))
        elif mtype == "w" and role in ("from", "to", "via"):
            {"from": frm, "to": to, "via": via_ways}[role].append(int(ref))
    if len(frm) != 1 or len(to) != 1 or len(via_nodes) != 1:
        return None
    return ManeuverOverride(int(osm_id), frm[0], via_nodes[0], tuple(via_ways), to[0], kind, direction)


def read_maneuvers(path: Path) -> list[ManeuverOverride]:
    """The maneuver relations of an extract that OSRM's parser accepts."""
    out = []
    fp = osmium.FileProcessor(str(path), osmium.osm.RELATION).with_filter(
        osmium.filter.TagFilter(("type", "maneuver"), ("type", "manoeuvre"))
    )
    for rel in fp:
        members = [(m.type, int(m.ref), m.role) for m in rel.members]  # type: ignore[union-attr]
        found = parse_relation(rel.id, {t.k: t.v for t in rel.tags}, members)
        if found is not None:
            out.append(found)
    return out


def maneuver_arrays(overrides: Sequence[ManeuverOverride], arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`man_seq`: the overrides resolved onto the graph's arcs (those that do not resolve are left out)."""
    node_osm = np.asarray(arrays["node_osm_id"])
    head = np.asarray(arrays["arc_head"])
    out: list[int] = []
    for o in overrides:
        nodes = np.flatnonzero(node_osm == o.via_node)
        if len(nodes) != 1:
            continue
        node = int(nodes[0])
        r = Restriction(o.osm_id, False, o.from_way, None if o.via_ways else o.via_node, o.via_ways, o.to_way)
        seqs, _ = resolve_restrictions([r], arrays)
        for seq in seqs:
            if node not in {int(head[a]) for a in seq[:-1]}:  # OSRM's Valid: the instruction node is on the path
                continue
            out.extend((len(seq), node, o.kind, o.direction, *seq))
    return {"man_seq": np.asarray(out, dtype=np.int32)}

"""Maneuver overrides (OSRM's `applyOverrides`): a `type=maneuver` relation's instruction replaces the one guidance
chose, on a route that drives its whole path.

An override is a sequence of guidance edges (its arc path, `preprocessing.osm.maneuvers`, each arc's edge, repeated
edges once) and an instruction node. As in OSRM, before any post-processing, a route matches when consecutive steps
start from those edges (a step's `from_id` is the edge arriving at its end; a step repeated from the same edge is
skipped); the first step of the matched run that begins at the instruction node gets the override's type and/or
direction, unless it is a depart or arrive.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.engine.guidance.steps import WAYPOINT_NONE, RouteStep
from floor.format.units import MAN_HEADER, MAN_KEEP
from floor.intersections.geo import Coord
from floor.intersections.graph import GuidanceGraph

Override = tuple[tuple[int, ...], int, int, int]  # edge sequence, instruction node, type, direction


def unpack(man_seq: np.ndarray) -> list[Override]:
    """The records of `man_seq` (`preprocessing.osm.maneuvers`): (arc path, instruction node, type, direction)."""
    seq = [int(x) for x in man_seq]
    out = []
    i = 0
    while i < len(seq):
        k, node, kind, direction = seq[i : i + MAN_HEADER]
        out.append((tuple(seq[i + MAN_HEADER : i + MAN_HEADER + k]), node, kind, direction))
        i += MAN_HEADER + k
    return out


def load_overrides(gg: GuidanceGraph, man_seq: np.ndarray) -> dict[int, list[Override]]:
    """The overrides by their first edge."""
    out: dict[int, list[Override]] = {}
    for arcs, node, kind, direction in unpack(man_seq):
        edges: list[int] = []
        for a in arcs:
            e = gg.edge_start(int(gg.arc_geom[a]))
            if not edges or edges[-1] != e:
                edges.append(e)
        out.setdefault(edges[0], []).append((tuple(edges), node, kind, direction))
    return out


def apply_overrides(
    steps: list[RouteStep], locs: Sequence[Coord], gg: GuidanceGraph, overrides: dict[int, list[Override]]
) -> None:
    """Rewrite the instructions of the steps that an override's path covers (in place)."""
    for k, step in enumerate(steps):
        for seq, node, kind, direction in overrides.get(step.from_id, ()):
            si, ri = 0, k
            while si < len(seq) and ri < len(steps):
                if seq[si] == steps[ri].from_id:
                    si += 1
                    ri += 1
                elif steps[ri - 1].from_id == steps[ri].from_id:
                    ri += 1
                else:
                    break
            if si < len(seq):
                continue
            at = gg.coord(node)
            hit = next((s for s in steps[k:ri] if locs[s.geometry_begin] == at), None)
            if hit is None or hit.maneuver.waypoint != WAYPOINT_NONE:
                continue
            if kind != MAN_KEEP:
                hit.maneuver.kind = kind
            if direction != MAN_KEEP:
                hit.maneuver.modifier = direction

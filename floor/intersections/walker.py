"""Walking the road graph from a junction (OSRM's `src/extractor/intersection/node_based_graph_walker.cpp`): the
accumulators that collect what a walk passes and the selectors that choose the road to follow.

`Extractor.traverse` drives a walk; `Extractor.skip_degree_two` follows a road over nodes without a choice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from floor.intersections import geo
from floor.intersections.coordinates import trim_to_length
from floor.intersections.geo import Coord
from floor.intersections.graph import GuidanceGraph
from floor.intersections.intersection import (
    FUZZY_ANGLE_DIFFERENCE,
    GROUP_ANGLE,
    NARROW_TURN_ANGLE,
    STRAIGHT_ANGLE,
    Intersection,
    Road,
    closest_turn,
)


class Extractor(Protocol):
    """What a walk asks of the intersection extractor (`intersection_analysis.Extractor`, which builds on this
    module: the walkers see it through this protocol, so the two import in one direction)."""

    gg: GuidanceGraph

    def connected_roads(self, via: int, use_close: bool = False) -> Intersection: ...

    def skip_degree_two(self, node: int, edge: int) -> tuple[int, int]: ...

    def traverse(self, node: int, edge: int, acc: object, selector: Callable) -> tuple[int, int] | None: ...


class LengthLimitedAccumulator:
    """Collect the points along a road until `max_length` metres."""

    def __init__(self, ex: Extractor, max_length: float) -> None:
        self.ex = ex
        self.max_length = max_length
        self.length = 0.0
        self.coords: list[Coord] = []

    def terminate(self) -> bool:
        return self.length >= self.max_length

    def update(self, from_node: int, via: int, to_node: int) -> None:
        cur = list(self.ex.gg.geometry(via))
        ln = geo.length(cur)
        if ln + self.length > self.max_length:
            cur = trim_to_length(cur, self.max_length - self.length)
        self.coords.extend(cur)
        self.length = min(self.length + ln, self.max_length)


class IntersectionFinder:
    """Find the next intersection with more than two roads (or stop after `hop_limit` hops)."""

    def __init__(self, ex: Extractor, hop_limit: int) -> None:
        self.ex = ex
        self.hop_limit = hop_limit
        self.hops = 0
        self.nid = -1
        self.via = -1
        self.intersection: Intersection = []

    def terminate(self) -> bool:
        if len(self.intersection) > 2 or self.hops == self.hop_limit:
            self.hops = 0
            return True
        return False

    def update(self, from_node: int, via: int, to_node: int) -> None:
        self.hops += 1
        self.nid = from_node
        self.via = via
        self.intersection = self.ex.connected_roads(via, True)


class DistanceAccumulator:
    """Sum up the length along a road; `too_far_away` once past `threshold`."""

    def __init__(self, ex: Extractor, threshold: float) -> None:
        self.ex = ex
        self.threshold = threshold
        self.distance = 0.0
        self.too_far_away = False

    def terminate(self) -> bool:
        if self.distance > self.threshold:
            self.too_far_away = True
            return True
        return False

    def update(self, from_node: int, via: int, to_node: int) -> None:
        self.distance += geo.length(self.ex.gg.geometry(via))


def skip_obstacle_selector(node: int, via: int, inter: Intersection) -> int | None:
    """Continue only over intersections of two roads."""
    return inter[1].eid if len(inter) == 2 else None


def straightmost_selector(gg: GuidanceGraph, name: int, initial_bearing: float, requires_entry: bool,
                          stop_on_ambiguous: bool) -> Callable:  # fmt: skip
    """SelectStraightmostRoadByNameAndOnlyChoice."""

    def select(node: int, via: int, inter: Intersection) -> int | None:
        if len(inter) == 1:
            return None

        def score(r: Road) -> float:
            s = 0.0
            if requires_entry and not r.entry_allowed:
                s += 360.0
            if gg.data(r.eid).name != name:
                s += 180.0
            return s + geo.deviation(r.angle, STRAIGHT_ANGLE)

        count_desired = sum(1 for r in inter if gg.data(r.eid).name == name)
        if count_desired > 2:
            return None
        mi = min(range(1, len(inter)), key=lambda i: score(inter[i]))
        m = inter[mi]
        if requires_entry and not m.entry_allowed:
            return None
        valid_angle = (
            (len(inter) == 2 or closest_turn(inter, STRAIGHT_ANGLE) == mi)
            and geo.deviation(m.angle, STRAIGHT_ANGLE) < NARROW_TURN_ANGLE
            and geo.deviation(initial_bearing, m.perceived_bearing) < NARROW_TURN_ANGLE
        )
        if valid_angle:
            return m.eid
        only_choice = (
            count_desired <= 2 and gg.data(m.eid).name == name and geo.deviation(m.angle, STRAIGHT_ANGLE) < 100
        )
        if stop_on_ambiguous and geo.deviation(STRAIGHT_ANGLE, m.angle) > GROUP_ANGLE:
            oi = closest_turn(inter, geo.reverse(m.angle))
            if geo.deviation(m.angle, inter[oi].angle) > 180 - FUZZY_ANGLE_DIFFERENCE:  # type: ignore[index]
                return None
            bi = closest_turn(inter, STRAIGHT_ANGLE)
            if geo.deviation(inter[bi].angle, STRAIGHT_ANGLE) < FUZZY_ANGLE_DIFFERENCE:  # type: ignore[index]
                return None
        return m.eid if only_choice else None

    return select

"""Maneuver relations read as OSRM's parser reads them, and the packed `man_seq` records read back by guidance."""

from __future__ import annotations

import numpy as np

from app.engine.guidance.overrides import unpack
from floor.intersections.intersection import CONTINUE, SHARP_RIGHT, TURN, UTURN
from preprocessing.osm.maneuvers import KEEP, ManeuverOverride, parse_relation

MEMBERS = [("w", 1, "from"), ("n", 3, "via"), ("w", 2, "to")]


def test_parse_relation_reads_types_and_directions() -> None:
    tags = {"type": "maneuver", "maneuver": "turn", "direction": "sharp_right"}
    assert parse_relation(9, tags, MEMBERS) == ManeuverOverride(9, 1, 3, (), 2, TURN, SHARP_RIGHT)
    # the British spelling wins over the American one, as in OSRM; `uturn` is a turn with a u-turn modifier
    tags = {"type": "manoeuvre", "manoeuvre": "uturn", "maneuver": "continue"}
    assert parse_relation(9, tags, MEMBERS) == ManeuverOverride(9, 1, 3, (), 2, TURN, UTURN)
    tags = {"type": "maneuver", "maneuver": "continue", "direction": "nowhere"}
    assert parse_relation(9, tags, [*MEMBERS, ("w", 4, "via")]) == ManeuverOverride(9, 1, 3, (4,), 2, CONTINUE, KEEP)


def test_parse_relation_drops_what_osrm_drops() -> None:
    assert parse_relation(9, {"type": "restriction", "maneuver": "turn"}, MEMBERS) is None
    assert parse_relation(9, {"type": "maneuver", "maneuver": "jump"}, MEMBERS) is None  # no type, no direction
    assert parse_relation(9, {"type": "maneuver", "maneuver": "turn"}, MEMBERS[:2]) is None  # no to way
    assert parse_relation(9, {"type": "maneuver", "maneuver": "turn"}, MEMBERS[::2]) is None  # no via node


def test_unpack() -> None:
    seq = np.asarray([2, 5, TURN, KEEP, 10, 11, 3, 6, KEEP, UTURN, 1, 2, 3], dtype=np.int32)
    assert unpack(seq) == [((10, 11), 5, TURN, KEEP), ((1, 2, 3), 6, KEEP, UTURN)]

"""OSM turn restrictions: reading relations (OSRM's parser rules) and resolving them onto arcs.

Maps follow harness/asciimap.py and are built with the car profile's way and node rules (preprocessing.osm.read and
preprocessing.build directly, no turn stage); restrictions are read with a profile namespace that declares car's
restriction modes. Real extracts: `pytest -s -k extracts tests/unit/test_restrictions.py` prints the counts.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness import asciimap
from preprocessing.build import build_arrays
from preprocessing.osm.profiles import get_profile
from preprocessing.osm.read import read_nodes, read_ways
from preprocessing.osm.restrictions import Restriction, parse_relation, read_restrictions, resolve_restrictions
from tests.conftest import extract

CAR = SimpleNamespace(NAME="car", RESTRICTIONS=("motorcar", "motor_vehicle", "vehicle"), USE_TURN_RESTRICTIONS=True)
PRIMARY = {"highway": "primary"}

CROSS = """
  a
  |
b-x-d
  |
  e
"""
CROSS_WAYS = [("ax", PRIMARY), ("xe", PRIMARY), ("bx", PRIMARY), ("xd", PRIMARY)]


def rel(frm: str | int, via: str | int, to: str | int, **tags: str) -> tuple[list, dict[str, str]]:
    """A restriction relation: from way, via node (a letter) or via way(s) (`"w:ab,bc"`), to way."""
    members: list = [("way", frm, "from")]
    if isinstance(via, str) and via.startswith("w:"):
        members += [("way", int(w) if w.isdigit() else w, "via") for w in via[2:].split(",")]
    else:
        members.append(("node", via, "via"))
    members.append(("way", to, "to"))
    return members, {"type": "restriction", **{k.replace("__", ":"): v for k, v in tags.items()}}


@dataclass
class Resolved:
    arrays: dict[str, np.ndarray]
    restrictions: list[Restriction]
    read: dict[str, int]
    seqs: list[tuple[int, ...]]
    report: dict[str, int]

    def arc(self, a: str, b: str) -> int:
        """The one arc from letter a to letter b."""
        found = self.arcs(a, b)
        assert len(found) == 1, f"{len(found)} arcs {a}->{b}"
        return found[0]

    def arcs(self, a: str, b: str) -> list[int]:
        """Every arc from letter a to letter b."""
        osm = self.arrays["node_osm_id"]
        tail_osm = osm[self.arrays["arc_tail"]]
        head_osm = osm[self.arrays["arc_head"]]
        return np.flatnonzero((tail_osm == asciimap.node_id(a)) & (head_osm == asciimap.node_id(b))).tolist()

    def seq(self, *hops: str) -> tuple[int, ...]:
        """Arc ids along letter pairs: seq("ex", "xb") = (arc e->x, arc x->b)."""
        return tuple(self.arc(h[0], h[1]) for h in hops)

    def seq_set(self, *paths: Sequence[str]) -> set[tuple[int, ...]]:
        return {self.seq(*p) for p in paths}


def build_graph(path: Path, profile_name: str = "car") -> dict[str, np.ndarray]:
    """Core arrays of an extract through the real reader and builder."""
    prof = get_profile(profile_name)
    ways = read_ways(path, prof)
    nodes = read_nodes(path, np.unique(ways.refs), prof)
    arrays, _ = build_arrays(ways, nodes)
    return arrays


def resolve_map(
    tmp_path: Path,
    relations: Sequence,
    drawing: str = CROSS,
    ways: Sequence = CROSS_WAYS,
    nodes: Mapping | None = None,
    profile: SimpleNamespace = CAR,
    **kwargs: bool,
) -> Resolved:
    osm = asciimap.write_osm(tmp_path / "map.osm", drawing, ways, nodes, relations=relations)
    arrays = build_graph(osm)
    found, read = read_restrictions(osm, profile)
    seqs, report = resolve_restrictions(found, arrays, **kwargs)
    check_invariants(arrays, found, read, seqs, report)
    return Resolved(arrays, found, read, seqs, report)


def check_invariants(
    arrays: Mapping[str, np.ndarray],
    found: Sequence[Restriction],
    read: Mapping[str, int],
    seqs: Sequence[tuple[int, ...]],
    report: Mapping[str, int],
) -> None:
    """Every sequence is >= 2 consecutive arcs, no duplicates; every relation and record is counted once."""
    tail, head = arrays["arc_tail"], arrays["arc_head"]
    assert len(set(seqs)) == len(seqs)
    for s in seqs:
        assert len(s) >= 2
        for x, y in zip(s, s[1:], strict=False):
            assert head[x] == tail[y], s
    if "restrictions_disabled" in read:
        return
    outcomes = sum(v for k, v in read.items() if k not in ("restriction_relations", "restrictions_parsed"))
    outcomes -= read.get("restrictions_timed_applied", 0)
    assert outcomes == read["restriction_relations"], read
    assert read["restrictions_parsed"] == len(found)
    refused = sum(v for k, v in report.items() if k.startswith("restrictions_refused_"))
    assert report["restrictions_used"] + refused == len(found), report
    assert report["forbidden_sequences"] == len(seqs)


# ---------------------------------------------------------------- via node


@pytest.mark.parametrize(
    ("value", "to", "exit_"),
    [("no_left_turn", "bx", "xb"), ("no_right_turn", "xd", "xd"), ("no_straight_on", "ax", "xa")],
)
def test_no_turn_via_node(tmp_path: Path, value: str, to: str, exit_: str) -> None:
    r = resolve_map(tmp_path, [rel("xe", "x", to, restriction=value)])
    assert r.restrictions == [Restriction(1, False, 2, asciimap.node_id("x"), (), CROSS_WAYS.index((to, PRIMARY)) + 1)]
    assert r.seqs == [r.seq("ex", exit_)]
    assert r.report["restrictions_used"] == 1 and r.read["restriction_relations"] == 1


def test_no_u_turn_same_way(tmp_path: Path) -> None:
    r = resolve_map(tmp_path, [rel("xe", "x", "xe", restriction="no_u_turn")])
    assert r.seqs == [r.seq("ex", "xe")]


@pytest.mark.parametrize(
    ("value", "to", "allowed"),
    [
        ("only_straight_on", "ax", "xa"),
        ("only_left_turn", "bx", "xb"),
        ("only_right_turn", "xd", "xd"),
        ("only_u_turn", "xe", "xe"),
    ],
)
def test_only_turn_forbids_every_other_exit(tmp_path: Path, value: str, to: str, allowed: str) -> None:
    r = resolve_map(tmp_path, [rel("xe", "x", to, restriction=value)])
    others = {"xa", "xb", "xd", "xe"} - {allowed}
    assert set(r.seqs) == {r.seq("ex", o) for o in others}  # the u-turn back along the from way included


def test_via_node_inside_from_or_to_way_is_refused(tmp_path: Path) -> None:
    # OSRM's find_turn_nodes: from and to must end at the via node
    ways = [("axe", PRIMARY), ("bx", PRIMARY), ("xd", PRIMARY)]
    r = resolve_map(
        tmp_path,
        [rel("axe", "x", "bx", restriction="no_left_turn"), rel("bx", "x", "axe", restriction="no_right_turn")],
        ways=ways,
    )
    assert r.seqs == []
    assert r.report["restrictions_refused_via_inside_from_way"] == 1
    assert r.report["restrictions_refused_via_inside_to_way"] == 1


def test_closed_from_way_gives_both_pieces(tmp_path: Path) -> None:
    drawing = """
    y-a-b
      | |
      d-c-e
    """
    # the closed way starts and ends at c: both of its pieces there lead into c (one from a over b, one from d: of
    # the two roads between a and c, OSRM's compressor keeps a node on the one whose highest node id comes last)
    ways = [("cdabc", PRIMARY), ("ya", PRIMARY), ("ce", PRIMARY)]
    r = resolve_map(tmp_path, [rel("cdabc", "c", "ce", restriction="no_right_turn")], drawing=drawing, ways=ways)
    into_c = set(r.arcs("a", "c")) | set(r.arcs("d", "c"))
    assert len(into_c) == 2 and len(r.seqs) == 2
    assert {s[0] for s in r.seqs} == into_c and {s[1] for s in r.seqs} == {r.arc("c", "e")}


def test_wrong_direction_and_barrier_are_refused(tmp_path: Path) -> None:
    oneway = {"highway": "primary", "oneway": "yes"}
    ways = [("ax", PRIMARY), ("xe", oneway), ("bx", PRIMARY), ("xd", oneway)]
    r = resolve_map(
        tmp_path,
        [
            rel("xe", "x", "bx", restriction="no_left_turn"),  # xe only leaves x
            rel("ax", "x", "xd", restriction="only_straight_on"),  # fine: a->x->d
            rel("bx", "x", "ax", restriction="only_left_turn"),
            rel("ax", "x", "xd", restriction="no_straight_on"),
        ],
        ways=ways,
    )
    assert r.report["restrictions_refused_from_not_entering"] == 1
    assert r.report["restrictions_used"] == 3
    # only_straight_on and no_straight_on on a->x both apply: every exit of a->x is forbidden
    assert set(r.seqs) == r.seq_set(
        ("ax", "xa"), ("ax", "xb"), ("ax", "xe"), ("ax", "xd"), ("bx", "xb"), ("bx", "xd"), ("bx", "xe")
    )

    blocked = resolve_map(
        tmp_path, [rel("xe", "x", "bx", restriction="no_left_turn")], nodes={"x": {"barrier": "bollard"}}
    )
    assert blocked.report["restrictions_refused_via_node_barrier"] == 1 and blocked.seqs == []


# ---------------------------------------------------------------- via ways

LADDER = """
a-b-c
  |
  k-z
  |
d-e-f
"""
LADDER_WAYS = [("ab", PRIMARY), ("bc", PRIMARY), ("bke", PRIMARY), ("kz", PRIMARY), ("de", PRIMARY), ("ef", PRIMARY)]


def test_via_way_cut_into_several_arcs(tmp_path: Path) -> None:
    r = resolve_map(tmp_path, [rel("ab", "w:bke", "de", restriction="no_u_turn")], drawing=LADDER, ways=LADDER_WAYS)
    assert r.seqs == [r.seq("ab", "bk", "ke", "ed")]
    assert r.report["restrictions_via_way_used"] == 1
    # reversed: from de via the same way (driven e->b) to bc
    r2 = resolve_map(tmp_path, [rel("de", "w:bke", "bc", restriction="no_u_turn")], drawing=LADDER, ways=LADDER_WAYS)
    assert r2.seqs == [r2.seq("de", "ek", "kb", "bc")]


def test_only_via_way_forbids_leaving_the_path(tmp_path: Path) -> None:
    rels = [rel("ab", "w:bke", "ef", restriction="only_left_turn")]
    r = resolve_map(tmp_path, rels, drawing=LADDER, ways=LADDER_WAYS)
    assert set(r.seqs) == r.seq_set(
        ("ab", "ba"),
        ("ab", "bc"),  # at b: must enter the via way
        ("ab", "bk", "kb"),
        ("ab", "bk", "kz"),  # at k: must stay on it
        ("ab", "bk", "ke", "ek"),
        ("ab", "bk", "ke", "ed"),  # at e: must take the to way
    )
    osrm = resolve_map(tmp_path, rels, drawing=LADDER, ways=LADDER_WAYS, only_at_last_via=True)
    assert set(osrm.seqs) == osrm.seq_set(("ab", "bk", "ke", "ek"), ("ab", "bk", "ke", "ed"))


def test_several_via_ways_in_any_order(tmp_path: Path) -> None:
    drawing = """
    a-b
      |
      g-h-i
        |
        j
    """
    ways = [("ab", PRIMARY), ("bg", PRIMARY), ("gh", PRIMARY), ("hi", PRIMARY), ("hj", PRIMARY)]
    in_order = resolve_map(tmp_path, [rel("ab", "w:bg,gh", "hj", restriction="no_right_turn")], drawing, ways)
    assert in_order.seqs == [in_order.seq("ab", "bg", "gh", "hj")]
    assert "restrictions_via_reordered" not in in_order.report
    shuffled = resolve_map(tmp_path, [rel("ab", "w:gh,bg", "hj", restriction="no_right_turn")], drawing, ways)
    assert shuffled.seqs == in_order.seqs
    assert shuffled.report["restrictions_via_reordered"] == 1


def test_via_ways_not_connected_are_refused(tmp_path: Path) -> None:
    rels = [
        rel("ab", "w:de", "ef", restriction="no_left_turn"),  # the via does not touch the from way
        rel("ab", "w:bke", "bc", restriction="no_left_turn"),  # nor the to way
        rel("ab", "w:bke,bc", "ef", restriction="no_left_turn"),  # the vias do not chain
        rel("ab", "w:bke", 999, restriction="no_left_turn"),  # to way not in the extract
        rel("ab", "w:998", "ef", restriction="no_left_turn"),  # via way not in the extract
    ]
    r = resolve_map(tmp_path, rels, drawing=LADDER, ways=LADDER_WAYS)
    assert r.seqs == []
    assert r.report["restrictions_used"] == 0
    assert r.report["restrictions_refused_from_not_at_via"] == 1
    assert r.report["restrictions_refused_to_not_at_via"] == 1
    assert r.report["restrictions_refused_via_not_connected"] == 1
    assert r.report["restrictions_refused_to_way_missing"] == 1
    assert r.report["restrictions_refused_via_way_missing"] == 1


# ---------------------------------------------------------------- which tags apply


def test_except_and_modes(tmp_path: Path) -> None:
    rels = [
        rel("xe", "x", "bx", restriction="no_left_turn", **{"except": "motorcar"}),  # 1: not for cars
        rel("xe", "x", "xd", restriction="no_right_turn", **{"except": "bicycle;psv"}),  # 2: applies
        rel("ax", "x", "xe", restriction="no_straight_on", **{"except": "psv;motor_vehicle"}),  # 3: not for cars
        rel("bx", "x", "xd", restriction__motorcar="no_straight_on"),  # 4: applies
        rel("bx", "x", "ax", restriction__bicycle="no_left_turn"),  # 5: not for cars
        rel("xd", "x", "ax", restriction__hgv="no_right_turn", restriction="no_right_turn"),  # 6: applies
    ]
    r = resolve_map(tmp_path, rels)
    assert sorted(x.osm_id for x in r.restrictions) == [2, 4, 6]
    assert r.read["restrictions_except"] == 2
    assert r.read["restrictions_not_for_profile"] == 1
    assert set(r.seqs) == r.seq_set(("ex", "xd"), ("bx", "xd"), ("dx", "xa"))
    bike = SimpleNamespace(NAME="bike", RESTRICTIONS=("bicycle",), USE_TURN_RESTRICTIONS=True)
    as_bike = resolve_map(tmp_path, rels, profile=bike)
    assert sorted(x.osm_id for x in as_bike.restrictions) == [1, 3, 5, 6]
    assert as_bike.read["restrictions_except"] == 1


def test_restriction_keys_on_a_relation_of_another_type(tmp_path: Path) -> None:
    """OSRM reads the restriction keys of any relation, whatever its type (`RestrictionParser`'s key filter): a
    `type=relation` or `type=restriction:hgv` relation with a plain `restriction` tag binds cars; without a key of
    the profile's, another type is not read at all."""

    def typed(kind: str, r: tuple[list, dict[str, str]]) -> tuple[list, dict[str, str]]:
        return r[0], {**r[1], "type": kind}

    rels = [
        typed("relation", rel("xe", "x", "xd", restriction="no_right_turn")),  # 1: applies
        typed("restriction:hgv", rel("bx", "x", "xd", restriction="no_straight_on")),  # 2: applies (OSRM)
        typed("route", rel("ax", "x", "xe", restriction__hgv="no_straight_on")),  # 3: not read
        typed("multipolygon", rel("xd", "x", "ax", name="Place")),  # 4: not read
    ]
    r = resolve_map(tmp_path, rels)
    assert sorted(x.osm_id for x in r.restrictions) == [1, 2]
    assert r.read["restriction_relations"] == 2
    assert set(r.seqs) == r.seq_set(("ex", "xd"), ("bx", "xd"))


def test_except_items_compared_raw_as_osrm(tmp_path: Path) -> None:
    """OSRM splits `except` at `;` and compares the parts as written: " motorcar" names no mode, so it applies."""
    r = resolve_map(tmp_path, [rel("xe", "x", "xd", restriction="no_right_turn", **{"except": "psv; motorcar"})])
    assert [x.osm_id for x in r.restrictions] == [1] and r.read.get("restrictions_except", 0) == 0


def test_last_matching_tag_decides_as_osrm(tmp_path: Path) -> None:
    rels = [rel("xe", "x", "ax", restriction="only_straight_on", restriction__motorcar="no_straight_on")]
    r = resolve_map(tmp_path, rels)
    assert r.restrictions[0].only is False and r.seqs == [r.seq("ex", "xa")]


def test_conditional_and_timed(tmp_path: Path) -> None:
    rels = [
        rel("xe", "x", "bx", restriction__conditional="no_left_turn @ (Mo-Fr 07:00-09:00)"),
        rel("xe", "x", "xd", restriction="no_right_turn", restriction__conditional="no_right_turn @ (22:00-06:00)"),
        rel("ax", "x", "xd", restriction__motorcar__conditional="no_left_turn @ (Sa)"),
        rel("bx", "x", "xe", restriction="no_right_turn", day_on="Mo", day_off="Fr", hour_on="7", hour_off="18"),
    ]
    r = resolve_map(tmp_path, rels)
    assert r.read["restrictions_conditional_ignored"] == 2
    assert r.read["restrictions_timed_applied"] == 1
    assert set(r.seqs) == r.seq_set(("ex", "xd"), ("bx", "xe"))


def test_duplicated_and_conflicting(tmp_path: Path) -> None:
    rels = [
        rel("xe", "x", "bx", restriction="no_left_turn"),
        rel("xe", "x", "bx", restriction="no_left_turn"),
        rel("xe", "x", "ax", restriction="only_straight_on"),
        rel("xe", "x", "ax", restriction="no_straight_on"),
        rel("xe", "x", "xd", restriction="only_right_turn"),
    ]
    r = resolve_map(tmp_path, rels)
    assert r.report["restrictions_used"] == 5
    assert set(r.seqs) == r.seq_set(("ex", "xa"), ("ex", "xb"), ("ex", "xd"), ("ex", "xe"))


def test_malformed_are_counted(tmp_path: Path) -> None:
    tags = {"type": "restriction", "restriction": "no_left_turn"}
    rels = [
        ([("node", "x", "via"), ("way", "bx", "to")], tags),  # no from
        ([("node", "e", "from"), ("node", "x", "via"), ("way", "bx", "to")], tags),  # from is a node
        ([("way", "xe", "from"), ("node", "x", "via")], tags),  # no to
        ([("way", "xe", "from"), ("way", "bx", "to")], tags),  # no via
        ([("way", "xe", "from"), ("way", "ax", "from"), ("node", "x", "via"), ("way", "bx", "to")], tags),
        ([("way", "xe", "from"), ("node", "x", "via"), ("way", "ax", "via"), ("way", "bx", "to")], tags),
        ([("way", "xe", "from"), ("node", "x", "via"), ("node", "a", "via"), ("way", "bx", "to")], tags),
        rel("xe", "x", "bx", restriction="no_left_turn_on_red"),  # unknown value
        rel("xe", "x", "bx", restriction="no_left_turn", restriction__motorcar="maybe"),  # unknown value
        rel("xe", "a", "bx", restriction="no_left_turn"),  # via node not on the from way
        rel("ax", "e", "xe", restriction="no_left_turn"),  # via node on the to way only
        rel("xe", 997, "bx", restriction="no_left_turn"),  # via node not in the extract
        rel(999, "x", "bx", restriction="no_left_turn"),  # from way not in the extract
        ([("way", "xe", "from"), ("node", "x", "via"), ("way", "bx", "to"), ("way", "xd", "")], tags),  # fine
    ]
    r = resolve_map(tmp_path, rels)
    read = r.read
    assert read["restriction_relations"] == 14 and read["restriction_relations_parsed"] == 5
    for key in ("no_from", "from_not_way", "no_to", "no_via", "multiple_from", "mixed_via", "multiple_via_nodes"):
        assert read[f"restrictions_malformed_{key}"] == 1, key
    assert read["restrictions_unknown_value"] == 2
    rep = r.report
    assert rep["restrictions_refused_from_not_at_via"] == 2  # a: end of ax, not of xe; e: end of xe only
    assert rep["restrictions_refused_via_node_missing"] == 1
    assert rep["restrictions_refused_from_way_missing"] == 1
    assert rep["restrictions_used"] == 1 and r.seqs == [r.seq("ex", "xb")]


def test_no_entry_and_no_exit_take_several_ways(tmp_path: Path) -> None:
    no_entry = {"type": "restriction", "restriction": "no_entry"}
    no_exit = {"type": "restriction", "restriction": "no_exit"}
    rels = [
        ([("way", "xe", "from"), ("way", "bx", "from"), ("node", "x", "via"), ("way", "ax", "to")], no_entry),
        ([("way", "xd", "from"), ("node", "x", "via"), ("way", "bx", "to"), ("way", "xe", "to")], no_exit),
    ]
    r = resolve_map(tmp_path, rels)
    assert len(r.restrictions) == 4 and r.read["restriction_relations_parsed"] == 2
    assert set(r.seqs) == r.seq_set(("ex", "xa"), ("bx", "xa"), ("dx", "xb"), ("dx", "xe"))


def test_disabled_reads_nothing(tmp_path: Path) -> None:
    foot = SimpleNamespace(NAME="foot", RESTRICTIONS=("foot",), USE_TURN_RESTRICTIONS=False)
    r = resolve_map(tmp_path, [rel("xe", "x", "bx", restriction="no_left_turn")], profile=foot)
    assert r.restrictions == [] and r.read == {"restrictions_disabled": 1} and r.seqs == []
    testbot = SimpleNamespace(NAME="testbot", USE_TURN_RESTRICTIONS=True, RESTRICTIONS=())  # plain key only
    rels = [rel("xe", "x", "bx", restriction__motorcar="no_left_turn"), rel("xe", "x", "xd", restriction="no_u_turn")]
    tb = resolve_map(tmp_path, rels, profile=testbot)
    assert [x.osm_id for x in tb.restrictions] == [2]


def test_parse_relation_alone() -> None:
    members = [("w", 5, "from"), ("n", 7, "via"), ("w", 6, "to")]
    found, outcome = parse_relation(3, [("type", "restriction"), ("restriction", "only_left_turn")], members, ())
    assert outcome == "" and found == [Restriction(3, True, 5, 7, (), 6)]
    _, outcome = parse_relation(3, [("restriction:motorcar", "no_u_turn")], members, ())
    assert outcome == "restrictions_not_for_profile"
    via_ways = [("w", 5, "from"), ("w", 8, "via"), ("w", 9, "via"), ("w", 6, "to")]
    found, _ = parse_relation(4, [("restriction", "no_u_turn")], via_ways, ())
    assert found == [Restriction(4, False, 5, None, (8, 9), 6)]


def test_asciimap_writes_relations() -> None:
    xml = asciimap.to_osm(
        "ab", [("ab", PRIMARY)], relations=[([("way", "ab", "from"), ("node", "b", "via"), ("way", 9, "to")], {})]
    )
    assert '<relation id="1" version="1">' in xml
    assert '<member type="way" ref="1" role="from"/>' in xml and '<member type="node" ref="2" role="via"/>' in xml
    assert '<member type="way" ref="9" role="to"/>' in xml
    assert asciimap.to_osm("ab", [("ab", PRIMARY)]) == asciimap.to_osm("ab", [("ab", PRIMARY)], relations=[])


# ---------------------------------------------------------------- real extracts

EXTRACT_NAMES = (
    "andorra.osm.pbf",
    "andorra-latest.osm.pbf",
    "monaco.osm.gz",
    "registry/monaco.osm.pbf",
    "porto_portugal.osm.pbf",
)


@pytest.mark.extracts
@pytest.mark.parametrize("name", EXTRACT_NAMES)
def test_real_extract_counts(name: str) -> None:
    path = extract(name)
    arrays = build_graph(path)
    t0 = time.perf_counter()
    found, read = read_restrictions(path, CAR)
    t1 = time.perf_counter()
    seqs, report = resolve_restrictions(found, arrays)
    t2 = time.perf_counter()
    check_invariants(arrays, found, read, seqs, report)
    print(f"\n{name}: read {t1 - t0:.3f}s resolve {t2 - t1:.3f}s")
    for k, v in sorted({**read, **report}.items()):
        print(f"  {k}: {v}")
    assert t2 - t1 < 1.0
    if read["restriction_relations"]:
        assert report["restrictions_used"] > 0.5 * read["restriction_relations"]

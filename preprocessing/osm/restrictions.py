"""OSM turn restrictions: read the relations of an extract, then resolve them onto the graph's arcs.

`read_restrictions` turns restriction relations into `Restriction` records (OSM ids only); the graph is not
needed, so it can run beside the way pass. `resolve_restrictions` maps them onto arc ids of the built graph
(`arc_way`, `arc_geom`, `node_osm_id`) as *forbidden arc sequences*: a route may not traverse exactly those arcs
one after the other. Everything dropped is counted by reason in the two reports; nothing raises on bad data.

Reading follows OSRM's `RestrictionParser::TryParse` (src/extractor/restriction_parser.cpp), default settings:
- Relations with `type=restriction`, and, as OSRM reads them, relations of any other type that carry one of the
  profile's restriction keys: OSRM looks only at the keys, whatever the type (arguably a bug: milan's two
  `type=restriction:hgv` relations with a plain `restriction` tag bind cars there; kept for OSRM's answers,
  docs/DESIGN.md; OSRM's guidance feature "Market/Haight without Through Street" draws one as `type=relation`).
- Only when the profile says `USE_TURN_RESTRICTIONS` (car, testbot; OSRM's bicycle and foot profiles do not), else
  nothing is read (`restrictions_disabled`).
- The tags that count are `restriction` and `restriction:<mode>` for the profile's `RESTRICTIONS` modes (car:
  motorcar, motor_vehicle, vehicle; testbot none). As in OSRM, every such tag is looked at in the relation's tag
  order: any value that is not a known one makes the whole relation ignored (`restrictions_unknown_value`; OSRM
  takes any `only_*` / `no_*` except `no_*_on_red`, we take the ten documented values), and the *last* one decides
  only/no. A relation with only other modes' tags (`restriction:hgv`, `restriction:bicycle` for car) does not
  apply (`restrictions_not_for_profile`).
- `except=a;b` naming one of the profile's modes: ignored (`restrictions_except`), checked before the values as
  OSRM does. Items are compared as written, as OSRM does: `except=psv; bicycle` spares no bicycle (arguably a bug in
  OSRM, kept for its answers; docs/DESIGN.md).
- `restriction:conditional` and `restriction:<mode>:conditional` are not read (OSRM's `--parse-conditionals` is off
  by default); a relation that has nothing else is counted (`restrictions_conditional_ignored`). `day_on`,
  `hour_on`, `day_off`, `hour_off` are not looked at by OSRM either: such restrictions apply at all times (counted,
  `restrictions_timed_applied`).
- Members: `from` / `to` / `via` roles only; exactly one `from` way and one `to` way, except that `no_entry` may
  have several `from` ways and `no_exit` several `to` ways (one record per pair, as OSRM); the via is one node or
  one or more ways. Otherwise malformed (`restrictions_malformed_<reason>`). OSRM skips nodes in from/to roles (then
  the from or to is missing) and lets the last via member decide between node and ways; we refuse several via
  nodes and a mix of via node and via ways.
- `no_entry` / `no_exit` are ordinary `no_*` restrictions (OSRM: `is_only = false`); only their member counts
  differ.

Resolving follows OSRM's `find_via_node_path` / `find_via_way_path` (src/extractor/extraction_containers.cpp) and
its restriction graph (src/extractor/restriction_graph.cpp):
- The from way must *end* at the via (its first or last node), and so must the to way; a via node inside the from
  or to way is refused (`via_inside_from_way`, `via_inside_to_way`), as OSRM refuses it (which direction was meant
  is ambiguous; the OSM wiki asks mappers to split the way there). The from arc is the way's end piece driven
  towards the via, the to arc its end piece driven away from it. A closed way (first node = last node) at the via
  gives both of its pieces there (OSRM takes only the first).
- A via node must be one graph node: a blocking barrier has one copy per road end (`via_node_barrier`); a via node
  outside the extract, or that no routable way uses twice (not a junction), is `via_node_missing`.
- Via ways are chained end to end, as OSRM does, from the from way's end through each via way (all its arcs, in
  order: ways are cut into several arcs at junctions) to the to way's end. OSRM takes them in the relation's
  order; when that order does not connect, we try the other orders (`restrictions_via_reordered`).
- Ways not in the graph (not routable for the profile, outside the extract) are refused (`from_way_missing`, ...).
  A from, via or to that cannot be driven in the direction the restriction names (a oneway the wrong way) is
  refused too (`from_not_entering`, `via_not_traversable`, `to_not_leaving`): no route takes that turn. OSRM keeps
  them; an `only_*` whose to cannot be driven then forbids every exit of the from road.
- `no_*`: the sequence from arc, via arcs..., to arc is forbidden (every from/to pair at a via node).
- `only_*` at a via node: every other arc leaving the via node after the from arc, u-turn included, is forbidden.
  Via ways: by default every exit that leaves the path at *each* node along it (from the from arc's head to the
  last via arc's head) is forbidden, so a route that enters the via path from the from arc must follow it to the
  to way (the OSM meaning). OSRM forbids the other exits only at the last via node (`only_at_last_via=True`).
- Duplicates are merged; a sequence that contains another forbidden sequence is dropped (it is implied); an
  `only_*` and a `no_*` on the same from arc both apply.

Counts: read's `restriction_relations` = `restriction_relations_parsed` + the ignored and malformed counts; the
parsed relations give `restrictions_parsed` records (several for a multi-from `no_entry`); resolve's
`restrictions_used` + `restrictions_refused_*` = the records it is given.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import osmium

from preprocessing.osm.read import _osmium_error

Progress = Callable[[int], None]

NO_VALUES = frozenset({"no_left_turn", "no_right_turn", "no_straight_on", "no_u_turn", "no_entry", "no_exit"})
ONLY_VALUES = frozenset({"only_left_turn", "only_right_turn", "only_straight_on", "only_u_turn"})
TIMED_KEYS = ("day_on", "day_off", "hour_on", "hour_off")
MAX_VIA_PERMUTATIONS = 720  # 6 via ways: beyond that only the relation's own order is tried


@dataclass(frozen=True)
class Restriction:
    """One turn restriction in OSM ids: from way, via node or via ways, to way."""

    osm_id: int  # relation id
    only: bool  # only_* (True) or no_* (False)
    from_way: int
    via_node: int | None  # OSM node id, or None when the via is one or more ways
    via_ways: tuple[int, ...]  # OSM way ids in the relation's order (resolve chains them)
    to_way: int


def restriction_keys(modes: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tag keys OSRM reads for these modes, and the conditional keys it leaves alone by default."""
    modes = tuple(modes)
    keys = ("restriction", *(f"restriction:{m}" for m in modes))
    conditional = ("restriction:conditional", *(f"restriction:{m}:conditional" for m in modes))
    return keys, conditional


def parse_relation(
    osm_id: int,
    tags: Sequence[tuple[str, str]],
    members: Sequence[tuple[str, int, str]],
    modes: Sequence[str],
) -> tuple[list[Restriction], str]:
    """One relation's restrictions and an outcome: "" when parsed, else the report key that counts it.

    `tags` in the relation's order, `members` as (type "n"/"w"/"r", ref, role)."""
    keys, cond_keys = restriction_keys(modes)
    values = [v.strip() for k, v in tags if k in keys]
    tag = dict(tags)
    if not values:
        if any(k in tag for k in cond_keys):
            return [], "restrictions_conditional_ignored"
        return [], "restrictions_not_for_profile"
    except_ = tag.get("except", "")
    if except_ and any(item in modes for item in except_.split(";")):
        return [], "restrictions_except"
    if any(v not in NO_VALUES and v not in ONLY_VALUES for v in values):
        return [], "restrictions_unknown_value"
    value = values[-1]  # OSRM: the last matching tag decides only/no
    only = value in ONLY_VALUES
    multi_from = value == "no_entry"
    multi_to = value == "no_exit"

    from_ways: list[int] = []
    to_ways: list[int] = []
    via_nodes: list[int] = []
    via_ways: list[int] = []
    node_in_from_to = ""
    for mtype, ref, role in members:
        if role not in ("from", "to", "via"):
            continue
        if mtype == "n":
            if role == "via":
                via_nodes.append(int(ref))
            else:
                node_in_from_to = node_in_from_to or f"{role}_not_way"
        elif mtype == "w":
            {"from": from_ways, "to": to_ways, "via": via_ways}[role].append(int(ref))
    reason = ""
    if not from_ways:
        reason = node_in_from_to if node_in_from_to.startswith("from") else "no_from"
    elif not to_ways:
        reason = node_in_from_to if node_in_from_to.startswith("to") else "no_to"
    elif not via_nodes and not via_ways:
        reason = "no_via"
    elif via_nodes and via_ways:
        reason = "mixed_via"
    elif len(via_nodes) > 1:
        reason = "multiple_via_nodes"
    elif len(from_ways) > 1 and not multi_from:
        reason = "multiple_from"
    elif len(to_ways) > 1 and not multi_to:
        reason = "multiple_to"
    if reason:
        return [], f"restrictions_malformed_{reason}"
    via_node = via_nodes[0] if via_nodes else None
    out = [
        Restriction(int(osm_id), only, f, via_node, tuple(via_ways) if via_node is None else (), t)
        for f in from_ways
        for t in to_ways
    ]
    return out, ""


def read_restrictions(
    path: Path, profile: ModuleType, progress: Progress | None = None
) -> tuple[list[Restriction], dict[str, int]]:
    """Pass over the restriction relations of an extract (module docstring): the restrictions that apply to the profile.

    The report counts relations read, parsed, and each reason one was ignored or malformed (see the module
    docstring); with `USE_TURN_RESTRICTIONS` off nothing is read (`restrictions_disabled: 1`)."""
    if not profile.USE_TURN_RESTRICTIONS:
        return [], {"restrictions_disabled": 1}
    modes = tuple(profile.RESTRICTIONS)
    keys, cond_keys = restriction_keys(modes)
    wanted = frozenset(keys + cond_keys)
    report: dict[str, int] = {"restriction_relations": 0, "restriction_relations_parsed": 0, "restrictions_parsed": 0}
    out: list[Restriction] = []
    done = 0
    try:
        # relations with a type or one of the keys pass the C++ filter; Python keeps type=restriction and those with
        # the profile's keys (OSRM's `RestrictionParser` filter)
        fp = osmium.FileProcessor(str(path), osmium.osm.RELATION).with_filter(osmium.filter.KeyFilter("type", *wanted))
        for rel in fp:
            done += 1
            if progress is not None and done % 1024 == 0:
                progress(1024)
            tags = [(t.k, t.v) for t in rel.tags]
            if rel.tags.get("type") != "restriction" and not any(k in wanted for k, _ in tags):
                continue
            members = [(m.type, int(m.ref), m.role) for m in rel.members]  # type: ignore[union-attr]
            found, outcome = parse_relation(rel.id, tags, members, modes)
            report["restriction_relations"] += 1
            if outcome:
                report[outcome] = report.get(outcome, 0) + 1
                continue
            report["restriction_relations_parsed"] += 1
            report["restrictions_parsed"] += len(found)
            if any(k in TIMED_KEYS for k, _ in tags):
                report["restrictions_timed_applied"] = report.get("restrictions_timed_applied", 0) + 1
            out.extend(found)
    except (RuntimeError, ValueError, OSError) as exc:
        raise _osmium_error(path, exc) from None
    if progress is not None:
        progress(done % 1024)
    return out, report


def osrm_via_nodes(restrictions: Sequence[Restriction], way_ids: np.ndarray, way_first: np.ndarray,
                   way_refs: np.ndarray) -> np.ndarray:  # fmt: skip
    """The OSM nodes OSRM's graph compressor keeps for these restrictions (`GraphCompressor`'s
    `incompressible_via_nodes`), from the profile's ways (`way_ids` with their node lists `way_refs[way_first[i]:
    way_first[i + 1]]`) before any graph exists: a via node that is an end of both the from and the to way (OSRM's
    `find_via_node_path`; others are dropped as unconnected), and for via ways the node where the from way meets the
    first via way and the one where the last meets the to way. Sorted unique int64."""
    order = np.argsort(way_ids, kind="stable")
    ids = np.asarray(way_ids, dtype=np.int64)[order]

    def ends(way: int) -> tuple[int, int] | None:
        i = int(np.searchsorted(ids, way))
        if i >= len(ids) or ids[i] != way:
            return None
        w = int(order[i])
        lo, hi = int(way_first[w]), int(way_first[w + 1])
        return (int(way_refs[lo]), int(way_refs[hi - 1])) if hi > lo else None

    def shared(a: tuple[int, int] | None, b: tuple[int, int] | None) -> int | None:
        if a is None or b is None:
            return None
        common = [x for x in a if x in b]
        return common[0] if common else None

    out: set[int] = set()
    for r in restrictions:
        frm, to = ends(r.from_way), ends(r.to_way)
        if frm is None or to is None:
            continue
        if r.via_node is not None:
            if r.via_node in frm and r.via_node in to:
                out.add(r.via_node)
        elif r.via_ways:
            for x in (shared(frm, ends(r.via_ways[0])), shared(ends(r.via_ways[-1]), to)):
                if x is not None:
                    out.add(x)
    return np.array(sorted(out), dtype=np.int64)


@dataclass
class _Way:
    """A way as the graph holds it: its pieces (chains) in way order, with their end nodes and arcs."""

    a: list[int]  # graph node at the start of each piece, in way direction
    b: list[int]  # graph node at the end of each piece
    fwd: list[int]  # arc driving the piece in way direction, -1 = none (oneway)
    bwd: list[int]  # arc driving it against the way direction, -1 = none

    @property
    def first(self) -> int:
        return self.a[0]

    @property
    def last(self) -> int:
        return self.b[-1]

    def touches(self, v: int) -> bool:
        return v in self.a or v in self.b

    def into(self, v: int) -> list[int]:
        """Arcs (-1 = not drivable) of the end pieces driven towards the way end `v`."""
        out = []
        if self.first == v:
            out.append(self.bwd[0])
        if self.last == v:
            out.append(self.fwd[-1])
        return out

    def out_of(self, v: int) -> list[int]:
        """Arcs (-1 = not drivable) of the end pieces driven away from the way end `v`."""
        out = []
        if self.first == v:
            out.append(self.fwd[0])
        if self.last == v:
            out.append(self.bwd[-1])
        return out

    def walk(self, v: int) -> tuple[list[int], int] | None:
        """All arcs of the way driven from its end `v` to the other end, and that end; None when `v` is not an
        end or the way is broken (a blocking barrier, a missing node) so it cannot be followed."""
        k = len(self.a)
        if any(self.b[i] != self.a[i + 1] for i in range(k - 1)):
            return None
        if v == self.first:
            return list(self.fwd), self.last
        if v == self.last:
            return list(reversed(self.bwd)), self.first
        return None


class _GraphIndex:
    """Lookups built once per graph: a way's pieces by OSM way id, graph nodes by OSM node id, arcs leaving a
    node."""

    def __init__(self, arrays: Mapping[str, np.ndarray], way_ids: Iterable[int], node_ids: Iterable[int]) -> None:
        tail = np.asarray(arrays["arc_tail"], dtype=np.int64)
        head = np.asarray(arrays["arc_head"], dtype=np.int64)
        geom = np.asarray(arrays["arc_geom"], dtype=np.int64)
        way = np.asarray(arrays["arc_way"], dtype=np.int64)
        self.first_out = np.asarray(arrays["first_out"], dtype=np.int64)
        self.head = head
        wanted_ways = np.unique(np.fromiter(way_ids, dtype=np.int64))
        sel = np.flatnonzero(np.isin(way, wanted_ways))
        chain = geom[sel] >> 1
        rev = (geom[sel] & 1).astype(bool)
        # one row per (way, chain), chains ascending = way order (the builder numbers them along each way)
        order = np.lexsort((chain, way[sel]))
        sel, chain, rev = sel[order], chain[order], rev[order]
        self.ways: dict[int, _Way] = {}
        pieces: dict[int, dict[int, list[int]]] = {}
        for e, c, r in zip(sel.tolist(), chain.tolist(), rev.tolist(), strict=True):
            w = int(way[e])
            row = pieces.setdefault(w, {}).setdefault(c, [-1, -1, -1, -1])  # a, b, fwd, bwd
            t, h = int(tail[e]), int(head[e])
            if r:
                row[0], row[1], row[3] = h, t, e
            else:
                row[0], row[1], row[2] = t, h, e
        for w, rows in pieces.items():
            cols = list(zip(*(rows[c] for c in sorted(rows)), strict=True))
            self.ways[w] = _Way(list(cols[0]), list(cols[1]), list(cols[2]), list(cols[3]))
        osm = np.asarray(arrays["node_osm_id"], dtype=np.int64)
        wanted_nodes = np.unique(np.fromiter(node_ids, dtype=np.int64))
        self.nodes: dict[int, list[int]] = {}
        for v in np.flatnonzero(np.isin(osm, wanted_nodes)).tolist():
            self.nodes.setdefault(int(osm[v]), []).append(int(v))

    def out_arcs(self, v: int) -> range:
        return range(int(self.first_out[v]), int(self.first_out[v + 1]))


def _via_node(r: Restriction, g: _GraphIndex) -> tuple[list[tuple[int, ...]], str]:
    """Forbidden sequences of a via-node restriction, or a refusal reason."""
    frm = g.ways.get(r.from_way)
    to = g.ways.get(r.to_way)
    if frm is None:  # OSRM's order: from way, to way, via node
        return [], "from_way_missing"
    if to is None:
        return [], "to_way_missing"
    vs = g.nodes.get(int(r.via_node or 0), [])
    if not vs:
        return [], "via_node_missing"
    if len(vs) > 1:
        return [], "via_node_barrier"
    v = vs[0]
    from_arcs = frm.into(v)
    if not from_arcs:
        return [], "via_inside_from_way" if frm.touches(v) else "from_not_at_via"
    to_arcs = to.out_of(v)
    if not to_arcs:
        return [], "via_inside_to_way" if to.touches(v) else "to_not_at_via"
    from_arcs = [e for e in from_arcs if e >= 0]
    if not from_arcs:
        return [], "from_not_entering"
    to_arcs = [e for e in to_arcs if e >= 0]
    if not to_arcs:
        return [], "to_not_leaving"
    if r.only:
        allowed = set(to_arcs)
        return [(f, b) for f in from_arcs for b in g.out_arcs(v) if b not in allowed], ""
    return [(f, t) for f in from_arcs for t in to_arcs], ""


def _chain(frm: _Way, vias: Sequence[_Way], to: _Way) -> tuple[list[list[int]], str]:
    """Arc paths from arc, via arcs..., to arc (-1 where not drivable) through via ways in this order, or the
    reason they do not connect end to end."""
    paths: list[list[int]] = []
    reason = "from_not_at_via"
    first = vias[0]
    # OSRM's find_turn_nodes order: from.first against via.first, via.last, then from.last against both
    for start in dict.fromkeys(x for x in (frm.first, frm.last) for y in (first.first, first.last) if x == y):
        arcs: list[int] = []
        conn = start
        broken = ""
        for via in vias:
            step = via.walk(conn)
            if step is None:
                broken = "via_not_connected"
                break
            arcs.extend(step[0])
            conn = step[1]
        if broken:
            reason = broken
            continue
        to_arcs = to.out_of(conn)
        if not to_arcs:
            reason = "to_not_at_via"
            continue
        paths.extend([f, *arcs, t] for f in frm.into(start) for t in to_arcs)
    return (paths, "") if paths else ([], reason)


def _via_ways(r: Restriction, g: _GraphIndex, only_at_last_via: bool) -> tuple[list[tuple[int, ...]], str, bool]:
    """Forbidden sequences of a via-way restriction, a refusal reason, and whether the via ways were reordered."""
    frm = g.ways.get(r.from_way)
    to = g.ways.get(r.to_way)
    if frm is None:
        return [], "from_way_missing", False
    if to is None:
        return [], "to_way_missing", False
    vias = [g.ways.get(w) for w in r.via_ways]
    if any(v is None for v in vias):
        return [], "via_way_missing", False
    ordered: list[_Way] = [v for v in vias if v is not None]
    paths, reason = _chain(frm, ordered, to)
    reordered = False
    if not paths:
        for perm in itertools.islice(itertools.permutations(ordered), 1, MAX_VIA_PERMUTATIONS):
            paths, _ = _chain(frm, perm, to)
            if paths:
                reordered = True
                break
    if not paths:
        return [], reason, False
    drivable = [p for p in paths if min(p) >= 0]
    if not drivable:
        p = paths[0]
        why = "from_not_entering" if p[0] < 0 else "to_not_leaving" if min(p[1:-1]) >= 0 else "via_not_traversable"
        return [], why, reordered
    out: list[tuple[int, ...]] = []
    for p in drivable:
        if not r.only:
            out.append(tuple(p))
            continue
        for i in range(len(p) - 2 if only_at_last_via else 0, len(p) - 1):
            v = int(g.head[p[i]])
            out.extend((*p[: i + 1], b) for b in g.out_arcs(v) if b != p[i + 1])
    return out, "", reordered


def _drop_implied(seqs: set[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Sorted sequences without those that contain a shorter forbidden sequence (already implied)."""
    out = []
    for s in sorted(seqs):
        k = len(s)
        implied = any(s[i:j] in seqs for i in range(k - 1) for j in range(i + 2, k + 1) if j - i < k)
        if not implied:
            out.append(s)
    return out


def resolve_restrictions(
    restrictions: Sequence[Restriction], arrays: Mapping[str, np.ndarray], *, only_at_last_via: bool = False
) -> tuple[list[tuple[int, ...]], dict[str, int]]:
    """The forbidden arc sequences: each a tuple of >= 2 arc ids a0, a1, ..., ak with head(a_i) == tail(a_i+1),
    meaning a route may not traverse exactly these arcs consecutively. Sorted, without duplicates or sequences
    implied by shorter ones.

    The report counts `restrictions_used`, `restrictions_refused_<reason>` (see the module docstring),
    `restrictions_via_way_used`, `restrictions_via_reordered` and `forbidden_sequences`."""
    way_ids = {w for r in restrictions for w in (r.from_way, r.to_way, *r.via_ways)}
    node_ids = {r.via_node for r in restrictions if r.via_node is not None}
    g = _GraphIndex(arrays, way_ids, node_ids)
    report: dict[str, int] = {"restrictions_used": 0}
    seqs: set[tuple[int, ...]] = set()

    def count(key: str) -> None:
        report[key] = report.get(key, 0) + 1

    for r in restrictions:
        if r.via_node is not None:
            found, reason = _via_node(r, g)
            reordered = False
        elif r.via_ways:
            found, reason, reordered = _via_ways(r, g, only_at_last_via)
        else:
            found, reason, reordered = [], "no_via", False
        if reason:
            count(f"restrictions_refused_{reason}")
            continue
        count("restrictions_used")
        if r.via_node is None:
            count("restrictions_via_way_used")
        if reordered:
            count("restrictions_via_reordered")
        seqs.update(found)
    out = _drop_implied(seqs)
    report["forbidden_sequences"] = len(out)
    return out, report

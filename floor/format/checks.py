"""The format's invariants, checked when a graph is loaded (RoutingKit's `check_*_for_errors`, vectorised).

Each check names the array and the rule that failed, so a damaged or hand-edited graph is refused at start-up
instead of answering wrong routes or crashing a kernel: CSR offsets monotone and complete, ids in range, chains and
strings inside their tables, CH arcs upward with an unpacking table that stays inside the hierarchy, landmark tables
complete. Every check is O(size) numpy over the memory-mapped arrays.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from floor.format.arrays import CH_PREFIX, EB_PREFIX, FormatError, ch_names
from floor.format.encoded_values import ENCODED_VALUES, MAX_SPEED_NONE_KMH, NO_LIMIT_U8
from floor.format.units import CLOSED_DS, SLOTS, TD_FACTOR_MAX, TD_FACTOR_MIN, TRAVEL_MODES


def _fail(name: str, rule: str) -> FormatError:
    return FormatError(f"array {name} breaks the rule: {rule}")


def _offsets(arrays: Mapping[str, np.ndarray], name: str, rows: int, total: int) -> np.ndarray:
    """CSR offsets: `rows + 1` entries from 0 to `total`, never decreasing."""
    a = np.asarray(arrays[name])
    if a.ndim != 1 or a.shape[0] != rows + 1:
        raise _fail(name, f"{rows + 1} offsets (one per row, plus one)")
    if rows >= 0 and (a[0] != 0 or a[-1] != total):
        raise _fail(name, f"offsets run from 0 to {total}")
    if np.any(np.diff(a) < 0):
        raise _fail(name, "offsets never decrease")
    return a


def _ids(arrays: Mapping[str, np.ndarray], name: str, size: int, what: str, allow: int | None = None) -> np.ndarray:
    """Every entry is an id in 0..size-1 (or `allow`)."""
    a = np.asarray(arrays[name])
    if a.size == 0:
        return a
    ok = (a >= 0) & (a < size)
    if allow is not None:
        ok |= a == allow
    if not np.all(ok):
        raise _fail(name, f"every entry is a {what} id in 0..{size - 1}")
    return a


def _csr_graph(arrays: Mapping[str, np.ndarray], prefix: str, n: int) -> int:
    """A graph's forward and backward CSR: offsets, tails matching the offsets, heads and the in-arc table in range."""
    tail = np.asarray(arrays[prefix + "arc_tail"])
    m = int(tail.shape[0])
    first = _offsets(arrays, prefix + "first_out", n, m)
    if not np.array_equal(tail, np.repeat(np.arange(n, dtype=tail.dtype), np.diff(first))):
        raise _fail(prefix + "arc_tail", f"arcs are grouped by tail as {prefix}first_out says")
    head = _ids(arrays, prefix + "arc_head", n, "node")
    in_first = _offsets(arrays, prefix + "in_first_out", n, m)
    in_arc = _ids(arrays, prefix + "in_arc", m, "arc")
    if not np.array_equal(head[in_arc], np.repeat(np.arange(n, dtype=head.dtype), np.diff(in_first))):
        raise _fail(prefix + "in_arc", f"arcs are grouped by head as {prefix}in_first_out says")
    for name in ("arc_weight", "arc_duration", "arc_dist"):
        if np.any(np.asarray(arrays[prefix + name]) < 0):
            raise _fail(prefix + name, "no negative weight, duration or distance")
    return m


def check_core(arrays: Mapping[str, np.ndarray]) -> None:
    """The road graph: CSR both ways, chains, shape points, strings and components."""
    n = int(np.asarray(arrays["node_lon"]).shape[0])
    m = _csr_graph(arrays, "", n)
    for name in ("node_lat", "node_osm_id", "node_component"):
        if arrays[name].shape[0] != n:
            raise _fail(name, f"one entry per node ({n})")
    _ids(arrays, "node_component", max(n, 1), "component")
    per_arc = ("arc_geom", "arc_name", "arc_ref", "arc_class", "arc_flags", "arc_lanes", "arc_signs", "arc_way")
    for name in (*per_arc, "arc_head_penalty"):
        if arrays[name].shape[0] != m:
            raise _fail(name, f"one entry per arc ({m})")
    if np.any(np.asarray(arrays["arc_head_penalty"]) < 0):
        raise _fail("arc_head_penalty", "no negative obstacle penalty")
    p = int(arrays["geom_lon"].shape[0])
    first = np.asarray(arrays["geom_first"])
    c = int(first.shape[0]) - 1
    _offsets(arrays, "geom_first", c, p)
    _ids(arrays, "arc_geom", 2 * max(c, 1), "chain direction (2 * chain + reverse)")
    s = int(arrays["str_offsets"].shape[0]) - 1
    _offsets(arrays, "str_offsets", s, int(arrays["str_bytes"].shape[0]))
    try:  # names and refs are decoded one by one later (a few MB at most: checked whole here, once)
        np.asarray(arrays["str_bytes"]).tobytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail("str_bytes", f"names are UTF-8 (byte {exc.start:,} is not)") from None
    for name in ("arc_name", "arc_ref", "arc_lanes", "arc_signs"):
        _ids(arrays, name, max(s, 1), "string")
    for name in ("geom_lat", "geom_osm_id"):
        if arrays[name].shape[0] != p:
            raise _fail(name, f"one entry per shape point ({p})")
    check_encoded_values(arrays, m)
    check_modes(arrays, m)
    check_segments(arrays, m, p)


def check_modes(arrays: Mapping[str, np.ndarray], m: int) -> None:
    """The travel mode per arc (`arc_mode`; older graphs have none): one per arc, a `TRAVEL_MODES` code, never
    "inaccessible" (an arc is a direction some mode travels)."""
    if "arc_mode" not in arrays:
        return
    a = np.asarray(arrays["arc_mode"])
    if a.ndim != 1 or a.shape[0] != m:
        raise _fail("arc_mode", f"one entry per arc ({m})")
    if a.size and (int(a.min()) < 1 or int(a.max()) >= len(TRAVEL_MODES)):
        raise _fail("arc_mode", f"every entry is a travel mode code in 1..{len(TRAVEL_MODES) - 1}")


def check_segments(arrays: Mapping[str, np.ndarray], m: int, p: int) -> None:
    """The per-segment values (`geom_seg_weight`, `geom_seg_duration`; older graphs have none): four non-negative
    columns per shape point, and each arc's column pair summed over its chain equal to the arc's weight or duration
    (an arc a metric closed, `CLOSED_DS` or more, excepted)."""
    for name, arc_name in (("geom_seg_weight", "arc_weight"), ("geom_seg_duration", "arc_duration")):
        if name not in arrays:
            continue
        a = np.asarray(arrays[name])
        if a.ndim != 2 or a.shape != (p, 4):
            raise _fail(name, f"four columns per shape point ({p}, 4)")
        if a.size and int(a.min()) < 0:
            raise _fail(name, "no negative deciseconds")
        sums = arc_segment_sums(a, arrays["arc_geom"], arrays["geom_first"])
        arc = np.asarray(arrays[arc_name], dtype=np.int64)
        bad = (sums != arc) & (arc < CLOSED_DS)
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            raise _fail(name, f"an arc's segments and obstacles sum to its {arc_name} (arc {k}: {sums[k]} != {arc[k]})")


def arc_segment_sums(
    per_point: np.ndarray, arc_geom: np.ndarray, geom_first: np.ndarray, arcs: np.ndarray | None = None
) -> np.ndarray:
    """int64 per arc (of `arcs` only, when given): its column pair of a `geom_seg_weight`-shaped array ([p, 4]:
    segment and obstacles along the chain, then against it) summed over its chain, in the arc's direction
    (`arc_geom` odd: against the chain)."""
    gf = np.asarray(geom_first, dtype=np.int64)
    geom = np.asarray(arc_geom, dtype=np.int64)
    if arcs is not None:  # the few arcs a speed file touched: their rows only
        geom = geom[np.asarray(arcs, dtype=np.int64)]
        chain, rev = geom >> 1, geom & 1
        lo, n = gf[chain], gf[chain + 1] - gf[chain]
        starts = np.zeros(len(n), dtype=np.int64)
        np.cumsum(n[:-1], out=starts[1:])
        rows = np.arange(int(n.sum()), dtype=np.int64) + np.repeat(lo - starts, n)
        cols = np.repeat(rev, n)
        vals = per_point[rows, cols].astype(np.int64) + per_point[rows, cols + 2]
        owner = np.repeat(np.arange(len(geom), dtype=np.int64), n)
        return np.bincount(owner, weights=vals, minlength=len(geom)).astype(np.int64)  # exact: sums far below 2**53
    chain, rev = geom >> 1, geom & 1
    cum = np.zeros((per_point.shape[0] + 1, 2), dtype=np.int64)
    np.cumsum(per_point[:, 0:2].astype(np.int64) + per_point[:, 2:4], axis=0, out=cum[1:])
    return cum[gf[chain + 1], rev] - cum[gf[chain], rev]


def check_encoded_values(arrays: Mapping[str, np.ndarray], m: int) -> None:
    """The encoded values a graph stores (`floor.format.encoded_values`; older graphs have none): one per arc, an
    enum's codes within its constants, a max speed at most `MAX_SPEED_NONE_KMH` km/h or none stated."""
    for ev in ENCODED_VALUES.values():
        if ev.array is None or ev.array not in arrays:
            continue
        a = np.asarray(arrays[ev.array])
        if a.ndim != 1 or a.shape[0] != m:
            raise _fail(ev.array, f"one entry per arc ({m})")
        if a.size and ev.kind == "enum" and int(a.max()) >= len(ev.constants):
            raise _fail(ev.array, f"every entry is a {ev.name} code in 0..{len(ev.constants) - 1}")
        if a.size and ev.name == "max_speed" and np.any((a > MAX_SPEED_NONE_KMH) & (a != NO_LIMIT_U8)):
            raise _fail(ev.array, f"km/h up to {MAX_SPEED_NONE_KMH}, or {NO_LIMIT_U8} for none")


def check_time_profiles(arrays: Mapping[str, np.ndarray], m: int) -> None:
    """A metric's time profiles (`td_factor`, `td_arc_row`; absent: static durations): both or neither, a row of
    `SLOTS` factors per profile within TD_FACTOR_MIN..TD_FACTOR_MAX (200 % .. 1 % of free flow), and one row id
    (or -1) per road arc."""
    has = ["td_factor" in arrays, "td_arc_row" in arrays]
    if not any(has):
        return
    if not all(has):
        raise _fail("td_factor" if has[1] else "td_arc_row", "td_factor and td_arc_row come together")
    f = np.asarray(arrays["td_factor"])
    if f.ndim != 2 or f.shape[1] != SLOTS:
        raise _fail("td_factor", f"one row of {SLOTS} weekly slots per profile")
    if f.size and (int(f.min()) < TD_FACTOR_MIN or int(f.max()) > TD_FACTOR_MAX):
        raise _fail(
            "td_factor", f"factors in 1/65536 within {TD_FACTOR_MIN}..{TD_FACTOR_MAX} (200 % .. 1 % of free flow)"
        )
    row = np.asarray(arrays["td_arc_row"])
    if row.ndim != 1 or row.shape[0] != m:
        raise _fail("td_arc_row", f"one entry per arc ({m})")
    _ids(arrays, "td_arc_row", max(int(f.shape[0]), 1), "td_factor row", allow=-1)
    if f.shape[0] == 0 and np.any(row >= 0):
        raise _fail("td_arc_row", "-1 everywhere when td_factor has no row")


def check_search_graph(arrays: Mapping[str, np.ndarray]) -> None:
    """The edge-based search graph: its own CSR, and each search node's road arc in range."""
    m = int(arrays["arc_head"].shape[0])
    big_n = int(arrays[EB_PREFIX + "node_arc"].shape[0])
    _csr_graph(arrays, EB_PREFIX, big_n)
    _ids(arrays, EB_PREFIX + "node_arc", max(m, 1), "road arc")


def check_ch(arrays: Mapping[str, np.ndarray], prefix: str, n: int) -> None:
    """A hierarchy over `n` search nodes: ranks a permutation, CSR by rank, every arc upward, unpacking inside."""
    names = ch_names(prefix)
    rank = np.asarray(arrays[names["ch_rank"]])
    if rank.shape[0] != n or not np.array_equal(np.sort(rank), np.arange(n)):
        raise _fail(names["ch_rank"], f"a permutation of the {n} search nodes")
    for side in ("up", "down"):
        arcs = np.asarray(arrays[names[f"ch_{side}_arcs"]])
        first = _offsets(arrays, names[f"ch_{side}_first"], n, int(arcs.shape[0]))
        owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(first))
        if arcs.ndim != 2 or arcs.shape[1] != 4:
            raise _fail(names[f"ch_{side}_arcs"], "four columns: other rank, weight, dist, duration")
        if np.any(arcs[:, 0] <= owner) or np.any(arcs[:, 0] >= n):
            raise _fail(names[f"ch_{side}_arcs"], "every arc leads to a higher rank")
        if np.any(arcs[:, 1:] < 0):
            raise _fail(names[f"ch_{side}_arcs"], "no negative weight, distance or duration")
    unpack = np.asarray(arrays[names["ch_unpack"]])
    total = int(arrays[names["ch_up_arcs"]].shape[0] + arrays[names["ch_down_arcs"]].shape[0])
    if unpack.shape != (total, 2):
        raise _fail(names["ch_unpack"], f"one row per CH arc ({total}), two columns")
    short = unpack[:, 1] >= 0
    if np.any(unpack[short] >= total) or np.any(unpack[short, 0] < 0):
        raise _fail(names["ch_unpack"], "a shortcut unpacks into two CH arcs")


def check_cch(arrays: Mapping[str, np.ndarray], prefix: str, n: int) -> None:
    """The customizable hierarchy's structure over the `n` nodes of the search graph under `prefix` ("eb_" or ""):
    ranks a permutation, CSR by lower rank with strictly ascending higher ranks, every search arc on its CCH arc."""
    rank = np.asarray(arrays["cch_rank"])
    if rank.shape[0] != n or not np.array_equal(np.sort(rank), np.arange(n)):
        raise _fail("cch_rank", f"a permutation of the {n} search nodes")
    head = np.asarray(arrays["cch_head"]).astype(np.int64)
    first = _offsets(arrays, "cch_first", n, int(head.shape[0]))
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(first))
    if np.any(head <= owner) or np.any(head >= n):
        raise _fail("cch_head", "every arc leads from its row's rank to a higher one")
    same_row = owner[1:] == owner[:-1]
    if np.any(same_row & (head[1:] <= head[:-1])):
        raise _fail("cch_head", "higher ranks strictly ascending within a row")
    tail = np.asarray(arrays[prefix + "arc_tail"])
    arc_of = _ids(arrays, "cch_arc_of", max(int(head.shape[0]), 1), "CCH arc", allow=-1).astype(np.int64)
    if arc_of.shape[0] != tail.shape[0]:
        raise _fail("cch_arc_of", f"one entry per search arc ({tail.shape[0]})")
    rt = rank[tail].astype(np.int64)
    rh = rank[np.asarray(arrays[prefix + "arc_head"])].astype(np.int64)
    on = arc_of >= 0
    if (
        np.any(on != (rt != rh))
        or np.any(owner[arc_of[on]] != np.minimum(rt, rh)[on])
        or np.any(head[arc_of[on]] != np.maximum(rt, rh)[on])
    ):
        raise _fail("cch_arc_of", "each search arc (but a self-loop) lies on the CCH arc between its ends' ranks")


def check_landmarks(arrays: Mapping[str, np.ndarray], n: int) -> None:
    """Landmark tables: one row per search node, one column per landmark node, landmarks in range."""
    nodes = _ids(arrays, "lm_nodes", max(n, 1), "search node")
    for name in ("lm_from", "lm_to"):
        if arrays[name].shape != (n, nodes.shape[0]):
            raise _fail(name, f"a complete [{n}, {nodes.shape[0]}] table (search nodes x landmarks)")


def check_graph(arrays: Mapping[str, np.ndarray], structure: bool = True) -> None:
    """Every stage the arrays hold; `FormatError` naming the first array and rule that fails. `structure` False: not
    the customizable hierarchy's structure, which no metric changes (a reload of the served build)."""
    check_core(arrays)
    check_time_profiles(arrays, int(arrays["arc_head"].shape[0]))
    n = int(arrays["node_lon"].shape[0])
    search_prefix = ""
    if EB_PREFIX + "first_out" in arrays:
        check_search_graph(arrays)
        n = int(arrays[EB_PREFIX + "node_arc"].shape[0])
        search_prefix = EB_PREFIX
    if "cch_first" in arrays and structure:
        check_cch(arrays, search_prefix, n)
    prefixes = sorted({name[: name.index("_") + 1] for name in arrays if name.startswith("chx")})
    for prefix in ([CH_PREFIX] if "ch_rank" in arrays else []) + prefixes:
        check_ch(arrays, prefix, n)
    if "lm_nodes" in arrays:
        check_landmarks(arrays, n)

"""Street names as guidance compares them: OSRM's name records and its `requiresNameAnnounced` rule.

A road's name record is the tuple (name, destinations, pronunciation, ref, exits), interned to a small integer id
(0 = the empty record), so "the same name" is an integer comparison as in OSRM. Whether a change from one record to
another must be announced follows OSRM's rule: refs contained in one another, names that start with one another
or differ only by a suffix from the profile's list ("North", "E", ...), a pronunciation or exit number change.
"""

from __future__ import annotations

from dataclasses import dataclass

# car.lua's `suffix_list`; OSRM lower-cases them. Other profiles have none.
CAR_SUFFIXES = frozenset(
    s.lower() for s in ("N", "NE", "E", "SE", "S", "SW", "W", "NW", "North", "South", "West", "East", "Nor", "Sou",
                        "We", "Ea")
)  # fmt: skip


@dataclass(frozen=True)
class NameRecord:
    """The strings of one name record (OSRM's string view id)."""

    name: str = ""
    destinations: str = ""
    pronunciation: str = ""
    ref: str = ""
    exits: str = ""


def _lcs(lhs: bytes, rhs: bytes) -> bytes:
    """Longest common substring (OSRM's dynamic program, on bytes)."""
    if not lhs or not rhs:
        return b""
    prev = [0] * len(rhs)
    best = best_pos = 0
    for i in range(len(lhs)):
        cur = [0] * len(rhs)
        li = lhs[i]
        for j in range(len(rhs)):
            if li == rhs[j]:
                cur[j] = 1 if j == 0 else prev[j - 1] + 1
                if cur[j] > best:
                    best = cur[j]
                    best_pos = i + 1
        prev = cur
    return lhs[best_pos - best : best_pos]


def _trim(view: bytes) -> bytes:
    low = bytes(c + 32 if 65 <= c <= 90 else c for c in view)
    return low.strip(b" ")


def _decompose(lhs: bytes, rhs: bytes) -> tuple[bytes, bytes, bytes, bytes]:
    lcs = _lcs(lhs, rhs)
    if not lcs:
        return _trim(lhs), _trim(rhs), b"", b""
    lp, rp = lhs.find(lcs), rhs.find(lcs)
    return (
        _trim(lhs[:lp]),
        _trim(lhs[lp + len(lcs) :]),
        _trim(rhs[:rp]),
        _trim(rhs[rp + len(lcs) :]),
    )


def requires_announcement(a: NameRecord, b: NameRecord, suffixes: frozenset[str] = frozenset()) -> bool:
    """OSRM's `requiresNameAnnounced(from, to)`: whether moving from record a to record b is a name change."""
    fn, fr, tn, tr = a.name.encode(), a.ref.encode(), b.name.encode(), b.ref.encode()
    if (not fn and not fr) and not (not tn and not tr):
        return True
    names_empty = not fn and not tn
    name_contained = fn.startswith(tn) or tn.startswith(fn)
    sfx = {s.encode() for s in suffixes}

    def check(x: bytes) -> bool:
        return not x or x in sfx

    p1, s1, p2, s2 = _decompose(fn, tn)
    is_suffix_change = check(p1) and check(s1) and check(p2) and check(s2)
    names_equal = fn == tn or name_contained or is_suffix_change
    name_removed = bool(fn) and not tn
    refs_empty = not fr and not tr
    ref_contained = not fr or not tr or fr.find(tr) >= 0 or tr.find(fr) >= 0
    ref_removed = bool(fr) and not tr
    obvious = (
        (names_empty and refs_empty)
        or (names_equal and ref_contained)
        or (names_equal and refs_empty)
        or (ref_contained and name_removed)
        or (names_equal and ref_removed)
        or is_suffix_change
    )
    needs_announce = (
        (not fn and bool(fr) and bool(tn) and not tr)
        or (bool(fn) and not fr and not tn and bool(tr))
        or (names_empty and not ref_contained)
    )
    pronunciation_changes = a.pronunciation != b.pronunciation
    exits_change = a.exits != b.exits
    looses_exit = names_equal and bool(a.exits) and not b.exits
    return not obvious or needs_announce or pronunciation_changes or (exits_change and not looses_exit)


class NameTable:
    """Interned name records with cached comparisons; record 0 is the empty one."""

    def __init__(self, suffixes: frozenset[str] = frozenset()) -> None:
        self.suffixes = suffixes
        self.records: list[NameRecord] = [NameRecord()]
        self._ids: dict[NameRecord, int] = {NameRecord(): 0}
        self._announce: dict[tuple[int, int], bool] = {}

    def intern(self, rec: NameRecord) -> int:
        """The id of a record (added on first sight)."""
        i = self._ids.get(rec)
        if i is None:
            i = self._ids[rec] = len(self.records)
            self.records.append(rec)
        return i

    def __getitem__(self, i: int) -> NameRecord:
        return self.records[i]

    def name_empty(self, i: int) -> bool:
        """Whether the record's street name is empty (`GetNameForID(id).empty()`)."""
        return not self.records[i].name

    def announce(self, a: int, b: int) -> bool:
        """`requiresNameAnnounced(a, b)` on ids (false when the ids are equal)."""
        if a == b:
            return False
        key = (a, b)
        r = self._announce.get(key)
        if r is None:
            r = self._announce[key] = requires_announcement(self.records[a], self.records[b], self.suffixes)
        return r

    def identical(self, a: int, b: int) -> bool:
        """OSRM's `HaveIdenticalNames`: both non-empty records and no announcement in either direction."""
        return a != 0 and b != 0 and not self.announce(a, b) and not self.announce(b, a)

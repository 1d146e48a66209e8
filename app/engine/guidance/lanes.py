"""Turn lanes: which lanes of the road arriving at an intersection serve each turn (OSRM's turn lane handler).

The `turn:lanes` of the arriving road (left to right, `|` separated, `;` for several arrows) become lane data
`[tag, from, to]` — lane numbers counted from the right, 0 = rightmost — and are matched onto the turns of the
intersection in order ("simple" intersections), after `none` lanes are resolved against the turns they can serve,
or split between this intersection and the next one (lanes marked for turns that only come later, e.g. at a
segregated crossing), or taken from the previous road when the arriving one is a short link. Each matched turn gets
its lane tuple `(lanes in turn, first lane from the right, all lane masks)`: the `intersections[].lanes` with
`valid` flags of OSRM's answer.
"""

from __future__ import annotations

from app.engine.guidance.handlers.turns import TurnAnalysis
from floor.intersections import geo
from floor.intersections.graph import (
    LANE_LEFT,
    LANE_MERGE_TO_LEFT,
    LANE_MERGE_TO_RIGHT,
    LANE_NONE,
    LANE_RIGHT,
    LANE_SHARP_LEFT,
    LANE_SHARP_RIGHT,
    LANE_SLIGHT_LEFT,
    LANE_SLIGHT_RIGHT,
    LANE_STRAIGHT,
    LANE_UTURN,
)
from floor.intersections.intersection import (
    CONTINUE,
    ENTERS,
    FORK,
    FUZZY_ANGLE_DIFFERENCE,
    GROUP_ANGLE,
    LEAVES,
    LEFT,
    MERGE,
    NEW_NAME,
    RIGHT,
    ROUNDABOUT_TYPES,
    SHARP_LEFT,
    SHARP_RIGHT,
    SLIGHT_LEFT,
    SLIGHT_RIGHT,
    SLIPROAD,
    STAY_ON_ROUNDABOUT,
    STRAIGHT,
    STRAIGHT_ANGLE,
    SUPPRESSED,
    UTURN,
    Intersection,
    Road,
    closest_turn,
    has_left,
    has_right,
)

# lane tags by direction modifier (UTURN .. SHARP_LEFT)
TAG_BY_MODIFIER = (LANE_UTURN, LANE_SHARP_RIGHT, LANE_RIGHT, LANE_SLIGHT_RIGHT, LANE_STRAIGHT, LANE_SLIGHT_LEFT,
                   LANE_LEFT, LANE_SHARP_LEFT)  # fmt: skip
_ORDER = (LANE_SHARP_RIGHT, LANE_RIGHT, LANE_SLIGHT_RIGHT, LANE_STRAIGHT, LANE_SLIGHT_LEFT, LANE_LEFT, LANE_SHARP_LEFT,
          LANE_UTURN)  # fmt: skip
_MODIFIER_OF_TAG = {LANE_UTURN: UTURN, LANE_SHARP_RIGHT: SHARP_RIGHT, LANE_RIGHT: RIGHT,
                    LANE_SLIGHT_RIGHT: SLIGHT_RIGHT, LANE_STRAIGHT: STRAIGHT, LANE_SLIGHT_LEFT: SLIGHT_LEFT,
                    LANE_LEFT: LEFT, LANE_SHARP_LEFT: SHARP_LEFT, LANE_MERGE_TO_LEFT: STRAIGHT,
                    LANE_MERGE_TO_RIGHT: STRAIGHT}  # fmt: skip
_IDEAL = (0, 35, 90, 135, 180, 225, 270, 315)

Lane = list  # [tag, from, to]


def _order_index(tag: int) -> int:
    try:
        return _ORDER.index(tag)
    except ValueError:
        return len(_ORDER)


def _less(a: Lane, b: Lane) -> bool:
    """TurnLaneData::operator<."""
    if a[1] != b[1]:
        return a[1] < b[1]
    if a[2] != b[2]:
        return a[2] < b[2]
    if a[0] == b[0]:
        return False
    if a[0] == LANE_UTURN:
        return a[1] == 0
    if b[0] == LANE_UTURN:
        return b[1] != 0
    return _order_index(a[0]) < _order_index(b[0])


def sort_lanes(data: list[Lane]) -> None:
    """Sort lane data with OSRM's (not strict-weak) order, by insertion so it stays deterministic."""
    for i in range(1, len(data)):
        x = data[i]
        j = i - 1
        while j >= 0 and _less(x, data[j]):
            data[j + 1] = data[j]
            j -= 1
        data[j + 1] = x


def lane_data(desc: tuple[int, ...]) -> list[Lane]:
    """laneDataFromDescription: one entry per arrow with the range of lanes it is on ([] when invalid)."""
    if not desc:
        return []
    n = len(desc)
    found: dict[int, list[int]] = {}
    order: list[int] = []
    lane_nr = n - 1
    for full in desc:
        for shift in range(11):
            m = 1 << shift
            if full & m == m:
                if m not in found:
                    found[m] = [lane_nr, lane_nr]
                    order.append(m)
                else:
                    found[m][0] = lane_nr
        lane_nr -= 1
    data = [[m, found[m][0], found[m][1]] for m in order]
    sort_lanes(data)
    for i in range(1, len(data)):
        if i + 1 < len(data) and data[i][0] & LANE_UTURN:
            return []
        if data[i - 1][2] > data[i][1]:
            return []
    return data


def find_tag(tag: int, data: list[Lane]) -> int:
    """Index of the first lane group carrying `tag` (len(data) when none)."""
    for i, d in enumerate(data):
        if tag & d[0]:
            return i
    return len(data)


def has_tag(tag: int, data: list[Lane]) -> bool:
    """Whether some lane group carries `tag`."""
    return find_tag(tag, data) != len(data)


def valid_match(tag: int, road: Road) -> bool:
    """isValidMatch of a lane tag and a turn instruction."""
    kind, mod = road.kind, road.modifier
    if tag == LANE_UTURN:
        return has_left(mod) or mod == UTURN
    if tag in (LANE_SHARP_RIGHT, LANE_RIGHT, LANE_SLIGHT_RIGHT):
        if kind == MERGE:
            return has_left(mod)
        return kind in LEAVES or has_right(mod)
    if tag == LANE_STRAIGHT:
        return (
            mod == STRAIGHT
            or kind in (SUPPRESSED, NEW_NAME, STAY_ON_ROUNDABOUT)
            or kind in ENTERS
            or (kind == FORK and mod in (SLIGHT_LEFT, SLIGHT_RIGHT))
            or (kind == CONTINUE and mod in (SLIGHT_LEFT, SLIGHT_RIGHT))
        )
    if tag in (LANE_SLIGHT_LEFT, LANE_LEFT, LANE_SHARP_LEFT):
        if kind == MERGE:
            return has_right(mod)
        return kind == STAY_ON_ROUNDABOUT or has_left(mod)
    return False


def quality(tag: int, road: Road) -> float:
    """How far a road's angle is from the ideal angle of a lane arrow (smaller is better)."""
    return geo.deviation(_IDEAL[_MODIFIER_OF_TAG.get(tag, UTURN)], road.angle)


def best_match(tag: int, inter: Intersection, start: int = 0) -> int:
    """findBestMatch: valid matches first, then enterable ones, then the angle closest to the tag's ideal."""
    best = start
    for i in range(start + 1, len(inter)):
        a, b = inter[i], inter[best]
        va, vb = valid_match(tag, a), valid_match(tag, b)
        if va != vb:
            if va:
                best = i
            continue
        if a.entry_allowed != b.entry_allowed:
            if a.entry_allowed:
                best = i
            continue
        if quality(tag, a) < quality(tag, b):
            best = i
    return best


def best_match_reverse(neighbor_tag: int, inter: Intersection) -> int:
    """findBestMatchForReverse: the u-turn road a leftmost reverse lane serves."""
    ni = best_match(neighbor_tag, inter)
    if ni + 1 == len(inter):
        return 0
    return best_match(LANE_UTURN, inter, ni)


def can_match_trivially(inter: Intersection, data: list[Lane]) -> bool:
    """canMatchTrivially: every enterable road gets exactly one lane group, in order."""
    ri, lane = 1, 0
    if data and data[0][0] == LANE_UTURN and inter[0].entry_allowed:
        lane = 1
    while ri < len(inter) and lane < len(data):
        if inter[ri].entry_allowed:
            if not valid_match(data[lane][0], inter[ri]):
                return False
            if best_match(data[lane][0], inter) != ri:
                return False
            lane += 1
        ri += 1
    return lane == len(data) or (lane + 1 == len(data) and data[-1][0] == LANE_UTURN)


def _turns(inter: Intersection) -> int:
    return sum(1 for r in inter if r.entry_allowed)


class LaneHandler:
    """OSRM's TurnLaneHandler over the turn analysis."""

    def __init__(self, ta: TurnAnalysis) -> None:
        self.ta = ta
        self.gg = ta.gg
        self.ex = ta.ex

    def extract(self, via: int) -> tuple[tuple[int, ...] | None, list[Lane]]:
        """The lane description of the road arrived by and its lane groups (OSRM's LaneDataVector)."""
        desc = self.gg.data(via).lanes
        return desc, ([] if desc is None else lane_data(desc))

    def assign(self, via: int, inter: Intersection) -> Intersection:
        """assignTurnLanes: lane tuples onto the roads of an already classified intersection."""
        if len(inter) == 1:
            return inter
        res = self._scenario(via, inter)
        if res is None:
            return inter
        scenario, desc, data, prev_inter = res
        if scenario in ("simple", "partition_local", "simple_previous", "partition_previous"):
            data = self._none_at_simple_turn(data, inter)
            return self._simple_match(inter, data, desc)
        if scenario == "sliproad":
            return self._sliproad_turn(inter, desc, data, prev_inter, via)
        return inter

    def _scenario(self, via: int, inter: Intersection) -> tuple | None:
        gg = self.gg
        vd = gg.data(via)
        if vd.roundabout:
            return None
        if any(r.kind in ROUNDABOUT_TYPES for r in inter):
            return None
        desc, data = self.extract(via)
        if (
            len(inter) == 2
            and desc is not None
            and desc == gg.data(inter[1].eid).lanes
            and geo.deviation(inter[1].angle, STRAIGHT_ANGLE) < FUZZY_ANGLE_DIFFERENCE
        ):
            return None
        if desc is not None and not data:
            return None  # INVALID
        if desc is not None and len(data) == 1 and data[0][0] == LANE_NONE:
            return None
        prev = self.previous_intersection(via, inter)
        prev_via, prev_inter, prev_desc, prev_data = -1, [], None, []
        if prev is not None:
            prev_node, prev_via, pview = prev
            prev_desc, prev_data = self.extract(prev_via)
            prev_inter = self.ta.assign(prev_via, pview)
            for ri, road in enumerate(prev_inter):
                if road.kind == SLIPROAD:
                    if via == road.eid:
                        return "sliproad", desc, data, prev_inter
                    if ri + 1 == len(prev_inter):
                        closest = prev_inter[ri - 1]
                    elif ri == 1:
                        closest = prev_inter[ri + 1]
                    elif geo.deviation(road.angle, prev_inter[ri - 1].angle) < geo.deviation(
                        road.angle, prev_inter[ri + 1].angle
                    ):
                        closest = prev_inter[ri - 1]
                    else:
                        closest = prev_inter[ri + 1]
                    if via == closest.eid:
                        return "sliproad", desc, data, prev_inter
        possible = _turns(inter)
        if has_tag(LANE_MERGE_TO_LEFT | LANE_MERGE_TO_RIGHT, data):
            return None
        if (
            inter[0].entry_allowed
            and not has_tag(LANE_NONE | LANE_LEFT | LANE_SHARP_LEFT | LANE_UTURN, data)
            and len(data) + 1 == possible
        ):
            return None
        missing_u = (
            bool(data)
            and can_match_trivially(inter, data)
            and len(data) != (1 if (not has_tag(LANE_UTURN, data) and inter[0].entry_allowed) else 0) + possible
            and inter[0].entry_allowed
        )
        if data and can_match_trivially(inter, data) and missing_u and not has_tag(LANE_NONE, data):
            data.append([LANE_UTURN, data[-1][2], data[-1][2]])
        if self._simple(data, inter):
            return "simple", desc, data, prev_inter
        if data:
            if len(data) >= possible:
                data = self._partition(gg.target(via), data, inter)[0]
                if len(data) == possible and self._simple(data, inter):
                    return "partition_local", desc, data, prev_inter
            return None
        if desc is not None:
            return None
        if prev_via < 0 or not prev_data:
            return None
        if has_tag(LANE_MERGE_TO_LEFT | LANE_MERGE_TO_RIGHT, prev_data):
            return None
        if self._simple(prev_data, inter) and len(prev_inter) == 2:
            return "simple_previous", prev_desc, prev_data, prev_inter
        if len(prev_data) >= _turns(prev_inter) and len(prev_inter) != 2:
            pd = self._partition(gg.target(prev_via), prev_data, prev_inter)[1]
            sort_lanes(pd)
            if len(pd) == possible and self._simple(pd, inter):
                return "partition_previous", prev_desc, pd, prev_inter
        return None

    def _simple(self, data: list[Lane], inter: Intersection) -> bool:
        """isSimpleIntersection."""
        if not data:
            return False
        if len(inter) == 2:
            merges = sum(1 for d in data if d[0] & (LANE_MERGE_TO_LEFT | LANE_MERGE_TO_RIGHT))
            return merges + 1 >= len(data)
        num = _turns(inter)
        if num < len(data) and not inter[0].entry_allowed and data[-1][0] == LANE_UTURN:
            num += 1
        if num + 2 <= len(data):
            return False
        if num + 1 == len(data) and data[0][0] != LANE_NONE and data[-1][0] != LANE_NONE:
            return False
        if num > len(data) and not any(d[0] == LANE_NONE for d in data):
            return False
        if (
            num > len(data)
            and inter[0].entry_allowed
            and not (has_tag(LANE_UTURN, data) or (data[-1][0] != LANE_LEFT and data[-1][0] != LANE_SHARP_LEFT))
        ):
            return False
        all_simple = True
        has_none = False
        matched: set[int] = set()
        for i, d in enumerate(data):
            if d[0] == LANE_NONE:
                has_none = True
                continue
            if d[0] != LANE_UTURN or len(data) == 1:
                bm = best_match(d[0], inter)
            elif i + 1 == len(data):
                bm = best_match_reverse(data[i - 1][0], inter)
            elif i == 0:
                bm = best_match_reverse(data[i + 1][0], inter)
            else:
                bm = 0
            all_simple &= bm not in matched
            matched.add(bm)
            road = inter[bm]
            all_simple &= road.entry_allowed or (
                (bm == 0 or bm + 1 == len(inter)) and not self.gg.data(road.eid).reversed
            )
            all_simple &= valid_match(d[0], road)
        return all_simple and (len(matched) == len(data) or (len(matched) + 1 == len(data) and has_none))

    def _partition(self, at: int, data: list[Lane], inter: Intersection) -> tuple[list[Lane], list[Lane]]:
        """partitionLaneData: the lanes for turns here and for turns at the next intersection."""
        data = [list(d) for d in data]
        si = closest_turn(inter, STRAIGHT_ANGLE)
        if si is None or not inter[si].entry_allowed:
            return data, []
        straight_eid = inter[si].eid
        nxt = self.ta.assign(straight_eid, self.ex.connected_roads(straight_eid, False))
        first_m = [False] * len(data)
        second_m = [False] * len(data)
        straight_tag = len(data)
        for lane, d in enumerate(data):
            if d[0] & (LANE_NONE | LANE_UTURN):
                continue
            bm = best_match(d[0], inter)
            if inter[bm].entry_allowed and valid_match(d[0], inter[bm]):
                first_m[lane] = True
                if bm == si:
                    straight_tag = lane
            bn = best_match(d[0], nxt)
            if nxt[bn].entry_allowed and valid_match(d[0], nxt[bn]):
                if not first_m[lane] or d[0] == LANE_STRAIGHT or quality(d[0], inter[bm]) > quality(d[0], nxt[bn]):
                    if d[0] != LANE_STRAIGHT:
                        first_m[lane] = False
                    second_m[lane] = True
            if not (first_m[lane] or second_m[lane]):
                return data, []
        none_i = find_tag(LANE_NONE, data)
        if straight_tag == len(data) and none_i != len(data):
            straight_tag = none_i
        if none_i != len(data):
            if sum(first_m) <= _turns(inter):
                first_m[none_i] = True
            if sum(second_m) <= _turns(nxt):
                second_m[none_i] = True

        def augment(entry: Lane) -> None:
            for lane in range(len(data)):
                if second_m[lane]:
                    entry[1] = min(data[lane][1], entry[1])
                    entry[2] = max(data[lane][2], entry[2])

        first: list[Lane] = []
        second: list[Lane] = []
        for lane in range(len(data)):
            if second_m[lane]:
                second.append(list(data[lane]))
            if lane == straight_tag:
                augment(data[straight_tag])
            if first_m[lane]:
                first.append(list(data[lane]))
        n_next = _turns(nxt)
        if straight_tag == len(data) and n_next > 0 and sum(second_m) == n_next:
            entry = [LANE_STRAIGHT, 255, 0]
            augment(entry)
            first.append(entry)
            sort_lanes(first)
        return first, second

    def _simple_match(self, inter: Intersection, data: list[Lane], desc: tuple[int, ...] | None) -> Intersection:
        """simpleMatchTuplesToTurns + triviallyMatchLanesToTurns."""
        if not data or desc is None or not can_match_trivially(inter, data):
            return inter
        ri, lane = 1, 0

        def match(road: Road, d: Lane) -> None:
            road.lanes = (d[2] - d[1] + 1, d[1], desc)

        if data[0][0] == LANE_UTURN:
            if inter[0].entry_allowed:
                u = 0
                if self.gg.data(inter[0].eid).reversed:
                    if len(inter) <= 1 or not inter[1].entry_allowed or inter[1].modifier != SHARP_RIGHT:
                        return inter
                    u = 1
                    ri = 2
                inter[u].kind, inter[u].modifier = CONTINUE, UTURN
                match(inter[u], data[-1])
                lane = 1
            else:
                return inter
        while ri < len(inter) and lane < len(data):
            if inter[ri].entry_allowed:
                match(inter[ri], data[lane])
                lane += 1
            ri += 1
        if lane + 1 == len(data) and data[-1][0] == LANE_UTURN:
            u = 0
            if self.gg.data(inter[0].eid).reversed:
                if not inter[-1].entry_allowed or inter[-1].modifier != SHARP_LEFT:
                    return inter
                u = len(inter) - 1
            inter[u].kind, inter[u].modifier = CONTINUE, UTURN
            match(inter[u], data[-1])
        return inter

    def _sliproad_turn(self, inter: Intersection, desc: tuple[int, ...] | None, data: list[Lane],
                       prev_inter: Intersection, via: int) -> Intersection:  # fmt: skip
        si = next(i for i, r in enumerate(prev_inter) if r.kind == SLIPROAD)
        slip = prev_inter[si]
        if si + 1 == len(prev_inter):
            main = prev_inter[si - 1]
        elif si == 1:
            main = prev_inter[si + 1]
        elif geo.deviation(slip.angle, prev_inter[si - 1].angle) < geo.deviation(slip.angle, prev_inter[si + 1].angle):
            main = prev_inter[si - 1]
        else:
            main = prev_inter[si + 1]
        md, sd = self.gg.data(main.eid).lanes, self.gg.data(slip.eid).lanes
        if md is None or sd is None:
            return inter
        data = [list(d) for d in data]
        if main.angle > slip.angle:
            combined = tuple(md) + tuple(sd)
            if md == desc:
                for d in data:
                    d[1] += len(sd)
                    d[2] += len(sd)
        else:
            combined = tuple(sd) + tuple(md)
            if sd == desc:
                for d in data:
                    d[1] += len(md)
                    d[2] += len(md)
        return self._simple_match(inter, data, combined)

    def previous_intersection(self, via: int, inter: Intersection) -> tuple[int, int, Intersection] | None:
        """findPreviousIntersection: (node, edge, view) of the intersection before a short `via` edge."""
        gg, ex = self.gg, self.ex
        if geo.length(gg.geometry(via)) > 30:
            return None
        node_v = gg.half_source(via)
        u_turn = inter[0].eid
        if gg.target(u_turn) != node_v:
            return None
        rev_v = ex.connected_roads(u_turn, True)
        si = closest_turn(rev_v, STRAIGHT_ANGLE)
        if si is None or geo.deviation(rev_v[si].angle, STRAIGHT_ANGLE) > GROUP_ANGLE:
            return None
        node_u = gg.target(rev_v[si].eid)
        rev_u = ex.connected_roads(rev_v[si].eid, True)
        result_via = rev_u[0].eid
        if gg.target(result_via) != node_v:
            return None
        if gg.data(result_via).reversed:
            return None
        view = ex.connected_roads(result_via, False)
        if not any(r.eid == via for r in view):
            return None
        return node_u, result_via, view

    def _none_at_simple_turn(self, data: list[Lane], inter: Intersection) -> list[Lane]:
        """handleNoneValueAtSimpleTurn."""
        if not inter or not data or not has_tag(LANE_NONE, data):
            return data
        data = [list(d) for d in data]
        conn = _turns(inter) - (1 if (inter[0].entry_allowed and data[-1][0] != LANE_UTURN) else 0)
        ni = find_tag(LANE_NONE, data)
        if conn > len(data):
            data = self._augment_multiple(ni, conn, data, inter)
        elif conn < len(data):
            if conn + 1 == len(data):
                data = self._merge_none(ni, data)
            else:
                return data
        else:
            data = self._renaming(ni, data, inter)
        sort_lanes(data)
        return data

    @staticmethod
    def _merge_none(ni: int, data: list[Lane]) -> list[Lane]:
        if ni == 0 or ni + 1 == len(data):
            if ni == 0:
                data[1][1] = data[0][1]
            else:
                data[ni - 1][2] = data[ni][2]
            del data[ni]
        elif data[ni][2] - data[ni][1] <= 1:
            data[ni - 1][2] = data[ni][1]
            data[ni + 1][1] = data[ni][2]
            del data[ni]
        return data

    @staticmethod
    def _renaming(ni: int, data: list[Lane], inter: Intersection) -> list[Lane]:
        hr = ht = hl = False
        for r in inter:
            if not r.entry_allowed:
                continue
            hr |= r.modifier in (RIGHT, SLIGHT_RIGHT, SHARP_RIGHT)
            ht |= r.modifier == STRAIGHT
            hl |= r.modifier in (LEFT, SLIGHT_LEFT, SHARP_LEFT)
        if ni == 0:
            if hr and (len(data) == 1 or data[ni + 1][0] not in (LANE_SHARP_RIGHT, LANE_RIGHT)):
                data[ni][0] = LANE_RIGHT
                if len(data) > 1 and data[ni + 1][0] == LANE_STRAIGHT:
                    data[ni + 1][1] = data[ni][1]
                    data[ni][2] = data[ni][1]
            elif ht and (len(data) == 1 or data[ni + 1][0] != LANE_STRAIGHT):
                data[ni][0] = LANE_STRAIGHT
        elif ni + 1 == len(data):
            if hl and data[ni - 1][0] not in (LANE_SHARP_LEFT, LANE_LEFT):
                data[ni][0] = LANE_LEFT
                if data[ni - 1][0] == LANE_STRAIGHT:
                    data[ni - 1][2] = data[ni][2]
                    data[ni][1] = data[ni][2]
            elif ht and data[ni - 1][0] != LANE_STRAIGHT:
                data[ni][0] = LANE_STRAIGHT
        elif data[ni + 1][0] in (LANE_LEFT, LANE_SLIGHT_LEFT, LANE_SHARP_LEFT) and data[ni - 1][0] in (
            LANE_RIGHT,
            LANE_SLIGHT_RIGHT,
            LANE_SHARP_RIGHT,
        ):
            data[ni][0] = LANE_STRAIGHT
        return data

    @staticmethod
    def _augment_multiple(ni: int, conn: int, data: list[Lane], inter: Intersection) -> list[Lane]:
        def rng() -> tuple[int, int]:
            if ni == 0:
                count = 0
                for i in range(1, len(inter)):
                    count += int(inter[i].entry_allowed)
                    if count > conn - len(data):
                        return 1, i + 1
            elif ni + 1 == len(data):
                count = 0
                for i in range(len(inter) - 1, 0, -1):
                    count += int(inter[i].entry_allowed)
                    if count > conn - len(data):
                        return i, len(inter)
            else:
                begin, count = 1, 0
                for i in range(1, len(inter)):
                    count += int(inter[i].entry_allowed)
                    if count >= ni:
                        begin = i + 1
                        break
                count = 0
                for i in range(begin, len(inter)):
                    count += int(inter[i].entry_allowed)
                    if count > conn - len(data):
                        return begin, i + 1
            return 0, 0

        first, end = rng()
        allowed = sum(1 for r in inter[first:end] if r.entry_allowed)
        none = data[ni]
        if allowed > 1 and none[2] - none[1] >= 1:
            straight = next((i for i in range(first, end) if inter[i].modifier == STRAIGHT), None)
            if straight is not None:
                for i in range(first, straight):
                    data.append([TAG_BY_MODIFIER[inter[i].modifier], none[1], none[1]])
                data.append([TAG_BY_MODIFIER[inter[straight].modifier], none[1], none[2]])
                for i in range(straight + 1, end):
                    data.append([TAG_BY_MODIFIER[inter[i].modifier], none[2], none[2]])
                del data[ni]
            return data
        for i in range(first, end):
            if inter[i].entry_allowed:
                data.append([TAG_BY_MODIFIER[inter[i].modifier], none[1], none[2]])
        del data[ni]
        return data

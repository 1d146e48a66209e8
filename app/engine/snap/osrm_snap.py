"""OSRM's arithmetic of a point on a segment, for snapping as osrm-routed snaps: Web Mercator at 1e-6 degrees.

OSRM projects a query point onto a segment in Web Mercator with both rounded to its 1e-6 degree fixed point
(`osrm_ratio`), places the phantom there (`_osrm_point`), and orders candidate segments in its R-tree by the squared
distance between the point and that projection in the same units (`osrm_rank`); `_osrm_pick` chooses among a point's
nearest segments as that order does. `app.engine.snap.snapper` measures nearness in its own local frame and defers to
these
where OSRM's rounding decides.
"""

from __future__ import annotations

import math

import numpy as np

from floor.format.units import COORD_SCALE, OSRM_COORD_SCALE
from floor.kernels.geometry import osrm_distance_m, osrm_fixed
from floor.kernels.jit import BOOL, F64, kernel, tup

# OSRM's `latToYapprox`: the inverse Gudermannian as a Padé approximant [11/11] within 70 degrees (coefficients from
# its web_mercator.hpp, lowest power first)
_MERC_NUM = (
    0.0, 1.00000000000089108431373566e00, 2.34439410386997223035693483e-06, -3.21291701673364717170998957e-04,
    -6.62778508496089940141103135e-10, 3.68188055470304769936079078e-08, 6.31192702320492485752941578e-14,
    -1.77274453235716299127325443e-12, -2.24563810831776747318521450e-18, 3.13524754818073129982475171e-17,
    2.09014225025314211415458228e-23, -9.82938075991732185095509716e-23,
)  # fmt: skip
_MERC_DEN = (
    1.0, 2.34439410398970701719081061e-06, -3.72061271627251952928813333e-04, -7.81802389685429267252612620e-10,
    5.18418724186576447072888605e-08, 9.37468561198098681003717477e-14, -3.30833288607921773936702558e-12,
    -4.78446279888774903983338274e-18, 9.32999229169156878168234191e-17, 9.17695141954265959600965170e-23,
    -8.72130728982012387640166055e-22, -3.23083224835967391884404730e-28,
)  # fmt: skip


@kernel(F64(F64), nrt=False, forceinline=True)
def _mercator_y(lat):  # pragma: no cover - numba
    """OSRM's `web_mercator::latToYapprox` (degrees -> projected degrees)."""
    if lat < -70.0 or lat > 70.0:
        f = math.sin(lat * math.pi / 180.0)
        return 180.0 / math.pi * 0.5 * math.log((1.0 + f) / (1.0 - f))
    num = 0.0
    den = 0.0
    for k in range(11, -1, -1):
        num = num * lat + _MERC_NUM[k]
        den = den * lat + _MERC_DEN[k]
    return num / den


@kernel(tup(F64, F64)(F64, F64, F64, F64, F64), nrt=False, forceinline=True)
def _osrm_point(x1, y1, x2, y2, t):  # pragma: no cover - numba
    """The point at ratio t of a segment (ends in 1e-7 degree ints) as OSRM places a phantom (`perpendicularDistance`):
    between the ends at 1e-6 degrees in Web Mercator, back to degrees (`yToLat`), rounded to 1e-6."""
    a = osrm_fixed(x1 / COORD_SCALE) / OSRM_COORD_SCALE
    b = osrm_fixed(x2 / COORD_SCALE) / OSRM_COORD_SCALE
    ya = _mercator_y(osrm_fixed(y1 / COORD_SCALE) / OSRM_COORD_SCALE)
    yb = _mercator_y(osrm_fixed(y2 / COORD_SCALE) / OSRM_COORD_SCALE)
    y = min(max((1.0 - t) * ya + yb * t, -180.0), 180.0)
    lat = 180.0 / math.pi * 2.0 * math.atan(math.exp(y * math.pi / 180.0)) - 90.0
    return osrm_fixed((1.0 - t) * a + b * t) / OSRM_COORD_SCALE, osrm_fixed(lat) / OSRM_COORD_SCALE


@kernel(nrt=False)
def osrm_ratio(lon1, lat1, lon2, lat2, qlon, qlat):  # pragma: no cover - numba
    """Where OSRM puts a query point along segment (1, 2), 0..1: its projection in Web Mercator with every
    coordinate at OSRM's 1e-6 degrees (`coordinate_calculation::perpendicularDistance`), the ratio a phantom
    splits the segment's weight and duration by (`GeospatialQuery::MakePhantomNode`)."""
    x1 = osrm_fixed(lon1) / OSRM_COORD_SCALE
    y1 = _mercator_y(osrm_fixed(lat1) / OSRM_COORD_SCALE)
    x2 = osrm_fixed(lon2) / OSRM_COORD_SCALE
    y2 = _mercator_y(osrm_fixed(lat2) / OSRM_COORD_SCALE)
    xq = osrm_fixed(qlon) / OSRM_COORD_SCALE
    yq = _mercator_y(osrm_fixed(qlat) / OSRM_COORD_SCALE)
    sx, sy = x2 - x1, y2 - y1
    sq = sx * sx + sy * sy
    if sq < 2.220446049250313e-16:
        return 0.0
    return min(max((sx * (xq - x1) + sy * (yq - y1)) / sq, 0.0), 1.0)


@kernel
def osrm_rank(glon, glat, segs, qlon, qlat):  # pragma: no cover - numba
    """(key int64 [k], ratio [k], projection int64 [k, 2]) of segments (points s, s+1 of the 1e-7 degree arrays) as
    OSRM's R-tree orders them (`StaticRTree::ExploreLeafNode`): the squared distance, in 1e-6 units of Web Mercator,
    between the query point and its projection onto the segment, both rounded to 1e-6 first; the projection's ratio
    (0 or 1 where the rounded projection is the segment's end); the rounded projection (x, Mercator y)."""
    keys = np.empty(segs.shape[0], dtype=np.int64)
    ratios = np.empty(segs.shape[0], dtype=np.float64)
    at = np.empty((segs.shape[0], 2), dtype=np.int64)
    xq = osrm_fixed(qlon) / OSRM_COORD_SCALE
    yq = _mercator_y(osrm_fixed(qlat) / OSRM_COORD_SCALE)
    for j in range(segs.shape[0]):
        s = segs[j]
        x1 = osrm_fixed(glon[s] / COORD_SCALE) / OSRM_COORD_SCALE
        y1 = _mercator_y(osrm_fixed(glat[s] / COORD_SCALE) / OSRM_COORD_SCALE)
        x2 = osrm_fixed(glon[s + 1] / COORD_SCALE) / OSRM_COORD_SCALE
        y2 = _mercator_y(osrm_fixed(glat[s + 1] / COORD_SCALE) / OSRM_COORD_SCALE)
        sx, sy = x2 - x1, y2 - y1
        sq = sx * sx + sy * sy
        r = 0.0
        if sq >= 2.220446049250313e-16:
            r = min(max((sx * (xq - x1) + sy * (yq - y1)) / sq, 0.0), 1.0)
        px = osrm_fixed((1.0 - r) * x1 + x2 * r)
        py = osrm_fixed((1.0 - r) * y1 + y2 * r)
        if px == osrm_fixed(x1) and py == osrm_fixed(y1):
            r = 0.0  # OSRM's point is the segment's end: the phantom sits on that node
        elif px == osrm_fixed(x2) and py == osrm_fixed(y2):
            r = 1.0
        keys[j] = (osrm_fixed(xq) - px) ** 2 + (osrm_fixed(yq) - py) ** 2
        ratios[j] = r
        at[j, 0], at[j, 1] = px, py
    return keys, ratios, at


@kernel
def _osrm_pick(s, c, d, gf, glon, glat, qlon, qlat, slack):  # pragma: no cover - numba
    """`snap._nearest_osrm`'s choice among the nearest segments `s` on chains `c` at local distances `d` (nearest
    first): of the chains within `slack` metres of the nearest, each one's segment and those either side of it, the
    first in OSRM's order (`osrm_rank`; the nearest on equal keys). Returns (row of its chain in s, its segment, its
    ratio, and the segments, chains and ratios of the other chains whose projection rounds onto the same point, each
    chain once, in rank-array order)."""
    n = s.shape[0]
    near = np.empty(n, dtype=np.int64)
    m = 0
    for k in range(n):
        if d[k] <= d[0] + slack:
            near[m] = k
            m += 1
    segs = np.empty(3 * m, dtype=np.int64)
    rows = np.empty(3 * m, dtype=np.int64)
    cnt = 0
    for step in (0, -1, 1):  # each near chain's nearest segment first, then the ones before and after it
        for q in range(m):
            i = near[q]
            sg = s[i] + step
            if gf[c[i]] <= sg <= gf[c[i] + 1] - 2:
                segs[cnt] = sg
                rows[cnt] = i
                cnt += 1
    keys, ratios, at = osrm_rank(glon, glat, segs[:cnt], qlon, qlat)
    j = 0
    for k in range(1, cnt):
        if keys[k] < keys[j]:
            j = k
    i = rows[j]
    o_seg = np.empty(cnt, dtype=np.int64)
    o_chain = np.empty(cnt, dtype=np.int64)
    o_ratio = np.empty(cnt, dtype=np.float64)
    no = 0
    for k in range(cnt):
        chain = c[rows[k]]
        if at[k, 0] != at[j, 0] or at[k, 1] != at[j, 1] or chain == c[i]:
            continue
        dup = False
        for x in range(no):
            if o_chain[x] == chain:
                dup = True
                break
        if not dup:
            o_seg[no] = segs[k]
            o_chain[no] = chain
            o_ratio[no] = ratios[k]
            no += 1
    return i, segs[j], ratios[j], o_seg[:no], o_chain[:no], o_ratio[:no]


@kernel(nrt=False)
def chain_end_kind(glon, glat, gf, chain, lon, lat):  # pragma: no cover - numba
    """1 when the point (degrees) is the chain's first point at OSRM's 1e-6 degrees, 2 when it is its last (the
    first wins), 0 otherwise."""
    x, y = osrm_fixed(lon), osrm_fixed(lat)
    p0, p1 = gf[chain], gf[chain + 1] - 1
    if x == osrm_fixed(glon[p0] / COORD_SCALE) and y == osrm_fixed(glat[p0] / COORD_SCALE):
        return 1
    if x == osrm_fixed(glon[p1] / COORD_SCALE) and y == osrm_fixed(glat[p1] / COORD_SCALE):
        return 2
    return 0


@kernel(nrt=False)
def _osrm_before(gs, p0, p1, seg, ratio, against, flip):  # pragma: no cover - numba
    """(deciseconds from the arc's start to the point, the arc's total) from per-point values `gs` (the columns of
    `geom_seg_weight`, docs/DESIGN.md) of the chain at points p0..p1-1, the point at `ratio` of local segment
    `seg` along OSRM's edge: the whole segments and the obstacles before it, plus OSRM's truncated share of its own
    segment (`forward_weight = weight * ratio` along OSRM's edge, `reverse_weight -= weight * ratio` against it;
    `flip`: OSRM's edge runs against the chain, `ratio` measured from the segment's far end)."""
    s = p0 + seg + 1  # the row of the point's segment
    total = 0
    before = 0
    if not against:
        for i in range(p0, p1):
            v = gs[i, 0] + gs[i, 2]
            total += v
            if i < s:
                before += v
        part = int(math.floor(gs[s, 0] * ratio))
        before += gs[s, 0] - part if flip else part
    else:
        for i in range(p0, p1):
            v = gs[i, 1] + gs[i, 3]
            total += v
            if i > s:
                before += v
        part = int(math.floor(gs[s, 1] * ratio))
        before += gs[s, 3] + (part if flip else gs[s, 1] - part)
    return before, total


@kernel(BOOL(F64, F64, F64, F64), nrt=False, forceinline=True)
def _same_fixed(lon, lat, x, y):  # pragma: no cover - numba
    """Whether the point (degrees) and the vertex (1e-7 degree ints) are one point at OSRM's 1e-6 degrees."""
    return osrm_fixed(lon) == osrm_fixed(x / COORD_SCALE) and osrm_fixed(lat) == osrm_fixed(y / COORD_SCALE)


@kernel(inline="always")
def _part_before(w, d, tm, f, exact, seg_weight, seg_time, p0, p1, seg, ratio, against, flip):  # noqa: E501 # pragma: no cover - numba
    """(weight, distance, time) of one arc from its start to the point: its share `f` of the arc by distance, the
    weight and time as OSRM's (`_osrm_before`) where the per-segment values sum to the arc's (`exact`)."""
    wb = min(w, int(math.floor(f * w + 0.5)))
    db = min(d, int(math.floor(f * d + 0.5)))
    tb = min(tm, int(math.floor(f * tm + 0.5)))
    if exact:
        ow, total_w = _osrm_before(seg_weight, p0, p1, seg, ratio, against, flip)
        ot, total_t = _osrm_before(seg_time, p0, p1, seg, ratio, against, flip)
        if total_w == w:
            wb = ow
        if total_t == tm:
            tb = ot
    return wb, db, tb


@kernel(nrt=False)
def _phantom_figures(ix, mt, chain, seg, t, qlon, qlat, osrm_point):  # pragma: no cover - numba
    """Everything numeric a Phantom holds, in one call (`ix` a `SnapIndex`, `mt` a `SnapMetric`).

    The snapped point sits at parameter t of local segment `seg`, exactly on a vertex at t = 0 or 1, else at t
    between the segment's ends in degrees, rounded to 1e-6; with `osrm_point` (t is then OSRM's ratio) it is OSRM's
    point (`_osrm_point`) where that is one 1e-6 step from it at most (OSRM's line in Web Mercator bows away from a
    segment kilometres long). Weights and
    durations split as OSRM's phantoms do (`_osrm_before` over `seg_weight` / `seg_time`, the graph's
    `geom_seg_weight` / `geom_seg_duration`) where those describe the arc (they sum to its value: not so on graphs
    built before them, with 0 rows, or under a custom model's weights); otherwise, and for distances, both arcs
    split by distance along the chain. "after" = total - "before", so they add up exactly.
    Returns (lon, lat, distance_m, fwd, bwd, fwd w before/after, d before/after, bwd likewise, component, name id,
    osm id of the first and last node, fwd time before/after, bwd time before/after).
    """
    glon, glat, gf, fwd_arc, bwd_arc, first_node, last_node, component, osrm_flip = ix[2:]
    arc_weight, arc_dist, arc_name, node_osm_id, arc_time, seg_weight, seg_time = mt
    s = gf[chain] + seg
    if t <= 0.0:
        lon, lat = glon[s] / COORD_SCALE, glat[s] / COORD_SCALE
    elif t >= 1.0:
        lon, lat = glon[s + 1] / COORD_SCALE, glat[s + 1] / COORD_SCALE
    else:
        lon = glon[s] / COORD_SCALE + t * (glon[s + 1] / COORD_SCALE - glon[s] / COORD_SCALE)
        lat = glat[s] / COORD_SCALE + t * (glat[s + 1] / COORD_SCALE - glat[s] / COORD_SCALE)
        lon = osrm_fixed(lon) / OSRM_COORD_SCALE  # OSRM's snapped point is a 1e-6 fixed-point coordinate
        lat = osrm_fixed(lat) / OSRM_COORD_SCALE
        if osrm_point:  # OSRM's own rounding, where its point lies on the road as drawn (not on a long segment's bow)
            o_lon, o_lat = _osrm_point(glon[s], glat[s], glon[s + 1], glat[s + 1], t)
            if abs(o_lon - lon) <= 1.5 / OSRM_COORD_SCALE and abs(o_lat - lat) <= 1.5 / OSRM_COORD_SCALE:
                lon, lat = o_lon, o_lat
    before, total = _chain_offset(glon, glat, gf[chain], gf[chain + 1], seg, lon, lat)
    f = before / total if total > 0.0 else 0.0
    f = min(max(f, 0.0), 1.0)
    fwd = fwd_arc[chain]
    bwd = bwd_arc[chain]
    fw = fwb = fd = fdb = bw = bwb = bd = bdb = ft = ftb = bt = btb = 0
    name = 0
    p0, p1 = gf[chain], gf[chain + 1]
    exact = seg_weight.shape[0] == glon.shape[0] and seg_time.shape[0] == glon.shape[0]
    ratio = 0.0
    flip = osrm_flip[chain]
    if exact:
        s = p0 + seg
        u, v = (s + 1, s) if flip else (s, s + 1)  # the segment along OSRM's edge
        ratio = osrm_ratio(
            glon[u] / COORD_SCALE, glat[u] / COORD_SCALE, glon[v] / COORD_SCALE, glat[v] / COORD_SCALE, qlon, qlat
        )
        # a point OSRM sees on the segment's end node (equal at 1e-6 degrees) is there: the router then also takes
        # the roads leaving or reaching that node (`app.engine.route.space`), and both must price it alike
        if _same_fixed(lon, lat, glon[u], glat[u]):
            ratio = 0.0
        elif _same_fixed(lon, lat, glon[v], glat[v]):
            ratio = 1.0
    if fwd >= 0:
        fw, fd, ft = arc_weight[fwd], arc_dist[fwd], arc_time[fwd]
        fwb, fdb, ftb = _part_before(fw, fd, ft, f, exact, seg_weight, seg_time, p0, p1, seg, ratio, False, flip)
        name = arc_name[fwd]
    if bwd >= 0:
        bw, bd, bt = arc_weight[bwd], arc_dist[bwd], arc_time[bwd]
        bwb, bdb, btb = _part_before(bw, bd, bt, 1.0 - f, exact, seg_weight, seg_time, p0, p1, seg, ratio, True, flip)
        if fwd < 0:
            name = arc_name[bwd]
    dist = osrm_distance_m(qlon, qlat, lon, lat)
    return (
        lon, lat, dist, fwd, bwd, fwb, fw - fwb, fdb, fd - fdb, bwb, bw - bwb, bdb, bd - bdb,
        component[chain], name, node_osm_id[first_node[chain]], node_osm_id[last_node[chain]],
        ftb, ft - ftb, btb, bt - btb,
    )  # fmt: skip


@kernel(nrt=False)
def _chain_offset(glon, glat, p0, p1, seg, lon, lat):  # pragma: no cover - numba
    """(metres along the chain from its first point to (lon, lat) on local segment `seg`, chain length in metres),
    segment by segment in OSRM's distance formula; the point's own segment up to it as OSRM measures it too (from the
    segment's first point, `MakePhantomNode`), so the part before it adds up as the route's coordinates do."""
    total = 0.0
    before = 0.0
    for i in range(p0, p1 - 1):
        lo1 = glon[i] / COORD_SCALE
        la1 = glat[i] / COORD_SCALE
        lo2 = glon[i + 1] / COORD_SCALE
        la2 = glat[i + 1] / COORD_SCALE
        length = osrm_distance_m(lo1, la1, lo2, la2)
        if i - p0 < seg:
            before += length
        elif i - p0 == seg:  # OSRM's `forward_distance`: the segment's first point to the point, measured
            # as OSRM measures the point (rounded to 1e-6) from both ends, halfway between the two: the part before
            # and the part after it then each differ from OSRM's by half their mismatch at most
            to_point = osrm_distance_m(lo1, la1, lon, lat)
            from_point = osrm_distance_m(lon, lat, lo2, la2)
            before += min(max(0.5 * (to_point + length - from_point), 0.0), length)
        total += length
    return before, total


# -- the tree ----------------------------------------------------------------------------------------------------------

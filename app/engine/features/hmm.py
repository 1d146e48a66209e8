"""The hidden Markov model of map matching (Newson and Krumm 2009) in one numba kernel: OSRM's Viterbi loop
(`map_matching.cpp`) with its transition searches, over the flat candidate arrays `app.engine.features.candidates`
builds.

States are the road candidates of each (kept) trace point. Per step from point p to point t:

- **emission**: log N(snap distance; 0, sigma), sigma the point's GPS standard deviation (OSRM's);
- **transition**: log(1/beta) - d_t / beta (beta 10 m, OSRM's) - a time term. d_t = |route length - g|, the route
  the fastest path between the two candidates. g is the great-circle distance between the two *measurements* (OSRM,
  Newson and Krumm) when they lie at least `CANDIDATE_GC_SIGMAS` standard deviations apart; closer, where the noise
  is as large as the movement, it is the distance between the two *candidates* (the measured distance is then mostly
  noise, and a route winding back and forth along one road matches it as well as the straight one). The time term
  (not OSRM's), with timestamps: a route the profile takes more than `TIME_TOLERANCE` longer to drive than the time
  between the points costs one nat per further `TIME_SCALE` of that time (a vehicle seldom beats the profile's
  speeds by much; one slower than them costs nothing). d_t at or above OSRM's largest detour (the step's seconds x
  the profile's map-matching speed, or 2000 m without timestamps) is impossible.
- **searches**: from each state of p still in the running (best first), one bounded one-to-many Dijkstra on the
  routing weight (the search core, `app.engine.search.core.search`, called from this kernel) to the candidates of t that
  it could still improve. A state that can improve none, even at d_t = 0, searches nothing (OSRM skips per pair).
  OSRM bounds every search by the step's largest detour at 4 m/s; here the bound is the detour that could still
  improve a score (plus `TURN_ALLOWANCE_S`: short routes weigh mostly turns), first at most `SOFT_DETOUR_M` (a
  longer detour costs more than the beam is wide) and OSRM's bound only when that step found nothing. On an
  edge-based graph a candidate is reached through its own road arc (its label less the part after the point), so
  arcs turning into it from far away need not settle; one on the source's chain, on an arc the source starts on, or
  with more than `LONG_AFTER_DS` of its arc after it (the search would have to go that much further), by its leg's
  target seeds.
- **beam** (not OSRM's): states more than `BEAM` nats below their point's best leave the running.
- **breakage and gaps**: OSRM's. A point no previous state reaches is broken, and drops the last unbroken point
  with it; a run of more than 10 broken points, or (with timestamps and `gaps=split`) a pause in the recording of
  more than 10 median sample times, splits the trace.

`leg_paths` finds each chosen transition's path again (one search each, bounded by its weight), so a matching's
legs follow the routes the model scored.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from app.engine.geo import gc_distance_m
from app.engine.search import core
from floor.format.units import INF_WEIGHT
from floor.kernels.jit import kernel

LOG_2PI = math.log(2.0 * math.pi)
BETA_M = 10.0  # OSRM's MATCHING_BETA
MAX_BROKEN_STATES = 10  # OSRM: a longer run of broken points splits the trace; also the pause in median sample times
MAX_DISTANCE_DELTA_M = 2000.0  # OSRM: the largest |route - great circle| without timestamps
MIN_SPEED_MPS = 4.0  # OSRM: the searches' weight bound assumes at least this speed over the allowed detour
CANDIDATE_GC_SIGMAS = 6.0  # measurements closer than this many standard deviations: compare with the candidates
TIME_TOLERANCE = 0.25  # a route may take this much longer than its step's time for free ...
TIME_SCALE = 0.2  # ... and costs one nat per further such fraction of it
TURN_ALLOWANCE_S = 20.0  # a bounded search reaches this much weight beyond the distance bound at 4 m/s
BEAM = 30.0  # states this far (nats) below a point's best are out of the running
SOFT_DETOUR_M = (BEAM + 5.0) * BETA_M  # a longer detour costs more than the beam, whatever the emissions
LONG_AFTER_DS = 300  # a candidate with more of its arc after it than this (ds) is reached by its seeds

NO_STATE = -1
OWN_ARC = 10  # the kind of a target entry through its candidate's own arc, plus FWD or BWD


class Candidates(NamedTuple):
    """Every candidate of every kept point, flat; point t's are `first[t]:first[t + 1]`, nearest first.

    Per candidate: its emission log-probability, snapped position (degrees), chain and metres along it, the arcs it
    runs on (-1: not this way) with their parts before the point (weight ds, dm, travel time ds), and three seed
    lists as CSR (`*_first` [k + 1], `*_node` int32, `*_val` int64 [., 6]: weight, dist, time, kind (FWD, BWD,
    AT_FIRST, AT_LAST, or OWN_ARC + FWD/BWD), the turn's weight and time): as a search source (`src_*`), as a target
    reached through its own arc (`arc_*`: offsets are minus the part after the point), as a target by its leg's
    seeds (`seed_*`).
    """

    first: np.ndarray
    em: np.ndarray
    lon: np.ndarray
    lat: np.ndarray
    chain: np.ndarray
    offset_m: np.ndarray
    fwd: np.ndarray
    bwd: np.ndarray
    before: np.ndarray  # int64 [k, 6]: fwd weight, dist, time before the point; bwd likewise
    src_first: np.ndarray
    src_node: np.ndarray
    src_val: np.ndarray
    arc_first: np.ndarray
    arc_node: np.ndarray
    arc_val: np.ndarray
    seed_first: np.ndarray
    seed_node: np.ndarray
    seed_val: np.ndarray


class Trace(NamedTuple):
    """The kept points: measured positions (degrees), timestamps (s; empty without), GPS sigmas (m), the number of
    recording pauses before each point (only with `gaps=split`), the profile's map-matching speed (m/s)."""

    lon: np.ndarray
    lat: np.ndarray
    ts: np.ndarray
    sigma: np.ndarray
    pauses: np.ndarray
    max_speed: float


class Model(NamedTuple):
    """The model's state per candidate (score, parent candidate, route length and weight to it, pruned) and per
    point (the point its states' parents belong to, broken); `splits` the split points, `out` [number of splits,
    first point, searches run, nodes they settled]."""

    viterbi: np.ndarray
    parent: np.ndarray
    length: np.ndarray
    weight: np.ndarray
    pruned: np.ndarray
    parent_t: np.ndarray
    breakage: np.ndarray
    splits: np.ndarray
    out: np.ndarray


def new_model(n_points: int, n_cands: int) -> Model:
    """Arrays for `run` (every state pruned, every point broken)."""
    return Model(
        np.full(n_cands, -np.inf),
        np.full(n_cands, NO_STATE, dtype=np.int64),
        np.zeros(n_cands),
        np.zeros(n_cands, dtype=np.int64),
        np.ones(n_cands, dtype=np.bool_),
        np.full(n_points, NO_STATE, dtype=np.int64),
        np.ones(n_points, dtype=np.bool_),
        np.zeros(n_points + 1, dtype=np.int64),
        np.zeros(4, dtype=np.int64),
    )


def emission_log_p(distance_m: np.ndarray, sigma_m: np.ndarray) -> np.ndarray:
    """log N(distance; 0, sigma): OSRM's `EmissionLogProbability`, per candidate (sigma at least 1 cm)."""
    sigma_m = np.maximum(sigma_m, 0.01)
    z = distance_m / sigma_m
    return -0.5 * (LOG_2PI + z * z) - np.log(sigma_m)


def confidence(trace_m: float, matched_m: float) -> float:
    """OSRM's `MatchingConfidence`: a Bayes classifier of log(matched length / trace length) with Laplace densities
    OSRM fitted on hand-classified traces; 0 when either length is 0 (matched to one point)."""
    if trace_m <= 0.0 or matched_m <= 0.0:
        return 0.0
    x = math.log(matched_m) - math.log(trace_m)

    def laplace(loc: float, scale: float) -> float:
        return 1.0 / (2.0 * scale) * math.exp(-abs(x - loc) / scale)

    prior = 0.696774
    pos = prior * laplace(0.005986, 0.016646)
    neg = (1.0 - prior) * laplace(0.054385, 0.458432)
    if pos + neg == 0.0:
        return 0.0
    return pos / (pos + neg) if pos > neg else 1.0 - neg / (pos + neg)


# -- the kernel ---------------------------------------------------------------------------------------------------


@kernel
def _initialize(c, m, t):  # pragma: no cover - numba
    """OSRM's `initialize`: start a chain at the first point from t with a state; NO_STATE when none before the
    last point."""
    n = m.breakage.shape[0]
    while True:
        m.parent_t[t] = t
        alive = False
        for k in range(c.first[t], c.first[t + 1]):
            m.viterbi[k] = c.em[k]
            m.parent[k] = k
            m.pruned[k] = not np.isfinite(c.em[k])
            alive = alive or not m.pruned[k]
        m.breakage[t] = m.breakage[t] and not alive
        t += 1
        if not (t < n and m.breakage[t - 1]):
            break
    return NO_STATE if t >= n else t - 1


@kernel
def _clear(c, m, t):  # pragma: no cover - numba
    """OSRM's `Clear`: forget every state from point t on."""
    for k in range(c.first[t], m.viterbi.shape[0]):
        m.viterbi[k] = -np.inf
        m.parent[k] = NO_STATE
        m.length[k] = 0.0
        m.weight[k] = 0
        m.pruned[k] = True
    for u in range(t, m.breakage.shape[0]):
        m.breakage[u] = True
        m.parent_t[u] = NO_STATE


@kernel
def _direct(c, s, j):  # pragma: no cover - numba
    """(weight, dist, time, FWD 0 | BWD 1) of the stretch along the chain candidates s and j share (`Legs.direct`);
    weight -1 when none."""
    if c.chain[s] != c.chain[j]:
        return -1, 0, 0, 0
    found = False
    best_w, best_d, best_t, kind = 0, 0, 0, 0
    if c.fwd[s] >= 0 and c.fwd[j] >= 0 and c.offset_m[j] >= c.offset_m[s]:
        found = True
        best_w = c.before[j, 0] - c.before[s, 0]
        best_d = c.before[j, 1] - c.before[s, 1]
        best_t = c.before[j, 2] - c.before[s, 2]
    if c.bwd[s] >= 0 and c.bwd[j] >= 0 and c.offset_m[j] <= c.offset_m[s]:
        w = c.before[j, 3] - c.before[s, 3]
        if not found or w < best_w:
            found = True
            best_w, best_d, best_t, kind = w, c.before[j, 4] - c.before[s, 4], c.before[j, 5] - c.before[s, 5], 1
    if not found:
        return -1, 0, 0, 0
    return max(best_w, 0), max(best_d, 0), max(best_t, 0), kind


@kernel
def _routes(c, s, lo, hi, cutoff, edge_based, core_args, q, work, dist_arr, time_arr, res, how, stats,
            want):  # fmt: skip  # pragma: no cover - numba
    """The fastest paths from candidate s to the candidates j in lo:hi with `want[j - lo]` within `cutoff` ds:
    res[j - lo] = (weight, dm, time ds), weight INF_WEIGHT where none, and how[j - lo] = the target entry it ends at
    (index into `work`'s rows), -2 - kind for the direct stretch (FWD/BWD), -1 none. One search of the core (query
    number q) unless every wanted candidate is on the source's chain and reached along it more cheaply than any
    path could. `core_args`: the search core's graph, labels, potential, excluded classes, forbidden arcs, path
    buffer and figures, (g, lab, p, excl, forbid, buf, out)."""
    g, lab, p, excl, forbid, buf, out = core_args
    nodes, offs, owner = work
    n_t = 0
    for j in range(lo, hi):  # the target nodes: each candidate's own arc, or its seeds where that cannot work
        res[j - lo, 0] = INF_WEIGHT
        how[j - lo] = -1
        if not want[j - lo]:
            continue
        use_seeds = not edge_based or c.chain[j] == c.chain[s]
        if edge_based and not use_seeds:
            for a in range(c.arc_first[j], c.arc_first[j + 1]):
                if -c.arc_val[a, 0] > LONG_AFTER_DS:  # the search would have to reach that much past the target
                    use_seeds = True
                for b in range(c.src_first[s], c.src_first[s + 1]):
                    if c.arc_node[a] == c.src_node[b]:
                        use_seeds = True
        first = c.seed_first if use_seeds else c.arc_first
        t_node = c.seed_node if use_seeds else c.arc_node
        t_val = c.seed_val if use_seeds else c.arc_val
        for a in range(first[j], first[j + 1]):
            nodes[n_t] = t_node[a]
            for x in range(6):
                offs[n_t, x] = t_val[a, x]
            owner[n_t] = j - lo
            n_t += 1
    beyond = 0
    for i in range(n_t):
        beyond = max(beyond, -offs[i, 0])  # an arc's label counts the part after its candidate too
    s_lo, s_hi = c.src_first[s], c.src_first[s + 1]
    if s_hi > s_lo and n_t > 0:
        s_nodes = c.src_node[s_lo:s_hi].copy()
        s_w = c.src_val[s_lo:s_hi, 0].copy()
        t_nodes = nodes[:n_t].copy()
        zero = np.int64(0)  # not a literal: the call then takes the core's compiled signature as it is
        ends = core.Ends(s_nodes, s_w, t_nodes, s_w[:0].copy())
        core.search(g, lab, ends, q, zero + core.MODE_ALL, zero + core.PK_NONE, p, zero, excl, forbid, zero,
                    buf[:0].copy(), buf, out, cutoff + beyond)  # fmt: skip
        stats[0] += 1
        stats[1] += out[2]
        done = 3 * q + 1
        for i in range(n_t):
            v = t_nodes[i]
            if lab.st[0, v] != done:
                continue
            w = lab.dist[0, v] + offs[i, 0]
            o = owner[i]
            if w < res[o, 0]:
                res[o, 0] = w
                how[o] = i
        for o in range(hi - lo):
            i = how[o]
            if i < 0:
                continue
            v = t_nodes[i]
            d = np.int64(0)
            tt = np.int64(0)
            while lab.pred[0, v] >= 0:
                a = lab.pred[0, v]
                d += dist_arr[a]
                tt += time_arr[a]
                v = g.arc_tail[a]
            seed = s_lo - 1 - lab.pred[0, v]
            res[o, 1] = d + c.src_val[seed, 1] + offs[i, 1]
            res[o, 2] = tt + c.src_val[seed, 2] + offs[i, 2]
    for j in range(lo, hi):
        if c.chain[j] == c.chain[s] and want[j - lo]:
            w, d, tt, kind = _direct(c, s, j)
            if w >= 0 and w <= res[j - lo, 0]:
                res[j - lo, 0], res[j - lo, 1], res[j - lo, 2] = w, d, tt
                how[j - lo] = -2 - kind
    for j in range(hi - lo):
        if res[j, 0] > cutoff:
            res[j, 0] = INF_WEIGHT
            how[j] = -1


@kernel
def _step(c, tr, m, pt, t, edge_based, core_args, q, work, dist_arr, time_arr,
          soft):  # fmt: skip  # pragma: no cover - numba
    """Viterbi from point pt to point t (OSRM's inner loops, with the searches above); returns the next query
    number. With `soft`, no route longer than the measured distance plus `SOFT_DETOUR_M` is looked for (one that
    long costs more than the beam's width); the caller repeats a step that broke without it."""
    timed = tr.ts.shape[0] > 1
    step_s = float(tr.ts[t] - tr.ts[pt]) if timed else 1.0
    max_delta = step_s * tr.max_speed if timed else MAX_DISTANCE_DELTA_M
    gc_meas = gc_distance_m(tr.lon[pt], tr.lat[pt], tr.lon[t], tr.lat[t])
    use_cands = gc_meas < CANDIDATE_GC_SIGMAS * 0.5 * (tr.sigma[pt] + tr.sigma[t])
    best_trans = -math.log(BETA_M)
    lo, hi = c.first[t], c.first[t + 1]
    p_lo, p_hi = c.first[pt], c.first[pt + 1]
    m.parent_t[t] = pt
    osrm_cutoff = (gc_meas + max_delta) / MIN_SPEED_MPS * 10.0
    order = np.empty(p_hi - p_lo, dtype=np.int64)  # the previous states, best first (insertion: a few dozen)
    for a in range(p_hi - p_lo):
        b = a
        while b > 0 and m.viterbi[p_lo + order[b - 1]] < m.viterbi[p_lo + a]:
            order[b] = order[b - 1]
            b -= 1
        order[b] = a
    res = np.empty((hi - lo, 3), dtype=np.int64)
    how = np.empty(hi - lo, dtype=np.int64)
    gcs = np.empty(hi - lo)
    want = np.empty(hi - lo, dtype=np.bool_)
    searched = False
    top = -np.inf
    for r in range(p_hi - p_lo):
        s = p_lo + order[r]
        if m.pruned[s]:
            continue
        slack = 0.0
        g_bound = gc_meas
        for j in range(lo, hi):
            gcs[j - lo] = gc_distance_m(c.lon[s], c.lat[s], c.lon[j], c.lat[j]) if use_cands else gc_meas
            g_bound = max(g_bound, gcs[j - lo])
            most = m.viterbi[s] + c.em[j] + best_trans  # j's score from s at best (d_t = 0, on time)
            x = most - m.viterbi[j]
            want[j - lo] = x > 0.0 and most >= top - BEAM  # it could improve, and stay in the beam
            if want[j - lo]:
                slack = max(slack, x)  # inf while j has no score
        if slack <= 0.0:
            continue
        detour = min(max_delta, BETA_M * slack)
        if soft:
            detour = min(detour, SOFT_DETOUR_M)
        cutoff = osrm_cutoff
        if searched or soft:
            cutoff = min(cutoff, (g_bound + detour) / MIN_SPEED_MPS * 10.0 + TURN_ALLOWANCE_S * 10.0)
        searched = True
        q += 1
        _routes(c, s, lo, hi, np.int64(cutoff), edge_based, core_args, q, work, dist_arr,
                time_arr, res, how, m.out[2:], want)  # fmt: skip
        for j in range(lo, hi):
            w = res[j - lo, 0]
            if w >= INF_WEIGHT:
                continue
            route_m = res[j - lo, 1] / 10.0
            d_t = abs(route_m - gcs[j - lo])
            if d_t >= max_delta:
                continue
            value = m.viterbi[s] + c.em[j] + best_trans - d_t / BETA_M
            if timed and step_s > 0.0:
                late = res[j - lo, 2] / 10.0 - (1.0 + TIME_TOLERANCE) * step_s
                if late > 0.0:
                    value -= late / (TIME_SCALE * step_s)
            if value > m.viterbi[j]:
                m.viterbi[j] = value
                m.parent[j] = s
                m.length[j] = route_m
                m.weight[j] = w
                m.pruned[j] = False
                top = max(top, value)
    m.breakage[t] = top == -np.inf
    for j in range(lo, hi):  # the beam: states far below the best are out of the running
        if m.viterbi[j] < top - BEAM:
            m.pruned[j] = True
    return q


@kernel
def run(c, tr, m, edge_based, g, lab, p, excl, forbid, buf, out, q, dist_arr, time_arr):  # pragma: no cover - numba
    """OSRM's `mapMatching` loop over the kept points: the Viterbi steps, breakage recovery and splits. Writes the
    model (`m.splits[:n]`, `m.out` = n, first point) and returns the last query number used."""
    core_args = (g, lab, p, excl, forbid, buf, out)
    n = m.breakage.shape[0]
    m.out[0] = 0
    m.out[1] = NO_STATE
    m.out[2:] = 0
    if n < 2:
        return q
    start = _initialize(c, m, 0)
    if start == NO_STATE:
        return q
    m.out[1] = start
    most = 0
    for t in range(n):
        most = max(most, c.first[t + 1] - c.first[t])
    work = _work(c, most)
    unbroken = np.empty(n, dtype=np.int64)
    nu = 1
    unbroken[0] = start
    breakage_begin = NO_STATE
    n_splits = 0
    t = start + 1
    while t < n:
        pt = unbroken[nu - 1]
        gap = t - pt > MAX_BROKEN_STATES or tr.pauses[t] > tr.pauses[pt]
        if not gap:
            q = _step(c, tr, m, pt, t, edge_based, core_args, q, work, dist_arr, time_arr, True)
            if m.breakage[t]:  # nothing within the beam's detour: look as far as OSRM does
                q = _step(c, tr, m, pt, t, edge_based, core_args, q, work, dist_arr, time_arr, False)
            if m.breakage[t]:
                breakage_begin = t if breakage_begin == NO_STATE else min(t, breakage_begin)
                nu -= 1  # drop both ends of the breakage
            else:
                unbroken[nu] = t
                nu += 1
        if nu == 0 or gap:
            split = t
            if breakage_begin != NO_STATE:
                split = breakage_begin
                breakage_begin = NO_STATE
            m.splits[n_splits] = split
            n_splits += 1
            _clear(c, m, split)
            start = _initialize(c, m, split)
            if start == NO_STATE:
                nu = 0
                break
            nu = 1
            unbroken[0] = start
            t = start  # OSRM goes back here: the next step is start + 1
        t += 1
    if nu > 0:
        m.splits[n_splits] = unbroken[nu - 1] + 1
        n_splits += 1
    m.out[0] = n_splits
    return q


@kernel
def _work(c, most):  # pragma: no cover - numba
    """Buffers for the target entries of one search: nodes, offsets and kinds [., 6], owner."""
    cap = 0
    for k in range(c.first[c.first.shape[0] - 1]):
        cap = max(cap, (c.seed_first[k + 1] - c.seed_first[k]) + (c.arc_first[k + 1] - c.arc_first[k]))
    size = max(1, most * cap)
    return np.empty(size, dtype=np.int32), np.empty((size, 6), dtype=np.int64), np.empty(size, dtype=np.int64)


@kernel
def leg_paths(c, path, m, edge_based, g, lab, p, excl, forbid, buf, out, q, dist_arr, time_arr, eb_turn,
              eb_turn_time):  # fmt: skip  # pragma: no cover - numba
    """The legs between consecutive states of `path` (candidate ids), found again as the model found them (one
    search each, bounded by the weight it found): per leg a row (weight, FWD/BWD of a direct stretch or -1, the
    source seed's kind, its node, the target's kind, its turn weight and time, the number of search arcs) and the
    search arcs from the source seed node to the target seed node, concatenated. Returns (rows, arcs, last query
    number)."""
    core_args = (g, lab, p, excl, forbid, buf, out)
    k = path.shape[0] - 1
    rows = np.zeros((max(k, 0), 8), dtype=np.int64)
    cap = 64
    arcs = np.empty(cap, dtype=np.int32)
    n_arcs = 0
    work = _work(c, 1)
    res = np.empty((1, 3), dtype=np.int64)
    how = np.empty(1, dtype=np.int64)
    want = np.ones(1, dtype=np.bool_)
    stats = np.zeros(4, dtype=np.int64)
    for i in range(k):
        s, j = path[i], path[i + 1]
        q += 1
        _routes(c, s, j, j + 1, m.weight[j], edge_based, core_args, q, work, dist_arr, time_arr, res, how, stats,
                want)  # fmt: skip
        rows[i, 0] = res[0, 0]
        e = how[0]
        if e < 0:  # direct (-2 - kind), or (should not happen) nothing within the weight found before
            rows[i, 1] = -2 - e if e <= -2 else -1
            continue
        rows[i, 1] = -1
        nodes, offs, owner = work
        v = nodes[e]
        start = n_arcs
        while lab.pred[0, v] >= 0:
            a = lab.pred[0, v]
            if n_arcs == cap:
                cap *= 2
                bigger = np.empty(cap, dtype=np.int32)
                for x in range(n_arcs):
                    bigger[x] = arcs[x]
                arcs = bigger
            arcs[n_arcs] = a
            n_arcs += 1
            v = g.arc_tail[a]
        seed = c.src_first[s] - 1 - lab.pred[0, v]
        for x in range((n_arcs - start) // 2):  # into travel order
            arcs[start + x], arcs[n_arcs - 1 - x] = arcs[n_arcs - 1 - x], arcs[start + x]
        rows[i, 2] = c.src_val[seed, 3]
        rows[i, 3] = c.src_node[seed]
        rows[i, 4] = offs[e, 3]
        rows[i, 5], rows[i, 6] = offs[e, 4], offs[e, 5]
        if offs[e, 3] >= OWN_ARC:  # reached through the target's own arc: the last turn is the one onto it
            rows[i, 4] = offs[e, 3] - OWN_ARC
            last = arcs[n_arcs - 1]
            rows[i, 5], rows[i, 6] = eb_turn[last], eb_turn_time[last]
            n_arcs -= 1
        rows[i, 7] = n_arcs - start
    return rows, arcs[:n_arcs].copy(), q

"""Asymmetric travelling-salesman tours on an integer cost matrix, in numba: the solver behind `/trip`.

`cost[i, j]` (int64, >= 0) is what going from point i to point j costs; `FORBIDDEN` marks a pair a tour may not use
(OSRM's `INVALID_EDGE_DURATION` in the tables it rewrites for fixed ends, `app.engine.features.trip`). A tour is a
permutation
of 0..n-1 read as a cycle; its cost is the sum of its n arcs. Nothing assumes symmetry: road tables are not (one-way
streets, turn costs), so a stretch driven the other way round is costed arc by arc.

- `held_karp` (n <= `EXACT_MAX`): the optimum, by dynamic programming over subsets, O(2^n n^2). osrm-routed 26 runs
  the same DP up to 15 points, so there the two tie on the same table.
- Above: OSRM's own construction, replicated move for move (`trip_farthest_insertion.hpp`: farthest insertion, then
  its first-improvement directed 2-opt), then `improve`: local search with Or-opt (a run of 1..3 points moved
  elsewhere, either way round) and directed 2-opt (a stretch reversed, or the rest of the tour reversed instead),
  driven by a queue of points whose surroundings changed, each trying only the moves that give it a new arc to or
  from one of its `NEAR` nearest points; then an iterated local search whose kicks swap two short adjacent stretches
  (a double bridge: it reverses nothing, which suits asymmetric costs) and which goes on from a kicked tour only
  when that is no longer than the best. Each step keeps a tour no longer than the one before, so the answer is never
  longer than OSRM's heuristic on the same table.

The kicks come from a fixed-seed xorshift generator: the same table gives the same tour.
"""

from __future__ import annotations

import numpy as np

from floor.kernels.jit import I64, U8, arr, kernel

FORBIDDEN = 1 << 40  # a pair no tour may use; a sum of n <= 2**20 of them cannot overflow int64
EXACT_MAX = 16  # Held-Karp up to this many points (about 5 ms at 16 on one core; each point more doubles it)
NEAR = 10  # local search partners per point: its cheapest arcs out and in
REACH = 1 << 20  # segment insertion moves runs of any length
SPAN = 8  # a kick reorders three runs of up to this many points
KICKS_PER_POINT = 1  # iterated local search: kicks per point (about 5-8 ms at 100 points; 2 gain 0.3 % more)
_HK_INF = 1 << 62


@kernel(I64(arr(I64, 2), arr(I64)))
def tour_cost(c, t):  # pragma: no cover - numba
    """The cost of the cyclic tour `t` on `c`."""
    n = t.shape[0]
    s = 0
    for i in range(n):
        s += c[t[i], t[(i + 1) % n]]
    return s


@kernel
def held_karp(c):  # pragma: no cover - numba
    """The cheapest cyclic tour (starting at 0) by dynamic programming over the subsets of 1..n-1: `dp[S, j]` is the
    cheapest path from 0 through exactly the points of S ending at point j + 1, pulled from the row of S without j
    (one row read, one written: cache-friendly). O(2^(n-1) (n-1)^2) time, 2^(n-1) (n-1) int64 memory; the tour is
    read back by finding, at each step, a predecessor whose path plus arc gives the entry."""
    n = c.shape[0]
    m = n - 1
    full = 1 << m
    into = np.empty((max(m, 1), max(m, 1)), dtype=np.int64)  # into[j, k] = c[k + 1, j + 1]
    for j in range(m):
        for k in range(m):
            into[j, k] = c[k + 1, j + 1]
    dp = np.empty((full, max(m, 1)), dtype=np.int64)
    for s in range(1, full):
        for j in range(m):
            if not (s >> j) & 1:
                dp[s, j] = _HK_INF
                continue
            prev = s ^ (1 << j)
            if prev == 0:
                dp[s, j] = c[0, j + 1]
                continue
            best = _HK_INF
            for k in range(m):
                if (prev >> k) & 1:
                    v = dp[prev, k] + into[j, k]
                    if v < best:
                        best = v
            dp[s, j] = best
    tour = np.zeros(n, dtype=np.int64)
    best = _HK_INF
    last = -1
    for j in range(m):
        v = dp[full - 1, j] + c[j + 1, 0]
        if v < best:
            best = v
            last = j
    s = full - 1
    j = last
    for p in range(n - 1, 0, -1):
        tour[p] = j + 1
        prev = s ^ (1 << j)
        k = 0
        while k < m and not ((prev >> k) & 1 and dp[prev, k] + into[j, k] == dp[s, j]):
            k += 1
        s = prev
        j = k
    return tour


@kernel
def farthest_insertion(c):  # pragma: no cover - numba
    """OSRM's `FarthestInsertionTrip`, tie for tie: start from the first largest entry (row-major, (0, 0) skipped),
    then repeatedly take the unvisited point whose cheapest insertion is the dearest and insert it there (before
    the arc's head; before the first point when the arc closes the cycle)."""
    n = c.shape[0]
    route = np.zeros(n, dtype=np.int64)
    if n < 2:
        return route
    best = -1
    idx = 1
    for f in range(1, n * n):
        v = c[f // n, f % n]
        if v > best:
            best = v
            idx = f
    visited = np.zeros(n, dtype=np.uint8)
    route[0] = idx // n
    route[1] = idx % n
    visited[route[0]] = 1
    visited[route[1]] = 1
    size = 2
    if route[0] == route[1]:  # a diagonal entry is the largest (every entry 0): any order is a tour
        for i in range(n):
            route[i] = i
        return route
    while size < n:
        far = -(1 << 62)
        nxt = -1
        nxt_at = 0
        for v in range(n):
            if visited[v]:
                continue
            low = FORBIDDEN
            at = 0
            for p in range(size):
                a = route[p]
                b = route[(p + 1) % size]
                if c[a, v] >= FORBIDDEN or c[v, b] >= FORBIDDEN:
                    continue
                d = c[a, v] + c[v, b] - c[a, b]
                if d < low:
                    low = d
                    at = p + 1 if p + 1 < size else 0
            if low > far:
                far = low
                nxt = v
                nxt_at = at
        for p in range(size, nxt_at, -1):
            route[p] = route[p - 1]
        route[nxt_at] = nxt
        visited[nxt] = 1
        size += 1
    return route


@kernel
def two_opt_osrm(route, c):  # pragma: no cover - numba
    """OSRM's `TwoOptTrip`: first-improvement directed 2-opt (reverse route[i+1..k] when that is cheaper, costing the
    reversed arcs), restarted after each move; a tour using a forbidden arc is returned as it is."""
    n = route.shape[0]
    t = route.copy()
    if n < 4:
        return t
    fwd = np.zeros(n, dtype=np.int64)
    delta = np.zeros(n + 1, dtype=np.int64)
    bad = np.zeros(n + 1, dtype=np.int64)
    improved = True
    while improved:
        improved = False
        for e in range(n):
            a = t[e]
            b = t[(e + 1) % n]
            if c[a, b] >= FORBIDDEN:
                return t
            fwd[e] = c[a, b]
            delta[e + 1] = delta[e]
            bad[e + 1] = bad[e]
            if c[b, a] >= FORBIDDEN:
                bad[e + 1] += 1
            else:
                delta[e + 1] += c[b, a] - c[a, b]
        i = 0
        while i + 2 < n and not improved:
            a = t[i]
            b = t[i + 1]
            for k in range(i + 2, n):
                if i == 0 and k + 1 == n:
                    continue
                x = t[k]
                d = t[(k + 1) % n]
                if c[a, x] >= FORBIDDEN or c[b, d] >= FORBIDDEN or bad[k] - bad[i + 1] > 0:
                    continue
                if c[a, x] + c[b, d] - fwd[i] - fwd[k] + delta[k] - delta[i + 1] < 0:
                    lo, hi = i + 1, k
                    while lo < hi:
                        t[lo], t[hi] = t[hi], t[lo]
                        lo += 1
                        hi -= 1
                    improved = True
                    break
            i += 1
    return t


@kernel(I64(arr(I64, 2), arr(I64), arr(I64), arr(I64)))
def _refresh(c, t, pos, rev):  # pragma: no cover - numba
    """After `t[:n]` changed: `t[n:]` repeats it (so `t[i + m]` needs no modulo), `pos` places every point, and
    `rev[e]` (e <= 2n) sums (reversed arc - arc) over the tour's arcs before position e: what driving a stretch the
    other way round adds. Returns the tour's cost."""
    n = pos.shape[0]
    rev[0] = 0
    s = 0
    for e in range(n):
        t[n + e] = t[e]
    for e in range(2 * n):
        a = t[e]
        b = t[e + 1] if e + 1 < 2 * n else t[0]
        rev[e + 1] = rev[e] + c[b, a] - c[a, b]
        if e < n:
            pos[a] = e
            s += c[a, b]
    return s


@kernel(I64(arr(I64), arr(U8), I64, I64, I64))
def _push(queue, inq, head, count, v):  # pragma: no cover - numba
    """Queue point v (a ring of len(queue) slots from `head`) unless queued; returns the new count."""
    if inq[v]:
        return count
    n = queue.shape[0]
    queue[(head + count) % n] = v
    inq[v] = 1
    return count + 1


@kernel(I64(arr(I64, 2), arr(I64), arr(I64), arr(I64), arr(I64, 2), arr(I64, 2), arr(I64), arr(U8), arr(I64), I64, I64))
def _descend(c, t, pos, rev, succ, pred, queue, inq, buf, count, reach):  # pragma: no cover - numba
    """Local search in place on the tour `t` (`_refresh`ed): while a point is queued, make the best improving move
    that gives it a new arc to or from one of its nearest points (`succ`, `pred`: the cheapest arcs out of / into
    it), and queue the ends of every arc the move changed. Moves: directed 2-opt on its arc in or out and the same
    arc of the other point, reversing the stretch between or the rest; Or-opt of a run of 1..3 points it starts or
    ends (to beside the other point), or of a run starting or ending at the other point (to beside it), either way
    round. `queue` holds `count` points from slot 0. Returns the cost change (<= 0)."""
    n = pos.shape[0]
    kn = succ.shape[1]
    total = 0
    head = 0
    while count > 0:
        v = queue[head]
        head = head + 1 if head + 1 < n else 0
        count -= 1
        inq[v] = 0
        p = pos[v]
        whole = rev[n]
        best = 0
        kind = 0
        x1 = 0
        x2 = 0
        x3 = 0
        for r in range(2 * kn):
            u = succ[v, r] if r < kn else pred[v, r - kn]
            # 2-opt: the arcs leaving v and u, or the arcs entering them (inner and outer: both directions of v-u)
            for side in range(2):
                e = p - side
                f = pos[u] - side
                if e < 0:
                    e += n
                if f < 0:
                    f += n
                if e == f:
                    continue
                i = min(e, f)
                k = max(e, f)
                a = t[i]
                b = t[i + 1]
                x = t[k]
                d = t[k + 1]
                base = -c[a, b] - c[x, d]
                inner = base + c[a, x] + c[b, d] + rev[k] - rev[i + 1]
                if inner < best:
                    best, kind, x1, x2 = inner, 1, i, k
                outer = base + c[x, a] + c[d, b] + whole - (rev[k + 1] - rev[i])
                if outer < best:
                    best, kind, x1, x2 = outer, 2, i, k
            # Or-opt: (run start, point to insert after) pairs that give v the new arc to or from u
            for L in range(1, 4):
                if L + 3 > n:
                    break
                for form in range(4):
                    if form == 0:  # run from v, after u (u -> v) or before u (v -> u, reversed)
                        i = p
                        a = u if r >= kn else t[pos[u] - 1 + n]
                    elif form == 1:  # run ending at v, before u (v -> u) or after u (u -> v, reversed)
                        if L == 1:
                            continue
                        i = p - L + 1
                        a = u if r >= kn else t[pos[u] - 1 + n]
                    elif form == 2:  # run from u (v -> u) or ending at u (reversed), after v
                        if r >= kn:
                            continue
                        i = pos[u]
                        a = v
                    else:  # run ending at u (u -> v) or from u (reversed), before v
                        if r < kn:
                            continue
                        i = pos[u] - L + 1
                        a = t[p - 1 + n]
                    for flip in range(2 if form >= 2 and L > 1 else 1):
                        j = i
                        if flip == 1:
                            j = pos[u] - L + 1 if form == 2 else pos[u]
                        if j < 0:
                            j += n
                        off = pos[a] - j
                        if off < 0:
                            off += n
                        if off < L or off == n - 1:  # a inside the run, or just before it (no move)
                            continue
                        s = t[j]
                        z = t[j + L - 1]
                        before = t[j + n - 1]
                        after = t[j + L]
                        b = t[pos[a] + 1]
                        base = c[before, after] - c[before, s] - c[z, after] - c[a, b]
                        fw = base + c[a, s] + c[z, b]
                        if fw < best:
                            best, kind, x1, x2, x3 = fw, 3, j, L, a
                        bw = base + c[a, z] + c[s, b] + rev[j + L - 1] - rev[j]
                        if bw < best:
                            best, kind, x1, x2, x3 = bw, 4, j, L, a
            # segment insertion: a run of any length from u (v -> u) moved right after v, or ending at u (u -> v)
            # moved right before v; nothing reversed (the 3-opt move that suits asymmetric costs)
            q = pos[u]
            if r < kn:
                a = v
                b = t[p + 1]
                if u != b:
                    before = t[q + n - 1]
                    base = c[v, u] - c[v, b] - c[before, u]
                    for m in range(min(reach, (p - q + n) % n)):
                        z = t[q + m]
                        after = t[q + m + 1]
                        d = base + c[z, b] + c[before, after] - c[z, after]
                        if d < best:
                            best, kind, x1, x2, x3 = d, 3, q, m + 1, a
            else:
                a = t[p + n - 1]
                if u != a:
                    after = t[q + 1]
                    base = c[u, v] - c[a, v] - c[u, after]
                    for m in range(min(reach, (q - p + n) % n)):
                        j = q - m if q >= m else q - m + n
                        s = t[j]
                        before = t[j + n - 1]
                        d = base + c[a, s] + c[before, after] - c[before, s]
                        if d < best:
                            best, kind, x1, x2, x3 = d, 3, j, m + 1, a
        if kind == 0:
            continue
        total += best
        if kind <= 2:
            i, k = x1, x2
            ends = (t[i], t[i + 1], t[k], t[k + 1])
            if kind == 1:
                lo, hi = i + 1, k
                while lo < hi:
                    t[lo], t[hi] = t[hi], t[lo]
                    lo += 1
                    hi -= 1
            else:  # t[i+1..k], then t[i] back to t[0], then t[n-1] back to t[k+1]
                o = 0
                for q in range(i + 1, k + 1):
                    buf[o] = t[q]
                    o += 1
                for q in range(i, -1, -1):
                    buf[o] = t[q]
                    o += 1
                for q in range(n - 1, k, -1):
                    buf[o] = t[q]
                    o += 1
                for q in range(n):
                    t[q] = buf[q]
            for w in ends:
                count = _push(queue, inq, head, count, w)
        else:
            i, L, a = x1, x2, x3
            ends6 = (t[i + n - 1], t[i], t[i + L - 1], t[i + L], a, t[pos[a] + 1])
            o = 0
            for m in range(n - L):  # from the point after the run round to the one before it, the run after a
                w = t[i + L + m]
                buf[o] = w
                o += 1
                if w == a:
                    for q in range(L):
                        buf[o] = t[i + (L - 1 - q if kind == 4 else q)]
                        o += 1
            for q in range(n):
                t[q] = buf[q]
            for w in ends6:
                count = _push(queue, inq, head, count, w)
        _refresh(c, t, pos, rev)
    return total


@kernel(arr(I64, 2)(arr(I64, 2), I64, I64))
def nearest_points(c, k, into):  # pragma: no cover - numba
    """Per point, the `k` others with the cheapest arc out of it (`into` 0) or into it (`into` 1), cheapest first
    (ties: the lower index)."""
    n = c.shape[0]
    out = np.zeros((n, k), dtype=np.int64)
    cost = np.zeros(k, dtype=np.int64)
    for v in range(n):
        size = 0
        for u in range(n):
            if u == v:
                continue
            w = c[v, u] if into == 0 else c[u, v]
            if size == k and w >= cost[k - 1]:
                continue
            q = size if size < k else k - 1
            while q > 0 and cost[q - 1] > w:
                cost[q] = cost[q - 1]
                out[v, q] = out[v, q - 1]
                q -= 1
            cost[q] = w
            out[v, q] = u
            if size < k:
                size += 1
    return out


@kernel
def improve(c, tour, kicks, seed, near, span, reach):  # pragma: no cover - numba
    """Local search from `tour` (each point's `near` nearest points as partners), then `kicks` rounds of iterated
    local search: swap two adjacent runs of 1..`span` points at a random place, descend, keep the result when it is
    no longer than the best, else go back to the best. Returns the best tour; never longer than `tour`."""
    n = tour.shape[0]
    best = tour.copy()
    if n < 5:
        return best
    k = min(near, n - 1)
    succ = nearest_points(c, k, 0)
    pred = nearest_points(c, k, 1)
    t = np.zeros(2 * n, dtype=np.int64)
    for q in range(n):
        t[q] = tour[q]
    pos = np.zeros(n, dtype=np.int64)
    rev = np.zeros(2 * n + 1, dtype=np.int64)
    queue = np.zeros(n, dtype=np.int64)
    inq = np.zeros(n, dtype=np.uint8)
    buf = np.zeros(n, dtype=np.int64)
    cost = _refresh(c, t, pos, rev)
    for q in range(n):
        queue[q] = t[q]
        inq[t[q]] = 1
    cost += _descend(c, t, pos, rev, succ, pred, queue, inq, buf, n, reach)
    for q in range(n):
        best[q] = t[q]
    best_cost = cost
    span = max(1, min(span, (n - 2) // 3))
    state = np.uint64(seed) * np.uint64(2685821657736338717) + np.uint64(1)
    draws = np.zeros(4, dtype=np.int64)
    for _ in range(kicks):
        for r in range(4):
            state ^= state << np.uint64(13)
            state ^= state >> np.uint64(7)
            state ^= state << np.uint64(17)
            draws[r] = np.int64(state >> np.uint64(1))
        p = draws[0] % n
        l1 = 1 + draws[1] % span
        l2 = 1 + draws[2] % span
        l3 = 1 + draws[3] % span
        # from p: t[p], runs B (l1 points), C (l2), D (l3), the rest  ->  t[p], D, C, B, the rest: four arcs change,
        # and no single move of the descent undoes it
        e = p + l1 + l2 + l3
        ends = (t[p], t[p + 1], t[p + l1], t[p + l1 + 1], t[p + l1 + l2], t[p + l1 + l2 + 1], t[e], t[e + 1])
        o = 0
        buf[o] = t[p]
        o += 1
        for m in range(l3):
            buf[o] = t[p + l1 + l2 + 1 + m]
            o += 1
        for m in range(l2):
            buf[o] = t[p + l1 + 1 + m]
            o += 1
        for m in range(l1):
            buf[o] = t[p + 1 + m]
            o += 1
        for m in range(n - 1 - l1 - l2 - l3):
            buf[o] = t[e + 1 + m]
            o += 1
        for m in range(n):
            t[m] = buf[m]
        cost = _refresh(c, t, pos, rev)
        count = 0
        for w in ends:
            count = _push(queue, inq, 0, count, w)
        cost += _descend(c, t, pos, rev, succ, pred, queue, inq, buf, count, reach)
        if cost <= best_cost:
            best_cost = cost
            for m in range(n):
                best[m] = t[m]
        else:
            for m in range(n):
                t[m] = best[m]
            cost = _refresh(c, t, pos, rev)
    return best


def solve(cost: np.ndarray, kicks: int | None = None, seed: int = 1) -> np.ndarray:
    """The best tour this module finds on `cost` (int64 [n, n]; `FORBIDDEN` pairs avoided whenever a tour can):
    exact up to `EXACT_MAX` points, else OSRM's construction improved by `improve` with `kicks` kicks (default
    `KICKS_PER_POINT` per point). A permutation of 0..n-1 as int64 [n], read as a cycle."""
    c = np.array(cost, dtype=np.int64, order="C")  # a writable copy: the kernels' signatures want one
    n = c.shape[0]
    if n <= 3:  # every order is the same cycle, or (3 points) one of two: compare them
        if n == 3 and tour_cost(c, np.array([0, 2, 1], dtype=np.int64)) < tour_cost(c, np.arange(3, dtype=np.int64)):
            return np.array([0, 2, 1], dtype=np.int64)
        return np.arange(n, dtype=np.int64)
    if n <= EXACT_MAX:
        return np.asarray(held_karp(c))
    start = two_opt_osrm(farthest_insertion(c), c)
    return np.asarray(improve(c, start, KICKS_PER_POINT * n if kicks is None else kicks, seed, NEAR, SPAN, REACH))


def warm() -> None:
    """Compile (or load from numba's cache) every kernel of the solver: one exact and one heuristic tour on small
    synthetic tables (the server's warm-up calls it, so a first trip does not wait)."""
    for n in (4, EXACT_MAX + 2):
        i = np.arange(n)
        solve((np.abs(i[:, None] - i[None, :]) * 10 + (i[:, None] > i[None, :])).astype(np.int64), kicks=2)

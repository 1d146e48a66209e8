"""The contraction's numba kernels (`preprocessing.contract` drives them): a dynamic adjacency in one shared pool
(per node an out- and an in-list), bounded witness searches on a lazy-deletion heap, RoutingKit's priority, and the
commit of a node's shortcuts; the layouts of their state, record, witness and pending rows."""

from __future__ import annotations

import numpy as np

from floor.kernels.heap import heap_pop, heap_push
from floor.kernels.jit import BOOL, F64, I32, I64, NONE, arr, kernel, tup

# argument types of the helpers (each compiles once, see floor.kernels.jit)
_POOL = arr(I32, 2)  # [P, 3] neighbour, weight, record


_REC = arr(I32, 2)  # [R, R_COLS]


_WD = arr(I64, 2)  # [n, 4] witness rows


_PEND = arr(I64, 2)  # [k, 7] pending shortcuts


_VI32, _VI64, _VF64 = arr(I32), arr(I64), arr(F64)


WITNESS_SETTLE_LIMIT = 100  # settled nodes per witness search when a node is contracted


PRIORITY_SETTLE_LIMIT = 30  # ... when only its priority is estimated


WITNESS_HEAP_CAPACITY = 1 << 16  # a full witness heap takes no more pushes (safe: can only add shortcuts)


_I32MAX = 2**31 - 1


# state vector slots
ST_POOL_END = 0


ST_NREC = 1


ST_DONE = 2


ST_UP = 3


ST_DOWN = 4


ST_LEFT = 5


ST_STAMP = 6


ST_OVERFLOW = 7


ST_SEARCHES = 8


ST_SETTLED = 9


ST_LAZY = 10


ST_RELAXED = 11


ST_ROUNDS = 12


ST_LEN = 16


# arc record columns (int32 [R, 8])
R_TAIL = 0


R_HEAD = 1


R_W = 2


R_D = 3


R_A = 4  # original arc id (R_B == -1) or record id of the first half


R_B = 5  # -1 or record id of the second half


R_HOPS = 6  # number of original arcs it unpacks into (saturating)


R_POS = 7  # final position: >= 0 upward arc, < 0 downward arc -(pos+1)


R_COLS = 8


# witness rows (int64 [n, 4]): tentative distance, its stamp, target stamp, needed length (-1 = witnessed)
W_DIST = 0


W_STAMP = 1


W_TMARK = 2


W_NEED = 3


# pool columns (int32 [P, 3]): neighbour, weight, record id
P_NB = 0


P_W = 1


P_REC = 2


@kernel(_PEND(_PEND, I64))
def _grow_rows(a: np.ndarray, rows: int) -> np.ndarray:
    """A copy of int64 rows `a` with room for `rows` rows (the new rows uninitialised)."""
    out = np.empty((rows, a.shape[1]), dtype=np.int64)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j]
    return out


@kernel(_REC(_REC, I64))
def _grow_rows_i32(a: np.ndarray, rows: int) -> np.ndarray:
    """`_grow_rows` for int32 rows."""
    out = np.empty((rows, a.shape[1]), dtype=np.int32)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j]
    return out


@kernel(_VI64(_VI64, _VI32))
def _argsort_starts(start: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Ids of the lists with capacity, by start offset (an LSD radix sort, 16 bits a pass)."""
    k = 0
    for i in range(cap.shape[0]):
        if cap[i] > 0:
            k += 1
    ids = np.empty(k, dtype=np.int64)
    k = 0
    hi = 0
    for i in range(cap.shape[0]):
        if cap[i] > 0:
            ids[k] = i
            k += 1
            if start[i] > hi:
                hi = start[i]
    tmp = np.empty(k, dtype=np.int64)
    count = np.empty(65537, dtype=np.int64)
    shift = 0
    while (hi >> shift) > 0:
        for d in range(65537):
            count[d] = 0
        for i in range(k):
            count[((start[ids[i]] >> shift) & 0xFFFF) + 1] += 1
        for d in range(65536):
            count[d + 1] += count[d]
        for i in range(k):
            d = (start[ids[i]] >> shift) & 0xFFFF
            tmp[count[d]] = ids[i]
            count[d] += 1
        ids, tmp = tmp, ids
        shift += 16
    return ids


@kernel(_POOL(_POOL, _VI64, _VI32, _VI32, _VI64, I64))
def _pool_make_room(
    pool: np.ndarray, lst_start: np.ndarray, lst_len: np.ndarray, lst_cap: np.ndarray, st: np.ndarray, need: int
) -> np.ndarray:
    """Compact the live lists (in place when that frees enough, else into a larger pool); returns the pool."""
    live = 0
    for i in range(lst_cap.shape[0]):
        live += lst_cap[i]
    if live + need <= pool.shape[0] // 2:
        dst = pool
    else:
        size = max(2 * pool.shape[0], 2 * (live + need))
        dst = np.empty((size, 3), dtype=np.int32)
    order = _argsort_starts(lst_start, lst_cap)
    end = 0
    for k in range(order.shape[0]):
        lid = order[k]
        c = lst_cap[lid]
        if c == 0:
            continue
        s = lst_start[lid]
        for j in range(lst_len[lid]):
            dst[end + j, 0] = pool[s + j, 0]
            dst[end + j, 1] = pool[s + j, 1]
            dst[end + j, 2] = pool[s + j, 2]
        lst_start[lid] = end
        end += c
    st[ST_POOL_END] = end
    return dst


@kernel(_POOL(_POOL, _VI64, _VI32, _VI32, _VI64, I64, I64, I64, I64))
def _list_append(
    pool: np.ndarray,
    lst_start: np.ndarray,
    lst_len: np.ndarray,
    lst_cap: np.ndarray,
    st: np.ndarray,
    lid: int,
    nbr: int,
    w: int,
    rid: int,
) -> np.ndarray:
    ln = lst_len[lid]
    if ln == lst_cap[lid]:
        newcap = max(4, 2 * ln)
        if st[ST_POOL_END] + newcap > pool.shape[0]:
            pool = _pool_make_room(pool, lst_start, lst_len, lst_cap, st, newcap)
        s = st[ST_POOL_END]
        old = lst_start[lid]
        for j in range(ln):
            pool[s + j, 0] = pool[old + j, 0]
            pool[s + j, 1] = pool[old + j, 1]
            pool[s + j, 2] = pool[old + j, 2]
        lst_start[lid] = s
        lst_cap[lid] = newcap
        st[ST_POOL_END] = s + newcap
    p = lst_start[lid] + ln
    pool[p, P_NB] = nbr
    pool[p, P_W] = w
    pool[p, P_REC] = rid
    lst_len[lid] = ln + 1
    return pool


@kernel(NONE(_POOL, _VI64, _VI32, I64, I64))
def _list_remove(pool: np.ndarray, lst_start: np.ndarray, lst_len: np.ndarray, lid: int, nbr: int) -> None:
    s = lst_start[lid]
    ln = lst_len[lid]
    for j in range(s, s + ln):
        if pool[j, P_NB] == nbr:
            last = s + ln - 1
            pool[j, 0] = pool[last, 0]
            pool[j, 1] = pool[last, 1]
            pool[j, 2] = pool[last, 2]
            lst_len[lid] = ln - 1
            return


@kernel(NONE(I64, I64, I64, I64, I64, _POOL, _VI64, _VI32, _WD, _VI64, _VI32, I64, _VI64))
def _witness(
    u: int,
    v: int,
    maxw: int,
    limit: int,
    remaining: int,
    pool: np.ndarray,
    lst_start: np.ndarray,
    lst_len: np.ndarray,
    wd: np.ndarray,
    wk: np.ndarray,
    wn: np.ndarray,
    cur: int,
    st: np.ndarray,
) -> None:
    """Dijkstra from `u` avoiding `v`, up to `limit` settled nodes and keys <= `maxw`.

    `wd[y]` = (dist, dist stamp, target stamp, need): targets are the nodes with target stamp `cur`; a target is
    witnessed (need set to -1) as soon as a path of length <= need is known. Stops once `remaining` targets are.
    """
    cap = wk.shape[0]
    wd[u, W_DIST] = 0
    wd[u, W_STAMP] = cur
    size = heap_push(wk, wn, 0, 0, u)
    pops = 0
    relaxed = 0
    while size > 0:
        k, x, size = heap_pop(wk, wn, size)
        if k != wd[x, W_DIST]:
            continue
        pops += 1
        if pops > limit:
            break
        s = lst_start[2 * x]
        ln = lst_len[2 * x]
        relaxed += ln
        for e in range(s, s + ln):
            y = pool[e, P_NB]
            if y == v:
                continue
            nd = k + pool[e, P_W]
            if nd > maxw:
                continue
            if wd[y, W_STAMP] != cur or nd < wd[y, W_DIST]:
                wd[y, W_STAMP] = cur
                wd[y, W_DIST] = nd
                if wd[y, W_TMARK] == cur and nd <= wd[y, W_NEED]:
                    wd[y, W_NEED] = -1
                    remaining -= 1
                    if remaining == 0:
                        size = 0
                        break
                if size < cap:
                    size = heap_push(wk, wn, size, nd, y)
    st[ST_SETTLED] += pops
    st[ST_RELAXED] += relaxed


@kernel(tup(I64, I64, I64, _PEND)(I64, I64, BOOL, _POOL, _VI64, _VI32, _REC, _WD, _VI64, _VI32, _VI64, _PEND))
def _evaluate(
    v: int,
    limit: int,
    commit: bool,
    pool: np.ndarray,
    lst_start: np.ndarray,
    lst_len: np.ndarray,
    rec: np.ndarray,
    wd: np.ndarray,
    wk: np.ndarray,
    wn: np.ndarray,
    st: np.ndarray,
    pend: np.ndarray,
) -> tuple[int, int, int, np.ndarray]:
    """Shortcuts needed to contract `v`: (count, hops, pending rows written, pending buffer).

    With `commit`, each shortcut is written to `pend` as (u, x, weight, dist, record u->v, record v->x, hops).
    """
    os_ = lst_start[2 * v]
    ol = lst_len[2 * v]
    is_ = lst_start[2 * v + 1]
    il = lst_len[2 * v + 1]
    added = 0
    added_hops = 0
    npend = 0
    if ol == 0 or il == 0:
        return 0, 0, 0, pend
    for i in range(is_, is_ + il):
        u = pool[i, P_NB]
        wuv = np.int64(pool[i, P_W])
        ruv = pool[i, P_REC]
        st[ST_STAMP] += 1
        cur = st[ST_STAMP]
        ntargets = 0
        maxw = np.int64(0)
        for j in range(os_, os_ + ol):
            x = pool[j, P_NB]
            if x == u:
                continue
            need = wuv + pool[j, P_W]
            wd[x, W_TMARK] = cur
            wd[x, W_NEED] = need
            ntargets += 1
            if need > maxw:
                maxw = need
        if ntargets == 0:
            continue
        st[ST_SEARCHES] += 1
        _witness(u, v, maxw, limit, ntargets, pool, lst_start, lst_len, wd, wk, wn, cur, st)
        for j in range(os_, os_ + ol):
            x = pool[j, P_NB]
            if x == u or wd[x, W_NEED] < 0:
                continue
            rvx = pool[j, P_REC]
            hops = min(rec[ruv, R_HOPS] + rec[rvx, R_HOPS], _I32MAX)
            added += 1
            added_hops += hops
            if commit:
                if npend == pend.shape[0]:
                    pend = _grow_rows(pend, 2 * npend)
                pend[npend, 0] = u
                pend[npend, 1] = x
                pend[npend, 2] = wuv + pool[j, P_W]
                pend[npend, 3] = np.int64(rec[ruv, R_D]) + rec[rvx, R_D]
                pend[npend, 4] = ruv
                pend[npend, 5] = rvx
                pend[npend, 6] = hops
                npend += 1
    return added, added_hops, npend, pend


@kernel(F64(I64, I64, I64, _POOL, _VI64, _VI32, _REC, _VI32))
def _priority(
    v: int,
    added: int,
    added_hops: int,
    pool: np.ndarray,
    lst_start: np.ndarray,
    lst_len: np.ndarray,
    rec: np.ndarray,
    level: np.ndarray,
) -> float:
    removed = 1
    removed_hops = 1
    for lid in (2 * v, 2 * v + 1):
        s = lst_start[lid]
        ln = lst_len[lid]
        removed += ln
        for e in range(s, s + ln):
            removed_hops += rec[pool[e, P_REC], R_HOPS]
    return level[v] + added / removed + added_hops / removed_hops


@kernel
def _init_lists(
    n: int, rec: np.ndarray, nrec: int, lst_start: np.ndarray, lst_len: np.ndarray, lst_cap: np.ndarray
) -> np.ndarray:
    """Lay out out/in lists for the base records (cap = len + 2) and fill them; returns the pool."""
    for r in range(nrec):
        lst_cap[2 * rec[r, R_TAIL]] += 1
        lst_cap[2 * rec[r, R_HEAD] + 1] += 1
    total = 0
    for lid in range(2 * n):
        lst_cap[lid] += 2
        lst_start[lid] = total
        total += lst_cap[lid]
    pool = np.empty((2 * total + 16, 3), dtype=np.int32)
    for r in range(nrec):
        lid = 2 * rec[r, R_TAIL]
        p = lst_start[lid] + lst_len[lid]
        pool[p, P_NB] = rec[r, R_HEAD]
        pool[p, P_W] = rec[r, R_W]
        pool[p, P_REC] = r
        lst_len[lid] += 1
        lid = 2 * rec[r, R_HEAD] + 1
        p = lst_start[lid] + lst_len[lid]
        pool[p, P_NB] = rec[r, R_TAIL]
        pool[p, P_W] = rec[r, R_W]
        pool[p, P_REC] = r
        lst_len[lid] += 1
    return pool


@kernel
def _init_priorities(
    lo: int,
    hi: int,
    limit: int,
    pool: np.ndarray,
    lst_start: np.ndarray,
    lst_len: np.ndarray,
    rec: np.ndarray,
    level: np.ndarray,
    prio: np.ndarray,
    wd: np.ndarray,
    wk: np.ndarray,
    wn: np.ndarray,
    st: np.ndarray,
    pend: np.ndarray,
) -> None:
    for v in range(lo, hi):
        a, h, _, _ = _evaluate(v, limit, False, pool, lst_start, lst_len, rec, wd, wk, wn, st, pend)
        prio[v] = _priority(v, a, h, pool, lst_start, lst_len, rec, level)


@kernel(tup(_POOL, _REC)(I64, _PEND, _POOL, _VI64, _VI32, _VI32, _REC, _VI64))
def _commit(
    npend: int,
    pend: np.ndarray,
    pool: np.ndarray,
    lst_start: np.ndarray,
    lst_len: np.ndarray,
    lst_cap: np.ndarray,
    rec: np.ndarray,
    st: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Insert the pending shortcuts (or lower an existing arc u->x in place); returns (pool, rec)."""
    for k in range(npend):
        u = pend[k, 0]
        x = pend[k, 1]
        w = pend[k, 2]
        d = pend[k, 3]
        if w > _I32MAX or d > _I32MAX:
            st[ST_OVERFLOW] = 1
            w = min(w, _I32MAX)
            d = min(d, _I32MAX)
        s = lst_start[2 * u]
        found = -1
        for e in range(s, s + lst_len[2 * u]):
            if pool[e, P_NB] == x:
                found = e
                break
        if found >= 0:
            if w < pool[found, P_W]:
                rid = pool[found, P_REC]
                rec[rid, R_W] = w
                rec[rid, R_D] = d
                rec[rid, R_A] = pend[k, 4]
                rec[rid, R_B] = pend[k, 5]
                rec[rid, R_HOPS] = pend[k, 6]
                pool[found, P_W] = w
                s2 = lst_start[2 * x + 1]
                for e in range(s2, s2 + lst_len[2 * x + 1]):
                    if pool[e, P_NB] == u:
                        pool[e, P_W] = w
                        break
            continue
        rid = st[ST_NREC]
        if rid == rec.shape[0]:
            rec = _grow_rows_i32(rec, rec.shape[0] + rec.shape[0] // 2 + 16)
        rec[rid, R_TAIL] = u
        rec[rid, R_HEAD] = x
        rec[rid, R_W] = w
        rec[rid, R_D] = d
        rec[rid, R_A] = pend[k, 4]
        rec[rid, R_B] = pend[k, 5]
        rec[rid, R_HOPS] = pend[k, 6]
        rec[rid, R_POS] = 0
        st[ST_NREC] = rid + 1
        pool = _list_append(pool, lst_start, lst_len, lst_cap, st, 2 * u, x, w, rid)
        pool = _list_append(pool, lst_start, lst_len, lst_cap, st, 2 * x + 1, u, w, rid)
    return pool, rec


@kernel(NONE(I64, _POOL, _VI64, _VI32, _VI32, _REC, _VI64, _VI32, _VI32, _VI32))
def _finalize_node(
    v: int,
    pool: np.ndarray,
    lst_start: np.ndarray,
    lst_len: np.ndarray,
    lst_cap: np.ndarray,
    rec: np.ndarray,
    st: np.ndarray,
    rank: np.ndarray,
    up_first: np.ndarray,
    down_first: np.ndarray,
) -> None:
    """Give `v` the next rank, make its remaining arcs final (up = out, down = in) and detach it from the graph."""
    r = st[ST_DONE]
    rank[v] = r
    s = lst_start[2 * v]
    for e in range(s, s + lst_len[2 * v]):
        rec[pool[e, P_REC], R_POS] = st[ST_UP]
        st[ST_UP] += 1
        _list_remove(pool, lst_start, lst_len, 2 * pool[e, P_NB] + 1, v)
    s = lst_start[2 * v + 1]
    for e in range(s, s + lst_len[2 * v + 1]):
        rec[pool[e, P_REC], R_POS] = -(st[ST_DOWN] + 1)
        st[ST_DOWN] += 1
        _list_remove(pool, lst_start, lst_len, 2 * pool[e, P_NB], v)
    up_first[r + 1] = st[ST_UP]
    down_first[r + 1] = st[ST_DOWN]
    for lid in (2 * v, 2 * v + 1):
        lst_len[lid] = 0
        lst_cap[lid] = 0
    st[ST_DONE] = r + 1


@kernel(BOOL(_VF64, I64, F64, I64))
def _before(prio: np.ndarray, a: int, pa: float, b: int) -> bool:
    """Node `a` with priority `pa` goes before node `b` (ties on the smaller id)."""
    return pa < prio[b] or (pa == prio[b] and a < b)


@kernel(BOOL(I64, F64, _VF64, _POOL, _VI64, _VI32))
def _is_local_min(
    v: int, pv: float, prio: np.ndarray, pool: np.ndarray, lst_start: np.ndarray, lst_len: np.ndarray
) -> bool:
    for lid in (2 * v, 2 * v + 1):
        s = lst_start[lid]
        for e in range(s, s + lst_len[lid]):
            if not _before(prio, v, pv, pool[e, P_NB]):
                return False
    return True

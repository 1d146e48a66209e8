"""The one numba binary min-heap over flat arrays, for every lazy-deletion search (push again, skip stale on pop).

Entries are (key, node int32); ties on the key break on the smaller node id, so every search is deterministic. Keys
are float64 (A*/ALT potentials) or int64 (Dijkstra, CH witness searches, landmarks): explicit signatures compile
exactly those two versions, whatever integer types the callers pass. The caller owns the arrays (allocated once per
query object) and the current size. It lives in `preprocessing` because contraction and landmark selection use it
too, and `preprocessing` never imports `app`.
"""

from __future__ import annotations

import numpy as np

from floor.kernels.jit import F64, I32, I64, arr, kernel, tup

_PUSH = [I64(arr(k), arr(I32), I64, k, I32) for k in (F64, I64)]
_POP = [tup(k, I32, I64)(arr(k), arr(I32), I64) for k in (F64, I64)]


def new_heap(capacity: int, key_dtype: type = np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Key (float64, or `key_dtype`) and int32 node arrays for a heap of up to `capacity` entries."""
    return np.empty(max(capacity, 1), dtype=key_dtype), np.empty(max(capacity, 1), dtype=np.int32)


@kernel(_PUSH, nrt=False)
def heap_push(keys: np.ndarray, nodes: np.ndarray, size: int, key: float, node: int) -> int:
    """Insert (key, node); returns the new size. Grows never: capacity must cover every push of one search."""
    i = size
    while i > 0:  # sift the hole up; comparisons written out (an inlined helper is markedly slower in numba)
        parent = (i - 1) >> 1
        if key < keys[parent] or (key == keys[parent] and node < nodes[parent]):
            keys[i] = keys[parent]
            nodes[i] = nodes[parent]
            i = parent
        else:
            break
    keys[i] = key
    nodes[i] = node
    return size + 1


@kernel(_POP, nrt=False)
def heap_pop(keys: np.ndarray, nodes: np.ndarray, size: int) -> tuple[float, int, int]:
    """Remove the minimum; returns (key, node, new size). The caller checks size > 0 first."""
    top_key = keys[0]
    top_node = nodes[0]
    size -= 1
    if size > 0:
        key = keys[size]
        node = nodes[size]
        i = 0
        while True:  # sift the hole down
            c = 2 * i + 1
            if c >= size:
                break
            if c + 1 < size and (keys[c + 1] < keys[c] or (keys[c + 1] == keys[c] and nodes[c + 1] < nodes[c])):
                c += 1
            if keys[c] < key or (keys[c] == key and nodes[c] < node):
                keys[i] = keys[c]
                nodes[i] = nodes[c]
                i = c
            else:
                break
        keys[i] = key
        nodes[i] = node
    return top_key, top_node, size

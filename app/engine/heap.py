"""A numba binary min-heap over flat arrays, for lazy-deletion searches (push again, skip stale entries on pop).

Entries are (key float64, node int32); ties on the key break on the smaller node id, so every search is
deterministic. The caller owns the arrays (allocated once per query object) and the current size.
"""

from __future__ import annotations

import numba as nb
import numpy as np


def new_heap(capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """Key and node arrays for a heap of up to `capacity` entries."""
    return np.empty(max(capacity, 1), dtype=np.float64), np.empty(max(capacity, 1), dtype=np.int32)


@nb.njit(cache=True, nogil=True)
def heap_push(keys: np.ndarray, nodes: np.ndarray, size: int, key: float, node: int) -> int:
    """Insert (key, node); returns the new size. Grows never: capacity must cover every push of one search."""
    i = size
    keys[i] = key
    nodes[i] = node
    while i > 0:
        parent = (i - 1) >> 1
        if keys[i] < keys[parent] or (keys[i] == keys[parent] and nodes[i] < nodes[parent]):
            keys[i], keys[parent] = keys[parent], keys[i]
            nodes[i], nodes[parent] = nodes[parent], nodes[i]
            i = parent
        else:
            break
    return size + 1


@nb.njit(cache=True, nogil=True)
def heap_pop(keys: np.ndarray, nodes: np.ndarray, size: int) -> tuple[float, int, int]:
    """Remove the minimum; returns (key, node, new size). The caller checks size > 0 first."""
    key = keys[0]
    node = nodes[0]
    size -= 1
    if size > 0:
        keys[0] = keys[size]
        nodes[0] = nodes[size]
        i = 0
        while True:
            left = 2 * i + 1
            if left >= size:
                break
            best = left
            right = left + 1
            if right < size and (
                keys[right] < keys[left] or (keys[right] == keys[left] and nodes[right] < nodes[left])
            ):
                best = right
            if keys[best] < keys[i] or (keys[best] == keys[i] and nodes[best] < nodes[i]):
                keys[i], keys[best] = keys[best], keys[i]
                nodes[i], nodes[best] = nodes[best], nodes[i]
                i = best
            else:
                break
    return key, node, size

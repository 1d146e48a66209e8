"""What the time-profile arrays (`td_factor`, `td_arc_row`) mean, in plain numpy: the factor of a percent of free flow,
the travel-time function of an arc at a week time, and the FIFO rule (docs/DESIGN.md "Metrics"; the engine's njit
twin follows the same formula). Used to build and check the arrays, and by the tests as their reference.
"""

from __future__ import annotations

import numpy as np

from floor.format.units import SLOT_DS, SLOTS, TD_ONE, WEEK_DS

HALF_SLOT_DS = SLOT_DS // 2  # a slot's factor holds at its midpoint
FIFO_SLACK = SLOT_DS * TD_ONE  # d * (f[k] - f[k+1]) may not exceed this (arrival never earlier for a later start)


def pct_factor(pct: np.ndarray) -> np.ndarray:
    """int64 factors in 1/TD_ONE of percents of free-flow speed: round(TD_ONE * 100 / pct)."""
    return np.rint(TD_ONE * 100.0 / np.asarray(pct, dtype=np.float64)).astype(np.int64)


def ttf(d: int | np.ndarray, row: np.ndarray, tau: int | np.ndarray) -> np.ndarray:
    """Deciseconds to travel an arc of static duration `d` ds timed by the factor row `row` ([SLOTS]) when entered at
    week time `tau` (ds since Monday 00:00 local; any integer, taken modulo the week): round(d * F(tau)), F linear
    between slot midpoints and wrapping around the week; int64 arithmetic, exactly the engine's."""
    f = np.asarray(row, dtype=np.int64)
    t = np.mod(np.asarray(tau, dtype=np.int64), WEEK_DS)
    s = np.mod(t - HALF_SLOT_DS, WEEK_DS)
    k = s // SLOT_DS
    r = s - k * SLOT_DS
    k1 = np.mod(k + 1, SLOTS)
    num = np.asarray(d, dtype=np.int64) * (f[k] * (SLOT_DS - r) + f[k1] * r) + SLOT_DS * (TD_ONE // 2)
    return num // (SLOT_DS * TD_ONE)


def max_drop(rows: np.ndarray) -> np.ndarray:
    """Per row ([R, SLOTS]) the largest decrease of the factor from one slot to the next (cyclically), int64 (0 when
    it never decreases)."""
    f = np.asarray(rows, dtype=np.int64)
    return np.maximum((f - np.roll(f, -1, axis=1)).max(axis=1, initial=0), 0)


def fifo_holds(d: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per arc of static duration `d` timed by `rows` ([len(d), SLOTS]): whether arriving later never follows
    leaving earlier (d * (f[k] - f[k+1]) <= SLOT_DS * TD_ONE for every slot k)."""
    return np.asarray(d, dtype=np.int64) * max_drop(rows) <= FIFO_SLACK


def repair_fifo(rows: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Rows ([V, SLOTS]) made FIFO for arcs of static durations `d` ([V]): every decrease capped at
    floor(SLOT_DS * TD_ONE / d) (f[k] = min(f[k], f[k+1] + cap), cyclically, to a fixed point). Factors only go
    down, never below the row's minimum."""
    f = np.array(rows, dtype=np.int64)
    cap = FIFO_SLACK // np.maximum(np.asarray(d, dtype=np.int64), 1)
    while True:
        changed = False
        for k in range(SLOTS - 1, -1, -1):
            lim = f[:, (k + 1) % SLOTS] + cap
            over = f[:, k] > lim
            if over.any():
                f[over, k] = lim[over]
                changed = True
        if not changed:
            return f

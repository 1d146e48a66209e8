"""The lower-bound hierarchies of departure time's potentials (issue 44): the weekly one, and those of a fixed grid
of time windows, each customized once and kept within a memory budget.

TD-A*'s CH potentials (`app.engine.search.timedep`) are exact distances on a *lower-bound metric*: each profiled arc
at its static duration times a per-row factor that no entry time in the search can go below. The weekly minimum is
always valid but loose at rush hour (free flow where every main road takes twice that). A search departing at tau0
whose best arrival is at most U (a feasible path's arrival) only settles nodes entered in [tau0, U], so the factors'
minimum over any window holding [tau0, U] is valid too (docs/DESIGN.md, "Window potentials").

The windows are a fixed grid: they start on a quarter hour (the quarter hour holding tau0) and last one of
`LENGTHS` (30 min to 2 h; the shortest that reaches U; none: the weekly bounds). Their per-row minima (`grid`) are
computed once per graph, vectorised, and windows with equal minima share one hierarchy (for a weekday rush hour on
one profile: two hierarchies besides the weekly one, whatever the weekday). `prepare` customizes the distinct
windows, most used first, while their hierarchies fit `BUDGET_BYTES`; a window left out, or asked before `prepare`
ran, is customized in the background (nice 19) only while the budget has room, and meanwhile the tightest kept
hierarchy valid for it serves (the weekly one at worst). Nothing is ever evicted, so a hierarchy is customized at most
once per graph. A window hierarchy shares the weekly one's topology arrays and keeps only each arc's head and weight.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from app.engine.search.cch import customize, has_cch
from app.engine.search.timedep import TDArrays, TDHierarchy, hierarchy_of, lower_bound_weights
from floor.format.units import SLOT_DS, SLOTS, TD_ONE

LENGTHS = (2, 3, 4, 6, 8)  # window lengths in quarter hours: 30, 45, 60, 90, 120 minutes
STEP = TD_ONE // 8  # window minima are rounded down to this, so that near-equal windows share a hierarchy
BUDGET_BYTES = 160 << 20  # the window hierarchies kept per worker, besides the weekly one (Porto: 2 x 10 MB)


def grid(factor: np.ndarray) -> np.ndarray:
    """int32 [len(LENGTHS), SLOTS, P]: per window length and start slot s, each row's minimum factor over week times
    [s * SLOT_DS, (s + L) * SLOT_DS] (the piecewise-linear factor's minimum there: at the ends, halfway between two
    midpoints, or a midpoint inside; as `timedep.window_minimum`), rounded down to STEP, never below the row's weekly
    minimum."""
    f = np.asarray(factor, dtype=np.int64)
    weekly = f.min(axis=1, keepdims=True)
    edge = (np.roll(f, 1, axis=1) + f) // 2  # the factor at the start of each slot
    out = np.empty((len(LENGTHS), SLOTS, f.shape[0]), np.int32)
    run = f.copy()  # the smallest midpoint factor of slots s .. s + L - 1
    have = 1
    for i, length in enumerate(LENGTHS):
        while have < length:
            run = np.minimum(run, np.roll(f, -have, axis=1))
            have += 1
        lo = np.minimum(np.minimum(edge, np.roll(edge, -length, axis=1)), run)
        out[i] = np.maximum(lo // STEP * STEP, weekly).T
    return out


def _lower_priority() -> None:
    """The customizing thread at nice 19 (as custom models' customization): requests preempt it."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass


class LowerBounds:
    """A graph's lower-bound hierarchies (module docstring): the weekly one, the grid windows' within the budget."""

    def __init__(self, search: Any, arrays: TDArrays, budget: int = BUDGET_BYTES) -> None:
        self.search = search
        self.arrays = arrays
        self.budget = budget
        self.weekly_key = arrays.row_min.tobytes()
        self.customizations = 0
        self.seconds = 0.0
        self._grid: np.ndarray | None = None
        self._weekly: TDHierarchy | None = None
        self._kept: dict[bytes, tuple[np.ndarray, TDHierarchy]] = {}  # window minima -> (minima, hierarchy)
        self._pending: set[bytes] = set()
        self._builder: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()

    # ------------------------------------------------------------------------------------------------- the windows
    def window(self, tau0: int, upper: int) -> np.ndarray:
        """The per-row minima of the grid window holding [tau0, upper] (the weekly minima when none does)."""
        start = tau0 // SLOT_DS
        for i, length in enumerate(LENGTHS):
            if (start + length) * SLOT_DS >= upper:
                if self._grid is None:
                    self._grid = grid(self.arrays.factor)
                return self._grid[i, start % SLOTS].astype(np.int64)
        return self.arrays.row_min

    def distinct(self) -> list[np.ndarray]:
        """The grid windows' distinct minima other than the weekly ones, the most used first."""
        if self._grid is None:
            self._grid = grid(self.arrays.factor)
        flat = self._grid.reshape(-1, self._grid.shape[2]).astype(np.int64)
        rows, counts = np.unique(flat, axis=0, return_counts=True)
        order = np.argsort(-counts, kind="stable")
        return [rows[i] for i in order if rows[i].tobytes() != self.weekly_key]

    # --------------------------------------------------------------------------------------------- the hierarchies
    @property
    def weekly(self) -> TDHierarchy | None:
        """The CCH customized on the weekly lower bounds (None: the graph has no CCH)."""
        if not has_cch(self.search):
            return None
        if self._weekly is None:
            with self._build_lock:
                if self._weekly is None:
                    self._weekly = self._customize(self.arrays.row_min)
        return self._weekly

    def nbytes(self) -> int:
        """Bytes held by the kept hierarchies (an array shared by several counted once)."""
        seen: dict[int, int] = {}
        with self._lock:
            for h in [self._weekly, *(h for _, h in self._kept.values())]:
                for a in h or ():
                    seen[id(a)] = a.nbytes
        return sum(seen.values())

    def kept(self) -> int:
        """How many window hierarchies are kept."""
        return len(self._kept)

    def _room(self) -> bool:
        weekly = self.weekly
        if weekly is None:
            return False
        each = 2 * 4 * (weekly.up_arcs.shape[0] + weekly.down_arcs.shape[0]) + 4 * weekly.up_first.shape[0] * 2
        return (len(self._kept) + len(self._pending) + 1) * each <= self.budget

    def prepare(self) -> int:
        """Customize the grid windows' hierarchies now, most used first, while the budget has room (a server's
        warm-up: none is then customized while serving); how many were customized."""
        if self.weekly is None:
            return 0
        done = 0
        for mins in self.distinct():
            with self._lock:
                if mins.tobytes() in self._kept:
                    continue
                if not self._room():
                    break
            self._build(mins)
            done += 1
        return done

    def for_window(self, mins: np.ndarray) -> TDHierarchy | None:
        """A hierarchy valid for per-row minima `mins`: theirs when kept, else the tightest kept one whose minima are
        all at most `mins` (the weekly one at worst), theirs then customized in the background if the budget has
        room."""
        weekly = self.weekly
        key = mins.tobytes()
        if weekly is None or key == self.weekly_key:
            return weekly
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                return found[1]
            if key not in self._pending and not self._pending and self._room():
                if self._builder is None:
                    self._builder = ThreadPoolExecutor(1, "starroute-td-windows", initializer=_lower_priority)
                self._pending.add(key)
                self._builder.submit(self._build, mins.copy())
            usable = [(int(m.sum()), h) for m, h in self._kept.values() if np.all(m <= mins)]
        return max(usable, key=lambda x: x[0])[1] if usable else weekly

    def _customize(self, mins: np.ndarray) -> TDHierarchy:
        g, s = self.arrays, self.search
        t0 = time.perf_counter()
        lbw = lower_bound_weights(g._replace(row_min=np.asarray(mins, np.int64)))
        forbid = g.node_dur[g.arc_head] < 0
        h = hierarchy_of(customize(s, weight=lbw, dist=np.asarray(s.arc_dist), duration=lbw, forbidden=forbid))
        self.seconds += time.perf_counter() - t0
        self.customizations += 1
        return h

    def _build(self, mins: np.ndarray) -> None:
        """Customize and keep the hierarchy of window minima `mins` (sharing the weekly one's topology)."""
        key = mins.tobytes()
        try:
            weekly = self.weekly
            assert weekly is not None
            with self._build_lock:  # one customization at a time (about 0.5 s and 40 MB at its peak on Porto)
                if key in self._kept:
                    return
                h = self._customize(mins)

            def shared(name: str) -> np.ndarray:  # the weekly one's array when equal (perfect customization may drop
                mine, theirs = getattr(h, name), getattr(weekly, name)  # arcs, so the offsets can differ)
                return theirs if np.array_equal(mine, theirs) else mine

            slim = TDHierarchy(
                shared("rank"),
                shared("up_first"),
                np.ascontiguousarray(h.up_arcs[:, :2]),
                shared("down_first"),
                np.ascontiguousarray(h.down_arcs[:, :2]),
            )
            with self._lock:
                self._kept[key] = (np.asarray(mins, np.int64).copy(), slim)
        finally:
            with self._lock:
                self._pending.discard(key)

    def wait(self) -> None:
        """Until the background customizations asked for so far are done (tests and benchmarks)."""
        while True:
            with self._lock:
                if not self._pending:
                    return
            time.sleep(0.01)

    def stop_threads(self) -> None:
        """End the background customization thread, once its work is done (before a fork)."""
        if self._builder is not None:
            self._builder.shutdown(wait=True)
            self._builder = None

"""Trips (OSRM's `/trip`): the order to visit a request's points in, chosen on the CH table, and the route through them
in that order.

OSRM's rules (osrm-backend 26, `src/engine/plugins/trip.cpp`), kept here:

- The tour is chosen on the table's *durations* (`ManyToManySearch(...).first`: the travel times, in deciseconds, of
  the least-weight paths between the snapped points), not on its weights; the legs are then routed by weight like any
  route, without `continue_straight` at the points (OSRM passes false), so each leg is the table's path.
- One unreachable pair (the whole table counts, whatever the fixed ends) answers `NoTrips`. OSRM 5 split a request
  into one trip per strongly connected component; OSRM 26 does not, and neither do we: `trips` holds one trip.
- Fixed ends are written into the table and the round-trip solver runs on it (`FORBIDDEN` is OSRM's
  `INVALID_EDGE_DURATION`): `source=first` with `destination=last` forbids every arc into the first point, every arc
  out of the last one and the direct first -> last arc, and makes last -> first free, so the tour is a path from the
  first to the last; `roundtrip=false` with only `source=first` makes every arc into the first point free (a path
  from it, ending anywhere), with only `destination=last` every arc out of the last point (a path ending there).
- The tour is rotated to start at the first point, unless only the end is fixed: then it starts at the last point on
  a round trip, right after it otherwise. A round trip's route comes back to its start.
- `waypoint_index` of a point is its place in the trip; `trips_index` is 0.

The solver (`app.engine.features.tsp`) is exact up to `EXACT_MAX` points (OSRM: 15) and beats OSRM's farthest
insertion +
2-opt above, starting from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from app.engine.errors import NoTrips
from app.engine.features.tsp import EXACT_MAX, FORBIDDEN, solve, tour_cost
from app.engine.types import Phantom, RouteOptions, RouteResult
from floor.format.units import CLOSED_DS, INF_WEIGHT

if TYPE_CHECKING:
    from app.engine.router import Query

NO_TRIPS = "No trip visiting all destinations possible."


@dataclass(frozen=True)
class TripPlan:
    """The visiting order (indices of the request's points, the start first, not repeated at the end), the solver's
    cost of it on the rewritten table (ds), and whether the solver proved it optimal."""

    order: list[int]
    cost: int
    exact: bool


def rewrite(durations: np.ndarray, roundtrip: bool, fixed_start: bool, fixed_end: bool) -> np.ndarray:
    """OSRM's table for the round-trip solver (`ManipulateTableForFSE`, `...NonRoundtripFS`, `...NonRoundtripFE`):
    a copy of `durations` (int64 [n, n]) with the fixed ends written in."""
    c = np.array(durations, dtype=np.int64)
    n = c.shape[0]
    first, last = 0, n - 1
    if fixed_start and fixed_end:
        keep = c[first, first]
        c[:, first] = FORBIDDEN
        c[first, first] = keep
        row = c[last, last]
        c[last, :] = FORBIDDEN
        c[last, last] = row
        c[last, first] = 0
        c[first, last] = FORBIDDEN
    elif not roundtrip and fixed_start:
        c[:, first] = 0
    elif not roundtrip and fixed_end:
        c[last, :] = 0
    return c


def plan(durations: np.ndarray, roundtrip: bool, fixed_start: bool, fixed_end: bool) -> TripPlan:
    """The visiting order for a table of durations (int64 [n, n] ds, `INF_WEIGHT` where unreachable): OSRM's
    checks, table and rotation around `app.engine.features.tsp.solve`. `NoTrips` when a pair is unreachable."""
    n = durations.shape[0]
    if n and (np.asarray(durations) >= INF_WEIGHT).any():
        raise NoTrips(NO_TRIPS)
    c = rewrite(durations, roundtrip, fixed_start, fixed_end)
    tour = solve(c).tolist()
    cost = int(tour_cost(c, np.asarray(tour, dtype=np.int64))) if n else 0
    if fixed_start and fixed_end and n > 2 and cost >= FORBIDDEN:  # a safeguard: the search always finds one
        tour = [0, *(i for i in tour if i not in (0, n - 1)), n - 1]
        cost = int(tour_cost(c, np.asarray(tour, dtype=np.int64)))
    if n:
        if not fixed_end or fixed_start:
            at = tour.index(0)
        else:
            at = tour.index(n - 1) + (0 if roundtrip else 1)
        tour = tour[at % n :] + tour[: at % n]
    return TripPlan(tour, cost, n <= EXACT_MAX)


def trip(
    query: Query,
    phantoms: Sequence[Phantom],
    options: RouteOptions,
    roundtrip: bool = True,
    fixed_start: bool = False,
    fixed_end: bool = False,
) -> tuple[TripPlan, RouteResult]:
    """The plan on the table between `phantoms` (durations of the least-weight paths, on the hierarchy without the
    options' exclude set), and the route through the phantoms in its order (back to the start on a round trip), each
    leg on its own (no `continue_straight`, as OSRM)."""
    weights, _, durations = query.table_units(phantoms, phantoms, options.exclude)
    durations = np.where(weights >= CLOSED_DS, INF_WEIGHT, durations)  # unreachable, or over a closed road
    p = plan(durations, roundtrip, fixed_start, fixed_end)
    stops = [phantoms[i] for i in p.order]
    if roundtrip:
        stops.append(stops[0])
    return p, query.routes(stops, replace(options, continue_straight=False, alternatives=0))

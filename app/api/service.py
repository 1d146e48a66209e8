"""The state both APIs share: the loaded graph, the router, the search thread pool, metrics, and the calls into them.

CH searches are short (well under a millisecond on city graphs) and run inline on the event loop; every other
algorithm and large tables run in a thread pool (the numba kernels release the GIL) under the request time limit.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from app.api.health import Metrics
from app.engine.errors import InvalidValue, NoSegment, TooBig
from app.engine.types import Phantom, Route, RouteOptions, RouteResult, Table
from app.settings import Settings

T = TypeVar("T")

INLINE_ALGORITHMS = frozenset({"ch"})
INLINE_TABLE_CELLS = 16  # tables up to this many cells run inline when the router answers them with CH


def check_coordinate(lon: float, lat: float) -> None:
    """OSRM's coordinate check: finite, longitude -180..180, latitude -90..90, else `InvalidValue`."""
    if not (math.isfinite(lon) and math.isfinite(lat) and -180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0):
        raise InvalidValue("Invalid coordinate value.")


class Service:
    """One per worker process, created by `create_app` and opened by its lifespan."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.graph: Any = None
        self.router: Any = None
        self.pool: ThreadPoolExecutor | None = None
        self.version = _version()
        self._slow_pending = 0

    # lifecycle -----------------------------------------------------------------------------------------------------
    def open(self) -> None:
        """Memory-map the graph and build the router (raises `GraphError` on a bad graph directory)."""
        from app.engine.data import load
        from app.engine.router import Router

        self.graph = load(self.settings.graph_dir)
        self.router = Router(
            self.graph,
            max_snap_m=self.settings.max_snap_radius_m,
            min_component_size=self.settings.min_component_size,
        )
        self.pool = ThreadPoolExecutor(self.settings.threads, thread_name_prefix="starroute-search")

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None

    # helpers -------------------------------------------------------------------------------------------------------
    def check_algorithm(self, algorithm: str) -> None:
        if algorithm not in self.router.algorithms:
            available = ", ".join(self.router.algorithms)
            raise InvalidValue(f"algorithm {algorithm!r} is not available on this graph (available: {available})")

    def snap_all(
        self,
        coords: Sequence[tuple[float, float]],
        radiuses: Sequence[float | None] | None = None,
        bearings: Sequence[tuple[float, float] | None] | None = None,
        default_radius_m: float | None = None,
        detail: bool = False,
        exclude_mask: int = 0,
        approaches: Sequence[str | None] | None = None,
    ) -> list[Phantom]:
        """Snap the coordinates of one request together (range-checked already; the tiny-component rule applies).

        A missing radius is `default_radius_m` (None: unlimited, as OSRM). `NoSegment` says "Could not find a
        matching segment for coordinate i", with `detail` followed by how far the nearest road is.
        """
        if default_radius_m is not None:
            radiuses = [default_radius_m if r is None else r for r in (radiuses or [None] * len(coords))]
        try:
            return self.router.snap_waypoints(coords, radiuses, bearings, exclude_mask, approaches)
        except NoSegment as exc:
            msg = f"Could not find a matching segment for coordinate {exc.index or 0}"
            if detail:
                msg += ": " + exc.message.split(": ", 1)[-1]
            raise NoSegment(msg) from None

    def nearest(
        self, lon: float, lat: float, number: int, radius_m: float | None = None, exclude_mask: int = 0
    ) -> list[Phantom]:
        """Up to `number` snapped points, nearest first (within `radius_m` when given); `NoSegment` when none."""
        try:
            found = self.router.nearest(lon, lat, number, exclude_mask=exclude_mask)
            found = [ph for ph in found if radius_m is None or ph.distance_m <= radius_m]
        except NoSegment:
            found = []
        if not found:
            raise NoSegment("Could not find a matching segment for coordinate 0")
        return found

    async def run_slow(self, fn: Callable[[], T]) -> T:
        """Run `fn` in the search pool under the request time limit (TooBig when exceeded or the queue is full)."""
        assert self.pool is not None, "service not opened"
        limit = self.settings.request_time_limit_s
        if self._slow_pending >= 8 * self.settings.threads:
            raise TooBig("Too many long searches queued; retry later or use algorithm=ch")
        self._slow_pending += 1
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            message = f"Search exceeded the request time limit of {limit:g} s"
            try:
                result = await asyncio.wait_for(loop.run_in_executor(self.pool, fn), timeout=limit)
            except TimeoutError:
                raise TooBig(message) from None
            if loop.time() - started > limit:  # an answer that came in just late is refused too
                raise TooBig(message)
            return result
        finally:
            self._slow_pending -= 1

    # searches ------------------------------------------------------------------------------------------------------
    async def route(self, phantoms: list[Phantom], algorithm: str = "ch", options: RouteOptions | None = None) -> Route:
        """Route through `phantoms` in order; inline for CH, in the pool for the rest."""
        return (await self.routes(phantoms, algorithm, options)).best

    async def routes(
        self, phantoms: list[Phantom], algorithm: str = "ch", options: RouteOptions | None = None
    ) -> RouteResult:
        """The routes (best first) and traces of a request; inline for CH, in the pool for the rest."""
        router = self.router
        opts = options or RouteOptions(algorithm=algorithm)

        def run() -> RouteResult:
            return router.query().routes(phantoms, opts, algorithm)

        fast = algorithm in INLINE_ALGORITHMS and not opts.trace and not opts.alternatives
        result = run() if fast else await self.run_slow(run)
        for leg in result.best.legs:
            self.metrics.observe_search(result.best.algorithm, leg.stats.settled)
        return result

    def exclude_mask(self, classes: Sequence[str] | None) -> int:
        """The `arc_flags` bits of excluded classes (validated: `InvalidValue` for a set the profile does not offer)."""
        ex = self.router.exclude_set(classes or ())
        return 0 if ex is None else ex.mask

    async def table(self, sources: list[Phantom], destinations: list[Phantom], exclude: Sequence[str] = ()) -> Table:
        """Many-to-many durations and distances (NaN where unreachable)."""
        router = self.router

        def run() -> Table:
            return router.query().table(sources, destinations, exclude)

        if len(sources) * len(destinations) <= INLINE_TABLE_CELLS:
            return run()
        return await self.run_slow(run)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("starroute")
    except Exception:  # noqa: BLE001 - not installed as a package
        return "0+unknown"

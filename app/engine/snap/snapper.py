"""Snapping: any lon/lat to the nearest point of the nearest road segment (OSRM's phantom nodes).

The index is a packed R-tree (OSRM's `StaticRTree`): every geometry-chain segment some arc runs on, sorted along a
Hilbert curve by bounding-box centre, 16 per leaf, 16 children per inner node, boxes in the graph's own int32
fixed-point coordinates. Queries are best-first (Hjaltason & Samet): a heap of tree nodes keyed by their box's
distance and of segments keyed by their exact point-to-segment distance, both measured in one equirectangular frame
centred on the query point. A segment popped from the heap is therefore exactly the nearest remaining one, whatever
the segment lengths; k-nearest, radius limits and filters come for free. A waypoint's nearest is then OSRM's on
near-ties (`_nearest_osrm`: OSRM orders segments by a distance rounded to 1e-6 degrees in Web Mercator).

Components as OSRM treats them. Two trees split the snappable segments (ferries are no start points, as in OSRM's
profiles): those of *big* strongly connected components (at least `min_component_size` nodes, OSRM's default 1000;
the largest one too is tiny below that, as in OSRM) and those of *tiny* ones. `candidates` finds a point's nearest
segment of any kind and its nearest big one; `choose` applies OSRM's rule over all points of a request
(`SnapPhantomNodes`): when every point's nearest segment lies in one and the same tiny component, the request runs
there; otherwise each point whose nearest segment is tiny moves to its nearest big one (where there is none, as on a
small map whose components are all tiny, it stays). So a route inside an island stays on the island, a point next to
a car park still reaches the main network, and on a small map a point on a one-way dead end is routed to where it
is.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.engine.data import ChainIndex, chain_index, no_start_arcs
from app.engine.errors import InvalidValue, NoSegment
from app.engine.geo import gc_distance_m
from app.engine.snap.index import SnapIndex, SnapMetric, Tree, segment_directions
from app.engine.snap.kernels import _nearest_osrm, _nearest_point, _osrm_vertex, _snap_point
from app.engine.snap.osrm_snap import _chain_offset, _phantom_figures, chain_end_kind
from app.engine.snap.snap_input import check_bearing, check_coordinate, check_radius, snap_latitude
from app.engine.types import HotPath, Phantom, new_phantom
from floor.format.graph import Graph
from floor.format.units import COORD_SCALE
from floor.kernels.jit import Entries

OSRM_NEAR_CHAINS = 8  # chains a point's nearest is chosen from in OSRM's order (`_nearest_osrm`)
OSRM_SLACK_M = 0.5  # ... those within this of the nearest: OSRM's 1e-6 rounding moves a distance by ~0.16 m at most
# the two one-call kernels without numba's per-call typing (`Entries`), kept per index, metric and direction arrays
_SNAP_POINT = Entries(_snap_point)
_NEAREST_POINT = Entries(_nearest_point)
MIN_COMPONENT_SIZE = 1000  # OSRM's default (osrm-extract --small-component-size): smaller SCCs are tiny


_Found = tuple[float, int, Phantom, list[tuple[int, int, float]]]  # a tree's hit: distance m, tree, phantom, others


def _human_m(d: float) -> str:
    return f"{d / 1000:.1f} km" if d >= 10_000 else f"{d:.0f} m"


haversine = gc_distance_m  # great-circle metres between two degree coordinates (the one implementation, app.engine.geo)


@dataclass(frozen=True)
class Candidates:
    """What snapping found for one point: its nearest segment, and its nearest segment in a big component.

    `big` is `nearest` itself when that is big, None when no big segment lies within the radius.
    """

    nearest: Phantom
    big: Phantom | None
    alternatives: tuple[Phantom, ...] = ()  # `nearest`'s point on other chains (OSRM's candidates at that point)

    @property
    def tiny(self) -> bool:
        return self.big is not self.nearest


def choose(cands: Sequence[Candidates]) -> list[Phantom]:
    """OSRM's rule for a whole request: the nearest segments when all lie in one tiny component (or no point has a
    big one), else each point's big-component segment where it has one."""
    if not cands:
        return []
    comps = {c.nearest.component for c in cands}
    same_tiny = len(comps) == 1 and cands[0].tiny
    if same_tiny or all(c.big is None for c in cands):
        chosen = [c.nearest for c in cands]
    else:
        chosen = [c.big if c.big is not None else c.nearest for c in cands]
    return _onto_next_chain(chosen, cands)


def _onto_next_chain(chosen: list[Phantom], cands: Sequence[Candidates]) -> list[Phantom]:
    """Each point with a candidate on the next point's chain moves onto it: OSRM takes every segment at a point as
    a candidate, so a leg from a junction to a point on one of its roads runs along that road alone."""
    out = list(chosen)
    for i in range(len(out) - 1):
        if out[i] is not cands[i].nearest or out[i].chain == out[i + 1].chain:
            continue
        alt = next((a for a in cands[i].alternatives if a.chain == out[i + 1].chain), None)
        if alt is not None:
            out[i] = alt
    return out


class Snapper:
    """Spatial index over every snappable geometry-chain segment; immutable and thread-safe once built.

    `min_component_size`: strongly connected components with fewer nodes are tiny (the largest too, as in OSRM).

    >>> ph = Snapper(graph).snap(7.4200, 43.7350)  # doctest: +SKIP
    """

    def __init__(
        self, graph: Graph, chains: ChainIndex | None = None, min_component_size: int = MIN_COMPONENT_SIZE,
        hot_path: HotPath | None = None,
    ) -> None:  # fmt: skip
        t0 = time.perf_counter()
        self.graph = graph
        # one kernel call per point (`_snap_point`, `_nearest_point`) or step by step (`_steps`): the router's switch
        self.hot_path = hot_path if hot_path is not None else HotPath()
        self.chains = chains if chains is not None else chain_index(graph)
        self.min_component_size = int(min_component_size)
        self._glon = graph.geom_lon
        self._arc_time = graph.arc_duration
        none = np.zeros((0, 4), dtype=np.int32)  # graphs built before the per-segment values: split by length
        self._seg_weight = graph.geom_seg_weight if graph.has("geom_seg_weight") else none
        self._seg_time = graph.geom_seg_duration if graph.has("geom_seg_duration") else none
        self._glat = graph.geom_lat
        gf = np.asarray(graph.geom_first, dtype=np.int64)
        self._gf = gf
        ch = self.chains
        # OSRM's rule, with no exception for the largest component: where every component is tiny (a small map),
        # no point has a big alternative and each stays on its nearest segment
        self.big_chain = ch.snappable & (ch.component_size >= self.min_component_size)
        nseg = np.maximum(np.diff(gf) - 1, 0)
        nseg[~ch.snappable] = 0
        seg_chain = np.repeat(np.arange(len(nseg), dtype=np.int64), nseg)
        local = np.arange(seg_chain.shape[0], dtype=np.int64) - np.repeat(np.cumsum(nseg) - nseg, nseg)
        seg = gf[:-1][seg_chain] + local
        big = self.big_chain[seg_chain]
        self._big, self._tiny = (Tree(seg[mask], seg_chain[mask], self._glon, self._glat) for mask in (big, ~big))
        # the kernels' index (the trees, the geometry and the chains) and metric arrays, built once
        self.index = SnapIndex(
            self._big.arrays, self._tiny.arrays, self._glon, self._glat, gf, ch.fwd_arc, ch.bwd_arc, ch.first_node,
            ch.last_node, ch.component, ch.osrm_flip,
        )  # fmt: skip
        self.metric = self._metric_arrays()
        self.num_segments = int(seg.shape[0])
        self._no_start = no_start_arcs(graph)  # private service roads: no waypoint, but map matching
        self._masked: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray, bool]] = {}
        if self._no_start is None:
            self._masked[(0, True)] = (ch.fwd_arc, ch.bwd_arc, False)
        self._masked[(0, False)] = (ch.fwd_arc, ch.bwd_arc, False)
        self._closed: np.ndarray | None = None  # bool per arc: roads a custom model closed (`with_metric`)
        self.build_seconds = time.perf_counter() - t0

    def with_metric(self, graph: Graph, closed: np.ndarray | None) -> Snapper:
        """This snapper over `graph` (other weights, same shape): the same index, phantoms priced on the new arrays,
        and no point snapped onto a `closed` road arc (bool per arc, a custom model's closed roads)."""
        s = copy.copy(self)
        s.graph = graph
        s._arc_time = graph.arc_duration
        if graph.has("geom_seg_weight") and graph.has("geom_seg_duration"):  # a phantom's part of its segment
            s._seg_weight, s._seg_time = graph.geom_seg_weight, graph.geom_seg_duration
        s.metric = s._metric_arrays()
        s._closed = closed
        s._masked = {k: v for k, v in self._masked.items() if not v[2]} if closed is None else {}
        return s

    def _metric_arrays(self) -> SnapMetric:
        """The kernels' metric arrays (`SnapMetric`) of this snapper's graph (a copy for another metric has its own,
        `with_metric`)."""
        g = self.graph
        return SnapMetric(
            g.arc_weight, g.arc_dist, g.arc_name, g.node_osm_id, self._arc_time, self._seg_weight, self._seg_time
        )

    def _dir_arcs(self, exclude_mask: int, starts: bool = True) -> tuple[np.ndarray, np.ndarray, bool]:
        """The chain -> arc tables with arcs of excluded classes (`arc_flags & exclude_mask`), roads a custom model
        closed and, for waypoints (`starts`), roads that refuse them (`data.no_start_arcs`), replaced by -1."""
        got = self._masked.get((exclude_mask, starts))
        if got is None:
            flags = np.asarray(self.graph.arc_flags)
            out = []
            for arcs in (self.chains.fwd_arc, self.chains.bwd_arc):
                bad = (arcs >= 0) & ((flags[np.maximum(arcs, 0)] & exclude_mask) != 0)
                if self._closed is not None:
                    bad |= (arcs >= 0) & self._closed[np.maximum(arcs, 0)]
                if starts and self._no_start is not None:
                    bad |= (arcs >= 0) & self._no_start[np.maximum(arcs, 0)]
                out.append(np.where(bad, -1, arcs).astype(np.int32))
            got = self._masked[(exclude_mask, starts)] = (out[0], out[1], True)
        return got

    # -- queries ---------------------------------------------------------------------------------------------------

    def candidates(
        self,
        lon: float,
        lat: float,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
        any_edge: bool = False,
    ) -> Candidates:
        """The nearest segment within `radius_m` metres (None = unlimited) and the nearest big-component one.

        `bearing` = (degrees clockwise from north 0..360, tolerance 0..180) keeps only segments travelled that way
        (OSRM's `bearings`), and the phantom then allows only the matching direction(s). `NoSegment` when nothing lies
        within the radius; its message gives the distance to the nearest road when a radius excluded it. With
        `exclude_mask`, arcs whose `arc_flags` meet it are no roads here (excluded classes, as OSRM's nearest);
        `any_edge` (OSRM's `snapping=any`): roads that refuse waypoints are candidates too (`data.no_start_arcs`).
        """
        qlon, qlat = check_coordinate(lon, lat)
        qlat = snap_latitude(qlat)
        radius = check_radius(radius_m)
        bearing = check_bearing(bearing)
        limit = math.inf if radius is None else radius * 1.01 + 1.0  # local frame vs haversine slack
        dirs = self._dir_arcs(exclude_mask, not any_edge)
        found = (self._one_call if self.hot_path.fused else self._steps)(qlon, qlat, radius, limit, bearing, dirs)
        if not found:
            raise NoSegment(self._no_segment_message(qlon, qlat, radius, bearing, dirs))
        best = min(found, key=lambda x: (x[0], x[2].chain))
        nearest, alternatives = self._with_others(best[2], best[3], qlon, qlat, bearing, dirs)
        big = next((f[2] for f in found if f[1] == 0), None)
        if best[1] == 0:
            big = nearest
        return Candidates(nearest, big, alternatives)

    def _one_call(
        self,
        qlon: float,
        qlat: float,
        radius: float | None,
        limit: float,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool],
    ) -> list[_Found]:
        """`candidates`' hits, big tree first (distance, tree, phantom, other chains there), in one kernel call."""
        args = (
            self.index, self.metric, float(qlon), float(qlat), OSRM_NEAR_CHAINS, float(limit),
            -1.0 if radius is None else float(radius), dirs[0], dirs[1], -1.0 if bearing is None else float(bearing[0]),
            180.0 if bearing is None else float(bearing[1]), bool(dirs[2]), OSRM_SLACK_M, bearing is None, True,
        )  # fmt: skip
        got_k, dist, chain, seg, f_fig, i_fig, o_rows, nb = _SNAP_POINT.get(args, (args[0], args[1], dirs[0], dirs[1]))(
            *args
        )
        found: list[_Found] = []
        rows = o_rows.tolist()
        for k in (0, 1):
            if got_k[k]:
                r = f_fig[k].tolist() + i_fig[k].tolist()
                ph = self._finish(qlon, qlat, int(seg[k]), int(chain[k]), r, bearing, dirs)
                part = rows[:nb] if k == 0 else rows[nb:]
                found.append((float(dist[k]), k, ph, [(int(a), int(b), c) for a, b, c in part]))
        return found

    def _steps(
        self,
        qlon: float,
        qlat: float,
        radius: float | None,
        limit: float,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool],
    ) -> list[_Found]:
        """`_one_call`'s hits from its kernels called one by one (a first start serves so until `_snap_point` is
        compiled)."""
        found: list[_Found] = []
        for k, tree in enumerate((self._big, self._tiny)):
            if found:  # a tiny segment matters only where it is no farther than the big one (ties: chain order)
                limit = min(limit, found[0][0] * (1 + 1e-9) + 1e-9)
            n, seg, chain, d, ratio, o_seg, o_chain, o_ratio = _nearest_osrm(
                tree.arrays, self._glon, self._glat, self._gf, qlon, qlat, OSRM_NEAR_CHAINS, limit * limit, dirs[0],
                dirs[1],
                -1.0 if bearing is None else bearing[0], 180.0 if bearing is None else bearing[1], dirs[2],
                OSRM_SLACK_M,
            )  # fmt: skip
            if n > 0:
                ph = self._phantom(qlon, qlat, int(seg), int(chain), float(ratio), bearing, dirs, True)
                if radius is None or ph.distance_m <= radius:
                    others = list(zip(o_seg.tolist(), o_chain.tolist(), o_ratio.tolist(), strict=True))
                    found.append((float(d), k, ph, others))
        return found

    def warm(self) -> None:
        """Load (or compile) `_snap_point` and `_nearest_point`: one point snapped, and its nearest, in one call
        each, whatever the switch (`hot_path`) says."""
        if self._glon.shape[0]:
            lon, lat = float(self._glon[0]) / COORD_SCALE, float(self._glat[0]) / COORD_SCALE
            self._one_call(lon, lat, None, math.inf, None, self._dir_arcs(0))
            self._nearest_one_call(lon, lat, 1, math.inf, None, self._dir_arcs(0))

    def _at_chain_end(self, ph: Phantom) -> bool:
        """Whether the phantom is on its chain's first or last point at 1e-6 degrees (as `SearchSpace.at_chain_end`)."""
        return chain_end_kind(self._glon, self._glat, self._gf, ph.chain, ph.lon, ph.lat) != 0

    def _with_others(
        self,
        ph: Phantom,
        others: list[tuple[int, int, float]],
        qlon: float,
        qlat: float,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool],
    ) -> tuple[Phantom, tuple[Phantom, ...]]:
        """A phantom on a chain end node with the chains OSRM takes as candidates there (`Phantom.at_chains`: the
        junction rule leaves or reaches the node by those roads only), and its other candidates as phantoms."""
        ch = self.chains
        if ph.fwd_arc != ch.fwd_arc[ph.chain] or ph.bwd_arc != ch.bwd_arc[ph.chain] or bearing is not None:
            return ph, ()  # a bearing restricted its directions: no junction rule
        if not others and not self._at_chain_end(ph):
            return ph, ()  # inside its chain, the only candidate there
        chains = tuple(sorted({ph.chain, *(o[1] for o in others)}))
        ph = replace(ph, at_chains=chains)
        alts = tuple(
            replace(self._phantom(qlon, qlat, seg, chain, r, None, dirs, True), at_chains=chains)
            for seg, chain, r in others
        )
        return ph, alts

    def snap(
        self,
        lon: float,
        lat: float,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
    ) -> Phantom:
        """The phantom at the nearest snappable segment within `radius_m` metres (None = unlimited), any component.

        Routes between several points should snap them together (`choose` over `candidates`), so that a point next
        to a tiny component still reaches the main network.
        """
        return self.candidates(lon, lat, radius_m, bearing, exclude_mask).nearest

    def nearest_distance_m(
        self,
        lon: float,
        lat: float,
        bearing: tuple[float, float] | None = None,
        dirs: tuple[np.ndarray, np.ndarray, bool] | None = None,
    ) -> float | None:
        """Metres from a point to the nearest snappable segment, whatever the distance (None: the graph has none)."""
        best = None
        dirs = dirs or self._dir_arcs(0)
        for tree in (self._big, self._tiny):
            s, c, d, t = tree.search(self._glon, self._glat, lon, lat, 1, math.inf, dirs, bearing)
            if len(s):
                ph = self._phantom(lon, lat, int(s[0]), int(c[0]), float(t[0]), bearing, dirs)
                best = ph.distance_m if best is None else min(best, ph.distance_m)
        return best

    def _no_segment_message(
        self,
        lon: float,
        lat: float,
        radius: float | None,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool] | None = None,
    ) -> str:
        what = "no road segment" + ("" if bearing is None else f" travelled at bearing {bearing[0]:g}±{bearing[1]:g}")
        if radius is None:
            return f"{what} in the graph for ({lon}, {lat})"
        d = self.nearest_distance_m(lon, lat, bearing, dirs)
        tail = "" if d is None else f"; the nearest is {_human_m(d)} away"
        if abs(lon) <= 90 and (lat, lon) != (lon, lat):  # the other order lands on the map: say so
            swapped = self.nearest_distance_m(lat, lon, None, None)
            if swapped is not None and swapped <= radius:
                tail += f"; did you swap them? ({lat}, {lon}) is {_human_m(swapped)} from a road (order: lon,lat)"
        return f"{what} within {radius:g} m of ({lon}, {lat}){tail}"

    def nearest(
        self,
        lon: float,
        lat: float,
        number: int = 1,
        radius_m: float | None = None,
        bearing: tuple[float, float] | None = None,
        exclude_mask: int = 0,
    ) -> list[Phantom]:
        """Up to `number` phantoms on distinct chains, nearest first (any component), within `radius_m` if given;
        never on roads that refuse waypoints (osrm-routed's nearest has no `snapping=any`)."""
        qlon, qlat = check_coordinate(lon, lat)
        qlat = snap_latitude(qlat)
        radius = check_radius(radius_m)
        bearing = check_bearing(bearing)
        if not isinstance(number, (int, np.integer)) or isinstance(number, bool) or number < 1:
            raise InvalidValue(f"number must be an integer >= 1, not {number!r}")
        limit = math.inf if radius is None else radius * 1.01 + 1.0
        dirs = self._dir_arcs(exclude_mask)
        if self.hot_path.fused:
            out = self._nearest_one_call(qlon, qlat, int(number), limit, bearing, dirs)
        else:
            hits: list[tuple[float, int, int, float]] = []
            for tree in (self._big, self._tiny):
                s, c, d, t = tree.search(self._glon, self._glat, qlon, qlat, int(number), limit, dirs, bearing)
                hits.extend((float(d[i]), int(c[i]), int(s[i]), float(t[i])) for i in range(len(s)))
            hits.sort()
            out = [self._phantom(qlon, qlat, h[2], h[1], h[3], bearing, dirs) for h in hits[: int(number)]]
        out = [p for p in out if radius is None or p.distance_m <= radius]
        if not out:
            raise NoSegment(self._no_segment_message(qlon, qlat, radius, bearing, dirs))
        return out

    def _nearest_one_call(
        self,
        qlon: float,
        qlat: float,
        number: int,
        limit: float,
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool],
    ) -> list[Phantom]:
        """`nearest`'s phantoms (before the radius check) from `_nearest_point`: the steps' in one kernel call."""
        args = (
            self.index, self.metric, float(qlon), float(qlat), int(number), float(limit), dirs[0], dirs[1],
            -1.0 if bearing is None else float(bearing[0]), 180.0 if bearing is None else float(bearing[1]),
            bool(dirs[2]), bearing is None, False,
        )  # fmt: skip
        m, segs, chains, f_fig, i_fig = _NEAREST_POINT.get(args, (args[0], args[1], dirs[0], dirs[1]))(*args)
        segs_l, chains_l, f_l, i_l = segs.tolist(), chains.tolist(), f_fig.tolist(), i_fig.tolist()
        if bearing is None and not dirs[2]:  # both directions as they are: `_finish`'s Phantoms, built at once
            local, string = (segs - self._gf[chains]).tolist(), self.graph.string
            return [
                new_phantom(qlon, qlat, *f_l[i], chains_l[i], local[i], *i_l[i][:11], string(i_l[i][11]),
                            (i_l[i][12], i_l[i][13]), *i_l[i][14:])
                for i in range(int(m))
            ]  # fmt: skip
        return [self._finish(qlon, qlat, segs_l[i], chains_l[i], f_l[i] + i_l[i], bearing, dirs) for i in range(int(m))]

    def offset_m(self, ph: Phantom) -> float:
        """Metres along the phantom's chain from its first point to the snapped point."""
        p0, p1 = int(self._gf[ph.chain]), int(self._gf[ph.chain + 1])
        return _chain_offset(self._glon, self._glat, p0, p1, ph.segment, ph.lon, ph.lat)[0]

    def at_end(self, qlon: float, qlat: float, chain: int, last: bool) -> Phantom:
        """The phantom of a point on `chain`'s first (or `last`) point, on that road alone: OSRM's candidate there."""
        seg = int(self._gf[chain + 1]) - 2 if last else int(self._gf[chain])
        return replace(self._phantom(qlon, qlat, seg, chain, 1.0 if last else 0.0), at_chains=())

    # -- internals -------------------------------------------------------------------------------------------------

    def _phantom(
        self,
        qlon: float,
        qlat: float,
        seg: int,
        chain: int,
        t: float,
        bearing: tuple[float, float] | None = None,
        dirs: tuple[np.ndarray, np.ndarray, bool] | None = None,
        osrm_point: bool = False,
    ) -> Phantom:
        """The phantom at parameter t of segment `seg` (a global point index) of `chain`; with `osrm_point`, t is
        OSRM's ratio (`osrm_rank`) and the point is OSRM's."""
        ch = self.chains
        if bearing is None:  # on an inner point of the chain: the segment OSRM keeps there
            seg, t = _osrm_vertex(self._glon, self._glat, self._gf, ch.osrm_flip, seg, chain, t)
        r = _phantom_figures(self.index, self.metric, chain, seg - int(self._gf[chain]), t, qlon, qlat, osrm_point)
        return self._finish(qlon, qlat, seg, chain, r, bearing, dirs)

    def _finish(
        self,
        qlon: float,
        qlat: float,
        seg: int,
        chain: int,
        r: Sequence[Any],
        bearing: tuple[float, float] | None,
        dirs: tuple[np.ndarray, np.ndarray, bool] | None,
    ) -> Phantom:
        """The Phantom of `_phantom_figures`' figures `r` at global segment `seg` of `chain`, with only the
        directions the bearing and the excluded classes allow."""
        g, ch = self.graph, self.chains
        masked = dirs is not None and dirs[2]
        if bearing is not None or masked:  # only the direction(s) the bearing and the excluded classes allow
            fwd, bwd = (dirs[0], dirs[1]) if masked else (ch.fwd_arc, ch.bwd_arc)  # type: ignore[index]
            b = bearing if bearing is not None else (-1.0, 180.0)
            allowed = segment_directions(seg, chain, qlat, self._glon, self._glat, fwd, bwd, *b)
            r = list(r)
            if not allowed & 1:
                r[3], r[5], r[6], r[7], r[8], r[17], r[18] = -1, 0, 0, 0, 0, 0, 0
            if not allowed & 2:
                r[4], r[9], r[10], r[11], r[12], r[19], r[20] = -1, 0, 0, 0, 0, 0, 0
        return new_phantom(
            qlon, qlat, r[0], r[1], r[2], chain, seg - int(self._gf[chain]), r[3], r[4], r[5], r[6], r[7], r[8],
            r[9], r[10], r[11], r[12], r[13], g.string(r[14]), (r[15], r[16]), r[17], r[18], r[19], r[20],
        )  # fmt: skip

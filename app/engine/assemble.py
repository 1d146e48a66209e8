"""Leg assembly: a search result (or a direct along-chain stretch) and its two phantoms -> coordinates and pieces.

A leg leaves its source phantom along one of the phantom's arcs (or right at a chain end node), follows the path's
arcs and enters the target phantom along one of its arcs. Its coordinates are the geometry chains of every arc in
travel order (reversed where `arc_geom` is odd), the first and last chains cut exactly at the snapped points, without
repeated joint points. Pieces (one per arc, the first and last possibly partial) carry the figures the API's step
builder needs. All work is proportional to the path.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from preprocessing.artifacts import Graph
from preprocessing.units import COORD_SCALE, DIST_PER_METRE, WEIGHT_PER_SECOND

from .types import Leg, Phantom, Route, SearchStats

# How a leg leaves (source) or enters (target) a phantom.
FWD = 0  # along the phantom's fwd_arc (chain order)
BWD = 1  # along its bwd_arc (reverse chain order)
AT_FIRST = 2  # the phantom sits on the chain's first node: the leg starts/ends right there
AT_LAST = 3  # ... on the chain's last node

_SAME_POINT_DEG = 1e-9  # consecutive coordinates closer than this (0.1 mm) are one point


@nb.njit(cache=True, nogil=True, inline="always")
def _span(a: int, b: int, step: int) -> int:
    return max(0, b - a) if step > 0 else max(0, a - b)


@nb.njit(cache=True, nogil=True)
def _coords(
    arcs, arc_geom, gf, glon, glat, s_lon, s_lat, s_a, s_b, s_step, t_lon, t_lat, t_a, t_b, t_step, direct
):  # pragma: no cover - numba
    """Coordinates [k, 2] and piece end indices of a leg, consecutive duplicates removed.

    The source part is the snapped point plus chain points `range(s_a, s_b, s_step)`; then every arc's chain without
    its first point; then the target part, chain points `range(t_a, t_b, t_step)` plus the snapped point. A `direct`
    leg is a single piece: source point, `range(s_a, s_b, s_step)`, target point.
    """
    n_arcs = 0 if direct else arcs.shape[0]
    n_pieces = 1 if direct else n_arcs + 2
    total = 2 + _span(s_a, s_b, s_step)
    if not direct:
        total += _span(t_a, t_b, t_step)
        for j in range(n_arcs):
            c = arc_geom[arcs[j]] >> 1
            total += gf[c + 1] - gf[c] - 1
    out = np.empty((total, 2), dtype=np.float64)
    ends = np.empty(n_pieces, dtype=np.int64)
    k = 0
    out[k, 0] = s_lon
    out[k, 1] = s_lat
    k += 1
    for i in range(s_a, s_b, s_step):
        out[k, 0] = glon[i] / COORD_SCALE
        out[k, 1] = glat[i] / COORD_SCALE
        k += 1
    if direct:
        out[k, 0] = t_lon
        out[k, 1] = t_lat
        k += 1
        ends[0] = k - 1
    else:
        ends[0] = k - 1
        for j in range(n_arcs):
            g = arc_geom[arcs[j]]
            c = g >> 1
            p0 = gf[c]
            p1 = gf[c + 1]
            if g & 1:
                for i in range(p1 - 2, p0 - 1, -1):
                    out[k, 0] = glon[i] / COORD_SCALE
                    out[k, 1] = glat[i] / COORD_SCALE
                    k += 1
            else:
                for i in range(p0 + 1, p1):
                    out[k, 0] = glon[i] / COORD_SCALE
                    out[k, 1] = glat[i] / COORD_SCALE
                    k += 1
            ends[j + 1] = k - 1
        for i in range(t_a, t_b, t_step):
            out[k, 0] = glon[i] / COORD_SCALE
            out[k, 1] = glat[i] / COORD_SCALE
            k += 1
        out[k, 0] = t_lon
        out[k, 1] = t_lat
        k += 1
        ends[n_pieces - 1] = k - 1
    # drop consecutive duplicates, remapping piece ends onto the kept point they coincide with
    newidx = np.empty(k, dtype=np.int64)
    w = 0
    for i in range(k):
        if i > 0 and abs(out[i, 0] - out[w - 1, 0]) <= 1e-9 and abs(out[i, 1] - out[w - 1, 1]) <= 1e-9:
            newidx[i] = w - 1
            continue
        out[w, 0] = out[i, 0]
        out[w, 1] = out[i, 1]
        newidx[i] = w
        w += 1
    for p in range(n_pieces):
        ends[p] = newidx[ends[p]]
    return out[:w].copy(), ends


class Assembler:
    """Builds legs over one graph; holds only references to its read-only arrays."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._gf = np.asarray(graph.geom_first, dtype=np.int64)

    def _chain(self, ph: Phantom) -> tuple[int, int]:
        return int(self._gf[ph.chain]), int(self._gf[ph.chain + 1])

    def _source_part(self, ph: Phantom, kind: int) -> tuple[int, int, int, int, int, int]:
        """(range a, b, step, arc, weight, dist) of the stretch from the snapped point to the seed node."""
        p0, p1 = self._chain(ph)
        if kind == FWD:
            return p0 + ph.segment + 1, p1, 1, ph.fwd_arc, ph.fwd_weight_after, ph.fwd_dist_after
        if kind == BWD:
            return p0 + ph.segment, p0 - 1, -1, ph.bwd_arc, ph.bwd_weight_after, ph.bwd_dist_after
        return 0, 0, 1, _arc_of(ph), 0, 0

    def _target_part(self, ph: Phantom, kind: int) -> tuple[int, int, int, int, int, int]:
        """(range a, b, step, arc, weight, dist) from the seed node (left out: it is the joint) to the snapped point."""
        p0, p1 = self._chain(ph)
        if kind == FWD:
            return p0 + 1, p0 + ph.segment + 1, 1, ph.fwd_arc, ph.fwd_weight_before, ph.fwd_dist_before
        if kind == BWD:
            return p1 - 2, p0 + ph.segment, -1, ph.bwd_arc, ph.bwd_weight_before, ph.bwd_dist_before
        return 0, 0, 1, _arc_of(ph), 0, 0

    def search_leg(
        self, src: Phantom, src_kind: int, arcs: np.ndarray, tgt: Phantom, tgt_kind: int, stats: SearchStats
    ) -> Leg:
        """The leg of a search path `arcs` (original arc ids from the source seed node to the target seed node)."""
        g = self.graph
        arcs = np.asarray(arcs, dtype=np.int32)
        sa, sb, ss, s_arc, s_w, s_d = self._source_part(src, src_kind)
        ta, tb, ts, t_arc, t_w, t_d = self._target_part(tgt, tgt_kind)
        coords, ends = _coords(
            arcs, g.arc_geom, self._gf, g.geom_lon, g.geom_lat,
            src.lon, src.lat, sa, sb, ss, tgt.lon, tgt.lat, ta, tb, ts, False,
        )  # fmt: skip
        piece_arc = np.concatenate(([s_arc], arcs, [t_arc])).astype(np.int32)
        piece_w = np.concatenate(([s_w], g.arc_weight[arcs], [t_w])).astype(np.int64)
        piece_d = np.concatenate(([s_d], g.arc_dist[arcs], [t_d])).astype(np.int64)
        keep = np.ones(len(piece_arc), dtype=bool)
        # a partial piece with nothing in it (the phantom sits on the seed node) is no piece at all
        if piece_w[0] == 0 and piece_d[0] == 0 and ends[0] == 0:
            keep[0] = False
        if piece_w[-1] == 0 and piece_d[-1] == 0 and ends[-1] == ends[-2]:
            keep[-1] = False
        if not keep.any():
            keep[0] = True
        return self._leg(coords, piece_arc[keep], piece_w[keep], piece_d[keep], ends[keep], stats, src, tgt)

    def direct_leg(self, src: Phantom, tgt: Phantom, kind: int, stats: SearchStats) -> Leg:
        """The leg along the one chain both phantoms share, `kind` FWD (target ahead) or BWD (target behind)."""
        g = self.graph
        p0, _ = self._chain(src)
        if kind == FWD:
            a, b, step = p0 + src.segment + 1, p0 + tgt.segment + 1, 1
            arc, w, d = (
                src.fwd_arc,
                tgt.fwd_weight_before - src.fwd_weight_before,
                tgt.fwd_dist_before - src.fwd_dist_before,
            )
        else:
            a, b, step = p0 + src.segment, p0 + tgt.segment, -1
            arc, w, d = (
                src.bwd_arc,
                tgt.bwd_weight_before - src.bwd_weight_before,
                tgt.bwd_dist_before - src.bwd_dist_before,
            )
        coords, ends = _coords(
            np.zeros(0, dtype=np.int32), g.arc_geom, self._gf, g.geom_lon, g.geom_lat,
            src.lon, src.lat, a, b, step, tgt.lon, tgt.lat, 0, 0, 1, True,
        )  # fmt: skip
        one = np.ones(1, dtype=np.int64)
        return self._leg(
            coords, np.array([arc], dtype=np.int32), one * max(w, 0), one * max(d, 0), ends, stats, src, tgt
        )

    @staticmethod
    def _leg(
        coords: np.ndarray,
        piece_arc: np.ndarray,
        piece_w: np.ndarray,
        piece_d: np.ndarray,
        ends: np.ndarray,
        stats: SearchStats,
        src: Phantom,
        tgt: Phantom,
    ) -> Leg:
        if coords.shape[0] < 2:  # a zero-length leg is still a line: the point twice
            coords = np.concatenate([coords, coords])
            ends = np.full(len(ends), 1, dtype=np.int64)
        weight = int(piece_w.sum())
        return Leg(
            weight=weight,
            duration_s=weight / WEIGHT_PER_SECOND,
            distance_m=int(piece_d.sum()) / DIST_PER_METRE,
            coordinates=coords,
            piece_arc=piece_arc,
            piece_distance_m=piece_d / DIST_PER_METRE,
            piece_duration_s=piece_w / WEIGHT_PER_SECOND,
            piece_coord_end=ends,
            stats=stats,
            source=src,
            target=tgt,
        )


def _arc_of(ph: Phantom) -> int:
    return ph.fwd_arc if ph.fwd_arc >= 0 else ph.bwd_arc


def join_route(legs: list[Leg], algorithm: str) -> Route:
    """A route over consecutive legs: totals summed, coordinates joined without repeating the waypoints."""
    parts = [legs[0].coordinates] + [leg.coordinates[1:] for leg in legs[1:]]
    return Route(
        legs=legs,
        algorithm=algorithm,
        weight=sum(leg.weight for leg in legs),
        duration_s=sum(leg.weight for leg in legs) / WEIGHT_PER_SECOND,
        distance_m=sum(round(leg.distance_m * DIST_PER_METRE) for leg in legs) / DIST_PER_METRE,
        coordinates=np.concatenate(parts) if parts else np.zeros((0, 2)),
    )

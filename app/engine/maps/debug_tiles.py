"""OSRM's debug vector tiles of the routing graph (`/tile/v1`), as osrm-routed's `src/engine/plugins/tile.cpp` draws
them: what the router knows of every road segment and every turn of a tile, for debugging speeds and turn costs on
a map.

Rules taken from tile.cpp, so OSRM's debug map styles and scripts read our tiles unchanged:
- **Segments** (`speeds`): every road segment between two consecutive shape points, once per direction the router
  may drive it, projected with OSRM's 1e-6 degree coordinates and `std::round`, clipped to `OSRM_CLIP` grid units
  around the tile (Liang-Barsky; clipped ends truncated to the grid, as boost's clipping into int32 points).
  `speed` is the arc's length over its duration in km/h (OSRM's rounding, at most 127), `rate` the arc's length
  over its weight in m/s, rounded and divided by 10 (OSRM's arithmetic), `weight` and `duration` the segment's share
  of its arc's (split by length, as the route annotations split them), `is_small` / `is_startpoint` whether the road
  is on a tiny component / may be snapped to.
- **Turns** (`turns`, from zoom 15): every turn the router may take at a junction inside the clip box, u-turns onto
  the same segment left out: `bearing_in` (the approach segment's bearing, truncated), `turn_angle` (exit bearing
  minus it, -180..180, + right), `cost` / `weight` the turn's own duration and weight (s), guidance's `type` and
  `modifier` (`app.engine.guidance`; "(noturn)" where guidance sees no intersection, a node OSRM compresses away).
- **`osmnodes`**: every shape point inside the clip box once, its OSM node id as the feature id.
- **`internal-nodes`**: the segregated edges of guidance (OSRM's `IsSegregated`), their whole geometry clipped.

Built once per graph (`debug_tiles(router)`, on the first tile): per chain its bounding box, per arc its speed and
rate, and the turn table (from the edge-based graph's turns, or every junction pair at no cost on a node-based
graph) with its bearings and angles, grouped by junction node. A tile is a vectorised scan of the chain boxes and a
gather of its chains' segments; guidance (built on first use, cached per junction) runs only for the tile's turns
and for its edges shorter than a segregated edge can be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from app.engine.data import derived, is_edge_based
from app.engine.maps.tiles import (
    EXTENT,
    OSRM_CLIP,
    OSRM_TURNS_ZOOM,
    DebugTile,
    chain_boxes,
    check_tile,
    mercator,
    small_chains,
    tile_grid,
)
from floor.format.units import COORD_SCALE, DIST_PER_METRE, WEIGHT_PER_SECOND
from floor.kernels.geometry import haversine_m

if TYPE_CHECKING:
    from app.engine.router import Router

MAX_SPEED_KMH = 127  # tile.cpp: min(speed, 127)
SEGREGATED_MAX_DM = 330  # guidance's segregated edges are at most 32 m long (a little slack for the measure)
NO_TURN, TURN = 17, 3  # guidance's type codes (TURN_TYPE_NAMES)

# OSRM's cheap ruler (util/cheap_ruler.hpp, one ruler per 0.05 degree of latitude), as `app.engine.guidance.geo`
_RE_KM = 6378.137
_FE = 1.0 / 298.257223563
_E2 = _FE * (2 - _FE)
_RULER_STEP = 50_000  # 1e-6 degree


def round_half_away(v: np.ndarray) -> np.ndarray:
    """C's `std::round`, elementwise: halves away from zero (float results)."""
    v = np.asarray(v, dtype=np.float64)
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def fixed6(e7: np.ndarray) -> np.ndarray:
    """1e-7 degree integers (the graph's) as OSRM's 1e-6 degree integers."""
    return round_half_away(np.asarray(e7, dtype=np.float64) / 10.0).astype(np.int64)


def cheap_bearing(lon_a: np.ndarray, lat_a: np.ndarray, lon_b: np.ndarray, lat_b: np.ndarray) -> np.ndarray:
    """OSRM's `coordinate_calculation::bearing` from a to b (1e-6 degree integers), degrees in [0, 360)."""
    mid = np.trunc((lat_a + lat_b) / 2.0)  # C integer division
    band = np.where(mid != 0, (np.abs(mid) - 1) // _RULER_STEP, 0)
    coslat = np.cos(np.radians(_RULER_STEP * (band + 0.5) / 1e6))
    w2 = 1.0 / (1.0 - _E2 * (1.0 - coslat * coslat))
    mul = np.radians(1.0) * _RE_KM * 1000.0
    kx, ky = mul * np.sqrt(w2) * coslat, mul * np.sqrt(w2) * w2 * (1.0 - _E2)
    d = (lon_b - lon_a) / 1e6
    dx = (d - 360.0 * np.round(d / 360.0)) * kx
    dy = (lat_b - lat_a) / 1e6 * ky
    r = np.degrees(np.arctan2(dx, dy))
    return np.where(r < 0.0, r + 360.0, r)


def clip_segments(
    x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Segments clipped to the square [lo, hi]^2 (Liang-Barsky): whether anything is left, and the ends left."""
    x0, y0, x1, y1 = (np.asarray(a, dtype=np.float64) for a in (x0, y0, x1, y1))
    dx, dy = x1 - x0, y1 - y0
    t0 = np.zeros(x0.shape[0])
    t1 = np.ones(x0.shape[0])
    ok = np.ones(x0.shape[0], dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x0 - lo), (dx, hi - x0), (-dy, y0 - lo), (dy, hi - y0)):
            ok &= ~((p == 0) & (q < 0))
            r = q / np.where(p == 0, 1.0, p)
            t0 = np.where(p < 0, np.maximum(t0, r), t0)
            t1 = np.where(p > 0, np.minimum(t1, r), t1)
    ok &= t0 <= t1
    return ok, x0 + t0 * dx, y0 + t0 * dy, x0 + t1 * dx, y0 + t1 * dy


class DebugTiles:
    """Per-graph data of OSRM's debug tiles, and `tile(z, x, y)` cutting it. Immutable, thread-safe."""

    def __init__(self, router: Router) -> None:
        g, ch = router.graph, router.chains
        self._router = router
        self._g = g
        self.chains = ch
        self.minx, self.miny, self.maxx, self.maxy = chain_boxes(g)
        self.small = small_chains(router)
        self.gf = np.asarray(g.geom_first, dtype=np.int64)
        self.lon6, self.lat6 = fixed6(g.geom_lon), fixed6(g.geom_lat)
        dist_m = np.asarray(g.arc_dist, dtype=np.float64) / DIST_PER_METRE
        self.duration_s = np.asarray(g.arc_duration, dtype=np.float64) / WEIGHT_PER_SECOND
        self.weight_s = np.asarray(g.arc_weight, dtype=np.float64) / WEIGHT_PER_SECOND
        with np.errstate(divide="ignore", invalid="ignore"):
            speed = round_half_away(np.where(self.duration_s > 0, dist_m / self.duration_s * 3.6, 0.0))
            rate = round_half_away(np.where(self.weight_s > 0, dist_m / self.weight_s, 0.0)) / 10.0
        self.speed_kmh = np.minimum(speed, MAX_SPEED_KMH).astype(np.int32)
        self.rate = rate.astype(np.float32)
        self.arc_dist = np.asarray(g.arc_dist)
        self._turns(router)

    # -- the turn table ---------------------------------------------------------------------------------------------
    def _turns(self, router: Router) -> None:
        """Every turn (from arc, to arc) the router may take, with its weight and duration (ds), bearings and angle,
        sorted by junction node (`turn_first` [n + 1] offsets)."""
        g = self._g
        m = int(g.arc_head.shape[0])
        if is_edge_based(g):
            node_arc = np.asarray(g.eb_node_arc, dtype=np.int64)
            ra, rb = node_arc[np.asarray(g.eb_arc_tail)], node_arc[np.asarray(g.eb_arc_head)]
            _, keep = np.unique(ra * m + rb, return_index=True)  # a via-way restriction's copies turn alike
            ra, rb = ra[keep], rb[keep]
            weight = np.asarray(g.eb_arc_turn, dtype=np.float64)[keep]
            duration = np.asarray(g.eb_arc_turn_duration, dtype=np.float64)[keep]
        else:  # a node-based graph: every arc into a junction to every arc out of it, at no cost
            first_out = np.asarray(g.first_out, dtype=np.int64)
            head = np.asarray(g.arc_head, dtype=np.int64)
            deg = first_out[head + 1] - first_out[head]
            ra = np.repeat(np.arange(m, dtype=np.int64), deg)
            rb = np.repeat(first_out[head], deg) + np.arange(int(deg.sum())) - np.repeat(np.cumsum(deg) - deg, deg)
            weight = duration = np.zeros(ra.shape[0])
        geom = np.asarray(g.arc_geom, dtype=np.int64)
        gf = self.gf
        ca, cb = geom[ra] >> 1, geom[rb] >> 1
        rev_a, rev_b = (geom[ra] & 1) == 1, (geom[rb] & 1) == 1
        via = np.where(rev_a, gf[ca], gf[ca + 1] - 1)
        before = np.where(rev_a, gf[ca] + 1, gf[ca + 1] - 2)
        after = np.where(rev_b, gf[cb + 1] - 2, gf[cb] + 1)
        lon, lat = self.lon6, self.lat6
        osm = np.asarray(g.geom_osm_id) if "geom_osm_id" in g.arrays else np.zeros(lon.shape[0], dtype=np.int64)
        same = ((lon[before] == lon[after]) & (lat[before] == lat[after])) | (
            (osm[before] == osm[after]) & (osm[before] != 0)
        )  # tile.cpp leaves out the turns back to the node arrived from
        ok = ~same
        ra, rb, via, before, after = ra[ok], rb[ok], via[ok], before[ok], after[ok]
        b_in = np.trunc(cheap_bearing(lon[before], lat[before], lon[via], lat[via]))
        b_out = np.trunc(cheap_bearing(lon[via], lat[via], lon[after], lat[after]))
        angle = b_out - b_in
        angle = np.where(angle > 180, angle - 360, np.where(angle < -180, angle + 360, angle))
        node = np.asarray(g.arc_head, dtype=np.int64)[ra]
        order = np.argsort(node, kind="stable")
        self.turn_first = np.zeros(int(g.node_lon.shape[0]) + 1, dtype=np.int64)
        np.cumsum(np.bincount(node, minlength=int(g.node_lon.shape[0])), out=self.turn_first[1:])
        self.turn_from, self.turn_to = ra[order], rb[order]
        self.turn_bearing_in = b_in[order].astype(np.int32)
        self.turn_angle = angle[order].astype(np.int32)
        self.turn_weight_s = (weight[ok][order] / WEIGHT_PER_SECOND).astype(np.float32)
        self.turn_duration_s = (duration[ok][order] / WEIGHT_PER_SECOND).astype(np.float32)

    # -- a tile -----------------------------------------------------------------------------------------------------
    def _grid(self, pos: np.ndarray, z: int, x: int, y: int) -> tuple[np.ndarray, np.ndarray]:
        """Shape points -> tile grid as OSRM rounds them (1e-6 degrees, `std::round`), float."""
        mx, my = mercator(self.lon6[pos] / 1e6, self.lat6[pos] / 1e6)
        gx, gy = tile_grid(mx, my, z, x, y, EXTENT)
        return round_half_away(gx), round_half_away(gy)

    def tile(self, z: int, x: int, y: int) -> DebugTile:
        """The debug tile z/x/y; `InvalidValue` for a tile that does not exist (the zoom range is the API's)."""
        check_tile(z, x, y)
        n = float(1 << z)
        pad = OSRM_CLIP / EXTENT / n
        x0, x1 = x / n - pad, (x + 1) / n + pad
        y0, y1 = y / n - pad, (y + 1) / n + pad
        ch = self.chains
        hit = ch.used & (self.minx <= x1) & (self.maxx >= x0) & (self.miny <= y1) & (self.maxy >= y0)
        chains = np.flatnonzero(hit)
        starts = self.gf[chains]
        counts = self.gf[chains + 1] - starts
        total = int(counts.sum())
        feat = np.repeat(np.arange(chains.shape[0], dtype=np.int64), counts)
        pos = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total, dtype=np.int64)
        gx, gy = self._grid(pos, z, x, y)
        lo, hi = -float(OSRM_CLIP), float(EXTENT + OSRM_CLIP)
        speeds = self._segments(chains, feat, pos, gx, gy, lo, hi)
        inside = (gx > lo) & (gx < hi) & (gy > lo) & (gy < hi)
        nodes = self._nodes(pos[inside], gx[inside], gy[inside])
        if z >= OSRM_TURNS_ZOOM:
            turns = self._tile_turns(chains, z, x, y, lo, hi)
        else:
            turns = self._tile_turns(chains[:0], z, x, y, lo, hi)
        lines = self._segregated(chains, z, x, y, lo, hi)
        return DebugTile(z=z, x=x, y=y, **speeds, **turns, **nodes, **lines)

    def _segments(
        self,
        chains: np.ndarray,
        feat: np.ndarray,
        pos: np.ndarray,
        gx: np.ndarray,
        gy: np.ndarray,
        lo: float,
        hi: float,
    ) -> dict[str, Any]:
        """The `speeds` layer: each segment of the chains, once per arc along it, clipped."""
        g, ch = self._g, self.chains
        seg = np.flatnonzero(feat[1:] == feat[:-1]) if feat.shape[0] else np.zeros(0, dtype=np.int64)
        sfeat = feat[seg]
        lon, lat = np.asarray(g.geom_lon)[pos] / COORD_SCALE, np.asarray(g.geom_lat)[pos] / COORD_SCALE
        length = haversine_m(lon[seg], lat[seg], lon[seg + 1], lat[seg + 1])
        per_chain = np.bincount(sfeat, weights=length, minlength=chains.shape[0])
        count = np.bincount(sfeat, minlength=chains.shape[0])
        share = np.where(per_chain[sfeat] > 0, length / np.where(per_chain[sfeat] > 0, per_chain[sfeat], 1.0), 0.0)
        share = np.where(per_chain[sfeat] > 0, share, 1.0 / np.maximum(count[sfeat], 1))
        fwd, bwd = ch.fwd_arc[chains][sfeat], ch.bwd_arc[chains][sfeat]
        # forward then backward per segment, segments in chain order (tile.cpp: forward, then reverse, per segment)
        arc = np.stack([fwd, bwd], axis=1).reshape(-1).astype(np.int64)
        a = np.stack([seg, seg + 1], axis=1).reshape(-1)
        b = np.stack([seg + 1, seg], axis=1).reshape(-1)
        share2 = np.repeat(share, 2)
        chain2 = np.repeat(chains[sfeat], 2)
        ok, cx0, cy0, cx1, cy1 = clip_segments(gx[a], gy[a], gx[b], gy[b], lo, hi)
        cx0, cy0, cx1, cy1 = (np.trunc(v) for v in (cx0, cy0, cx1, cy1))
        ok &= (arc >= 0) & ((cx0 != cx1) | (cy0 != cy1))
        arc, share2, chain2 = arc[ok], share2[ok], chain2[ok]
        names, name_idx = np.unique(np.asarray(g.arc_name, dtype=np.int64)[arc], return_inverse=True)
        roads = self._router.roads
        return {
            "seg_x0": cx0[ok].astype(np.int32),
            "seg_y0": cy0[ok].astype(np.int32),
            "seg_x1": cx1[ok].astype(np.int32),
            "seg_y1": cy1[ok].astype(np.int32),
            "seg_speed_kmh": self.speed_kmh[arc],
            "seg_rate": self.rate[arc],
            "seg_weight_s": np.round(self.weight_s[arc] * share2, 1).astype(np.float32),
            "seg_duration_s": np.round(self.duration_s[arc] * share2, 1).astype(np.float32),
            "seg_small": self.small[chain2],
            "seg_startpoint": ch.snappable[chain2],
            "seg_name": name_idx.reshape(-1).astype(np.int32),
            "names": tuple(roads.name(int(s)) for s in names.tolist()),
        }

    def _nodes(self, pos: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> dict[str, Any]:
        """The `osmnodes` layer: each shape point once (by OSM id, else by position), ordered by OSM id."""
        g = self._g
        osm = np.asarray(g.geom_osm_id)[pos] if "geom_osm_id" in g.arrays else np.zeros(pos.shape[0], dtype=np.int64)
        key = np.where(osm != 0, osm, -(self.lon6[pos] * 1_000_000_000 + self.lat6[pos]) - 1)  # unknown ids: < 0
        _, first = np.unique(key, return_index=True)
        first = first[np.argsort(osm[first], kind="stable")]
        return {
            "node_x": gx[first].astype(np.int32),
            "node_y": gy[first].astype(np.int32),
            "node_osm_id": osm[first].astype(np.int64),
        }

    def _tile_turns(self, chains: np.ndarray, z: int, x: int, y: int, lo: float, hi: float) -> dict[str, Any]:
        """The `turns` layer: the turns at the chains' end nodes inside the clip box, classified by guidance."""
        g, ch = self._g, self.chains
        ends = np.unique(np.concatenate([ch.first_node[chains], ch.last_node[chains]]).astype(np.int64))
        ends = ends[ends >= 0]
        lon6, lat6 = fixed6(np.asarray(g.node_lon)[ends]), fixed6(np.asarray(g.node_lat)[ends])
        gx, gy = tile_grid(*mercator(lon6 / 1e6, lat6 / 1e6), z, x, y, EXTENT)
        gx, gy = round_half_away(gx), round_half_away(gy)
        inside = (gx > lo) & (gx < hi) & (gy > lo) & (gy < hi)
        ends, gx, gy = ends[inside], gx[inside], gy[inside]
        tf = self.turn_first
        counts = tf[ends + 1] - tf[ends]
        idx = np.repeat(tf[ends] - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))
        at = np.repeat(np.arange(ends.shape[0]), counts)
        kinds, mods, compressed = self._classify(idx)
        # at a node OSRM compresses away it has no turn; ours shows the turns there that cost something
        keep = ~compressed | (self.turn_duration_s[idx] > 0) | (self.turn_weight_s[idx] > 0)
        idx, at, kinds, mods = idx[keep], at[keep], kinds[keep], mods[keep]
        return {
            "turn_x": gx[at].astype(np.int32),
            "turn_y": gy[at].astype(np.int32),
            "turn_bearing_in": self.turn_bearing_in[idx],
            "turn_angle": self.turn_angle[idx],
            "turn_cost_s": self.turn_duration_s[idx],
            "turn_weight_s": self.turn_weight_s[idx],
            "turn_type": kinds,
            "turn_modifier": mods,
        }

    def _classify(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Guidance's (type, modifier) of each turn: the instruction of the road taken at the intersection the
        arriving edge ends at; "(noturn)" at a node guidance compresses away (no intersection for OSRM), and
        whether it does."""
        kinds = np.zeros(idx.shape[0], dtype=np.uint8)
        mods = np.zeros(idx.shape[0], dtype=np.uint8)
        compressed = np.zeros(idx.shape[0], dtype=bool)
        if not idx.shape[0]:
            return kinds, mods, compressed
        from floor.intersections.intersection import turn_direction

        guide = self._router.roads.guide
        gg = guide.gg
        geom = np.asarray(self._g.arc_geom)
        head = np.asarray(self._g.arc_head)
        for i, t in enumerate(idx.tolist()):
            ra, rb = int(self.turn_from[t]), int(self.turn_to[t])
            info = None
            if gg.is_intersection(int(head[ra])):
                info = guide.turns_at(gg.edge_start(int(geom[ra]))).roads.get(int(geom[rb]))
                kind = TURN
            else:
                kind = NO_TURN
                compressed[i] = True
            if info is not None:
                kinds[i], mods[i] = info[0], info[1]
            else:  # OSRM's angle: 180 straight on, below it to the right
                kinds[i], mods[i] = kind, turn_direction(180.0 - float(self.turn_angle[t]))
        return kinds, mods, compressed

    def _segregated(self, chains: np.ndarray, z: int, x: int, y: int, lo: float, hi: float) -> dict[str, Any]:
        """The `internal-nodes` layer: guidance's segregated edges through the tile, each once, clipped."""
        ch = self.chains
        arcs = np.concatenate([ch.fwd_arc[chains], ch.bwd_arc[chains]]).astype(np.int64)
        arcs = np.unique(arcs[arcs >= 0])
        arcs = arcs[self.arc_dist[arcs] <= SEGREGATED_MAX_DM]
        pieces: list[tuple[int, np.ndarray, np.ndarray]] = []  # (feature, x, y) per line
        nf = 0
        if arcs.shape[0]:
            guide = self._router.roads.guide
            gg, ex = guide.gg, guide.ex
            geom = np.asarray(self._g.arc_geom)
            seen: set[int] = set()
            for a in arcs.tolist():
                e = gg.edge_start(int(geom[a]))
                if e in seen:
                    continue
                seen.add(e)
                if not ex.segregated(e):
                    continue
                pts = np.asarray(gg.geometry(e), dtype=np.float64)  # 1e-6 degree (lon, lat)
                gx, gy = tile_grid(*mercator(pts[:, 0] / 1e6, pts[:, 1] / 1e6), z, x, y, EXTENT)
                lines = clip_line(round_half_away(gx), round_half_away(gy), lo, hi)
                for lx, ly in lines:
                    pieces.append((nf, lx, ly))
                nf += bool(lines)
        npts = np.array([p[1].shape[0] for p in pieces], dtype=np.int64)
        first = np.zeros(npts.shape[0] + 1, dtype=np.int64)
        np.cumsum(npts, out=first[1:])
        cat = (lambda k: np.concatenate([p[k] for p in pieces]).astype(np.int32)) if pieces else None
        return {
            "line_feature": np.array([p[0] for p in pieces], dtype=np.int64),
            "line_first": first,
            "line_x": cat(1) if cat else np.zeros(0, dtype=np.int32),
            "line_y": cat(2) if cat else np.zeros(0, dtype=np.int32),
            "num_line_features": nf,
        }


def clip_line(px: np.ndarray, py: np.ndarray, lo: float, hi: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """A polyline clipped to the square [lo, hi]^2: the pieces left, clipped ends truncated to the grid; pieces
    shrunk to a point are dropped."""
    ok, x0, y0, x1, y1 = clip_segments(px[:-1], py[:-1], px[1:], py[1:], lo, hi)
    x0, y0, x1, y1 = (np.trunc(v) for v in (x0, y0, x1, y1))
    lines: list[list[tuple[float, float]]] = []
    last = -2
    for i in np.flatnonzero(ok).tolist():
        a, b = (float(x0[i]), float(y0[i])), (float(x1[i]), float(y1[i]))
        if lines and last == i - 1 and lines[-1][-1] == a:  # the line goes on (a point twice is drawn once)
            if b != a:
                lines[-1].append(b)
        elif b != a:
            lines.append([a, b])
        else:
            continue
        last = i
    return [(np.array([p[0] for p in line]), np.array([p[1] for p in line])) for line in lines]


def debug_tiles(router: Router) -> DebugTiles:
    """The `DebugTiles` of a router's graph, built on first use and kept as long as the router lives."""
    return derived(router, "debug_tiles", lambda: DebugTiles(router))

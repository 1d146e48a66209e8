"""The search space behind one interface: where a phantom's seeds are, and how a search path maps back to roads.

A graph is searched either as it is (node-based: a search node is a road node) or through its edge-based search
graph (`app.engine.route.edges`: a search node is a road arc, a search arc a turn). `SearchSpace` hides which: it gives
the seeds of a phantom, the road arcs (and the turns onto them) of a search path, the search arcs a request
forbidding some road arcs may not take, and the place of a search node on the map. Nothing outside this module asks
which kind of graph it has.

Seed kinds: FWD / BWD (the seed lies along the phantom's fwd / bwd arc), AT_FIRST / AT_LAST (the phantom sits on its
chain's first / last node and the seed is that node, at no cost).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from app.engine.data import ChainIndex, is_edge_based
from app.engine.route.assemble import AT_FIRST, AT_LAST, BWD, FWD
from app.engine.route.edges import EdgeMap, FlatSeeds, _edge_seeds, _seed_columns, seed_figures
from app.engine.snap.osrm_snap import chain_end_kind
from app.engine.types import Phantom, Seeds, new_seeds
from floor.format.graph import Graph
from floor.format.units import COORD_SCALE, OSRM_COORD_SCALE
from floor.kernels.jit import kernel


class SeedSet(NamedTuple):
    """A phantom's seeds, the kind of each (FWD/BWD/AT_FIRST/AT_LAST), and the turn inside each seed's figures as
    int64 [k, 2] (weight, travel time; zeros on a node-based graph)."""

    seeds: Seeds
    kinds: np.ndarray
    turns: np.ndarray

    def only(self, direction: int | None) -> SeedSet:
        """The seeds of one direction (FWD/BWD) plus those on a junction node; all of them for None."""
        if direction is None:
            return self
        kinds = self.kinds.tolist()
        keep = [i for i, k in enumerate(kinds) if k == direction or k == AT_FIRST or k == AT_LAST]
        if len(keep) == len(kinds):
            return self
        # a handful of seeds: the ones kept are mostly one run of them, taken as views
        at: slice | np.ndarray = (
            slice(keep[0], keep[-1] + 1)
            if keep and keep[-1] - keep[0] == len(keep) - 1
            else np.array(keep, dtype=np.intp)
        )
        s = self.seeds
        times = None if s.durations is None else s.durations[at]
        sub = new_seeds(s.nodes[at], s.weights[at], s.dists[at], s.lon, s.lat, times)
        return SeedSet(sub, self.kinds[at], self.turns[at])


class SearchSpace:
    """What the searches of one graph run on (immutable, shared by every thread). Build with `search_space`."""

    edge_based = False

    def __init__(self, graph: Graph, search: Graph, chains: ChainIndex) -> None:
        self.graph = graph
        self.search = search  # the graph the searches run on
        self.chains = chains
        self.geom_first = np.asarray(graph.geom_first, dtype=np.int64)
        self._glon, self._glat = graph.geom_lon, graph.geom_lat
        self._spots: tuple[np.ndarray, np.ndarray] | None = None  # `same_place`'s index, made on first use
        self._shared = np.zeros(0, dtype=np.bool_)  # ... and which nodes have a copy at all

    # -- seeds ------------------------------------------------------------------------------------------------------
    def seeds(self, ph: Phantom, as_source: bool) -> SeedSet:
        """The seeds of `ph` as a search source or target."""
        raise NotImplementedError

    def at_chain_end(self, ph: Phantom) -> tuple[int, int]:
        """(road node, AT_FIRST/AT_LAST) when the phantom sits on its chain's first or last node, as OSRM sees
        coordinates (both rounded to 1e-6 degrees: OSRM then takes every segment snapped to that same point as a
        candidate, so a route may leave or reach the junction by a road whose projection of the input point rounds
        onto it too, `Phantom.at_chains`; by any road where that is None), and no bearing restricted its directions;
        (-1, 0) otherwise."""
        ch = self.chains
        if not (ph.fwd_arc == ch.fwd_arc[ph.chain] and ph.bwd_arc == ch.bwd_arc[ph.chain]):
            return -1, 0
        end = chain_end_kind(self._glon, self._glat, self.geom_first, ph.chain, ph.lon, ph.lat)
        if end == 1:
            return int(ch.first_node[ph.chain]), AT_FIRST
        if end == 2:
            return int(ch.last_node[ph.chain]), AT_LAST
        return -1, 0

    def at_chain_ends(self, phantoms: Sequence[Phantom]) -> tuple[np.ndarray, np.ndarray]:
        """`at_chain_end` of many phantoms at once: (road nodes, kinds) int64, the same figures in numpy."""
        ch = self.chains
        chain = np.array([p.chain for p in phantoms], dtype=np.int64)
        arcs = np.array([(p.fwd_arc, p.bwd_arc) for p in phantoms], dtype=np.int64).reshape(-1, 2)
        at = _fixed_many(np.array([(p.lon, p.lat) for p in phantoms], dtype=np.float64).reshape(-1, 2))
        whole = (arcs[:, 0] == ch.fwd_arc[chain]) & (arcs[:, 1] == ch.bwd_arc[chain])
        nodes = np.full(len(chain), -1, dtype=np.int64)
        kinds = np.zeros(len(chain), dtype=np.int64)
        g = self.graph
        gf = self.geom_first
        ends = ((gf[chain], ch.first_node, AT_FIRST), (gf[chain + 1] - 1, ch.last_node, AT_LAST))
        for p, node, kind in ends:  # the first point wins, as in `at_chain_end`
            end = _fixed_many(np.stack([g.geom_lon[p] / COORD_SCALE, g.geom_lat[p] / COORD_SCALE], axis=1))
            hit = whole & (nodes < 0) & (at[:, 0] == end[:, 0]) & (at[:, 1] == end[:, 1])
            nodes[hit] = np.asarray(node)[chain[hit]]
            kinds[hit] = kind
        return nodes, kinds

    def same_place(self, node: int) -> np.ndarray:
        """The other road nodes at `node`'s very coordinates (int64): the copies of a blocking barrier, one per road
        end, which OSRM keeps as one point (it takes every segment snapped there as a candidate)."""
        if self._spots is None:
            g = self.graph
            key = _place_keys(np.asarray(g.node_lon), np.asarray(g.node_lat))
            order = np.argsort(key, kind="stable")
            ks = key[order]
            shared = np.zeros(len(key), dtype=np.bool_)  # nodes that have a copy: most have none
            dup = np.flatnonzero(ks[1:] == ks[:-1])
            shared[order[dup]] = True
            shared[order[dup + 1]] = True
            self._shared = shared
            self._spots = (ks, order.astype(np.int64))
        if not self._shared[node]:
            return _NO_NODES
        keys, order = self._spots
        k = _place_keys(
            np.asarray(self.graph.node_lon[node : node + 1]), np.asarray(self.graph.node_lat[node : node + 1])
        )
        lo, hi = np.searchsorted(keys, k[0], side="left"), np.searchsorted(keys, k[0], side="right")
        same = order[lo:hi]
        return same[same != node]

    # -- paths --------------------------------------------------------------------------------------------------
    def seed_sets(self, phantoms: Sequence[Phantom], as_source: bool) -> list[SeedSet | None]:
        """`seeds` of each phantom where they can be made at once, None where `seeds` makes them (here: all)."""
        return [None] * len(phantoms)

    def seeds_many(self, phantoms: Sequence[Phantom], as_source: bool) -> FlatSeeds:
        """The seeds of many phantoms, flattened (`FlatSeeds`): each phantom's `seeds(p, as_source).seeds` in turn."""
        return flat_seeds([self.seeds(p, as_source).seeds for p in phantoms])

    def road_path(self, arcs: np.ndarray, seeds: SeedSet, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(road arcs int32, the turn onto each as int64 [n, 2] or None) of a search path `arcs` that starts at
        source seed `seed` of `seeds`."""
        return np.asarray(arcs, dtype=np.int32), None

    def forbidden(self, road_arcs: np.ndarray | None) -> np.ndarray | None:
        """The search arcs a request forbidding `road_arcs` may not take (None for none)."""
        return road_arcs

    def node_lonlat(self, nodes: np.ndarray) -> np.ndarray:
        """float64 [k, 2] degrees of search nodes (traces, diagnostics): a road node, or on an edge-based graph the
        end of the search node's road arc."""
        g = self.search
        idx = np.asarray(nodes, dtype=np.int64)
        return np.stack([g.node_lon[idx], g.node_lat[idx]], axis=1) / COORD_SCALE

    # -- a phantom's own chain ------------------------------------------------------------------------------------
    def approach(self, ph: Phantom, side: str | None) -> Phantom:
        """The phantom travelled only in the direction that passes its input point on the right (`curb`, right-hand
        traffic) or on the left (`opposite`); unchanged for `unrestricted`, a point on the road itself, or when the
        other direction is the only one (a oneway)."""
        if side not in ("curb", "opposite") or ph.fwd_arc < 0 or ph.bwd_arc < 0:
            return ph
        g = self.graph
        i = int(self.geom_first[ph.chain]) + ph.segment
        k = math.cos(math.radians(ph.lat))
        dx = (float(g.geom_lon[i + 1]) - float(g.geom_lon[i])) / COORD_SCALE * k
        dy = (float(g.geom_lat[i + 1]) - float(g.geom_lat[i])) / COORD_SCALE
        vx, vy = (ph.input_lon - ph.lon) * k, ph.input_lat - ph.lat
        cross = dx * vy - dy * vx  # < 0: the input point lies right of the chain's (fwd) direction
        if abs(cross) < 1e-14 or ph.distance_m < 0.01:
            return ph
        keep_fwd = (cross < 0) == (side == "curb")
        timed = ph.fwd_time_before is not None
        if keep_fwd:
            return replace(ph, bwd_arc=-1, bwd_weight_before=0, bwd_weight_after=0, bwd_dist_before=0,
                           bwd_dist_after=0, bwd_time_before=0 if timed else None,
                           bwd_time_after=0 if timed else None)  # fmt: skip
        return replace(ph, fwd_arc=-1, fwd_weight_before=0, fwd_weight_after=0, fwd_dist_before=0, fwd_dist_after=0,
                       fwd_time_before=0 if timed else None, fwd_time_after=0 if timed else None)  # fmt: skip


class NodeSpace(SearchSpace):
    """The road graph searched as it is: a seed is the far end of a phantom's arc (or the node it sits on)."""

    def seeds(self, ph: Phantom, as_source: bool) -> SeedSet:
        """Source: head(fwd_arc) at fwd_weight_after, head(bwd_arc) at bwd_weight_after. Target: tail(fwd_arc) at
        fwd_weight_before, tail(bwd_arc) at bwd_weight_before. A phantom exactly on a chain end node also seeds that
        node at 0, unless a bearing filter restricted its directions. One seed per node (the cheapest)."""
        g = self.graph
        if as_source:
            w_f, d_f, w_b, d_b = ph.fwd_weight_after, ph.fwd_dist_after, ph.bwd_weight_after, ph.bwd_dist_after
        else:
            w_f, d_f, w_b, d_b = ph.fwd_weight_before, ph.fwd_dist_before, ph.bwd_weight_before, ph.bwd_dist_before
        at, at_kind = self.at_chain_end(ph)
        nodes, ws, ds, kinds = _seeds(
            as_source, ph.fwd_arc, ph.bwd_arc, w_f, d_f, w_b, d_b, g.arc_head, g.arc_tail, at, at_kind
        )
        fb, fa, bb, ba = ph.times()
        t_f, t_b = (fa, ba) if as_source else (fb, bb)
        times = np.where(kinds == FWD, t_f, np.where(kinds == BWD, t_b, 0)).astype(np.int64)
        got = SeedSet(Seeds(nodes, ws, ds, ph.lon, ph.lat, times), kinds, np.zeros((len(kinds), 2), dtype=np.int64))
        more = self.same_place(at) if at >= 0 else ()
        if len(more) == 0:
            return got
        zero = np.zeros(len(more), dtype=np.int64)  # a barrier's other copies: the point is on each, at no cost
        there = Seeds(np.asarray(more, dtype=np.int32), zero, zero, ph.lon, ph.lat, zero)
        return _merged([got, SeedSet(there, np.full(len(more), at_kind, np.int64), np.zeros((len(more), 2), np.int64))])


class EdgeSpace(SearchSpace):
    """The edge-based search graph (turn costs and restrictions): seeds and paths through `EdgeMap`."""

    edge_based = True

    def __init__(self, graph: Graph, search: Graph, chains: ChainIndex) -> None:
        super().__init__(graph, search, chains)
        self.edges = EdgeMap(graph, search)
        self._arc_geom = np.asarray(graph.arc_geom)

    def plain_place(self, ph: Phantom) -> tuple[int, int] | None:
        """`at_chain_end` of a phantom that `EdgeMap.seeds` seeds alone (as `seeds` does: inside its chain, or on a
        chain end with no candidate roads to keep and no barrier copies there); None for one that needs more."""
        at, kind, more = self._place(ph)
        return (at, kind) if at < 0 or (ph.at_chains is None and len(more) == 0) else None

    def _place(self, ph: Phantom) -> tuple[int, int, np.ndarray]:
        """`at_chain_end`, and the other road nodes at that node's place (`same_place`; none inside a chain)."""
        at, kind = self.at_chain_end(ph)
        return at, kind, self.same_place(at) if at >= 0 else _NO_NODES

    def seeds(self, ph: Phantom, as_source: bool) -> SeedSet:
        """One seed per search node (`EdgeMap.seeds`): a source on its own arcs' remaining part, a target on every
        search node that may turn into its arc (the turn and the part before the point included)."""
        at, kind, more = self._place(ph)
        if at < 0 or (ph.at_chains is None and len(more) == 0):
            return SeedSet(*self.edges.seeds(ph, as_source, at, kind))
        # on a junction node: the node's roads (and those of a barrier's other copies) that OSRM takes a candidate on,
        # and its own arcs, each set apart so that the cheapest seed per search node is chosen among those kept (on
        # ties the node's seed, as `_edge_seeds` keeps it): `_junction_seeds` in one call
        chains = np.asarray(ph.at_chains if ph.at_chains is not None else (), dtype=np.int64)
        nodes, w, d, t, kinds, turns = _junction_seeds(
            as_source, np.array([at, *more], dtype=np.int64), kind, *seed_figures(ph, as_source), chains,
            ph.at_chains is not None, self.edges.node_arc, self._arc_geom, self.edges.seed_arrays,
        )  # fmt: skip
        return SeedSet(Seeds(nodes, w, d, ph.lon, ph.lat, t), kinds, turns)

    def seed_sets(self, phantoms: Sequence[Phantom], as_source: bool) -> list[SeedSet | None]:
        """`seeds` of each phantom that `EdgeMap.seeds` seeds alone (`plain_place`), all of them in one kernel call
        (`EdgeMap.seed_sets`); None for the others (a junction node with candidate roads, a barrier's copies), whose
        seeds `seeds` makes one by one."""
        at_all, kinds_all = self.at_chain_ends(phantoms)
        plain = [i for i, at in enumerate(at_all.tolist())
                 if at < 0 or (phantoms[i].at_chains is None and len(self.same_place(at)) == 0)]  # fmt: skip
        out: list[SeedSet | None] = [None] * len(phantoms)
        if plain:
            sets = self.edges.seed_sets([phantoms[i] for i in plain], as_source, at_all[plain], kinds_all[plain])
            for i, got in zip(plain, sets, strict=True):
                out[i] = SeedSet(*got)
        return out

    def seeds_many(self, phantoms: Sequence[Phantom], as_source: bool) -> FlatSeeds:
        """The seeds of many phantoms, as `seeds` gives them one by one: in one kernel call (`EdgeMap.seeds_many`),
        but for phantoms on a junction node with their candidate roads or on a barrier's copies (`seeds` each)."""
        at_all, kinds_all = self.at_chain_ends(phantoms)
        alone = [i for i in np.flatnonzero(at_all >= 0).tolist()
                 if phantoms[i].at_chains is not None or len(self.same_place(int(at_all[i]))) > 0]  # fmt: skip
        if not alone:
            return self.edges.seeds_many(list(phantoms), as_source, at_all, kinds_all)
        apart = set(alone)
        batch = np.array([i for i in range(len(phantoms)) if i not in apart], dtype=np.int64)
        flat = self.edges.seeds_many([phantoms[i] for i in batch.tolist()], as_source, at_all[batch], kinds_all[batch])
        own = [self.seeds(phantoms[i], as_source).seeds for i in alone]
        counts = np.zeros(len(phantoms), dtype=np.int64)
        counts[batch] = np.diff(flat.off)
        counts[alone] = [len(x.nodes) for x in own]
        off = np.zeros(len(phantoms) + 1, dtype=np.int64)
        np.cumsum(counts, out=off[1:])
        # the batch's seeds in place: each phantom's block moves from its flat offset to its offset here
        to = np.repeat(off[batch] - flat.off[:-1], counts[batch]) + np.arange(len(flat.nodes), dtype=np.int64)
        out = FlatSeeds(
            np.empty(off[-1], np.int32), np.empty(off[-1], np.int64), np.empty(off[-1], np.int64),
            np.empty(off[-1], np.int64), off,
        )  # fmt: skip
        for field, got in zip(out[:4], flat[:4], strict=True):
            field[to] = got
        for i, x in zip(alone, own, strict=True):
            lo, hi = off[i], off[i + 1]
            out.nodes[lo:hi], out.weights[lo:hi], out.dists[lo:hi] = x.nodes, x.weights, x.dists
            out.times[lo:hi] = x.duration_array()
        return out

    def road_path(self, arcs: np.ndarray, seeds: SeedSet, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
        road, turns = self.edges.road_path(arcs)
        if seeds.kinds[seed] in (AT_FIRST, AT_LAST):  # started on the seed's whole arc
            road, turns = self.edges.with_first(int(seeds.seeds.nodes[seed]), road, turns)
        return road, turns

    def forbidden(self, road_arcs: np.ndarray | None) -> np.ndarray | None:
        return None if road_arcs is None else self.edges.forbidden(road_arcs)


_NO_NODES = np.zeros(0, dtype=np.int64)


def _fixed_many(deg: np.ndarray) -> np.ndarray:
    """`osrm_fixed` over an array (halves away from zero, the same float operations)."""
    v = deg * OSRM_COORD_SCALE
    return np.where(v >= 0.0, np.floor(v + 0.5), -np.floor(-v + 0.5))


def _place_keys(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """One int64 per coordinate pair (the graph's fixed-point ints), equal exactly where both are."""
    return (lon.astype(np.int64) << 32) | (lat.astype(np.int64) & 0xFFFFFFFF)


def _merged(sets: Sequence[SeedSet]) -> SeedSet:
    """Seed sets as one, by search node id, one seed per node (the cheapest, then the shortest, the first on ties)."""
    nodes = np.concatenate([s.seeds.nodes for s in sets])
    ws = np.concatenate([s.seeds.weights for s in sets])
    ds = np.concatenate([s.seeds.dists for s in sets])
    ts = np.concatenate([s.seeds.duration_array() for s in sets])
    kinds = np.concatenate([s.kinds for s in sets])
    turns = np.concatenate([s.turns for s in sets])
    keep = _one_per_node(nodes, ws, ds)
    first = sets[0].seeds
    seeds = Seeds(nodes[keep].astype(np.int32), ws[keep], ds[keep], first.lon, first.lat, ts[keep])
    return SeedSet(seeds, kinds[keep], turns[keep])


@kernel
def _junction_seeds(  # type: ignore[no-untyped-def]
    as_source, at_nodes, at_kind, fwd, fw, fd, ft, bwd, bw, bd, bt, chains, keep_chains, node_arc, arc_geom,
    seed_arrays,
):  # fmt: skip  # pragma: no cover - numba
    """`EdgeSpace.seeds` of a phantom on a junction node, as `_seed_columns` gives them (nodes int32, weight, dist,
    time, kind, turn [k, 2]): each of `at_nodes`' seed sets without its own arcs (`_edge_seeds`; with `keep_chains`
    only the seeds on roads of `chains`, `Phantom.at_chains`), then its own arcs' set, merged by `_one_per_node`."""
    no_arc = fwd - fwd - 1  # -1, not a literal: `_edge_seeds` is compiled once for Python's argument types
    cap = 16
    nodes = np.empty(cap, dtype=np.int32)
    rows = np.empty((cap, 6), dtype=np.int64)
    k = 0
    for i in range(at_nodes.shape[0] + 1):
        own = i == at_nodes.shape[0]  # the node sets first, then the own arcs' set
        got_n, got_r = _edge_seeds(
            as_source, no_arc if own else at_nodes[i], at_kind, fwd if own else no_arc, fw, fd, ft,
            bwd if own else no_arc, bw, bd, bt, seed_arrays,
        )  # fmt: skip
        for j in range(got_n.shape[0]):
            if keep_chains and not own:
                chain = arc_geom[node_arc[got_n[j]]] // 2
                found = False
                for q in range(chains.shape[0]):
                    if chains[q] == chain:
                        found = True
                        break
                if not found:
                    continue
            if k == cap:
                cap *= 2
                more_n = np.empty(cap, dtype=np.int32)
                more_r = np.empty((cap, 6), dtype=np.int64)
                for x in range(k):  # written out: numba's slice assignment costs compile time
                    more_n[x] = nodes[x]
                    for col in range(6):
                        more_r[x, col] = rows[x, col]
                nodes, rows = more_n, more_r
            nodes[k] = got_n[j]
            for col in range(6):
                rows[k, col] = got_r[j, col]
            k += 1
    all_n = np.empty(k, dtype=np.int32)
    all_w = np.empty(k, dtype=np.int64)
    all_d = np.empty(k, dtype=np.int64)
    for x in range(k):
        all_n[x] = nodes[x]
        all_w[x] = rows[x, 0]
        all_d[x] = rows[x, 1]
    keep = _one_per_node(all_n, all_w, all_d)
    m = keep.shape[0]
    out_n = np.empty(m, dtype=np.int32)
    out_r = np.empty((m, 6), dtype=np.int64)
    for x in range(m):
        out_n[x] = nodes[keep[x]]
        for col in range(6):
            out_r[x, col] = rows[keep[x], col]
    w, d, t, kind, turns = _seed_columns(out_r)
    return out_n, w, d, t, kind, turns


@kernel
def _one_per_node(nodes, ws, ds):  # type: ignore[no-untyped-def]  # pragma: no cover - numba
    """Indices of the seed kept per node, by node id: the least (weight, dist, index) among the node's seeds."""
    k = nodes.shape[0]
    out = np.empty(k, dtype=np.int64)
    m = 0
    for i in range(k):
        best = True
        for j in range(k):
            if j != i and nodes[j] == nodes[i]:
                if ws[j] < ws[i] or (ws[j] == ws[i] and (ds[j] < ds[i] or (ds[j] == ds[i] and j < i))):
                    best = False
                    break
        if best:
            p = m  # insertion by node id (each node once)
            while p > 0 and nodes[out[p - 1]] > nodes[i]:
                out[p] = out[p - 1]
                p -= 1
            out[p] = i
            m += 1
    return out[:m]


def flat_seeds(seeds: Sequence[Seeds]) -> FlatSeeds:
    """Seed sets in flat arrays (`FlatSeeds`), set i at off[i]..off[i+1]-1."""
    off = np.zeros(len(seeds) + 1, dtype=np.int64)
    np.cumsum([len(s.nodes) for s in seeds], out=off[1:])
    if not seeds:
        empty = np.zeros(0, np.int64)
        return FlatSeeds(np.zeros(0, np.int32), empty, empty, empty, off)
    return FlatSeeds(
        np.concatenate([s.nodes for s in seeds]).astype(np.int32),
        np.concatenate([s.weights for s in seeds]).astype(np.int64),
        np.concatenate([s.dists for s in seeds]).astype(np.int64),
        np.concatenate([s.duration_array() for s in seeds]).astype(np.int64),
        off,
    )


def search_space(graph: Graph, search: Graph, chains: ChainIndex) -> SearchSpace:
    """The search space of a graph: edge-based where the graph has an edge-based search graph."""
    return EdgeSpace(graph, search, chains) if is_edge_based(graph) else NodeSpace(graph, search, chains)


@kernel
def _seeds(  # pragma: no cover - numba
    as_source: bool, fwd: int, bwd: int, w_f: int, d_f: int, w_b: int, d_b: int, arc_head: np.ndarray,
    arc_tail: np.ndarray, at_node: int, at_kind: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """(nodes, weights, dists, kinds) of a phantom's seeds, one per node (the cheapest, then the shortest); a phantom
    on road node `at_node` (>= 0, `at_chain_end`) also seeds that node at 0 with kind `at_kind`."""
    nodes = np.empty(3, dtype=np.int32)
    ws = np.empty(3, dtype=np.int64)
    ds = np.empty(3, dtype=np.int64)
    kinds = np.empty(3, dtype=np.int64)
    k = 0
    if fwd >= 0:
        nodes[k] = arc_head[fwd] if as_source else arc_tail[fwd]
        ws[k], ds[k], kinds[k] = w_f, d_f, 0
        k += 1
    if bwd >= 0:
        nodes[k] = arc_head[bwd] if as_source else arc_tail[bwd]
        ws[k], ds[k], kinds[k] = w_b, d_b, 1
        k += 1
    if at_node >= 0:  # exactly on a chain end node: that node, at no cost
        nodes[k], ws[k], ds[k], kinds[k] = at_node, 0, 0, at_kind
        k += 1
    keep = np.ones(k, dtype=np.bool_)
    for a in range(k):
        for b in range(k):
            if a != b and nodes[a] == nodes[b]:
                if ws[b] < ws[a] or (ws[b] == ws[a] and (ds[b] < ds[a] or (ds[b] == ds[a] and b < a))):
                    keep[a] = False
    sel = np.flatnonzero(keep)
    return nodes[sel], ws[sel], ds[sel], kinds[sel]

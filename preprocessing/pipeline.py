"""The preprocess pipeline: a short list of named stages from an OSM extract to a graph directory.

    check input -> read ways -> read nodes -> build graph -> [turns] -> [contract (CH)] -> [cch (order)]
                -> [landmarks (ALT)] -> write

With turns (the profile's `TURNS`, or `turns=`), the restrictions are read and the search stages (CH, landmarks) run
on the edge-based search graph (`preprocessing.turns`); the manifest's `search_graph` says which ("edge"/"node").
With `cch` (the default with `ch`), the customizable hierarchy's structure is built too (`preprocessing.cch`): the
engine customizes new metrics on it, and the excludable class sets become metrics of it instead of one witness
hierarchy each (`chx{i}_`, still built with `cch=False`).

Each stage logs, is timed and records peak memory in the manifest. The graph directory is written atomically by
`floor.format.graph`, so an error or Ctrl-C at any point leaves no half-written output.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from floor.format.arrays import (
    CH_PREFIX,
    EB_PREFIX,
    VIEW_NAMES,
    FormatError,
    ch_names,
    exclude_prefix,
    search_view_arrays,
)
from floor.format.graph import graph_in_memory, save_graph
from floor.format.units import COORD_SCALE
from floor.kernels.measure import measured_max_speed_mps
from floor.report import Reporter
from preprocessing import __version__, memory_budget
from preprocessing.build import NoRoutableWays, build_arrays
from preprocessing.errors import PreprocessError
from preprocessing.osm.profiles import get_profile
from preprocessing.osm.profiles.base import class_mask
from preprocessing.osm.read import OsmInputError, check_input, read_nodes, read_ways
from preprocessing.osm.restrictions import Restriction, osrm_via_nodes, read_restrictions, resolve_restrictions
from preprocessing.spill import Spill


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def preprocess(
    input_path: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    profile: str = "car",
    ch: bool = True,
    landmarks: int = 16,
    force: bool = False,
    quiet: bool = False,
    reporter: Reporter | None = None,
    turns: bool | None = None,
    basemap: bool | None = None,
    cch: bool = True,
    driving_side: str = "right",
    low_memory: bool = False,
    force_memory: bool = False,
) -> Path:
    """Turn an OSM extract into a graph directory for `profile`; returns the directory's path.

    Raises PreprocessError with a one-line reason for every bad input (missing or corrupt file, unknown profile,
    no routable ways, existing output without `force`). `turns` (default: the profile's `TURNS`) builds the
    edge-based search graph with turn costs and restrictions. `cch` (with `ch`) adds the customizable hierarchy's
    structure, on which the excludable sets are customized at run time instead of contracted here. `driving_side`
    ("right" or "left"): the side traffic keeps to, which the turn costs mirror (OSRM decides it per way from its
    own index of left-hand countries; here it is the whole extract's, said by whoever preprocesses it).

    Memory (`preprocessing.memory_budget`): the run's estimated peak is logged first; `NotEnoughMemory` stops it
    before reading the extract, and again before each heavy stage, when the machine's available memory cannot hold
    it (`force_memory`: go on regardless). The CCH order and the landmarks are built beside the contraction only
    when the three fit with a margin and not `low_memory`; the manifest's `memory` says which was chosen and why.
    """
    src = Path(input_path)
    out = Path(output_dir)
    rep = reporter or Reporter(quiet=quiet)
    try:
        prof = get_profile(profile)
    except ValueError as exc:
        raise PreprocessError(str(exc)) from None
    if landmarks < 0:
        raise PreprocessError("--landmarks must be 0 or more")
    if driving_side not in ("right", "left"):
        raise PreprocessError(f"--driving-side is right or left, not {driving_side!r}")
    try:
        check_input(src)
    except OsmInputError as exc:
        raise PreprocessError(str(exc)) from None
    if out.exists() and not force:
        raise PreprocessError(f"output {out} already exists: pass --force to replace it")
    needs = memory_budget.run_estimate(src)
    available = memory_budget.available_mib()
    rep.log(
        f"starroute: needs about {needs.after:,.0f} MiB ({needs.beside:,.0f} with the CCH order and landmarks "
        f"beside the contraction); this machine has "
        + ("an unknown amount available" if available is None else f"{available:,.0f} MiB available")
    )
    memory_budget.require("this extract", needs.after - memory_budget.rss_mib(), force_memory)

    try:
        with rep.stage("read ways", unit="ways") as tick:
            ways = read_ways(src, prof, progress=tick)
        if len(ways.osm_id) == 0:
            raise PreprocessError(f"{src.name} has no routable ways for profile {profile!r}")
        needed = np.unique(ways.refs)
        with rep.stage("read nodes", total=len(needed), unit="nodes") as tick:
            nodes = read_nodes(src, needed, prof, progress=tick)
        del needed
        if turns is None:
            turns = bool(prof.TURNS)
        restrictions: list[Restriction] = []
        r_report: dict[str, int] = {}
        if turns:  # their via nodes stay nodes of OSRM's graph, which the build follows
            with rep.stage("read restrictions"):
                restrictions, r_report = read_restrictions(src, prof)
        vias = osrm_via_nodes(restrictions, ways.osm_id, ways.first, ways.refs)
        memory_budget.require("build graph", memory_budget.build_estimate(src) - memory_budget.rss_mib(), force_memory)
        with rep.stage("build graph"):
            arrays, build_report = build_arrays(ways, nodes, obstacles_on_turns=turns, hard_osm_ids=vias)
    except OsmInputError as exc:
        raise PreprocessError(str(exc)) from None
    except NoRoutableWays:
        raise PreprocessError(f"{src.name} has no routable ways for profile {profile!r}") from None

    report: dict[str, Any] = dict(ways.report)
    report.update(build_report)
    strings = len(ways.strings)
    from preprocessing.osm.penalties import penalty_arrays  # where gates are, for the steps

    pen_arrays = penalty_arrays(nodes)
    del ways, nodes, vias  # the OSM tables end with the build: none is held beside the later stages
    contract = ch or landmarks > 0
    if turns or contract:  # compiled (first run) or loaded before the stages, reported as compile, not stage time
        estimate = (TURNS_COMPILE_S if turns else 0.0) + (CONTRACT_COMPILE_S if contract else 0.0)
        with rep.compiling("preprocessing kernels", estimate):
            warm_kernels(turns=turns, contract=contract)
    if turns:
        from preprocessing.turns import edge_based_graph

        with rep.stage("turns"):
            sequences, s_report = resolve_restrictions(restrictions, arrays)
            eb_arrays, t_report = edge_based_graph(arrays, prof, sequences, driving_side == "left")
        arrays.update(eb_arrays)
        from preprocessing.osm.maneuvers import (  # OSRM's maneuver overrides, for the steps
            maneuver_arrays,
            read_maneuvers,
        )

        with rep.stage("maneuver overrides"):
            arrays.update(maneuver_arrays(read_maneuvers(src), arrays))
        report.update(r_report)
        report.update(s_report)
        report.update(t_report)
    n = build_report["nodes"]
    lon = arrays["node_lon"]
    glon, glat = arrays["geom_lon"], arrays["geom_lat"]
    manifest: dict[str, Any] = {
        "profile": profile,
        "mode": prof.MODE,
        "start_modes": list(prof.START_MODES),
        "source": {"name": src.name, "size": src.stat().st_size, "sha256": sha256_file(src)},
        "counts": {
            "nodes": n,
            "arcs": build_report["arcs"],
            "chains": build_report["chains"],
            "shape_points": build_report["shape_points"],
            "strings": strings,
            "components": build_report["components"],
            "largest_component_nodes": build_report["largest_component_nodes"],
        },
        "bbox": [
            float(glon.min()) / COORD_SCALE,
            float(glat.min()) / COORD_SCALE,
            float(glon.max()) / COORD_SCALE,
            float(glat.max()) / COORD_SCALE,
        ]
        if len(lon)
        else None,
        "units": {"coordinates": "1e-7 degree", "weight": "decisecond", "distance": "decimetre"},
        "weight_name": prof.WEIGHT_NAME,
        "search_graph": "edge" if turns else "node",
        "continue_straight": bool(prof.CONTINUE_STRAIGHT),
        "driving_side": driving_side,
        "max_speed_mps": measured_max_speed_mps(arrays),
        "tool_version": __version__,
        "built_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "report": report,
    }

    with Spill(out) as spill:  # finished arrays leave memory for a scratch file until the graph is written
        graph = graph_in_memory(arrays, manifest)
        if turns:  # the search stages run on the edge-based graph, under the road graph's array names
            graph = graph_in_memory(search_view_arrays(arrays), manifest)
            n = graph.num_nodes
            view = {EB_PREFIX + name for name in VIEW_NAMES}
            spill.out(arrays, [name for name in arrays if name not in view])  # the road graph's: read again at write
        excludable = [sorted(s) for s in prof.EXCLUDABLE]
        manifest["excludable"] = [{"classes": c, "mask": class_mask(tuple(c))} for c in excludable]
        cch = cch and ch
        # one hierarchy to contract (the excludable sets are customized on the CCH) leaves a core idle for the longest
        # stage: the CCH order and the landmarks are built on it meanwhile (their kernels, like the contraction's,
        # release the GIL) when the memory allows their peaks stacked on the contraction's; the same arrays either way
        at_once = CONTRACT_THREADS if ch and not cch and excludable else 1
        extra = memory_budget.search_extra_mib(n, ch, cch, landmarks, at_once)
        available = memory_budget.available_mib()  # now, with the graph built
        manifest["memory"] = memory = _side_stages(needs, available, extra, ch and cch, low_memory)
        beside = _Beside(graph, cch, landmarks, spill) if memory["side_stages"] == "beside" else None
        if beside is None:
            memory_budget.require("contract (CH)", extra.ch, force_memory)
        else:
            memory_budget.require("contract (CH) with the CCH order and landmarks beside", extra.beside(), force_memory)
        if ch:
            _contract_all(graph, arrays, manifest, rep, excludes=not cch)
            spill.out(arrays, [name for name in arrays if name.startswith(("ch_", "chx"))])
        if cch:
            from preprocessing.cch import build_cch

            if beside is None:
                memory_budget.require("cch (order)", extra.cch, force_memory)
            with rep.stage("cch (order)"):
                cch_arrays, manifest["cch"] = beside.result("cch (order)", rep) if beside else build_cch(graph)
            arrays.update(cch_arrays)
            spill.out(arrays, list(cch_arrays))  # done: out of memory before the landmarks (after the contraction)
        if landmarks > 0:
            from preprocessing.landmarks import build_landmarks

            if beside is None:
                memory_budget.require("landmarks (ALT)", extra.landmarks, force_memory)
            with rep.stage("landmarks (ALT)", total=landmarks, unit="landmarks") as tick:
                if beside is not None:
                    lm_arrays, lm_meta = beside.result("landmarks (ALT)", rep)
                    tick(landmarks)
                else:
                    lm_arrays, lm_meta = build_landmarks(graph, count=landmarks, progress=_progress_adapter(tick))
            arrays.update(lm_arrays)
            manifest["landmarks"] = lm_meta

        # the map's background (`basemap`: None = by extract size)
        from preprocessing.basemap import build_basemap, wanted

        arrays.update(pen_arrays)
        if wanted(src, basemap):
            with rep.stage("basemap"):
                bg_arrays, manifest["basemap"] = build_basemap(src)
            arrays.update(bg_arrays)
        memory["spilled_mib"] = round(spill.bytes / 2**20, 1)
        manifest["stages"] = dict(rep.stages)
        try:
            with rep.stage("write"):
                save_graph(out, arrays, manifest, force=force)
        except FormatError as exc:
            raise PreprocessError(str(exc)) from None
    return out


CONTRACT_THREADS = 2  # the contraction kernels release the GIL: hierarchies are built two at a time


def _side_stages(
    estimate: memory_budget.RunEstimate,
    available: float | None,
    extra: memory_budget.SearchExtra,
    both: bool,
    low_memory: bool,
) -> dict[str, Any]:
    """The manifest's `memory`: the estimates (MiB), the available memory, and whether the CCH order and the
    landmarks run beside the contraction (`side_stages` "beside") or after it ("after"), with the reason."""
    if not both or CONTRACT_THREADS < 2:
        side, why = "after", "no contraction to run beside"
    elif low_memory:
        side, why = "after", "--low-memory"
    elif memory_budget.fits_beside(extra, available):
        side, why = "beside", "fits the available memory"
    else:
        side, why = "after", "beside would not fit the available memory"
    return {
        "estimate_mib": round(estimate.after),
        "estimate_beside_mib": round(estimate.beside),
        "available_mib": None if available is None else round(available),
        "search_stages_mib": {k: round(v) for k, v in extra._asdict().items()},
        "side_stages": side,
        "why": why,
    }


class _Beside:
    """The CCH order and the landmarks, built on a thread of their own while the hierarchy contracts; each result
    is kept under its stage's name."""

    def __init__(self, graph: Any, cch: bool, landmarks: int, spill: Spill) -> None:
        self._done: dict[str, tuple[Any, float]] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(graph, cch, landmarks, spill), daemon=True, name="starroute-beside"
        )
        self._thread.start()

    def _run(self, graph: Any, cch: bool, landmarks: int, spill: Spill) -> None:
        # each result is spilled once built: the contraction's peak comes after them (3 M nodes: the landmarks'
        # tables alone are 150 MiB), so they need not sit in memory under it
        try:
            if cch:
                from preprocessing.cch import build_cch

                t0 = time.perf_counter()
                built = build_cch(graph)
                spill.out(built[0], list(built[0]))
                self._done["cch (order)"] = (built, time.perf_counter() - t0)
            if landmarks > 0:
                from preprocessing.landmarks import build_landmarks

                t0 = time.perf_counter()
                built = build_landmarks(graph, count=landmarks)
                spill.out(built[0], list(built[0]))
                self._done["landmarks (ALT)"] = (built, time.perf_counter() - t0)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
            self._error = exc

    def result(self, stage: str, rep: Reporter) -> Any:
        """What the stage built, once the thread ends; the stage's record says it ran beside the contraction and
        how long it took there (its own seconds: the wait is not its work)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        value, seconds = self._done[stage]
        rep.note_beside(stage, seconds, "contract (CH)")
        return value


def _contract_all(
    graph: Any, arrays: dict[str, np.ndarray], manifest: dict[str, Any], rep: Reporter, excludes: bool = True
) -> None:
    """The main hierarchy and (`excludes`) one per excludable class set (OSRM's per-exclude metrics),
    `CONTRACT_THREADS` at a time on daemon threads (a stop never waits for them), as one stage. A set whose classes
    no arc carries is the main hierarchy itself: its prefix points there and nothing is contracted. Without
    `excludes` a set that needs a hierarchy of its own gets prefix None: the engine customizes it on the CCH."""
    from preprocessing.contract import build_ch

    flags = np.asarray(graph.arc_flags)
    jobs: list[tuple[str, int]] = [(CH_PREFIX, 0)]
    for i, item in enumerate(manifest["excludable"]):
        if not np.any(flags & item["mask"]):
            item["prefix"] = CH_PREFIX
        elif excludes:
            item["prefix"] = exclude_prefix(i)
            jobs.append((item["prefix"], item["mask"]))
        else:
            item["prefix"] = None
    n = graph.num_nodes
    results: dict[str, tuple[dict[str, np.ndarray], dict[str, Any]]] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()
    with rep.stage("contract (CH)", total=n * len(jobs), unit="nodes") as tick:
        done: dict[str, int] = {}

        def progress(prefix: str) -> Callable[[int, int], None]:
            def cb(k: int, total: int) -> None:
                with lock:
                    step = max(k - done.get(prefix, 0), 0)
                    done[prefix] = k
                tick(step)

            return cb

        def work(queue: list[tuple[str, int]]) -> None:
            while True:
                with lock:
                    if not queue or errors:
                        return
                    prefix, mask = queue.pop(0)
                try:
                    results[prefix] = build_ch(graph, progress=progress(prefix), exclude_mask=mask)
                except BaseException as exc:  # noqa: BLE001 - re-raised on the calling thread
                    with lock:
                        errors.append(exc)
                    return

        queue = list(jobs)
        threads = [threading.Thread(target=work, args=(queue,), daemon=True) for _ in range(CONTRACT_THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    for prefix, (ch_arrays, meta) in results.items():
        stored = ch_names(prefix)
        arrays.update({stored[name]: a for name, a in ch_arrays.items()})
        if prefix == CH_PREFIX:
            manifest["ch"] = meta
    for item in manifest["excludable"]:
        if item["prefix"] is not None:
            item["shortcuts"] = results[item["prefix"]][1]["shortcuts"]


# Measured cold compile of the contraction and landmark kernels, 2 shared cores (a cold Monaco preprocess: 10.2-10.8 s),
# and of the turn stage's kernels (`python -m bench.turn_compile`: 10.4-11.3 s): the compile block's estimate.
CONTRACT_COMPILE_S = 10.0
TURNS_COMPILE_S = 11.0

# A junction of four roads, one of them oneway, beside a junction of three: a map every turn kernel runs on.
_TINY_MAP = """<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6" generator="starroute-warm">
<node id="1" version="1" lat="43.7300" lon="7.4200"/><node id="2" version="1" lat="43.7300" lon="7.4210"/>
<node id="3" version="1" lat="43.7300" lon="7.4220"/><node id="4" version="1" lat="43.7310" lon="7.4210"/>
<node id="5" version="1" lat="43.7290" lon="7.4210"/><node id="6" version="1" lat="43.7305" lon="7.4225"/>
<node id="7" version="1" lat="43.7310" lon="7.4221"/>
<way id="1" version="1"><nd ref="1"/><nd ref="2"/><nd ref="3"/><tag k="highway" v="primary"/><tag k="name" v="A"/></way>
<way id="2" version="1"><nd ref="4"/><nd ref="2"/><nd ref="5"/><tag k="highway" v="residential"/><tag k="name" v="B"/>
<tag k="oneway" v="yes"/></way>
<way id="3" version="1"><nd ref="3"/><nd ref="6"/><nd ref="7"/><tag k="highway" v="residential"/></way>
</osm>
"""


def warm_kernels(turns: bool = False, contract: bool = True) -> None:
    """Compile (first run) or load the preprocessing kernels on tiny inputs, so that a real graph's stages time
    their own work, their progress bars move from the start, and the compile time is reported on its own: the turn
    stage's (`turns`) on a map of two junctions, the contraction's and landmarks' (`contract`) on a 3-node graph."""
    if turns:
        warm_turn_kernels()
    if contract:
        from preprocessing.cch import build_cch
        from preprocessing.contract import build_ch
        from preprocessing.graph import arrays_from_arcs
        from preprocessing.landmarks import build_landmarks

        tiny = graph_in_memory(arrays_from_arcs([0, 1, 1, 2], [1, 0, 2, 1], [10, 10, 20, 20], [100, 100, 200, 200]))
        build_ch(tiny)
        build_cch(tiny)
        build_landmarks(tiny, count=2)


def tiny_turn_input() -> tuple[dict[str, np.ndarray], Any, list[Restriction]]:
    """`_TINY_MAP`'s road graph arrays, the car profile and its restrictions: the turn stage's input."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="starroute-warm-") as d:
        src = Path(d) / "tiny.osm"
        src.write_text(_TINY_MAP, encoding="utf-8")
        return turn_input(src, "car")


def turn_input(src: Path, profile: str = "car") -> tuple[dict[str, np.ndarray], Any, list[Restriction]]:
    """The road graph arrays of extract `src`, the profile and its restrictions, as `preprocess` has them before its
    turn stage (without its reporting); the turn stage's input for the warm-up and bench/turn_stage.py."""
    prof = get_profile(profile)
    ways = read_ways(src, prof)
    nodes = read_nodes(src, np.unique(ways.refs), prof)
    restrictions, _ = read_restrictions(src, prof)
    vias = osrm_via_nodes(restrictions, ways.osm_id, ways.first, ways.refs)
    arrays, _ = build_arrays(ways, nodes, obstacles_on_turns=True, hard_osm_ids=vias)
    return arrays, prof, restrictions


def warm_turn_kernels(tiny: tuple[dict[str, np.ndarray], Any, list[Restriction]] | None = None) -> None:
    """The turn stage (`resolve_restrictions`, `turns.edge_based_graph`) on `tiny_turn_input()` (or `tiny`): every
    kernel it calls compiles or loads, the intersection views' (`intersections.views`) included."""
    from floor.intersections.views import ready
    from preprocessing.turns import edge_based_graph

    arrays, prof, restrictions = tiny or tiny_turn_input()
    sequences, _ = resolve_restrictions(restrictions, arrays)
    edge_based_graph(arrays, prof, sequences, False)
    ready()  # the views' kernels whatever the map exercised


def _progress_adapter(tick):  # type: ignore[no-untyped-def]
    """Stage callbacks report (done, total); the reporter's bar wants increments."""
    state = {"done": 0}

    def cb(done: int, total: int) -> None:
        tick(max(done - state["done"], 0), total=total)
        state["done"] = done

    return cb

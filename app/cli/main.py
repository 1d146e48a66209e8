"""The `starroute` command line: a thin shell over the pipeline stages, the engine and the server.

Bad input gets one line on stderr and exit status 2, never a traceback. Ctrl-C or SIGTERM stops any command at
once: preprocess and download leave nothing behind (exit 130 / 143), serve exits 0. Each command imports only what
it uses, so `starroute route` never loads the web stack and `starroute preprocess` never loads the engine.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.engine.search.algorithms import NAMES as ALGORITHMS  # the registry (no numba behind it)

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT; SIGTERM gives 143
DEFAULT_EXTRACT = Path("data/monaco.osm.pbf")
PROFILES = ("car", "bike", "foot", "testbot")  # preprocessing.osm.profiles.PROFILES, without importing the profiles

OSM_SUFFIXES = (".osm.pbf", ".pbf", ".osm", ".osm.gz", ".osm.bz2", ".xml", ".osm.xml")


class CliError(Exception):
    """A user-facing failure: printed as one `starroute: error:` line, exit status `code`."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.code = code


def version() -> str:
    """The installed package version (the source tree's when not installed)."""
    try:
        from importlib.metadata import version as dist_version

        return dist_version("starroute")
    except Exception:  # noqa: BLE001 - running from a source tree that was never installed
        from preprocessing import __version__

        return __version__


def parse_lonlat(text: str, what: str) -> tuple[float, float]:
    """`lon,lat` in degrees, in range; `CliError` naming the option otherwise."""
    try:
        lon_s, lat_s = text.split(",")
        lon, lat = float(lon_s), float(lat_s)
    except ValueError:
        raise CliError(f"{what} must be 'lon,lat', got {text!r}") from None
    if not (-180 <= lon <= 180 and -90 <= lat <= 90):
        raise CliError(f"{what} {text!r} is out of range (lon -180..180, lat -90..90)")
    return lon, lat


def default_graph_dir(extract: Path, profile: str) -> Path:
    """Where `preprocess` writes by default: `graphs/<extract name>-<profile>`."""
    return Path("graphs") / f"{extract.name.split('.')[0]}-{profile}"


def default_extract() -> Path:
    """`data/monaco.osm.pbf` of the working directory, else the one beside this source tree."""
    if DEFAULT_EXTRACT.exists():
        return DEFAULT_EXTRACT
    beside = Path(__file__).resolve().parent.parent / DEFAULT_EXTRACT
    return beside if beside.exists() else DEFAULT_EXTRACT


# -- preprocess ---------------------------------------------------------------------------------------------------


def print_summary(out: Path, stages: dict[str, dict[str, float]], hint: bool = True, file: Any = None) -> None:
    """The closing summary of `preprocess`: counts, stage times, and the command to run next; on stdout (`file`
    None), the command's result, while its progress went to stderr."""
    lines = summary_lines(out, stages)
    if hint:
        lines.append(f"next: starroute serve {out}")
    print("\n".join(lines), file=file or sys.stdout, flush=True)


def summary_lines(out: Path, stages: dict[str, dict[str, float]] | None = None) -> list[str]:
    """A graph directory in a dozen lines: counts, hierarchies, turns, what was dropped, stage times (the
    manifest's when `stages` is None)."""
    from floor.format.manifest import read_manifest

    mf = read_manifest(out)
    stages = mf.get("stages", {}) if stages is None else stages
    c = mf["counts"]
    lines = [
        f"graph       {out}",
        f"profile     {mf['profile']}  (source {mf['source']['name']}, {mf['source']['size']:,} bytes)",
        f"nodes       {c['nodes']:,}   arcs {c['arcs']:,}   shape points {c['shape_points']:,}",
        f"components  {c['components']:,} strongly connected; largest holds {c['largest_component_nodes']:,} nodes",
    ]
    if "ch" in mf:
        lines.append(
            f"CH          {mf['ch'].get('shortcuts', 0):,} shortcuts "
            f"({mf['ch'].get('shortcuts_per_arc', 0):.2f} per arc)"
        )
    if "landmarks" in mf:
        lines.append(f"landmarks   {mf['landmarks'].get('count', 0)}")
    from floor.format.arrays import FormatError
    from floor.format.metrics import read_metric

    try:
        metric = read_metric(out, mf)
    except FormatError as exc:
        lines.append(f"metric      unusable: {exc}")
    else:
        if metric is not None:
            rep = metric.get("report", {})
            lines.append(
                f"metric      {metric['id']} (starroute customize, {metric.get('built_at')}): "
                f"{rep.get('segment_keys_applied', 0):,} segments, {rep.get('turn_keys_applied', 0):,} turns updated"
            )
    r = mf["report"]
    if mf.get("search_graph") == "edge":
        lines.append(
            f"turns       {r.get('search_nodes', 0):,} search nodes, {r.get('search_arcs', 0):,} turns; "
            f"restrictions {r.get('restrictions_used', 0):,} used of {r.get('restriction_relations', 0):,}"
        )
    counted = ("missing", "ways_rejected", "way_pieces", "ways_split", "barrier", "ways_too_short")
    dropped = {k: v for k, v in r.items() if k.startswith(counted) and v}
    if dropped:
        lines.append("counted     " + ", ".join(f"{k}={v:,}" for k, v in dropped.items()))
    lines.append(f"{'stage':<18}{'seconds':>9}{'peak RSS MiB':>14}")
    total = 0.0
    for name, s in stages.items():
        total += s.get("waited_s", s["seconds"])  # a stage built beside another: its wait, not its own seconds
        beside = f"  (beside {s['beside']})" if "beside" in s else ""
        lines.append(f"{name:<18}{s['seconds']:>9.2f}{s['peak_rss_mb']:>14.0f}{beside}")
    lines.append(f"{'total':<18}{total:>9.2f}")
    return lines


def build_graph(
    extract: Path,
    output: Path,
    profile: str,
    ch: bool,
    landmarks: int,
    force: bool,
    quiet: bool,
    hint: bool = True,
    turns: bool | None = None,
    basemap: bool | None = None,
    cch: bool = True,
    driving_side: str = "right",
    summary: Any = None,
) -> Path:
    """Run the preprocess pipeline with a progress reporter (stderr: a bar per stage on a terminal, a line per step
    otherwise), then print the summary to `summary` (None: stdout); `CliError` with its one-line reason on bad
    input."""
    from floor.report import Reporter
    from preprocessing.pipeline import PreprocessError, preprocess

    rep = Reporter(quiet=quiet)
    try:
        out = preprocess(
            extract,
            output,
            profile=profile,
            ch=ch,
            landmarks=landmarks,
            force=force,
            reporter=rep,
            turns=turns,
            basemap=basemap,
            cch=cch,
            driving_side=driving_side,
        )
    except PreprocessError as exc:
        raise CliError(str(exc)) from None
    except MemoryError:
        raise CliError("out of memory; no graph was written", code=1) from None
    if not quiet:
        print_summary(out, rep.stages, hint, summary)
    return out


def _abandon() -> None:
    """On a signal: remove what the interrupted work left half made (temporary outputs, folders, cache files)."""
    from app.warmup import abandon_compiles
    from floor.format.files import abandon

    abandon()
    abandon_compiles()


def _up_to_date(output: Path, args: argparse.Namespace) -> bool:
    """Whether `output` already holds what this `preprocess` would build: the same extract (name, size, sha256),
    profile, hierarchy, landmark count, search graph and driving side."""
    from floor.format.arrays import FormatError
    from floor.format.manifest import read_manifest

    if not (output.is_dir() and args.input.is_file() and _graph_matches(output, args.input, args.profile)):
        return False
    try:
        mf = read_manifest(output)
    except FormatError:
        return False
    if args.turns is None:
        from preprocessing.osm.profiles import get_profile

        turns = bool(getattr(get_profile(args.profile), "TURNS", False))
    else:
        turns = args.turns
    return (
        ("ch" in mf) == (not args.no_ch)
        and ("cch" in mf) == (not args.no_ch and not args.no_cch)
        and mf.get("landmarks", {}).get("count", 0) == args.landmarks
        and (mf.get("search_graph") == "edge") == bool(turns)
        and (args.basemap is None or bool(mf.get("basemap")) == args.basemap)
        and mf.get("driving_side", "right") == args.driving_side
    )


def cmd_preprocess(args: argparse.Namespace) -> int:
    from app.stoppable import run_until_signal

    output = args.output or default_graph_dir(args.input, args.profile)
    if not args.force and _up_to_date(output, args):
        print(f"starroute: {output} is up to date (built from this {args.input.name}, same options)", file=sys.stderr)
        return 0
    run_until_signal(
        lambda: build_graph(
            args.input,
            output,
            args.profile,
            not args.no_ch,
            args.landmarks,
            args.force,
            args.quiet,
            turns=args.turns,
            basemap=args.basemap,
            cch=not args.no_cch,
            driving_side=args.driving_side,
        ),
        on_stop=_abandon,
        message="no graph was written",
    )
    return 0


# -- serve --------------------------------------------------------------------------------------------------------


def _graph_matches(graph_dir: Path, extract: Path, profile: str) -> bool:
    """Whether `graph_dir` holds a graph of this extract and profile (name, size and checksum of the source)."""
    from floor.format.arrays import FormatError
    from floor.format.manifest import read_manifest
    from preprocessing.pipeline import sha256_file

    try:
        mf = read_manifest(graph_dir)
    except FormatError:
        return False
    src = mf.get("source", {})
    return (
        mf.get("profile") == profile
        and src.get("name") == extract.name
        and src.get("size") == extract.stat().st_size
        and src.get("sha256") == sha256_file(extract)
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from app.stoppable import run_until_signal
    from app.warmup import compile_all, is_compiled, start_first_engine_job, stop_compile_jobs

    target: Path = args.target if args.target is not None else default_extract()
    extract = target.is_file() or target.name.lower().endswith(OSM_SUFFIXES)
    if not is_compiled("engine") or (extract and not is_compiled("preprocess")):
        # A first run. Workers to fork (they share what was compiled before): every kernel first, both halves at
        # once in two processes. One worker compiles only what a first route, table and nearest need, serves, and
        # compiles the rest behind them (`app.warmup.warm_service`); with a graph to build, snapping, the searches
        # and the legs compile in a child process meanwhile (the preprocessing kernels compile as they are used).
        if args.workers > 1:
            run_until_signal(lambda: compile_all(jobs=2), on_stop=_abandon, status=lambda s: 0, message="stopped")
        elif extract and not is_compiled("engine"):
            start_first_engine_job()
    try:
        return _serve(args, target, extract)
    finally:
        stop_compile_jobs()


def _serve(args: argparse.Namespace, target: Path, extract: bool) -> int:
    """`cmd_serve` once kernels are dealt with: build the graph if `target` is an extract, then serve it."""
    from app.stoppable import run_until_signal

    if extract:
        graph_dir = default_graph_dir(target, args.profile)
        if not target.is_file():
            raise CliError(f"input file {target} does not exist")
        if _graph_matches(graph_dir, target, args.profile):
            print(f"starroute: using the graph {graph_dir} built from {target}", file=sys.stderr)
        else:
            print(f"starroute: building {graph_dir} from {target} (profile {args.profile})", file=sys.stderr)
            run_until_signal(
                lambda: build_graph(  # its summary beside the server's log lines, on stderr
                    target, graph_dir, args.profile, True, 16, graph_dir.exists(), False, False, summary=sys.stderr
                ),
                on_stop=_abandon,
                status=lambda signum: 0,
                message="no graph was written",
            )
    else:
        graph_dir = target
    from app.engine.errors import GraphError
    from app.server import ServerError, run_server
    from app.settings import Settings

    try:
        settings = Settings(graph_dir=graph_dir, host=args.host, port=args.port, workers=args.workers)
        run_server(settings)
    except (GraphError, ServerError) as exc:
        raise CliError(str(exc)) from None
    return 0


# -- route, info, download, compile ----------------------------------------------------------------------------------


def cmd_route(args: argparse.Namespace) -> int:
    points = [parse_lonlat(args.from_, "--from")]
    points += [parse_lonlat(p, "--via") for p in args.via or ()]
    points.append(parse_lonlat(args.to, "--to"))
    if args.radius <= 0:
        raise CliError("--radius must be > 0 metres")
    from app.engine.data import load
    from app.engine.errors import EngineError, GraphError, NoSegment
    from app.engine.facade import Engine, RouteRequest, Waypoints

    try:
        engine = Engine(load(args.graph_dir))
        _, phantoms, options = engine.resolve_route(
            RouteRequest(Waypoints(points, default_radius_m=args.radius, detail=True), args.algorithm)
        )
        engine.routes(phantoms, options)  # loads the cached kernels, so the figures time the search alone
        r = engine.routes(phantoms, options).best
    except NoSegment as exc:  # which option's point, and the snapper's why (how far the road is, lon/lat swapped?)
        i = exc.index or 0
        what = "--from" if i == 0 else "--to" if i == len(points) - 1 else f"--via #{i}"
        hint = "" if "swap" in exc.detail else f" (--radius METRES looks farther than {args.radius:g} m)"
        raise CliError(f"{what}: {exc.detail or exc}{hint}") from None
    except (EngineError, GraphError) as exc:
        raise CliError(str(exc)) from None
    if args.geojson:
        feature = {
            "type": "Feature",
            "geometry": {"type": "LineString", "coordinates": r.coordinates.tolist()},
            "properties": {
                "distance_m": r.distance_m,
                "duration_s": r.duration_s,
                "algorithm": r.algorithm,
                "snap_distances_m": [round(p.distance_m, 1) for p in phantoms],
            },
        }
        print(json.dumps(feature))
        return 0
    settled = sum(leg.stats.settled for leg in r.legs)
    relaxed = sum(leg.stats.relaxed for leg in r.legs)
    micros = sum(leg.stats.micros for leg in r.legs)
    snaps = ", ".join(f"{p.distance_m:.1f} m" for p in phantoms)
    print(
        f"distance {r.distance_m:.1f} m  duration {r.duration_s:.1f} s  algorithm {r.algorithm}  "
        f"settled {settled}  relaxed {relaxed}  {micros:.0f} us  (snapped {snaps} from the given points)"
    )
    return 0


def _block(text: str) -> tuple[int, int]:
    """`ROWS` or `ROWSxCOLS`, each at least 1."""
    try:
        parts = [int(x) for x in text.lower().split("x")]
        if len(parts) not in (1, 2) or min(parts) < 1:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be ROWS or ROWSxCOLS, positive, got {text!r}") from None
    return (parts[0], parts[-1])


def cmd_matrix(args: argparse.Namespace) -> int:
    from app.install import install_extra
    from app.stoppable import run_until_signal

    if args.workers < 1:
        raise CliError("--workers must be at least 1")
    if not args.radius > 0:
        raise CliError("--radius must be > 0 metres")
    try:
        from starroute.batch import matrix
        from starroute.errors import GraphError, MatrixError, RoutingError
        from starroute.sinks import remove_partial
    except ImportError as exc:  # pyarrow or dask missing
        raise CliError(f"{exc}: {install_extra('dask')}") from None
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise CliError(f"Dask is not installed: {install_extra('dask')}") from None
    try:
        run_until_signal(
            lambda: matrix(
                args.graph_dir, args.sources, args.output, args.destinations, workers=args.workers,
                scheduler=args.scheduler, block=args.block, exclude=args.exclude, quiet=args.quiet,
                radius_m=args.radius,
            ),
            on_stop=lambda: remove_partial(args.output),
            message="no matrix was written",
        )  # fmt: skip
    except (RoutingError, GraphError) as exc:
        raise CliError(str(exc)) from None
    except MatrixError as exc:
        raise CliError(f"{exc}; no matrix was written", code=1) from None
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from floor.format.arrays import FormatError
    from floor.format.manifest import read_manifest

    try:
        mf = read_manifest(args.graph_dir)
    except FormatError as exc:
        raise CliError(str(exc)) from None
    if not args.json:
        print("\n".join(summary_lines(args.graph_dir)))
        return 0
    mf.pop("arrays", None)
    print(json.dumps(mf, indent=2, sort_keys=True))
    return 0


def cmd_customize(args: argparse.Namespace) -> int:
    from app.stoppable import run_until_signal
    from floor.format.arrays import FormatError
    from preprocessing.customize import customize, reset
    from preprocessing.osm.speeds import MetricFileError

    segment_files = list(args.segment_speed_file or [])
    turn_files = list(args.turn_penalty_file or [])
    if args.reset:
        if segment_files or turn_files:
            raise CliError("--reset takes no files: it serves the preprocessed metric again")
        try:
            was = reset(args.graph_dir)
        except FormatError as exc:
            raise CliError(str(exc)) from None
        print("metric reset to the preprocessed one" if was else "the graph already serves its preprocessed metric")
        return 0
    if not segment_files and not turn_files:
        raise CliError("give --segment-speed-file and/or --turn-penalty-file (or --reset)")

    def say(message: str) -> None:  # rarely called (a graph without the CCH): app.warmup imported only then
        from app.warmup import say_stderr

        say_stderr(message)

    try:
        done = run_until_signal(
            lambda: customize(
                args.graph_dir, segment_files, turn_files, say=None if args.quiet else say, stages=args.stages
            ),
            on_stop=_abandon,
            message="the metric was not changed",
        )
    except (MetricFileError, FormatError) as exc:
        raise CliError(f"{exc}; the metric was not changed") from None
    r = done.report
    total = sum(done.seconds.values())
    if not args.quiet:
        lines = []
        if segment_files:
            lines.append(
                f"segment speeds: {r.segment_lines} lines, {r.segment_keys} segments, {r.segment_keys_applied} "
                f"applied ({r.segments_updated} arc segments), {r.segment_keys_unmatched} matched no segment; "
                f"{r.arcs_changed} arcs changed, {r.arcs_closed} closed"
            )
        if turn_files:
            lines.append(
                f"turn penalties: {r.turn_lines} lines, {r.turn_keys} turns, {r.turn_keys_applied} applied "
                f"({r.turns_updated} turns of the search graph), {r.turn_keys_unmatched} matched no turn"
                + (f", {r.turns_clamped} negative clamped to 0" if r.turns_clamped else "")
            )
        later = " (computed once when it is first loaded: a server's SIGHUP, or `--stages` now)"
        pending = "pending" in (done.hierarchy, done.landmarks)
        lines.append(f"hierarchy: {done.hierarchy}; landmarks: {done.landmarks}" + (later if pending else ""))
        steps = ", ".join(f"{k} {v:.2f} s" for k, v in done.seconds.items())
        lines.append(f"metric {done.metric_id} written in {total:.2f} s ({steps})")
        lines.append("a running `starroute serve` applies it on SIGHUP (kill -HUP <pid>)")
        print("\n".join(lines))
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    from app.stoppable import run_until_signal
    from preprocessing.osm.download import DownloadError, download

    try:
        out = run_until_signal(
            lambda: download(args.region, args.output, base_url=args.base_url, force=args.force),
            on_stop=_abandon,
            message="no file was written",
        )
    except DownloadError as exc:
        raise CliError(str(exc), code=1) from None
    print(str(out))
    print(f"next: starroute preprocess {out}", file=sys.stderr)
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    from app.stoppable import run_until_signal
    from app.warmup import compile_all

    run_until_signal(lambda: compile_all(jobs=args.jobs, quiet=args.quiet), on_stop=_abandon, message="stopped")
    return 0


# -- the parser ---------------------------------------------------------------------------------------------------


class _VersionAction(argparse.Action):
    """`--version`, looking the version up only when asked (importlib.metadata costs 30 ms at every start)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"starroute {version()}")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse with errors as one `starroute: error:` line (no usage dump), exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"starroute: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def parser() -> argparse.ArgumentParser:
    """The argument parser of every command (help texts name what each argument holds)."""
    p = _Parser(
        prog="starroute",
        description="Road routing on OpenStreetMap data: contraction hierarchies, ALT, A*; GeoJSON and OSRM APIs.",
        epilog="Start here: `starroute serve` builds the bundled Monaco map if needed and serves it.",
    )
    p.add_argument("--version", action=_VersionAction, nargs=0, help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    pre = sub.add_parser(
        "preprocess",
        help="turn an OSM extract into a routing graph directory",
        description="Turn an OSM extract into a routing graph directory. Progress goes to stderr (a bar per stage on "
        "a terminal, a line per step otherwise), the summary and the command to run next to stdout.",
    )
    pre.add_argument(
        "input",
        nargs="?",
        type=Path,
        default=DEFAULT_EXTRACT,
        metavar="EXTRACT",
        help=f"OSM extract ({', '.join(OSM_SUFFIXES[:5])}); default {DEFAULT_EXTRACT}",
    )
    pre.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="GRAPH_DIR",
        help="graph directory to write (default graphs/<extract>-<profile>)",
    )
    pre.add_argument("--profile", choices=PROFILES, default="car", help="routing profile (default car)")
    pre.add_argument("--no-ch", action="store_true", help="skip the contraction hierarchy")
    pre.add_argument(
        "--no-cch",
        action="store_true",
        help="skip the customizable hierarchy (new metrics at run time); excludable sets are then contracted here",
    )
    pre.add_argument(
        "--turns",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="turn costs and restrictions on an edge-based search graph (default: on, as every OSRM profile)",
    )
    pre.add_argument(
        "--driving-side",
        choices=("right", "left"),
        default="right",
        help="the side traffic keeps to, which turn costs mirror (left: the UK, Japan, India, ...; default right)",
    )
    pre.add_argument("--landmarks", type=int, default=16, metavar="N", help="ALT landmarks, 0 for none (default 16)")
    pre.add_argument(
        "--basemap",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the map page's background (water, land use, parks, buildings) from the same extract; "
        "default: on for extracts up to 64 MB, off above",
    )
    pre.add_argument("--force", action="store_true", help="replace an existing graph directory")
    pre.add_argument("-q", "--quiet", action="store_true", help="no progress or summary")
    pre.set_defaults(func=cmd_preprocess, left="no graph was written")

    srv = sub.add_parser("serve", help="serve the GeoJSON and OSRM v5 APIs (building the graph first if needed)")
    srv.add_argument(
        "target",
        nargs="?",
        type=Path,
        metavar="GRAPH_DIR|EXTRACT",
        help=f"a graph directory, or an OSM extract to build one from (default {DEFAULT_EXTRACT})",
    )
    srv.add_argument("--profile", choices=PROFILES, default="car", help="profile when building from an extract")
    srv.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    srv.add_argument("--port", type=int, default=5000, help="port to listen on (default 5000)")
    srv.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="worker processes sharing the memory-mapped graph (default 1)",
    )
    srv.set_defaults(func=cmd_serve, left="no graph was written", stop_status=0)

    rt = sub.add_parser("route", help="compute one route and print its distance, duration and search figures")
    rt.add_argument("graph_dir", type=Path, metavar="GRAPH_DIR", help="graph directory")
    rt.add_argument("--from", dest="from_", required=True, metavar="LON,LAT", help="start")
    rt.add_argument("--to", required=True, metavar="LON,LAT", help="destination")
    rt.add_argument("--via", action="append", metavar="LON,LAT", help="intermediate point (repeatable)")
    rt.add_argument("--algorithm", choices=ALGORITHMS, default="ch", help="search algorithm (default ch)")
    rt.add_argument(
        "--radius",
        type=float,
        default=1000.0,
        metavar="METRES",
        help="a point farther from every road is refused (default 1000)",
    )
    rt.add_argument("--geojson", action="store_true", help="print the route as a GeoJSON Feature")
    rt.set_defaults(func=cmd_route)

    mx = sub.add_parser("matrix", help="an N x M duration and distance matrix of CSV points, in blocks on Dask")
    mx.add_argument("graph_dir", type=Path, metavar="GRAPH_DIR", help="graph directory (every worker must read it)")
    mx.add_argument("sources", type=Path, metavar="SOURCES.csv", help="CSV with a header: lon, lat and optional id")
    mx.add_argument("--destinations", type=Path, metavar="D.csv", help="destinations CSV (default: the sources)")
    mx.add_argument("-o", "--output", type=Path, required=True, metavar="OUT", help="OUT.parquet (long) or OUT.npz")
    mx.add_argument("--workers", type=int, default=2, metavar="N", help="local Dask worker processes (default 2)")
    mx.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="an existing Dask scheduler instead")
    mx.add_argument("--block", type=_block, metavar="ROWSxCOLS", help="cells per block (default 1000x1000)")
    mx.add_argument("--exclude", metavar="CLASSES", help="road classes not to use: motorway, toll or ferry")
    mx.add_argument(
        "--radius",
        type=float,
        default=1000.0,
        metavar="METRES",
        help="a point farther from every road is left out and reported, its cells null (default 1000)",
    )
    mx.add_argument("-q", "--quiet", action="store_true", help="no progress or summary")
    mx.set_defaults(func=cmd_matrix, left="no matrix was written")

    inf = sub.add_parser("info", help="summarise a graph directory (counts, source, hierarchies, stage timings)")
    inf.add_argument("graph_dir", type=Path, metavar="GRAPH_DIR", help="graph directory")
    inf.add_argument("--json", action="store_true", help="print the whole manifest as JSON instead")
    inf.set_defaults(func=cmd_info)

    cu = sub.add_parser(
        "customize",
        help="apply OSRM segment speed / turn penalty CSV files to a graph as its new metric (no re-preprocess)",
    )
    cu.add_argument("graph_dir", type=Path, metavar="GRAPH_DIR", help="graph directory")
    cu.add_argument(
        "--segment-speed-file",
        action="append",
        type=Path,
        metavar="CSV",
        help="from_osm_node_id,to_osm_node_id,speed_kmh[,rate] per line (repeatable; later lines win)",
    )
    cu.add_argument(
        "--turn-penalty-file",
        action="append",
        type=Path,
        metavar="CSV",
        help="from_osm_node_id,via_osm_node_id,to_osm_node_id,penalty_s[,weight] per line (repeatable)",
    )
    cu.add_argument("--reset", action="store_true", help="serve the preprocessed metric again")
    cu.add_argument(
        "--stages",
        action="store_true",
        help="also compute the metric's search stages (hierarchy, landmark tables) now, instead of at its first "
        "load (a server's SIGHUP does it once); for graph directories a server mounts read-only",
    )
    cu.add_argument("-q", "--quiet", action="store_true", help="no report")
    cu.set_defaults(func=cmd_customize, left="the metric was not changed")

    dl = sub.add_parser("download", help="download a Geofabrik extract (progress bar, MD5 check)")
    dl.add_argument("region", metavar="REGION", help="Geofabrik region path, e.g. europe/andorra")
    dl.add_argument("-o", "--output", type=Path, metavar="FILE", help="where to write (default data/<name>)")
    dl.add_argument("--base-url", default="https://download.geofabrik.de", metavar="URL", help="mirror to use")
    dl.add_argument("--force", action="store_true", help="replace an existing file")
    dl.set_defaults(func=cmd_download, left="no file was written")

    cp = sub.add_parser("compile", help="compile every numba kernel into the cache now (images, CI, first run)")
    cp.add_argument("--jobs", type=int, default=2, metavar="N", help="parallel compiler processes (default 2)")
    cp.add_argument("-q", "--quiet", action="store_true", help="no progress")
    cp.set_defaults(func=cmd_compile)
    return p


def _quiet_exit(signum: int, frame: Any) -> None:
    warmup = sys.modules.get("app.warmup")
    if warmup is not None and "floor.kernels.jit" in sys.modules:  # kernels may be compiling: no file left half made
        warmup.abandon_compiles()
    elif warmup is not None:  # a compile job started for this serve ends with it
        warmup.stop_compile_jobs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _terminate_as_interrupt(signum: int, frame: Any) -> None:
    """SIGTERM outside the phases that handle it (the imports): unwind as an interrupt that says it was SIGTERM."""
    stop = KeyboardInterrupt()
    stop.signum = signum  # type: ignore[attr-defined]
    raise stop


class Stopped(Exception):
    """A command stopped by a signal; `status` is its exit status (130 Ctrl-C, 143 SIGTERM, 0 for serve)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point: `run`, and on a signal exit at once with the status that says why (an interrupt
    landing inside a C extension's import can otherwise make the interpreter kill itself with SIGINT at shutdown,
    whatever was returned). SIGTERM stops a command the way Ctrl-C does from the start, imports included, so the
    exit status and the line saying what was left are the same whenever it lands."""
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        status = run(argv)
    except Stopped as stop:
        status = stop.status
    except KeyboardInterrupt as exc:  # before the command began (parsing its arguments, importing its modules)
        term = getattr(exc, "signum", signal.SIGINT) == signal.SIGTERM
        print(f"starroute: {'terminated' if term else 'interrupted'}; nothing was written", file=sys.stderr)
        status = 128 + signal.SIGTERM if term else EXIT_INTERRUPTED
    # end the process at once: interpreter shutdown with numba loaded costs a tenth of a second, and there is nothing
    # left to do (outputs are written and closed, no thread still works)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def run(argv: Sequence[str] | None = None) -> int:
    """Run one command in this process, map failures to one line and an exit status; `Stopped` on a signal."""
    p = parser()
    args = p.parse_args(argv)
    if args.command is None:
        p.print_help()
        return 0
    if args.command == "serve" and threading.current_thread() is threading.main_thread():
        # a stop outside the phases that handle it (imports; after uvicorn's graceful shutdown, which re-raises
        # the signal) ends serve quietly with status 0
        for s in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(s) != signal.SIG_IGN:
                signal.signal(s, _quiet_exit)
    try:
        return int(args.func(args))
    except CliError as exc:
        print(f"starroute: error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt as exc:  # cleanup already ran while it unwound (temporary directories removed)
        term = getattr(exc, "signum", signal.SIGINT) == signal.SIGTERM
        print(
            f"starroute: {'terminated' if term else 'interrupted'}; {getattr(args, 'left', 'stopped')}", file=sys.stderr
        )
        status = 128 + signal.SIGTERM if term else EXIT_INTERRUPTED
        raise Stopped(getattr(args, "stop_status", status)) from None


if __name__ == "__main__":
    sys.exit(main())

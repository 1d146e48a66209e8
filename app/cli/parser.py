"""The `starroute` command line's grammar: every command, its arguments and its help."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.cli.common import (
    DEFAULT_EXTRACT,
    EXIT_BAD_INPUT,
    OSM_SUFFIXES,
    PROFILES,
    version,
)
from app.cli.preprocess import (
    cmd_compile,
    cmd_customize,
    cmd_download,
    cmd_preprocess,
)
from app.cli.query import _block, cmd_info, cmd_matrix, cmd_route
from app.cli.serve import cmd_serve
from app.engine.search.algorithms import NAMES as ALGORITHMS  # the registry (no numba behind it)


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
    pre.add_argument(
        "--low-memory",
        action="store_true",
        help="build the CCH order and landmarks after the contraction, not beside it (a lower peak, a few seconds "
        "more; chosen by itself when beside would not fit the available memory)",
    )
    pre.add_argument(
        "--force-memory",
        action="store_true",
        help="run even when the estimate says the machine's available memory cannot hold it",
    )
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
        help="apply OSRM segment speed / turn penalty CSV files and time profiles to a graph as its new metric (no "
        "re-preprocess)",
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
    cu.add_argument(
        "--time-profiles",
        type=Path,
        metavar="CSV",
        help="departure time: profile,00:00,...,23:45 header, then a named profile per line, 96 speeds in percent of "
        "free flow (1-200); with --segment-profiles",
    )
    cu.add_argument(
        "--segment-profiles",
        action="append",
        type=Path,
        metavar="CSV",
        help="from_osm_node_id,to_osm_node_id,mon,tue,wed,thu,fri,sat,sun header, then a profile name per weekday "
        "per directed segment (repeatable; later lines win); with --time-profiles",
    )
    cu.add_argument(
        "--timezone",
        metavar="IANA",
        help="the time zone the profiles' times are in (e.g. Europe/Lisbon); default: the graph's, from the zone "
        "whose principal city is nearest to its centre (UTC if none)",
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

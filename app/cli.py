"""The `starroute` command line: a thin shell over the pipeline stages, the engine and the server.

Bad input gets one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from preprocessing.profiles import PROFILES

app = typer.Typer(add_completion=False, no_args_is_help=True, help="starroute: OSM routing with CH, ALT and A*.")

DEFAULT_EXTRACT = Path("data/monaco.osm.pbf")
EXIT_BAD_INPUT = 2


def fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    typer.echo(f"starroute: error: {message}", err=True)
    raise typer.Exit(code)


def parse_lonlat(text: str, what: str) -> tuple[float, float]:
    try:
        lon_s, lat_s = text.split(",")
        lon, lat = float(lon_s), float(lat_s)
    except ValueError:
        fail(f"{what} must be 'lon,lat', got {text!r}")
    if not (-180 <= lon <= 180 and -90 <= lat <= 90):
        fail(f"{what} {text!r} is out of range (lon -180..180, lat -90..90)")
    return lon, lat


def print_summary(out: Path, stages: dict[str, dict[str, float]], quiet: bool) -> None:
    from preprocessing.artifacts import read_manifest

    if quiet:
        return
    mf = read_manifest(out)
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
    r = mf["report"]
    dropped = {
        k: v
        for k, v in r.items()
        if k.startswith(("missing", "ways_rejected", "way_pieces", "ways_split", "barrier", "ways_too_short")) and v
    }
    if dropped:
        lines.append("counted     " + ", ".join(f"{k}={v:,}" for k, v in dropped.items()))
    lines.append(f"{'stage':<18}{'seconds':>9}{'peak RSS MiB':>14}")
    total = 0.0
    for name, s in stages.items():
        total += s["seconds"]
        lines.append(f"{name:<18}{s['seconds']:>9.2f}{s['peak_rss_mb']:>14.0f}")
    lines.append(f"{'total':<18}{total:>9.2f}")
    typer.echo("\n".join(lines), err=True)


@app.command()
def preprocess(
    input: Annotated[Path, typer.Argument(help="OSM extract (.osm.pbf, .osm, .osm.gz, .osm.bz2)")] = DEFAULT_EXTRACT,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="graph directory to write")] = None,
    profile: Annotated[str, typer.Option(help=f"one of {', '.join(PROFILES)}")] = "car",
    no_ch: Annotated[bool, typer.Option("--no-ch", help="skip contraction hierarchies")] = False,
    landmarks: Annotated[int, typer.Option(help="ALT landmarks (0 = none)")] = 16,
    force: Annotated[bool, typer.Option(help="replace an existing output directory")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress or summary")] = False,
) -> None:
    """Turn an OSM extract into a routing graph directory (graph, CH shortcuts, ALT landmarks)."""
    from preprocessing.pipeline import PreprocessError
    from preprocessing.pipeline import preprocess as run
    from preprocessing.report import Reporter

    if output is None:
        stem = input.name.split(".")[0]
        output = Path("graphs") / f"{stem}-{profile}"
    rep = Reporter(quiet=quiet)
    try:
        out = run(input, output, profile=profile, ch=not no_ch, landmarks=landmarks, force=force, reporter=rep)
    except PreprocessError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted; no graph was written", code=130)
    except MemoryError:
        fail("out of memory; no graph was written", code=1)
    print_summary(out, rep.stages, quiet)


@app.command()
def serve(
    graph_dir: Annotated[Path, typer.Argument(help="graph directory from `starroute preprocess`")],
    host: Annotated[str, typer.Option()] = "127.0.0.1",
    port: Annotated[int, typer.Option()] = 5000,
    workers: Annotated[int, typer.Option(help="uvicorn worker processes (share the memory-mapped graph)")] = 1,
) -> None:
    """Serve the native GeoJSON API and the OSRM v5 API over HTTP."""
    from app.engine.errors import GraphError
    from app.server import run_server
    from app.settings import Settings

    try:
        settings = Settings(graph_dir=graph_dir, host=host, port=port, workers=workers)
        run_server(settings)
    except GraphError as exc:
        fail(str(exc))


@app.command()
def route(
    graph_dir: Annotated[Path, typer.Argument(help="graph directory")],
    from_: Annotated[str, typer.Option("--from", help="start as lon,lat")],
    to: Annotated[str, typer.Option("--to", help="goal as lon,lat")],
    algorithm: Annotated[
        str, typer.Option(help="ch, alt, bidirectional-astar, astar, bidirectional-dijkstra, dijkstra")
    ] = "ch",
    geojson: Annotated[bool, typer.Option(help="print the route as a GeoJSON Feature")] = False,
) -> None:
    """Compute one route and print its distance, duration and search statistics."""
    from app.engine.data import load
    from app.engine.errors import EngineError, GraphError
    from app.engine.router import Router

    a = parse_lonlat(from_, "--from")
    b = parse_lonlat(to, "--to")
    try:
        router = Router(load(graph_dir))
        q = router.query()
        phantoms = [router.snap(*a), router.snap(*b)]
        q.route(phantoms, algorithm=algorithm)  # loads the cached numba code, so the stats time the search alone
        r = q.route(phantoms, algorithm=algorithm)
    except (EngineError, GraphError) as exc:
        fail(str(exc))
    st = r.legs[0].stats
    if geojson:
        feature = {
            "type": "Feature",
            "geometry": {"type": "LineString", "coordinates": r.coordinates.tolist()},
            "properties": {"distance_m": r.distance_m, "duration_s": r.duration_s, "algorithm": r.algorithm},
        }
        typer.echo(json.dumps(feature))
    else:
        typer.echo(
            f"distance {r.distance_m:.1f} m  duration {r.duration_s:.1f} s  algorithm {r.algorithm}  "
            f"settled {st.settled}  relaxed {st.relaxed}  {st.micros:.0f} us"
        )


@app.command()
def info(graph_dir: Annotated[Path, typer.Argument(help="graph directory")]) -> None:
    """Print a graph directory's manifest (counts, source, stages)."""
    from preprocessing.artifacts import FormatError, read_manifest

    try:
        mf = read_manifest(graph_dir)
    except FormatError as exc:
        fail(str(exc))
    mf.pop("arrays", None)
    typer.echo(json.dumps(mf, indent=2, sort_keys=True))


@app.command()
def download(
    region: Annotated[str, typer.Argument(help="Geofabrik region path, e.g. europe/andorra")],
    output: Annotated[Path | None, typer.Option("--output", "-o")] = None,
    base_url: Annotated[str, typer.Option(help="mirror to download from")] = "https://download.geofabrik.de",
    force: Annotated[bool, typer.Option()] = False,
) -> None:
    """Download a Geofabrik extract (with a progress bar and an MD5 check)."""
    from preprocessing.download import DownloadError
    from preprocessing.download import download as fetch

    try:
        out = fetch(region, output, base_url=base_url, force=force)
    except DownloadError as exc:
        fail(str(exc), code=1)
    typer.echo(str(out))


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("starroute: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()

"""`starroute route`, `matrix` and `info`: answers from a graph on the command line, without a server."""

from __future__ import annotations

import argparse
import json

from app.cli.common import (
    CliError,
    parse_lonlat,
)
from app.cli.preprocess import (
    summary_lines,
)


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

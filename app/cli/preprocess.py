"""`starroute preprocess`, `customize`, `download` and `compile`: the offline commands, their progress and summary."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.cli.common import (
    CliError,
    default_graph_dir,
)


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
    if "memory" in mf:
        m = mf["memory"]
        have = "unknown" if m["available_mib"] is None else f"{m['available_mib']:,} MiB"
        lines.append(
            f"memory      estimated {m['estimate_mib']:,} MiB ({m['estimate_beside_mib']:,} beside), available {have}; "
            f"CCH order and landmarks {m['side_stages']} the contraction ({m['why']})"
        )
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
    low_memory: bool = False,
    force_memory: bool = False,
) -> Path:
    """Run the preprocess pipeline with a progress reporter (stderr: a bar per stage on a terminal, a line per step
    otherwise), then print the summary to `summary` (None: stdout); `CliError` with its one-line reason on bad
    input."""
    from floor.report import Reporter
    from preprocessing.errors import PreprocessError
    from preprocessing.memory_budget import NotEnoughMemory
    from preprocessing.pipeline import preprocess

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
            low_memory=low_memory,
            force_memory=force_memory,
        )
    except PreprocessError as exc:
        raise CliError(str(exc)) from None
    except NotEnoughMemory as exc:
        raise CliError(str(exc), code=1) from None
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


def graph_matches(graph_dir: Path, extract: Path, profile: str) -> bool:
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


def _up_to_date(output: Path, args: argparse.Namespace) -> bool:
    """Whether `output` already holds what this `preprocess` would build: the same extract (name, size, sha256),
    profile, hierarchy, landmark count, search graph and driving side."""
    from floor.format.arrays import FormatError
    from floor.format.manifest import read_manifest

    if not (output.is_dir() and args.input.is_file() and graph_matches(output, args.input, args.profile)):
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
            low_memory=args.low_memory,
            force_memory=args.force_memory,
        ),
        on_stop=_abandon,
        message="no graph was written",
    )
    return 0


def cmd_customize(args: argparse.Namespace) -> int:
    from app.stoppable import run_until_signal
    from floor.format.arrays import FormatError
    from preprocessing.customize import customize, reset
    from preprocessing.osm.speeds import MetricFileError

    segment_files = list(args.segment_speed_file or [])
    turn_files = list(args.turn_penalty_file or [])
    profile_files = list(args.segment_profiles or [])
    timed = args.time_profiles is not None or bool(profile_files)
    if args.reset:
        if segment_files or turn_files or timed or args.timezone:
            raise CliError("--reset takes no files: it serves the preprocessed metric again")
        try:
            was = reset(args.graph_dir)
        except FormatError as exc:
            raise CliError(str(exc)) from None
        print("metric reset to the preprocessed one" if was else "the graph already serves its preprocessed metric")
        return 0
    if not segment_files and not turn_files and not timed:
        raise CliError(
            "give --segment-speed-file, --turn-penalty-file and/or --time-profiles with --segment-profiles (or --reset)"
        )

    def say(message: str) -> None:  # rarely called (a graph without the CCH): app.warmup imported only then
        from app.warmup import say_stderr

        say_stderr(message)

    try:
        done = run_until_signal(
            lambda: customize(
                args.graph_dir,
                segment_files,
                turn_files,
                say=None if args.quiet else say,
                stages=args.stages,
                time_profiles=args.time_profiles,
                segment_profiles=profile_files,
                timezone=args.timezone,
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
        if done.time is not None:
            t = done.time
            lines.append(
                f"time profiles: {t.profiles} profiles; {t.segment_lines} segment lines, {t.segment_keys} segments, "
                f"{t.segment_keys_applied} applied ({t.segments_profiled} arc segments), {t.segment_keys_unmatched} "
                f"matched no segment; {t.arcs_timed} arcs timed ({t.arcs_mixed} mixed) by {t.rows} rows, "
                f"{t.fifo_repaired} arcs repaired for FIFO"
                + (f", {t.closed_static} closed arcs left static" if t.closed_static else "")
                + f"; time zone {done.timezone}"
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

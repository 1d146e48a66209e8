"""The real OSRM as a benchmark peer: the `osrm-bindings` wheel's osrm-extract / osrm-contract / osrm-routed.

The wheel is downloaded once with `pip download --no-deps` (CPython 3.12 abi3, runs from any Python) and unpacked;
its binaries and Lua profiles are used as they are. Never part of starroute itself.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.peer_wheels import wheel_binaries
from harness.servers import start_osrm, start_starroute, stop

OSRM_WHEEL = "osrm-bindings==26.10.0"


def ensure_osrm(osrm_dir: Path) -> Path | None:
    """Directory holding osrm-extract/-contract/-routed (downloading the wheel once); None when unavailable."""
    return wheel_binaries(OSRM_WHEEL, "osrm_bindings-*.whl", osrm_dir, osrm_dir / "osrm" / "bin", "osrm-routed")


# starroute profile -> OSRM's Lua profile of the same rules, and the profile's name in request URLs
LUA_PROFILES = {"car": "car", "bike": "bicycle", "foot": "foot", "testbot": "testbot"}
URL_PROFILES = {"car": "driving", "bike": "cycling", "foot": "walking", "testbot": "testbot"}


def prepare_osrm_profile(bin_dir: Path, osm: Path, profile: str) -> Path:
    """osrm-extract with the Lua profile of starroute's `profile` + osrm-contract, in the file's directory (small
    drawn or generated maps, built every time); the `.osrm` base."""
    lua = bin_dir.parent / "share" / "profiles" / f"{LUA_PROFILES[profile]}.lua"
    subprocess.run(
        [str(bin_dir / "osrm-extract"), "-p", str(lua), str(osm)], cwd=osm.parent, check=True, capture_output=True
    )
    base = osm.parent / (osm.name.split(".")[0] + ".osrm")
    subprocess.run([str(bin_dir / "osrm-contract"), str(base)], cwd=osm.parent, check=True, capture_output=True)
    return base


@contextmanager
def both_servers(
    bin_dir: Path, osm: Path, profile: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, str]]:
    """One small map served by both programs: OSRM's dataset (`prepare_osrm_profile`) and starroute's graph
    (`graph/` beside the file, `profile`, `env` for its server); (starroute URL, osrm-routed URL), both servers
    stopped on leaving."""
    from preprocessing.pipeline import preprocess

    base = prepare_osrm_profile(bin_dir, osm, profile)
    graph = preprocess(osm, osm.parent / "graph", profile=profile, landmarks=0, force=True, quiet=True)
    theirs_p, theirs_url = start_osrm(bin_dir, base)
    ours_p = None
    try:
        ours_p, ours_url = start_starroute(graph, env=env)
        yield ours_url, theirs_url
    finally:
        if ours_p is not None:
            stop(ours_p)
        stop(theirs_p)


def prepare_osrm(bin_dir: Path, extract: Path, work: Path, algorithm: str = "ch") -> Path:
    """osrm-extract (car.lua) + osrm-contract (`algorithm` "ch") or osrm-partition ("mld": osrm-customize is then
    the caller's, it is what the live-weights bench times) once per extract content; returns the `.osrm` base
    path."""
    digest = hashlib.sha256(extract.read_bytes()).hexdigest()[:12]
    out = (
        work / f"{extract.name.split('.')[0]}-{digest}"
        if algorithm == "ch"
        else work / f"mld-{extract.name.split('.')[0]}-{digest}"
    )
    done = out / "done"
    if done.exists():
        return Path(done.read_text())
    out.mkdir(parents=True, exist_ok=True)
    local = out / extract.name
    shutil.copy(extract, local)
    profile = bin_dir.parent / "share" / "profiles" / "car.lua"
    subprocess.run(
        [str(bin_dir / "osrm-extract"), "-p", str(profile), str(local)], cwd=out, check=True, capture_output=True
    )
    base = next(out.glob("*.osrm.properties")).with_suffix("")  # osrm-extract names it after the input
    step = "osrm-contract" if algorithm == "ch" else "osrm-partition"
    subprocess.run([str(bin_dir / step), str(base)], cwd=out, check=True, capture_output=True)
    done.write_text(str(base))
    return base

"""What every `starroute` command shares: exit codes, the profiles' names, OSM file suffixes, the user-facing
error, the version, coordinate parsing and the default extract and graph paths."""

from __future__ import annotations

from pathlib import Path

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


class Stopped(Exception):
    """A command stopped by a signal; `status` is its exit status (130 Ctrl-C, 143 SIGTERM, 0 for serve)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status

"""Shared fixtures: where the real extracts live (../shared/data/osm beside the project root)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTRACTS = (ROOT.parent / "shared" / "data" / "osm").resolve()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that builds a graph of a real extract is an `extracts` test (so `-m "not extracts"` leaves it)."""
    for item in items:
        if "graph_cache" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.extracts)


def extract(name: str) -> Path:
    """Path of a real extract in ../shared/data/osm; skips the test when the shared folder is absent."""
    p = EXTRACTS / name
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


@pytest.fixture(scope="session")
def graph_cache(tmp_path_factory: pytest.TempPathFactory):
    """Build each (extract, profile, ch, landmarks) graph once per test session; returns a loader function."""
    from preprocessing.pipeline import preprocess

    base = tmp_path_factory.mktemp("graphs")
    built: dict[tuple, Path] = {}

    def get(name: str, profile: str = "car", ch: bool = True, landmarks: int = 8) -> Path:
        key = (name, profile, ch, landmarks)
        if key not in built:
            out = base / f"{name.replace('/', '_')}-{profile}-{int(ch)}-{landmarks}"
            # No background layer (the map page's, not routing's; it costs a pass). The real extracts run car on its
            # edge-based graph; bike and foot node-based (`--no-turns`), which keeps that mode tested and the suite's
            # time: their edge-based graphs take 2.4x as long to build, and the ASCII-map tables run them.
            built[key] = preprocess(
                extract(name), out, profile=profile, ch=ch, landmarks=landmarks, force=True, quiet=True, basemap=False,
                turns=None if profile == "car" else False,
            )  # fmt: skip
        return built[key]

    return get


BUNDLED = ROOT / "data" / "monaco.osm.pbf"


@pytest.fixture(scope="session")
def bundled_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled Monaco extract (data/monaco.osm.pbf) as a car graph with CH and 8 landmarks, built once.

    The API tests run on it, so they need nothing from ../shared.
    """
    from preprocessing.pipeline import preprocess

    out = tmp_path_factory.mktemp("bundled") / "monaco-car"
    return preprocess(BUNDLED, out, profile="car", ch=True, landmarks=8, force=True, quiet=True, basemap=True)


def all_extracts() -> list[str]:
    """Names (relative to shared/data/osm) of every OSM extract there, registry/ included."""
    if not EXTRACTS.exists():
        return []
    names = []
    for p in sorted(EXTRACTS.rglob("*")):
        if p.is_file() and p.name.endswith((".pbf", ".osm", ".osm.gz", ".osm.bz2")):
            names.append(str(p.relative_to(EXTRACTS)))
    return names


@pytest.fixture(scope="session")
def osrm_base():  # type: ignore[no-untyped-def]
    """Base URL of osrm-routed (the `osrm-bindings` wheel, `bench/osrm_peer.py`) on the bundled Monaco, for the
    tests that compare with it; started once for the session, skipped with the reason where it cannot be installed."""
    import tempfile

    from bench.osrm_peer import ensure_osrm, prepare_osrm
    from bench.servers import start_osrm, stop

    work = Path(tempfile.gettempdir()) / "starroute-osrm"
    bin_dir = ensure_osrm(work)
    if bin_dir is None:
        pytest.skip("osrm-bindings (osrm-routed) cannot be installed here")
    proc, base = start_osrm(bin_dir, prepare_osrm(bin_dir, BUNDLED, work))
    yield base
    stop(proc)

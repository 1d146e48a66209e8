"""Shared fixtures: where the real extracts live (../shared/data/osm beside the project root)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import pytest

from harness.graph_builds import Key, build, lower_priority

ROOT = Path(__file__).resolve().parent.parent
# Every app's lifespan would start search processes (app.api.search_processes); tests of them ask for their own.
os.environ.setdefault("STARROUTE_SEARCH_PROCESSES", "0")
EXTRACTS = (ROOT.parent / "shared" / "data" / "osm").resolve()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that builds a graph of a real extract is an `extracts` test (so `-m "not extracts"` leaves it); the
    graphs they will ask for, in order of first use, are queued for the background builder."""
    # files in the order of their names whatever their folder (unit/, http/, osrm/): the graphs built ahead and the
    # kernels compiled first then follow one tuned order, the one the suite's time was measured in
    items.sort(key=lambda item: item.path.name)
    _SELECTED[0] = len(items)
    _AHEAD.clear()
    for item in items:
        if "graph_cache" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.extracts)
            _AHEAD.extend(k for k in _graph_keys(item) if k not in _AHEAD)


def extract(name: str) -> Path:
    """Path of a real extract in ../shared/data/osm; skips the test when the shared folder is absent."""
    p = EXTRACTS / name
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


@pytest.fixture(scope="session", autouse=True)
def _graph_builds(tmp_path_factory: pytest.TempPathFactory):
    """The session's graph folder, and the graphs the selected tests will ask for (`_AHEAD`, found at collection)
    queued from the session's start, in order of first use, to one background process at nice 10, which builds them
    while the tests before them run (STARROUTE_TEST_PREBUILD=0: none)."""
    _compile_first()
    base = tmp_path_factory.mktemp("graphs")
    ahead = [k for k in _AHEAD if (EXTRACTS / k[0]).exists()]
    if not ahead or os.environ.get("STARROUTE_TEST_PREBUILD", "1") == "0":
        yield base, {}
        return
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=lower_priority)
    queued = {k: pool.submit(build, EXTRACTS, base, k) for k in ahead}
    yield base, queued
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="session")
def graph_cache(_graph_builds: tuple[Path, dict[Key, Future[Path]]]):
    """Build each (extract, profile, ch, landmarks) graph once per test session; returns a loader function. A graph
    still waiting in the background builder's queue is taken off it and built here; while one the builder is on is
    awaited, the next ones waiting are built here, so both cores build."""
    base, queued = _graph_builds
    built: dict[Key, Path] = {}

    def get(name: str, profile: str = "car", ch: bool = True, landmarks: int = 8) -> Path:
        key = (name, profile, ch, landmarks)
        if key not in built:
            fut = queued.pop(key, None)
            if fut is not None and not fut.cancel():  # being built (or done): meanwhile build the next ones here
                while not fut.done() and (k := _next_waiting(queued)) is not None:
                    built[k] = build(EXTRACTS, base, k)
                built[key] = fut.result()
            else:
                extract(name)  # skips the test when the shared folder is absent
                built[key] = build(EXTRACTS, base, key)
        return built[key]

    return get


_AHEAD: list[Key] = []
_SELECTED = [0]  # how many tests the session runs
COMPILE_FIRST_FROM = 1000  # a session this large on an empty numba cache compiles every kernel first


def _compile_first() -> None:
    """On an empty numba cache, a large session (or STARROUTE_TEST_COMPILE=1; =0 never) first runs `starroute compile
    --jobs 2`, as a user's first start does: every kernel compiles once, on both cores, instead of one by one on the
    test process's core while a server beside it compiles the same ones."""
    from app.warmup import is_compiled

    wanted = os.environ.get("STARROUTE_TEST_COMPILE", "")
    if wanted == "0" or (wanted != "1" and _SELECTED[0] < COMPILE_FIRST_FROM):
        return
    if is_compiled("engine") and is_compiled("preprocess"):
        return
    subprocess.run([sys.executable, "-m", "app.cli", "compile", "--jobs", "2", "--quiet"], cwd=ROOT, check=True)


def _next_waiting(queued: dict[Key, Future[Path]]) -> Key | None:
    """The first queued graph the background builder has not started, taken off its queue; None when none is left."""
    for k in list(queued):
        if queued[k].cancel():
            del queued[k]
            return k
    return None


def _graph_keys(item: pytest.Item) -> list[Key]:
    """The graphs a test will ask `graph_cache` for: its module's `GRAPHS`, or for a test parametrized by extract
    `name` (and `profile`), its module's `graph_key(name, profile)` or else the default build (CH, 8 landmarks)."""
    module = getattr(item, "module", None)
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "name" in params:
        name, profile = params["name"], params.get("profile", "car")
        key_of = getattr(module, "graph_key", None)
        return [key_of(name, profile) if key_of else (name, profile, True, 8)]
    return list(getattr(module, "GRAPHS", ()))


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
    """Base URL of osrm-routed (the `osrm-bindings` wheel, `harness/osrm_peer.py`) on the bundled Monaco, for the
    tests that compare with it; started once for the session, skipped with the reason where it cannot be installed."""
    import tempfile

    from harness.osrm_peer import ensure_osrm, prepare_osrm
    from harness.servers import start_osrm, stop

    work = Path(tempfile.gettempdir()) / "starroute-osrm"
    bin_dir = ensure_osrm(work)
    if bin_dir is None:
        pytest.skip("osrm-bindings (osrm-routed) cannot be installed here")
    proc, base = start_osrm(bin_dir, prepare_osrm(bin_dir, BUNDLED, work))
    yield base
    stop(proc)


_FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each test file's seconds (setup, call and teardown summed), for the summary below."""
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The 20 test files that took longest: where the suite's time goes (its goal is under 12 minutes)."""
    if not _FILE_SECONDS:
        return
    total = sum(_FILE_SECONDS.values())
    terminalreporter.section("slowest test files")
    for path, secs in sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1])[:20]:
        terminalreporter.write_line(f"{secs:8.1f} s {100 * secs / total:5.1f} %  {path}")
    terminalreporter.write_line(f"{total:8.1f} s in {len(_FILE_SECONDS)} files")

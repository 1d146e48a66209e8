"""Stop means stop: SIGTERM or Ctrl-C at several moments of `starroute serve` and `starroute preprocess`.

serve exits within a second with status 0 whatever it is doing (compiling kernels on a first run, loading the graph,
serving), leaving no process and no half-written cache file behind; preprocess exits non-zero and leaves no output
directory, no temporary directory and no parent folder it made. A cold start is simulated with an empty
`NUMBA_CACHE_DIR`, where the start-up compiles for many seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from harness.api_server import ROOT, free_port
from preprocessing.pipeline import preprocess

MONACO = ROOT / "data" / "monaco.osm.pbf"
STOP_WITHIN_S = 1.0


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return preprocess(MONACO, tmp_path_factory.mktemp("sig") / "monaco", landmarks=4, force=True, quiet=True)


def _default_sigint() -> None:
    # A shell without job control starts background commands with SIGINT ignored, and a child inherits that;
    # a user's terminal does not: give the child the default disposition, so Ctrl-C is tested as users press it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(
    args: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT, session: bool = False
) -> subprocess.Popen:
    """`python -m app.cli ARGS`; `session`: in a process group of its own, as a terminal's job (`os.killpg` is then
    what Ctrl-C does: the signal goes to every process of the group)."""
    return subprocess.Popen(
        preexec_fn=_default_sigint,
        start_new_session=session,
        args=[sys.executable, "-m", "app.cli", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def stop(proc: subprocess.Popen, sig: int) -> tuple[int, float, str]:
    """Send `sig`; returns (exit status, seconds until exit, output)."""
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"still running 30 s after signal {sig}:\n{out[-2000:]}")
    return proc.returncode, time.monotonic() - t0, out


def children_of(pid: int) -> list[int]:
    import psutil

    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def wait_healthy(port: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[0]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    pytest.fail("server never became healthy")


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "after_s"), [(signal.SIGTERM, 1.5), (signal.SIGINT, 4.0), (signal.SIGTERM, 0.3)])
def test_serve_stops_during_a_cold_start(graph: Path, tmp_path: Path, sig: int, after_s: float) -> None:
    cache = tmp_path / "numba-cache"  # empty: the start-up compiles every kernel
    cache.mkdir()
    proc = spawn(["serve", str(graph), "--port", str(free_port())], env={"NUMBA_CACHE_DIR": str(cache)})
    time.sleep(after_s)
    assert proc.poll() is None, proc.communicate()[0]
    kids = children_of(proc.pid)
    status, seconds, out = stop(proc, sig)
    assert status == 0, out
    assert seconds < STOP_WITHIN_S, (seconds, out)
    assert not survivors(kids)
    assert not list(cache.rglob("*.tmp.*")), "a half-written cache file was left behind"


@pytest.mark.slow
def test_ctrl_c_at_the_terminal_stops_a_first_start_and_its_compile_job(tmp_path: Path) -> None:
    """`make run` on a fresh clone builds the graph while a compile job compiles a first request's kernels beside
    it: a Ctrl-C reaches the whole process group, and the job must not print its own KeyboardInterrupt traceback."""
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    args = ["serve", str(MONACO), "--port", str(free_port())]
    proc = spawn(args, env={"NUMBA_CACHE_DIR": str(cache)}, cwd=tmp_path, session=True)
    import psutil

    deadline = time.monotonic() + 20
    jobs: list[int] = []
    while not jobs and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        jobs = [p for p in children_of(proc.pid) if "app.warmup" in " ".join(_cmdline(psutil, p))]
    assert jobs, "no compile job beside the graph build"
    time.sleep(2.0)  # into its compiling
    kids = children_of(proc.pid)
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert time.monotonic() - t0 < STOP_WITHIN_S, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert not survivors(kids)
    assert not list(cache.rglob("*.tmp.*")), "a half-written cache file was left behind"


def _cmdline(psutil: object, pid: int) -> list[str]:
    try:
        return psutil.Process(pid).cmdline()  # type: ignore[attr-defined, no-any-return]
    except Exception:  # noqa: BLE001 - gone meanwhile
        return []


def survivors(pids: list[int], grace_s: float = 1.0) -> list[int]:
    """The processes still running `grace_s` after their parent exited (multiprocessing's resource tracker, a
    uvicorn worker) — none may be."""
    deadline = time.monotonic() + grace_s
    while True:
        alive = [p for p in pids if _alive(p)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Still running (a zombie waiting for a reaper has exited)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("workers", [1, 2])
def test_serve_stops_while_serving(graph: Path, sig: int, workers: int) -> None:
    port = free_port()
    proc = spawn(["serve", str(graph), "--port", str(port), "--workers", str(workers)])
    wait_healthy(port, proc)
    kids = children_of(proc.pid)
    status, seconds, out = stop(proc, sig)
    assert status == 0, out
    assert seconds < STOP_WITHIN_S + (1.0 if workers > 1 else 0.0), (seconds, out)
    assert not survivors(kids)
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)


def test_workers_end_within_a_second_when_their_supervisor_is_killed(graph: Path) -> None:
    """kill -9 of the supervisor (the OOM killer, an operator): its workers and their search processes end within a
    second (parent-death signal), so the port is free for a restart instead of served on by orphans."""
    from app.server import check_port

    port = free_port()
    args = ["serve", str(graph), "--port", str(port), "--workers", "2"]
    proc = spawn(args, env={"STARROUTE_SEARCH_PROCESSES": "1"})
    wait_healthy(port, proc)
    deadline = time.monotonic() + 30
    while len(children_of(proc.pid)) < 4 and time.monotonic() < deadline:  # 2 workers, a search process each
        time.sleep(0.1)
    kids = children_of(proc.pid)
    assert len(kids) >= 4, kids
    proc.kill()
    proc.wait(10)  # not its output: an orphan would hold the pipe open
    left = survivors(kids, grace_s=STOP_WITHIN_S)
    for pid in left:  # the orphans this test made, not left to serve on
        os.kill(pid, signal.SIGKILL)
    assert not left, "orphans still running"
    check_port("127.0.0.1", port)  # free: a restart can listen


def test_python_m_app_server_stops_quietly_on_ctrl_c(graph: Path) -> None:
    """The server module's own command line (the tests' and the image's way in) ends on Ctrl-C with status 0 and no
    traceback, as `uvicorn.run` did for it."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.server", str(graph), "--port", str(port)],
        cwd=ROOT,
        preexec_fn=_default_sigint,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_healthy(port, proc)
    status, seconds, out = stop(proc, signal.SIGINT)
    assert status == 0 and "Traceback" not in out, out
    assert seconds < STOP_WITHIN_S, (seconds, out)


PREPROCESS_MOMENTS = [(signal.SIGTERM, 0.2, False), (signal.SIGINT, 0.35, False), (signal.SIGTERM, 2.5, True)]


@pytest.mark.parametrize(("sig", "after_s", "cold"), [*PREPROCESS_MOMENTS, (signal.SIGINT, 1.5, True)])
def test_preprocess_stops_and_leaves_nothing(tmp_path: Path, sig: int, after_s: float, cold: bool) -> None:
    env = {}
    if cold:
        (tmp_path / "cache").mkdir()
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    work = tmp_path / "work"
    work.mkdir()
    out_dir = work / "graphs" / "monaco"
    proc = spawn(["preprocess", str(MONACO), "-o", str(out_dir)], env=env)
    time.sleep(after_s)
    if proc.poll() is not None:
        pytest.skip(f"preprocess finished within {after_s} s on this machine: nothing to interrupt")
    status, seconds, out = stop(proc, sig)
    if status == -sig:
        pytest.skip(f"the signal landed within {after_s} s, before the interpreter reached starroute's code")
    assert status != 0, out
    assert status == (130 if sig == signal.SIGINT else 143), out
    # "nothing was written": stopped while its modules were still importing, before the command began
    assert ("no graph was written" in out or "nothing was written" in out) and "Traceback" not in out, out
    assert list(work.iterdir()) == [], "an output, a temporary directory or a parent folder was left behind"


_HOLD_SCRIPT = r"""
import sys, threading, time
from pathlib import Path
from numba.core.caching import IndexDataCacheFile
from floor.kernels.jit import hold_cache_writes

d = Path(sys.argv[1])

def write(name, inside_s):
    with IndexDataCacheFile._open_for_write(None, str(d / name)) as f:
        f.write(b"x")
        time.sleep(inside_s)

under_way = threading.Thread(target=write, args=("first.nbc", 0.3))
under_way.start()
time.sleep(0.1)  # inside its write: first.nbc.tmp.<uuid> exists
t0 = time.monotonic()
drained = hold_cache_writes(timeout_s=5.0)
waited = time.monotonic() - t0
late = threading.Thread(target=write, args=("second.nbc", 0.0), daemon=True)
late.start()
late.join(0.3)
print(drained, waited > 0.1, late.is_alive(), sorted(p.name for p in d.iterdir()))
"""


def test_cache_writes_held_on_a_signal(tmp_path: Path) -> None:
    """The clean-up on a signal cannot stop a compile thread: `hold_cache_writes` lets the cache file under way be
    renamed into place, and a write that would start afterwards waits, creating nothing, until the process exits."""
    out = subprocess.run(
        [sys.executable, "-c", _HOLD_SCRIPT, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "True True True ['first.nbc']"

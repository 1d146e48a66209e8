"""A newcomer's first start: `starroute serve` of the bundled extract (what `make run` runs) on an empty numba cache.

The server says it is ready once a first route, table and nearest need no compiling; everything else compiles
behind it. A request that needs one of those kernels first (the map's road tiles, a traced ALT route, bidirectional
A*, an isochrone) waits for it and then answers: its time limit never counts compile time. A Ctrl-C at the terminal
(SIGINT to the whole process group) while kernels still compile, in the server, in the compile job beside the graph
build and in a search process, ends everything quietly: status 0, no traceback, no leaked-semaphore warning, no
process and no half-written cache file left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from harness.api_server import ROOT, free_port
from tests.osrm.test_signals import children_of, survivors

MONACO = ROOT / "data" / "monaco.osm.pbf"
A, B = "7.4197,43.7311", "7.4246,43.7384"
# what still compiles when the server says it is ready
WAITING_FOR_KERNELS = {
    "road tile": "/tile/15/17059/11948",
    "alt with trace": f"/route?from={A}&to={B}&algorithm=alt&trace=true",
    "bidirectional-astar": f"/route?from={A}&to={B}&algorithm=bidirectional-astar",
    "isochrone": f"/isochrone?point={A}&minutes=2,5",
}
# The search processes spawned at once, as a lone worker spawns them when its warm-up outlasts FORK_WAIT_S (a slow
# machine): then they compile too, and their Ctrl-C is tested with the rest.
SERVE = "import sys, app.api.service as s; s.FORK_WAIT_S = 0.0; from app.cli import main; main(sys.argv[1:])"


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as a terminal starts it (a test runner may have it ignored)


@pytest.mark.slow
def test_a_first_start_answers_what_still_compiles_and_stops_quietly(tmp_path: Path) -> None:
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    port = free_port()
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(cache),
        "STARROUTE_REQUEST_TIME_LIMIT_S": "1",  # far below any compile: counted, every request would fail
        "STARROUTE_SEARCH_PROCESSES": "1",
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, "serve", str(MONACO), "--port", str(port)],
        cwd=tmp_path,  # the graph is built into ./graphs
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal's job
        preexec_fn=_default_sigint,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 240
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)[-3000:]
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        answers: dict[str, tuple[int, str]] = {}

        def ask(name: str, path: str) -> None:
            r = httpx.get(base + path, timeout=240)
            answers[name] = (r.status_code, r.text[:200] if r.status_code != 200 else "")

        asking = [threading.Thread(target=ask, args=item) for item in WAITING_FOR_KERNELS.items()]
        for t in asking:
            t.start()
        for t in asking:
            t.join()
        assert answers == {name: (200, "") for name in WAITING_FOR_KERNELS}, answers
        # the background warm-up still compiles here (map matching and trips come after these requests' kernels),
        # and the search process warms up beside it
        kids = children_of(proc.pid)
        assert kids, "no search process or compile job started"
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(5)
    out = "".join(lines)
    assert proc.returncode == 0, out[-3000:]
    assert "Traceback" not in out and "leaked" not in out, out[-3000:]
    assert not survivors(kids), out[-3000:]
    assert not list(cache.rglob("*.tmp.*")), "a half-written cache file was left behind"

"""A real starroute server process for the API tests: `python -m app.server` on a free loopback port.

One process per (graph, options) for the whole test session, shared by every API test module, stopped at exit.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 300.0  # a cold numba cache compiles every kernel at startup

_servers: dict[tuple, tuple[subprocess.Popen, str]] = {}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(graph_dir: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Start a server and wait until `/health` answers; returns (process, base URL)."""
    port = free_port()
    cmd = [sys.executable, "-m", "app.server", str(graph_dir), "--port", str(port), "--log-level", "warning", *args]
    full_env = {**os.environ, **(env or {})}
    log = tempfile.NamedTemporaryFile(prefix="starroute-server-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = Path(log.name).read_text(errors="replace")
            raise RuntimeError(f"server exited with {proc.returncode}:\n{out[-4000:]}")
        try:
            if httpx.get(f"{base}/health", timeout=2.0).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    stop(proc)
    raise RuntimeError(f"server did not answer /health within {STARTUP_TIMEOUT_S:.0f} s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def shared(graph_dir: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Base URL of the session's server for these options (started on first use)."""
    key = (str(graph_dir), args, tuple(sorted((env or {}).items())))
    if key not in _servers:
        _servers[key] = start(graph_dir, *args, env=env)
    return _servers[key][1]


@atexit.register
def _stop_all() -> None:
    for proc, _ in _servers.values():
        stop(proc)

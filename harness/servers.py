"""Servers for the benchmarks: starroute's and osrm-routed on free loopback ports, started, awaited and stopped."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A free local TCP port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_status(url: str, timeout: float = 2.0) -> int | None:
    """The status of a plain-HTTP GET of `url`, None when nothing answers. The standard library's client: a poll
    costs ~0.04 ms of CPU where `httpx.get` (a new client, an SSL context) costs ~20 ms, which a start-up timed on
    2 cores would otherwise share with the poller."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout)
    try:
        conn.request("GET", path or "/")
        return conn.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 300.0) -> None:
    """Wait until `url` answers (any status), or fail when the process dies or the time is up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        if http_status(url) is not None:
            return
        time.sleep(0.25)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


def stop(proc: subprocess.Popen) -> None:
    """Terminate a server started here (kill it after 15 s)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def start_starroute(
    graph: Path, workers: int = 1, env: dict[str, str] | None = None, root: Path = ROOT
) -> tuple[subprocess.Popen, str]:
    """`python -m app.server GRAPH` with `workers` workers (and `env` added to the environment), healthy; (process,
    base URL). `root`: the source tree to run it from (its packages come first on the path)."""
    port = free_port()
    cmd = [sys.executable, "-m", "app.server", str(graph), "--port", str(port), "--workers", str(workers)]
    full_env = {**os.environ, **(env or {})}
    if root != ROOT:
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), full_env.get("PYTHONPATH")]))
    proc = subprocess.Popen(cmd + ["--log-level", "warning"], cwd=root, stdout=subprocess.DEVNULL, env=full_env)
    base = f"http://127.0.0.1:{port}"
    wait_ready(f"{base}/health", proc)
    return proc, base


def start_osrm(bin_dir: Path, dataset: Path, threads: int = 1, algorithm: str = "ch") -> tuple[subprocess.Popen, str]:
    """osrm-routed on a prepared dataset (`algorithm` "ch" or "mld") with `threads` threads, answering; (process,
    base URL)."""
    port = free_port()
    cmd = [str(bin_dir / "osrm-routed"), "--ip", "127.0.0.1", "--port", str(port), "-t", str(threads)]
    cmd += ["--algorithm", algorithm, str(dataset)]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "DISABLE_ACCESS_LOGGING": "1"}
    )
    base = f"http://127.0.0.1:{port}"
    wait_ready(f"{base}/nearest/v1/driving/0,0", proc)
    return proc, base

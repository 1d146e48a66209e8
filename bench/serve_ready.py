"""Seconds from starting a server command to its first `GET /health` 200, median over runs; its stderr timed.

    python bench/serve_ready.py RUNS [NAME=VALUE ...] -- COMMAND ... {port} ...

`{port}` in the command becomes a free port; `NAME=VALUE` pairs go into its environment (for a cold start:
`NUMBA_CACHE_DIR=$(mktemp -d)`). The first run's stderr lines are printed with the second they appeared, so a
start-up's phases (compile groups, "ready in") show on one time line. Example (DESIGN.md, Start-up):

    python bench/serve_ready.py 5 -- starroute serve /tmp/porto7 --workers 2 --port {port}
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.servers import free_port, http_status, stop  # noqa: E402


def once(command: list[str], env: dict[str, str], show: bool, timeout: float = 600.0) -> float:
    """Seconds until the server at `{port}` is healthy; then SIGTERM. Prints its stderr lines when `show`."""
    port = free_port()
    argv = [a.replace("{port}", str(port)) for a in command]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.perf_counter() - t0, line.rstrip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while http_status(f"http://127.0.0.1:{port}/health", timeout=1) != 200:
            if proc.poll() is not None or time.perf_counter() - t0 > timeout:
                reader.join(1)
                raise SystemExit(f"{' '.join(argv)} ended or hung:\n" + "\n".join(text for _, text in lines))
            time.sleep(0.005)
        seconds = time.perf_counter() - t0
    finally:
        stop(proc)
    reader.join(1)
    if show:
        for at, text in lines:
            print(f"  {at:6.2f} {text}")
    return seconds


def main(argv: list[str]) -> int:
    if "--" not in argv or not argv or not argv[0].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    runs = int(argv[0])
    split = argv.index("--")
    env = dict(os.environ)
    for pair in argv[1:split]:
        name, value = pair.split("=", 1)
        env[name] = value
    command = argv[split + 1 :]
    times = [once(command, env, show=i == 0) for i in range(runs)]
    print("runs:", " ".join(f"{t:.2f}" for t in times), f"median {statistics.median(times):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

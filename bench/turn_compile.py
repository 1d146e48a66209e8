"""The turn stage's kernels compiled cold: seconds in all and per kernel, in a fresh numba cache.

    python -m bench.turn_compile            # `pipeline.warm_turn_kernels()` in an empty NUMBA_CACHE_DIR
    python -m bench.turn_compile --top 40   # more kernels in the table

The tiny map's road graph is built first, untimed (its kernels are the graph build's, which `preprocess` has
loaded by then). Runs itself again in a child process with `NUMBA_CACHE_DIR` set to a new temporary folder (numba
reads it once, at import), so nothing is loaded from a cache. Printed: the warm-up's seconds (what `preprocess` now
shows as "compile kernels" for the turn stage, and `TURNS_COMPILE_S` estimates), the number of compiles, then per
kernel its compiles and its seconds without (self) and with (incl) the kernels it compiled inside
(numba's `numba:compile` events).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _measure(top: int) -> None:
    sys.path.insert(0, str(ROOT))
    from numba.core import event

    class Compiles(event.Listener):
        """Per kernel: compiles, seconds including and excluding the compiles nested in it."""

        def __init__(self) -> None:
            self.stack: list[list[Any]] = []
            self.rows: dict[str, list[float]] = {}

        def on_start(self, ev: event.Event) -> None:
            fn = ev.data["dispatcher"].py_func
            self.stack.append([f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}", time.perf_counter(), 0.0])

        def on_end(self, ev: event.Event) -> None:
            name, t0, nested = self.stack.pop()
            secs = time.perf_counter() - t0
            if self.stack:
                self.stack[-1][2] += secs
            row = self.rows.setdefault(name, [0, 0.0, 0.0])
            row[0] += 1
            row[1] += secs - nested
            row[2] += secs if all(s[0] != name for s in self.stack) else 0.0

    from preprocessing.pipeline import tiny_turn_input, warm_turn_kernels

    tiny = tiny_turn_input()  # the graph build's own kernels compile here, untimed (`preprocess` has them already)
    listener = Compiles()
    event.register("numba:compile", listener)
    t0 = time.perf_counter()
    warm_turn_kernels(tiny)
    secs = time.perf_counter() - t0
    event.unregister("numba:compile", listener)
    rows = sorted(listener.rows.items(), key=lambda kv: -kv[1][1])
    print(f"turn kernels, cold: {secs:.2f} s, {sum(int(r[0]) for _, r in rows)} compiles of {len(rows)} functions")
    for name, (n, own, incl) in rows[:top]:
        print(f"  {name:34s} x{int(n):<3d} self {own:6.2f} s  incl {incl:6.2f} s")
    t0 = time.perf_counter()
    warm_turn_kernels(tiny)
    print(f"again, loaded: {time.perf_counter() - t0:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=25, help="kernels in the table (by self seconds)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _measure(args.top)
        return
    with tempfile.TemporaryDirectory(prefix="starroute-turn-compile-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        cmd = [sys.executable, "-m", "bench.turn_compile", "--child", "--top", str(args.top)]
        sys.exit(subprocess.run(cmd, cwd=ROOT, env=env).returncode)


if __name__ == "__main__":
    main()

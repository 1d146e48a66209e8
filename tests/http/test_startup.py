"""Start-up: what a server warms before it says ready is what a first request needs, and nothing more compiles.

The checks count numba's compiled or cache-loaded overloads of every kernel (each dispatcher's `overloads`), not
times: a first route, table or nearest after `warm_service` must add none. The compile groups' bookkeeping (numbers,
estimates, one job per group) is checked without compiling anything.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from app import warmup
from app.settings import Settings


def kernel_overloads() -> dict[str, int]:
    """Every numba dispatcher of starroute's loaded modules: its qualified name -> how many overloads it holds."""
    from numba.core.registry import CPUDispatcher

    counts: dict[str, int] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("app.", "preprocessing.")):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, CPUDispatcher):
                counts[f"{name}.{attr}"] = len(value.overloads)
    return counts


def test_a_first_request_after_warm_up_compiles_and_loads_nothing(
    bundled_graph: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.api.osrm import dispatch as osrm
    from app.api.service import Service

    monkeypatch.setattr(warmup, "_start_background", lambda fn: None)  # only what runs before "ready"
    service = warmup.warm_service(Service(Settings(graph_dir=bundled_graph)), say=lambda m: None, background=True)
    try:
        before = kernel_overloads()
        assert before, "no kernel found: the check would pass vacuously"
        a, b = "7.4197,43.7311", "7.4246,43.7384"
        for path, query in (
            (f"/route/v1/driving/{a};{b}", "overview=full&steps=true&annotations=true"),
            (f"/route/v1/driving/{b};{a}", "geometries=geojson"),
            (f"/table/v1/driving/{a};{b};{a}", "annotations=duration,distance"),
            (f"/nearest/v1/driving/{a}", "number=3"),
        ):
            status, body = asyncio.run(osrm.handle(service, path, query))
            assert status == 200, body[:300]
        after = kernel_overloads()
        grown = {k: (before.get(k, 0), n) for k, n in after.items() if n != before.get(k, 0)}
        assert not grown, f"a first request compiled or loaded kernels: {grown}"
    finally:
        service.close()


def test_background_warm_up_runs_the_rest_and_marks_the_cache(
    bundled_graph: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.api.service import Service
    from app.engine.route import ch_leg
    from app.engine.snap import snapper as snap

    rest: list[Any] = []
    monkeypatch.setattr(warmup, "_start_background", rest.append)
    marked: list[str] = []
    monkeypatch.setattr(warmup, "mark_compiled", marked.append)
    service = warmup.warm_service(Service(Settings(graph_dir=bundled_graph)), say=lambda m: None, background=True)
    try:
        assert len(rest) == 1 and not marked  # the cache is marked complete only once the rest ran
        # legs and snapping step by step until the rest has loaded their fused kernels (the router's one switch)
        assert not service.opened.router.hot_path.fused
        before = kernel_overloads()
        worker = threading.Thread(target=rest[0])  # it lowers its own thread's priority
        worker.start()
        worker.join()
        assert marked == ["engine"]
        assert service.opened.router.hot_path.fused and ch_leg._ch_leg.signatures
        assert snap._snap_point.signatures and snap._nearest_point.signatures
        assert kernel_overloads() != before  # the other algorithms, trips and options loaded only now
    finally:
        service.close()


def test_a_server_start_maps_the_graph_once(bundled_graph: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`open_service` (a server's start-up) loads the graph directory once: the engine is built on the graph its
    fail-fast check loaded (it was mapped and checked twice, a tenth of a second on Porto)."""
    from app.engine import data
    from app.server import open_service
    from harness.servers import free_port

    monkeypatch.setattr(warmup, "_start_background", lambda fn: None)
    loads: list[object] = []
    real = data.load_graph

    def counted(*args: Any, **kwargs: Any) -> Any:
        loads.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(data, "load_graph", counted)
    service = open_service(Settings(graph_dir=bundled_graph, port=free_port()), say=lambda m: None)
    try:
        assert len(loads) == 1, loads
        assert service.opened.graph.path == Path(bundled_graph)
    finally:
        service.close()


def test_compile_groups_are_numbered_and_estimated() -> None:
    jobs = {job for _, job, _ in warmup.COMPILE_GROUPS}
    assert jobs == {"preprocess", "engine"}
    per_job = {j: sum(s for _, job, s in warmup.COMPILE_GROUPS if job == j) for j in jobs}
    assert warmup.compile_estimate(2) == max(per_job.values())
    assert warmup.compile_estimate(1) == sum(per_job.values())
    names = [name for name, _, _ in warmup.COMPILE_GROUPS]
    assert len(set(names)) == len(names)


# In a fresh process: preprocess the warm-up's sample map as `starroute compile`'s "preprocessing" group does, and
# note at the start of each stage how many overloads the turn stage's kernels hold (compiled or loaded from the cache).
_TURN_KERNELS_AT_STAGES = """
import json, sys
from contextlib import contextmanager
from pathlib import Path
from app.warmup import write_sample_map
from floor.intersections import views
from preprocessing.pipeline import preprocess
from floor.report import Reporter

KERNELS = (views._junction_roads, views._may_merge, views._turn_views)
seen = {}

class Recording(Reporter):
    @contextmanager
    def stage(self, name, total=None, unit=""):
        seen[name] = [len(k.overloads) for k in KERNELS]
        with super().stage(name, total, unit) as tick:
            yield tick

work = Path(sys.argv[1])
preprocess(write_sample_map(work / "sample.osm"), work / "g", ch=True, landmarks=4, force=True,
           reporter=Recording(quiet=True))
print(json.dumps(seen))
"""


def test_the_turn_kernels_compile_before_the_turn_stage_in_the_compile_group(tmp_path: Path) -> None:
    """The turn stage's kernels are compiled (or loaded) in preprocess's compile block, before the "turns" stage:
    in `starroute compile`'s preprocessing group (the Docker image ships them) as in every preprocess."""
    import json
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", _TURN_KERNELS_AT_STAGES, str(tmp_path)],
        capture_output=True, text=True, cwd=warmup._ROOT, check=True,
    )  # fmt: skip
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["build graph"] == [0, 0, 0], seen  # nothing of them before the compile block
    assert seen["turns"] == [1, 1, 1], f"the turn kernels were not ready when the turn stage began: {seen}"
    assert warmup.COMPILE_GROUPS[0][0] == "preprocessing"


def test_warm_kernels_readies_every_turn_kernel(tmp_path: Path) -> None:
    """`warm_kernels(turns=True)` leaves each of the views' kernels with its one signature, in a fresh process."""
    import subprocess

    code = (
        "from preprocessing.pipeline import warm_kernels; from floor.intersections import views; "
        "warm_kernels(turns=True, contract=False); "
        "print([len(k.signatures) for k in (views._junction_roads, views._may_merge, views._turn_views)])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=warmup._ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[1, 1, 1]"


def test_is_compiled_needs_no_numba() -> None:
    import subprocess

    code = "import sys, app.warmup as w; w.is_compiled('engine'); print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=warmup._ROOT, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("target", "workers", "expected"), [
    ("extract", 1, ["first job", ("serve", True), "stop"]),  # the engine's first group compiles beside the build
    ("graph", 1, [("serve", False), "stop"]),  # the server compiles what a first request needs, the rest behind
    ("extract", 2, ["compile_all", ("serve", True), "stop"]),  # workers share what was compiled before the fork
])  # fmt: skip
def test_a_first_serve_compiles_what_it_needs_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, workers: int, expected: list[Any]
) -> None:
    from app import cli
    from app.cli import serve

    calls: list[Any] = []
    monkeypatch.setattr(warmup, "is_compiled", lambda part: False)
    monkeypatch.setattr(warmup, "compile_all", lambda **kw: calls.append("compile_all"))
    monkeypatch.setattr(warmup, "start_first_engine_job", lambda: calls.append("first job"))
    monkeypatch.setattr(warmup, "stop_compile_jobs", lambda: calls.append("stop"))
    monkeypatch.setattr(serve, "_serve", lambda args, t, extract: calls.append(("serve", extract)) or 0)
    path = tmp_path / ("monaco.osm.pbf" if target == "extract" else "graph")
    args = cli.parser().parse_args(["serve", str(path), "--workers", str(workers)])
    assert serve.cmd_serve(args) == 0
    assert calls == expected


def test_the_first_engine_job_compiles_its_group_only(tmp_path: Path) -> None:
    said: list[str] = []
    warmup._compile_job("engine-first", tmp_path, said.append)
    assert len(said) == 1 and warmup.FIRST_JOB_GROUP in said[0], said


_SHARED_KERNEL = """
from floor.kernels.jit import kernel


@kernel
def work(n):
    s = 0.0
    for i in range(n):
        s += (i % 7) ** 0.5
    return s
"""

_SHARED_COMPILE = r"""
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from numba.core import event

compiled = []
class Compiles(event.Listener):
    def on_start(self, ev): compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev): pass
event.register("numba:compile", Compiles())
import shared_kernel
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
shared_kernel.work(10)
print("compiled" if "work" in compiled else "loaded")
"""


def test_two_processes_compile_a_kernel_once(tmp_path: Path) -> None:
    """Two processes needing the same uncached kernel at the same moment (a first `serve` of an extract and its
    compile job): one compiles it, the other waits for the cache file and loads it (`floor.kernels.jit`'s lock)."""
    import os
    import subprocess

    (tmp_path / "shared_kernel.py").write_text(_SHARED_KERNEL)
    go = tmp_path / "go"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SHARED_COMPILE, str(tmp_path), str(go)],
            cwd=warmup._ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    import time

    time.sleep(3.0)  # both imported numba and wait for the go
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    assert sorted(out.strip() for out, _ in outs) == ["compiled", "loaded"]

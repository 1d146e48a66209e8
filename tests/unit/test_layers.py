"""The layers of docs/DESIGN.md held against the real imports (every `import` and `from ... import` in the tree,
function-level ones included), by folder: a new arrow that breaks a rule fails here with the file and the import.

The folders, lowest first: `floor/` (the format, the kernels, OSRM's junction model), `preprocessing/osm/` (the OSM
import layer), `preprocessing/` (the build stages), `app/engine/` (grouped by concern, `ENGINE_FLOORS`), `app/api/`,
the shell (`app/*.py`), and `starroute/` (the library over the facade)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("floor", "preprocessing", "app", "starroute")

# the engine's folders (and top modules), lowest first: a module imports at run time only from its own group or a
# lower one (imports for type annotations alone, under `if TYPE_CHECKING:`, may point anywhere)
ENGINE_FLOORS = (
    "errors", "types", "data", "geo", "guidance", "roads", "search", "snap", "route", "features", "router", "models",
    "maps", "requests", "facade",
)  # fmt: skip
# what the API and the library may take from the engine besides the facade: request/answer types, errors, the step
# model, the map's tiles, and a few named modules (parsing of avoid areas, contour types, the algorithm registry, OSRM's
# leg merge)
ENGINE_DOORS = (
    "app.engine.facade", "app.engine.types", "app.engine.errors", "app.engine.guidance", "app.engine.maps",
    "app.engine.features.areas", "app.engine.features.contours", "app.engine.search.algorithms",
    "app.engine.route.legs",
)  # fmt: skip
# the doors from serving back into the pipeline: the admin endpoint runs the customize stage (a new metric into the
# graph directory, which every worker then loads as it loads any graph), and the engine's loader finishing a metric
# whose search stages `starroute customize` left pending (`app.engine.data.complete_metric`)
API_RUNS_STAGE = {
    ("app/api/admin.py", "preprocessing.customize"),
    ("app/api/admin.py", "preprocessing.osm.speeds"),
    ("app/engine/data.py", "preprocessing.customize"),
}
MAX_MODULES_PER_FOLDER = 12  # modules besides __init__.py in one engine folder
MAX_LINES = 700


def _imports(path: Path, runtime_only: bool = False) -> list[str]:
    """The modules `path` imports (`from a.b import c` gives a.b and a.b.c); with `runtime_only`, those under
    `if TYPE_CHECKING:` left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
            out += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            raise AssertionError(f"{path}: relative import (the tree imports absolutely)")
    return out


def _files(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def _rel(f: Path) -> str:
    return str(f.relative_to(ROOT))


def _arrows(folder: str, runtime_only: bool = False) -> Iterator[tuple[str, str]]:
    for f in _files(folder):
        for m in _imports(f, runtime_only):
            if m.split(".")[0] in PACKAGES:
                yield _rel(f), m


def _under(m: str, *prefixes: str) -> bool:
    return any(m == p or m.startswith(p + ".") for p in prefixes)


def test_floor_stands_on_nothing_of_ours() -> None:
    bad = [(f, m) for f, m in _arrows("floor") if not _under(m, "floor")]
    assert not bad, f"floor/ imports a layer above it: {bad}"


def test_osm_import_layer_stands_on_the_floor() -> None:
    bad = [(f, m) for f, m in _arrows("preprocessing/osm") if not _under(m, "floor", "preprocessing.osm")]
    assert not bad, f"preprocessing/osm/ imports a build stage or the app: {bad}"


def test_preprocessing_never_imports_app() -> None:
    bad = [(f, m) for f, m in _arrows("preprocessing") if _under(m, "app", "starroute")]
    assert not bad, bad


def test_engine_and_api_import_only_the_floor_of_preprocessing() -> None:
    bad = []
    for folder in ("app/engine", "app/api"):
        for f, m in _arrows(folder):
            if _under(m, "preprocessing") and not any(f == door and _under(m, stage) for door, stage in API_RUNS_STAGE):
                bad.append((f, m))
    assert not bad, f"engine/API import a preprocessing stage module: {bad}"


def test_engine_knows_no_http() -> None:
    bad = [
        (_rel(f), m)
        for f in _files("app/engine")
        for m in _imports(f)
        if m.split(".")[0] in ("fastapi", "starlette", "uvicorn") or _under(m, "app.api")
    ]
    assert not bad, bad


def _engine_group(module: str) -> str:
    return module.split(".")[2]


def test_engine_folders_import_downward() -> None:
    """Every engine group imports at run time only from itself and the groups below it (`ENGINE_FLOORS`)."""
    groups = {p.stem if p.suffix else p.name for p in (ROOT / "app/engine").iterdir() if p.name != "__init__.py"}
    groups -= {"__pycache__"}
    assert groups == set(ENGINE_FLOORS), f"an engine folder or top module is missing from ENGINE_FLOORS: {groups}"
    bad = []
    for f, m in _arrows("app/engine", runtime_only=True):
        if not _under(m, "app.engine") or m == "app.engine":
            continue
        mine = _engine_group(f.replace("/", ".").removesuffix(".py"))
        theirs = _engine_group(m)
        if theirs in ENGINE_FLOORS and ENGINE_FLOORS.index(theirs) > ENGINE_FLOORS.index(mine):
            bad.append((f, m))
    assert not bad, f"an engine group imports one above it: {bad}"


def test_api_reaches_the_engine_through_its_door() -> None:
    bad = []
    for f, m in _arrows("app/api"):
        if _under(m, "app.engine") and m != "app.engine" and not _under(m, *ENGINE_DOORS, "app.engine.data"):
            bad.append((f, m))
        if _under(m, "app.engine.data") and f != "app/api/service.py":
            bad.append((f, m))
    assert not bad, f"the API imports engine internals (use app.engine.facade): {bad}"


def test_library_reaches_the_engine_through_its_door() -> None:
    """`starroute/` is a shell over the facade like the API; below it, only the CLI imports it."""

    def outside(m: str) -> bool:
        if _under(m, "app.engine") and m != "app.engine":
            return not _under(m, *ENGINE_DOORS, "app.engine.data")
        if _under(m, "preprocessing") and m != "preprocessing":
            return not _under(m, "preprocessing.pipeline", "preprocessing.errors")
        return _under(m, "app.api")

    bad = [(f, m) for f, m in _arrows("starroute") if outside(m)]
    assert not bad, bad
    up = [(f, m) for folder in ("app", "floor", "preprocessing") for f, m in _arrows(folder) if _under(m, "starroute")]
    assert all(f.startswith("app/cli/") for f, _ in up), up


def test_api_calls_no_router() -> None:
    """No handler reaches past the facade to the router, the graph or its manifest."""
    bad = []
    for f in _files("app/api"):
        text = f.read_text(encoding="utf-8")
        for needle in (".router.", "svc.graph", "service.graph", ".manifest"):
            if needle in text:
                bad.append((_rel(f), needle))
    assert not bad, bad


def test_engine_folders_hold_about_a_dozen_modules() -> None:
    big = {}
    for d in [ROOT / "app/engine", *sorted(p for p in (ROOT / "app/engine").rglob("*") if p.is_dir())]:
        n = len([p for p in d.glob("*.py") if p.name != "__init__.py"])
        if n > MAX_MODULES_PER_FOLDER:
            big[_rel(d)] = n
    assert not big, big


def test_no_import_circles() -> None:
    """No two modules of ours import each other, directly or around a loop (function-level imports included)."""
    modules = {}
    for pkg in PACKAGES:
        for f in _files(pkg):
            name = ".".join(f.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            modules[name] = f
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for m, f in modules.items():
        for i in _imports(f):
            while i and i not in modules:
                i = i.rpartition(".")[0]
            if i and i != m and not m.startswith(i + "."):  # a package's __init__ is no arrow back
                edges[m].add(i)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(modules):
        if v not in index:
            visit(v)
    assert not circles, circles


def test_no_file_is_a_hub() -> None:
    """Mid-sized files, one concept each: no Python file of the tree (tests, harness and bench too) over MAX_LINES."""
    big = [
        (_rel(f), n)
        for folder in (*PACKAGES, "harness", "bench", "tests")
        for f in _files(folder)
        if (n := len(f.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not big, big


def test_tests_and_bench_share_only_the_harness() -> None:
    """tests/ and bench/ never import each other; what both need is in harness/, which imports neither."""
    bad = [(f, m) for f, m in _arrows_any("tests") if _under(m, "bench")]
    bad += [(f, m) for f, m in _arrows_any("bench") if _under(m, "tests")]
    bad += [(f, m) for f, m in _arrows_any("harness") if _under(m, "tests", "bench")]
    assert not bad, bad


def _arrows_any(folder: str) -> Iterator[tuple[str, str]]:
    for f in _files(folder):
        for m in _imports(f):
            yield _rel(f), m


MAX_PARAMETERS = 16


def test_no_function_takes_more_than_sixteen_parameters() -> None:
    """Kernels take a few named structs (NamedTuples built once per graph or metric), not dozens of arrays."""
    wide = []
    for folder in PACKAGES:
        for f in _files(folder):
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    a = node.args
                    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
                    if n > MAX_PARAMETERS:
                        wide.append((_rel(f), node.name, n))
    assert not wide, wide

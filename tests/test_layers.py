"""The layers of docs/DESIGN.md held against the real imports (every `import` and `from ... import` in the tree,
function-level ones included), so a new arrow that breaks a rule fails here with the file and the import."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the floor both sides stand on: the format, units and codes, geometry, the numba and heap helpers, the CCH
# customization kernel (a pure kernel over the format's arrays, for the engine and the offline tools alike),
# whole-or-nothing files, the format's checks, and OSRM's road classification with its graph compressor's rule (the
# turn stage and guidance both read it)
FLOOR = {
    "artifacts", "checks", "units", "geometry", "measure", "jit", "heap", "cch_customize", "files", "encoded_values",
    "road_classification", "intersections",
}  # fmt: skip
# what the API may take from the engine besides the facade: request/answer types, errors, parsing of avoid areas,
# the algorithm registry, the step model and the map's tile types and constants
API_MAY_USE = {
    "facade", "types", "errors", "areas", "algorithms", "guidance", "tiles", "basemap", "data", "legs", "contours"
}  # fmt: skip


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            pkg = ".".join(path.relative_to(ROOT).with_suffix("").parts[: -node.level])
            out.append(pkg + ("." + node.module if node.module else ""))
    return out


def _files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_preprocessing_never_imports_app() -> None:
    bad = [(f, m) for f in _files("preprocessing") for m in _imports(f) if m == "app" or m.startswith("app.")]
    assert not bad, bad


# the one door from serving back into the pipeline: the admin endpoint runs the customize stage (a new metric into the
# graph directory, which every worker then loads as it loads any graph)
# graph directory, which every worker then loads as it loads any graph), and the engine's loader finishing a metric
# whose search stages `starroute customize` left pending (`app.engine.data.complete_metric`)
API_RUNS_STAGE = {
    ("app/api/admin.py", "customize"),
    ("app/api/admin.py", "speeds"),
    ("app/engine/data.py", "customize"),
}


def test_engine_and_api_import_only_the_floor_of_preprocessing() -> None:
    bad = []
    for folder in ("app/engine", "app/api"):
        for f in _files(folder):
            for m in _imports(f):
                if (str(f.relative_to(ROOT)), m.split(".")[-1]) in API_RUNS_STAGE:
                    continue
                if m.startswith("preprocessing.") and m.split(".")[1] not in FLOOR:
                    bad.append((str(f.relative_to(ROOT)), m))
    assert not bad, f"engine/API import a preprocessing stage module: {bad}"


def test_engine_knows_no_http() -> None:
    bad = [
        (f, m)
        for f in _files("app/engine")
        for m in _imports(f)
        if m.split(".")[0] in ("fastapi", "starlette", "uvicorn") or m.startswith("app.api")
    ]
    assert not bad, bad


def test_api_reaches_the_engine_through_its_door() -> None:
    bad = []
    for f in _files("app/api"):
        for m in _imports(f):
            if m.startswith("app.engine.") and m.split(".")[2] not in API_MAY_USE:
                bad.append((str(f.relative_to(ROOT)), m))
            if m == "app.engine.data" and f.name != "service.py":
                bad.append((str(f.relative_to(ROOT)), m))
    assert not bad, f"the API imports engine internals (use app.engine.facade): {bad}"


def test_library_reaches_the_engine_through_its_door() -> None:
    """`starroute/` is a shell over the facade like the API; below it, only the CLI imports it."""

    def outside(m: str) -> bool:
        if m.startswith("app.engine."):
            return m.split(".")[2] not in API_MAY_USE
        if m.startswith("preprocessing."):
            return m.split(".")[1] not in FLOOR | {"pipeline"}
        return m.startswith("app.api")

    bad = [(str(f.relative_to(ROOT)), m) for f in _files("starroute") for m in _imports(f) if outside(m)]
    for folder in ("app", "preprocessing"):
        for f in _files(folder):
            bad += [(str(f.relative_to(ROOT)), m) for m in _imports(f) if m.split(".")[0] == "starroute"]
    assert all(f == "app/cli.py" for f, _ in bad if not f.startswith("starroute/")), bad
    assert not [b for b in bad if b[0].startswith("starroute/")], bad


def test_api_calls_no_router() -> None:
    """No handler reaches past the facade to the router, the graph or its manifest."""
    bad = []
    for f in _files("app/api"):
        text = f.read_text(encoding="utf-8")
        for needle in (".router.", "svc.graph", "service.graph", ".manifest"):
            if needle in text:
                bad.append((str(f.relative_to(ROOT)), needle))
    assert not bad, bad


def test_no_file_is_a_hub() -> None:
    """Mid-sized files, one concept each: none in app/ or preprocessing/ over 900 lines."""
    big = [
        (str(f.relative_to(ROOT)), n)
        for folder in ("app", "preprocessing")
        for f in _files(folder)
        if (n := len(f.read_text(encoding="utf-8").splitlines())) > 900
    ]
    assert not big, big

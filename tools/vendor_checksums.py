"""Record the published checksums of the vendored files, from the npm tarballs.

    cd /tmp && npm pack redoc@2.5.4 swagger-ui-dist@5.35.0 leaflet@1.9.4 leaflet-routing-machine@3.2.12 \
        osrm-text-instructions@0.15.0
    python tools/vendor_checksums.py /tmp/*.tgz

Three vendored folders (`TARGETS`), each recorded when the tarballs of all its packages are given:

- `app/static/vendor/`: the front-end files (copied by hand, source-map comments removed: the README there says
  which);
- `app/api/instructions/data/`: osrm-text-instructions' phrase data (`translations/*.json`), grammar rules
  (`grammar/*.json`) and its LICENSE.txt, copied here whole from the tarball;
- `tests/unit/text_instructions/`: the same package's test fixtures (`fixtures/v5/**/*.json`) and grammar test table
  (`grammar_test.js`), copied here whole.

For every file it writes, beside the files:

- `SHA256SUMS`: sha256 of each file as shipped (`sha256sum -c SHA256SUMS` in the folder);
- `UPSTREAM.json`: per file its package, version, the tarball's URL and `integrity` (the sha512
  the npm registry publishes: `npm view <pkg>@<version> dist.integrity`), the file's path in the tarball and its
  sha256 there, and the source-map comment removed from its end (if any): shipped + `stripped` == published.

tests/unit/test_vendor.py checks both without a network: the shipped bytes against SHA256SUMS, and the shipped bytes
with the removed comment put back against the published file's sha256.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "app" / "static" / "vendor"
INSTRUCTIONS = ROOT / "app" / "api" / "instructions" / "data"
INSTRUCTION_FIXTURES = ROOT / "tests" / "unit" / "text_instructions"
OTI = "osrm-text-instructions"
REGISTRY = "https://registry.npmjs.org"
# vendored path -> (package, path in the tarball)
FILES = {
    "leaflet/leaflet.js": ("leaflet", "package/dist/leaflet.js"),
    "leaflet/leaflet.css": ("leaflet", "package/dist/leaflet.css"),
    "leaflet/LICENSE": ("leaflet", "package/LICENSE"),
    **{f"leaflet/images/{n}": ("leaflet", f"package/dist/images/{n}")
       for n in ("layers-2x.png", "layers.png", "marker-icon-2x.png", "marker-icon.png", "marker-shadow.png")},
    "leaflet-routing-machine/leaflet-routing-machine.min.js":
        ("leaflet-routing-machine", "package/dist/leaflet-routing-machine.min.js"),
    "leaflet-routing-machine/leaflet-routing-machine.css":
        ("leaflet-routing-machine", "package/dist/leaflet-routing-machine.css"),
    "leaflet-routing-machine/leaflet.routing.icons.png":
        ("leaflet-routing-machine", "package/dist/leaflet.routing.icons.png"),
    "leaflet-routing-machine/routing-icon.png": ("leaflet-routing-machine", "package/dist/routing-icon.png"),
    "leaflet-routing-machine/LICENSE.md": ("leaflet-routing-machine", "package/LICENSE.md"),
    "redoc/redoc.standalone.js": ("redoc", "package/bundles/redoc.standalone.js"),
    "redoc/redoc.standalone.js.LICENSE.txt": ("redoc", "package/bundles/redoc.standalone.js.LICENSE.txt"),
    "redoc/LICENSE": ("redoc", "package/LICENSE"),
    "swagger-ui/swagger-ui-bundle.js": ("swagger-ui-dist", "package/swagger-ui-bundle.js"),
    "swagger-ui/swagger-ui-bundle.js.LICENSE.txt": ("swagger-ui-dist", "package/swagger-ui-bundle.js.LICENSE.txt"),
    "swagger-ui/swagger-ui.css": ("swagger-ui-dist", "package/swagger-ui.css"),
    "swagger-ui/favicon-32x32.png": ("swagger-ui-dist", "package/favicon-32x32.png"),
    "swagger-ui/LICENSE": ("swagger-ui-dist", "package/LICENSE"),
    "swagger-ui/NOTICE": ("swagger-ui-dist", "package/NOTICE"),
}  # fmt: skip


def _instruction_data(names: list[str]) -> dict[str, tuple[str, str]]:
    """osrm-text-instructions' phrases and grammar rules (what `compile` reads; its abbreviations and the
    `overrides/*.js` its maintainers apply before publishing are not), and its licence."""
    out = {"LICENSE.txt": (OTI, "package/LICENSE.txt")}
    for n in names:
        for folder in ("translations", "grammar"):
            prefix = f"package/languages/{folder}/"
            if n.startswith(prefix) and n.endswith(".json"):
                out[n.removeprefix("package/languages/")] = (OTI, n)
    return out


def _instruction_fixtures(names: list[str]) -> dict[str, tuple[str, str]]:
    """osrm-text-instructions' own test data: every v5 fixture, and the grammar tests' table."""
    out = {"grammar_test.js": (OTI, "package/test/grammar_test.js")}
    out.update((n.removeprefix("package/test/"), (OTI, n)) for n in names if n.startswith("package/test/fixtures/v5/"))
    return out


# vendored folder -> (the files it holds from the tarballs' member names, copied from the tarball by this tool)
TARGETS: dict[Path, tuple[Callable[[list[str]], dict[str, tuple[str, str]]], bool]] = {
    VENDOR: (lambda names: FILES, False),
    INSTRUCTIONS: (_instruction_data, True),
    INSTRUCTION_FIXTURES: (_instruction_fixtures, True),
}


def sha256(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def main(tarballs: list[str]) -> int:
    packs: dict[str, tuple[str, str, tarfile.TarFile]] = {}
    names: list[str] = []
    for t in tarballs:
        raw = Path(t).read_bytes()
        tf = tarfile.open(t)
        meta = json.loads(tf.extractfile("package/package.json").read())  # type: ignore[union-attr]
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(raw).digest()).decode()
        packs[meta["name"]] = (meta["version"], integrity, tf)
        names += [m.name for m in tf.getmembers() if m.isfile()]
    for folder, (files_of, copy) in TARGETS.items():
        files = files_of(names)
        missing = sorted({pkg for pkg, _ in files.values()} - set(packs))
        if missing:
            print(f"{folder.relative_to(ROOT)}: skipped (no tarball of {', '.join(missing)})")
            continue
        _record(folder, files, packs, copy)
    return 0


def _record(
    folder: Path, files: dict[str, tuple[str, str]], packs: dict[str, tuple[str, str, tarfile.TarFile]], copy: bool
) -> None:
    """Write SHA256SUMS and UPSTREAM.json of one vendored folder (after copying its files in, when `copy`)."""
    upstream, sums = {}, []
    for rel, (pkg, inner) in sorted(files.items()):
        version, integrity, tf = packs[pkg]
        published = tf.extractfile(inner).read()  # type: ignore[union-attr]
        if copy:
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(published)
        shipped = (folder / rel).read_bytes()
        if not published.startswith(shipped):
            raise SystemExit(f"{rel} is not {pkg}@{version}:{inner} (nor a prefix of it)")
        stripped = published[len(shipped) :].decode()
        if stripped and "sourceMappingURL" not in stripped:
            raise SystemExit(f"{rel}: more than a source-map comment is missing: {stripped[:80]!r}")
        base = pkg.rsplit("/", 1)[-1]
        upstream[rel] = {
            "package": pkg,
            "version": version,
            "tarball": f"{REGISTRY}/{pkg}/-/{base}-{version}.tgz",
            "integrity": integrity,
            "path": inner,
            "sha256": sha256(published),
            "stripped": stripped,
        }
        sums.append(f"{sha256(shipped)}  {rel}")
    (folder / "SHA256SUMS").write_text("\n".join(sums) + "\n", encoding="utf-8")
    (folder / "UPSTREAM.json").write_text(json.dumps(upstream, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{folder.relative_to(ROOT)}: {len(sums)} files recorded")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

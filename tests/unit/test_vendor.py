"""The vendored files are the published ones, whole, and parse: the front-end files (app/static/vendor/),
osrm-text-instructions' phrase data (app/api/instructions/data/) and its test fixtures (tests/unit/text_instructions/).

Checked without a network against the records beside the files (written by tools/vendor_checksums.py from the npm
tarballs): `SHA256SUMS` (the bytes shipped) and `UPSTREAM.json` (package, version, the registry's tarball
integrity, the file's sha256 in the tarball and the source-map comment removed from its end). A file damaged on
the way in (redoc's bundle once lost a chunk from its middle and `/redoc` was a blank page while every asset URL
answered 200) fails here. The JavaScript (vendored and the map page's own) is parsed with `node --check` where node
is installed; tests/http/test_map_page.py loads every page in Chromium, which parses it there too.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

VENDOR = ROOT / "app" / "static" / "vendor"
FOLDERS = (VENDOR, ROOT / "app" / "api" / "instructions" / "data", ROOT / "tests" / "unit" / "text_instructions")
RECORDS = ("README.md", "SHA256SUMS", "UPSTREAM.json")
each_folder = pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: str(p.relative_to(ROOT)))


def _sums(folder: Path = VENDOR) -> dict[str, str]:
    out = {}
    for line in (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, rel = line.split("  ", 1)
        out[rel] = digest
    return out


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@each_folder
def test_shipped_files_match_their_checksums(folder: Path) -> None:
    sums = _sums(folder)
    assert sums
    bad = [rel for rel, digest in sums.items() if _sha(folder / rel) != digest]
    assert not bad, f"vendored files differ from SHA256SUMS: {bad}"


@each_folder
def test_shipped_files_are_the_published_ones(folder: Path) -> None:
    """Each file plus the comment removed from its end is byte for byte the file of the npm tarball."""
    upstream = json.loads((folder / "UPSTREAM.json").read_text(encoding="utf-8"))
    assert set(upstream) == set(_sums(folder))
    for rel, meta in upstream.items():
        assert meta["integrity"].startswith("sha512-") and meta["tarball"].startswith("https://registry.npmjs.org/")
        assert meta["stripped"] == "" or meta["stripped"].lstrip().startswith(("//# sourceMappingURL=", "/*# source"))
        whole = (folder / rel).read_bytes() + meta["stripped"].encode()
        assert hashlib.sha256(whole).hexdigest() == meta["sha256"], f"{rel} is not {meta['package']}@{meta['version']}"


@each_folder
def test_every_vendored_file_is_recorded(folder: Path) -> None:
    """No file in a vendored folder without a checksum (the licences of packages bundled inside another are the
    exception: they come from those packages' own tarballs, README.md says which)."""
    sums = _sums(folder)
    files = sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    unrecorded = [f for f in files if f not in sums and f not in RECORDS and not Path(f).name.startswith("LICENSE-")]
    assert not unrecorded, unrecorded


def test_the_records_name_what_the_code_reads() -> None:
    sums = _sums()
    assert "redoc/redoc.standalone.js" in sums and "swagger-ui/swagger-ui-bundle.js" in sums
    words = _sums(FOLDERS[1])
    langs = ("en", "de", "fr", "es", "it", "pt-BR", "nl", "pl", "ru", "zh-Hans")
    assert {f"translations/{lang}.json" for lang in langs} | {"LICENSE.txt", "grammar/ru.json"} <= set(words)
    meta = json.loads((FOLDERS[1] / "UPSTREAM.json").read_text(encoding="utf-8"))["LICENSE.txt"]
    assert (meta["package"], meta["version"]) == ("osrm-text-instructions", "0.15.0")
    assert meta["integrity"] == (
        "sha512-VxhAtFZ1H4mYJxbHI2nN94GCrWkbScSuD12slCxuAFkgAJdZPnAKjvymH2gTaRtcn7u0sJmn+BUpaME5ndW9hQ=="
    )  # `npm view osrm-text-instructions@0.15.0 dist.integrity`


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (the browser tests parse it too)")
def test_javascript_parses() -> None:
    scripts = sorted(VENDOR.rglob("*.js")) + sorted((ROOT / "app" / "static" / "map").glob("*.js"))
    assert len(scripts) >= 6
    for js in scripts:
        r = subprocess.run(["node", "--check", str(js)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"{js.relative_to(ROOT)} does not parse: {r.stderr.strip()[-300:]}"

"""Record the published checksums of the vendored front-end files (app/static/vendor/), from the npm tarballs.

    cd /tmp && npm pack redoc@2.5.4 swagger-ui-dist@5.35.0 leaflet@1.9.4 leaflet-routing-machine@3.2.12
    python tools/vendor_checksums.py /tmp/*.tgz

For every vendored file that comes from one of the tarballs it writes, beside the files:

- `app/static/vendor/SHA256SUMS`: sha256 of each file as shipped (`cd app/static/vendor && sha256sum -c SHA256SUMS`);
- `app/static/vendor/UPSTREAM.json`: per file its package, version, the tarball's URL and `integrity` (the sha512
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
from pathlib import Path

VENDOR = Path(__file__).resolve().parent.parent / "app" / "static" / "vendor"
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


def sha256(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def main(tarballs: list[str]) -> int:
    packs: dict[str, tuple[str, str, tarfile.TarFile]] = {}
    for t in tarballs:
        raw = Path(t).read_bytes()
        tf = tarfile.open(t)
        meta = json.loads(tf.extractfile("package/package.json").read())  # type: ignore[union-attr]
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(raw).digest()).decode()
        packs[meta["name"]] = (meta["version"], integrity, tf)
    upstream, sums = {}, []
    for rel, (pkg, inner) in sorted(FILES.items()):
        version, integrity, tf = packs[pkg]
        published = tf.extractfile(inner).read()  # type: ignore[union-attr]
        shipped = (VENDOR / rel).read_bytes()
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
    (VENDOR / "SHA256SUMS").write_text("\n".join(sums) + "\n", encoding="utf-8")
    (VENDOR / "UPSTREAM.json").write_text(json.dumps(upstream, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(sums)} files recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

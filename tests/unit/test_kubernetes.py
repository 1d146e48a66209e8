"""deploy/kubernetes: every manifest valid against the Kubernetes schemas (offline, `kubernetes-validate`), and
agreeing with the image and the server: the same image as compose, the port the server listens on and the
Dockerfile exposes, probes on `/health`, the graph mounted read-only where it is served and writable where it is
built, commands the CLI parses, settings the server knows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"
K8S_VERSION = "1.31"


def _docs() -> dict[str, dict[str, Any]]:
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    out = {}
    for name in kust["resources"]:
        for doc in yaml.safe_load_all((K8S / name).read_text()):
            out[doc["kind"]] = doc
    return out


def test_every_manifest_validates_against_the_schemas() -> None:
    kv = pytest.importorskip("kubernetes_validate")
    docs = _docs()
    assert set(docs) == {
        "Namespace", "PersistentVolumeClaim", "Job", "Deployment", "Service", "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
    }  # fmt: skip
    for doc in docs.values():
        kv.validate(doc, K8S_VERSION, strict=True)  # raises ValidationError naming the field


def _container(doc: dict[str, Any], init: bool = False) -> list[dict[str, Any]]:
    spec = doc["spec"]["template"]["spec"]
    return spec.get("initContainers", []) if init else spec["containers"]


def test_the_manifests_agree_with_the_image_and_the_server() -> None:
    from app.cli import parser
    from app.settings import Settings

    docs = _docs()
    dockerfile = (ROOT / "Dockerfile").read_text()
    exposed = int(re.search(r"^EXPOSE\s+(\d+)", dockerfile, flags=re.M).group(1))
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    image = compose["x-image"]["image"].split(":")[0]
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert [i["name"] for i in kust["images"]] == [image]

    dep = docs["Deployment"]
    (api,) = _container(dep)
    assert api["image"] == image
    args = parser().parse_args(api["args"])
    assert args.command == "serve" and args.port == exposed == api["ports"][0]["containerPort"]
    assert args.host == "0.0.0.0"
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert api[probe]["httpGet"] == {"path": "/health", "port": "http"}, probe
    mounts = {m["name"]: m for m in api["volumeMounts"]}
    graph_dir = str(args.target)
    assert graph_dir.startswith(mounts["graph"]["mountPath"] + "/") and mounts["graph"]["readOnly"] is True
    assert api["securityContext"]["readOnlyRootFilesystem"] is True and mounts["tmp"]["mountPath"] == "/tmp"
    user = re.findall(r"--uid\s+(\d+)", dockerfile)[0]
    assert str(dep["spec"]["template"]["spec"]["securityContext"]["runAsUser"]) == user
    known = {f"STARROUTE_{n.upper()}" for n in Settings.model_fields}
    assert {e["name"] for e in api.get("env", [])} <= known
    labels = dep["spec"]["template"]["metadata"]["labels"]
    for kind in ("Service", "PodDisruptionBudget"):
        sel = docs[kind]["spec"]["selector"]
        assert (sel.get("matchLabels") or sel).items() <= labels.items(), kind
    assert docs["Service"]["spec"]["ports"][0]["targetPort"] == api["ports"][0]["name"]
    assert docs["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"]

    job = docs["Job"]
    (download,) = _container(job, init=True)
    (pre,) = _container(job)
    d_args, p_args = parser().parse_args(download["args"]), parser().parse_args(pre["args"])
    assert d_args.command == "download" and p_args.command == "preprocess"
    assert p_args.input == d_args.output and str(p_args.output) == graph_dir  # builds what the API serves
    assert all(not m.get("readOnly") for m in pre["volumeMounts"])
    claim = docs["PersistentVolumeClaim"]["metadata"]["name"]
    for doc in (dep, job):
        vols = {v["name"]: v for v in doc["spec"]["template"]["spec"]["volumes"]}
        assert vols["graph"]["persistentVolumeClaim"]["claimName"] == claim

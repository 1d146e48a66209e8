"""Live traffic over HTTP: `POST /admin/metric` applies an OSRM segment speed (or turn penalty) CSV as the graph's
new metric, `DELETE /admin/metric` goes back to the preprocessed one; both behind a bearer token.

Off unless `STARROUTE_ADMIN_TOKEN` is set (404 then, as for any unknown path); a missing or wrong token gets 401 and
changes nothing. The body is the CSV itself (`text/csv`), or a whole metric as JSON (`application/json`: the files'
texts under `segment_speeds`, `turn_penalties`, `time_profiles`, `segment_profiles`, and a `timezone`: departure
time's profiles come this way), up to `admin_max_body_bytes`. The update runs as
`starroute customize --stages` does (`preprocessing.customize`: read, apply, written atomically into the graph
directory, then its search stages added), then every worker reloads: this one at once, or all of them through the
supervisor's SIGHUP. A malformed file is a 400 naming the line and the reason, with nothing written. Each update
logs one line: what was applied, into which directory, how long it took (with several workers the supervisor's
reload logs its own).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import signal
import threading
import time
from typing import Any, Literal

import orjson
from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from app.api.errors import JSON_TYPE, error_response

ADMIN_PATH = "/admin/metric"
router = APIRouter(tags=["admin"])
ADMIN_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"description": "no or wrong bearer token: nothing changed"},
    404: {"description": "the endpoint is off (STARROUTE_ADMIN_TOKEN is not set)"},
}
_LOCK = threading.Lock()  # one customization at a time in this process
log = logging.getLogger("starroute")


def _refused(request: Request) -> Response | None:
    """404 when the endpoint is off, 401 without the right bearer token; None when the caller may proceed."""
    token = request.app.state.service.settings.admin_token
    if not token:
        return error_response("NotFound", "the admin endpoint is off (set STARROUTE_ADMIN_TOKEN to enable it)")
    given = request.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
        resp = Response(
            orjson.dumps({"code": "Unauthorized", "message": "a valid `Authorization: Bearer <token>` is required"}),
            status_code=401,
            media_type=JSON_TYPE,
        )
        resp.headers["WWW-Authenticate"] = 'Bearer realm="starroute admin"'
        return resp
    return None


def _orphaned(service: Any) -> Response | None:
    """503 when this worker's supervisor has gone (it cannot make the other workers reload: nothing is written);
    None otherwise."""
    master = service.master_pid
    if service.settings.workers > 1 and (master is None or os.getppid() != master):
        why = f"the server's supervisor (pid {master}) is gone and this worker is stopping: nothing was changed"
        return error_response("Unavailable", why)
    return None


def _reload_everywhere(service: Any) -> str:
    """This worker reloads now; with several workers the supervisor makes every one of them reload: SIGHUP to the
    recorded supervisor, only while it is still this process's parent (`ProcessLookupError` once it has gone: an
    orphan's parent is init, or a subreaper, which must get no signal from here)."""
    if service.settings.workers > 1:
        master = service.master_pid
        if master is None or os.getppid() != master:
            raise ProcessLookupError(f"the server's supervisor (pid {master}) is gone: restart the server")
        os.kill(master, signal.SIGHUP)
        return "every worker reloads (SIGHUP to the supervisor)"
    service.reload()
    return "applied"


_JSON_FILES = {
    "segment_speeds": "segment_files",
    "turn_penalties": "turn_files",
    "segment_profiles": "segment_profiles",
}


def _metric_files(body: bytes) -> dict[str, Any]:
    """A JSON body's files as `customize`'s arguments: each key's text (or a list of texts, later ones winning) named
    `<key>[i]` in messages; `ValueError` saying what is wrong with the body."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"the body is not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ValueError("the body must be a JSON object")
    known = {*_JSON_FILES, "time_profiles", "timezone"}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}; the keys are {', '.join(sorted(known))}")
    files: dict[str, Any] = {"segment_files": [], "turn_files": []}
    for key, arg in _JSON_FILES.items():
        texts = doc.get(key, [])
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"{key} must be a file's text or a list of them")
        files[arg] = [(f"{key}[{i}]" if len(texts) > 1 else key, t.encode()) for i, t in enumerate(texts)]
    if "time_profiles" in doc:
        if not isinstance(doc["time_profiles"], str):
            raise ValueError("time_profiles must be the file's text")
        files["time_profiles"] = ("time_profiles", doc["time_profiles"].encode())
    if "timezone" in doc:
        if not isinstance(doc["timezone"], str):
            raise ValueError("timezone must be an IANA time zone name")
        files["timezone"] = doc["timezone"]
    return files


@router.post(
    ADMIN_PATH,
    summary="Apply traffic files (CSV, or a whole metric as JSON) as the new metric (admin)",
    responses={
        400: {"description": "a malformed file (the line and the reason): nothing changed"},
        413: {"description": "a body over STARROUTE_ADMIN_MAX_BODY_BYTES"},
        503: {
            "description": "the graph directory cannot take the metric (read-only, ...), or the server's supervisor "
            "is gone"
        },
        **ADMIN_RESPONSES,
    },
)
async def post_metric(
    request: Request,
    kind: Literal["segment-speeds", "turn-penalties"] = Query(
        "segment-speeds",
        description="`segment-speeds`: from_osm_node_id,to_osm_node_id,speed_kmh[,rate] lines; `turn-penalties`: "
        "from_osm_node_id,via_osm_node_id,to_osm_node_id,penalty_s[,weight] lines (a `text/csv` body; a JSON "
        "body names its files itself)",
    ),
) -> Response:
    """The body (an OSRM CSV, or a JSON object of files with time profiles) becomes the graph's metric on top of its
    preprocessed one, written into the graph directory and applied by every worker; answers the counts (`starroute
    customize`'s report)."""
    refused = _refused(request)
    if refused is not None:
        return refused
    service = request.app.state.service
    orphaned = _orphaned(service)
    if orphaned is not None:
        return orphaned
    body = await request.body()
    t0 = time.perf_counter()
    from floor.format.arrays import FormatError
    from preprocessing.customize import customize
    from preprocessing.osm.speeds import MetricFileError

    if request.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json":
        try:
            files = _metric_files(body)
        except ValueError as exc:
            return error_response("InvalidValue", f"{exc}; the metric was not changed")
        kind = "json"  # type: ignore[assignment]  # said in the log line
    else:
        source = [("request body", body)]
        seg, turn = (source, []) if kind == "segment-speeds" else ([], source)
        files = {"segment_files": seg, "turn_files": turn}

    def run() -> Any:
        with _LOCK:  # the search stages here and now: this process is warm, and the supervisor then has none to do
            return customize(service.settings.graph_dir, stages=True, **files)

    try:
        done = await asyncio.to_thread(run)
    except MetricFileError as exc:
        return error_response("InvalidValue", f"{exc}; the metric was not changed")
    except (FormatError, OSError) as exc:
        return error_response("Unavailable", f"cannot write the metric into the graph directory: {exc}")
    try:
        applied = await asyncio.to_thread(_reload_everywhere, service)
    except Exception as exc:  # noqa: BLE001 - the old metric serves on; say why
        log.error(
            "admin: metric %s written into %s but not applied: %s", done.metric_id, service.settings.graph_dir, exc
        )
        return error_response("Unavailable", f"the metric was written but could not be applied: {exc}")
    r = done.report
    if files["segment_files"] or not files["turn_files"]:
        lines, changed = r.segment_lines, f"{r.arcs_changed} arcs"
    else:
        lines, changed = r.turn_lines, f"{r.turns_updated} turns"
    if done.time is not None:
        changed += f", {done.time.arcs_timed} arcs timed"
    log.info(
        "admin: metric %s (%s, %d lines, %s changed) written into %s in %.2f s; %s",
        done.metric_id,
        kind,
        lines,
        changed,
        service.settings.graph_dir,
        time.perf_counter() - t0,
        applied,
    )
    out = {
        "code": "Ok",
        "metric": done.metric_id,
        "applied": applied,
        "report": done.report.as_dict(),
        "hierarchy": done.hierarchy,
        "landmarks": done.landmarks,
        "timezone": done.timezone,
        "seconds": {k: round(v, 3) for k, v in done.seconds.items()},
    }
    return Response(orjson.dumps(out), media_type=JSON_TYPE)


@router.delete(
    ADMIN_PATH,
    summary="Serve the preprocessed metric again (admin)",
    responses={503: {"description": "the graph directory cannot be changed"}, **ADMIN_RESPONSES},
)
async def delete_metric(request: Request) -> Response:
    """Drop the current metric (the graph's preprocessed weights serve again) and reload every worker."""
    refused = _refused(request)
    if refused is not None:
        return refused
    service = request.app.state.service
    orphaned = _orphaned(service)
    if orphaned is not None:
        return orphaned
    from floor.format.arrays import FormatError
    from preprocessing.customize import reset

    t0 = time.perf_counter()
    try:
        was = await asyncio.to_thread(reset, service.settings.graph_dir)
        applied = await asyncio.to_thread(_reload_everywhere, service) if was else "nothing to change"
    except (FormatError, OSError) as exc:
        return error_response("Unavailable", f"cannot reset the metric: {exc}")
    seconds = time.perf_counter() - t0
    log.info(
        "admin: metric of %s reset to the preprocessed one in %.2f s; %s", service.settings.graph_dir, seconds, applied
    )
    return Response(orjson.dumps({"code": "Ok", "reset": was, "applied": applied}), media_type=JSON_TYPE)

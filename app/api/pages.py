"""What a browser gets: `GET /` (a start page about the loaded graph with example requests), and the API docs
(`/docs` Swagger UI, `/redoc`) with their assets served by the app itself, so they work without internet.

When the package ships a map page (`app/static/map/index.html`), `GET /` serves that instead.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from starlette.responses import FileResponse, HTMLResponse, Response

STATIC = Path(__file__).resolve().parent.parent / "static"
MAP_PAGE = STATIC / "map" / "index.html"
_VENDOR = "/static/vendor"

router = APIRouter(include_in_schema=False)


def start_page(service: Any) -> str:
    """The start page: the graph, the endpoints, example requests that work on this graph."""
    engine = service.engine
    mf = engine.meta.raw if engine is not None else {}
    counts = mf.get("counts", {})
    pts = engine.sample_points() if engine is not None else None
    examples = ""
    if pts is not None:
        (x1, y1), (x2, y2) = pts
        native = f"/route?from={x1},{y1}&to={x2},{y2}"
        osrm = f"/route/v1/driving/{x1},{y1};{x2},{y2}?overview=full&steps=true"
        table = f"/table/v1/driving/{x1},{y1};{x2},{y2}"
        examples = "".join(
            f'<li><a href="{html.escape(u)}"><code>{html.escape(u)}</code></a> — {html.escape(what)}</li>'
            for u, what in (
                (native, "a route as a GeoJSON Feature"),
                (osrm, "the same route, OSRM v5 JSON with turn-by-turn steps"),
                (table, "an OSRM duration table"),
                (f"/nearest?point={x1},{y1}&number=3", "the nearest roads to a point"),
            )
        )
        if MAP_PAGE.is_file():
            on_map = f"/#loc={x1},{y1};{x2},{y2}"
            examples += f'<li><a href="{html.escape(on_map)}">the same route on the map</a></li>'
    back = '<p><a href="/" id="to-map">← the map</a></p>' if MAP_PAGE.is_file() else ""
    source = html.escape(str(mf.get("source", {}).get("name", "?")))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>starroute</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font:15px/1.5 system-ui,sans-serif;max-width:52em;margin:2em auto;padding:0 1em;color:#222}}
code{{background:#f3f3f3;padding:0 .2em}}a{{color:#0b5cad}}td{{padding:0 1em 0 0}}</style></head>
<body>{back}<h1>starroute</h1>
<p>Road routing on OpenStreetMap data with contraction hierarchies, ALT and A*. This server has the
<b>{html.escape(str(mf.get("profile", "?")))}</b> graph of <b>{source}</b> loaded:
{counts.get("nodes", 0):,} nodes, {counts.get("arcs", 0):,} arcs; algorithms
{html.escape(", ".join(engine.algorithms) if engine is not None else "")}.</p>
<h2>Try it</h2><ul>{examples}</ul>
<h2>API</h2><table>
<tr><td><a href="/docs">/docs</a></td><td>interactive API documentation (Swagger UI)</td></tr>
<tr><td><a href="/redoc">/redoc</a></td><td>the same, as reference pages (ReDoc)</td></tr>
<tr><td><a href="/openapi.json">/openapi.json</a></td><td>the OpenAPI schema</td></tr>
<tr><td><a href="/health">/health</a></td><td>liveness and graph metadata</td></tr>
<tr><td><a href="/metrics">/metrics</a></td><td>Prometheus metrics</td></tr></table>
<p>Map data © OpenStreetMap contributors, ODbL 1.0.</p></body></html>
"""


@router.get("/")
async def index(request: Request) -> Response:
    """The map page when it is shipped, else the start page."""
    if MAP_PAGE.is_file():
        return FileResponse(MAP_PAGE, media_type="text/html")
    return HTMLResponse(start_page(request.app.state.service))


@router.get("/start")
async def start(request: Request) -> HTMLResponse:
    """The start page: the loaded graph and example requests that work on it, linked from the map."""
    return HTMLResponse(start_page(request.app.state.service))


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title=f"{request.app.title} — API",
        swagger_js_url=f"{_VENDOR}/swagger-ui/swagger-ui-bundle.js",
        swagger_css_url=f"{_VENDOR}/swagger-ui/swagger-ui.css",
        swagger_favicon_url=f"{_VENDOR}/swagger-ui/favicon-32x32.png",
        oauth2_redirect_url="/docs/oauth2-redirect",
    )


@router.get("/docs/oauth2-redirect")
async def swagger_ui_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


# ReDoc's footer loads its maker's logo from cdn.redoc.ly (the page's one request off this server, a console error
# without internet). The page turns that one URL into an empty image before the bundle runs, whichever way React sets
# an image's `src` (the footer keeps its "API docs by Redocly" text).
_REDOC_OFFLINE = """<script>(function () {
  var blank = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E';
  var local = function (v) { return /^https?:\\/\\/cdn\\.redoc\\.ly\\//.test(String(v)) ? blank : v; };
  var set = Element.prototype.setAttribute, src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, 'src');
  Element.prototype.setAttribute = function (name, value) {
    return set.call(this, name, name === 'src' ? local(value) : value);
  };
  Object.defineProperty(HTMLImageElement.prototype, 'src', { configurable: true, enumerable: src.enumerable,
    get: src.get, set: function (v) { src.set.call(this, local(v)); } });
})();</script>
"""


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    page = get_redoc_html(
        openapi_url="/openapi.json",
        title=f"{request.app.title} — API",
        redoc_js_url=f"{_VENDOR}/redoc/redoc.standalone.js",
        redoc_favicon_url=f"{_VENDOR}/swagger-ui/favicon-32x32.png",
        with_google_fonts=False,
    )
    body = bytes(page.body).decode("utf-8")
    return HTMLResponse(body.replace("<redoc ", _REDOC_OFFLINE + "<redoc ", 1))


@router.get("/favicon.ico")
async def favicon() -> FileResponse:
    return FileResponse(STATIC / "vendor" / "swagger-ui" / "favicon-32x32.png", media_type="image/png")

"""The server's request limits in its OpenAPI schema, from the very numbers its refusals compare with.

A query parameter or body property that a limit bounds names it in its schema: `json_schema_extra=limit(NAME)`
with NAME a field of `app.engine.facade.Limits` (an OSRM option: `Option(limit=NAME)` on its field in
`app.api.osrm.grammar`).
One pass over the finished schema (`add_limits(spec, limits)`, called by `app.main` with the `Limits` built from
this server's settings) replaces the name by the value: `maximum` for a number, and a sentence in the description.
The engine refuses above the same value (`TooBig`), so the documentation cannot state another bound than the one
enforced.
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import JsonDict

from app.engine.facade import Limits

LIMIT = "x-starroute-limit"  # the marker in a schema; gone from the finished one


def limit(name: str) -> JsonDict:
    """`json_schema_extra` of a parameter or field bounded by the `Limits` field `name`."""
    assert name in Limits.__dataclass_fields__, f"{name} is no field of app.engine.facade.Limits"
    return {LIMIT: name}


def _with(text: str | None, sentence: str) -> str:
    return f"{text.rstrip('.')}. {sentence}" if text else sentence


def _state(holder: dict[str, Any], schema: dict[str, Any], limits: Limits) -> None:
    """Replace `schema`'s marker by its limit's value; `holder` carries the description (a parameter, or the
    property's own schema; FastAPI copies a parameter's into its schema too: both say it)."""
    name = schema.pop(LIMIT)
    value = getattr(limits, name)
    if schema.get("type") in ("integer", "number"):
        schema["maximum"] = value
    sentence = f"At most {value} on this server (`STARROUTE_{name.upper()}`)."
    holder["description"] = _with(holder.get("description"), sentence)
    if schema is not holder and "description" in schema:
        schema["description"] = _with(schema["description"], sentence)


def add_limits(spec: dict[str, Any], limits: Limits) -> None:
    """State every marked parameter's and property's limit in `spec`, in place."""
    for item in spec.get("paths", {}).values():
        for op in item.values():
            if not isinstance(op, dict):
                continue
            for param in op.get("parameters", []):
                schema = param.get("schema") or {}
                if LIMIT in schema:
                    _state(param, schema, limits)
    for component in spec.get("components", {}).get("schemas", {}).values():
        for prop in (component.get("properties") or {}).values():
            if isinstance(prop, dict) and LIMIT in prop:
                _state(prop, prop, limits)

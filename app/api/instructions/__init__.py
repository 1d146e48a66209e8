"""Spoken-language text instructions for route steps, from osrm-text-instructions' phrase data (`compile`)."""

from __future__ import annotations

from app.api.instructions.compile import LANGUAGES
from app.engine.errors import InvalidValue


def language_of(v: str) -> str:
    """A language of the text instructions, else `InvalidValue` listing them (the APIs answer it as a 400 in their
    error shapes: the value is well formed, the server has no phrases for it)."""
    if v not in LANGUAGES:
        raise InvalidValue(f"language {v!r} is not supported; supported: {', '.join(LANGUAGES)}")
    return v

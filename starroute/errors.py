"""The library's exceptions: the engine's own, so `except starroute.NoSegment` catches what the engine raises.

Every request error is a `RoutingError` whose `code` is OSRM's (`NoSegment`, `NoRoute`, `TooBig`, `InvalidValue`,
...) and whose message is the HTTP API's for the same request. A bad graph directory is `GraphError`, a bad extract
`PreprocessError`, a matrix with a block that failed every retry `MatrixError`: operator errors, not request errors.
"""

from __future__ import annotations

from app.engine.errors import EngineError as RoutingError
from app.engine.errors import (
    GraphError,
    InvalidQuery,
    InvalidValue,
    NoRoute,
    NoSegment,
    NoTable,
    NotImplementedOption,
    TooBig,
)
from preprocessing.errors import PreprocessError


class MatrixError(Exception):
    """A matrix could not be completed: `blocks` lists the (row, column) block origins that failed every retry and
    `errors` their last errors. Nothing was written (the partial output is removed)."""

    def __init__(self, message: str, blocks: list[tuple[int, int]] | None = None, errors: list[str] | None = None):
        super().__init__(message)
        self.blocks = blocks or []
        self.errors = errors or []


__all__ = [
    "GraphError",
    "InvalidQuery",
    "InvalidValue",
    "MatrixError",
    "NoRoute",
    "NoSegment",
    "NoTable",
    "NotImplementedOption",
    "PreprocessError",
    "RoutingError",
    "TooBig",
]

"""Typed engine errors carrying OSRM's stable error codes; the API maps them to HTTP statuses."""

from __future__ import annotations


class EngineError(Exception):
    """Bad input or an impossible request; `code` is one of OSRM's error codes."""

    code = "InvalidValue"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        """Pickled with its code (an answer from a search process, `app.api.search_processes`)."""
        return type(self), (self.message, self.code)


class InvalidValue(EngineError):
    code = "InvalidValue"


class InvalidQuery(EngineError):
    code = "InvalidQuery"


class NoSegment(EngineError):
    code = "NoSegment"
    index: int | None = None  # which point of a request found no road (set by `Router.snap_waypoints`)


class NoRoute(EngineError):
    code = "NoRoute"


class NoTable(EngineError):
    code = "NoTable"


class NoTrips(EngineError):
    code = "NoTrips"


class TooBig(EngineError):
    code = "TooBig"


class NotImplementedOption(EngineError):
    code = "NotImplemented"


# Not the request's fault: the server cannot answer it now. Raised by the API's service (its request time limit, its
# queues), never by the engine; answered with HTTP 503 and Retry-After (`app.api.errors`), on the OSRM API too.
class Timeout(EngineError):
    """A search ran past the request time limit (time spent compiling kernels never counts)."""

    code = "Timeout"


class Overloaded(EngineError):
    """Too much is queued already (long searches, requests, connections): try again in a moment."""

    code = "Overloaded"


class GraphError(Exception):
    """The graph directory is missing, corrupt or of the wrong version (an operator error, not a request error)."""

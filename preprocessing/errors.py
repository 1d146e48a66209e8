"""The build's user-facing error, apart from the pipeline: the library (`starroute.errors`) re-exports it without
importing the stages and their kernels (half a second of a `starroute matrix` start)."""

from __future__ import annotations


class PreprocessError(Exception):
    """A user-facing failure of `starroute preprocess`; the message is one sentence."""

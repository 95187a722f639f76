"""Errors of the evaluation harness; the CLI prints them as one line like every RagError."""

from __future__ import annotations

from rag.errors import CorpusError, RagError


class EvalError(RagError):
    """An evaluation cannot run as configured."""


class DatasetError(CorpusError, EvalError):
    """An evaluation dataset cannot be read or holds a malformed record (names file and line)."""


class ThresholdError(EvalError):
    """A thresholds file cannot be read or names metrics the report does not have."""

"""Errors of the evaluation harness; the CLI prints them as one line like every RagError."""

from __future__ import annotations

from rag.errors import RagError


class EvalError(RagError):
    """An evaluation cannot run as configured."""


class DatasetError(EvalError):
    """An evaluation dataset cannot be read or holds a malformed record."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")


class ThresholdError(EvalError):
    """A thresholds file cannot be read or names metrics the report does not have."""

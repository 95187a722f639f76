"""Per-question results as JSON Lines, keyed by configuration + dataset + qid, so runs resume."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def row_key(config_fp: str, dataset_sha: str, qid: str) -> str:
    """The cache key of one question under one configuration and dataset version."""
    return f"{config_fp}:{dataset_sha[:12]}:{qid}"


class ResultCache:
    """An append-only JSONL file of finished questions; a torn last line is ignored."""

    def __init__(self, path: Path):
        self.path = path
        self.rows: dict[str, dict[str, Any]] = {}
        if path.exists():
            self._load()

    def _load(self) -> None:
        torn = 0
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    torn += 1  # a run killed mid-write; that question is simply redone
                    continue
                if isinstance(row, dict) and "key" in row:
                    self.rows[row["key"]] = row
        if torn:
            logger.warning("%s: ignored %d incomplete line(s)", self.path, torn)

    def get(self, key: str) -> dict[str, Any] | None:
        return self.rows.get(key)

    def put(self, row: dict[str, Any]) -> None:
        """Record a finished question on disk at once (flushed), then in memory."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(row, ensure_ascii=False, default=str)
        with self.path.open("a", encoding="utf-8") as fh:
            if fh.tell() > 0 and not self._ends_with_newline():
                fh.write("\n")  # after a torn line, start a fresh one
            fh.write(line + "\n")
            fh.flush()
        self.rows[row["key"]] = row

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as fh:
            fh.seek(-1, 2)
            return fh.read(1) == b"\n"

"""Evaluation datasets: JSON Lines of questions with gold papers, validated with file-and-line errors."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import DatasetError

logger = logging.getLogger(__name__)

BUILTIN_DIR = Path(__file__).resolve().parent / "data"
REPO_DIR = Path(__file__).resolve().parent.parent
# The shared data sits beside the repository (../shared), here and in CI.
SHARED_DIR = REPO_DIR.parent / "shared"


class EvalItem(BaseModel):
    """One question: its gold papers, and whether the corpus can answer it at all."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    qid: str = Field(min_length=1, description="Identifier, unique within its dataset.")
    query: str = Field(min_length=1, description="The question as a user would type it.")
    gold_ids: list[str] = Field(default_factory=list, description="Paper ids that answer it.")
    reference_answer: str | None = Field(None, description="A correct answer, for judges and people.")
    answerable: bool = Field(True, description="False: the abstracts cannot answer it.")
    expected: str | None = Field(
        None, description="Expected behaviour, e.g. 'refuse' or 'answer citing the gold paper'."
    )
    category: str | None = Field(None, description="Free label used to break results down.")

    @model_validator(mode="after")
    def _consistent(self) -> EvalItem:
        if not self.answerable and self.gold_ids:
            raise ValueError("an unanswerable question cannot have gold_ids")
        return self


@dataclass(frozen=True)
class Dataset:
    """A named list of questions read from one file, with the file's hash."""

    name: str
    path: Path
    items: tuple[EvalItem, ...]
    sha256: str

    @property
    def has_gold(self) -> bool:
        """True when some question has gold papers (retrieval metrics apply)."""
        return any(i.gold_ids for i in self.items)

    @property
    def n_unanswerable(self) -> int:
        return sum(not i.answerable for i in self.items)

    def answer_subset(self, n: int | None) -> Dataset:
        """The first n answerable questions and every unanswerable one (all when n is None)."""
        if n is None:
            return self
        answerable = [i.qid for i in self.items if i.answerable][:n]
        keep = set(answerable)
        items = tuple(i for i in self.items if not i.answerable or i.qid in keep)
        return Dataset(self.name, self.path, items, self.sha256)

    def limited(self, n: int | None) -> Dataset:
        """The first n questions (all when n is None)."""
        if n is None or n >= len(self.items):
            return self
        return Dataset(self.name, self.path, self.items[:n], self.sha256)


def jsonl_objects(path: Path, error: type[Exception] = DatasetError) -> list[tuple[int, dict]]:
    """(line number, object) of each non-blank line of a JSON Lines file; a line that is not a JSON
    object raises `error` naming the file and line."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise error(f"{path}:{n}: expected a JSON object")
        out.append((n, row))
    return out


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def builtin_datasets() -> dict[str, Path]:
    """Question sets shipped in evals/data, by name (the labelled support pairs are not one)."""
    return {p.stem: p for p in sorted(BUILTIN_DIR.glob("*.jsonl")) if p.stem != "support_labels"}


def resolve_dataset(spec: str) -> Path:
    """A dataset path from a file path or the name of a built-in or shared dev set."""
    path = Path(spec)
    if path.is_file():
        return path
    builtin = builtin_datasets()
    if spec in builtin:
        return builtin[spec]
    shared = SHARED_DIR / "evalsets" / f"{spec}.jsonl"
    if shared.is_file():
        return shared
    known = ", ".join(sorted(builtin)) or "none"
    raise DatasetError(f"no such dataset file or name (built-in: {known})", spec)


def load_dataset(spec: str | Path, name: str | None = None) -> Dataset:
    """Read and validate a whole dataset; raises DatasetError naming the file and line."""
    path = resolve_dataset(str(spec))
    items: list[EvalItem] = []
    seen: dict[str, int] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text ({exc.reason})", str(path)) from exc
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"invalid JSON ({exc.msg})", str(path), lineno) from exc
        try:
            item = EvalItem.model_validate(record)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(x) for x in first["loc"]) or "record"
            raise DatasetError(f"{field}: {first['msg']}", str(path), lineno) from exc
        if item.qid in seen:
            raise DatasetError(
                f"duplicate qid {item.qid!r} (first on line {seen[item.qid]})", str(path), lineno
            )
        seen[item.qid] = lineno
        items.append(item)
    if not items:
        raise DatasetError("the dataset holds no questions", str(path))
    return Dataset(name or path.stem, path, tuple(items), file_sha256(path))


def check_gold(dataset: Dataset, corpus_ids: Iterable[str]) -> None:
    """Fail when a gold paper is missing from the corpus (its metrics would be meaningless)."""
    ids = set(corpus_ids)
    missing = [(i.qid, g) for i in dataset.items for g in i.gold_ids if g not in ids]
    if missing:
        shown = ", ".join(f"{q}:{g}" for q, g in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise DatasetError(
            f"{len(missing)} gold paper(s) are not in the corpus ({shown}{more}); "
            "is this dataset meant for another corpus?",
            str(dataset.path),
        )

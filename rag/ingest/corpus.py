"""Load papers from JSON Lines, a JSON array or CSV, with file-and-line errors for bad records."""

from __future__ import annotations

import csv
import hashlib
import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote

from rag.errors import CorpusError
from rag.types import web_url

logger = logging.getLogger(__name__)

SEED_NAME = "seed_papers.jsonl"
OPENREVIEW_URL = "https://openreview.net/forum?id={id}"
# Longest JSONL line or CSV line read (a paper's record is a few KB; a longer line is a broken file,
# and reading it whole could exhaust memory). CSV cells keep csv's own limit (csv.field_size_limit).
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class Paper:
    """One paper as the pipeline sees it."""

    id: str
    title: str
    abstract: str
    authors: tuple[str, ...] = ()
    decision: str = ""
    url: str = ""

    @property
    def content_hash(self) -> str:
        """Hash of everything stored for the paper; a change means its chunks are replaced."""
        blob = json.dumps(
            [self.id, self.title, self.abstract, list(self.authors), self.decision, self.url],
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


@dataclass
class LoadReport:
    """What a load produced: the papers kept, and how many records were skipped and why."""

    papers: list[Paper] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


def seed_path() -> Path:
    """Path of the built-in 19-paper corpus shipped with the package."""
    return Path(str(resources.files("rag") / "data" / SEED_NAME))


def _text(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value.strip()


def _authors(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        # CSV cells: "A; B" or "A, B"
        sep = ";" if ";" in value else ","
        return tuple(a.strip() for a in value.split(sep) if a.strip())
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        return tuple(a.strip() for a in value if a.strip())
    raise TypeError("authors must be a list of names or a string")


def _stable_id(title: str) -> str:
    return "t-" + hashlib.sha1(title.casefold().encode("utf-8")).hexdigest()[:10]


def record_to_paper(record: Any, report: LoadReport) -> Paper | None:
    """Validate one record; None (counted in `report.skipped`) when it has no abstract."""
    if not isinstance(record, dict):
        raise TypeError(f"expected an object, got {type(record).__name__}")
    title = _text(record.get("title"))
    abstract = _text(record.get("abstract"))
    if not title:
        raise ValueError("record has no title")
    if not abstract:
        report.skipped["no abstract"] += 1
        return None
    pid = _text(record.get("id")) or _stable_id(title)
    given = _text(record.get("source_url") or record.get("url"))
    url = web_url(given)
    if given and not url:
        logger.warning("paper %r: link %r is not an http(s) URL; left out", title[:80], given[:80])
    if not url and record.get("id"):
        url = OPENREVIEW_URL.format(id=quote(pid, safe=""))
    return Paper(
        id=pid,
        title=title,
        abstract=abstract,
        authors=_authors(record.get("authors")),
        decision=_text(record.get("decision")),
        url=url,
    )


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, read in binary so a bad byte or an overlong line is
    reported with its line number."""
    with path.open("rb") as fh:
        lineno = 0
        while True:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            lineno += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise CorpusError(f"line longer than {MAX_LINE_BYTES} bytes", str(path), lineno)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CorpusError(
                    f"not UTF-8 text (byte {exc.start + 1} of the line: {exc.reason})", str(path), lineno
                ) from exc
            yield lineno, text.lstrip("\ufeff") if lineno == 1 else text


def _json(text: str, path: Path, lineno: int | None) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = exc.lineno if lineno is None else lineno
        raise CorpusError(f"invalid JSON ({exc.msg})", str(path), line) from exc
    except RecursionError as exc:  # json recurses once per nesting level
        raise CorpusError("invalid record (JSON nested too deeply)", str(path), lineno) from exc


def _iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    for lineno, line in _lines(path):
        if line.strip():
            yield lineno, _json(line, path, lineno)


def _iter_json_array(path: Path) -> Iterator[tuple[int | None, Any]]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise CorpusError(f"not UTF-8 text ({exc.reason})", str(path), line) from exc
    data = _json(text, path, None)
    if not isinstance(data, list):
        raise CorpusError("a JSON corpus must be an array of paper objects", str(path))
    # Line numbers of array items are not kept by json; report the item's position instead.
    for i, item in enumerate(data, start=1):
        yield i, item


def _iter_csv(path: Path) -> Iterator[tuple[int, Any]]:
    # csv reads the lines as they come (line endings kept, so quoted cells may span lines).
    reader = csv.DictReader(line for _, line in _lines(path))
    try:
        missing = {"title", "abstract"} - set(reader.fieldnames or [])
        if missing:
            raise CorpusError(f"CSV header lacks column(s): {', '.join(sorted(missing))}", str(path), 1)
        for row in reader:
            if None in row:
                raise CorpusError("row has more cells than the header", str(path), reader.line_num)
            yield reader.line_num, row
    except csv.Error as exc:  # a cell over csv.field_size_limit(), a NUL byte, a broken quote
        raise CorpusError(f"invalid CSV ({exc})", str(path), reader.reader.line_num or None) from exc


def _detect(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in {".jsonl", ".ndjson"}:
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    if suffix == ".json":
        with path.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
        return "json" if head.startswith("[") else "jsonl"
    raise CorpusError("unknown corpus format (use .jsonl, .json or .csv)", str(path))


def load_papers(path: str | Path) -> LoadReport:
    """Read and validate a whole corpus file; raises CorpusError naming file and line."""
    path = Path(path)
    if path.is_dir():
        raise CorpusError("is a directory, not a corpus file", str(path))
    if not path.exists():
        raise CorpusError("file not found", str(path))
    if not path.is_file():
        raise CorpusError("not a regular file", str(path))
    try:
        return _load(path)
    except OSError as exc:  # unreadable (permissions, I/O error)
        raise CorpusError(f"cannot read the file ({exc.strerror or type(exc).__name__})", str(path)) from exc
    except MemoryError as exc:
        raise CorpusError("too large to read", str(path)) from exc


def _load(path: Path) -> LoadReport:
    kind = _detect(path)
    records = {"jsonl": _iter_jsonl, "json": _iter_json_array, "csv": _iter_csv}[kind](path)
    report = LoadReport()
    seen: set[str] = set()
    unit = "item" if kind == "json" else "line"
    try:
        for where, record in records:
            try:
                paper = record_to_paper(record, report)
            except (TypeError, ValueError) as exc:
                if kind == "json":
                    raise CorpusError(f"{unit} {where}: {exc}", str(path)) from exc
                raise CorpusError(str(exc), str(path), where) from exc
            if paper is None:
                continue
            if paper.id in seen:
                report.skipped["duplicate id"] += 1
                continue
            seen.add(paper.id)
            report.papers.append(paper)
    except UnicodeDecodeError as exc:
        raise CorpusError(f"not UTF-8 text ({exc.reason})", str(path)) from exc
    logger.info(
        "loaded %d papers from %s (skipped %s)",
        len(report.papers),
        path,
        dict(report.skipped) or "none",
    )
    return report


def load_many(paths: list[str | Path]) -> LoadReport:
    """Load several files into one report; a repeated id across files is kept once."""
    total = LoadReport()
    seen: set[str] = set()
    for p in paths:
        rep = load_papers(p)
        total.skipped.update(rep.skipped)
        for paper in rep.papers:
            if paper.id in seen:
                total.skipped["duplicate id"] += 1
                continue
            seen.add(paper.id)
            total.papers.append(paper)
    return total

"""A venue's accepted papers from OpenReview, as a corpus file `rag ingest` reads.

Through the official client (`openreview-py`, the `[fetch]` extra): API v2 notes whose
`content.venueid` is the venue id (OpenReview gives accepted papers the venue's own id; rejected and
withdrawn ones another), in id order, a page at a time. Each page is appended to `<out>.partial`
and the position is recorded in `<out>.partial.json`, so an interrupted fetch (network, rate limit,
Ctrl-C) resumes where it stopped when the same command runs again; the finished file replaces `<out>`
in one rename. Papers without an abstract are counted and skipped (nothing to search). Rate limits
(HTTP 429, `Retry-After`) and server errors are retried by the client itself.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.errors import ConfigError, RagError
from rag.ingest.corpus import OPENREVIEW_URL
from rag.settings import DECISIONS, FetchSettings

logger = logging.getLogger(__name__)


class FetchError(RagError):
    """The venue's papers could not be read (network, API error); what was fetched is kept."""


@dataclass
class FetchReport:
    venue: str
    out: Path
    written: int  # papers in the finished file
    skipped_no_abstract: int
    resumed: int  # papers that were already in the partial file of an earlier run
    requests: int


def _value(content: dict[str, Any], key: str) -> Any:
    field = content.get(key)
    return field.get("value") if isinstance(field, dict) else field


def decision_of(venue_text: str) -> str:
    """"ICLR 2025 Oral" → "Oral"; a venue text without a known decision word stays as it is."""
    words: list[str] = re.findall(r"[A-Za-z]+", venue_text or "")
    for word in reversed(words):
        if word.capitalize() in DECISIONS:
            return word.capitalize()
    return (venue_text or "").strip()


def paper_record(note: Any) -> dict[str, Any] | None:
    """A corpus record of an OpenReview note (None without a title or an abstract)."""
    content = note.content or {}
    title = " ".join(str(_value(content, "title") or "").split())
    abstract = " ".join(str(_value(content, "abstract") or "").split())
    if not title or not abstract:
        return None
    authors = _value(content, "authors") or []
    return {
        "id": note.id,
        "title": title,
        "abstract": abstract,
        "authors": [str(a) for a in authors] if isinstance(authors, list) else [],
        "decision": decision_of(str(_value(content, "venue") or "")),
        "url": OPENREVIEW_URL.format(id=note.id),
    }


def _client(cfg: FetchSettings) -> Any:
    try:
        import openreview
    except ImportError as exc:
        raise ConfigError("`rag fetch` needs the OpenReview client: pip install 'iclr-rag[fetch]'") from exc
    try:
        return openreview.api.OpenReviewClient(baseurl=cfg.base_url.rstrip("/"))
    except Exception as exc:  # a login with OPENREVIEW_USERNAME / _PASSWORD failed
        raise FetchError(f"cannot open the OpenReview API at {cfg.base_url}: {exc}") from exc


class _Partial:
    """`<out>.partial` (JSONL, appended a page at a time) and `<out>.partial.json` (venue, cursor, counts)."""

    def __init__(self, out: Path, venue: str):
        self.data = out.with_name(out.name + ".partial")
        self.state_path = out.with_name(out.name + ".partial.json")
        self.venue = venue
        self.after: str | None = None
        self.skipped = 0
        self.ids: set[str] = set()
        if self.state_path.exists():
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            if state.get("venue") != venue:
                raise FetchError(
                    f"{self.data} holds a partial fetch of {state.get('venue')!r}, not {venue!r}: "
                    "remove it or write to another file"
                )
            self.after, self.skipped = state.get("after"), int(state.get("skipped", 0))
        if self.data.exists():
            for line in self.data.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    self.ids.add(json.loads(line)["id"])
        elif self.after is not None:  # the state without its data: start again
            self.after, self.skipped = None, 0

    def add_page(self, records: list[dict[str, Any]], skipped: int, after: str) -> int:
        new = [r for r in records if r["id"] not in self.ids]
        with self.data.open("a", encoding="utf-8") as f:
            for r in new:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.ids.update(r["id"] for r in new)
        self.after, self.skipped = after, self.skipped + skipped
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        tmp.write_text(json.dumps({"venue": self.venue, "after": after, "skipped": self.skipped}), encoding="utf-8")
        os.replace(tmp, self.state_path)
        return len(new)

    def finish(self, out: Path) -> None:
        self.data.touch()
        os.replace(self.data, out)
        self.state_path.unlink(missing_ok=True)


def fetch_venue(venue: str, out: Path, cfg: FetchSettings | None = None, progress: bool = True) -> FetchReport:
    """Write the accepted papers of OpenReview venue `venue` (e.g. "ICLR.cc/2025/Conference") to the
    JSONL corpus file `out`, resuming an interrupted earlier run into the same file."""
    cfg = cfg or FetchSettings()
    venue = venue.strip()
    if not re.fullmatch(r"[\w.\-]+(/[\w.\-]+)+", venue):
        raise ConfigError(f"not an OpenReview venue id: {venue!r} (e.g. ICLR.cc/2025/Conference)")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = _Partial(out, venue)
    resumed = len(partial.ids)
    if resumed:
        logger.info("resuming the fetch of %s: %d papers already in %s", venue, resumed, partial.data)
    client = _client(cfg)
    requests = 0
    bar = None
    try:
        for notes, total in _pages(client, venue, cfg.page_size, partial.after):
            requests += 1
            if bar is None and progress:
                from tqdm.auto import tqdm

                bar = tqdm(total=total, initial=resumed + partial.skipped, desc="fetch", unit="paper")
            records = [r for r in map(paper_record, notes) if r is not None]
            partial.add_page(records, len(notes) - len(records), notes[-1].id)
            if bar is not None:
                bar.update(len(notes))
            logger.debug("fetched %d notes (%d papers so far)", len(notes), len(partial.ids))
    except RagError:
        raise
    except Exception as exc:
        raise FetchError(
            f"reading {venue} from {cfg.base_url} failed after {len(partial.ids)} papers ({exc}); they are "
            f"kept in {partial.data}: run the same command again to resume"
        ) from exc
    finally:
        if bar is not None:
            bar.close()
    if not partial.ids:
        raise FetchError(f"{cfg.base_url} has no accepted papers with an abstract for venue {venue!r}")
    written, skipped = len(partial.ids), partial.skipped
    partial.finish(out)
    logger.info("wrote %d papers of %s to %s (%d without an abstract skipped)", written, venue, out, skipped)
    return FetchReport(venue, out, written, skipped, resumed, requests)


def _pages(client: Any, venue: str, size: int, after: str | None) -> Iterator[tuple[list[Any], int | None]]:
    """(notes, total) pages of the venue's notes in id order, after the note id `after`."""
    total: int | None = None
    while True:
        params: dict[str, Any] = {"content": {"venueid": venue}, "sort": "id", "limit": size}
        if after is not None:
            params["after"] = after
        if total is None:
            notes, total = client.get_notes(with_count=True, **params)
        else:
            notes = client.get_notes(**params)
        if not notes:
            return
        yield notes, total
        if len(notes) < size:
            return
        after = notes[-1].id

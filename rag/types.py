"""Typed results shared by the library, the CLI, the HTTP API and the Python client."""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

from rag.text.followup import FollowUp
from rag.text.query import QueryIntent
from rag.text.reading import Reading

_NOT_IN_URL = re.compile(r"[\s\x00-\x1f\x7f-\x9f<>\"'`\\]")


def web_url(url: str) -> str:
    """`url` when it is an http(s) link with a host, else "": a corpus may hold `javascript:` or
    `data:` links, and every link the library shows (reference lists, citations, sources, the UI)
    must be safe to click."""
    url = (url or "").strip()
    if not url or _NOT_IN_URL.search(url):
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return ""
    return url if parts.scheme.lower() in ("http", "https") and host else ""


class PaperRef(BaseModel):
    """What names a paper in an answer: its number there, id, title, link, decision and authors."""

    number: int = Field(description="The n of [n] markers that refer to this paper.")
    paper_id: str
    title: str
    url: str = Field("", description="Link to the paper: http(s) only (any other link is left out).")
    decision: str = ""
    authors: list[str] = Field(default_factory=list)

    @field_validator("url")
    @classmethod
    def _web_url(cls, url: str) -> str:
        return web_url(url)

    def ref(self) -> dict[str, Any]:
        """These fields of this paper, to build another PaperRef of it (a Citation of a Source)."""
        return {name: getattr(self, name) for name in PaperRef.model_fields}


class Source(PaperRef):
    """A retrieved paper, numbered as the LLM saw it."""

    text: str = Field(description="The abstract text (matching chunks) handed to the LLM.")
    score: float = Field(description="Retrieval score used for ranking (RRF or similarity).")
    dense_score: float | None = Field(None, description="Cosine similarity of the best chunk.")


class Citation(PaperRef):
    """A source the answer cites, with the passage that supports it."""

    supporting_text: str = Field(description="The abstract sentence that best supports the answer.")
    score: float = Field(description="Retrieval score of the cited paper.")
    support: float = Field(
        description="Share of the citing sentence's content words found in the supporting passage "
        "(1.0 for a verbatim quote); every shown citation passed the support checker."
    )
    kind: Literal["evidence", "generated", "attributed", "metadata"] = Field(
        description="evidence: the sentence is quoted from the abstract; generated: the LLM wrote the "
        "marker and the checker passed it; attributed: the checker found the source of an uncited sentence; "
        "metadata: the answer states the paper's stored authors, decision, link or title."
    )


class AnswerItem(BaseModel):
    """One paper of a list answer: its number, title and the abstract sentences that answer."""

    number: int
    paper_id: str
    title: str
    sentences: list[str]
    missing: list[str] = Field(
        default_factory=list, description="For a related paper: the constraints of the question it does not state."
    )

    def markdown(self, bullet: bool = True) -> str:
        title = self.title.replace("**", "")
        # what its abstract does not state, in the question's words: the paper may still do it in others
        lacks = f" (not stated: {'; '.join(self.missing)})" if self.missing else ""
        return f"{'- ' if bullet else ''}**{title}** [{self.number}]{lacks}: {' '.join(self.sentences)}"


class ComparisonRow(BaseModel):
    """One paper of a comparison table: each cell is a sentence of its abstract, word for word, or
    empty where the abstract says none of it (never written by a model)."""

    number: int
    paper_id: str
    title: str
    url: str = ""
    problem: str = ""
    method: str = ""
    data: str = Field("", description="The data or benchmark the paper uses or builds.")
    result: str = ""


class Timings(BaseModel):
    retrieval_ms: float = 0.0
    first_token_ms: float | None = None
    total_ms: float = 0.0
    queue_ms: float = Field(0.0, description="Time spent waiting in line for a generation slot.")
    cache: Literal["hit", "miss", "off"] = Field(
        "off", description="hit: served from the answer cache (RAG_ANSWER__CACHE_SIZE); miss: computed "
        "and stored; off: the cache was not used."
    )


class Answer(BaseModel):
    """An answer with validated citations."""

    question: str
    text: str = Field(description="Answer text; every [n] in it names a citation below.")
    citations: list[Citation] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list, description="All papers given to the LLM.")
    refused: bool = Field(False, description="True when the answer is the fixed refusal sentence.")
    llm_called: bool = True
    grounded: bool = Field(
        True, description="False when a non-refusal answer was left without any valid citation."
    )
    removed_markers: list[int] = Field(
        default_factory=list, description="[n] markers the LLM wrote that matched no source."
    )
    unsupported_sentences: list[str] = Field(
        default_factory=list,
        description="LLM sentences that no source states (removed from the text, listed here).",
    )
    mode: Literal["evidence", "generative", "refusal", "metadata"] = Field(
        "generative", description="How the answer was made: quoted evidence, checked LLM text, refusal, or "
        "a paper's stored metadata (a follow-up about shown papers)."
    )
    items: list[AnswerItem] = Field(
        default_factory=list, description="The papers of a list answer, in the order shown."
    )
    comparison: list[ComparisonRow] = Field(
        default_factory=list, description="A comparison's table (\"compare A and B\", `RAG.compare`): one row "
        "per paper, problem / method / data / result (empty for other answers)."
    )
    refusal_reason: str = Field("", description="Why the question was refused, in plain words (empty when answered).")
    reading: Reading | None = Field(
        None, description="What the question asks for, its topic and the constraints every listed paper meets."
    )
    matching_ids: list[str] = Field(
        default_factory=list,
        description="Every retrieved paper that meets the question, best first; `items` shows the first of them.",
    )
    related: list[AnswerItem] = Field(
        default_factory=list,
        description="Papers on the topic that miss a constraint of the question (each names what it misses).",
    )
    searched: bool = Field(
        False,
        description="The list is the papers the search ranks closest to the question (no reading of it admitted "
        "them), not papers that meet it.",
    )
    closest: list[AnswerItem] = Field(
        default_factory=list,
        description="For a list question: papers the search ranks first in which the reading does not find the "
        "whole question; shown beside the list, never counted in it.",
    )
    removed_unsupported: int = Field(
        0, description="LLM sentences removed because the cited abstract does not state them."
    )
    standalone_question: str | None = Field(None, description="Condensed question in a chat.")
    followup: FollowUp | None = Field(
        None, description="In a chat: the shown papers this follow-up refers to and what it asks of them "
        "(None: a new question)."
    )
    retriever: str = ""
    intent: QueryIntent | None = Field(
        None, description="How the question was read: authors, decision filter, named paper, similar-to, list."
    )
    llm: str = ""
    raw_text: str = Field("", description="The LLM's text before citation validation.")
    completion_tokens: int | None = None
    timings: Timings = Field(default_factory=Timings)

    def references_markdown(self) -> str:
        """The cited papers as a Markdown reference list."""
        lines = []
        for c in self.citations:
            tag = " (attributed)" if c.kind == "attributed" else ""
            lines.append(f"[{c.number}] {c.title}{tag} — {c.url}".rstrip(" —"))
        return "\n".join(lines)

    def removal_note(self) -> str:
        """A line saying how many unsupported sentences were removed (empty when none)."""
        n = self.removed_unsupported
        if not n:
            return ""
        return f"({n} sentence{'s' if n > 1 else ''} the cited abstracts do not state {'were' if n > 1 else 'was'} removed.)"

    def tail_markdown(self) -> str:
        """What follows the answer text: the removal note and the reference list (may be empty).
        `rag.chat.conversation.reference_line` reads such a list back from a conversation's history."""
        refs = self.references_markdown()
        note = self.removal_note()
        tail = f"\n\n_{note}_" if note else ""
        return tail + (f"\n\n**References**\n\n{refs}" if refs else "")

    def to_markdown(self) -> str:
        """The answer text with its removal note and reference list."""
        return self.text + self.tail_markdown()

    def cited_papers(self) -> list[Citation]:
        """One citation per paper the answer cites, in the order of their [n] numbers."""
        seen: dict[str, Citation] = {}
        for c in sorted(self.citations, key=lambda c: c.number):
            seen.setdefault(c.paper_id, c)
        return list(seen.values())

    def paper_ids(self, matching: bool = False) -> list[str]:
        """The cited papers' ids in [n] order; with `matching`, every paper the answer counts as
        meeting a list question (`matching_ids`) when it has them."""
        if matching and self.matching_ids:
            return list(self.matching_ids)
        return [c.paper_id for c in self.cited_papers()]

    def export(self, fmt: str = "bibtex") -> str:
        """The cited papers as BibTeX, CSV, Markdown or JSON (rag.export)."""
        from rag.export import export

        return export(self.cited_papers(), fmt)

    def to_bibtex(self) -> str:
        """The cited papers as BibTeX entries (`@inproceedings`, ICLR 2025)."""
        return self.export("bibtex")

    def comparison_table(self, fmt: str = "csv") -> str:
        """The comparison's table as CSV, Markdown or JSON (rag.export.comparison_table);
        InvalidRequestError when this answer is not a comparison."""
        from rag.errors import InvalidRequestError
        from rag.export import comparison_table

        if not self.comparison:
            raise InvalidRequestError("this answer is not a comparison: ask to compare two or more papers")
        return comparison_table(self.comparison, fmt)

"""Typed results shared by the library, the CLI, the HTTP API and the Python client."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Source(BaseModel):
    """A retrieved paper, numbered as the LLM saw it."""

    number: int = Field(description="The n of [n] markers that refer to this paper.")
    paper_id: str
    title: str
    url: str = ""
    decision: str = ""
    authors: list[str] = Field(default_factory=list)
    text: str = Field(description="The abstract text (matching chunks) handed to the LLM.")
    score: float = Field(description="Retrieval score used for ranking (RRF or similarity).")
    dense_score: float | None = Field(None, description="Cosine similarity of the best chunk.")


class Citation(BaseModel):
    """A source the answer cites, with the passage that supports it."""

    number: int
    paper_id: str
    title: str
    url: str = ""
    decision: str = ""
    authors: list[str] = Field(default_factory=list)
    supporting_text: str = Field(description="The abstract sentence that best supports the answer.")
    score: float = Field(description="Retrieval score of the cited paper.")
    support: float = Field(description="Cosine similarity between citing sentences and the passage.")
    kind: Literal["generated", "attributed"] = Field(
        description="generated: the LLM wrote the marker; attributed: added post hoc."
    )


class Timings(BaseModel):
    retrieval_ms: float = 0.0
    first_token_ms: float | None = None
    total_ms: float = 0.0


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
        default_factory=list, description="Sentences no source supports well enough to cite."
    )
    standalone_question: str | None = Field(None, description="Condensed question in a chat.")
    retriever: str = ""
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

    def to_markdown(self) -> str:
        refs = self.references_markdown()
        return self.text + (f"\n\n**References**\n\n{refs}" if refs else "")

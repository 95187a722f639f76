"""A paper → the texts that are embedded: its title alone, and title + sentence windows over the abstract.

all-MiniLM-L6-v2 reads at most 256 word pieces, while most title + abstract texts are longer: one
vector per paper never sees the end of the abstract. Short overlapping windows (title + a few
sentences) cover the whole abstract, and a title-only vector lets a terse topic heading match the
paper's own summary of itself. Each window's stored document is only the sentences it adds, so the
documents of a paper's windows, in order, are its abstract exactly once.

Measured on the dev sets (docs/measured.md, "Retrieval"): paper score = mean of its two best chunk cosines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rag.text.citations import abstract_sentences

TokenCounter = Callable[[list[str]], list[int]]  # word pieces of each text, one tokenizer call


@dataclass(frozen=True)
class Chunk:
    """One embedded text of a paper: `embed_text` is embedded, `document` is what the store keeps."""

    kind: str  # "title" or "window"
    embed_text: str
    document: str
    span: tuple[int, int] = (0, 0)  # a window's abstract sentences [start, end) (abstract_sentences)


def scheme(window: int, stride: int, max_tokens: int, vectors: str = "embedded") -> str:
    """A short name of the chunking; stored with every chunk, so a changed scheme re-embeds papers."""
    # e: the last window is aligned to the end; l: window vectors pooled from passes over the whole
    # paper (late chunking)
    return f"t+w{window}s{stride}m{max_tokens}e" + ("l" if vectors == "late" else "")


def _windows(lengths: list[int], window: int, stride: int, budget: int) -> list[tuple[int, int]]:
    """[start, end) sentence spans: up to `window` sentences within `budget` tokens; every sentence
    lies in some span, the next span starts at most `stride` sentences later, and the last one is
    aligned to the end of the abstract."""
    spans: list[tuple[int, int]] = []
    start, n = 0, len(lengths)
    while start < n:
        end, used = start, 0
        while end < n and end - start < window and (end == start or used + lengths[end] <= budget):
            used += lengths[end]
            end += 1
        if end >= n:
            # The last window ends with the abstract and is as full as the others: a 1-2 sentence
            # tail window gives over-focused cosines (descriptions MRR 0.915 against 0.923).
            floor = spans[-1][0] + 1 if spans else 0
            while start > floor and end - start < window and used + lengths[start - 1] <= budget:
                start -= 1
                used += lengths[start]
            spans.append((start, end))
            break
        spans.append((start, end))
        start = min(start + stride, end)
    return spans


def paper_chunks(
    title: str, abstract: str, window: int, stride: int, max_tokens: int, count: TokenCounter
) -> list[Chunk]:
    """The title chunk, then the sentence windows of the abstract."""
    sentences = abstract_sentences(abstract)
    head = f"{title}\n"
    head_len, *lengths = count([head, *sentences])
    budget = max(8, max_tokens - 2 - head_len)  # [CLS] and [SEP]
    spans = _windows([n + 1 for n in lengths], window, stride, budget)
    chunks = [Chunk("title", title, "")]
    for i, (start, end) in enumerate(spans):
        new_from = spans[i - 1][1] if i else 0  # sentences the previous window did not hold
        document = " ".join(sentences[new_from:end])
        chunks.append(Chunk("window", head + " ".join(sentences[start:end]), document, (start, end)))
    return chunks


def token_counter(embed_model: object) -> tuple[TokenCounter, int]:
    """The embedding model's own word-piece counter and its real input limit."""
    model = getattr(embed_model, "_model", None)
    tokenizer = getattr(model, "tokenizer", None)
    limit = int(getattr(model, "max_seq_length", 0) or getattr(embed_model, "max_length", 0) or 256)
    if tokenizer is None:  # an embedding model without a tokenizer we can see: count words, generously
        return (lambda texts: [int(len(t.split()) * 1.5) + 1 for t in texts]), limit

    def count(texts: list[str]) -> list[int]:
        return [len(ids) for ids in tokenizer(texts, add_special_tokens=False, truncation=False)["input_ids"]]

    return count, limit

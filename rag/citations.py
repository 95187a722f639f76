"""Check the LLM's [n] markers against the sources and attribute uncited sentences post hoc."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .prompts import REFUSAL
from .types import Citation, Source

EmbedFn = Callable[[list[str]], list[list[float]]]

# [1], [1, 2], [1][2], [Source 1], [1-2]
MARKER = re.compile(r"\[\s*(?:sources?\s*)?(\d+(?:\s*(?:,|;|-|–|and)\s*(?:sources?\s*)?\d+)*)\s*\]", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])(?:\s*(?:\[[^\]]*\]))*\s+(?=[A-Z0-9\"'(\[])")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|Eq|approx)\.$", re.I)
MIN_WORDS = 4


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph; citation markers stay with the sentence they close."""
    out: list[str] = []
    pending = ""
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        piece = text[pos : m.end()].strip()
        # Markers that follow the full stop belong to the sentence they close.
        pos = m.end()
        candidate = (pending + " " + piece).strip() if pending else piece
        core = MARKER.sub("", candidate).rstrip()
        if _ABBREV.search(core):
            pending = candidate
            continue
        out.append(candidate)
        pending = ""
    tail = text[pos:].strip()
    last = (pending + " " + tail).strip() if pending else tail
    if last:
        out.append(last)
    return out


def marker_numbers(sentence: str) -> list[int]:
    """Source numbers named by the markers of a sentence, in order, without repeats."""
    nums: list[int] = []
    for m in MARKER.finditer(sentence):
        for part in re.split(r"\s*(?:,|;|and)\s*", m.group(1)):
            part = re.sub(r"(?i)sources?\s*", "", part)
            if re.fullmatch(r"\d+\s*[-–]\s*\d+", part):
                a, b = (int(x) for x in re.split(r"[-–]", part))
                rng = range(a, b + 1) if 0 < b - a < 10 else [a, b]
                nums.extend(rng)
            elif part.strip().isdigit():
                nums.append(int(part))
    return list(dict.fromkeys(nums))


def strip_markers(sentence: str) -> str:
    return re.sub(r"\s+([.,;:!?])", r"\1", MARKER.sub("", sentence)).strip()


def with_markers(sentence: str, numbers: Sequence[int]) -> str:
    """The sentence with the given markers placed before its closing punctuation."""
    core = strip_markers(sentence)
    tags = "".join(f"[{n}]" for n in numbers)
    if not tags:
        return core
    m = re.search(r"[.!?:;]+$", core)
    if m:
        return f"{core[: m.start()]} {tags}{core[m.start():]}"
    return f"{core} {tags}"


def is_refusal(text: str) -> bool:
    norm = re.sub(r"\W+", " ", text).strip().lower()
    ref = re.sub(r"\W+", " ", REFUSAL).strip().lower()
    return norm.startswith(ref) or (ref in norm and len(norm) < 2 * len(ref))


def tidy(raw: str) -> str:
    """Drop repeated sentences and a trailing fragment cut off by the token limit (small models do both)."""
    seen: set[str] = set()
    paragraphs = []
    for par in raw.strip().split("\n"):
        kept = []
        for sentence in split_sentences(par):
            key = re.sub(r"\W+", " ", strip_markers(sentence)).strip().lower()
            if key and key in seen:
                continue
            seen.add(key)
            kept.append(sentence)
        paragraphs.append(" ".join(kept))
    text = "\n".join(p for p in paragraphs if p.strip()).strip()
    last = split_sentences(text.split("\n")[-1]) if text else []
    if len(last) > 1 and not re.search(r"[.!?)\]\"']$", strip_markers(last[-1])):
        text = text[: text.rfind(last[-1])].rstrip()
    return text


@dataclass
class CheckedAnswer:
    text: str
    citations: list[Citation] = field(default_factory=list)
    removed_markers: list[int] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)


def _unit(vectors: list[list[float]]) -> np.ndarray:
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.size == 0:
        return arr.reshape(0, 0)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return arr / np.maximum(norms, 1e-12)


def check_citations(
    raw: str, sources: Sequence[Source], embed: EmbedFn, attribution_threshold: float
) -> CheckedAnswer:
    """Keep markers that name a source, drop the rest, attribute uncited sentences by similarity."""
    by_number = {s.number: s for s in sources}
    paragraphs = [p for p in tidy(raw).split("\n")]
    sentences_per_par = [split_sentences(p) for p in paragraphs]
    flat = [s for par in sentences_per_par for s in par]
    if not flat or not sources:
        return CheckedAnswer(text=raw.strip())

    # Source passages: each abstract sentence, so support points at a passage, not a whole abstract.
    passages: list[tuple[int, str]] = [
        (s.number, sent) for s in sources for sent in split_sentences(s.text) if sent.strip()
    ]
    vecs = _unit(embed([strip_markers(s) or s for s in flat] + [p for _, p in passages]))
    sent_vecs, pass_vecs = vecs[: len(flat)], vecs[len(flat) :]
    sims = sent_vecs @ pass_vecs.T  # sentence × passage
    numbers = np.array([n for n, _ in passages])

    best: dict[int, tuple[float, str, str]] = {}  # number → (support, passage, kind)
    removed: list[int] = []
    unsupported: list[str] = []
    rebuilt: list[list[str]] = []
    i = 0
    for par in sentences_per_par:
        out_par = []
        for sentence in par:
            row = sims[i]
            i += 1
            named = marker_numbers(sentence)
            valid = [n for n in named if n in by_number]
            removed.extend(n for n in named if n not in by_number)
            kind = "generated"
            if not valid and len(strip_markers(sentence).split()) >= MIN_WORDS:
                j = int(np.argmax(row))
                if row[j] >= attribution_threshold:
                    valid, kind = [int(numbers[j])], "attributed"
                else:
                    unsupported.append(strip_markers(sentence))
            for n in valid:
                mask = numbers == n
                idx = np.flatnonzero(mask)
                k = int(idx[np.argmax(row[mask])])
                score = float(row[k])
                prev = best.get(n)
                new_kind = "generated" if (prev and prev[2] == "generated") else kind
                if prev is None or score > prev[0]:
                    best[n] = (score, passages[k][1], new_kind)
                else:
                    best[n] = (prev[0], prev[1], new_kind)
            out_par.append(with_markers(sentence, valid))
        rebuilt.append(out_par)

    citations = [
        Citation(
            number=n,
            paper_id=by_number[n].paper_id,
            title=by_number[n].title,
            url=by_number[n].url,
            decision=by_number[n].decision,
            authors=by_number[n].authors,
            supporting_text=passage,
            score=by_number[n].score,
            support=round(support, 4),
            kind=kind,  # type: ignore[arg-type]
        )
        for n, (support, passage, kind) in sorted(best.items())
    ]
    text = "\n".join(" ".join(par) for par in rebuilt).strip()
    return CheckedAnswer(
        text=text,
        citations=citations,
        removed_markers=list(dict.fromkeys(removed)),
        unsupported=unsupported,
    )

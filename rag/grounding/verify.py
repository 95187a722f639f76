"""Turn evidence or LLM text into what the user sees: only sentences their cited abstract states.

- Evidence answers (`evidence_answer_parts`): list items of quoted abstract sentences, each cited.
- Generated answers (`SentenceFilter`): the LLM's text is cut into sentences as it streams; each one is
  checked against the sources it cites (`rag.grounding.support`). A supported sentence is shown with the
  markers of the sources that state it; an uncited one is shown only when some source states it
  (attributed); an unsupported one is never shown with a citation: it is replaced by the cited
  abstract's sentence it paraphrases (when the embeddings say it is one), or dropped, and listed in
  `Answer.unsupported_sentences`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rag.grounding.evidence import NOT_DESCRIBED, Assessment, Item
from rag.grounding.support import PaperText, Verdict, check
from rag.prompts import REFUSAL
from rag.store.vectors import unit_rows
from rag.text.citations import (
    MIN_WORDS,
    is_refusal,
    marker_numbers,
    split_sentences,
    strip_markers,
    with_markers,
)
from rag.types import AnswerItem, Citation, Source

EmbedFn = Callable[[list[str]], list[list[float]]]


def _citation(source: Source, passage: str, support: float, kind: str) -> Citation:
    return Citation(
        **source.ref(),
        supporting_text=passage,
        score=source.score,
        support=round(support, 4),
        kind=kind,
    )


def evidence_answer_parts(
    items: Sequence[Item], sources: Sequence[Source]
) -> tuple[list[AnswerItem], list[Citation]]:
    """The answer items and their citations for quoted evidence."""
    by_number = {s.number: s for s in sources}
    answer_items, citations = [], []
    for it in items:
        src = by_number[it.number]
        answer_items.append(AnswerItem(
            number=it.number, paper_id=src.paper_id, title=src.title, sentences=it.sentences, missing=it.missing,
        ))
        citations.append(_citation(src, it.sentences[0], 1.0, "evidence"))
    citations.sort(key=lambda c: c.number)
    return answer_items, citations




def count_line(verdict: Assessment, shown: int) -> str:
    """'23 papers here meet this; the 10 most relevant:' for a list answer (empty for one paper)."""
    n = len(verdict.matching_ids) or len(verdict.matching)
    if verdict.focus.kind != "list" or n == 0:
        return ""
    what = f" ({verdict.reading.describe()})" if verdict.reading is not None and verdict.reading.constraints else ""
    if verdict.loose and verdict.reading is not None:
        # the papers meet what the question names (its technique); its long topic only in other words
        rest = ", ".join(c.label for c in verdict.reading.constraints)
        first = f"the {shown} closest to the question" if n > shown else "closest to the question first"
        return f"{n} paper{'s' if n != 1 else ''} here {rest} (read loosely: “{verdict.loose}”), {first}:"
    if verdict.unworded:  # a setting worded otherwise by every paper that meets the rest
        are = f"{n} papers here meet" if n != 1 else "1 paper here meets"
        return f"No abstract here states “{verdict.unworded}” as worded; {are} the rest of the question:"
    if verdict.searched:  # no reading admitted them: they are what comes closest, not what meets it
        k = min(n, shown)
        return f"The {k} papers here closest to the question:" if k > 1 else "The paper here closest to the question:"
    if n > shown:
        return f"{n} papers here meet this{what}; the {shown} most relevant:"
    return f"{n} paper{'s' if n != 1 else ''} here meet{'s' if n == 1 else ''} this{what}:"


# how a refusal names what the question takes for granted: a claim, or the one paper it describes
PREMISE_NAMED = ("No ICLR 2025 abstract here states", "No ICLR 2025 abstract here describes")


def refusal_text(verdict: Assessment) -> str:
    """The refusal sentence, then why in plain words when it says more than the refusal (the premise
    no abstract states, a detail abstracts do not give), then the heading of the closest papers."""
    why = f" {_unsupported(verdict.premise, verdict.whole)}" if verdict.premise else (
        f" {verdict.explain}" if verdict.explain else ""
    )
    if verdict.described:
        # the paper the question describes, then why no abstract is it (a name none mentions, what the
        # paper it names is about)
        why = f" {_unsupported(verdict.premise, described=True)}" + (f" {verdict.explain}" if verdict.explain else "")
        # (what a paper it names is about, or the papers closest to the description)
        tail = "" if not verdict.related else " What the paper is about:" if verdict.focus.named \
            and verdict.reason != NOT_DESCRIBED else " The closest papers (their abstracts do not state it):"
        return f"{REFUSAL}{why}{tail}"
    if verdict.related and verdict.premise and not any(it.missing for it in verdict.related):
        tail = " The closest papers (none of them states it):"
    elif verdict.related and verdict.premise and verdict.whole:
        # A list request whose topic is stated and a constraint, as worded, is not: the closest papers, with the
        # request they come closest to, and each with what its abstract does not state. It does not open by saying
        # no abstract states the request: readers took that for "nothing fits" beside papers that do (§5w).
        # (with the search's first matches among them, which the reading finds no part missing of: §5z)
        if all(it.missing for it in verdict.related):
            return f"The papers closest to “{_plain(verdict.premise)}”, each with what its abstract does not state:"
        return f"The papers closest to “{_plain(verdict.premise)}”, none stating all of it in these words:"
    elif verdict.related and verdict.premise:
        # The topic is stated and a constraint, as worded, is not: the answer names what no abstract states,
        # and does not open by saying nothing was found (its closest papers are on the writers' lists
        # more often than not: 28 of 36 of those among the search's first five, docs/relevance.md §5h).
        return f"{_unsupported(verdict.premise, verdict.whole)} The closest papers, each with what its abstract does not state:"
    elif verdict.related:
        tail = " What the paper is about:"
    elif verdict.closest and verdict.premise and verdict.whole:
        # ... and so when only the search's first are shown (the engine heads them)
        return ""
    else:
        tail = ""
    return f"{REFUSAL}{why}{tail}"


def _plain(premise: str) -> str:
    return re.sub(r"\s+([,.;:?!])", r"\1", " ".join(premise.split()))  # (where an aside was left out)


def _unsupported(premise: str, whole: bool = False, described: bool = False) -> str:
    """What no abstract states: a claim ("that …", a topic) is stated, a question ("Why do …") answered,
    a paper ("a paper where …") described. A list question's request (`whole`) is what no abstract
    states all of: its closest papers state parts of it, and say which part they lack."""
    premise = _plain(premise)
    if described:
        return f"{PREMISE_NAMED[1]} “{premise}”."
    if re.match(r"(?i)(?:why|how|what|which|when|where|who|do|does|did|is|are|can)\b", premise):
        return f"No ICLR 2025 abstract here answers “{premise.rstrip('?. ')}?”"
    return f"{PREMISE_NAMED[0]} {'all of ' if whole else ''}“{premise}”."


_KIND_RANK = {"evidence": 0, "attributed": 1, "generated": 2}


def _key(sentence: str) -> str:
    return re.sub(r"\W+", " ", strip_markers(sentence)).strip().lower()


@dataclass
class SentenceFilter:
    """Checks generated sentences as they complete; `feed` returns the text that may be shown now."""

    sources: Sequence[Source]
    embed: EmbedFn
    replace_threshold: float
    shown: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    removed_markers: list[int] = field(default_factory=list)
    replaced: int = 0

    def __post_init__(self) -> None:
        self._by_number = {s.number: s for s in self.sources}
        self._papers = {s.number: PaperText(s.title, s.text, s.authors) for s in self.sources}
        self._buf = ""
        self._seen: set[str] = set()
        self._best: dict[int, tuple[float, str, str]] = {}  # number → (support, passage, kind)
        self._paragraph_break = False
        self._text = ""

    # -- streaming ------------------------------------------------------------------------
    def feed(self, delta: str) -> str:
        self._buf += delta
        out = []
        while True:
            nl = self._buf.find("\n")
            head = self._buf if nl < 0 else self._buf[:nl]
            parts = split_sentences(head)
            if nl >= 0:
                complete, rest = parts, self._buf[nl + 1 :]
            elif len(parts) > 1:
                complete = parts[:-1]
                rest = self._buf[self._buf.rfind(parts[-1]) :] if parts[-1] else ""
            else:
                break
            for sentence in complete:
                out.append(self._accept(sentence))
            if nl >= 0:
                self._paragraph_break = True
            self._buf = rest
            if nl < 0:
                break
        return "".join(out)

    def finish(self) -> str:
        """Check what is left; a last fragment without closing punctuation (cut off) is dropped."""
        rest, self._buf = self._buf.strip(), ""
        if not rest:
            return ""
        parts = split_sentences(rest)
        out = []
        for i, sentence in enumerate(parts):
            cut_off = i == len(parts) - 1 and not re.search(r"[.!?)\]\"']$", strip_markers(sentence))
            if cut_off and len(parts) + len(self._seen) > 1:
                continue  # the token limit cut it: a fragment, not a sentence
            out.append(self._accept(sentence))
        return "".join(out)

    # -- one sentence -----------------------------------------------------------------------
    def _accept(self, sentence: str) -> str:
        sentence = sentence.strip()
        plain = strip_markers(sentence)
        key = _key(sentence)
        if not key or key in self._seen or is_refusal(plain):
            return ""
        self._seen.add(key)
        named = marker_numbers(sentence)
        valid = [n for n in named if n in self._papers]
        self.removed_markers.extend(n for n in named if n not in self._papers and n not in self.removed_markers)
        verdicts = {n: check(plain, self._papers[n]) for n in valid}
        keep = [n for n in valid if verdicts[n].supported]
        kind = "generated"
        if not keep:
            others = {n: check(plain, p) for n, p in self._papers.items() if n not in valid}
            keep = [n for n, v in others.items() if v.supported][:1]
            verdicts.update(others)
            kind = "attributed"
        if keep:
            for n in keep:
                self._note(n, verdicts[n], kind)
            return self._show(with_markers(sentence, keep))
        if not valid and len(plain.split()) < MIN_WORDS:
            return ""  # a short uncited phrase ("Sure.") claims nothing
        if any(v.rule == "title-only" for v in verdicts.values()):
            return ""  # a title line posing as a sentence
        self.unsupported.append(plain)
        replacement = self._replacement(plain, valid)
        if replacement is None:
            return ""
        n, passage = replacement
        pkey = _key(passage)
        if pkey in self._seen:
            return ""
        self._seen.add(pkey)
        self.replaced += 1
        self._note(n, Verdict(True, "verbatim", 1.0, [], passage), "evidence")
        return self._show(with_markers(passage, [n]))

    def _replacement(self, plain: str, cited: list[int]) -> tuple[int, str] | None:
        """The cited abstract's sentence that the unsupported sentence paraphrases, if one is close."""
        cands = [(n, s) for n in cited for s in self._papers[n].sentences]
        if not cands:
            return None
        vecs = unit_rows(self.embed([plain] + [s for _, s in cands]))
        sims = vecs[1:] @ vecs[0]
        j = int(sims.argmax())
        return cands[j] if sims[j] >= self.replace_threshold else None

    def _note(self, n: int, verdict: Verdict, kind: str) -> None:
        prev = self._best.get(n)
        if prev is None or verdict.coverage > prev[0]:
            prev_kind = prev[2] if prev else kind
            strongest = max(kind, prev_kind, key=_KIND_RANK.__getitem__)
            self._best[n] = (verdict.coverage, verdict.evidence, strongest)

    def _show(self, sentence: str) -> str:
        sep = "" if not self.shown else ("\n" if self._paragraph_break else " ")
        self.shown.append(sentence)
        self._paragraph_break = False
        self._text += sep + sentence
        return sep + sentence

    # -- result -----------------------------------------------------------------------------
    @property
    def removed(self) -> int:
        return len(self.unsupported)

    def text(self) -> str:
        return self._text.strip()

    def citations(self) -> list[Citation]:
        return [
            _citation(self._by_number[n], passage or self._papers[n].sentences[0], support, kind)
            for n, (support, passage, kind) in sorted(self._best.items())
        ]

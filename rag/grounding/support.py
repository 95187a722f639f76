"""Does the cited abstract state this sentence? A lexical checker built for precision.

Rule (the "Grounding" section of docs/how-it-works.md says the same): a sentence is *supported* by a paper when

1. it appears in the paper's title + abstract word for word (after folding markup, case and
   punctuation), trimmed or not (`verbatim`); or
2. all of the following hold (`terms`):
   - every name and number in it (LeanAgent, GPT-4, CLIP, 3.5, 40%, Bengio, a capitalised word that
     does not start the sentence) occurs in the paper's title, abstract or author list;
   - every content word (stop words and attribution words like "paper", "proposes" aside), compared
     as an English stem, occurs in one place of the paper: one abstract sentence or two adjacent
     ones, plus the title and authors;
   - every negation in it ("not", "without", "fails") occurs in that place too;
   - its content words keep their order there: at least half of its adjacent word pairs appear in
     the same order within a few words of each other (a reshuffled or swapped claim fails).

Same topic is not support: a sentence with one word, name or number the paper does not have fails.
A line that only repeats the paper's title is not a claim. Paraphrases with new words fail too; that
is the price of precision (measured on `evals/data/support_labels.jsonl`, see docs/measured.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.text.citations import abstract_sentences, strip_markers
from rag.text.terms import NEGATIONS, content_stems, entities, folded, stem, words

CHECKER_NAME = "lexical-v1"
MIN_TERMS = 2  # a sentence with fewer content words claims nothing checkable
# Words about the answer itself, not about any paper: a sentence made only of them ("The answer to
# this question is [2]:") claims nothing, although an abstract that says "to answer this question"
# holds every one of its words.
DISCOURSE_STEMS = frozenset(content_stems(
    "answer answers question questions paper papers source sources abstract abstracts study studies "
    "work works following mention mentions discuss discusses topic topics relevant information title "
    "titles list example examples summary provide provides show shows describe describes"
))
ORDER_WINDOW = 4  # words between the two halves of a pair that still count as "together"
MIN_ORDERED = 0.5


@dataclass
class Verdict:
    """The checker's decision for one (sentence, paper) pair, and why."""

    supported: bool
    rule: str  # verbatim | terms | not-a-claim | title-only | missing-name | missing-words | negation | order
    coverage: float = 0.0  # share of the sentence's content words found in the best place
    missing: list[str] = field(default_factory=list)
    evidence: str = ""  # the abstract sentence(s) that match best


@dataclass
class PaperText:
    """A paper as the checker reads it: title, abstract sentences, authors."""

    title: str
    abstract: str
    authors: Sequence[str] = ()

    def __post_init__(self) -> None:
        self.sentences = abstract_sentences(self.abstract)
        self.folded_all = " " + folded(f"{self.title} . {self.abstract}") + " "
        self.words_all = set(words(f"{self.title} {self.abstract} {' '.join(self.authors)}"))
        self._context = [stem(w) for w in words(f"{self.title} {' '.join(self.authors)}")]
        self._sent_stems = [[stem(w) for w in words(s)] for s in self.sentences]

    def places(self) -> list[tuple[str, list[str]]]:
        """(text, stem sequence) of each single sentence and each pair of adjacent sentences."""
        out = []
        n = len(self.sentences)
        for i in range(n):
            out.append((self.sentences[i], self._sent_stems[i] + self._context))
            if i + 1 < n:
                pair = self._sent_stems[i] + self._sent_stems[i + 1] + self._context
                out.append((self.sentences[i] + " " + self.sentences[i + 1], pair))
        return out


def _plain(sentence: str) -> str:
    return strip_markers(sentence).strip().strip("-*•").strip()


def _ordered_share(claim: list[str], place: list[str]) -> float:
    """Share of the claim's adjacent content-word pairs found in the same order close together."""
    pairs = [(a, b) for a, b in zip(claim, claim[1:]) if a != b]
    if not pairs:
        return 1.0
    positions: dict[str, list[int]] = {}
    for i, s in enumerate(place):
        positions.setdefault(s, []).append(i)
    found = 0
    for a, b in pairs:
        pa, pb = positions.get(a, []), positions.get(b, [])
        if any(0 < j - i <= ORDER_WINDOW + 1 for i in pa for j in pb):
            found += 1
    return found / len(pairs)


def check(sentence: str, paper: PaperText) -> Verdict:
    """Whether `paper` states `sentence` (markers and list bullets are ignored)."""
    plain = _plain(sentence)
    f = folded(plain).rstrip(" .;:!?")
    claim_words = words(plain)
    if claim_words and set(claim_words) <= set(words(paper.title)):
        return Verdict(False, "title-only")
    if len(claim_words) >= 4 and f and f" {f}" in paper.folded_all:
        best = next((s for s in paper.sentences if f in folded(s)), paper.title)
        return Verdict(True, "verbatim", 1.0, [], best)
    stems = list(dict.fromkeys(content_stems(plain)))
    if len(stems) < MIN_TERMS or set(stems) <= DISCOURSE_STEMS:
        return Verdict(False, "not-a-claim")
    missing_names = [
        e for e in entities(plain) if not set(words(e)) <= paper.words_all
    ]
    ordered_claim = content_stems(plain)
    best_text, best_cov, best_missing, best_place = "", -1.0, stems, []
    for text, place in paper.places():
        have = set(place)
        missing = [s for s in stems if s not in have]
        cov = 1 - len(missing) / len(stems)
        if cov > best_cov:
            best_text, best_cov, best_missing, best_place = text, cov, missing, place
            if not missing:
                break
    if missing_names:
        return Verdict(False, "missing-name", best_cov, missing_names, best_text)
    if best_missing:
        return Verdict(False, "missing-words", best_cov, best_missing, best_text)
    place_words = set(words(best_text)) | set(words(paper.title))
    numbers = [e for e in entities(plain) if any(c.isdigit() for c in e)]
    misplaced = [n for n in numbers if not set(words(n)) <= place_words]
    if misplaced:
        return Verdict(False, "missing-name", best_cov, misplaced, best_text)
    negs = [w for w in claim_words if w in NEGATIONS]
    # A negation the claim drops flips it ("rather than treating X as homogeneous" → "treats X as
    # homogeneous"): look at the one sentence that holds most of the claim.
    single = max(paper.sentences, key=lambda t: len(set(content_stems(t)) & set(stems)))
    if any(n not in place_words for n in negs) or (not negs and set(words(single)) & NEGATIONS):
        return Verdict(False, "negation", best_cov, negs, best_text)
    if len(ordered_claim) >= 4 and _ordered_share(ordered_claim, best_place) < MIN_ORDERED:
        return Verdict(False, "order", best_cov, [], best_text)
    return Verdict(True, "terms", best_cov, [], best_text)


def check_source(sentence: str, title: str, text: str, authors: Sequence[str] = ()) -> Verdict:
    """`check` for a paper given as plain fields (a `Source` or a corpus record)."""
    return check(sentence, PaperText(title, text, tuple(authors)))

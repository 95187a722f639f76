"""[n] citation markers and sentences: parsing, stripping, placing; list items of evidence answers."""

from __future__ import annotations

import re
from typing import Sequence

from rag.prompts import REFUSAL

# The heading before the papers an answer shows as related (on topic, missing a constraint); a
# conversation reads the papers numbered after it back as related, not listed (rag.text.followup).
RELATED_HEADING = "Related, but their abstracts do not state every part of the question:"
CLOSEST_HEADING = "Also among the search's first matches (the reading above does not find all of the question in them):"
# ... and before them in a refusal that shows no related paper (nothing comes before them)
CLOSEST_ALONE_HEADING = "The search's first matches (the reading above does not find all of the question in them):"

# [1], [1, 2], [1][2], [Source 1], [1-2]
# At most 6 digits a number: "[" + 5,000 digits + "]" is no marker (int() refuses > 4,300 digits).
MARKER = re.compile(r"\[\s*(?:sources?\s*)?(\d{1,6}(?:\s*(?:,|;|-|–|and)\s*(?:sources?\s*)?\d{1,6})*)\s*\]", re.I)
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


def abstract_sentences(abstract: str) -> list[str]:
    """An abstract's sentences as every stage reads them (chunk windows, quotes, stored sentence
    vectors): its non-blank sentences, or the whole text when it has none."""
    return [s for s in split_sentences(abstract) if s.strip()] or [abstract]


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
    # (?<!\s): each whitespace run is tried once, from its start (linear on a long run of spaces).
    text = re.sub(r"(?<!\s)\s+([.,;:!?])", r"\1", MARKER.sub("", sentence))
    return re.sub(r"[ \t]{2,}", " ", text).strip()


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


# "- **Title** [2]: sentence. sentence." — one paper of a list answer.
# "- **Title** [n]: quote", or a related paper's "- **Title** [n] (not stated: at inference time): quote".
ITEM = re.compile(
    r"^\s*(?:[-*•]|\d+[.)])?\s*\*\*(?P<title>.+?)\*\*\s*(?P<markers>(?:\[\s*\d+\s*\]\s*)+)"
    r"(?:\(not(?:\s+stated)?: [^()]*\)\s*)?:\s*(?P<body>.*)$"
)


def claims(text: str) -> list[tuple[str, list[int]]]:
    """(sentence without markers, source numbers it cites) for each sentence of an answer.

    In a list item the [n] after the title cites every sentence of the item; the title itself is a
    label, not a claim. Sentences shorter than MIN_WORDS words without a marker are left out.
    """
    out: list[tuple[str, list[int]]] = []
    for line in text.split("\n"):
        if line.rstrip().endswith(":") and not MARKER.search(line):
            continue  # a heading that introduces a list ("12 papers here meet this:") claims nothing
        m = ITEM.match(line)
        head: list[int] = []
        if m:
            head = marker_numbers(m.group("markers"))
            line = m.group("body")
        for sentence in split_sentences(line.strip()):
            plain = strip_markers(sentence)
            numbers = list(dict.fromkeys(head + marker_numbers(sentence)))
            if numbers or len(plain.split()) >= MIN_WORDS:
                out.append((plain, numbers))
    return out


class LiveMarkerFilter:
    """Streams tokens while dropping [n] markers that name no source (final text is validated later)."""

    MAX_MARKER = 24

    def __init__(self, valid_numbers: Sequence[int]):
        self.valid = set(valid_numbers)
        self._buf = ""

    def feed(self, delta: str) -> str:
        """Text that is safe to show now; a possible marker is held back until it closes."""
        self._buf += delta
        out = []
        while self._buf:
            i = self._buf.find("[")
            if i < 0:
                out.append(self._buf)
                self._buf = ""
                break
            out.append(self._buf[:i])
            rest = self._buf[i:]
            j = rest.find("]")
            if j < 0:
                if len(rest) <= self.MAX_MARKER:
                    self._buf = rest
                    break
                out.append(rest[0])
                self._buf = rest[1:]
                continue
            token = rest[: j + 1]
            if "[" in token[1:] or not MARKER.fullmatch(token):
                out.append(rest[0])
                self._buf = rest[1:]
                continue
            self._buf = rest[j + 1 :]
            out.append("".join(f"[{n}]" for n in marker_numbers(token) if n in self.valid))
        return "".join(out)

    def flush(self) -> str:
        """Whatever is still held back at the end of the stream."""
        rest, self._buf = self._buf, ""
        return rest

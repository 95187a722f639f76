"""Query understanding: what a question asks of the catalog of stored papers (no LLM, no embeddings).

Rules in brief (words are runs of letters/digits, compared casefolded and without accents):

- Authors: each author is indexed by full name, first + last, initial + last ("Y Bengio") and last name
  alone, umlauts also as ae/oe/ue. A full name counts when the question has any authorship cue (by,
  authored, wrote, publish, papers, work, a possessive) or is just the name plus filler ("Yoshua Bengio
  ICLR 2025"). A last name, an initial form or a one-word name needs a cue beside it: "by X" then the end,
  punctuation or a function word; "X's (recent) papers/work"; "papers of/from X"; "did X publish/write/
  co-author"; "X as (an) author"; "X papers" with X capitalised; or a question that is only "X papers".
  A last name that is a common title word ("Long", "Law") must be capitalised. All papers of all
  matching authors are returned.
- Decisions: "orals", "spotlights", "posters", or the singular before paper(s)/presentation(s)/talk(s)/
  session(s) or after "as"/"an" ("accepted as oral"); "oral health" is no decision.
- Named papers: "Name: subtitle" titles with <= 3 words before the colon give a short name. A name is
  distinctive when a word of it has a digit or is in fewer than 3 other titles (compared by stem); a
  distinctive name matches in any case (LeanAgent, leanagent, CAMEx), any other only with the title's
  casing and not as a sentence's first word run into more words ("Test of Time" yes, "Flow matching" no).
  An all-lower-case word matches a capitalised name only when the name is coined (a digit or a capital
  after its first letter: "leanagent" is LeanAgent) and the question uses no capitals mid-sentence
  ("computational fluid dynamics" is not "Fluid"), and is no part of a hyphenated word ("real-to-sim" is not
  "SIM"); a name followed by a year is a venue ("ICLR 2025"). A question also
  names a paper by its full title or subtitle (>= 3 words; any length when quoted), or by >= 4
  consecutive content-word stems found in that title only, one of them rare (<= 20 titles). Best first:
  full title, short name (longer, exact spelling first), fragment (longer first), then catalog order.
- Similar: "similar to / related to / papers like / is like / same topic as / resembling X" with a
  named paper after the cue: that paper is the anchor and search_text its title; else the cue is dropped
  and the question stays a topic question.
- List or single: "which/what/a paper|method|dataset...", "the ... paper" ask for one; plural paper words
  ("papers", "methods", "approaches"), "list", "any work", "are there", "what are", "which <plural>" and
  headings without question word or "?" ("Model merging") ask for a list; other questions for one.
- kind: author, else similar, else named, else topic (a list) or single.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections import Counter, defaultdict, namedtuple
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel

from rag.settings import DECISIONS
from rag.text.terms import LEADING_FRAME, STOPWORDS, content_stems, stem, word_spans


class QueryIntent(BaseModel):
    kind: Literal["topic", "single", "author", "named", "similar"]
    list_question: bool
    search_text: str
    authors: list[str] = []
    author_paper_ids: list[str] = []
    decisions: list[str] = []
    named_ids: list[str] = []
    similar_to: str | None = None
    notes: list[str] = []


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TRANSLIT = str.maketrans({"ł": "l", "đ": "d", "ø": "o", "æ": "ae", "œ": "oe", "ı": "i", "ð": "d", "þ": "th"})
_UMLAUT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue"})
_PAPERISH = _set("paper papers work works publication publications research articles contributions")
_ADJ = _set("recent latest new other accepted iclr 2025 main best")
_AUX = _set("did does do has have had")
_WROTE = _set(
    "publish published write wrote written author authored co coauthor coauthored present presented"
)
_LOOSE = _PAPERISH | _WROTE | _set("by authors coauthors")
_BACK = _AUX | _set("by authored written coauthored co of from")
_FILLER = STOPWORDS | _PAPERISH | _ADJ | _set("list show find give get me et al")
_DEC = {d.lower(): d for d in DECISIONS}
_DEC_NEXT = _set("paper papers presentation presentations talk talks session sessions track work works")
_LIKE_PREV = _set("papers paper works work studies more ones something anything others else is are those")
_SINGULAR = _set("paper work study article method model benchmark dataset framework approach system one")
_PLURAL = _set(
    "papers works studies articles publications approaches methods techniques overview survey list"
)
_QWORDS = _set("what which who how why when where is are does do did can could should would will was were")
_NAMED_LIST = _set("papers works studies articles publications")
_BENCHMARKS = _set("benchmarks datasets")
_QUOTED = re.compile(r"[\"“”'‘’«]([^\"“”‘’«»]{2,400})[\"“”'‘’»]")
_Tok = namedtuple("_Tok", "raw low start end poss")


@lru_cache(maxsize=200_000)
def fold(text: str, umlaut: bool = False) -> str:
    """Casefolded text without accents ("Schölkopf" -> "scholkopf"; with umlaut=True "schoelkopf")."""
    if text.isascii():
        return text.lower()
    text = text.casefold().translate(_UMLAUT) if umlaut else text.casefold()
    text = unicodedata.normalize("NFKD", text).translate(_TRANSLIT)
    return "".join(c for c in text if not unicodedata.combining(c))


def _tokens(text: str) -> list[_Tok]:
    out = []
    for m in word_spans(text):
        raw = m.group()
        poss = len(raw) > 2 and raw[-2] in "'’"
        raw = raw[:-2] if poss else raw
        out.append(_Tok(raw, fold(raw), m.start(), m.end(), poss))
    return out


def _stop(q: str, toks: list[_Tok], k: int, marks: str = ",;:?!.()") -> bool:
    """Whether punctuation (or the end) follows token k."""
    return k + 1 >= len(toks) or any(c in marks for c in q[toks[k].end : toks[k + 1].start])


def _words(text: str, umlaut: bool = False) -> list[str]:
    words = (t[:-2] if len(t) > 2 and t[-2] in "'’" else t for t in (m.group() for m in word_spans(text)))
    return [w for w in (fold(t, umlaut) for t in words) if w]


def _author_keys(name: str) -> set[tuple[tuple[str, ...], bool]]:
    """(key, full) pairs; full keys (first or middle + last name) need looser cues than the others."""
    keys = set()
    for umlaut in (False, True) if not name.isascii() else (False,):
        parts = [tuple(p) for p in (_words(w, umlaut) for w in name.split()) if p]
        if len(parts) == 1:  # one word: "Shwetank", "JiakaiWang" (also "jiakai wang")
            keys.add((parts[0], False))
            camel = re.findall(r"[A-Z][a-z]+|[a-z]+|\d+", name.strip())
            if len(camel) > 1 and "".join(camel) == name.strip():
                keys.add((tuple(fold(w) for w in camel), True))
        elif parts:
            last = parts[-1]
            keys |= {(sum(parts, ()), True), (last, False)}
            for first in parts[:1] + (parts[1:2] if len(parts) > 2 and len(parts[0][0]) == 1 else []):
                keys |= {(first + last, len(first[0]) > 1), ((first[0][0],) + last, False)}
    return {(k, full) for k, full in keys if len(k) > 1 or (k and len(k[0]) > 1 and k[0] not in STOPWORDS)}


# The venue's name, which questions use of every paper here: no paper's short name
_VENUES = frozenset({"iclr"})


class Catalog:
    """Metadata of the stored papers, indexed for parse(): authors, short names, title fragments."""

    VERSION = "3"  # raise when build() changes what it indexes (cached catalogs are then rebuilt)

    def __init__(self) -> None:
        self.ids: list[str] = []
        self._order: dict[str, int] = {}
        self._title: dict[str, str] = {}
        self._decision: dict[str, str] = {}
        self._by_author: dict[str, list[str]] = defaultdict(list)
        self._author_keys: dict[tuple[str, ...], dict[str, bool]] = defaultdict(dict)
        self._names: dict[str, list[tuple[tuple[str, ...], tuple[str, ...], str, bool, str]]] = {}
        self._seqs: dict[tuple[str, str], list[tuple[tuple[str, ...], str]]] = defaultdict(list)
        self._full: dict[tuple[str, ...], list[str]] = defaultdict(list)
        self._grams: dict[tuple[str, ...], str] = {}
        self._common: set[str] = set()
        self._title_words: dict[str, tuple[str, ...]] = {}

    @classmethod
    def build(cls, papers: Iterable[tuple[str, str | None, Sequence[str] | None, str | None]]) -> Catalog:
        """From (paper_id, title, authors, decision) rows; a repeated id keeps its first row."""
        cat, df, grams = cls(), Counter[str](), defaultdict[tuple[str, ...], set[str]](set)
        for pid, title, authors, decision in papers:
            if pid in cat._title:
                continue
            cat._order[pid] = len(cat.ids)
            cat.ids.append(pid)
            title = cat._title[pid] = title or ""
            cat._decision[pid] = decision or ""
            for author in dict.fromkeys(authors or []):
                cat._by_author[author].append(pid)
            low: Sequence[str] = _words(title)  # a tuple below, for the short names
            cat._title_words[pid] = tuple(low)
            df.update({stem(w) for w in low})
            stems = [stem(w) for w in low if w not in STOPWORDS]
            for i in range(len(stems) - 3):
                grams[tuple(stems[i : i + 4])].add(pid)
            cat._full[tuple(low)].append(pid)
            for seq in (low, _words(title.split(":", 1)[1]) if ":" in title else []):
                if len(seq) >= 2:  # a two-word title ("Differential Transformer") names only in its casing
                    cat._seqs[(seq[0], seq[1])].append((tuple(seq), pid))
        for author in cat._by_author:
            for key, full in _author_keys(author):
                cat._author_keys[key][author] = cat._author_keys[key].get(author, False) or full
        cat._common = {s for s, n in df.items() if n >= 4}  # "law", "long": such a last name needs a capital
        rare = {s for s, n in df.items() if n <= 20}
        cat._grams = {g: next(iter(p)) for g, p in grams.items() if len(p) == 1 and rare.intersection(g)}
        for pid in cat.ids:
            head = cat._title[pid].split(":", 1)[0].strip() if ":" in cat._title[pid] else ""
            toks = _tokens(head)
            low, raw = tuple(t.low for t in toks), tuple(t.raw for t in toks)
            if not head or len(head.split()) > 3 or len("".join(low)) < 3 or low[0] in _VENUES:
                continue  # ("ICLR: In-Context Learning of Representations": "at ICLR" is the venue)
            own = {stem(w) for w in _words(cat._title[pid])}
            distinctive = any(  # a digit, or a word that fewer than 3 other titles have
                any(c.isdigit() for c in w) or (w not in STOPWORDS and df[stem(w)] - (stem(w) in own) < 3)
                for w in low
            )
            cat._names.setdefault(low[0], []).append((low, raw, pid, distinctive, head))
        return cat

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> Catalog:
        """From dicts with keys id, title, authors, decision (the rows of papers.jsonl)."""
        return cls.build(
            (r["id"], r.get("title"), r.get("authors") or [], r.get("decision")) for r in records
        )

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, paper_id: object) -> bool:
        return paper_id in self._title

    def title(self, paper_id: str) -> str:
        return self._title.get(paper_id, "")

    def decision(self, paper_id: str) -> str:
        return self._decision.get(paper_id, "")

    def _author_ok(
        self, toks: list[_Tok], low: list[str], i: int, j: int, full: bool, q: str, sums: list[list[int]]
    ) -> bool:
        other, paperish, loose = (s[-1] - s[j] + s[i] for s in sums)  # counts outside the name
        if not full and j - i == 1 and stem(low[i]) in self._common and not toks[i].raw[:1].isupper():
            return False  # "by law", "long papers"
        if not other and (full or paperish):
            return True  # only a name (+ "papers")
        if full:
            return bool(toks[j - 1].poss or loose > 0)
        if toks[j - 1].poss:  # "Bengio's (recent) papers", not "Newton's method"
            return next((w for w in low[j : j + 3] if w not in _ADJ), "") in _PAPERISH
        prev, prev2 = (low[i - 1] if i else ""), (low[i - 2] if i > 1 else "")
        nxt = low[j] if j < len(low) else ""
        if prev == "by":  # then the end, punctuation or a function word: not "by Gauss elimination"
            return nxt in STOPWORDS | _PAPERISH | {"iclr", "2025", "et"} or _stop(q, toks, j - 1)
        if prev in ("of", "from") and prev2 in _PAPERISH:
            return True
        capital = toks[i].raw[:1].isupper()
        as_author = nxt == "as" and {"author", "coauthor"} & set(low[j : j + 4])
        return (
            (prev in _AUX and nxt in _WROTE)
            or (nxt in ("papers", "publications") and capital)
            or bool(as_author)
        )

    def _match_authors(self, toks: list[_Tok], q: str) -> list[tuple[int, int, list[str]]]:
        """(first token, end token, authors) of each author phrase, longest match first, left to right."""
        low = [t.low for t in toks]
        sums: list[list[int]] = []  # prefix counts of non-filler, paper and cue words
        for words, counted_if_in in ((_FILLER, False), (_PAPERISH, True), (_LOOSE, True)):
            counts = [0]
            for w in low:
                counts.append(counts[-1] + int((w in words) == counted_if_in))
            sums.append(counts)
        out, i = [], 0
        while i < len(toks):
            for n in range(min(5, len(toks) - i), 0, -1):
                found = self._author_keys.get(tuple(low[i : i + n]))
                if found and self._author_ok(toks, low, i, i + n, any(found.values()), q, sums):
                    out.append((i, i + n, sorted(found)))
                    i += n - 1
                    break
            i += 1
        return out

    def _match_named(self, toks: list[_Tok], q: str) -> dict[str, tuple[float, int]]:
        """paper id -> (score, first token of the match) for every paper the question names."""
        best: dict[str, tuple[float, int]] = {}

        def add(pid: str, score: float, at: int) -> None:
            if pid not in best or score > best[pid][0]:
                best[pid] = (score, at)

        low, qcf = [t.low for t in toks], q.casefold()
        starts = [k == 0 or _stop(q, toks, k - 1, ".?!:") for k in range(len(toks))]
        cased = any(t.raw != t.low and not s for t, s in zip(toks, starts))  # capitals mid-sentence
        for k, w in enumerate(low):
            for name, raw, pid, distinctive, head in self._names.get(w, ()):
                e = k + len(name)
                if tuple(low[k:e]) != name or (e < len(low) and re.fullmatch(r"\d{4}", low[e])):
                    continue  # not the name, or a venue ("ICLR 2025")
                exact = tuple(t.raw for t in toks[k:e]) == raw
                ends = e == len(low) or low[e] in STOPWORDS or _stop(q, toks, e - 1)
                lower = all(t.raw.islower() for t in toks[k:e]) and not all(x.islower() for x in raw)
                coined = any(re.search(r"\d|.[A-Z]", r) for r in raw)  # LeanAgent, CAMEx, GPT-4o
                if (lower and (cased or not coined)) or not (distinctive or (exact and (ends or not starts[k]))):
                    continue  # an ordinary word ("Flow matching", "rapid", "fluid dynamics") is no name
                joined = q[toks[k].start - 1 : toks[k].start] == "-" or q[toks[e - 1].end : toks[e - 1].end + 1] == "-"
                if lower and joined:
                    continue  # part of a word in lower case ("real-to-sim") does not name "SIM: Surface-based fMRI …"
                if head.endswith("+") and head.casefold() not in qcf:
                    continue  # "TimeMixer" does not name "TimeMixer++"
                add(pid, 500 + 10 * len(name) + exact + (len(head) / 100 if head in q else 0), k)
            for seq, pid in self._seqs.get((w, low[k + 1]), ()) if k + 1 < len(low) else ():
                if tuple(low[k : k + len(seq)]) != seq:
                    continue
                if len(seq) == 2 and [t.raw for t in toks[k : k + 2]] != _words_raw(self._title[pid])[:2]:
                    continue
                add(pid, 1000 + len(seq), k)
        offsets = [t.start for t in toks]
        for m in _QUOTED.finditer(q):  # a quoted title of any length: 'Differential Transformer'
            k = bisect_left(offsets, m.start(1))
            for pid in self._full.get(tuple(_words(m.group(1))), ()):
                add(pid, 1000 + len(toks), k)
        for k, w in enumerate(low):  # "the min-p sampling paper": words in exactly one title
            if w != "the":
                continue
            at = k + 3 if low[k + 1 : k + 3] == ["iclr", "2025"] else k + 1  # "the ICLR 2025 patch-level training paper"
            end = next((e for e in range(at + 1, min(at + 6, len(low))) if low[e] in _PAPER_WORDS), None)
            phrase = tuple(low[at:end]) if end else ()
            if not phrase or all(x in STOPWORDS or x in _PAPER_WORDS for x in phrase):
                continue
            hits = [pid for pid, words in self._title_words.items() if _contains(words, phrase)]
            if len(hits) == 1:
                add(hits[0], 800 + len(phrase), k + 1)
        content = [(stem(t.low), k) for k, t in enumerate(toks) if t.low not in STOPWORDS]
        prev, run = None, 0
        for c in range(len(content) - 3):
            gram = self._grams.get(tuple(s for s, _ in content[c : c + 4]))
            run, prev = (run + 1 if gram is not None and gram == prev else 1), gram
            if gram is not None:
                add(gram, RUN_SCORE + run + 3, content[c - run + 1][1])  # a run of run + 3 title words
        return best


_PAPER_WORDS = frozenset({"paper", "papers", "work", "article", "study"})


def _words_raw(text: str) -> list[str]:
    """The words of a text as written (case kept), without a possessive "'s"."""
    return [t.raw for t in _tokens(text)]


def _contains(words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(words[i : i + n] == phrase for i in range(len(words) - n + 1))


def _cut(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """The text without the given character spans, spaces tidied."""
    out, pos = [], 0
    for a, b in sorted(spans):
        out.append(text[pos:a] if a >= pos else "")
        pos = max(pos, b)
    text = re.sub(r"\s+", " ", "".join(out) + text[pos:]).strip()
    return re.sub(r"\s+([?.!,;:])", r"\1", text)


def _short(title: str, limit: int = 90) -> str:
    return title if len(title) <= limit else title[: limit - 1].rstrip() + "…"


RUN_SCORE = 100  # `_match_named` scores a run of n title words RUN_SCORE + n
HEADING_RUN = 5
NAME_SCORE = 500  # `_match_named` scores a name or a quoted title at least this, a run of title words less


def asks_papers(question: str) -> bool:
    """Whether the question opens by asking for papers in the plural ("Which papers …", "What works …",
    "Which benchmarks …")."""
    low = [t.low for t in _tokens(question)[:4] if t.low not in ("iclr", "2025")][:2]  # "Which ICLR 2025 papers …"
    return len(low) > 1 and low[0] in ("which", "what", "any") and (low[1] in _PLURAL or low[1] in _BENCHMARKS)


def _is_list(low: list[str], q: str) -> bool:
    low = [w for w in low if w not in ("iclr", "2025")]
    if not low or asks_papers(q):  # "Which papers use X, with a model …": "a model" later asks no one paper
        return True
    for k, w in enumerate(low[:-1]):
        if w in ("which", "what", "a", "one") and low[k + 1] in _SINGULAR:
            return False  # "which paper proposes", "is there a paper that"
        if w == "the" and "paper" in low[k + 1 : k + 5]:
            return False  # "the DataEnvGym paper"
    pairs = set(zip(low, low[1:]))
    if set(low) & _PLURAL or pairs & {("any", "work"), ("are", "there"), ("what", "are"), ("which", "are")}:
        return True
    if low[0] == "which" and len(low) > 1 and low[1].endswith("s") and low[1] not in ("is", "was", "does"):
        return True  # "which models ..."
    return not (low[0] in _QWORDS or q.rstrip().endswith("?"))  # a heading ("Model merging") asks for a list


# The answer's shape: one paper for "which paper …", "what is …", "how does …" unless the question
# names several ("papers", "works"); a list otherwise, and for every question `_is_list` reads as one
# (list_question decides how deep retrieval reads; this, how many papers an answer shows).
# A question that opens by naming the paper it asks about: "In 'Title', why …", "According to 'Title', how …"
TITLE_LEAD = r"(?:in|according\s+to)\s+[\"“'‘]"
_ONE_PAPER = re.compile(
    r"\b(?:which|what)\s+(?:iclr\s*2025\s+)?(?:paper|work|study|article|method|model|benchmark|dataset|"
    r"framework|approach|system)\b|\bthe\s+(?:paper|work|study)\b|^\s*(?:what|who)\s+(?:is|was|does|did)\b|"
    # "… ('hyperfitting' in the Hyperfitting Phenomenon paper)": the paper its name says
    r"\bthe\s+(?:(?-i:[A-Z])[\w'-]*\s+){1,6}(?:paper|work|study)\b|"
    r"^\s*how\s+(?:does|did|is)\b|"
    # "According to 'Title', why …", "how do the authors fix it": what one paper says
    rf"^\s*{TITLE_LEAD}|^\s*according\s+to\b|\bthe\s+authors\b|"
    # ... wherever the quoted title stands ("how do gradients get through the VQ layer in 'Restructuring …'")
    r"\b(?:in|according\s+to)\s+[\"“'‘][^\"”'’]{10,}[\"”'’]",
    re.I,
)
_SEVERAL = re.compile(r"\b(?:papers|works|studies)\b", re.I)


# ... and of those, a question that looks for one paper by what it did ("Which ICLR 2025 paper ran …", "I recall a
# result that … Which paper was that?"), not "What ICLR 2025 work is about …" (papers) nor "How does X …" (one named)
_SEEKS_ONE = re.compile(
    r"\b(?:which|what)\s+(?:iclr\s*2025\s+)?(?:[\w-]+\s+){0,2}?(?:paper|study|article)\b(?!s)"
    r"|^\s*(?:i|we)\s+(?:remember|recall|once\s+read|read|heard|saw)\b",
    re.I,
)


def seeks_one_paper(question: str) -> bool:
    """The question looks for one paper by what it did or found, without naming it."""
    return answer_shape(question) == "single" and bool(_SEEKS_ONE.search(question))


# The description of the one paper such a question looks for: "I remember an ICLR 2025 paper where <it>. Which
# paper was that?" (its first sentence), "Which ICLR 2025 paper <did it>, and how …?" (up to a second question)
_REMEMBERED = re.compile(
    r"^\s*(?:i|we)\s+(?:remember|recall|once\s+read|read|heard|saw)(?:\s+(?:reading|seeing|hearing))?"
    r"(?:\s+(?:about|of|that))?\s+(?:an?|the|one|some)\s+"
    # (its first sentence: a period of "i.e.", "e.g." or "0.9" ends none)
    r"(?P<what>(?:[^.?!]|\b(?:i\.e|e\.g|vs|cf|al)\.|\d\.\d)*?)\s*(?:[.?!]\s|[.?!]?$)",
    re.I,
)
_WHICH_ONE = re.compile(
    r"^\W*(?:which\s+(?P<what>(?:iclr\s*2025\s+)?(?:(?!(?:do|does|did|is|are|was|were|the)\b)[\w-]+\s+){0,3}?"
    r"(?:paper|study|article|work)\b(?!s)[^?]*?)|what\s+(?P<what2>(?:iclr\s*2025\s+)?"
    # ("What work targets …" asks for a list, "What does the Lawma paper find …" about a named one)
    r"(?:(?!(?:do|does|did|is|are|was|were|the)\b)[\w-]+\s+){0,3}?(?:paper|study|article)\b(?!s)"
    r"[^?]*?))\s*[?.!]*$",
    re.I,
)
# words a description may go on with after "a paper": a preposition or a relative word ("a paper on …",
# "a paper where …"); else it goes on with what the paper did ("a paper that reported …")
_GOES_ON = frozenset("on in for about from with at by of to where whose that which showing reporting proving "
                     "using who when".split())
_CLAUSE_START = frozenset("a an the its their this these those some one no every each all".split())
# a second question after a claim or a description ("…, and how accurate was it?"): not part of either
AND_THEN_ASKS = re.compile(
    r",?\s+and\s+(?:(?:in|under|for|at|on|by|with)\s+)?(?:which|what|how|when|where|why|whether)\b.*$", re.I | re.S)


@lru_cache(maxsize=512)  # (asked of one question up to three times while it is assessed)
def described_paper(question: str) -> str | None:
    """What a question that looks for one paper by what it did says of it, as "a paper where …", "a weather
    paper that …" (without "ICLR 2025"): what no abstract describes when none answers it."""
    m = _REMEMBERED.search(question) or _WHICH_ONE.search(question.strip())
    what = m and (m.group("what") or m.groupdict().get("what2"))
    if not what or re.match(r"(?:[\w-]+\s+){0,3}?(?:papers|studies|works)\b", what, re.I):
        return None
    what = re.sub(r"\s*\b(?:at\s+)?iclr\s*2025\b\s*", " ", what, flags=re.I).strip()
    what = AND_THEN_ASKS.sub("", what).strip(" ,;:")
    head = re.match(r"((?:[\w-]+\s+){0,3}?(?:paper|study|article|work|result|benchmark|model|analysis|"
                    r"reanalysis|method|system|dataset))\s+(\S+)", what, re.I)
    # ("a paper that reported …", "a study finding …", "a chess model trained on …": done to it)
    went_on = head and (head.group(2).lower() in _GOES_ON or head.group(2).lower().endswith("ing") or (
        head.group(2).lower().endswith("ed") and not re.search(r"(?:paper|study|article|work)$", head.group(1), re.I)))
    if head and not went_on:
        # ("Which paper a pure energy-based model beat …": a clause, as the question is restated from "a paper
        # where …")
        joint = "where" if head.group(2).lower() in _CLAUSE_START else "that"
        what = f"{head.group(1)} {joint} {what[head.end(1):].strip()}"
    if len(what.split()) < 4:
        return None
    return ("an " if what[:1].lower() in "aeiou" else "a ") + what


def answer_shape(question: str, list_question: bool = False) -> Literal["list", "single"]:
    """"single" when the question asks for one paper, else "list" (always when `list_question`)."""
    if list_question or not _ONE_PAPER.search(question) or _SEVERAL.search(question):
        return "list"
    return "single"


def _authors(
    cat: Catalog, toks: list[_Tok], q: str, notes: list[str], cut: list[tuple[int, int]]
) -> list[tuple[int, int, list[str]]]:
    low, spans, seen = [t.low for t in toks], cat._match_authors(toks, q), set()
    for i, j, found in spans:
        a, b = i, j
        while a > 0 and low[a - 1] in _BACK:
            a -= 1
        while b < len(toks) and low[b] in _WROTE | {"et", "al", "as", "an", "a"}:
            b += 1
        cut.append((toks[a].start, toks[b - 1].end))
        new = [x for x in found if x not in seen]
        seen.update(new)
        n = len({p for x in new for p in cat._by_author[x]})
        if len(new) == 1:
            notes.append(f"Papers by {new[0]} ({n})")
        elif new:
            said = q[toks[i].start : toks[j - 1].start + len(toks[j - 1].raw)]
            shown = ", ".join(new[:6]) + (f" and {len(new) - 6} more" if len(new) > 6 else "")
            notes.append(f"Papers by the {len(new)} authors called '{said}' ({n}): {shown}")
    return spans


def _decisions(toks: list[_Tok], notes: list[str], cut: list[tuple[int, int]]) -> list[str]:
    low, found = [t.low for t in toks], set()
    for k, w in enumerate(low):
        base = w[:-1] if w.endswith("s") and w[:-1] in _DEC else w
        if base not in _DEC:
            continue
        nxt = next((x for x in low[k + 1 : k + 5] if x not in _DEC and x not in ("and", "or", "s")), "")
        if base != w or nxt in _DEC_NEXT or (k and low[k - 1] in ("as", "an")):
            a = k
            while a > max(k - 2, 0) and low[a - 1] in ("as", "an"):
                a -= 1
            then = " ".join(low[k + 1 : k + 3]).removesuffix("s").split(" ")
            joined = then[0] in ("and", "or") and then[-1] in _DEC
            cut.append((toks[a].start, toks[k + 1 if joined else k].end))  # "oral and spotlight papers"
            if _DEC[base] not in found:
                notes.append(f"Only {_DEC[base]} papers (from '{toks[k].raw}')")
            found.add(_DEC[base])
    return [d for d in DECISIONS if d in found]


def _similar_cue(low: list[str]) -> tuple[int, int] | None:
    """Token span of "similar to", "related to", "papers like", "same topic as", "resembling"."""
    for k, w in enumerate(low):
        if w in ("similar", "related") and low[k + 1 : k + 2] == ["to"]:
            return k, k + 2
        if (w == "like" and (k == 0 or low[k - 1] in _LIKE_PREV)) or w.startswith("resembl"):
            return k, k + 1
        if w == "same" and "as" in low[k + 1 : k + 4]:
            return k, low.index("as", k + 1) + 1
    return None


# Words that open or close a question without saying what it is about ("Which ICLR 2025 papers study",
# "What is", "at ICLR 2025?"): left out of the text that is searched, so "What is LIRS?" searches "LIRS".
_FRAME = frozenset(
    """what which who whom how is are was were does do did can could would should will tell me us about
    give list show find any some there papers paper work works study studies studied research
    iclr 2025 at in the a an of on for from that this these those propose proposes proposed introduce
    introduces recent new novel i we you please explain describe summarize summarise overview want wants
    need looking am after""".split()
)


_CONTRACTION = {"m": "am", "re": "are", "ve": "have", "ll": "will", "d": "would"}
_CONTRACTED = re.compile(r"\b(I|we|you|they)['’](m|re|ve|ll|d)\b", re.I)


def strip_frame(text: str) -> str:
    """The text without its leading and trailing question framing (unchanged if nothing else is left)."""
    text = unicodedata.normalize("NFC", text)  # the text word_spans' positions refer to
    # "I'm an epidemiologist …" is framed by "I am an", not by "I" before a stray "m"
    text = _CONTRACTED.sub(lambda m: f"{m.group(1)} {_CONTRACTION[m.group(2).lower()]}", text)
    spans = [m.span() for m in word_spans(text)]
    words = [fold(text[a:b]) for a, b in spans]
    i, j = 0, len(spans)

    def joined(k: int) -> bool:  # "in-context", "state-of-the-art": part of a hyphenated word
        a, b = spans[k]
        return text[b : b + 1] == "-" or (a > 0 and text[a - 1] == "-")

    while i < j and (words[i] in _FRAME or words[i] in LEADING_FRAME) and not joined(i):
        i += 1
    while j > i and words[j - 1] in _FRAME and not joined(j - 1):
        j -= 1
    if i == j:
        return text.strip()
    end = spans[j - 1][1]
    while end < len(text) and text[end] in ")]":  # "… (not plain TTS)?": the aside stays closed
        end += 1
    return text[spans[i][0] : end].strip()


def parse(question: str, catalog: Catalog) -> QueryIntent:
    """The intent of a question: authors, decisions, named papers, an anchor for "similar to", list or one."""
    q = unicodedata.normalize("NFC", question or "")
    toks = _tokens(q)
    low = [t.low for t in toks]
    notes: list[str] = []
    cut: list[tuple[int, int]] = []
    spans = _authors(catalog, toks, q, notes, cut)
    authors = list(dict.fromkeys(a for _, _, found in spans for a in found))
    pids = {p for a in authors for p in catalog._by_author[a]}
    decisions = _decisions(toks, notes, cut)

    in_names = {k for i, j, _ in spans for k in range(i, j)}
    named = {p: v for p, v in catalog._match_named(toks, q).items() if v[1] not in in_names}
    cue, similar_to = _similar_cue(low), None
    # a short heading ("object-centric representation learning") names a paper by a run of five or more
    # of its title's words ("sparse attention kernels for long context"), not fewer
    heading = not is_question(q) and len(low) <= 6 and _is_list(low, q)
    if not cue and (asks_papers(q) or heading):
        # "Which papers apply large language models to tabular data?": a run of a title's words is the
        # topic such papers share, not one paper named; a name or a quoted title still names one
        least = NAME_SCORE if asks_papers(q) else RUN_SCORE + HEADING_RUN
        named = {p: v for p, v in named.items() if v[0] >= least}
    ranked = sorted(named, key=lambda p: (-named[p][0], catalog._order[p]))
    if cue:
        similar_to = next((p for p in ranked if named[p][1] >= cue[1]), None)
        if similar_to:
            notes.append(f"Papers similar to '{_short(catalog.title(similar_to))}'")
        else:
            cut.append((toks[cue[0]].start, toks[cue[1] - 1].end))
            notes.append(
                f"No stored paper follows '{q[toks[cue[0]].start : toks[cue[1] - 1].end]}': a topic search"
            )
    notes += [f"Names the paper '{_short(catalog.title(p))}'" for p in ranked[:3] if p != similar_to]
    if len(ranked) > 3:
        notes.append(f"… and {len(ranked) - 3} more named papers")

    if similar_to:
        search_text = catalog.title(similar_to)
    elif cut:
        search_text = _cut(q, cut)
        search_text = strip_frame(search_text) if content_stems(search_text) else ""
    else:
        search_text = strip_frame(q)
    if authors or similar_to:
        kind, list_question = ("author" if authors else "similar"), True
    elif ranked:
        kind, list_question = "named", bool(set(low) & _NAMED_LIST)
    else:
        list_question = _is_list(low, q)
        kind = "topic" if list_question else "single"
    return QueryIntent(
        kind=kind,
        list_question=list_question,
        search_text=search_text,
        authors=authors,
        author_paper_ids=[p for p in catalog.ids if p in pids],
        decisions=decisions,
        named_ids=ranked,
        similar_to=similar_to,
        notes=notes,
    )


_QUESTION_START = re.compile(
    r"^\W*(?:which|what|how|why|who|whom|whose|when|where|is|are|was|were|does|do|did|has|have|can|could|"
    r"name|list|in\s+which|on\s+which|exactly)\b",
    re.I,
)


def is_question(text: str) -> bool:
    """A question (wh-word, auxiliary verb or question mark), not a description of a paper."""
    return bool(_QUESTION_START.search(text)) or text.rstrip().endswith("?")

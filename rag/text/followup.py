"""Follow-ups about the papers a conversation just showed: what they refer to and what they ask.

A chat answer shows numbered papers: the listed ones ([1]..[k]), then related ones. A follow-up
can point at them by ordinal ("the second one", "the last two"), by marker ("[3]", "3 and 5",
"paper 4"), by a name from a title ("the SAEBench one") or by pronoun ("these", "it"), and ask
- `metadata`: authors, decision, link or title (answered from the stored metadata),
- `detail`: something about their content (answered from their abstracts only),
- `narrow`: which of them meet a filter ("only the orals", "which of these use RL?"),
- `compare`: a side-by-side of their problem, method, data and result,
- `similar`: more papers like one of them (a new search),
- `show_all`: the rest of a counted list (the list's question again, every matching paper).
Anything else is a new question, answered as one.

The conversation's state (`Thread`: the list on screen, the papers the last turn was about, the
question the list answers) is read back from its history, turn by turn, with the same rules: a
client that keeps only the messages (the OpenAI route) gets the same readings as one that keeps
citations (the API, the UI, `Conversation`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from rag.settings import DECISIONS
from rag.text.citations import CLOSEST_ALONE_HEADING, CLOSEST_HEADING, MARKER, RELATED_HEADING, marker_numbers
from rag.text.terms import STOPWORDS, stem, words

FollowKind = Literal["metadata", "detail", "narrow", "compare", "similar", "show_all", "missing"]
MetaField = Literal["authors", "decision", "link", "title"]
LOCAL_KINDS = frozenset({"metadata", "detail", "narrow", "compare", "missing"})  # no retrieval, no LLM
MAX_COMPARED = 6


class ShownPaper(BaseModel):
    """A paper as an earlier answer showed it: its marker number there, id and title."""

    number: int
    paper_id: str
    title: str
    listed: bool = Field(True, description="In the answer's list (False: shown as related only).")

    def label(self) -> str:
        return f"[{self.number}] {self.title}"


class FollowUp(BaseModel):
    """How a follow-up was read against the papers shown before it."""

    kind: FollowKind
    papers: list[ShownPaper] = Field(description="The shown papers it refers to (narrow: the list it filters).")
    fields: list[MetaField] = Field(default_factory=list, description="metadata: what is asked.")
    ask: str = Field("", description="The question without its references (detail, narrow: the filter).")
    decisions: list[str] = Field(default_factory=list, description="narrow: the decisions kept.")
    kept_ids: list[str] = Field(default_factory=list, description="narrow: the papers that meet the filter.")
    question: str = Field("", description="similar, show_all: the question run as a new search; narrow: the "
                          "question of the list it filters.")
    missing_numbers: list[int] = Field(default_factory=list, description="Markers that name no shown paper.")

    @property
    def paper_ids(self) -> list[str]:
        return [p.paper_id for p in self.papers]

    def note(self) -> str:
        """The reading as shown to people ("about [2] Scaling and evaluating sparse autoencoders")."""
        if self.kind == "missing":
            return "a paper number that the conversation has not shown"
        if self.kind == "narrow":
            if self.decisions:
                return f"the {len(self.papers)} papers shown, keeping those accepted as {' or '.join(self.decisions)}"
            return f"the {len(self.papers)} papers shown, keeping those that state: {self.ask}"
        if self.kind == "show_all":
            return f"every paper that meets: {self.question}"
        names = "; ".join(p.label() for p in self.papers[:MAX_COMPARED])
        lead = {"compare": "comparing", "similar": "papers like"}.get(self.kind, "about")
        if self.kind == "metadata":
            lead = f"{' and '.join(self.fields)} of"
        return f"{lead} {names}"


@dataclass
class Thread:
    """What a conversation has on screen: the current list, the papers of the last turn, the list's question."""

    shown: list[ShownPaper] = field(default_factory=list)
    focus: list[ShownPaper] = field(default_factory=list)
    question: str = ""
    last: FollowUp | None = None  # the previous turn's reading, for "and the third?"
    texts: dict[str, str] = field(default_factory=dict)  # paper id → abstract, for names used in it

    @property
    def listed(self) -> list[ShownPaper]:
        """The answer's list ("these"); the related papers when it listed none (a refusal)."""
        return [p for p in self.shown if p.listed] or list(self.shown)

    def number(self, n: int) -> ShownPaper | None:
        return next((p for p in self.shown if p.number == n), None)


# -- reading an assistant message back ----------------------------------------------------------
_REFERENCE = re.compile(r"^\s*\[(\d{1,6})\]\s+(.*)$")
_LINK_TAIL = re.compile(r"\s+[—-]\s+(https?://\S+)\s*$")


def reference_entries(content: str) -> list[tuple[int, str, str]]:
    """(n, title, url) of each `[n] Title — url` line of an answer's reference list."""
    out = []
    in_refs = False
    for line in content.splitlines():
        bare = line.strip().strip("*").strip().lower().rstrip(":")
        if bare in {"references", "sources"}:
            in_refs = True
            continue
        m = _REFERENCE.match(line) if in_refs else None
        if not m:
            continue
        rest, url = m.group(2).strip(), ""
        link = _LINK_TAIL.search(rest)
        if link:
            rest, url = rest[: link.start()].strip(), link.group(1)
        rest = rest.removesuffix("(attributed)").strip()
        if rest:
            out.append((int(m.group(1)), rest, url))
    return out


def _body(content: str) -> str:
    kept = []
    for line in content.splitlines():
        if line.strip().strip("*").strip().lower().rstrip(":") in {"references", "sources"}:
            break
        kept.append(line)
    return "\n".join(kept)


def shown_papers(
    content: str, cited: Sequence[tuple[int, str, str]], lookup: Callable[[str, str], str | None] | None = None,
) -> list[ShownPaper]:
    """The papers an assistant message showed, in number order: `cited` (number, paper id, title)
    from its citations, else its reference list with ids found by `lookup(title, url)`; numbers
    first cited after a "Related ..." or "Also among the search's first ..." heading are not listed."""
    papers: dict[int, tuple[str, str]] = {n: (pid, title) for n, pid, title in cited}
    if not papers and lookup is not None:
        for n, title, url in reference_entries(content):
            pid = lookup(title, url)
            if pid:
                papers[n] = (pid, title)
    if not papers:
        return []
    body = _body(content)
    # the related papers, and the search's first shown beside the list, are not listed
    cut = min((at for h in (RELATED_HEADING, CLOSEST_HEADING, CLOSEST_ALONE_HEADING) for at in [body.find(h.rstrip(":"))] if at >= 0),
              default=len(body))
    before = {n for m in MARKER.finditer(body[:cut]) for n in marker_numbers(m.group(0))}
    after = {n for m in MARKER.finditer(body[cut:]) for n in marker_numbers(m.group(0))}
    return [
        ShownPaper(number=n, paper_id=pid, title=title, listed=not (n in after and n not in before))
        for n, (pid, title) in sorted(papers.items())
    ]


def thread_of(
    turns: Sequence[tuple[str, str, list[ShownPaper]]],
    texts: Callable[[list[str]], dict[str, str]] | None = None,
) -> Thread:
    """The state after earlier exchanges: (user question, standalone question, papers shown) each;
    `texts(ids)` gives the shown papers' abstracts (names a follow-up may use for them)."""
    thread = Thread()
    for question, standalone, shown in turns:
        if texts is not None and shown:
            thread.texts.update(texts([p.paper_id for p in shown if p.paper_id not in thread.texts]))
        reading = read_followup(question, thread) if thread.shown else None
        if reading is None or reading.kind in ("similar", "show_all"):
            if shown:
                asked = reading.question if reading is not None and reading.kind == "similar" else standalone
                if reading is not None and reading.kind == "show_all":
                    asked = thread.question
                thread = Thread(shown=shown, question=asked or question, texts=thread.texts)
            elif not thread.shown:  # nothing shown yet: "the second one" will point at nothing
                thread.question = standalone or question
        elif reading.kind == "narrow":
            if shown:
                thread = Thread(shown=shown, question=thread.question, last=reading, texts=thread.texts)
            else:
                thread.last = reading
        elif reading.kind != "missing":
            thread.focus = reading.papers
            thread.last = reading
    return thread


# -- reading a follow-up --------------------------------------------------------------------------
_ORDINAL_WORDS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5, "6th": 6, "7th": 7, "8th": 8,
    "9th": 9, "10th": 10, "last": -1, "final": -1, "penultimate": -2,
}
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6}
_NOUN = r"(?:ones?|papers?|works?|stud(?:y|ies)|articles?|entr(?:y|ies)|items?|results?|sources?|refs?|references?|" \
        r"citations?|methods?|approach(?:es)?|options?)"
_ORD = "|".join(sorted(map(re.escape, _ORDINAL_WORDS), key=len, reverse=True))
# "the first two", "the last 3", "top three"
_FIRST_K = re.compile(r"\b(?:the\s+)?(first|last|top)\s+(two|three|four|five|six|[2-6])\b(?!\s*(?:-|steps?|layers?|tokens?))", re.I)
# "the second one", "the 3rd paper", "the second and third", "second to last"
_ORDINAL = re.compile(
    rf"\b(?:(?:the|and|,|or|&)\s+)(?P<w>{_ORD})(?:\s+to\s+last)?(?=\s+{_NOUN}\b|\s*(?:[?.!,;&]|\band\b|\bor\b|\bvs\b|$))"
    rf"|^\s*(?P<w2>{_ORD})\s+{_NOUN}\b"
    rf"|\b(?P<w3>{_ORD})\s+{_NOUN}\b",
    re.I,
)
_MARKERS = re.compile(r"\[\s*(\d{1,3}(?:\s*(?:[,;–-]|and)\s*\d{1,3})*)\s*\]")
_NUMBER_NOUN = re.compile(
    r"\b(?:papers?|nos?\.?|numbers?|#|refs?|references?|sources?|items?|entr(?:y|ies))\s*#?\s*"
    r"(\d{1,3}(?:\s*(?:,|and|&|or)\s*\d{1,3})*)\b", re.I)
_HASH = re.compile(r"#\s*(\d{1,3})\b")
_BARE_LIST = re.compile(r"(?<![\w.\-])(\d{1,2})((?:\s*(?:,|and|&|or|vs\.?|versus|with)\s*\d{1,2}(?![\w%\-]|\.\d))+)", re.I)
_BARE_ONE = re.compile(r"^\W*(?:and|or|what about|how about|same for|now)?\s*(?:for\s+)?(\d{1,2})\s*\W*$", re.I)
_PLURAL_PRONOUN = re.compile(
    r"\b(these|those|them|they|their|theirs|all of them|each of them|each one|each|all three|all two|"
    r"the above|this list|the list|listed ones|both)\b", re.I)
_SINGULAR_PRONOUN = re.compile(
    r"\b(it|its|it's|this one|that one|this paper|that paper|the paper|this work|that work|this study|that study)\b",
    re.I)
NEW_LIST = re.compile(
    r"^\W*(?:(?:and|so|ok(?:ay)?|also|now|then|what about|how about)\W+)*(?:(?:which|what|any|are there|is there|find|"
    r"list|show me|give me|search|search for|look for|recommend)\b.*\b(?:papers?|works?|stud(?:y|ies)|"
    r"research|approaches|methods)\b|(?:papers?|works?|research|anything|any work)\s+(?:on|about|that|which|for|using|"
    r"with|in|from|where)\b)", re.I)
_OF_THESE = re.compile(
    r"\b(?:of|among|from|in)\s+(?:these|those|them|the above|this list|the list|"
    r"the (?:ones|papers|works|results)\s+(?:shown|listed|above|here|you\s+\w+))\b", re.I)
_COMPARE = re.compile(
    r"\b(compare|comparing|comparison|contrast|differ|differs|difference|differences|different from|versus|vs\.?|"
    r"side[- ]by[- ]side|similarities|how do (?:they|these|those) relate|which is (?:better|stronger|faster|best))\b",
    re.I)


def asks_to_compare(question: str) -> bool:
    """Whether the question asks for a comparison ("compare", "versus", "differences", ...)."""
    return bool(_COMPARE.search(question))


_SIMILAR = re.compile(
    r"\b(?:more|others?|papers?|anything|something|works?|ones?)\s+(?:else\s+)?(?:like|similar\s+to|related\s+to|resembling|"
    r"along the lines of)\b|\bsimilar\s+(?:to|papers?|works?|ones?)\b|\bneighbou?rs\b|\brelated\s+(?:work|papers?)\b|"
    r"\blike\s+(?:it|this|that|"
    r"the\s+(?:first|second|third|last)|\[)", re.I)
_SHOW_ALL = re.compile(
    r"^\W*(?:please\s+|ok(?:ay)?\W+|can you\s+|could you\s+)?(?:(?:show|list|give|see|display|print)\s+(?:me\s+|us\s+)?"
    r"(?:all|everything|the rest|more|the full list|the whole list|the remaining|all of them|every one|all the papers|"
    r"all (?:the )?\d+|the other ones|the others|every)|(?:all|more|the rest|all of them|full list|show more|the others)"
    r")\b(?!\s+(?:like|similar|related))|\bevery (?:matching|relevant) paper|\b(?:just|then) show (?:all|everything|them all)\b|"
    r"\ball \d+\b|\b(?:not just|beyond) (?:these|the first|the top)", re.I)
_NARROW = re.compile(
    r"\b(only|just|which of|which ones?|any of|those that|those which|the ones|ones that|filter|keep|exclude|"
    r"excluding|except|drop|remove the|leave out|narrow)\b", re.I)
_FIELDS: dict[str, re.Pattern[str]] = {
    "authors": re.compile(
        r"\b(who(?:'s|’s| is| are| were)? (?:wrote|writes|authored|did|made|behind|the authors?)|"
        r"authors?|authored|written by|by whom|co-?authors?|wrote)\b", re.I),
    "decision": re.compile(
        r"\b(orals?|spotlights?|posters?|decisions?|accepted as|accept(?:ed|ance)\s+(?:status|type|as)|"
        r"presentation (?:type|format))\b", re.I),
    "link": re.compile(
        r"\b(links?|urls?|openreview|pdfs?|where (?:can|do|could) (?:i|we) (?:find|read|get|see)|where to (?:find|read))\b",
        re.I),
    "title": re.compile(r"\b(titles?|called|full name|the name of|what(?:'s| is) (?:it|its name) called)\b", re.I),
}
_DECISION_WORD = re.compile(r"\b(orals?|spotlights?|posters?)\b", re.I)
# "X, or do some just Y?": a choice whose first part is what the list is narrowed to.
_CHOICE = re.compile(r",?\s+or\s+(?:(?:do|does|are|is)\s+)?(?:(?:some|any|others|the others|the rest|they|it)\s+)?"
                     r"(?:(?:of them|of these)\s+)?(?:just|only|merely|simply)\b.*$", re.I | re.S)
_FILLER = re.compile(
    r"\b(?:please|thanks|thank you|can you|could you|would you|tell me|show me|give me|list|i want|i'd like|"
    r"only|just|keep|filter(?: to)?|which of|which ones?|any of|those that|those which|the ones|ones that|"
    r"of these|of them|of those|among these|among them|from these|the above|this list|these|those|them|they|"
    r"ones?|papers?|works?|is|are|was|were|do|does|did|that|which|who|what|here|actually|really|all|any|some|"
    r"(?:work|focus|deal|deals|dealing|focuses|focusing|works|working) (?:on|with)|handle|handles|involve|involves|"
    r"about|make|makes|the|above|shown|listed|both)\b", re.I)


def _ordinal_index(word: str, n: int) -> int | None:
    k = _ORDINAL_WORDS[word.lower()]
    idx = n + k if k < 0 else k - 1
    return idx if 0 <= idx < n else None


def _numbers_in(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d{1,3}", text)]


def _marker_numbers(text: str) -> list[int]:
    out: list[int] = []
    for m in _MARKERS.finditer(text):
        inner = m.group(1)
        for a, b in re.findall(r"(\d{1,3})\s*[–-]\s*(\d{1,3})", inner):
            out.extend(range(int(a), int(b) + 1) if 0 < int(b) - int(a) < 20 else [int(a), int(b)])
        inner = re.sub(r"\d{1,3}\s*[–-]\s*\d{1,3}", " ", inner)
        out.extend(_numbers_in(inner))
    return out


_NAME_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*")


def _distinctive_names(title: str) -> set[str]:
    """Names a person would use for a paper: its name before the colon, acronyms and coined words."""
    names: set[str] = set()
    head = title.split(":", 1)[0].strip() if ":" in title else ""
    if head and len(head.split()) <= 4:
        names.add(head.lower())
    for tok in _NAME_TOKEN.findall(title):
        upper = sum(c.isupper() for c in tok[1:])
        if re.fullmatch(r"[A-Z]{2,}s", tok):
            continue  # LLMs, GNNs: a class of models, not a paper's name
        if (upper >= 1 and not tok.isupper() and len(tok) >= 4) or (tok.isupper() and len(tok) >= 3) or any(
            c.isdigit() for c in tok
        ) and len(tok) >= 3:
            names.add(tok.lower())
    return {n for n in names if n not in STOPWORDS and n not in _GENERIC_ACRONYMS}


_ONE = re.compile(
    r"\b(?:the|that|this)\s+((?:[\w'’.+-]+\s+){0,4}?[\w'’.+-]+)\s+(?:one|paper|work|study|method|approach|"
    r"model|benchmark|article)\b", re.I)
_WEAK = frozenset({"first", "second", "third", "fourth", "fifth", "last", "other", "same", "previous", "next",
                   "above", "new", "main", "whole", "full", "two", "three", "both", "only", "listed", "shown"})


def _stems_of(text: str) -> set[str]:
    """Stems of a text's words; a plural also as its singular ("RNNs" holds "RNN")."""
    out = set()
    for w in words(text):
        if w not in STOPWORDS:
            out.add(stem(w))
            if len(w) > 3 and w.endswith("s"):
                out.add(stem(w[:-1]))
    return out


def _name_refs(question: str, thread: Thread) -> list[ShownPaper]:
    """Shown papers named in the follow-up: by a name from their title or abstract (a coined word,
    an acronym, the part of the title before its colon), unique among the shown papers and not a
    word of the list's own question (which every paper of it shares); or by a phrase ("the
    poisoning one", "the critical batch size paper") whose words only one shown title (else only
    one shown abstract) holds."""
    low = question.lower()
    asked = thread.question.lower()
    hits: dict[int, ShownPaper] = {}
    names = {p.number: _distinctive_names(p.title) | _abstract_names(thread.texts.get(p.paper_id, ""))
             for p in thread.shown}
    counts: dict[str, int] = {}
    for ns in names.values():
        for name in ns:
            counts[name] = counts.get(name, 0) + 1
    for p in thread.shown:
        for name in names[p.number]:
            if counts[name] == 1 and name not in asked and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", low):
                hits[p.number] = p
    phrases = [m.group(1) for m in _ONE.finditer(question)]
    phrases += re.findall(r"[\"“'‘]([^\"”'’]{4,})[\"”'’]", question)
    for phrase in phrases:
        want = _stems_of(phrase) - {w for w in _stems_of(" ".join(_WEAK))}
        if not want:
            continue
        for with_abstract in (False, True):
            found = [p for p in thread.shown
                     if want <= _stems_of(p.title + (" " + thread.texts.get(p.paper_id, "") if with_abstract else ""))]
            if len(found) == 1:
                hits[found[0].number] = found[0]
                break
            if found:
                break  # several papers hold it: not a name
    return [hits[n] for n in sorted(hits)]


_COINED = re.compile(r"(?<![\w-])([A-Z][a-z]*[A-Z][\w-]*|[A-Z]{2,}[a-z]*[\w-]*|[A-Za-z]+-\d[\w.-]*)(?![\w-])")


def _abstract_names(text: str) -> set[str]:
    """Coined names an abstract uses for its own method or benchmark: "(NoPoSplat)", "we propose SCoRe"."""
    out = set()
    for m in re.finditer(r"\(([A-Z][\w-]{2,})\)|\b(?:propose|introduce|present|call|named|dubbed|termed)\s+"
                         r"(?:a\s+|an\s+|the\s+)?(?:\w+\s+){0,3}?\(?([A-Z][\w-]*[A-Z][\w-]*)", text):
        name = m.group(1) or m.group(2)
        if name and _COINED.fullmatch(name):
            out.add(name.lower())
    return {n for n in out if n not in STOPWORDS and n not in _GENERIC_ACRONYMS and len(n) >= 3}


# Acronyms of a field, not of one paper: never taken as a paper's name.
_GENERIC_ACRONYMS = frozenset(
    """llm llms vlm vlms mllm mllms lvlm lvlms lm lms gnn gnns cnn cnns rnn rnns dnn dnns mlp mlps gan gans vae vaes
    rl rlhf sft nlp ai ml gpt qa kv gpu gpus cpu vit vits moe ode odes pde pdes sde sdes ood iid sgd api apis rag
    t2i t2v llava clip bert""".split()
)


def _content(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS and len(w) > 2}


@dataclass
class _Refs:
    papers: list[ShownPaper]
    explicit: bool  # by number or ordinal
    named: bool  # by a name
    plural_pronoun: bool
    missing: list[int]
    spans: list[tuple[int, int]]


_PAIR = re.compile(r"\b(both|(?:these|those|the|them)\s+two|the\s+pair|either)\b", re.I)


def references(question: str, thread: Thread, narrowing: bool = False) -> _Refs:
    """The shown papers a follow-up points at, in the order it names them. A plural pronoun means
    the papers the last turn was about when there were several, else the list ("of these" and a
    narrowing always mean the list)."""
    listed = thread.listed
    missing: list[int] = []
    spans: list[tuple[int, int]] = []
    picked: list[ShownPaper] = []

    def add_number(n: int) -> None:
        p = thread.number(n)
        if p is None:
            missing.append(n)
        elif p not in picked:
            picked.append(p)

    def add_index(i: int | None, said: int = 0) -> None:
        if i is None and 0 < said <= len(thread.shown) and thread.shown[said - 1] not in picked:
            picked.append(thread.shown[said - 1])  # "the fifth one": the related papers follow the list
        elif i is None:
            if said > 0:
                missing.append(said)  # "the fifth one" of three shown
        elif listed[i] not in picked:
            picked.append(listed[i])

    for m in _MARKERS.finditer(question):
        spans.append(m.span())
        for n in _marker_numbers(m.group(0)):
            add_number(n)
    for m in _NUMBER_NOUN.finditer(question):
        if any(a <= m.start() < b for a, b in spans):
            continue
        spans.append(m.span())
        for n in _numbers_in(m.group(1)):
            add_number(n)
    for m in _HASH.finditer(question):
        if not any(a <= m.start() < b for a, b in spans):
            spans.append(m.span())
            add_number(int(m.group(1)))
    for m in _FIRST_K.finditer(question):
        spans.append(m.span())
        k = _COUNT_WORDS[m.group(2).lower()]
        idx = range(len(listed) - k, len(listed)) if m.group(1).lower() == "last" else range(k)
        for i in idx:
            add_index(i if 0 <= i < len(listed) else None)
    for m in _ORDINAL.finditer(question):
        if any(a <= m.start() < b for a, b in spans):
            continue
        word = m.group("w") or m.group("w2") or m.group("w3")
        spans.append(m.span())
        at: int | None = _ordinal_index(word, len(listed))
        if "to last" in m.group(0).lower():  # "second to last"
            at = len(listed) - _ORDINAL_WORDS[word.lower()]
            at = at if at >= 0 else None
        add_index(at, _ORDINAL_WORDS[word.lower()])
    if not picked and not missing:
        bare = _BARE_LIST.search(question)
        if bare and not re.search(r"\b(?:top|over|under|than|about|around)\s*$", question[: bare.start()], re.I):
            spans.append(bare.span())
            for n in _numbers_in(bare.group(0)):
                add_number(n)
        else:
            one = _BARE_ONE.match(question)
            ones = [one] if one else list(_BARE_AFTER.finditer(question))
            for m in ones:
                spans.append(m.span(1))
                add_number(int(m.group(1)))
    if picked and _COMPARE.search(question) and _SINGULAR_PRONOUN.search(question):
        it = (thread.focus[:1] or listed[:1])[0]  # "compare it with the second one"
        if it not in picked:
            picked.insert(0, it)
    explicit = bool(picked or missing)
    named = False
    for p in _name_refs(question, thread):
        if p not in picked:
            picked.append(p)
            named = True
    plural = bool(_PLURAL_PRONOUN.search(question))
    if not picked and not missing:
        pair = _PAIR.search(question)
        if pair and not narrowing:
            picked = list(thread.focus) if len(thread.focus) == 2 else listed[:2]
        elif plural:
            several = len(thread.focus) >= 2 and not narrowing and not _OF_THESE.search(question)
            picked = list(thread.focus) if several else list(listed)
        elif _SINGULAR_PRONOUN.search(question):
            picked = list(thread.focus[:1]) or listed[:1]
    return _Refs(picked, explicit, named, plural and not explicit and not named, missing, spans)


def _strip(question: str, spans: Sequence[tuple[int, int]]) -> str:
    out, pos = [], 0
    for a, b in sorted(spans):
        if a < pos:
            continue
        out.append(question[pos:a])
        pos = b
    out.append(question[pos:])
    return re.sub(r"\s+", " ", " ".join(out)).strip()


def _filter_text(question: str, spans: Sequence[tuple[int, int]]) -> str:
    """What a narrowing follow-up filters by: "which of these use RL?" → "use RL"."""
    text = _strip(question, spans)
    text = _CHOICE.sub("", text)  # "do they propose a fix, or just analyse it?": the first is kept
    text = re.sub(r"(\w)-based\b", r"\1", text)
    text = _FILLER.sub(" ", text)
    text = re.sub(r"[?!.]+", " ", text)
    return re.sub(r"\s+", " ", text).strip(" ,;:")


def _decisions(question: str) -> list[str]:
    found = []
    for m in _DECISION_WORD.finditer(question):
        d = m.group(1).lower().rstrip("s").capitalize()
        if d in DECISIONS and d not in found:
            found.append(d)
    return found


def _fields(question: str) -> list[MetaField]:
    return [f for f, rx in _FIELDS.items() if rx.search(question)]  # type: ignore[misc]


_BARE_AFTER = re.compile(r"\b(?:does|did|is|was|of|from|and|about|to|with)\s+(\d{1,2})\b(?!%|\.\d|[a-z])", re.I)
_WHICH_VERB = re.compile(
    r"^\W*(?:(?:and|ok(?:ay)?|so|now|then)\W+)?which(?:\s+ones?)?\s+(?!papers?\b|works?\b|stud)"
    r"(?:of them\s+)?(?:are|is|use|uses|used|do|does|have|has|involve|work|focus|deal|handle|propose|study|target|"
    r"apply|address|rely|train|evaluate|report|include|introduce|need|require|come|get|got|were|was|can|could|"
    r"tackle|consider|look|make|run|support|show)\b", re.I)
_DROP_DECISION = re.compile(
    r"\b(?:remove|drop|exclude|excluding|except|without|skip|hide|leave out|not|no|non-?)\s*(?:the\s+|any\s+)?"
    r"(?:orals?|spotlights?|posters?)\b", re.I)
_SELECT_DECISION = re.compile(
    r"\b(?:which|any|only|just|the)\b[^?]*\b(?:orals?|spotlights?|posters?)\b|\b(?:orals|spotlights|posters)\b", re.I)


_SHOW_WORDS = _stems_of(
    "show me us all everything the rest more full whole list remaining them every one papers paper other others "
    "found you matching relevant not just these those first top then ok okay please can could give see display "
    "print beyond of 10 20 30 40 50 60 70 80 90 100 listed list results")


def _topic_of(question: str) -> set[str]:
    """The words of a "show all ..." follow-up beyond the asking: a topic, if any."""
    return {w for w in _stems_of(question) - _SHOW_WORDS if not w.isdigit()}


def read_followup(question: str, thread: Thread) -> FollowUp | None:
    """The follow-up's reading against the shown papers, or None: a new question."""
    q = question.strip()
    if not thread.shown:
        # "who wrote the second one?" after an answer that showed no paper points at nothing
        refs = references(q, thread) if thread.question else None
        return FollowUp(kind="missing", papers=[], missing_numbers=refs.missing) if refs and refs.missing else None
    of_these = bool(_OF_THESE.search(q))
    strong_cue = bool(_NARROW.search(q)) or of_these
    narrow_cue = strong_cue or bool(_WHICH_VERB.search(q))
    refs = references(q, thread, narrowing=narrow_cue)
    if refs.missing and not refs.papers:
        return FollowUp(kind="missing", papers=[], missing_numbers=refs.missing)
    decisions = _decisions(q)
    if _SHOW_ALL.search(q) and not decisions and not refs.explicit and not _FIELDS["authors"].search(q) \
            and not _SIMILAR.search(q) and _topic_of(q) <= _stems_of(thread.question) and thread.question:
        return FollowUp(kind="show_all", papers=list(thread.listed), question=thread.question)
    if refs.papers and _SIMILAR.search(q) and (refs.explicit or refs.named or _SINGULAR_PRONOUN.search(q)):
        anchor = refs.papers[0]
        return FollowUp(kind="similar", papers=[anchor], question=f'Papers similar to "{anchor.title}"')
    if not refs.explicit and not refs.named and not of_these and NEW_LIST.search(q) and not refs.plural_pronoun:
        return None  # "which papers study X?": a new question, even with "it" or "they" inside
    if refs.named and (not strong_cue or re.match(r"^\W*(?:does|do|did|is|are|was|were|can|could|how|what|why)\b", q, re.I)):
        narrow_cue = False
    select_decision = bool(decisions) and bool(_SELECT_DECISION.search(q)) and not re.search(
        r"\bwhat\s+(?:decisions?|kind|type)\b", q, re.I)
    if not refs.explicit and not _COMPARE.search(q) and (
        (select_decision and (narrow_cue or not refs.papers or refs.plural_pronoun))
        or (narrow_cue and not decisions and _filter_text(q, refs.spans) and not _FIELDS["authors"].search(q)
            and not _FIELDS["link"].search(q))
    ):
        if decisions:
            if _DROP_DECISION.search(q):  # "remove the posters", "no orals": keep the other decisions
                decisions = [d for d in DECISIONS if d not in decisions]
            return FollowUp(kind="narrow", papers=list(thread.listed), decisions=decisions, ask=" or ".join(decisions),
                            question=thread.question)
        return FollowUp(kind="narrow", papers=list(thread.listed), ask=_filter_text(q, refs.spans),
                        question=thread.question)
    if not refs.papers:
        return _continued(q, thread)
    if _SIMILAR.search(q):
        anchor = refs.papers[0]
        return FollowUp(kind="similar", papers=[anchor], question=f'Papers similar to "{anchor.title}"')
    if _COMPARE.search(q) and len(refs.papers) >= 2:
        return FollowUp(kind="compare", papers=refs.papers[:MAX_COMPARED])
    ask = _strip(q, refs.spans)
    fields = _fields(q)
    if fields and not _asks_content(ask, fields):
        return FollowUp(kind="metadata", papers=refs.papers, fields=fields)
    if thread.last is not None and _elliptical(ask):
        last = thread.last
        if last.kind in ("metadata", "detail", "compare") and not (last.kind == "compare" and len(refs.papers) < 2):
            return last.model_copy(update={"papers": refs.papers})
    return FollowUp(kind="detail", papers=refs.papers, ask=ask)


def _asks_content(ask: str, fields: Sequence[str]) -> bool:
    """Whether a question that mentions a metadata word asks about content ("what do the authors
    find?", "how does the posterior..."): it has words beyond the field's own."""
    if fields == ["authors"] and re.search(r"\bauthors?\s+(?:find|show|propose|claim|argue|use|do|say|report)", ask, re.I):
        return True
    return False


def _elliptical(ask: str) -> bool:
    """ "and?", "what about", "same for": a follow-up that names papers and nothing else."""
    rest = re.sub(r"\b(and|or|what|about|how|same|for|now|then|also|too|the|one|ones|paper|papers|please|ok|okay)\b",
                  " ", ask.lower())
    return not re.search(r"[a-z0-9]", rest)


def _continued(question: str, thread: Thread) -> FollowUp | None:
    """ "and their authors?" after a turn about papers: the same papers, a new metadata field."""
    fields = _fields(question)
    if not fields or len(_content(question)) > 3 or NEW_LIST.search(question):
        return None
    every = re.search(r"\b(all|every|each|links|urls|titles|decisions)\b", question, re.I)
    if thread.focus and (not every or len(thread.focus) >= 2) and not re.search(r"\ball\b", question, re.I):
        papers = list(thread.focus)
    else:
        papers = list(thread.listed)
    return FollowUp(kind="metadata", papers=papers, fields=fields)

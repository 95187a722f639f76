"""Answers to follow-ups about shown papers, from the stored papers alone (no retrieval, no LLM).

- metadata: authors, decision, link or title, exactly as stored;
- detail: each referenced paper's abstract sentences that answer (verbatim), or a plain "its
  abstract does not say" with what the abstract does state;
- narrow: the papers of the list that meet a filter (a decision, or a topic read and judged as a
  new question's constraints are: rag.text.reading, rag.grounding.admission), renumbered as a new list;
- compare: one row per paper, its problem, method, data and result sentences (verbatim, chosen by
  sentence role and cue words; a cell is left empty rather than filled with another kind of sentence).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from rag.grounding.admission import (
    OPPOSITE,
    PaperText,
    Region,
    acronyms,
    expand_units,
    join_adjacent,
    met,
    own_region,
    share,
    states_direction,
    weigh,
)
from rag.grounding.evidence import ASKS_BONUS, ROLE_BONUS
from rag.store.papertable import PaperRow
from rag.text.followup import FollowUp, ShownPaper
from rag.text.query import QueryIntent
from rag.text.reading import DIRECTIONS, FAMILIES, Unit, family_alternatives, read
from rag.text.roles import OWN
from rag.text.terms import PROPOSAL_VERBS, STOPWORDS, TermStats, content_stems, stem, words
from rag.types import Answer, AnswerItem, Citation, ComparisonRow, Source

EmbedFn = Callable[[list[str]], list[list[float]]]
# Words of a detail question that ask nothing by themselves ("how does it work?", "tell me more").
_GENERIC = frozenset(
    """tell more about explain describe summarize summarise summary work works working main idea key
    contribution contributions paper papers one ones it its this that they them their these those do does did
    done what how why which who use uses used using propose proposes proposed approach method methods new
    detail details please me give say says said state states show shows mean means need needs require requires
    have has get gets actually exactly really solve solves solved address addresses tackle tackles include
    includes contain contains cover covers""".split()
)
# Cue words of a question and the words a sentence uses to state that thing.
_CUES: dict[str, tuple[str, ...]] = {
    "dataset": ("dataset", "datasets", "data", "benchmark", "benchmarks", "corpus", "corpora"),
    "data": ("dataset", "datasets", "data", "benchmark", "benchmarks", "corpus", "corpora"),
    "benchmark": ("benchmark", "benchmarks", "dataset", "datasets", "suite", "evaluation", "evaluate", "evaluated"),
    "evaluate": ("evaluate", "evaluated", "evaluation", "experiments", "benchmark", "benchmarks", "tested", "test"),
    "result": ("result", "results", "outperform", "outperforms", "improve", "improves", "achieve", "achieves", "show"),
    "code": ("code", "github", "available", "released", "open-source"),
    "model": ("model", "models", "llm", "llms", "network", "architecture"),
}
_DATA_CUE = re.compile(
    r"\b(datasets?|benchmarks?|corpus|corpora|data sets?|suite|evaluated on|experiments on|trained on|tested on|"
    r"tasks? (?:such as|including)|across \d+|on (?:the )?[A-Z][\w-]+(?: and [A-Z][\w-]+)?)\b")
# Words of a detail question that ask for a kind of sentence rather than a word in it.
_ROLE_CUES: list[tuple[re.Pattern[str], dict[str, float]]] = [
    (re.compile(r"problems?|challenges?|motivations?|motivated?|gaps?|limitations?|issues?|why", re.I),
     {"gap": 0.8, "background": 0.4}),
    (re.compile(r"results?|findings?|finds?|found|performance|performs?|outperforms?|achieves?|improvements?|"
                r"gains?|accuracy|conclusions?|conclude", re.I), {"result": 0.6}),
    (re.compile(r"how|methods?|approach(?:es)?|techniques?|architectures?|algorithms?|works?", re.I),
     {"method": 0.3, "contribution": 0.15}),
    (re.compile(r"contributions?|ideas?|summar(?:y|ize|ise)|novel(?:ty)?|propose[sd]?|about", re.I),
     {"contribution": 0.4}),
]
SECOND_SHARE = 0.9
MAX_WORDS = 80


def source_of(number: int, row: PaperRow) -> Source:
    return Source(number=number, paper_id=row.paper_id, title=row.title, url=row.url, decision=row.decision,
                  authors=list(row.authors), text=row.text, score=0.0, dense_score=None)


def _citation(src: Source, passage: str, kind: str) -> Citation:
    return Citation(**src.ref(), supporting_text=passage, score=0.0, support=1.0, kind=kind)


def _answer(question: str, f: FollowUp, text: str, sources: Sequence[Source], citations: Sequence[Citation],
            mode: str, **fields: object) -> Answer:
    intent = QueryIntent(kind="single" if len(f.papers) == 1 else "topic", list_question=f.kind == "narrow",
                         search_text=question, notes=[f.note()])
    return Answer(question=question, text=text, citations=list(citations), sources=list(sources), mode=mode,
                  llm_called=False, intent=intent, followup=f, retriever="followup", **fields)


def _name(title: str) -> str:
    return title.replace("**", "")


def _join(names: Sequence[str]) -> str:
    names = list(names)
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def metadata_value(row: PaperRow, field: str) -> str:
    """One field of a stored paper, as shown (exactly the stored text)."""
    if field == "authors":
        return _join(row.authors) if row.authors else "(no authors stored)"
    if field == "decision":
        return row.decision or "(no decision stored)"
    if field == "link":
        return row.url or "(no link stored)"
    return row.title


def answer_metadata(question: str, f: FollowUp, rows: dict[str, PaperRow]) -> Answer:
    """Authors, decision, link or title of the referenced papers, from the stored metadata."""
    lines, sources, citations = [], [], []
    for p in f.papers:
        row = rows[p.paper_id]
        src = source_of(p.number, row)
        values = [f"{x}: {metadata_value(row, x)}" for x in f.fields]
        line = f"**{_name(row.title)}** [{p.number}]: " + "; ".join(values)
        lines.append(line if len(f.papers) == 1 else f"- {line}")
        sources.append(src)
        citations.append(_citation(src, "; ".join(values), "metadata"))
    return _answer(question, f, "\n".join(lines), sources, citations, "metadata")


def answer_paper(row: PaperRow, near: Sequence[Source]) -> Answer:
    """A stored paper's page as an answer: its title [1], authors, decision and link, its whole
    abstract as stored, then its nearest papers [2]… (the "similar to" retrieval's)."""
    main = source_of(1, row)
    others = [s.model_copy(update={"number": n}) for n, s in enumerate(near, 2)]

    def about(s: Source) -> str:  # "authors · ICLR 2025 Oral · link"
        parts = (_join(s.authors) if s.authors else "", f"ICLR 2025 {s.decision}" if s.decision else "", s.url)
        return " · ".join(x for x in parts if x) or "(no metadata stored)"

    lines = [f"**{_name(row.title)}** [1]: {about(main)}", "", row.text]  # list items as answers have them
    if others:
        lines += ["", "Nearest papers:"] + [f"- **{_name(s.title)}** [{s.number}]: {about(s)}" for s in others]
    citations = [_citation(s, f"title: {s.title}", "metadata") for s in [main, *others]]
    return Answer(question=f'Paper: "{row.title}"', text="\n".join(lines), citations=citations,
                  sources=[main, *others], mode="metadata", llm_called=False, retriever="named")


def _ask_units(ask: str, title: str) -> tuple[list[Unit], str]:
    """What a detail question asks for, as units a sentence must hold (empty: nothing specific),
    without the words it used to name the paper; and the reading's kind of ask."""
    title_words = {stem(w) for w in words(title)}
    kept = [w for w in words(ask) if w not in STOPWORDS and w not in _GENERIC and stem(w) not in title_words
            and not any(rx.fullmatch(w) for rx, _ in _ROLE_CUES)]
    reading = read(ask, ask)
    units: list[Unit] = []
    for w in kept:
        cue = _CUES.get(w) or _CUES.get(w.rstrip("s"))
        alts = [(stem(x),) for x in cue] if cue else [(stem(w),)]
        units.append(Unit(text=w, alternatives=list(dict.fromkeys(alts))))
    return units, reading.asks


def _quote(paper: PaperText, ask: str, units: Sequence[Unit], asks: str, embed: EmbedFn | None) -> tuple[list[int], bool]:
    """The sentence numbers that answer `ask` about one paper, and whether the abstract states it."""
    bonus = dict(ROLE_BONUS)
    for role, extra in ASKS_BONUS.get(asks, {}).items():
        bonus[role] = bonus.get(role, 0.0) + extra
    wanted: set[str] = set()
    for rx, roles in _ROLE_CUES:
        if any(rx.fullmatch(w) for w in words(ask)):
            for role, extra in roles.items():
                bonus[role] = bonus.get(role, 0.0) + extra
                wanted.add(role)
    n = len(paper.sentences)
    lex = [share(list(units), [paper.sentence_regions[i]]) if units else 0.0 for i in range(n)]
    stated = not units or max(lex, default=0.0) > 0.0
    if units and stated:
        candidates = [i for i in range(n) if lex[i] > 0]
    else:
        mine = OWN | wanted  # "what problem does it solve?" may quote the problem statement
        candidates = [i for i in range(n) if paper.roles[i] in mine] or list(range(n))
    sims = [0.0] * n
    if embed is not None and units and stated and len(candidates) > 1:  # only the sentences in question
        vecs = np.asarray(embed([ask] + [paper.sentences[i] for i in candidates]), dtype=np.float32)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
        for i, x in zip(candidates, vecs[1:] @ vecs[0]):
            sims[i] = float(x)
    scores = [sims[i] + (1.0 * lex[i]) + bonus.get(paper.roles[i], 0.0) for i in range(n)]
    ranked = sorted(candidates, key=lambda i: -scores[i])
    chosen = ranked[:1]
    if len(ranked) > 1 and scores[ranked[1]] >= SECOND_SHARE * scores[ranked[0]] > 0:
        if len(words(paper.sentences[ranked[0]])) + len(words(paper.sentences[ranked[1]])) <= MAX_WORDS:
            chosen.append(ranked[1])
    return sorted(chosen), stated


def answer_detail(question: str, f: FollowUp, rows: dict[str, PaperRow], embed: EmbedFn | None) -> Answer:
    """Each referenced paper's sentences that answer the question, quoted from its abstract only."""
    lines, sources, citations, items = [], [], [], []
    for p in f.papers:
        row = rows[p.paper_id]
        src = source_of(p.number, row)
        paper = PaperText.of(src)
        units, asks = _ask_units(f.ask, row.title)
        chosen, stated = _quote(paper, f.ask, units, asks, embed)
        quote = " ".join(paper.sentences[i] for i in chosen)
        head = f"**{_name(row.title)}** [{p.number}]"
        if stated:
            line = f"{head}: {quote}"
        else:
            asked = ", ".join(u.text for u in units)
            line = f"{head}: its abstract does not say ({asked}). What it does state: {quote}"
        lines.append(line if len(f.papers) == 1 else f"- {line}")
        sources.append(src)
        citations.append(_citation(src, paper.sentences[chosen[0]], "evidence"))
        items.append(AnswerItem(number=p.number, paper_id=row.paper_id, title=row.title,
                                sentences=[paper.sentences[i] for i in chosen],
                                missing=[] if stated else [", ".join(u.text for u in units)]))
    return _answer(question, f, "\n".join(lines), sources, citations, "evidence", items=items)


def _places(paper: PaperText, kind: str) -> list[tuple[int | None, Region]]:
    """Where a paper can state a facet: what it contributes in its title or contribution sentences,
    what it uses (a technique) in its title or own sentences, what it is about anywhere."""
    if kind == "contribution":  # what a contribution sentence says aside, or of others' work, is not it
        return [(None, paper.title)] + [
            (i, own_region(_ASIDE.sub(" ", s))) for i, (s, r) in enumerate(zip(paper.sentences, paper.roles))
            if r == "contribution"
        ]
    return [(None, paper.title)] + [
        (i, g) for i, (g, r) in enumerate(zip(paper.sentence_regions, paper.roles)) if kind != "technique" or r in OWN
    ]


_ASIDE = re.compile(r"\([^()]*\)")


Facets = Sequence[tuple[str, list[Unit]]]
# A word that reads as an adjective ("dynamic", "causal", "generative", "robust"): it narrows the noun after it.
_ADJECTIVE = re.compile(r"^[a-z]{3,}(?:ic|ical|al|ive|ous|able|ible|ful|less|ary)$|^(?:robust|static|sparse|dense|noisy|"
                        r"long|short|small|large|real|open|closed|fast|slow|low|high|deep)$")


def telling_facets(facets: Facets, papers: Sequence[PaperText], asked: str = "",
                   ask: str = "") -> list[tuple[str, list[Unit]]]:
    """A filter's facets without the words that do not tell the list's papers apart: those of the
    list's own question and those every paper states (in a list about RAG, "make RAG cheaper"
    filters by "cheaper"; a facet left without words filters nothing). An adjective of the filter
    is read with the noun after it ("dynamic scenes": both in one place, not "a dynamic subset of
    pixels" in one sentence and "scenes" in another)."""
    question = set(content_stems(asked))
    out = []
    for kind, units in facets:
        if kind == "direction":
            out.append((kind, list(units)))
            continue
        regions = [[g for _, g in _places(p, kind)] for p in papers]
        telling = [
            u for u in join_adjacent(units, ask, lambda a, b: bool(_ADJECTIVE.match(a.text.lower())), together=True)
            if not (u.alternatives and set(u.alternatives[0]) <= question)
            and not (len(papers) > 1 and all(met(u, r) for r in regions))
        ]
        if telling:
            out.append((kind, telling))
    return out


def _meets(paper: PaperText, facets: Facets) -> tuple[bool, int | None]:
    """Whether a paper states each facet's telling words in one place (its title or one sentence, not
    pieced together from words the abstract uses apart), and the sentence that states the first."""
    at: int | None = None
    for kind, telling in facets:
        if kind == "direction":
            if states_direction(paper, telling) < 0.5:
                return False, None
            continue
        places = [(i, g) for i, g in _places(paper, kind) if share(telling, [g]) > FILTER_SHARE]
        if not places:
            return False, None
        if at is None:
            own = [i for i, _ in places if i is not None]
            at = min(own, key=lambda i: (paper.roles[i] not in OWN, i)) if own else None
    return True, at


_EXCLUDE = re.compile(
    r"[,;.!?]?\s*\b(?:but\s+)?(?:not|except(?:\s+for)?|excluding|other than|rather than|skip(?:ping)?|leave out|"
    r"drop|no)\s+(?:the\s+)?(.+?)(?:\s+ones?)?\s*[?.!]*$", re.I)


def split_exclusion(text: str) -> tuple[str, str]:
    """ "mixture of experts, not vehicle routing" → ("mixture of experts", "vehicle routing")."""
    m = _EXCLUDE.search(text)
    if m is None or m.start() == 0:
        return text, ""
    return text[: m.start()].strip(" ,;"), m.group(1).strip()


def _states(row: PaperRow, number: int, phrase: str, stats: TermStats | None) -> bool:
    """Whether a paper is about a phrase (the part of a filter to leave out): a direction ("attacks")
    as its own action, not a mention ("a defense against attacks"); anything else in its title or
    the sentences that state its contribution."""
    paper = PaperText.of(source_of(number, row))
    named = _directions(phrase)
    directions = [fam for fam in DIRECTIONS if fam in named]  # in DIRECTIONS order, as states_direction reads the first
    if directions:
        units = [Unit(text=fam, alternatives=family_alternatives(fam)) for fam in directions]
        return states_direction(paper, units) >= FILTER_SHARE
    reading = read(phrase, phrase)
    units = [u for fc in reading.facets for u in fc.units]
    if stats is not None:
        units = weigh(units, stats, family=False)  # (the asker's own words tell the shown papers apart)
    return bool(units) and share(units, paper.regions(frozenset({"contribution"}))) >= FILTER_SHARE


def _directions(text: str) -> set[str]:
    """The directions (defend, attack, detect …) whose words a text uses."""
    stems = {stem(w) for w in words(text)}
    return {fam for fam in DIRECTIONS if stems & {stem(m) for m in FAMILIES[fam] if " " not in m}}


def _opposed(wanted: str, unwanted: str) -> bool:
    """Whether the two parts of "X rather than Y" name opposite directions (defend / attack)."""
    theirs = _directions(unwanted)
    return any(_directions(" ".join(OPPOSITE.get(fam, ()))) & theirs for fam in _directions(wanted))


_CONTRIBUTES = re.compile(rf"^\W*(?:{'|'.join(PROPOSAL_VERBS)})[sd]?\b", re.I)
# "propose a fix / a new method": nothing asked beyond proposing something.
_METHOD_NOUNS = frozenset("""fix fixes solution solutions remedy remedies method methods approach approaches technique
    techniques algorithm algorithms way ways new novel own cure""".split())
_NEW = frozenset({"new", "novel", "own"})
# A sentence in which the paper proposes something of its own: "we propose X", "we present a new method"
# ("we propose that …" is a claim; "we present results" is no method).
_PROPOSES = re.compile(r"\b(?:propose|proposes|introduce|introduces|develop|develops|design|designs)\b(?!\s+that\b)", re.I)
_PRESENTS = re.compile(r"\b(?:present|presents|offer|offers|formulate|formulates|devise|devises)\b(?!\s+that\b)"
                       r"[^.;]{0,60}?\b(?:method|approach|algorithm|framework|technique|solution|fix|remedy|strategy)\b", re.I)


def _proposes_only(ask: str) -> bool:
    rest = [w for w in words(_CONTRIBUTES.sub(" ", ask)) if w not in STOPWORDS]
    return bool(rest) and all(w in _METHOD_NOUNS for w in rest)


def _proposal(paper: PaperText) -> int | None:
    """The first of the paper's own sentences that proposes a method of its own, if any."""
    for i, (s, r) in enumerate(zip(paper.sentences, paper.roles)):
        if r in OWN and (_PROPOSES.search(s) or _PRESENTS.search(s)):
            return i
    return None


_BASED = re.compile(r"\w[-\s]based\b", re.I)  # "diffusion-based": what a paper uses
_NEGATED = re.compile(r"^\W*(?:not|don'?t|do not|does not|doesn'?t|did not|didn'?t|no)\s+(.+)$", re.I)
FILTER_SHARE = 0.5  # a kept paper states more than this weighted share of the filter's telling words (rare words weigh most)
_USES = re.compile(r"^\W*(?:use|uses|using|used|apply|applies|rely on|relies on|build on|builds on|train with|"
                   r"trained with|leverage|leverages|employ|employs|adopt|adopts|via|with)\b", re.I)


def answer_narrow(question: str, f: FollowUp, rows: dict[str, PaperRow], stats: TermStats | None = None) -> Answer:
    """The list's papers that meet the filter, renumbered [1].. as a new list."""
    papers = [(p, rows[p.paper_id]) for p in f.papers]
    label = f.ask
    kept: list[tuple[ShownPaper, PaperRow, int | None]] = []
    if f.decisions:
        label = " or ".join(f.decisions)
        for p, row in papers:
            if row.decision in f.decisions:
                kept.append((p, row, None))
    else:
        negated = _NEGATED.match(f.ask)
        if negated:  # "which don't use RL": the papers that do not state it
            label = f"not {negated.group(1)}"
            kept = [(p, row, None) for p, row in papers if not _states(row, p.number, negated.group(1), stats)]
            return _narrowed(question, f, papers, kept, label)
        wanted, unwanted = split_exclusion(f.ask)
        if unwanted:
            f = f.model_copy(update={"ask": wanted})
            if not _opposed(wanted, unwanted):  # "defenses rather than attacks": the defence reading decides
                papers = [(p, row) for p, row in papers if not _states(row, p.number, unwanted, stats)]
        contributes = bool(_CONTRIBUTES.match(f.ask))
        if contributes and _proposes_only(f.ask):  # "propose a fix": the papers that propose something
            kept = [(p, row, at) for p, row in papers
                    if (at := _proposal(PaperText.of(source_of(p.number, row)))) is not None]
            return _narrowed(question, f, papers, kept, "proposes a method")
        reading = read(f.ask, f.ask)
        label = reading.describe() or f.ask
        acr = acronyms([f"{row.title}. {row.text}" for _, row in papers])
        uses = bool(_USES.match(f.ask) or _BASED.search(question))
        facets: list[tuple[str, list[Unit]]] = [
            (("technique" if uses else "setting") if fc is reading.topic else fc.kind, expand_units(fc.units, acr))
            for fc in reading.facets if fc.required]
        if contributes:  # "which introduce a benchmark": a benchmark stated as what the paper contributes
            facets = [("contribution" if kind == "direction" else kind, units) for kind, units in facets]
        if not facets:
            return answer_unclear(question, f)
        if stats is not None:
            facets = [(kind, weigh(units, stats, family=False)) for kind, units in facets]
        texts = [PaperText.of(source_of(p.number, row)) for p, row in papers]
        telling = telling_facets(facets, texts, f.question, f.ask)
        # "propose a new quantization method": a method of its own, on that topic
        method = contributes and bool(_METHOD_NOUNS.intersection(words(f.ask)) - _NEW)
        for (p, row), paper in zip(papers, texts):
            ok, at = _meets(paper, telling)
            if ok and method:
                proposed = _proposal(paper)
                ok, at = proposed is not None, (at if at is not None and paper.roles[at] in OWN else proposed)
            if ok:
                kept.append((p, row, at))
    return _narrowed(question, f, papers, kept, label)


def _narrowed(question: str, f: FollowUp, papers: Sequence[tuple[ShownPaper, PaperRow]],
              kept: Sequence[tuple[ShownPaper, PaperRow, int | None]], label: str) -> Answer:
    """The kept papers as a new list [1].., each with the sentence that states the filter."""
    f = f.model_copy(update={"kept_ids": [row.paper_id for _, row, _ in kept]})
    n = len(papers)
    if not kept:
        text = (f"None of the {n} papers shown {'was' if n == 1 else 'were'} accepted as {label}." if f.decisions
                else f"None of the {n} papers shown meets this ({label}): their abstracts do not state it.")
        return _answer(question, f, text, [], [], "evidence")
    lines = [f"{len(kept)} of the {n} papers shown {'was' if len(kept) == 1 else 'were'} accepted as {label}:"
             if f.decisions else f"{len(kept)} of the {n} papers shown {'meets' if len(kept) == 1 else 'meet'} this ({label}):"]
    sources, citations, items = [], [], []
    for number, (_, row, at) in enumerate(kept, start=1):
        src = source_of(number, row)
        paper = PaperText.of(src)
        if at is None:
            own = [i for i, r in enumerate(paper.roles) if r == "contribution"] or [
                i for i, r in enumerate(paper.roles) if r in OWN] or [0]
            at = own[0]
        sentence = paper.sentences[at]
        extra = f" ({row.decision})" if f.decisions else ""
        lines.append(f"- **{_name(row.title)}** [{number}]{extra}: {sentence}")
        sources.append(src)
        citations.append(_citation(src, sentence, "evidence"))
        items.append(AnswerItem(number=number, paper_id=row.paper_id, title=row.title, sentences=[sentence]))
    left = [row for p, row in papers if row.paper_id not in f.kept_ids]
    if left:
        lines.append("")
        lines.append(f"{'Not ' + label if f.decisions else 'Not stated by'}: " + "; ".join(f"_{_name(r.title)}_" for r in left) + ".")
    return _answer(question, f, "\n".join(lines), sources, citations, "evidence", items=items,
                   matching_ids=list(f.kept_ids))


def answer_unclear(question: str, f: FollowUp) -> Answer:
    text = (f"I could not tell what to keep from \"{question.strip()}\". Name a decision (oral, spotlight, "
            "poster) or what the papers should be about or use, e.g. \"which of these use reinforcement learning?\".")
    return _answer(question, f, text, [], [], "refusal", refused=True, refusal_reason="the filter could not be read")


def answer_missing(question: str, f: FollowUp, shown: Sequence[ShownPaper]) -> Answer:
    numbers = [p.number for p in shown]
    have = f"[{min(numbers)}]–[{max(numbers)}]" if numbers else "none"
    asked = ", ".join(f"[{n}]" for n in f.missing_numbers)
    text = (f"The last answer showed papers {have}; there is no {asked} in it. Ask about one of those, "
            "or ask a new question." if numbers else
            f"The last answer showed no paper, so there is no {asked}. Ask a new question.")
    return _answer(question, f, text, [], [], "refusal", refused=True,
                   refusal_reason=f"no paper {asked} was shown")


_ROW_ROLES = {
    "problem": ("gap", "background"),
    "method": ("contribution", "method"),
    "result": ("result",),
}


def comparison_rows(paper: PaperText) -> dict[str, str]:
    """Problem, method, data and result sentences of one abstract (verbatim; "" when it has none)."""
    used: set[int] = set()
    cells: dict[str, str] = {}

    def first(roles: Sequence[str], test: Callable[[int], bool] = lambda i: True) -> str:
        for role in roles:
            for i, r in enumerate(paper.roles):
                if r == role and i not in used and test(i):
                    used.add(i)
                    return paper.sentences[i]
        return ""

    cells["problem"] = first(_ROW_ROLES["problem"])
    cells["method"] = first(_ROW_ROLES["method"])
    cells["result"] = first(_ROW_ROLES["result"])
    data = ""
    for i, s in enumerate(paper.sentences):
        if i not in used and paper.roles[i] in OWN and _DATA_CUE.search(s):
            used.add(i)
            data = s
            break
    cells["data"] = data
    return {k: cells[k] for k in ("problem", "method", "data", "result")}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") if text else "—"


def answer_compare(question: str, f: FollowUp, rows: dict[str, PaperRow]) -> Answer:
    """A side-by-side of the referenced papers: one row each, problem / method / data / result."""
    lines = ["Side by side, in each abstract's own words (— where the abstract does not say):", "",
             "| Paper | Problem | Method | Data | Result |", "|---|---|---|---|---|"]
    sources, citations, items, table = [], [], [], []
    for p in f.papers:
        row = rows[p.paper_id]
        src = source_of(p.number, row)
        paper = PaperText.of(src)
        cells = comparison_rows(paper)
        table.append(ComparisonRow(number=p.number, paper_id=row.paper_id, title=row.title, url=src.url, **cells))
        lines.append(f"| **{_cell(_name(row.title))}** [{p.number}] | " + " | ".join(_cell(v) for v in cells.values()) + " |")
        quoted = [v for v in cells.values() if v]
        sources.append(src)
        citations.append(_citation(src, cells["method"] or (quoted[0] if quoted else paper.sentences[0]), "evidence"))
        items.append(AnswerItem(number=p.number, paper_id=row.paper_id, title=row.title, sentences=quoted))
    return _answer(question, f, "\n".join(lines), sources, citations, "evidence", items=items, comparison=table)


def answer_followup(
    question: str, f: FollowUp, rows: dict[str, PaperRow], shown: Sequence[ShownPaper], embed: EmbedFn | None,
    stats: TermStats | None = None,
) -> Answer:
    """The answer to a follow-up that needs no retrieval (kinds in rag.text.followup.LOCAL_KINDS); `rows`
    holds every referenced paper."""
    if f.kind == "missing":
        return answer_missing(question, f, shown)
    if f.kind == "metadata":
        return answer_metadata(question, f, rows)
    if f.kind == "narrow":
        return answer_narrow(question, f, rows, stats)
    if f.kind == "compare":
        return answer_compare(question, f, rows)
    return answer_detail(question, f, rows, embed)

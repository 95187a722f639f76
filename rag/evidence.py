"""Evidence-first answers: which abstract sentences answer the question, and whether any does.

For every retrieved paper the abstract sentences are scored against the question (cosine of the
bundled embeddings plus the share of the question's words, weighted by rarity, that the sentence and
the title contain). A paper whose best sentence scores too low is left out of the answer. The answer
is then a list, one item per paper: its title, [n], and its one or two best sentences, verbatim.

Answerability uses every signal there is, before any LLM call (`assess`):
- the question names another venue or another ICLR year than the corpus holds;
- it asks for a kind of detail that abstracts do not give (hardware, hyper-parameters, affiliations,
  review scores, tables, venue logistics...) and no retrieved abstract mentions it;
- no retrieved paper contains enough of what it asks (rarity-weighted word coverage, where the words
  that only name a paper, e.g. "LeanAgent", do not count as the ask);
- the best dense similarity is very low and no paper matches its words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .citations import split_sentences
from .query import QueryIntent
from .terms import TermStats, content_stems, entities, stem, words
from .types import Source
from .vectors import unit_rows

EmbedFn = Callable[[list[str]], list[list[float]]]

# Words of a question that ask *how* it is asked rather than what about.
_QUESTION_WORDS = frozenset(
    stem(w)
    for w in """which what how why who whom whose when where does do did is are was were can could
    should would will paper papers any some there about regarding on in tell me give list find show
    papers idea ideas kind kinds type types main key current recent latest state art""".split()
)

# Corpus scope: another venue, or ICLR of another year.
_OTHER_VENUE = re.compile(
    r"\b(NeurIPS|NIPS|ICML|CVPR|ICCV|ECCV|ACL|EMNLP|NAACL|EACL|COLING|AAAI|IJCAI|KDD|COLT|AISTATS|UAI|"
    r"CoRL|SIGGRAPH|SIGIR|WWW|ICRA|IROS|TMLR|JMLR|TACL|Interspeech|ICASSP|MICCAI|WACV|BMVC)\b"
)
_ICLR_YEAR = re.compile(r"\bICLR\s*'?(\d{2,4})\b", re.I)
_ICLR_2025 = re.compile(r"\bICLR\s*'?(2025|25)\b", re.I)

# Kinds of detail an abstract does not give. A question asking for one is answerable only when a
# retrieved abstract actually mentions it (then the evidence shows it).
DETAIL_KINDS: dict[str, tuple[str, ...]] = {
    "hardware or compute": ("gpu", "gpus", "tpu", "tpus", "a100", "h100", "v100", "hardware", "hours", "compute budget"),
    "hyper-parameters": ("learning rate", "batch size", "random seed", "seeds", "epochs", "hyperparameter", "hyper-parameter", "optimizer settings", "weight decay"),
    "affiliations or contacts": ("university", "universities", "affiliated", "affiliation", "affiliations", "institution", "email", "e-mail", "lab", "company"),
    "reviews": ("review score", "review scores", "reviewer", "reviewers", "rating", "ratings", "rebuttal", "meta-review"),
    "tables and figures": ("appendix",),  # and "Table 3", "Figure 2" ... (_NUMBERED below)
    "code size": ("lines of code", "loc", "repository size", "license"),
    "funding": ("funding", "funded", "grant", "grants", "sponsor"),
    "venue logistics": ("acceptance rate", "held", "city", "venue", "dates", "deadline", "registration", "keynote", "workshop", "location", "fee", "cost", "attendees", "sponsors", "accepted papers", "submissions"),
    "citation counts": ("citations", "cited by", "h-index", "citation count"),
}


@dataclass
class Intent:
    """What the question wants: one paper or a list; which retrieved papers it names."""

    kind: Literal["list", "single"]
    named: list[int] = field(default_factory=list)  # source numbers whose name the question uses
    names: list[str] = field(default_factory=list)  # distinctive names in the question (BOFormer, H100)


@dataclass
class Item:
    """One paper's contribution to an evidence answer."""

    number: int
    sentences: list[str]
    score: float
    coverage: float


@dataclass
class Assessment:
    """Whether the sources answer the question, the evidence found, and why."""

    answerable: bool
    reason: str
    intent: Intent
    items: list[Item] = field(default_factory=list)
    coverage: float = 0.0  # best rarity-weighted share of the ask that one paper contains


_LIST = re.compile(
    r"\b(papers|works|studies|approaches|methods|techniques|models|benchmarks|datasets|list|overview|"
    r"survey|what are|are there|any (?:paper|work)s?|trends?|directions?)\b",
    re.I,
)
_SINGLE = re.compile(
    r"\b(?:which|what)\s+(?:iclr\s*2025\s+)?(?:paper|work|study|article|method|model|benchmark|dataset|"
    r"framework|approach|system)\b|\bthe\s+(?:paper|work|study)\b|^\s*(?:what|who)\s+(?:is|was|does|did)\b|"
    r"^\s*how\s+(?:does|did|is)\b",
    re.I,
)


def question_intent(question: str, sources: Sequence[Source], stats: TermStats | None = None) -> Intent:
    """List or single paper, and the retrieved papers the question names (title words or acronym)."""
    kind: Literal["list", "single"] = "single" if _SINGLE.search(question) else "list"
    if kind == "single" and re.search(r"\b(?:papers|works|studies)\b", question, re.I):
        kind = "list"
    qnames = names(question, stats)
    named = [s.number for s in sources if names_paper(question, s.title, qnames)]
    if not named:  # a rare name the abstract uses ("GGMI", "mCoder") names the paper too
        named = [
            s.number for s in sources if any(set(words(n)) <= set(words(s.text)) for n in qnames)
        ]
    return Intent(kind=kind, named=named, names=qnames)


RARE_NAME_DF = 5  # a name used by more papers than this is a common term (GPUs, LLMs, CLIP)


def names(question: str, stats: TermStats | None) -> list[str]:
    """Distinctive names in a question: mixed-case, acronym or alphanumeric tokens (LeanAgent, BOFormer,
    H100, 175B) that few papers use."""
    out = []
    for whole in entities(question, skip_first=False):
        # The distinctive part of a compound: "ARC" of "ARC-style", "175B" of "175B-parameter".
        e = "-".join(p for p in re.split(r"[-/]", whole) if re.search(r"[A-Z]|\d", p) and not p.isdigit())
        if not (re.search(r"[A-Z].*[A-Z]|\d", e) and len(e) >= 3):
            continue
        if re.fullmatch(r"\d+(?:\.\d+)?%?", e) or e.upper() in ("ICLR",) or re.fullmatch(r"(?:19|20)\d\d", e):
            continue
        ws = words(e)
        if stats is not None and ws and all(stats.df.get(stem(w), 0) > RARE_NAME_DF for w in ws):
            continue
        out.append(e)
    return out


def _name_part(title: str) -> str:
    """The short name a title gives its system ("LeanAgent" in "LeanAgent: Lifelong ..."), if any."""
    head = title.split(":", 1)[0].strip() if ":" in title else ""
    return head if head and len(head.split()) <= 3 else ""


def names_paper(question: str, title: str, qnames: Sequence[str] = ()) -> bool:
    """Whether the question names the paper: its short name, a distinctive name in its title, or most
    of the title's content words."""
    qwords = set(words(question))
    name = _name_part(title)
    if name and set(words(name)) <= qwords and any(len(w) >= 3 for w in words(name)):
        return True
    title_words = set(words(title))
    if any(set(words(n)) <= title_words for n in qnames):
        return True
    tstems = set(content_stems(title))
    return len(tstems) >= 3 and len(tstems & set(content_stems(question))) >= 0.8 * len(tstems)


def ask_terms(question: str, named_titles: Sequence[str] = ()) -> list[str]:
    """Stems of what the question asks: its content words minus question words and the words that
    only name a paper it mentions."""
    naming = {s for t in named_titles for s in content_stems(t)}
    out = []
    for s in content_stems(question):
        if s in _QUESTION_WORDS or s in naming or s in out:
            continue
        out.append(s)
    return out


def weighted_coverage(terms: Sequence[str], have: set[str], stats: TermStats) -> float:
    if not terms:
        return 1.0
    total = sum(stats.idf(t) for t in terms)
    return sum(stats.idf(t) for t in terms if t in have) / total if total > 0 else 1.0


def out_of_scope(question: str) -> str | None:
    """A reason when the question is about another venue or year than ICLR 2025."""
    if _ICLR_2025.search(question):
        return None
    m = _OTHER_VENUE.search(question)
    if m:
        return f"the question is about {m.group(1)}, and the corpus holds ICLR 2025 papers only"
    for m in _ICLR_YEAR.finditer(question):
        year = m.group(1)
        if year not in ("2025", "25"):
            return f"the question is about ICLR {year}, and the corpus holds ICLR 2025 papers only"
    return None


_QUESTION_START = re.compile(
    r"^\W*(?:which|what|how|why|who|whom|whose|when|where|is|are|was|were|does|do|did|has|have|can|could|"
    r"name|list|in\s+which|on\s+which|exactly)\b",
    re.I,
)
ASK_WORDS = 8  # a question asks for what its first words name ("Which GPU ...", "What learning rate ...")


def is_question(text: str) -> bool:
    """A question (wh-word, auxiliary verb or question mark), not a description of a paper."""
    return bool(_QUESTION_START.search(text)) or text.rstrip().endswith("?")


def asked_details(question: str) -> list[str]:
    """Detail kinds that abstracts do not usually give, when the question's first words ask for one."""
    if not is_question(question):
        return []
    head = [stem(w) for w in words(question)[:ASK_WORDS]]
    joined = " " + " ".join(head) + " "
    out = []
    for kind, phrases in DETAIL_KINDS.items():
        hits = [p for p in phrases if f" {' '.join(stem(w) for w in words(p))} " in joined]
        if hits:
            out.append(f"{kind}: {hits[0]}")
    m = _NUMBERED.search(question)
    if m:
        out.append(f"tables and figures: {m.group(1)} {m.group(2)}")
    return out


_NUMBERED = re.compile(r"\b(table|figure|fig\.|section|equation|eq\.|theorem|lemma|algorithm)\s*(\d+)", re.I)


def about_the_venue(question: str) -> bool:
    """A question about the conference itself (dates, city, fees, acceptance rate), not its papers."""
    if not re.search(r"\bICLR\b", question, re.I):
        return False
    qstems = {stem(w) for w in words(question)}
    return any(
        {stem(w) for w in words(p)} <= qstems for p in DETAIL_KINDS["venue logistics"]
    )


_QUANTITY = re.compile(
    r"^\W*(?:exactly\s+)?(?:how\s+(?:many|much)|what\s+(?:percentage|fraction|number|amount))\b", re.I
)
_CLAIM = re.compile(
    r"\b(?:(?:shows?|showed|demonstrates?|demonstrated|finds?|found|claims?|establishes?|argues?|"
    r"confirms?|reports?)\s+that|(?:proves?|proved|disproves?|solves?|solved)(?:\s+that)?)\s+"
    r"(?P<claim>.+?)\s*[?.!]*$",
    re.I,
)
# Words that make a claim absolute or negative: a paper must say them for the claim to be its.
_STRONG = frozenset(
    "always never perfectly perfect all none every no not cannot impossible guarantee guarantees "
    "guaranteed proves proof solves solved equals".split()
)


def asserted_claim(question: str) -> str | None:
    """The claim of a "which paper shows that <claim>?" question, if it has one."""
    if not is_question(question):
        return None
    m = _CLAIM.search(question)
    return m.group("claim") if m else None


def claim_coverage(claim: str, source: Source, stats: TermStats) -> float:
    """Best rarity-weighted share of a claim's content words that one abstract sentence (with the
    title) contains; a sentence lacking a name, number or absolute/negative word of the claim counts 0."""
    terms = list(dict.fromkeys(content_stems(claim)))
    best = 0.0
    for sentence in split_sentences(source.text) or [source.text]:
        have_words = set(words(f"{source.title} {sentence}"))
        if any(w in _STRONG and w not in have_words for w in words(claim)):
            continue
        if any(not set(words(e)) <= have_words for e in entities(claim)):
            continue
        have = {stem(w) for w in have_words}
        best = max(best, weighted_coverage(terms, have, stats))
    return best


_CONTRIBUTION = re.compile(r"\b(?:we|our|this (?:paper|work))\b", re.I)


@dataclass
class EvidenceConfig:
    """Weights and thresholds of evidence selection (tuned on the dev sets, see the README)."""

    lexical_weight: float = 0.6
    min_item_score: float = 0.45  # a paper's best sentence must score this to be listed
    relative_item_score: float = 0.7  # ... and at least this share of the best paper's score
    second_sentence_share: float = 0.85  # a second sentence is shown when it scores this share
    max_sentence_words: int = 70
    contribution_bonus: float = 0.08  # "we propose", "our method": what the paper does, not background
    min_item_coverage: float = 0.2  # a listed paper's sentence holds this share of the question's words
    min_coverage: float = 0.5  # least rarity-weighted share of the ask one paper must contain ...
    coverage_dense: float = 0.35  # ... unless the best dense similarity reaches this
    dense_floor: float = 0.15  # below this best cosine, only a near-complete word match answers
    named_missing: float = 8.0  # refuse when the named paper lacks this much (idf-weighted) of the ask
    claim_coverage: float = 0.8  # "which paper shows that <claim>": share of the claim one paper has


def assess(
    question: str,
    sources: Sequence[Source],
    embed: EmbedFn,
    stats: TermStats,
    best_dense: float | None,
    cfg: EvidenceConfig | None = None,
    max_items: int | None = None,
    query: QueryIntent | None = None,
) -> Assessment:
    """Evidence per paper and the answerability decision, without any LLM."""
    cfg = cfg or EvidenceConfig()
    intent = question_intent(question, sources, stats)
    if query is not None:
        if query.named_ids:  # the catalog knows which papers the question names
            ids = {s.paper_id: s.number for s in sources}
            intent.named = list(dict.fromkeys([ids[p] for p in query.named_ids if p in ids] + intent.named))
        if query.list_question:
            intent.kind = "list"
    if not sources:
        return Assessment(False, "nothing was retrieved", intent)
    if query is not None and query.kind in ("author", "similar"):
        return _listing(question, query, sources, embed, intent)
    scope = out_of_scope(question)
    if scope:
        return Assessment(False, scope, intent)
    if about_the_venue(question):
        return Assessment(False, "the abstracts say nothing about the conference itself", intent)
    found = set(words(" ".join(f"{s.title} {s.text}" for s in sources)))
    unknown = [n for n in intent.names if not set(words(n)) <= found] if is_question(question) else []
    if unknown:
        return Assessment(False, f"no retrieved paper mentions {unknown[0]}", intent)
    named_titles = [s.title for s in sources if s.number in intent.named]
    terms = ask_terms(question, named_titles)
    all_terms = ask_terms(question)
    split = [[x for x in split_sentences(s.text) if x.strip()] for s in sources]
    flat = [x for xs in split for x in xs]
    vecs = unit_rows(embed([question] + flat))
    sims = vecs[1:] @ vecs[0]

    coverage = 0.0
    named_missing = float("inf")  # rarity-weighted words of the ask that the named paper lacks
    items: list[Item] = []
    pos = 0
    for source, sents in zip(sources, split):
        own = sims[pos : pos + len(sents)]
        pos += len(sents)
        title_stems = set(content_stems(source.title))
        paper_have = title_stems | {stem(w) for w in words(source.text)}
        # A named paper answers with its own words; others must contain the whole ask.
        paper_terms = terms if source.number in intent.named else all_terms
        coverage = max(coverage, weighted_coverage(paper_terms, paper_have, stats))
        if source.number in intent.named:
            missing = sum(stats.idf(t) for t in paper_terms if t not in paper_have)
            named_missing = min(named_missing, missing)
        scored = []
        for i, sent in enumerate(sents):
            have = title_stems | {stem(w) for w in words(sent)}
            lex = weighted_coverage(all_terms, have, stats)
            bonus = cfg.contribution_bonus if _CONTRIBUTION.search(sent) else 0.0
            scored.append((float(own[i]) + cfg.lexical_weight * lex + bonus, i, lex))
        if not scored:
            continue
        scored.sort(reverse=True)
        best, i0, lex0 = scored[0]
        if source.number in intent.named:
            best += 0.3  # the paper the user named comes first
        chosen = [i0]
        if (
            len(scored) > 1
            and scored[1][0] >= cfg.second_sentence_share * scored[0][0]
            and len(words(sents[i0])) + len(words(sents[scored[1][1]])) <= cfg.max_sentence_words
        ):
            chosen.append(scored[1][1])
        items.append(Item(source.number, [sents[i] for i in sorted(chosen)], best, lex0))

    items.sort(key=lambda it: -it.score)
    by_number = {s.number: s for s in sources}
    shown = intent.named or [it.number for it in items[:3]]
    evidence_text = " ".join(by_number[n].text + " " + by_number[n].title for n in shown)
    evidence_stems = {stem(w) for w in words(evidence_text)}
    for detail in asked_details(question):
        kind, phrase = detail.split(": ", 1)
        if not {stem(w) for w in words(phrase)} <= evidence_stems:
            return Assessment(False, f"abstracts do not give {kind} ({phrase})", intent, coverage=coverage)
    if _QUANTITY.search(question) and not re.search(r"\d", evidence_text):
        return Assessment(False, "the question asks for a number the abstracts do not give", intent, coverage=coverage)
    claim = asserted_claim(question)
    if claim:
        best_claim = max(claim_coverage(claim, s, stats) for s in sources)
        if best_claim < cfg.claim_coverage:
            return Assessment(
                False, f"no retrieved abstract states that {claim} (best share {best_claim:.2f})", intent, coverage=coverage
            )
    if is_question(question) and intent.named and named_missing >= cfg.named_missing:
        return Assessment(
            False, f"the paper it names does not mention what it asks (missing weight {named_missing:.1f})",
            intent, coverage=coverage,
        )
    if not intent.named and coverage < cfg.min_coverage and (best_dense or 0.0) < cfg.coverage_dense:
        return Assessment(False, f"no paper contains what the question asks (coverage {coverage:.2f})", intent, coverage=coverage)
    if (best_dense is None or best_dense < cfg.dense_floor) and coverage < 0.9:
        return Assessment(False, f"low similarity ({best_dense})", intent, coverage=coverage)

    top = items[0].score if items else 0.0
    keep = [
        it
        for it in items
        if it.score >= cfg.min_item_score
        and it.score >= cfg.relative_item_score * top
        and (it is items[0] or it.coverage >= cfg.min_item_coverage or it.number in intent.named)
    ]
    if intent.named:
        keep = [it for it in keep if it.number in intent.named] + [it for it in keep if it.number not in intent.named]
    details = asked_details(question)
    if details:  # a paper is listed for a detail it actually mentions, not for its topic
        wanted = [{stem(w) for w in words(d.split(": ", 1)[1])} for d in details]
        keep = [
            it for it in keep
            if all(w <= {stem(x) for x in words(by_number[it.number].text + " " + by_number[it.number].title)} for w in wanted)
        ]
        if not keep:
            kind, phrase = details[0].split(": ", 1)
            return Assessment(False, f"no listed abstract gives {kind} ({phrase})", intent, coverage=coverage)
    limit = max_items or (3 if intent.kind == "single" else len(keep))
    keep = keep[:limit]
    if not keep:
        return Assessment(False, "no abstract sentence answers the question", intent, coverage=coverage)
    return Assessment(True, "answered from the abstracts", intent, keep, coverage)


def _listing(
    question: str, query: QueryIntent, sources: Sequence[Source], embed: EmbedFn, intent: Intent
) -> Assessment:
    """An author's papers or an anchor's neighbours: every source is an item, with the sentence that
    best matches the topic (or the anchor paper), else its own statement of what it does."""
    topic = query.search_text if query.kind == "similar" else " ".join(ask_terms(query.search_text))
    split = [[x for x in split_sentences(s.text) if x.strip()] or [s.title] for s in sources]
    flat = [x for xs in split for x in xs]
    sims = unit_rows(embed([topic or question] + flat))
    scores = sims[1:] @ sims[0] if topic else [0.0] * len(flat)
    items, pos = [], 0
    for source, sents in zip(sources, split):
        own = [float(x) for x in scores[pos : pos + len(sents)]]
        pos += len(sents)
        ranked = sorted(
            range(len(sents)), key=lambda i: -(own[i] + (0.2 if _CONTRIBUTION.search(sents[i]) else 0.0))
        )
        items.append(Item(source.number, [sents[ranked[0]]], own[ranked[0]], 1.0))
    why = "; ".join(query.notes) or query.kind
    return Assessment(True, why, intent, items, coverage=1.0)

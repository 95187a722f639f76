"""Which retrieved papers meet the question: topic and every constraint, stated in the paper's own sentences.

A paper is *admitted* (listed as an answer) when
- its title and abstract hold most of the topic (rarity-weighted share of the topic's units), and its
  title or its own sentences (contribution, method, result: rag.text.roles) hold at least half of it, so a
  topic named only in the background ("world models" as a metaphor) does not count;
- its title or own sentences state every technique constraint, and its title or any sentence every
  setting (a setting is often set up in the background): each unit of the constraint met by the
  word, a member of its family ("training-free" for "without retraining") or an acronym the papers
  define ("reinforcement learning (RL)");
- a direction ("defend", "detect") is stated in its title or in a contribution or method sentence: a
  paper that breaks defences mentions them in its results, a defence paper in what it proposes.
A paper that meets the topic but misses a constraint is *related*, with the missing constraints named.
Everything here is lexical: it runs on every retrieved candidate before any sentence is embedded.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from rag.text.citations import abstract_sentences
from rag.text.reading import (
    ADVERB,
    ASIDE,
    DEGREE,
    DIRECTIONS,
    NAME_SUFFIXES,
    RESTATES,
    SAY_NOTHING,
    Facet,
    Reading,
    Unit,
    family_alternatives,
)
from rag.text.roles import OWN, Role, sentence_roles
from rag.text.terms import FRAMING, PROPOSING, STOPWORDS, TermStats, one_word, stem, words
from rag.types import Source

# Thresholds chosen on the relevance labels (evals/data/relevance_labels.jsonl, `rag eval --relevance`):
# stricter ones lost more relevant papers than they kept out irrelevant ones.
TOPIC_ALL = 0.5  # share of the topic the whole paper must hold
WHOLE = 0.999  # a share that is all of it (weights are floats)
TOPIC_OWN = 0.3  # ... and its title + own sentences
CONSTRAINT_OWN = 0.5  # share of each constraint its title + own sentences must hold
TOPIC_PART = 0.4  # share of each part of "A of B" the paper must hold by itself ("explanations" of
# "chain-of-thought explanations" is enough; "text" of "LLM-generated text" is not)
# Sentences of what the paper does: where it takes a direction and names the technique it uses
DOING_ROLES: frozenset[Role] = frozenset({"contribution", "method"})
TESTED_ROLES: frozenset[Role] = DOING_ROLES | {"result"}  # where a paper says what it was tested on
TOGETHER = 0.8  # share of the question a low-ranked candidate states in one sentence or its title
# A quantity or a numbered name ("one-trillion-parameter", "175B", "GPT-4", "1-bit") is stated
# exactly or not at all: a topic unit with one is needed by every listed paper; so is a length of
# time ("hour-long videos" are not "minute-long" ones)
QUANTITY_WORD = re.compile(r"\d|\b(?:one|two|three|four|five|ten|hundred|thousand|million|billion|trillion)\b"
                           r"|\b(?:second|minute|hour|day|week|month|year)s?\s+long\b")
# ... unless the question gives a range ("4 bits or fewer", "at most 10 steps")
_RANGE = re.compile(r"\b(?:or\s+(?:fewer|less|lower|more|higher|greater|larger|smaller)|at\s+(?:most|least)|up\s+to|"
                    r"(?:fewer|less|more|greater|lower|higher)\s+than|below|above|under|over|beyond)\b", re.I)

_ACRONYM = re.compile(r"\(\s*([A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9-]*?)s?\s*[),;]")


# The paper's own code, released: "release open source code and data", "our code is available". Its
# "code" is no evidence that the paper is about code (a third of the abstracts say where theirs is).
_RELEASED_CODE = re.compile(
    r"\b(?:releas\w*|open[- ]sourc\w*|shar\w*|provid\w*|publish\w*|make)\s+(?:(?:the|our|all|open[- ]source|"
    r"source|publicly|available)\s+)*(?:code|codes|implementation)\b|"
    r"\b(?:our\s+)?(?:source\s+)?(?:code|codes|implementation)(?=\s+(?:and\s+\w+\s+)?(?:is|are|will\s+be)\s+"
    r"(?:publicly\s+|made\s+|freely\s+|openly\s+)*(?:available|released|open))|"
    # nor is "state" in "state-of-the-art" a state ("optimizer states", "hidden states")
    r"\bstate[\s-]+of[\s-]+the[\s-]+art\b",
    re.I,
)


class Region(NamedTuple):
    """A title or a sentence as stems: the set (a word anywhere) and the sequence (a phrase in order),
    also without its stop words ("reward over-optimization" is the question's "reward optimization":
    the question's phrases keep no stop word)."""

    stems: frozenset[str]
    seq: tuple[str, ...]
    content: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str) -> Region:
        return cls.of_words(words(_RELEASED_CODE.sub(" ", text)))

    @classmethod
    def of_words(cls, ws: Sequence[str]) -> Region:
        seq = tuple(stem(w) for w in ws)
        return cls(frozenset(seq), seq, tuple(s for w, s in zip(ws, seq) if w.lower() not in STOPWORDS))


@dataclass
class PaperText:
    """One paper's sentences, their roles and stems (rag.text.roles, rag.text.terms)."""

    source: Source
    sentences: list[str]
    roles: list[Role]
    sentence_regions: list[Region]
    title: Region
    _own: list[Region] | None = field(default=None, repr=False)
    _stated: list[Region] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, source: Source) -> PaperText:
        sents = abstract_sentences(source.text)
        return cls(
            source=source,
            sentences=sents,
            roles=sentence_roles(sents, source.title),
            sentence_regions=[Region.of(s) for s in sents],
            title=Region.of(source.title),
        )

    @property
    def stems(self) -> list[frozenset[str]]:
        return [r.stems for r in self.sentence_regions]

    @property
    def title_stems(self) -> frozenset[str]:
        return self.title.stems

    def all_stems(self) -> set[str]:
        """The stems of its title and of every sentence: what the paper says anywhere."""
        return set(self.title.stems).union(*self.stems)

    def own_regions(self) -> list[Region]:
        """The title and the own sentences without what is someone else's ("outperforms traditional
        RL methods": RL is what the paper compares with, not what it uses)."""
        if self._own is None:
            self._own = [self.title] + [own_region(s) for s, r in zip(self.sentences, self.roles) if r in OWN]
        return self._own

    def stated_regions(self) -> list[Region]:
        """The title and every sentence without the words someone else owns (`own_region`)."""
        if self._stated is None:
            self._stated = [self.title] + [own_region(s) for s in self.sentences]
        return self._stated

    def regions(self, roles: frozenset[str] | None) -> list[Region]:
        """The title and the sentences with one of `roles` (None: every sentence)."""
        return [self.title] + [g for g, r in zip(self.sentence_regions, self.roles) if roles is None or r in roles]


@dataclass
class Judgement:
    """How one paper meets a reading."""

    number: int
    topic_all: float
    topic_own: float
    constraints: list[float]
    central: float = 0.0  # how much the paper is about the topic: in its title, in several sentences
    uses: bool = False  # a sentence of what the paper does holds the technique the question asks it to use
    missing: list[str] = field(default_factory=list)
    admitted: bool = False
    related: bool = False
    on_topic: bool = False
    mentions: bool = False  # the abstract holds the topic, maybe only in its background

    @property
    def fit(self) -> float:
        """How fully the paper meets the question: its centrality and each constraint's share."""
        values = [self.central] + self.constraints
        return sum(values) / len(values)


def acronyms(texts: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Acronyms the texts define, lower case → the stems of their long form ("rl" → (reinforc, learn))."""
    out: dict[str, tuple[str, ...]] = {}
    for text in texts:
        for m in _ACRONYM.finditer(text):
            acr = m.group(1)
            if acr.lower() in STOPWORDS:  # "operations research (OR)": "or" is in every abstract
                continue
            letters = [c.lower() for c in acr if c.isupper() or c.isdigit()]
            ws = [w for w in re.split(r"[\s-]+", text[max(0, m.start() - 120) : m.start()].strip()) if w][-8:]
            ws = [re.sub(r"^\W+|\W+$", "", w) for w in ws]
            # the shortest tail of the words whose initials spell the acronym's capitals
            for n in range(1, len(ws) + 1):
                tail = ws[-n:]
                initials = [w[0].lower() for w in tail if w]
                if initials == letters[: len(initials)] and len(initials) == len(letters):
                    out.setdefault(acr.lower(), tuple(stem(w.lower()) for w in tail))
                    break
    return out


def expand_units(units: Sequence[Unit], acr: dict[str, tuple[str, ...]]) -> list[Unit]:
    """Units with acronyms and their long forms as alternatives of each other."""
    out = [u.model_copy(deep=True) for u in units]
    by_long = {long: short for short, long in acr.items()}
    for u in out:
        long = acr.get(u.text.lower())
        if long and long not in u.alternatives:
            u.alternatives.append(long)
        # an option written out in full is also met by its acronym ("physics-informed neural networks or
        # PDE-residual losses": "PINNs")
        for alt in list(u.alternatives):
            short = by_long.get(alt) if len(alt) > 1 else None
            if short and (short,) not in u.alternatives:
                u.alternatives.append((short,))
    # consecutive units that spell a defined long form: also met by its acronym
    for short, long in acr.items():
        n = len(long)
        for i in range(len(out) - n + 1):
            spelled = tuple(out[i + k].alternatives[0][0] for k in range(n) if out[i + k].alternatives[0])
            # "diffusion or flow-matching" + "model" is not "diffusion model (DM)": its options stay
            if spelled == long and not any(" or " in out[i + k].text for k in range(n)):
                merged = Unit(
                    text=" ".join(out[i + k].text for k in range(n)),
                    alternatives=[long, (short,)],
                    weight=sum(out[i + k].weight for k in range(n)),
                    part=out[i + n - 1].part,
                    together=True,  # the words in one sentence, or the acronym: not only as that phrase
                )
                out[i : i + n] = [merged]
                break
    return out


def join_adjacent(units: Sequence[Unit], text: str, joins: Callable[[Unit, Unit], bool],
                  together: bool = False) -> list[Unit]:
    """Units with each pair that `joins` accepts and the text writes side by side ("prompt
    injection", "dynamic scenes") made one unit: its words as a phrase (together: in one sentence)."""
    said = f" {' '.join(words(text))} "
    out: list[Unit] = []
    for u in units:
        prev = out[-1] if out else None
        if (prev is not None and " " not in prev.text and " " not in u.text
                and prev.part == u.part
                and f" {' '.join(words(prev.text))} {' '.join(words(u.text))} " in said and joins(prev, u)):
            out[-1] = Unit(text=f"{prev.text} {u.text}", weight=prev.weight + u.weight, together=together, part=u.part,
                           alternatives=[a + b for a in prev.alternatives for b in u.alternatives],
                           needed=prev.needed or u.needed)
            continue
        out.append(u)
    return out


def join_terms(units: Sequence[Unit], text: str, stats: TermStats) -> list[Unit]:
    """Two plain words the question puts side by side, read as one term when the papers write them
    so ("prompt injection": a paper that "injects" knowledge and "prompts" a model is not about it)."""
    phrases = stats.phrases
    if phrases is None:
        return list(units)

    def plain_term(a: Unit, b: Unit) -> bool:
        return (len(a.alternatives) == 1 == len(b.alternatives) and len(a.alternatives[0]) == 1 == len(b.alternatives[0])
                and phrases.is_term(a.alternatives[0][0], b.alternatives[0][0]))

    return join_adjacent(units, text, plain_term)


def weigh(units: Sequence[Unit], stats: TermStats, family: bool = True) -> list[Unit]:
    """Units weighted by rarity (common words count less), times the unit's own factor (a general
    verb such as "reduce" counts a third). The rarity is the lower of the question's own word and
    of the most common other word that meets the unit: "cheaper" is rare, but "efficient" meets it,
    so a paper that says "efficient" has met nothing rare. A word no stored paper uses ("web
    browsers" where papers say "web agents") weighs as a common one: it tells no papers apart.
    Without `family`, the asker's own words alone: how much the question says, not how much a
    paper that meets it has shown."""
    out = []
    for u in units:
        first = u.alternatives[0] if u.alternatives else ()
        w = max((stats.idf(s) if stats.df.get(s, 0) else 1.0 for s in first), default=1.0)
        # (a word's count is exact; a phrase's is not known, and its rarest word's would overstate it)
        if family:
            w = min([w] + [stats.idf(alt[0]) for alt in u.alternatives[1:] if len(alt) == 1 and stats.df.get(alt[0], 0)])
        out.append(u.model_copy(update={"weight": max(w, 0.1) * u.weight}))
    return out


def _is(tok: str, want: str) -> bool:
    """A stem is the wanted one, or ends as a wanted "*suffix" says ("livecodebench" for "*bench")."""
    return tok == want or (want[:1] == "*" and tok.endswith(want[1:]))


def _has(region: Region, alt: tuple[str, ...], together: bool = False) -> bool:
    """A word anywhere in the region; a phrase as consecutive words (together: anywhere in it)."""
    if len(alt) == 1:
        return alt[0] in region.stems or (alt[0][:1] == "*" and any(_is(s, alt[0]) for s in region.stems))
    if not set(alt) <= region.stems:
        return False
    if together:
        return True
    n = len(alt)
    return any(seq[i : i + n] == alt for seq in (region.seq, region.content) for i in range(len(seq) - n + 1))


def met(unit: Unit, regions: Sequence[Region]) -> bool:
    return any(_has(region, alt, unit.together) for alt in unit.alternatives for region in regions)


def share(units: Sequence[Unit], regions: Sequence[Region]) -> float:
    """Weighted share of the units met somewhere in the regions (1.0 without units)."""
    total = sum(u.weight for u in units)
    if total <= 0:
        return 1.0
    return sum(u.weight for u in units if met(u, regions)) / total


def centrality(paper: PaperText, topic: Sequence[Unit]) -> float:
    """0-1: half for a title that holds the topic, half for the number of sentences that hold most of
    it (3 or more: all). A topic mentioned once in passing scores 1/6."""
    if not topic:
        return 1.0
    title = share(topic, [paper.title]) >= TOPIC_ALL
    mentions = sum(1 for g in paper.sentence_regions if share(topic, [g]) >= TOPIC_OWN)
    return 0.5 * title + 0.5 * min(1.0, mentions / 3)


def used_in_its_work(paper: PaperText, topic: Sequence[Unit], roles: Collection[Role] = DOING_ROLES) -> bool:
    """Whether a sentence of what the paper does holds the technique: "this paper introduces DiffPuter,
    a diffusion model combined with the Expectation-Maximization (EM) algorithm", "ISE employs the
    Expectation-Maximization (EM) algorithm" name EM once, and use it."""
    return bool(topic) and any(r in roles and share(topic, [g]) >= TOPIC_OWN
                               for g, r in zip(paper.sentence_regions, paper.roles))


CENTRAL = 0.17  # a title that holds the topic, or a sentence that does
# An example stands for the topic only when few papers use its words (under 2 % of 2,115: "MRI",
# "FSQ", "X-ray"; not "text" or "images", which "AI-generated content (text, images)" gives)
EXAMPLE_IDF = 4.0
WHY_UNSAID = 0.5  # a why-question whose words no candidate states weigh more than this share is not answered


# Words that, just before a direction word, make it someone else's: "bypassing defenses", "existing
# detectors", "evades detection". The paper then states the direction without doing it.
_NOT_OWN = frozenset(
    stem(w) for w in """bypass bypasses bypassing evade evades evading circumvent circumvents break breaks
    breaking existing current prior previous standard common popular typical conventional despite against
    undermine undermines fool fools fooling defeat defeats defeating attack attacks even target targets
    targeting need needs call calls require requires lack lacks without across diverse various several
    multiple many public widely established downstream set sets setting outperform outperforms
    outperforming surpass surpasses surpassing traditional unlike versus mislead misleads misleading deceive
    deceives deceiving stress""".split()
)
# The opposite of a direction: a paper whose title or contribution does the opposite ("we introduce a
# novel attack") does not take the direction, whatever else it mentions.
OPPOSITE = {
    "defend": ("attack", "attacks", "attacking", "attacker"),
    "withstand": ("attack", "attacks", "attacking", "attacker"),
    "attack": ("defense", "defence", "defend", "defending", "guardrail", "detect", "detection", "detecting",
               "mitigate", "mitigating", "mitigation", "protect", "protecting", "protection"),
    "detect": ("attack", "attacks", "evasion", "evade", "evading", "removal", "remove", "forge", "forgery",
               "reduce", "reducing", "mitigate", "mitigating", "mitigation"),
}


def _theirs(toks: Sequence[str], i: int) -> bool:
    """Whether the word at i is someone else's: after "bypassing", "against", "existing", "across" …
    (four words before it), or a name such as "LiveCodeBench" that is not proposed right there ("we
    propose LiveCodeBench" is the paper's own; "results on LiveCodeBench" is not)."""
    if _NOT_OWN.intersection(toks[max(0, i - 4) : i]):
        return True
    return toks[i].endswith(NAME_SUFFIXES) and not PROPOSING.intersection(toks[max(0, i - 3) : i])


# Words that, just before "efficient" or "speed", name another resource than time: a
# "parameter-efficient" or "data-efficient" method, a "dual-speed" system, is not a faster one.
_OTHER_RESOURCE = {
    "accelerate": (frozenset(stem(w) for w in ("efficient", "efficiency", "speed", "fast")),
                   frozenset(stem(w) for w in ("parameter", "parameters", "data", "sample", "samples", "label",
                                               "labels", "annotation", "dual", "slow"))),
}


def own_mentions(text: str, alts: Sequence[tuple[str, ...]], family: str = "") -> bool:
    """Whether the text states one of the phrasings as its own action (`_theirs` says when not; for
    a direction `family`, `_OTHER_RESOURCE` says when a word means another resource)."""
    toks = [stem(w) for w in words(text)]
    weak, others = _OTHER_RESOURCE.get(family, (frozenset(), frozenset()))
    for alt, i in _phrase_at(toks, alts):
        if not _theirs(toks, i) and not (len(alt) == 1 and alt[0] in weak and i and toks[i - 1] in others):
            return True
    return False


def _phrase_at(toks: Sequence[str], alts: Sequence[tuple[str, ...]]) -> list[tuple[tuple[str, ...], int]]:
    """Each phrasing of `alts` and where it starts in the stems `toks` (its stems in a row)."""
    return [(alt, i) for alt in alts for i in range(len(toks) - len(alt) + 1)
            if all(_is(t, w) for t, w in zip(toks[i : i + len(alt)], alt))]


def own_region(text: str) -> Region:
    """A sentence as stems without the words someone else owns ("… results across HumanEval+ and
    LiveCodeBench": the benchmarks are the ones the paper runs, not the one it introduces)."""
    ws = words(text)
    toks = [stem(w) for w in ws]
    return Region.of_words([w for i, w in enumerate(ws) if not _theirs(toks, i)])


def states_direction(paper: PaperText, units: Sequence[Unit]) -> float:
    """1.0 when the title or a contribution/method sentence states the direction as the paper's own
    action, and the title and first contribution do not state the opposite one instead; else 0.0."""
    alts = [a for u in units for a in u.alternatives]
    family = units[0].text if units else ""
    opposite = [(stem(w),) for w in OPPOSITE.get(family, ())]
    first = [paper.source.title] + [s for s, r in zip(paper.sentences, paper.roles) if r == "contribution"][:1]
    if opposite and any(own_mentions(t, opposite) for t in first) and not any(own_mentions(t, alts) for t in first):
        return 0.0  # "RobustKV: Defending ... against Jailbreak Attacks" is no attack paper
    if family in ("attack", "detect") and own_mentions(first[0], opposite) and not own_mentions(first[0], alts):
        # a title that names a defence ("Poisoned Sample Detection Against Backdoor Attacks") or a
        # remedy ("Reducing Hallucinations in …") names the paper's side, whatever it finds on the way
        return 0.0
    # an aside in parentheses describes something else ("… on LiveCodeBench (a contamination-free benchmark)")
    body = [ASIDE.sub(" ", s) for s, r in zip(paper.sentences, paper.roles) if r in DOING_ROLES]
    if any(own_mentions(t, alts, family) for t in body):
        return 1.0
    title = ASIDE.sub(" ", paper.source.title)
    if not own_mentions(title, alts, family) or (family != "evaluate" and studied(title, alts)):
        return 0.0
    # a title that names the side ("… Adversarial Robustness of …") while what the paper does and finds
    # is the other side's ("we can successfully break …", "an attacker can hijack …") is no such paper
    done = [ASIDE.sub(" ", s) for s, r in zip(paper.sentences, paper.roles) if r in (*DOING_ROLES, "result")]
    return 0.0 if opposite and sum(own_mentions(t, opposite) for t in done) >= 2 else 1.0


# Words that make what follows them the object of a study: "Dissecting Adversarial Robustness of …",
# "Evaluating the Robustness of …" measure a property; they do not give it.
_STUDIES = frozenset(
    stem(w) for w in """dissect dissecting evaluate evaluating evaluation benchmark benchmarking assess assessing
    understand understanding examine examining analyze analyzing analysis investigate investigating measure
    measuring probe probing rethink rethinking revisit revisiting quantify quantifying""".split()
)


def studied(text: str, alts: Sequence[tuple[str, ...]]) -> bool:
    """Whether each mention of the phrasings in `text` is what a study looks at (a study word up to
    three words before it: "Dissecting Adversarial Robustness", "Evaluating the Robustness")."""
    toks = [stem(w) for w in words(text)]
    found = [i for _, i in _phrase_at(toks, alts)]
    return bool(found) and all(_STUDIES.intersection(toks[max(0, i - 3) : i]) for i in found)


def _forms(word: str) -> str:
    """A noun's singular and plural as a regex alternation ("optimizers" → optimizer|optimizers)."""
    one = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
    return f"{re.escape(one)}|{re.escape(one)}s|{re.escape(one)}es"


@functools.lru_cache(maxsize=64)
def _role_pattern(role: str) -> re.Pattern[str]:
    a, _, b = role.partition(" as ")
    # "diffusion models as priors" is said "diffusion priors" too; "priors or reward designers": any
    who = "|".join(_forms(w) for w in a.split() if w != "or").replace(r"\-", r"[\s-]")
    what = "|".join(_forms(o) for o in b.split(" or "))
    return re.compile(
        rf"\bas\s+(?:an?\s+|the\s+)?(?:{what})\b|\b(?:{who})[\s-]+as[\s-]+(?:an?[\s-]+)?(?:{what})\b|"
        rf"\b(?:{who})[\s-]+(?:(?:based|driven|powered|guided)\s+)?(?:{what})\b",
        re.I,
    )


def states_role(paper: PaperText, role: str) -> float:
    """1.0 when the paper says that A plays the role B ("A as B" of the reading): "… as (an) B",
    "A-as-a-B", "A B", "A-based / -driven / -powered B", in its title or any sentence; else 0.0.
    Words, not stems: "formulated as an optimization problem" is no optimizer, "LLM optimization"
    no LLM optimizer."""
    pattern = _role_pattern(role)
    return 1.0 if any(pattern.search(t) for t in [paper.source.title, *paper.sentences]) else 0.0


def contribution_kind(paper: PaperText) -> str:
    """What the paper mainly contributes, read from its title and first contribution sentence:
    "benchmark" (a benchmark or dataset of its own: "RM-Bench", "we introduce X, a benchmark"),
    "evaluation" (an evaluation or benchmarking study: "How to Evaluate Reward Models"), else
    "method". Only the main contribution counts: a model paper that also releases its training
    corpus is a model paper."""
    if _named_benchmark(paper.source.title):
        return "benchmark"
    first = [paper.source.title] + [s for s, r in zip(paper.sentences, paper.roles) if r == "contribution"][:1]
    for kind, alts in (("benchmark", family_alternatives("benchmark")), ("evaluation", _EVALUATION)):
        if any(own_mentions(t, alts) for t in first):
            return kind
    return "method"


# An evaluation study's own words ("test", "measure" name methods too: "test-time adaptation")
_EVALUATION: list[tuple[str, ...]] = [
    (stem(w),) for w in ("evaluate", "evaluates", "evaluating", "evaluation", "evaluations", "benchmarking",
                         "assess", "assessing", "assessment", "audit", "auditing")
]


KIND_GROUP = {"benchmark": "a benchmark or evaluation", "evaluation": "a benchmark or evaluation", "method": "a method or model"}


# Words that make a side of "A and B" a clause, not a noun phrase
_CLAUSE_WORDS = frozenset("they them it we what which who how where when".split())


def and_sides(topic: Sequence[Unit], text: str) -> list[list[Unit]]:
    """The two noun phrases of an "A and B" topic, when each has two units or more ("attention sinks and
    extreme activation outliers"): either is a topic of its own. "speech and audio generation" shares
    its head, so it has no sides. The two wordings of "A, i.e. B" are sides too ("the privacy of
    trained models, i.e. recovering private training data")."""
    said = words(text)
    sep = next((w for w in RESTATES if w in said), "and")
    if said.count(sep) != 1 or not topic:
        return []
    if sep == "and" and _CLAUSE_WORDS.intersection(said):
        return []  # two clauses are one thing asked ("ignore the context they are given and answer from what they memorized")
    cut = said.index(sep)
    before = {stem(w) for w in said[:cut]}
    # the units before "and", in the order the topic has them: a head both sides repeat ("place cells and grid
    # cells") is the first side's and the second's (taken by its words, the second side was "grid" alone)
    first: list[Unit] = []
    for u in topic:
        if not (u.alternatives and set(u.alternatives[0]) <= before):
            break
        first.append(u)
    second = list(topic[len(first):])
    return [first, second] if len(first) >= 2 and len(second) >= 2 else []


def _whole(side: Sequence[Unit], regions: Sequence[Region]) -> float:
    """The share of one side of the topic the regions hold, when they hold two of its units (both of a
    side of two): "GNN" alone is no side of "GNN pretraining and cross-graph transfer" (any GNN paper
    was listed); "outlier activations" is one of "massive outlier activations". Half of the whole topic
    is judged as before."""
    held = sum(met(u, regions) for u in side)
    return share(side, regions) if held >= min(2, len(side)) else 0.0


def judge(paper: PaperText, topic: list[Unit], constraints: list[tuple[Facet, list[Unit]]],
          sides: Sequence[list[Unit]] = (), given: Sequence[list[Unit]] = (), used: bool = False,
          tested: bool = False) -> Judgement:
    """How the paper meets the topic (or one side of it) and each constraint. `given`: per constraint,
    the rare examples the question gives of it; a paper that states one meets it. `used`: the topic is
    a technique the papers use, met by a sentence of what the paper does (`used_in_its_work`); `tested`:
    data or a domain the papers are tested on, met by a sentence of what it does or finds ("We also show
    that ORC-ManL can be used to improve clustering … of single-cell RNA sequencing data")."""
    every = paper.regions(None)
    own = paper.regions(OWN)
    j = Judgement(paper.source.number, max([share(topic, every)] + [_whole(s, every) for s in sides]),
                  max([share(topic, own)] + [_whole(s, own) for s in sides]), [],
                  max([centrality(paper, topic)] + [centrality(paper, s) for s in sides]),
                  uses=(used or tested) and any(used_in_its_work(paper, t, TESTED_ROLES if tested else DOING_ROLES)
                                                for t in [topic, *sides]))
    for k, (facet, units) in enumerate(constraints):
        if facet.kind == "direction":
            value = states_direction(paper, units)
        elif facet.kind == "role":
            value = states_role(paper, facet.text)
        else:  # a setting is often set up in the background; a technique is what the paper does
            regions = every if facet.kind == "setting" else paper.own_regions()
            value = share(units, regions)
            if k < len(given) and any(met(u, regions) for u in given[k]):
                value = 1.0
        j.constraints.append(value)
        if value < CONSTRAINT_OWN and facet.required:
            j.missing.append(facet.label)
    # "watermarks of LLM-generated text": each part met by itself
    parts = [[u for u in topic if u.part == k] for k in (0, 1)] if any(u.part for u in topic) else []
    j.mentions = not topic or (j.topic_all >= TOPIC_ALL and all(share(p, every) >= TOPIC_PART for p in parts))
    topic_ok = j.mentions and (not topic or (j.topic_own >= TOPIC_OWN and (j.central >= CENTRAL or j.uses)))
    j.on_topic = topic_ok
    j.admitted = topic_ok and not j.missing
    j.related = topic_ok and bool(j.missing)
    return j


@dataclass
class Admission:
    """Every candidate's judgement, and the facets as weighted for this store."""

    judgements: dict[int, Judgement]
    papers: dict[int, PaperText]
    topic: list[Unit]
    constraints: list[tuple[Facet, list[Unit]]]
    says: float = 0.0  # how much the topic's own words say: their rarity, summed

    def admitted(self) -> list[int]:
        return [n for n, j in self.judgements.items() if j.admitted]

    def units(self) -> list[Unit]:
        return self.topic + [u for _, us in self.constraints for u in us]

    def together(self, number: int) -> float:
        """The largest share of the whole question (topic and constraints) one sentence or the title
        of the paper states by itself."""
        paper, units = self.papers[number], self.units()
        return max(share(units, [g]) for g in [paper.title, *paper.sentence_regions])

    def hold_deep(self, order: Sequence[int], depth: int, keep: Collection[int] = ()) -> list[int]:
        """Of the candidates retrieval ranks past `depth` in `order`, those admitted on words scattered
        over their abstract are not counted when a higher-ranked paper is admitted: a low-ranked paper
        is listed when one sentence or its title states the question (`TOGETHER`), or when nothing
        ranked above it meets the question. Measured on the relevance labels (three sets): past the
        15th candidate 8 of 27 listed papers were judged relevant, against 200 of 264 in the first
        ten. `keep`: papers never held (the ones the question names)."""
        if not any(self.judgements[n].admitted for n in order[:depth]):
            return []
        held = [n for n in order[depth:]
                if n not in keep and self.judgements[n].admitted and self.together(n) < TOGETHER]
        for n in held:
            self.judgements[n].admitted = False
        return held

    def hold_partial(self, order: Sequence[int], depth: int, keep: Collection[int] = ()) -> list[int]:
        """A short request that is one noun phrase ("spatial audio generation") narrows its head by each
        word before it: when an admitted candidate states all of it, the admitted ones past `depth` in
        `order` that state the head but lack a modifier ("audio generation") are related, each missing the
        words it lacks. The first `depth` stay: the search ranks them first on the whole phrase. A paper
        lacking the head is not held ("neural PDE solvers": a neural operator for PDEs solves them), nor
        one lacking a word that says nothing of its own ("deep learning weather forecasting")."""
        units = [u for u in self.topic if u.weight > 0]
        if len(units) < 2 or not any(self.judgements[n].admitted and self.judgements[n].topic_all >= WHOLE
                                     for n in order):
            return []
        head, modifiers = units[-1], [u for u in units[:-1] if not set(words(u.text)) <= SAY_NOTHING]
        held = []
        for n in order[depth:]:
            j = self.judgements[n]
            if n in keep or not j.admitted:
                continue
            every = self.papers[n].regions(None)
            lacking = [u.text for u in modifiers if not met(u, every)]
            if lacking and met(head, every):
                j.admitted, j.related = False, True
                j.missing += lacking
                held.append(n)
        return held

    def admit_first(self, order: Sequence[int], depth: int) -> list[int]:
        """Of the first `depth` candidates of the search, those that hold the topic and miss no constraint,
        though not in their own sentences (it is their setting, said in the background: "Graph neural
        networks … Yet …" of a paper whose own sentences name its method), are admitted: two rankers
        agree on them. On the 26 writers' sets (484 questions, false premises aside): 65 such candidates
        among the first three, 41 on the writer's list and 7 partly (63 %); at ranks 4-5, 28 of 60 (47 %),
        about as many as of the papers admitted at ranks 6-10 (44 %).
        Only beside a paper that states the topic as its own: when none does, the topic is named only in
        passing, and that is said (`rag.grounding.evidence.assess`)."""
        if not any(self.judgements[n].admitted for n in order):
            return []
        first = [n for n in order[:depth] if (j := self.judgements[n]).mentions and not j.on_topic
                 and not j.missing and not j.admitted]
        for n in first:
            j = self.judgements[n]
            j.admitted = j.on_topic = True
            j.related = False
        return first

    def kinds(self) -> set[str]:
        """What a paper must be, beyond what it is about: the question's directions ("must defend") and the
        kind of paper it asks for ("must introduce a benchmark", "a study, not a method")."""
        return {f.label for f, _ in self.constraints if f.kind == "direction"} | {NOT_A_STUDY, *NOT_A_BENCHMARK.values()}

    def barred(self, numbers: Collection[int]) -> set[int]:
        """Those of `numbers` that miss more than a setting: a direction or kind (`kinds`), a technique or
        a word every listed paper must state ("vision-language models" of a defence of them). A paper states
        those in its own words or not at all (a setting is often worded otherwise: "at test time" of an
        eviction policy), and no second opinion on its topic lists it."""
        settings = {f.label for f, _ in self.constraints if f.kind == "setting"}
        needed = [u for u in self.topic if u.needed]  # (an off-topic paper misses nothing: it is judged no further)
        return {n for n in numbers if set(self.judgements[n].missing) - settings
                or not all(met(u, self.papers[n].stated_regions()) for u in needed)}

    def admit_by_example(self, found: Collection[int], of_constraint: Collection[int] = ()) -> list[int]:
        """The candidates the search ranks first for one of the examples the question gives (`found`,
        rag.text.reading.examples_given: "(Adam or Shampoo variants, spike-aware resets, …)" finds SOAP
        and SPAM, which never say "new optimizer") are admitted, unless they do the other thing the
        question asks ("must defend") or are another kind of paper ("this paper is a benchmark"): two
        searches agree on them. Measured on 33 writers' sets (592 questions, false premises aside): such
        candidates among the first 20 that the reading did not list, 107 on the writers' lists and 57
        not (65 %, against 64 % of what the answers listed); past the 20th, 14 and 19. A paper found only
        by examples of a constraint ("GNNs on molecules (e.g. QM9, ZINC)": any QM9 paper) must still hold
        the topic somewhere (`of_constraint`)."""
        kinds = self.kinds()
        admitted = []
        for n in found:
            j = self.judgements.get(n)
            if j is None or j.admitted or kinds.intersection(j.missing) or (n in of_constraint and not j.mentions):
                continue
            j.admitted = j.on_topic = True
            j.related = False
            j.missing = []
            admitted.append(n)
        return admitted


def _distinct(units: list[Unit]) -> list[Unit]:
    """One unit for each thing named: "LLMs and LLM agents" names LLMs once."""
    seen: set[tuple[tuple[str, ...], ...]] = set()
    out = []
    for u in units:
        key = tuple(u.alternatives)
        if key not in seen:
            seen.add(key)
            out.append(u)
    return out


def admit(reading: Reading, sources: Sequence[Source], stats: TermStats) -> Admission:
    """Judge every source against the reading (lexical, no embeddings)."""
    papers = {s.number: PaperText.of(s) for s in sources}
    defined = {n: acronyms([f"{s.title}. {s.text}"]) for n, s in zip(papers, sources)}
    acr: dict[str, tuple[str, ...]] = {}
    for own in defined.values():  # the first paper to define an acronym gives its long form
        for short, long in own.items():
            acr.setdefault(short, long)
    joined = join_terms(expand_units(reading.topic.units, acr), reading.topic.text, stats) if reading.topic else []
    if len(joined) == 1 and joined[0].together and not reading.constraints and len(joined[0].alternatives[0]) == 2:
        # a topic that is only a two-word term the papers define ("neural processes": "Neural Processes (NPs)") is
        # met by the term or its acronym, not by its two words apart ("neural dynamics … processes"); four words
        # in one sentence say more ("message passing … graph neural networks" of MPNNs)
        joined = [joined[0].model_copy(update={"together": False})]
    topic = _distinct(weigh(joined, stats))
    # (a constraint's units are weighed by their own words: one met by a common word of its family is
    # met, and its share names the part a paper lacks: "llms" of "in continual learning of LLMs")
    constraints = [(f, weigh(join_terms(expand_units(f.units, acr), f.text, stats), stats, family=False))
                   for f in reading.constraints]
    # a question that sets aside new methods ("rather than yet another pruning method", "not papers
    # proposing yet another optimizer") and asks itself for a study ("explain why", "analyse whether",
    # "evidence of") lists studies, unless it asks for benchmarks ("yet another point-forecast
    # architecture doesn't help me" sets aside a kind of method, not methods)
    studies_only = bool(_SETS_ASIDE_METHODS.search(reading.aside)) and reading.asks not in ("method", "benchmark") \
        and (reading.asks in ("reason", "finding", "theory") or reading.study) \
        and not any(c.kind == "direction" and c.text in ("evaluate", "benchmark") for c in reading.constraints)
    # a how/why question that is not itself about benchmarks or evaluation ("how do benchmarks …")
    measures_methods = (reading.asks in ("method", "reason") or bool(_SETS_ASIDE_BENCHMARKS.search(reading.aside))) \
        and not any(own_mentions(f.label, family_alternatives("benchmark") + _EVALUATION) for f in reading.facets)
    # Words every listed paper must state, shown "(not: memorize)" beside a related one: what the
    # papers do ("Which papers watermark images …") and what a why-question asks explained: the
    # rarest single word after its subject ("why do diffusion models memorize …": "memorize"; "why
    # does RLHF reduce output diversity": "diversity", not "RLHF").
    exact = reading.topic is not None and not _RANGE.search(reading.topic.text)  # not "4 bits or fewer"
    needed = [u for u in topic if u.needed or (exact and QUANTITY_WORD.search(u.text.replace("-", " ")))]
    # a constraint's needed words, unless the paper meets it by an example the question gives of it
    given = [_rare_examples(expand_units(f.examples, acr), stats) for f, _ in constraints]
    needed_of = [[u for u in us if u.needed] if f.required else [] for f, us in constraints]
    either: list[Unit] = []  # a why-question about "A and B": the rarest word of either side
    if reading.asks == "reason":
        # a why-question words what it asks explained in its own words ("why DPO objectives
        # misbehave"): a word of its topic no candidate states weighs nothing, and is not needed
        stated = [p.stated_regions() for p in papers.values()]
        said = [any(met(u, regions) for regions in stated) for u in topic]
        single = [u for u in topic[1:] if " " not in u.text and not ADVERB.search(u.text) and u.text not in DEGREE]
        rarest = max(single, key=lambda u: u.weight) if len(topic) >= 3 and single else None
        both = and_sides(topic, reading.topic.text) if reading.topic else []
        if both:
            # "why do attention sinks and massive outlier activations show up": either is asked
            # explained, so a paper states the rarest word of one side ("outlier", or "sinks")
            either = [max(side, key=lambda u: u.weight) for side in both]
        elif rarest is not None and said[topic.index(rarest)]:
            needed.append(rarest)
        unsaid = [u for u, ok in zip(topic, said) if not ok]
        if sum(u.weight for u in unsaid) > WHY_UNSAID * sum(u.weight for u in topic):
            # most of what it asks explained no candidate states ("why LLMs ignore the context they are given
            # and answer from what they memorized"): what is left ("LLMs", "context") would list any paper on
            # long contexts; the heaviest unstated word is needed, and no paper is listed for it
            needed.append(max(unsaid, key=lambda u: u.weight))
        else:
            topic = [u if ok else u.model_copy(update={"weight": 0.0}) for u, ok in zip(topic, said)]
    sides = and_sides(topic, reading.topic.text) if reading.topic else []
    if reading.topic:  # a paper that states an example the question gives of its topic meets it ("MRI")
        sides += [[u] for u in _rare_examples(expand_units(reading.topic.examples, acr), stats)]
    judgements = {}
    for n, p in papers.items():
        own = defined[n]
        j = judgements[n] = judge(p, _own_sense(topic, own), [(f, _own_sense(us, own)) for f, us in constraints],
                                  sides, given, reading.used, reading.tested)
        by_example = [any(met(u, p.regions(None)) for u in ex) for ex in given]
        # stated as the paper's own, in any sentence: not "methods that do not employ look-ahead
        # search", "unlike existing watermarks" (`_theirs`)
        must = needed + [u for us, ok in zip(needed_of, by_example) if not ok for u in us]
        lacking = [u.text for u in must if not met(u, p.stated_regions())] if j.on_topic else []
        if j.on_topic and either and not any(met(u, p.stated_regions()) for u in either):
            lacking.append(either[0].text)
        if lacking:
            # a word already named with the constraint it belongs to is not named again
            j.missing += [w for w in dict.fromkeys(lacking) if not any(f" {w} " in f" {m} " for m in j.missing)]
            j.admitted, j.related = False, True
        if studies_only and proposes_method(p):  # "…, rather than proposing yet another optimizer"
            j.missing.append(NOT_A_STUDY)
            j.admitted, j.related = False, j.on_topic
        if measures_methods and titled_benchmark(p):  # "How do papers compress …?"
            j.missing.append(NOT_A_BENCHMARK.get(reading.asks, NOT_A_BENCHMARK["method"]))
            j.admitted, j.related = False, j.on_topic
    says = sum(u.weight for u in _distinct(weigh(joined, stats, family=False)))
    return Admission(judgements, papers, topic, constraints, says)


# "…, rather than only benchmarking tool use", "not simulators, benchmarks and data-collection studies"
_SETS_ASIDE_BENCHMARKS = re.compile(r"\b(?:benchmark\w*|simulators?|environments?|evaluation\s+suites?|leaderboards?)\b", re.I)
_SETS_ASIDE_METHODS = re.compile(
    r"\b(?:propos\w*|new|novel|yet\s+another|another)\b(?:\s+[\w-]+){0,5}?\s+(?:methods?|approach\w*|techniques?|"
    r"algorithms?|optimi[sz]ers?|architectures?|pipelines?|tricks?|variants?)\b", re.I)
NOT_A_STUDY = "a study (this paper proposes a method)"
NOT_A_BENCHMARK = {"method": "a method (this paper is a benchmark)", "reason": "an explanation (this paper is a benchmark)"}


def _rare_examples(examples: Sequence[Unit], stats: TermStats) -> list[Unit]:
    """The examples few papers use (`EXAMPLE_IDF`). A two-word example is as rare as the papers that
    write its words side by side, and is met only so: "forward-forward" and "predictive coding" are
    rare terms of common words (a sentence that predicts code is no predictive coding)."""
    out = []
    for u in weigh(examples, stats):
        first = u.alternatives[0] if u.alternatives else ()
        if len(first) == 2 and stats.phrases is not None:
            if stats.rarity(stats.phrases.pairs.get((first[0], first[1]), 0)) >= EXAMPLE_IDF:
                out.append(u.model_copy(update={"together": False, "alternatives": [a for a in u.alternatives if len(a) != 2 or a == first]}))
            continue
        if u.weight >= EXAMPLE_IDF:
            out.append(u)
    return out


_DIRECTION_WORDS = frozenset(a[0] for d in DIRECTIONS for a in family_alternatives(d) if len(a) == 1)
# What opens an aside that sets a kind of paper aside; "not just X" / "not only X" take X and more
# (not a contrast of approach, "rather than X" / "as opposed to X", nor "outside X", often "beyond X")
_ASIDE_OPENS = re.compile(r"^\W*(?:but\s+)?(?:not|excluding|except(?:\s+for)?|other\s+than)\b", re.I)
_ASIDE_KEEPS = re.compile(r"^\W*(?:but\s+)?not\s+(?:(?:papers|works?|ones|studies|methods)\s+(?:that|which)\s+)?"
                          r"(?:just|only|merely)\b", re.I)
_ASIDE_LATER = re.compile(r"[,;]\s*((?:but\s+)?(?:not|excluding|except(?:\s+for)?|other\s+than)\b(?:(?![,;]\s*(?:but\s+)?not\b).)*)$",
                          re.I | re.S)
# where the kinds set aside end: examples or a question of what is wanted follow
_ASIDE_ENDS = re.compile(r"\s*(?:[:;(]|,?\s*\b(?:e\.\s?g|such\s+as|for\s+example|for\s+instance|including|"
                         r"and\s+(?:what|how|which|why|where|when))\b).*$", re.I | re.S)


class AsideOption(NamedTuple):
    """One kind of paper an aside sets aside: its content stems, and the acronym that heads it, which
    names the kind by itself ("RLHF-style fine-tuning of chat LLMs": a title that names RLHF)."""

    stems: tuple[str, ...]
    lead: str = ""


# an acronym as written: "RLHF", "DPO", "LLMs" (not "Mamba", not "a")
_ACRONYM_HEAD = re.compile(r"^\W*(?P<a>[A-Z][A-Z0-9]{1,7})s?(?![A-Za-z])")


@functools.lru_cache(maxsize=256)
def aside_options(aside: str, directions: bool = False) -> tuple[AsideOption, ...]:
    """The kinds of paper an aside sets aside: "not Fourier neural operators for solving PDEs" one,
    "excluding molecules, proteins and crystals" three. When the question reads a direction
    (`directions`), direction words go: a defence of jailbreaks names "attacks", and the direction is
    judged as a constraint. Without one they stay ("not code generation": generation is the kind)."""
    if not _ASIDE_OPENS.match(aside):
        # a contrast of approach may end with what it sets aside: "outside chemistry: which papers …
        # for images, PDE operators and the like, not molecules, proteins and crystals"
        later = _ASIDE_LATER.search(aside)
        if later is None:
            return ()
        aside = aside[later.start(1):]
    if _ASIDE_KEEPS.match(aside):
        return ()
    rest = _ASIDE_ENDS.sub("", _ASIDE_OPENS.sub("", aside, count=1))
    out = []
    for option in re.split(r"\s*,\s*(?:(?:or|and|nor)\s+)?|\s+(?:or|and|nor)\s+|\s*/\s*", rest):
        stems = tuple(dict.fromkeys(
            stem(w) for w in words(option)
            if w not in STOPWORDS and w not in FRAMING and not (directions and stem(w) in _DIRECTION_WORDS)))
        head = _ACRONYM_HEAD.match(option)
        if stems:
            out.append(AsideOption(stems, stem(head.group("a").lower()) if head else ""))
    return tuple(out)


def set_aside(reading: Reading, papers: Mapping[int, PaperText]) -> set[int]:
    """The papers of a kind the question sets aside: a title that names one, two of its words or its one
    word, and a word of it the question does not ask for ("not Fourier neural operators for solving
    PDEs": "Neural Operators for PDEs"; "defences, not new backdoor attacks" sets aside no backdoor paper),
    or the acronym that heads it ("not RLHF-style fine-tuning": "… Multi-turn RLHF")."""
    directions = any(c.kind == "direction" for c in reading.constraints)
    options = aside_options(reading.aside, directions)
    # a member of an asked family the question sets aside ("detect …, as opposed to watermarking it"):
    # a title that names it is a paper of that kind
    narrowed = {n for n, paper in papers.items() if _alike(set(reading.narrowed), paper.title_stems)}
    if not options:
        return narrowed
    asked = {stem(w) for f in reading.facets for w in words(f.text)}

    def lead(option: AsideOption) -> str:
        # the acronym that heads it, or that its words write out ("large language models": LLM), unless
        # the question asks for it in either form ("using language models …, not protein language models")
        spelled = next((short for short, fam in _SPELLED.items()
                        if any(len(a) > 1 and set(a) <= set(option.stems) for a in family_alternatives(fam))), "")
        return next((x for x in (option.lead, spelled) if x and x not in asked and not (
            x in _SPELLED and any(set(a) <= asked for a in family_alternatives(_SPELLED[x])))), "")

    kinds = [(set(o.stems), min(2, len(o.stems)), lead(o)) for o in options if set(o.stems) - asked]

    def named(paper: PaperText) -> frozenset[str]:
        # an acronym the title writes out: "LLM unlearning" names "Continual Unlearning of Large Language Models"
        spelled = {short for short, fam in _SPELLED.items()
                   if met(Unit(text=short, alternatives=family_alternatives(fam)), [paper.title])}
        return paper.title_stems | spelled

    titles = {n: named(paper) for n, paper in papers.items()}
    return narrowed | {n for n, title in titles.items()
                       if any(len(_alike(o, title)) >= need and _alike(o - asked, title) or lead in title for o, need, lead in kinds)}


def _alike(stems: set[str], title: frozenset[str]) -> set[str]:
    """The stems a title holds, or holds a longer or shorter form of ("provers" of "Theorem Proving")."""
    return {s for s in stems if s in title or any(one_word(s, t) for t in title)}


# Acronyms an aside names, and the family of their written-out forms (rag.text.reading.FAMILIES)
_SPELLED = {"llm": "llm", "vlm": "vlm", "rl": "reinforcement"}


def titled_benchmark(paper: PaperText) -> bool:
    """Whether the title itself names the paper a benchmark or dataset ("AVHBench: A Cross-Modal
    Hallucination Benchmark …", "SCBench: …"): such a paper measures the methods a how/why question
    asks about."""
    return _named_benchmark(paper.source.title) or own_mentions(paper.source.title, family_alternatives("benchmark"))


# What a paper proposes when it proposes a method: "we propose X, a …", "we introduce a novel framework"
_PROPOSES = re.compile(r"\bwe\s+(?:first\s+|then\s+)?(?:propose|introduce|present|develop|design|devise)\s+(?P<what>[^.;:]{0,140})", re.I)
_METHOD_NOUN = re.compile(r"\b(?:method|approach|algorithm|framework|technique|optimi[sz]er|architecture|strategy|scheme|"
                          r"pipeline|variant|procedure|mechanism|module|recipe|paradigm|regulari[sz]er)s?\b", re.I)
# a name the paper coins ("AdamCB", "BitStack", "SEPARATE"), not an acronym of the field ("LLMs", "RL")
_COINED = re.compile(r"(?<![\w-])(?![A-Z]{2,4}s?\b)(?:[a-z]*[A-Z][a-z]*-?[A-Z][\w-]*|[A-Z]{2,}[\w-]*)")
# ... and not when what it presents is a study: "we present the first systematic study of …"
_STUDY_NOUN = re.compile(r"\b(?:benchmarks?|datasets?|suites?|stud(?:y|ies)|analys[ie]s|investigations?|evaluations?|"
                         r"examinations?|explorations?|theor(?:y|ies)|theoretical|perspectives?|lens|characteri[sz]ations?|"
                         r"explanations?|understanding|hypothes[ie]s|findings?|evidence|insights?|bounds?|guarantees?|inequalit(?:y|ies)|"
                         r"laws?|metrics?|measures?|notions?)\b", re.I)


def proposes_method(paper: PaperText) -> bool:
    """Whether the paper's contribution is a method of its own: a coined name heads its title
    ("BitStack: …", "SOAP: …") or its first sentence of what it does proposes one ("we propose
    AdamCB, …", "we introduce a novel framework"). A benchmark or a study it presents is none."""
    if titled_benchmark(paper):
        return False
    name = paper.source.title.split(":", 1)[0].split() if ":" in paper.source.title else []
    if 0 < len(name) <= 2 and any(_COINED.fullmatch(w) for w in name):
        return True
    first = next((s for s, r in zip(paper.sentences, paper.roles) if r in ("contribution", "method")), "")
    m = _PROPOSES.search(first)
    if m is None or _STUDY_NOUN.search(m["what"][:60]):
        return False
    return bool(_METHOD_NOUN.search(m["what"]) or _COINED.search(m["what"][:60]))


def _named_benchmark(title: str) -> bool:
    """The title's own name (before its colon) is a benchmark's: "SCBench", "RM-Bench", "SWE-bench
    Multimodal" (a short name, one of whose words ends as a benchmark's name does)."""
    name = title.split(":", 1)[0].split() if ":" in title else []
    return 0 < len(name) <= 3 and any(w.lower().endswith(NAME_SUFFIXES) for w in name)


def _own_sense(units: list[Unit], own: dict[str, tuple[str, ...]]) -> list[Unit]:
    """Units without the acronyms a paper defines as something else: "MIAs" in a paper on "model
    inversion attacks (MIAs)" is no membership inference attack."""
    out = []
    for u in units:
        spelled = {"".join(w[0] for w in a) for a in u.alternatives if len(a) > 1}  # long forms the unit means
        other = [a for a in u.alternatives
                 if len(a) == 1 and a[0] in own and a[0] in spelled and own[a[0]] not in u.alternatives]
        out.append(u.model_copy(update={"alternatives": [a for a in u.alternatives if a not in other]}) if other else u)
    return out

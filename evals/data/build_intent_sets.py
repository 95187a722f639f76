"""Build three question sets from corpus metadata: author, named-paper and "similar to" questions.

Writes, in ``evals/data/`` (one JSON object a line, ``{qid, query, gold_ids, category, expected}``):

* ``authors.jsonl`` - "which papers did X write?" questions. Gold is every corpus paper whose author
  list holds the exact author string. Authors are drawn (``random.Random(seed)`` over name-sorted
  candidates) from two buckets, prolific (>= 5 papers) and few (2-3 papers), and each question
  writes the name in one form, given as ``category``:

  - ``full``: the name as the corpus spells it ("Which papers by Yoshua Bengio are at ICLR 2025?");
  - ``lower``: the same, lower-cased ("papers by yoshua bengio");
  - ``initial``: first initial and surname ("What did Y. Bengio publish at ICLR 2025?"), only when
    that initial + surname belongs to one author string of the corpus and the surname is not a
    word of any title or abstract ("B. Low");
  - ``surname``: the surname alone, only when no other author string of the corpus has that word
    anywhere in its name, the word is in no title or abstract ("Rush") and the name has no
    particle ("Van Durme");
  - ``ascii``: a name that has diacritics in the corpus, written without them ("Bernhard
    Scholkopf"), only when the plain spelling is not itself another author of the corpus.

  Near-duplicate spellings: author strings are grouped by a loose key (diacritics folded; case,
  dots, hyphens and middle initials dropped). The corpus has 16 such groups with 2+ strings, none
  with more than 5 papers in all (e.g. "Zhen Wang" / "Zhen WANG", "Jie Zhang" / "Jie ZHANG",
  "Suin Lee" / "Su-In Lee", "Lei Zhang" / "Lei M Zhang", "Hoang V. Tran" / "Hoang H. Tran"); no
  name occurs both with and without diacritics. Co-authors and topics show these are mostly
  different people sharing a spelling (Suin Lee of TexTailor/MMR is not Su-In Lee of the diffusion
  data-attribution paper), so nothing is merged: every string of such a group is left out of the
  draw (see ``ambiguous_strings``), and so are strings that are probably several people: a surname
  carried by >= 25 author strings with a given name carried by >= 5 ("Bo Li", "Yang Liu"), or with
  papers that share no co-author ("Yichi Zhang": four groups of co-authors). The run also logs,
  for each chosen author, the other strings with the same initial and surname; they were read and
  are other people ("Fan Yang" is not "Fanny Yang"). So gold = the exact string's papers is
  complete for every chosen author.

* ``named.jsonl`` - questions about one paper named in the question; gold is exactly that paper.

  - ``acronym``: titles "Name: subtitle" where Name is one system-like token (CamelCase, letters
    with digits, or all capitals) that no other title uses as its name, that appears in no other
    paper's title or abstract, and that is not an English word (``ENGLISH_WORD_NAMES``, read by
    hand): "What is LeanAgent?";
  - ``title``: the full title, or the subtitle after "Name:" when no other title contains it,
    quoted or unquoted: "Summarize 'Lifelong Learning for Formal Theorem Proving'";
  - ``fragment``: 4-7 consecutive title words, lower-cased, that read as a phrase (see
    ``Corpus.fragment``), hold 2+ rare words, do not contain the paper's system name and occur in
    no other paper's title or abstract: "what does the paper on lifelong learning for formal
    theorem proving find?".

* ``similar.jsonl`` - "papers similar to X" questions (``category: similar``). The anchor X is a
  paper of a human-curated topic list of ``../shared/evalsets/topics_dev.jsonl`` with >= 4 papers:
  the list's most typical paper (highest mean TF-IDF cosine of title + abstract to the other
  members), plus the second most typical for lists of >= 10 papers; a paper is anchor only once.
  Gold is the other papers of that list, the anchor excluded. The question names the anchor by its
  system name when it has one (same rule as ``acronym``), else by its subtitle (the part after the
  colon, lower-cased, when it has 2+ rare words and no other title contains it) or its full title.
  (Automatic 4-7 word fragments were tried here and read badly: "the paper on little goes a long
  way".)

  The topic lists are incomplete (other corpus papers on the same topic are not gold), so recall
  measured on this set is a lower bound, and precision is understated. Some lists are also noisy
  (papers that share a keyword with the heading). Every question was checked by reading the anchor
  title next to all its gold titles (``--review`` prints them): lists without a common topic are in
  ``DROP_SIMILAR_TOPICS`` and anchors unlike most of their list in ``DROP_SIMILAR``, with reasons;
  the kept questions still have some off-topic gold papers (e.g. a persuasiveness paper in
  "Molecular ML: Generative Modeling"), which no system should be expected to return.

Deterministic: inputs are sorted by id / name, the author and named-paper draws each use their own
``random.Random(seed)``, and ties are broken by id or text, so rerunning on the same corpus and
topic lists gives byte-identical files.

Usage: .venv/bin/python evals/data/build_intent_sets.py [--corpus PATH] [--topics PATH]
       [--out-dir DIR] [--seed N] [--review]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

logger = logging.getLogger("build_intent_sets")

HERE = Path(__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "iclr2025" / "papers.jsonl"
DEFAULT_TOPICS = REPO.parent / "shared" / "evalsets" / "topics_dev.jsonl"
DEFAULT_SEED = 2025

# ---- authors ------------------------------------------------------------------------------------
PROLIFIC_MIN = 5  # "prolific" bucket: at least this many papers
FEW = (2, 3)  # "few" bucket: this many papers
COMMON_SURNAME_STRINGS = 25  # surname carried by this many author strings ...
COMMON_GIVEN_STRINGS = 5  # ... and given name by this many: probably several people
# category -> (number from the prolific bucket, number from the few bucket); drawn in this order
AUTHOR_QUOTAS: dict[str, tuple[int, int]] = {
    "ascii": (3, 3),
    "surname": (4, 4),
    "initial": (4, 4),
    "full": (4, 4),
    "lower": (4, 4),
}
AUTHOR_TEMPLATES: dict[str, list[str]] = {
    "full": [
        "Which papers by {name} are at ICLR 2025?",
        "List {name}'s ICLR 2025 papers",
        "What has {name} published at ICLR 2025?",
        "Show me the papers authored by {name}",
        "Which ICLR 2025 papers have {name} as an author?",
        "Papers co-authored by {name}?",
    ],
    "lower": [
        "papers by {name}",
        "{name} iclr 2025 papers",
        "what did {name} work on",
        "list papers from {name}",
        "anything by {name}?",
        "which papers is {name} an author of",
    ],
    "initial": [
        "What did {name} publish at ICLR 2025?",
        "Papers by {name}?",
        "Which ICLR 2025 papers list {name} as an author?",
        "Find {name}'s papers",
    ],
    "surname": [
        "Which papers did {name} co-author?",
        "What has {name} published at ICLR 2025?",
        "Show papers by {name}",
        "List {name}'s papers",
    ],
    "ascii": [
        "Which papers by {name} are at ICLR 2025?",
        "papers by {name}",
        "What did {name} publish at ICLR 2025?",
        "List {name}'s papers",
    ],
}

# ---- named papers -------------------------------------------------------------------------------
NAMED_QUOTAS = {"acronym": 16, "title": 12, "fragment": 14}
# System names of the "Name: subtitle" form that are English words (or a word plus case), read by
# hand among the candidates: a question "What is Helmet?" is not about one paper.
ENGLISH_WORD_NAMES = frozenset(
    """
    ace aces alchemy arrow atlas bangs beacon bonsai braid cake canvas carts century chameleon
    collab compass conda congo contra dawn deem drama emma forte gandalf grain helmet lantern loki
    maestro magnet mantra mars monet nova ocean para pied prism regen separate simba soap spam
    spear staff strap tango todo tomato tulip unsure
    """.split()
)
STOPWORDS = frozenset(
    """
    a about all also an and any are as at be beyond between but by can do does for from how in into
    is it its just made make makes more most no not of on only or our over should so than that the
    their this through to toward towards under up using via vs what when where which while who why
    with without we you your
    """.split()
)
FRAGMENT_RARE_DF = 30  # a fragment needs 2+ words found in at most this many papers
QUESTION_WORDS = frozenset("what how why when which who can do does is are".split())
NAMED_TEMPLATES: dict[str, list[str]] = {
    "acronym": [
        "What is {x}?",
        "How does {x} work?",
        "What problem does {x} solve?",
        "What does the {x} paper propose?",
        "What are the main results of {x}?",
        "Explain {x} briefly.",
        "Which paper introduces {x}?",
        "What data or benchmarks does the {x} paper evaluate on?",
    ],
    "title": [
        "Summarize '{x}'",
        'What is the paper "{x}" about?',
        "{x}",
        "What are the contributions of {x}?",
        "Tell me about the paper titled {x}",
        "What method does '{x}' propose?",
    ],
    "fragment": [
        "what does the paper on {x} find?",
        "which paper is about {x}?",
        "what is the main idea of the paper on {x}?",
        "tell me about the work on {x}",
        "how does the paper on {x} evaluate its method?",
        "is there a paper on {x}?",
        "what approach does the paper on {x} take?",
    ],
}

# ---- similar ------------------------------------------------------------------------------------
SIMILAR_MIN_LIST = 4  # topic lists with at least this many papers
SIMILAR_TWO_ANCHORS = 10  # lists this long get two anchors, others one
SIMILAR_TEMPLATES_NAME = [
    "Find papers similar to {x}",
    "Papers like {x}?",
    "What other ICLR 2025 papers are related to {x}?",
    "Show me work similar to the {x} paper",
]
SIMILAR_TEMPLATES_TITLE = [
    "Which papers are similar to '{x}'?",
    'Find papers related to "{x}"',
    "What else at ICLR 2025 is like '{x}'?",
]
SIMILAR_TEMPLATES_FRAGMENT = [
    "Are there papers similar to the one on {x}?",
    "papers related to the work on {x}",
    "Find more papers like the paper on {x}",
]
# Topic lists whose papers share a keyword rather than a topic (read with --review): no question.
DROP_SIMILAR_TOPICS: dict[str, str] = {
    "T021": "'Graph: Reinforcement Learning' mixes GUI grounding, CoT alignment, GNN oversmoothing, "
    "causal discovery and MARL: no common topic",
    "T026": "'Graphs, GNNs and Efficiency' shares only the word 'efficient' (private ANN search, circuit "
    "discovery, fMRI synthesis, data attribution next to GNN papers)",
    "T064": "'Computer vision > 2D' puts segmentation (SAM 2, RMP-SAM) with text-to-image generation and "
    "stylization: the central anchor SAM 2 is unlike most of its gold",
    "T082": "'AI4Math' mixes causal discovery, polymatrix games, neural ODEs, theorem proving, cellular automata",
    "T098": "'Probabilistic methods': the anchor (latent Bayesian optimization) shares a topic with 2 of its 5 "
    "gold (GP-based BO, deep GPs), not with diffusion posterior sampling or single-index models",
}
# (topic qid, anchor id) -> why the question was dropped after reading anchor and gold titles.
DROP_SIMILAR: dict[tuple[str, str], str] = {
    ("T131", "oWdzUpOlkX"): "AgentOccam is a web-agent paper; most of the code-LLM list (code generation "
    "benchmarks, text-to-SQL, code pretraining) is not like it",
}

EXPECTED = {
    "authors": "list every gold paper (all of the author's papers)",
    "named": "answer about the gold paper, citing it",
    "similar": "list papers on the anchor's topic, not the anchor itself",
}


# ---- text helpers -------------------------------------------------------------------------------
_FOLD = str.maketrans(
    {"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ı": "i", "ß": "ss", "æ": "ae"}
)


def fold(text: str) -> str:
    """The text without diacritics ("Schölkopf" -> "Scholkopf", "Łukasz" -> "Lukasz")."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    """Lower-case ASCII word tokens; hyphenated words stay one token, apostrophes split."""
    return re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", fold(text).lower())


def padded(text: str) -> str:
    """Word tokens joined by single spaces, with a space either side, for phrase containment."""
    return " " + " ".join(words(text)) + " "


def contains_phrase(haystack_padded: str, phrase: str) -> bool:
    return padded(phrase) in haystack_padded


def write_jsonl(path: Path, rows: Iterable[dict]) -> int:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8", newline="\n")
    return text.count("\n")


def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# ---- authors ------------------------------------------------------------------------------------
def name_tokens(author: str) -> list[str]:
    """Folded, lower-case name parts; dots and hyphens dropped ("Kai-Wei" -> "kaiwei")."""
    return [t for t in re.split(r"[\s.]+", fold(author).lower().replace("-", "")) if t]


def loose_key(author: str) -> str:
    """Same key for spellings that differ in case, diacritics, dots, hyphens or middle initials."""
    toks = name_tokens(author)
    if len(toks) > 2:
        toks = [toks[0], *[t for t in toks[1:-1] if len(t) > 1], toks[-1]]
    return " ".join(toks)


PARTICLES = frozenset("van von der den de da di du del della des la le ter ten dos bin al el".split())


def has_particle(author: str) -> bool:
    """'Mihaela van der Schaar', 'Benjamin Van Durme': the surname is more than the last word."""
    return any(p.lower() in PARTICLES for p in author.split()[1:-1])


def initial_form(author: str) -> str | None:
    """'Yoshua Bengio' -> 'Y. Bengio'; None when the given name is already an initial."""
    parts = author.split()
    if len(parts) < 2 or len(parts[0].rstrip(".")) < 2 or not parts[0][0].isalpha():
        return None
    return f"{parts[0][0].upper()}. {parts[-1]}"


def ambiguous_strings(by_author: dict[str, list[str]], coauthors: dict[str, list[str]]) -> dict[str, str]:
    """Author strings left out of the draw, with the reason."""
    out: dict[str, str] = {}
    groups: dict[str, list[str]] = defaultdict(list)
    for a in by_author:
        groups[loose_key(a)].append(a)
    by_first_last: dict[tuple[str, str], set[str]] = defaultdict(set)
    for a in by_author:
        toks = name_tokens(a)
        by_first_last[(toks[0], toks[-1])].add(loose_key(a))
    for a in by_author:
        toks = name_tokens(a)
        same = sorted(set(groups[loose_key(a)]) - {a})
        if same:
            out[a] = f"other spelling(s) in the corpus: {same}"
        elif len(by_first_last[(toks[0], toks[-1])]) > 1:
            out[a] = "another author has the same first and last name with other middle names"
    surnames = Counter(name_tokens(a)[-1] for a in by_author)
    givens = Counter(name_tokens(a)[0] for a in by_author)
    for a in by_author:
        toks = name_tokens(a)
        if surnames[toks[-1]] < COMMON_SURNAME_STRINGS:
            continue
        if givens[toks[0]] >= COMMON_GIVEN_STRINGS:
            out.setdefault(a, "common given name and surname: probably several people")
        elif coauthor_groups(a, by_author, coauthors) > 1:
            out.setdefault(a, "common surname and papers with disjoint co-authors: probably several people")
    return out


def coauthor_groups(author: str, by_author: dict[str, list[str]], coauthors: dict[str, list[str]]) -> int:
    """How many groups the author's papers fall into when papers sharing a co-author are joined."""
    groups: list[tuple[set[str], set[str]]] = []  # (paper ids, co-authors)
    for pid in by_author[author]:
        names = set(coauthors[pid]) - {author}
        merged = [g for g in groups if g[1] & names]
        ids, people = {pid}, names
        for g in merged:
            ids |= g[0]
            people |= g[1]
            groups.remove(g)
        groups.append((ids, people))
    return len(groups)


def build_authors(papers: list[dict], rng: random.Random) -> list[dict]:
    by_author: dict[str, list[str]] = defaultdict(list)
    for p in papers:
        for a in p.get("authors") or []:
            by_author[a].append(p["id"])
    coauthors = {p["id"]: list(p.get("authors") or []) for p in papers}
    skip = ambiguous_strings(by_author, coauthors)
    n_groups = len({loose_key(a) for a, why in skip.items() if why.startswith("other spelling")})
    logger.info(
        "%d author strings; %d groups of near-duplicate spellings; %d strings left out of the draw",
        len(by_author),
        n_groups,
        len(skip),
    )

    text_words = set()  # every word of every title and abstract: surnames that are words are skipped
    for p in papers:
        text_words.update(words(p["title"]))
        text_words.update(words(p.get("abstract") or ""))
    surname_owners: dict[str, set[str]] = defaultdict(set)  # any name word -> strings having it
    for a in by_author:
        for t in name_tokens(a):
            surname_owners[t].add(a)
    initial_owners: dict[str, set[str]] = defaultdict(set)
    for a in by_author:
        form = initial_form(a)
        if form:
            initial_owners[" ".join(name_tokens(form))].add(a)
    folded_authors = {fold(a).lower(): a for a in by_author}

    def has_word_surname(a: str) -> bool:
        return has_particle(a) or name_tokens(a)[-1] in text_words

    def rendered(a: str, category: str) -> str | None:
        """The name as the question writes it, or None when this form is not allowed for a."""
        if category == "full":
            return a
        if category == "lower":
            return a.lower() if a.lower() != a else None
        if category == "initial":
            form = initial_form(a)
            if form and initial_owners[" ".join(name_tokens(form))] == {a} and not has_word_surname(a):
                return form
            return None
        if category == "surname":
            parts = a.split()
            last = parts[-1]
            key = name_tokens(last)
            if len(parts) < 2 or len(key) != 1 or not last[0].isupper() or len(key[0]) < 4:
                return None
            if has_particle(a) or surname_owners[key[0]] != {a} or key[0] in text_words:
                return None
            return last
        if category == "ascii":
            plain = fold(a)
            if plain == a or folded_authors.get(plain.lower()) not in (a, None):
                return None
            if any(other != a and fold(other) == plain for other in by_author):
                return None
            return plain
        raise ValueError(category)

    def bucket(a: str) -> str | None:
        n = len(by_author[a])
        if n >= PROLIFIC_MIN:
            return "prolific"
        if FEW[0] <= n <= FEW[1]:
            return "few"
        return None

    used: set[str] = set()
    chosen: list[tuple[str, str, str]] = []  # (category, author, rendered name)
    for category, (n_prolific, n_few) in AUTHOR_QUOTAS.items():
        for which, k in (("prolific", n_prolific), ("few", n_few)):
            cands = sorted(
                a
                for a in by_author
                if a not in skip and a not in used and bucket(a) == which and rendered(a, category)
            )
            if len(cands) < k:
                raise SystemExit(f"only {len(cands)} {which} candidates for {category}, need {k}")
            for a in rng.sample(cands, k):
                used.add(a)
                chosen.append((category, a, rendered(a, category) or a))
    # Last look for other spellings of a chosen person: same folded surname and first initial.
    for _, a, _ in chosen:
        toks = name_tokens(a)
        near = sorted(
            o
            for o in by_author
            if o != a and name_tokens(o)[-1] == toks[-1] and name_tokens(o)[0][0] == toks[0][0]
        )
        if near:
            logger.info("chosen author %r: other strings with that initial and surname: %s", a, near)
    rows = []
    for i, (category, a, name) in enumerate(chosen, start=1):
        templates = AUTHOR_TEMPLATES[category]
        query = templates[i % len(templates)].format(name=name)
        rows.append(
            {
                "qid": f"AUTH{i:02d}",
                "query": query,
                "gold_ids": sorted(by_author[a]),
                "category": category,
                "expected": EXPECTED["authors"],
            }
        )
        logger.debug("%s %-8s %-28s -> %s (%d papers)", rows[-1]["qid"], category, name, a, len(by_author[a]))
    return rows


# ---- named papers -------------------------------------------------------------------------------
def title_name(title: str) -> str | None:
    """'LeanAgent: Lifelong ...' -> 'LeanAgent' when the part before the colon is one token."""
    if ":" not in title:
        return None
    head = title.split(":", 1)[0].strip()
    return head if head and " " not in head else None


def system_like(name: str) -> bool:
    """CamelCase, letters with digits, or all capitals (4+ characters: "MMR", "CBQ" are too generic)."""
    if not re.fullmatch(r"[A-Za-z0-9+\-]+", name) or not re.search(r"[A-Za-z]", name):
        return False
    return bool(
        re.search(r"[a-z][A-Z]", name)
        or (re.search(r"\d", name) and re.search(r"[A-Za-z]{2}", name))
        or re.fullmatch(r"[A-Z][A-Z0-9+\-]{3,}", name)
    )


class Corpus:
    """Papers sorted by id, with the padded word text of each title and abstract."""

    def __init__(self, papers: list[dict]) -> None:
        self.papers = papers
        self.by_id = {p["id"]: p for p in papers}
        self.title_text = {p["id"]: padded(p["title"]) for p in papers}
        self.abstract_text = {p["id"]: padded(p.get("abstract") or "") for p in papers}
        names = Counter((title_name(p["title"]) or "").lower() for p in papers)
        self.name_count = names
        df = Counter(t for p in papers for t in set(words(p["title"] + " " + (p.get("abstract") or ""))))
        self.idf = {t: math.log(len(papers) / c) for t, c in df.items()}
        self.rare_idf = math.log(len(papers) / FRAGMENT_RARE_DF)

    def n_rare(self, phrase: str) -> int:
        """How many words of the phrase are in at most ``FRAGMENT_RARE_DF`` papers."""
        return sum(self.idf.get(t, 0.0) >= self.rare_idf for t in words(phrase))

    def in_other(self, phrase: str, pid: str, abstracts: bool = True) -> bool:
        """True when the phrase occurs, as whole words, in another paper's title (or abstract)."""
        needle = padded(phrase)
        for other in self.papers:
            if other["id"] == pid:
                continue
            if needle in self.title_text[other["id"]]:
                return True
            if abstracts and needle in self.abstract_text[other["id"]]:
                return True
        return False

    def short_name(self, pid: str) -> str | None:
        """The paper's system name when it is distinctive enough to name the paper alone."""
        name = title_name(self.by_id[pid]["title"])
        if not name or not system_like(name) or name.lower() in ENGLISH_WORD_NAMES:
            return None
        if self.name_count[name.lower()] != 1 or not words(name):
            return None
        if self.in_other(name, pid):
            return None
        return name

    def fragment(self, pid: str, min_words: int = 4) -> str | None:
        """A 4-7 word phrase of the title that is in no other title or abstract, lower-cased.

        The phrase stays inside one stretch of the title between punctuation marks, starts and
        ends on a content word, starts (ends) at the stretch's start (end) or next to a stopword,
        so it reads as a phrase ("lifelong learning for formal theorem proving"), and has two or
        more words found in at most ``FRAGMENT_RARE_DF`` papers. Of those, the one whose words are
        rarest in the corpus (largest summed IDF) is taken.
        """
        title = self.by_id[pid]["title"]
        name = title_name(title)
        body = title.split(":", 1)[1] if name else title
        whole = words(title)
        windows: list[str] = []
        for n in [m for m in (5, 6, 4, 7) if m >= min_words]:
            for segment in re.split(r"[:;,.?!()\[\]]|--|\s-\s|\u2014|\u2013", body):
                toks = words(segment)
                for i in range(len(toks) - n + 1):
                    w = toks[i : i + n]
                    if w[0] in STOPWORDS or w[-1] in STOPWORDS or w == whole:
                        continue
                    if i > 0 and (toks[i - 1] not in STOPWORDS or toks[i - 1] in QUESTION_WORDS):
                        continue  # mid-phrase, or a verb after "What Makes ..."
                    if i + n < len(toks) and toks[i + n] not in STOPWORDS:
                        continue
                    if sum(t not in STOPWORDS for t in w) < 3:
                        continue
                    if name and contains_phrase(" " + " ".join(w) + " ", name):
                        continue
                    if self.n_rare(" ".join(w)) < 2:
                        continue  # too generic to point at one paper ("large language models reason")
                    phrase = " ".join(w)
                    if not self.in_other(phrase, pid):
                        windows.append(phrase)
            if windows:
                break
        if not windows:
            return None
        return max(sorted(set(windows)), key=lambda w: sum(self.idf.get(t, 0.0) for t in w.split()))


def build_named(corpus: Corpus, rng: random.Random) -> list[dict]:
    order = [p["id"] for p in corpus.papers]
    rng.shuffle(order)
    used: set[str] = set()
    chosen: list[tuple[str, str, str]] = []  # (category, paper id, text in the question)

    def take(category: str, pick) -> None:
        k = NAMED_QUOTAS[category]
        for pid in order:
            if k == 0:
                break
            if pid in used:
                continue
            x = pick(pid)
            if x:
                used.add(pid)
                chosen.append((category, pid, x))
                k -= 1
        if k:
            raise SystemExit(f"not enough papers for {category}")

    take("acronym", corpus.short_name)

    def title_or_subtitle(pid: str) -> str | None:
        title = corpus.by_id[pid]["title"]
        name = title_name(title)
        if name and len(chosen) % 2 == 0:
            sub = title.split(":", 1)[1].strip()
            if len(words(sub)) >= 4 and not corpus.in_other(sub, pid, abstracts=False):
                return sub
        return title if len(words(title)) >= 4 else None

    take("title", title_or_subtitle)
    take("fragment", corpus.fragment)

    rows = []
    for i, (category, pid, x) in enumerate(chosen, start=1):
        templates = NAMED_TEMPLATES[category]
        rows.append(
            {
                "qid": f"NAME{i:02d}",
                "query": templates[i % len(templates)].format(x=x),
                "gold_ids": [pid],
                "category": category,
                "expected": EXPECTED["named"],
            }
        )
    return rows


# ---- similar ------------------------------------------------------------------------------------
def tfidf_vectors(papers: list[dict]) -> dict[str, dict[str, float]]:
    """Unit-length TF-IDF vectors (title + abstract words, stopwords dropped, log tf) by paper id."""
    docs = {}
    for p in papers:
        toks = [t for t in words(p["title"] + " " + (p.get("abstract") or "")) if t not in STOPWORDS]
        docs[p["id"]] = Counter(t for t in toks if len(t) > 2 and not t.isdigit())
    df = Counter(t for tf in docs.values() for t in tf)
    n = len(docs)
    vectors = {}
    for pid, tf in docs.items():
        vec = {t: (1.0 + math.log(c)) * math.log(n / df[t]) for t, c in sorted(tf.items())}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        vectors[pid] = {t: v / norm for t, v in vec.items()}
    return vectors


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in sorted(a.items()))


def central_members(gold: list[str], vectors: dict[str, dict[str, float]]) -> list[str]:
    """The list's papers, most typical first (mean cosine to the others, ties by id)."""
    score = {g: sum(cosine(vectors[g], vectors[o]) for o in gold if o != g) / (len(gold) - 1) for g in gold}
    return sorted(gold, key=lambda g: (-round(score[g], 9), g))


def build_similar(corpus: Corpus, topics: list[dict], review: bool) -> list[dict]:
    vectors = tfidf_vectors(corpus.papers)
    used_anchors: set[str] = set()  # one question per anchor: nested lists would contradict
    rows = []
    n_dropped = 0
    for topic in sorted(topics, key=lambda t: t["qid"]):
        gold = sorted(set(topic["gold_ids"]))
        missing = [g for g in gold if g not in corpus.by_id]
        if missing:
            logger.warning("topic %s: %d gold ids not in the corpus, skipped", topic["qid"], len(missing))
            continue
        if len(gold) < SIMILAR_MIN_LIST:
            continue
        n_anchors = 2 if len(gold) >= SIMILAR_TWO_ANCHORS else 1
        ranked = central_members(gold, vectors)
        if topic["qid"] in DROP_SIMILAR_TOPICS:
            n_dropped += 1
            if review:
                print(f"\n[{topic['qid']} {topic['query']!r}, {len(gold)} papers] DROPPED LIST:")
                print(f"  {DROP_SIMILAR_TOPICS[topic['qid']]}")
                for g in ranked:
                    print(f"  paper:  {g} {corpus.by_id[g]['title'][:110]}")
            continue
        anchors = [g for g in ranked if g not in used_anchors][:n_anchors]
        used_anchors.update(anchors)
        for anchor in anchors:
            others = [g for g in gold if g != anchor]
            title = corpus.by_id[anchor]["title"]
            k = len(rows) + n_dropped
            name = corpus.short_name(anchor)
            if name:
                query = SIMILAR_TEMPLATES_NAME[k % len(SIMILAR_TEMPLATES_NAME)].format(x=name)
            else:
                sub = title.split(":", 1)[1].strip() if ":" in title else ""
                sub = re.sub(r"^(on the|on|towards?|the|an?)\s+", "", sub, flags=re.IGNORECASE)
                if (
                    k % 2
                    and len(words(sub)) >= 4
                    and corpus.n_rare(sub) >= 2  # "Impact of Activation Functions" names no paper
                    and not corpus.in_other(sub, anchor, abstracts=False)
                ):
                    x = sub.lower().rstrip("?.!")
                    query = SIMILAR_TEMPLATES_FRAGMENT[k % len(SIMILAR_TEMPLATES_FRAGMENT)].format(x=x)
                else:
                    query = SIMILAR_TEMPLATES_TITLE[k % len(SIMILAR_TEMPLATES_TITLE)].format(x=title)
            why = DROP_SIMILAR.get((topic["qid"], anchor))
            if review:
                print(
                    f"\n[{topic['qid']} {topic['query']!r}, {len(gold)} papers]",
                    "DROPPED: " + why if why else "",
                )
                print(f"  Q:      {query}")
                print(f"  anchor: {anchor} {title}")
                for g in [r for r in ranked if r != anchor]:
                    print(f"  gold:   {g} {corpus.by_id[g]['title'][:110]}")
            if why:
                n_dropped += 1
                continue
            rows.append(
                {
                    "qid": "",
                    "query": query,
                    "gold_ids": others,
                    "category": "similar",
                    "expected": EXPECTED["similar"],
                }
            )
    for i, row in enumerate(rows, start=1):
        row["qid"] = f"SIM{i:02d}"
    logger.info("similar: %d questions; %d topic lists or anchors dropped after review", len(rows), n_dropped)
    return rows


# ---- main ---------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="papers.jsonl (default: %(default)s)")
    ap.add_argument("--topics", type=Path, default=DEFAULT_TOPICS, help="topic lists (default: %(default)s)")
    ap.add_argument("--out-dir", type=Path, default=HERE, help="where to write (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (default: %(default)s)")
    ap.add_argument(
        "--review", action="store_true", help="print anchor and gold titles of each similar question"
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    args = ap.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(message)s"
    )

    papers = sorted(load_jsonl(args.corpus), key=lambda p: p["id"])
    logger.info("corpus: %d papers from %s", len(papers), args.corpus)
    topics = load_jsonl(args.topics)
    corpus = Corpus(papers)

    authors = build_authors(papers, random.Random(args.seed))
    named = build_named(corpus, random.Random(args.seed))
    similar = build_similar(corpus, topics, args.review)

    args.out_dir.mkdir(parents=True, exist_ok=True)
    for fname, rows in (("authors.jsonl", authors), ("named.jsonl", named), ("similar.jsonl", similar)):
        n = write_jsonl(args.out_dir / fname, rows)
        cats = Counter(r["category"] for r in rows)
        logger.info("wrote %d questions to %s (%s)", n, args.out_dir / fname, dict(sorted(cats.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Words as the grounding rules see them: normalised text, content terms, stems, document frequencies.

The support checker and the answerability rule compare the *words* of a claim or a question with the
words of an abstract, so both need the same view of text: Unicode and LaTeX/Markdown markup folded
away, lower case, stop words and attribution words ("the paper proposes") set aside, English stems
(Snowball) so that "merges" meets "merging".
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import Stemmer

_STEMMER = Stemmer.Stemmer("english")

# Ordinary English function words.
STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing done for from had has have
    having he her here hers him his how i if in into is it its itself me my no nor not of off on once
    only or our ours out over own same she should so some such than that the their theirs them then
    there these they this those through to too under until up upon very was we were what when where
    which while who whom whose why will with would you your yours also any both each few more most
    other others all via thus hence however therefore whether either neither yet just may might must
    shall one ones s t using use used uses based am""".split()
)

# BM25's view of words, which the stored paper table was built with (rag/store/papertable.py):
# bm25s' tokenization (lower case, `\w\w+`, its English stop words out, Snowball stems), kept as
# bm25s has it so that its index and this one agree (a test compares them). Another tokenizer needs
# a new BM25_TOKENIZER name: the paper table then rebuilds its terms.
BM25_TOKENIZER = "bm25s-en-snowball-1"
_BM25_TOKEN = re.compile(r"(?u)\b\w\w+\b")  # bm25s' default pattern
# bm25s.stopwords.STOPWORDS_EN (importing bm25s costs seconds: scipy).
BM25_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)


def bm25_tokens(text: str) -> list[str]:
    """The words of a text as BM25 indexes them."""
    return list(_STEMMER.stemWords([w for w in _BM25_TOKEN.findall(text.lower()) if w not in BM25_STOPWORDS]))


# Words that frame a claim or a question rather than carry its content: "This paper proposes X"
# states X, and "Which ICLR 2025 papers study X?" asks about X.
FRAMING = frozenset(
    """paper papers work works study studies studied article articles authors author research
    researchers iclr 2025 propose proposes proposed proposing introduce introduces introduced
    introducing present presents presented presenting develop develops developed developing
    describe describes described explain explains tell give list show shows showed shown
    demonstrate demonstrates demonstrated novel new approach approaches method methods technique
    techniques framework frameworks main key recent find finds found address addresses addressed
    addressing tackle tackles tackled tackling focus focuses focused investigate investigates
    investigated investigating explore explores explored exploring consider considers considered
    discuss discusses discussed overview summary summarize summarise there exist exists existing
    anything something someone please help way ways etc e g ie provide provides provided providing
    offer offers offered offering possibly potentially especially particularly specifically typically
    mainly primarily purely recently ideally actually actual truly really genuinely still already anywhere somewhere
    everywhere anyone anybody let lets letting""".split()
)
# Words that frame a question only where it starts ("Search for papers on …"); inside or at the end
# of a question they are its topic ("learn to search", "neural architecture search").
LEADING_FRAME = frozenset({"search", "searching"})

NEGATIONS = frozenset(
    "not no never cannot can't don't doesn't isn't aren't won't without fail fails failed unable "
    "neither nor lack lacks lacking unlikely".split()
)

_LATEX_CMD = re.compile(r"\\(?:emph|textit|textbf|mathrm|mathbf|mathcal|text|texttt|mathit|operatorname)\s*\{([^{}]*)\}")
_LATEX_BARE = re.compile(r"\\[a-zA-Z]+")
_WORD = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")
_DASHES = dict.fromkeys(map(ord, "‐‑‒–—―−"), "-")
_QUOTES = dict.fromkeys(map(ord, "‘’‚‛′"), "'") | dict.fromkeys(map(ord, "“”„‟″"), '"')


def normalize(text: str) -> str:
    """Text with markup folded: NFKC, LaTeX commands unwrapped, $ * _ ` removed, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text or "").translate(_DASHES).translate(_QUOTES)
    for _ in range(3):
        text = _LATEX_CMD.sub(r"\1", text)
    text = _LATEX_BARE.sub(" ", text)
    text = re.sub(r"[$*_`{}~^]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def folded(text: str) -> str:
    """Normalised text in lower case with accents removed, for substring comparisons."""
    text = unicodedata.normalize("NFKD", normalize(text).lower())
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", re.sub(r"[^\w%.+\-/ ]", " ", text)).strip()


def words(text: str) -> list[str]:
    """Lower-case word tokens; hyphenated compounds come apart ("vision-language" → two words)."""
    return _WORD.findall(folded(text).replace("-", " ").replace("/", " "))


# The two other views of words, both for reading questions (rag/text/query.py, rag/text/reading.py):
# words as written, with their positions (names and authors keep their case), and lower-case words
# with compounds kept whole and the commas and slashes that join a question's options.
_WORD_SPAN = re.compile(r"[^\W_]+(?:['’]s(?![^\W_]))?")  # a word, with its possessive "'s" if any
_COMPOUND = re.compile(r"[a-z0-9]+(?:[.'\-+][a-z0-9]+)*|[,/]")


def word_spans(text: str) -> list[re.Match[str]]:
    """The words of `text` (NFC) as written, each with its possessive "'s" and its position."""
    return list(_WORD_SPAN.finditer(unicodedata.normalize("NFC", text)))


def compounds(text: str) -> list[str]:
    """Lower-case words of a text with compounds whole ("vision-language"), and "," and "/" as tokens."""
    return _COMPOUND.findall(folded(text).replace("/", " / "))


# Words Snowball gives the stem of words that mean something else: a "transformer" is not a
# "transformation", "compute-optimal" says nothing of an "optimizer". The paper table's word counts
# are kept under STEMS (a new value rebuilds them).
# The same for a verb made with -ize and the word it is made from: Snowball gives "tokenization" the
# stem of "token", "generalization" that of "general", "localization" that of "local"; such a word
# keeps the stem with "iz" added ("tokeniz", "generaliz", "localiz") in all its forms.
# Snowball also leaves "grokking" as "grokk" (it undoubles only bb dd ff gg mm nn pp rr tt).
_OWN_STEM = {"transformer": "transformer", "transformers": "transformer", "optimal": "optimal",
             "optimally": "optimal", "optimality": "optimal", "grokking": "grok", "grokked": "grok",
             "embed": "embed", "embeds": "embed",  # Snowball: "embed" → "emb", "embedding" → "embed"
             # a field's noun and adjective: Snowball gives "molecules" "molecul" and "molecular" "molecular"
             "molecular": "molecul", "chemistry": "chemic", "medicine": "medic", "medicines": "medic",
             "geometry": "geometr", "geometries": "geometr", "financial": "financ",
             "analysis": "analyz", "analyses": "analyz",  # Snowball: "analysi", "analys"; "analyze": "analyz"
             # a Latin or Greek plural and its singular: Snowball gives "equilibria" "equilibria" and
             # "equilibrium" "equilibrium" ("Nash equilibrium" did not meet "equilibria")
             **{w: one for one, forms in {
                 "equilibrium": "equilibria equilibrium", "phenomenon": "phenomena phenomenon",
                 "criterion": "criteria criterion", "matrix": "matrices matrix", "index": "indices index",
                 "vertex": "vertices vertex", "hypothesi": "hypotheses hypothesis", "spectrum": "spectra spectrum",
                 "optimum": "optima optimum", "minimum": "minima minimum", "maximum": "maxima maximum",
                 "stimulus": "stimuli stimulus", "corpus": "corpora corpus", "curriculum": "curricula curriculum",
                 "simplex": "simplices simplex", "radius": "radii radius", "nucleus": "nuclei nucleus",
                 "formula": "formulae formulas formula"}.items() for w in forms.split()}}
_MADE_WITH_IZE = re.compile(
    r"^([a-z]{3,}?)(?:ization|izations|isation|isations|izing|ising|izer|izers|iser|isers|ized|ised|izes|ises|ize|ise)$")
# The plural of an acronym: Snowball drops no "s" after a word without a vowel ("llms", "gnns") or
# whose only vowel stands right before it ("pdes", "gpus"); such a plural is its acronym ("PDE solvers"
# did not meet "neural solvers for PDEs").
_ACRONYM_PLURAL = re.compile(r"[^aeiouy\W\d]{2,}(?:[eu])?s")
# A learned noun in -y and its adjective share a root: Snowball gives "heterophily" "heterophili" and
# "heterophilic" "heterophil" (so "symmetry"/"symmetric", "entropy"/"entropic", "anisotropy", "taxonomy",
# "cryptography"); on the corpus the root joins only such pairs ("-ology" words already share theirs)
_LEARNED_Y = re.compile(r"[a-z]{2,}(?:phil|trop|metr|nom|graph|scop|chron|gen)(?:y|ies)")
# British spellings are the American ones: "behaviour" meets "behavior", "optimise" "optimize",
# "analyse" "analyze", "dialogue" "dialog", "centre" "center", "defence" "defense". A word that only
# looks so keeps its spelling: "noise", "supervise" and "precise" (no consonant before "ise" that
# English verbs in -ise take), "promise", "surprise", "expertise", "contour", "flour".
_BRITISH = (
    (re.compile(r"([a-z]{3,}[lmnrst])is(e|es|ed|ing|ation|ations|er|ers)"), r"\1iz\2"),
    (re.compile(r"([a-z]{2,}l)ys(e|es|ed|ing|er|ers)"), r"\1yz\2"),
    (re.compile(r"([a-z]{2,}[^aeiou\W\d]|[a-z]{3,}i)our(s|ed|ing|al|ally|ist|ists|ism|less|ful|able|ably|ite|ites)?"), r"\1or\2"),
    (re.compile(r"([a-z]+log)ue(s)?"), r"\1\2"),
    (re.compile(r"(cent|met|fib|lit|theat|calib|spect|lust)re(s|d)?"), r"\1er\2"),
    (re.compile(r"(defen|offen|licen|preten)ce(s)?"), r"\1se\2"),
)
_NOT_BRITISH = re.compile(
    r"(?:prom|prem|dem|surpr|enterpr|compr|appr|expert|advert|treat|chast|exerc)is(?:e|es|ed|ing|er|ers)$|"
    r"(?:cont|det|dev|fl|sc|vel|param|troubad)our(?:s|ed|ing)?$")  # (ends so: "unpromising")
STEMS = "snowball-en+own-9"


def american(word: str) -> str:
    """The American spelling of a British one ("behaviour": "behavior"); other words as they are."""
    if _NOT_BRITISH.search(word):
        return word
    for pattern, repl in _BRITISH:
        if pattern.fullmatch(word):
            return pattern.sub(repl, word)
    return word


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    word = american(word)
    own = _OWN_STEM.get(word)
    if own:
        return own
    stemmed = str(_STEMMER.stemWord(word))
    if stemmed == word and _ACRONYM_PLURAL.fullmatch(word) and not word.endswith("ss"):
        return word[:-1]
    if stemmed.endswith("i") and _LEARNED_Y.fullmatch(word):
        return stemmed[:-1]
    made = _MADE_WITH_IZE.match(word)
    if made and str(_STEMMER.stemWord(made.group(1))) == stemmed:
        return stemmed + "iz"
    return stemmed


def one_word(a: str, b: str) -> bool:
    """Whether two stems are forms of one word: equal, or one begins the other, five letters at least ("prover"
    and "prove" of "Theorem Proving", "detector" and "detect"; "art" is no "arte")."""
    return a == b or (len(a) >= 5 and len(b) >= 5 and (a.startswith(b) or b.startswith(a)))


def is_content(word: str) -> bool:
    return word not in STOPWORDS and word not in FRAMING and (len(word) > 1 or word.isdigit())


def content_stems(text: str) -> list[str]:
    """Stems of the content words of a text, in order (repeats kept)."""
    return [stem(w) for w in words(text) if is_content(w)]


def stem_set(text: str) -> set[str]:
    """Stems of every word of a text (stop words included: a claim's words are looked up in it)."""
    return {stem(w) for w in words(text)}


_ENTITY = re.compile(r"(?<![\w-])([A-Za-z]*[A-Z][A-Za-z]*[A-Z0-9][\w.-]*|[A-Za-z]*\d[\w.%-]*|[A-Z][a-z]+)")


def entities(text: str, skip_first: bool = True) -> list[str]:
    """Names and numbers in a text: mixed-case or upper-case tokens (LeanAgent, GPT-4, CLIP), tokens
    with digits (3.5, 40, 2x), and capitalised words that do not start a sentence (Bengio, Transformer).
    """
    text = normalize(text)
    out = []
    for m in _ENTITY.finditer(text):
        tok = m.group(1).rstrip(".-")
        if not tok:
            continue
        start = m.start(1)
        before = text[:start].rstrip()
        sentence_start = not before or before[-1] in ".!?:;\"'(["
        if tok[0].isupper() and tok[1:].islower() and (sentence_start and skip_first):
            continue
        if tok[0].isupper() and tok[1:].islower() and tok.lower() in STOPWORDS | FRAMING:
            continue
        out.append(tok)
    return out


# Verbs by which a paper puts forward something of its own ("we propose X", "we release a dataset").
PROPOSAL_VERBS = ("propose", "introduce", "present", "release", "build", "construct", "curate", "create",
                  "develop", "design", "collect", "contribute")
PROPOSING = frozenset(stem(w) for w in PROPOSAL_VERBS)

_BREAK = re.compile(r"[.!?;:,()\[\]]+(?:\s|$)|[;()\[\]]")


@dataclass
class PhraseStats:
    """Two-word terms as the papers of a store write them: "prompt injection" is a term when most
    papers that use both words write them side by side; "model merging" is not (its papers also
    write "merging models", "merged model" …)."""

    pairs: dict[tuple[str, str], int] = field(default_factory=dict)  # adjacent content stems → papers
    postings: dict[str, frozenset[int]] = field(default_factory=dict)  # stem of such a pair → papers

    MIN_PAPERS = 3  # a term some papers use, not one paper's wording
    SIDE_BY_SIDE = 0.5  # share of the papers using both words that write them as the term
    ALONE = 0.5  # ... while more than this share of the papers using either word use it otherwise

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> PhraseStats:
        pairs: Counter[tuple[str, str]] = Counter()
        seen: list[set[str]] = []
        for text in texts:
            found: set[tuple[str, str]] = set()
            stems: set[str] = set()
            for part in _BREAK.split(text):  # side by side within a clause, not across ". " or ", "
                seq = [stem(w) if is_content(w) else "" for w in words(part)]
                found.update((a, b) for a, b in zip(seq, seq[1:]) if a and b and a != b)
                stems.update(seq)
            pairs.update(found)
            seen.append(stems)
        kept = {pair: n for pair, n in pairs.items() if n >= cls.MIN_PAPERS}
        wanted = {s for pair in kept for s in pair}
        postings: dict[str, set[int]] = {s: set() for s in wanted}
        for i, stems in enumerate(seen):
            for s in stems & wanted:
                postings[s].add(i)
        return cls(kept, {s: frozenset(v) for s, v in postings.items()})

    def is_term(self, a: str, b: str) -> bool:
        """Whether the stems a, b (in this order) are one term the papers write, which neither word
        says alone: most papers using both write them side by side, and most papers using either
        use it otherwise ("prompt injection"; not "scaling laws", whose "laws" are nearly all
        scaling laws, nor "spurious correlations")."""
        n = self.pairs.get((a, b), 0)
        if n < self.MIN_PAPERS:
            return False
        with_a, with_b = self.postings.get(a, frozenset()), self.postings.get(b, frozenset())
        return n >= self.SIDE_BY_SIDE * len(with_a & with_b) and n < self.ALONE * min(len(with_a), len(with_b))


@dataclass
class TermStats:
    """Document frequencies of stems over the papers of a store (title + abstract per paper), and
    the two-word terms its papers write (when known)."""

    n_docs: int = 0
    df: Counter[str] = field(default_factory=Counter)
    phrases: PhraseStats | None = None

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> TermStats:
        stats = cls()
        for text in texts:
            stats.n_docs += 1
            stats.df.update(stem_set(text))
        return stats

    def idf(self, stem_: str) -> float:
        """Smoothed inverse document frequency; a stem no paper uses gets the highest weight."""
        return self.rarity(self.df.get(stem_, 0))

    def rarity(self, papers: int) -> float:
        """The idf of anything this many of the papers hold (a stem, a two-word term)."""
        n = max(self.n_docs, 1)
        return math.log((n + 1) / (papers + 0.5))

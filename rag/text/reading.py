"""Reading a question into what it asks for, its topic and each constraint (no LLM, no embeddings).

"Which papers defend against jailbreaks at inference time?" reads as: asks for methods; topic
"jailbreaks"; constraints "must defend" (direction) and "at inference time" (setting). A listed paper
must state every one of them (see rag.grounding.admission).

Rules, from how questions are phrased:
- The question's framing ("Which ICLR 2025 papers", "How do papers", "Find work that") is set aside;
  what it asks for comes from its first words: how/by what means → a method, why → a reason, what do
  … find/show → a finding, a benchmark/dataset → a benchmark, prove/bound/theory → a theory result,
  compare/versus → a comparison, else the papers themselves.
- A direction verb or noun before the topic (defend, detect, generate, remove, attack, evaluate …)
  is a direction constraint: a defence paper states its defence, a detector detects.
- A technique marker (using, with, via, through, leveraging, based on, "use X to …") opens a
  technique constraint: the words up to the next marker.
- A setting marker (at, without, under, during, in, on, for, from, across) opens a setting
  constraint, when words that carry content come before it; "for X" after nothing else is the topic.
- Everything else is the topic.
Each facet is a list of units (a content word, or a phrase from a family of equivalent phrasings such
as "training-free" / "without training"); acronyms are matched against their expansions where the
papers define them ("reinforcement learning (RL)").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from rag.text.query import TITLE_LEAD, is_question
from rag.text.terms import FRAMING, LEADING_FRAME, PROPOSAL_VERBS, STOPWORDS, compounds, stem, words

Asks = Literal["method", "reason", "finding", "benchmark", "theory", "comparison", "papers"]
FacetKind = Literal["topic", "technique", "setting", "direction", "role"]

# Families of phrasings that say the same thing in abstracts. A question word in a family is met by
# any member; multi-word members must occur in one sentence. General ML vocabulary, not examples.
FAMILIES: dict[str, tuple[str, ...]] = {
    "defend": (
        "defend", "defense", "defence", "defenses", "defences", "defending", "defensive", "protect",
        "protection", "protecting", "safeguard", "mitigate", "mitigation", "mitigating", "prevent",
        "prevention", "guard", "guardrail", "guardrails", "shield", "immunize", "countermeasure",
        "robustness against", "robust against", "robust to", "robustness to", "adversarial robustness",
        "adversarially robust", "adversarial training", "certified", "certify", "certification",
        "purification", "purify", "differentially private", "differential privacy", "privacy-preserving",
        "privacy preserving", "unlearnable",
    ),
    "withstand": (),  # "robust to X": the defend family and the paper's own robustness (below)
    "attack": (
        "attack", "attacks", "attacking", "attacker", "attackers", "exploit", "exploits", "exploiting", "break",
        "breaks", "breaking", "bypass", "bypasses", "bypassing", "evade", "evades", "evading", "evasion", "forge",
        "forging", "forgery", "spoof", "spoofing", "steal", "stealing", "circumvent", "circumventing",
    ),
    "detect": (
        "detect", "detects", "detection", "detecting", "detector", "detectors", "distinguish", "distinguishes",
        "distinguishing", "discriminate", "discriminating", "watermark", "watermarking",
    ),
    "generate": ("generate", "generation", "generating", "generator", "generative", "synthesize", "synthesis", "synthesizing", "create", "creating", "produce", "producing", "design", "designing"),
    "remove": ("remove", "removal", "removing", "erase", "erasure", "erasing", "eliminate", "eliminating", "unlearn", "unlearning", "delete", "deletion", "forget"),
    "evaluate": ("evaluate", "evaluation", "evaluating", "benchmark", "benchmarks", "benchmarking", "measure", "measuring", "assess", "assessment", "audit", "probe", "probing", "test", "testing"),
    "explain": ("explain", "explanation", "explaining", "interpret", "interpretability", "interpretable", "interpreting", "understand", "understanding", "analyze", "analysis", "mechanistic"),
    "benchmark": ("benchmark", "benchmarks", "dataset", "datasets", "testbed", "testbeds", "test suite",
                  "evaluation suite", "leaderboard", "arena", "corpus"),
    "accelerate": ("accelerate", "acceleration", "accelerating", "speed", "speedup", "faster", "fast", "efficient", "efficiency", "reduce latency", "lower latency", "cheaper",
                   # cheaper in memory: "to reduce inference-time LLM memory usage" (not "compress": a VAE compresses videos)
                   "memory usage", "memory footprint", "memory-efficient"),
    "theory": ("theory", "theoretical", "theoretically", "theorem", "theorems", "provable", "provably", "prove", "proves", "proof"),
    # a task, not a theory result: "theorem proving" is not met by "proof" or "theoretical"
    "theorem-proving": ("theorem proving", "theorem prover", "theorem provers", "automated theorem proving",
                        "proof assistant", "proof assistants", "formal proof", "formal proofs", "formal mathematics",
                        "autoformalization", "lean", "lean 4", "isabelle", "coq", "proof search"),
    "mitigate": (
        "mitigate", "mitigates", "mitigating", "mitigation", "alleviate", "alleviates", "alleviating",
        "address", "addresses", "prevent", "prevents", "preventing", "counteract", "counteracts",
        "overcome", "overcomes", "avoid", "avoids", "tackle", "resolve", "remedy", "combat", "reduce",
        "reduces", "reducing", "mitigated", "prevention", "suppress", "eliminate",
    ),
    "reduce": ("reduce", "reducing", "reduction", "lower", "decrease", "compress", "compression", "compressing", "shrink", "save", "saving", "fewer", "less"),
    "compress": ("compress", "compression", "compressing", "compressed", "prune", "pruning", "pruned", "evict",
                 "eviction", "evicting", "quantize", "quantization", "quantized", "quantizing", "sparsify",
                 "sparsification", "merge", "merging", "reduce", "reduction", "reducing", "shrink"),
    "training-free": (
        "training-free", "training free", "without training", "without retraining", "without fine-tuning",
        "without finetuning", "without any training", "without additional training", "no training",
        "no retraining", "no fine-tuning", "tuning-free", "zero-shot", "plug-and-play", "post-hoc",
        "inference-time", "test-time", "at inference", "during inference", "at test time", "off-the-shelf",
        "no additional training", "without further training", "without updating", "decoding strategy",
        "decoding method", "decoding algorithm",
    ),
    "inference-time": (
        "inference time", "inference-time", "test time", "test-time", "at inference", "during inference",
        "during decoding", "decoding time", "decoding", "training-free",
        "post-hoc", "without retraining", "without fine-tuning", "without training", "runtime",
    ),
    "few-step": ("few steps", "few-step", "fewer steps", "one-step", "one step", "single-step", "single step", "two-step", "few sampling steps", "fewer sampling steps", "few-shot sampling", "single sampling step", "one sampling step"),
    "reinforcement": ("reinforcement learning", "rl", "rlhf", "rlaif", "policy gradient", "policy optimization", "ppo", "grpo", "q-learning", "actor-critic"),
    "llm": ("llm", "llms", "large language model", "large language models", "language model", "language models",
            "gpt", "llama", "mistral", "qwen", "gemma"),
    "mobile": ("smartphone", "smartphones", "mobile", "android", "phone", "phones", "ios"),
    "vlm": ("vlm", "vlms", "vision-language", "vision language", "multimodal", "mllm", "mllms", "lvlm", "lvlms"),
    "graph": ("graph", "graphs", "gnn", "gnns", "node", "nodes", "molecular graph"),
    "diffusion": ("diffusion", "denoising", "score-based"),  # flow matching is its own family: asked for, named
    "math": ("math", "mathematical", "mathematics", "arithmetic", "theorem", "gsm8k", "olympiad"),
    "federated": ("federated", "fl", "clients", "decentralized"),
    "privacy": ("privacy", "private", "differential privacy", "differentially private", "dp"),
    "code": ("code", "coding", "program", "programs", "programming", "software"),
    "robot": ("robot", "robots", "robotic", "robotics", "manipulation", "embodied"),
    "video": ("video", "videos"),
    "audio": ("audio", "sound", "sounds", "acoustic"),  # (speech is one kind of audio: asked for, named)
    # "several LLM agents": papers write "multi-agent" or "multiple agents"
    "multiple": ("multiple", "several", "multi"),
    # text or images a model made: papers name them by whichever model they study
    "machine-generated": ("machine-generated", "ai-generated", "llm-generated", "model-generated", "machine-written",
                          "ai-written", "llm-written", "written by llms", "written by large language models",
                          "generated by llms", "generated by large language models", "synthetic text"),
    "image": ("image", "images", "visual", "vision", "pixel", "pixels", "photo"),
    # a matrix split into factors: "low-rank factorization" is what "low-rank decomposition" does
    "factorization": ("factorization", "factorisation", "factorize", "factorise", "factorized", "factorizing",
                      "decomposition", "decompositions", "decompose", "decomposed", "decomposing"),
    # learning from a handful of demonstrations: papers say "one-shot", "a single demo", "just one or two"
    "few-shot": ("few-shot", "one-shot", "few shot", "one shot", "k-shot", "low-shot", "one or two", "handful of",
                 "single demonstration", "single demo", "single example", "single trajectory", "one demonstration",
                 "one demo", "few demonstrations", "few examples", "few trajectories", "limited demonstrations",
                 "limited number of demonstrations", "small number of demonstrations"),
    # learning from few labelled examples, as abstracts write it ("limited labeled data", "semi-supervised",
    # "data scarcity", "low-data regime", "label-efficient")
    "label-scarce": ("label-scarce", "label scarcity", "scarce labels", "few labels", "limited labels", "limited labeled",
                     "limited labelled", "small labeled", "small labelled", "few labeled", "few labelled", "semi-supervised",
                     "low-data", "data scarcity", "data-scarce", "label-efficient", "label efficiency", "few-shot",
                     "minimal supervision", "limited supervision"),
    # learning one task after another: papers say "continual", "lifelong", "class-incremental"
    # (only the plain words open it: a question on continual learning is read as before)
    "continual": ("sequential training", "sequential tasks", "sequential learning", "sequence of tasks",
                  "tasks sequentially", "trained sequentially", "continual", "continually", "lifelong",
                  "incremental learning", "class-incremental", "task-incremental", "domain-incremental"),
    # languages other than English: papers name the ones they study, or say multilingual
    "non-english": ("non-english", "multilingual", "cross-lingual", "crosslingual", "multi-lingual",
                    "arabic", "chinese", "japanese", "korean", "hindi", "bengali", "urdu", "swahili", "african",
                    "indic", "french", "german", "spanish", "portuguese", "russian", "vietnamese", "thai",
                    "indonesian", "turkish", "persian", "hebrew", "languages other than english"),
}
FAMILIES["withstand"] = FAMILIES["defend"] + (
    "robust", "robustness", "robustly", "resilient", "resilience", "resistant", "resistance", "immune")
# The families a direction word can open: the paper must state the direction in its own sentences.
DIRECTIONS = ("defend", "attack", "detect", "generate", "remove", "evaluate", "explain", "withstand")
_DIRECTION_LABEL = {
    "defend": "must defend or protect",
    "withstand": "must defend or make it robust",
    "attack": "must attack",
    "detect": "must detect",
    "generate": "must generate",
    "remove": "must remove or unlearn",
    "evaluate": "must evaluate or benchmark",
    "explain": "must explain or interpret",
    "accelerate": "must make it faster or cheaper",
    "benchmark": "must introduce a benchmark or dataset",
}
# "propose / new / release … benchmarks": the benchmark is the paper's contribution, not its evaluation.
_CONTRIBUTION_CUE = re.compile(rf"\b(?:new|novel|built|(?:{'|'.join(PROPOSAL_VERBS)})(?:s|d|ed)?)\b", re.I)
# Words that open a direction only as verbs or nouns of the question's own action.
_DIRECTION_OPENERS = {
    "defend": {"defend", "defends", "defending", "defense", "defenses", "defence", "defences", "protect", "protects", "protecting", "protection", "safeguard", "safeguards", "guard", "guards"},
    "attack": {"attack", "attacks", "attacking", "break", "breaks", "exploit", "exploits"},
    "detect": {"detect", "detects", "detecting", "detection", "detector", "detectors", "identify", "identifies", "distinguish", "distinguishes", "spot", "spots", "flag", "flags"},
    "generate": {"generate", "generates", "generating", "synthesize", "synthesizes", "synthesizing", "create", "creates", "creating", "produce", "produces"},
    "remove": {"remove", "removes", "removing", "removal", "erase", "erases", "erasing", "erasure", "unlearn", "unlearns", "unlearning", "eliminate", "eliminates", "delete", "deletes"},
    "evaluate": {"evaluate", "evaluates", "evaluating", "benchmark", "benchmarks", "benchmarking", "measure", "measures", "assess", "assesses", "audit", "audits"},
    "explain": {"explain", "explains", "explaining", "interpret", "interprets", "interpreting"},
    "accelerate": {"accelerate", "accelerates", "accelerating", "speed"},
}
_OPENER_OF = {w: fam for fam, ws in _DIRECTION_OPENERS.items() for w in ws}
# Nouns that carry a direction inside a topic ("jailbreak attacks", "membership inference defenses").
_NOUN_DIRECTION = {
    "attack": "attack", "attacks": "attack", "defense": "defend", "defenses": "defend", "defence": "defend",
    "defences": "defend", "detector": "detect", "detectors": "detect", "detection": "detect",
    "faster": "accelerate", "cheaper": "accelerate", "acceleration": "accelerate", "speedup": "accelerate",
    "speedups": "accelerate",
}

_TECHNIQUE = {"using", "use", "uses", "used", "utilize", "utilizes", "utilizing", "with", "via", "through",
              "leverage", "leverages", "leveraging", "employ", "employs", "employing", "apply", "applies",
              "applying", "exploiting", "harness", "harnessing"}
# Words whose "with" is part of them, not a technique ("struggle with length generalization").
_TAKES_WITH = frozenset("""struggle struggles struggling struggled cope copes coping coped deal deals dealing dealt
    interact interacts
    interacting associated correlated compared combined consistent compatible familiar concerned
    equipped""".split())
_SETTING = {"at", "without", "under", "during", "in", "on", "for", "from", "across", "within", "beyond", "when", "against",
            "after", "before"}
_PURPOSE = {"to"}
# Verbs of running methods on data: "test methods on X", "apply ML to X" (the papers need only show a result on X)
_APPLIED = frozenset("test tests testing tested apply applies applying applied evaluate evaluates evaluating evaluated "
                     "benchmark benchmarks benchmarking deploy deploys deploying deployed".split())
_BUILDS = frozenset({"build", "builds", "building", "built"})  # "builds on X": uses X
_OWNERS = frozenset({"its", "their", "the", "our", "a"})
# "papers that lean on / rely on X": X is the topic ("lean" is no theorem prover here)
_RESTS = frozenset("lean leans leaning rely relies relying depend depends depending".split())
_ADVERBS = frozenset("still often sometimes usually also always never rarely actually really".split())


def _after_subject(words: list[str], k: int) -> bool:
    """Whether the word at k follows a content word (a subject), adverbs between ("agents still explore")."""
    j = k - 1
    while j >= 0 and (words[j] in _ADVERBS or words[j].endswith("ly")):
        j -= 1
    return j >= 0 and _is_content(words[j])


# Framing verbs that, done by a subject other than papers, are the topic: as the noun of the same stem
_DONE_BY_SUBJECT = {w: noun for noun, ws in (("exploration", "explore explores explored exploring"),
                                             ("development", "develop develops developed developing"))
                    for w in ws.split()}
# A preposition before a clause opens no setting ("answer from what they memorized")
_CLAUSE_WORDS = frozenset({"what", "which", "how", "where", "when", "whom", "who", "whatever"})
# "robust to X", "resilient against X": the paper must defend, and X is what it withstands.
_WITHSTAND = frozenset("robust robustness resilient resilience resistant resistance immune secure".split())
# "better at using web browsers": a verb after a preposition is what is done, not a technique.
_GERUND_AFTER = frozenset("at in of when while".split())
# What a defence protects when it says no more than "a model": then what it withstands is the topic.
_GENERIC_OBJECTS = frozenset("""model models network networks neural deep system systems classifier classifiers
    learner learners vision image machine learning ml dnn dnns ai predictor predictors""".split())
_AT_SETTING = {"time", "inference", "test", "training", "scale", "deployment", "runtime", "test-time", "inference-time", "once"}
_BOUNDARY = {"that", "which", "who", "whose", "where", "and", "while", "whereas"}
_FRAME_EXTRA = frozenset(
    """which what how why who whom whose when where does do did is are was were can could would should
    will tell me us about give list show find any some there papers paper work works study studies
    research iclr 2025 propose proposes proposed introduce introduces recent new novel i we you please people
    report reported worked working
    explain describe summarize summarise overview ones one approaches approach methods method techniques
    technique ways way exist existing used best good latest others other kind kinds recent recently
    currently current purely mainly specifically actually really papers' models' get gets getting got make made many much
    sometimes often usually typically always frequently generally commonly given afterwards afterward themselves itself still look looks looking
    cause causes caused setting settings scenario scenarios say says said another whether like
    looked try tries tried trying things stuff want wants wanted happen happens happened happening love trick tricks""".split()
)
# "In 'Title', why …": the title to its closing quote (a title may hold commas: "Don't flatten, tokenize! …")
_NAMED_TITLE = rf"{TITLE_LEAD}.+?[\"”'’],\s*|{TITLE_LEAD}[^,]+,\s*"
_ASKS_RULES: tuple[tuple[Asks, re.Pattern[str]], ...] = (
    # (not inside a compound: "team-versus-adversary games" name a kind of game)
    ("comparison", re.compile(r"(?<!-)\b(?:compare|compared|comparison|versus|vs\.?|differ|difference|better than)\b(?!-)", re.I)),
    # (after a clause that names the paper: "In 'Title', why do …", "According to 'Title', how …")
    ("reason", re.compile(rf"^\W*(?:{_NAMED_TITLE})?why\b|\band\s+why\b|\bwhat\s+(?:causes|explains)\b|\breasons?\s+(?:why|for)\b", re.I)),
    ("finding", re.compile(
        r"\bwhat\b.*\b(?:find|found|show|shown|reveal|observe|conclude|learn)\b|\bfindings?\b|"
        r"\b(?:find|finds|show|shows|reveal|reveals|suggest|suggests)\s+that\b|\bresults?\b|\bevidence\b|\binsights?\b",
        re.I,
    )),
    ("theory", re.compile(r"\b(?:prove|proves|proof|theorem(?!\s+prov)|bound|bounds|guarantee|guarantees|theoretical|theory|convergence rate)\b", re.I)),
    ("benchmark", re.compile(r"\b(?:benchmarks?|datasets?|evaluation suites?|leaderboard)\b", re.I)),
    ("method", re.compile(rf"^\W*(?:{_NAMED_TITLE})?how\b(?!\s+(?:many|much|often|long|large|big|fast|old|far)\b)|\band\s+how\b|\bby what means\b|\bwhat (?:method|technique|approach|mechanism)s?\b|\bmethods?\b|\btechniques?\b|\bapproaches\b", re.I)),
)
_HOW_OF_A_SUBJECT = re.compile(r"^\W*how\s+(?:does|do|did|can|could|is|are|was|were)\b", re.I)
_ASKS_RULES_BENCHMARK = re.compile(r"(?:benchmarks?|datasets?|suites?|leaderboards?)$", re.I)
# Verbs of what papers do in general ("reduce", "fail", "avoid"): part of the topic, but weak evidence
# of it; their units weigh a third.
SOFT = frozenset(
    """achieve achieves avoid avoids boost boosts enable enables enhance enhances fail fails failing help
    helps improve improves improving make makes making handle handles solve solves train trains work
    perform performs deal deals get gets go goes do does better best good bad succeed succeeds mitigate
    mitigates mitigating alleviate alleviates prevent prevents preventing counteract counteracts overcome
    overcomes tackle tackles resolve resolves combat combats reduce reduces reducing deal dealing cope
    coping fine-tune fine-tunes fine-tuning finetune finetunes finetuning tune tunes train trains learn learns
    use uses apply applies improve improves improving enhance enhances boost boosts better struggle struggles
    struggling hurt hurts compromise compromises add adds adding cut cuts cutting require
    requires required number target targets targeting adapt adapts adapting run runs running combine combines
    combining integrate integrates integrating test evaluating assessing measuring rely relies relying ground
    grounds grounding treat treats treating produce produces producing build builds building create creates
    creating develop develops developing construct constructs constructing devise devises bring brings
    repurpose repurposes repurposing leverage leverages leveraging reuse reuses reusing going serve serves
    serving put puts putting teach teaches teaching taught probe examine examines bringing brought carry
    carries carried carrying gone went back take takes taking took taken watch watches watching watched
    observing seeing turn turns turning turned""".split()
)
# ... as the past tense says them ("Has anyone handled privacy and fairness together …?" needs no paper to say
# "handled"), and the verbs of trying ("managed to scale", "tried distilling"). Not the participles that name a
# kind of thing ("targeted attacks", "grounded generation", "reduced-order models", "treated units", "learned
# optimizers", "integrated gradients", "fine-tuned models"), nor those of a study ("Has anyone evaluated causal
# discovery on real data …" asks for evaluations: made weak, a new estimator was listed).
SOFT |= frozenset(
    """achieved avoided boosted enabled enhanced failed helped improved made handled solved performed dealt succeeded
    mitigated alleviated prevented counteracted overcame resolved combated coped combined applied adapted struggled
    hurt compromised added relied produced built created constructed devised repurposed leveraged reused served put
    trained manage manages managed managing try tries tried trying
    attempt attempts attempted attempting""".split()
)


# Words that name no setting or topic of their own: any model, a general verb ("attacks on ML
# models", "when trained", "running or fine-tuning models")
SAY_NOTHING = _GENERIC_OBJECTS | SOFT | {"trained", "training"}


# Nouns that name what is made or fed, not what it is ("AI-generated content", "out-of-distribution
# inputs"): weak evidence, as the general verbs are ("Unsupervised Disentanglement of Content and
# Style" was related to "detect AI-generated or deepfake content" on "content" alone).
WEAK_NOUNS = frozenset("content contents input inputs output outputs examples idea ideas notion notions tools".split())
# Modifiers that say how a model was had, not what it is ("pretrained diffusion models"): an abstract
# that uses one rarely says so in its own sentences
WEAK_MODIFIERS = frozenset("pretrained pre-trained frozen off-the-shelf".split())
# ... and so do words of emphasis ("output whole graphs", "the entire pipeline")
WEAK_MODIFIERS |= frozenset("whole entire".split())
# An adverb says how, not what ("explore so inefficiently"): weak evidence, and never the word a
# why-question needs stated
ADVERB = re.compile(r"(?:ally|ently|antly|ively|ously|ibly|ably|fully|lessly|ingly|edly)$")
# How much, or that it comes to be, said of any phenomenon: no word of what a why-question asks explained
# ("why do the deeper layers contribute so little": "contribute", not "little"; "end up producing less
# diverse outputs": "diverse"; rag.grounding.admission)
DEGREE = frozenset("little less more much few fewer lot lots barely hardly rarely often poorly well worse better so "
                   "too very end up".split())


class Unit(BaseModel):
    """One thing a facet needs: any of `alternatives` (each a tuple of stems met in one sentence)."""

    text: str
    alternatives: list[tuple[str, ...]]
    weight: float = 1.0
    together: bool = Field(False, description="An alternative's stems are met anywhere in one sentence, not only as a phrase.")
    part: int = Field(0, description="Which part of the topic it belongs to ('watermarks' of 'LLM-generated text'): each part must be met.")
    needed: bool = Field(False, description="What the papers must do ('Which papers watermark images …'): met by every listed paper.")


class Facet(BaseModel):
    kind: FacetKind
    required: bool = Field(True, description="False: it ranks the papers but does not exclude any.")
    text: str = Field(description="The facet as the question says it.")
    label: str = Field(description="How it is shown: 'jailbreaks', 'must defend or protect', 'at inference time'.")
    units: list[Unit] = Field(default_factory=list)
    examples: list[Unit] = Field(
        default_factory=list,
        description="What the question gives as examples of it ('medical imaging such as MRI, CT or X-ray'): a paper "
                    "that states one meets it.")


class Reading(BaseModel):
    """What a question asks for, its topic and each constraint a listed paper must meet."""

    asks: Asks = "papers"
    topic: Facet | None = None
    constraints: list[Facet] = Field(default_factory=list)
    aside: str = Field("", description="What the question sets aside ('rather than only benchmarking tool use').")
    narrowed: list[str] = Field(default_factory=list, description="Stems of family members the aside names, no longer "
                                "meeting what is asked ('as opposed to watermarking it': watermark); titles naming one are set aside.")
    used: bool = Field(False, description="The topic is a technique the papers use ('Which papers use "
                       "expectation-maximization?'), not what they are about.")
    study: bool = Field(False, description="The question asks for studies of its topic ('explain why', 'analyse "
                                           "whether', 'evidence of what … breaks'), not only methods.")
    tested: bool = Field(False, description="The topic is data or a domain the papers are tested on ('Which "
                         "papers develop or test methods on single-cell data?'), not what they are about.")

    @property
    def facets(self) -> list[Facet]:
        return ([self.topic] if self.topic else []) + self.constraints

    def note(self) -> str:
        """The reading as shown to people: 'how: jailbreaks — must defend or protect, at inference time'."""
        text = self.describe()
        lead = {"method": "how", "reason": "why", "finding": "findings", "theory": "theory",
                "benchmark": "benchmarks", "comparison": "comparison"}.get(self.asks)
        return f"{lead}: {text}" if lead and text else text

    def describe(self) -> str:
        """'jailbreaks — must defend or protect, at inference time' (empty when nothing was read)."""
        head = self.topic.label if self.topic else ""
        rest = ", ".join(c.label for c in self.constraints)
        if head and rest:
            return f"{head} — {rest}"
        return head or rest


# An aside in parentheses or brackets: what a text says of something else, not what it states
ASIDE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
# Where a question stops stating what it wants: a contrast ("rather than X", "as opposed to X", "not
# new attacks", "outside language modeling"), examples ("such as X", "e.g. X"), or a second question
# ("…, and how do they …").
_CONTRAST_WORDS = (
    r"rather\s+than|as\s+opposed\s+to|instead\s+of|(?<!languages\s)other\s+than|as\s+distinct\s+from|"
    r"(?<!from\s)outside\s+(?!(?:of\s+)?(?:the|a|an|its|their|this|these|english)\b)(?:of\s+)?|"
    r"not\s+(?:new|just|only|merely)|but\s+not|excluding|except(?:\s+for)?"
)
_CONTRAST = re.compile(rf"(?:,\s*)?\b(?:{_CONTRAST_WORDS})\b.*$|,\s*not\b.*$", re.I | re.S)


# Words of a question that asks for studies of its topic rather than methods
_ASKS_FOR_A_STUDY = re.compile(
    r"\b(?:explain\w*|analy[sz]\w*|examin\w*|understand\w*|investigat\w*|characteri[sz]\w*|evidence|why|whether|"
    r"what\s+\w+\s+does|studies|theor\w*|diagnos\w*)\b", re.I)


def without_aside(question: str) -> str:
    """The question without what it sets aside: the text to search and to compare sentences with (the
    words of "not de novo structure generators" draw structure generators). Callers keep a description's
    contrasts: "uses X rather than Y" says what the paper does."""
    kept = _CONTRAST.sub("", question).strip()
    return kept if words(kept) else question


_CUT = re.compile(
    rf"(?:,\s*)?\b(?:{_CONTRAST_WORDS}|such\s+as|for\s+example|for\s+instance|"
    r"according\s+to|(?<!when\s)(?<!why\s)(?<!how\s)(?<!where\s)and\s+(?:how|why|what|which|where|when|along)|including)\b.*$|,\s*not\b.*$|"
    r",\s*(?:either|whether)\b.*$|,?\s+or\s+else\b.*$|"
    # a preference, not a demand: "…, ideally ones that use LLMs as the backbone"
    r",\s*(?:ideally|preferably|optionally|if\s+possible)\b.*$|"
    # examples after ", say": "… in RL, say for zero-shot transfer or imitation"; "for things like A or B"
    r"(?:,\s*|\s+)(?:for\s+|in\s+)?(?:things|stuff)\s+like\b.*$|"
    r",\s*say,?\s+(?!that\b).*$|"

    r"(?:,\s*)?\be\.\s?g\.?(?!\w).*$",
    re.I | re.S,
)


# "use an LLM such as GPT-4 to write captions": one name as an example, and the question goes on after it (cut
# there, the question was "use an LLM")
_ONE_EXAMPLE = re.compile(r"(?:,\s*)?\s+(?:such\s+as|e\.\s?g\.?,?)\s+[\w.-]+(?:\s+[\w.-]+)?,?"
                          r"(?=\s+(?:to|for|in|on|with|that|which|when|by|against|from|under|at|during|without|across|via|using)\s)", re.I)


def _one_example(m: re.Match[str]) -> str:
    """Without one named example when the question goes on after it and lists nothing more ("e.g. prefix-aware
    scheduling across GPUs, tree-attention kernels, or …" is a list of examples, which `_CUT` cuts whole)."""
    rest = re.split(r"[?.;!]", re.sub(r"\([^()]*\)", " ", m.string[m.end():]), maxsplit=1)[0]
    return m.group(0) if re.search(r",|\b(?:or|and)\b", rest) else ""


# "X, i.e. Y": Y words X again; either wording is the topic (rag.grounding.admission.and_sides).
# "X, meaning Y", "X, namely Y", "X, that is, Y" say the same (`clean` writes them "i.e.").
RESTATES = frozenset({"i.e", "ie"})
# "inverse problems like deblurring, inpainting or super-resolution with diffusion models", "such as
# A or B using C": examples, up to the word that goes on with the question (what follows a list that
# runs to the end, or one example, `_CUT` cuts)
_OPTION = r"[\w-]+(?:\s+(?!(?:by|using|with|via|for|in|on|without|from|to|as|at|that|which|when|where)\b)[\w-]+)?"
_LIKE = re.compile(rf"(?<!papers)(?<!works)(?<!ones)(?:,\s*)?\s+(?:like|such\s+as)\s+{_OPTION}(?:\s*,\s*{_OPTION})*\s*,?\s+(?:or|and)\s+{_OPTION}(?=\s*[,?.!]|\s+(?:by|using|with|via|for|in|on|without|from|to|as|at|that|which|when|where)\b)", re.I)
_WITH_NO = re.compile(r"\bwith\s+(?:no|zero)\b", re.I)  # "with no accuracy loss": without it
# "methods that are not built on diffusion priors", "that do not use labels": without them (the
# technique is what the papers go without, never one they must use)
_NOT_USING = re.compile(r"\b(?:(?:that|which)\s+(?:are|is|do|does)\s+)?(?:not|n't)\s+(?:built\s+on|based\s+on|"
                        r"rel(?:y|ying)\s+on|us(?:e|ing)|requir(?:e|ing)|need(?:ing)?)\b", re.I)
# "(multi-object tracking, video segmentation, spatio-temporal grounding and so on)": a list of examples
# that ends as ", etc." does
_AND_SO_ON = re.compile(r"(?:,\s*|\s+)(?:and|or)\s+(?:so\s+on|so\s+forth|the\s+like|similar|such)(?=\s*[)\].,;?!]|\s*$)", re.I)
_RESTATING = re.compile(r",\s*(?:meaning|namely|that\s+is(?:\s+to\s+say)?|where)\b,?", re.I)


# Contractions, written out ("they're given" is not the word "re")
_CONTRACTIONS = ((re.compile(r"\bcan['’]t\b", re.I), "cannot"), (re.compile(r"\bwon['’]t\b", re.I), "will not"),
                 (re.compile(r"n['’]t\b", re.I), " not"), (re.compile(r"['’]re\b", re.I), " are"),
                 (re.compile(r"['’]ve\b", re.I), " have"), (re.compile(r"['’]ll\b", re.I), " will"),
                 (re.compile(r"\b(i)['’]m\b", re.I), r"\1 am"), (re.compile(r"['’]d\b", re.I), " would"))
# "work on zero-shot coordination or on adapting to new teammates": a second thing it also takes, after
# "or" and a preposition, is no constraint of the first
_OR_AGAIN = re.compile(r",?\s+or\s+(?P<prep>on|in|for|about|with)\s+(?P<rest>[^,;:?.()]+)", re.I)


def _or_again(m: re.Match[str]) -> str:
    """"for images or for graphs" is "for images or graphs"; a longer second thing ("or on adapting to
    unfamiliar teammates") goes: the first is read, and the search still ranks by both. (The first
    preposition may be gone with the question's frame: "work on zero-shot coordination or on …".)"""
    return f" or {m.group('rest')}" if len(m.group("rest").split()) <= 3 else " "


# Who made a generated thing, as the family "machine-generated" names it: "llm-generated", "ai-generated"
_MAKER = {"llm": "LLM", "large": "LLM", "language": "LLM", "ai": "AI", "machine": "machine"}


# Idioms of time that frame the question ("detect after the fact that my data was used")
_IDIOMS = ((re.compile(r"\b(?:after\s+the\s+fact|in\s+hindsight)\b", re.I), "afterwards"),
           # a request for pointers opens the question: "I want proposals of new optimizers", "Any pointers to
           # work on X", "Recommendations for papers on X" ask for X (a noun of the request, not of the topic)
           (re.compile(r"^(?P<lead>(?:[\w']+\s+){0,3}?)(?:proposals|pointers|recommendations|suggestions|references)"
                       r"\s+(?:of|to|for|on|about)\s+", re.I), r"\g<lead>"),
           # phrasal verbs of finding ask to find: "dig up the papers that …", "track down work on X", "point
           # me to papers on X" (the particle is no topic)
           (re.compile(r"\b(?:dig|digging|track|tracking|hunt|hunting|round|rounding|pull|pulling)\s+(?:up|down|out)\b"
                       r"(?=\s+(?:the|a|an|some|any|all|those|these|work|papers|research|studies|recent|relevant)\b)"
                       r"|\bpoint(?:ing)?\s+(?:me|us)\s+(?:to|at|towards?)\b", re.I), "find"),
           # ... and so does "I'd love examples of work on X" ("which examples to label" is no request)
           (re.compile(r"\b(?P<want>want|need|love|like|appreciate)\s+(?:some\s+|a\s+few\s+)?examples\s+(?:of|for|on|about)\s+",
                       re.I), r"\g<want> "),
           (re.compile(r"\bin\s+the\s+first\s+place\b", re.I), ""),
           # the asker looking for papers after a heading ("Forgetting on purpose: I'm looking for papers that …"): the
           # heading, then papers that … (read as words of the topic, "i am looking" was part of it)
           (re.compile(r"\b(?:i\s+am|we\s+are)\s+(?:looking|searching|hunting|asking)\s+for\s+(?=(?:papers|work|research|"
                       r"studies|methods|anything)\b)", re.I), ""),
           # "…, or benchmarks that test exactly this": another kind of work on the same thing, no words of its own
           (re.compile(r",?\s+(?:or|and)\s+(?:\w+\s+)?(?:benchmarks?|datasets?|methods?|tools?|evaluations?)\s+that\s+"
                       r"(?:test|tests|evaluate|evaluates|measure|measures|cover|covers|address|addresses|do|does)\s+"
                       r"(?:exactly|precisely|just)?\s*(?:(?:this|that|it|these|them)\b|(?=\s*[?.!]?\s*$))", re.I), ""),
           # adverbial idioms say how or how surely, not what ("papers that reset parts of a network on purpose" was
           # "not stated: on purpose" of every resetting paper)
           (re.compile(r"\b(?:on\s+purpose|in\s+practice|in\s+general|in\s+principle|by\s+design|at\s+all)\b", re.I), ""),
           (re.compile(r"\s*[:;,]?\s*\bwhat(?:['’]s|\s+is)\s+out\s+there\b\s*\??", re.I), ". "),
           (re.compile(r"\bon\s+the\s+fly\b", re.I), "online"),
           # "make RL agents hold up when an adversary perturbs …": robust
           (re.compile(r"\b(?:hold|holds|holding|held)\s+up\b", re.I), "robust"),
           # "explainability methods built for time-series models", "rankings built from pairwise comparisons":
           # methods for them, rankings from them (the participle says how any method comes to be)
           (re.compile(r"\b(?:built|designed|tailored|made|crafted|constructed)\s+(?:specifically\s+|especially\s+)?(?=(?:for|from)\b)",
                       re.I), ""),
           # a condition that does not hold is a setting beyond it ("when exchangeability does not hold":
           # abstracts write "non-exchangeable", "beyond exchangeability"; no abstract says "hold"), and
           # what is not at hand is gone ("when labels are not available": without labels)
           (re.compile(r"\b(?:when|where|if|in\s+which)\s+(?P<x>(?:[\w.-]+\s+){1,4}?)(?:does|do|did|is|are|was|were|may|might|can|cannot)"
                       r"\s+(?:not\s+)?(?:(?<=not\s)(?:hold|apply|met|satisfied|true|valid)|violated|break\s+down|fails?\s+to\s+hold)\b", re.I),
            lambda m: "beyond " + re.sub(r"\s*\b(?:assumptions?|conditions?|property)\s*$", " ", m.group("x"), flags=re.I)),
           (re.compile(r"\b(?:when|where|if|in\s+which)\s+(?P<x>(?:[\w.-]+\s+){1,4}?)(?:is|are|was|were)"
                       r"\s+(?:not\s+(?:available|accessible|given|observed|provided)|unavailable|missing|absent|inaccessible|unobserved)\b", re.I),
            r"without \g<x>"),
           # "text generated by LLMs" is LLM-generated text (one thing, as abstracts name it), not any text,
           # generation and LLMs
           (re.compile(r"\b(?P<what>texts?|images?|content|code|videos?|audio|speech|essays?|answers?|reviews?)\s+"
                       r"(?:generated|written|produced|created|synthesi[sz]ed)\s+by\s+(?:an?\s+|the\s+)?(?P<who>LLMs?|"
                       r"(?:large\s+)?language\s+models?|AI|machines?)(?![\w-])", re.I),
            lambda m: f"{_MAKER[m.group('who').split()[0].lower().rstrip('s')]}-generated {m.group('what')}"),
           # "with few labels", "from limited labeled data": a setting, not a technique of using labels
           (re.compile(r"\b(?:with|from|using|given|on|under)\s+(?:only\s+|just\s+|very\s+)?(?:few|limited|scarce|little|"
                       r"a\s+handful\s+of|a\s+small\s+(?:number|amount)\s+of|minimal)\s+(?:labels|labell?ed\s+(?:data|examples|samples)|"
                       r"annotations|annotated\s+data|supervision)\b", re.I), "from few labels"),
           # "from just one or two demonstrations": few-shot ("two" alone would be met by any "two")
           (re.compile(r"\b(?:just\s+|only\s+)?(?:one\s+or\s+two|one\s+or\s+a\s+few|a\s+couple\s+of|a\s+handful\s+of|"
                       r"a\s+few|very\s+few|few|a\s+single|one|a\s+small\s+number\s+of)\s+(?=(?:demonstrations?|demos?|"
                       r"examples?|trajectories|(?:labell?ed\s+)?examples)\b)", re.I), "few-shot "),
           # "vision-language models outside English", "beyond English": in languages other than English (an aside
           # "outside English" set the request aside, and generic VLM papers filled the list)
           (re.compile(r"\b(?:outside|beyond)\s+(?:of\s+)?(?:the\s+)?English(?:\s+language)?\b", re.I),
            "in languages other than English"),
           # "MPC used inside a learning method": used in one ("inside" was a technique no abstract words)
           (re.compile(r"\b(used|applied|employed|run)\s+inside\b", re.I), r"\1 within"),
           # a shared second half written once: "single-/multi-index models", "pre- and post-training"
           (re.compile(r"\b([a-z]+)-\s*(?:/|\s(and|or)\s)\s*([a-z]+)-([a-z]+)\b", re.I),
            lambda m: f"{m.group(1)}-{m.group(4)} {m.group(2) or 'or'} {m.group(3)}-{m.group(4)}"))
# An aside that names the topic in other words: "implicit neural representations (coordinate-based
# networks / neural fields)", "(i.e. A or B)". Each option a phrase of two to four content words; not
# examples, exclusions, an acronym, or kinds of it ("time series (forecasting or generation)").
_SYNONYM_ASIDE = re.compile(r"\s*\(\s*(?:i\.\s?e\.?,?\s+)?([^()]*?(?:/|\bor\b)[^()]*?)\s*\)", re.I)
_NOT_SYNONYMS = re.compile(
    r"\b(?:e\.\s?g|not|no|excluding|except|including|such|like|especially|mainly|only|but|and|vs|versus)\b|\d", re.I)


def _synonyms(m: re.Match[str]) -> str:
    inner = m.group(1)
    options = [o for o in re.split(r"\s*(?:/|\bor\b|,)\s*", inner) if o.strip()]
    if (len(options) < 2 or _NOT_SYNONYMS.search(inner)
            or not all(2 <= len(compounds(o)) <= 4 and all(_is_content(w) for w in compounds(o)) for o in options)):
        return m.group(0)
    return "".join(f" / {o}" for o in options)


def _written_out(text: str) -> str:
    """Contractions and idioms in plain words, as the rest of the reading expects them."""
    for pattern, full in (*_CONTRACTIONS, *_IDIOMS):
        text = pattern.sub(full, text)
    return text


def clean(text: str, asides: bool = False) -> str:
    """The part of a question that states what it wants: without parentheses (unless `asides`: "(KANs)"
    names the topic again; an aside of other names for it is kept as options of it), contrasts, examples
    and a trailing second question."""
    text = _written_out(text)
    if not asides:
        text = ASIDE.sub(" ", _SYNONYM_ASIDE.sub(_synonyms, text))
    text = _AND_SO_ON.sub(", etc.", text)
    text = _LIKE.sub("", _NOT_USING.sub("without", _WITH_NO.sub("without", _RESTATING.sub(", i.e.", text))))
    text = _ONE_EXAMPLE.sub(_one_example, text)
    text = _OR_AGAIN.sub(_or_again, text)
    cut = _CUT.sub(" ", text)
    return cut if words(cut) else text


def _tokens(text: str) -> list[str]:
    """Lower-case words of a text, with its commas and slashes kept as tokens (they join options)."""
    out: list[str] = []
    for part in re.split(r"\s*[,;]\s*", text):
        found = compounds(part)
        if found:
            out += ([","] if out else []) + found
    return out


def _stems(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in re.split(r"[\s\-]+", text.lower()) if w)


# Members that name one instance of their family, not the family: a question for "theorem proving"
# is not met by "math", "watermarks" not by "detection", "compression" not by "fewer". Such a word is
# met by the other members of a family when a paper uses it, but does not open the family itself.
INSTANCES: dict[str, frozenset[str]] = {
    "math": frozenset({"theorem", "gsm8k", "olympiad", "arithmetic"}),
    "theory": frozenset({"theorem", "theorems"}),
    "llm": frozenset({"gpt", "llama", "mistral", "qwen", "gemma"}),
    "graph": frozenset({"node", "nodes"}),
    "robot": frozenset({"manipulation", "embodied"}),
    "image": frozenset({"pixel", "pixels", "photo"}),
    "federated": frozenset({"clients", "decentralized"}),
    "privacy": frozenset({"dp"}),
    "continual": frozenset({"continual", "continually", "lifelong", "incremental learning", "class-incremental",
                            "task-incremental", "domain-incremental"}),
    "diffusion": frozenset({"denoising"}),
    "mobile": frozenset({"android", "ios"}),
    "benchmark": frozenset({"corpus", "arena", "leaderboard"}),
    "detect": frozenset({"watermark", "watermarking"}),
    "reinforcement": frozenset({"rlhf", "rlaif", "ppo", "grpo", "q-learning", "actor-critic"}),
    "reduce": frozenset({"compress", "compression", "compressing", "save", "saving"}),
    # pruning, quantizing, evicting … are ways to compress; a question about one is not about the others
    "compress": frozenset({"prune", "pruning", "pruned", "evict", "eviction", "evicting", "quantize", "quantization",
                           "quantized", "quantizing", "sparsify", "sparsification", "merge", "merging", "reduce",
                           "reduction", "reducing", "shrink"}),
    "generate": frozenset({"design", "designing"}),
    "evaluate": frozenset({"test", "testing", "probe", "probing"}),
    "remove": frozenset({"forget"}),
    # "LLM-generated text" is one kind of machine-generated text
    "machine-generated": frozenset({"llm-generated", "llm-written", "written by llms", "written by large language models",
                                    "generated by llms", "generated by large language models", "synthetic text"}),
}
_FAMILY_OF: dict[str, list[str]] = {}
for _fam, _members in FAMILIES.items():
    for _m in _members:
        if " " not in _m and "-" not in _m and _m not in INSTANCES.get(_fam, ()):
            _FAMILY_OF.setdefault(stem(_m), []).append(_fam)
_PHRASE_FAMILIES = sorted(
    ((tuple(_tokens(m)), fam) for fam, ms in FAMILIES.items() for m in ms
     if (" " in m or "-" in m) and m not in INSTANCES.get(fam, ())),
    key=lambda x: -len(x[0]),
)


# Name endings that make a word a member of a family: "LiveCodeBench", "SWE-bench" are benchmarks.
# An alternative "*bench" is met by any word whose stem ends so (rag.grounding.admission).
SUFFIXES: dict[str, tuple[str, ...]] = {"benchmark": ("bench",)}
NAME_SUFFIXES = tuple(x for xs in SUFFIXES.values() for x in xs)


def family_alternatives(fam: str) -> list[tuple[str, ...]]:
    alts = [_stems(m.replace("-", " ")) for m in FAMILIES[fam]] + [(f"*{x}",) for x in SUFFIXES.get(fam, ())]
    return list(dict.fromkeys(alts))


def _is_content(w: str) -> bool:
    return w not in STOPWORDS and w not in FRAMING and w not in _FRAME_EXTRA and (len(w) > 1 or w.isdigit())


_LIKE_SUFFIXES = frozenset({"style", "like", "esque", "inspired"})  # ("prompt-based", "Adam-type" are written so)


def _word_unit(w: str) -> Unit | None:
    """One question word as a unit: its stem and its family's phrasings; a hyphenated word as its
    parts in one sentence or written whole."""
    if not _is_content(w):
        return None
    parts = [p for p in w.split("-") if p]
    if len(parts) > 1 and parts[-1] in _LIKE_SUFFIXES:
        # "Koopman-style ideas", "MaskGIT-like models": what they are like is the word
        # (a paper on a Koopman operator never says "Koopman-style")
        parts = parts[:-1]
        alts: list[tuple[str, ...]] = [tuple(stem(p) for p in parts)] + ([(stem("".join(parts)),)] if len(parts) > 1 else [])
    elif len(parts) > 1:
        alts = [tuple(stem(p) for p in parts), (stem("".join(parts)),)]
        if len(parts) == 2 and all(_is_content(p) and not p.isdigit() for p in parts):
            alts.append((stem(parts[1]), stem(parts[0])))  # a pair is written either way: "student-teacher", "text-image"
    else:
        alts = [(stem(w),)]
        if w in _NUMBERS:
            alts.append((_NUMBERS[w],))
        for fam in _FAMILY_OF.get(stem(w), []):
            if fam not in DIRECTIONS or fam == "evaluate":
                alts += family_alternatives(fam)
    return Unit(text=w, alternatives=list(dict.fromkeys(alts)),
                weight=0.34 if w in SOFT | WEAK_NOUNS | WEAK_MODIFIERS or ADVERB.search(w) else 1.0)


def _phrase_units(words: list[str]) -> list[Unit]:
    """Units of a run of words without alternatives: family phrases first, then single words."""
    out: list[Unit] = []
    i = 0
    while i < len(words):
        for phrase, fam in _PHRASE_FAMILIES:
            n = len(phrase)
            if tuple(words[i : i + n]) == phrase:
                # the phrase's own words alone say less than it ("privacy" is not "differential privacy")
                own = {stem(p) for p in phrase}
                alts = [a for a in family_alternatives(fam) if not (len(a) == 1 and a[0] in own)]
                out.append(Unit(text=" ".join(phrase), alternatives=alts))
                i += n
                break
        else:
            unit = _word_unit(words[i])
            if unit is not None:
                out.append(unit)
            i += 1
    return out


def _either(options: list[list[str]]) -> Unit | None:
    """One unit met by any of several phrasings ("diffusion or flow-matching", "A, B or C")."""
    alts: list[tuple[str, ...]] = []
    texts = []
    for option in options:
        texts.append(" ".join(option))
        if len([w for w in option if _is_content(w)]) > 1 and option[-1] in _GENERIC_HEADS:
            option = option[:-1]  # "dynamic data" is anything dynamic: the head noun says nothing of its own
        units = _phrase_units(option)
        if not units:
            texts.pop()
            continue
        if len(units) == 1:
            alts += units[0].alternatives
        else:  # a phrase: its content words in order (hyphenated ones as their parts)
            alts.append(tuple(stem(p) for w in option for p in w.split("-") if p and _is_content(p)))
    if not alts:
        return None
    # "enforce or improve fairness": a verb beside a general one is as general ("improve" alone is met
    # by nearly every abstract)
    general = any(len(o) == 1 and o[0] in SOFT for o in options)
    return Unit(text=" or ".join(texts), alternatives=list(dict.fromkeys(alts)), weight=0.34 if general else 1.0)


_OR = {"or", "/"}
_OTHER = frozenset({"other", "another", "similar", "related", "alternative", "such"})  # "Mamba or other SSMs"
# Head nouns that say nothing beyond their modifier in an alternative ("time series or dynamic data").
_GENERIC_HEADS = frozenset("data setting settings scenario scenarios problem problems task tasks".split())
# ... nor do the heads of a technique ("contrastive objectives" is any contrastive learning; "with explicit
# symbolic machinery", anything symbolic: a technique constraint goes without them)
_TECHNIQUE_HEADS = frozenset("objective objectives loss losses machinery toolkit".split())
_GENERIC_HEADS |= _TECHNIQUE_HEADS | frozenset("method methods approach approaches technique techniques".split())
_NUMBERS = dict(zip(
    "two three four five six seven eight nine ten twelve twenty thirty forty fifty hundred thousand".split(),
    "2 3 4 5 6 7 8 9 10 12 20 30 40 50 100 1000".split(),
))


_SUBJECTS = frozenset(stem(w) for w in "llm llms vlm vlms mllm mllms agent agents".split())


def _units(words: list[str]) -> list[Unit]:
    """Units of a segment: "X or Y" joins the words beside "or" into one unit; "A, B or C" joins the
    phrases between the commas; everything else is one unit a word (or a family phrase)."""
    if not _OR.intersection(words):
        return _phrase_units([w for w in words if w != ","])
    out: list[Unit] = []
    items: list[list[str]] = [[]]
    seps: list[str] = []
    for w in words:
        if w == "," or w in _OR:
            items.append([])
            seps.append(w)
        else:
            items[-1].append(w)
    for k in range(len(seps) - 1):
        # "A or B or C" is "A, B or C" ("pruning or quantization or distillation"; B one word, and no comma list)
        if seps[k] == seps[k + 1] == "or" and len(items[k + 1]) == 1 and _is_content(items[k + 1][0]) \
                and "," not in seps[:k]:
            seps[k] = ","
    i = 0
    while i < len(items):
        # "A / B / C" (three or more options, each of several words: "implicit neural representations
        # / coordinate-based networks / neural fields"): whole phrases are the options; the first is
        # the words before the first "/" back to a verb or frame word
        j = i
        while j < len(seps) and seps[j] in _OR and seps[j] == seps[i]:  # ("A/B or C" nests)
            j += 1
        if j - i >= 2 and all(len(it) > 1 and all(map(_is_content, it)) for it in items[i + 1 : j]):
            first = items[i]
            k = len(first)
            while k > 0 and _is_content(first[k - 1]) and first[k - 1] not in SOFT:
                k -= 1
            n = max(len(it) for it in items[i + 1 : j])
            out += _phrase_units(first[:k])
            unit = _either([first[k:], *items[i + 1 : j], items[j][:n]])
            if unit is not None:
                out.append(unit)
            items[j] = items[j][n:]
            i = j
            continue
        # a run of items joined by commas and ending with "or": A, B, or C
        j = i
        while j < len(seps) and seps[j] == "," and j + 1 < len(seps) and (seps[j + 1] == "," or seps[j + 1] in _OR):
            j += 1
        if j < len(seps) and seps[j] in _OR and j > i:  # a comma list: whole phrases are the options
            if "as" in items[i][:-1]:
                # "the information bottleneck as a training objective, regularizer or lens": the options
                # are what it is used as
                at = len(items[i]) - 1 - items[i][::-1].index("as")
                out += _phrase_units(items[i][:at])
                items[i] = [w for w in items[i][at + 1 :] if w not in ("a", "an", "the")] or items[i][at + 1 :]
            head = [it for it in items[i : j + 1] if it]
            singles = [len(it) == 1 for it in head[1:]]
            if head and len(head[0]) > 2 and 2 * sum(singles) > len(singles):
                # "the model takes images, video or audio as input": single words are the options, and
                # what comes before the first ("the model takes") is said of each (so in "probe LLM
                # personality, values, conformity or theory of mind", where most options are one word)
                out += _phrase_units(head[0][:-1])
                head[0] = head[0][-1:]
            n = max((len(it) for it in head), default=1)
            last = items[j + 1]
            unit = _either(head + [last[:n]])
            if unit is not None:
                out.append(unit)
            items[j + 1] = last[n:]
            i = j + 1
            continue
        if i < len(seps) and seps[i] in _OR and items[i] and items[i + 1]:
            left, right = items[i], items[i + 1]
            # "token merging or token pruning to shorten …": two phrases that open with the same word
            same = next((n for n in (2, 3) if len(left) >= n and len(right) > n and left[-n] == right[0]
                         and all(map(_is_content, left[-n:] + right[:n]))), 0)
            if same:
                out += _phrase_units(left[:-same])
                unit = _either([left[-same:], right[:same]])
                rest: list[str] = right[same:]
            elif (1 < len(right) <= min(3, len(left)) and stem(left[-len(right)]) not in _SUBJECTS
                    and left[-len(right)] not in _BOUNDARY and all(map(_is_content, left[1 - len(right):]))):
                # phrases of the same length ("spurious correlations or spurious features", "unwanted
                # concepts or training data"), unless the first is a model doing something ("LLMs write
                # or understand code": the verbs are the options); a phrase does not reach back past
                # a relative pronoun or over a function word ("methods that enforce or improve fairness",
                # "ways to train or obtain embedding models": the verbs are the options)
                # "spurious correlations or spurious features": phrases of the same length
                n = len(right)
                out += _phrase_units(left[:-n])
                unit = _either([left[-n:], right])
                rest = []
            else:  # "diffusion or flow-matching models": the words beside "or" ("Mamba or other SSMs": SSMs)
                out += _phrase_units(left[:-1])
                k = next((k for k, w in enumerate(right[:-1]) if w not in _OTHER), 0)
                unit = _either([[left[-1]], [right[k]]])
                rest = right[k + 1:]
            if unit is not None:
                out.append(unit)
            items[i + 1] = rest
            i += 1
            continue
        out += _phrase_units(items[i])
        i += 1
    return out


# Data a paper learns from or is run on is no benchmark it asks for ("learning only from
# pre-collected datasets", "fine-tuned on instruction datasets")
# (and where it is done: "pretrain a network on many simulated datasets", "for a new dataset", "in a fixed local
# dataset" ask for no dataset)
_WHAT_IT_USES = re.compile(r"\b(?:from|using|with|via|over|on|in|for|across|per)\s+(?:[\w-]+\s+){0,3}?(?:datasets?|data)\b", re.I)


def _names_benchmark(match: re.Match[str], text: str) -> bool:
    """"benchmarks for LLM agents", "a dataset that …": the benchmark is what is asked for; in
    "dataset distillation" or "benchmark contamination" it only says what the topic acts on."""
    after = re.match(r"\s+([a-z][\w-]*)", text[match.end():], re.I)
    if re.search(r"\b(?:any|every|each|all)\s+$", text[:match.start()], re.I):
        return False  # "no loss on any benchmark": where it holds, not what is asked for
    if after is None or re.search(r"\b(?:which|what)\s+$", text[:match.start()], re.I):
        return True  # "Which benchmarks evaluate …"
    nxt = after.group(1).lower()
    return nxt in STOPWORDS or nxt.endswith(("ing", "ed")) or _ASKS_RULES_BENCHMARK.match(nxt) is not None


def _asks(question: str) -> Asks:
    """What the question asks for, read before any contrast: "…, rather than only proposing a new
    editing method" asks for papers, not for methods."""
    stated = _CONTRAST.sub(" ", question)
    if _HOW_OF_A_SUBJECT.match(stated):  # "How does Bonsai condense a graph dataset …": its method
        return "method"
    either = _EITHER_KIND.search(stated)
    if either and (either["b"] or either["c"] or "").lower() in _WORK_KINDS:
        stated = stated[: either.start()] + " " + stated[either.end():]  # "methods or benchmarks": either kind
    # what it gives as examples is no benchmark or theory asked for ("e.g. new benchmarks", "e.g. …
    # deeper proof structures"), nor what it names as options ("…, either improving models or building
    # benchmarks")
    given = _CUT.sub(" ", stated)
    for kind, rx in _ASKS_RULES:
        if kind == "benchmark":
            if any(_names_benchmark(m, text) for text in [_WHAT_IT_USES.sub(" ", given)] for m in rx.finditer(text)):
                return kind
        elif rx.search(ASIDE.sub(" ", given) if kind in ("theory", "comparison") else stated):
            # (nor what its parentheses give as examples: "(…, filtering reasoning steps with guarantees)")
            return kind
    return "papers"


def _strip_frame(words: list[str]) -> list[str]:
    i, j = 0, len(words)
    while i < j and (words[i] in _FRAME_EXTRA | LEADING_FRAME or words[i] in STOPWORDS or words[i] in ",/") \
            and words[i] not in _SETTING | _TECHNIQUE:
        i += 1
    while j > i and (words[j - 1] in _FRAME_EXTRA or words[j - 1] in STOPWORDS or words[j - 1] in ",/"):
        j -= 1
    return words[i:j]


def _label(kind: FacetKind, marker: str, words: list[str]) -> str:
    text = " ".join(words)
    if kind == "technique":
        return f"using {text}"
    if kind == "setting":
        return f"{marker} {text}".strip()
    return text


# What "A of B" asks of B in general: no topic of its own ("the role of attention sinks").
_OF_HEADS = frozenset("""role roles impact impacts effect effects importance influence use uses usage benefit
    benefits nature power limit limits limitation limitations behavior behaviour behaviors emergence
    properties property analysis study understanding kind kinds type types form forms aspect aspects number
    amount""".split())


_ARCHITECTURES = frozenset({"transformer", "transformers", "transformer-based", "decoder-only", "autoregressive"})


def _architecture_said(units: list[Unit]) -> list[Unit]:
    """"transformer LLMs": the architecture every LLM has weighs as a general word (an abstract on
    language models seldom says "Transformer")."""
    return [u.model_copy(update={"weight": 0.34}) if u.text in _ARCHITECTURES and nxt is not None
            and _MODEL_KINDS & set(nxt.alternatives) else u for u, nxt in zip(units, [*units[1:], None])]


def _topic_units(topic_words: list[str]) -> list[Unit]:
    """The topic's units; "A of B" ("watermarks of LLM-generated text", "the faithfulness of
    chain-of-thought explanations") is two parts, each of which a listed paper must meet by itself
    (part 0 and part 1); a general head ("the role of …") is no part."""
    at = next((i for i, w in enumerate(topic_words) if w == "of"
               and any(_is_content(x) for x in topic_words[:i]) and any(_is_content(x) for x in topic_words[i + 1:])), None)
    if at is None or _OR.intersection(topic_words) or "," in topic_words:
        return _units(topic_words)  # "loss of plasticity or …": the options join across "of"
    head = [u for u in _units(topic_words[:at]) if u.text not in _OF_HEADS]
    rest = _units(topic_words[at + 1 :])
    if not head:  # "the role of attention sinks": the sinks are the topic
        return rest
    if all(u.weight < 1.0 for u in head):  # "cut the number of sampling steps": a general verb is no part
        return head + rest
    return head + [u.model_copy(update={"part": 1}) for u in rest]


# "Which papers watermark images …": the verb after "papers" is what every listed paper does
# "use LLMs as optimizers": the question asks for papers where A plays the role B, which a paper
# says as "LLMs as optimizers", "LLM-as-a-judge" or "an LLM-based optimizer"; naming both ("an
# optimizer for LLMs") is not it. "as priors, reward designers or guidance" lists roles, any of which
# would do (each one or two words).
_ROLE = re.compile(
    rf"\b(?:{'|'.join(sorted(_TECHNIQUE - {'with', 'via', 'through'}))}|treat|treats|treating)\s+"
    r"(?:[\w-]+\s+){0,5}?([\w-]+)\s+as\s+(?:an?\s+|the\s+)?"
    # "as a lens on LLMs", "as a way to …": how it is used, no role a paper words so
    r"(?!(?:lens|lenses|way|ways|means|window|tool|tools|basis|starting\s+point)\b)"
    r"([a-z][\w-]*(?:\s+[a-z][\w-]*)?(?:\s*,\s*[a-z][\w-]*(?:\s+[a-z][\w-]*)?)*\s*,?\s+or\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?"
    r"|[a-z][\w-]*)\s*(?:[?.!]|$|(?:for|in|to|on|when|with)\b)",
    re.I,
)
_ACTION = re.compile(r"^\s*(?:which|what)\s+(?:iclr\s+2025\s+)?(?:papers|works|studies|methods|approaches)\s+([a-z][\w-]*)", re.I)
# The kinds of model a topic can name, which its papers always name too ("align LLMs", "LLM agents")
_MODEL_KINDS = {(stem("llm"),), (stem("vlm"),), (stem("diffusion"),)}


_SECOND_QUESTION = re.compile(r",?\s+and\s+(?:how|why|what|which|where|when)\b.*$", re.I | re.S)


def second_question(question: str) -> str:
    """The second question a question asks ("What is Kinetix, and what did its authors show …": "what did
    its authors show …"), or ""."""
    m = _SECOND_QUESTION.search(question)
    return re.sub(r"^,?\s+and\s+", "", m.group(0)).strip() if m else ""


_BOTH = re.compile(r"\bboth\s+([\w-]+)\s+and\s+([\w-]+)\b|\b([\w-]+)\s+and\s+([\w-]+)\s+(?:jointly|together|simultaneously)\b", re.I)


def _needed(units: list[Unit], question: str, direction: str | None) -> list[Unit]:
    """The topic's units, those every listed paper must state marked `needed` (a topic of two or more
    units only): the verb after "Which papers" when it is the question's own action (not a general
    verb, not a direction such as "defend"), the kind of model it names (LLMs, VLMs), which
    weighs little by rarity but which no paper on another kind of model answers, and the head of
    the noun phrase a bare topic or a list question names ("multimodal LLM agents": agents; in "A of
    B" the head of A: "convergence of Adam")."""
    if len(units) < 2:
        return units
    action = _ACTION.match(question)
    said = _SECOND_QUESTION.sub("", question).lower().replace(",", " , ").split()  # without a second question
    # a topic's name only: not a question, a few words, no "papers", not "A and B" (either is asked)
    bare = (not is_question(question) and 0 < len(said) <= 6 and said[0] not in STOPWORDS
            and not (FRAMING | {"and", "or", ",", "&"}).intersection(said))
    # a list question's topic named as one noun phrase ("benchmarks for multimodal LLM agents"), not
    # "A of B" (parts) nor "A and B": its head is needed as a bare topic's is
    phrase = bare or (bool(action) and not any(u.part for u in units) and not {"and", "or", ","} & set(said))
    # "A of B" in a list question: A's head is what the papers study ("convergence of Adam", not Adam)
    of_head = -1
    if action and any(u.part for u in units) and not {"and", "or", ","} & set(said):
        of_head = max(i for i, u in enumerate(units) if not u.part)
    # "sound and vision jointly", "both text and images": each of the two, not either
    both = _BOTH.search(question)
    pair = {w.lower() for w in both.groups() if w} if both else set()
    return [
        u.model_copy(update={"needed": True})
        if u.text in pair or (i == 0 and action and u.text == action.group(1).lower() and u.weight == 1.0 and direction is None)
        or _MODEL_KINDS & set(u.alternatives)
        or ((phrase and i == len(units) - 1 or i == of_head) and u.weight == 1.0
            and u.text not in _HEAD_NOUNS_SAY_NOTHING and not u.text.endswith(("er", "ers"))) else u  # "PDE solvers" are what "solves PDEs"
        for i, u in enumerate(units)
    ]


# The head of a bare topic ("protein structure prediction": prediction) is what it names, unless it is
# a word every such topic ends with ("diffusion models", "graph neural networks")
_HEAD_NOUNS_SAY_NOTHING = _GENERIC_HEADS | frozenset("""models model networks network methods method approaches
    approach learning systems system algorithms algorithm frameworks framework schemes scheme strategies
    strategy""".split())


def _first_wording(segments: list[tuple[FacetKind, str, list[str]]]) -> list[tuple[FacetKind, str, list[str]]]:
    """The segments without the second wording of what "i.e." restates, which runs to the next comma.
    A constraint said again ("against harmful fine-tuning, i.e. keeping the safety behaviour intact
    when …") is met by its first wording ("use LLM judges, i.e. asking the LLM to verify drafts, for
    speculative decoding" keeps its setting). A topic said again keeps both wordings (either is met,
    `rag.grounding.admission.and_sides`), and the constraints of its second wording, up to the next
    comma or topic, are that wording ("the offline RL setting, i.e. learning a policy from a fixed
    dataset without interacting")."""
    at = next(((k, j) for k, (_, _, ws) in enumerate(segments) for j, w in enumerate(ws) if w in RESTATES), None)
    if at is None:
        return segments
    topic = segments[at[0]][0] == "topic"
    kept, dropping = [], False
    for k, (kind, marker, ws) in enumerate(segments):
        if topic and k > at[0] and kind == "topic":
            dropping = False
        out = []
        for j, w in enumerate(ws):
            if (k, j) == at:
                dropping = True
            elif dropping and w == ",":
                dropping = False
            if not dropping or (topic and k == at[0]):
                out.append(w)
        if out:
            kept.append((kind, marker, out))
    return kept


# Examples of what comes before them: "such as A, B or C", "e.g. A or B", or an aside that lists
# them ("vector quantization (VQ-VAE codebooks, FSQ, residual VQ)"). Each a name or short phrase.
_EXAMPLE_CUE = re.compile(
    r"(?:,\s*)?\s*(?:\(\s*)?\b(?:such\s+as|e\.\s?g\.?|for\s+example|for\s+instance|including|(?:things|topics|areas|stuff)\s+like|(?<=,\s)say)\s*,?\s+"
    r"(?P<list>[^()?;:]+?)(?=\s*(?:\)|\?|;|:|$|\.(?:\s|$)|,?\s+(?:rather|instead|not|but|to|by|using|with|via|"
    r"(?:and|or)\s+(?:how|why|what|which|where|when)|that|which)\b))",
    re.I,
)
_LISTING_ASIDE = re.compile(r"\s*\((?P<list>[^()]+)\)")


def _example_options(text: str) -> list[list[str]]:
    """The examples of a list ("MRI, CT, X-ray, or pathology/histology slides"), each a few content words
    (none when any is longer: then it is no list of names)."""
    parts = [p.strip() for p in re.split(r"\s*,\s*(?:(?:or|and)\s+)?|\s+(?:or|and)\s+|\s*/\s*", text) if p.strip()]
    parts = [re.sub(r"^(?:(?:from|in|on|with|using|via)\s+)?(?:(?:the|their|its|a|an)\s+)?", "", p, flags=re.I) for p in parts]
    options = [compounds(p) for p in parts]
    # each a few content words, one function word at most inside ("approximations of backprop"); a
    # long list may hold one longer phrase ("…, or smooth relaxations of things like permutations"), which
    # is no name and is left out
    names = [o for o in options if 1 <= len(o) <= 5 and _is_content(o[0]) and _is_content(o[-1])
             and sum(not _is_content(w) for w in o) <= 1]
    if len(names) < 2 or len(names) < len(options) and (len(names) < 3 or len(options) - len(names) > 1):
        return []
    return [[w for w in o if _is_content(w)] for o in names]


_EXCLUDING = re.compile(r"\b(?:not|no|except|excluding|rather\s+than|instead\s+of|other\s+than)\b", re.I)
# an example is a name or a short phrase ("Adam or Shampoo variants", "spike-aware resets"), not a clause
_EXAMPLE_WORDS = 8
_PHRASES_SHOWN = 8
# an example that opens with a comparative names a quality of what is asked ("(less toxic or harmful, harder to
# jailbreak)"), not a kind of paper: the search's first paper for "harder to jailbreak" is a jailbreak attack
_COMPARATIVES = frozenset("""less more fewer better worse faster slower cheaper harder easier smaller larger lower
    higher stronger weaker safer simpler shorter longer""".split())
# what opens an example without naming it ("e.g.", "for example", "for data valuation", "in bandits")
_EXAMPLE_LEAD = re.compile(r"^(?:(?:e\.\s?g\.?|i\.\s?e\.?|for\s+example|for\s+instance|such\s+as)\s*,?\s*)?"
                           r"(?:(?:for|in|on|with|using|via|from)\s+)?(?:(?:the|their|its|a|an)\s+)?", re.I)


def examples_given(question: str) -> list[tuple[str, bool]]:
    """The examples a question gives of what it asks, as it words them ("… (Adam or Shampoo variants, extra
    momentum terms, spike-aware resets)" → the three phrases): each names a kind of paper the asker wants,
    and the paper the search ranks first for it is likely one (rag.grounding.admission.admit_by_example).
    Not the examples of what it sets aside ("not X, e.g. A or B"; "(not A, B)"), a list of one, or a
    quality ("harder to jailbreak"). Each comes with whether it is an example of a constraint rather than of
    the topic ("GNNs on molecules (e.g. QM9, ZINC)": a QM9 paper meets the setting, and must still state the topic).
    Where the reading finds no constraint before the list, the examples are the topic's ("heavy-tailed
    noise, e.g. in bandits": a bandit paper is admitted as one)."""
    text = colon_list(question) if is_question(question) or re.search(r":\s+[a-z]", question) else question
    text = _AND_SO_ON.sub(", etc.", text)
    out: list[tuple[str, bool]] = []
    for m in [*_EXAMPLE_CUE.finditer(text), *_LISTING_ASIDE.finditer(text)]:
        listed = m.group("list")
        # ... in its own sentence ("not analyses of old ones. Which papers … (A, B)": the list is of what it asks),
        # not right after what it sets aside ("not attacks such as GCG or PAIR"). A contrast earlier in the sentence
        # leaves the list to what is asked ("for restoration or inference rather than just synthesizing extra
        # training images, e.g. self-supervised MRI denoising, …"): on the 35 writers' sets such lists list 6 more
        # papers on the writers' lists and no stray
        sentence = re.split(r"[.?!;]\s+", text[: m.start()])[-1]
        if _EXCLUDING.search(listed) or _EXCLUDING.search(sentence[-30:]):
            continue
        parts = [_EXAMPLE_LEAD.sub("", p.strip(" .,")) for p in _LIST_SEPARATOR.split(listed)]
        parts = [p for p in parts if p and p.lower() not in ("etc", "etc.") and any(_is_content(w) for w in words(p))
                 and p.split()[0].lower() not in _COMPARATIVES]
        if len(parts) == 1 and m.re is _EXAMPLE_CUE:  # "such as speculative decoding or KV-cache compression"
            parts = [p for p in re.split(r"\s+(?:or|and)\s+", parts[0]) if p]
        if _short_phrases(parts):
            out += [(p, _of_constraint(text, m.start())) for p in parts]
    return list(dict.fromkeys(out))[:_PHRASES_SHOWN]


def _of_constraint(text: str, at: int) -> bool:
    """Whether a list at `at` gives examples of a constraint: the text before it ends in the words of a
    setting or technique the reading finds there (as `_constraint_examples` reads them)."""
    before = read(text[:at], examples=False)
    last = before.facets[-1] if before.facets else None
    said = re.findall(r"[\w-]+", _written_out(text[:at]).lower())
    return (last is not None and last.kind not in ("topic", "direction", "role") and bool(said)
            and said[-1] == last.text.split()[-1])


def without_listed_examples(text: str) -> str:
    """The text without asides that list examples ("(SG-MCMC, variational inference, ensembles)") or
    set things aside ("(I'm not after radiology images or EHR tables)"); an aside that names one thing
    ("(KANs)") stays."""
    return _LISTING_ASIDE.sub(
        lambda m: " " if _example_options(m.group("list")) or _EXCLUDING.search(m.group("list"))
        or _phrase_list(m.group("list")) else m.group(0), text)


def _phrase_list(listed: str) -> bool:
    """A list of two or more short phrases, however it ends ("W4A4, INT8 and the like"; "conditional neural fields
    with latent modulations, hypernetwork-generated INRs, meta-learned initialisations"): examples, as
    `examples_given` reads them, not one name."""
    listed = re.sub(r"(?:,\s*|\s+)etc\.?\s*$", "", _AND_SO_ON.sub("", listed.strip()), flags=re.I)
    parts = [q for p in _LIST_SEPARATOR.split(listed) for q in re.split(r"\s+(?:or|and)\s+", p) if q.strip()]
    return _short_phrases(parts)


# what separates a list's items ("A, B, or C"; "A; B")
_LIST_SEPARATOR = re.compile(r"\s*[,;]\s*(?:(?:or|and)\s+)?")


def _short_phrases(parts: Sequence[str]) -> bool:
    """Two or more items, each a name or a short phrase, not a clause."""
    return len(parts) >= 2 and all(len(p.split()) <= _EXAMPLE_WORDS for p in parts)


def _topic_examples(question: str) -> list[Unit]:
    """The examples a question gives of its topic: a list after the topic, before any constraint."""
    question = _AND_SO_ON.sub(", etc.", question)
    for m in [*_EXAMPLE_CUE.finditer(question), *_LISTING_ASIDE.finditer(question)]:
        options = _example_options(m.group("list"))
        if not options or (m.re is _LISTING_ASIDE and _NOT_SYNONYMS.search(m.group("list"))):
            continue
        before = read(question[: m.start()], examples=False)
        if before.topic is None or any(c.kind != "direction" and (c.required or not c.text.endswith(before.topic.text))
                                       for c in before.constraints):
            continue  # examples of a constraint ("without action labels, e.g. from videos"), unless it is the topic
        # each example's words in one sentence ("VQ-VAE" and "codebook" need not be side by side)
        out = [u.model_copy(update={"together": True}) for o in options for u in [_either([o])] if u is not None]
        if out:
            return out
    return []


def _constraint_examples(question: str) -> dict[str, list[Unit]]:
    """The examples a question gives of a constraint, by the constraint's text: a list right after it
    ("from neural recordings (fMRI, electrophysiology, EEG)", "without action labels, e.g. action-free
    videos"). People give instances of what they constrain by, or ways of meeting it: a paper that
    states one meets the constraint as the question words it."""
    out: dict[str, list[Unit]] = {}
    question = _AND_SO_ON.sub(", etc.", question)
    for m in [*_EXAMPLE_CUE.finditer(question), *_LISTING_ASIDE.finditer(question)]:
        options = _example_options(m.group("list"))
        if not options or (m.re is _LISTING_ASIDE and _NOT_SYNONYMS.search(m.group("list"))):
            continue
        before = read(question[: m.start()], examples=False)
        last = before.facets[-1] if before.facets else None
        # ... the list right after the constraint's own words, not after a topic read before it
        said = re.findall(r"[\w-]+", _written_out(question[: m.start()]).lower())
        if last is None or last.kind in ("topic", "direction", "role") or not said or said[-1] != last.text.split()[-1]:
            continue
        units = [u.model_copy(update={"together": True}) for o in options for u in [_either([o])] if u is not None]
        if units:
            out.setdefault(last.text, units)
    return out


# "without standard backpropagation": what a paper goes without, it names plainly
_QUALIFIERS = frozenset("standard conventional traditional vanilla usual regular typical ordinary plain".split())
# "cast a practical ML problem as a multi-armed bandit": how the asker frames what the papers do; the
# papers state what it is cast as ("we formulate … as a bandit problem"), seldom the verb
# ("frame" and "view" are nouns as often: "novel view synthesis as a pretext task")
_CASTS = frozenset("""cast casts casting formulate formulates formulating reformulate reformulates
    reformulating recast recasts recasting treat treats treating""".split())
_SAYS_NO_PROBLEM = frozenset("""problem problems task tasks practical real-world real world ml ai machine learning
    applied application applications everyday common standard classic classical""".split())


# "methods or simulators for many-agent settings", "datasets or methods for X": either kind of work, so neither
# is asked for (read as a topic "simulators", or as "must introduce a benchmark", it excluded the methods)
_WORK_KINDS = frozenset("""method methods approach approaches technique techniques algorithm algorithms simulator
    simulators benchmark benchmarks dataset datasets tool tools environment environments system systems framework
    frameworks model models library libraries data""".split())
# ... and what says which data ("training data or methods for multi-turn function calling")
_DATA_OF = frozenset("training evaluation instruction synthetic".split())
_GENERAL_KINDS = frozenset("method methods approach approaches technique techniques algorithm algorithms".split())
_GENERAL = "|".join(sorted(_GENERAL_KINDS, key=len, reverse=True))
_EITHER_KIND = re.compile(rf"\b(?:(?:{_GENERAL})\s+(?:or|and/or)\s+(?P<b>[a-z]+)|(?P<c>[a-z]+)\s+(?:or|and/or)\s+(?:{_GENERAL}))\b",
                          re.I)


def _any_kind_of_work(words: list[str]) -> list[str]:
    """Without "methods or simulators" / "datasets or methods": a general kind of work offered beside another."""
    for k in range(len(words) - 2):
        a, o, b = words[k : k + 3]
        if o == "or" and a in _WORK_KINDS and b in _WORK_KINDS and (a in _GENERAL_KINDS or b in _GENERAL_KINDS):
            start = k - 1 if k and words[k - 1] in _DATA_OF and a in ("data", "dataset", "datasets") else k
            return words[:start] + words[k + 3 :]
    return words


def _cast_as(words: list[str]) -> list[str]:
    """"cast X as Y": Y is the topic when X is any problem ("a practical ML problem"); otherwise X
    stays, and the verb goes."""
    for i, w in enumerate(words):
        if w not in _CASTS:
            continue
        j = next((j for j in range(i + 1, min(i + 8, len(words))) if words[j] == "as"), None)
        if j is None or j == i + 1:
            continue
        k = j + 1
        while k < len(words) and words[k] in ("a", "an", "the"):
            k += 1
        between = [x for x in words[i + 1 : j] if _is_content(x)]
        if all(x in _SAYS_NO_PROBLEM | _GENERIC_OBJECTS for x in between):
            return words[:i] + words[k:]
        return words[:i] + words[i + 1 : j] + words[k:]
    return words


def _says_nothing(units: list[Unit]) -> bool:
    """A topic of general verbs and any model only ("learn", "training neural networks")."""
    return all(u.weight < 1.0 or all(w in SAY_NOTHING | {"or"} for w in u.text.split()) for u in units)


# "CLIP-style models themselves: their pretraining data and captions, embedding geometry, memorization":
# what follows a colon as a list is the kinds of the thing before it, its examples
# (three kinds or more, the first in a few words; not a sentence that goes on, nor examples already cued)
_COLON_LIST = re.compile(r":\s+(?!(?:which|what|who|how|why|where|when|is|are|do|does|did|has|have|can|i|we|things|"
                         r"such|e\.g|for\s+example|including)\b)(?=(?:[\w'-]+\s+){0,5}[\w'-]+(?:\s*\([^()]*\))?\s*,"
                         r"[^:?.;,]*,[^:?.;]*(?:,|\s(?:and|or)\s))", re.I)


def colon_list(text: str) -> str:
    """The text with a colon that opens a list of kinds read as "such as" (see `_COLON_LIST`), in a question
    or a list in lower case: a title's "Model Merging in LLMs: Methods, Theories, Applications and
    Opportunities" names no kinds."""
    return _COLON_LIST.sub(", such as ", text, count=1)


def _short_conjunct(words: Sequence[str], start: int) -> bool:
    """Whether the words from `start` are one or two content words that end the question or a clause
    ("… on molecules and proteins", "in transformers and LLMs, …"): a second option of the constraint
    before them, not a new part of the question ("… and scale well")."""
    end = start
    while end < len(words) and words[end] not in (",", ";") and words[end] not in _SETTING | _TECHNIQUE | _BOUNDARY \
            and words[end] not in _CLAUSE_WORDS:
        end += 1
    return 1 <= end - start <= 2 and all(_is_content(w) and w not in SOFT for w in words[start:end]) \
        and (end == len(words) or words[end] in (",", ";"))


_SIZE_WORDS = frozenset("large larger big bigger huge".split())
_SIZED_KINDS = frozenset("language vision-language multimodal scale vocabulary batch batches".split())


# A word followed by a pronoun or a question word: what it acts on is said elsewhere. (Not a word after a
# demonstrative: "under those conditions" points back to a sentence the reading does not follow, and kept as a
# constraint it still narrows the list.)
_BEFORE_PRONOUN = re.compile(r"\b([\w-]+)\s+(?:it|them|one|ones|which|what|whether|how)\b", re.I)


def read(question: str, search_text: str | None = None, examples: bool = True) -> Reading:
    """The reading of a question; `search_text` is the question without authors and decision words
    (rag.text.query), when the catalog was consulted. `examples`: also read the examples it gives of
    its topic."""
    if is_question(question) or re.search(r":\s+[a-z]", question):  # (a title capitalizes its list)
        question = colon_list(question)
        search_text = colon_list(search_text) if search_text is not None else None
    asks = _asks(question)
    words = _strip_frame(_any_kind_of_work(_tokens(clean(search_text if search_text is not None else question))))
    # a framing verb after a subject of its own is what the subject does ("why do RL agents explore so
    # inefficiently": exploration; "papers that explore X" frame)
    words = [_DONE_BY_SUBJECT.get(w, w) if _after_subject(words, k) else w for k, w in enumerate(words)]
    words = _cast_as(words)
    # "DPO and other margin-based objectives": either is asked about, as with "or other"
    words = ["or" if w == "and" and nxt in _OTHER else w for w, nxt in zip(words, [*words[1:], ""])]
    # Segments: (kind, marker, words)
    segments: list[tuple[FacetKind, str, list[str]]] = []
    kind: FacetKind = "topic"
    marker = ""
    current: list[str] = []
    direction: str | None = None
    used = False  # the topic is what the papers use or build on
    tested = False  # ... or what they are tested on

    def close() -> None:
        nonlocal current
        content = [w for w in current if _is_content(w) or w == "without"]
        if content:
            segments.append((kind, marker, current))
        current = []

    i = 0
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else ""
        has_content = any(_is_content(x) for x in current) or any(s[0] == "topic" for s in segments)
        if (direction is None and i == 0 and nxt in _OR and i + 2 < len(words)
                and (w in _OPENER_OF or words[i + 2] in _OPENER_OF)
                and len({_OPENER_OF.get(w), _OPENER_OF.get(words[i + 2])} - {None}) == 1
                and not {w, words[i + 2]} & SOFT):
            # "stress-test or evaluate machine unlearning": one of the question's verbs is a direction
            # (two directions, "detect or remove watermarks", are read as before; "evaluate or improve
            # LLMs on …" accepts a paper that does either: no direction)
            direction = _OPENER_OF.get(w) or _OPENER_OF[words[i + 2]]
            i += 3
            if i < len(words) and words[i] in ("against", "from", "of", "for", "up"):
                i += 1
            continue
        if (direction is None and w in _OPENER_OF and not any(_is_content(x) for x in current) and not segments
                and not (nxt in _OR and words[i + 2 : i + 3] and words[i + 2] in SOFT)):
            # "defend against jailbreaks", "detect AI-generated images": the question's own action
            direction = _OPENER_OF[w]
            i += 1
            if nxt in ("against", "from", "of", "for", "up"):
                i += 1
            continue
        generic = all(x in _GENERIC_OBJECTS or not _is_content(x) for x in current)
        if w in _WITHSTAND and nxt in ("to", "against", "when", "under") and has_content and i + 2 < len(words):
            # "make GNNs robust to adversarial attacks": defend the topic against X; "make models
            # robust to adversarial examples": X is the topic
            direction = direction or "withstand"
            if not generic:
                close()
                kind, marker = "setting", "against"
            i += 2
            continue
        if w == "against" and kind == "topic" and generic:
            i += 1  # "defend models against jailbreaks": the jailbreaks are the topic
            continue
        general = all(x in SOFT or not _is_content(x) for x in current)
        if w in _TECHNIQUE and w != "with" and len(current) > 1 and current[-1] in _GERUND_AFTER:
            # "better at using web browsers": what is done, where the paper must work; not a technique
            prep = current.pop()
            close()
            kind, marker = "setting", f"{prep} {w}"
            i += 1
            continue
        governed = w == "with" and bool(current) and current[-1] in _TAKES_WITH  # "struggle with X": X is the topic
        if governed and current[-1].startswith(("deal", "cop")) and not any(_is_content(x) for x in current[:-1]):
            current.pop()  # "papers that deal with X": X, and nothing of the verb
            i += 1
            continue
        if w in _TECHNIQUE and not governed and not (w == "with" and (general or (not has_content and kind == "topic"))):
            close()
            kind, marker = "technique", w
            i += 1
            continue
        if w == "by" and has_content and current and not current[-1].endswith(("ed", "en", "wn")) and nxt:
            # "improve small models by distillation": how; "images generated by diffusion models": who made them
            close()
            kind, marker = "technique", w
            i += 1
            continue
        if w in _BUILDS and nxt in _OWNERS and i + 3 < len(words) and words[i + 3] in ("on", "upon"):
            words[i + 1 : i + 3] = []  # "builds its models on neural ODEs": builds on them
            nxt = words[i + 1]
        if (w in _BUILDS or w in _RESTS) and not has_content and nxt in ("on", "upon", "around"):
            i += 2  # "papers built around Shapley values", "lean on X": what they are built on is the topic
            used = True
            continue
        if (w == "based" or w in _BUILDS) and nxt in ("on", "upon", "around"):
            # "based on diffusion models"; "time-series papers building on diffusion models"
            close()
            kind, marker = "technique", f"{w} on"
            i += 2
            continue
        if ((w in _PURPOSE or (w == "for" and not any(s[0] == "topic" for s in segments))) and kind == "technique"
                or (w in _PURPOSE and kind == "setting" and nxt and nxt not in _AT_SETTING and len(current) > 1
                    and any(k == "topic" and any(_is_content(x) and x not in SOFT for x in ws) for k, _, ws in segments)
                    and sum(map(_is_content, words[i + 1 :])) >= 2)):
            # "… in hyperbolic space to capture hierarchical structure": what it is for is the topic again
            close()
            kind, marker = "topic", ""
            i += 1
            continue
        if w == "at" and not set(words[i + 1 : i + 4]) & _AT_SETTING:
            current.append(w)  # "fail at length generalization": no setting
            i += 1
            continue
        if w in ("on", "to") and not segments and _APPLIED.intersection(current) \
                and all(x in _APPLIED or x in SOFT or not _is_content(x) for x in current):
            tested = True  # "test methods on single-cell data": a result on it is enough
        if w in _SETTING and has_content and nxt and nxt not in _CLAUSE_WORDS:
            close()
            kind, marker = "setting", w
            if w == "without":
                current = ["without"]
            i += 1
            continue
        if w == "and" and kind != "topic" and current and "," not in current and _short_conjunct(words, i + 1):
            # "train GNNs on molecules and proteins": on either, not "proteins" as the topic (a list of
            # kinds, "beyond methods, theories and applications", is not two options)
            current.append("or")
            i += 1
            continue
        if w in _BOUNDARY and kind != "topic" and current:
            close()
            kind, marker = "topic", ""
            i += 1
            continue
        current.append(w)
        i += 1
    close()

    if is_question(question):  # (a description of a paper is read whole: "an idea, namely, that …" says it there)
        segments = _first_wording(segments)
    topic_words: list[str] = []
    constraints: list[Facet] = []
    pointing = {m.group(1).lower() for m in _BEFORE_PRONOUN.finditer(question)}
    for kind_, marker_, ws in segments:
        if kind_ == "topic":
            topic_words += [",", *ws] if topic_words else ws
            continue
        ws = [w for w in ws if w not in RESTATES]
        # a size that is no kind ("for large diffusion models", "on large pretrained foundation models"): abstracts
        # say "any diffusion model", "billion-scale", or nothing of it; "large language models" is a kind
        ws = [w for k, w in enumerate(ws) if not (w in _SIZE_WORDS and ws[k + 1: k + 2] and ws[k + 1] not in _SIZED_KINDS)]
        if kind_ in ("setting", "technique") and (
                all(w in SAY_NOTHING or w in _GENERIC_HEADS or not _is_content(w) for w in ws)
                or ws[:1] in (["any"], ["every"])):
            # "attacks on ML models", "in deep neural networks", "when trained", "on any benchmark": no
            # setting; "apply machine learning to medical images": every paper here uses it
            continue
        content = [w for w in ws if _is_content(w)]
        if kind_ in ("setting", "technique") and len(content) == 1 and content[0] in pointing:
            # "by choosing which neurons …", "for simulating them", "with a big one", "by exposing them to outliers": a
            # verb or a word whose object the question says elsewhere, no constraint ("using choosing" refused a
            # question on input-dependent activation sparsity; on the 37 writers' sets 3 more papers on the writers'
            # lists, 3 strays, 2 refusals fewer)
            continue
        if ws[:1] == ["without"]:
            rest = ws[1:]
            trains = any(w.startswith(("train", "retrain", "fine", "tun", "updat")) for w in rest)
            if trains:
                units = [Unit(text="without " + " ".join(rest), alternatives=family_alternatives("training-free"))]
            else:  # "without external knowledge": words cannot tell a paper that goes without it
                content = [stem(p) for w in rest if _is_content(w) for p in w.split("-") if p]
                units = [Unit(
                    text="without " + " ".join(rest),
                    alternatives=[("without", *content), ("no", *content), (*content, "free")],
                )] if content else []
                if units:
                    label = "without " + " ".join(u.text for u in _units(rest))
                    constraints.append(Facet(kind=kind_, required=False, text=" ".join(ws), label=label, units=units))
                continue
            label = "without " + " ".join(u.text for u in _units(rest))
        else:
            # the kind of model a constraint names is needed as in a topic ("in continual learning of LLMs"),
            # and so are the options a technique names ("discrete or masked diffusion models": not any
            # diffusion) and what both options act on ("pruning or merging tokens": not neurons)
            found = _architecture_said(_units(ws))
            if kind_ == "technique" and len(found) > 1 and found[-1].text in _TECHNIQUE_HEADS:
                found = found[:-1]  # "with explicit symbolic machinery": anything symbolic
            units = [u.model_copy(update={"needed": True})
                     if _MODEL_KINDS & set(u.alternatives) or u.text == "few-shot"
                     or (kind_ == "technique" and (" or " in u.text or (
                         i > 0 and " or " in found[i - 1].text and u.text not in _HEAD_NOUNS_SAY_NOTHING | SOFT))) else u
                     for i, u in enumerate(found)]
            label = _label(kind_, marker_, [u.text for u in units])
        if units:
            constraints.append(Facet(kind=kind_, text=" ".join(ws), label=label, units=units))
    if (direction is None and asks == "benchmark" and not is_question(question) and len(topic_words) >= 2
            and re.fullmatch(r"benchmarks?|testbeds?|leaderboards?", topic_words[-1]) and _is_content(topic_words[-2])):
        # a field named with the kind of paper wanted last ("hallucination benchmarks", "LLM agent testbeds"):
        # the papers must be that kind, and the rest is their topic, as "benchmarks for hallucination" reads
        topic_words, direction = topic_words[:-1], "benchmark"
    if direction is None:
        # "propose new jailbreak attacks", "make sampling faster": a direction noun in the topic is
        # the direction too (the topic keeps the word)
        # ("segmentation or detection": either will do, so no direction)
        beside = {k for k, w in enumerate(topic_words) for j in (k - 1, k + 1)
                  if 0 <= j < len(topic_words) and topic_words[j] in _OR}
        direction = next((_NOUN_DIRECTION[w] for k, w in enumerate(topic_words) if w in _NOUN_DIRECTION
                          and not (k in beside and any(topic_words[j] not in _NOUN_DIRECTION for j in (k - 2, k + 2)
                                                       if 0 <= j < len(topic_words) and j in beside))), None)
    restated = next((i for i, w in enumerate(topic_words) if w in RESTATES), None)
    if restated:  # "the privacy of trained models, i.e. recovering private training data": two wordings
        topic_units = [u.model_copy(update={"part": 0}) for u in  # either wording, so no "A of B" parts
                       _topic_units([w for w in topic_words[:restated] if w != ","])
                       + _topic_units([w for w in topic_words[restated + 1:] if w != ","])]
    else:
        topic_units = _topic_units(topic_words)
    topic = None
    if topic_units:
        label = " ".join(("of " if u.part and not v.part else "") + u.text for v, u in zip([topic_units[0], *topic_units], topic_units))
        topic = Facet(kind="topic", text=" ".join(topic_words), label=label, units=topic_units)
    if asks == "benchmark" and direction in (None, "evaluate") and _CONTRIBUTION_CUE.search(question):
        direction = "benchmark"
    if direction is not None:
        constraints.insert(
            0,
            Facet(
                kind="direction", text=direction, label=_DIRECTION_LABEL[direction],
                units=[Unit(text=direction, alternatives=family_alternatives(direction))],
            ),
        )
    first = next((c for c in constraints if c.kind != "direction" and c.required), None)
    if topic is not None and first is not None and _says_nothing(topic.units):
        # "learn from noisy labels": a general verb is no topic; what it is done from is ("run or
        # fine-tune models on edge devices": the devices)
        constraints.remove(first)
        topic = first.model_copy(update={"kind": "topic", "label": " ".join(u.text for u in first.units)})
    gone = next((c for c in constraints if not c.required and c.text.split()[:1] == ["without"]), None)
    if topic is not None and first is None and gone is not None and _says_nothing(topic.units):
        # "training neural networks without backpropagation": what a general topic goes without is what
        # the papers are about (they name it to say they replace it); going without it still ranks
        units = _units([w for w in gone.text.split()[1:] if w not in _QUALIFIERS])
        if units:
            topic = Facet(kind="topic", text=" ".join(gone.text.split()[1:]), label=" ".join(u.text for u in units),
                          units=units)
    if topic is None and constraints and constraints[0].kind != "direction":
        # "with RL" alone, or a setting only: it is the topic
        first = constraints.pop(0)
        used = first.kind == "technique"
        topic = first.model_copy(update={"kind": "topic", "label": " ".join(u.text for u in first.units)})
    if topic is not None:
        topic = topic.model_copy(update={"units": _needed(topic.units, question, direction),
                                         "examples": _topic_examples(question) if examples else []})
        role = _ROLE.search(clean(question))
        said = {u.text for f in (topic, *constraints) for u in f.units}
        if role:
            a = role.group(1).lower()
            if a in ("model", "models", "network", "networks"):  # "diffusion models as priors": "diffusion priors"
                kind_of = re.search(rf"((?:[\w-]+\s+or\s+)?[\w-]+)\s+{a}\s+as\b", clean(question), re.I)
                a = f"{kind_of.group(1).lower()} {a}" if kind_of and _is_content(kind_of.group(1).split()[-1].lower()) else a
            options = [o.strip() for o in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", role.group(2).lower()) if o.strip()]
            b = " or ".join(options)
            if b in said or (len(options) > 1 and all(len(o.split()) <= 2 for o in options)):
                constraints.append(Facet(kind="role", text=f"{a} as {b}", label=f"{a} as {b}",
                                         units=[Unit(text=b, alternatives=[tuple(stem(w) for w in o.split()) for o in options])]))
    if examples and constraints:
        given = _constraint_examples(question)
        constraints = [c.model_copy(update={"examples": next(
            (units for text, units in given.items() if text == c.text or (len(text.split()) >= 2 and text in c.text)), [])})
            if c.kind not in ("direction", "role") else c for c in constraints]
    aside = _CONTRAST.search(question)
    aside_text = aside.group(0).strip(" ,?.!") if aside else ""
    narrowed = _members_set_aside(aside_text, question[: aside.start()] if aside else question, (topic, *constraints))
    if narrowed:
        topic = _without_members(topic, narrowed) if topic is not None else None
        constraints = [_without_members(c, narrowed) for c in constraints]
    return Reading(asks=asks, topic=topic, constraints=constraints, aside=aside_text,
                   narrowed=sorted(narrowed), study=bool(_ASKS_FOR_A_STUDY.search(without_aside(question))),
                   used=used, tested=tested)


def _members_set_aside(aside: str, asked: str, facets: tuple[Facet | None, ...]) -> set[str]:
    """The kinds of an asked family (INSTANCES) that the aside names: "detect LLM text, as opposed to
    watermarking it" asks for detection other than by watermarks, though a watermark is a way to detect
    (not a word the question asks with, in any form: "protect images …, rather than showing that such
    protections can be bypassed"). `asked`: the question before its aside."""
    said = re.split(r"[:;?.]", aside, maxsplit=1)[0]  # the aside, not the request that may follow it
    if re.search(r"\b(?:new|novel|another)\b", said, re.I):
        return set()  # "rather than yet another pruning method": new methods go, papers on pruning stay
    named = {stem(w) for w in _tokens(clean(said)) if _is_content(w)}
    own = {stem(w) for w in _tokens(clean(asked)) if _is_content(w)}

    kinds = {stem(m) for ms in INSTANCES.values() for m in ms if " " not in m and "-" not in m}
    return {a[0] for f in facets if f is not None for u in f.units for a in u.alternatives
            if len(a) == 1 and a[0] in named and a[0] in kinds and not any(_begun(a[0], o) for o in own)}


def _begun(a: str, b: str) -> bool:
    """Whether two stems begin alike, as far as five letters or the shorter one goes ("rlhf" of "RL"'s "rl",
    "protect" of "protections"): a form of a word the question asks with, or an acronym it extends."""
    return a.startswith(b[:5]) or b.startswith(a[:5])


def _without_members(facet: Facet, members: set[str]) -> Facet:
    units = [u.model_copy(update={"alternatives": [a for a in u.alternatives if not (len(a) == 1 and a[0] in members)]})
             for u in facet.units]
    return facet.model_copy(update={"units": units})

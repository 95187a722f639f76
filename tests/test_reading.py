"""Reading a question into topic and constraints, sentence roles, and admission by constraint (no store)."""

from __future__ import annotations

import pytest

from rag.grounding.admission import acronyms, admit
from rag.text.query import strip_frame
from rag.text.reading import read
from rag.text.roles import sentence_roles
from rag.text.terms import PhraseStats, TermStats, stem
from rag.types import Source


@pytest.mark.parametrize(
    ("question", "asks", "described"),
    [
        ("Which papers defend against jailbreaks at inference time?", "papers",
         "jailbreaks — must defend or protect, at inference time"),
        ("Which papers use reinforcement learning to fine-tune LLMs for math reasoning?", "papers",
         "fine-tune llms — using reinforcement learning, for math reasoning"),
        ("Which papers use diffusion models for protein design?", "papers", "protein design — using diffusion models"),
        ("How do papers reduce the memory of the KV cache in long-context inference?", "method",
         "reduce memory of kv cache — in long-context inference"),
        ("Which papers detect AI-generated images?", "papers", "ai-generated images — must detect"),
        ("model merging", "papers", "model merging"),
        # a contrast, a parenthesis and examples are not part of what is asked
        ("Which papers propose new jailbreak attacks on language models, as opposed to defenses against them?",
         "papers", "jailbreak attacks — must attack, on language models"),
        ("Which papers apply diffusion or flow-matching models to time series (forecasting or generation)?",
         "papers", "time series — using diffusion or flow-matching models"),
        ("Any work on detecting AI-generated content such as LLM-written text or deepfakes?", "papers",
         "ai-generated content — must detect"),
        # "fail at" is no setting; a second question ("and how") is cut
        ("Why do transformers fail at length generalization?", "reason", "transformers fail length generalization"),
        ("Which papers tackle spurious correlations in vision-language models, and how?", "method",
         "spurious correlations — in vision-language models"),
        ("Which papers speed up diffusion sampling without retraining?", "papers",
         "diffusion sampling — must make it faster or cheaper, without retraining"),
        ("Why do transformers struggle with length generalization in arithmetic?", "reason",
         "transformers struggle length generalization — in arithmetic"),
        ("How do papers make diffusion model sampling faster?", "method",
         "diffusion model sampling faster — must make it faster or cheaper"),
        # what a defence protects, and what it withstands, are each required
        ("Which papers defend vision-language models against adversarial image attacks?", "papers",
         "vision-language models — must defend or protect, against adversarial image attacks"),
        ("Which papers make graph neural networks robust to adversarial attacks?", "papers",
         "graph neural networks — must defend or make it robust, against adversarial attacks"),
        # ... unless the protected thing is any model: then the threat is the topic
        ("Which papers make vision models robust to adversarial examples?", "papers",
         "vision models adversarial examples — must defend or make it robust"),
        # "better at using X": what the agents do, not a technique
        ("Which papers make LLM agents better at using web browsers?", "papers",
         "llm agents better — at using web browsers"),
        # a general verb is no topic: what it is done from is
        ("Which papers learn from noisy labels?", "papers", "noisy labels"),
        ("Which papers apply LLMs to formal theorem proving?", "papers", "formal theorem proving — using llms"),
        ("Which papers attack watermarks of LLM-generated text?", "papers",
         "watermarks of llm-generated text — must attack"),
        ("What is the role of attention sinks in LLMs?", "papers", "attention sinks — in llms"),  # no part
    ],
)
def test_questions_read_into_topic_and_constraints(question: str, asks: str, described: str) -> None:
    reading = read(question)
    assert reading.asks == asks
    assert reading.describe() == described


def test_options_joined_by_or_and_commas_are_one_unit_each() -> None:
    reading = read("Which papers adapt, prompt-tune or align large language or vision-language models?")
    units = {u.text: u.alternatives for u in reading.topic.units}
    both = "large language or vision-language models"  # phrases of the same length on both sides
    assert "adapt or prompt-tune or align" in units and both in units
    assert ("align",) in units["adapt or prompt-tune or align"] and ("prompt", "tune") in units["adapt or prompt-tune or align"]
    assert ("larg", "languag") in units[both] and ("vision", "languag", "model") in units[both]


def test_without_retraining_is_met_by_training_free_phrasings() -> None:
    (setting,) = read("Which papers edit images with diffusion models without any retraining?").constraints[1:]
    assert setting.label.startswith("without")
    assert ("train", "free") in setting.units[0].alternatives and ("zero", "shot") in setting.units[0].alternatives


ABSTRACT_ROLES = [
    ("Large language models have shown remarkable capabilities across many tasks.", "background"),
    ("However, they remain vulnerable to jailbreak attacks that elicit harmful content.", "gap"),
    ("In this paper, we propose SafeDecode, a decoding-time defense against jailbreaks.", "contribution"),
    ("SafeDecode works by contrasting the token distributions of an expert model via a safety prior.", "method"),
    ("Experiments on five benchmarks show that SafeDecode reduces attack success rates by 40%.", "result"),
    ("Our code is available at https://github.com/example/safedecode.", "outlook"),
]


def test_sentence_roles_follow_the_plan_of_an_abstract() -> None:
    sents = [s for s, _ in ABSTRACT_ROLES]
    assert sentence_roles(sents, "SafeDecode: Safe Decoding") == [r for _, r in ABSTRACT_ROLES]


def test_code_as_a_subject_is_not_an_outlook() -> None:
    sents = ["Code models are evaluated on stale problems.",
             "We propose LiveBench-Code, a contamination-free evaluation of code models.",
             "We find that twenty models overfit.", "Our code and data will be released."]
    assert sentence_roles(sents, "Evaluating Code Models")[1:] == ["contribution", "result", "outlook"]


def test_what_is_left_for_later_is_an_outlook() -> None:
    sents = ["Reward models guide alignment.", "We propose RMB, a benchmark of reward models.",
             "We will release our evaluation code and datasets upon publication.",
             "In addition, we discuss concerns crucial for designing tokenizers.",
             "Finally, we outline several open problems in this arena."]
    assert sentence_roles(sents, "RMB: Benchmarking Reward Models")[1:] == ["contribution", "outlook", "outlook", "outlook"]


def test_a_paper_speaking_of_itself_by_its_short_name_is_not_background() -> None:
    sents = ["LeanAgent is a lifelong learning agent for theorem proving.", "It proves 162 new theorems."]
    assert sentence_roles(sents, "LeanAgent: Lifelong Learning for Formal Theorem Proving")[0] == "contribution"


def _source(n: int, title: str, sentences: list[str]) -> Source:
    return Source(number=n, paper_id=f"p{n}", title=title, text=" ".join(sentences), score=1.0)


def _pair(first: tuple[str, list[str]], second: tuple[str, list[str]]) -> tuple[Source, Source, TermStats]:
    """Two papers (numbered 1 and 2) and term statistics of a store that holds them and ALL."""
    one, two = _source(1, *first), _source(2, *second)
    return one, two, TermStats.from_texts(f"{s.title} {s.text}" for s in (one, two, *ALL))


DEFENCE = _source(1, "RobustDecode: Defending LLMs against Jailbreak Attacks at Inference Time", [
    "Jailbreak attacks bypass the safety alignment of language models.",
    "We propose RobustDecode, a defense that filters harmful tokens at inference time.",
    "Experiments show it lowers the jailbreak success rate by half.",
])
ATTACK = _source(2, "BreakIt: Jailbreaking Aligned Language Models", [
    "Existing defenses against jailbreaks are believed to be robust at inference time.",
    "We introduce BreakIt, a novel jailbreak attack that bypasses existing defenses.",
    "BreakIt succeeds against every defense we test.",
])
TRAINED = _source(3, "SafeTune: Fine-tuning Defends Language Models against Jailbreaks", [
    "Jailbreaks remain a threat to deployed models.",
    "We propose SafeTune, a fine-tuning defense against jailbreak prompts.",
    "SafeTune lowers the success rate of jailbreaks on four benchmarks.",
])
MENTION = _source(4, "Scaling Laws for Code Models", [
    "We study scaling laws of code models.",
    "We find that larger models are also more robust, e.g. to one jailbreak prompt.",
])
ALL = [DEFENCE, ATTACK, TRAINED, MENTION]
STATS = TermStats.from_texts(f"{s.title} {s.text}" for s in ALL)


def test_admission_needs_every_constraint_stated_as_the_papers_own() -> None:
    reading = read("Which papers defend against jailbreaks at inference time?")
    adm = admit(reading, ALL, STATS)
    j = adm.judgements
    assert adm.admitted() == [1]
    assert j[2].missing == ["must defend or protect"]  # it mentions defenses, but breaks them
    assert j[3].missing == ["at inference time"]  # a defence, trained
    assert j[3].related and not j[4].related  # one passing mention is not the topic


def test_a_technique_named_only_in_the_background_does_not_count() -> None:
    rl_background = _source(1, "Math Tutors: Supervised Fine-tuning of LLMs for Math", [
        "Reinforcement learning has been used to fine-tune LLMs for math reasoning.",
        "We instead propose supervised fine-tuning on curated math solutions for LLMs.",
        "Our LLMs improve math accuracy by 5%.",
    ])
    rl_own = _source(2, "RL Tutors: Fine-tuning LLMs for Math", [
        "LLMs struggle with math reasoning.",
        "We fine-tune LLMs with reinforcement learning (RL) from verifiable math rewards.",
        "RL improves math accuracy by 9%.",
    ])
    reading = read("Which papers use reinforcement learning to fine-tune LLMs for math?")
    adm = admit(reading, [rl_background, rl_own], TermStats.from_texts(s.text for s in (rl_background, rl_own)))
    assert adm.admitted() == [2]
    assert adm.judgements[1].missing == ["using reinforcement learning"]


def test_what_a_topic_is_of_must_be_met_by_itself() -> None:
    """"watermarks of LLM-generated text": an image watermark paper holds "watermarks" and "text" but
    is not about LLM-generated text."""
    text_wm, image_wm, stats = _pair(
        ("Scrubbing Watermarks from LLM-Generated Text", [
            "Watermarks mark LLM-generated text so that it can be traced.",
            "We propose a paraphrasing attack that removes watermarks from LLM-generated text."]),
        ("A Transfer Attack to Image Watermarks", [
            "Watermarks mark generated images; a caption gives the text prompt.",
            "We propose a transfer attack that evades image watermarks."]))
    reading = read("Which papers attack watermarks of LLM-generated text?")
    assert [u.part for u in reading.topic.units] == [0, 1, 1]
    assert strip_frame("Which papers study in-context learning?") == "in-context learning"
    adm = admit(reading, [text_wm, image_wm], stats)
    assert adm.admitted() == [1]
    assert not adm.judgements[2].on_topic


def test_a_why_question_needs_the_papers_to_state_what_it_asks_explained() -> None:
    """"Why do diffusion models memorize training images?": a diffusion paper on training images that
    never speaks of memorizing is related, not an answer."""
    memo, other, stats = _pair(
        ("Where Memorization Comes From in Diffusion Models", [
            "Diffusion models can memorize and replay their training images.",
            "We show that memorization arises when the training images are duplicated."]),
        ("Faster Training of Diffusion Models on Images", [
            "Training diffusion models on large image sets is slow.",
            "We propose a curriculum that trains diffusion models on training images twice as fast."]))
    reading = read("Why do diffusion models memorize training images?")
    adm = admit(reading, [memo, other], stats)
    assert reading.asks == "reason" and adm.admitted() == [1]
    assert adm.judgements[2].related and adm.judgements[2].missing == ["memorize"]
    # a question that asks for papers, not a reason, keeps the share rule
    listing = admit(read("Which papers train diffusion models on training images to memorize?"), [memo, other], stats)
    assert 2 in listing.admitted()
    # the subject is not what is asked explained: an RLHF paper that never speaks of diversity is related
    diverse, faster, stats = _pair(
        ("Why RLHF Narrows What Models Say", [
            "RLHF reduces the diversity of the outputs of language models.",
            "We show that the KL penalty of RLHF causes the loss of output diversity."]),
        ("Faster RLHF", [
            "RLHF is slow, so its outputs take long to improve.",
            "We propose an asynchronous RLHF that reduces training time."]))
    adm = admit(read("Why does RLHF reduce output diversity?"), [diverse, faster], stats)
    assert adm.admitted() == [1] and adm.judgements[2].missing == ["diversity"]


def test_a_detector_is_what_detects_not_what_misleads_detectors() -> None:
    """"machine-generated" is met by "LLM-generated"; an attack that "misleads detectors" is no detector."""
    detector, attack, stats = _pair(
        ("Spotting LLM-Generated Text", [
            "LLM-generated text spreads misinformation.",
            "We propose a classifier that detects LLM-generated text from its token statistics."]),
        ("Proxy Attacks to Mislead Text Detectors", [
            "Detectors of machine-generated text are widely deployed.",
            "To stress test these detectors, we introduce an attack that misleads detection systems on machine-generated text."]))
    adm = admit(read("Which papers detect machine-generated text?"), [detector, attack], stats)
    assert adm.admitted() == [1] and adm.judgements[2].missing == ["must detect"]


def test_the_verb_after_papers_is_what_every_listed_paper_does() -> None:
    """"Which papers watermark images generated by diffusion models?": a diffusion paper on images that
    watermarks nothing is related, not listed; "compress" is met by pruning or evicting, but a
    question about pruning is not met by quantization."""
    marks, other, stats = _pair(
        ("Invisible Watermarks for Diffusion Images", [
            "Images generated by diffusion models are hard to trace.",
            "We propose a method that embeds a watermark in images generated by diffusion models."]),
        ("Sharper Images from Diffusion Models", [
            "Images generated by diffusion models are often blurry.",
            "We propose a sampler that makes images generated by diffusion models sharper."]))
    reading = read("Which papers watermark images generated by diffusion models?")
    assert [u.needed for u in reading.topic.units][:2] == [True, False]
    adm = admit(reading, [marks, other], stats)
    assert adm.admitted() == [1] and adm.judgements[2].missing == ["watermark"]
    assert not any(u.needed for u in read("Which papers study watermarks?").topic.units)  # a general verb
    compress = read("Which papers compress the KV cache?").topic.units[0]
    assert compress.needed and {(stem("pruning"),), (stem("eviction"),)} <= set(compress.alternatives)
    assert (stem("quantization"),) not in read("Which papers prune LLMs?").topic.units[0].alternatives
    # the kind of model a topic names is needed too: an RL paper on embodied agents is no "LLM agents" paper
    assert [(u.text, u.needed) for u in read("Which papers train LLM agents with RL?").topic.units] == [
        ("train", False), ("llm", True), ("agents", False)]


def test_a_specific_word_is_not_met_by_its_wider_family() -> None:
    """"theorem proving" is not met by "math", "watermark" not by "detection", "compression" not by
    "fewer"; the wider word is still met by the specific one."""
    units = {u.text: u for u in read("Which papers study theorem proving, watermark detection and compression?").topic.units}
    assert ("math",) not in units["theorem proving"].alternatives
    assert ("detect",) not in units["watermark"].alternatives
    assert ("fewer",) not in units["compression"].alternatives
    assert (stem("theorem"),) in read("Which papers do math?").topic.units[0].alternatives
    # "theorem proving" is a task: met by "proof assistant" or "Lean", not by "proof" or "theoretical"
    formal, proving = read("Which papers apply LLMs to formal theorem proving?").topic.units
    assert (formal.text, proving.text) == ("formal", "theorem proving")
    assert ("lean",) in proving.alternatives and not {("proof",), (stem("theoretical"),)} & set(proving.alternatives)


def test_a_comparison_does_not_make_a_technique_the_papers_own() -> None:
    search = _source(1, "Strategist: Tree Search for LLM Decisions", [
        "LLMs make poor decisions in games.",
        "We introduce Strategist, a bi-level tree search for LLM decision making.",
        "Strategist agents outperform traditional reinforcement learning models."])
    rl = _source(2, "RL Strategist: LLM Decisions by Reinforcement Learning", [
        "LLMs make poor decisions in games.",
        "We fine-tune LLM decision making with reinforcement learning from game outcomes."])
    reading = read("Which papers use reinforcement learning to improve LLM decision making?")
    adm = admit(reading, [search, rl], TermStats.from_texts(f"{s.title} {s.text}" for s in (search, rl, *ALL)))
    assert adm.admitted() == [2]
    assert adm.judgements[1].missing == ["using reinforcement learning"]


def test_acronyms_are_read_from_the_papers_own_definitions() -> None:
    found = acronyms(["We train with reinforcement learning (RL) and a large language model (LLM)."])
    assert found["rl"] == ("reinforc", "learn") and found["llm"] == ("larg", "languag", "model")
    paper = _source(1, "Policies for Routing", ["We train routing policies with reinforcement learning (RL).",
                                                "We propose a router trained with RL that beats baselines."])
    adm = admit(read("Which papers use RL for routing?"), [paper], STATS)
    assert adm.admitted() == [1]


def test_two_words_the_papers_write_side_by_side_are_one_term() -> None:
    injection = [
        _source(1, "Guarding Agents against Prompt Injection", [
            "Prompt injection hides instructions in the data an LLM agent reads.",
            "We propose a detector that flags prompt injection before the agent acts."]),
        _source(2, "A Benchmark of Prompt Injection", ["We collect prompt injection attacks on LLM agents."]),
        _source(3, "Indirect Prompt Injection in Email Agents", ["We study indirect prompt injection in email."]),
        _source(4, "Injecting Knowledge into Models", [
            "Our method injects domain knowledge into the model.",
            "We prompt the model with retrieved facts and guard it against misuse."]),
    ]
    others = [_source(20 + i, f"Other Work {i}", [f"We prompt language models with hints {i}."]) for i in range(3)] + [
        _source(30 + i, f"Noisy Work {i}", [f"We inject noise into weights {i}."]) for i in range(3)]
    merging = [_source(5 + i, f"Model Merging {i}", [f"We study model merging {i}.", "Merged models are merged."])
               for i in range(3)] + [_source(8 + i, f"Merging Models {i}", ["We merge models.", "Merging models again."])
                                     for i in range(4)]
    stats = TermStats.from_texts(f"{s.title}. {s.text}" for s in injection + merging + others)
    stats.phrases = PhraseStats.from_texts(f"{s.title}. {s.text}" for s in injection + merging + others)
    # 3 of the 4 papers using both words write them side by side, and each word alone is used otherwise
    assert stats.phrases.is_term("prompt", stem("injection"))
    assert not stats.phrases.is_term("model", stem("merging"))  # too few papers write it side by side (3 of 7 use both)
    apart = _source(40, "Shielding LLM Agents", [
        "We defend LLM agents against attacks that inject malicious tools.",
        "We check the prompt of the agent before each step."])
    adm = admit(read("Which papers defend LLM agents against prompt injection?"), [*injection, apart], stats)
    assert 4 not in adm.admitted() and not adm.judgements[4].related  # "injects" and "prompt" apart
    assert 1 in adm.admitted()
    # the same in what a defence withstands: an LLM-agent defence against injected tools is related
    assert adm.judgements[40].missing == ["against prompt injection"]


def _admitted(question: str, papers: list[Source]) -> list[int]:
    """The papers admitted for a question, word statistics taken over those papers."""
    return admit(read(question), papers, TermStats.from_texts(f"{s.title} {s.text}" for s in papers)).admitted()


def test_making_it_faster_and_introducing_a_benchmark_are_the_papers_own_aims() -> None:
    fast = _source(1, "FastSample: Accelerating Diffusion Sampling", [
        "Diffusion models sample slowly.", "We propose FastSample, which accelerates diffusion sampling tenfold."])
    guide = _source(2, "Better Guidance for Diffusion Sampling", [
        "Diffusion sampling with guidance saturates colors.", "We propose a guidance rule for diffusion sampling."])
    assert "must make it faster or cheaper" in read("How do papers make diffusion sampling faster?").describe()
    assert _admitted("How do papers make diffusion sampling faster?", [fast, guide]) == [1]

    bench = _source(3, "Evaluating Code Models", [
        "Code benchmarks are contaminated.", "We propose LiveBench-Code, a contamination-free evaluation of code models.",
        "We find that twenty models overfit."])
    user = _source(4, "PlanSearch for Code Models", [
        "Search helps code models.",
        "We propose PlanSearch, a search method with strong results across HumanEval and LiveCodeBench.",
        "PlanSearch solves more problems than sampling."])
    assert "must introduce a benchmark or dataset" in read("Which papers propose benchmarks for code models?").describe()
    # a benchmark it runs is not its own
    assert _admitted("Which papers propose benchmarks for code models?", [bench, user]) == [3]


def test_an_acronym_a_paper_defines_as_something_else_does_not_count() -> None:
    member = _source(1, "Auditing Privacy of Language Models", [
        "Membership inference attacks (MIAs) reveal training data.", "We propose a defense against MIAs for LLMs."])
    inversion = _source(2, "Shielding Models from Inversion", [
        "Model inversion attacks (MIAs) reconstruct private faces.", "We propose a defense against black-box MIAs."])
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in (member, inversion))
    adm = admit(read("Which papers defend against membership inference attacks?"), [member, inversion], stats)
    assert adm.admitted() == [1] and not adm.judgements[2].on_topic  # "MIAs" in its own sense

"""Reading a question into topic and constraints, sentence roles, and admission by constraint (no store)."""

from __future__ import annotations

import pytest

from rag.grounding.admission import PaperText, acronyms, admit, aside_options, expand_units, set_aside
from rag.text.phrasing import restate
from rag.text.query import strip_frame
from rag.text.reading import examples_given, read, without_aside
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
        # a request for pointers names no topic: what it points to is
        ("I want proposals of new optimizers for LLMs.", "papers", "optimizers — for llms"),
        ("Any pointers to work on graph transformers?", "papers", "graph transformers"),
        ("Recommendations for papers on diffusion model distillation?", "papers", "diffusion model distillation"),
        ("I'd love examples of work on test-time adaptation.", "papers", "test-time adaptation"),
        # ... and so do phrasal verbs of finding ("tracking down to the pixel level" is no request)
        ("Can you track down work on sparse autoencoders for vision?", "papers", "sparse autoencoders"),
        ("Please point me to papers on graph transformers.", "papers", "graph transformers"),
        ("Which papers do multi-object tracking down to the pixel level?", "papers", "multi-object tracking down pixel level"),
        # "tricks" names no technique ("with tricks such as caching" was "using tricks", a constraint no paper states)
        ("Which papers speed up diffusion sampling with tricks such as caching features?", "papers",
         "diffusion sampling — must make it faster or cheaper"),
        ("What is the role of attention sinks in LLMs?", "papers", "attention sinks — in llms"),  # no part
        # "by X" after what is done is how it is done; after "generated", "written" it is who did it
        ("Which papers improve the reasoning of small language models by distillation?", "papers",
         "improve reasoning of small language models — using distillation"),
        ("Which papers watermark images generated by diffusion models?", "papers", "watermark images generated diffusion models"),
        # examples after "e.g." are not asked for; "provide" frames what is asked, as "propose" does
        ("Which papers provide differential privacy guarantees for large language models, e.g. for prompting?",
         "theory", "differential privacy guarantees — for large language models"),
        # "outside X" is a contrast; what a contrast says it does not want asks for nothing
        ("Which papers apply Mamba or other state-space models outside language modeling, e.g. to vision?",
         "papers", "mamba or state-space models"),
        ("Which papers evaluate long-context language models, rather than proposing new methods?", "papers",
         "long-context language models — must evaluate or benchmark"),
        ("How can training of graph neural networks avoid messages from outside the batch?", "method",
         "training of graph neural networks avoid messages — from outside batch"),
        # one of two verbs is a direction: the other is no topic
        ("Which papers stress-test or evaluate machine unlearning?", "papers",
         "machine unlearning — must evaluate or benchmark"),
        # a setting of any model is none; "the number of" and a general verb make no part of the topic
        ("Which papers propose new backdoor attacks on ML models?", "papers", "backdoor attacks — must attack"),
        ("How do papers cut the number of sampling steps of diffusion models?", "method",
         "cut sampling steps diffusion models"),
    ],
)
def test_questions_read_into_topic_and_constraints(question: str, asks: str, described: str) -> None:
    reading = read(question)
    assert reading.asks == asks
    assert reading.describe() == described


def test_what_follows_i_e_restates_the_question_and_stays() -> None:
    reading = read("Which papers use LLM judges, i.e. asking the LLM to verify drafts, for speculative decoding?")
    assert "speculative decoding" in reading.describe()


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


def test_the_fields_our_is_not_the_papers_own() -> None:
    roles = sentence_roles([
        "Grokking is a surprising phenomenon that has challenged our understanding of deep learning.",
        "It is still not clear why generalization is delayed.",
        "In this work we argue that grokking pushes models to the edge of numerical stability.",
    ], "Grokking at the Edge of Numerical Stability")
    assert roles[0] != "contribution" and roles[2] == "contribution"


def test_what_the_field_already_knows_is_background_wherever_it_stands() -> None:
    roles = sentence_roles([
        "This paper introduces the counter-intuitive results of overfitting pre-trained LLMs on very small datasets.",
        "In the setting of open-ended text generation, it is well-documented that LLMs tend to generate repetitive "
        "and dull sequences.",
        "Prior research has shown that greedy decoding makes it worse.",
        "We find that hyperfitted models produce extremely low-entropy predictions.",
    ], "The Hyperfitting Phenomenon")
    assert roles == ["contribution", "background", "background", "result"]
    roles = sentence_roles([
        "Recent works show we can linearize large language models, swapping their attentions for linear ones.",
        "We thus propose LoLCATs, a simple two-step method.",
        "Prior studies have shown that similarity to pre-training data matters, but we find the effect limited.",
    ], "LoLCATs: On Low-Rank Linearizing of Large Language Models")
    assert roles == ["background", "contribution", "result"]


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
    # a store in which "text" is a common word, as it is in the corpus
    stats = TermStats.from_texts([f"{s.title} {s.text}" for s in (text_wm, image_wm, *ALL)]
                                 + [f"We classify text with model {k}." for k in range(10)])
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
    # (and the head of the noun phrase a list question names: "agents")
    assert [(u.text, u.needed) for u in read("Which papers train LLM agents with RL?").topic.units] == [
        ("train", False), ("llm", True), ("agents", True)]


@pytest.mark.parametrize(("topic", "needed"), [
    ("protein structure prediction", ["prediction"]),  # the head names it: structure generation is not it
    ("neural scaling laws", ["laws"]),
    ("state space models", []),  # a head every such topic ends with
    ("neural PDE solvers", []),  # an agent noun, often said by its verb ("solving PDEs")
    ("task arithmetic and model merging", []),  # either part
    ("accelerate video diffusion models", ["diffusion"]),  # the kind of model it names
])
def test_the_head_of_a_bare_topic_is_needed(topic: str, needed: list[str]) -> None:
    assert [u.text for u in read(topic).topic.units if u.needed] == needed


@pytest.mark.parametrize(("question", "needed"), [
    # a list question's topic named as a noun phrase: its head too ("MLLM benchmarks" are no agent benchmarks)
    ("Which papers propose benchmarks for multimodal LLM agents?", ["multimodal", "llm", "agents"]),
    ("Which papers protect user privacy in federated learning?", ["privacy"]),
    # "A of B": A's head is what the papers study, B is not needed whole
    ("Which papers estimate uncertainty of LLM answers?", ["estimate", "uncertainty", "llm"]),
    ("Which papers prove convergence of Adam?", ["prove", "convergence"]),  # not the ADAM agent
    ("Which papers study task arithmetic and model merging?", []),  # either part
])
def test_the_head_of_a_list_questions_topic_is_needed(question: str, needed: list[str]) -> None:
    assert [u.text for u in read(question).topic.units if u.needed] == needed


def test_the_options_a_technique_names_are_needed() -> None:
    """"discrete or masked diffusion models": a continuous diffusion model for text-guided materials
    is not one; the options are what every listed paper must state."""
    technique = next(f for f in read("Which papers use discrete or masked diffusion models for text generation?").constraints
                     if f.kind == "technique")
    assert [u.text for u in technique.units if u.needed] == ["discrete or masked", "diffusion"]  # and the model kind
    stats = TermStats.from_texts(["We propose a masked diffusion language model for text generation.",
                                  "We propose a diffusion model for text-guided materials generation."])
    masked = _source(1, "Masked Diffusion for Text", ["We propose a masked diffusion language model for text generation."])
    other = _source(2, "Text-Guided Materials", ["We propose a diffusion model for text-guided materials generation."])
    adm = admit(read("Which papers use discrete or masked diffusion models for text generation?"), [masked, other], stats)
    assert adm.admitted() == [1]


def test_the_kind_of_model_a_constraint_names_is_needed() -> None:
    """"… in continual learning of LLMs": a continual-learning paper on vision transformers is related."""
    setting = read("Which papers study catastrophic forgetting in continual learning of LLMs?").constraints[0]
    assert setting.kind == "setting" and [u.text for u in setting.units if u.needed] == ["llms"]
    llm, vit, stats = _pair(
        ("Forgetting in Continual Instruction Tuning of LLMs", [
            "Continual learning of large language models suffers from catastrophic forgetting.",
            "We propose function-vector training that reduces catastrophic forgetting of LLMs in continual learning."]),
        ("Memory for Continual Learning of Vision Transformers", [
            "Continual learning suffers from catastrophic forgetting.",
            "We propose a memory that reduces catastrophic forgetting of vision transformers in continual learning."]))
    adm = admit(read("Which papers study catastrophic forgetting in continual learning of LLMs?"), [llm, vit], stats)
    assert adm.admitted() == [1] and adm.judgements[2].missing == ["llms"]


def test_words_the_stemmer_would_join_stay_apart() -> None:
    """Snowball gives "transformers" the stem of "transformation" and "optimal" that of "optimizer"."""
    assert stem("transformers") == stem("transformer") != stem("transformation")
    assert stem("optimal") == stem("optimality") != stem("optimizers")
    # a word made with -ize keeps apart from the word it is made from, in all its forms
    assert stem("tokenization") == stem("tokenizer") == stem("tokenize") != stem("token")
    assert stem("generalization") == stem("generalizes") != stem("general")
    assert stem("noise") == "nois" and stem("memorizing") == stem("memorization") != stem("memory")
    assert stem("grokking") == stem("grok") == stem("grokked")
    gt, bridge, stats = _pair(
        ("Graph Transformers at Scale", ["We scale graph transformers to millions of nodes."]),
        ("Bridges for Graph Transformation", ["We learn a diffusion bridge for graph transformation."]))
    assert admit(read("graph transformers"), [gt, bridge], stats).admitted() == [1]


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
    # flow matching is a generative model beside diffusion, not one: asked for by name ("diffusion or flow matching")
    technique = next(f for f in read("Which papers generate molecules with diffusion models?").constraints
                     if f.kind == "technique")
    diffusion = technique.units[0]
    assert (stem("flow"), stem("matching")) not in diffusion.alternatives
    assert (stem("denoising"),) in diffusion.alternatives


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
    # a field typed with the kind of paper wanted last reads as "benchmarks for" it: that kind is a constraint
    typed = read("code model benchmarks")
    assert typed.topic is not None and typed.topic.text == "code model"
    assert "must introduce a benchmark or dataset" in typed.describe()
    assert _admitted("code model benchmarks", [bench, user]) == [3]
    # ... not a dataset typed as data ("synthetic datasets"), nor a question about benchmarks as such
    assert "must introduce" not in read("synthetic datasets").describe()
    assert read("Which hallucination benchmarks exist?").topic.text == "hallucination benchmarks"


def test_an_acronym_a_paper_defines_as_something_else_does_not_count() -> None:
    member = _source(1, "Auditing Privacy of Language Models", [
        "Membership inference attacks (MIAs) reveal training data.", "We propose a defense against MIAs for LLMs."])
    inversion = _source(2, "Shielding Models from Inversion", [
        "Model inversion attacks (MIAs) reconstruct private faces.", "We propose a defense against black-box MIAs."])
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in (member, inversion))
    adm = admit(read("Which papers defend against membership inference attacks?"), [member, inversion], stats)
    assert adm.admitted() == [1] and not adm.judgements[2].on_topic  # "MIAs" in its own sense


def test_search_frames_a_question_only_where_it_starts() -> None:
    """"Search for papers on X" asks about X; "learn to search", "neural architecture search" are topics."""
    assert "search" in read("Why do transformers struggle to learn to search?").note()
    assert read("Search for papers on neural architecture search").note() == "neural architecture search"
    assert strip_frame("Why do transformers struggle to learn to search?").endswith("search")
    assert strip_frame("Search for papers on diffusion models") == "diffusion models"


def test_a_needed_word_is_stated_as_the_papers_own() -> None:
    """A word every listed paper must state is not stated by "unlike existing watermarks"."""

    paper = PaperText.of(Source(number=1, paper_id="p", title="Robust image hashing", score=1.0,
                                text="Unlike existing watermarks, we hash images. Our hash survives cropping."))
    assert any(stem("watermarks") in r.stems for r in paper.regions(None))
    assert not any(stem("watermarks") in r.stems for r in paper.stated_regions())


def test_a_low_ranked_paper_is_listed_on_a_sentence_that_states_the_question() -> None:
    """Past the first candidates, words scattered over an abstract do not admit a paper; one sentence
    (or the title) stating the question does, and so do scattered words when nothing ranked higher
    meets the question."""
    top = _source(1, "Scaling Laws for Data Mixtures", [
        "We fit scaling laws that predict the loss of a language model from its data mixture."])
    filler = [_source(n, f"Graph Coloring Study {n}", ["We color graphs from data."]) for n in range(2, 5)]
    scattered = _source(5, "Scaling Laws of Time Series Foundation Models", [
        "We train a mixture of experts on time series data.",
        "Its loss follows scaling laws over eight orders of magnitude."])
    together = _source(6, "Scaling Laws for Choosing Data Mixtures", [
        "Scaling laws of data mixtures let us pick the mixture before training."])
    papers = [top, *filler, scattered, together]
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in papers)
    reading = read("What do papers find about scaling laws for data mixtures?")
    adm = admit(reading, papers, stats)
    assert {1, 5, 6} <= set(adm.admitted())  # every word is somewhere in each of them
    assert adm.hold_deep([s.number for s in papers], depth=4) == [5]
    assert 5 not in adm.admitted() and {1, 6} <= set(adm.admitted())
    # nothing ranked above meets the question: the scattered paper is the best there is
    alone = admit(reading, [*filler, scattered], stats)
    assert alone.hold_deep([s.number for s in (*filler, scattered)], depth=3) == []
    assert alone.admitted() == [5]


def test_a_first_candidate_that_holds_the_topic_only_in_its_setting_is_listed() -> None:
    """A paper the search ranks among the first that holds the topic, but only in the sentences that set
    it up (its own sentences name its method), is admitted; one ranked lower, or one that misses a
    constraint, is not."""
    own = _source(1, "Graph Neural Networks for Molecules", [
        "We propose graph neural networks that predict the properties of molecules."])
    setting = ["Graph neural networks are the standard model for molecules.",
               "Yet their message passing is slow on large inputs.",
               "We propose FastMP, which prunes messages by their expected effect."]
    first = _source(2, "FastMP: Pruned Message Passing", setting)
    low = _source(7, "FastMP Again: Pruned Message Passing", setting)
    filler = [_source(n, f"Graph Coloring Study {n}", ["We color graphs."]) for n in range(3, 7)]
    papers = [own, first, *filler, low]
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in papers)
    adm = admit(read("Which papers study graph neural networks for molecules?"), papers, stats)
    assert adm.judgements[2].mentions and not adm.judgements[2].on_topic and not adm.judgements[2].missing
    assert adm.admit_first([s.number for s in papers], depth=5) == [2]
    assert 2 in adm.admitted() and 7 not in adm.admitted() and adm.judgements[7].mentions
    # a first candidate that misses a constraint is not listed
    attack = _source(2, "Breaking Jailbreak Defenses", [
        "Jailbreak attacks on LLMs are an open problem, and defenses against them are brittle.",
        "We present PromptFuzz, which finds prompts that bypass safeguards."])
    papers = [DEFENCE, attack, *filler]
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in papers)
    adm = admit(read("Which papers defend LLMs against jailbreak attacks?"), papers, stats)
    assert adm.admitted() == [1] and adm.judgements[2].mentions
    assert adm.admit_first([s.number for s in papers], depth=5) == [] and adm.admitted() == [1]
    # nor when no paper states the topic as its own: then it is named only in passing
    alone = admit(read("Which papers study graph neural networks for molecules?"), [first, *filler], stats)
    assert alone.admit_first([2, *range(3, 7)], depth=5) == [] and not alone.admitted()


@pytest.mark.parametrize(("question", "phrases"), [
    # a list of examples in parentheses or after "e.g.", each as the asker words it
    ("Which papers change the update rule (Adam or Shampoo variants, extra momentum terms, spike-aware resets)?",
     ["Adam or Shampoo variants", "extra momentum terms", "spike-aware resets"]),
    ("What keeps plasticity in RL (for example neuron resets, spectral regularization, special activation functions)?",
     ["neuron resets", "spectral regularization", "special activation functions"]),
    ("Which papers use Shapley values, e.g. for data valuation, feature attribution or pruning?",
     ["data valuation", "feature attribution or pruning"]),
    # one example cue with two options: each is an example
    ("Which papers speed up LLM inference with tricks such as speculative decoding or KV-cache compression?",
     ["speculative decoding", "KV-cache compression"]),
    # ... after a contrast in an earlier sentence too
    ("I want new optimizers, not analyses of old ones. Which papers change the update rule (Adam variants, "
     "preconditioners built for LoRA factors)?", ["Adam variants", "preconditioners built for LoRA factors"]),
    # examples of what the question sets aside, a list of one, and a clause are none
    ("Which papers make vision models robust, not image classifiers (e.g. ResNets, ViTs)?", []),
    ("Which papers defend LLMs (not attacks such as GCG, AutoDAN or PAIR)?", []),
    ("Which papers study state tracking, e.g. LLM agents?", []),
    ("Which papers study bias (e.g. when the model is trained on a web crawl that nobody has ever filtered at all)?", []),
    # a comparative names a quality of what is asked, not a kind of paper
    ("Which papers make LLM outputs safer (less toxic or harmful, harder to jailbreak) at inference time?", []),
])
def test_the_examples_a_question_gives_are_its_phrases(question: str, phrases: list[str]) -> None:
    assert [p for p, _ in examples_given(question)] == phrases


def test_examples_of_a_constraint_are_told_from_examples_of_the_topic() -> None:
    assert examples_given("Which papers train GNNs on molecules (e.g. QM9, ZINC)?") == [("QM9", True), ("ZINC", True)]
    assert examples_given("Which papers change the update rule (Adam variants, spike-aware resets)?") == [
        ("Adam variants", False), ("spike-aware resets", False)]


def test_a_paper_the_search_ranks_first_for_an_example_is_listed_unless_it_does_the_other_thing() -> None:
    """A candidate that the search ranks first for one of the question's examples is admitted though the
    reading finds the question's words scattered or absent; one that does what the question sets against
    (an attack for a defence question) is not."""
    ademamix = _source(1, "AdEMAMix: A New Optimizer for LLMs", [
        "We propose AdEMAMix, a new optimizer that mixes two moving averages of the gradient for LLMs."])
    soap = _source(2, "SOAP: Improving and Stabilizing Shampoo using Adam", [
        "There is growing evidence of the effectiveness of Shampoo, a higher-order preconditioning method.",
        "We propose SOAP, which runs Adam in the eigenbasis of the preconditioner."])
    filler = [_source(n, f"Graph Coloring Study {n}", ["We color graphs."]) for n in range(3, 7)]
    papers = [ademamix, soap, *filler]
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in papers)
    adm = admit(read("Which papers propose new optimizers for LLMs (e.g. Shampoo variants, spike-aware resets)?"),
                papers, stats)
    assert adm.admitted() == [1] and adm.judgements[2].missing
    assert adm.admit_by_example([2]) == [2] and adm.admitted() == [1, 2] and adm.judgements[2].missing == []
    assert adm.admit_by_example([1, 2]) == []  # admitted already
    # found only by an example of a constraint, a paper must still hold the topic
    qm9 = _source(3, "QM9 Revisited: Better DFT Labels", ["We relabel the QM9 molecules with better DFT energies."])
    papers = [ademamix, soap, qm9, *filler[1:]]
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in papers)
    adm = admit(read("Which papers propose new optimizers for LLMs trained on molecules (e.g. QM9, ZINC)?"), papers, stats)
    assert not adm.judgements[3].mentions and adm.admit_by_example([3], of_constraint=[3]) == []
    assert adm.admit_by_example([3]) == [3]
    # an attack paper found by an example of a defence question is not listed
    papers = [DEFENCE, ATTACK, *filler]
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in papers)
    adm = admit(read("Which papers defend LLMs against jailbreak attacks (e.g. filtering, decoding)?"), papers, stats)
    assert adm.admitted() == [1] and adm.admit_by_example([2]) == [] and adm.admitted() == [1]


def test_how_much_is_no_word_of_what_a_why_question_asks_explained() -> None:
    """"Why do the deeper layers contribute so little?": a paper must state that they contribute, not the
    word "little" ("end up producing less diverse outputs": "diverse", not "end" or "less")."""
    mix = _source(1, "Mix-LN: Unleashing the Power of Deeper Layers", [
        "Deeper layers of large language models (LLMs) are often pruned.",
        "We find that deeper layers of LLMs contribute less than earlier ones because Pre-LN shrinks their gradients."])
    other = _source(2, "Layer Pruning at Scale", ["We prune layers of LLMs with little loss in accuracy."])
    # ("little" is the question's rarest word in this store)
    rare = _source(3, "Sparse Probing", ["Many features contribute to probing, and deeper ones contribute most."])
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in (mix, other, rare, *ALL))
    adm = admit(read("Why do the deeper layers of LLMs contribute so little?"), [mix, other], stats)
    assert adm.judgements[1].admitted, adm.judgements[1]
    diverse = _source(1, "Diverse Preference Learning", [
        "Preference alignment reduces the diversity of large language model (LLM) outputs.",
        "We show that the KL penalty of preference learning makes outputs less diverse, and propose a fix."])
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in (diverse, other, rare, *ALL))
    adm = admit(read("Why do preference-aligned LLMs end up producing less diverse outputs?"), [diverse, other], stats)
    assert adm.judgements[1].admitted, adm.judgements[1]


def test_the_askers_asides_name_nothing_papers_state() -> None:
    """"still … anywhere", "actually", "anyone" say how the asker feels about the topic, not what papers state."""
    r = read("Are energy-based models still being used anywhere?")
    assert r.describe() == "energy-based models" and not r.constraints, r.note()
    assert "actual" not in read("papers that maximize mutual information as the actual training signal").note()
    assert "anyone" not in read("Neuro-symbolic work: anyone pairing LLMs with symbolic solvers?").note()


def test_a_short_name_that_is_a_common_term_names_the_paper_only_as_its_title_writes_it() -> None:
    """"Adam" is the optimizer most papers mention, "ADAM:" the short name of an agent's paper: a
    question on Adam's convergence does not name the agent; a rare short name names its paper in any case."""
    from rag.grounding.evidence import names_paper

    agent = "ADAM: An Embodied Causal Agent in Open-World Environments"
    stats = TermStats.from_texts([agent] + [f"We train model {i} with Adam." for i in range(10)])
    assert not names_paper("Which papers prove convergence of Adam?", agent, stats=stats)
    assert names_paper("How does ADAM explore Minecraft?", agent, stats=stats)
    assert names_paper("How does leanagent prove theorems?", "LeanAgent: Lifelong Learning for Theorem Proving",
                       stats=stats)
    # most of a title's words name it firmly when they are said together, not spread over a long request
    # (which still lists the paper, but does not refuse for what its abstract lacks)
    title = "Meta-Continual Learning of Neural Fields"
    spread = ("I'm after neural fields that are shared across a whole dataset of signals instead of fitting one "
              "network per signal; meta-learned initialisations would be fine, but not continual learning of robots.")
    assert names_paper("What does meta-continual learning of neural fields propose?", title, stats=stats, together=True)
    assert not names_paper(spread, title, stats=stats, together=True)
    assert names_paper(spread, title, stats=stats)


def test_released_code_and_asides_are_no_evidence() -> None:
    """"release open source code and data" says where the paper's code is, not that it is about code;
    "(a contamination-free benchmark)" describes someone else's benchmark, not one the paper introduces."""
    from rag.grounding.admission import Region

    assert stem("code") not in Region.of("We release open source code and data.").stems
    assert stem("code") not in Region.of("Our code is publicly available at https://x.y.").stems
    assert stem("code") in Region.of("We release a benchmark of code generation tasks.").stems
    # "state-of-the-art" holds no state ("optimizer states")
    assert stem("state") not in Region.of("It beats state-of-the-art methods.").stems
    assert stem("state") in Region.of("We shard optimizer states across devices.").stems
    question = "Which papers propose benchmarks for evaluating LLMs on coding tasks?"
    search = _source(1, "Planning Improves LLM Search for Code", [
        "We propose PlanSearch, a search algorithm with strong results on LiveCodeBench (a contamination-free "
        "benchmark for competitive coding).", "It lifts pass@200 on coding tasks."])
    bench = _source(2, "CodeBench: Evaluating LLMs on Coding Tasks", [
        "We introduce CodeBench, a benchmark for evaluating LLMs on coding tasks.", "Models fail often."])
    memory = _source(3, "Episodic Memory Benchmark for LLMs", [
        "We introduce a benchmark for evaluating the episodic memory of LLMs.",
        "We release open source code and data."])
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in (search, bench, memory))
    assert admit(read(question), [search, bench, memory], stats).admitted() == [2]


def test_a_and_b_with_a_phrase_on_each_side_is_met_by_either() -> None:
    """"attention sinks and extreme activation outliers": a paper on attention sinks alone meets it;
    "speech and audio generation" shares its head ("generation"), so it has no sides."""
    from rag.grounding.admission import and_sides

    question = "What do papers find about why attention sinks and extreme activation outliers arise in LLMs?"
    reading = read(question)
    assert [[u.text for u in side] for side in and_sides(reading.topic.units, reading.topic.text)] == [
        ["attention", "sinks"], ["extreme", "activation", "outliers", "arise"]]
    speech = read("speech and audio generation")
    assert and_sides(speech.topic.units, speech.topic.text) == []
    # a head both sides repeat is each side's ("cells" went to the first side, and the second was "grid" alone)
    cells = read("place cells and grid cells")
    assert [[u.text for u in side] for side in and_sides(cells.topic.units, cells.topic.text)] == [
        ["place", "cells"], ["grid", "cells"]]
    # two clauses are one thing asked, not two topics
    clauses = read("Why do LLMs ignore the context they are given and answer from what they memorized?")
    assert and_sides(clauses.topic.units, clauses.topic.text) == []
    sink = _source(1, "When Attention Sinks Emerge", [
        "We study attention sinks in LLMs.", "We find attention sinks emerge after effective optimization."])
    other = _source(2, "Graph Coloring", ["We color graphs with LLMs."])
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in (sink, other))
    assert admit(reading, [sink, other], stats).admitted() == [1]


def test_a_phrase_is_met_across_a_stop_word_the_question_drops() -> None:
    # the question's "reward over-optimization" keeps no stop word; the title writes "over"
    papers = [_source(1, "Mitigating Reward Over-Optimization in RLHF", [
        "We propose a regularizer that keeps the policy close to the reward model's support."])]
    adm = admit(read("How do papers prevent reward hacking or reward over-optimization?"), papers,
                TermStats.from_texts(f"{s.title} {s.text}" for s in papers))
    assert adm.admitted() == [1]


@pytest.mark.parametrize(
    ("question", "other_side", "own_side", "direction"),
    [
        ("Which papers propose new backdoor attacks?",
         ("Poisoned Sample Detection Against Backdoor Attacks",
          "This work studies poisoned sample detection for defending against data poisoning based backdoor attacks."),
         ("Selectively Poisoning for Effective Clean-Label Backdoor Attacks",
          "We propose a new clean-label backdoor attack that poisons only the target class."),
         "must attack"),
        ("Which papers detect hallucinations?",
         ("Reducing Hallucinations in Vision-Language Models via Latent Space Steering",
          "We identify that hallucinations arise from the sensitivity of text decoders to vision inputs."),
         ("Detecting Hallucinations in Retrieval-Augmented Generation",
          "We propose a method that detects hallucinations from the model's internal states."),
         "must detect"),
    ],
)
def test_a_title_that_names_the_other_side_decides_the_direction(
        question: str, other_side: tuple[str, str], own_side: tuple[str, str], direction: str) -> None:
    # a defence ("… Detection Against Backdoor Attacks") is no attack, a remedy ("Reducing …") no detector,
    # whatever their abstracts find on the way
    papers = [_source(1, other_side[0], [other_side[1]]), _source(2, own_side[0], [own_side[1]])]
    adm = admit(read(question), papers, TermStats.from_texts(f"{s.title} {s.text}" for s in papers))
    assert adm.admitted() == [2] and adm.judgements[1].missing == [direction]


@pytest.mark.parametrize(
    ("question", "described"),
    [
        # data a paper learns from is no benchmark asked for; "when trained" is no setting
        ("Which papers study cooperative multi-agent reinforcement learning in the offline setting, learning only "
         "from pre-collected datasets?",
         "cooperative multi-agent reinforcement learning — in offline learning, from pre-collected datasets"),
        ("Why do neural networks lose plasticity when trained on non-stationary data?",
         "neural networks lose plasticity — on non-stationary data"),
        # a topic of general verbs and any model is none: where it is done is the topic
        ("Which papers target running or fine-tuning models on edge or mobile devices?",
         "edge or mobile devices"),
        # a hedge carries nothing
        ("Which papers render novel views from sparse input images, possibly without camera poses?",
         "render views — from sparse input images, without camera poses"),
    ],
)
def test_what_a_question_uses_or_hedges_asks_for_nothing(question: str, described: str) -> None:
    reading = read(question)
    assert reading.asks in ("papers", "reason") and reading.describe() == described


def test_non_english_languages_are_met_by_the_languages_papers_name() -> None:
    (setting,) = read("Which papers adapt LLMs for low-resource or non-English languages?").constraints
    assert ("arab",) in setting.units[0].alternatives or ("arabic",) in setting.units[0].alternatives
    assert ("multilingu",) in setting.units[0].alternatives


def test_a_noun_for_what_is_made_or_fed_weighs_as_a_general_verb() -> None:
    # "content" alone (rarer than "AI-generated" in abstracts) made a style-disentanglement paper on topic
    units = {u.text: u.weight for u in read("Which papers detect AI-generated content?").topic.units}
    assert units["content"] < 1.0 and units["ai-generated"] == 1.0


def test_either_wording_of_a_restated_topic_is_met() -> None:
    # "X, i.e. Y": a paper on gradient inversion recovers the training data; it need not say "privacy"
    reading = read("Which papers attack the privacy of shared updates, i.e. recovering private training data?")
    assert "i.e" not in " ".join(u.text for u in reading.topic.units)  # no unit spans the two wordings
    papers = [_source(1, "Recovering Private Training Data from Gradients", [
        "We present the first exact gradient inversion attack that recovers the private training data of a client."])]
    adm = admit(reading, papers, TermStats.from_texts(f"{s.title} {s.text}" for s in papers))
    assert adm.admitted() == [1]


def test_what_both_options_of_a_technique_act_on_is_needed() -> None:
    # "pruning or merging tokens": a paper that prunes neurons uses neither
    (_, technique) = read("How do papers speed up vision transformers by pruning or merging tokens?").constraints
    assert {u.text: u.needed for u in technique.units} == {"pruning or merging": True, "tokens": True}


@pytest.mark.parametrize(
    ("question", "asks", "described"),
    [
        # "X, meaning Y" words X again, as "X, i.e. Y" does: either wording is the topic
        ("Which papers study out-of-distribution detection, meaning methods that flag unfamiliar inputs?", "method",
         "out-of-distribution detection flag unfamiliar inputs — must detect"),
        # "A or other B", "A and other B": either is asked about
        ("Which papers use Mamba or other state-space models for robot control?", "papers",
         "robot control — using mamba or state-space models"),
        ("Why do DPO and other preference objectives lower the likelihood of preferred responses?", "reason",
         "dpo or preference objectives lower likelihood preferred responses"),
        # "with no X" is without it; "on any benchmark" restricts nothing and asks for no benchmark
        ("Which paper compressed GPT-4 to 1-bit weights with no accuracy loss on any benchmark?", "papers",
         "compressed gpt-4 1-bit weights — without accuracy loss"),
        # what a question builds on is what it uses; options after "either"/"whether" are examples
        ("Which time-series papers build on diffusion models, whether for forecasting or imputation?", "papers",
         "time-series — using diffusion models"),
        ("Which papers target low-resource languages, either improving models or building benchmarks?", "papers",
         "target low-resource languages"),
        # a benchmark is asked for when it heads the phrase, not when it names what the topic acts on
        ("dataset distillation", "papers", "dataset distillation"),
        ("Which benchmarks evaluate LLM agents?", "benchmark", "evaluate llm agents — must evaluate or benchmark"),
    ],
)
def test_restated_options_and_examples_are_read_as_asked(question: str, asks: str, described: str) -> None:
    reading = read(question)
    assert (reading.asks, reading.describe()) == (asks, described)


def _admitted_among(question: str, papers: list[Source]) -> list[int]:
    """The papers admitted for a question, word statistics taken over them and papers on other topics."""
    others = [_source(100 + i, f"Unrelated Topic {i}", [f"We study topic {i} of graphs.", "Results are good."])
              for i in range(8)]
    stats = TermStats.from_texts(f"{s.title} {s.text}" for s in papers + others)
    return admit(read(question), papers, stats).admitted()


def test_a_quantity_or_numbered_name_is_stated_by_every_listed_paper_unless_a_range_is_asked() -> None:
    bitstack = _source(1, "Compressing LLM Weights to 1-bit", [
        "We compress large language model weights to 1-bit formats.",
        "Our method compresses weights to 1-bit with little loss on Llama models."])
    gpt = _source(2, "Compressing GPT-4 Weights to 1-bit", [
        "We compress GPT-4 weights to 1-bit formats.", "Our method compresses weights to 1-bit with little loss."])
    assert _admitted_among("Which papers compress GPT-4 to 1-bit weights?", [bitstack, gpt]) == [2]
    assert _admitted_among("Which papers compress LLM weights to 1-bit?", [bitstack, gpt]) == [1, 2]
    three = _source(3, "Quantizing LLM Weights to 3 Bits", [
        "We quantize LLM weights to 3 bits.", "Our method quantizes LLM weights with little loss."])
    four = _source(4, "Quantizing LLM Weights to 4 Bits", [
        "We quantize LLM weights to 4 bits.", "Our method quantizes LLM weights with little loss."])
    assert _admitted_among("Which papers quantize LLM weights to 4 bits?", [three, four]) == [4]
    assert _admitted_among("Which papers quantize LLM weights to 4 bits or fewer?", [three, four]) == [3, 4]


def test_a_why_question_in_its_own_words_needs_no_word_no_paper_states() -> None:
    # "misbehave" is the asker's word: the papers explain why preference optimization lowers likelihoods
    papers = [_source(1, "Why Preference Optimization Lowers Likelihoods", [
        "We show that preference optimization objectives such as DPO lower the likelihood of preferred responses.",
        "We explain this effect of preference optimization objectives by the similarity of the responses."]),
        _source(2, "Gradient Entanglement in Preference Optimization", [
            "We show that margin-based preference optimization objectives entangle the gradients of responses.",
            "We find that this explains why DPO objectives lower both likelihoods."])]
    question = "Why do DPO and other margin-based preference optimization objectives misbehave?"
    assert "misbehave" in read(question).describe()
    assert _admitted_among(question, papers) == [1, 2]


def test_options_are_not_merged_into_an_acronym_one_option_spells() -> None:
    # "DM" defined as "diffusion model": "diffusion or flow-matching" + "model" keeps the flow-matching option
    reading = read("Which papers solve inverse problems using diffusion or flow-matching models?")
    (technique,) = reading.constraints
    units = expand_units(technique.units, {"dm": (stem("diffusion"), stem("model"))})
    assert any(("flow", "match") in u.alternatives for u in units), units


def test_how_a_model_was_had_weighs_as_a_general_verb() -> None:
    # "pretrained diffusion models": an inverse-problem paper uses one without saying "pretrained"
    (technique,) = read("Which papers solve inverse problems with pretrained diffusion models?").constraints
    weights = {u.text: u.weight for u in technique.units}
    assert weights["pretrained"] < 1.0 and weights["diffusion"] == 1.0, weights


def test_combining_and_testing_are_general_verbs() -> None:
    # "combine LLMs with MCTS": the papers are about both, not about "combining"; "develop or test methods
    # on single-cell data": the data is the topic
    assert read("Which papers combine large language models with Monte Carlo Tree Search?").describe() == \
        "combine large language models — using monte carlo tree search"
    assert {u.text: u.weight for u in read("Which papers combine LLMs with search?").topic.units}["combine"] < 1.0
    assert read("Which papers develop or test methods on single-cell data?").describe() == "single-cell data"
    # "ground X in knowledge graphs": papers reason over them; "ground" is no word they must say
    assert {u.text: u.weight for u in read("Which papers ground LLM reasoning in knowledge graphs?").topic.units}[
        "ground"] < 1.0


@pytest.mark.parametrize(
    ("question", "described"),
    [
        # every paper here uses machine learning: "apply machine learning to X" asks for X
        ("Which papers apply machine learning to medical imaging data such as MRI or CT?", "medical imaging data"),
        ("Which papers rely on vector quantization to turn images into discrete tokens?",
         "vector quantization turn images discrete tokens"),
        # a topic said again after "i.e.": the constraints of its other wording are that wording
        ("Which papers work in the offline RL setting, i.e. learning a policy from a fixed dataset without "
         "interacting with the environment?", "offline rl learning policy"),
        # a model doing two things: the verbs are the options
        ("Which papers introduce benchmarks for evaluating how LLMs write or understand code?",
         "evaluating llms write or understand code — must introduce a benchmark or dataset"),
    ],
)
def test_what_says_nothing_or_restates_is_not_required(question: str, described: str) -> None:
    assert read(question).describe() == described


def test_a_model_doing_two_things_has_the_verbs_as_options() -> None:
    units = {u.text: u.alternatives for u in read("Which benchmarks test how LLMs write or understand code?").topic.units}
    assert "write or understand" in units, units


def test_an_aside_of_other_names_gives_options_and_an_aside_of_kinds_does_not() -> None:
    # "(coordinate-based networks / neural fields)" names the topic again: a "neural fields" paper meets it
    r = read("Which papers use implicit neural representations (coordinate-based networks / neural fields) for "
             "something other than 3D scene reconstruction or rendering?")
    assert r.describe() == "implicit neural representations or coordinate-based networks or neural fields"
    assert ("neural", "field") in r.topic.units[0].alternatives
    # "(forecasting or generation)" are kinds of the task, each a word: not options of "time series"
    r = read("Which papers apply diffusion or flow-matching models to time series (forecasting or generation)?")
    assert r.describe() == "time series — using diffusion or flow-matching models"
    # "A/B or C" nests: the three-option rule is for one separator only
    r = read("Which papers use large language models as the mutation/search operator or surrogate inside "
             "evolutionary or black-box optimization?")
    assert "mutation or search operator or surrogate" not in r.describe()


def test_an_aside_at_the_end_of_a_question_stays_an_aside() -> None:
    # strip_frame cut the closing ")" of "(not speech recognition or plain TTS)?", and the aside became topic
    searched = strip_frame("Which papers do generative modeling of music or general sound/audio (not speech "
                           "recognition or plain TTS)?")
    assert searched.endswith(")")
    assert "speech" not in read("x", search_text=searched).describe()


def test_contractions_frequency_adverbs_and_clauses_add_no_words() -> None:
    r = read("Why do LLMs sometimes ignore the context they're given and answer from what they memorized in "
             "pretraining?")
    words_read = {u.text for u in r.topic.units}
    assert not words_read & {"re", "sometimes"}, words_read
    assert not any(c.label.startswith("from") for c in r.constraints), r.describe()  # "from what …" is no setting
    assert "getting" not in read("How are people getting LLMs to adapt to individual users?").describe()


def test_building_a_model_on_x_uses_x() -> None:
    assert read("Which papers build their models on neural ODEs or neural SDEs?").describe() == \
        "neural odes or neural sdes"


def test_examples_of_the_topic_are_read_and_examples_of_a_constraint_are_not() -> None:
    r = read("Which papers apply machine learning to medical imaging data such as MRI, CT, X-ray, or "
             "pathology/histology slides?")
    assert [u.text for u in r.topic.examples] == ["mri", "ct", "x-ray", "pathology", "histology slides"]
    r = read("Which papers rely on vector quantization (VQ-VAE codebooks, FSQ, residual VQ, lookup-free "
             "quantization) to turn continuous data into discrete tokens?")
    assert "fsq" in [u.text for u in r.topic.examples]
    r = read("Which papers learn control policies or reward functions without access to expert action labels, "
             "e.g. from state-only demonstrations or action-free videos?")
    assert r.topic.examples == []  # examples of the setting, not of the topic
    r = read("Which papers stress-test or evaluate machine unlearning, e.g. showing that supposedly forgotten "
             "knowledge can be recovered?")
    assert r.topic.examples == []  # a clause is no list of examples


def test_an_option_written_out_in_full_is_met_by_its_acronym() -> None:
    topic = read("physics-informed neural networks / PDE-residual loss training").topic
    acr = acronyms(["do not exploit physics informed neural networks (PINNs) in solving inverse problems"])
    units = expand_units(topic.units, acr)
    assert ("pinn",) in units[0].alternatives


def test_what_a_trained_system_turns_out_to_do_is_a_result_and_a_belief_is_outlook() -> None:
    sents = [
        "While large models have shown remarkable capabilities, general agents remain an open challenge.",
        "To this end, we introduce Kinetix: an open-ended space of physics-based RL environments.",
        "Our trained agent exhibits strong physical reasoning capabilities in 2D space, being able to zero-shot "
        "solve unseen human-designed environments.",
        "Furthermore, fine-tuning this general agent on tasks of interest shows significantly stronger "
        "performance than training an RL agent tabula rasa.",
        "We believe this demonstrates the feasibility of large scale pre-training for online RL.",
    ]
    assert sentence_roles(sents, "Kinetix: Investigating the Training of General Agents") == [
        "gap", "contribution", "result", "result", "outlook"]


def test_embed_and_embedding_share_a_stem() -> None:
    # Snowball gives "embed" the stem "emb" and "embeddings" "embed": "Which papers embed …" met no embedding paper
    assert stem("embed") == stem("embeds") == stem("embedding") == stem("embeddings")
    # a field's noun and adjective: "for molecules" is met by "molecular graphs"
    for noun, adjective in (("molecules", "molecular"), ("chemistry", "chemical"), ("medicine", "medical"),
                            ("geometry", "geometric"), ("finance", "financial")):
        assert stem(noun) == stem(adjective), (noun, adjective)


def test_what_a_setting_is_for_and_when_it_is_applied_are_read_apart() -> None:
    # "in hyperbolic space to capture hierarchical structure": the purpose is the topic's, not the setting's
    r = read("Which papers embed data or build neural network layers in hyperbolic space to capture hierarchical "
             "structure?")
    assert [c.label for c in r.constraints] == ["in hyperbolic space"], r.describe()
    # "after training" says nothing a paper must state beside "without retraining"; "afterwards" is no word
    r = read("Which papers compress large language models by pruning or sparsifying them after training, without "
             "retraining or fine-tuning the model afterwards?")
    assert r.describe() == ("compress large language models — using pruning or sparsifying, without retraining or "
                            "fine-tuning model"), r.describe()


def test_what_a_subject_does_adverbs_and_several_are_read_as_meant() -> None:
    # "explore" frames "papers that explore X"; done by agents it is the topic (exploration)
    r = read("Why do RL agents still explore so inefficiently?")
    assert "exploration" in r.describe() and "still" not in r.describe(), r.describe()
    assert read("Which papers explore model merging?").describe() == "model merging"
    # an adverb is weak evidence; "several" is met by "multi-agent" or "multiple"
    assert [u.weight for u in r.topic.units if u.text == "inefficiently"] == [0.34]
    technique = read("Which papers use several LLM agents that collaborate?").constraints[0]
    assert ("multi",) in technique.units[0].alternatives


def test_a_preference_is_no_demand_and_what_is_set_aside_is_not_searched() -> None:
    # "ideally ones that use LLMs as the backbone" made the backbone a technique every paper had to state
    r = read("Which papers propose better ways to train embedding models, dense retrievers or rerankers, ideally "
             "ones that use LLMs as the backbone?")
    assert not r.constraints, r.describe()
    assert without_aside("Which papers design protein sequences, not de novo backbone structure generators?") == \
        "Which papers design protein sequences"
    # "treat X as a game and look for its equilibrium": "treat X as" frames (the papers say "formulate it as a
    # game"), "look" frames
    r = read("Which papers treat LLM preference alignment as a two-player game and look for its Nash equilibrium?")
    assert not {"treat", "look"} & set(r.describe().split()), r.describe()


def test_an_acronym_that_is_a_stop_word_is_no_alternative() -> None:
    # "operations research (OR)": the word "or" of every abstract met "operations-research"
    assert "or" not in acronyms(["We study operations research (OR) with LLMs."])
    assert acronyms(["We train with reinforcement learning (RL)."]) == {"rl": (stem("reinforcement"), stem("learning"))}


def test_the_architecture_every_llm_has_weighs_as_a_general_word() -> None:
    # "in transformer LLMs": "When Attention Sink Emerges in Language Models" never says "Transformer"
    setting = read("Why do attention sinks show up in transformer LLMs?").constraints[0]
    assert [(u.text, u.weight) for u in setting.units] == [("transformer", 0.34), ("llms", 1.0)]
    assert [u.weight for u in read("Which papers study transformers for time series?").topic.units][0] == 1.0


def test_verbs_joined_by_or_after_a_relative_pronoun_are_options_and_weigh_as_general_ones() -> None:
    # "that enforce or improve fairness": not the phrases "that enforce" / "improve fairness" (a paper on
    # fair clustering had to say "enforce"); "improve" is a general verb, and "enforce" beside it as general
    r = read("Which papers propose algorithms that enforce or improve fairness across sensitive groups?")
    units = {u.text: u for u in r.topic.units}
    assert "fairness" in units and units["fairness"].weight == 1.0, units
    assert units["enforce or improve"].weight < 1.0


def test_casting_any_problem_as_something_asks_for_what_it_is_cast_as() -> None:
    # the papers say "we formulate … as a bandit problem"; seldom "cast", never "a practical ML problem"
    r = read("Which papers cast a practical ML problem as a multi-armed bandit and solve it with bandit algorithms?")
    assert r.describe().startswith("multi-armed bandit"), r.describe()
    assert "cast" not in r.describe() and "practical" not in r.describe()
    # a problem of its own stays in the topic; the verb goes
    assert read("Which papers formulate protein design as language modeling?").describe() == "protein design language modeling"


def test_verbs_joined_by_or_after_a_function_word_share_their_object() -> None:
    # "ways to train or obtain embedding models" is not the phrases "ways to train" / "obtain embedding models"
    r = read("Which papers propose better ways to train or obtain embedding models, dense retrievers or rerankers?")
    units = {u.text: u.alternatives for u in r.topic.units}
    assert units.get("train or obtain") == [("train",), ("obtain",)], units
    assert ("dens", "retriev") in units["embedding models or dense retrievers or rerankers"], units


def test_what_a_general_topic_goes_without_is_the_topic() -> None:
    # "training neural networks" says nothing of its own: the papers are about backpropagation, which
    # they name to say they replace it ("a novel alternative to backpropagation")
    r = read("How are people training neural networks without standard end-to-end backpropagation, e.g. with "
             "local learning rules, forward-forward, predictive coding or parallel approximations of backprop?")
    assert [u.text for u in r.topic.units] == ["end-to-end", "backpropagation"], r.describe()  # not "standard"
    assert any(c.text.startswith("without") and not c.required for c in r.constraints)
    # its examples are the topic's ("approximations of backprop": one function word inside)
    assert ("forward", "forward") in [a for u in r.topic.examples for a in u.alternatives]
    assert ("parallel", "approxim", "backprop") in [a for u in r.topic.examples for a in u.alternatives]
    # a topic of its own keeps "without" a ranking constraint
    r = read("Which papers do retrieval-augmented generation without external knowledge?")
    assert r.topic.units[0].text == "retrieval-augmented", r.describe()


def test_words_of_emphasis_and_of_output_weigh_as_general_ones() -> None:
    # "generative models that output whole graphs": graph generators say neither "output" nor "whole"
    units = {u.text: u.weight for u in read("Which papers propose generative models that output whole graphs?").topic.units}
    assert units["whole"] < 1.0 and units["output"] < 1.0 and units["graphs"] == 1.0, units


def test_a_noun_before_as_is_not_cast() -> None:
    # "view" and "frame" are nouns as often as verbs: "novel view synthesis" stays whole
    assert "view" in read("Which papers use novel view synthesis as a pretext task?").describe()


def test_idioms_of_time_frame_the_question() -> None:
    # "after the fact" was the topic words "after" and "fact"
    r = read("Which papers give me a way to detect or verify after the fact that my data was used?")
    assert "fact" not in r.describe() and "after" not in r.describe(), r.describe()


def test_leaning_on_something_makes_it_the_topic() -> None:
    # "lean on" is "rely on", not the Lean theorem prover; "as A, B or C" lists what it is used as
    r = read("Which papers lean on the information bottleneck idea as a training objective, regularizer or theoretical lens?")
    units = [u.text for u in r.topic.units]
    assert "lean" not in units and "information" in r.describe(), units
    assert units[-1] == "training objective or regularizer or theoretical lens", units


def test_a_general_verb_beside_a_direction_leaves_no_direction() -> None:
    # "evaluates or improves LLMs on medical QA" accepts a paper that does either; "stress-test or evaluate"
    # is a direction
    assert not [c for c in read("Which papers evaluate or improve language models on medical question answering?")
                .constraints if c.kind == "direction"]
    assert [c.label for c in read("Which papers stress-test or evaluate machine unlearning?").constraints
            if c.kind == "direction"]
    # a direction noun that is one option of two is no direction either ("segmentation or detection")
    assert not [c for c in read("Which papers handle 3D point-cloud segmentation or detection?").constraints
                if c.kind == "direction"]
    assert [c for c in read("Which papers propose new jailbreak attacks?").constraints if c.kind == "direction"]


def test_a_name_in_an_aside_that_sets_it_aside_is_not_asked_about() -> None:
    from rag.text.reading import without_listed_examples

    q = "Which papers evaluate LLMs on medical question answering (I'm not after radiology images or EHR tables)?"
    assert "EHR" not in without_listed_examples(q)
    assert "(KANs)" in without_listed_examples("Which papers study Kolmogorov-Arnold Networks (KANs)?")
    # a list that ends "and the like" or "etc." lists examples; so does one of short phrases
    assert "INT8" not in without_listed_examples("Who made low-bit quantization (W4A4, INT8 and the like) work?")
    assert "INT8" not in without_listed_examples("Who made low-bit quantization (W4A4, INT8, etc.) work?")
    assert "INRs" not in without_listed_examples(
        "Neural fields shared across signals (conditional neural fields with latent modulations, hypernetwork-generated "
        "INRs, meta-learned initialisations)?")


def test_a_second_option_in_the_same_prepositions_words_is_an_option_not_a_constraint() -> None:
    # "for images or for graphs" required both; "or on adapting to unfamiliar teammates on the fly" was a
    # constraint every zero-shot-coordination paper missed
    r = read("Which papers propose anomaly detection methods for images or for graphs?")
    assert [c.label for c in r.constraints if c.kind != "direction"] == ["for images or graphs"], r.note()
    r = read("Which papers work on zero-shot coordination or on adapting to unfamiliar teammates on the fly?")
    assert r.describe() == "zero-shot coordination", r.note()
    assert read("Which papers learn the policy on the fly?").describe() == "learn policy online"


def test_things_like_gives_examples_and_a_techniques_head_noun_says_nothing() -> None:
    r = read("Got anything on ML for environmental science, things like carbon flux, air pollution or biodiversity "
             "monitoring?")
    assert r.topic is not None and r.topic.label == "environmental science", r.note()
    assert [u.text for u in r.topic.examples] == ["carbon flux", "air pollution", "biodiversity monitoring"]
    # "contrastive objectives" is any contrastive learning: an option's head noun of technique says nothing
    r = read("Which papers rely on contrastive objectives or contrastive predictive coding to learn representations?")
    unit = next(u for f in r.facets for u in f.units if "contrastive" in u.text)
    assert ("contrast",) in unit.alternatives, unit
    # ... nor does a single technique's: "explicit symbolic machinery" is anything explicitly symbolic
    r = read("Anyone pairing LLMs or neural policies with explicit symbolic machinery?")
    technique = next(c for c in r.constraints if c.kind == "technique")
    assert [u.text for u in technique.units] == ["explicit", "symbolic"], technique


def test_examples_given_right_after_a_constraint_meet_it() -> None:
    r = read("Which papers decode visual concepts from neural recordings (fMRI, electrophysiology, EEG)?")
    constraint = next(c for c in r.constraints if "recordings" in c.text)
    assert [u.text for u in constraint.examples] == ["fmri", "electrophysiology", "eeg"]
    # a list that ends "and so on" is a list of examples, as one that ends ", etc." is
    r = read("Which papers track objects in video (multi-object tracking, video segmentation, grounding and so on)?")
    constraint = next(c for c in r.constraints if "video" in c.text)
    assert [u.text for u in constraint.examples] == ["multi-object tracking", "video segmentation", "grounding"]
    # a list after the topic is the topic's, not a constraint's that comes before it
    r = read("Which papers apply diffusion models to time series (forecasting, generation or anomaly detection)?")
    assert all(c.examples == [] for c in r.constraints), r
    fmri = ("Decoding Concepts from fMRI", [
        "We propose a decoder that reads out visual concepts from fMRI responses of human participants.",
        "The decoder recovers concepts across subjects."])
    words_only = ("Decoding Concepts from Neural Recordings", [
        "We propose a decoder that reads out visual concepts from neural recordings.",
        "The decoder recovers concepts across subjects."])
    one, two = _source(1, *fmri), _source(2, *words_only)
    # a store of a hundred other papers: the examples are rare words, as in the corpus
    stats = TermStats.from_texts([f"{s.title} {s.text}" for s in (one, two, *ALL)]
                                 + [f"Paper {k} on optimization of networks." for k in range(100)])
    adm = admit(read("Which papers decode visual concepts from neural recordings (fMRI, electrophysiology, EEG)?"),
                [one, two], stats)
    assert adm.judgements[1].admitted, adm.judgements[1]  # "fMRI" is a neural recording, as the question says
    assert adm.judgements[2].admitted
    plain = admit(read("Which papers decode visual concepts from neural recordings?"), [one, two], stats)
    assert not plain.judgements[1].admitted and plain.judgements[2].admitted


def test_methods_not_built_on_a_technique_go_without_it() -> None:
    # "methods that are not built on diffusion priors" was read as "using diffusion priors"
    for q in ("Which papers restore photos with methods that are not built on diffusion priors?",
              "Which papers restore photos with methods not based on diffusion priors?"):
        r = read(q)
        assert [(c.text, c.required) for c in r.constraints] == [("without diffusion priors", False)], r.note()


def test_a_colon_before_a_list_of_kinds_gives_examples() -> None:
    # "models themselves: their pretraining data, the modality gap, memorization" was one run of words, all needed
    r = read("Which papers study CLIP models themselves: their pretraining captions, the modality gap, memorization "
             "and robustness?")
    assert r.describe() == "clip models", r.note()
    assert "modality gap" in [u.text for u in r.topic.examples]
    # a title's list after a colon names no kinds (topics_dev: it was refused)
    assert read("Model Merging in LLMs, MLLMs, and Beyond: Methods, Theories, Applications and Opportunities").topic.examples == []
    # a heading before the question, and a clause after a colon, stay as they are
    assert read("Brain decoding: which papers read out stimuli from fMRI?").topic is not None
    r = read("Which papers study circuits: finding the subgraph of heads that implements a behaviour, or theory "
             "on whether circuits are identifiable?")
    assert r.topic is not None and r.topic.examples == []


def test_what_a_contrast_of_approach_ends_by_setting_aside_is_set_aside() -> None:
    assert [o.stems for o in aside_options("outside chemistry: which papers build equivariance into models for images "
                                           "and the like, not molecules, proteins and crystals")] == [("molecul",), ("protein",), ("crystal",)]
    assert aside_options("rather than defenses against them") == ()


def test_worked_on_frames_and_a_how_question_asks_for_the_method() -> None:
    # "Has anyone at ICLR 2025 worked on dexterous grasping?" was read as "worked — on dexterous grasping"
    assert read("Which papers worked on dexterous grasping or manipulation?").describe() == \
        "dexterous grasping or manipulation"
    # "How does Bonsai condense a graph dataset …" asked for a benchmark ("dataset"), and was refused
    assert read("How does Bonsai condense a graph dataset for node classification?").asks == "method"
    # ", say A, B or C" gives examples
    r = read("Which papers apply ML to physics, say cosmology, particle-detector design or quantum systems?")
    assert [u.text for u in r.topic.examples] == ["cosmology", "particle-detector design", "quantum systems"]


def test_holding_up_against_an_adversary_is_a_defence_and_a_scheme_says_nothing() -> None:
    # "make RL agents hold up when an adversary perturbs …" listed any defence: the agents were lost
    r = read("Which papers make RL agents or bandit algorithms hold up when an adversary corrupts their rewards?")
    assert r.note().startswith("rl agents or bandit algorithms — must defend or make it robust"), r.note()
    # "weight initialization schemes": papers on initialization were "not: schemes"
    r = read("neural network weight initialization schemes")
    assert not any(u.needed for u in r.topic.units if u.text == "schemes"), r.topic.units


def test_a_constraint_on_two_short_options_holds_both() -> None:
    # "in transformers and LLMs" was read as "in transformers", with "LLMs" in the topic
    assert read("Which papers rethink normalization layers in transformers and LLMs?").note() == \
        "rethink normalization layers — in transformers or llms"
    assert read("How does Transfusion train a single transformer on text and images?").note() == \
        "how: transfusion train single transformer — on text or images"
    # a clause after "and" is a part of its own
    assert "scale" in read("Which methods work in vision and language, and scale well?").note()


def test_examples_given_by_say_a_long_list_and_a_prose_colon() -> None:
    # ", say for A, B or C" gives examples: it was a required purpose no paper states in full
    r = read("Which papers use successor features in RL, say for zero-shot transfer, skill discovery or imitation?")
    assert r.note() == "successor features — in rl", r.note()
    # one longer phrase in a long list of examples does not make the list no list
    r = read("Which papers backpropagate through discrete operations, e.g. Gumbel-softmax, straight-through, "
             "score functions, or smooth relaxations of things like permutations?")
    assert [u.text for u in r.constraints[0].examples] == ["gumbel-softmax", "straight-through", "score functions"]
    # a colon before a list in lower case gives examples, in a description too (a title's list is capitalized)
    assert read("Safety work for multimodal models: jailbreaks, safety benchmarks, guardrails or refusals.").note() == \
        "safety — for multimodal models"
    assert "theories" in read("Model Merging in LLMs: Methods, Theories, Applications and Opportunities").note()


def test_single_word_options_after_a_shared_phrase() -> None:
    # "the model takes images, video or audio as input" needed "model take image", or "video", or "audio input"
    r = read("Which papers study the safety of multimodal models when the model takes images, video or audio as input?")
    options = next(u for f in r.constraints for u in f.units if "video" in u.text)
    assert ("video",) in options.alternatives and ("audio",) in options.alternatives
    assert all(len(a) == 1 for a in options.alternatives), options.alternatives


def test_things_like_gives_examples() -> None:
    # "for things like A, B or C" was a required setting no paper states whole
    r = read("Quantization papers: low-bit weights for things like diffusion image generators, spiking networks or video codecs.")
    assert r.note() == "quantization low-bit weights", r.note()


def test_one_side_of_a_and_b_is_met_by_most_of_that_side() -> None:
    # "GNN pretraining and cross-graph transfer": any paper that says "GNN" met half of the first side,
    # and eight GNN papers on rewiring, condensation or expressivity were listed
    pretrained = _source(1, "Pretraining GNNs at Scale", [
        "We study pretraining of GNNs on many graphs.", "Pretraining GNNs this way helps downstream tasks."])
    rewiring = _source(2, "Curvature-Based Rewiring for GNNs", [
        "We study rewiring of GNNs by curvature.", "Rewiring GNNs improves their accuracy on node tasks."])
    # a store in which pretraining is common and GNNs rare: "GNN" alone is most of "GNN pretraining"
    common = [f"Pretraining language model {k} on text." for k in range(3)]
    stats = TermStats.from_texts([f"{s.title} {s.text}" for s in (pretrained, rewiring, *ALL)] + common)
    adm = admit(read("GNN pretraining and cross-graph transfer"), [pretrained, rewiring], stats)
    assert adm.judgements[1].admitted and not adm.judgements[2].admitted, adm.judgements


def test_what_a_thing_is_like_is_the_thing() -> None:
    # "Koopman-style ideas" needed "koopman style" together, which no paper on a Koopman operator writes,
    # and the question was refused
    r = read("Anyone using Koopman-style ideas for forecasting or control?")
    unit = next(u for f in r.facets for u in f.units if u.text == "koopman-style")
    assert unit.alternatives == [("koopman",)], unit.alternatives
    # "prompt-based" is written so: both words stay
    r = read("Which continual learning papers are prompt-based?")
    unit = next(u for f in r.facets for u in f.units if u.text == "prompt-based")
    assert ("prompt", "base") in unit.alternatives, unit.alternatives


def test_a_technique_the_papers_use_is_met_by_one_sentence_of_what_the_paper_does() -> None:
    # "Which papers use expectation-maximization?" listed one paper: DiffPuter and ISE name EM once each,
    # in the sentence that says what they do, and one mention scored as a passing one
    method = ["Molecular relational learning studies how molecules interact.",
              "We present an integrated dynamic framework called Iterative Substructure Extraction (ISE).",
              "ISE employs the Expectation-Maximization (EM) algorithm for MRL tasks, where substructures are latent.",
              "Experiments validate the superiority of our model."]
    passing = ["Expectation-maximization (EM) has long been used for mixtures.",
               "We study calibration of classifiers under label shift.",
               "Our estimator is consistent and experiments confirm it."]
    ise, other, stats = _pair(("Iterative Substructure Extraction for Molecular Relational Learning", method),
                              ("Calibration under Label Shift", passing))
    used = read("Which papers use expectation-maximization?")
    assert used.used and used.topic is not None and used.topic.label == "expectation-maximization"
    assert admit(used, [ise, other], stats).admitted() == [1]
    # the same words as what the papers are about: one mention is still one in passing
    about = read("expectation-maximization")
    assert not about.used and admit(about, [ise, other], stats).admitted() == []
    # "Who is still building on X?": X is what the papers build on
    assert read(restate("Who is still building on variational autoencoders?")).used


def test_a_verb_that_only_takes_its_object_is_no_part_of_the_topic() -> None:
    # "deal with X" made "deal" a unit of the topic and "with tracking" an option of it
    r = read("What ICLR 2025 papers deal with tracking or localizing objects?")
    assert [u.text for u in r.topic.units] == ["tracking or localizing", "objects"], r.topic.units
    # "as a lens on" names no role the papers must play ("machinery as lens" was required)
    r = read("Which papers use causal-inference machinery as a lens on language models?")
    assert not any(f.kind == "role" for f in r.constraints), r.constraints


def test_a_factorization_is_a_decomposition_and_less_memory_is_cheaper() -> None:
    # "use low-rank factorization to make large models cheaper" was refused: Palu "decomposes the linear
    # layers into low-rank matrices" to "reduce inference-time LLM memory usage"
    palu, other, stats = _pair(
        ("Palu: KV-Cache Compression with Low-Rank Projection",
         ["Serving large models is bound by memory usage, which grows with the context.",
          "This paper presents Palu, a KV-Cache compression framework that utilizes low-rank projection to reduce "
          "inference-time memory usage of large models.",
          "Palu decomposes the linear layers into low-rank matrices and reconstructs the keys on the fly."]),
        ("Compressing Videos with a 3D VAE",
         ["We introduce a 3D VAE to compress videos of large models across spatial and temporal dimensions.",
          "It uses a low-rank factorization of the attention maps."]))
    r = read("Which papers use low-rank factorization to make large models cheaper?")
    assert admit(r, [palu, other], stats).admitted() == [1]


def test_an_acronym_set_aside_sets_aside_the_titles_that_write_it_out() -> None:
    # "I've already read the LLM unlearning papers" left "MUSE: … Evaluation for Language Models" and
    # "On Large Language Model Continual Unlearning" listed: only a title with "LLM" was set aside
    titles = ["On Large Language Model Continual Unlearning", "MUSE: Machine Unlearning Six-Way Evaluation for Language Models",
              "Knowledge Unlearning for LLMs", "DynFrs: Machine Unlearning in Random Forest"]
    papers = {k: PaperText.of(_source(k, t, ["We study machine unlearning."])) for k, t in enumerate(titles, start=1)}
    reading = read("Which papers study machine unlearning, not the LLM unlearning papers?")
    assert set_aside(reading, papers) == {1, 2, 3}


def test_two_things_asked_jointly_are_each_needed_and_sound_is_audio() -> None:
    # "work that models sound and vision jointly" listed audio-only papers (a text-to-sound model, an
    # audio benchmark): "jointly" asks for both; and no paper on audio says "sound" was met
    r = read("Which papers model sound and vision jointly?")
    needed = {u.text for u in r.topic.units if u.needed}
    assert {"sound", "vision"} <= needed, r.topic.units
    assert ("audio",) in next(u for u in r.topic.units if u.text == "sound").alternatives
    assert not {u.text for u in read("Which papers study sound and vision?").topic.units if u.needed} & {"sound", "vision"}


def test_an_example_that_names_a_proof_asks_for_no_theory() -> None:
    # "… e.g. perturbed problem variants, deeper proof structures or olympiad-level sets" was read as a
    # theory question, and its quotes were chosen for theory results
    assert read("Which papers stress-test whether LLMs really reason mathematically, e.g. perturbed problem "
                "variants, deeper proof structures or olympiad-level sets?").asks == "papers"
    assert read("Which papers prove convergence bounds for Adam?").asks == "theory"


def test_two_phrases_that_open_with_the_same_word_are_the_options() -> None:
    # "token merging or token pruning" was read as "token", "merging or token", "pruning"
    r = read("Token merging or token pruning to shorten the sequence a transformer has to process")
    unit = r.topic.units[0]
    assert unit.text == "token merging or token pruning" and len(unit.alternatives) == 2, r.topic.units
    # "on offline model-based or offline black-box optimization": not "on" in the first option
    r = read("Which papers work on offline model-based or offline black-box optimization?")
    assert r.topic.units[0].text == "offline model-based or offline black-box", r.topic.units


def test_repurposing_is_a_general_verb() -> None:
    # "Which papers repurpose generative models for recognition …" needed every paper to say "repurpose"
    r = read("Which papers repurpose generative models for recognition or representation learning?")
    assert not any(u.needed for u in r.topic.units if u.text == "repurpose"), r.topic.units


def test_what_an_aside_names_by_acronym_or_in_full_is_set_aside_and_names_no_paper() -> None:
    # "models that are NOT large language models" left "Knowledge Unlearning for LLMs" listed, and
    # "On Large Language Model Continual Unlearning" was taken as the paper the question names
    titles = ["On Large Language Model Continual Unlearning", "Knowledge Unlearning for LLMs",
              "DynFrs: Machine Unlearning in Random Forest", "Data Unlearning in Diffusion Models"]
    papers = {k: PaperText.of(_source(k, t, ["We study machine unlearning."])) for k, t in enumerate(titles, start=1)}
    reading = read(restate("Machine unlearning methods for models that are NOT large language models: deleting "
                           "training points from image classifiers or random forests."))
    assert set_aside(reading, papers) == {1, 2}
    from rag.grounding.evidence import question_focus

    sources = [_source(k, t, ["We study machine unlearning."]) for k, t in enumerate(titles, start=1)]
    asked = restate("Machine unlearning methods for models that are NOT large language models: deleting points.")
    assert question_focus(asked, sources).named == []
    # the acronym that heads what is set aside names it: "skip DPO/RLHF-style fine-tuning of chat LLMs"
    rlhf = {1: PaperText.of(_source(1, "Regressing the Relative Future: Efficient Policy Optimization for Multi-turn RLHF",
                                    ["We study preference feedback."])),
            2: PaperText.of(_source(2, "Neural Dueling Bandits: Preference-Based Optimization with Human Feedback",
                                    ["We study preference feedback."]))}
    reading = read(restate("Bandits or RL where the learner only sees relative feedback. Please skip DPO/RLHF-style "
                           "fine-tuning of chat LLMs."))
    assert set_aside(reading, rlhf) == {1}
    # ... unless the question asks for it: "using language models for chemistry, not protein language models"
    chem = {1: PaperText.of(_source(1, "Large Language Models for Molecule Design", ["We design molecules."]))}
    reading = read(restate("Anyone using language models for chemistry? Protein language models aren't what I mean."))
    assert set_aside(reading, chem) == set()


def test_a_direction_word_in_an_aside_is_the_kind_unless_a_direction_is_read() -> None:
    # "not code generation methods" set aside any code paper ("generation" went as a direction word)
    assert [o.stems for o in aside_options("not code generation methods")] == [("code", "generat")]
    assert [o.stems for o in aside_options("not code generation methods", True)] == [("code",)]
    titles = ["BigCodeBench: Benchmarking Code Generation with Diverse Function Calls",
              "CodeMMLU: A Benchmark for Code Understanding", "DeepRTL: Bridging Verilog Understanding and Generation"]
    papers = {k: PaperText.of(_source(k, t, ["We study code."])) for k, t in enumerate(titles, start=1)}
    reading = read("Which papers are about understanding existing code, not code generation methods?")
    assert set_aside(reading, papers) == {1}
    # a defence of backdoors, not new backdoor attacks: the direction is judged, no backdoor paper set aside
    reading = read("Which papers defend against backdoors, not new backdoor attacks?")
    assert set_aside(reading, {1: PaperText.of(_source(1, "Backdoor Attacks on LLMs", ["We attack."]))}) == set()


def test_a_second_half_written_once_and_a_chain_of_ors_give_options() -> None:
    # "single-/multi-index target functions" was "single" and "multi-index", each needed
    r = read("Which theory papers use teacher-student or single-/multi-index target functions?")
    unit = next(u for c in r.constraints for u in c.units if "index" in u.text)
    assert ("singl", "index") in unit.alternatives and ("multi", "index") in unit.alternatives, unit
    assert ("teacher", "student") in unit.alternatives, unit
    # "A or B or C" is one choice of three
    assert [u.text for u in read("Which papers use pruning or quantization or distillation?").topic.units] == \
        ["pruning or quantization or distillation"]


def test_used_inside_is_used_in() -> None:
    # "MPC used inside a learning method" was a technique "inside learning", which no abstract words so
    r = read("model predictive control / receding-horizon planning (MPC, MPPI) used inside a learning method")
    assert r.constraints == [], r.note()


def test_built_for_or_from_says_no_more_than_for_or_from() -> None:
    # "methods built for time-series models" was refused: "built" weighed as a word of the topic
    r = read("explainability / interpretability methods built for time-series models rather than images or text")
    assert r.note() == "how: explainability or interpretability — for time-series models", r.note()
    r = read("Which papers study rating or ranking systems built from pairwise comparisons?")
    assert "built" not in r.note(), r.note()


def test_rating_systems_are_a_topic_and_a_papers_rating_a_detail() -> None:
    from rag.grounding.evidence import asked_details

    # "better rating or ranking systems … for LLM evaluation" was refused: "Abstracts do not give reviews"
    assert asked_details("Which papers study better rating or ranking systems built from pairwise comparisons?") == []
    assert asked_details("What rating did the Mamba paper get at ICLR 2025?") == ["reviews: rating"]


def test_a_sentence_that_only_announces_is_quoted_with_the_next() -> None:
    from rag.grounding.evidence import announces

    assert announces("In this work, we provide a comprehensive explanation for this issue.")
    assert announces("This work aims to bridge this gap.")
    # a sentence that names what it brings says it
    assert not announces("To address this gap, we present CarbonSense, the first machine learning-ready dataset for DDCFM.")


def test_data_the_papers_are_tested_on_is_met_by_one_result_on_it() -> None:
    # "Which papers develop or test methods on single-cell data?" listed one paper: the others show one result
    # on single-cell data ("We also show that ORC-ManL can be used to improve clustering of single-cell RNA
    # sequencing data"), a mention in passing for a paper about it
    tested = ["Manifold learning recovers low-dimensional structure from samples.",
              "We introduce ORC-ManL, a method that prunes spurious edges by Ollivier-Ricci curvature.",
              "We also show that ORC-ManL can be used to improve clustering of single-cell RNA sequencing data."]
    passing = ["Single-cell data is one of many motivations for metric learning.",
               "We study calibration of classifiers under label shift.",
               "Our estimator is consistent and experiments confirm it."]
    orc, other, stats = _pair(("Recovering Manifold Structure Using Ollivier Ricci Curvature", tested),
                              ("Calibration under Label Shift", passing))
    r = read("Which papers develop or test methods on single-cell data?")
    assert r.tested and not r.used and r.topic is not None and r.topic.label == "single-cell data", r.note()
    assert admit(r, [orc, other], stats).admitted() == [1]
    # the same words asked as what papers are about: one result on it is a mention in passing
    assert not read("single-cell data").tested
    assert admit(read("single-cell data"), [orc, other], stats).admitted() == []


def test_teaching_a_model_is_a_general_verb() -> None:
    # "teach a text-to-image model new subjects": "teach" was needed, and personalization papers were related
    r = read("Which papers teach a text-to-image model new subjects or styles?")
    assert not any(u.needed for u in r.topic.units if u.text == "teach"), r.topic.units


def test_a_latin_or_greek_plural_shares_its_singulars_stem() -> None:
    # "compute or learn equilibria" did not meet "Nash equilibrium"
    for plural, one in (("equilibria", "equilibrium"), ("matrices", "matrix"), ("criteria", "criterion"),
                        ("phenomena", "phenomenon"), ("hypotheses", "hypothesis")):
        assert stem(plural) == stem(one), (plural, one)


def test_a_learned_noun_in_y_shares_its_adjectives_stem() -> None:
    # "heterophilous graphs" did not meet "heterophily"
    for noun, adjective in (("heterophily", "heterophilic"), ("heterophily", "heterophilous"), ("symmetry", "symmetric"),
                            ("symmetries", "symmetric"), ("entropy", "entropic"), ("taxonomy", "taxonomic")):
        assert stem(noun) == stem(adjective), (noun, adjective)
    assert stem("efficiency") == stem("efficient") and stem("policy") != stem("polices")  # other -y words as before


def test_an_acronyms_plural_shares_its_stem() -> None:
    # Snowball keeps the "s" of "PDEs", "GNNs", "GPUs": "PDE solvers" did not meet "solvers for PDEs"
    for plural, one in (("pdes", "pde"), ("gnns", "gnn"), ("llms", "llm"), ("mllms", "mllm"), ("gpus", "gpu"),
                        ("sdes", "sde")):
        assert stem(plural) == stem(one), (plural, one)
    # words that end in "s" keep it
    for word in ("class", "gas", "bus", "yes", "less", "process"):
        assert stem(word).endswith("s"), word
    adm = admit(read("PDE solvers"), [_source(1, "Neural Solvers for PDEs", ["We learn fast solvers for PDEs."])],
                TermStats.from_texts([f"Paper {k} on optimization of networks." for k in range(50)]))
    assert adm.judgements[1].admitted, adm.judgements[1]


def test_a_condition_that_does_not_hold_is_a_setting_beyond_it() -> None:
    # abstracts write "non-exchangeable", "beyond exchangeability", "dispensing with exchangeability":
    # no abstract says the question's "hold", so the condition is read without it, and its examples stay
    r = read("Conformal prediction for when exchangeability doesn't hold: dependent time-series data, "
             "graphs that change over time, or an online stream.")
    (setting,) = r.constraints
    assert setting.label == "beyond exchangeability", setting
    assert [u.text for u in setting.units] == ["exchangeability"]
    assert [u.text for u in setting.examples][:2] == ["dependent time-series data", "graphs"]
    # "the X assumption" is X; what is not at hand is gone
    (faith,) = read("causal discovery when the faithfulness assumption is violated").constraints
    assert [u.text for u in faith.units] == ["faithfulness"], faith
    (labels,) = read("domain adaptation when target labels are not available").constraints
    assert labels.label == "without target labels", labels
    # a condition that holds is no setting beyond it
    assert "beyond" not in " ".join(c.label for c in read("bandits when the reward is delayed").constraints)


def test_one_or_two_demonstrations_is_few_shot_not_two() -> None:
    (setting,) = read("Teaching a robot a new manipulation skill from just one or two demonstrations: "
                      "what's out there?").constraints
    few = next(u for u in setting.units if u.text == "few-shot")
    assert few.needed and ("one", "shot") in few.alternatives and ("singl", "demo") in few.alternatives
    assert "two" not in [u.text for u in setting.units]
    # "pruned in one shot" is one pass, and the question's words stay as they were
    assert "few-shot" not in read("Which paper pruned 90% of a VLM's weights in one shot?").topic.label
    # "a single image" is one view, not few-shot learning
    (view,) = read("3D reconstruction from a single image").constraints
    assert "few-shot" not in [u.text for u in view.units]
    # a paper on a "dexterous hand" learns from no handful of demonstrations
    stats = TermStats.from_texts([f"Paper {k} on optimization of networks." for k in range(50)])
    hand = _source(1, "Dexterous Manipulation", ["We track a dexterous robot hand from large-scale demonstrations."])
    one = _source(2, "Instant Policy: Learning Robot Manipulation Skills in Context", ["Our robot manipulation policy learns new skills from just one or two demonstrations."])
    adm = admit(read("robot manipulation skills from just one or two demonstrations"), [hand, one], stats)
    assert adm.judgements[2].admitted and not adm.judgements[1].admitted, adm.judgements
    assert adm.judgements[1].missing == ["few-shot"], adm.judgements[1]


def test_a_short_topic_lists_past_the_first_papers_only_those_that_state_the_words_narrowing_it() -> None:
    spatial = [_source(n, f"Spatial Audio Generation {n}", ["We generate spatial audio for immersive scenes."])
               for n in (1, 2)]
    plain = [_source(n, f"Audio Generation {n}", ["We generate audio from text prompts."]) for n in (3, 4, 5)]
    stats = TermStats.from_texts([f"{s.title} {s.text}" for s in spatial + plain]
                                 + [f"Paper {k} on optimization of networks." for k in range(100)])
    order = [1, 3, 2, 4, 5]
    adm = admit(read("spatial audio generation"), spatial + plain, stats)
    assert all(adm.judgements[n].admitted for n in order)  # "audio generation" is most of the words
    held = adm.hold_partial(order, 3)
    assert held == [4, 5], held  # the first three stay: the search ranks them on the whole phrase
    assert adm.judgements[4].related and adm.judgements[4].missing == ["spatial"], adm.judgements[4]
    assert adm.judgements[3].admitted
    # without a paper that states all of it, nothing is held
    adm = admit(read("spatial audio generation"), plain, stats)
    assert adm.hold_partial([3, 4, 5], 1) == []
    # a paper lacking a word before the head is held; a word that says nothing of its own ("deep
    # learning") narrows nothing
    mols = [_source(1, "Molecule Graph Classification", ["We classify molecule graphs with message passing."]),
            _source(2, "Labelling Molecule Graphs", ["We label molecule graphs with message passing."]),
            _source(3, "Graph Classification", ["We classify graphs with message passing."])]
    solvers = [_source(5, "Weather Forecasting", ["We forecast weather with graph networks."])]
    stats = TermStats.from_texts([f"{s.title} {s.text}" for s in mols + solvers]
                                 + [f"Paper {k} on optimization of networks." for k in range(100)])
    adm = admit(read("molecule graph classification"), mols, stats)
    assert adm.judgements[3].admitted, adm.judgements
    assert adm.hold_partial([1, 2, 3], 0) == [3], adm.judgements  # lacks "molecule"
    weather = _source(4, "Deep Learning Weather Forecasting", ["We forecast weather with deep learning."])
    adm = admit(read("deep learning weather forecasting"), [weather, solvers[0]], stats)
    assert adm.judgements[5].admitted and adm.hold_partial([4, 5], 0) == []


def test_a_word_that_common_words_also_meet_weighs_as_they_do() -> None:
    # "MoE LLMs cheaper to serve": "cheaper" is rare, but "efficient" meets it; a paper on efficient
    # fine-tuning of LLMs that never names mixture-of-experts held most of the rarity-weighted topic
    texts = ([f"Paper {k}: an efficient method for networks." for k in range(60)]
             + [f"Paper {k} on a mixture-of-experts model." for k in range(8)] + ["We make serving cheaper."])
    stats = TermStats.from_texts(texts)
    moe = _source(1, "Faster Mixture-of-Experts Serving", ["We accelerate mixture-of-experts LLMs at serving time."])
    sft = _source(2, "Efficient Fine-Tuning of LLMs", ["We fine-tune LLMs efficiently and serve them."])
    adm = admit(read("How can mixture-of-experts LLMs be made cheaper to serve?"), [moe, sft], stats)
    cheaper = next(u for u in adm.topic if u.text == "cheaper")
    assert cheaper.weight <= stats.idf(stem("efficient")) + 1e-9 < stats.idf(stem("cheaper")), cheaper
    assert "made" not in [u.text for u in adm.topic]  # "be made cheaper": the verb says nothing
    assert adm.judgements[1].admitted and not adm.judgements[2].on_topic, adm.judgements
    # how much the question says is its own words' rarity: a topic met by common words is still a topic
    assert adm.says > sum(u.weight for u in adm.topic)


def test_british_spellings_meet_american_ones() -> None:
    for british, american in (("behaviour", "behavior"), ("optimisation", "optimization"), ("generalise", "generalize"),
                              ("tokenisation", "tokenization"), ("analyse", "analyze"), ("analysis", "analyze"),
                              ("dialogue", "dialog"), ("neighbouring", "neighboring"), ("centre", "center"),
                              ("defence", "defense"), ("tumour", "tumor"), ("modelling", "modeling")):
        assert stem(british) == stem(american), (british, american)
    # words that only look British keep their own stems
    for word, other in (("noise", "noize"), ("supervised", "supervized"), ("promise", "promize"), ("precise", "precize"),
                        ("contour", "contor"), ("unpromising", "unpromizing"), ("hour", "hor"), ("expertise", "expertize")):
        assert stem(word) != stem(other), word


def test_a_pair_is_met_written_either_way() -> None:
    (using,) = [c for c in read("two-layer networks trained with teacher-student setups").constraints]
    pair = next(u for u in using.units if u.text.startswith("teacher-student"))
    assert ("student", "teacher") in pair.alternatives, pair
    # a word with a function word or a number is not turned round ("in-context", "two-layer")
    assert ("context", "in") not in read("in-context learning").topic.units[0].alternatives
    # the general verb before the options' head is not needed ("… target functions": "target")
    (c,) = [c for c in read("theory papers using teacher-student or single-index target functions").constraints
            if c.kind == "technique"]
    assert not any(u.needed for u in c.units if u.text == "target"), c.units


def test_options_mostly_of_one_word_take_the_first_ones_last_word() -> None:
    # "probe LLM personality, values, conformity or theory of mind": the options are the traits, and
    # the words before the first are said of each (not one option "probe LLM personality")
    units = read("Which papers probe LLM personality, values, rationality, conformity, theory of mind "
                 "or relational reasoning?").topic.units
    options = next(u for u in units if " or " in u.text)
    assert options.text.startswith("personality or values"), units
    assert not any(u.needed for u in units if u.text == "probe"), units  # a general verb of study


def test_a_contrast_said_first_is_read_as_said_last() -> None:
    # (the request is restated first, as the engine does: rag.text.phrasing.restate)
    r = read(restate("Rather than yet another quantization or pruning method for LLMs, which papers examine what "
             "compression does to a model?"))
    assert r.aside.lower().startswith("rather than yet another quantization"), r.aside
    assert "quantization" not in r.topic.label and "compression" in r.topic.label, r.topic.label
    r = read(restate("Not yet another method to stop catastrophic forgetting: I want papers that explain when and why "
             "forgetting happens in sequential training."))
    assert r.aside.lower().startswith("not yet another method") and r.topic.label.startswith("forgetting"), r
    # "when and why" is one question, not a second one cut off
    assert "in sequential training" in [c.label for c in r.constraints], r.constraints
    # sequential training is what papers call continual or lifelong learning
    seq = next(c for c in r.constraints if c.label == "in sequential training")
    assert any(("lifelong",) == a for u in seq.units for a in u.alternatives), seq.units
    # a contrast of its own sentence, with a "please"; not a sentence that only opens with "not sure"
    r = read(restate("Not new alignment methods, please. I want evidence of what post-training breaks."))
    assert r.aside.lower().startswith("not new alignment methods") and "alignment" not in r.topic.label, r
    assert not read(restate("Not sure about this, but which papers study grokking?")).aside


def test_a_question_that_sets_aside_new_methods_lists_studies() -> None:
    stats = TermStats.from_texts([f"Paper {k} on optimization of networks." for k in range(50)])
    study = _source(1, "Adam Exploits the Geometry of the Loss", [
        "Adaptive optimizers such as Adam are widely used.",
        "In this work, we argue that Adam exploits the geometry of the loss landscape, and we prove a convergence rate."])
    method = _source(2, "SPAM: Spike-Aware Adam with Momentum Reset", [
        "Adaptive optimizers such as Adam are widely used.", "We propose SPAM, a new Adam optimizer with momentum reset."])
    named = _source(3, "Adaptive Batch Selection for Adam", [
        "Adaptive optimizers such as Adam are widely used.",
        "In this paper, we introduce a novel method that extends Adam with adaptive batch selection."])
    q = "Papers that try to explain why adaptive optimizers like Adam work so well, not papers proposing yet another new optimizer?"
    adm = admit(read(q), [study, method, named], stats)
    assert adm.judgements[1].admitted, adm.judgements[1]
    for n in (2, 3):
        assert not adm.judgements[n].admitted and "a study (this paper proposes a method)" in adm.judgements[n].missing, n
    # without the aside, the method papers are as listed as before
    adm = admit(read("Papers that try to explain why adaptive optimizers like Adam work so well?"), [study, method, named], stats)
    assert "a study (this paper proposes a method)" not in adm.judgements[2].missing
    # a question for methods that sets aside one kind of them sets aside no method
    adm = admit(read("Adaptive optimizers for transformers that use second-order information; yet another "
                     "first-order architecture doesn't help me."), [study, method, named], stats)
    assert "a study (this paper proposes a method)" not in adm.judgements[2].missing, adm.judgements[2]
    # an evaluation question keeps the metrics and benchmarks it asks for ("not yet another RAG pipeline")
    bench = _source(4, "FaithEval: Evaluating Faithfulness of RAG", ["We introduce FaithEval, a new benchmark for RAG faithfulness."])
    adm = admit(read("Which papers evaluate or benchmark retrieval-augmented generation, rather than proposing yet "
                     "another RAG method?"), [bench], stats)
    assert "a study (this paper proposes a method)" not in adm.judgements[4].missing, adm.judgements[4]


def test_a_word_whose_object_is_said_elsewhere_is_no_constraint() -> None:
    # "by choosing which neurons …" was read "using choosing", and refused: no abstract uses "choosing"
    for question, word in [
        ("Which papers speed up LLM inference by choosing which neurons to use for each input?", "choosing"),
        ("Which papers train OOD detectors by exposing them to outliers during training?", "exposing"),
        ("Did anyone train models on cellular automata, or build tools for simulating them at scale?", "simulating"),
        ("Which papers pair a small model with a big one to save compute?", "big"),
    ]:
        assert word not in " ".join(c.text for c in read(question).constraints), read(question).note()
    # ... while a constraint said with its object stays
    assert "simulating" in read("Which papers build tools for simulating cellular automata?").note()


def test_a_size_in_a_constraint_is_no_kind_but_large_language_models_are() -> None:
    # "for large diffusion models" refused Ctrl-Adapter ("adds diverse controls to any image/video diffusion model"):
    # not stated "large"
    note = read("Which papers train spatial-control adapters cheaply for large diffusion models?").note()
    assert "diffusion models" in note and "large" not in note, note
    assert "large language models" in read("Which papers study quantization for large language models?").note()


def test_a_topic_that_is_only_a_defined_term_is_met_by_the_term_or_its_acronym_not_its_words_apart() -> None:
    np_paper = _source(1, "Dimension Agnostic Regressors", [
        "Neural Processes (NPs) are meta-learned regressors.", "We extend NPs to inputs of any dimension."])
    brain = _source(2, "Neural Dynamics of Sensory Processes", [
        "Sensory processes unfold over time.", "We show that neural dynamics shape sensory processes in mice."])
    acronym_only = _source(3, "Scalable Meta-Regression", [
        "Neural processes are slow on large context sets.", "We make NPs scale to a million points."])
    assert _admitted_among("neural processes", [np_paper, brain, acronym_only]) == [1, 3]
    # (with a constraint, the term's words in one sentence still meet it: "reinforcement … learning")


def test_verbs_of_carrying_and_going_say_nothing_of_the_topic() -> None:
    carried = read("Has anyone carried the draft-then-verify trick of speculative decoding over to image generators?")
    assert carried.topic is not None and not any(u.needed for u in carried.topic.units if u.text == "carried")
    code = read("Which papers improve LLMs' mathematical reasoning by bringing in code?")
    assert "bringing" not in code.describe()


def test_a_rare_acronym_used_as_a_thing_of_a_kind_names_no_paper() -> None:
    """"I don't trust any single estimated DAG" uses "DAG" as a common noun: the one paper with DAG in its
    title ("Neural Spacetimes for DAG Representation Learning") was taken as named, and the question refused
    because its abstract "does not say this". A name said as a name still names; a size ("a 175B model")
    stays a detail to check."""
    from rag.grounding.evidence import names

    stats = TermStats.from_texts(["Neural Spacetimes for DAG Representation Learning"] + [f"paper {i}" for i in range(20)])
    assert names("I don't trust any single estimated DAG. What should I read?", stats) == []
    assert names("How does NST embed a DAG?", stats) == ["NST"]  # (DAG after "a" is a thing; NST is a name)
    assert names("Which papers learn DAG embeddings?", stats) == ["DAG"]
    assert names("Who trained a 175B model on one GPU?", stats) == ["175B"]
    # ... and a name before the noun it qualifies is still a name ("after one YouTube video" refused by it)
    assert names("Which paper taught a robot to cook after one YouTube video?", stats) == ["YouTube"]


@pytest.mark.parametrize(("question", "benchmarks"), [
    # where the work is done, not what is asked for: "on many simulated datasets … for a new dataset" was read as
    # "must introduce a benchmark or dataset", and both papers on the writer's list were refused
    ("Amortized causal inference: papers that pretrain a network on many simulated datasets so that it outputs an "
     "estimate for a new dataset in one pass.", False),
    ("Federated learning where client data doesn't sit in a fixed local dataset but arrives as a live stream.", False),
    ("Which datasets evaluate LLM agents?", True),
    ("Is there a dataset for sign language translation?", True),
    ("Which papers introduce new benchmarks for code generation?", True),
])
def test_a_dataset_the_work_is_done_on_is_no_benchmark_asked_for(question: str, benchmarks: bool) -> None:
    r = read(question)
    assert (r.asks == "benchmark") == benchmarks, r.note()
    assert any(c.label == "must introduce a benchmark or dataset" for c in r.constraints) == (
        benchmarks and "new" in question), r.note()


def test_a_kind_of_the_asked_action_that_the_question_contrasts_away_meets_nothing_and_its_titles_go() -> None:
    # "detect text generated by LLMs, as opposed to watermarking it" listed three watermark papers: a watermark is
    # one way the family "detect" counts as detecting, and the contrast set nothing aside
    q = "How do ICLR 2025 papers detect text generated by LLMs, as opposed to watermarking it?"
    r = read(q)
    assert r.narrowed == ["watermark"]
    direction = next(c for c in r.constraints if c.kind == "direction")
    assert ("watermark",) not in direction.units[0].alternatives and ("detect",) in direction.units[0].alternatives
    titles = ["PaLD: Detection of Text Partially Written by Large Language Models", "Black-Box Detection of Language Model Watermarks",
              "Can Watermarked LLMs be Identified by Users via Crafted Prompts?"]
    papers = {k: PaperText.of(_source(k, t, ["We detect LLM-generated text."])) for k, t in enumerate(titles, start=1)}
    assert set_aside(r, papers) == {2, 3}
    # without the contrast a watermark still detects, and nothing is set aside
    plain = read("How do ICLR 2025 papers detect text generated by LLMs?")
    assert plain.narrowed == [] and set_aside(plain, papers) == set()
    assert ("watermark",) in next(c for c in plain.constraints if c.kind == "direction").units[0].alternatives
    # the question's own word said again in the contrast is no kind set aside ("protect …, rather than showing that
    # such protections can be bypassed"), nor is a kind of a contribution ("rather than yet another pruning method")
    assert read("Which papers protect images against unauthorized editing by diffusion models, rather than showing "
                "that such protections can be bypassed?").narrowed == []
    assert read("Rather than yet another quantization or pruning method for LLMs, which papers examine what "
                "compression does to a model?").narrowed == []


def test_text_generated_by_llms_is_llm_generated_text() -> None:
    # read as "text", "generated" and "LLMs" apart, hallucination-detection and stance-detection papers filled the list
    assert read("How do papers detect text generated by LLMs?").topic.label == "llm-generated text"
    assert read("Which papers detect essays written by large language models?").topic.label == "llm-generated essays"
    assert read("Which papers detect images generated by AI?").topic.label == "ai-generated images"
    # a generator that is no family member keeps its words ("diffusion" would be lost)
    assert "diffusion" in read("Which papers detect images generated by diffusion models?").topic.label


@pytest.mark.parametrize("question", [
    "Which papers use graph neural networks to predict molecular properties with few labels?",
    "Which papers train image segmentation models from limited labeled data?",
    "How do people learn speech recognition with scarce annotations?",
])
def test_few_labels_is_a_setting_met_as_abstracts_write_it(question: str) -> None:
    # "with few labels" was read as a technique "using labels": the molecule question was refused as no abstract
    # stating "labels", and semi-supervised or few-shot papers were not counted as meeting it
    r = read(question)
    few = next(c for c in r.constraints if c.text == "few labels")
    assert few.kind == "setting" and not any(c.kind == "technique" and "label" in c.text for c in r.constraints)
    from rag.grounding.admission import Region, met

    def says(text: str) -> bool:
        return met(few.units[0], [Region.of(text)])

    assert says("We propose a semi-supervised method for this task.") and says("Our method works under label scarcity.")
    assert says("It learns from limited labeled data.") and says("Results in the low-data regime improve.")
    assert not says("We train a supervised model on large labeled datasets.")


def test_a_list_questions_name_that_several_titles_hold_is_a_shared_term_not_a_papers_name() -> None:
    # "Medical imaging work that operates on full 3D CT or MRI volumes …" named three MRI papers, and was refused as
    # "The abstract of the paper it names does not say this"
    from rag.grounding.evidence import question_focus

    titles = ["Self-Supervised Diffusion MRI Denoising via Iterative and Stable Refinement",
              "Moner: Motion Correction in Undersampled Radial MRI with Unsupervised Neural Representation",
              "Time-to-Event Pretraining for 3D Medical Imaging"]
    sources = [_source(k, t, ["We study medical images."]) for k, t in enumerate(titles, start=1)]
    stats = TermStats.from_texts(titles + [f"Paper {k} on learning." for k in range(40)])
    asked = "Medical imaging work that operates on full 3D CT or MRI volumes rather than 2D slices?"
    focus = question_focus(asked, sources, stats)
    assert focus.kind == "list" and focus.named == [] and focus.firmly == []
    # a name one title holds still names that paper
    focus = question_focus("Papers that extend Moner to cardiac MRI volumes", sources, stats)
    assert focus.kind == "list" and focus.named == [2]


@pytest.mark.parametrize(("question", "asks"), [
    # a comparison given as an example, or a compound, is no comparison asked for: "(e.g. choosing inductive vs
    # deductive reasoning)" and "team-versus-adversary games" were read as comparisons
    ("Has anyone improved LLM math reasoning by picking the reasoning strategy per problem (e.g. choosing inductive "
     "vs deductive reasoning)?", "papers"),
    ("Which multi-agent papers deal with zero-sum or team-versus-adversary games?", "papers"),
    # ... nor a guarantee given as an example a theory result ("(…, filtering reasoning steps with guarantees)")
    ("Which papers verify or grade mathematical reasoning (scoring partial solutions, filtering reasoning steps with "
     "guarantees)?", "papers"),
    ("Which papers compare RLHF versus DPO?", "comparison"),
    ("Transformers vs state space models for long context", "comparison"),
    ("Which papers prove convergence guarantees for bilevel optimization?", "theory"),
])
def test_what_is_asked_for_is_read_outside_its_examples(question: str, asks: str) -> None:
    assert read(question).asks == asks


def test_languages_other_than_english_is_a_setting_not_a_contrast() -> None:
    # "math word problems in languages other than English" was read as "in languages": English-only math papers led
    r = read("How do people get LLMs to do math word problems in languages other than English?")
    assert r.aside == ""
    setting = next(c for c in r.constraints if "english" in c.text)
    assert ("multilingu",) in setting.units[0].alternatives
    assert read("Which papers study LLM agents other than web agents?").aside == "other than web agents"


@pytest.mark.parametrize("question", [
    # "methods or simulators built for many-agent settings" was read as the topic "simulators" (methods were
    # excluded), "datasets or methods for X" as "must introduce a benchmark", "methods or benchmarks" as a direction
    "Are there ICLR 2025 methods or simulators built for many-agent settings?",
    "Are there datasets or methods for sign language translation?",
    "Which methods or benchmarks target long-context reasoning?",
])
def test_a_general_kind_of_work_offered_beside_another_asks_for_neither(question: str) -> None:
    r = read(restate(question))
    assert r.asks == "papers", r.note()
    said = {u.text for f in r.facets for u in f.units}
    assert not said & {"methods", "simulators", "datasets", "benchmarks"} and not any(c.kind == "direction" for c in r.constraints), r.note()
    # one kind alone is still asked for
    assert read("Which benchmarks evaluate LLM agents?").asks == "benchmark"


def test_learning_by_watching_is_learning_from_what_is_watched() -> None:
    # "by watching a video" needed "watch" as much as "video": the video-tutorial web-agent benchmark was "not
    # stated: using watching video" and the question refused
    technique = read("Which agents learn what to do by watching a video?").constraints[0]
    weight = {u.text: u.weight for u in technique.units}
    assert weight["video"] == 1.0 and weight["watching"] < 0.5


@pytest.mark.parametrize("where", ["outside English", "outside of English", "beyond English"])
def test_outside_english_is_the_other_languages(where: str) -> None:
    # "outside English" set the rest of the request aside, and generic VLM papers filled the list
    r = read(f"Which papers study vision-language models {where}, e.g. training a multilingual multimodal LLM?")
    assert "in languages other than english" in r.note() and not r.aside, r
    # "outside" anything else is still a contrast
    assert read("Which papers use transformers outside of language modeling?").aside == "outside of language modeling"


def test_turning_a_model_into_another_is_no_word_to_find() -> None:
    # "not stated: turn" on the papers that make an MLLM the retriever
    topic = read("Which papers turn a multimodal LLM into the retriever itself?").topic
    assert {u.text: u.weight for u in topic.units}["turn"] < 0.5


@pytest.mark.parametrize("question, verb", [
    ("Has anyone handled privacy and fairness together in a generative model?", "handled"),
    ("Has anyone solved long-horizon planning with world models?", "solved"),
    ("Has anyone mitigated reward hacking in RLHF?", "mitigated"),
    ("Has anyone managed to scale graph transformers to millions of nodes?", "managed"),
])
def test_what_a_paper_did_in_the_past_tense_is_no_word_it_must_state(question: str, verb: str) -> None:
    # "Has anyone handled privacy and fairness together …?" listed PFGuard ("a generative framework with privacy and
    # fairness safeguards") as a closest paper, "not stated: handled"
    r = read(restate(question))
    assert not any(u.needed for f in r.facets for u in f.units if u.text == verb), r.note()
    assert {u.text: u.weight for f in r.facets for u in f.units}[verb] < 0.5


def test_dealt_with_is_the_topic_not_a_technique() -> None:
    r = read(restate("Has anyone dealt with label noise in segmentation?"))
    assert not any(c.kind == "technique" for c in r.constraints) and "noise" in r.topic.text, r.note()


def test_adverbial_idioms_and_i_am_are_no_words_to_find() -> None:
    # "Forgetting on purpose: I'm looking for papers that deliberately reset …" needed "on purpose" and "am"
    r = read(restate("Forgetting on purpose: I'm looking for papers that deliberately reset parts of a trained network."))
    said = {u.text for f in r.facets for u in f.units}
    assert not said & {"purpose", "on purpose", "am", "looking"} and not r.constraints, r.note()
    assert not read("Which papers reset parts of a trained network in practice?").constraints


@pytest.mark.parametrize("question, kept", [
    ("Which papers use an LLM such as GPT-4 to write captions for audio?", "captions"),
    ("Which papers defend models such as LLMs against jailbreaks?", "jailbreaks"),
])
def test_one_named_example_does_not_end_the_question(question: str, kept: str) -> None:
    # "such as GPT-4" cut the question there: "use an LLM" was all it asked
    assert kept in read(question).note(), read(question).note()


def test_data_or_methods_for_a_thing_and_benchmarks_that_test_it_ask_for_the_thing() -> None:
    # "Are there papers with training data or methods for multi-turn, conversational function calling, or benchmarks
    # that test exactly this?" was read as "training data test exactly — for multi-turn …": an audio turn-taking
    # benchmark and a fairness benchmark were listed, none on function calling
    question = ("Are there papers with training data or methods for multi-turn, conversational function calling, or "
                "benchmarks that test exactly this?")
    for r in (read(question), read(question, question.split("papers ", 1)[1].removesuffix(" this?"))):
        assert r.topic.label == "multi-turn conversational function calling" and not r.constraints, r.note()
    assert read("Which papers give training data or methods for reward modelling?").topic.label == "reward modelling"

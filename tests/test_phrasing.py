"""A conversational request restated as the plain question the reader reads (rag.text.phrasing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.text.phrasing import restate
from rag.text.reading import read

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # of several sentences, the request; "Not …, but …" only refines it, "What is there?" asks nothing
        ("I'm looking for work on defending LLMs against jailbreak prompts. Not new jailbreak attacks, but "
         "defenses, guardrails or training methods. What is there?",
         "Which papers study defending LLMs against jailbreak prompts, not new jailbreak attacks?"),
        ("Are there benchmarks that measure how well LLM agents handle data science? I'm after evaluations of "
         "existing agents, not papers introducing a new agent system.",
         "Which benchmarks measure how well LLM agents handle data science?"),
        ("Has anyone explained why DPO objectives misbehave during training?", "Why DPO objectives misbehave during training?"),
        ("Has anyone proposed watermarks for code?", "Which papers proposed watermarks for code?"),
        ("Show me papers that combine large language models with Monte Carlo Tree Search.",
         "Which papers combine large language models with Monte Carlo Tree Search?"),
        ("Can you find me papers on graph transformers?", "Which papers study graph transformers?"),
        ("I want the ones that put LLM judges under scrutiny.", "Which papers evaluate LLM judges?"),
        # a contrast or a setting put first moves after the request
        ("Rather than papers that simply use an LLM as a judge, I want the ones that audit LLM judges.",
         "Which papers audit LLM judges, rather than papers that simply use an LLM as a judge?"),
        ("Under differential privacy constraints, what methods are there for training ML models?",
         "What methods are there for training ML models under differential privacy constraints?"),
        ("In GSM-Symbolic, how are the new math questions generated, and what happens to accuracy?",
         "How are the new math questions generated in GSM-Symbolic, and what happens to accuracy?"),
        # a recalled paper is asked for as one paper; the question after it asks nothing of its own
        ("I remember an ICLR 2025 paper that compressed GPT-4 to 1-bit weights. How did they do it?",
         "Which paper compressed GPT-4 to 1-bit weights?"),
        ("What time-series work builds on diffusion models?", "Which time-series papers builds on diffusion models?"),
        ("What work targets low-resource languages?", "Which papers targets low-resource languages?"),
        ("Papers on out-of-distribution detection, rather than generalization.",
         "Which papers study out-of-distribution detection, rather than generalization?"),
        ("Hi! I'm interested in papers about protein design. Thanks.", "Which papers study protein design?"),
        ("I'm trying to find work that breaks existing watermarking schemes.",
         "Which papers breaks existing watermarking schemes?"),
        ("Looking for continual learning papers that build on a pre-trained backbone.",
         "Which continual learning papers build on a pre-trained backbone?"),
        ("Is there any work on defending aligned LLMs against harmful fine-tuning?",
         "Which papers study defending aligned LLMs against harmful fine-tuning?"),
        ("Papers where normalizing flows are the core model. Any application area is fine.",
         "Which papers where normalizing flows are the core model?"),
        ("I recall an ICLR 2025 paper showing that equivariant GNNs tell chiral molecules apart. How did they do it?",
         "Which paper shows that equivariant GNNs tell chiral molecules apart?"),
        # a recalled paper of some kind, at the venue
        ("I remember a text-to-music paper at ICLR 2025 that generates full-length songs with sung vocals and "
         "lyrics. Which one was that?",
         "Which text-to-music paper generates full-length songs with sung vocals and lyrics?"),
        ("I remember the diffusion paper about watermarking images.", "Which diffusion paper studies watermarking images?"),
        # the venue before the kind, and a claim it concluded: which pretraining paper shows that …
        ("I recall an ICLR 2025 pretraining study concluding that code hurts reasoning. Which paper was that?",
         "Which pretraining paper shows that code hurts reasoning?"),
        # what a recalled thing found or a recalled result is the claim; "which paper was that" asks for it,
        # and a question after it asks nothing of its own
        ("I read that an ICLR 2025 benchmark of forecasting questions found LLMs beat superforecasters. Which paper "
         "was that, and how big was the margin?",
         "Which benchmark of forecasting questions paper shows that LLMs beat superforecasters?"),
        ("I remember an ICLR 2025 pretraining ablation showing that code hurts reasoning. Which paper was that?",
         "Which pretraining ablation paper shows that code hurts reasoning?"),
        ("I recall an ICLR 2025 result that SAM only helps from the first epoch. Which paper was that?",
         "Which paper shows that SAM only helps from the first epoch?"),
        ("I remember an ICLR 2025 paper concluding that sigmoid attention can't match softmax. Which paper was that?",
         "Which paper shows that sigmoid attention can't match softmax?"),
        # a case that motivates the question ("When …, which papers …?") is no setting of it, and a statement
        # opening "When …, …" asks nothing (the question after it does)
        ("When the passage contradicts what the model learned, which papers measure faithfulness to the context?",
         "Which papers measure faithfulness to the context?"),
        ("We use an LLM with a long window. When the answer sits near the start it does fine, but deep in a document "
         "it fails. What explains this gap?", "What explains this gap?"),
        # "Which papers handle that, rather than …?" points back, and its contrast stays
        ("Continual learning in the online setting: each sample is seen once. Which papers handle that, rather than "
         "multi-epoch training?",
         "Which papers handle continual learning in the online setting: each sample is seen once, rather than "
         "multi-epoch training?"),
    ],
)
def test_a_request_is_restated_as_the_question_it_asks(asked: str, plain: str) -> None:
    assert restate(asked) == plain


@pytest.mark.parametrize(
    "question",
    [
        "Which papers did Michael M. Bronstein publish at ICLR 2025?",  # an initial ends no sentence
        'Find papers related to "To Code or Not To Code? Exploring Impact of Code in Pre-training"',  # a quoted title
        "Which work keeps proving new theorems across many Lean repositories without forgetting what it learned?",
        "Is there a paper on preventing collapse in intermediate transformer representations?",
        "Is there a method that turns a table question into entity-relation structures?",
        "List Carlini's papers",
        "For out-of-distribution generalization on graphs, can it help to learn the spurious features first?",
        # a description of a paper in several sentences, no request: read whole
        "proposes a new regularizer for actor-critic methods. The regularizer works by constraining the state.",
        "Instead of decoding directly into logits, which is memory intensive, there is a trick to save memory.",
        "model merging",
    ],
)
def test_a_plain_question_or_description_is_unchanged(question: str) -> None:
    assert restate(question) == question


def test_the_dev_questions_are_read_as_written() -> None:
    """Every question of the development sets is plain already, or opens with "Show me" or "Papers
    on/about": the restating changes nothing else the reader was built on."""
    changed = []
    # (the sets written as people ask, for this module, are the others: relevance_new_[tvwx]20_*)
    for path in sorted(p for p in (ROOT / "evals" / "data").glob("*.jsonl") if not p.name.startswith("relevance_new_")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            q = row.get("question") or row.get("query") if isinstance(row, dict) else None
            if isinstance(q, str) and restate(q) != q:
                changed.append(q)
    assert changed and all(q.lower().startswith(("show me", "papers on", "papers about")) for q in changed), changed


@pytest.mark.parametrize(
    ("asked", "described"),
    [
        ("I'm looking for work on defending LLMs against jailbreak prompts. Not new jailbreak attacks. What is there?",
         "llms — must defend or protect, against jailbreak prompts"),
        ("Has anyone explained why DPO and other margin-based preference optimization objectives misbehave?",
         "dpo or margin-based preference optimization objectives misbehave"),
        ("Under differential privacy constraints, what methods are there for training or adapting ML models?",
         "differential privacy constraints"),
        ("What time-series work builds on diffusion or score-based generative models, whether for forecasting or "
         "anomaly detection?", "time-series — using diffusion or score-based generative models"),
    ],
)
def test_a_restated_request_reads_as_its_plain_question(asked: str, described: str) -> None:
    assert read(restate(asked)).describe() == described


@pytest.mark.parametrize(
    ("asked", "described"),
    [
        # a constraint said again after "i.e." is met by its first wording
        ("Is there any work on defending aligned LLMs against harmful fine-tuning, i.e. keeping the safety "
         "behaviour intact when someone fine-tunes the weights?", "aligned llms — must defend or protect, against harmful fine-tuning"),
        ("Can you point me to papers built around Shapley values, whether for attribution or data valuation?",
         "shapley values"),
        ("Which papers solve inverse problems like deblurring, inpainting or super-resolution with diffusion models?",
         "solve inverse problems — using diffusion models"),
        ("Which papers handle irregularly sampled time series, where observations arrive at uneven timestamps?",
         "handle irregularly sampled time series observations arrive uneven timestamps"),
    ],
)
def test_more_requests_read_as_their_plain_questions(asked: str, described: str) -> None:
    assert read(restate(asked)).describe() == described


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # what a sentence beside the request sets aside follows it as "…, not X"
        ("I need papers that propose methods that make web agents better. Not papers that only introduce a "
         "benchmark or environment, though.",
         "Which papers propose methods that make web agents better, not papers that only introduce a benchmark or "
         "environment?"),
        # "Which papers do this?" asks what the sentence before it says the asker does
        ("I'm working on generalist robot manipulation policies and want to build on large pretrained models. Which "
         "papers do this? Simulators and benchmarks aren't what I need.",
         "Which papers on generalist robot manipulation policies build on large pretrained models, not simulators "
         "and benchmarks?"),
        ("I work on recommender systems and want to see what ICLR 2025 has on recommendation models. I'm not "
         "interested in general LLM personalization.",
         "Which papers study recommendation models, not general LLM personalization?"),
        # what the asker has read or skips
        ("Got anything on ML for environmental science? I've already been through the weather-forecasting papers, "
         "so skip those.", "Which papers study ML for environmental science, not the weather-forecasting papers?"),
        # what is out of scope, not what the asker is asking about, or already gone through
        ("Which papers build rotation-equivariant networks? Molecules and crystals are out of scope for me.",
         "Which papers build rotation-equivariant networks, not molecules and crystals?"),
        ("What has been proposed to make LLM pretraining cheaper? Speeding up inference is not what I'm asking about.",
         "What has been proposed to make LLM pretraining cheaper, not speeding up inference?"),
        ("Which papers propose clustering algorithms? I've already gone through the multi-view clustering papers, "
         "so leave those out.", "Which papers propose clustering algorithms, not the multi-view clustering papers?"),
        ("Which papers study image restoration? Skip medical imaging.",
         "Which papers study image restoration, not medical imaging?"),
        ("Which papers study image restoration? No diffusion priors, please.",
         "Which papers study image restoration, not diffusion priors?"),
    ],
)
def test_what_is_set_aside_and_what_this_refers_to_are_kept(asked: str, plain: str) -> None:
    assert restate(asked) == plain


def test_a_request_that_points_back_asks_of_the_sentence_before_it() -> None:
    # "Which papers handle that setting?" was read as "handle": the setting is the sentence before it
    asked = ("3D point-cloud segmentation when you have few or no 3D labels (few-shot or unsupervised). "
             "Which papers handle that setting?")
    assert restate(asked) == ("Which papers handle 3D point-cloud segmentation when you have few or no 3D labels "
                              "(few-shot or unsupervised)?")
    assert restate("Which papers handle that setting?") == "Which papers handle that setting?"  # nothing before it
    # "the generation side" is one of the two sides the sentence before names (it was read as "generation side")
    asked = ("Generating dynamic 4D scenes from a single image as opposed to reconstructing them from multi-view video. "
             "Which papers work on the generation side?")
    assert restate(asked) == ("Which papers work on generating dynamic 4D scenes from a single image as opposed to "
                              "reconstructing them from multi-view video?")
    assert read(restate(asked)).describe() == "dynamic 4d scenes — must generate, from single image"
    # ... a side the sentence before does not name is no pointer back
    side = "Diffusion models for audio. Which papers work on the detection side?"
    assert restate(side) == "Which papers work on the detection side?"


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        ("I'm working on computational creativity and wondering whether anyone at ICLR looked at LLMs writing "
         "fiction or humor?", "Which papers looked at LLMs writing fiction or humor?"),
        ("I'm curious who is using sequential Monte Carlo as a central inference step?",
         "Which papers are using sequential Monte Carlo as a central inference step?"),
        ("Did anyone at ICLR 2025 work on zero-shot coordination?", "Which papers work on zero-shot coordination?"),
        ("I wonder if anyone studied grokking in transformers?", "Which papers studied grokking in transformers?"),
        # "for it" is what the asker works on (read as "flow matching" alone, any flow-matching paper listed)
        ("I'm working on protein structure and wonder whether anyone at ICLR 2025 used flow matching for it?",
         "Which papers used flow matching for protein structure?"),
    ],
)
def test_wondering_whether_anyone_at_the_venue_did_something_asks_which_papers_did(asked: str, plain: str) -> None:
    # the asker's own work, the wondering and the venue were read as the topic ("m working … iclr looked")
    assert restate(asked) == plain


def test_a_request_about_the_paper_a_sentence_before_describes_keeps_that_sentence() -> None:
    # "… AdamW won both rulesets. Why do the authors think simple Adam beat everything else?" was read as
    # its last sentence alone: AlgoPerf, and the premise to check, were gone
    asked = ("In the analysis of the first AlgoPerf competition, plain AdamW won both rulesets. "
             "Why do the authors think simple Adam beat everything else?")
    assert restate(asked) == asked
    assert restate("I work on optimizers. Why does Adam beat SGD on transformers?") == \
        "Why does Adam beat SGD on transformers?"
    # ... and a question of "them" after a sentence on one paper (it was "What patch size gives them that 10x
    # saving?" alone: the paper and its claim were gone)
    asked = ("The ICLR 2025 patch-level training paper says LLM pretraining cost can be cut tenfold. "
             "What patch size gives them that 10x saving?")
    assert restate(asked) == asked
    assert restate("I work on LLM agents. Which papers make them safer?") != \
        "I work on LLM agents. Which papers make them safer?"


def test_anything_along_those_lines_asks_of_what_the_sentences_before_it_name() -> None:
    # "Did ICLR 2025 have anything along those lines?" was read as "along lines" (a paper on lines of thought)
    asked = ("I'm working with bird sounds: call detection, species classification and soundscape separation. "
             "Did ICLR 2025 have anything along those lines? Speech is not what I'm after.")
    assert restate(asked) == ("Which papers study bird sounds: call detection, species classification and soundscape "
                              "separation, not speech?")
    assert restate("Is there anything like that?") == "Is there anything like that?"  # nothing before it


def test_a_sentence_asking_for_papers_is_the_request_not_the_question_that_opens_the_topic() -> None:
    # "Do LLMs' accounts of themselves hold up?" was the request: "llms accounts of hold"
    asked = ("Do LLMs' accounts of themselves hold up? I'm looking for papers that measure whether a model's "
             "self-explanations match its behaviour.")
    assert restate(asked) == "Which papers measure whether a model's self-explanations match its behaviour?"
    # a sentence that only refines the question before it ("I want mitigation methods") does not replace it
    asked = "Any good work on fixing shortcut learning in classifiers? I want mitigation methods, not analyses."
    assert restate(asked).startswith("Any good work on fixing shortcut learning")


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        ("Got anything on LLM creativity or humor?", "Which papers study LLM creativity or humor?"),
        ("Was there anything at ICLR 2025 on markets and pricing?", "Which papers study markets and pricing?"),
        ("Is there anything about tactile sensing for robot hands?", "Which papers study tactile sensing for robot hands?"),
    ],
)
def test_got_anything_on_x_asks_which_papers_study_x(asked: str, plain: str) -> None:
    # "anything at iclr 2025 on markets …" was the topic, and "anything" and the venue its words
    assert restate(asked) == plain


def test_work_on_this_with_examples_asks_what_the_asker_wants_to_do() -> None:
    # "Is there ICLR 2025 work on this, e.g. …?" was read as the asker's job ("control engineer …")
    asked = ("I'm a control engineer with measured trajectories from a robot arm and would like to learn a model "
             "of its dynamics from that data. Is there ICLR 2025 work on this, e.g. Koopman-based models? "
             "Neural operators for PDEs are not what I need.")
    assert restate(asked) == ("Which papers study learn a model of its dynamics from that data, e.g. Koopman-based "
                              "models, not neural operators for PDEs?")


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # a request for papers as a heading, and a sentence that sets something aside
        ("Papers built on extragradient or proximal-point methods. LLM alignment framed as a game doesn't count.",
         "Papers built on extragradient or proximal-point methods, not LLM alignment framed as a game?"),
        ("Which papers apply ML to cosmology? Weather models aren't what I mean.",
         "Which papers apply ML to cosmology, not weather models?"),
        # who the asker is, then the wondering
        ("I'm an experimental physicist and wonder whether anything at ICLR 2025 applied ML to cosmology?",
         "Which papers applied ML to cosmology?"),
    ],
)
def test_more_ways_to_set_aside_and_to_wonder(asked: str, plain: str) -> None:
    assert restate(asked) == plain
    # a description of one paper in several sentences stays as it is
    described = "A paper built on extragradient methods. It solves games fast."
    assert restate(described) == described


def test_a_contrast_as_a_heading_follows_the_question() -> None:
    # "Defenses rather than attacks: which papers …" was read as a contrast of everything after it
    assert restate("Defenses rather than attacks: which papers make RL agents hold up against adversaries?") == \
        "Which papers make RL agents hold up against adversaries, defenses rather than attacks?"


def test_a_contrast_put_first_ends_before_the_request() -> None:
    # its own commas (in parentheses, between adjectives) ended it early, and the whole question was refused
    assert restate("Rather than always paying for the slow, deliberate path (explicit search, full reasoning traces), "
                   "which papers let a model switch to a cheap fast mode on easy inputs?") == \
        ("Which papers let a model switch to a cheap fast mode on easy inputs, rather than always paying for the slow, "
         "deliberate path (explicit search, full reasoning traces)?")
    assert read("Which papers let a model switch to a cheap fast mode on easy inputs?").topic.label.split()[0] == "model"


@pytest.mark.parametrize("request_", ["Which ICLR 2025 papers fit this situation?", "Which papers are relevant to our case?",
                                      "What work matches my needs?", "Which papers apply to this setting?",
                                      # (read alone, "relevant" was the topic: eight retrieval papers for a grocer)
                                      "Which ICLR 2025 papers are relevant?", "What papers would be useful here?"])
def test_a_story_then_a_request_that_only_points_at_it(request_: str) -> None:
    # "fit this situation" was read as the topic: two papers on "situated faithfulness" and a Hanabi agent
    story = ("I work with a neurology group on scalp EEG, doing sleep staging. Recordings drift across days and "
             "we have no labels for new patients.")
    assert restate(f"{story} {request_}") == story


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # a description of what is wanted, then a sentence that sets something aside: the aside joined it
        # as words to find ("Skip anything on LiDAR" listed LiDAR detectors)
        ("Object detection papers that work on ordinary 2D images. Skip anything on LiDAR or 3D detection.",
         "Object detection papers that work on ordinary 2D images, not anything on LiDAR or 3D detection."),
        ("Rethinking normalization layers in transformers and LLMs. Graph neural network normalization is not what I'm after.",
         "Rethinking normalization layers in transformers and LLMs, not graph neural network normalization."),
        # a second exclusion after the first: its verb is no kind of paper
        ("Explainability for vision models. Not LLM interpretability, and please skip Shapley-value papers.",
         "Explainability for vision models, not LLM interpretability, and Shapley-value papers."),
    ],
)
def test_a_description_then_a_sentence_that_sets_something_aside(asked: str, plain: str) -> None:
    assert restate(asked) == plain


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # "Anyone using X?" was read with "anyone" as the topic; "Who's doing X?" too
        ("Anyone using successor features in RL?", "Which papers are using successor features in RL?"),
        ("Who's backpropagating through discrete operations?", "Which papers are backpropagating through discrete operations?"),
        # "still" was no part of the form: the question stayed a "who" question, and its list was cut to three
        ("Who's still using expectation-maximization?", "Which papers are using expectation-maximization?"),
        ("Is anyone still building on variational autoencoders?", "Which papers are building on variational autoencoders?"),
        # "I'd like" has no space before "'d": the request was not found, and the reading read the asker's story
        ("We build coding agents. I'd like ICLR 2025 work that makes agents better on repository tasks.",
         "Which papers makes agents better on repository tasks?"),
        ("My group does docking. I'd like to catch up on structure-based drug design.",
         "Which papers study structure-based drug design?"),
        # a typed apostrophe is often the typographic one
        ("I’m looking for papers on jailbreak defenses. Not new attacks.",
         "Which papers study jailbreak defenses, not new attacks?"),
        # "when you don't have X" was read as a setting that asks for X
        ("How do you align an LLM when you don't have clean chosen-vs-rejected pairs?",
         "How do you align an LLM without clean chosen-vs-rejected pairs?"),
        ("What did ICLR 2025 say about training for long context?", "Which papers study training for long context?"),
        ("Anyone using causal machinery as a lens on LLMs?", "Which papers are using causal machinery to study LLMs?"),
        # "under scrutiny" was a setting no abstract states, "as the backbone" a role: both questions were refused
        ("Which papers put LLM-as-a-judge evaluation itself under scrutiny?", "Which papers evaluate LLM-as-a-judge evaluation?"),
        ("Which papers use Mamba as the backbone for vision?", "Which papers use Mamba for vision?"),
        # said of any paper: "from the outside" was a setting "outside", "with barely any loss" a technique
        ("Which papers attack LLM agents from the outside?", "Which papers attack LLM agents?"),
        # a request that points back "in that direction" asks what the asker wants to do; "the opposite of
        # what I need" sets aside (the request was "Which papers do personalization in that direction?")
        ("I want to teach a text-to-image model a new subject from a few images. Which papers do customization in "
         "that direction? Concept erasure papers are the opposite of what I need.",
         "Which papers teach a text-to-image model a new subject from a few images, not concept erasure papers?"),
        # "I mean …" after the request gives what it means (the sentence was dropped)
        ("How do you align an LLM without preference pairs? I mean learning from thumbs-up or scalar ratings.",
         "How do you align an LLM without preference pairs, e.g. learning from thumbs-up or scalar ratings?"),
        ("Why can deep layers of LLMs be pruned with barely any loss?", "Why can deep layers of LLMs be pruned?"),
        # a sentence of examples after the request gives examples of it (it was dropped)
        ("Who's backpropagating through discrete operations? Think Gumbel-softmax or straight-through estimators.",
         "Which papers are backpropagating through discrete operations, e.g. Gumbel-softmax or straight-through estimators?"),
        # "I want to know how people get LLMs to …": how LLMs …, not "to know how people get …"
        ("I want to know how people get LLMs to keep absorbing new knowledge. What's at ICLR 2025 on that?",
         "How do LLMs keep absorbing new knowledge?"),
        # a heading that names what the question reverses
        ("Kind of the reverse of the over-refusal papers: how do people get models to abstain?",
         "How do models abstain, not the over-refusal papers?"),
        # ... or says it goes the other way round (it was read as the topic: "round or papers treat …")
        ("The other way round from neural PDE solvers: which papers treat a network's forward pass as a dynamical system?",
         "Which papers treat a network's forward pass as a dynamical system, not neural PDE solvers?"),
        # "A and B all count, but C does not": C set aside, the inclusive clause no words to find
        ("federated learning on graph data; methods and attacks all count, but plain FedAvg on images does not",
         "federated learning on graph data, not plain FedAvg on images"),
        ("Safety of multimodal models. Text-only chatbot safety is out.",
         "Safety of multimodal models, not text-only chatbot safety."),
    ],
)
def test_more_forms_of_request_example_and_aside(asked: str, plain: str) -> None:
    assert restate(asked) == plain


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # an idiom is no topic: "heavy lifting" was searched for
        ("Papers where second-order information does the heavy lifting: Hessians, Fisher information or Gauss-Newton approximations?",
         "Papers built on second-order information: Hessians, Fisher information or Gauss-Newton approximations?"),
        # what the papers are not about goes last, as what is set aside
        ("Quantization papers that aren't about transformer LLMs: low-bit weights for diffusion models or spiking networks.",
         "Quantization papers: low-bit weights for diffusion models or spiking networks, not transformer LLMs."),
        ("Speech papers that are neither speech recognition nor text-to-speech, and not spoken-dialogue LLMs either: "
         "things like speech enhancement or voice conversion.",
         "Speech papers: things like speech enhancement or voice conversion, not speech recognition or text-to-speech "
         "or spoken-dialogue LLMs."),
        # "this year" is the venue's, and "where does X show up" asks for the papers that use X
        ("Where does self-distillation show up this year, with a model serving as its own teacher?",
         "Which papers use self-distillation, with a model serving as its own teacher?"),
    ],
)
def test_idioms_and_what_papers_are_not_about(asked: str, plain: str) -> None:
    assert restate(asked) == plain


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # the venue after "anything like that", who the asker is, and a semicolon before "I want": the
        # request was "Was there anything like that at ICLR 2025?", read as nothing
        ("I'm a computational neuroscientist. Scoring networks against fMRI doesn't interest me much; I want neural "
         "networks used as mechanistic models of how grid-cell patterns emerge. Was there anything like that at ICLR 2025?",
         "Neural networks used as mechanistic models of how grid-cell patterns emerge, not scoring networks against fMRI?"),
        # "Is there ICLR 2025 work on X?": which papers study X ("Which papers better rating systems …")
        ("Is there ICLR 2025 work on better rating systems built from pairwise comparisons?",
         "Which papers study better rating systems built from pairwise comparisons?"),
    ],
)
def test_the_venue_and_the_asker_are_no_part_of_the_request(asked: str, plain: str) -> None:
    assert restate(asked) == plain


def test_i_read_that_a_paper_found_a_claim() -> None:
    # "I read that an ICLR 2025 paper found X" was read as a topic, and a paper on X's neighbour was the answer
    assert restate("I read that an ICLR 2025 paper found distributional critics let deep Q-learning drop target "
                   "networks. Which paper was it?") == \
        "Which paper shows that distributional critics let deep Q-learning drop target networks?"


def test_a_preference_is_no_demand_and_what_the_asker_knows_is_set_aside() -> None:
    asked = ("Data pruning or coreset selection for shrinking a training set. Vision/classification preferred; "
             "I already know the LLM pretraining data-selection work.")
    assert restate(asked) == ("Data pruning or coreset selection for shrinking a training set, not the LLM "
                              "pretraining data-selection work.")


def test_where_something_appears_is_still_asked() -> None:
    # only "show up", "come up", "get used" ask for the papers that use it
    assert restate("Where does the attention sink appear in LLMs?") == "Where does the attention sink appear in LLMs?"


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # "for models that are NOT large language models" was read as unlearning of large language models
        ("Machine unlearning methods for models that are NOT large language models: deleting training points. "
         "Concept erasure is out of scope.",
         "Machine unlearning methods for models: deleting training points, not large language models, not concept erasure."),
        # ... and a heading of any kind that is not X
        ("GNN theory that isn't about WL-style expressive power: generalization bounds, or provable robustness.",
         "GNN theory: generalization bounds, or provable robustness, not WL-style expressive power."),
        ("Parameter-efficient fine-tuning that is NOT a low-rank (LoRA-style) update: e.g. sparse updates.",
         "Parameter-efficient fine-tuning: e.g. sparse updates, not a low-rank (LoRA-style) update."),
        # a technique it goes without stays for the reading ("without diffusion priors")
        ("Photo restoration with methods that are not built on diffusion priors.",
         "Photo restoration with methods that are not built on diffusion priors."),
        # what the asker would do with the papers, and that they came out, are no part of what they are
        ("We retrain per dataset. What new forecasting architectures for multivariate time series came out at "
         "ICLR 2025 that I could try against my PatchTST baseline?",
         "What new forecasting architectures for multivariate time series?"),
        # "where X is a core ingredient": papers built on X
        ("Is classic kernel machinery still alive? I'm looking for papers where an explicit kernel is a core "
         "ingredient: RKHS classes, kernel ridge regression or MMD tests.",
         "Which papers built on an explicit kernel: RKHS classes, kernel ridge regression or MMD tests?"),
    ],
)
def test_what_papers_are_not_what_the_asker_does_with_them_and_core_ingredients(asked: str, plain: str) -> None:
    assert restate(asked) == plain


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # "…, nor RLHF for chatbots" after what is set aside was lost
        ("Reward shaping for control-style RL. Using an LLM to write the reward isn't what I'm after, nor RLHF for chatbots.",
         "Reward shaping for control-style RL, not using an LLM to write the reward or RLHF for chatbots."),
        # "Who runs X … as a central step?": who uses X (the step was a setting no abstract words)
        ("Who runs an SVD directly on a pretrained model's weight matrices as a central step?",
         "Who uses an SVD directly on a pretrained model's weight matrices?"),
    ],
)
def test_what_else_is_set_aside_and_who_runs_a_technique(asked: str, plain: str) -> None:
    assert restate(asked) == plain


@pytest.mark.parametrize(
    ("asked", "plain"),
    [
        # "side" was a word of the topic ("side strip or subvert llm safety alignment")
        ("Attack side only: which papers show how to strip an LLM's safety alignment by fine-tuning?",
         "Attack only: which papers show how to strip an LLM's safety alignment by fine-tuning?"),
        ("Attack side, physical autonomy: which papers show how to compromise self-driving cars?",
         "Attack only, physical autonomy: which papers show how to compromise self-driving cars?"),
        # ... after a heading too ("side" was a word of a setting: "for llms side")
        ("Knowledge editing for LLMs, methods side: which papers propose editors that change facts?",
         "Knowledge editing for LLMs, methods only: which papers propose editors that change facts?"),
        # "Before we burn compute, is there work …?": "before burn compute" was read as the topic
        ("We get loss spikes with AdamW. Before we burn compute, is there ICLR 2025 work that proposes better "
         "optimizers for LLM training?",
         "Which papers proposes better optimizers for LLM training?"),
    ],
)
def test_a_side_heading_and_the_askers_timing_are_no_part_of_the_topic(asked: str, plain: str) -> None:
    assert restate(asked) == plain


def test_a_request_that_points_back_this_way_asks_what_the_asker_wants_to_do() -> None:
    # "Which papers add concepts this way?" was read as "add concepts", and concept-erasure papers led the list
    asked = ("I want to teach a text-to-image model new subjects or styles (personalization, multi-concept "
             "customization). Which papers add concepts this way? Concept erasure and anti-customization "
             "protection are the opposite of what I need.")
    assert restate(asked) == ("Which papers teach a text-to-image model new subjects or styles (personalization, "
                              "multi-concept customization), not concept erasure and anti-customization protection?")


def test_a_quoted_title_with_apostrophes_and_an_exclamation_is_one_sentence() -> None:
    # "In 'Don't flatten, tokenize! …', why …": the "!" is the title's, and "Don't" opens no quote
    q = ("In 'Don't flatten, tokenize! Unlocking the key to SoftMoE's efficacy in deep RL', why do soft mixtures "
         "of experts let deep RL agents keep improving as the networks get bigger?")
    assert restate(q) == q
    assert read(q).asks == "reason"  # the title holds a comma: the question starts after its closing quote


def test_a_clause_of_the_askers_own_before_a_request_does_not_hide_it() -> None:
    # "Before I trust that, I'd like ICLR 2025 work that …" was no request: the whole text was read, from
    # "m a computational social scientist", and refused
    asked = ("I'm a computational social scientist. Colleagues want to replace participants with LLM personas. "
             "Before I trust that, I'd like ICLR 2025 work that tests how faithfully LLMs reproduce real people's "
             "choices. What is there?")
    assert restate(asked) == "Which papers tests how faithfully LLMs reproduce real people's choices?"
    assert restate("Since we deploy on phones, I'd like papers that quantize LLMs to 4 bits.") == (
        "Which papers quantize LLMs to 4 bits?")


@pytest.mark.parametrize("request_", [
    "What should I read?",
    "Which ICLR 2025 papers address these practical problems?",
    "Anything I should look at for this situation?",
])
def test_a_request_that_only_points_back_asks_what_the_sentences_before_it_say(request_: str) -> None:
    # "What should I read?" was read as the topic "read", and "… address these practical problems?" as
    # "practical problems": each listed papers on neither
    situation = ("I'm an epidemiologist building a causal graph over about 20 variables. "
                 "I don't trust any single estimated DAG and would like a distribution over plausible graphs.")
    asked = f"{situation} {request_}"
    # the asker's story is what is searched, as a description (read as a question, the whole story was what "no
    # abstract states", and nothing was shown)
    assert restate(asked) == situation
    # a heading that names the topic stays the question it asks
    assert restate("Bayesian causal discovery over DAGs. What should I read?") == "Bayesian causal discovery over DAGs. What should I read?"
    # a request that names its own topic is still the request
    assert restate(f"{situation} Which papers learn distributions over DAGs?") == "Which papers learn distributions over DAGs?"


@pytest.mark.parametrize(("asked", "plain"), [
    # "Which papers deal with that kind of shift, …?" was read as "shift": every distribution-shift paper
    ("Label shift only: the class proportions at deployment differ from those seen in training while the "
     "class-conditional inputs stay the same. Which papers deal with that kind of shift, as opposed to "
     "covariate or domain shift?", "Which papers deal with label shift, as opposed to covariate or domain shift?"),
    # nothing before names a kind of it: the request stays as asked
    ("We detect backdoors in vision models. Which papers study that kind of attack on LLMs?",
     "Which papers study that kind of attack on LLMs?"),
    # "in that interactive setting" is the setting the heading names (read as "benchmark llms — in interactive",
    # it listed a smartphone-agent benchmark and a regret study first)
    ("Code generation as a multi-turn loop: the LLM gets compiler errors after each attempt and has to revise. "
     "Which papers study LLMs in that interactive setting rather than one-shot generation?",
     "Which papers study LLMs in code generation as a multi-turn loop rather than one-shot generation?"),
    # ... a heading, not the asker's own sentence before a colon
    ("We serve an internal LLM where most requests share context: the same system prompt. Which papers evaluate "
     "long-context methods in that shared-context setting?",
     "Which papers evaluate long-context methods in that shared-context setting?"),
])
def test_that_kind_of_thing_is_the_kind_the_sentences_before_name(asked: str, plain: str) -> None:
    assert restate(asked) == plain


def test_a_request_after_what_it_sets_aside_asks_what_the_sentences_before_it_say() -> None:
    # "Plasticity-loss fixes aside, what is there?" was read as "plasticity-loss fixes aside" and listed four
    # plasticity papers: the one kind of paper the asker set aside
    asked = ("In continual learning I care about reusing what was learned on earlier tasks to pick up a new task "
             "faster. Plasticity-loss fixes aside, what is there?")
    assert restate(asked) == ("In continual learning I care about reusing what was learned on earlier tasks to pick "
                              "up a new task faster, not plasticity-loss fixes.")
    assert restate("Which papers reuse skills across tasks? Apart from robotics, anything?") == (
        "Which papers reuse skills across tasks, not robotics?")


def test_doing_this_kind_of_thing_asks_what_the_asker_wants_to_do() -> None:
    # "Which papers do this kind of thing purely at sampling time?" was read as "thing — at sampling time" and listed
    # "Segment Any 3D Thing" and "Say One Thing and Do Another"
    asked = ("I work in video post-production. We have a pretrained image-to-video diffusion model and no budget to "
             "fine-tune anything. I'd like to fill in the frames between two keyframes and put several of our custom "
             "characters into one clip. Which papers do this kind of thing purely at sampling time?")
    assert restate(asked) == ("Which papers fill in the frames between two keyframes and put several of our custom "
                              "characters into one clip purely at sampling time?")
    # nothing the asker wants to do: the request stays
    assert restate("We edit videos. Which papers do this kind of thing at sampling time?") == (
        "Which papers do this kind of thing at sampling time?")


def test_work_that_helps_with_either_problem_asks_what_the_sentences_before_it_say() -> None:
    # "Is there ICLR 2025 work that helps with either problem?" was read as "helps problem" and listed six papers
    # on neither (math mistakes, planning, continual RL)
    asked = ("I maintain causal graphs for a manufacturing line. New sensors get installed every few weeks and rerunning "
             "structure learning from scratch is getting expensive. Is there ICLR 2025 work that helps with either problem?")
    story = asked.rsplit(" Is there", 1)[0]
    assert restate(asked) == story
    assert restate(asked.replace("either problem", "both problems")) == story


def test_a_request_for_what_holds_up_under_these_conditions_searches_the_askers_story() -> None:
    # "We'd like models that hold up under these conditions …" was read as "models these conditions — must defend or
    # make it robust", and two least-squares papers were shown as the closest
    story = ("We're building perception for a sidewalk delivery robot with LiDAR and cameras. In rain or fog, or when one "
             "sensor degrades, our 3D detector quietly falls apart.")
    wish = "We'd like models that hold up under these conditions, or at least tell us when not to trust their output."
    assert restate(f"{story} {wish} What should we read from ICLR 2025?") == f"{story} {wish}"
    # a request with a topic of its own after the story stays the request
    assert restate(f"{story} Which papers make LiDAR 3D detectors robust to fog?") == (
        "Which papers make LiDAR 3D detectors robust to fog?")


def test_a_leading_setting_goes_after_an_aside_not_into_it() -> None:
    # "In audio and speech work, who uses an LLM … (captions, soundscape descriptions, …)": the setting went in
    # after "captions", inside the aside, and the reading kept "llm" alone
    asked = restate("In audio and speech work, who uses an LLM to write the text side of the data (captions, "
                    "soundscape descriptions) instead of human annotators?")
    assert asked == ("Who uses an LLM to write the text side of the data (captions, soundscape descriptions) in audio "
                     "and speech work instead of human annotators?")

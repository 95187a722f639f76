"""Answers that answer, on the 2,115 papers: listed papers meet the question's constraints, quotes are
the papers' own statements, lists are counted, false premises are named, refusals are in plain words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rag.text.citations import split_sentences
from rag.text.roles import OWN, sentence_roles

from .test_answer import assert_citations_valid, assert_every_cited_sentence_supported

pytestmark = pytest.mark.slow
DATA = Path(__file__).resolve().parent.parent / "evals" / "data"


def _titles(answer) -> list[str]:
    return [it.title for it in answer.items]


def test_a_defence_question_lists_no_attack_paper(full_rag) -> None:
    a = full_rag.ask("Which papers defend against jailbreak attacks on LLMs?")
    assert not a.refused and a.items, a.text
    assert a.reading is not None and "must defend or protect" in a.reading.describe()
    attacks = ("One Model Transfer to All", "Injecting Universal Jailbreak Backdoors", "h4rm3l", "AdvWave")
    assert not [t for t in _titles(a) if t.startswith(attacks)], a.text
    assert any("RobustKV" in t for t in _titles(a)), a.text  # a defence it must find
    assert "must defend or protect" in " ".join(a.intent.notes)  # the reading is shown
    for it in a.related:  # each related paper says what it misses
        assert it.missing and f"[{it.number}] (not stated: {'; '.join(it.missing)}):" in a.text, a.text


def test_an_attack_question_lists_no_defence_paper(full_rag) -> None:
    a = full_rag.ask("Which papers propose new jailbreak attacks on language models, as opposed to defenses?")
    assert a.items and not [t for t in _titles(a) if "Defending" in t or "Defense" in t], a.text


def test_a_technique_constraint_is_stated_by_every_listed_paper(full_rag) -> None:
    a = full_rag.ask("Which papers use reinforcement learning to fine-tune LLMs for math reasoning?")
    papers = {s.paper_id: s for s in a.sources}
    for it in a.items:
        text = (papers[it.paper_id].title + " " + papers[it.paper_id].text).lower()
        assert "reinforcement learning" in text or re.search(r"\brl\b", text), it.title


def test_a_paper_the_search_finds_first_for_an_example_the_question_gives_is_listed(full_rag) -> None:
    """"(neuron resets, …)": the paper the search ranks first for that example is listed, though its
    abstract never says "keep networks plastic under non-stationary training"."""
    a = full_rag.ask("Which papers keep networks plastic under non-stationary training (neuron resets, "
                     "spectral regularization, growing the network)?")
    assert any(t.startswith("Self-Normalized Resets for Plasticity") for t in _titles(a)), a.text
    assert_every_cited_sentence_supported(a)


def test_quotes_are_the_papers_own_statements_never_background_alone(full_rag, evalsets) -> None:
    questions = [json.loads(line)["query"] for line in (evalsets / "topics_dev.jsonl").read_text().splitlines()[:12]]
    questions += ["How do papers compress the KV cache for long-context inference?", "model merging"]
    quoted = own = 0
    for q in questions:
        a = full_rag.ask(q)
        assert_citations_valid(a)
        by_id = {s.paper_id: s for s in a.sources}
        for it in a.items:
            src = by_id[it.paper_id]
            sents = [s for s in split_sentences(src.text) if s.strip()]
            roles = dict(zip(sents, sentence_roles(sents, src.title)))
            kinds = [roles.get(s) for s in it.sentences]
            quoted += 1
            own += any(k in OWN for k in kinds)
    assert quoted >= 60 and own == quoted  # every listed paper is quoted by at least one sentence of its own


def test_a_list_answer_says_how_many_papers_meet_it_and_can_show_all(full_rag) -> None:
    a = full_rag.ask("Which papers study model merging?")
    assert re.match(r"\d+ papers? here meets? this", a.text), a.text
    n = int(a.text.split()[0])
    assert n == len(a.matching_ids) >= len(a.items)
    full = full_rag.ask("Which papers study model merging?", show_all=True)
    assert [it.paper_id for it in full.items] == full.matching_ids and len(full.items) >= n
    assert_every_cited_sentence_supported(full)


@pytest.mark.parametrize(
    "question",
    [
        "Which paper trains a one-trillion-parameter model on a single GPU?",
        "Which paper shows that machine unlearning reliably removes the effects of poisoned training data?",
        "Which paper shows a quantum neural network training on ImageNet exponentially faster than GPUs?",
        "Which papers show spiking neural networks beating the accuracy of equivalent non-spiking ANNs on ImageNet?",
        # a length of time is stated exactly or not at all: CogVideoX makes 10-second videos
        "Which ICLR 2025 paper introduced a text-to-video model that generates hour-long videos in real time?",
        # a recalled study of some kind and what it concluded ("To Code or Not To Code?" found the opposite)
        "I recall an ICLR 2025 pretraining study concluding that mixing code into the pretraining data hurts "
        "natural-language reasoning and world knowledge, so general-purpose LLMs should leave code out. Which "
        "paper was that?",
        # a paper looked for by what it did is not read loosely when no abstract states it: CipherPrune prunes
        # tokens under encryption, on no 70B model and not in real time (a quantity of a constraint is exact too)
        "Which ICLR 2025 paper ran fully homomorphically encrypted inference on a 70B-parameter LLM in real time?",
        "Which ICLR 2025 paper used optimal transport to align speech frames with text tokens for zero-shot "
        "speech translation without parallel data?",
        # what a recalled benchmark found, and a second question about it (ForecastBench found the opposite)
        "I read that an ICLR 2025 benchmark of questions about future events found frontier LLMs already beat "
        "expert human superforecasters. Which paper was that, and how big was the margin?",
        # the claim after ", showing that" (the paper that measured it found high scores guarantee nothing)
        "Which ICLR 2025 paper established CKA as the most trustworthy similarity measure, showing that a high CKA "
        "score guarantees two systems encode the same task-relevant information?",
        # a recalled thing "showing that" X ("To Code or Not To Code?" found that code helps)
        "I remember an ICLR 2025 pretraining ablation showing that removing code from the data mixture makes LLMs "
        "better at natural-language reasoning. Which paper was that?",
        # a comparison the closest paper states the other way round ("Experts improve memorization more than
        # reasoning")
        "Why do more experts in MoE models help reasoning more than memorization?",
        # what a paper concluded (MuPT found ABC notation better suited, and was listed as the answer)
        "Which ICLR 2025 paper on LLM-style pretraining for symbolic music concluded that MIDI token sequences work "
        "much better than ABC notation for language models?",
        # what "the … paper says", asked of in the next sentence (it was that sentence alone, answered by three
        # unrelated papers; then, with "ICLR" and "cost" in it, refused as a question about the venue)
        "The ICLR 2025 patch-level training paper says LLM pretraining cost can be cut tenfold with no loss in "
        "quality. What patch size gives them that 10x saving?",
    ],
)
def test_a_false_premise_is_named_before_any_closest_paper(full_rag, question) -> None:
    a = full_rag.ask(question)
    assert a.refused and not a.items, a.text
    assert "No ICLR 2025 abstract here states" in a.text.split("\n")[0], a.text


@pytest.mark.parametrize(
    ("question", "described", "why"),
    [
        # refused because no close abstract mentions "256x256" (or "CFR"): that was all the refusal said
        ("I remember an ICLR 2025 paper where a pure energy-based model beat diffusion models on ImageNet 256x256 "
         "FID. What sampler did it use?",
         "a paper where a pure energy-based model beat diffusion models on ImageNet 256x256 FID", "256x256"),
        ("Which ICLR 2025 paper reported discovering a new particle in LHC collision data with a transformer-based "
         "anomaly detector?",
         "a paper that reported discovering a new particle in LHC collision data with a transformer-based anomaly "
         "detector", "LHC"),
        # listed Allie ("Human-Aligned Chess With a Bit of Search"): no abstract here mentions Stockfish, a proper
        # name of what the described paper did
        ("I remember an ICLR 2025 chess model trained only on human games that beat Stockfish while still playing "
         "like a human. Which paper was that?",
         "a chess model trained only on human games that beat Stockfish while still playing like a human", "Stockfish"),
        # ... and "Dafny", in no abstract (the refusal said nothing more than "I could not find …")
        ("Which ICLR 2025 paper got LLMs to write formally verified programs in Dafny or Verus, with the verifier "
         "accepting over 90% of the generated solutions?",
         "a paper that got LLMs to write formally verified programs in Dafny or Verus, with the verifier accepting "
         "over 90% of the generated solutions", "Dafny"),
    ],
)
def test_a_refused_question_about_one_paper_names_the_paper_no_abstract_describes(
        full_rag, question: str, described: str, why: str) -> None:
    from evals.relevance import listed_of

    a = full_rag.ask(question)
    first = a.text.split("\n")[0]
    assert a.refused and f"No ICLR 2025 abstract here describes “{described}”." in first, a.text
    assert f"mentions “{why}”" in first, a.text
    assert listed_of(a).premise_named  # as the eval counts a false premise named


@pytest.mark.parametrize(("question", "described"), [
    # answered with "Lightweight Predictive 3D Gaussian Splats" (a storage paper) as the paper asked for
    ("Which ICLR 2025 paper fit 3D Gaussian splats to radio-frequency measurements (a kind of 'RF Gaussian "
     "splatting') to predict Wi-Fi signal strength at unseen receiver positions?",
     "a paper that fit 3D Gaussian splats to radio-frequency measurements"),
    # answered with a federated RLHF paper, a recommendation paper and a federated prompting paper; restated as
    # "Which paper federated sequential recommendation, …" (the "on" lost)
    ("I recall an ICLR 2025 paper on federated sequential recommendation, where each user's interaction history "
     "stays on their phone and only item-embedding updates go to the server. Which one was it, and how did it "
     "handle cold-start items?",
     "a paper on federated sequential recommendation, where each user's interaction history stays on their phone"),
])
def test_a_paper_found_for_a_description_that_holds_little_of_it_is_only_the_closest(
        full_rag, question: str, described: str) -> None:
    a = full_rag.ask(question)
    first = a.text.split("\n")[0]
    assert a.refused and not a.items and f"No ICLR 2025 abstract here describes “{described}" in first, a.text
    assert first.endswith("The closest papers (their abstracts do not state it):") and a.related, a.text


def test_a_described_paper_that_is_here_is_still_found(full_rag) -> None:
    a = full_rag.ask("I remember an ICLR 2025 paper that combines next-token prediction for text and diffusion "
                     "for images in a single transformer. Which one was it?")
    assert not a.refused and a.items[0].title.startswith("Transfusion"), a.text


def test_a_claim_no_abstract_states_shows_the_papers_closest_to_it_after_it(full_rag) -> None:
    # the premise was named and nothing more: the paper the asker likely remembers, which says the
    # opposite ("enables grokking without regularization"), was not pointed to
    a = full_rag.ask("Which ICLR 2025 paper proved that grokking can never happen without weight decay or some "
                     "other explicit regularizer?")
    assert a.refused and not a.items, a.text
    first = a.text.split("\n")[0]
    assert "No ICLR 2025 abstract here states" in first and first.endswith("The closest papers (none of them states it):")
    assert [it.title for it in a.related] == ["Grokking at the Edge of Numerical Stability"], a.text
    assert not a.related[0].missing and a.citations  # cited, and no "not: …" label


def test_a_claim_is_what_is_shown_that_or_a_comparison_shown_of_something() -> None:
    from rag.grounding.evidence import asserted_claim

    assert asserted_claim("Which paper shows that SAEs find canonical units?") == "SAEs find canonical units"
    assert asserted_claim("Which paper shows a network training exponentially faster than GPUs?") == (
        "a network training exponentially faster than GPUs")
    assert asserted_claim("Which paper shows a new method for pruning?") is None  # what it shows, not a claim
    # what a paper is asked to have shown after a comma, not what a list's papers should show
    assert asserted_claim("Which paper established CKA as the best measure, showing that high CKA means shared "
                          "information?") == "high CKA means shared information"
    assert asserted_claim("I want papers showing that RLHF makes a model worse at something.") is None
    # a verb of comparison states a claim without "that" or an article
    assert asserted_claim("Which papers show spiking networks beating ANNs on ImageNet?") == (
        "spiking networks beating ANNs on ImageNet")
    # what a work reported or revealed that (past tense) is a claim too: it was read as a finding to list
    assert asserted_claim("Which ICLR 2025 work reported that a classifier found the first evidence of dark "
                          "matter?") == "a classifier found the first evidence of dark matter"
    # what a paper concluded, or what "the … paper says", ends where its sentence ends
    assert asserted_claim("Which ICLR 2025 paper concluded that MIDI works better than ABC notation?") == (
        "MIDI works better than ABC notation")
    # ("why do the authors conclude that …" asks why of what the named paper concludes, in its own words)
    assert asserted_claim("In 'Title', why do the authors conclude that sensing matters little?") is None
    assert asserted_claim("The patch-level training paper says pretraining cost can be cut tenfold. What patch size "
                          "gives them that saving?") == "pretraining cost can be cut tenfold"
    # a second question after the claim is no part of it (the named paper was shown as "none of them states it")
    assert asserted_claim("In 'On the Benefits of Memory for Modeling Time-Dependent PDEs', why do the authors argue "
                          "that Markovian solvers can be fundamentally limited, and in which regimes does memory help "
                          "most?") == "Markovian solvers can be fundamentally limited"


def test_a_how_question_about_a_paper_named_as_its_abstract_names_it_shows_that_paper_only(full_rag) -> None:
    # "NoPoSplat" is not in the title ("No Pose, No Problem: …"); the abstract introduces it
    a = full_rag.ask("How does NoPoSplat reconstruct 3D Gaussian scenes from sparse images without known camera poses?")
    assert [it.title[:19] for it in a.items] == ["No Pose, No Problem"], a.text
    assert_every_cited_sentence_supported(a)


def test_a_how_question_quotes_how_the_paper_does_it(full_rag) -> None:
    a = full_rag.ask("How does SAM 2 segment objects in videos?")
    assert a.items and a.items[0].title.startswith("SAM 2"), a.text
    assert "streaming memory" in " ".join(a.items[0].sentences), a.text  # its method sentence, not only what it is
    # a paper named by its quoted title is answered with more of its own sentences, the how among them
    a = full_rag.ask("In 'Restructuring Vector Quantization with the Rotation Trick', how do gradients get through the "
                     "VQ layer of a VQ-VAE instead of being copied straight-through, and what does that change?")
    assert [it.title for it in a.items] == ["Restructuring Vector Quantization with the Rotation Trick"], a.text
    assert "rotation and rescaling" in " ".join(a.items[0].sentences), a.text


def test_aims_and_terms_are_read_as_the_papers_write_them(full_rag) -> None:
    bench = full_rag.ask("Which papers propose benchmarks for long-context language models?")
    assert {"HELMET", "SCBench"} <= {it.title.split(":")[0] for it in bench.items}, bench.text
    assert not [it for it in bench.items if it.title.startswith("What is Wrong with Perplexity")], bench.text
    assert all(re.search(r"bench", " ".join(it.sentences), re.I) for it in bench.items[:2]), bench.text
    injection = full_rag.ask("Which papers defend LLM agents against prompt injection?")
    assert not [it for it in injection.items + injection.related if "Federated Graph" in it.title], injection.text
    member = full_rag.ask("Which papers defend against membership inference attacks?")
    assert not [it for it in member.items if "Model Inversion" in it.title], member.text


def test_a_refusal_about_a_named_paper_says_what_the_paper_is_about(full_rag) -> None:
    a = full_rag.ask("How many GPUs were used to train LeanAgent?")
    assert a.refused and a.related and a.related[0].title.startswith("LeanAgent"), a.text
    assert "LeanAgent" in a.text and a.related[0].sentences[0] in a.text


def test_a_yes_no_question_a_named_paper_says_nothing_of_is_answered_about_that_paper(full_rag) -> None:
    a = full_rag.ask("Does LeanAgent use reinforcement learning from human feedback?")
    assert a.refused and not a.items and [it.title for it in a.related][:1] == [
        "LeanAgent: Lifelong Learning for Formal Theorem Proving"], a.text


@pytest.mark.parametrize(("question", "stated"), [
    ("Why do diffusion models memorize training images?", "memoriz"),  # what a why-question asks explained
    ("Which papers watermark images generated by diffusion models?", "watermark"),  # what the papers do
    ("Which papers use reinforcement learning to train LLM agents?", "llm"),  # the kind of model named
])
def test_every_listed_paper_states_what_the_question_cannot_do_without(full_rag, question: str, stated: str) -> None:
    a = full_rag.ask(question)
    papers = full_rag.retriever.papers()
    lacking = [it.title for it in a.items if stated not in f"{it.title} {papers.text(it.paper_id)}".lower()]
    assert a.items and not lacking, (lacking, a.text)


def test_theorem_proving_is_not_met_by_formal_languages(full_rag) -> None:
    a = full_rag.ask("Which papers apply LLMs to formal theorem proving?")
    titles = _titles(a)
    assert any(t.startswith("LeanAgent") for t in titles) and not [t for t in titles if "Formal Languages" in t], a.text


def test_refusal_reasons_are_plain_words_without_internal_scores(full_rag) -> None:
    questions = [json.loads(line)["query"] for line in (DATA / "unanswerable.jsonl").read_text().splitlines()]
    for q in questions:
        a = full_rag.ask(q)
        shown = a.text + " " + a.refusal_reason
        assert not re.search(r"weight|coverage|share \d|similarity \(|\d\.\d\d", shown), shown


def test_every_matching_paper_through_the_api_the_openai_route_and_the_ui(full_rag) -> None:
    import httpx

    from rag.serve import ServerSettings, running
    from ui.render import chat_turn

    q = "Which papers study model merging?"
    want = full_rag.ask(q, show_all=True)
    assert len(want.items) == len(want.matching_ids) > 10 or len(want.items) == len(want.matching_ids)
    with running(full_rag, ServerSettings(port=0, ui=False)) as srv:
        with httpx.Client(base_url=srv.url, timeout=120) as http:
            got = http.post("/api/ask", json={"question": q, "show_all": True}).json()
            first = http.post("/api/ask", json={"question": q}).json()
            chat = http.post("/v1/chat/completions", json={
                "model": "iclr-rag", "messages": [{"role": "user", "content": q}], "show_all": True,
            }).json()
    # The same papers (ties among equal scores may fall in another order from one process to another).
    assert sorted(it["paper_id"] for it in got["items"]) == sorted(want.matching_ids)
    assert sorted(got["matching_ids"]) == sorted(first["matching_ids"]) and len(first["items"]) <= len(got["items"])
    assert all(f"[{it.number}]" in chat["choices"][0]["message"]["content"] for it in want.items)
    *_, last = chat_turn(full_rag, q, [], show_all=True)
    assert sorted(it["paper_id"] for it in last.turns[-1]["answer"]["items"]) == sorted(want.matching_ids)


def _paper(title: str, abstract: str):
    from rag.grounding.admission import PaperText
    from rag.types import Source

    return PaperText.of(Source(number=1, paper_id="p", title=title, text=abstract, score=1.0))


@pytest.mark.parametrize(("title", "abstract", "kind"), [
    ("RM-Bench: Benchmarking Reward Models of Language Models with Subtlety and Style",
     "Reward models are critical. We introduce RM-Bench, a novel benchmark for reward models.", "benchmark"),
    ("How to Evaluate Reward Models for RLHF",
     "Reward models are hard to judge. We introduce a new way to evaluate reward models by measuring "
     "downstream performance.", "evaluation"),
    ("OS-ATLAS: A Foundation Action Model for Generalist GUI Agents",
     "GUI agents rely on closed models. We develop OS-Atlas, a foundational GUI action model. We also "
     "release the largest open-source cross-platform GUI grounding corpus.", "method"),  # a model, with its corpus
    ("Test-time Adaptation for Regression by Subspace Alignment",  # "test" names a method here
     "Test-time adaptation adapts a model to unlabeled test data. We propose a subspace alignment method "
     "for regression.", "method"),
    ("SWE-bench Multimodal: Do AI Systems Generalize to Visual Software Domains?",  # a two-word name
     "Agents are evaluated on bugs. We propose SWE-bench M to evaluate systems on visual JavaScript.", "benchmark"),
    ("VisualAgentBench: Towards Large Multimodal Models as Visual Foundation Agents",  # named a benchmark
     "LMMs can act as agents. We train and evaluate agents in five environments.", "benchmark"),
    ("Aioli: A Unified Optimization Framework for Language Model Data Mixing",
     "Data mixing matters. We propose Aioli, an online method that estimates mixing parameters.", "method"),
])
def test_a_papers_main_contribution_is_read_from_its_title_and_first_contribution(title, abstract, kind) -> None:
    from rag.grounding.admission import contribution_kind

    assert contribution_kind(_paper(title, abstract)) == kind


def test_similar_papers_contribute_what_the_anchor_does_the_others_are_related(full_rag) -> None:
    """"Papers like OS-ATLAS" (a model): benchmarks of GUI agents are related, not listed."""
    answer = full_rag.ask("What other papers are like OS-ATLAS, the foundation action model for generalist GUI agents?")
    listed = {it.title for it in answer.items}
    related = {it.title: it.missing for it in answer.related}
    assert listed and not any("Bench" in t or "Benchmark" in t for t in listed), listed
    assert any("Bench" in t or "Benchmark" in t for t in related), related  # VisualAgentBench, GUI-World ...
    assert all(m and m[0].startswith("a method or model like OS-ATLAS") for m in related.values())


def test_a_how_question_lists_methods_and_a_titled_benchmark_as_related(full_rag) -> None:
    """"How do papers compress the KV cache?" asks for methods: SCBench (a benchmark by its title)
    is related, saying so; a question about evaluating lists benchmarks as before."""
    how = full_rag.ask("How do papers compress the KV cache for long-context LLM inference?")
    assert how.items and not any(it.title.startswith("SCBench") for it in how.items)
    assert any(it.title.startswith("SCBench") and it.missing == ["a method (this paper is a benchmark)"]
               for it in how.related), [(it.title, it.missing) for it in how.related]
    evaluating = full_rag.ask("How do papers evaluate the long-context abilities of LLMs?")
    assert any("Bench" in it.title or "Benchmark" in it.title for it in evaluating.items)


def test_what_a_defence_protects_is_required_of_every_listed_paper(full_rag) -> None:
    """"defend vision-language models against …": defences of LLMs, SVMs or diffusion models are not
    the answer; when no VLM defence is stored the answer says so and shows the closest papers."""
    a = full_rag.ask("Which papers defend vision-language models against adversarial image attacks?")
    vlm = re.compile(r"vision[- ]language|\bvlms?\b|\blvlms?\b|multimodal|\bclip\b", re.I)
    papers = {s.paper_id: s for s in a.sources}
    for it in a.items:
        assert vlm.search(papers[it.paper_id].title + " " + papers[it.paper_id].text), it.title
    assert a.items or a.related, a.text


def test_robust_to_reads_as_a_defence_not_an_attack(full_rag) -> None:
    a = full_rag.ask("Which papers make graph neural networks robust to adversarial attacks?")
    assert a.reading is not None and "must attack" not in a.reading.describe()
    assert not [t for t in _titles(a) if "Attack" in t.split(":")[0]], a.text  # GOttack is an attack


def test_a_topic_named_only_in_passing_gives_the_closest_papers_with_that_said(full_rag) -> None:
    a = full_rag.ask("Which papers unlearn copyrighted content from LLMs?")
    assert a.refused and a.related, a.text
    assert any("only in passing" in m for it in a.related for m in it.missing), a.text
    assert "MUSE" in a.text


def test_a_list_quotes_what_each_paper_proposes(full_rag) -> None:
    """A "which papers" answer (and an author's or a paper's neighbours' list) quotes the sentence in
    which a paper proposes what it is ("we introduce bijection learning, a powerful attack algorithm
    …"), not what it says of it afterwards ("our attack is extremely effective …"), where the
    abstract has one."""
    from rag.grounding.evidence import _WE_PROPOSE
    from rag.text.citations import abstract_sentences

    has = quoted = 0
    for q in ("Which papers propose new jailbreak attacks on language models?",
              "Which papers use diffusion models for protein design?", "Which papers compress the KV cache?",
              "Which papers did Sergey Levine co-author?", "Papers similar to 'Differential Transformer'"):
        a = full_rag.ask(q)
        by_id = {s.paper_id: s for s in a.sources}
        for it in a.items:
            if any(_WE_PROPOSE.search(s) for s in abstract_sentences(by_id[it.paper_id].text)):
                has += 1
                quoted += any(_WE_PROPOSE.search(s) for s in it.sentences)
    assert has >= 25 and quoted >= 0.85 * has, (quoted, has)
    bijection = full_rag.ask("Which papers propose new jailbreak attacks on language models?")
    [endless] = [it for it in bijection.items if it.title.startswith("Endless Jailbreaks")]
    assert any("we introduce bijection learning" in s for s in endless.sentences), endless.sentences


def test_a_quote_carries_the_setting_its_first_sentence_misses(full_rag) -> None:
    """"How do papers make diffusion language models faster at inference?": Block Diffusion's contribution
    sentence proposes "an efficient training algorithm" (faster, but not at inference); its result
    sentence "improving inference efficiency with KV caching and parallel token sampling" states the
    setting too, and is quoted with it. And a defence question lists no paper that dissects robustness."""
    a = full_rag.ask("How do papers make diffusion language models faster at inference?")
    [block] = [it for it in a.items if it.title.startswith("Block Diffusion")]
    assert any("improving inference efficiency with KV caching" in s for s in block.sentences), block.sentences
    b = full_rag.ask("Which papers defend vision-language models against adversarial image perturbations at test time?")
    assert not any(it.title.startswith("Dissecting Adversarial Robustness") for it in b.items), b.text


@pytest.mark.parametrize(("title", "abstract", "faster"), [
    ("MotionAura: Generating Motion Consistent Videos using Discrete Diffusion",
     "Video generation is hard. We present MotionAura, a text-to-video framework. It leverages LoRA for "
     "parameter-efficient fine-tuning.", False),  # efficient in parameters, not in time
    ("SlowFast-VGen: Slow-Fast Learning for Long Video Generation",
     "Long videos are hard. We introduce SlowFast-VGen, a novel dual-speed learning system.", False),
    ("Data-Efficient Video Diffusion", "Videos need data. We propose a data efficient diffusion recipe.", False),
    ("Fast Video Diffusion", "Sampling is slow. We propose a distillation that makes video diffusion 10x faster.", True),
    ("Efficient Video Diffusion", "Sampling is costly. We propose an efficient sampler for video diffusion.", True),
])
def test_faster_or_cheaper_is_not_met_by_another_resources_efficiency(title, abstract, faster) -> None:
    """"Which papers accelerate video diffusion models?": a parameter-, data- or label-efficient method,
    or a "dual-speed" system, does not make anything faster."""
    from rag.grounding.admission import states_direction
    from rag.text.reading import read

    facets = [f for f in read("Which papers accelerate video diffusion models?").constraints if f.kind == "direction"]
    assert len(facets) == 1 and facets[0].label == "must make it faster or cheaper"
    assert states_direction(_paper(title, abstract), facets[0].units) == float(faster)


@pytest.mark.parametrize(("title", "abstract", "defends"), [
    # the title names the side as what it dissects; what the paper does and finds is the attacker's
    ("Dissecting Adversarial Robustness of Multimodal LM Agents",
     "Agents are deployed widely. We propose an evaluation framework for agents. We find that we can "
     "successfully break the latest agents. An attacker can hijack these agents with a single image.", False),
    ("Evaluating the Adversarial Robustness of Vision-Language Models",
     "VLMs are everywhere. We build a benchmark of perturbed images and measure accuracy.", False),
    # a study word in the title and a defence of its own in a contribution sentence
    ("Understanding Adversarial Robustness of VLMs",
     "VLMs are fragile. We propose a purification defense that protects VLMs at test time.", True),
    # the title alone names a defence
    ("Adversarial Robustness of VLMs via Test-Time Prompt Tuning",
     "VLMs are fragile. We tune prompts on each test image.", True),
    # the title's side, while the results report attacks twice: an attack paper
    ("Adversarial Robustness of Web Agents",
     "Agents are deployed widely. We release 200 tasks. An attacker can hijack agents. Our attack "
     "succeeds in 67% of cases.", False),
])
def test_a_title_that_studies_robustness_is_no_defence(title, abstract, defends) -> None:
    """"Which papers defend VLMs against adversarial images?": a title that names robustness as what it
    dissects or evaluates, or whose paper then reports what an attacker can do, does not defend; a
    contribution sentence that states the defence does."""
    from rag.grounding.admission import states_direction
    from rag.text.reading import read

    facets = [f for f in read("Which papers defend vision-language models against adversarial images?").constraints
              if f.kind == "direction"]
    assert len(facets) == 1 and facets[0].label == "must defend or protect"
    assert states_direction(_paper(title, abstract), facets[0].units) == float(defends)


@pytest.mark.parametrize(("abstract", "plays"), [
    ("We study large language models as optimizers for prompts.", True),
    ("We propose OPRO, which uses LLMs as an optimizer of black-box objectives.", True),
    ("We introduce an LLM-based optimizer for combinatorial problems.", True),
    ("We show that LLM optimizers can tune prompts.", True),
    ("We study LLM optimization with second-order methods.", False),  # optimizing LLMs: words, not stems
    ("We propose HiZOO, a zeroth-order optimizer for fine-tuning LLMs.", False),  # an optimizer for LLMs
    ("We cast the alignment of LLMs as an optimization problem.", False),  # stems would say "as optim"
])
def test_use_a_as_b_needs_a_to_play_b_in_the_papers_words(abstract: str, plays: bool) -> None:
    """"Which papers use LLMs as optimizers?": a paper must say the LLM is the optimizer, not name both."""
    from rag.grounding.admission import states_role
    from rag.text.reading import read

    roles = [f for f in read("Which papers use LLMs as optimizers?").constraints if f.kind == "role"]
    assert [f.text for f in roles] == ["llms as optimizers"]
    assert states_role(_paper("A paper", "Optimization matters. " + abstract), roles[0].text) == float(plays)
    # a role word the reading puts in a technique ("to evaluate other models") is a role too
    assert [f.text for f in read("Which papers use LLMs as judges to evaluate other models?").constraints
            if f.kind == "role"] == ["llms as judges"]
    # several roles ("as priors, reward designers or guidance") are alternatives: any one will do
    (several,) = [f for f in read("Which papers use LLMs as priors, reward designers or guidance for RL?").constraints
                  if f.kind == "role"]
    assert several.text == "llms as priors or reward designers or guidance"


def test_a_low_ranked_paper_is_not_listed_on_scattered_words(full_rag) -> None:
    """'mixtures' and 'scaling laws' each somewhere in a mixture-of-experts paper far down the
    candidates do not make it a paper on scaling laws for data mixtures; the data-mixing papers stay."""
    answer = full_rag.ask("What do papers find about scaling laws for data mixtures?")
    titles = _titles(answer)
    assert any("Data Mix" in t or "Data Mixture" in t for t in titles), titles
    assert not any("Mixture of Experts" in t or "MoE" in t for t in titles), titles


def test_a_why_question_no_abstract_explains_is_refused_with_its_subjects_papers(full_rag) -> None:
    """Vision-transformer papers are here, none on registers (an ICLR 2024 paper): the answer says no
    abstract answers the question and shows the closest papers as missing "registers", instead of
    listing vision-transformer papers as if they explained it."""
    a = full_rag.ask("Why do vision transformers need registers?")
    assert a.refused and not a.items, a.text
    assert "No ICLR 2025 abstract here answers “Why do vision transformers need registers?”" in a.text, a.text
    assert a.related and all("registers" in r.missing for r in a.related), a.related


def test_a_list_questions_topic_words_name_no_paper(full_rag) -> None:
    """"Which papers apply large language models to tabular data …" holds most of the words of
    "AnoLLM: Large Language Models for Tabular Anomaly Detection": the question asks for every such
    paper, not about that one (it was refused as a question about AnoLLM that its abstract does not answer)."""
    a = full_rag.ask("Which papers apply large language models to tabular data, for example prediction, "
                     "anomaly detection or table question answering?")
    assert not a.refused and len(a.items) >= 3, a.text
    assert any(it.title.startswith("AnoLLM") for it in a.items), a.text


@pytest.mark.parametrize(("abstract", "plays"), [
    ("We use large language model priors to guide exploration of RL agents.", True),
    ("An LLM serves as a reward designer for robot skills.", True),
    ("We train LLM web agents with online reinforcement learning.", False),  # RL for LLMs, not LLMs for RL
])
def test_a_list_of_roles_needs_one_of_them(abstract: str, plays: bool) -> None:
    """"use LLMs or VLMs as priors, reward designers or guidance to make RL agents sample-efficient":
    any one of the roles will do, but one must be said (RL that trains an LLM agent plays none)."""
    from rag.grounding.admission import states_role
    from rag.text.reading import read

    question = ("Which papers use large language or vision-language models as priors, reward designers or "
                "guidance to make reinforcement learning agents more sample-efficient?")
    (role,) = [f for f in read(question).constraints if f.kind == "role"]
    assert role.text == "language or vision-language models as priors or reward designers or guidance"
    assert states_role(_paper("A paper", abstract), role.text) == float(plays)


def test_a_similar_list_shows_the_closest_seven_and_all_on_request(full_rag) -> None:
    """Past the seventh neighbour within the margin, readers judged none relevant: a "similar to"
    answer shows seven; asking for every paper shows the others within the margin too."""
    question = "Which papers are similar to 'TFG-Flow: Training-free Guidance in Multimodal Generative Flow'?"
    shown, every = full_rag.ask(question), full_rag.ask(question, show_all=True)
    assert len(shown.items) == 7 and len(every.items) > 7, (len(shown.items), len(every.items))
    assert [it.paper_id for it in every.items[:7]] == [it.paper_id for it in shown.items]


def test_either_side_of_a_and_b_answers(full_rag) -> None:
    """It was refused: no paper holds half of "attention sinks … extreme activation outliers arise",
    while the attention-sink papers answer one side of it."""
    a = full_rag.ask("What do papers find about why attention sinks and extreme activation outliers arise in LLMs, "
                     "and how do they suppress or work around them?")
    assert not a.refused and any("Attention Sink" in t for t in _titles(a)), a.text


def test_a_long_topic_in_the_askers_words_lists_the_papers_using_its_technique(full_rag) -> None:
    # no abstract says "decompose model activations into interpretable features"; the sparse
    # autoencoder papers do it in their own words (it was refused)
    a = full_rag.ask("Which papers use sparse autoencoders to decompose model activations into interpretable "
                     "features, or evaluate how well SAEs do this?")
    assert not a.refused and len(a.items) >= 4, a.text
    head = a.text.split("\n", 1)[0]
    assert head.endswith("here using sparse autoencoders (read loosely: “decompose model activations into "
                         "interpretable features or evaluate how well saes”), closest to the question first:"), a.text
    assert all("sparse autoencoder" in (t.lower() + " " + s.text.lower()) for t, s in
               ((it.title, next(x for x in a.sources if x.paper_id == it.paper_id)) for it in a.items)), a.text
    assert_every_cited_sentence_supported(a)
    # a setting alone lists nothing: the false premise stays refused
    b = full_rag.ask("Which papers train a one-trillion-parameter language model on a single consumer GPU?")
    assert b.refused, b.text


def test_an_attack_question_lists_no_paper_whose_title_names_a_defence(full_rag) -> None:
    # "on ML models" is any model (it was a setting no paper states, and the answer was refused);
    # "… Poisoned Sample Detection Against Backdoor Attacks" was listed first
    a = full_rag.ask("Which papers propose new backdoor or data-poisoning attacks on ML models, rather than "
                     "defenses against them?")
    assert not a.refused and a.items, a.text
    titles = _titles(a)
    assert any(t.startswith("Wicked Oddities") for t in titles), a.text
    assert not [t for t in titles if re.search(r"\b(?:Detection|Mitigating|Defense|Protecting)\b", t)], a.text


def test_a_why_question_about_an_unmentioned_name_names_its_premise(full_rag) -> None:
    a = full_rag.ask("Why do Kolmogorov-Arnold Networks (KANs) outperform Transformers on large-scale language "
                     "modeling, as ICLR 2025 papers report?")
    assert a.refused
    assert "No ICLR 2025 abstract here states “Kolmogorov-Arnold Networks (KANs) outperform Transformers" in a.text, a.text


def test_a_general_verb_and_the_number_of_are_no_part_of_the_topic(full_rag) -> None:
    # "cut the number of sampling steps …" was read as two parts, "cut number" and the rest, which
    # no paper held: two papers were listed
    from rag import RAG

    q = "How do papers cut the number of sampling steps needed by diffusion and flow models?"
    a = full_rag.ask(q)
    assert any(t.startswith("One Step Diffusion via Shortcut Models") for t in _titles(a)), a.text
    # (the reading admits eight papers; the relevance model keeps the four it finds likeliest, and drops
    # "UniCon" and "Flow matching achieves almost minimax optimal convergence", which only hold the words)
    rules = RAG(full_rag.settings.model_copy(update={"answer": full_rag.settings.answer.model_copy(
        update={"relevance_model": "off"})}))
    assert len(rules.ask(q).items) >= 6


def test_data_a_question_learns_from_asks_for_no_benchmark(full_rag) -> None:
    # "… learning only from pre-collected datasets" was read as asking for benchmarks, and refused
    a = full_rag.ask("Which papers study cooperative multi-agent reinforcement learning in the offline setting, "
                     "learning only from pre-collected datasets?")
    assert not a.refused and any(t.startswith("ComaDICE") for t in _titles(a)), a.text
    assert "benchmark" not in a.reading.describe()


def test_a_question_no_paper_answers_names_what_it_asked_without_its_contrast(full_rag) -> None:
    # no abstract here detects mislabeled examples; a novelty-discovery paper was listed on "examples"
    a = full_rag.ask("Which papers detect mislabeled examples in training data, rather than training models that "
                     "are robust to label noise?")
    assert a.refused and not a.items, a.text
    # a list request no abstract states all of: the search's first papers, headed as such (it opened "No ICLR 2025
    # abstract here states all of “detect mislabeled examples in training data”.", which readers took for "nothing
    # fits" where papers did: docs/relevance.md §5w)
    from rag.text.citations import CLOSEST_ALONE_HEADING

    assert a.text.startswith(CLOSEST_ALONE_HEADING) and a.closest and not a.related, a.text


def test_a_request_in_conversational_words_is_answered_as_its_plain_question(full_rag) -> None:
    asked = ("I'm looking for work on defending LLMs against jailbreak prompts. Not new jailbreak attacks, but "
             "defenses, guardrails or training methods that make models hold up against them. What is there?")
    a = full_rag.ask(asked)
    assert a.question == asked and not a.refused and len(a.items) >= 4, a.text
    assert a.reading is not None and "must defend or protect" in a.reading.describe(), a.reading
    assert any("RobustKV" in t for t in _titles(a)) and any("Guard" in t for t in _titles(a)), a.text
    attacks = ("One Model Transfer to All", "Injecting Universal Jailbreak Backdoors", "h4rm3l", "AdvWave")
    assert not [t for t in _titles(a) if t.startswith(attacks)], a.text


def test_a_list_question_for_benchmarks_does_not_name_the_paper_its_words_run_into(full_rag) -> None:
    # "data-driven scientific discovery" is four words of one title: the topic, not that paper named
    a = full_rag.ask("Are there benchmarks that measure how well LLM agents handle data science, machine-learning "
                     "engineering or data-driven scientific discovery? I'm after evaluations of existing agents, "
                     "not papers introducing a new agent system.")
    assert not a.refused and a.intent.kind == "topic", a.text
    assert {"MLE-bench", "ScienceAgentBench"} <= {t.split(":")[0] for t in _titles(a)}, a.text


def test_a_recalled_paper_that_did_the_impossible_is_named_as_unsupported(full_rag) -> None:
    a = full_rag.ask("I remember an ICLR 2025 paper that compressed GPT-4 to 1-bit weights with no accuracy loss "
                     "on any benchmark. How did they do it?")
    assert a.refused and not a.items, a.text
    assert a.text.index("No ICLR 2025 abstract here states") < a.text.index("compressed GPT-4"), a.text
    # a recalled paper that exists is found
    b = full_rag.ask("I remember a paper that proves theorems in Lean with a lifelong learning agent. Which one was it?")
    assert not b.refused and b.items[0].title.startswith("LeanAgent"), b.text
    # ... and a paper looked for by what it did, in the question's words or others
    for question, title in [
        ("Which ICLR 2025 paper introduced a dynamic benchmark of forecasting questions about future events?",
         "ForecastBench"),
        ("Which ICLR 2025 paper did private transformer inference with encrypted token pruning?", "CipherPrune"),
        ("Which ICLR 2025 paper built a chess AI that plays like humans?", "Human-Aligned Chess"),
    ]:
        c = full_rag.ask(question)
        assert not c.refused and c.items[0].title.startswith(title), c.text


def test_a_setting_put_first_is_read_as_the_topic(full_rag) -> None:
    a = full_rag.ask("Under differential privacy constraints, what methods are there for training or adapting ML "
                     "models, e.g. better DP-SGD-style training, private fine-tuning or steering of LLMs?")
    assert not a.refused and len(a.matching_ids) >= 5, a.text
    papers = {s.paper_id: s for s in a.sources}
    for it in a.items:
        text = f"{papers[it.paper_id].title} {papers[it.paper_id].text}".lower()
        assert "differential" in text or "private" in text, it.title


def test_which_papers_solve_x_asks_for_a_list_not_a_claim(full_rag) -> None:
    # "solve(s)" made a claim of any question: "Which papers solve inverse problems …" was refused as a premise
    a = full_rag.ask("Which papers solve inverse problems such as deblurring or inpainting with pretrained diffusion models?")
    assert not a.refused and len(a.items) >= 2, a.text
    papers = {s.paper_id: s for s in a.sources}
    for it in a.items:
        text = f"{papers[it.paper_id].title} {papers[it.paper_id].text}".lower()
        # an inpainting paper meets it: the question gives inpainting as one of the inverse problems it means
        assert re.search(r"inverse|deblur|inpaint", text) and ("diffusion" in text or "flow matching" in text), it.title


def test_a_belief_a_paper_argues_against_is_no_claim_it_supports(full_rag) -> None:
    # "A common belief is that RoPE is useful because it helps to decay token dependency …. In this work,
    # we argue that this is unlikely to be the core reason." (background, then the paper's own view)
    a = full_rag.ask("Which papers confirm that RoPE works mainly because it makes attention decay with relative distance?")
    assert a.refused and "No ICLR 2025 abstract here states" in a.text, a.text


def test_a_name_given_as_an_example_is_not_what_is_asked(full_rag) -> None:
    # "scRNA-seq", in the examples, is in no retrieved abstract: the question is about single-cell data
    a = full_rag.ask("Which papers develop or test methods on single-cell data, such as scRNA-seq or single-cell "
                     "perturbation screens?")
    assert not a.refused and a.items, a.text
    assert "scRNA" not in a.refusal_reason


def test_a_technique_and_a_topic_no_paper_states_together_is_a_premise_named(full_rag) -> None:
    # EEG papers and robot-arm papers exist; none does both: no list "read loosely" of EEG papers
    a = full_rag.ask("Which ICLR 2025 papers use EEG brain-computer interfaces to control robot arms, and how "
                     "accurate is the control they report?")
    assert a.refused and not a.items, a.text
    # the closest papers under what they come closest to, each with what its abstract does not state
    assert a.text.startswith("The papers closest to “use EEG brain-computer interfaces to control robot arms”"), a.text
    # (with the search's first matches among them, in the search's order: §5z)
    assert a.related and any(it.missing for it in a.related), a.text


def test_examples_name_no_paper_and_machine_learning_is_no_technique(full_rag) -> None:
    # "(VQ-VAE codebooks, FSQ, …)" named one paper and refused for it; "apply machine learning to X" needed
    # every listed paper to say "machine learning"
    for q in ("Which papers rely on vector quantization (VQ-VAE codebooks, FSQ, residual VQ, lookup-free "
              "quantization) to turn continuous data into discrete tokens?",
              "Which papers apply machine learning to medical imaging data such as MRI, CT, X-ray, or pathology slides?"):
        a = full_rag.ask(q)
        assert not a.refused and a.items and a.intent.kind == "topic", a.text


def test_other_names_examples_and_acronyms_of_the_topic_find_its_papers(full_rag) -> None:
    # each listed few or none: "neural fields" papers for INRs, MRI papers for medical imaging, a paper
    # that says "PINNs" for physics-informed neural networks, neural-ODE papers that "build models on" them
    cases = [
        ("Which papers use implicit neural representations (coordinate-based networks / neural fields) for "
         "something other than 3D scene reconstruction or rendering?", "GridMix: Exploring Spatial Modulation"),
        ("Which papers apply machine learning to medical imaging data such as MRI, CT, X-ray, or "
         "pathology/histology slides?", "Score-based Self-supervised MRI Denoising"),
        ("physics-informed neural networks / PDE-residual loss training", "PIED: Physics-Informed Experimental Design"),
        ("Can you find work that builds its models on neural ODEs or neural SDEs? ODE/SDE samplers for diffusion "
         "or flow-matching models don't count.", "Global Convergence in Neural ODEs"),
    ]
    for question, title in cases:
        a = full_rag.ask(question)
        assert not a.refused and any(t.startswith(title) for t in _titles(a)), (question, a.text)


def test_the_venue_names_no_paper(full_rag) -> None:
    # "ICLR 2025" named "ICLR: In-Context Learning of Representations", which was then the answer
    a = full_rag.ask("I remember a text-to-music paper at ICLR 2025 that generates full-length songs with sung "
                     "vocals and lyrics. Which one was that?")
    assert not any(t.startswith("ICLR:") for t in _titles(a)), a.text


def test_what_the_question_sets_aside_is_not_shown_as_related(full_rag) -> None:
    # "rather than proposing new generators": generator papers, missing only "must introduce a benchmark",
    # were listed under "Related, but not …"
    a = full_rag.ask("Which papers propose new metrics or benchmarks for evaluating image or video generative "
                     "models, rather than proposing new generators?")
    assert not a.refused and len(a.items) >= 5, a.text
    direction = [c.label for c in a.reading.constraints if c.kind == "direction"]
    assert direction and not [it.title for it in a.related if set(it.missing) <= set(direction)], a.text


def test_a_second_question_is_answered_by_the_second_sentence(full_rag) -> None:
    # "What is Kinetix, and what did its authors show …?" quoted two sentences of what Kinetix is
    a = full_rag.ask("What is Kinetix, and what did its authors show about training general RL agents with it?")
    assert a.items and a.items[0].title.startswith("Kinetix"), a.text
    quoted = " ".join(a.items[0].sentences)
    # ... and a finding of the trained agent answers the second (each of the paper's sentences is weighed)
    assert "we introduce Kinetix" in quoted, a.text
    assert "Our trained agent exhibits" in quoted or "fine-tuning this general agent on tasks of interest shows" in quoted, a.text


def test_retrieve_reads_a_request_as_ask_does(full_rag) -> None:
    # RAG.retrieve searched "I'm looking for work on … What is there?" word for word; ask restated it
    asked = "I'm looking for work on how LeanAgent proves theorems. What is there?"
    plain = "Which papers how LeanAgent proves theorems?"
    got = [s.paper_id for s in full_rag.retrieve(asked).sources]
    assert got == [s.paper_id for s in full_rag.retrieve(plain).sources] and got, got


def test_a_why_question_whose_crux_no_paper_states_lists_no_paper_for_what_is_left(full_rag) -> None:
    # "ignore" and "memorized" are in no candidate: what was left ("LLMs", "context", "answer") listed papers on
    # long contexts as the explanation
    a = full_rag.ask("Why do LLMs sometimes ignore the context they're given and answer from what they memorized "
                     "in pretraining, or else blindly follow a wrong context?")
    assert a.refused and not a.items, a.text
    # a why-question whose premise a paper states, missing only a setting ("from few samples"), is answered
    a = full_rag.ask("Why can deep networks learn a composition of functions from few samples when shallow ones cannot?")
    assert not a.refused and a.items[0].title.startswith("How DNNs break the Curse of Dimensionality"), a.text


def test_names_in_a_list_of_examples_are_not_required(full_rag) -> None:
    # "(SG-MCMC, variational inference, ensembles, Bayesian layers)": no abstract writes "SG-MCMC", and the
    # question was refused for it although Bayesian deep learning papers answer it
    a = full_rag.ask("How do recent papers make Bayesian deep learning practical, i.e. approximating the posterior "
                     "over network weights or functions (SG-MCMC, variational inference, ensembles, Bayesian layers) "
                     "to get useful uncertainty estimates?")
    assert not a.refused and len(a.items) >= 3, a.text
    assert any("Bayesian" in t for t in _titles(a)), a.text


def test_benchmarks_a_question_sets_aside_are_neither_listed_nor_related(full_rag) -> None:
    # "rather than only benchmarking tool use": tau-bench and BigCodeBench were listed
    a = full_rag.ask("Which papers improve LLMs' ability to call tools, APIs or functions, e.g. by fine-tuning on "
                     "synthesized tool-use data, refining tool documentation or better tool planning, rather than only "
                     "benchmarking tool use?")
    assert not a.refused and len(a.items) >= 3, a.text
    assert not [t for t in _titles(a) + [it.title for it in a.related] if "bench" in t.lower()], a.text


def test_questions_framed_in_the_askers_own_words_find_the_papers(full_rag) -> None:
    # each was refused or listed papers that answered nothing: "cast … as a multi-armed bandit" needed the
    # word "cast"; "that enforce or improve fairness" needed "enforce"; "ways to train or obtain embedding
    # models" needed "ways to train"; "without standard end-to-end backpropagation" ranked any paper on
    # training networks; "generative models that output whole graphs" needed "whole"
    cases = [
        ("Which papers cast a practical ML problem (model selection, data valuation, batch selection) as a "
         "multi-armed bandit and solve it with bandit algorithms?", "ADAM Optimization with Adaptive Batch Selection"),
        ("Which papers propose algorithms that enforce or improve fairness across sensitive groups?",
         "A Generic Framework for Conformal Fairness"),
        ("Which papers propose better ways to train or obtain embedding models, dense retrievers or rerankers?",
         "NV-Embed"),
        ("How are people training neural networks without standard end-to-end backpropagation, e.g. with local "
         "learning rules, forward-forward or predictive coding?", "DeeperForward"),
        ("Which papers propose generative models that output whole graphs?", "Generating Graphs via Spectral Diffusion"),
    ]
    for question, title in cases:
        a = full_rag.ask(question)
        assert not a.refused and any(t.startswith(title) for t in _titles(a)), (question, a.text)
        assert_every_cited_sentence_supported(a)
    # a paper on training networks that never names backpropagation or an example is not listed
    a = full_rag.ask("How are people training neural networks without standard end-to-end backpropagation, e.g. "
                     "with local learning rules, forward-forward or predictive coding?")
    for it in a.items:
        text = (it.title + " " + next(s.text for s in a.sources if s.paper_id == it.paper_id)).lower()
        assert re.search(r"backprop|forward-forward|predictive coding|local learning", text), it.title


def test_a_why_question_about_two_things_needs_the_rarest_word_of_either(full_rag) -> None:
    # "From Attention to Activation" explains the first token's attention and outlier activations without
    # the word "sinks", the rarest of the whole question, which it was refused for
    a = full_rag.ask("Why do attention sinks (huge attention on the first token) and massive outlier activations "
                     "show up in transformer LLMs?")
    titles = _titles(a)
    assert any(t.startswith("From Attention to Activation") for t in titles), a.text
    assert any(t.startswith("When Attention Sink Emerges") for t in titles), a.text
    assert_every_cited_sentence_supported(a)


def test_a_first_paper_that_states_the_question_in_other_words_is_admitted_when_words_admit_few(full_rag) -> None:
    # "Tree-Wasserstein Distance … with a Latent Feature Hierarchy" embeds a hierarchy in a tree metric, not
    # "in hyperbolic space": no paper met the words, and the question was refused
    from rag import RAG

    q = "Which papers embed data or build neural network layers in hyperbolic space to capture hierarchical structure?"
    a = full_rag.ask(q)
    assert not a.refused and any(t.startswith("Tree-Wasserstein Distance") for t in _titles(a)), a.text
    assert_every_cited_sentence_supported(a)
    words_only = RAG(full_rag.settings.model_copy(update={"answer": full_rag.settings.answer.model_copy(
        update={"paraphrase_similarity": 0.0})}))
    assert words_only.ask(q).refused  # the known-bad configuration: words alone
    # when the words admit enough of the first candidates, nothing is admitted in other words
    q = "Which papers propose defenses against backdoor attacks?"
    assert _titles(full_rag.ask(q)) == _titles(words_only.ask(q))


def test_a_list_question_that_names_what_papers_build_on_is_not_a_question_about_that_paper(full_rag) -> None:
    # "Segment Anything" names SAM 2's paper; the question asks for the papers that build on it, and was
    # refused because "the abstract of the paper it names does not say this"
    a = full_rag.ask("Which papers build on Segment Anything (SAM / SAM 2), e.g. lifting its 2D masks into 3D "
                     "perception or making a faster SAM-style promptable segmenter?")
    assert not a.refused and len(a.items) >= 3, a.text
    assert sum("SAM" in t for t in _titles(a)) >= 3, a.text
    # a name in an aside that sets it aside is not what the question asks about (it was refused: "None of
    # the papers closest to the question mentions “EHR”")
    a = full_rag.ask("What ICLR 2025 work evaluates or improves language models on medical knowledge and medical "
                     "question answering, text only (I'm not after radiology images or EHR tables)?")
    assert not a.refused and a.items, a.text


def test_the_searchs_first_papers_stay_beside_a_short_list_of_a_long_question(full_rag) -> None:
    # "when the agent can't see the full state" was read as a constraint no partial-observability paper
    # states, and the question was refused; the search's first candidate, an off-policy evaluation paper on
    # POMDPs, was dropped with it. The search's first are shown beside the list, never counted in it.
    from rag import RAG
    from rag.text.citations import CLOSEST_HEADING

    q = ("RL when the agent can't see the full state: which papers handle partial observability (POMDPs, agents "
         "with only local or egocentric views, policies that need memory)?")
    a = full_rag.ask(q)
    first = [s.paper_id for s in full_rag.retrieve(q).sources[:3]]
    shown = {it.paper_id for it in a.items + a.related + a.closest}
    assert set(first) <= shown, a.text
    # (it is listed since the search ranks it first for the example "POMDPs"; beside the list before)
    assert any(it.title.startswith("Statistical Tractability of Off-policy Evaluation") for it in a.items + a.closest), a.text
    assert (CLOSEST_HEADING in a.text) == bool(a.closest) and not {it.paper_id for it in a.closest} & set(a.matching_ids)
    assert_every_cited_sentence_supported(a)
    off = RAG(full_rag.settings.model_copy(update={"answer": full_rag.settings.answer.model_copy(
        update={"search_top": 0})}))
    assert not off.ask(q).closest  # the configuration without them: the first candidate is dropped
    # a short question is read whole: its search's first are not added ("defend diffusion models against
    # membership inference attacks" had a backdoor defence beside it)
    assert not full_rag.ask("Which papers defend diffusion models against membership inference attacks?").closest


def test_a_list_the_reading_cannot_admit_by_keeps_the_searchs_first(full_rag) -> None:
    # read as "move signal frequency domain central part", the list was cut to the four best-scoring
    # sentences, dropping the search's first (a neural compressor of EEG: "neural" of the aside "Fourier
    # neural operators" does not set it aside)
    q = ("Which papers move the signal into the frequency domain (Fourier, wavelet or DCT-style transforms) as a "
         "central part of the method, whether for time series, images, video, audio or EEG? I'm not interested in "
         "Fourier neural operators for solving PDEs.")
    a = full_rag.ask(q)
    first = [s.paper_id for s in full_rag.retrieve(q).sources[:3]]
    assert set(first) <= {it.paper_id for it in a.items}, a.text
    assert any(t.startswith("The Case for Cleaner Biosignals") for t in _titles(a)), a.text
    assert a.searched and "closest to the question" in a.text.split("\n")[0]  # the UI's table says so too


def test_a_name_asked_for_in_its_style_is_not_required(full_rag) -> None:
    # "MaskGIT-style masked generative transformers" was refused: "None of the papers closest to the
    # question mentions “MaskGIT”"
    a = full_rag.ask("Papers that generate non-text data (images, speech, human motion and so on) with MaskGIT-style "
                     "masked generative transformers, i.e. training to predict masked tokens and then filling tokens "
                     "in parallel?")
    assert "MaskGIT" not in a.text.split("\n")[0] and (a.items or a.related or a.closest), a.text


@pytest.mark.parametrize(("question", "title", "set_aside"), [
    ("Which papers propose equivariant networks, excluding molecules, proteins and crystals?",
     "Equivariant Masked Position Prediction for Efficient Molecular Representation", True),
    ("Which papers propose equivariant networks, excluding molecules, proteins and crystals?",
     "Learning Color Equivariant Representations", False),
    ("Which papers move signals into the frequency domain? Not Fourier neural operators for solving PDEs.",
     "Fourier Neural Operators for Solving PDEs on Irregular Grids", True),
    ("Which papers move signals into the frequency domain? Not Fourier neural operators for solving PDEs.",
     "The Case for Cleaner Biosignals: High-fidelity Neural Compressor", False),  # "neural" alone
    # a contrast of approach, examples of what is wanted, and a direction are no kind set aside
    ("Which papers defend LLMs against backdoors, not new backdoor attacks?", "Backdoor Defense for LLMs", False),
    ("Who uses optimal control other than for robots, e.g. guiding diffusion models?",
     "Guiding Diffusion Models with Optimal Control", False),
    ("Which papers benchmark LLM agents, not papers that only introduce an environment?", "An Environment for Agents", False),
    # "provers" of the aside, "Proving" of the title: one word in two forms ("LeanAgent … Theorem Proving" was listed
    # for "autoformalization …, not LLM provers that search for proofs of theorems")
    ("Which papers do autoformalization of math statements into Lean, not LLM provers that search for proofs of "
     "theorems?", "LeanAgent: Lifelong Learning for Formal Theorem Proving", True),
    ("Which papers do autoformalization of math statements into Lean, not LLM provers that search for proofs of "
     "theorems?", "Herald: A Natural Language Annotated Lean 4 Dataset", False),
    ("Which papers generate art, not artificial data?", "Articulated Object Generation", False),  # (five letters at least)
])
def test_a_paper_whose_title_names_what_the_question_excludes_is_set_aside(question, title, set_aside) -> None:
    from rag.grounding.admission import set_aside as setting_aside
    from rag.text.phrasing import restate
    from rag.text.reading import read

    assert setting_aside(read(restate(question)), {1: _paper(title, "We propose a method.")}) == ({1} if set_aside else set())


def test_an_excluded_kind_is_not_listed(full_rag) -> None:
    # "excluding molecules, proteins and crystals" listed "Equivariant Masked Position Prediction for
    # Efficient Molecular Representation"
    a = full_rag.ask("Which papers propose equivariant neural networks, excluding molecules, proteins and crystals?")
    assert a.items and not any("Molecul" in t for t in _titles(a) + [it.title for it in a.related + a.closest]), a.text
    # ... though the rules list one without the exclusion
    from rag import RAG

    rules = RAG(full_rag.settings.model_copy(update={"answer": full_rag.settings.answer.model_copy(
        update={"relevance_model": "off"})}))
    assert any("Molecul" in t for t in _titles(rules.ask("Which papers propose equivariant neural networks?")))


def test_a_paper_with_one_example_the_question_gives_is_what_it_asks(full_rag) -> None:
    # "ML for environmental science, things like carbon flux, …" was refused: no abstract "contains what the
    # question asks" when the whole question (every example, and what it sets aside) was the ask
    a = full_rag.ask("Got anything on ML for environmental science, things like carbon flux, air pollution, "
                     "climate-science QA or biodiversity monitoring? I've already been through the "
                     "weather-forecasting papers, so skip those.")
    shown = [it.title for it in a.items + a.closest]
    assert not a.refused and any(t.startswith("CarbonSense") for t in shown), a.text
    assert not any("Weather" in t for t in shown), a.text


def test_a_second_thing_asked_for_is_no_constraint_of_the_first(full_rag) -> None:
    # "Did anyone at ICLR 2025 work on zero-shot coordination or on adapting to unfamiliar teammates on the
    # fly?" was refused: every zero-shot-coordination paper was "not: on adapting unfamiliar teammates on fly"
    a = full_rag.ask("We're building agents that have to cooperate with partners they never trained with, whether "
                     "other AIs or people. Did anyone at ICLR 2025 work on zero-shot coordination or on adapting to "
                     "unfamiliar teammates on the fly?")
    assert not a.refused and any("Zero-Shot Coordination" in t for t in _titles(a)), a.text


def test_a_claim_about_a_described_paper_is_checked_against_that_paper(full_rag) -> None:
    # the claim sentence was dropped and "Why do the authors think simple Adam beat everything else?" listed
    # five Adam papers as the closest; the AlgoPerf analysis reports Shampoo and Schedule-Free AdamW winning
    a = full_rag.ask("In the analysis of the first AlgoPerf training-algorithms competition, plain AdamW with a "
                     "tuned cosine schedule won both the external-tuning and the self-tuning rulesets. Why do the "
                     "authors think simple Adam beat everything else?")
    assert a.refused and not a.items, a.text
    assert [it.title for it in a.related][:1] == [
        "Accelerating neural network training: An analysis of the AlgoPerf competition"], a.text


def test_a_question_whose_constraint_no_abstract_states_as_worded_does_not_open_by_saying_nothing_was_found(full_rag) -> None:
    # "I could not find ICLR 2025 papers …" opened answers whose closest papers were the right ones
    # (readers: "wrongly says nothing answers the question, while listing exactly the right papers")
    from rag.prompts import REFUSAL

    a = full_rag.ask("I tune hyperparameters on small proxy models and want them to carry over when I scale up. "
                     "Any ICLR 2025 work on muP-style parametrizations, hyperparameter transfer across width or depth?")
    assert a.refused and not a.items and a.related, a.text
    assert REFUSAL not in a.text, a.text
    first = a.text.split("\n")[0]
    assert first == ("The papers closest to “muP-style parametrizations, hyperparameter transfer across width or "
                     "depth”, none stating all of it in these words:"), a.text
    assert any(it.missing for it in a.related) and any("u-" in it.title for it in a.related), a.text


def test_a_setting_every_paper_words_otherwise_lists_the_papers_that_meet_the_rest(full_rag) -> None:
    # refused as "No ICLR 2025 abstract here answers …", with the right papers as the closest: every paper
    # on plasticity loss says "continual learning" or "non-stationary", none "non-stationary data streams"
    a = full_rag.ask("Why do neural networks lose plasticity when trained on non-stationary data streams, and what "
                     "remedies do papers propose (for example neuron resets, spectral regularization, special "
                     "activation functions, or growing the network)?")
    assert not a.refused and len(a.items) >= 2, a.text
    first = a.text.split("\n")[0]
    assert first.startswith("No abstract here states “") and first.endswith("meet the rest of the question:"), a.text
    assert any("Plasticity" in t or "Plastic" in t for t in _titles(a)), a.text
    assert_citations_valid(a)
    # a technique no paper states is no such setting: that premise is still named first
    b = full_rag.ask("Which ICLR 2025 papers use EEG brain-computer interfaces to control robot arms, and how "
                     "accurate is the control?")
    assert b.refused and not b.items, b.text


def test_a_name_offered_as_another_option_is_not_required(full_rag) -> None:
    # "(or an EMA copy of itself)" refused the question: "None of the papers closest to the question mentions “EMA”"
    a = full_rag.ask("Where does self-distillation show up this year, with a model (or an EMA copy of itself) "
                     "serving as its own teacher?")
    assert "EMA" not in a.text.split("\n")[0], a.text
    assert any("Self-Distillation" in it.title for it in a.items + a.related + a.closest), a.text


def test_a_how_or_why_question_about_one_named_paper_quotes_more_of_its_how_and_why(full_rag) -> None:
    # the answer quoted what Cut Cross-Entropy saves, and readers missed how it does it (the kernel); a
    # why-question about "Equivariant Denoisers Cannot Copy Graphs" quoted the fix, not why they fail
    a = full_rag.ask("How does Cut Cross-Entropy, from 'Cut Your Losses in Large-Vocabulary Language Models', compute "
                     "the training loss without materializing the huge logit matrix, and how does it keep throughput up?")
    assert [it.title for it in a.items] == ["Cut Your Losses in Large-Vocabulary Language Models"], a.text
    assert "log-sum-exp" in a.text and len(a.items[0].sentences) >= 3, a.text
    # ... and how it keeps throughput up, the question's second part (four sentences left it out: §5x)
    assert "To improve the throughput of CCE" in a.text and "only computes the logit for the correct token" in a.text, a.text
    b = full_rag.ask("In 'Equivariant Denoisers Cannot Copy Graphs: Align Your Graph Diffusion Models', why do standard "
                     "permutation-equivariant denoisers fail at graph-to-graph tasks like retrosynthesis?")
    assert len(b.items) == 1 and "inability to break symmetries" in b.text, b.text
    assert_every_cited_sentence_supported(a)
    assert_every_cited_sentence_supported(b)
    # "why do the authors conclude …" is answered by what they found: the quote was the question they asked,
    # an analogy and a method, without "Our experiments reveal overwhelming evidence of non-identifiability"
    c = full_rag.ask("Why do the authors of 'Everything, Everywhere, All at Once: Is Mechanistic Interpretability "
                     "Identifiable?' conclude that mechanistic explanations of a network are generally not unique?")
    assert len(c.items) == 1 and "overwhelming evidence of non-identifiability" in c.text, c.text
    assert_every_cited_sentence_supported(c)


def test_a_field_typed_with_benchmarks_last_lists_benchmarks(full_rag) -> None:
    # "hallucination benchmarks" listed methods (VTI, CHiP) beside the benchmarks: the kind was not read
    a = full_rag.ask("hallucination benchmarks")
    assert a.reading is not None and "must introduce a benchmark or dataset" in a.reading.note(), a.text
    titles = _titles(a)
    assert any("HALU" in t or "HalluEdit" in t or "AVHBench" in t for t in titles), a.text
    assert not any(t.startswith("Reducing Hallucinations in Large Vision-Language Models via Latent Space") for t in titles)


def test_papers_that_use_a_technique_in_what_they_do_are_listed(full_rag) -> None:
    # one paper was listed: DiffPuter ("a tailored diffusion model combined with the Expectation-Maximization
    # (EM) algorithm") and ISE ("ISE employs the Expectation-Maximization (EM) algorithm") name EM once
    from rag import RAG

    q = "Who's still using expectation-maximization?"
    a = full_rag.ask(q)
    assert any(t.startswith("DiffPuter") for t in _titles(a)), a.text
    # The rules list ISE too. The relevance model puts it at the threshold: listed on one store (0.47),
    # not on a freshly ingested one, where the search also ranks it below the fifth (a known loss: docs/relevance.md §5q)
    rules = RAG(full_rag.settings.model_copy(update={"answer": full_rag.settings.answer.model_copy(
        update={"relevance_model": "off"})}))
    titles = _titles(rules.ask(q))
    assert any(t.startswith("DiffPuter") for t in titles) and any(
        t.startswith("Iterative Substructure Extraction") for t in titles), titles


def test_what_a_question_sets_aside_is_not_listed_nor_named(full_rag) -> None:
    # "for models that are NOT large language models" listed LLM unlearning papers first (the title of one
    # was taken as named by the question, and "Knowledge Unlearning for LLMs" wrote the acronym)
    a = full_rag.ask("Machine unlearning methods for models that are NOT large language models: deleting specific "
                     "training points, classes or tasks from image classifiers, GNNs, random forests, topic models or "
                     "diffusion models.")
    titles = _titles(a)
    assert titles and not any(re.search(r"\bLLMs?\b|Large Language Model|Language Models", t) for t in titles), a.text
    assert any("Random Forest" in t for t in titles), a.text
    # "Code generation methods are not what I'm after" listed BigCodeBench ("generation" went as a direction)
    b = full_rag.ask("Code models that read rather than write: which papers are about understanding existing code, "
                     "e.g. decompiling or analysing assembly? Code generation methods are not what I'm after.")
    assert b.items and not any("Code Generation" in t for t in _titles(b)), b.text


def test_examples_after_a_colon_and_used_inside_ask_for_nothing_more(full_rag) -> None:
    # refused: "None of the papers closest to the question mentions “MMD”" (an example after a colon)
    a = full_rag.ask("Is classic kernel machinery still alive at ICLR? I'm looking for papers where an explicit kernel "
                     "is a core ingredient: RKHS function classes, kernel ridge regression, kernel density estimates, "
                     "MMD or kernel conditional-independence tests, WL graph kernels.")
    assert not a.refused and len(a.items) >= 5, a.text
    assert sum("Kernel" in t or "RKHS" in t for t in _titles(a)) >= 4, a.text
    # "used inside a learning method" hedged that no abstract states it, for the three MPC papers it listed
    b = full_rag.ask("model predictive control / receding-horizon planning (MPC, MPPI, rolling-horizon optimization) "
                     "used inside a learning method")
    assert not b.text.startswith("No ICLR 2025 abstract"), b.text
    assert any(t == "Bootstrapped Model Predictive Control" for t in _titles(b)), b.text


def test_a_why_question_quotes_what_an_announcement_announces_and_rating_systems_are_answered(full_rag) -> None:
    # the quote was "In this work, we provide a comprehensive explanation for this issue.", without the
    # explanation ("We find that PPL overlooks key tokens …")
    a = full_rag.ask("In 'What is Wrong with Perplexity for Long-context Language Modeling?', why do the authors say plain "
                     "perplexity is a misleading yardstick for long-context ability, and what do they propose instead?")
    assert "overlooks key tokens" in a.text, a.text
    assert_every_cited_sentence_supported(a)
    # "rating or ranking systems" was read as asking for the papers' review ratings, and refused
    b = full_rag.ask("Is there ICLR 2025 work on better rating or ranking systems built from pairwise comparisons for "
                     "LLM evaluation? Papers that just use an LLM as the judge aren't what I need.")
    assert "reviews" not in b.text, b.text
    shown = [it.title for it in b.items + b.related + b.closest]
    assert any(t.startswith("Polyrating") or t.startswith("A Statistical Framework for Ranking") for t in shown), b.text


def test_papers_tested_on_a_kind_of_data_are_listed_with_the_sentence_that_says_so(full_rag) -> None:
    # one paper was listed: the others show one result on single-cell data, and one quote did not say so
    a = full_rag.ask("Which papers develop or test methods on single-cell data, such as scRNA-seq or single-cell "
                     "perturbation screens?")
    assert len(a.items) >= 5, a.text
    for it in a.items:
        assert any(re.search(r"single[- ]cell|scRNA", s, re.I) for s in [it.title, *it.sentences]), it
    assert_every_cited_sentence_supported(a)


def test_personalization_asked_this_way_lists_no_concept_erasure(full_rag) -> None:
    # "Which papers add concepts this way?" listed concept-erasure papers first, which the asker set aside
    a = full_rag.ask("I want to teach a text-to-image model new subjects or styles (personalization, multi-concept "
                     "customization, reference-based stylization). Which papers add concepts this way? Concept erasure "
                     "and anti-customization protection are the opposite of what I need.")
    titles = _titles(a)
    assert any(t.startswith("PaRa") for t in titles), a.text
    assert not any(re.search(r"Eras|Prune|Unlearn", t) for t in titles), a.text


def test_a_first_candidate_whose_own_sentences_name_only_its_method_is_listed(full_rag) -> None:
    """CR-CTC says "speech recognition" in its title and background, while its own sentences name its
    method (consistency between two CTC distributions): the search ranks it among the first, so it is
    listed, not left out."""
    answer = full_rag.ask("automatic speech recognition")
    assert any(t.startswith("CR-CTC") for t in _titles(answer)), _titles(answer)
    cr = next(it for it in answer.items if it.title.startswith("CR-CTC"))
    assert any("CTC" in s for s in cr.sentences)  # its quote states what it does


def test_a_question_about_one_named_paper_may_be_answered_by_any_of_its_sentences(full_rag) -> None:
    """A why-question about one paper's conclusion is answered by its finding, which shares few words
    with the question: the named paper's own sentences are all weighed, not only the three its words
    favour (those were the study's setup: "we characterize its regret …")."""
    a = full_rag.ask("In 'The Value of Sensory Information to a Robot', why do the authors conclude that withholding "
                     "observations from a trained robot often hurts surprisingly little, and what decides when "
                     "sensing does matter?")
    (item,) = a.items
    assert any(s.startswith("We find that sensory information is surprisingly rarely task-critical")
               for s in item.sentences), item.sentences
    b = full_rag.ask("How does Sylber turn raw speech into syllable-level tokens without any text labels, and how "
                     "compact is the resulting tokenization?")
    (item,) = b.items
    assert any("compact sequence of tokens" in s for s in item.sentences), item.sentences


def test_a_search_box_phrase_lists_the_papers_that_state_all_of_it(full_rag) -> None:
    """"spatial audio generation" listed twelve papers, ten of them audio generation that is not spatial:
    past the search's first three, a paper lacking a third of the phrase is related, saying what it lacks."""
    a = full_rag.ask("spatial audio generation")
    titles = _titles(a)
    assert titles[:2] == ["ViSAGe: Video-to-Spatial Audio Generation",
                          "Both Ears Wide Open: Towards Language-Driven Spatial Audio Generation"], a.text
    # past the search's first three (ViSAGe and Both Ears Wide Open among them), every listed paper says
    # "spatial"; the first three may hold one that does not (the order differs a little between stores)
    papers = {s.paper_id: s for s in a.sources}
    lacking = [it.title for it in a.items if "spatial" not in f"{papers[it.paper_id].title} {papers[it.paper_id].text}".lower()]
    assert len(lacking) <= 1, a.text
    assert a.related and all(r.missing == ["spatial"] for r in a.related), a.related


def test_a_why_question_about_a_named_papers_argument_is_answered_from_it(full_rag) -> None:
    """"why do the authors argue that length control … are not enough": the named paper says so in its
    motivation and its finding, in its own words ("even though several mechanisms have been developed to
    control length and disentangle style …"); it was refused as a false premise (SS18, read blind)."""
    a = full_rag.ask("In 'Cheating Automatic LLM Benchmarks: Null Models Achieve High Win Rates', why do the authors "
                     "argue that length control and style disentanglement are not enough to stop AlpacaEval-style "
                     "automatic benchmarks from being gamed?")
    assert not a.refused and _titles(a) == ["Cheating Automatic LLM Benchmarks: Null Models Achieve High Win Rates"], a.text
    # a claim no abstract states, about no paper the question names, is still named as unsupported
    b = full_rag.ask("Which paper shows that standard E(3)-equivariant GNNs can distinguish chiral molecules from "
                     "their mirror images?")
    assert b.refused and "No ICLR 2025 abstract here states" in b.text, b.text


@pytest.mark.parametrize(
    ("question", "title"),
    [
        # a list of examples that ends "and the like" names nothing no paper mentions ("INT8" was "mentioned by
        # none of the papers closest to the question")
        ("Which papers make low-bit weight-and-activation quantization of LLMs work by smoothing or rotating away "
         "activation outliers (W4A4, INT8 and the like)?", ("Rotated Runtime Smooth", "SVDQuant", "Quamba")),
        # "Which papers handle that, rather than …?" asks of the sentence before it ("multi-epoch" in the contrast
        # was read as asking for the papers' epochs: "Abstracts do not give hyper-parameters")
        ("Online continual learning: data arrives as a stream and each sample is seen once. Which papers handle "
         "that, rather than multi-epoch training?", ("Budgeted Online Continual Learning", "Federated Continual")),
        # a list of examples names no paper: "the abstract of the paper it names does not say this" was the answer
        ("I'm after neural fields shared across a whole dataset of signals (conditional neural fields with latent "
         "modulations, hypernetwork-generated INRs, meta-learned initialisations) instead of one network per "
         "signal. What is there?", ("Meta-Continual Learning of Neural Fields", "Grounding Continuous")),
        # examples after a contrast are of what is asked, not of what the contrast sets aside
        ("Which papers apply diffusion models to medical data for restoration or inference rather than "
         "synthesizing training images, e.g. predicting spatial gene expression from histology slides or "
         "reconstructing ECG from partial measurements?",
         ("Diffusion Generative Modeling for Spatially Resolved Gene Expression",)),
    ],
)
def test_a_request_is_not_refused_for_what_its_examples_or_contrast_say(full_rag, question, title) -> None:
    a = full_rag.ask(question)
    assert not a.refused and a.items, a.text
    assert any(it.title.startswith(title) for it in a.items), a.text


def test_the_relevance_model_lists_what_the_words_miss_and_drops_what_only_holds_them(full_rag) -> None:
    """A blind reader scored this 2: the words listed a Q-learning LLM agent and MotherNet ("zero-shot",
    "training") while the hyperparameter-free optimizer was only beside the list. The relevance model
    (rag.grounding.scoring) lists that one and drops MotherNet; the rules alone are the known-bad configuration."""
    from rag import RAG

    q = ("I'd like to stop sweeping learning rates. Which papers make training work without step-size or schedule "
         "tuning, e.g. hyperparameter-free (differentially private) optimization, SGD variants that reach optimal "
         "rates over a wide range of learning rates, adaptive backtracking line search, or fully self-tuning "
         "training algorithms?")
    a = full_rag.ask(q)
    assert any(t.startswith("Towards hyperparameter-free optimization") for t in _titles(a)), a.text
    assert not [t for t in _titles(a) if t.startswith("MotherNet")], a.text
    assert_every_cited_sentence_supported(a)
    rules = RAG(full_rag.settings.model_copy(update={"answer": full_rag.settings.answer.model_copy(
        update={"relevance_model": "off"})}))
    b = rules.ask(q)
    assert [t for t in _titles(b) if t.startswith("MotherNet")], b.text
    assert not [t for t in _titles(b) if t.startswith("Towards hyperparameter-free optimization")], b.text


def test_a_question_read_loosely_lists_the_papers_the_relevance_model_finds_likely(full_rag) -> None:
    # A how-question read loosely (its words rank, none excludes) showed the papers whose best sentence
    # scored highest: one of three learned dynamics from snapshots; the relevance model finds the others
    from rag import RAG

    q = ("How can you learn a dynamical model when all you observe are unpaired population snapshots at a few time "
         "points, with no tracked individual trajectories (cells destroyed by measurement, cross-sectional surveys, etc.)?")
    titles = _titles(full_rag.ask(q))
    snapshots = ("Learning stochastic dynamics from snapshots", "Meta Flow Matching", "Modeling Complex System Dynamics")
    assert sum(t.startswith(snapshots) for t in titles) >= 2, titles
    # known-bad: the relevance model off, the loosely read question's highest-scoring sentences decide
    rules = RAG(full_rag.settings.model_copy(update={"answer": full_rag.settings.answer.model_copy(
        update={"relevance_model": "off"})}))
    assert sum(t.startswith(snapshots) for t in _titles(rules.ask(q))) < 2


def test_the_nearest_chunks_are_the_exact_nearest_whatever_the_process(full_rag) -> None:
    """The index's search is approximate: asked for exactly the 250 chunks a question keeps, its last few
    differed between processes (the 250th cosine 0.3543 or 0.3547, the exact one 0.3554), and "Why does
    fine-tuning LLMs on narrow data compromise safety?" listed a third paper in one run and not the next. The
    chunks kept are the exact nearest, checked against every stored vector."""
    import numpy as np

    store = full_rag.engine.retriever.store
    everything = store.collection.get(include=["embeddings"])
    ids, vectors = everything["ids"], np.asarray(everything["embeddings"], dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    embed = full_rag.engine.retriever.embed_model
    for question in ("Why does fine-tuning LLMs on narrow data compromise safety?", "multi-hop RAG",
                     "Which papers defend vision-language models against adversarial image perturbations?"):
        query = np.asarray(embed.get_query_embedding(question), dtype=np.float64)
        query /= np.linalg.norm(query)
        cos = vectors @ query
        exact = np.sort(cos)[::-1][:250]
        found = store.nearest_chunks(query, 250)
        assert len(found) == 250
        got = np.array([c for _, c in found])
        assert np.allclose(got, exact, atol=1e-4), (question, got[-5:], exact[-5:])
    assert len(ids) == store.count_chunks()


def test_a_why_question_about_a_comparison_no_abstract_states_names_the_comparison(full_rag) -> None:
    # with a close paper on KANs, the refusal said "No ICLR 2025 abstract here answers “Why do …?”": the
    # question, not what it takes for granted (and the eval did not count the false premise as named)
    from evals.relevance import listed_of

    a = full_rag.ask("Why do Kolmogorov-Arnold Networks (KANs) outperform Transformers on large-scale language "
                     "modeling, as ICLR 2025 papers report?")
    first = a.text.split("\n")[0]
    assert a.refused and not a.items, a.text
    assert first.startswith("No ICLR 2025 abstract here states “Kolmogorov-Arnold Networks (KANs) outperform "
                            "Transformers on large-scale language modeling”."), first
    assert listed_of(a).premise_named


def test_a_refusal_shows_no_related_paper_the_search_ranks_far_down(full_rag) -> None:
    # "keep a user's input hidden from the server …" showed "Samba: … Hybrid State Space Models" (its "hidden" state)
    # as the closest paper, and the private-inference papers after it under "Also among the search's first"
    a = full_rag.ask("Which papers keep a user's input hidden from the server at inference or query time using "
                     "cryptographic protocols (encrypted transformer inference, private information retrieval), rather "
                     "than protecting the training data with differential privacy?")
    titles = [it.title for it in [*a.items, *a.related, *a.closest]]
    assert a.refused and not any(t.startswith("Samba") for t in titles), a.text
    assert any(t.startswith("CipherPrune") for t in titles) and any(t.startswith("Pacmann") for t in titles), a.text
    from rag.text.citations import CLOSEST_ALONE_HEADING, CLOSEST_HEADING

    assert (CLOSEST_ALONE_HEADING in a.text) == (not a.related) and (CLOSEST_HEADING in a.text) == bool(a.related), a.text


def test_a_story_whose_request_only_points_back_is_searched_as_a_description(full_rag) -> None:
    # "… Is there ICLR 2025 work that helps with either problem?" was refused with the whole story as what "no
    # abstract states"; the switching-causal-relations paper is among the closest to the story
    a = full_rag.ask("I maintain causal graphs for a manufacturing line. New sensors get installed every few weeks and "
                     "rerunning structure learning from scratch over all variables is getting expensive. On top of that, "
                     "operators switch the line between modes and some causal links seem to appear or vanish depending "
                     "on the mode. Is there ICLR 2025 work that helps with either problem?")
    assert not a.refused and "Systems with Switching Causal Relations: A Meta-Causal Perspective" in _titles(a), a.text


@pytest.mark.parametrize("question", [
    "Which papers speed up the prefill stage of long-context LLM inference, i.e. processing the long prompt before "
    "the first output token, as opposed to making the token-by-token decoding phase faster?",
    "Has anyone done continual or incremental learning by training separate modules (LoRA adapters, skill modules, "
    "checkpoints) and then merging or composing them in weight space, instead of fine-tuning one model sequentially on "
    "each new task?",
])
def test_a_list_shows_beside_it_only_related_papers_the_search_ranks_first(full_rag, question: str) -> None:
    # related papers from far down the search padded lists ("Self-Normalized Resets for Plasticity", a decoding-
    # phase paper beside prefill papers): past the fifth, 13 of 116 were on the writers' lists (§5y)
    from rag.text.phrasing import restate

    a = full_rag.ask(question)
    assert a.items and not a.refused, a.text
    order = [s.paper_id for s in full_rag.engine.retriever.retrieve(restate(question), {}).sources]
    assert all(it.paper_id in order[:5] for it in a.related), (a.text, order[:5])
    assert not any(t.startswith(("Self-Normalized Resets", "Radar: Fast Long-Context Decoding")) for t in
                   [it.title for it in a.related]), a.text


def test_when_nothing_meets_a_list_request_the_search_s_first_match_is_not_shown_after_weaker_papers(full_rag) -> None:
    # PIED (experimental design with PINNs) is the search's first for the question; it came after three papers "not
    # stating: using modern ml" (LLM-driven Bayesian optimization, a pseudo-coreset), under "Also among the search's
    # first matches", and readers marked it "pushed down"
    a = full_rag.ask("Has anyone done Bayesian optimal experimental design with modern ML, i.e. choosing sensor "
                     "placements or experiment parameters that maximize expected information gain, for example to pin "
                     "down unknown PDE parameters?")
    assert a.refused and not a.items and not a.closest, a.text
    assert a.related[0].title.startswith("PIED") and not a.related[0].missing, a.text
    assert a.text.split("\n")[0].endswith("none stating all of it in these words:"), a.text
    assert any(it.missing for it in a.related[1:]), a.text


def test_two_examples_the_search_ranks_the_same_paper_first_for_find_two_papers(full_rag) -> None:
    # "decoding across cell-type populations" and "circuit models built from many neuronal subtypes" both ranked the
    # multi-session decoding paper first; the barrel-cortex model "across 13 neuronal subtypes" (the search's second
    # for the third example) was missing
    a = full_rag.ask("Which papers model neural recordings or cortical circuits while explicitly distinguishing neuron "
                     "cell types (e.g. inferring a recorded neuron's cell type, decoding across cell-type populations, or "
                     "circuit models built from many neuronal subtypes)?")
    titles = [it.title for it in a.items]
    assert any(t.startswith("Biologically Constrained Barrel Cortex Model") for t in titles), a.text
    assert any(t.startswith("Multi-session, multi-task neural decoding") for t in titles), a.text


def test_a_refusal_shows_no_paper_about_the_topic_from_far_down_the_search(full_rag) -> None:
    # beside FIRING-Net, the closest papers to "remove noise from speech" were an Adam SDE paper, image watermark
    # removal and diffusion initial noise, each "about" noise and ranked past the search's tenth
    question = ("Papers that remove noise from speech (speech enhancement / denoising), not ones that add noise, "
                "mixtures or perturbations to audio to make models robust or to stress-test them.")
    a = full_rag.ask(question)
    first_ten = [s.paper_id for s in full_rag.retrieve(question).sources[:10]]
    shown = a.items + a.related + a.closest
    assert shown and all(it.paper_id in first_ten for it in shown), a.text
    assert any("FIRING" in it.title for it in shown), a.text

"""Follow-ups about shown papers: how they are read, and the answers made from stored papers alone.

Fast: no model, no store (rows are built here); the same rules on the real corpus and through every
edge are in tests/test_followups_full.py."""

from __future__ import annotations

import pytest

from rag.chat.followup_answer import answer_followup, comparison_rows, split_exclusion
from rag.grounding.admission import PaperText
from rag.store.papertable import PaperRow
from rag.text.followup import (
    FollowUp,
    ShownPaper,
    Thread,
    read_followup,
    reference_entries,
    shown_papers,
    thread_of,
)
from rag.types import Answer, Source
from ui.render import answer_markdown, escape_text

PAPERS = [
    ("p1", "Words in Motion: Extracting Interpretable Control Vectors for Motion Transformers", "Poster",
     ["Omer Sahin Tas", "Royden Wagner"],
     "Transformer-based models generate hidden states that are difficult to interpret. In this work, we analyze "
     "hidden states and modify them at inference, with a focus on motion forecasting. We further refine our control "
     "vectors using sparse autoencoders (SAEs). Our experiments reveal high probing accuracy on the Waymo dataset."),
    ("p2", "Towards Principled Evaluations of Sparse Autoencoders for Interpretability and Control", "Oral",
     ["Georg Lange", "Neel Nanda", "Aleksandar Makelov"],
     "Disentangling model activations into features is a central problem in interpretability. We propose to "
     "evaluate SAEs on specific tasks by comparing them to supervised feature dictionaries. As a case study, we apply "
     "this framework to the IOI task using GPT-2 Small, with SAEs trained on the OpenWebText dataset. We find that "
     "SAEs capture interpretable features but fail to control the model."),
    ("p3", "SAEBench: A Comprehensive Benchmark for Sparse Autoencoders", "Spotlight", ["Adam Karvonen"],
     "Sparse autoencoders are popular. We introduce SAEBench, a suite of eight evaluations for sparse autoencoders "
     "trained with reinforcement learning from feedback. Results show that proxy metrics do not predict practical "
     "performance."),
    ("p4", "Sparse Autoencoders Do Not Find Canonical Units of Analysis", "Poster", ["Patrick Leask"],
     "A common goal of interpretability is to find canonical units. We train meta-SAEs on the latents of SAEs. "
     "We find that larger SAEs learn novel latents."),
    ("p5", "Sparse Feature Circuits: Discovering and Editing Interpretable Causal Graphs", "Poster", ["Samuel Marks"],
     "We introduce methods for discovering sparse feature circuits. They improve a classifier's generalization."),
]
ROWS = {pid: PaperRow(pid, title, authors, decision, f"https://openreview.net/forum?id={pid}", text)
        for pid, title, decision, authors, text in PAPERS}
QUESTION = "Which papers use sparse autoencoders for interpretability?"


def thread(focus: tuple[int, ...] = ()) -> Thread:
    shown = [ShownPaper(number=i, paper_id=pid, title=ROWS[pid].title, listed=i <= 4)
             for i, pid in enumerate(ROWS, start=1)]
    return Thread(shown=shown, focus=[shown[n - 1] for n in focus], question=QUESTION,
                  texts={pid: r.text for pid, r in ROWS.items()})


def numbers(f: FollowUp | None) -> list[int]:
    assert f is not None
    return [p.number for p in f.papers]


@pytest.mark.parametrize(
    ("question", "kind", "refs"),
    [
        ("who wrote the second one?", "metadata", [2]),
        ("what dataset does [3] use?", "detail", [3]),
        ("and paper 4?", "detail", [4]),
        ("compare the first two", "compare", [1, 2]),
        ("how do 1 and 3 differ", "compare", [1, 3]),
        ("How does 3 differ from 1?", "compare", [3, 1]),
        ("what's the link to the last one", "metadata", [4]),
        ("who wrote the last two?", "metadata", [3, 4]),
        ("what decision did [5] get?", "metadata", [5]),
        ("how does the SAEBench one work?", "detail", [3]),
        ("who wrote the canonical units paper?", "metadata", [4]),
        ("more like the first one", "similar", [1]),
        ("anything else like SAEBench?", "similar", [3]),
        ("who wrote these?", "metadata", [1, 2, 3, 4]),
        ("give me the links", "metadata", [1, 2, 3, 4]),
        ("which of these is an oral?", "narrow", [1, 2, 3, 4]),
        ("only the orals and spotlights", "narrow", [1, 2, 3, 4]),
        ("which use reinforcement learning?", "narrow", [1, 2, 3, 4]),
        ("just the ones about language models", "narrow", [1, 2, 3, 4]),
        ("show all", "show_all", [1, 2, 3, 4]),
        ("ok just show all 27 then", "show_all", [1, 2, 3, 4]),
        ("what's the title of [12]?", "missing", []),
        ("who wrote the fifth one?", "metadata", [5]),  # the related papers follow the list
        ("find related work to [3]", "similar", [3]),
        ("Can you compare all of them?", "compare", [1, 2, 3, 4]),
    ],
)
def test_references_and_kinds_are_read_against_the_shown_list(question, kind, refs) -> None:
    f = read_followup(question, thread())
    assert f is not None and f.kind == kind, f
    assert numbers(f) == refs


@pytest.mark.parametrize(
    "question",
    [
        "Which papers study protein folding?",
        "what about papers on diffusion models for audio?",
        "Are there other papers on graph neural networks?",
        "Papers that defend against multi-turn jailbreaks?",
        "what about pruning of LLMs?",
        "show me all papers on protein folding",
    ],
)
def test_new_questions_are_not_bound_to_the_list(question) -> None:
    assert read_followup(question, thread()) is None


def test_it_and_both_mean_the_papers_of_the_last_turn() -> None:
    assert numbers(read_followup("who wrote it?", thread(focus=(3,)))) == [3]
    assert numbers(read_followup("is it a spotlight?", thread(focus=(2,)))) == [2]
    assert numbers(read_followup("compare them", thread(focus=(2, 4)))) == [2, 4]
    assert numbers(read_followup("authors of both", thread(focus=(1, 3)))) == [1, 3]
    assert numbers(read_followup("and their links?", thread(focus=(1, 3)))) == [1, 3]
    # a narrowing always filters the list, whatever the last turn was about
    assert numbers(read_followup("which of these are orals?", thread(focus=(1, 3)))) == [1, 2, 3, 4]
    # "and the third?" repeats the last turn's question for another paper
    last = read_followup("who wrote the second one?", thread())
    t = thread(focus=(2,))
    t.last = last
    again = read_followup("and the third?", t)
    assert again is not None and again.kind == "metadata" and again.fields == ["authors"] and numbers(again) == [3]


def answer(question: str, t: Thread | None = None) -> Answer:
    t = t or thread()
    f = read_followup(question, t)
    assert f is not None
    return answer_followup(question, f, {p.paper_id: ROWS[p.paper_id] for p in f.papers}, t.shown, None)


def test_metadata_is_the_stored_value_exactly_without_a_model() -> None:
    a = answer("who wrote the second one?")
    assert a.mode == "metadata" and not a.llm_called and a.timings.retrieval_ms == 0
    assert "Georg Lange, Neel Nanda and Aleksandar Makelov" in a.text
    assert [c.paper_id for c in a.citations] == ["p2"] and a.citations[0].number == 2
    assert a.intent is not None and a.intent.notes == [
        "authors of [2] Towards Principled Evaluations of Sparse Autoencoders for Interpretability and Control"]
    link = answer("link to paper 4")
    assert "https://openreview.net/forum?id=p4" in link.text and "p1" not in link.text
    decisions = answer("what decisions did they get?", thread(focus=(2, 3)))
    assert "decision: Oral" in decisions.text and "decision: Spotlight" in decisions.text


def test_removing_a_decision_keeps_the_others() -> None:
    for question in ("Remove the posters", "no posters please", "only non-posters"):
        f = read_followup(question, thread())
        assert f is not None and f.kind == "narrow" and f.decisions == ["Oral", "Spotlight"], question


def test_narrowing_by_decision_keeps_exactly_those_and_renumbers() -> None:
    a = answer("only the orals and spotlights")
    assert a.followup is not None and a.followup.kept_ids == ["p2", "p3"]
    assert [(c.number, c.paper_id) for c in a.citations] == [(1, "p2"), (2, "p3")]
    assert a.text.startswith("2 of the 4 papers shown were accepted as Oral or Spotlight:")
    none = answer("which of these are posters?", thread())
    assert none.followup is not None and none.followup.kept_ids == ["p1", "p4"]


def test_narrowing_by_topic_keeps_papers_whose_own_sentences_state_it() -> None:
    a = answer("which of these use reinforcement learning?")
    assert a.followup is not None and a.followup.kept_ids == ["p3"]
    assert "trained with reinforcement learning" in a.text  # the sentence that states it
    none = answer("which of these use diffusion models?")
    assert none.followup is not None and none.followup.kept_ids == [] and none.citations == []
    assert none.text.startswith("None of the 4 papers shown meets this")
    assert split_exclusion("mixture of experts, not vehicle routing") == ("mixture of experts", "vehicle routing")


OTHER = [
    ("q1", "Scaling Up Gaussian Splatting Training", "Each Gaussian touches a dynamic subset of pixels. We train on "
     "large-scale scenes across many GPUs. A diffusion prior helps. Captions are text."),
    ("q2", "Rendering Dynamic Scenes with Gaussians", "We reconstruct dynamic scenes from monocular video."),
    ("q3", "PlanSearch: Planning Improves Code Search", "We propose PlanSearch, a search method with strong results "
     "on LiveCodeBench (a contamination-free benchmark for coding)."),
    ("q4", "CodeArena: Testing Code Models", "We introduce CodeArena, a benchmark of 500 coding tasks."),
    ("q5", "Activation Based Detection of Poisoned Samples", "This work studies poisoned sample detection for "
     "defending against backdoor attacks. Inspired by how backdoor attacks map samples, we develop a detector."),
    ("q6", "A Stealthy Backdoor Attack on Code Models", "We introduce a new backdoor attack that bypasses existing "
     "defenses."),
    ("q7", "Discrete Denoising for Language", "We propose a diffusion model for text. It samples in few steps."),
    ("q8", "Conformal Prediction for Dynamic Graphs", "We give valid prediction sets on dynamic graphs."),
    ("q9", "Conformal Prediction Under Poisoned Data", "We bound the coverage of prediction sets when training "
     "data are poisoned."),
    ("q10", "Why Networks Lose Plasticity", "We analyse why networks lose plasticity in continual learning. We show "
     "that dormant units grow over time."),
    ("q11", "Resets Restore Plasticity", "We introduce resets, a simple algorithm that restores plasticity in "
     "continual learning."),
    ("q12", "Scaling Laws for Precision", "We propose that low precision lowers the effective parameter count, and "
     "fit laws that predict the loss after post-training quantization."),
    ("q13", "Cross-Block Quantization", "We propose CBQ, a post-training quantization method for language models."),
]
OTHER_ROWS = {pid: PaperRow(pid, title, ["A. Author"], "Poster", f"https://openreview.net/forum?id={pid}", text)
              for pid, title, text in OTHER}


def kept(question: str, pids: list[str]) -> list[str]:
    shown = [ShownPaper(number=i, paper_id=pid, title=OTHER_ROWS[pid].title, listed=True)
             for i, pid in enumerate(pids, start=1)]
    t = Thread(shown=shown, focus=[], question="Which papers are about this?",
               texts={pid: OTHER_ROWS[pid].text for pid in pids})
    f = read_followup(question, t)
    assert f is not None and f.kind == "narrow", question
    a = answer_followup(question, f, {p.paper_id: OTHER_ROWS[p.paper_id] for p in f.papers}, t.shown, None)
    assert a.followup is not None
    return a.followup.kept_ids


def test_a_filter_is_stated_in_one_place_as_the_papers_own_contribution() -> None:
    # the filter's words that tell the papers apart, in one sentence: not "diffusion" here and "text" there
    assert kept("which ones are about text diffusion?", ["q1", "q2", "q7"]) == ["q7"]
    # a benchmark named in an aside is used, not introduced
    assert kept("which of these introduce a benchmark?", ["q3", "q4"]) == ["q4"]
    # "X rather than Y" with opposite directions: judged by the defence, which mentions attacks
    assert kept("which of these are actually defenses rather than attacks?", ["q5", "q6"]) == ["q5"]
    # examples after "like" are alternatives of the filter
    assert kept("which of these look inside the model, like at neurons or pixels?", ["q1", "q2"]) == ["q1"]
    # an adjective is stated with the noun it narrows: "dynamic scenes", not a dynamic subset of pixels
    assert kept("which ones handle dynamic scenes?", ["q1", "q2"]) == ["q2"]
    # a generic head noun of an alternative says nothing of its own: "dynamic data" is met by dynamic graphs
    assert kept("which ones deal with time series or dynamic data", ["q8", "q9"]) == ["q8"]
    # "propose a fix, or just analyse it?" keeps the papers that propose something of their own
    assert kept("Do both of these propose a fix, or do some just analyse the problem?", ["q10", "q11"]) == ["q11"]
    # "propose a new X method": a method of the paper's own, on X ("we propose that …" is a claim)
    assert kept("which of these propose a new post-training quantization method?", ["q12", "q13"]) == ["q13"]


def test_detail_quotes_the_paper_or_says_its_abstract_does_not() -> None:
    a = answer("what dataset does [2] use?")
    assert a.mode == "evidence" and [c.paper_id for c in a.citations] == ["p2"]
    assert "OpenWebText dataset" in a.text
    missing = answer("what hardware does [4] need?")
    assert "its abstract does not say (hardware)" in missing.text
    for c in a.citations + missing.citations:
        assert c.supporting_text in ROWS[c.paper_id].text  # verbatim


def test_comparison_rows_are_verbatim_sentences_by_role() -> None:
    a = answer("compare the first two")
    assert a.mode == "evidence" and "| Paper | Problem | Method | Data | Result |" in a.text
    for pid in ("p1", "p2"):
        paper = PaperText.of(Source(number=1, paper_id=pid, title=ROWS[pid].title, text=ROWS[pid].text, score=0.0))
        cells = comparison_rows(paper)
        assert all(v == "" or v in ROWS[pid].text for v in cells.values())
    cells = comparison_rows(PaperText.of(Source(number=1, paper_id="p5", title=ROWS["p5"].title,
                                                text=ROWS["p5"].text, score=0.0)))
    assert cells["data"] == ""  # nothing is invented for a cell the abstract does not fill
    shown = answer_markdown(a.text, [1, 2])
    assert shown.count("\n|") >= 3 and "|---|---|---|---|---|" in shown


def test_a_number_that_was_not_shown_is_said_plainly() -> None:
    a = answer("what's the title of [12]?")
    assert a.refused and "there is no [12]" in a.text and "[1]–[5]" in a.text
    assert not any(ch.isdigit() for ch in a.refusal_reason.replace("12", ""))  # no internal scores


def test_the_thread_is_read_back_from_text_alone() -> None:
    """A client that keeps only the messages (the OpenAI route): ids from the reference list's links."""
    text = ("4 papers here meet this:\n- **A** [1]: x.\n- **B** [2]: y.\n\nRelated, but their abstracts do not state every "
            "part of the question:\n- **C** [3] (not stated: z): w.\n\n**References**\n\n[1] A — https://x/forum?id=a\n"
            "[2] B — https://x/forum?id=b\n[3] C (attributed) — https://x/forum?id=c")
    assert reference_entries(text) == [(1, "A", "https://x/forum?id=a"), (2, "B", "https://x/forum?id=b"),
                                       (3, "C", "https://x/forum?id=c")]
    shown = shown_papers(text, [], lambda title, url: url.rsplit("=", 1)[1])
    assert [(p.number, p.paper_id, p.listed) for p in shown] == [(1, "a", True), (2, "b", True), (3, "c", False)]
    t = thread_of([("Which papers use X?", "Which papers use X?", shown),
                   ("who wrote the second one?", "who wrote the second one?", shown[1:2])])
    assert [p.paper_id for p in t.shown] == ["a", "b", "c"] and [p.paper_id for p in t.focus] == ["b"]
    assert [p.paper_id for p in t.listed] == ["a", "b"]


def test_the_searchs_first_papers_beside_a_list_are_not_listed() -> None:
    # "these" are the list; the papers under "Also among the search's first matches" are shown, not listed
    from rag.text.citations import CLOSEST_HEADING

    text = (f"1 paper here meets this:\n- **A** [1]: x.\n\n{CLOSEST_HEADING}\n- **B** [2]: y.\n\n**References**\n\n"
            "[1] A — https://x/forum?id=a\n[2] B — https://x/forum?id=b")
    shown = shown_papers(text, [], lambda title, url: url.rsplit("=", 1)[1])
    assert [(p.number, p.listed) for p in shown] == [(1, True), (2, False)]


def test_the_second_one_after_an_answer_that_showed_no_paper_points_at_nothing() -> None:
    """After a refusal that listed nothing, "who wrote the second one?" is said to point at nothing,
    not asked again with the refused question as its context."""
    q = "Which paper shows that a 1-bit LLM matches full precision on every benchmark?"
    t = thread_of([(q, q, [])])
    f = read_followup("Who wrote the second one?", t)
    assert f is not None and f.kind == "missing" and f.missing_numbers == [2]
    a = answer_followup("Who wrote the second one?", f, {}, t.shown, None)
    assert a.refused and a.text == "The last answer showed no paper, so there is no [2]. Ask a new question."
    assert read_followup("Which papers use LLMs as judges?", t) is None  # a new question stays one
    assert read_followup("Who wrote the second one?", Thread()) is None  # no earlier turn: nothing to point at


def test_inline_math_is_left_for_katex_and_everything_else_is_escaped() -> None:
    text = r"We propose $\texttt{GraphEval}$, costing 5 * 3 <b>x</b> and $ 10 or $x < y$."
    shown = escape_text(text)
    assert r"$\texttt{GraphEval}$" in shown  # verbatim: KaTeX renders it
    assert "&lt;b&gt;" in shown and r"5 \* 3" in shown
    assert "$x < y$" not in shown  # a "math" span with markup characters is escaped like text


def test_a_bad_conversation_file_names_its_line(tmp_path) -> None:
    from evals.conversations import load_conversations, load_seeds
    from evals.errors import EvalError

    seeds = load_seeds()
    bad = tmp_path / "c.jsonl"
    good = '{"cid": "C1", "sid": "S01", "turns": [{"ask": "q", "kind": "seed"}, {"ask": "a", "kind": "new"}, ' \
           '{"ask": "b", "kind": "new"}]}'
    bad.write_text(good + "\n" + good.replace('"new"}]', '"guess"}]') + "\n")
    with pytest.raises(EvalError, match=r"c\.jsonl:2: unknown kind 'guess'"):
        load_conversations(bad, seeds)
    bad.write_text("{not json\n")
    with pytest.raises(EvalError, match=r"c\.jsonl:1: not JSON"):
        load_conversations(bad, seeds)

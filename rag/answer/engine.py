"""The llama-index query engine: numbered sources → LLM → answer with validated citations."""

from __future__ import annotations

import functools
import logging
import re
import time
from pathlib import Path
from typing import Any, Generator, Iterator, Sequence

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.base.response.schema import Response
from llama_index.core.llms import LLM
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.schema import NodeWithScore, TextNode
from pydantic import ConfigDict, PrivateAttr

from rag import prompts
from rag.errors import RagError
from rag.events import Event, Final, Sources, Token, final_answer
from rag.grounding.evidence import Assessment, EvidenceConfig, assess
from rag.grounding.scoring import BUNDLED, RelevanceModel
from rag.grounding.verify import SentenceFilter, count_line, evidence_answer_parts, refusal_text
from rag.limits import check_question
from rag.models.llm import unavailable
from rag.queue import check_cancelled
from rag.retrieval.retrieve import PaperRetriever, Retrieval
from rag.settings import SearchOptions, Settings
from rag.store.vectors import VectorCache, unit_rows
from rag.text.citations import (
    CLOSEST_ALONE_HEADING,
    CLOSEST_HEADING,
    RELATED_HEADING,
    abstract_sentences,
    split_sentences,
)
from rag.text.phrasing import restate
from rag.text.reading import examples_given
from rag.types import Answer, Source, Timings

logger = logging.getLogger(__name__)


def format_sources(sources: Sequence[Source]) -> str:
    return "\n\n".join(
        prompts.render("source", number=s.number, title=s.title, text=s.text) for s in sources
    )


class EmbeddingMemo:
    """Embeds each distinct text once per answer: excerpting and citation checking share sentences."""

    def __init__(self, embed: Any):
        self._embed = embed
        self._seen: dict[str, list[float]] = {}

    def __call__(self, texts: list[str]) -> list[list[float]]:
        todo = list(dict.fromkeys(t for t in texts if t not in self._seen))
        if todo:
            self._seen.update(zip(todo, self._embed(todo)))
        return [self._seen[t] for t in texts]


def excerpt_sources(
    question: str, sources: Sequence[Source], embed: Any, per_source: int
) -> list[Source]:
    """Sources cut to their `per_source` sentences closest to the question, in abstract order."""
    if per_source <= 0:
        return list(sources)
    split = [split_sentences(s.text) for s in sources]
    if all(len(sents) <= per_source for sents in split):
        return list(sources)
    flat = [sent for sents in split for sent in sents]
    vecs = unit_rows(embed([question] + flat))
    sims = vecs[1:] @ vecs[0]
    out, pos = [], 0
    for source, sents in zip(sources, split):
        own = sims[pos : pos + len(sents)]
        pos += len(sents)
        if len(sents) <= per_source:
            out.append(source)
            continue
        keep = sorted(np.argsort(-own)[:per_source].tolist())
        parts, prev = [], -1
        for i in keep:
            if i != prev + 1:
                parts.append("…")
            parts.append(sents[i])
            prev = i
        if prev != len(sents) - 1:
            parts.append("…")
        out.append(source.model_copy(update={"text": " ".join(parts)}))
    return out


def answer_messages(question: str, sources: Sequence[Source]) -> list[ChatMessage]:
    user = prompts.render(
        "answer", sources=format_sources(sources), question=question, refusal=prompts.REFUSAL
    )
    return [
        ChatMessage(role=MessageRole.SYSTEM, content=prompts.load("system")),
        ChatMessage(role=MessageRole.USER, content=user),
    ]


LOCAL_MAX_SENTENCES = 4  # the bundled model is stopped after this many shown sentences
LOCAL_GIVE_UP = 2  # ... or once this many of its sentences failed the support check and none passed
STREAM_WORDS = 8  # evidence streams a few words at a time, like generated text


def _pieces(text: str) -> list[str]:
    """The text in pieces of a few words (whitespace kept, so the pieces join back to the text)."""
    parts = re.split(r"(?<=\s)(?=\S)", text)
    return ["".join(parts[i : i + STREAM_WORDS]) for i in range(0, len(parts), STREAM_WORDS)]


def _llm_errors() -> tuple[type[BaseException], ...]:
    import httpx
    import openai

    return (openai.APIError, httpx.HTTPError, ConnectionError, TimeoutError, OSError)


class AnswerEngine(CustomQueryEngine):
    """Retrieves papers, asks the LLM to answer from them with [n] markers, checks the markers."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any
    llm: Any
    embed_model: Any
    settings: Any
    _vectors: VectorCache = PrivateAttr(default_factory=VectorCache)  # sentence vectors across answers
    _relevance: tuple[str, RelevanceModel] | None = PrivateAttr(default=None)  # (setting, model) once read

    def warm(self, max_sentences: int = 5000) -> int:
        """Embed every stored abstract's sentences into the sentence-vector cache, when there are at
        most `max_sentences` (a small store: the seed corpus takes ~2 s), so that no answer embeds
        them; returns how many were embedded (0: the store is larger; answers embed on demand)."""
        papers = self.retriever.papers()
        if len(papers) * 4 > min(max_sentences, self._vectors.max_items):  # abstracts have >= 4 sentences
            return 0
        sentences = list(dict.fromkeys(
            s for r in papers.records for s in abstract_sentences(r.text)
        ))
        if not sentences or len(sentences) > min(max_sentences, self._vectors.max_items):
            return 0
        for start in range(0, len(sentences), 256):
            self._vectors.embed(self.embed_model, sentences[start : start + 256])
        return len(sentences)

    def sentence_embedder(self) -> EmbeddingMemo:
        """Embeds texts with the answer model, through the sentence-vector cache answers share."""
        return EmbeddingMemo(functools.partial(self._vectors.embed, self.embed_model))

    def _answer(self, question: str, retrieval: Retrieval, timings: Timings, **fields: Any) -> Answer:
        """An Answer with the fields every kind of answer shares."""
        return Answer(
            question=question,
            sources=retrieval.sources,
            retriever=retrieval.mode,
            intent=retrieval.intent,
            llm=self.settings.llm.display_name,
            timings=timings,
            **fields,
        )

    def _refusal(self, question: str, retrieval: Retrieval, timings: Timings, verdict: Assessment) -> Answer:
        """The refusal sentence, what is missing in plain words, and the closest papers with what each lacks."""
        text = refusal_text(verdict)
        related, citations = evidence_answer_parts(verdict.related, retrieval.sources)
        closest, closest_citations = evidence_answer_parts(verdict.closest, retrieval.sources)
        lines = [it.markdown() for it in related]
        if closest:
            lines += ["\n" + (CLOSEST_HEADING if related else CLOSEST_ALONE_HEADING), *(it.markdown() for it in closest)]
        return self._answer(
            question, retrieval, timings, text=(text + "".join("\n" + line for line in lines)).lstrip(),
            refused=True, llm_called=False, mode="refusal", refusal_reason=verdict.reason,
            reading=verdict.reading, related=related, closest=closest,
            citations=sorted(citations + closest_citations, key=lambda c: c.number), matching_ids=verdict.matching_ids,
        )

    def _sentences_per_source(self) -> int:
        n = self.settings.answer.sentences_per_source
        if n is None:
            return 0 if self.settings.llm.is_remote else 1
        return int(n)

    @property
    def mode(self) -> str:
        """evidence or generative, as configured (auto: evidence for the bundled local model)."""
        return str(self.settings.answer.resolved_mode(self.settings.llm.is_remote))

    def relevance_model(self) -> RelevanceModel | None:
        """The configured relevance model (rag.grounding.scoring), read once; None when off."""
        name = self.settings.answer.relevance_model
        if name == "off":
            return None
        if self._relevance is None or self._relevance[0] != name:
            self._relevance = (name, RelevanceModel.load(BUNDLED if name == "bundled" else Path(name).expanduser()))
        return self._relevance[1]

    def assess(self, question: str, retrieval: Retrieval, embed: Any, show_all: bool = False,
               record: bool = False) -> Assessment:
        """Evidence per retrieved paper and whether it answers the question (no LLM call). `record`: keep
        each candidate's features for the relevance model (evals/train_relevance.py)."""
        cfg = EvidenceConfig(
            min_coverage=self.settings.answer.min_coverage,
            dense_floor=self.settings.retrieval.refusal_threshold,
            admission=self.settings.answer.admission,
            worded_otherwise=self.settings.answer.paraphrase_similarity,
            search_top=self.settings.answer.search_top,
            relevance=self.relevance_model(),
            record=record,
        )
        limit = None if show_all or not retrieval.shown_k else retrieval.shown_k
        return assess(
            question, retrieval.sources, embed, self.retriever.term_stats(), retrieval.best_dense, cfg,
            max_items=limit, query=retrieval.intent, head=retrieval.shown_k or None, anchor=retrieval.anchor,
            by_example=self._found_by_example(question, retrieval, cfg.example_rank),
        )

    def _found_by_example(self, question: str, retrieval: Retrieval, depth: int) -> dict[int, bool]:
        """The first `depth` sources that the search ranks first for an example the question gives of what it
        asks (a list question only; rag.text.reading.examples_given), each with whether only examples of
        a constraint found it (then it must still hold the topic)."""
        intent = retrieval.intent
        if depth <= 0 or intent is None or not intent.list_question or intent.kind not in ("topic", "single"):
            return {}
        given = examples_given(question)
        if not given:
            return {}
        first = self.retriever.first_for([p for p, _ in given], intent.decisions or None)
        of_constraint: dict[str, bool] = {}
        for phrase, constraint in given:
            if phrase in first:
                of_constraint[first[phrase]] = of_constraint.get(first[phrase], True) and constraint
        return {s.number: of_constraint[s.paper_id] for s in retrieval.sources[:depth] if s.paper_id in of_constraint}

    def stream_answer(self, question: str, options: SearchOptions | None = None) -> Iterator[Event]:
        """Events: `Sources`, then `Token`..., then `Final`.

        Tokens are only ever text the final answer shows: quoted evidence, or LLM sentences that
        passed the support check. `show_all` in the options: list every paper that meets the
        question, not only the first `top_k`."""
        question = check_question(question)
        options = options or {}
        show_all = options.get("show_all", False)
        t0 = time.perf_counter()
        rcfg = self.settings.retrieval
        pool = max(rcfg.all_k, rcfg.pool_k) if show_all else rcfg.pool_k
        # "I'm looking for work on X. Not Y. What is there?" is read as "Which papers X?"
        asked = restate(question)
        if asked != question:
            logger.info("read as: %s", asked)
        retrieval = self.retriever.retrieve(asked, options, pool=pool)
        timings = Timings(retrieval_ms=(time.perf_counter() - t0) * 1000)
        embed = self.sentence_embedder()
        verdict = self.assess(asked, retrieval, embed, show_all=show_all)
        retrieval, verdict = arrange(retrieval, verdict)
        if not verdict.answerable:
            logger.info("refusing: %s (best dense %s)", verdict.reason, retrieval.best_dense)
            timings.total_ms = (time.perf_counter() - t0) * 1000
            answer = self._refusal(question, retrieval, timings, verdict)
            yield Sources(sources=retrieval.sources)
            yield Token(text=answer.text)
            yield Final(answer=answer)
            return
        yield Sources(sources=retrieval.sources)
        if self.mode == "evidence":
            answer = yield from self._stream_evidence(question, retrieval, verdict, timings, t0)
        else:
            answer = yield from self._stream_generated(question, retrieval, verdict, timings, t0, embed)
        answer.timings.total_ms = (time.perf_counter() - t0) * 1000
        yield Final(answer=answer)

    def _stream_evidence(
        self, question: str, retrieval: Retrieval, verdict: Assessment, timings: Timings, t0: float,
        removed: Sequence[str] = (), raw: str = "", tokens: int | None = None, llm_called: bool = False,
    ) -> Generator[Event, None, Answer]:
        """The evidence answer, streamed an item at a time."""
        single = verdict.focus.kind == "single" and len(verdict.items) == 1
        items, citations = evidence_answer_parts(verdict.items, retrieval.sources)
        related, related_citations = evidence_answer_parts(verdict.related, retrieval.sources)
        closest, closest_citations = evidence_answer_parts(verdict.closest, retrieval.sources)
        citations = sorted(citations + related_citations + closest_citations, key=lambda c: c.number)
        lines = [it.markdown(bullet=not single) for it in items]
        head = count_line(verdict, len(items))
        if head:
            lines.insert(0, head)
        if related:
            lines.append("\n" + RELATED_HEADING)
            lines.extend(it.markdown() for it in related)
        if closest:
            lines.append("\n" + CLOSEST_HEADING)
            lines.extend(it.markdown() for it in closest)
        for i, line in enumerate(lines):
            for piece in _pieces(("\n" if i else "") + line):
                if timings.first_token_ms is None:
                    timings.first_token_ms = (time.perf_counter() - t0) * 1000
                yield Token(text=piece)
        return self._answer(
            question,
            retrieval,
            timings,
            text="\n".join(lines),
            citations=citations,
            items=items,
            related=related,
            closest=closest,
            searched=verdict.searched,
            reading=verdict.reading,
            matching_ids=verdict.matching_ids,
            mode="evidence",
            llm_called=llm_called,
            unsupported_sentences=list(removed),
            removed_unsupported=len(removed),
            raw_text=raw,
            completion_tokens=tokens,
        )

    def _stream_generated(
        self, question: str, retrieval: Retrieval, verdict: Assessment, timings: Timings, t0: float,
        embed: Any,
    ) -> Generator[Event, None, Answer]:
        """The LLM's answer, shown a checked sentence at a time."""
        # The LLM sees only the papers that meet the question (the evidence answer's items).
        admitted = set(verdict.matching) | {it.number for it in verdict.items}
        evidence = [s for s in retrieval.sources if s.number in admitted] or retrieval.sources
        shown = excerpt_sources(question, evidence, embed, self._sentences_per_source())
        checked = SentenceFilter(evidence, embed, self.settings.answer.replace_threshold)
        raw, tokens = "", 0
        # The prompt asks for 2-4 sentences; the bundled model rarely stops by itself (it ran to
        # max_tokens in 8 of 10 answers, copying the sources' layout), so it is stopped once 4
        # sentences were shown. When its first sentences all fail the support check, the rest rarely
        # pass (bench_generation: 2-11% of its sentences pass), so it is stopped and the evidence
        # answer is shown without waiting for max_tokens. An endpoint's model stops when it is done.
        local = not self.settings.llm.is_remote
        enough = LOCAL_MAX_SENTENCES if local else None
        give_up = LOCAL_GIVE_UP if local else None
        stream = None
        try:
            check_cancelled()
            stream = self.llm.stream_chat(answer_messages(question, shown))
            for chunk in stream:
                check_cancelled()  # a caller that went away stops the model at its next token
                delta = chunk.delta or ""
                if not delta:
                    continue
                raw += delta
                tokens += 1
                text = checked.feed(delta)
                if text:
                    if timings.first_token_ms is None:
                        timings.first_token_ms = (time.perf_counter() - t0) * 1000
                    yield Token(text=text)
                    if enough is not None and len(checked.shown) >= enough:
                        break
                elif give_up is not None and not checked.shown and len(checked.unsupported) >= give_up:
                    logger.info("the local model's first %d sentences failed the support check: stopped", give_up)
                    break
        except RagError:
            raise
        except _llm_errors() as exc:
            raise unavailable(self.settings.llm, exc) from exc
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # stops the model now (and gives its lock back)
        text = checked.finish()
        if text:
            if timings.first_token_ms is None:
                timings.first_token_ms = (time.perf_counter() - t0) * 1000
            yield Token(text=text)
        if checked.removed_markers:
            logger.info("removed markers naming no source: %s", checked.removed_markers)
        if not checked.text():
            # Nothing the model wrote is stated by the sources: show the evidence instead.
            logger.info("no generated sentence passed the support check; answering with evidence")
            answer = yield from self._stream_evidence(
                question, retrieval, verdict, timings, t0, checked.unsupported, raw, tokens, llm_called=True
            )
            answer.removed_markers = checked.removed_markers
            return answer
        return self._answer(
            question,
            retrieval,
            timings,
            text=checked.text(),
            citations=checked.citations(),
            reading=verdict.reading,
            matching_ids=verdict.matching_ids,
            mode="generative",
            removed_markers=checked.removed_markers,
            unsupported_sentences=checked.unsupported,
            removed_unsupported=len(checked.unsupported),
            raw_text=raw,
            completion_tokens=tokens,
        )

    def answer(self, question: str, options: SearchOptions | None = None) -> Answer:
        return final_answer(self.stream_answer(question, options))

    def custom_query(self, query_str: str) -> Response:
        """llama-index entry point (used by its evaluators): the Answer rides in `metadata`."""
        answer = self.answer(query_str)
        nodes = [
            NodeWithScore(
                node=TextNode(text=s.text, id_=s.paper_id, metadata={"title": s.title, "url": s.url}),
                score=s.score,
            )
            for s in answer.sources
        ]
        return Response(response=answer.text, source_nodes=nodes, metadata={"answer": answer})


def arrange(retrieval: Retrieval, verdict: Assessment) -> tuple[Retrieval, Assessment]:
    """Sources renumbered for the answer: the listed papers first (in the answer's order), then the
    related ones, then the other candidates, cut to the papers an answer shows; the items follow."""
    ids = {s.number: s.paper_id for s in retrieval.sources}
    verdict.matching_ids = [ids[n] for n in verdict.matching if n in ids]
    first = [it.number for it in verdict.items + verdict.related + verdict.closest]
    keep = retrieval.shown_k or len(retrieval.sources)
    arranged, renumber = retrieval.arranged(first, keep)
    intent = arranged.intent
    if verdict.reading is not None and intent is not None and intent.kind in ("topic", "single", "named"):
        note = verdict.reading.note()
        if note:
            arranged.intent = intent.model_copy(update={"notes": [*intent.notes, note]})
    for it in verdict.items + verdict.related + verdict.closest:
        it.number = renumber[it.number]
    verdict.matching = [renumber[n] for n in verdict.matching if n in renumber]
    return arranged, verdict


def build_engine(retriever: PaperRetriever, llm: LLM, embed_model: BaseEmbedding, settings: Settings) -> AnswerEngine:
    engine = AnswerEngine(retriever=retriever, llm=llm, embed_model=embed_model, settings=settings)
    # Sentence vectors computed at ingest are read before any is embedded (rag.store.sentence_vectors).
    engine._vectors.stored_path = retriever.store.sentence_vectors_path
    return engine

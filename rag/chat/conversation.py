"""Conversations: condense a follow-up into a standalone question, then answer it with citations.

A follow-up that points at a cited paper ("the second one", "paper 2", "[2]") gets that paper's title
in place of the pointer. Any other follow-up that refers back ("it", "they", a very short question) is
rewritten by the LLM (prompts/condense.txt, as llama-index's CondensePlusContextChatEngine does), then
checked: a small local model often returns an empty, off-topic, answer-like or wrongly resolved text,
so a deterministic rewrite ("it" read as the previous answer's main paper, else the previous question
and cited titles added) takes over whenever the model's output is unusable. A follow-up that stands on
its own is kept as it is.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, Unpack

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from pydantic import BaseModel, Field

from rag import prompts
from rag.errors import RagError
from rag.events import Condensed, Event, Final, Queued, Sources, Token, final_answer, replay
from rag.limits import DEFAULT_LIMITS, Limits, check_request
from rag.queue import GenerationQueue
from rag.settings import SearchOptions, Settings, search_options
from rag.text.citations import MARKER, is_refusal, marker_numbers
from rag.text.followup import (
    LOCAL_KINDS,
    NEW_LIST,
    FollowUp,
    ShownPaper,
    Thread,
    read_followup,
    shown_papers,
    thread_of,
)
from rag.text.terms import is_content, words
from rag.types import Answer, Citation

if TYPE_CHECKING:
    from rag.answer.engine import AnswerEngine
    from rag.retrieval.retrieve import PaperRetriever

logger = logging.getLogger(__name__)


class Answerer(Protocol):
    """What a conversation needs of the front door (`rag.RAG` is one): its settings, retriever, engine
    and LLM, the answer cache, and the answer stream. The chat stage depends on this, not on the
    pipeline, so the pipeline can import the chat stage without a cycle."""

    settings: Settings

    @property
    def llm(self) -> Any: ...

    @property
    def retriever(self) -> PaperRetriever: ...

    @property
    def engine(self) -> AnswerEngine: ...

    def cached(self, question: str, **options: Unpack[SearchOptions]) -> Answer | None: ...

    def stream(self, question: str, **options: Unpack[SearchOptions]) -> Iterator[Event]: ...

HISTORY_TURNS = 3  # exchanges shown to the condense prompt
HISTORY_MESSAGE_CHARS = 600
CONDENSE_MAX_TOKENS = 64

_REFERRING = re.compile(
    r"\b(it|its|they|them|their|theirs|this|that|these|those|he|she|his|her|former|latter|above|"
    r"previous|same|aforementioned|first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th|"
    r"one|ones|both|either|neither|more|else|also|too|another|other)\b",
    re.I,
)
_ORDINALS = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "fifth": 5,
    "5th": 5,
}
_ORDINAL_REF = re.compile(
    r"\b(?:the\s+)?(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|last)\s+(?:one|paper|work|source|"
    r"study|reference|result|article|method|approach|citation)\b",
    re.I,
)
# At most 6 digits, as citations.MARKER: int() refuses a number of more than 4,300 digits.
_NUMBER_REF = re.compile(
    r"(?:\b(?:the\s+)?(?:paper|source|reference|citation)\s*#?\s*(\d{1,6})\b|\[(\d{1,6})\])", re.I
)
_SINGULAR_REF = re.compile(r"\b(?:(?:this|that|the)\s+(?:paper|work|study|article|one)|its|it)\b", re.I)
_REFERENCE_HEAD = re.compile(r"\[(\d{1,6})\]\s")
_LABEL = re.compile(r"^\s*(?:standalone\s+question|question|rewritten(?:\s+question)?)\s*:\s*", re.I)


class ChatTurn(BaseModel):
    """One message of a conversation; assistant messages may carry the citations they made."""

    role: Literal["user", "assistant"]
    content: str
    citations: list[Citation] = Field(
        default_factory=list, description="Citations of an assistant answer (optional)."
    )


@dataclass
class Rewrite:
    """The question used for retrieval, and how it was obtained."""

    question: str
    method: Literal["none", "rule", "llm", "fallback", "followup"]
    llm_output: str = ""


# Words that never make a follow-up stand on its own, besides stop and framing words (rag.text.terms).
_NOT_A_TOPIC = frozenset({*_ORDINALS, "last", "else", "about", "us"})


def _words(text: str) -> set[str]:
    """The content words of a question (rag.text.terms), without ordinals and the like."""
    return {w for w in words(text) if len(w) > 1 and is_content(w) and w not in _NOT_A_TOPIC}


def reference_titles(turn: ChatTurn) -> dict[int, str]:
    """Cited titles of an assistant message: its citations, else a `[n] Title — url` reference list."""
    if turn.citations:
        return {c.number: c.title for c in turn.citations}
    out: dict[int, str] = {}
    for line in turn.content.splitlines():
        ref = reference_line(line)
        if ref:
            out[ref[0]] = ref[1]
    return out


def reference_line(line: str) -> tuple[int, str] | None:
    """`[n] Title`, `[n] Title — url` or `[n] Title (attributed) — url` → (n, title), else None.

    Linear in the line's length whatever it holds (history is user input: a backtracking pattern
    here once spent 27 s of CPU on one 20,000-character line)."""
    text = line.strip()
    head = _REFERENCE_HEAD.match(text)
    if head is None:
        return None
    words = text[head.end():].split()
    if len(words) >= 3 and words[-2] in ("—", "-"):
        words = words[:-2]  # the link
    if len(words) >= 2 and words[-1] == "(attributed)":
        words = words[:-1]
    return (int(head.group(1)), " ".join(words)) if words else None


def strip_references(text: str) -> str:
    """An assistant message without its trailing reference list."""
    kept = []
    for line in text.splitlines():
        if line.strip().strip("*").strip().lower() in {"references", "references:", "sources", "sources:"}:
            break
        kept.append(line)
    return "\n".join(kept).strip()


def _cited_in_order(turn: ChatTurn) -> list[str]:
    """Titles of an answer's cited papers in the order the text first cites them."""
    titles = reference_titles(turn)
    order: list[int] = []
    for m in MARKER.finditer(strip_references(turn.content)):
        order.extend(n for n in marker_numbers(m.group(0)) if n in titles and n not in order)
    order.extend(n for n in sorted(titles) if n not in order)
    return [titles[n] for n in order]


def _last(history: Sequence[ChatTurn], role: str) -> ChatTurn | None:
    return next((t for t in reversed(history) if t.role == role), None)


def _pointers(question: str, history: Sequence[ChatTurn]) -> list[tuple[int, int, str]]:
    """(start, end, title) of each phrase that points at a paper of the previous answer."""
    last = _last(history, "assistant")
    if last is None:
        return []
    titles = reference_titles(last)
    ordered = _cited_in_order(last)
    out: list[tuple[int, int, str]] = []
    for m in _NUMBER_REF.finditer(question):
        n = int(m.group(1) or m.group(2))
        if n in titles:
            out.append((m.start(), m.end(), titles[n]))
    for m in _ORDINAL_REF.finditer(question):
        word = m.group(1).lower()
        k = len(ordered) if word == "last" else _ORDINALS[word]
        if 1 <= k <= len(ordered):
            out.append((m.start(), m.end(), ordered[k - 1]))
    return sorted(out)


def pointed_titles(question: str, history: Sequence[ChatTurn]) -> list[str]:
    """Papers of the previous answer that the follow-up names ("the second one", "paper 2", "[2]")."""
    return list(dict.fromkeys(title for _, _, title in _pointers(question, history)))


def resolve_pointers(question: str, history: Sequence[ChatTurn]) -> str | None:
    """The follow-up with "the second one", "paper 2" or "[2]" replaced by the paper's title."""
    spans = _pointers(question, history)
    if not spans:
        return None
    out, pos = [], 0
    for start, end, title in spans:
        if start < pos:
            continue  # overlapping matches ("the paper [2]")
        out.append(question[pos:start] + f'"{title}"')
        pos = end
    return "".join(out) + question[pos:]


def depends_on_history(question: str) -> bool:
    """True when the follow-up refers back (pronouns, ordinals) or is too short to stand alone; a
    question for papers on a topic of its own ("are there other papers on graph transformers?")
    stands alone whatever words it uses."""
    if NEW_LIST.search(question) and len(_words(question)) >= 2 and not _POINTING.search(question):
        return False
    return bool(_REFERRING.search(question)) or len(_words(question)) < 3


_POINTING = re.compile(r"\b(it|its|these|those|them|they|their|above|previous|aforementioned)\b", re.I)


def fallback_question(
    question: str, history: Sequence[ChatTurn], max_chars: int = DEFAULT_LIMITS.question_chars
) -> str:
    """The follow-up with "it" taken as the previous answer's main paper, or with the context added;
    never longer than `max_chars` (the engine's question limit: the context is cut to fit)."""
    resolved = resolve_pointers(question, history)
    if resolved and len(resolved) <= max_chars:
        return resolved
    if not depends_on_history(question):
        return question
    last = _last(history, "assistant")
    cited = _cited_in_order(last) if last is not None and not is_refusal(last.content) else []
    m = _SINGULAR_REF.search(question)
    if m and cited:
        title = f'"{cited[0]}"' + ("'s" if m.group(0).lower() == "its" else "")
        named = question[: m.start()] + title + question[m.end() :]
        if len(named) <= max_chars:
            return named
    context: list[str] = []
    prev_q = _last(history, "user")
    if prev_q is not None:
        context.append(prev_q.content.strip())
    context.extend(cited[:3])
    budget = max_chars - len(question) - len(" (context: )")
    joined = "; ".join(context)[: max(budget, 0)].rstrip()
    return f"{question} (context: {joined})" if joined else question


_WHAT_ABOUT = re.compile(r"^\W*(?:(?:and|ok(?:ay)?|so)\W+)?(?:what|how)\s+about\s+(.+?)\W*$", re.I)


def new_topic(question: str, history: Sequence[ChatTurn]) -> str | None:
    """ "what about pruning of LLMs?": a topic of its own, searched as it is said (None when the
    follow-up names nothing the previous question did not: "what about this one?")."""
    m = _WHAT_ABOUT.match(question)
    if m is None:
        return None
    topic = m.group(1)
    prev = _last(history, "user")
    own = _words(topic) - (_words(prev.content) if prev is not None else set())
    return topic if own and not _POINTING.search(topic) else None


def clean_llm_question(text: str) -> str:
    """First non-empty line of the model's reply, without labels, quotes or stray markers."""
    for line in (text or "").strip().splitlines():
        line = _LABEL.sub("", line).strip().strip("\"'`").strip()
        line = MARKER.sub("", line).strip()
        if line:
            return line
    return ""


def _names(words: set[str], title: str) -> bool:
    """Whether a text (as its content words) names a paper: most of the title's words appear."""
    title_words = _words(title)
    return bool(title_words) and len(title_words & words) >= 0.6 * len(title_words)


def usable(candidate: str, question: str, history: Sequence[ChatTurn]) -> bool:
    """Whether a condensed question keeps the follow-up's meaning and resolves what it refers to.

    "It" is taken to mean the previous exchange's main subject: the previous question and the first
    paper the answer cited (or the paper the follow-up points at), never another cited paper.
    """
    n_words = len(candidate.split())
    if not candidate.endswith("?") or n_words < 3 or n_words > 60 or is_refusal(candidate):
        return False  # the prompt asks for one question; an answer or a remark is not one
    follow = _words(question)
    cand = _words(candidate)
    if follow and len(follow & cand) < max(1, len(follow) // 2):
        return False  # the model dropped (or replaced) what the user asked
    if not depends_on_history(question):
        return True
    last = _last(history, "assistant")
    cited = _cited_in_order(last) if last else []
    pointed = pointed_titles(question, history)
    main_titles = pointed or cited[:1]
    prev = _last(history, "user")
    main = _words(" ".join(main_titles + ([prev.content] if prev is not None and not pointed else [])))
    if not (cand - follow) & main:
        return False  # nothing of the main subject made it in: the reference is unresolved
    if not any(_names(cand, t) for t in main_titles) and any(
        _names(cand, t) for t in cited if t not in main_titles
    ):
        return False  # resolved to another cited paper than the one meant
    return True


def format_history(history: Sequence[ChatTurn]) -> str:
    """The last exchanges as plain lines for the condense prompt, cited titles included."""
    lines = []
    for turn in history[-2 * HISTORY_TURNS :]:
        if turn.role == "user":
            lines.append(f"User: {turn.content.strip()[:HISTORY_MESSAGE_CHARS]}")
            continue
        text = MARKER.sub("", strip_references(turn.content)).strip()[:HISTORY_MESSAGE_CHARS]
        cited = _cited_in_order(turn)
        papers = "; ".join(f"({i}) {t}" for i, t in enumerate(cited, start=1))
        lines.append(f"Assistant: {text}" + (f" [Papers cited: {papers}]" if papers else ""))
    return "\n".join(lines)


def condense(llm: Any, question: str, history: Sequence[ChatTurn]) -> Rewrite:
    """A standalone question for retrieval: the LLM's rewrite when usable, else the fallback.
    `llm=None`: the rules only (no model call)."""
    if not any(t.role == "user" for t in history) or not depends_on_history(question):
        return Rewrite(question=question, method="none")  # a new topic is kept word for word
    resolved = resolve_pointers(question, history)
    if resolved and len(resolved) <= DEFAULT_LIMITS.question_chars:
        return Rewrite(question=resolved, method="rule")  # exact; no need to ask the model
    topic = new_topic(question, history)
    if topic:
        return Rewrite(question=topic, method="rule")
    if llm is None:
        return Rewrite(question=fallback_question(question, history), method="fallback")
    prompt = prompts.render("condense", history=format_history(history), question=question)
    raw = ""
    try:
        resp = llm.chat([ChatMessage(role=MessageRole.USER, content=prompt)], max_tokens=CONDENSE_MAX_TOKENS)
        raw = resp.message.content or ""
    except RagError:
        raise
    except Exception as exc:  # the answer step reports an unreachable LLM; here we only degrade
        logger.warning("condense step failed (%s); using the deterministic rewrite", type(exc).__name__)
    candidate = clean_llm_question(raw)
    if usable(candidate, question, history) and len(candidate) <= DEFAULT_LIMITS.question_chars:
        logger.info("condensed by the LLM: %r -> %r", question, candidate)
        return Rewrite(question=candidate, method="llm", llm_output=raw)
    fallback = fallback_question(question, history)
    logger.info("condense output unusable (%r); rewrite: %r", candidate[:80], fallback)
    return Rewrite(question=fallback, method="fallback", llm_output=raw)


def chat_stream(
    rag: Answerer,
    question: str,
    history: Sequence[ChatTurn | dict[str, Any]] = (),
    queue: GenerationQueue | None = None,
    limits: Limits = DEFAULT_LIMITS,
    **options: Unpack[SearchOptions],
) -> Iterator[Event]:
    """Events: `Queued`... while waiting in the queue's line, `Condensed`, then `RAG.stream`'s
    `Sources`, `Token`... and `Final`.

    A question already answered (RAG.cached) is served at once, without taking a place in the line,
    when its standalone form needs no model; a waiting request looks again whenever its place
    changes, so a repeat queued behind its first asking is served as soon as that one is answered."""
    opts = search_options(options)
    question = check_request(question, history, opts.get("top_k"), limits)
    turns = [t if isinstance(t, ChatTurn) else ChatTurn.model_validate(t) for t in history]
    settings = rag.settings
    followup: FollowUp | None = None
    if turns and settings.answer.followups:
        thread = conversation_thread(rag, turns)
        followup = read_followup(question, thread)
        if followup is not None:
            logger.info("follow-up read as %s: %s", followup.kind, followup.note())
        if followup is not None and followup.kind in LOCAL_KINDS:
            rows = rag.retriever.papers().rows(followup.paper_ids) if followup.papers else {}
            if len(rows) == len(set(followup.paper_ids)):
                yield from _answer_followup(rag, question, followup, thread, rows)
                return
            # the history names papers this store does not hold (another store, an edited history)
            logger.info("follow-up refers to papers not in the store; condensing it into a search")
            followup = None
    if followup is not None:  # similar, show_all: a new search, said in full
        if followup.kind == "show_all":
            opts = {**opts, "show_all": True}
        yield from _marked(_chat_stream(rag, question, [], queue, followup.question, opts), followup)
        return
    yield from _chat_stream(rag, question, turns, queue, None, opts)


def _chat_stream(
    rag: Answerer, question: str, turns: list[ChatTurn], queue: GenerationQueue | None, standalone: str | None,
    options: SearchOptions,
) -> Iterator[Event]:
    settings = rag.settings
    uses_llm = settings.answer.condenses_with_llm(settings.llm.is_remote)
    rewrite: Rewrite | None
    if standalone is not None:
        rewrite = Rewrite(standalone, "followup")
    else:
        rewrite = condense(None, question, turns) if turns else Rewrite(question, "none")
    if uses_llm and rewrite is not None and rewrite.method == "fallback":
        rewrite = None  # the model condenses this one, once it has a slot
    hit = rag.cached(rewrite.question, **options) if rewrite is not None else None
    if hit is None and queue is not None:
        waited = time.perf_counter()
        with queue.place() as place:
            for status in place.wait():
                yield Queued(ahead=status.ahead, eta_s=status.eta_s)
                hit = rag.cached(rewrite.question, **options) if rewrite is not None else None
                if hit is not None:
                    break  # leaves the line
            else:
                hit = rag.cached(rewrite.question, **options) if rewrite is not None else None
                if hit is None:
                    queue_ms = (time.perf_counter() - waited) * 1000
                    yield from _answer_turn(rag, question, turns, rewrite, uses_llm, queue_ms, options)
                    return
                place.timed = False  # answered while this one waited: no answer time to learn from
    if hit is not None:
        assert rewrite is not None
        yield Condensed(standalone_question=rewrite.question, method=rewrite.method)
        yield from _replay(hit, question, rewrite.question)
        return
    yield from _answer_turn(rag, question, turns, rewrite, uses_llm, 0.0, options)


def _answer_turn(
    rag: Answerer, question: str, turns: list[ChatTurn], rewrite: Rewrite | None, uses_llm: bool,
    queue_ms: float, options: SearchOptions,
) -> Iterator[Event]:
    """Condense (with the model, if it is needed) and answer; runs holding a slot, if any."""
    if rewrite is None:
        rewrite = condense(rag.llm if uses_llm else None, question, turns)
    yield Condensed(standalone_question=rewrite.question, method=rewrite.method)
    for event in rag.stream(rewrite.question, **options):
        if isinstance(event, Final):
            event.answer.question = question
            event.answer.standalone_question = rewrite.question
            event.answer.timings.queue_ms = queue_ms
        yield event


def shown_in(turn: ChatTurn, lookup: Any = None) -> list[ShownPaper]:
    """The numbered papers an assistant message showed (its citations, else its reference list)."""
    cited = [(c.number, c.paper_id, c.title) for c in turn.citations]
    return shown_papers(turn.content, cited, lookup)


def conversation_thread(rag: Answerer, turns: Sequence[ChatTurn]) -> Thread:
    """What the conversation has on screen after `turns`: each exchange read as it was asked."""
    papers = rag.retriever.papers()
    lookup = papers.table.find_id if any(t.role == "assistant" and not t.citations for t in turns) else None
    exchanges = []
    for i, turn in enumerate(turns[:-1]):
        nxt = turns[i + 1]
        if turn.role == "user" and nxt.role == "assistant":
            exchanges.append((turn.content, turn.content, shown_in(nxt, lookup)))

    def texts(ids: list[str]) -> dict[str, str]:
        return {pid: row.text for pid, row in papers.rows(ids).items()}

    return thread_of(exchanges, texts)


def _answer_followup(
    rag: Answerer, question: str, followup: FollowUp, thread: Thread, rows: dict[str, Any],
) -> Iterator[Event]:
    """A follow-up about shown papers, answered from their stored metadata and abstracts."""
    from rag.chat.followup_answer import answer_followup

    t0 = time.perf_counter()
    yield Condensed(standalone_question=question, method="followup")
    embed = rag.engine.sentence_embedder() if followup.kind == "detail" else None
    stats = rag.retriever.term_stats() if followup.kind == "narrow" else None
    answer = answer_followup(question, followup, rows, thread.shown, embed, stats)
    answer.standalone_question = question
    answer.llm = rag.settings.llm.display_name
    answer.timings.total_ms = answer.timings.first_token_ms = (time.perf_counter() - t0) * 1000
    yield Sources(sources=answer.sources)
    yield Token(text=answer.text)
    yield Final(answer=answer)


def _marked(events: Iterator[Event], followup: FollowUp) -> Iterator[Event]:
    """A new search a follow-up asked for, its answer marked with the reading."""
    for event in events:
        if isinstance(event, Final):
            answer = event.answer.model_copy(deep=True)
            answer.followup = followup
            if answer.intent is not None:
                answer.intent.notes = [followup.note(), *answer.intent.notes]
            event = Final(answer=answer)
        yield event


def _replay(answer: Answer, question: str, standalone: str) -> Iterator[Event]:
    """A cached answer as a stream, for this turn's wording."""
    answer.question = question
    answer.standalone_question = standalone
    return replay(answer)


def chat(
    rag: Answerer, question: str, history: Sequence[ChatTurn | dict[str, Any]] = (), queue: GenerationQueue | None = None,
    limits: Limits = DEFAULT_LIMITS, **options: Unpack[SearchOptions],
) -> Answer:
    """Answer a question in the context of a conversation."""
    return final_answer(chat_stream(rag, question, history, queue, limits, **options))


class Conversation:
    """A conversation with the library: follow-ups are condensed against the turns kept here.

    `conversation.ask("...")` answers and remembers the exchange; at most `max_turns` exchanges are
    kept (older ones are dropped), so a long session neither grows without bound nor exceeds the
    history limits."""

    def __init__(
        self, rag: Answerer, max_turns: int = 10, limits: Limits = DEFAULT_LIMITS, queue: GenerationQueue | None = None,
        **options: Unpack[SearchOptions],
    ):
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.rag = rag
        self.max_turns = max_turns
        self.limits = limits
        self.queue = queue
        self.options = search_options(options)
        self.turns: list[ChatTurn] = []

    def stream(self, question: str, **options: Unpack[SearchOptions]) -> Iterator[Event]:
        """Events of the answer; the exchange is remembered once the answer arrives."""
        merged: SearchOptions = {**self.options, **search_options(options)}
        for event in chat_stream(self.rag, question, list(self.turns), self.queue, self.limits, **merged):
            if isinstance(event, Final):
                self.remember(event.answer)
            yield event

    def ask(self, question: str, **options: Unpack[SearchOptions]) -> Answer:
        """Answer a (follow-up) question and remember the exchange."""
        return final_answer(self.stream(question, **options))

    def remember(self, answer: Answer) -> None:
        """Keep an answered exchange (the user's words and the cited answer)."""
        self.turns.append(ChatTurn(role="user", content=answer.question))
        self.turns.append(ChatTurn(role="assistant", content=answer.text, citations=answer.citations))
        keep = min(2 * self.max_turns, self.limits.history_messages)
        del self.turns[: max(0, len(self.turns) - keep)]
        while self.turns and sum(len(t.content) for t in self.turns) > self.limits.history_chars:
            del self.turns[:2]  # the oldest exchange

    def reset(self) -> None:
        """Forget the conversation."""
        self.turns.clear()

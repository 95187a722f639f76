"""The waiting line (rag/queue.py) and the answer cache (rag/answer/cache.py), in the library and over HTTP.

Issue 11: everyone the line accepts is served, first come first served, seeing its place and wait;
a repeated question comes from the cache with the same citations; any write to the store
invalidates it."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from rag import RAG, Settings
from rag.errors import BusyError
from rag.events import Condensed, Final, Queued, Sources, Token
from rag.queue import Cancellable, GenerationQueue, QueueStatus
from rag.serve import ServerSettings, running

from .fakes import rag_with_llm

LEAN_Q = "Which paper proposes a lifelong learning agent for formal theorem proving?"
LEAN = "LeanAgent: Lifelong Learning for Formal Theorem Proving"


def _wait_until(cond, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def test_line_is_first_come_first_served_and_reports_places() -> None:
    queue = GenerationQueue(slots=1, max_waiting=8, timeout=30)
    release = threading.Event()
    served: list[int] = []
    statuses: dict[int, list[QueueStatus]] = {}

    def caller(n: int) -> None:
        with queue.place() as place:
            statuses[n] = list(place.wait())
            served.append(n)
            if n == 0:
                release.wait(10)
            else:
                time.sleep(0.35)  # an answer takes a while (longer than a waiter's poll)

    threads = [threading.Thread(target=caller, args=(0,))]
    threads[0].start()
    _wait_until(lambda: queue.stats()["running"] == 1)
    for n in range(1, 6):  # each joins after the previous one is in line
        t = threading.Thread(target=caller, args=(n,))
        t.start()
        threads.append(t)
        _wait_until(lambda n=n: queue.stats()["waiting"] == n)
    release.set()
    for t in threads:
        t.join(10)
    assert served == [0, 1, 2, 3, 4, 5]
    assert statuses[0] == []  # a free slot: no waiting
    # The 5th waiter first saw 5 ahead (1 answering, 4 waiting), then its place move up to 1.
    aheads = [s.ahead for s in statuses[5]]
    assert aheads[0] == 5 and aheads[-1] == 1 and aheads == sorted(aheads, reverse=True)
    assert statuses[5][0].eta_s is None  # no answer time measured yet when it joined
    assert any(s.eta_s is not None and s.eta_s > 0 for s in statuses[5])  # measured once one was served
    assert queue.stats()["running"] == 0 and queue.stats()["waiting"] == 0


def test_a_newcomer_whose_wait_would_exceed_the_timeout_is_refused_at_once() -> None:
    queue = GenerationQueue(slots=1, max_waiting=100, timeout=1.0)
    with queue.slot():
        time.sleep(0.4)  # one measured answer of ~0.4 s
    with queue.place() as first:
        list(first.wait())
        joined: list[threading.Thread] = []

        def waiter() -> None:
            try:
                with queue.place() as p:
                    for _ in p.wait():
                        pass
            except BusyError:
                pass

        for _ in range(2):  # 1 answering + 2 waiting: a 4th would wait ~3 x 0.4 s > 1 s
            t = threading.Thread(target=waiter)
            t.start()
            joined.append(t)
        _wait_until(lambda: queue.stats()["waiting"] == 2)
        with pytest.raises(BusyError) as info:
            with queue.place():
                pass
        assert info.value.queue_full and "waiting ahead" in str(info.value)
    for t in joined:
        t.join(10)


def test_queued_events_then_the_answer_and_cancelling_leaves_the_line(fake_rag) -> None:
    rag = fake_rag(["LeanAgent learns continuously [1]."])
    queue = GenerationQueue(slots=1, max_waiting=4, timeout=30)
    events: list = []
    with queue.slot():
        time.sleep(0.1)  # a measured answer time, so a wait has an estimate
    with queue.slot():
        t = threading.Thread(target=lambda: events.extend(rag.chat_stream(LEAN_Q, queue=queue)))
        t.start()
        _wait_until(lambda: events)
        queued = events[0]
        assert isinstance(queued, Queued) and queued.ahead == 1 and queued.eta_s is not None
        assert queued.message.startswith("1 question ahead of you, ~")
        # A second caller that goes away while waiting gives its place back.
        stream = Cancellable(rag.chat_stream(LEAN_Q + " (other)", queue=queue))
        first = stream.step(None)
        assert isinstance(first, Queued) and first.ahead == 2
        stream.cancel()
        _wait_until(lambda: queue.stats()["waiting"] == 1)
    t.join(30)
    kinds = [type(e) for e in events]
    assert kinds[:3] == [Queued, Condensed, Sources] and kinds[-1] is Final and Token in kinds
    answer = events[-1].answer
    assert answer.timings.queue_ms > 0 and answer.citations
    assert queue.stats()["waiting"] == 0 and queue.stats()["running"] == 0


def test_repeated_question_comes_from_the_cache_with_the_same_citations(fake_rag) -> None:
    rag = fake_rag(["LeanAgent learns continuously [1]."], answer={"cache_size": 8})
    first = rag.ask(LEAN_Q)
    assert first.timings.cache == "miss" and first.citations
    again = rag.ask("  Which paper proposes a lifelong learning agent   for formal theorem proving? ")
    assert again.timings.cache == "hit"
    assert len(rag.llm.calls) == 1  # the model was asked once
    assert again.text == first.text and again.citations == first.citations
    assert [s.paper_id for s in again.sources] == [s.paper_id for s in first.sources]
    assert again.timings.total_ms < 50
    # Other options are another answer.
    rag.llm.script.append("LeanAgent [1].")
    assert rag.ask(LEAN_Q, top_k=2).timings.cache == "miss"
    assert rag.answers.stats()["entries"] == 2


def test_a_repeat_waiting_in_line_is_served_from_the_cache_when_the_first_is_answered(fake_rag) -> None:
    rag = fake_rag(["LeanAgent learns continuously [1]."], answer={"cache_size": 8}, delay=0.05)
    queue = GenerationQueue(slots=1, max_waiting=4, timeout=30)
    answers: list = []
    t1 = threading.Thread(target=lambda: answers.append(rag.chat(LEAN_Q, queue=queue)))
    t1.start()
    _wait_until(lambda: queue.stats()["running"] == 1)
    events: list = []
    t2 = threading.Thread(target=lambda: events.extend(rag.chat_stream(LEAN_Q, queue=queue)))
    t2.start()
    t1.join(30)
    t2.join(30)
    assert isinstance(events[0], Queued)
    assert events[-1].answer.timings.cache == "hit" and len(rag.llm.calls) == 1
    assert events[-1].answer.citations == answers[0].citations


@pytest.mark.slow
def test_any_write_to_the_store_invalidates_the_cache(tmp_path) -> None:
    """Real store, embeddings and evidence answers: a remove here, then an ingest by another RAG
    (as another process would) both make the next asking a miss."""
    settings = Settings(store={"path": tmp_path / "chroma"})
    rag = RAG(settings)
    assert rag.ask(LEAN_Q).timings.cache == "miss"
    hit = rag.ask(LEAN_Q)
    assert hit.timings.cache == "hit" and hit.citations[0].title == LEAN
    other = RAG(settings)
    pid = next(s.paper_id for s in hit.sources if s.title != LEAN)
    other.remove(pid)  # another writer: only the store's revision tells this RAG
    after = rag.ask(LEAN_Q)
    assert after.timings.cache == "miss" and pid not in [s.paper_id for s in after.sources]
    assert rag.ask(LEAN_Q).timings.cache == "hit"
    rag.ingest()  # puts the removed seed paper back (a write by this RAG)
    assert rag.ask(LEAN_Q).timings.cache == "miss"


def test_http_cache_header_and_queue_events(seed_rag) -> None:
    rag = rag_with_llm(seed_rag, None, answer={"cache_size": 8})  # evidence answers, no LLM
    queue = GenerationQueue(slots=1, max_waiting=4, timeout=30)
    with running(rag, ServerSettings(port=0, ui=False), queue=queue) as srv, httpx.Client(
        base_url=srv.url, timeout=60
    ) as http:
        first = http.post("/api/ask", json={"question": LEAN_Q})
        assert first.status_code == 200 and first.headers["x-rag-cache"] == "miss"
        again = http.post("/api/ask", json={"question": LEAN_Q})
        assert again.headers["x-rag-cache"] == "hit"
        assert again.json()["citations"] == first.json()["citations"]
        assert again.json()["timings"]["cache"] == "hit"
        assert http.get("/healthz").json()["answer_cache"]["hits"] == 1
        other = "Which benchmark evaluates retrieval-augmented multimodal models?"
        native: list[str] = []
        oai: list[str] = []

        def read(lines: list[str], path: str, body: dict) -> None:
            with httpx.stream("POST", srv.url + path, json=body, timeout=60) as resp:
                lines.extend(resp.iter_lines())

        with queue.slot():  # the one slot is busy: both streams wait in line and say so
            threads = [
                threading.Thread(target=read, args=(native, "/api/ask/stream", {"question": other})),
                threading.Thread(target=read, args=(oai, "/v1/chat/completions", {
                    "messages": [{"role": "user", "content": other + " Name it."}], "stream": True})),
            ]
            threads[0].start()
            _wait_until(lambda: queue.stats()["waiting"] == 1)
            threads[1].start()
            _wait_until(lambda: queue.stats()["waiting"] == 2)
        for t in threads:
            t.join(60)
        assert native[0] == "event: queued"
        data = json.loads(native[1].removeprefix("data: "))
        assert data["ahead"] == 1 and data["message"].startswith("1 question ahead of you")
        assert "event: answer" in native
        comments = [line for line in oai if line.startswith(": queued ")]
        assert comments and '"ahead": 2' in comments[0] and "2 questions ahead of you" in comments[0]
        assert [line for line in oai if line][-1] == "data: [DONE]"
        assert http.get("/healthz").json()["queue"]["waiting"] == 0


def test_the_gate_reports_idle_once_the_last_caller_leaves_and_the_heap_trim_is_rate_limited() -> None:
    """`rag serve` gives freed heap back to the OS (glibc malloc_trim) when no answer runs; never
    while one runs or waits, and at most once per interval."""
    from rag.serve.memory import HeapTrimmer

    idle: list[int] = []
    queue = GenerationQueue(slots=1, on_idle=lambda: idle.append(1))
    with queue.place() as first:
        first.wait()
        with queue.place() as second:  # waits behind the first
            assert second.granted is False
        assert idle == []  # the second left the line while the first still runs
    assert idle == [1]

    trimmer = HeapTrimmer(interval=60.0)
    calls: list[int] = []
    real = trimmer._trim
    assert real is not None  # glibc on these machines
    trimmer._trim = lambda pad: calls.append(real(pad))
    trimmer()
    trimmer()
    assert len(calls) == 1 and calls[0] in (0, 1)  # malloc_trim returns 1 when it released memory

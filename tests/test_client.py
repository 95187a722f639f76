"""`rag.client.Client` against a real running server: typed answers, streaming, chat, clear errors.
The server's LLM is scripted (tests/fakes.py) where a test needs one: the client is the subject."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from rag import RAG, Answer, Settings, Source
from rag.client import (
    APIConnectionError,
    AuthenticationError,
    BadRequestError,
    Client,
    ServerBusyError,
    ServiceUnavailableError,
)
from rag.errors import InvalidRequestError, RagError
from rag.events import Condensed, Sources, Token
from rag.queue import GenerationQueue
from rag.serve import ServerSettings, running

from .fakes import Broken, rag_with_llm

ON_TOPIC = "Which paper proposes a lifelong learning agent for formal theorem proving?"
OFF_TOPIC = "What is the capital of France?"
LEAN = "LeanAgent: Lifelong Learning for Formal Theorem Proving"


@pytest.fixture(scope="module")
def rag(seed_rag) -> RAG:
    """The seed store (shared read-only) with top_k 2 and short answers; the real local LLM."""
    return rag_with_llm(seed_rag, None, retrieval={"top_k": 2}, llm={"max_tokens": 64})


@pytest.fixture(scope="module")
def server(rag: RAG):
    with running(rag, ServerSettings(port=0, ui=False, api_key="k")) as srv:
        yield srv


def test_ask_returns_the_library_types(server) -> None:
    with Client(server.url, api_key="k") as client:
        assert client.health()["papers"] == 19
        answer = client.ask(OFF_TOPIC)
    assert isinstance(answer, Answer) and answer.refused
    assert all(isinstance(s, Source) for s in answer.sources)


def test_errors_are_clear_exceptions(server, rag: RAG) -> None:
    with pytest.raises(AuthenticationError, match="401"):
        Client(server.url).ask(OFF_TOPIC)
    with pytest.raises(AuthenticationError):
        Client(server.url, api_key="wrong").ask(OFF_TOPIC)
    client = Client(server.url, api_key="k")
    with pytest.raises(BadRequestError, match="top_k") as info:
        client.ask(OFF_TOPIC, top_k=500)
    assert isinstance(info.value, InvalidRequestError) and info.value.status_code == 400
    with pytest.raises(BadRequestError, match="empty"):
        list(client.stream("   "))
    with pytest.raises(TypeError):
        client.ask("q", history=[42])  # type: ignore[list-item]

    queue = GenerationQueue(slots=1, max_waiting=0, timeout=1)
    with running(rag, ServerSettings(port=0, ui=False), queue=queue) as busy, queue.slot():
        with pytest.raises(ServerBusyError) as info:
            Client(busy.url).ask(OFF_TOPIC)
        assert info.value.status_code == 429


def test_stopped_server_and_empty_store(tmp_path: Path) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    client = Client(f"http://127.0.0.1:{port}", timeout=5)
    for call in (lambda: client.ask(OFF_TOPIC), lambda: list(client.stream(OFF_TOPIC)), client.health):
        with pytest.raises(APIConnectionError, match="cannot reach the RAG server") as info:
            call()
        assert isinstance(info.value, RagError)

    empty = RAG(Settings(store={"path": tmp_path / "empty", "auto_seed": False}))
    with running(empty, ServerSettings(port=0, ui=False)) as srv:
        with pytest.raises(ServiceUnavailableError, match="no papers") as info:
            Client(srv.url).ask(ON_TOPIC)
        assert info.value.error_type == "empty_store"
        with pytest.raises(ServiceUnavailableError):
            list(Client(srv.url).stream(ON_TOPIC))


REWRITE = "What benchmark does LeanAgent use for formal theorem proving?"


def test_stream_and_chat_keep_the_conversation(fake_rag) -> None:
    # Evidence answers as with the local model.
    rag = fake_rag([REWRITE], retrieval={"top_k": 2}, answer={"mode": "evidence"})
    with running(rag, ServerSettings(port=0, ui=False, api_key="k")) as server:
        client = Client(server.url, api_key="k")
        events = list(client.stream(ON_TOPIC))
        kinds = [e.type for e in events]
        assert kinds[:2] == ["condensed", "sources"] and kinds[-1] == "answer" and kinds.count("token") >= 3
        assert isinstance(events[1].sources[0], Source) and events[1].sources[0].title == LEAN
        final = events[-1].answer
        assert isinstance(final, Answer) and final.citations
        assert "".join(e.text for e in events if e.type == "token") == final.text

        first = client.chat(ON_TOPIC)
        assert first.sources[0].title == LEAN and len(client.history) == 2
        follow = client.chat("What benchmark does it use?")
        assert follow.question == "What benchmark does it use?"
        # The client sent its history: "it" is the paper just shown, answered from its abstract
        # (no retrieval, no model call).
        assert follow.followup is not None and follow.followup.kind == "detail"
        assert [c.title for c in follow.citations] == [LEAN] and follow.citations[0].supporting_text in follow.text
        assert rag.llm.calls == [] and follow.timings.retrieval_ms == 0
        assert len(client.history) == 4 and client.history[3]["citations"][0]["title"] == LEAN
        client.reset()
        assert client.history == []
        again = client.chat("What benchmark does it use?")
        assert again.standalone_question == again.question and again.followup is None  # no history sent


def test_a_stream_failing_mid_answer_raises_after_its_tokens(fake_rag) -> None:
    broken = Broken("LeanAgent achieves exceptional scores in stability and backward transfer [1]. More",
                    ConnectionError("connection reset"))
    rag = fake_rag([broken, ConnectionError("refused")], retrieval={"top_k": 2})
    with running(rag, ServerSettings(port=0, ui=False)) as server:
        client = Client(server.url)
        events = []
        with pytest.raises(ServiceUnavailableError, match="unavailable") as info:
            for event in client.stream(ON_TOPIC):
                events.append(event)
        assert [type(e) for e in events] == [Condensed, Sources, Token]
        assert events[2].text == "LeanAgent achieves exceptional scores in stability and backward transfer [1]."
        assert info.value.status_code == 503 and info.value.error_type == "llm_unavailable"
        assert "ConnectionError: connection reset" in str(info.value)
        with pytest.raises(ServiceUnavailableError, match="ConnectionError: refused") as info:
            client.ask(ON_TOPIC)
        assert info.value.error_type == "llm_unavailable"

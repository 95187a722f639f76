"""The OpenAI-compatible path (real llama_cpp.server) and Chroma server mode (real `chroma run`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag import RAG, Settings
from rag.errors import LLMUnavailableError

from .servers import chroma_server, free_port, llama_server
from .test_answer import GRAPH_Q, GRAPH_TITLE, assert_citations_valid

pytestmark = pytest.mark.slow


def test_openai_compatible_endpoint_answers_and_a_stopped_one_fails_clearly(tmp_path: Path, seed_rag) -> None:
    store = {"path": seed_rag.settings.store.path}
    with llama_server(tmp_path) as base_url:
        rag = RAG(Settings(store=store, llm={"base_url": base_url, "model": "smollm2", "timeout": 60}))
        from llama_index.llms.openai_like import OpenAILike

        assert isinstance(rag.llm, OpenAILike)
        answer = rag.ask(GRAPH_Q)
        assert answer.llm_called and not answer.refused
        assert answer.llm == f"smollm2 @ {base_url.rsplit('/v1', 1)[0]}"  # scheme and host only
        assert_citations_valid(answer)
        # What the 135M model writes varies; the checked answer cites only what its sources state.
        assert answer.sources[0].title == GRAPH_TITLE and answer.citations, answer.model_dump_json(indent=1)

    # The endpoint is gone now: the answer already given still comes from the answer cache; anything
    # that needs the model raises a clear error, and the CLI prints one line.
    again = rag.ask(GRAPH_Q)
    assert again.timings.cache == "hit" and again.citations == answer.citations
    with pytest.raises(LLMUnavailableError, match=base_url.replace(".", r"\.")):
        rag.ask(GRAPH_Q, top_k=3)
    env = dict(os.environ, RAG_STORE__PATH=str(store["path"]), RAG_LLM__BASE_URL=base_url,
               RAG_LLM__MODEL="smollm2", RAG_LLM__TIMEOUT="5", RAG_LLM__MAX_RETRIES="1",
               RAG_LLM__API_KEY="sk-do-not-print-me")
    t0 = time.time()
    out = subprocess.run([sys.executable, "-m", "rag.cli", "--log-level", "ERROR", "ask", GRAPH_Q], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip().startswith("error: LLM endpoint " + base_url), out.stderr
    assert "Traceback" not in out.stderr and "sk-do-not-print-me" not in out.stderr + out.stdout
    assert time.time() - t0 < 60


def test_unreachable_endpoint_with_timeout(tmp_path: Path, seed_rag) -> None:
    port = free_port()  # nothing listens here
    rag = RAG(Settings(store={"path": seed_rag.settings.store.path},
                       llm={"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "timeout": 2, "max_retries": 1}))
    t0 = time.time()
    with pytest.raises(LLMUnavailableError, match=f"127.0.0.1:{port}"):
        rag.ask(GRAPH_Q)
    assert time.time() - t0 < 30


def test_chroma_server_mode_ingests_and_answers(tmp_path: Path) -> None:
    with chroma_server(tmp_path) as url:
        rag = RAG(Settings(store={"chroma_url": url}))
        assert rag.stats()["papers"] == 19  # seeded through the server
        assert rag.stats()["store"] == url
        assert rag.ingest(progress=False).unchanged == 19
        answer = rag.ask(GRAPH_Q)
        assert GRAPH_TITLE in [c.title for c in answer.citations]
        assert_citations_valid(answer)
        assert not (tmp_path / "chroma").exists()  # nothing written to the embedded default


def test_llm_rerank_reorders_the_fused_top_through_a_real_endpoint(tmp_path: Path, seed_rag) -> None:
    store = {"path": seed_rag.settings.store.path}
    fused = seed_rag.retrieve(GRAPH_Q, top_k=8)
    with llama_server(tmp_path) as base_url:
        rag = RAG(Settings(store=store, llm={"base_url": base_url, "model": "smollm2", "timeout": 120},
                           retrieval={"rerank": "llm", "rerank_depth": 8}))
        r = rag.retrieve(GRAPH_Q, top_k=8)
    # One LLM call happened and its reply was parsed (a failed call would say "failed").
    assert len(r.notes) == 1 and "failed" not in r.notes[0], r.notes
    assert r.notes[0] in r.intent.notes  # shown with the reading of the question
    # The same papers, in the LLM's order where it gave one.
    assert sorted(s.paper_id for s in r.sources) == sorted(s.paper_id for s in fused.sources)
    assert [s.number for s in r.sources] == list(range(1, 9))


def test_two_rag_serve_processes_answer_from_one_chroma_server_and_one_endpoint(tmp_path: Path) -> None:
    """Issue 11's deployment past one process: two `rag serve` on one `chroma run` and one
    OpenAI-compatible endpoint (real llama_cpp.server), each allowed 2 generations at once
    (RAG_LLM__MAX_CONCURRENT=2); questions to both at once are answered from the one store, and
    a paper removed by a third process is gone from both processes' next answers."""
    import threading

    import httpx

    from .servers import rag_serve

    questions = [GRAPH_Q, "How can synthetic data help LLM post-training?"]
    with chroma_server(tmp_path) as url, llama_server(tmp_path) as base_url:
        writer = RAG(Settings(store={"chroma_url": url, "paper_table_dir": tmp_path / "tables-writer"}))
        assert writer.stats()["papers"] == 19  # seeded through the server
        env = {"RAG_STORE__CHROMA_URL": url, "RAG_STORE__PATH": str(tmp_path / "local"),
               "RAG_STORE__PAPER_TABLE_DIR": str(tmp_path / "tables"), "RAG_LLM__BASE_URL": base_url,
               "RAG_LLM__MODEL": "smollm2", "RAG_LLM__MAX_CONCURRENT": "2", "RAG_LLM__MAX_TOKENS": "48",
               "RAG_ANSWER__MODE": "generative", "RAG_ANSWER__CACHE_SIZE": "0"}
        with rag_serve(tmp_path / "a.log", env, "--no-ui") as (a, _), rag_serve(tmp_path / "b.log", env, "--no-ui") as (b, _):
            for base in (a, b):
                assert httpx.get(f"{base}/healthz", timeout=30).json()["queue"]["slots"] == 2
            replies: dict[tuple[str, str], httpx.Response] = {}

            def ask(base: str, question: str) -> None:
                replies[base, question] = httpx.post(f"{base}/api/ask", json={"question": question}, timeout=300)

            askers = [threading.Thread(target=ask, args=pair) for pair in ((a, questions[0]), (b, questions[1]))]
            for t in askers:
                t.start()
            for t in askers:
                t.join()
            assert len(replies) == 2
            for (base, _question), reply in replies.items():
                assert reply.status_code == 200, (base, reply.text)
                body = reply.json()
                assert body["llm_called"] and body["sources"], body
                numbers = {s["number"] for s in body["sources"]}
                assert {c["number"] for c in body["citations"]} <= numbers
            graph = next(s["paper_id"] for s in replies[a, GRAPH_Q].json()["sources"] if s["title"] == GRAPH_TITLE)

            assert writer.remove(graph) > 0  # a write by another process, through the same server
            for base in (a, b):
                body = httpx.post(f"{base}/api/ask", json={"question": GRAPH_Q}, timeout=300).json()
                assert graph not in [s["paper_id"] for s in body["sources"]], base

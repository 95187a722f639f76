"""The store names its embedding model; `rag adapt` trains one on the stored papers and swaps it in.

Real components: embedded Chroma in tmp dirs, the bundled all-MiniLM-L6-v2, real training steps on the
19 seed papers (a few seconds), the real CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rag import RAG, Settings
from rag.errors import ConfigError
from rag.models.adapt import AdaptConfig, training_pairs
from rag.models.embeddings import bundled_model_path, model_fingerprint
from rag.store.chroma import ModelRecord, PaperStore

from .conftest import REPO, SEED_CORPUS

SMALL = AdaptConfig(epochs=1, batch_size=8, learning_rate=5e-5)


def _settings(store: Path, **embedding) -> Settings:
    return Settings(store={"path": store, "auto_seed": False}, embedding=embedding)


@pytest.fixture(scope="module")
def adapted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A seed store adapted once (3 training steps), and what it held before."""
    store = tmp_path_factory.mktemp("adapt") / "chroma"
    rag = RAG(_settings(store))
    rag.ingest([SEED_CORPUS], progress=False)
    before = {
        "record": rag.store.model_record(),
        "chunks": rag.store.count_chunks(),
        "top": [s.paper_id for s in rag.retrieve("synthetic data for long context", top_k=3).sources],
    }
    report = rag.adapt(SMALL, progress=False)
    before["report"] = report
    before["after_top"] = [s.paper_id for s in rag.retrieve("synthetic data for long context", top_k=3).sources]
    return store, before


@pytest.mark.slow
def test_ingest_records_the_bundled_model_in_the_store(tmp_path: Path) -> None:
    rag = RAG(_settings(tmp_path / "chroma"))
    assert rag.store.model_record() is None  # empty: any model may write it
    rag.ingest([SEED_CORPUS], progress=False)
    record = PaperStore(rag.settings.store).model_record()
    assert record == ModelRecord("bundled", model_fingerprint(bundled_model_path()))
    assert len(record.fingerprint) == 16


@pytest.mark.slow
def test_a_store_refuses_a_model_that_did_not_write_it(adapted: tuple[Path, dict], tmp_path: Path) -> None:
    store, _ = adapted
    rag = RAG(_settings(store, model_path=bundled_model_path()))
    with pytest.raises(ConfigError, match="written by the embedding model 'adapted'"):
        rag.retrieve("diffusion models")


@pytest.mark.slow  # trains a model (~12 s): the full suite
def test_adapt_trains_saves_records_and_re_embeds(adapted: tuple[Path, dict]) -> None:
    store, before = adapted
    report = before["report"]
    assert before["record"].name == "bundled"
    # The model lives with the store, under its fingerprint, with how it was made.
    assert report.model_dir == store / "models" / report.record.fingerprint
    assert report.record == ModelRecord("adapted", model_fingerprint(report.model_dir))
    assert report.record.fingerprint != before["record"].fingerprint
    training = json.loads((report.model_dir / "adaptation.json").read_text())
    assert training["papers"] == 19 and training["steps"] == 3 and training["config"]["batch_size"] == 8
    assert training["base_fingerprint"] == before["record"].fingerprint
    assert not list((store / "models").glob(".training-*"))
    # The store was re-embedded in full and its manifest names the new model.
    fresh = PaperStore(Settings(store={"path": store}).store)
    assert fresh.model_record() == report.record
    assert fresh.count_chunks() == before["chunks"] == report.chunks
    assert {c.name for c in fresh.client.list_collections()} == {"iclr2025_papers"}
    assert len(before["after_top"]) == len(before["top"]) == 3  # the swapped-in collection answers


@pytest.mark.slow  # trains a model (~12 s): the full suite
def test_feedback_is_off_by_default_on_an_adapted_store(adapted: tuple[Path, dict], tmp_path: Path) -> None:
    store, _ = adapted
    assert RAG(_settings(store)).retriever.feedback_weight() == 0.0  # adapted model: no Rocchio pass
    explicit = Settings(store={"path": store, "auto_seed": False}, retrieval={"feedback_weight": 0.5})
    assert RAG(explicit).retriever.feedback_weight() == 0.5  # a setting always wins
    bundled = RAG(_settings(tmp_path / "chroma"))
    bundled.ingest([SEED_CORPUS], progress=False)
    assert bundled.retriever.feedback_weight() == 0.5


@pytest.mark.slow  # trains a model (~12 s): the full suite
def test_a_new_process_uses_the_store_s_adapted_model(adapted: tuple[Path, dict]) -> None:
    store, before = adapted
    rag = RAG(_settings(store))  # nothing configured: the store decides
    vec = np.asarray(rag.embed_model.get_query_embedding("graph neural networks"))
    from sentence_transformers import SentenceTransformer

    own = SentenceTransformer(str(before["report"].model_dir), device="cpu")
    ref = own.encode(["graph neural networks"], normalize_embeddings=True)[0]
    base = SentenceTransformer(str(bundled_model_path()), device="cpu")
    old = base.encode(["graph neural networks"], normalize_embeddings=True)[0]
    assert float(vec @ ref) > 0.9999 and float(vec @ old) < 0.9999
    # Its vectors match the stored ones: a paper's title finds that paper first.
    pid, title = next((p.paper_id, p.title) for p in rag.retriever.papers().records)
    assert rag.retrieve(title, top_k=1, retriever="dense").sources[0].paper_id == pid
    # And a later ingest of the same corpus finds nothing to re-embed.
    report = rag.ingest([SEED_CORPUS], progress=False)
    assert report.unchanged == 19 and report.chunks_written == 0


@pytest.mark.slow
def test_failed_adapt_leaves_the_store_and_its_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rag = RAG(_settings(tmp_path / "chroma"))
    rag.ingest([SEED_CORPUS], progress=False)
    record, chunks = rag.store.model_record(), rag.store.count_chunks()
    snapshot = sorted(rag.store.iter_records(["metadatas"]), key=lambda r: r[0])

    import rag.ingest.build as ingest  # the pipeline imports it when it writes

    real = ingest.ingest_papers

    def half_then_fail(store, embed, papers, cfg, progress=True):
        real(store, embed, papers[:5], cfg, progress=False)  # some new vectors are written ...
        raise OSError("disk full")  # ... then the re-embed fails

    monkeypatch.setattr(ingest, "ingest_papers", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        rag.adapt(SMALL, progress=False)
    fresh = RAG(_settings(tmp_path / "chroma"))
    assert fresh.store.model_record() == record and fresh.store.count_chunks() == chunks
    assert sorted(fresh.store.iter_records(["metadatas"]), key=lambda r: r[0]) == snapshot
    assert {c.name for c in fresh.store.client.list_collections()} == {"iclr2025_papers"}
    assert not list((tmp_path / "chroma" / "models").glob("*"))  # no half-used model is left behind
    assert fresh.retrieve("reverse bottleneck", top_k=2).sources  # still answers with the bundled model


def test_training_pairs_never_give_the_title_away() -> None:
    import random

    from rag.text.chunking import paper_chunks

    chunks = paper_chunks("A Title", "One. Two. Three. Four. Five.", 3, 2, 256, lambda ts: [len(t.split()) for t in ts])
    pairs = training_pairs([chunks, chunks[:1]], random.Random(0))
    assert len(pairs) == 1 and pairs[0][0] == "A Title" and "A Title" not in pairs[0][1]


def test_adapt_cli_help_and_bad_arguments(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "rag.cli", "adapt"]
    out = subprocess.run([*run, "--help"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0 and "--epochs" in out.stdout and "manifest" in out.stdout
    env = {**__import__("os").environ, "RAG_STORE__PATH": str(tmp_path / "chroma")}
    bad = subprocess.run([*run, "--epochs", "0"], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert bad.returncode == 1 and "--epochs >= 1" in bad.stderr


def test_adapt_without_the_adapt_extra_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """sentence-transformers and transformers are the `adapt` extra: without them `rag adapt` says how
    to install them before it locks or writes anything."""
    import importlib.util

    from rag.errors import ConfigError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    rag = RAG(Settings(store={"path": tmp_path / "chroma"}))
    with pytest.raises(ConfigError, match=r"pip install 'iclr-rag\[adapt\]'"):
        rag.adapt(progress=False)
    assert not (tmp_path / "chroma").exists()  # nothing opened or written

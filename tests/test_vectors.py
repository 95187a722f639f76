"""The sentence-vector cache: bounded, its memory reused once full, and the same vectors whether a
text was cached or not (real embedding model)."""

from __future__ import annotations

import numpy as np

from rag.store.vectors import VectorCache, unit_rows

SENTENCES = [
    "We study spurious correlations in vision-language models.",
    "Synthetic data helps the post-training of large language models.",
    "A lifelong learning agent proves theorems in Lean.",
    "Deep networks break the curse of dimensionality through compositionality.",
]


class Counting:
    """Wraps an embedding model and counts the texts it embeds."""

    def __init__(self, model) -> None:
        self.model, self.texts = model, 0

    def get_text_embedding_batch(self, texts):
        self.texts += len(texts)
        return self.model.get_text_embedding_batch(texts)


def test_cached_vectors_equal_fresh_ones_and_the_real_model_vectors(seed_rag) -> None:
    model = Counting(seed_rag.embed_model)
    cache = VectorCache(max_items=100)
    first = cache.embed(model, SENTENCES)
    again = cache.embed(model, SENTENCES[::-1])
    assert model.texts == len(SENTENCES) and cache.hits == len(SENTENCES)
    assert all(np.array_equal(a, b) for a, b in zip(first, again[::-1]))  # not a float32/float16 mix
    exact = unit_rows(seed_rag.embed_model.get_text_embedding_batch(SENTENCES))
    kept = unit_rows(first)
    assert first[0].dtype == np.float32
    assert np.abs(kept @ kept.T - exact @ exact.T).max() < 1e-3  # float16 rows: cosines move < 1e-3
    assert (np.einsum("ij,ij->i", kept, exact) > 0.9999).all()


def test_the_cache_is_bounded_and_reuses_its_rows() -> None:
    class Fake:
        texts = 0

        def get_text_embedding_batch(self, texts):
            Fake.texts += len(texts)
            return [np.full(8, float(int(t[1:])), dtype=np.float32) for t in texts]

    model, cache = Fake(), VectorCache(max_items=300)
    cache.embed(model, [f"t{i}" for i in range(500)])
    assert len(cache) == 300 and cache._matrix is not None and cache._matrix.shape == (300, 8)
    # the 300 most recent stay; the oldest went first
    recent = cache.embed(model, [f"t{i}" for i in range(200, 500)])
    assert Fake.texts == 500 and [v[0] for v in recent] == [float(i) for i in range(200, 500)]
    assert cache.embed(model, ["t0"])[0][0] == 0.0 and Fake.texts == 501  # evicted, embedded again
    assert cache._matrix.shape == (300, 8)  # a freed row took it
    cache.embed(Fake(), ["t1"])  # another model: nothing of the first one's is served
    assert len(cache) == 1


def test_ingest_stores_each_abstract_sentence_and_answers_read_them(tmp_path) -> None:
    """Ingest keeps a vector for every abstract sentence, pooled from the windows that hold it (the
    sentence's tokens in the window's context); an answer then embeds only its question."""
    from rag import RAG, Settings
    from rag.ingest.build import Chunker
    from rag.ingest.corpus import load_papers
    from rag.store.sentence_vectors import SentenceVectors, embedder_key
    from rag.text.citations import abstract_sentences
    from tests.conftest import SEED_CORPUS

    rag = RAG(Settings(store={"path": tmp_path / "chroma", "auto_seed": False}))
    rag.ingest([SEED_CORPUS], progress=False)
    papers = load_papers(SEED_CORPUS).papers
    sentences = list(dict.fromkeys(s for p in papers for s in abstract_sentences(p.abstract)))
    stored = SentenceVectors(rag.store.sentence_vectors_path, embedder_key(rag.embed_model))
    assert stored.count() == len(sentences) and stored.missing(sentences) == []

    # The stored vector of a paper's first sentence is the mean of its tokens' states in its first
    # window (the only window that holds it), recomputed here in float32 by the encoder directly.
    paper = papers[0]
    said = abstract_sentences(paper.abstract)
    window = Chunker.for_model(rag.embed_model, rag.settings.ingest).chunks(paper)[1]
    assert window.span[0] == 0 and window.embed_text.startswith(f"{paper.title}\n{said[0]}")
    start = len(paper.title) + 1
    _, parts = rag.embed_model.encoder.pooled_with_spans([window.embed_text], [[(start, start + len(said[0]))]])
    expected = unit_rows([parts[0][0].numpy()])[0]
    assert float(stored.get([said[0]])[said[0]] @ expected) > 0.995  # bf16 ingest, float16 storage
    # ... and it is about the sentence: on average closer to the sentence's own embedding than to the
    # paper's other sentences' (context bleeds in, so not every one of them).
    own = unit_rows(rag.embed_model.get_text_embedding_batch(said))
    sims = unit_rows([stored.get(said)[s] for s in said]) @ own.T
    others = sims[~np.eye(len(said), dtype=bool)]
    assert np.diag(sims).mean() > others.mean() + 0.1, (np.diag(sims).mean(), others.mean())

    answer = rag.ask("Which papers study synthetic data for training language models?")
    cache = rag.engine._vectors
    assert answer.citations and cache.stored_hits >= len(answer.citations)
    assert cache.misses <= 2  # the question (and its topic words), never an abstract sentence

    # Content-addressed: another model's key finds nothing; a lost file is filled by the next ingest.
    assert SentenceVectors(rag.store.sentence_vectors_path, "another-model").get(sentences) == {}
    stored.close()
    rag.store.sentence_vectors_path.unlink()
    report = rag.ingest([SEED_CORPUS], progress=False)
    assert report.unchanged == len(papers) and report.chunks_written == 0
    assert SentenceVectors(rag.store.sentence_vectors_path, embedder_key(rag.embed_model)).count() == len(sentences)


def test_composed_windows_are_the_token_weighted_mean_of_their_parts(tmp_path) -> None:
    """RAG_INGEST__WINDOW_VECTORS=composed: a window's stored vector is the token-weighted mean of its
    title's and sentences' pooled vectors, and the chunking scheme says so (a switch re-embeds)."""
    from rag import RAG, Settings
    from rag.ingest.corpus import load_papers
    from rag.text.citations import abstract_sentences
    from tests.conftest import SEED_CORPUS

    rag = RAG(Settings(store={"path": tmp_path / "chroma", "auto_seed": False}, ingest={"window_vectors": "composed"}))
    rag.ingest([SEED_CORPUS], progress=False)
    paper = load_papers(SEED_CORPUS).papers[0]
    said = abstract_sentences(paper.abstract)
    got = rag.store.collection.get(where={"paper_id": paper.id}, include=["metadatas", "embeddings"])
    records = list(zip(got["metadatas"], got["embeddings"]))
    window = next(e for m, e in records if m["chunk_index"] == 1)
    assert records[0][0]["content_hash"].endswith("ec")
    pooled, counts = rag.embed_model.pooled_batch([paper.title, *said])
    span = rag.settings.ingest.window_sentences
    expected = unit_rows([(pooled[: 1 + span] * counts[: 1 + span, None]).sum(0)])[0]
    assert float(unit_rows([window])[0] @ expected) > 0.995
    switched = RAG(Settings(store={"path": tmp_path / "chroma", "auto_seed": False}))
    assert switched.ingest([SEED_CORPUS], progress=False).updated == 19


def test_unreadable_sentence_vectors_are_logged_once_and_answers_embed_their_quotes(tmp_path, caplog) -> None:
    """A sentence-vector file SQLite cannot read is a cache miss with one warning, never an error."""
    from rag.store.sentence_vectors import SentenceVectors

    path = tmp_path / "rag-sentences.sqlite3"
    path.write_bytes(b"not a database" * 100)
    stored = SentenceVectors(path, "model")
    with caplog.at_level("WARNING", logger="rag.store.sentence_vectors"):
        assert stored.get(SENTENCES) == {} and stored.get(SENTENCES) == {}
    assert stored.unreadable and len([r for r in caplog.records if "cannot be read" in r.message]) == 1

    class Fake:
        def get_text_embedding_batch(self, texts):
            return [np.ones(8, dtype=np.float32) for _ in texts]

    cache = VectorCache(stored=path)
    assert len(cache.embed(Fake(), SENTENCES)) == len(SENTENCES) and cache.misses == len(SENTENCES)

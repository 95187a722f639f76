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
    """Ingest keeps a vector for every abstract sentence; with windows embedded whole it is pooled
    from the windows that hold it (the sentence's tokens in the window's context); an answer then
    embeds only its question."""
    from rag import RAG, Settings
    from rag.ingest.build import Chunker
    from rag.ingest.corpus import load_papers
    from rag.store.sentence_vectors import SentenceVectors, embedder_key
    from rag.text.citations import abstract_sentences
    from tests.conftest import SEED_CORPUS

    rag = RAG(Settings(store={"path": tmp_path / "chroma", "auto_seed": False}, ingest={"window_vectors": "embedded"}))
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
    assert float(stored.get([said[0]])[said[0]] @ expected) > 0.98  # int8 ingest (tests/test_embeddings.py), float16 storage
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


def test_late_windows_are_pooled_from_one_pass_over_the_paper(tmp_path) -> None:
    """The default window vectors (RAG_INGEST__WINDOW_VECTORS=late): a paper is read in as few passes
    as fit, a window's stored vector is the mean of its title's and sentences' word-piece states in
    that pass, a sentence's stored vector the mean of its own; the chunking scheme says so (a switch
    to windows embedded whole re-embeds every paper)."""
    from rag import RAG, Settings
    from rag.ingest.build import Chunker, late_passes
    from rag.ingest.corpus import load_papers
    from rag.store.sentence_vectors import SentenceVectors, embedder_key
    from tests.conftest import SEED_CORPUS

    rag = RAG(Settings(store={"path": tmp_path / "chroma", "auto_seed": False}))
    assert rag.settings.ingest.window_vectors == "late"
    rag.ingest([SEED_CORPUS], progress=False)
    papers = load_papers(SEED_CORPUS).papers
    embed = rag.embed_model
    said, texts, spans, runs = late_passes(papers, embed.tokenizer, embed.max_length)
    assert sum(len(r) for r in runs) > len(papers)  # some abstracts need two passes
    assert all(n <= embed.max_length for n in (sum(e.attention_mask) for e in embed.tokenizer.encode_batch(texts)))
    sums, counts = embed.span_sums(texts, spans)
    chunker = Chunker.for_model(embed, rag.settings.ingest)
    kept = SentenceVectors(rag.store.sentence_vectors_path, embedder_key(embed))
    checked = 0
    for p, paper in enumerate(papers):
        first = sum(len(r) for r in runs[:p])  # this paper's first pass
        got = rag.store.collection.get(where={"paper_id": paper.id}, include=["metadatas", "embeddings"])
        records = sorted(zip(got["metadatas"], got["embeddings"]), key=lambda r: r[0]["chunk_index"])
        assert records[0][0]["content_hash"].endswith("el")
        start, end = chunker.chunks(paper)[1].span  # the first window
        if end <= runs[p][0][1]:  # inside the first pass
            checked += 1
            total = sums[first][0] + sums[first][1 + start : 1 + end].sum(0)
            n = counts[first][0] + counts[first][1 + start : 1 + end].sum()
            assert float(unit_rows([records[1][1]])[0] @ unit_rows([total / n])[0]) > 0.995, paper.id
        own = unit_rows([sums[first][1] / counts[first][1]])[0]
        assert float(kept.get([said[p][0]])[said[p][0]] @ own) > 0.995, paper.id
        # ... and a sentence's vector is about the sentence, not only its paper (context bleeds in)
        alone = unit_rows(embed.get_text_embedding_batch(said[p]))
        sims = unit_rows([kept.get(said[p])[s] for s in said[p]]) @ alone.T
        others = sims[~np.eye(len(said[p]), dtype=bool)]
        assert np.diag(sims).mean() > others.mean() + 0.1, (paper.id, np.diag(sims).mean(), others.mean())
    assert checked >= 15
    switched = RAG(Settings(store={"path": tmp_path / "chroma", "auto_seed": False}, ingest={"window_vectors": "embedded"}))
    assert switched.ingest([SEED_CORPUS], progress=False).updated == 19


def test_passes_are_few_even_and_within_the_budget() -> None:
    from rag.ingest.build import _passes

    assert _passes([50] * 6, 400) == [(0, 6)]
    assert _passes([50] * 6, 200) == [(0, 3), (3, 6)]  # not 4 + 2: both halves read in context
    assert _passes([40, 300, 40], 200) == [(0, 1), (1, 2), (2, 3)]  # too long alone: a pass of its own
    for lengths in ([30, 80, 25, 60, 90, 10, 45, 70], [120] * 5, [10] * 40):
        runs = _passes(lengths, 160)
        assert runs[0][0] == 0 and runs[-1][1] == len(lengths)
        assert all(a[1] == b[0] for a, b in zip(runs, runs[1:]))
        assert all(sum(lengths[s:e]) <= 160 or e - s == 1 for s, e in runs)
        assert len(runs) <= -(-sum(lengths) // 160) + 1


def test_bulk_batches_hold_a_token_budget() -> None:
    """Long texts go a few at a time (each layer's activations stay in the caches), short ones many."""
    from rag.models.cpu import cpu_flags
    from rag.models.embeddings import auto_precision, build_embedder
    from rag.settings import EmbeddingSettings

    embed = build_embedder(EmbeddingSettings(batch_tokens=512))
    texts = ["graph neural networks " * n for n in (1, 40, 3, 80, 2, 60, 5, 1, 20)] * 3
    pieces = [sum(e.attention_mask) for e in embed.tokenizer.encode_batch(texts)]
    batches = list(embed._length_batches(texts))
    assert sorted(i for b in batches for i in b) == list(range(len(texts)))
    assert all(len(b) == 1 or len(b) * max(pieces[i] for i in b) <= 512 for b in batches)
    assert len(batches[-1]) > len(batches[0])  # the longest first, few at a time
    if "avx2" in cpu_flags():
        assert auto_precision() == "int8"


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

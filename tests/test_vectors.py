"""The sentence-vector cache: bounded, its memory reused once full, and the same vectors whether a
text was cached or not (real embedding model)."""

from __future__ import annotations

import numpy as np

from rag.vectors import VectorCache, unit_rows

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

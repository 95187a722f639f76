"""Retrieval: dense, lexical and fused search over the store, filters, and the optional reranker."""

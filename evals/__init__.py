"""Offline evaluation of the RAG pipeline: retrieval, citations, refusals and latency (`rag eval`)."""

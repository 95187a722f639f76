"""Grounding: which retrieved papers meet the question (admission), which abstract sentences answer it
(evidence), and whether an LLM's sentences are supported by the abstracts they cite."""

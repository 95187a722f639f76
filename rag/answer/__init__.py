"""Answering: the query engine that turns sources into an evidence or generated answer, and the answer
cache."""

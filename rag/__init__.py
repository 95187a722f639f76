"""Cited question answering over ICLR 2025 paper abstracts."""

from .errors import RagError
from .pipeline import RAG
from .settings import Settings
from .types import Answer, Citation, Source

__all__ = ["RAG", "Settings", "Answer", "Citation", "Source", "RagError"]
__version__ = "0.1.0"

"""`rag serve`: the HTTP API (native and OpenAI-compatible) and the chat UI on one FastAPI app.

Needs the `serve` extra (`pip install 'iclr-rag[serve]'`). The core library (`rag`) never imports
this package; it imports the core and `ui`.
"""

import importlib.util

from rag.settings import ServerSettings

# The serve extra's packages are imported lazily (start-up time); a missing one fails here, at import,
# so `rag serve` is listed as unavailable with the extra to install instead of failing mid-start.
for _dependency in ("fastapi", "uvicorn", "gradio"):
    if importlib.util.find_spec(_dependency) is None:
        raise ModuleNotFoundError(f"No module named {_dependency!r}", name=_dependency)

from rag.serve.run import BackgroundServer, add_serve_command, running, serve  # noqa: E402

__all__ = ["BackgroundServer", "ServerSettings", "add_serve_command", "create_app", "running", "serve"]


def __getattr__(name: str) -> object:
    """`create_app` on first use: the app's modules import llama-index, FastAPI and Gradio, which
    `rag --help` and the CLI's other commands do not need."""
    if name == "create_app":
        from rag.serve.app import create_app

        return create_app
    raise AttributeError(f"module 'rag.serve' has no attribute {name!r}")

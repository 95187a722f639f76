"""`rag serve`: the HTTP API (native and OpenAI-compatible) and the chat UI on one FastAPI app.

Needs the `serve` extra (`pip install 'iclr-rag[serve]'`). The core library (`rag`) never imports
this package; it imports the core and `ui`.
"""

from rag.settings import ServerSettings

from .app import create_app
from .run import BackgroundServer, add_serve_command, running, serve

__all__ = ["BackgroundServer", "ServerSettings", "add_serve_command", "create_app", "running", "serve"]

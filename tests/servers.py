"""Start real servers (llama_cpp.server, chroma run) on 127.0.0.1 for tests, and stop them."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:  # noqa: S310 - loopback only
                if r.status < 500:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"server at {url} not up after {timeout}s:\n{log.read_text()[-3000:]}")


@contextlib.contextmanager
def running(
    cmd: list[str], ready_url: str, log: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> Iterator[subprocess.Popen]:
    """`cmd` started with its output in `log` (and `env`, when given), until `ready_url` answers."""
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
        try:
            wait_http(ready_url, proc, log, timeout)
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def llama_server(tmp: Path) -> Iterator[str]:
    """llama_cpp.server with the bundled GGUF; yields its /v1 base URL."""
    from rag.models.llm import bundled_gguf

    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(bundled_gguf()),
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--model_alias", "smollm2"]
    with running(cmd, f"http://127.0.0.1:{port}/v1/models", tmp / "llama_server.log"):
        yield f"http://127.0.0.1:{port}/v1"


@contextlib.contextmanager
def chroma_server(tmp: Path, port: int | None = None) -> Iterator[str]:
    """`chroma run` on `tmp`/chroma-server (a fresh directory, or one an earlier run filled) and
    `port` (default: a free one); yields its URL."""
    exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or "chroma"
    port = port or free_port()
    cmd = [exe, "run", "--path", str(tmp / "chroma-server"), "--host", "127.0.0.1", "--port", str(port)]
    with running(cmd, f"http://127.0.0.1:{port}/api/v2/heartbeat", tmp / "chroma_server.log"):
        yield f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def rag_serve(log: Path, env: dict[str, str], *args: str, timeout: float = 240) -> Iterator[tuple[str, subprocess.Popen]]:
    """`rag serve` (the real command) on 127.0.0.1 and a free port with `env` over this process's
    environment (set RAG_STORE__PATH there); yields (base URL, process) once /healthz answers."""
    port = free_port()
    cmd = [sys.executable, "-m", "rag.cli", "serve", "--host", "127.0.0.1", "--port", str(port), *args]
    full = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", **env}
    url = f"http://127.0.0.1:{port}"
    with running(cmd, f"{url}/healthz", log, env=full, timeout=timeout) as proc:
        yield url, proc

"""Settings from the environment and strict prompt templates."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rag import prompts
from rag.errors import ConfigError
from rag.models.llm import build_llm
from rag.settings import LLMSettings, Settings, env_fields


def test_env_prefix_nested_and_typos_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_RETRIEVAL__TOP_K", "7")
    monkeypatch.setenv("RAG_LLM__API_KEY", "sk-secret")
    s = Settings()
    assert s.retrieval.top_k == 7
    assert "sk-secret" not in repr(s) and "sk-secret" not in s.model_dump_json()
    with pytest.raises(ValidationError):
        Settings(retrieval={"top_kk": 3})
    monkeypatch.setenv("RAG_RETRIEVAL__MODE", "fuzzy")
    with pytest.raises(ValidationError):
        Settings()


def test_base_url_needs_a_model() -> None:
    with pytest.raises(ConfigError, match="RAG_LLM__MODEL"):
        build_llm(LLMSettings(base_url="http://127.0.0.1:1/v1"))


def test_prompt_variables_match_what_the_code_passes() -> None:
    assert prompts.variables("answer") == {"sources", "question", "refusal"}
    assert prompts.variables("source") == {"number", "title", "text"}
    assert prompts.variables("condense") == {"history", "question"}
    assert prompts.variables("rerank") == {"question", "papers"}
    assert prompts.REFUSAL in prompts.render("answer", sources="s", question="q", refusal=prompts.REFUSAL)
    with pytest.raises(ConfigError, match="missing variables: refusal"):
        prompts.render("answer", sources="s", question="q")
    with pytest.raises(ConfigError, match="unexpected: extra"):
        prompts.render("source", number=1, title="t", text="x", extra=2)


def test_the_settings_page_documents_every_setting() -> None:
    from .conftest import REPO

    readme = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    missing = [n for n, _ in env_fields() if f"`{n}`" not in readme]
    assert not missing, f"docs/settings.md lacks settings: {missing}"
    # One root: the server's and the evaluation's settings are groups of the same table.
    assert {"RAG_SERVER__API_KEY", "RAG_EVAL__JUDGE_MODEL", "RAG_LLM__MODEL"} <= {n for n, _ in env_fields()}
    # The table is exactly what scripts/settings_table.py generates (descriptions and defaults too).
    import importlib.util

    spec = importlib.util.spec_from_file_location("settings_table", REPO / "scripts" / "settings_table.py")
    assert spec is not None and spec.loader is not None
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    assert table.render(readme) == readme, "the settings table is stale: run scripts/settings_table.py"


def test_default_store_path_does_not_depend_on_the_working_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """Issue 10: `rag ask` from another folder silently created and seeded a second store."""
    from pathlib import Path

    from rag.settings import default_store_path

    repo = Path(__file__).resolve().parent.parent
    monkeypatch.delenv("RAG_STORE__PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    assert Settings().store.path == repo / "vectorstore" / "chroma"  # the checkout's, from anywhere
    # Installed as a package (no checkout around it): a per-user data directory.
    installed = tmp_path / "site-packages"
    installed.mkdir()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_store_path(installed) == tmp_path / "data" / "iclr-rag" / "chroma"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_store_path(installed) == Path.home() / ".local" / "share" / "iclr-rag" / "chroma"
    # An explicit setting still wins.
    monkeypatch.setenv("RAG_STORE__PATH", str(tmp_path / "mine"))
    assert Settings().store.path == tmp_path / "mine"

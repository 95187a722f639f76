"""`rag eval` option handling: presets, overrides and one-line errors (no models loaded)."""

from __future__ import annotations

import argparse

import pytest

from evals.cli import add_eval_command, build_run_config
from evals.errors import EvalError
from rag.cli import build_parser, main


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_eval_command(parser.add_subparsers(dest="command"))
    return parser.parse_args(["eval", *argv])


def test_eval_is_a_rag_subcommand():
    assert "eval" in build_parser().format_help()


def test_presets_and_overrides():
    dev = build_run_config(_args("--preset", "dev"))
    assert dev.retrievers == ["dense", "bm25", "hybrid"] and not dev.answers and dev.depth == 100
    assert dev.corpus.name == "papers.jsonl" and len(dev.datasets) == 6
    assert {"authors", "named", "similar"} <= set(dev.datasets)
    ci = build_run_config(_args("--preset", "ci", "--retrievers", "hybrid,dense", "--answer-limit", "0"))
    assert ci.answers and ci.retrievers == ["hybrid", "dense"] and ci.answer_limit is None
    assert ci.ks == [1, 5, 10]
    custom = build_run_config(
        _args("--corpus", "c.jsonl", "--dataset", "a", "--dataset", "b", "--top-k", "20")
    )
    assert custom.datasets == ["a", "b"] and custom.ks == [1, 5, 10] and not custom.answers
    assert custom.store is None  # the output folder's own store
    shared = build_run_config(_args("--preset", "dev", "--store", "/tmp/eval-stores"))
    assert str(shared.store) == "/tmp/eval-stores"


@pytest.mark.parametrize(
    "argv, message",
    [
        ((), "give --preset, or --corpus and at least one --dataset"),
        (("--preset", "ci", "--retrievers", "dense,sparse"), "unknown retriever 'sparse'"),
        (("--preset", "ci", "--top-k", "0"), "invalid eval option depth"),
    ],
)
def test_bad_options_are_one_line_errors(argv: tuple[str, ...], message: str):
    with pytest.raises(EvalError, match=message):
        build_run_config(_args(*argv))


def test_cli_prints_errors_as_one_line(capsys: pytest.CaptureFixture[str]):
    assert main(["eval", "--preset", "ci", "--retrievers", "sparse"]) == 1
    assert capsys.readouterr().err.strip() == "error: unknown retriever 'sparse'; use dense, bm25, hybrid"

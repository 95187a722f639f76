"""Property tests (hypothesis) for the parsers that read untrusted text (issue 10): corpus files
(rag.ingest.corpus) and conversation history (rag.chat.conversation, rag.text.citations).

Whatever the input: a corpus file gives papers or a CorpusError naming the file (and the line or
item where there is one), never another exception; a history parser returns, quickly, without
raising, and the numbers it reads are bounded. The budget is RAG_FUZZ_EXAMPLES examples per test
(default 60; `make fuzz` raises it)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.chat.conversation import (
    ChatTurn,
    depends_on_history,
    reference_line,
    reference_titles,
    resolve_pointers,
    strip_references,
)
from rag.errors import CorpusError
from rag.ingest.corpus import MAX_LINE_BYTES, load_papers
from rag.text.citations import LiveMarkerFilter, marker_numbers

# hypothesis's caches (unicode data, constants) go to a temporary directory, not the repository's
# .hypothesis/ (read when first needed, so setting it here is in time)
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", tempfile.mkdtemp(prefix="hypothesis-"))
EXAMPLES = int(os.environ.get("RAG_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # a time bound is asserted per call instead (below), on the parser alone
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
    derandomize=os.environ.get("RAG_FUZZ_RANDOM") is None,  # reproducible unless asked otherwise
    database=None,  # no .hypothesis/ in the repository
)
PARSE_SECONDS = 1.0  # per call, on inputs of up to a few thousand characters (linear parsers)

# -- corpus files --------------------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
FIELDS = ["id", "title", "abstract", "authors", "decision", "url", "source_url"]
records = (
    st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), json_values, max_size=7) | json_values
)


def check_load(path: Path) -> None:
    """load_papers gives papers or a CorpusError naming `path`; nothing else."""
    try:
        report = load_papers(path)
    except CorpusError as exc:
        assert exc.path == str(path), exc
        assert exc.line is None or exc.line >= 1, exc
        assert str(exc).startswith(str(path)), exc
        return
    for paper in report.papers:
        assert paper.title and paper.abstract and paper.id
        assert paper.url == "" or paper.url.startswith(("http://", "https://"))


@FUZZ
@given(data=st.binary(max_size=2000), suffix=st.sampled_from([".jsonl", ".json", ".csv", ".ndjson"]))
def test_any_bytes_are_papers_or_a_corpus_error(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"corpus{suffix}"
    path.write_bytes(data)
    check_load(path)


@FUZZ
@given(lines=st.lists(records, max_size=6), junk=st.lists(st.text(max_size=30), max_size=2))
def test_any_jsonl_records_are_papers_or_an_error_with_their_line(
    tmp_path: Path, lines: list, junk: list[str]
) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join([json.dumps(r) for r in lines] + junk), encoding="utf-8")
    check_load(path)
    try:
        load_papers(path)
    except CorpusError as exc:
        if exc.line is not None:  # the line it names is one of the file's
            assert 1 <= exc.line <= len(lines) + len(junk)


@FUZZ
@given(items=st.lists(records, max_size=6) | json_values)
def test_any_json_document_is_papers_or_a_corpus_error(tmp_path: Path, items: object) -> None:
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    check_load(path)


@FUZZ
@given(
    header=st.lists(st.sampled_from(FIELDS) | st.text(max_size=6), max_size=6),
    rows=st.lists(st.lists(st.text(max_size=30), max_size=7), max_size=5),
)
def test_any_csv_is_papers_or_a_corpus_error(
    tmp_path: Path, header: list[str], rows: list[list[str]]
) -> None:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    path = tmp_path / "corpus.csv"
    path.write_text(out.getvalue(), encoding="utf-8", newline="")
    check_load(path)


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_deep_nesting_is_a_corpus_error(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"deep{suffix}"
    path.write_text("[" * 200_000 + "]" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as info:
        load_papers(path)
    assert info.value.path == str(path)
    assert suffix == ".json" or info.value.line == 1


def test_an_overlong_line_is_a_corpus_error_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    good = json.dumps({"title": "A", "abstract": "B"})
    path.write_text(good + "\n" + '{"title": "' + "x" * (MAX_LINE_BYTES + 10) + '"}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match="line longer than") as info:
        load_papers(path)
    assert info.value.line == 2


# -- history ------------------------------------------------------------------------------------
# Text biased to what the parsers look for: markers, reference lines, ordinals, pointers, long digits.
PIECES = [
    "[1]",
    "[2, 3]",
    "[Source 4]",
    "[1-9]",
    "[99999999999999999999]",
    "[",
    "]",
    "**References**",
    "\n",
    "[1] LeanAgent: Lifelong Learning — https://openreview.net/forum?id=x",
    " — ",
    "(attributed)",
    "the second one",
    "paper 2",
    "it",
    "its",
    "they",
    "this paper",
    "and",
    ",",
    ";",
    "-",
    " ",
    "9" * 30,
    "   ",
    "\t",
    "Source",
    "sources",
]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=20), max_size=60).map("".join) | st.text(
    max_size=400
)
long_texts = st.tuples(st.sampled_from(PIECES), st.integers(200, 3000)).map(lambda p: p[0] * p[1])


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    assert time.perf_counter() - t0 < PARSE_SECONDS, (fn.__name__, len(str(args)))
    return out


def turn_of(text: str) -> ChatTurn:
    return ChatTurn(role="assistant", content=text)


@FUZZ
@given(text=texts | long_texts)
def test_reference_parsers_return_quickly_and_never_raise(text: str) -> None:
    titles = timed(reference_titles, turn_of(text))
    assert all(isinstance(n, int) and isinstance(t, str) and t for n, t in titles.items())
    for line in text.splitlines()[:50]:
        parsed = timed(reference_line, line)
        assert parsed is None or (isinstance(parsed[0], int) and parsed[1])
    stripped = timed(strip_references, text)
    assert len(stripped) <= len(text)


@FUZZ
@given(question=texts | long_texts, answer=texts)
def test_pointer_and_follow_up_rules_return_quickly_and_never_raise(question: str, answer: str) -> None:
    history = [ChatTurn(role="user", content="Which paper?"), turn_of(answer)]
    resolved = timed(resolve_pointers, question, history)
    assert resolved is None or isinstance(resolved, str)
    assert isinstance(timed(depends_on_history, question), bool)


@FUZZ
@given(text=texts | long_texts)
def test_marker_numbers_are_bounded(text: str) -> None:
    numbers = timed(marker_numbers, text)
    assert all(0 <= n < 10**6 for n in numbers)  # a marker holds at most six digits
    assert len(numbers) <= 10 * len(re.findall(r"\d+", text))  # a range a-b expands to at most 10
    live = LiveMarkerFilter([1, 2])
    shown = timed(live.feed, text) + live.flush()
    assert all(n in (1, 2) for n in marker_numbers(shown))

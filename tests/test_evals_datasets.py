"""Evaluation datasets: the in-repo sets are valid, malformed files are rejected with their line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.datasets import builtin_datasets, check_gold, load_dataset
from evals.errors import DatasetError
from rag.ingest.corpus import load_papers, seed_path


def _write(path: Path, records: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def test_builtin_sets_exist():
    assert {"seed_qa", "unanswerable"} <= set(builtin_datasets())


def test_seed_qa_targets_the_seed_corpus_without_copying_titles():
    ds = load_dataset("seed_qa")
    papers = load_papers(seed_path()).papers
    check_gold(ds, [p.id for p in papers])  # every gold id is a seed paper
    assert 18 <= len(ds.items) <= 30
    assert all(i.answerable and i.gold_ids and i.reference_answer for i in ds.items)
    assert {g for i in ds.items for g in i.gold_ids} == {p.id for p in papers}  # every paper asked about
    titles = [p.title.lower() for p in papers]
    for item in ds.items:
        assert not any(t in item.query.lower() for t in titles), item.qid


def test_unanswerable_set_expects_refusals():
    ds = load_dataset("unanswerable")
    assert 20 <= len(ds.items) <= 40
    assert all(not i.answerable and not i.gold_ids and i.expected == "refuse" for i in ds.items)
    assert {"off-domain", "other-venue-or-year", "paper-details"} <= {i.category for i in ds.items}
    assert ds.n_unanswerable == len(ds.items)


def test_dev_sets_load(evalsets: Path, full_corpus: Path):
    ids = [p.id for p in load_papers(full_corpus).papers]
    for name, n in (("topics_dev", 76), ("descriptions_dev", 124)):
        ds = load_dataset(evalsets / f"{name}.jsonl")
        assert len(ds.items) == n and ds.has_gold
        check_gold(ds, ids)


def test_bad_json_names_the_line(tmp_path: Path):
    path = _write(tmp_path / "d.jsonl", [{"qid": "a", "query": "q", "gold_ids": ["x"]}, "{not json"])
    with pytest.raises(DatasetError, match=r"d\.jsonl:2: invalid JSON"):
        load_dataset(path)


@pytest.mark.parametrize(
    "record, message",
    [
        ({"query": "q"}, "qid"),
        ({"qid": "a", "query": "q", "gold": ["x"]}, "gold"),  # typo of gold_ids
        ({"qid": "a", "query": "q", "gold_ids": ["x"], "answerable": False}, "unanswerable"),
        ({"qid": "a", "query": "", "gold_ids": []}, "query"),
    ],
)
def test_invalid_records_are_rejected(tmp_path: Path, record: dict, message: str):
    path = _write(tmp_path / "d.jsonl", [{"qid": "ok", "query": "fine"}, record])
    with pytest.raises(DatasetError, match=rf"d\.jsonl:2: .*{message}"):
        load_dataset(path)


def test_duplicate_qid(tmp_path: Path):
    path = _write(tmp_path / "d.jsonl", [{"qid": "a", "query": "q1"}, {"qid": "a", "query": "q2"}])
    with pytest.raises(DatasetError, match="duplicate qid 'a' \\(first on line 1\\)"):
        load_dataset(path)


def test_gold_missing_from_corpus(tmp_path: Path):
    ds = load_dataset(_write(tmp_path / "d.jsonl", [{"qid": "a", "query": "q", "gold_ids": ["nope"]}]))
    with pytest.raises(DatasetError, match="1 gold paper\\(s\\) are not in the corpus \\(a:nope\\)"):
        check_gold(ds, ["other"])


def test_unknown_dataset_name():
    with pytest.raises(DatasetError, match="no such dataset"):
        load_dataset("no_such_set")


def test_limit_and_hash_are_stable(tmp_path: Path):
    path = _write(tmp_path / "d.jsonl", [{"qid": str(i), "query": f"q{i}"} for i in range(5)])
    a, b = load_dataset(path), load_dataset(path)
    assert a.sha256 == b.sha256 and len(a.limited(2).items) == 2 and a.limited(None) is a


def test_answer_subset_keeps_every_unanswerable_question(tmp_path: Path):
    records = [{"qid": f"a{i}", "query": "q", "gold_ids": ["x"]} for i in range(4)]
    records.insert(1, {"qid": "u1", "query": "q", "answerable": False})
    records.append({"qid": "u2", "query": "q", "answerable": False})
    ds = load_dataset(_write(tmp_path / "d.jsonl", records))
    assert [i.qid for i in ds.answer_subset(2).items] == ["a0", "u1", "a1", "u2"]
    assert ds.answer_subset(None) is ds

"""Follow-ups scored against conversations written by reading.

`evals/data/conversations.jsonl` holds multi-turn conversations (`conversations_writing.md` has the
instructions their writers followed; they never saw the product's follow-up rules or this scorer).
Each opens with a seed question whose answer is recorded in `conversation_seeds.jsonl` (the papers
the product listed, and related ones), so the expected references do not move when retrieval is
tuned: the scorer sends that answer as the conversation's history, as a client that kept it would,
then asks each follow-up live, with the product's own answers as the history from there on.

Per follow-up the writers gave its kind (metadata, detail, narrow, compare, similar, show_all, new),
the shown papers it refers to, the metadata field asked, and for a narrowing the papers that meet
its filter (decided by reading their abstracts). Reported:
- kind: the share of follow-ups read as the kind the writer meant;
- references: follow-ups that refer to shown papers, resolved to exactly those papers;
- metadata exact: metadata follow-ups answered with every asked stored value of exactly the
  referenced papers, without retrieval or an LLM;
- narrowing: narrowing follow-ups that keep exactly the papers judged to meet the filter;
- new not bound: new questions answered as new searches, not tied to the list;
- follow-up answer time (the answers that need no retrieval), p50 and p95.
A known-bad configuration (`RAG_ANSWER__FOLLOWUPS=false`: every follow-up condensed into a new
search, the behaviour before follow-ups were read) is run beside the product.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .datasets import BUILTIN_DIR, jsonl_objects
from .errors import EvalError

if TYPE_CHECKING:
    from rag.pipeline import RAG

logger = logging.getLogger(__name__)

CONVERSATIONS = BUILTIN_DIR / "conversations.jsonl"
SEEDS = BUILTIN_DIR / "conversation_seeds.jsonl"
KINDS = ("metadata", "detail", "narrow", "compare", "similar", "show_all", "new")
REFERRING = ("metadata", "detail", "compare", "similar")
FIELDS = ("authors", "decision", "link", "title")


@dataclass
class Turn:
    ask: str
    kind: str
    refs: list[str] = field(default_factory=list)
    field: str | None = None
    keep: list[str] | None = None


@dataclass
class Conversation:
    cid: str
    sid: str
    seed_question: str
    turns: list[Turn]


@dataclass
class Seed:
    sid: str
    question: str
    listed: list[str]
    related: list[str]


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return jsonl_objects(path, EvalError)


def load_seeds(path: Path = SEEDS) -> dict[str, Seed]:
    seeds = {}
    for n, row in _lines(path):
        try:
            seeds[row["sid"]] = Seed(row["sid"], row["question"], list(row["listed"]), list(row.get("related", [])))
        except KeyError as exc:
            raise EvalError(f"{path}:{n}: missing field {exc}") from None
    return seeds


def load_conversations(path: Path = CONVERSATIONS, seeds: dict[str, Seed] | None = None) -> list[Conversation]:
    """The conversations, checked: kinds known, ids among the seed's papers, fields named."""
    seeds = seeds if seeds is not None else load_seeds()
    out = []
    for n, row in _lines(path):
        where = f"{path}:{n}"
        try:
            cid, sid, turns = row["cid"], row["sid"], row["turns"]
        except KeyError as exc:
            raise EvalError(f"{where}: missing field {exc}") from None
        if sid not in seeds:
            raise EvalError(f"{where}: seed {sid!r} is not in {SEEDS.name}")
        if not turns or turns[0].get("kind") != "seed" or len(turns) < 3:
            raise EvalError(f"{where}: a conversation opens with its seed turn and has at least 2 follow-ups")
        got = []
        for t in turns[1:]:
            kind = t.get("kind")
            if kind not in KINDS:
                raise EvalError(f"{where}: unknown kind {kind!r} (one of {', '.join(KINDS)})")
            if kind == "metadata" and t.get("field") not in FIELDS:
                raise EvalError(f"{where}: a metadata turn names its field (one of {', '.join(FIELDS)})")
            if kind == "narrow" and not isinstance(t.get("keep"), list):
                raise EvalError(f"{where}: a narrow turn lists the ids it keeps (`keep`)")
            got.append(Turn(t["ask"], kind, list(t.get("refs") or []), t.get("field"), t.get("keep")))
        out.append(Conversation(cid, sid, turns[0]["ask"], got))
    return out


def seed_history(seed: Seed, rows: dict[str, Any]) -> list[dict[str, Any]]:
    """The seed's recorded answer as a client holds it: the question, then the answer's text with
    numbered papers (listed, then related under their heading) and its citations."""
    from rag.text.citations import RELATED_HEADING

    lines = [f"{len(seed.listed)} papers here meet this:"] if seed.listed else ["I could not find papers that answer this."]
    citations = []
    number = 0
    for group, ids in (("listed", seed.listed), ("related", seed.related)):
        if group == "related" and ids:
            lines += ["", RELATED_HEADING]
        for pid in ids:
            number += 1
            row = rows[pid]
            lines.append(f"- **{row.title}** [{number}]: {row.text.split('. ')[0]}.")
            citations.append({
                "number": number, "paper_id": pid, "title": row.title, "url": row.url, "decision": row.decision,
                "authors": row.authors, "supporting_text": row.text.split(". ")[0], "score": 0.0, "support": 1.0,
                "kind": "evidence",
            })
    return [{"role": "user", "content": seed.question},
            {"role": "assistant", "content": "\n".join(lines), "citations": citations}]


def _expected_values(turn: Turn, rows: dict[str, Any]) -> list[str]:
    from rag.chat.followup_answer import metadata_value

    return [metadata_value(rows[pid], turn.field or "") for pid in turn.refs]


def score_turn(turn: Turn, answer: Any, rows: dict[str, Any]) -> dict[str, Any]:
    """One follow-up's figures (None where a figure does not apply)."""
    f = answer.followup
    kind = f.kind if f is not None else "new"
    got_ids = list(f.paper_ids) if f is not None else []
    out: dict[str, Any] = {"kind_ok": kind == turn.kind, "kind": kind, "expected": turn.kind}
    out["refs_ok"] = None
    if turn.kind in REFERRING or turn.kind == "narrow":
        out["refs_ok"] = f is not None and set(got_ids) == set(turn.refs)
    out["metadata_ok"] = None
    if turn.kind == "metadata":
        values = _expected_values(turn, rows)
        out["metadata_ok"] = bool(
            kind == "metadata" and out["refs_ok"] and answer.mode == "metadata" and not answer.llm_called
            and answer.timings.retrieval_ms == 0 and all(v in answer.text for v in values)
        )
    out["narrow_ok"] = None
    if turn.kind == "narrow":
        out["narrow_ok"] = kind == "narrow" and f is not None and set(f.kept_ids) == set(turn.keep or [])
    out["new_ok"] = None
    if turn.kind == "new":
        out["new_ok"] = f is None and not _added_words(answer.question, answer.standalone_question or "")
    out["ms"] = answer.timings.total_ms if kind in ("metadata", "detail", "narrow", "compare") else None
    return out


def _added_words(asked: str, standalone: str) -> set[str]:
    """Content words the standalone question has that the follow-up did not: context from earlier turns."""
    from rag.text.terms import content_stems

    return set(content_stems(standalone)) - set(content_stems(asked))


def _rate(values: Sequence[bool | None]) -> tuple[float | None, int]:
    got = [v for v in values if v is not None]
    return (round(sum(got) / len(got), 3) if got else None), len(got)


def summarize(scored: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"follow_ups": len(scored)}
    for name in ("kind_ok", "refs_ok", "metadata_ok", "narrow_ok", "new_ok"):
        out[name.removesuffix("_ok")], out[f"{name.removesuffix('_ok')}_n"] = _rate([s[name] for s in scored])
    times = sorted(s["ms"] for s in scored if s["ms"] is not None)
    if times:
        out["local_ms_p50"] = round(times[len(times) // 2], 1)
        out["local_ms_p95"] = round(times[min(len(times) - 1, int(0.95 * len(times)))], 1)
    return out


def run_conversation(rag: RAG, conv: Conversation, seed: Seed, forced: bool = True) -> list[tuple[Turn, Any]]:
    """Ask a conversation's follow-ups after its recorded seed answer; (turn, answer) each.
    `forced`: after a narrowing, the history shows the papers the writer judged to meet the filter
    (not the product's choice), so a wrong narrowing is counted once, not again in every later turn."""
    from rag.chat.conversation import ChatTurn

    papers = rag.retriever.papers()
    history = [ChatTurn.model_validate(t) for t in seed_history(seed, papers.rows(seed.listed + seed.related))]
    out = []
    for turn in conv.turns:
        answer = rag.chat(turn.ask, history)
        reply = ChatTurn(role="assistant", content=answer.text, citations=answer.citations)
        if forced and turn.kind == "narrow" and turn.keep:
            # the list the writer expects on screen next, whatever this answer kept: each follow-up
            # is scored on the screen it was written for
            kept = Seed(seed.sid, turn.ask, list(turn.keep), [])
            reply = ChatTurn.model_validate(seed_history(kept, papers.rows(turn.keep))[1])
        history += [ChatTurn(role="user", content=turn.ask), reply]
        out.append((turn, answer))
    return out


def run(rag_factory: Any, configs: Sequence[tuple[str, dict[str, Any]]], conversations: Sequence[Conversation],
        seeds: dict[str, Seed], progress: bool = True) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Every conversation in each configuration: (figures per configuration, per-turn details)."""
    from tqdm import tqdm

    results: dict[str, Any] = {}
    details: dict[str, list[dict[str, Any]]] = {}
    for name, overrides in configs:
        rag = rag_factory(overrides)
        papers = rag.retriever.papers()
        scored, rows_out = [], []
        for conv in tqdm(conversations, desc=f"conversations: {name}", disable=not progress):
            for turn, answer in run_conversation(rag, conv, seeds[conv.sid]):
                rows = papers.rows(turn.refs)
                s = score_turn(turn, answer, rows)
                scored.append(s)
                rows_out.append({"cid": conv.cid, "ask": turn.ask, **s,
                                 "got_refs": answer.followup.paper_ids if answer.followup else [],
                                 "refs": turn.refs, "keep": turn.keep,
                                 "kept": answer.followup.kept_ids if answer.followup else None})
        results[name] = summarize(scored)
        details[name] = rows_out
        if name == "product":
            results["known-bad: all bound"] = summarize(_bound_baseline(conversations, seeds))
    return results, details


def _bound_baseline(conversations: Sequence[Conversation], seeds: dict[str, Seed]) -> list[dict[str, Any]]:
    """Scores of an answerer that takes every follow-up as a question about the whole list shown
    first (no new questions, no narrowing, no metadata): what the 'new' and 'references' columns
    must tell apart from the product."""
    out = []
    for conv in conversations:
        listed = set(seeds[conv.sid].listed)
        for turn in conv.turns:
            out.append({
                "kind_ok": turn.kind == "detail", "refs_ok": set(turn.refs) == listed if turn.kind in REFERRING
                or turn.kind == "narrow" else None,
                "metadata_ok": False if turn.kind == "metadata" else None,
                "narrow_ok": set(turn.keep or []) == listed if turn.kind == "narrow" else None,
                "new_ok": False if turn.kind == "new" else None, "ms": None,
            })
    return out


def table(results: dict[str, Any]) -> str:
    cols = [("kind", "kind"), ("refs", "references"), ("metadata", "metadata exact"), ("narrow", "narrowing"),
            ("new", "new not bound"), ("local_ms_p50", "ms p50"), ("local_ms_p95", "ms p95")]
    head = f"{'configuration':<22}" + "".join(f"{label:>16}" for _, label in cols)
    lines = [head]
    for name, r in results.items():
        cells = []
        for key, _ in cols:
            v = r.get(key)
            n = r.get(f"{key}_n")
            cells.append(f"{'-' if v is None else v}{f' ({n})' if n else ''}")
        lines.append(f"{name:<22}" + "".join(f"{c:>16}" for c in cells))
    return "\n".join(lines)

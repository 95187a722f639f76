"""Presentation for the chat UI without Gradio: escaped Markdown, the sources panel, the turn generator.

Everything that comes from the corpus or the LLM is escaped here before any Markdown or HTML
rendering, so the browser shows it as text.
"""

from __future__ import annotations

import html
import logging
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack
from urllib.parse import urlencode, urlparse

from rag.chat.conversation import ChatTurn, chat_stream
from rag.errors import RagError, describe
from rag.events import Condensed, Final, Queued, Sources, Token
from rag.export import EXTENSIONS
from rag.limits import DEFAULT_LIMITS, Limits
from rag.permalink import Permalink
from rag.queue import GenerationQueue
from rag.settings import SearchOptions
from rag.text.citations import ITEM, MARKER, LiveMarkerFilter, marker_numbers, split_sentences
from rag.types import Answer, Citation, Source

if TYPE_CHECKING:
    from rag.pipeline import RAG

logger = logging.getLogger(__name__)

ANCHOR = "rag-src-{turn}-{n}"  # turn: 1 for the first answer of a session
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:])")


def escape_markdown(text: str) -> str:
    """Text that Markdown renders literally: HTML entities for <>&, backslashes for Markdown syntax."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def answer_markdown(text: str, linked: Sequence[int] = (), turn: int = 1) -> str:
    """Escaped answer text whose [n] markers (n in `linked`) link to that turn's cards in the panel.

    A list item of an evidence answer ("- **Title** [n]: sentences") stays a Markdown list item with
    a bold title; everything inside it is escaped like the rest.
    """
    lines = []
    for line in text.split("\n"):
        m = ITEM.match(line)
        if _TABLE_ROW.match(line):
            lines.append(_table_row(line, linked, turn))
        elif m:
            bullet = "- " if line.lstrip()[:1] in "-*•" else ""
            title = escape_markdown(m.group("title"))
            markers = _linked_markers(m.group("markers"), linked, turn)
            lines.append(f"{bullet}**{title}** {markers}: {_linked_markers(m.group('body'), linked, turn)}")
        else:
            lines.append(_linked_markers(line, linked, turn))
    return "\n".join(lines)


_TABLE_ROW = re.compile(r"^\|.*\|\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_RULE_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")


def _table_row(line: str, linked: Sequence[int], turn: int) -> str:
    """A row of a comparison table: each cell escaped like answer text (a bold title with its
    marker stays bold and linked), the separator row kept."""
    cells = _CELL_SPLIT.split(line.strip())[1:-1]
    if cells and all(_RULE_CELL.match(c) for c in cells):
        return "|" + "|".join("---" for _ in cells) + "|"
    out = []
    for cell in cells:
        cell = cell.strip().replace("\\|", "|")
        m = re.match(r"^\*\*(?P<title>.+?)\*\*\s*(?P<markers>(?:\[\s*\d+\s*\]\s*)+)$", cell)
        if m:
            out.append(f"**{escape_markdown(m.group('title'))}** {_linked_markers(m.group('markers'), linked, turn)}")
        else:
            out.append(_linked_markers(cell, linked, turn))
    return "| " + " | ".join(out) + " |"


# An abstract's inline math ("$\\texttt{LIRS}$"): left as written for the chat's KaTeX to render (escaping
# it would show the escapes); no markup characters, one line, bounded.
MATH = re.compile(r"(?<![\\$])\$(?!\s)[^$<>&\n]{1,200}(?<![\s\\])\$(?!\$)")


def escape_text(text: str) -> str:
    """Answer text for Markdown: escaped, except inline math spans, which KaTeX renders."""
    out, pos = [], 0
    for m in MATH.finditer(text):
        out.append(escape_markdown(text[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(escape_markdown(text[pos:]))
    return "".join(out)


def _linked_markers(text: str, linked: Sequence[int], turn: int) -> str:
    out: list[str] = []
    pos = 0
    for m in MARKER.finditer(text):
        out.append(escape_text(text[pos : m.start()]))
        nums = marker_numbers(m.group(0))
        if nums and all(n in linked for n in nums):
            out.append("".join(f"[\\[{n}\\]](#{ANCHOR.format(turn=turn, n=n)})" for n in nums))
        else:
            out.append(escape_markdown(m.group(0)))
        pos = m.end()
    out.append(escape_text(text[pos:]))
    return "".join(out)


def safe_url(url: str) -> str | None:
    """The URL if it is plain http(s), else None (no javascript: or data: links from a corpus)."""
    parsed = urlparse(url.strip())
    return url.strip() if parsed.scheme in ("http", "https") and parsed.netloc else None


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def highlighted_abstract(text: str, sentence: str) -> str:
    """The abstract as escaped HTML with the supporting sentence inside <mark>."""
    sentence = _norm(sentence)
    parts = split_sentences(_norm(text))
    if sentence and sentence in parts:
        return " ".join(f"<mark>{html.escape(p)}</mark>" if p == sentence else html.escape(p) for p in parts)
    flat = _norm(text)
    i = flat.find(sentence) if sentence else -1
    if i < 0:
        return html.escape(flat)
    j = i + len(sentence)
    return f"{html.escape(flat[:i])}<mark>{html.escape(flat[i:j])}</mark>{html.escape(flat[j:])}"


def _ask_link(question: str, show_all: bool = False) -> str:
    """A relative link (HTML-escaped) that opens the chat UI and asks `question` (rag.permalink)."""
    return html.escape("?" + Permalink(question, show_all=show_all).query(), quote=True)


def _source_card(src: Source, citation: Citation | None, turn: int) -> str:
    url = safe_url(src.url)
    # each author opens a new page listing all their papers; "Similar papers" the nearest neighbours
    names = [
        f'<a class="rag-author" href="{_ask_link("Papers by " + a, show_all=True)}" target="_blank" '
        f'rel="noopener noreferrer">{html.escape(a)}</a>'
        for a in src.authors
    ]
    authors = ", ".join(names) or "authors unknown"
    similar_to = 'Papers similar to "' + _norm(src.title) + '"'
    links = [
        f'<a class="rag-link" href="{html.escape(url, quote=True)}" target="_blank" '
        f'rel="noopener noreferrer">OpenReview</a>'
    ] if url else []
    links.append(f'<a class="rag-similar" href="{_ask_link(similar_to)}" target="_blank" '
                 f'rel="noopener noreferrer">Similar papers</a>')
    page = html.escape("?" + urlencode({"paper": src.paper_id}), quote=True)
    links.append(f'<a class="rag-paper" href="{page}" target="_blank" rel="noopener noreferrer">Paper page</a>')
    abstract = (
        highlighted_abstract(src.text, citation.supporting_text) if citation else html.escape(_norm(src.text))
    )
    kind = ' <span class="rag-kind">attributed</span>' if citation and citation.kind == "attributed" else ""
    decision = f' <span class="rag-decision">{html.escape(src.decision)}</span>' if src.decision else ""
    return (
        f'<details class="rag-source" id="{ANCHOR.format(turn=turn, n=src.number)}" data-number="{src.number}">'
        f'<summary><span class="rag-num">[{src.number}]</span> '
        f'<span class="rag-title">{html.escape(src.title)}</span>{decision}{kind}</summary>'
        f'<div class="rag-authors">{authors}</div>'
        + " · ".join(links)
        + f'<p class="rag-abstract">{abstract}</p>'
        "</details>"
    )


def _turn_cards(answer: Answer | None, sources: Sequence[Source], turn: int) -> list[str]:
    """One answer's cards: cited papers (supporting sentence highlighted), then the uncited ones."""
    if answer is not None:
        sources = answer.sources
    parts = []
    if answer is not None and answer.refused:
        reason = f" ({html.escape(answer.refusal_reason)})" if answer.refusal_reason else ""
        if answer.related or answer.closest:
            # the answer shows the papers closest to the question: what the reading could not find, not "nothing"
            parts.append(f'<p class="rag-empty">The reading does not find every part of the question in one abstract{reason}.</p>')
        else:
            parts.append(f'<p class="rag-empty">No retrieved abstract answers this question{reason}.</p>')
    if answer is not None and answer.removed_unsupported:
        parts.append(f'<p class="rag-removed">{html.escape(answer.removal_note())}</p>')
    cited = {c.number: c for c in answer.citations} if answer is not None else {}
    first = [s for s in sources if s.number in cited]
    rest = [s for s in sources if s.number not in cited]
    if first:
        parts.append('<h4 class="rag-heading">Cited papers</h4>')
        parts.extend(_source_card(s, cited[s.number], turn) for s in first)
    if rest:
        title = "Retrieved papers"
        if answer is not None:
            title = "Closest papers (they do not answer it)" if answer.refused else "Also retrieved (not cited)"
        parts.append(f'<h4 class="rag-heading rag-uncited">{title}</h4>')
        parts.extend(_source_card(s, None, turn) for s in rest)
    return parts


def sources_html(
    answer: Answer | None = None,
    sources: Sequence[Source] = (),
    searched: str | None = None,
    state: str = "",
    turn: int = 1,
    earlier: Sequence[tuple[int, str, Answer]] = (),
) -> str:
    """The sources panel: this turn's papers, then earlier answers' papers folded away.

    `state` (data-state: idle, streaming, done, error) lets scripts and tests see where a turn is.
    """
    state = state or ("done" if answer is not None else "idle")
    parts = [f'<div class="rag-sources" data-state="{state}" data-turn="{turn}">']
    if searched:
        parts.append(f'<p class="rag-searched">Searched for: <q>{html.escape(searched)}</q></p>')
    if answer is not None and answer.intent is not None and answer.intent.notes:
        notes = " · ".join(html.escape(n) for n in answer.intent.notes)
        parts.append(f'<p class="rag-intent">Read as: {notes}</p>')
    cards = _turn_cards(answer, sources, turn)
    if not cards and not earlier:
        cards = ['<p class="rag-empty">Sources of the answer appear here.</p>']
    parts.extend(cards)
    if earlier:
        parts.append('<h4 class="rag-heading rag-uncited">Earlier answers</h4>')
    for n, question, old in reversed(earlier):
        parts.append(
            f'<details class="rag-turn" id="rag-turn-{n}"><summary>Answer {n}: {html.escape(question)}</summary>'
        )
        parts.extend(_turn_cards(old, (), n))
        parts.append("</details>")
    parts.append("</div>")
    return "".join(parts)


def friendly_error(exc: BaseException) -> str:
    """The message a chat user sees for an error (the table in rag.errors)."""
    return describe(exc).user_message


@dataclass
class View:
    """What the chat screen shows after one step of a turn."""

    messages: list[dict[str, str]]
    sources_html: str
    markdown: str
    turns: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    done: bool = False


def display_messages(turns: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Chatbot messages (escaped Markdown) for the finished turns."""
    out: list[dict[str, str]] = []
    for i, t in enumerate(turns, start=1):
        out.append({"role": "user", "content": escape_markdown(t["question"])})
        if t.get("answer"):
            a = Answer.model_validate(t["answer"])
            content = answer_markdown(a.text, [c.number for c in a.citations], turn=i)
            if a.removal_note():
                content += f"\n\n*{escape_markdown(a.removal_note())}*"
            out.append({"role": "assistant", "content": content})
        else:
            out.append({"role": "assistant", "content": escape_markdown(t.get("error") or "")})
    return out


def earlier_answers(turns: Sequence[dict[str, Any]]) -> list[tuple[int, str, Answer]]:
    """(turn number, question, answer) of the answered turns, for the panel's earlier section."""
    return [
        (i, t["question"], Answer.model_validate(t["answer"]))
        for i, t in enumerate(turns, start=1)
        if t.get("answer")
    ]


def export_file(rag: RAG, turns: Sequence[dict[str, Any]], fmt: str, which: str = "cited") -> Path | None:
    """A file of the latest answer's papers in `fmt` (rag.export), for a download button: `which` is
    "cited" (the papers the answer cites), "listed" (every paper it counts as meeting a list
    question) or "sources" (every paper of the sources panel). None when the latest turn has no
    answer with such papers."""
    if not turns or not turns[-1].get("answer"):
        return None
    answer = Answer.model_validate(turns[-1]["answer"])
    if which == "sources":
        ids = [s.paper_id for s in answer.sources]
    else:
        ids = answer.paper_ids(matching=which == "listed")
    if not ids:
        return None
    text = rag.export(ids, fmt)
    folder = Path(tempfile.mkdtemp(prefix="rag-export-"))
    path = folder / f"iclr2025-{'sources' if which == 'sources' else 'papers'}.{EXTENSIONS[fmt]}"
    path.write_text(text, encoding="utf-8")
    return path


def compare_choices(turns: Sequence[dict[str, Any]]) -> list[tuple[str, int]]:
    """The papers of the latest answer's sources panel, as (label, number) choices to compare."""
    answer = (turns[-1].get("answer") if turns else None) or {}
    return [(f"[{s['number']}] {s['title']}", int(s["number"])) for s in answer.get("sources", [])]


def compare_question(numbers: Sequence[int]) -> str:
    """The chat message that compares these papers of the panel: "Compare 1, 3 and 4"."""
    n = [str(x) for x in sorted(set(numbers))]
    return "Compare " + (", ".join(n[:-1]) + " and " + n[-1] if len(n) > 1 else "".join(n))


def comparison_file(turns: Sequence[dict[str, Any]]) -> Path | None:
    """The latest answer's comparison table as a CSV file (None when it is not a comparison)."""
    if not turns or not turns[-1].get("answer"):
        return None
    answer = Answer.model_validate(turns[-1]["answer"])
    if not answer.comparison:
        return None
    path = Path(tempfile.mkdtemp(prefix="rag-export-")) / "iclr2025-comparison.csv"
    path.write_text(answer.comparison_table("csv"), encoding="utf-8")
    return path


TABLE_HEADERS = ["Rank", "Title", "Decision", "Authors"]
TABLE_SORTS = ("relevance", "decision", "title")
_DECISION_ORDER = {"Oral": 0, "Spotlight": 1, "Poster": 2}


def listed_table(
    rag: RAG, turns: Sequence[dict[str, Any]], sort: str = "relevance", decisions: Sequence[str] = ()
) -> list[list[Any]]:
    """Every paper the latest answer counts as meeting the question (`Answer.matching_ids`; else the
    cited ones), one row each: rank by relevance, title, decision, authors. Only the `decisions`
    ticked (none: all), sorted by relevance, decision (orals first) or title."""
    if not turns or not turns[-1].get("answer"):
        return []
    ids = Answer.model_validate(turns[-1]["answer"]).paper_ids(matching=True)
    rows = rag.papers(ids) if ids else []
    table = [[rank, r.title, r.decision, ", ".join(r.authors)] for rank, r in enumerate(rows, 1)
             if not decisions or r.decision in decisions]
    if sort == "title":
        table.sort(key=lambda t: (str(t[1]).casefold(), t[0]))
    elif sort == "decision":
        table.sort(key=lambda t: (_DECISION_ORDER.get(str(t[2]), len(_DECISION_ORDER)), t[0]))
    return table


def table_label(turns: Sequence[dict[str, Any]], n: int) -> str:
    """The table's heading: the papers that meet the question, or, when no reading of it admitted any,
    the ones the search ranks closest to it (as the answer's own count line says)."""
    answer = (turns[-1].get("answer") if turns else None) or {}
    what = "The papers closest to the question" if answer.get("searched") else "Every paper that meets the question"
    return f"{what} ({n})" if n else "Every paper that meets the question"


def table_html(rows: Sequence[Sequence[Any]]) -> str:
    """The listed papers as an escaped HTML table (`listed_table` rows)."""
    if not rows:
        return '<p class="rag-table-empty">No list yet: ask for papers, e.g. "Which papers study …?"</p>'
    head = "".join(f"<th>{html.escape(h)}</th>" for h in TABLE_HEADERS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="rag-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def history_from_turns(turns: Sequence[dict[str, Any]], limits: Limits = DEFAULT_LIMITS) -> list[ChatTurn]:
    """The conversation for condensing: the latest answered turns (failed ones are left out) that
    fit the history limits; a long session keeps its screen but sends only its recent turns."""
    out: list[ChatTurn] = []
    chars = 0
    for t in reversed(turns):
        if not t.get("answer"):
            continue
        a = Answer.model_validate(t["answer"])
        pair = [ChatTurn(role="user", content=t["question"]),
                ChatTurn(role="assistant", content=a.text, citations=a.citations)]
        size = sum(len(p.content) for p in pair)
        if len(out) + 2 > limits.history_messages or chars + size > limits.history_chars:
            break
        out[:0] = pair
        chars += size
    return out


# Turns a browser session keeps (and shows); older ones leave the screen. What is sent to the model
# as history is bounded separately by the server's limits (`history_from_turns`).
SESSION_TURNS = 50


def chat_turn(
    rag: RAG,
    question: str,
    turns: Sequence[dict[str, Any]],
    queue: GenerationQueue | None = None,
    limits: Limits = DEFAULT_LIMITS,
    **options: Unpack[SearchOptions],
) -> Iterator[View]:
    """One question in a session, asked with `options` (rag.settings.SearchOptions): yields views as
    the answer streams; the last one has `done`."""
    turns = list(turns)
    question = (question or "").strip()
    before = display_messages(turns) + [{"role": "user", "content": escape_markdown(question)}]

    turn = len(turns) + 1
    earlier = earlier_answers(turns)

    def pending(content: str, panel: str) -> View:
        return View(before + [{"role": "assistant", "content": content}], panel, "", turns)

    yield pending("*Searching the papers…*", sources_html(state="streaming", turn=turn, earlier=earlier))
    sources: list[Source] = []
    searched: str | None = None
    live = ""
    flt = LiveMarkerFilter([])
    panel = ""
    try:
        history = history_from_turns(turns, limits)
        for ev in chat_stream(rag, question, history, queue, limits, **options):
            if isinstance(ev, Queued):
                yield pending(f"*Waiting in line: {escape_markdown(ev.message)}…*", panel or sources_html(
                    state="streaming", turn=turn, earlier=earlier))
            elif isinstance(ev, Condensed) and ev.method != "none" and ev.standalone_question != question:
                searched = ev.standalone_question
            elif isinstance(ev, Sources):
                sources = list(ev.sources)
                flt = LiveMarkerFilter([s.number for s in sources])
                panel = sources_html(None, sources, searched, "streaming", turn, earlier)
                yield pending("*Writing the answer…*", panel)
            elif isinstance(ev, Token):
                live += flt.feed(ev.text)
                yield pending(answer_markdown(live, [s.number for s in sources], turn), panel)
            elif isinstance(ev, Final):
                answer = ev.answer
                turns.append({"question": question, "answer": answer.model_dump(mode="json")})
                del turns[:-SESSION_TURNS]  # a session's memory is bounded too
                panel = sources_html(answer, searched=searched, turn=turn, earlier=earlier)
                yield View(display_messages(turns), panel, answer.to_markdown(), turns, done=True)
                return
    except RagError as exc:
        logger.warning("chat turn failed: %s", exc)
        message = friendly_error(exc)
        failed = (turns + [{"question": question, "answer": None, "error": "⚠️ " + message}])[-SESSION_TURNS:]
        panel = sources_html(None, sources, searched, "error", turn, earlier)
        yield View(display_messages(failed), panel, "", failed, error=message, done=True)

"""The Gradio chat screen: a thin layer over `ui.render.chat_turn` (itself over `rag.chat.conversation.chat_stream`)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rag.errors import RagError, describe
from rag.limits import DEFAULT_LIMITS, Limits
from rag.permalink import CHANGED_NOTICE, Permalink
from rag.queue import GenerationQueue
from rag.settings import DECISIONS, RETRIEVER_MODES, SearchOptions
from rag.text.followup import MAX_COMPARED
from rag.types import Answer

from .render import (
    TABLE_SORTS,
    chat_turn,
    compare_choices,
    compare_question,
    comparison_file,
    display_messages,
    escape_markdown,
    export_file,
    listed_table,
    sources_html,
    table_html,
    table_label,
)

if TYPE_CHECKING:
    from rag.pipeline import RAG

logger = logging.getLogger(__name__)

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

EXAMPLES = [
    "Which papers propose benchmarks for retrieval-augmented multimodal models?",
    "How can synthetic data help LLM post-training, in theory?",
    "Which papers use large language models for formal theorem proving?",
    "How do deep networks break the curse of dimensionality?",
]

PLACEHOLDER = (
    "**Ask about ICLR 2025 papers.** Answers cite the papers they use as [n]; "
    "click a number to open that paper in the sources panel. "
    'Follow-up questions ("what benchmark does the second one use?") keep the conversation\'s context.'
)

CSS = """
#rag-sources .rag-source { border: 1px solid var(--border-color-primary); border-radius: 8px;
  padding: 6px 10px; margin: 6px 0; }
#rag-sources .rag-source summary { cursor: pointer; font-weight: 600; }
#rag-sources .rag-decision, #rag-sources .rag-kind { font-size: 0.8em; font-weight: 500;
  border: 1px solid var(--border-color-primary); border-radius: 4px; padding: 0 4px; margin-left: 4px; }
#rag-sources .rag-authors { font-size: 0.85em; opacity: 0.8; margin: 4px 0; }
#rag-sources .rag-abstract { font-size: 0.9em; line-height: 1.45; white-space: normal; }
#rag-sources mark { background: #fde68a; color: inherit; }
#rag-sources .rag-heading { margin: 10px 0 2px; }
#rag-sources .rag-uncited { opacity: 0.75; }
#rag-sources .rag-searched, #rag-sources .rag-intent { font-size: 0.85em; opacity: 0.8; }
#rag-sources .rag-flash { outline: 2px solid #f59e0b; }
#rag-sources .rag-turn { margin: 4px 0; }
#rag-sources .rag-turn > summary { cursor: pointer; font-size: 0.9em; }
#rag-table { max-height: 420px; overflow: auto; }
#rag-table .rag-table { width: 100%; font-size: 0.85em; border-collapse: collapse; }
#rag-table .rag-table th, #rag-table .rag-table td { text-align: left; padding: 3px 6px;
  border-bottom: 1px solid var(--border-color-primary); vertical-align: top; }
"""

# Clicking a [n] marker in the chat opens and scrolls to the matching source card.
HEAD = """
<script>
document.addEventListener("click", function (ev) {
  var a = ev.target && ev.target.closest ? ev.target.closest('a[href^="#rag-src-"]') : null;
  if (!a) { return; }
  ev.preventDefault();
  ev.stopPropagation();
  var card = document.getElementById(a.getAttribute("href").slice(1));
  if (!card) { return; }
  for (var el = card; el; el = el.parentElement) {
    if (el.tagName === "DETAILS") { el.open = true; }
  }
  card.scrollIntoView({block: "center"});
  card.classList.add("rag-flash");
  setTimeout(function () { card.classList.remove("rag-flash"); }, 1500);
}, true);
</script>
"""

COPY_JS = """
(md) => {
  if (md && navigator.clipboard) { navigator.clipboard.writeText(md).catch(() => {}); }
  return md;
}
"""


def screen_options(decisions: list[str], top_k: float, retriever: str, show_all: bool) -> SearchOptions:
    """The search options the controls show (a top_k of 0: the default)."""
    return SearchOptions(
        top_k=int(top_k) or None, decisions=decisions or None, show_all=bool(show_all),
        retriever=retriever if retriever in RETRIEVER_MODES else None,
    )


def status_line(rag: RAG) -> str:
    """Papers in the store and the model in use, as escaped Markdown."""
    try:
        papers = rag.stats()["papers"]
    except Exception as exc:  # shown, not raised: the page must still load
        logger.warning("stats failed: %s", exc)
        return escape_markdown(f"The paper store cannot be read ({type(exc).__name__}).")
    note = " — the store is empty: run rag ingest" if papers == 0 else ""
    return escape_markdown(f"{papers} papers · LLM: {rag.settings.llm.display_name}{note}")


def build_ui(
    rag: RAG, queue: GenerationQueue | None = None, limits: Limits = DEFAULT_LIMITS, queue_size: int = 32
) -> Any:
    """The chat Blocks (queued); mount it with `mount_ui` or launch it directly."""
    import gradio as gr

    max_top_k = limits.top_k
    cfg = rag.settings.retrieval
    slots = queue.slots if queue is not None else rag.settings.llm.max_concurrent
    # With a queue, UI turns wait in its line (one line with the APIs, FIFO, "2 questions ahead of
    # you, ~12 s" shown in the chat), so Gradio runs up to everyone the line can hold at once.
    workers = slots + queue.max_waiting if queue is not None else slots

    def respond(
        message: str, turns: list[dict[str, Any]], decisions: list[str], top_k: float, retriever: str,
        show_all: bool = False,
    ) -> Iterator[tuple[Any, ...]]:
        if not (message or "").strip():
            yield gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()
            return
        first = True
        options = screen_options(decisions, top_k, retriever, show_all)
        for view in chat_turn(rag, message, turns or [], queue, limits, **options):
            if view.error:
                gr.Warning(view.error)
            yield view.messages, view.sources_html, view.markdown, view.turns, ("" if first else gr.skip())
            first = False

    def prepare_download(turns: list[dict[str, Any]], fmt: str, show_all: bool) -> tuple[Any, Any]:
        """The two download buttons' files: the answer's papers, and every paper of the panel."""
        buttons = []
        for which, label in (("listed" if show_all else "cited",
                              "Download all listed papers" if show_all else "Download cited papers"),
                             ("sources", "Download these papers")):
            try:
                path = export_file(rag, turns or [], fmt, which)
            except RagError as exc:
                gr.Warning(describe(exc).user_message)
                path = None
            buttons.append(gr.DownloadButton(label, value=str(path) if path else None, interactive=path is not None))
        return buttons[0], buttons[1]

    def show_table(turns: list[dict[str, Any]], sort: str, decisions: list[str]) -> tuple[Any, Any]:
        try:
            rows = listed_table(rag, turns or [], sort, decisions or ())
        except RagError as exc:
            gr.Warning(describe(exc).user_message)
            rows = []
        return table_html(rows), gr.Accordion(label=table_label(turns or [], len(rows)))

    def open_link(request: gr.Request) -> tuple[Any, ...]:
        """A link's question and options onto the screen (`respond` then asks it), and a notice when
        the store, model or settings changed since the link was made."""
        try:
            link = Permalink.parse(dict(request.query_params), limits.question_chars)
        except RagError as exc:
            return (gr.skip(),) * 5 + (escape_markdown(f"This link cannot be opened: {describe(exc).message}."),)
        if link is None:
            return (gr.skip(),) * 6
        changed = bool(link.version) and link.version != rag.version()
        return (link.question, list(link.decisions), min(link.top_k or 0, max_top_k),
                link.retriever or rag.settings.retrieval.mode, link.show_all,
                f"**Note:** {CHANGED_NOTICE}" if changed else "")

    def make_link(
        turns: list[dict[str, Any]], decisions: list[str], top_k: float, retriever: str, show_all: bool,
        request: gr.Request,
    ) -> Any:
        last = (turns or [{}])[-1]
        if not last.get("answer"):
            return gr.Textbox(value="", visible=False)
        question = last["answer"].get("standalone_question") or last["question"]
        link = rag.permalink(question, **screen_options(decisions, top_k, retriever, show_all))
        referer = urlsplit(request.headers.get("referer") or "")
        base = (f"{referer.scheme}://{referer.netloc}{referer.path}" if referer.netloc
                else f"http://{request.headers.get('host', '127.0.0.1')}/")
        return gr.Textbox(value=link.url(base), visible=True)

    def open_paper(request: gr.Request) -> tuple[Any, ...]:
        """`/?paper=ID`: that paper's page (`RAG.paper_page`) as the conversation's first answer."""
        pid = (request.query_params.get("paper") or "").strip()
        if not pid or request.query_params.get("q"):
            return (gr.skip(),) * 4
        try:
            answer = rag.paper_page(pid[:200])
        except RagError as exc:
            gr.Warning(f"This paper page cannot be opened: {describe(exc).user_message}")
            return (gr.skip(),) * 4
        turns = [{"question": answer.question, "answer": answer.model_dump(mode="json")}]
        return display_messages(turns), sources_html(answer), answer.to_markdown(), turns

    for takes_request in (open_link, make_link, open_paper):  # Gradio passes the request by this (real) annotation
        takes_request.__annotations__["request"] = gr.Request

    def show_compare(turns: list[dict[str, Any]]) -> tuple[Any, Any]:
        """The latest answer's papers to tick, and its comparison table as CSV when it is one."""
        path = comparison_file(turns or [])
        return (gr.CheckboxGroup(choices=compare_choices(turns or []), value=[]),
                gr.DownloadButton(value=str(path) if path else None, visible=path is not None))

    def ask_to_compare(numbers: list[int]) -> str:
        if not 2 <= len(numbers or []) <= MAX_COMPARED:
            raise gr.Error(f"Tick 2 to {MAX_COMPARED} papers of the panel to compare.", print_exception=False)
        return compare_question(numbers)

    def show_map(turns: list[dict[str, Any]]) -> tuple[str, Any]:
        """The map of the field (an Altair chart that gr.Plot draws) with the latest answer's papers in
        red; a point shows its title on hover and opens its page in a new tab."""
        try:
            fmap = rag.field_map()
            answer = (turns or [{}])[-1].get("answer")
            picked = Answer.model_validate(answer).paper_ids(matching=True) if answer else []
            chart = fmap.chart(picked, link=lambda pid: f"/?paper={pid}")
        except RagError as exc:
            gr.Warning(describe(exc).user_message)
            return "", None
        how = "" if fmap.cached else f"; computed in {fmap.seconds:.0f} s for this store, kept for next time"
        lead = (f"<p class='rag-map-note'>{fmap.papers} papers in {len(fmap.clusters)} clusters"
                + (f"; the {len(picked)} papers of the latest answer in red" if picked else "") + how
                + ". Hover a point for its title; click it for its page.</p>")
        return lead, chart

    def new_chat() -> tuple[Any, ...]:
        return [], sources_html(None), "", [], ""

    with gr.Blocks(title="ICLR 2025 paper chat", analytics_enabled=False) as demo:
        turns = gr.State([])
        gr.Markdown("## ICLR 2025 paper chat\n[HTTP API docs](/docs) · OpenAI-compatible at `/v1`")
        status = gr.Markdown(elem_id="rag-status")
        with gr.Row():
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(
                    label="Conversation",
                    elem_id="rag-chat",
                    height=520,
                    buttons=[],
                    sanitize_html=True,
                    render_markdown=True,
                    # Abstracts' inline math ($\\texttt{LIRS}$) rendered by KaTeX; the text stays verbatim.
                    latex_delimiters=[{"left": "$$", "right": "$$", "display": True},
                                      {"left": "$", "right": "$", "display": False}],
                    allow_tags=False,
                    feedback_options=None,
                    group_consecutive_messages=False,
                    placeholder=PLACEHOLDER,
                )
                with gr.Row():
                    msg = gr.Textbox(
                        placeholder="Ask a question about ICLR 2025 papers…",
                        show_label=False,
                        scale=5,
                        elem_id="rag-input",
                        max_length=limits.question_chars,
                    )
                    send = gr.Button("Ask", variant="primary", scale=1, elem_id="rag-send")
                with gr.Row():
                    copy = gr.Button("Copy answer as Markdown", size="sm", elem_id="rag-copy")
                    export_format = gr.Dropdown(
                        [("BibTeX", "bibtex"), ("CSV", "csv"), ("Markdown", "markdown"), ("JSON", "json")],
                        value="bibtex", show_label=False, container=False, elem_id="rag-export-format",
                        min_width=90, scale=0,
                    )
                    download = gr.DownloadButton(
                        "Download cited papers", value=None, size="sm", interactive=False, elem_id="rag-download"
                    )
                    clear = gr.Button("New chat", size="sm", elem_id="rag-clear")
                permalink = gr.Textbox(
                    label="Link to this answer (asks it again; the same answer while the papers are unchanged)",
                    interactive=False, buttons=["copy"], max_lines=1, visible=False, elem_id="rag-permalink",
                )
                link_notice = gr.Markdown("", elem_id="rag-link-notice")
                gr.Examples(examples=[[q] for q in EXAMPLES], inputs=[msg], label="Example questions")
            with gr.Column(scale=2):
                sources = gr.HTML(sources_html(None), elem_id="rag-sources", js_on_load=None)
                download_sources = gr.DownloadButton(
                    "Download these papers", value=None, size="sm", interactive=False, elem_id="rag-download-sources"
                )
                compare_pick = gr.CheckboxGroup(
                    [], value=[], label=f"Compare papers of this panel (2 to {MAX_COMPARED})", elem_id="rag-compare-pick"
                )
                with gr.Row():
                    compare = gr.Button("Compare selected", size="sm", elem_id="rag-compare")
                    compare_csv = gr.DownloadButton(
                        "Download the comparison (CSV)", value=None, size="sm", visible=False, elem_id="rag-compare-csv"
                    )
                with gr.Accordion("Every paper that meets the question", open=False, elem_id="rag-table-acc") as table_acc:
                    with gr.Row():
                        table_sort = gr.Radio(list(TABLE_SORTS), value="relevance", label="Sort by",
                                              elem_id="rag-table-sort")
                        table_decisions = gr.CheckboxGroup(list(DECISIONS), value=[], label="Decision (none: all)",
                                                           elem_id="rag-table-decisions")
                    table = gr.HTML(table_html([]), elem_id="rag-table")
                with gr.Accordion("Map of the field", open=False, elem_id="rag-map-acc"):
                    map_button = gr.Button("Show the map (the latest answer's papers in red)", size="sm",
                                           elem_id="rag-map-show")
                    map_note = gr.HTML("", elem_id="rag-map-note")
                    field_map = gr.Plot(elem_id="rag-map", show_label=False)
                with gr.Accordion("Search options", open=False):
                    decisions = gr.CheckboxGroup(
                        list(DECISIONS),
                        value=[],
                        label="Decision (none ticked: all papers)",
                        elem_id="rag-decisions",
                    )
                    top_k = gr.Slider(  # 0: as the library decides (as the API and the CLI do by default)
                        0, max_top_k, value=0, step=1, elem_id="rag-topk",
                        label=f"Number of sources (0: automatic, {min(cfg.top_k, max_top_k)} for a question, "
                        f"up to {min(cfg.list_top_k, max_top_k)} for a list)",
                    )
                    show_all = gr.Checkbox(
                        value=False,
                        label="List every paper that meets the question (not only the first ones)",
                        elem_id="rag-all",
                    )
                    retriever = gr.Radio(
                        list(RETRIEVER_MODES),
                        value=rag.settings.retrieval.mode,
                        label="Retriever",
                        elem_id="rag-retriever",
                    )
                with gr.Accordion("Answer as Markdown", open=False, elem_id="rag-md-acc"):
                    markdown = gr.Textbox(
                        show_label=False,
                        lines=8,
                        max_lines=24,
                        interactive=False,
                        buttons=["copy"],
                        elem_id="rag-markdown",
                    )

        inputs = [msg, turns, decisions, top_k, retriever, show_all]
        outputs = [chatbot, sources, markdown, turns, msg]
        export_inputs = [turns, export_format, show_all]
        link_inputs = [turns, decisions, top_k, retriever, show_all]
        table_inputs = [turns, table_sort, table_decisions]
        hidden: dict[str, Any] = {"queue": False, "api_visibility": "private"}

        def after_answer(event: Any) -> None:
            """What follows every answer (and a new chat): the download buttons, the link, the table,
            the papers to compare."""
            event.then(prepare_download, export_inputs, [download, download_sources], **hidden).then(
                make_link, link_inputs, [permalink], **hidden
            ).then(show_table, table_inputs, [table, table_acc], **hidden).then(
                show_compare, [turns], [compare_pick, compare_csv], **hidden
            )

        answering: dict[str, Any] = {"concurrency_limit": workers, "concurrency_id": "llm", "api_visibility": "private"}
        for trigger in (msg.submit, send.click):
            trigger(lambda: "", None, [link_notice], **hidden)
            after_answer(trigger(respond, inputs, outputs, **answering))
        # a link (/?q=…) fills the screen and asks its question
        after_answer(demo.load(open_link, None, [msg, decisions, top_k, retriever, show_all, link_notice], **hidden)
                     .then(respond, inputs, outputs, **answering))
        # ticked papers of the panel: "Compare 1 and 3" asked in the chat (a follow-up about them)
        after_answer(compare.click(ask_to_compare, [compare_pick], [msg], **hidden)
                     .success(respond, inputs, outputs, **answering))
        # a paper's page (/?paper=ID, the cards' "Paper page" links)
        after_answer(demo.load(open_paper, None, [chatbot, sources, markdown, turns], **hidden))
        for changed in (table_sort.change, table_decisions.change):
            changed(show_table, table_inputs, [table, table_acc], **hidden)
        export_format.change(prepare_download, export_inputs, [download, download_sources], **hidden)
        for cleared in (clear.click, chatbot.clear):
            after_answer(cleared(new_chat, None, outputs, **hidden))
        map_button.click(show_map, [turns], [map_note, field_map], queue=True, api_visibility="private")
        copy.click(None, [markdown], None, js=COPY_JS)
        demo.load(lambda: status_line(rag), None, status, queue=False, api_visibility="private")
    # api_open=False: the queued answer runs only through the queue (its slots, its size), never as a
    # direct POST to /gradio_api/run/.
    demo.queue(max_size=queue_size, default_concurrency_limit=workers, api_open=False)
    return demo


def mount_ui(
    app: Any,
    rag: RAG,
    queue: GenerationQueue | None = None,
    path: str = "/",
    auth: tuple[str, str] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    queue_size: int = 32,
    max_file_size: int | None = None,
) -> Any:
    """Mount the chat UI on a FastAPI app (Gradio login when `auth` is given). The screen has no
    upload; `max_file_size` (bytes) still bounds Gradio's upload route, should one be reached."""
    import gradio as gr

    demo = build_ui(rag, queue, limits=limits, queue_size=queue_size)
    return gr.mount_gradio_app(
        app,
        demo,
        path=path,
        auth=auth,
        css=CSS,
        head=HEAD,
        footer_links=[],
        run_history=False,
        ssr_mode=False,
        mcp_server=False,
        show_error=True,
        max_file_size=max_file_size,
    )

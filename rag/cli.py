"""`rag` command line: fetch, ingest, ask, chat, export, stats, remove, adapt (thin layer over `rag.RAG`)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from rag.errors import redact_secrets
from rag.export import FORMATS, TABLE_FORMATS
from rag.settings import DECISIONS, RETRIEVER_MODES, SearchOptions

if TYPE_CHECKING:
    from rag.pipeline import RAG

logger = logging.getLogger("rag")

# C0 controls but tab and newline (ESC starts CSI/OSC sequences, BEL ends OSC, CR overwrites the
# line), DEL, C1 controls (U+009B is a one-character CSI) and bidirectional overrides.
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` with every character that could steer a terminal shown as `\\uXXXX` instead (also
    a valid JSON escape, so JSON output stays JSON)."""
    return _TERMINAL_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def one_line(text: str) -> str:
    """A title, link or note on one line."""
    return " ".join(str(text).split())


def say(text: object = "", file: Any = None) -> None:
    """Print text that may come from the corpus, the model or the user, made terminal-safe."""
    print(terminal_safe(str(text)), file=sys.stdout if file is None else file)


class _SafeFormatter(logging.Formatter):
    """Log lines without credentials (URLs' user:password, key=...) or terminal control characters."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(redact_secrets(super().format(record)))


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is at emit time (it may be replaced, e.g. by a test runner)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> Any:  # noqa: D401
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def setup_logging(level: str) -> None:
    """Configure logging for an entry point; libraries that set their own DEBUG level are held back too."""
    handler = _StderrHandler()
    handler.setLevel(level)  # bm25s forces its logger to DEBUG on import; the handler level still applies
    handler.setFormatter(_SafeFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for noisy in ("httpx", "httpcore", "chromadb", "urllib3", "sentence_transformers", "transformers",
                  "openai", "huggingface_hub", "bm25s", "gradio", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _add_question_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--top-k", type=int, default=None, help="papers given to the LLM as sources")
    p.add_argument("--decision", action="append", choices=DECISIONS, default=None,
                   help="only papers with this decision (repeatable)")
    p.add_argument("--retriever", choices=RETRIEVER_MODES, default=None,
                   help="retrieval mode (default: the setting RAG_RETRIEVAL__MODE)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag",
        description="Cited answers about ICLR 2025 papers. Settings come from RAG_* environment "
        "variables (see docs/settings.md).",
    )
    parser.add_argument("--log-level", default=None, help="DEBUG, INFO, WARNING or ERROR")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("ingest", help="add papers from JSONL/JSON/CSV files to the store",
                       description="Ingest papers (default: the built-in 19-paper corpus). "
                       "Unchanged papers are skipped; changed ones are replaced.")
    p.add_argument("paths", nargs="*", help="corpus files (.jsonl, .json, .csv)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    p = sub.add_parser("ask", help="answer one question with cited papers",
                       description="Answer a question from the stored papers, citing them as [n].")
    p.add_argument("question")
    p.add_argument("--json", action="store_true", help="print the answer object as JSON")
    p.add_argument("--all", action="store_true", dest="show_all",
                   help="list every paper that meets the question (a list answer shows the first --top-k)")
    p.add_argument("--link", action="store_true",
                   help="also print a link that asks this question again in the chat UI (`rag serve`)")
    _add_question_options(p)

    p = sub.add_parser("chat", help="a conversation in the terminal (follow-ups keep the context)",
                       description="Read questions from standard input until EOF or 'exit'. Follow-ups "
                       "(\"what dataset does the second one use?\") are condensed against the "
                       "conversation; 'new' starts a new one.")
    _add_question_options(p)

    p = sub.add_parser("fetch", help="download a venue's accepted papers from OpenReview as a corpus file",
                       description="Write the accepted papers (id, title, abstract, authors, decision, "
                       "link) of an OpenReview venue to a JSONL corpus file for `rag ingest`, through the "
                       "official OpenReview client (needs the network; the 'fetch' extra). An interrupted "
                       "fetch resumes when run again; papers without an abstract are counted and skipped.")
    p.add_argument("--venue", required=True, help="OpenReview venue id, e.g. ICLR.cc/2025/Conference")
    p.add_argument("-o", "--output", help="corpus file to write (default: <venue id with _ for />.jsonl)")
    p.add_argument("--base-url", help="OpenReview API (default: the setting RAG_FETCH__BASE_URL)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    p = sub.add_parser("export", help="write papers as BibTeX, CSV, Markdown or JSON",
                       description="Export stored papers by id, or the papers that the answer to "
                       "--question cites (with --all: every paper it counts as meeting a list question).")
    p.add_argument("paper_ids", nargs="*", help="paper ids (OpenReview ids)")
    p.add_argument("--question", help="export the papers of this question's answer instead of ids")
    p.add_argument("--all", action="store_true", dest="show_all",
                   help="with --question: every paper that meets it, not only the cited ones")
    p.add_argument("--format", choices=FORMATS, default="bibtex", help="default: bibtex")
    p.add_argument("-o", "--output", help="write to this file (default: standard output)")
    _add_question_options(p)

    p = sub.add_parser("compare", help="a comparison table of 2-6 papers (problem, method, data, result)",
                       description="Compare stored papers by id: one row per paper, each cell the sentence of "
                       "its abstract that states its problem, method, data or result (empty where none does).")
    p.add_argument("paper_ids", nargs="+", help="2 to 6 paper ids (OpenReview ids)")
    p.add_argument("--format", choices=("text", *TABLE_FORMATS), default="text",
                   help="text (the answer with its references; default), csv, markdown or json")
    p.add_argument("-o", "--output", help="write to this file (default: standard output)")

    p = sub.add_parser("map", help="a map of the field: every stored paper in 2D, in labelled clusters",
                       description="Place every stored paper in 2D from its stored vector (t-SNE), in clusters "
                       "labelled by their distinctive words, and write it as PNG, HTML, SVG or JSON (by the "
                       "output's extension). Computed once per store revision, with progress; then read "
                       "from where it is kept. --question picks out the papers of that question's answer.")
    p.add_argument("-o", "--output", default="field-map.html",
                   help="the file to write: .png, .html, .svg or .json (default: field-map.html)")
    p.add_argument("--question", help="pick out (in red) the papers this question's answer lists")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    p = sub.add_parser("paper", help="one paper's page: metadata, abstract and nearest papers",
                       description="Show a stored paper by id: title, authors, decision, link and abstract, "
                       "then its nearest papers (the papers 'similar to' it).")
    p.add_argument("paper_id", help="the paper's OpenReview id")
    p.add_argument("--neighbours", type=int, default=5, help="nearest papers to list (0-20; default 5)")
    p.add_argument("--json", action="store_true", help="print the answer as JSON")

    p = sub.add_parser("stats", help="papers and chunks in the store", description="Count papers and chunks.")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("remove", help="delete a paper from the store", description="Delete one paper by id.")
    p.add_argument("paper_id")

    p = sub.add_parser(
        "adapt",
        help="fine-tune the embedding model on the stored papers and re-embed the store",
        description="In-domain adaptation: teach the embedding model which abstract text goes with "
        "which title, using only the stored papers (no evaluation labels), then re-embed the store "
        "with it. The model is kept in <RAG_STORE__PATH>/models/<fingerprint> and named in the "
        "store's manifest, so every later process uses it with this store. About 4 minutes per "
        "epoch plus a re-ingest for the 2,115 ICLR papers on 2 cores.",
    )
    p.add_argument("--epochs", type=int, default=1, help="passes over the papers (default 1)")
    p.add_argument("--batch-size", type=int, default=32, help="pairs per step; the other pairs are negatives")
    p.add_argument("--learning-rate", type=float, default=2e-5, help="AdamW peak learning rate")
    p.add_argument("--seed", type=int, default=0, help="pairing and shuffling seed")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")

    _add_extra_commands(sub)
    return parser


# Commands of the outer layers: (command, module, function that adds its subparser, pip extra).
EXTRA_COMMANDS: tuple[tuple[str, str, str, str], ...] = (
    ("serve", "rag.serve", "add_serve_command", "serve"),
    ("eval", "evals.cli", "add_eval_command", "eval"),
)


def _add_extra_commands(sub: Any) -> None:
    """Register every extra command. One that cannot be imported still appears, and running it is
    an error naming what is missing: a broken import never silently removes a command."""
    import importlib

    for name, module, function, extra in EXTRA_COMMANDS:
        try:
            register = getattr(importlib.import_module(module), function)
        except ImportError as exc:
            missing = exc.name or str(exc)
            why = (f"`rag {name}` is unavailable: importing {module} failed ({exc}); it needs the "
                   f"'{extra}' extra: pip install 'iclr-rag[{extra}]'")
            p = sub.add_parser(name, help=f"(unavailable: {missing} cannot be imported)", description=why)
            p.set_defaults(handler=_unavailable(why), unavailable=True)
            continue
        register(sub)


def _unavailable(why: str) -> Any:
    def handler(_args: argparse.Namespace, _settings: Any) -> int:
        from rag.errors import ConfigError

        raise ConfigError(f"{why} (a checkout: scripts/setup.sh installs every extra)")

    return handler


def print_answer(answer: Any, out: Any = None) -> None:
    """An answer and its sources on the terminal (control characters shown, never acted on)."""
    if answer.intent is not None and answer.intent.notes:
        say(f"(read as: {one_line('; '.join(answer.intent.notes))})\n", file=out)
    say(answer.text, file=out)
    if answer.citations:
        say("\nSources:", file=out)
        for c in answer.citations:
            tag = " (attributed)" if c.kind == "attributed" else ""
            say(f"  [{c.number}] {one_line(c.title)}{tag}\n      {one_line(c.url)}", file=out)
    elif not answer.refused:
        say("\n(warning: no sentence of this answer could be tied to a source)", file=out)


def _chat_loop(rag: RAG, args: argparse.Namespace) -> None:
    from rag.errors import RagError

    conversation = rag.conversation(top_k=args.top_k, decisions=args.decision, retriever=args.retriever)
    say(f"{rag.stats()['papers']} papers. Ask a question ('new' starts over; Ctrl-D or 'exit' quits).")
    while True:
        try:
            q = input("\n? ").strip()
        except EOFError:
            break
        if q in {"exit", "quit"}:
            break
        if q == "new":
            conversation.reset()
            say("(new conversation)")
            continue
        if not q:
            continue
        try:
            answer = conversation.ask(q)
        except RagError as exc:
            say(f"error: {redact_secrets(str(exc))}", file=sys.stderr)
            continue
        if answer.standalone_question and answer.standalone_question != answer.question:
            say(f"(searched for: {one_line(answer.standalone_question)})\n")
        print_answer(answer)


def _options(args: argparse.Namespace) -> SearchOptions:
    """The search options of `rag ask` and `rag export --question`."""
    return SearchOptions(top_k=args.top_k, decisions=args.decision, retriever=args.retriever, show_all=args.show_all)


def _export(rag: RAG, args: argparse.Namespace) -> None:
    from rag.errors import InvalidRequestError

    if bool(args.question) == bool(args.paper_ids):
        raise InvalidRequestError("give paper ids or --question, not both and not neither")
    ids = list(args.paper_ids)
    if args.question:
        answer = rag.ask(args.question, **_options(args))
        ids = answer.paper_ids(matching=args.show_all)
        if not ids:
            raise InvalidRequestError(f"the answer cites no paper ({answer.refusal_reason or 'nothing found'})")
    _write(rag.export(ids, args.format), args.output, f"{len(ids)} papers as {args.format}")


def _map(rag: RAG, args: argparse.Namespace) -> None:
    from rag.errors import InvalidRequestError
    from rag.fieldmap import MAP_FORMATS

    fmt = Path(args.output).suffix.lower().lstrip(".")
    if fmt not in MAP_FORMATS:
        raise InvalidRequestError(f"the map is written as {', '.join(MAP_FORMATS)}: name the output so, not {args.output!r}")
    picked: list[str] = []
    if args.question:
        answer = rag.ask(args.question)
        picked = answer.paper_ids(matching=True)
    fmap = rag.field_map(progress=not args.no_progress)
    drawn = fmap.render(fmt, picked)
    if isinstance(drawn, bytes):
        Path(args.output).write_bytes(drawn)
    else:
        Path(args.output).write_text(drawn, encoding="utf-8")
    how = "read from the kept map" if fmap.cached else f"computed in {fmap.seconds:.1f} s"
    say(f"wrote the map of {fmap.papers} papers in {len(fmap.clusters)} clusters ({how}"
        + (f"; {len(picked)} papers of the answer picked out" if args.question else "") + f") to {args.output}",
        file=sys.stderr)


def _write(text: str, output: str | None, what: str) -> None:
    """`text` into the file `output` (saying so on stderr), else onto stdout."""
    if output:
        with open(output, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        say(f"wrote {what} to {output}", file=sys.stderr)
    else:
        say(text.rstrip("\n"))


def _run(args: argparse.Namespace) -> int:
    from rag import RAG, Settings

    settings = Settings()
    setup_logging(args.log_level or settings.log_level)
    if getattr(args, "handler", None):
        return int(args.handler(args, settings) or 0)
    rag = RAG(settings)
    if args.command == "ingest":
        report = rag.ingest(args.paths or None, progress=not args.no_progress)
        skipped = ", ".join(f"{n} {why}" for why, n in report.skipped.items()) or "none"
        say(f"added {report.added}, updated {report.updated}, unchanged {report.unchanged} papers "
              f"({report.chunks_written} chunks written, {report.seconds:.1f}s); skipped: {skipped}")
    elif args.command == "ask":
        answer = rag.ask(args.question, **_options(args))
        if args.json:
            say(answer.model_dump_json(indent=2))
        else:
            print_answer(answer)
        if args.link:
            link = rag.permalink(args.question, **_options(args))
            host = settings.server.host if settings.server.host not in ("0.0.0.0", "::") else "127.0.0.1"
            say(f"\nlink: {link.url(f'http://{host}:{settings.server.port}/')}", file=sys.stderr if args.json else None)
    elif args.command == "chat":
        _chat_loop(rag, args)
    elif args.command == "stats":
        st = rag.stats()
        st["store"] = redact_secrets(st["store"])  # a Chroma server's URL may hold a password
        say(json.dumps(st) if args.json else
              f"{st['papers']} papers, {st['chunks']} chunks in {st['store']} ({st['collection']}); "
              f"embedding model: {st['embedding_model'] or 'not recorded'}"
              + (f" ({st['embedding_fingerprint']})" if st["embedding_fingerprint"] else ""))
    elif args.command == "adapt":
        from rag.models.adapt import AdaptConfig

        if args.epochs < 1 or args.batch_size < 2 or args.learning_rate <= 0:
            from rag.errors import ConfigError

            raise ConfigError("adapt needs --epochs >= 1, --batch-size >= 2 and --learning-rate > 0")
        adapted = rag.adapt(
            AdaptConfig(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate, seed=args.seed),
            progress=not args.no_progress,
        )
        say(f"adapted model {adapted.record.fingerprint} ({adapted.training['steps']} steps, "
              f"{adapted.training['seconds']:.0f}s) saved to {adapted.model_dir}; re-embedded "
              f"{adapted.papers} papers ({adapted.chunks} chunks)")
    elif args.command == "fetch":
        from rag.ingest.fetch import fetch_venue

        cfg = settings.fetch.model_copy(update={"base_url": args.base_url}) if args.base_url else settings.fetch
        out = Path(args.output or re.sub(r"[^\w.\-]+", "_", args.venue.strip()) + ".jsonl")
        fetched = fetch_venue(args.venue, out, cfg, progress=not args.no_progress)
        say(f"wrote {fetched.written} papers of {fetched.venue} to {fetched.out} ({fetched.skipped_no_abstract} "
            f"without an abstract skipped); next: rag ingest {fetched.out}")
    elif args.command == "export":
        _export(rag, args)
    elif args.command == "map":
        _map(rag, args)
    elif args.command == "paper":
        answer = rag.paper_page(args.paper_id, args.neighbours)
        if args.json:
            say(answer.model_dump_json(indent=2))
        else:
            print_answer(answer)
    elif args.command == "compare":
        answer = rag.compare(args.paper_ids)
        if args.format == "text" and not args.output:
            print_answer(answer)
        else:
            text = answer.to_markdown() if args.format == "text" else answer.comparison_table(args.format)
            _write(text, args.output, f"a comparison of {len(answer.comparison)} papers as {args.format}")
    elif args.command == "remove":
        n = rag.remove(args.paper_id)
        say(f"removed {args.paper_id} ({n} chunks)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and not getattr(args, "unavailable", False):  # an unavailable command takes any options
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    from pydantic import ValidationError

    from rag.errors import RagError

    try:
        return _run(args)
    except RagError as exc:
        say(f"error: {redact_secrets(str(exc))}", file=sys.stderr)
        return 1
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = "__".join(str(x).upper() for x in first["loc"])
        say(f"error: invalid setting RAG_{loc}: {first['msg']}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        say("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

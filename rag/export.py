"""Papers out of the product: BibTeX, CSV, Markdown and JSON of an answer's papers or any selection.

One rule per format, over anything with a paper's fields (a stored paper row, an answer's citation):
`paper_id`, `title`, `authors`, `decision`, `url`. BibTeX (written by bibtexparser) follows what
OpenReview itself gives for an ICLR 2025 paper (`@inproceedings`, key `<first author's last
name>2025<first title word>`), with every LaTeX special character escaped, the title's case protected,
and names that BibTeX would split wrongly (a comma, a lone "and") kept whole in braces. Two papers of one export with the same key both get
their paper id appended, so a key never depends on which other papers were selected unless it would
clash.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Literal, Protocol, get_args

from rag.errors import InvalidRequestError
from rag.text.terms import STOPWORDS, words

ExportFormat = Literal["bibtex", "csv", "markdown", "json"]
FORMATS: tuple[str, ...] = get_args(ExportFormat)
MEDIA_TYPES = {"bibtex": "application/x-bibtex", "csv": "text/csv", "markdown": "text/markdown",
               "json": "application/json"}
EXTENSIONS = {"bibtex": "bib", "csv": "csv", "markdown": "md", "json": "json"}
BOOKTITLE = "The Thirteenth International Conference on Learning Representations"
YEAR = "2025"
MAX_PAPERS = 10_000  # per export: all of ICLR 2025 (2,115) fits several times
CSV_FIELDS = ("paper_id", "title", "authors", "decision", "url")


class PaperLike(Protocol):
    @property
    def paper_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def authors(self) -> list[str]: ...
    @property
    def decision(self) -> str: ...
    @property
    def url(self) -> str: ...


def check_format(fmt: str) -> ExportFormat:
    """`fmt` as an export format, or InvalidRequestError naming the formats there are."""
    if fmt not in FORMATS:
        raise InvalidRequestError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt  # type: ignore[return-value]


def export(papers: Sequence[PaperLike], fmt: str) -> str:
    """`papers` (in the order given) as text in `fmt`: bibtex, csv, markdown or json."""
    fmt = check_format(fmt)
    if fmt == "bibtex":
        return to_bibtex(papers)
    if fmt == "csv":
        return to_csv(papers)
    if fmt == "markdown":
        return to_markdown(papers)
    return to_json(papers)


# -- BibTeX ------------------------------------------------------------------------------------
_LATEX = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$",
          "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_LATEX_CHARS = re.compile("[" + re.escape("".join(_LATEX)) + "]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def latex_escape(text: str) -> str:
    """`text` as literal LaTeX: the ten special characters escaped, control characters and runs of
    whitespace made one space. Non-ASCII letters stay as they are (UTF-8 .bib files)."""
    text = " ".join(_CONTROL.sub(" ", text).split())
    return _LATEX_CHARS.sub(lambda m: _LATEX[m.group(0)], text)


def _ascii_word(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text)
    return re.sub(r"[^a-z0-9]", "", "".join(c for c in folded if not unicodedata.combining(c)).lower())


def bibtex_key(paper: PaperLike) -> str:
    """`<last name of the first author>2025<first title word that is neither a stop word nor a
    number>`, ASCII lower case, as OpenReview's own BibTeX keys are ("anonymous" when there is no
    author, "paper" when the title has no such word)."""
    first = paper.authors[0].split(",")[0].split() if paper.authors else []  # "Picard, Jr." → Picard
    last = _ascii_word(first[-1]) if first else ""
    word = next((w for w in (_ascii_word(w) for w in words(paper.title) if w not in STOPWORDS)
                 if re.search("[a-z]", w)), "")
    return f"{last or 'anonymous'}{YEAR}{word or 'paper'}"


def _name(name: str) -> str:
    """One author for BibTeX's `and`-separated list: escaped; braced whole when BibTeX would read a
    comma or a lone "and" in it as structure."""
    escaped = latex_escape(name)
    if "," in escaped or re.search(r"(?i)(?:^|\s)and(?:\s|$)", escaped):
        return "{" + escaped + "}"
    return escaped


def _bib_url(url: str) -> str:
    """The link, when it is one BibTeX can carry verbatim (http(s), no braces, spaces or backslash)."""
    return url if re.fullmatch(r"https?://[^\s{}\\%]+", url or "") else ""


def to_bibtex(papers: Sequence[PaperLike]) -> str:
    """The papers as `@inproceedings` entries, written by bibtexparser (its writer encloses each
    value in braces; the values are escaped here)."""
    from bibtexparser.entrypoint import write_string
    from bibtexparser.library import Library
    from bibtexparser.model import Entry, Field
    from bibtexparser.writer import BibtexFormat

    keys = [bibtex_key(p) for p in papers]
    clashes = {k for k, n in Counter(keys).items() if n > 1}
    library = Library()
    for paper, key in zip(papers, keys):
        if key in clashes:
            key = f"{key}-{re.sub(r'[^A-Za-z0-9_-]', '', paper.paper_id)}"
        fields = [Field("title", "{" + latex_escape(paper.title) + "}")]
        if paper.authors:
            fields.append(Field("author", " and ".join(_name(a) for a in paper.authors)))
        fields += [Field("booktitle", BOOKTITLE), Field("year", YEAR)]
        if url := _bib_url(paper.url):
            fields.append(Field("url", url))
        if paper.decision:
            fields.append(Field("note", latex_escape(f"ICLR {YEAR} {paper.decision}")))
        library.add(Entry("inproceedings", key, fields))
    style = BibtexFormat()  # type: ignore[no-untyped-call]
    style.indent = "  "
    return write_string(library, bibtex_format=style) if papers else ""


# -- CSV, Markdown, JSON ----------------------------------------------------------------------------
def _record(paper: PaperLike) -> dict[str, object]:
    return {"paper_id": paper.paper_id, "title": paper.title, "authors": list(paper.authors),
            "decision": paper.decision, "url": paper.url}


def to_csv(papers: Sequence[PaperLike]) -> str:
    """One row per paper; authors joined with "; ". A title, author or decision cell that a
    spreadsheet would run as a formula (starting with = + - @) gets a leading apostrophe."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for paper in papers:
        row = _record(paper) | {"authors": "; ".join(paper.authors)}
        writer.writerow([str(row[f]) if f in ("paper_id", "url") else _cell(str(row[f])) for f in CSV_FIELDS])
    return out.getvalue()


def _cell(value: str) -> str:
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _md(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", " ".join(text.split()))


def to_markdown(papers: Sequence[PaperLike]) -> str:
    """A numbered list: linked title, authors, decision."""
    lines = []
    for n, paper in enumerate(papers, 1):
        title = _md(paper.title)
        url = _bib_url(paper.url)
        head = f"[{title}]({url})" if url else title
        tail = [", ".join(_md(a) for a in paper.authors)] if paper.authors else []
        tail += [f"ICLR {YEAR} {_md(paper.decision)}"] if paper.decision else []
        lines.append(f"{n}. {head}" + ("  \n   " + " · ".join(tail) if tail else ""))
    return "\n".join(lines) + ("\n" if lines else "")


def to_json(papers: Sequence[PaperLike]) -> str:
    return json.dumps([_record(p) for p in papers], ensure_ascii=False, indent=2) + "\n"


# -- comparison tables ------------------------------------------------------------------------------
TableFormat = Literal["csv", "markdown", "json"]
TABLE_FORMATS: tuple[str, ...] = get_args(TableFormat)
TABLE_FIELDS = ("number", "title", "paper_id", "url", "problem", "method", "data", "result")


class RowLike(Protocol):
    def model_dump(self, *, mode: str = ...) -> dict[str, object]: ...


def comparison_table(rows: Sequence[RowLike], fmt: str) -> str:
    """A comparison's rows (rag.types.ComparisonRow) as CSV (one line per paper), a Markdown table
    or JSON; every cell as the abstract says it."""
    if fmt not in TABLE_FORMATS:
        raise InvalidRequestError(f"unknown table format {fmt!r}; use one of {', '.join(TABLE_FORMATS)}")
    records = [r.model_dump(mode="json") for r in rows]
    if fmt == "json":
        return json.dumps(records, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(TABLE_FIELDS)
        for r in records:
            writer.writerow([str(r[f]) if f in ("number", "paper_id", "url") else _cell(str(r[f])) for f in TABLE_FIELDS])
        return out.getvalue()
    head = ["Paper", "Problem", "Method", "Data", "Result"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        cells = [_md(str(r["title"])), *(_md(str(r[f])) or "—" for f in ("problem", "method", "data", "result"))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"

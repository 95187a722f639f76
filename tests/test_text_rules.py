"""Each rule of the text once (issue: structure): the word lists, tokenizers and the decisions list
have one home, and a second copy anywhere else in `rag/` fails here.

- stop words, BM25's stop words and every tokenizer: rag/text/terms.py
- the decisions (Oral, Spotlight, Poster): rag/settings.py
A check that only passes proves nothing, so each is also run on a probe that holds a copy."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rag.text.terms import STOPWORDS

ROOT = Path(__file__).resolve().parent.parent
TERMS = ROOT / "rag" / "text" / "terms.py"
SETTINGS = ROOT / "rag" / "settings.py"
# A lower-case word tokenizer: `[a-z0-9]+…`, `\w\w+`, `\w+`, `[^\W_]+` at the start of a pattern.
TOKENIZER = re.compile(r"^(?:\(\?u\))?(?:\\b)?(?:\[a-z0-9\](?:\+|\[a-z0-9)|\\w\\w\+|\\w\+|\[\^\\W_\]\+)")
REGEX_CALLS = {"compile", "findall", "finditer", "search", "match", "fullmatch", "split", "sub"}
DECISIONS = {"Oral", "Spotlight", "Poster"}


def _copies(path: Path) -> list[str]:
    """What in `path` copies a rule that has its home elsewhere."""
    found: list[str] = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if path != TERMS and isinstance(node, ast.Constant) and isinstance(node.value, str):
            ws = node.value.split()
            if len(ws) >= 25 and all(re.fullmatch(r"[a-z0-9'’.-]+", w) for w in ws):
                share = len(set(ws) & STOPWORDS) / len(set(ws))
                if share >= 0.65:
                    found.append(f"line {node.lineno}: a stop-word list ({share:.0%} of its words are stop words)")
        if path != TERMS and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if (isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in REGEX_CALLS and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                    and TOKENIZER.match(node.args[0].value)):
                found.append(f"line {node.lineno}: a word tokenizer {node.args[0].value!r}")
        if path != SETTINGS and isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            if values == DECISIONS:
                found.append(f"line {node.lineno}: the decisions list")
    return found


def test_no_rule_of_the_text_has_a_second_copy() -> None:
    bad = {str(p.relative_to(ROOT)): c for p in sorted((ROOT / "rag").rglob("*.py")) if (c := _copies(p))}
    assert bad == {}


@pytest.mark.parametrize(
    "code, what",
    [
        ('_STOP = frozenset("""a an and are as at be been but by can could did do does for from had has have '
         'how i if in into is it its me my no not of on or our so some such than that the their them"""'
         '.split())\n', "stop-word list"),
        ('import re\n_T = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")\n', "word tokenizer"),
        ('import re\nwords = re.findall(r"\\w\\w+", "a text")\n', "word tokenizer"),
        ('KINDS = ("Oral", "Spotlight", "Poster")\n', "decisions list"),
    ],
)
def test_a_copy_is_found(tmp_path: Path, code: str, what: str) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(code, encoding="utf-8")
    assert any(what in c for c in _copies(probe)), _copies(probe)

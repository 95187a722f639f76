"""Rewrite the settings table in docs/settings.md from rag.settings (run after changing a setting)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rag.settings import env_fields  # noqa: E402


def rows() -> list[str]:
    out = []
    for env, field in env_fields():
        if field.default_factory is not None:
            default = "see meaning"  # computed where it runs (e.g. the store path)
        else:
            default = "" if field.default is None else field.default
        out.append(f"| `{env}` | `{default}` | {field.description or ''} |")
    return out


def render(readme_text: str) -> str:
    """The page's text with its settings table regenerated."""
    table = "| variable | default | meaning |\n|---|---|---|\n" + "\n".join(rows())
    return re.sub(r"(<!-- settings-table:start -->\n).*?(\n<!-- settings-table:end -->)",
                  lambda m: m.group(1) + table + m.group(2), readme_text, flags=re.S)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Regenerate the settings table of docs/settings.md from "
                                     "rag.settings (every RAG_* variable, one root).")
    parser.add_argument("--check", action="store_true", help="only report whether the table is current")
    args = parser.parse_args(argv)
    readme = REPO / "docs" / "settings.md"
    current = readme.read_text()
    fresh = render(current)
    if args.check:
        print("settings table is current" if fresh == current else "settings table is stale")
        return 0 if fresh == current else 1
    readme.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())

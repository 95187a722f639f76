"""Rewrite the settings table in README.md from rag.settings (run after changing a setting)."""

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


def main() -> int:
    readme = REPO / "README.md"
    table = "| variable | default | meaning |\n|---|---|---|\n" + "\n".join(rows())
    text = re.sub(r"(<!-- settings-table:start -->\n).*?(\n<!-- settings-table:end -->)",
                  lambda m: m.group(1) + table + m.group(2), readme.read_text(), flags=re.S)
    readme.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

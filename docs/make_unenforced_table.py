"""Write the table of unenforced JSON Schema keywords from the code's one list of them.

Run ``python docs/make_unenforced_table.py --write`` to refresh the table in
``docs/tools.md`` (between the ``unenforced-keywords`` markers) from
``stream_parser.schema.json_schema.UNENFORCED_KEYWORDS``; without ``--write`` it prints
the table.  ``tests/schema/test_json_schema.py`` fails when the file and the list
disagree, so the docs cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from stream_parser.schema.json_schema import UNENFORCED_KEYWORDS

BEGIN = "<!-- unenforced-keywords:begin -->"
END = "<!-- unenforced-keywords:end -->"
DOC = Path(__file__).with_name("tools.md")


def table() -> str:
    """The keywords and what the model does instead, as a Markdown table."""
    lines = ["| keyword | what the model does instead |", "| --- | --- |"]
    lines.extend(f"| `{name}` | {reason} |" for name, reason in UNENFORCED_KEYWORDS.items())
    return "\n".join(lines)


def render(doc: str) -> str:
    """``doc`` with the text between the markers replaced by the current table."""
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


if __name__ == "__main__":
    if "--write" in sys.argv:
        DOC.write_text(render(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(table())

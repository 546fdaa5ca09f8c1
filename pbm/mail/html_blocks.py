"""The text of a mail as HTML that reads on a phone: prose as paragraphs that wrap, lists
as lists, and only what is laid out in columns (boards, tables, the move list) in a
`<pre>` that scrolls sideways alone.

The text is pbm's own, folded at 72 columns (pbm.texts.wrap): a line that was folded is
joined to the next again, a line that ended early keeps its break (`<br>`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape
from itertools import pairwise

# A line this long was folded (pbm folds at 72 columns, the templates by hand a little
# shorter); a shorter one ended where its writer ended it.
FOLDED = 56
# A run of two spaces inside a line, a table's rule or a board's frame: columns.
_COLUMNS = re.compile(r"\S {2,}\S|\||\+-|-{4,}|\*{8,}|\t|^\s*[.#XO]( [.#XO]){3,}")
_ITEM = re.compile(r"^(?:[-*]|\d+\.) ")
# A command written in quotes or backticks in prose: `help`, "quarto ask 101 c3".
_COMMAND = re.compile(r"`([^`\n]+)`|&quot;([a-z][a-z0-9-]*(?: [^&\n]+?)?)&quot;")

PRE = '<pre class="board" style="{style}">{text}</pre>'
PRE_STYLE = (
    "margin:0 0 12px 0;font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,"
    "'DejaVu Sans Mono','Liberation Mono','Courier New',monospace;font-size:13px;"
    "line-height:1.35;white-space:pre;overflow-x:auto;max-width:100%;tab-size:8;"
)
P_STYLE = "margin:0 0 12px 0;overflow-wrap:anywhere;"
UL_STYLE = "margin:0 0 12px 0;padding-left:20px;overflow-wrap:anywhere;"


def blocks(text: str) -> list[list[str]]:
    """The text's blocks: runs of lines between blank lines."""
    found: list[list[str]] = [[]]
    for line in text.rstrip("\n").split("\n"):
        if line.strip():
            found[-1].append(line.rstrip())
        elif found[-1]:
            found.append([])
    return [b for b in found if b]


def is_columns(block: Sequence[str]) -> bool:
    """Whether the block is laid out in columns (a board, a table, a usage with its
    summary beside it); an indented paragraph is prose all the same."""
    return any(_COLUMNS.search(line) for line in block)


def is_list(block: Sequence[str]) -> bool:
    return bool(_ITEM.match(block[0])) and all(
        _ITEM.match(line) or line.startswith(" ") for line in block
    )


def prose(lines: Sequence[str]) -> str:
    """Folded lines joined again; a line that ended early keeps its break."""
    out = escape(lines[0].strip(), quote=True)
    for previous, line in pairwise(lines):
        folded = len(previous) + len(line.split()[0]) >= FOLDED
        out += (" " if folded else "<br>\n") + escape(line.strip(), quote=True)
    return _COMMAND.sub(_code, out)


def _code(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return f"<code>{match.group(1)}</code>"
    return f"&quot;<code>{match.group(2)}</code>&quot;"


def list_items(block: Sequence[str]) -> list[list[str]]:
    items: list[list[str]] = []
    for line in block:
        if _ITEM.match(line):
            items.append([_ITEM.sub("", line)])
        else:
            items[-1].append(line)
    return items


def to_html(text: str) -> str:
    """The mail's text as HTML blocks (everything escaped)."""
    parts: list[str] = []
    for block in blocks(text):
        if is_columns(block):
            body = escape("\n".join(block), quote=False)
            parts.append(PRE.format(style=PRE_STYLE, text=body))
        elif is_list(block):
            items = "".join(f"<li>{prose(item)}</li>" for item in list_items(block))
            number = re.match(r"\d+", block[0])
            if number:  # numbered steps keep their numbers
                tag = f'<ol start="{number.group(0)}" style="{UL_STYLE}">'
                parts.append(f"{tag}{items}</ol>")
            else:
                parts.append(f'<ul style="{UL_STYLE}">{items}</ul>')
        else:
            parts.append(f'<p style="{P_STYLE}">{prose(block)}</p>')
    return "\n".join(parts)


__all__ = ["blocks", "is_columns", "is_list", "prose", "to_html"]

"""The words pbm mails to people, read from templates/ (one file per reply kind, plus
phrases.toml for the short sentences: errors and status lines).

Templates use string.Template placeholders ($name); a missing value is a bug, so
`substitute` (not safe_substitute) is used.
"""

from __future__ import annotations

import textwrap
import tomllib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from string import Template
from typing import TypeVar, cast

from pbm.config import PACKAGE_TEMPLATES

_directory: Path = PACKAGE_TEMPLATES
T = TypeVar("T")
# Values made from the templates' words by code above this module (the pictures' words),
# by the function that makes each: made once, until the templates change.
_made: dict[Callable[[], object], object] = {}


def use_templates(directory: Path) -> None:
    """Read templates from `directory` from now on (config's templates_dir)."""
    global _directory
    if directory != _directory:
        _directory = directory
        _phrases.cache_clear()
        _template.cache_clear()
        _html_template.cache_clear()
        _made.clear()


def made_once(make: Callable[[], T]) -> T:
    """`make()`, a value built from the templates (immutable: every caller shares it),
    built on first use and again after `use_templates` changes the templates."""
    if make not in _made:
        _made[make] = make()
    return cast(T, _made[make])


@cache
def _phrases(directory: Path) -> dict[str, str]:
    with (directory / "phrases.toml").open("rb") as fh:
        return {k: str(v) for k, v in tomllib.load(fh).items()}


@cache
def _template(directory: Path, name: str) -> Template:
    return Template((directory / f"{name}.txt").read_text(encoding="utf-8"))


def phrase(key: str, **values: object) -> str:
    """A short sentence from phrases.toml with its placeholders filled."""
    return Template(_phrases(_directory)[key]).substitute(values)


def unfilled(key: str) -> str:
    """A phrase with its placeholders left in, for the pure pictures, which fill their own
    (pbm.services.play.picture_words)."""
    return _phrases(_directory)[key]


def prose(key: str, **values: object) -> str:
    """`phrase` folded to the mail's width: a long userid, name or address filled into a
    sentence must not run past it (a phrase's own lines fit: tests/server/test_help.py)."""
    return wrap(phrase(key, **values), reflow=True)


def render(name: str, **values: object) -> str:
    """A reply body template (templates/NAME.txt) with its placeholders filled."""
    return _template(_directory, name).substitute(values)


@cache
def _html_template(directory: Path, name: str) -> Template:
    return Template((directory / f"{name}.html").read_text(encoding="utf-8"))


def render_html(name: str, **values: str) -> str:
    """An HTML template (templates/NAME.html) with its placeholders filled; the values
    are HTML already (the caller escapes text)."""
    return _html_template(_directory, name).substitute(values)


# Mail programs show plain text at about 72 columns, and so do pbmserv's mails.
WIDTH = 72
# Player input quoted back in a reply is cut after this many characters, so that a long
# comment written on the command line does not come back as a wall of text.
ECHO_MAX = 100
ECHO_CUT = "..."


def echoed(text: str, limit: int = ECHO_MAX) -> str:
    """Player input as a reply quotes it: on one line, cut after `limit` characters with
    "..." (the cut is the player's own words; pbm's sentence around it stays whole)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit].rstrip() + ECHO_CUT


def wrap(text: str, width: int = WIDTH, *, reflow: bool = False) -> str:
    """`text` with every line longer than `width` folded at spaces, the parts keeping
    the line's indentation. A word longer than the line (an address, a long move list)
    is left whole; lines that fit are kept as they are. `reflow`: the rest of a long
    line's paragraph (the lines after it with the same indentation, up to a blank line)
    is folded with it, so that a long value filled into a template's prose does not
    leave a short line behind; without it each line is folded alone (the lines of an
    error message are sentences of their own)."""
    source = text.split("\n")
    lines: list[str] = []
    i = 0
    while i < len(source):
        line = source[i]
        i += 1
        if len(line) <= width:
            lines.append(line)
            continue
        indent = _indent(line)
        paragraph = [line]
        while reflow and i < len(source) and source[i].strip() and _indent(source[i]) == indent:
            paragraph.append(source[i])
            i += 1
        lines += textwrap.wrap(
            " ".join(part.strip() for part in paragraph),
            width=width,
            initial_indent=indent,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(lines)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]

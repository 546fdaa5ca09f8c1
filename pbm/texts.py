"""The words pbm mails to people, read from templates/ (one file per reply kind, plus
phrases.toml for the short sentences: errors and status lines).

Templates use string.Template placeholders ($name); a missing value is a bug, so
`substitute` (not safe_substitute) is used.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from string import Template

from pbm.config import PACKAGE_TEMPLATES

_directory: Path = PACKAGE_TEMPLATES


def use_templates(directory: Path) -> None:
    """Read templates from `directory` from now on (config's templates_dir)."""
    global _directory
    if directory != _directory:
        _directory = directory
        _phrases.cache_clear()
        _template.cache_clear()


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


def render(name: str, **values: object) -> str:
    """A reply body template (templates/NAME.txt) with its placeholders filled."""
    return _template(_directory, name).substitute(values)

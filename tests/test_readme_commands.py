"""The README's list of the admin commands is `pbm --help`'s list (pbm.cli.COMMANDS):
every group with all its commands, and every command of its own."""

from __future__ import annotations

import re
from pathlib import Path

from pbm.cli import COMMANDS
from pbm.cli.lazy import Group

README = Path(__file__).resolve().parents[1] / "README.md"


def _listed() -> str:
    """The README's sentence that lists the admin commands, on one line."""
    paragraphs = re.split(r"\n\s*\n", README.read_text(encoding="utf-8"))
    (found,) = [p for p in paragraphs if "`pbm --help` lists the admin commands" in p]
    return " ".join(found.split()).partition(" The listing commands")[0]


def test_the_readme_lists_every_admin_command() -> None:
    text = _listed()
    for name, entry in COMMANDS.items():
        if isinstance(entry, Group):
            named = re.findall(rf"`pbm {re.escape(name)} ([a-z|-]+)", text)
            assert named == ["|".join(entry.commands)], (name, named)
        else:
            assert f"`pbm {name}" in text, name


def test_the_check_sees_a_missing_command() -> None:
    text = _listed().replace("|dkim-key", "")
    named = re.findall(r"`pbm mail ([a-z|-]+)", text)
    assert named != ["|".join(COMMANDS["mail"].commands)]  # type: ignore[union-attr]

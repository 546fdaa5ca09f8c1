"""The documents stand on the repository alone: no path outside it, every link to a file
of it resolves, no claim that a merged part is missing, and the admin commands the README
names are whole commands (not a group that only prints its usage)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup

from pbm.cli import app

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted(
    [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), ROOT / "config" / "pbm.example.toml"]
)
# What points outside the repository: the team's notes and seed documents, a development
# machine's absolute paths.
OUTSIDE = re.compile(
    r"/work/|\.\./shared|shared/|rules-notes|pbmserv-notes|seeds?/|\bseed \d{3}\b|/home/\w"
)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_document_points_nowhere_outside_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    found = [
        f"{n}: {line.strip()}"
        for n, line in enumerate(text.splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, found
    assert "not on `main`" not in text and "not on main" not in text


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_to_a_file_resolves(doc: Path) -> None:
    targets = [t for t in LINK.findall(doc.read_text(encoding="utf-8")) if "://" not in t]
    missing = [t for t in targets if not (doc.parent / t).resolve().exists()]
    assert not missing, missing
    assert all((doc.parent / t).resolve().is_relative_to(ROOT) for t in targets)


def test_the_readme_names_whole_admin_commands() -> None:
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    spans = [" ".join(s.split()) for s in re.findall(r"`(pbm [^`]+)`", text)]
    checked = 0
    for span in spans:
        words = re.sub(r"\|\s+", "|", span).split()
        command = root.commands.get(words[1]) if len(words) > 1 else None
        if not isinstance(command, TyperGroup):
            continue
        assert len(words) > 2, f"`{span}` names a group: it only prints its usage"
        for name in words[2].split("|"):
            assert name in command.commands, f"`{span}`: no command {words[1]} {name}"
        checked += 1
    assert checked >= 6

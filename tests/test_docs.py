"""The documents stand on the repository alone: no path outside it, every link to a file
of it resolves, no claim that a merged part is missing, and the admin commands the README
names are whole commands (not a group that only prints its usage). The code, tests and
scripts cite the rule sheets and the game pages, never the team's private notes, and every
game page section they cite exists."""

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
# The team's private notes as code cites them: a seed document, the rules or pbmserv notes,
# a numbered decision of those notes.
PRIVATE_NOTES = re.compile(
    r"seed \d{3}|seeds/|rules[- ]notes|decision \d+|pbmserv-notes|shared/", re.IGNORECASE
)
# A game page's section as code cites it: docs/games/quad.md, 'Notation'.
SECTION = re.compile(r"docs/games/([\w-]+\.md),\s*(?:#\s*)?'([^']+)'")
SOURCES = ("pbm", "tests", "benchmarks", "scripts")


def _source_texts() -> list[tuple[str, str]]:
    """(path, text) of every text file under the code, test and script folders."""
    found = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # pictures and other binary data
            found.append((str(path.relative_to(ROOT)), text))
    return found


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


def test_code_and_tests_cite_no_private_notes() -> None:
    this = str(Path(__file__).resolve().relative_to(ROOT))
    found = [
        f"{name}:{n}: {line.strip()}"
        for name, text in _source_texts()
        if name != this
        for n, line in enumerate(text.splitlines(), 1)
        if PRIVATE_NOTES.search(line)
    ]
    assert not found, found


def test_every_cited_game_page_section_exists() -> None:
    headings: dict[str, list[str]] = {}
    for page in (ROOT / "docs" / "games").glob("*.md"):
        lines = page.read_text(encoding="utf-8").splitlines()
        headings[page.name] = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
    cited = 0
    for name, text in _source_texts():
        for page, section in SECTION.findall(text):
            section = " ".join(section.replace("#", " ").split())  # a cite wrapped in a comment
            assert page in headings, f"{name}: no page docs/games/{page}"
            assert any(h.startswith(section) for h in headings[page]), (
                f"{name}: docs/games/{page} has no section '{section}'"
            )
            cited += 1
    assert cited >= 20

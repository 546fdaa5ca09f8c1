"""Every phrase and template the code names exists (a missing one would crash a reply)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pbm.config import PACKAGE_TEMPLATES

SOURCES = Path(__file__).resolve().parents[2] / "pbm"


def _names(pattern: str) -> set[str]:
    found: set[str] = set()
    for path in SOURCES.rglob("*.py"):
        found |= set(re.findall(pattern, path.read_text(encoding="utf-8")))
    return found


def test_every_phrase_exists() -> None:
    phrases = tomllib.loads((PACKAGE_TEMPLATES / "phrases.toml").read_text(encoding="utf-8"))
    used = _names(r'phrase\(\s*"([a-z_]+)"')
    used |= {
        "proposal_draw",
        "proposal_undo",
        "notify_on",
        "notify_off",
        "subscribed",
        "unsubscribed",
    }  # chosen by a variable
    assert len(used) > 100
    assert sorted(used - set(phrases)) == []


def test_every_template_exists() -> None:
    used = _names(r'render\(\s*"([a-z_]+)"')
    assert {"board", "error", "help", "welcome"} <= used
    assert sorted(n for n in used if not (PACKAGE_TEMPLATES / f"{n}.txt").exists()) == []

"""The examples in docs/protocol.md and docs/bots.md run: every `pycon` block is a
doctest (the blocks of one page share their names, as a reader's session would), and
every `python` block at least compiles."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["docs/protocol.md", "docs/bots.md"]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _blocks(page: str, language: str) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    return [body for lang, body in FENCE.findall(text) if lang == language]


@pytest.mark.parametrize("page", PAGES)
def test_the_sessions_of_a_page_run_as_shown(page: str) -> None:
    blocks = _blocks(page, "pycon")
    assert blocks, f"{page} shows no session"
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, page, page, 0)
    assert test.examples
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    failures: list[str] = []
    runner.run(test, out=failures.append)
    assert "".join(failures) == ""
    assert runner.summarize(verbose=False).attempted == len(test.examples)


def test_the_code_of_the_pages_compiles() -> None:
    # Not one test a page: docs/bots.md shows no `python` block, and its test compiled
    # nothing, so it passed whatever the page said.
    blocks = [(page, body) for page in PAGES for body in _blocks(page, "python")]
    assert blocks, "the pages show no python block"
    for page, body in blocks:
        compile(body, page, "exec")


def test_a_wrong_example_is_found() -> None:
    test = doctest.DocTestParser().get_doctest(">>> 1 + 1\n3\n", {}, "wrong", "wrong", 0)
    failures: list[str] = []
    result = doctest.DocTestRunner().run(test, out=failures.append)
    assert result.failed == 1 and "Expected:\n    3\nGot:\n    2" in "".join(failures)

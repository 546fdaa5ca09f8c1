"""A missing tool fails the test under the test command (PBM_TEST_TOOLS=required, set by
scripts/test.sh) and skips it elsewhere (tests/tools.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools import missing

ROOT = Path(__file__).resolve().parents[1]


def test_a_missing_tool_fails_when_tools_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PBM_TEST_TOOLS", "required")
    with pytest.raises(pytest.fail.Exception, match="no chromium"):
        missing("no chromium")


def test_a_missing_tool_skips_when_run_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PBM_TEST_TOOLS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        missing("no chromium")


def test_the_test_command_requires_the_tools() -> None:
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert 'export PBM_TEST_TOOLS="${PBM_TEST_TOOLS:-required}"' in script

"""The commands nothing undoes ask first on a terminal and, elsewhere, refuse without
--yes (pbm.cli.questions), as `pbm user erase` did alone: `pbm user delete`,
`pbm game abort`, `pbm tournament cancel` and `pbm bot remove` acted at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbm.cli import app
from tests.server.conftest import cli_ok as ok
from tests.server.conftest import runner

# Each command, its refusal off a terminal, the lines before its question, and the
# line of a "no".
CASES = {
    "user delete": (
        ["user", "delete", "carol"],
        "deleting carol",
        "carol's addresses and settings go and his password stops working; his finished "
        "games keep his userid.\nDelete carol? [y/N]: ",
        "carol not deleted",
    ),
    "game abort": (
        ["game", "abort", "quarto", "101", "--reason", "Both asked for it."],
        "aborting Quarto Board 101",
        "Quarto Board 101 of alice and bob ends unrated, without a result; the players "
        "are told: Both asked for it.\nAbort Quarto Board 101? [y/N]: ",
        "Quarto Board 101 not aborted",
    ),
    "tournament cancel": (
        ["tournament", "cancel", "cup"],
        "cancelling tournament cup",
        "cup (round robin of Quarto, 2 entrants) ends: its boards being played (0) are "
        "removed unrated, and its entrants told.\nCancel tournament cup? [y/N]: ",
        "tournament cup not cancelled",
    ),
    "bot remove": (
        ["bot", "remove", "quartobot"],
        "removing bot quartobot",
        "quartobot: level 4, builtin, games quarto, no limit: it stops playing for good; "
        "its userid stays, for its finished games.\nRemove bot quartobot? [y/N]: ",
        "bot quartobot not removed",
    ),
}


def _state() -> str:
    """What the four commands change, as the listings show it."""
    return "\n".join(
        (
            ok("user", "list"),
            ok("game", "list"),
            ok("tournament", "list"),
            ok("bot", "list"),
        )
    )


@pytest.fixture
def installation(cfg: Path) -> Path:
    for name in ("alice", "bob", "carol"):
        ok("user", "add", name, f"{name}@x.example", "--password", "pw", "--confirmed")
    ok("game", "new", "quarto", "alice", "bob")
    ok("tournament", "create", "cup", "quarto")
    ok("tournament", "enter", "cup", "alice")
    ok("tournament", "enter", "cup", "carol")
    ok("bot", "add", "quartobot", "--games", "quarto")
    return cfg


@pytest.mark.parametrize("name", sorted(CASES))
def test_asks_first_and_refuses_off_a_terminal(
    installation: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    command, doing, question, declined = CASES[name]
    before = _state()
    script = runner.invoke(app, command)
    assert (script.exit_code, script.output) == (
        2,
        f"error: {doing} cannot be undone: run it again with --yes\n",
    )
    monkeypatch.setattr("pbm.cli.questions.on_terminal", lambda: True)
    no = runner.invoke(app, command, input="\n")
    assert (no.exit_code, no.output) == (1, f"{question}\nerror: {declined}\n")
    assert _state() == before
    yes = runner.invoke(app, command, input="y\n")
    assert yes.exit_code == 0, yes.output
    assert yes.output.startswith(question + "y\n")
    assert _state() != before


@pytest.mark.parametrize("name", sorted(CASES))
def test_yes_acts_without_asking(installation: Path, name: str) -> None:
    command = CASES[name][0]
    before = _state()
    done = ok(*command, "--yes")
    assert "?" not in done
    assert _state() != before


def test_a_refusal_comes_before_the_question(
    installation: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Asked, answered "y", and then refused: the refusal comes first, and no question.
    monkeypatch.setattr("pbm.cli.questions.on_terminal", lambda: True)
    ok("game", "abort", "quarto", "101", "--yes")
    ok("tournament", "cancel", "cup", "--yes")
    for command, error in (
        (["user", "delete", "nobody"], "error: Userid not known here: nobody"),
        (["user", "delete", "quartobot"], "error: quartobot is a computer player"),
        (["game", "abort", "quarto", "101"], "error: Quarto Board 101: The game has ended"),
        (["tournament", "cancel", "cup"], "error: Tournament cup is cancelled already"),
        (["bot", "remove", "alice"], "error: no bot named alice"),
    ):
        refused = runner.invoke(app, command, input="y\n")
        assert refused.exit_code == 1, command
        assert refused.output.startswith(error), refused.output
        assert "?" not in refused.output
    assert json.loads(ok("bot", "show", "quartobot", "--json"))["userid"] == "quartobot"

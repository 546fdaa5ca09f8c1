"""`pbm bot ...` at the command line: adding, listing, showing, disabling and removing
bots, through the same service the server uses; `pbm jobs run` plays their moves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pbm.cli import app
from tests.server.conftest import cli_ok

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def test_bots_are_added_listed_shown_disabled_and_removed(cfg: Path) -> None:
    out = cli_ok(
        "bot", "add", "quartobot", "--games", "quarto,quad", "--level", "2", "--max-games", "3"
    )
    assert "quartobot: level 2, builtin, games quarto,quad, max 3" in out
    assert "pbmbot1" in cli_ok("bot", "add-builtin")
    assert "there already" in cli_ok("bot", "add-builtin")
    listed = json.loads(cli_ok("bot", "list", "--json"))
    assert [b["userid"] for b in listed] == [
        "pbmbot1",
        "pbmbot2",
        "pbmbot3",
        "pbmbot4",
        "quartobot",
    ]
    assert [b["level"] for b in listed] == [1, 2, 3, 4, 2]
    shown = json.loads(cli_ok("bot", "show", "quartobot", "--json"))
    assert shown["games"] == ["quarto", "quad"] and shown["failures"] == 0
    cli_ok("bot", "disable", "quartobot")
    assert json.loads(cli_ok("bot", "show", "quartobot", "--json"))["disabled"] is True
    cli_ok("bot", "enable", "quartobot")
    cli_ok("bot", "remove", "quartobot", "--yes")
    result = runner.invoke(app, ["bot", "show", "quartobot"])
    assert result.exit_code != 0 and "no bot named quartobot" in result.output
    # A bot's name is a userid like any other: taken is taken.
    result = runner.invoke(app, ["bot", "add", "pbmbot1"])
    assert result.exit_code != 0
    result = runner.invoke(app, ["bot", "add", "weird", "--level", "7"])
    assert result.exit_code != 0 and "level 7" in result.output


def test_bot_show_writes_its_settings_in_words(cfg: Path) -> None:
    # It printed Python's values: "games []", "max_games None", "disabled False".
    cli_ok("bot", "add", "plainbot")
    rows = dict(line.split(None, 1) for line in cli_ok("bot", "show", "plainbot").splitlines()[2:])
    assert rows == {
        "userid": "plainbot",
        "games": "all",
        "level": "4",
        "engine": "builtin",
        "max_games": "no limit",
        "disabled": "no",
        "active": "0",
        "moves": "0",
        "failures": "0",
        "fallbacks": "0",
        "last_failure": "-",
        "last_failure_at": "-",
    }
    cli_ok("bot", "add", "quartobot", "--games", "quarto,quad", "--max-games", "3")
    cli_ok("bot", "disable", "quartobot")
    shown = cli_ok("bot", "show", "quartobot")
    assert "\ngames            quarto,quad\n" in shown
    assert "\nmax_games        3\n" in shown and "\ndisabled         yes\n" in shown


def test_a_bot_gets_no_password_and_is_removed_as_a_bot(cfg: Path) -> None:
    # `pbm user passwd pbmbot1` gave the bot a password, with which anyone could then
    # resign its boards by mail; `pbm user delete` left its bot row behind.
    cli_ok("bot", "add-builtin")
    refused = runner.invoke(app, ["user", "passwd", "pbmbot1", "--password", "hunter2"])
    assert refused.exit_code == 1
    assert refused.output == (
        "error: pbmbot1 is a computer player: a bot has no password (docs/bots.md)\n"
    )
    refused = runner.invoke(app, ["user", "delete", "pbmbot2"])
    assert refused.exit_code == 1
    assert refused.output == (
        "error: pbmbot2 is a computer player: remove it with pbm bot remove pbmbot2\n"
    )
    # `pbm user disable pbmbot3` stopped its challenges but not its moves, and `pbm bot
    # list` still said it was playing
    for verb in ("disable", "enable"):
        refused = runner.invoke(app, ["user", verb, "pbmbot3"])
        assert refused.exit_code == 1
        assert refused.output == (
            f"error: pbmbot3 is a computer player: use pbm bot {verb} pbmbot3\n"
        )
    # `pbm vacation pbmbot3 start` put the bot on vacation, like a person
    for args in (["start"], ["grant", "3"]):
        refused = runner.invoke(app, ["vacation", "pbmbot3", *args])
        assert refused.exit_code == 1
        assert refused.output == (
            "error: pbmbot3 is a computer player: it takes no vacation "
            "(pbm bot disable pbmbot3 stops it)\n"
        )
    assert "pbmbot3: not on vacation" in cli_ok("vacation", "pbmbot3", "status")
    cli_ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    cli_ok("game", "new", "quarto", "alice", "pbmbot1")
    ran = runner.invoke(
        app, ["run", "--from", "zed@x.example", "quarto resign 101 pbmbot1 hunter2"]
    )
    assert "decided not to play" not in ran.output
    assert json.loads(cli_ok("game", "show", "quarto", "101", "--json"))["status"] == "active"
    assert [b["userid"] for b in json.loads(cli_ok("bot", "list", "--json"))][:2] == [
        "pbmbot1",
        "pbmbot2",
    ]


def test_an_engine_command_with_a_relative_path_is_refused_with_the_absolute_one(
    cfg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    for command in ("python3 examples/random_engine.py", "./examples/random_engine.py"):
        result = runner.invoke(app, ["bot", "add", "randombot", "--engine", command])
        assert result.exit_code != 0
        assert "examples/random_engine.py is a path relative to this directory" in result.output
        assert f"write it as {ROOT / 'examples' / 'random_engine.py'}" in result.output
    absolute = f"python3 {ROOT / 'examples' / 'random_engine.py'} --seed 3"
    assert "randombot" in cli_ok("bot", "add", "randombot", "--engine", absolute)


def test_an_engine_program_that_is_not_there_is_refused(cfg: Path, tmp_path: Path) -> None:
    # It was added, and every move of the bot then failed over to the built-in engine.
    not_executable = tmp_path / "engine.txt"
    not_executable.write_text("not a program", encoding="utf-8")
    for command, problem in (
        ("/nonexistent/engine --fast", "/nonexistent/engine is no executable file"),
        (str(not_executable), f"{not_executable} is no executable file"),
        (
            "no-such-engine-program --fast",
            "there is no program no-such-engine-program in the engine's PATH "
            "(/usr/local/bin:/usr/bin:/bin): write its absolute path",
        ),
    ):
        result = runner.invoke(app, ["bot", "add", "ghostbot", "--engine", command])
        assert result.exit_code == 1
        assert result.output == f"error: engine command {command!r}: {problem}\n"
    assert json.loads(cli_ok("bot", "list", "--json")) == []


def test_jobs_run_plays_the_bots_moves(cfg: Path) -> None:
    cli_ok("bot", "add", "one", "--level", "1")
    cli_ok("bot", "add", "two", "--level", "1")
    cli_ok("game", "new", "quarto", "one", "two")
    done = json.loads(cli_ok("jobs", "run", "--json"))
    assert done["bot_moves"] >= 9  # a Quarto game lasts at least nine moves
    listed = json.loads(cli_ok("game", "list", "--json"))
    assert [(g["moves"], g["status"]) for g in listed] == [(done["bot_moves"], "finished")]
    assert json.loads(cli_ok("jobs", "run", "--json"))["bot_moves"] == 0

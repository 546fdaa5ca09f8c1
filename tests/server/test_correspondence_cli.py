"""`pbm jobs run`, `pbm ratings show|recompute`, `pbm game export|preview|import`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pbm.cli import app
from tests.server.conftest import cli_ok as ok

runner = CliRunner()


def _finished_game() -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    ok("run", "quarto challenge alice bob", "--as", "alice")
    ok("run", "quarto move 101 alice pw give sdqf", "--as", "alice")
    ok("run", "quarto move 101 bob pw a1 give tdqf", "--as", "bob")
    ok("run", "quarto move 101 bob pw resign", "--as", "bob")


def test_jobs_run_once(cfg: Path) -> None:
    _finished_game()
    # From cron every output is a mail: a line of zeros came every run. Nothing due,
    # nothing printed; the JSON still has every count.
    assert ok("jobs", "run") == ""
    assert json.loads(ok("jobs", "run", "--json"))["mail_texts_forgotten"] == 0
    assert json.loads(ok("jobs", "run", "--json"))["nags"] == 0


def test_jobs_run_prints_what_it_did_only(cfg: Path) -> None:
    ok("bot", "add", "one", "--level", "1")
    ok("bot", "add", "two", "--level", "1")
    ok("game", "new", "quarto", "one", "two")
    line = ok("jobs", "run")
    assert line.startswith("bot_moves=") and line.count("=") == 1 and len(line) <= 88
    assert ok("jobs", "run") == ""


def test_ratings_show_and_recompute(cfg: Path) -> None:
    _finished_game()
    shown = json.loads(ok("ratings", "show", "quarto", "--json"))
    assert [(r["userid"], r["games"], r["won"], r["lost"]) for r in shown] == [
        ("alice", 1, 1, 0),
        ("bob", 1, 0, 1),
    ]
    assert round(shown[0]["rating"]) == 1824
    assert ok("ratings", "recompute").strip() == "rated 1 game again; ratings unchanged"
    assert ok("ratings", "recompute", "quad").strip() == "rated 0 games again; ratings unchanged"
    assert json.loads(ok("ratings", "show", "quarto", "--json")) == shown


def test_export_preview_import(cfg: Path, tmp_path: Path) -> None:
    _finished_game()
    text = ok("game", "export", "quarto", "101")
    assert text.startswith("pbm game record 1\nGame: quarto\n")
    path = tmp_path / "101.txt"
    ok("game", "export", "quarto", "101", "--output", str(path))
    assert path.read_text() == text
    preview = ok("game", "preview", str(path))
    assert preview.startswith("quarto board 101: alice bob, 2 moves, finished")
    # bob resigned with the position at alice to move: the result, not her turn
    assert preview.endswith("\n\nbob resigns. Game won by alice.\n")
    assert "to move" not in preview and "To place" not in preview
    assert "imported Quarto Board 7" in ok("game", "import", str(path), "--board", "7")
    assert ok("game", "export", "quarto", "7") == text.replace("Board: 101", "Board: 7")
    again = runner.invoke(app, ["game", "import", str(path), "--board", "7"])
    assert again.exit_code == 1 and "exists already" in again.output
    path.write_text(text.replace("Moves:", "Moved:"))
    bad = runner.invoke(app, ["game", "preview", str(path)])
    assert bad.exit_code == 1 and "not a pbm game record" in bad.output


def test_vacation_by_the_administrator(cfg: Path) -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    # A new account starts with the documented allowance ([vacation] start_days, 7).
    assert ok("vacation", "alice") == "alice: not on vacation; 7.0 vacation days left\n"
    assert (
        ok("vacation", "alice", "grant", "5") == "alice: not on vacation; 12.0 vacation days left\n"
    )
    assert ok("vacation", "alice", "grant", "60").endswith("; 60.0 vacation days left\n")  # the cap
    assert ok("vacation", "alice", "start").startswith("alice: on vacation since ")
    assert runner.invoke(app, ["vacation", "alice", "later"]).exit_code == 2
    assert runner.invoke(app, ["vacation", "alice", "grant"]).exit_code == 2
    assert runner.invoke(app, ["vacation", "alice", "grant", "-3"]).exit_code == 2
    # "grant from 0 to 60 days, not 0" refused the 0 it named as allowed
    zero = runner.invoke(app, ["vacation", "alice", "grant", "0"])
    assert zero.exit_code == 2
    assert zero.output == "error: grant more than 0 and at most 60 days, not 0\n"
    assert runner.invoke(app, ["vacation", "alice", "stop", "3"]).exit_code == 2


def test_an_account_made_without_an_allowance_hears_when_days_come(cfg: Path) -> None:
    cfg.write_text(cfg.read_text() + "[vacation]\nstart_days = 0\n")
    ok("user", "add", "alice", "alice@x.example", "--password", "pw")
    refused = runner.invoke(app, ["vacation", "alice", "start"])
    assert refused.exit_code == 1
    text = " ".join(refused.output.split())
    assert "no vacation days yet" in text and "Days accrue at 30 a year" in text
    assert "left" not in text  # none were taken

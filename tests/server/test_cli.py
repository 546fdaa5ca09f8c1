"""The admin CLI through typer's CliRunner, on a database in a temporary directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbm.cli import app
from tests.server.conftest import cli_ok as ok
from tests.server.conftest import runner


def test_db_upgrade_and_backup(cfg: Path) -> None:
    # The newest revisions, whichever features have added migrations since.
    from alembic.script import ScriptDirectory

    from pbm.store.db import MIGRATIONS

    heads = ",".join(sorted(ScriptDirectory(str(MIGRATIONS)).get_heads()))
    assert f"-> {heads}" in ok("db", "upgrade")
    assert ok("db", "current").strip() == heads
    target = cfg.parent / "copy.sqlite3"
    assert "backed up" in ok("db", "backup", str(target))
    assert target.stat().st_size > 0


def test_users(cfg: Path) -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw")
    listed = json.loads(ok("user", "list", "--json"))
    assert [u["userid"] for u in listed] == ["alice", "bob"]
    assert "alice@x.example" in ok("user", "list")
    result = runner.invoke(app, ["user", "add", "alice", "a@x.example", "--password", "pw"])
    assert result.exit_code == 1 and "taken" in result.output
    ok("user", "passwd", "alice", "--password", "new")
    ok("user", "disable", "bob")
    assert json.loads(ok("user", "show", "bob", "--json"))["disabled"] is True
    ok("user", "enable", "bob")
    ok("user", "delete", "bob")
    assert runner.invoke(app, ["user", "show", "nobody"]).exit_code == 1


def test_run_games_and_outbox(cfg: Path) -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw")
    out = ok("run", "quarto challenge alice bob", "--as", "alice")
    assert "Subject: New Quarto Board 101 alice" in out
    listed = json.loads(ok("game", "list", "--json"))
    assert listed[0]["board"] == "101" and listed[0]["players"] == ["alice", "bob"]
    dry = ok("run", "quarto move 101 alice pw give sdqf", "--as", "alice", "--dry-run")
    assert "It is bob's turn." in dry
    assert json.loads(ok("game", "show", "quarto", "101", "--json"))["moves"] == []
    ok("run", "quarto move 101 alice pw give sdqf", "--as", "alice")
    assert json.loads(ok("game", "show", "quarto", "101", "--json"))["moves"] == ["give SDQF"]
    bad = runner.invoke(app, ["run", "quarto move 101 alice wrong x", "--as", "alice"])
    assert bad.exit_code == 1 and "Invalid password" in bad.output
    queued = json.loads(ok("mail", "outbox", "--json"))
    assert {tuple(m["recipients"]) for m in queued} >= {("alice@x.example",), ("bob@x.example",)}
    assert all(m["subject"] and m["body"] for m in queued)
    assert "1 boards checked, 0 differ" in ok("game", "replay")
    ok("game", "undo", "quarto", "101")
    assert json.loads(ok("game", "show", "quarto", "101", "--json"))["moves"] == []
    ok("game", "adjudicate", "quarto", "101", "bob")
    shown = json.loads(ok("game", "show", "quarto", "101", "--json"))
    assert shown["status"] == "finished" and shown["winner"] == 1
    ok("game", "new", "quarto", "bob", "alice")
    ok("game", "abort", "quarto", "102")
    assert json.loads(ok("game", "show", "quarto", "102", "--json"))["status"] == "removed"


def test_mail_process_failed_and_retry(cfg: Path) -> None:
    raw = (
        b"From: carol@x.example\r\nTo: pbm@example.org\r\nSubject: help\r\n"
        b"Message-ID: <m1@x.example>\r\n\r\nhi\r\n"
    )
    assert ok("mail", "process", input=raw).strip() == "done"
    assert ok("mail", "process", input=raw).strip() == "done"  # stored once, run once
    assert len(json.loads(ok("mail", "outbox", "--json"))) == 1
    assert json.loads(ok("mail", "failed", "--json")) == []
    assert "no failed messages" in ok("mail", "retry")


def test_mail_process_store_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    path = tmp_path / "bad.toml"
    path.write_text(f'[store]\ndatabase_url = "sqlite:///{blocker}/db/pbm.sqlite3"\n')
    monkeypatch.setenv("PBM_CONFIG", str(path))
    result = runner.invoke(app, ["mail", "process"], input=b"Subject: help\r\n\r\nhi\r\n")
    assert result.exit_code == 75


def test_bad_arguments_exit_2(cfg: Path) -> None:
    assert runner.invoke(app, ["game", "show"]).exit_code == 2
    assert runner.invoke(app, ["game", "show", "nosuchgame", "101"]).exit_code == 1

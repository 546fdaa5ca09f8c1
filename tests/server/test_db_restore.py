"""`pbm db restore BACKUP` (docs/mail-setup.md, "Backups"): a backup is checked, upgraded
when older, and put in the SQLite database's place; the database there is kept under a
new name with its write-ahead log; refused under a running `pbm serve`, and asked first."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from pbm.cli import app
from pbm.store.database_file import DatabaseFile
from pbm.store.engine import make_engine
from pbm.store.schema import alembic_config, schema_heads
from tests.server.conftest import cli_ok as ok
from tests.server.conftest import runner

pytestmark = pytest.mark.sqlite


def _add(name: str) -> None:
    ok("user", "add", name, f"{name}@x.example", "--password", "pw", "--confirmed")


def _userids(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("SELECT userid FROM users ORDER BY userid")]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def live(cfg: Path) -> Path:
    """The configured database, alice in it."""
    _add("alice")
    return cfg.parent / "pbm.sqlite3"


@pytest.fixture
def backup(live: Path) -> Path:
    """A backup with alice alone; bob signed up after it."""
    path = live.parent / "backups" / "b.sqlite3"
    ok("db", "backup", str(path))
    _add("bob")
    return path


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if "restore" in p.name)


def test_restore_puts_the_backup_back_and_keeps_the_database(live: Path, backup: Path) -> None:
    before = _digest(backup)
    live.chmod(0o640)
    # A killed daemon's write-ahead log: it must go aside with its database.
    killed = (
        "import os, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1])\n"
        "conn.execute('PRAGMA journal_mode=WAL')\n"
        "conn.execute(\"UPDATE users SET disabled = 1 WHERE userid = 'bob'\")\n"
        "conn.commit()\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", killed, str(live)], check=True)
    assert Path(f"{live}-wal").stat().st_size > 0
    done = ok("db", "restore", str(backup), "--yes")
    heads = ",".join(sorted(schema_heads()))
    [kept_name] = re.findall(r"kept as .*/(pbm\.sqlite3\.before-restore-[\d-]+)\n", done)
    assert done.startswith(f"restored {backup} to {live} (1 accounts, 0 boards, schema {heads})\n")
    assert "alice" in ok("user", "list") and "bob" not in ok("user", "list")
    kept = live.parent / kept_name
    beside = ["pbm.sqlite3.created", "pbm.sqlite3.serve-lock"]
    kept_files = [kept_name, f"{kept_name}-wal", f"{kept_name}-shm"]
    assert sorted(p.name for p in live.parent.glob("pbm.sqlite3*")) == sorted(
        ["pbm.sqlite3", *beside, *kept_files]
    )
    with closing(sqlite3.connect(kept)) as conn:  # whole, with what its log held
        assert conn.execute("SELECT userid, disabled FROM users").fetchall() == [
            ("alice", 0),
            ("bob", 1),
        ]
    assert live.stat().st_mode & 0o777 == 0o640  # the database's, not the backup's
    assert _digest(backup) == before  # only read
    assert _leftovers(backup.parent) == []


def test_restore_asks_first(live: Path, backup: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = runner.invoke(app, ["db", "restore", str(backup)])
    assert (script.exit_code, script.output) == (
        2,
        f"error: restoring {backup} over {live} cannot be undone: run it again with --yes\n",
    )
    monkeypatch.setattr("pbm.cli.questions.on_terminal", lambda: True)
    no = runner.invoke(app, ["db", "restore", str(backup)], input="\n")
    heads = ",".join(sorted(schema_heads()))
    assert (no.exit_code, no.output) == (
        1,
        f"{backup} (1 accounts, 0 boards, schema {heads}) takes the place of {live}; the "
        "database there is kept as pbm.sqlite3.before-restore-DATE-TIME.\n"
        f"Restore {backup}? [y/N]: \nerror: nothing restored\n",
    )
    assert _userids(live) == ["alice", "bob"]
    assert _leftovers(live.parent) == []
    yes = runner.invoke(app, ["db", "restore", str(backup)], input="y\n")
    assert yes.exit_code == 0, yes.output
    assert _userids(live) == ["alice"]


def test_restore_refuses_under_a_running_daemon(live: Path, backup: Path) -> None:
    daemon = DatabaseFile(live.absolute())
    daemon.hold_for_serve()  # what `pbm serve` holds while it runs
    try:
        refused = runner.invoke(app, ["db", "restore", str(backup), "--yes"])
    finally:
        daemon.close()
    assert refused.exit_code == 75
    assert refused.output.startswith(
        f"error: the database file {live.absolute()} is in use by another pbm serve (pid "
    )
    assert refused.output.endswith("; stop it first (systemctl stop pbm), then restore\n")
    assert _userids(live) == ["alice", "bob"]


def test_restore_upgrades_an_older_backup(live: Path) -> None:
    from alembic import command

    old = live.parent / "old.sqlite3"
    engine = make_engine(f"sqlite:///{old}")
    command.upgrade(alembic_config(engine), "0003")
    engine.dispose()
    done = ok("db", "restore", str(old), "--yes")
    assert ", upgraded from 0003)\n" in done
    assert ok("db", "current").strip() == ",".join(sorted(schema_heads()))
    assert _userids(live) == []


def test_restore_onto_a_lost_database(live: Path, backup: Path) -> None:
    for name in ("pbm.sqlite3", "pbm.sqlite3-wal", "pbm.sqlite3-shm"):
        (live.parent / name).unlink(missing_ok=True)
    done = ok("db", "restore", str(backup), "--yes")
    assert done.startswith(f"restored {backup} to {live} (") and "kept" not in done
    assert _userids(live) == ["alice"]


def test_restore_refuses_what_is_no_pbm_database(live: Path, backup: Path) -> None:
    text = live.parent / "notes.txt"
    text.write_text("not a database\n" * 100, encoding="utf-8")
    empty = live.parent / "empty.sqlite3"
    sqlite3.connect(empty).close()
    with closing(sqlite3.connect(empty)) as conn:
        conn.execute("CREATE TABLE t (x)")
    newer = live.parent / "newer.sqlite3"
    newer.write_bytes(backup.read_bytes())
    with closing(sqlite3.connect(newer)) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
        conn.commit()
    damaged = live.parent / "damaged.sqlite3"
    data = bytearray(backup.read_bytes())
    page = 4096
    data[3 * page : 6 * page] = b"\xff" * (3 * page)  # index and table pages garbled
    damaged.write_bytes(bytes(data))
    for path, error in (
        (text, f"error: nothing restored: {text} cannot be read as a SQLite database"),
        (empty, "error: nothing restored: the backup holds no pbm schema"),
        (newer, "error: nothing restored: the database schema (9999) is newer than this"),
        (damaged, "error: nothing restored: "),
    ):
        refused = runner.invoke(app, ["db", "restore", str(path), "--yes"])
        assert refused.exit_code == 1, refused.output
        assert refused.output.startswith(error), refused.output
        assert _userids(live) == ["alice", "bob"]
        assert _leftovers(live.parent) == []
    for path, error in (
        (live, f"error: {live} is the database itself: name a backup file\n"),
        (live.parent / "nothing", f"error: no backup file at {live.parent / 'nothing'}\n"),
    ):
        refused = runner.invoke(app, ["db", "restore", str(path), "--yes"])
        assert (refused.exit_code, refused.output) == (2, error)


def test_restore_is_for_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "pbm.toml"
    path.write_text('[store]\ndatabase_url = "postgresql+psycopg://pbm@db.example.org/pbm"\n')
    monkeypatch.setenv("PBM_CONFIG", str(path))
    backup = tmp_path / "b.sqlite3"
    backup.write_bytes(b"")
    refused = runner.invoke(app, ["db", "restore", str(backup), "--yes"])
    assert (refused.exit_code, refused.output) == (
        1,
        "error: restore puts back SQLite backups; for PostgreSQL use pg_restore or psql\n",
    )

"""`pbm db restore BACKUP` (docs/mail-setup.md, "Backups"): a backup is checked, upgraded
when older, and put in the SQLite database's place; the database there is kept under a
new name with its write-ahead log; refused under a running `pbm serve`, and asked first."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from pbm.cli import app
from pbm.store.database_file import DatabaseFile
from pbm.store.engine import make_engine
from pbm.store.restore_lock import held_for_restore, restore_lock_path
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
    """What a restore left beside the database (its lock file stays, as the serve lock)."""
    found = (p.name for p in directory.iterdir() if "restore" in p.name)
    return sorted(name for name in found if not name.endswith(".restore-lock"))


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
    beside = ["pbm.sqlite3.created", "pbm.sqlite3.restore-lock", "pbm.sqlite3.serve-lock"]
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


PIPED = (
    b"From: carol@x.example\r\nTo: pbm@example.org\r\nSubject: help\r\n"
    b"Message-ID: <piped.1@x.example>\r\n\r\nhi\r\n"
)
# A process that holds what its arguments name until a line comes on its stdin.
_HOLDER = (
    "import fcntl, os, sqlite3, sys\n"
    "what, path = sys.argv[1:]\n"
    "if what == 'write':  # SQLite's write lock, as a long transaction holds it\n"
    "    conn = sqlite3.connect(path)\n"
    "    conn.execute('BEGIN IMMEDIATE')\n"
    "else:  # the restore lock, flock'ed as a restore (ex) or a pipe (sh) does\n"
    "    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o600)\n"
    "    fcntl.flock(fd, fcntl.LOCK_EX if what == 'ex' else fcntl.LOCK_SH)\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"
)


@contextmanager
def _held(what: str, path: Path) -> Iterator[None]:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, what, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.stdin.close()  # its readline returns: it exits, and its locks go
        assert holder.wait(timeout=30) == 0
        holder.stdout.close()


def _pbm(*args: str, **popen: object) -> subprocess.Popen[str]:
    return subprocess.Popen(  # type: ignore[call-overload]
        [sys.executable, "-m", "pbm", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def _pipe(raw: bytes = PIPED) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pbm", "mail", "process"],
        input=raw,
        capture_output=True,
        timeout=120,
    )


def _locked(path: Path) -> bool:
    """Whether some process holds the flock on `path` now."""
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _message_ids(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("SELECT message_id FROM inbound_messages")]


def _busy_timeout(cfg: Path, seconds: float) -> None:
    text = cfg.read_text(encoding="utf-8")
    cfg.write_text(text.replace("[security]", f"busy_timeout_seconds = {seconds}\n[security]"))


def test_a_pipe_intake_waits_while_a_restore_runs(live: Path) -> None:
    """A restore holds the lock exclusive: the pipe exits 75 (the MTA tries again)
    without opening the database, and stores the message once the restore is done."""
    with _held("ex", restore_lock_path(live.absolute())):
        refused = _pipe()
    assert refused.returncode == 75
    assert refused.stderr.decode() == (
        f"error: the database file {live.absolute()} is being restored from a backup (pbm db "
        "restore); the message waits until it is done\n"
    )
    assert _message_ids(live) == []
    stored = _pipe()
    assert (stored.returncode, stored.stdout) == (0, b"done\n"), stored.stderr
    assert _message_ids(live) == ["<piped.1@x.example>"]


def test_a_restore_waits_for_a_pipe_intake_in_its_transaction(
    cfg: Path, live: Path, backup: Path
) -> None:
    """A pipe intake waiting for SQLite's write lock holds the restore lock shared: the
    restore waits for it, and the message goes into the database the restore sets aside,
    never into the restored one."""
    _busy_timeout(cfg, 60)
    lock = restore_lock_path(live.absolute())
    message = live.parent / "message.eml"
    message.write_bytes(PIPED)
    with _held("write", live), message.open("rb") as stdin:
        pipe = _pbm("mail", "process", stdin=stdin)
        deadline = time.monotonic() + 60
        while not _locked(lock):
            assert pipe.poll() is None and time.monotonic() < deadline, "no lock taken"
            time.sleep(0.05)
        restore = _pbm("db", "restore", str(backup), "--yes")
        time.sleep(3)
        assert restore.poll() is None  # waiting for the pipe
        assert pipe.poll() is None  # waiting for the write lock
        assert _userids(live) == ["alice", "bob"]
    assert pipe.communicate(timeout=60) == ("done\n", "")
    done, error = restore.communicate(timeout=60)
    assert restore.returncode == 0, error
    assert done.startswith(f"restored {backup} to {live.absolute()} (1 accounts")
    assert _userids(live) == ["alice"]
    assert _message_ids(live) == []
    [kept] = live.parent.glob("pbm.sqlite3.before-restore-*[0-9]")
    assert _message_ids(kept) == ["<piped.1@x.example>"]


def test_a_restore_gives_up_on_a_pipe_that_goes_on_writing(
    cfg: Path, live: Path, backup: Path
) -> None:
    _busy_timeout(cfg, 0.5)
    with _held("sh", restore_lock_path(live.absolute())):
        refused = runner.invoke(app, ["db", "restore", str(backup), "--yes"])
    assert (refused.exit_code, refused.output) == (
        75,
        "error: nothing restored: pipe intakes (pbm mail process) are still writing into "
        f"the database file {live.absolute()} after 0.5 s; try again\n",
    )
    assert _userids(live) == ["alice", "bob"]
    assert _leftovers(live.parent) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_lock_files_made_by_root_belong_to_the_databases_owner(tmp_path: Path) -> None:
    """`pbm db restore` run as root makes the lock files when none is there yet: owned
    by root (mode 0600) they would keep the daemon and the pipe, run as the database's
    owner, from opening them after."""
    live = tmp_path / "pbm.sqlite3"
    with closing(sqlite3.connect(live)):
        pass
    owner = 65534  # nobody
    os.chown(tmp_path, owner, owner)
    os.chown(live, owner, owner)
    watch = DatabaseFile(live)
    watch.hold_for_serve()
    try:
        with held_for_restore(live, wait_seconds=1):
            pass
    finally:
        watch.close()
    for lock in (watch.serve_lock_path, restore_lock_path(live)):
        assert lock.stat().st_uid == owner, lock
        assert lock.stat().st_mode & 0o777 == 0o600, lock

"""A long-running process keeps to the SQLite file it started with: deleted or replaced
under it, the next store is refused (the listeners answer 451), nothing is written into
a fresh empty file, one ERROR line is logged per incident, and a pbm database back at
the path (restored from a backup) is used again."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.errors import StoreUnavailable
from pbm.mailstore import DbInbox
from pbm.store.database_file import DatabaseFile
from pbm.store.engine import make_engine
from pbm.store.schema import ensure_schema
from tests.server.conftest import SERVER, START


@dataclass
class Watched:
    path: Path
    watch: DatabaseFile
    inbox: DbInbox
    count: int = 0

    def store(self) -> None:
        self.count += 1
        raw = (
            f"From: p{self.count}@x.example\r\nSubject: help\r\n"
            f"Message-ID: <m{self.count}@x.example>\r\n\r\nhi\r\n"
        ).encode()
        self.inbox.store_now(raw, "lmtp")

    def refused(self) -> StoreUnavailable:
        with pytest.raises(StoreUnavailable) as caught:
            self.store()
        return caught.value

    def message_ids(self) -> list[str]:
        with closing(sqlite3.connect(self.path)) as conn:
            rows = conn.execute("SELECT message_id FROM inbound_messages ORDER BY id")
            return [r[0] for r in rows]


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[Watched]:
    """What the daemon does at start: the schema made, then the file watched."""
    path = tmp_path / "var" / "pbm.sqlite3"
    url = f"sqlite:///{path}"
    watch = DatabaseFile.of(url)
    assert watch is not None
    engine = make_engine(url, watch=watch)
    ensure_schema(engine, create=True)
    watch.arm(engine)
    config = Config(data_dir=tmp_path, database_url=url, server_address=SERVER)
    inbox = DbInbox(engine, FrozenClock(START), config, watch=watch)
    yield Watched(path, watch, inbox)
    engine.dispose()
    watch.close()


def backup(path: Path, target: Path) -> None:
    """What `pbm db backup` does: SQLite's online backup, one consistent file."""
    with closing(sqlite3.connect(path)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_deleted_file_refuses_until_a_backup_is_back(
    watched: Watched, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watched.store()
    saved = tmp_path / "backup.sqlite3"
    backup(watched.path, saved)
    watched.store()  # acknowledged before the deletion: it goes with the file
    caplog.set_level(logging.INFO)
    watched.path.unlink()

    refusals = [watched.refused() for _ in range(6)]
    assert all("is gone" in str(r) for r in refusals)
    assert not watched.path.exists()  # never created afresh
    assert watched.watch.incident == "missing"
    [line] = errors(caplog)  # once per incident, not per message
    assert line.startswith("event=database_file_missing")
    # processing waits too, and touches nothing
    result = watched.inbox.process_some(threading.Event())
    assert result.processed == 0 and result.unavailable is not None

    os.replace(saved, watched.path)  # the operator restores the backup
    watched.store()
    assert watched.message_ids() == ["<m1@x.example>", "<m9@x.example>"]
    assert watched.watch.incident is None
    assert any("event=database_file_adopted" in r.getMessage() for r in caplog.records)
    # the deleted file's write-ahead log was set aside, not replayed into the backup
    assert list(watched.path.parent.glob("pbm.sqlite3-wal.orphan-*"))
    with closing(sqlite3.connect(watched.path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert len(errors(caplog)) == 1


def test_an_empty_file_in_its_place_is_never_written(
    watched: Watched, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watched.store()
    saved = tmp_path / "backup.sqlite3"
    backup(watched.path, saved)
    caplog.set_level(logging.INFO)
    watched.path.unlink()
    watched.path.touch()  # what SQLite itself would have made of the name

    for _ in range(3):
        assert "not a pbm database" in str(watched.refused())
    assert watched.path.stat().st_size == 0
    [line] = errors(caplog)
    assert line.startswith("event=database_file_replaced")

    os.replace(saved, watched.path)
    watched.store()
    assert watched.message_ids() == ["<m1@x.example>", "<m5@x.example>"]


def test_a_file_replaced_by_another_pbm_database_is_used_and_logged(
    watched: Watched, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watched.store()
    copy = tmp_path / "copy.sqlite3"
    backup(watched.path, copy)
    watched.store()
    caplog.set_level(logging.INFO)
    os.replace(copy, watched.path)  # a restore with mv while the daemon runs

    watched.store()
    assert watched.message_ids() == ["<m1@x.example>", "<m3@x.example>"]
    [line] = errors(caplog)
    assert line.startswith("event=database_file_replaced")
    watched.store()
    assert len(errors(caplog)) == 1


def test_a_replacement_at_another_schema_is_refused(watched: Watched, tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite3"
    backup(watched.path, other)
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
        conn.commit()
    os.replace(other, watched.path)
    assert "schema 0001" in str(watched.refused())


def test_a_fresh_database_made_in_its_place_is_refused(
    watched: Watched, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watched.store()
    saved = tmp_path / "backup.sqlite3"
    backup(watched.path, saved)
    caplog.set_level(logging.INFO)
    watched.path.unlink()
    assert "is gone" in str(watched.refused())
    # `pbm db init` run by mistake makes an empty database there
    fresh = make_engine(f"sqlite:///{watched.path}")
    ensure_schema(fresh, create=True)
    fresh.dispose()
    assert "another database" in str(watched.refused())
    assert watched.message_ids() == []
    os.replace(saved, watched.path)
    watched.store()
    assert watched.message_ids() == ["<m1@x.example>", "<m4@x.example>"]
    assert [line.split()[0] for line in errors(caplog)] == [
        "event=database_file_missing",
        "event=database_file_replaced",
    ]


def test_the_pages_read_the_file_a_restore_put_at_the_path(tmp_path: Path) -> None:
    # The pages' pooled connections kept the file they had opened: after a backup was
    # moved into place they showed the old database, and with the file deleted /healthz
    # still said ok.
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import text

    from pbm.store.readonly import make_read_engine

    live = tmp_path / "pbm.sqlite3"

    def write(path: Path, value: str) -> None:
        with closing(sqlite3.connect(path)) as conn:
            conn.execute("CREATE TABLE t (v TEXT)")
            conn.execute("INSERT INTO t VALUES (?)", (value,))
            conn.commit()

    def read() -> str:
        with engine.connect() as conn:
            return str(conn.execute(text("SELECT v FROM t")).scalar_one())

    write(live, "before")
    engine = make_read_engine(f"sqlite:///{live}")
    try:
        assert read() == "before"
        write(tmp_path / "restored.tmp", "restored")
        os.replace(tmp_path / "restored.tmp", live)  # a restore with mv
        assert read() == "restored"
        live.unlink()
        with pytest.raises(sa_exc.OperationalError):
            read()
    finally:
        engine.dispose()

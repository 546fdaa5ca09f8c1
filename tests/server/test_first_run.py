"""First run and operational errors at the command line: only `pbm db init` makes a
database (every other command names it, the pipe exits 75); on SQLite any command
upgrades an old schema, elsewhere a one-line error names `pbm db upgrade`; no command
prints a traceback for an operational error, and each exits with its sysexits code."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from pbm.cli import app
from pbm.config import Config
from pbm.daemon import Daemon
from pbm.errors import StoreUnavailable
from pbm.store.engine import creation_marker, make_engine
from pbm.store.schema import alembic_config, schema_heads, stored_heads
from tests.server.conftest import small_tmpfs

runner = CliRunner()
RAW = (
    b"From: carol@x.example\r\nTo: pbm@example.org\r\nSubject: help\r\n"
    b"Message-ID: <first.1@x.example>\r\n\r\nhi\r\n"
)


def configure(
    directory: Path,
    monkeypatch: pytest.MonkeyPatch,
    url: str | None = None,
    busy_timeout: float | None = None,
) -> Path:
    """A configuration naming only the data directory (and `url` and the busy timeout in
    seconds, if given)."""
    path = directory / "pbm.toml"
    store = f'[store]\ndatabase_url = "{url}"\n' if url else "[store]\n"
    if busy_timeout is not None:
        store += f"busy_timeout_seconds = {busy_timeout}\n"
    path.write_text(
        f'[server]\naddress = "pbm@example.org"\ndata_dir = "{directory / "var"}"\n'
        f"{store}[security]\npassword_cost = 4\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PBM_CONFIG", str(path))
    return path


def heads_of(path: Path) -> frozenset[str]:
    engine = make_engine(f"sqlite:///{path}")
    try:
        return stored_heads(engine)
    finally:
        engine.dispose()


def one_error_line(result: object) -> str:
    stderr = result.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in result.output  # type: ignore[attr-defined]
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


COMMANDS = [
    ["user", "list"],
    ["game", "list"],
    ["mail", "failed"],
    ["mail", "outbox"],
    ["ratings", "show", "quarto"],
    ["jobs", "run"],
    ["run", "help", "--from", "nobody@x.example"],
    ["db", "upgrade"],
    ["db", "current"],
]


@pytest.mark.parametrize("command", COMMANDS)
def test_no_command_but_db_init_makes_a_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    configure(tmp_path, monkeypatch)
    database = tmp_path / "var" / "pbm.sqlite3"
    result = runner.invoke(app, command)
    assert result.exit_code == 69, result.output
    assert one_error_line(result) == (
        f"error: the database file {database} does not exist: create it with `pbm db init`"
    )
    assert not database.exists() and not database.parent.exists()


def test_db_init_makes_the_database_and_its_marker(ready: Path) -> None:
    assert heads_of(ready) == schema_heads()
    assert creation_marker(ready).exists()
    listed = runner.invoke(app, ["user", "list"])
    assert listed.exit_code == 0 and listed.stdout.startswith("userid")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configured data directory with no database yet; returns the database's path."""
    configure(tmp_path, monkeypatch)
    database = tmp_path / "var" / "pbm.sqlite3"
    database.parent.mkdir()
    return database


def test_a_file_without_the_schema_is_not_filled_in(data_dir: Path) -> None:
    database = data_dir
    database.touch()
    listed = runner.invoke(app, ["user", "list"])
    assert listed.exit_code == 78
    assert one_error_line(listed) == (
        f"error: the database {database} holds no pbm schema: create it with `pbm db init`"
    )
    with closing(sqlite3.connect(database)) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)


def test_mail_status_looks_without_creating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(tmp_path, monkeypatch)
    result = runner.invoke(app, ["mail", "status"])
    assert result.exit_code == 3  # nothing runs
    assert "database: unavailable: no database file at" in result.stdout
    assert not (tmp_path / "var" / "pbm.sqlite3").exists()


def test_a_piped_message_waits_for_a_missing_database(ready: Path) -> None:
    assert runner.invoke(app, ["mail", "process"], input=RAW).stdout == "done\n"
    ready.unlink()
    result = runner.invoke(app, ["mail", "process"], input=RAW.replace(b"first.1", b"first.2"))
    assert result.exit_code == 75  # the MTA keeps the message
    assert "does not exist: create it with `pbm db init`" in one_error_line(result)
    assert not ready.exists()


def test_an_old_schema_is_upgraded_by_any_command(data_dir: Path) -> None:
    from alembic import command

    database = data_dir
    engine = make_engine(f"sqlite:///{database}")
    command.upgrade(alembic_config(engine), "0003")
    engine.dispose()
    assert heads_of(database) == {"0003"}
    result = runner.invoke(app, ["user", "list"])
    assert result.exit_code == 0, result.output
    assert heads_of(database) == schema_heads()


@pytest.mark.parametrize(
    "command", [["user", "list"], ["db", "upgrade"], ["db", "init"], ["mail", "process"]]
)
def test_a_schema_newer_than_this_pbm_is_named(ready: Path, command: list[str]) -> None:
    """After rolling the code back: every command, the ones that migrate too, names the
    newer schema in one line and touches nothing (the pipe's exit makes the MTA wait)."""
    with sqlite3.connect(ready) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.close()
    result = runner.invoke(app, command, input=RAW)
    assert result.exit_code == (75 if command == ["mail", "process"] else 78)
    assert "error: the database schema (9999) is newer than this pbm knows" in (
        one_error_line(result)
    )
    assert heads_of(ready) == {"9999"}


# --- operational errors: one line, a sysexits code -------------------------------------


@pytest.fixture
def ready(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configured, initialised SQLite database; returns its file."""
    configure(tmp_path, monkeypatch)
    assert runner.invoke(app, ["db", "init"]).exit_code == 0
    return tmp_path / "var" / "pbm.sqlite3"


def test_a_locked_database(ready: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    configure(tmp_path, monkeypatch, busy_timeout=0.1)  # a held lock fails fast
    holder = sqlite3.connect(ready, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        listed = runner.invoke(app, ["user", "list"])
        piped = runner.invoke(app, ["mail", "process"], input=RAW)
        debug = runner.invoke(app, ["--debug", "user", "list"])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert listed.exit_code == 75
    assert one_error_line(listed) == (
        "error: the database cannot be used (busy): database is locked"
    )
    assert piped.exit_code == 75
    assert "database is locked" in one_error_line(piped)
    # --debug: the exception itself, for its traceback
    assert isinstance(debug.exception, sqlite3.OperationalError)
    assert runner.invoke(app, ["mail", "process"], input=RAW).exit_code == 0


def test_a_file_that_is_no_database(ready: Path) -> None:
    ready.write_bytes(b"garbage " * 1000)
    for name in ("-wal", "-shm"):
        ready.with_name(ready.name + name).unlink(missing_ok=True)
    listed = runner.invoke(app, ["game", "list"])
    assert listed.exit_code == 69
    assert "file is not a database" in one_error_line(listed)
    piped = runner.invoke(app, ["mail", "process"], input=RAW)
    assert piped.exit_code == 75 and "file is not a database" in one_error_line(piped)


def test_a_bad_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[store\n", encoding="utf-8")
    monkeypatch.setenv("PBM_CONFIG", str(bad))
    listed = runner.invoke(app, ["user", "list"])
    assert listed.exit_code == 78
    assert one_error_line(listed).startswith("error: cannot read configuration")
    piped = runner.invoke(app, ["mail", "process"], input=RAW)
    assert piped.exit_code == 75  # the MTA keeps the message while the config is fixed
    assert one_error_line(piped).startswith("error: cannot read configuration")


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A small tmpfs (root only), remounted read-only by the test."""
    with small_tmpfs(tmp_path / "ro", "8m") as mount:
        yield mount


def test_a_read_only_file_system(read_only_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    configure(read_only_dir, monkeypatch)
    assert runner.invoke(app, ["db", "init"]).exit_code == 0
    remount = ["mount", "-o", "remount,ro", str(read_only_dir)]
    subprocess.run(remount, check=True)
    added = runner.invoke(app, ["user", "add", "carol", "carol@x.example", "--password", "pw"])
    assert added.exit_code in (69, 77), added.output
    one_error_line(added)
    piped = runner.invoke(app, ["mail", "process"], input=RAW)
    assert piped.exit_code == 75
    one_error_line(piped)


def test_postgres_without_the_schema_names_db_init(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: str
) -> None:
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    name = f"pbm_empty_{os.getpid()}"
    with admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        conn.execute(text(f"CREATE DATABASE {name}"))
    url = make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    try:
        configure(tmp_path, monkeypatch, url)
        listed = runner.invoke(app, ["user", "list"])
        assert listed.exit_code == 78
        assert one_error_line(listed).endswith("holds no pbm schema: create it with `pbm db init`")
        piped = runner.invoke(app, ["mail", "process"], input=RAW)
        assert piped.exit_code == 75 and "pbm db init" in one_error_line(piped)
        assert runner.invoke(app, ["db", "init"]).exit_code == 0
        assert runner.invoke(app, ["user", "list"]).exit_code == 0
        assert runner.invoke(app, ["mail", "process"], input=RAW).stdout == "done\n"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


def test_the_migration_heads_are_read_right() -> None:
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(alembic_config(make_engine("sqlite://")))
    assert schema_heads() == frozenset(scripts.get_heads())


# --- pbm serve: a first run makes the database, a later one never makes it again ------


def test_a_first_serve_makes_the_database_and_a_later_one_does_not(tmp_path: Path) -> None:
    config = Config(data_dir=tmp_path / "var", smtp_listen=None)
    database = tmp_path / "var" / "pbm.sqlite3"
    first = Daemon(config)
    try:
        first.prepare_store()
    finally:
        first.engine.dispose()
        assert first.database_file is not None
        first.database_file.close()
    assert heads_of(database) == schema_heads() and creation_marker(database).exists()
    database.unlink()
    again = Daemon(config)
    try:
        with pytest.raises(StoreUnavailable, match=r"does not exist: create it with `pbm db init`"):
            again.prepare_store()
    finally:
        again.engine.dispose()
        assert again.database_file is not None
        again.database_file.close()
    assert not database.exists()


def test_serve_on_a_lost_database_ends_with_one_line(tmp_path: Path) -> None:
    config = tmp_path / "pbm.toml"
    config.write_text(
        f'[server]\ndata_dir = "{tmp_path / "var"}"\n[mail.listen]\nsmtp = ""\n', encoding="utf-8"
    )
    database = tmp_path / "var" / "pbm.sqlite3"
    database.parent.mkdir()
    creation_marker(database).write_text("made before\n", encoding="utf-8")
    served = subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(config), "serve"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert served.returncode == 69, served.stderr
    assert served.stderr.strip().splitlines()[-1] == (
        f"error: the database file {database} does not exist: create it with `pbm db init`"
    )
    assert not database.exists()


def test_a_data_directory_that_cannot_be_made_is_a_store_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OS error on the database's own directory (not any OS error) stops the command
    with one line naming the path; the pipe's sender keeps the mail."""
    (tmp_path / "afile").write_text("not a directory\n", encoding="utf-8")
    config = tmp_path / "pbm.toml"
    config.write_text(
        f'[server]\naddress = "pbm@example.org"\ndata_dir = "{tmp_path / "afile" / "var"}"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("PBM_CONFIG", str(config))
    made = runner.invoke(app, ["db", "init"])
    assert made.exit_code == 69
    # not the OSError alone, which said nothing of what pbm was making the directory for
    database = tmp_path / "afile" / "var" / "pbm.sqlite3"
    assert one_error_line(made) == (
        f"error: cannot make the directory of the database {database}: "
        f"[Errno 20] Not a directory: '{database.parent}'"
    )
    assert isinstance(made.exception, SystemExit)
    piped = runner.invoke(app, ["mail", "process"], input=RAW)
    assert piped.exit_code == 75 and "create it with `pbm db init`" in one_error_line(piped)

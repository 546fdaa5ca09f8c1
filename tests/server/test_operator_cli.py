"""An operator's first hour at the command line: a closed output pipe ends a command
quietly, `pbm mail send` says whether `pbm serve` runs when nothing answers, and the
server's log opens with pbm's own lines, not alembic's."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from pbm.cli import app

runner = CliRunner()


def write_config(directory: Path, smtp: str = "") -> Path:
    path = directory / "pbm.toml"
    path.write_text(
        f'[server]\ndata_dir = "{directory / "var"}"\n[mail.listen]\nsmtp = "{smtp}"\n',
        encoding="utf-8",
    )
    return path


def pbm(
    config: Path, *args: str, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(config), *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    "command", [["mail", "status"], ["user", "list"], ["--help"], ["user", "--help"]]
)
def test_a_closed_pipe_ends_quietly(tmp_path: Path, command: list[str]) -> None:
    config = write_config(tmp_path)
    assert pbm(config, "db", "init").returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head -3` that has read its lines
    try:
        done = pbm(config, *command, stdout=write_end)
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 0


def test_send_to_a_silent_port_says_that_serve_is_not_running(tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path, f"127.0.0.1:{port}")
    sent = pbm(config, "mail", "send", "--from", "alice@example.org", "help", "--body", "")
    assert sent.returncode == 69
    (line,) = sent.stderr.splitlines()
    assert line.startswith(f"error: cannot submit to 127.0.0.1:{port}: ")
    assert line.endswith(
        "pbm serve is not running: start it (`pbm serve`, or `bash scripts/run.sh`)"
    )


def test_send_to_another_port_than_serve_names_the_right_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PBM_CONFIG", str(write_config(tmp_path, "127.0.0.1:2525")))
    status = {
        "state": "running",
        "pid": os.getpid(),
        "updated_at": datetime.now(UTC).isoformat(),
        "listen": {"smtp": "127.0.0.1:2525", "lmtp": None},
    }
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "daemon-status.json").write_text(json.dumps(status), encoding="utf-8")
    port = free_port()
    sent = runner.invoke(
        app, ["mail", "send", "--from", "a@example.org", "help", "--server", f"127.0.0.1:{port}"]
    )
    assert sent.exit_code == 69
    assert sent.stderr.strip().endswith(
        f"pbm serve runs (pid {os.getpid()}) but listens on 127.0.0.1:2525: use --server"
    )


@pytest.mark.parametrize(
    ("option", "address"),
    [("--from", "not an address"), ("--from", "alice"), ("--to", "pbm at example.org")],
)
def test_send_names_an_address_that_is_none(tmp_path: Path, option: str, address: str) -> None:
    # It was submitted as it was: "sent <...@not>  to ...", a message no one could answer.
    port = free_port()
    config = write_config(tmp_path, f"127.0.0.1:{port}")
    args = {"--from": "alice@example.org", "--to": "pbm@example.org", option: address}
    words = [word for pair in args.items() for word in pair]
    sent = pbm(config, "mail", "send", "help", "--body", "", *words)
    assert sent.returncode == 2
    assert sent.stderr == (
        f"error: {option}: {address!r} is not a mail address: write it as alice@example.org\n"
    )


def test_process_names_a_message_file_it_cannot_read(tmp_path: Path) -> None:
    # A missing file or a directory ended in a traceback (exit 1).
    config = write_config(tmp_path)
    assert pbm(config, "db", "init").returncode == 0
    for path, problem in ((tmp_path / "nope.eml", "does not exist"), (tmp_path, "is a directory")):
        done = pbm(config, "mail", "process", str(path))
        assert done.returncode == 75
        assert done.stderr == (
            f"error: Invalid value for 'FILE': file '{path}' {problem}; "
            "see pbm mail process --help\n"
        )


@pytest.mark.parametrize(
    ("words", "problem"),
    [
        (["mail", "process", "--bogus"], "No such option: --bogus"),
        (["--bogus", "mail", "process"], "No such option: --bogus"),
        (["mail", "--bogus", "process"], "No such option: --bogus"),
        (["mail", "process", "--via"], "Option '--via' requires an argument"),
    ],
)
def test_a_usage_error_of_the_pipe_keeps_the_mail_queued(
    tmp_path: Path, words: list[str], problem: str
) -> None:
    # A typo in the MTA's pipe line exited 2, and Postfix bounced every player's mail.
    config = write_config(tmp_path)
    assert pbm(config, "db", "init").returncode == 0
    message = b"From: zed@example.org\r\nSubject: help\r\n\r\nhi\r\n"
    done = subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(config), *words],
        input=message,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 75
    assert done.stderr.decode() == f"error: {problem}; see pbm mail process --help\n"
    # and an empty message: there is nothing to store, and still no bounce
    empty = subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(config), "mail", "process"],
        input=b"\n",
        capture_output=True,
        timeout=120,
    )
    assert (empty.returncode, empty.stderr) == (75, b"error: empty message: nothing to store\n")


@pytest.mark.parametrize(
    ("text", "why"),
    [("{bad", "not JSON: Expecting property name"), ("[1]", "not a JSON object")],
)
def test_status_names_a_status_file_it_cannot_parse(tmp_path: Path, text: str, why: str) -> None:
    # It said "no status file" of a file that was there, broken.
    config = write_config(tmp_path)
    assert pbm(config, "db", "init").returncode == 0
    path = tmp_path / "var" / "daemon-status.json"
    path.write_text(text, encoding="utf-8")
    done = pbm(config, "mail", "status")
    assert done.returncode == 3
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"pbm serve: unknown (status file {path} unreadable: {why}")
    assert "no status file" not in done.stdout


def test_a_display_name_address_is_named_with_its_bare_address(tmp_path: Path) -> None:
    # "The address erin <erin@example.org> holds U+0020 SPACE ...", and for erase "The
    # following userid is not recognized", neither saying to give erin@example.org.
    config = write_config(tmp_path)
    assert pbm(config, "db", "init").returncode == 0
    given = "Erin <erin@example.org>"
    added = pbm(config, "user", "add", "erin", "--password", "p", "erin@example.org", given)
    assert (added.returncode, added.stderr) == (
        2,
        f"error: {given!r} has a display name: give the bare address (erin@example.org)\n",
    )
    assert "erin" not in pbm(config, "user", "list").stdout  # nothing half made
    for command in (["user", "erase", given], ["vacation", given, "start"]):
        done = pbm(config, *command)
        assert (done.returncode, done.stderr) == (
            2,
            f"error: {given!r} is a mail address, not a userid: give the userid whose "
            "address erin@example.org is (pbm user list shows it)\n",
        )


def test_output_to_a_full_disk_is_one_line_and_75(tmp_path: Path) -> None:
    # `pbm user export alice > /full/disk/alice.json` ended in a traceback, exit 1.
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    config = write_config(tmp_path)
    assert pbm(config, "db", "init").returncode == 0
    assert pbm(config, "user", "add", "alice", "a@x.example", "--password", "p").returncode == 0
    with open("/dev/full", "w") as full:
        done = pbm(config, "user", "export", "alice", stdout=full.fileno())
    assert (done.returncode, done.stderr) == (
        75,
        "error: cannot write the output: No space left on device\n",
    )


def test_a_usage_error_of_another_command_stays_one(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    done = pbm(config, "mail", "status", "--bogus")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "Error: No such option: --bogus"


@pytest.mark.parametrize("command", ["serve", "web"])
def test_a_log_level_that_is_none_is_a_usage_error(tmp_path: Path, command: str) -> None:
    # logging's own ValueError came out as a traceback (exit 1).
    config = write_config(tmp_path)
    done = pbm(config, command, "--log-level", "verbose", "--web", "127.0.0.1:0")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--log-level': 'verbose': write DEBUG, INFO, WARNING or ERROR"
    )


def test_a_password_comes_from_a_piped_stdin(tmp_path: Path) -> None:
    # With no terminal the prompt printed Python's GetPassWarning and "Aborted!" (exit 1).
    config = write_config(tmp_path)
    assert pbm(config, "db", "init").returncode == 0
    argv = [sys.executable, "-m", "pbm", "--config", str(config), "user"]
    for args, given in (
        (["add", "hank", "hank@example.org", "--confirmed"], "s3cret\n"),
        (["passwd", "hank"], "n3w\n"),
    ):
        done = subprocess.run([*argv, *args], input=given, capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (0, "")
    ran = pbm(config, "run", "--as", "hank", "vacation hank n3w status")
    assert "You are not on vacation" in ran.stdout
    for nothing in ("", "\n"):
        done = subprocess.run(
            [*argv, "add", "ivan", "ivan@example.org"],
            input=nothing,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2
        assert done.stderr == "error: no password: give --password, or its line on standard input\n"


def test_process_refuses_a_via_the_store_cannot_hold_and_the_mta_keeps_the_mail(
    tmp_path: Path,
) -> None:
    # `--via postfix-pipe` was stored as it was: past inbound_messages.via's 8 characters,
    # which PostgreSQL refuses, so that every message failed as the store failing.
    config = write_config(tmp_path)
    assert pbm(config, "db", "init").returncode == 0
    message = tmp_path / "m.eml"
    message.write_bytes(b"From: zed@example.org\r\nSubject: help\r\n\r\nhi\r\n")
    done = pbm(config, "mail", "process", "--via", "postfix-pipe", str(message))
    assert done.returncode == 75
    assert done.stderr == (
        "error: --via 'postfix-pipe': write at most 8 letters or digits, such as pipe\n"
    )
    assert pbm(config, "mail", "process", "--via", "postfix", str(message)).stdout == "done\n"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("nonsense://x", "'nonsense://x': no database of that kind;"),
        ("mysql://pbm:secret@db.example/pbm", "'mysql://pbm:***@db.example/pbm': its driver"),
        ("just words", "is not an URL:"),
    ],
)
def test_a_database_url_pbm_cannot_use_is_a_configuration_error(
    tmp_path: Path, url: str, problem: str
) -> None:
    # SQLAlchemy's refusal came out as a traceback (exit 1), the password in it.
    config = tmp_path / "pbm.toml"
    config.write_text(f'[store]\ndatabase_url = "{url}"\n', encoding="utf-8")
    for command, code in ((["user", "list"], 78), (["mail", "process", str(config)], 75)):
        done = pbm(config, *command)
        assert done.returncode == code
        (line,) = done.stderr.splitlines()
        assert line.startswith("error: [store] database_url ") and problem in line
        assert line.endswith(
            "write sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST/DATABASE"
        )
        assert "secret" not in line


def test_serve_on_a_port_in_use_says_so_in_one_line(tmp_path: Path) -> None:
    # The bind's OSError came out as a traceback (exit 1).
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write_config(tmp_path, f"127.0.0.1:{port}")
        done = pbm(config, "serve")
    assert done.returncode == 78
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"error: [mail.listen] smtp 127.0.0.1:{port}: cannot listen there: Address already in use"
    )
    # and it signed off: `pbm mail status` listed it as running, then "gone" for ever
    status = pbm(config, "mail", "status")
    assert status.returncode == 3 and "daemons (the cluster)" not in status.stdout


def test_mail_status_lists_the_daemons_in_88_columns(capsys: pytest.CaptureFixture[str]) -> None:
    # Each daemon was one line of some 130 columns.
    from pbm.cli.serve import _print_daemons

    daemon = {
        "id": 12,
        "host": "mail-2.example.org",
        "pid": 4242424,
        "state": "running",
        "last_seen": "2026-11-27T10:14:45+00:00",
        "holds_messages": 3,
        "holds_mails": 17,
        "counters": {"processed": 123456, "sent": 234567},
        "listen": "smtp 127.0.0.1:2525, lmtp 127.0.0.1:8024",
    }
    _print_daemons([daemon, daemon | {"id": 13, "listen": ""}])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "daemons (the cluster):"
    assert max(len(line) for line in lines) <= 88
    assert lines[1].startswith("  #12 mail-2.example.org pid 4242424: running, last seen ")
    assert all(line.startswith("      ") for line in lines[2:] if not line.startswith("  #"))
    assert "(smtp 127.0.0.1:2525, lmtp 127.0.0.1:8024)" in " ".join(x.strip() for x in lines)


def test_web_on_a_port_in_use_ends_with_a_line_and_a_code_of_the_table(tmp_path: Path) -> None:
    # uvicorn logged the bind error and pbm web exited 3, a code no table explains.
    config = tmp_path / "pbm.toml"
    config.write_text(
        f'[server]\ndata_dir = "{tmp_path / "var"}"\n[web]\nmetrics_listen = ""\n',
        encoding="utf-8",
    )
    assert pbm(config, "db", "init").returncode == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = pbm(config, "web", "--web", f"127.0.0.1:{port}")
    assert done.returncode == 78
    lines = done.stderr.splitlines()
    problem = f"[web] listen 127.0.0.1:{port}: cannot listen there: Address already in use"
    assert f'event=web_cannot_listen error="{problem}"' in lines[-2]
    assert lines[-1] == f"error: {problem}"
    assert "web_started" not in done.stderr


def every_command(command: Any, path: tuple[str, ...] = ("pbm",)) -> Iterator[Any]:
    """(path, click command) of every command `pbm` has, built as `pbm --help` builds it."""
    if getattr(command, "commands", None):
        for name in list(command.commands):
            yield from every_command(command.commands[name], (*path, name))
    else:
        yield path, command


def test_every_argument_and_option_says_what_it_is() -> None:
    # `pbm tournament enter --help` listed "USERID <str>  [required]" and nothing more;
    # so did a dozen others (vacation's action, --round, every GAME of ratings and rules).
    silent = [
        f"{' '.join(path)} {param.human_readable_name}"
        for path, command in every_command(typer.main.get_command(app))
        for param in command.params
        if param.name != "help" and not getattr(param, "help", None)
    ]
    assert silent == []


def test_usage_lines_name_arguments_as_the_docs_do() -> None:
    # "pbm user show [OPTIONS] {userid}" beside "pbm vacation [OPTIONS] {USERID}", and the
    # docs' `pbm user show USERID`, `pbm mail retry [ID...]`: one spelling, the docs'.
    lower = [
        f"{' '.join(path)} {piece}"
        for path, command in every_command(typer.main.get_command(app))
        for piece in command.collect_usage_pieces(typer.Context(command))[1:]
        if piece != "[start|stop|status|grant]" and piece != piece.upper()
    ]
    assert lower == []
    usage = runner.invoke(app, ["user", "show"]).output
    assert "Usage: pbm user show [OPTIONS] {USERID}" in usage
    assert "Missing argument 'USERID'." in usage


def test_the_server_log_opens_with_pbm_lines(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    log = tmp_path / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pbm", "--config", str(config), "serve"],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        status = tmp_path / "var" / "daemon-status.json"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if status.exists() and '"running"' in status.read_text(encoding="utf-8"):
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    lines = log.read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if "logger=alembic" in line], lines[:10]
    assert any("event=schema_upgraded before=none after=" in line for line in lines[:3]), lines

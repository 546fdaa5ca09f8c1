"""Bots through the real daemon: `pbm serve` as a process on its embedded defaults (SMTP
intake on 127.0.0.1, replies into the Maildir outbox) answers a challenge mailed to a
bot with the bot's move, thinking in its worker pool; and a bot move that fell due while
no daemon ran (a challenge taken by `pbm mail process` from a pipe) is played when the
daemon starts."""

from __future__ import annotations

import json
import mailbox
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path

from sqlmodel import col, select
from typer.testing import CliRunner

from pbm.cli import app
from pbm.games import get_game
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, Move

runner = CliRunner()
ALICE = "alice@example.org"
# Bounds on the waits (never timings asserted): a slow, busy machine stays well inside.
START_SECONDS = 30.0
ANSWER_SECONDS = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(tmp_path: Path) -> Path:
    config = tmp_path / "pbm.toml"
    config.write_text(
        f'[server]\ndata_dir = "{tmp_path / "var"}"\n\n'
        f'[mail.listen]\nsmtp = "127.0.0.1:{free_port()}"\n\n'
        "[bots]\nworkers = 1\nseconds_per_move = 0.2\n",
        encoding="utf-8",
    )
    return config


def pbm(config: Path, *args: str) -> str:
    result = runner.invoke(app, ["--config", str(config), *args])
    assert result.exit_code == 0, result.output
    return result.output


def wait_for(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


@contextmanager
def serving(tmp_path: Path, config: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`pbm serve` in a process, running when entered, stopped cleanly when left."""
    log = (tmp_path / "serve.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pbm", "--config", str(config), "serve"],
        cwd=tmp_path,
        stdout=log,
        stderr=log,
    )
    status = tmp_path / "var" / "daemon-status.json"

    def running() -> bool:
        return status.exists() and json.loads(status.read_text()).get("state") == "running"

    try:
        assert wait_for(running, START_SECONDS), (tmp_path / "serve.log").read_text()
        yield proc
    finally:
        proc.terminate()
        assert proc.wait(60) == 0
        log.close()
        # a stopped daemon's status stays on disk: the next start must write it anew
        status.unlink(missing_ok=True)


def outbox(tmp_path: Path) -> list[mailbox.MaildirMessage]:
    box = tmp_path / "var" / "outbox"
    if not (box / "new").exists():
        return []
    return list(mailbox.Maildir(box, create=False))


def body_of(mail: mailbox.MaildirMessage) -> str:
    part = next(p for p in mail.walk() if p.get_content_type() == "text/plain")
    payload = part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode(part.get_content_charset() or "utf-8")


def moves(config: Path, tmp_path: Path) -> list[Move]:
    engine = make_engine(f"sqlite:///{tmp_path / 'var' / 'pbm.sqlite3'}")
    try:
        with session_for(engine) as session:
            query = (
                select(Move)
                .join(BoardRow, col(BoardRow.id) == Move.game_id)
                .where(BoardRow.board == "101")
            )
            return list(session.exec(query.order_by(col(Move.number))))
    finally:
        engine.dispose()


def first_give() -> str:
    """Quarto's first move: giving the opponent a piece (any of the sixteen)."""
    rules = get_game("quarto")
    state = rules.new_state()
    return rules.format_move(state, rules.legal_moves(state)[0])


def test_a_challenge_mailed_to_a_bot_gets_its_move_from_the_daemon(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with serving(tmp_path, config):
        pbm(config, "bot", "add", "pbmbot", "--level", "1")  # on the daemon's database
        pbm(config, "mail", "send", "--from", ALICE, "signup alice secret")
        assert wait_for(lambda: len(outbox(tmp_path)) >= 1, ANSWER_SECONDS)
        # She confirms her address as a player does: a reply to the welcome.
        welcome = outbox(tmp_path)[0]
        reply_to = str(welcome["Reply-To"])
        pbm(config, "mail", "send", "--from", ALICE, "--to", reply_to, "--body", "", "Re: welcome")
        assert wait_for(lambda: len(outbox(tmp_path)) >= 2, ANSWER_SECONDS)
        pbm(config, "mail", "send", "--from", ALICE, "quarto challenge alice pbmbot")
        assert wait_for(lambda: len(outbox(tmp_path)) >= 3, ANSWER_SECONDS)
        board = [m for m in outbox(tmp_path) if "Board 101" in m["Subject"]]
        assert len(board) == 1 and "pbmbot (bot)" in body_of(board[0])
        assert moves(config, tmp_path) == []  # alice moves first: the bot waits
        give = first_give()
        pbm(config, "mail", "send", "--from", ALICE, f"quarto move 101 alice secret {give}")
        # alice's move (one Move row), then the bot's answer to it
        assert wait_for(lambda: len(moves(config, tmp_path)) >= 2, ANSWER_SECONDS), (
            tmp_path / "serve.log"
        ).read_text()
        played = moves(config, tmp_path)
        assert [(m.number, m.player) for m in played] == [(1, 0), (2, 1)]
        bot_move = played[1].text
        assert bot_move[:2].isalnum() and "give" not in bot_move.split()[0]

        def bot_move_mailed() -> bool:
            return any(bot_move in body_of(m) for m in outbox(tmp_path) if m["To"] == ALICE)

        assert wait_for(bot_move_mailed, ANSWER_SECONDS)
        assert all(m["To"] == ALICE for m in outbox(tmp_path))  # nothing for the bot
    assert "event=bot " in (tmp_path / "serve.log").read_text()


def raw_mail(subject: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = ALICE
    msg["To"] = "pbm@localhost"
    msg["Subject"] = subject
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain="example.org")
    msg.set_content("")
    return bytes(msg)


def pipe(config: Path, subject: str) -> None:
    """What an MTA's pipe delivery runs: `pbm mail process` with the message on stdin."""
    result = subprocess.run(
        [sys.executable, "-m", "pbm", "--config", str(config), "mail", "process"],
        input=raw_mail(subject),
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode()


def test_a_bot_move_due_while_the_daemon_was_down_is_played_when_it_starts(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path)
    pbm(config, "db", "init")
    pbm(config, "bot", "add", "pbmbot", "--level", "1")
    pbm(config, "user", "add", "alice", ALICE, "--password", "secret", "--confirmed")
    pipe(config, "quarto challenge pbmbot alice")  # the bot moves first: due at once
    assert moves(config, tmp_path) == []  # taking mail in plays no bot move
    with serving(tmp_path, config):
        assert wait_for(lambda: len(moves(config, tmp_path)) == 1, ANSWER_SECONDS), (
            tmp_path / "serve.log"
        ).read_text()
        (played,) = moves(config, tmp_path)
        assert played.player == 0 and played.text.startswith("give ")

        def bot_move_mailed() -> bool:
            return any(
                played.text in body_of(m) and "Board 101" in m["Subject"]
                for m in outbox(tmp_path)
                if m["To"] == ALICE
            )

        assert wait_for(bot_move_mailed, ANSWER_SECONDS)
        assert len(moves(config, tmp_path)) == 1

"""The pipeline around the commands: reply tokens, multiple, robots, duplicates,
strangers, crashes and retries, threading headers."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import select

from pbm.commands.base import Invocation
from pbm.intake import process_inbound, process_message, retry_failed
from pbm.services.context import Context
from pbm.services.play.boards import Board
from pbm.store.engine import session_for
from pbm.store.models import InboundMessage
from tests.server.conftest import SERVER, Sent, Server, board_row, flat, legal_texts


@pytest.fixture
def game(server: Server) -> tuple[str, str]:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quadrature challenge alice bob")
    server.new_mail()
    return alice, bob


def _board_mail_for(server: Server, address: str) -> Sent:
    every = [m for m in server.outbox() if address in m.to and "Board 101" in m.subject]
    return every[-1]


def _reply(server: Server, address: str, body: str, *, via_reply_to: bool = True) -> str:
    mail = _board_mail_for(server, address).mail
    to = mail.reply_to if via_reply_to else SERVER
    headers = {"In-Reply-To": mail.message_id, "References": mail.message_id}
    return server.send(address, "Re: " + mail.subject, body, to=to, headers=headers)


def test_reply_with_just_the_move(server: Server, game: tuple[str, str]) -> None:
    alice, bob = game
    move = legal_texts(server, "quadrature")[0]
    quoted = "\n".join("> " + line for line in _board_mail_for(server, alice).body.splitlines())
    body = f"{move}\n\nYour turn, Bob.\n\nOn Sun, alice's server wrote:\n{quoted}\n-- \nAlice\n"
    assert _reply(server, alice, body) == "done"
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert board_row(server, "quadrature").move_count == 1
    assert "alice writes:\nYour turn, Bob." in mails[0].body
    assert mails[0].subject == "Quadrature Board 101 bob **"


def test_an_account_command_in_a_reply_says_the_reply_vouches_for_its_board_alone(
    server: Server, game: tuple[str, str]
) -> None:
    """A reply to a board mail stands for its player's userid and password on that board
    only: an account command without them is refused with why, and sent in full it runs."""
    alice, _ = game
    hint = "it stands for your userid and password on that board alone"
    for line in ("vacation", "set format text"):
        assert _reply(server, alice, f"{line}\n") == "done"
        [refused] = server.new_mail()
        assert refused.subject == "PBeM Server error"
        assert hint in flat(refused.body), line
    assert _reply(server, alice, "vacation alice secret\n") == "done"
    [answer] = server.new_mail()
    assert answer.subject == "Vacation alice"
    # The same line in a mail that is no reply gets the usage alone.
    server.send(alice, "vacation")
    [plain] = server.new_mail()
    assert "Usage: vacation userid password" in plain.body and hint not in flat(plain.body)


def test_reply_token_in_references_only(server: Server, game: tuple[str, str]) -> None:
    alice, _ = game
    move = legal_texts(server, "quadrature")[0]
    assert _reply(server, alice, f"move {move}\n", via_reply_to=False) == "done"
    assert board_row(server, "quadrature").move_count == 1


def test_reply_any_command_about_the_board(server: Server, game: tuple[str, str]) -> None:
    alice, bob = game
    _reply(server, bob, "show\n")
    [shown] = server.new_mail()
    assert shown.to == [bob] and "Summary of Quadrature Board 101" in shown.body
    _reply(server, bob, "resign\n")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all(m.subject == "Quadrature board 101 has been removed" for m in mails)


def test_token_from_another_address_is_refused(server: Server, game: tuple[str, str]) -> None:
    alice, _ = game
    mallory = "mallory@evil.example"
    board_mail = _board_mail_for(server, alice).mail
    move = legal_texts(server, "quadrature")[0]
    server.send(mallory, "Re: " + board_mail.subject, move, to=board_mail.reply_to)
    assert board_row(server, "quadrature").move_count == 0
    [err] = server.new_mail()
    assert err.to == [mallory]


def test_threading_headers(server: Server, game: tuple[str, str]) -> None:
    alice, _ = game
    raw = server.raw(alice, "quadrature show 101", message_id="<ask.1@players.example>")
    server.process(raw)
    [shown] = server.new_mail()
    assert shown.mail.in_reply_to == ("<ask.1@players.example>",)
    assert "<ask.1@players.example>" in shown.mail.references
    assert any(r.startswith("<pbm-board-") for r in shown.mail.references)
    assert b"Auto-Submitted: auto-replied" in shown.raw


def test_multiple_stops_state_changes_after_a_failure(
    server: Server, game: tuple[str, str]
) -> None:
    alice, _ = game
    move = legal_texts(server, "quadrature")[0]
    body = (
        f"quadrature move 101 alice wrong {move}\n"
        f"quadrature move 101 alice secret {move}\n"
        "  my comment\n"
        "quadrature games\n"
    )
    server.send(alice, "multiple", body)
    [answer] = server.new_mail()  # every answer to one message in one mail, in order
    assert answer.subject == "Quadrature error (and 2 more answers)"
    sections = answer.body.split("\n== ")
    assert [s.split(" ==", 1)[0] for s in sections[1:]] == [
        "1. Quadrature error",
        "2. List of Quadrature games",
        "3. Commands not run",
    ]
    assert f"quadrature move 101 alice ****** {move}" in sections[3]  # password masked
    assert board_row(server, "quadrature").move_count == 0


def test_multiple_runs_every_command(server: Server, game: tuple[str, str]) -> None:
    alice, _bob = game
    move = legal_texts(server, "quadrature")[0]
    server.send(alice, "mult", f"quadrature move 101 alice secret {move}\n  hello bob\n")
    mails = server.new_mail()
    assert len(mails) == 2 and "alice writes:\nhello bob" in mails[0].body


def test_failed_command_rolls_back_alone(server: Server, game: tuple[str, str]) -> None:
    alice, _ = game
    server.signup("carol")
    body = "signup dave pw\nquadrature move 101 alice secret a1-h8\nsignup erin pw\n"
    server.send(alice, "multiple", body)
    [answer] = server.new_mail()
    assert answer.subject == "Welcome to the PBeM Server, dave (and 2 more answers)"
    sections = answer.body.split("\n== ")
    assert sections[2].startswith("2. Quadrature Board 101 Error ==")
    assert sections[3].startswith("3. Commands not run ==") and "signup erin" in sections[3]


def test_same_message_runs_once(server: Server, game: tuple[str, str]) -> None:
    alice, _ = game
    move = legal_texts(server, "quadrature")[0]
    raw = server.raw(alice, f"quadrature move 101 alice secret {move}")
    assert server.process(raw) == "done"
    assert server.process(raw) == "done"
    assert board_row(server, "quadrature").move_count == 1
    assert len(server.new_mail()) == 2


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "auto-replied"},
        {"Precedence": "bulk"},
        {"X-Autoreply": "yes"},
    ],
)
def test_robots_are_never_answered(server: Server, headers: dict[str, str]) -> None:
    assert server.send("someone@example.net", "help", headers=headers) == "ignored"
    assert server.new_mail() == []


def test_mail_from_ourselves_is_ignored(server: Server) -> None:
    assert server.send(SERVER, "help") == "ignored"
    assert server.send("pbm+abcdefgh12@example.org", "help") == "ignored"
    assert server.new_mail() == []


def test_strangers_get_one_help_a_day(server: Server) -> None:
    from datetime import timedelta

    stranger = "who@nowhere.example"
    assert server.send(stranger, "hello", "is this thing on?") == "done"
    [note] = server.new_mail()
    assert note.subject == "PBeM Server: no command found"
    server.send(stranger, "hello again", "?")
    assert server.new_mail() == []
    server.clock.advance(timedelta(days=1, minutes=1))
    server.send(stranger, "hello again", "?")
    assert len(server.new_mail()) == 1


def test_multiple_with_no_command_lines_says_so_once_a_day(server: Server) -> None:
    """A `multiple` mail with nothing under it got "no command found", as if it had
    no command word at all."""
    from datetime import timedelta

    alice = server.signup("alice")
    server.send(alice, "multiple", "\n")
    [note] = server.new_mail()
    assert note.subject == "PBeM Server: no command lines under multiple"
    assert 'Your mail says "multiple", but no command line follows it.' in note.body
    server.send(alice, "hello", "multiple\n\n")  # the marker as the first body line
    assert server.new_mail() == []  # the note shares the no-command budget
    server.clock.advance(timedelta(days=1, minutes=1))
    server.send(alice, "hello", "multiple\n\n")
    [note] = server.new_mail()
    assert note.subject == "PBeM Server: no command lines under multiple"


def test_unknown_command_suggests(server: Server) -> None:
    alice = server.signup("alice")
    server.send(alice, "quadrature mvoe 101 alice secret e1")  # an alias pbmserv had
    server.new_mail()
    server.send(alice, "quadrature shwo 101")
    [err] = server.new_mail()
    assert "Unknown command 'quadrature shwo'" in err.body and "quadrature show" in err.body
    server.send(alice, "sigup bob pw")
    [err] = server.new_mail()
    assert "signup" in err.body
    assert "> Subject: sigup bob ******" in err.body  # a misspelt verb still masks


def test_usage_of_the_command_tried(server: Server) -> None:
    alice = server.signup("alice")
    server.send(alice, "quarto move 101")
    [err] = server.new_mail()
    assert "Usage: quarto move board userid password move[#n]" in err.body


def test_crash_marks_failed_and_retry_runs_it(
    server: Server, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    alice = server.signup("alice")
    import pbm.commands.account as account

    def boom(self: account.Help, ctx: Context, inv: Invocation) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(account.Help, "run", boom)
    with caplog.at_level(logging.ERROR):
        assert server.send(alice, "help", failing=True) == "failed"
    assert server.new_mail() == []
    with session_for(server.engine) as session:
        row = session.exec(select(InboundMessage).where(InboundMessage.status == "failed")).one()
        assert "RuntimeError: bug" in (row.error or "")
        failed_id, raw = row.saved_id, row.raw
    monkeypatch.undo()
    # The same message delivered again stays failed (and unanswered) until a retry.
    again = process_message(
        server.engine, raw, via="pipe", clock=server.clock, config=server.config
    )
    assert again == "failed" and server.new_mail() == []
    assert retry_failed(server.engine, clock=server.clock, config=server.config) == {
        failed_id: "done"
    }
    assert [m.subject for m in server.new_mail()] == ["Help pbm"]
    assert (
        process_inbound(server.engine, failed_id, clock=server.clock, config=server.config)
        == "done"
    )
    assert server.new_mail() == []


def test_empty_token_reply_shows_the_board(server: Server, game: tuple[str, str]) -> None:
    alice, _ = game
    quoted = "> A new Quadrature board (101) has been started\n"
    assert _reply(server, alice, f"On Sunday the server wrote:\n{quoted}") == "done"
    [err] = server.new_mail()
    assert err.subject == "Quadrature Board 101 Error"
    assert "No move given: write your move, e.g. b3-b4 (help quadrature)." in err.body
    assert "Summary of Quadrature Board 101" in err.body


def _fail_after_the_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next board mail raises: the move has written its board and clock by then."""
    import pbm.services.play.moves as play
    from pbm.errors import BoardError
    from pbm.services.mailing.board_mail import mail_board as real

    calls = iter([True])
    kept = []  # held, as any cache might: the session keeps loaded rows only while in use

    def mail_board(ctx: Context, board: Board, **kw: Any) -> None:
        if next(calls, False):
            kept.append(board)
            raise BoardError("refused after writing", board.id)
        real(ctx, board, **kw)

    monkeypatch.setattr(play, "mail_board", mail_board)


def _untouched(server: Server, game: str = "quadrature") -> None:
    from pbm.games import get_game
    from pbm.store import queries

    row = board_row(server, game)
    assert row.move_count == 0 and row.position == get_game(game).dump(get_game(game).new_state())
    with session_for(server.engine) as session:
        assert all(gp.seconds_used == 0 for gp, _ in queries.players_of(session, row.saved_id))
        assert queries.moves_of(session, row.saved_id) == []


@pytest.mark.parametrize("multiple", [False, True])
def test_a_command_failing_after_its_writes_leaves_nothing_written(
    server: Server, game: tuple[str, str], monkeypatch: pytest.MonkeyPatch, multiple: bool
) -> None:
    # A lone command runs without a savepoint (the whole transaction rolls back); in a
    # multiple mail its savepoint rolls back, and the next command must read the board
    # as stored, not as the failed command left it in memory.
    alice, _ = game
    server.clock.advance(timedelta(hours=5))  # so the move would charge alice's clock
    move = f"quadrature move 101 alice secret {legal_texts(server, 'quadrature')[0]}"
    _fail_after_the_writes(monkeypatch)
    if multiple:
        server.send(alice, "multiple", f"{move}\nquadrature show 101\n")
    else:
        server.send(alice, move)
    mails = server.new_mail()
    assert "refused after writing" in mails[0].body
    _untouched(server)
    if multiple:
        shown = mails[0]  # the refusal and the board shown: one answer
        assert "Summary of Quadrature Board 101" in shown.body
        assert "Please start the game alice." in shown.body
        assert "alice:   0 days, 00:00:00" in shown.body

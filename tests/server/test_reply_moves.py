"""Replies know which board mail they answer: each board mail's reply address and
Message-ID carry the board's move count when it was sent, a move answering an older
mail is refused with the board as it is now (an explicit #n still wins), mails of the
older format keep working, and a reply to someone else's reply address is told whose
address and board it was, without learning anyone's address."""

from __future__ import annotations

import re

import pytest
from sqlmodel import select

from pbm.store.engine import session_for
from pbm.store.models import OutboxMail
from tests.server.conftest import SERVER, Sent, Server, board_row, legal_texts

GAME = "quadrature"


@pytest.fixture
def players(server: Server) -> tuple[str, str]:
    alice = server.signup("alice")
    bob = server.signup("bob")
    assert server.send(alice, f"{GAME} challenge alice bob") == "done"
    server.new_mail()
    return alice, bob


def board_mails(server: Server, address: str) -> list[Sent]:
    """Every board mail `address` received, oldest first."""
    return [m for m in server.outbox() if address in m.to and "Board 101" in m.subject]


def answer(server: Server, mail: Sent, sender: str, body: str, *, via: str = "reply-to") -> str:
    """`sender` answers `mail` as a mail program does: to its Reply-To (or, with
    via="threading", to the server's plain address, found by In-Reply-To alone)."""
    to = mail.mail.reply_to if via == "reply-to" else SERVER
    assert to is not None
    headers = {"In-Reply-To": mail.mail.message_id or "", "References": mail.mail.message_id or ""}
    return server.send(sender, "Re: " + mail.subject, body, to=to, headers=headers)


def move(server: Server) -> str:
    return legal_texts(server, GAME)[0]


def play_to_three(server: Server, alice: str, bob: str) -> Sent:
    """alice, bob and alice move, bob each time answering his newest board mail; returns
    the board mail bob got after move 1 (the board has moved on twice since)."""
    assert server.send(alice, f"{GAME} move 101 alice secret {move(server)}") == "done"
    after_one = board_mails(server, bob)[-1]
    assert answer(server, after_one, bob, move(server) + "\n") == "done"
    assert server.send(alice, f"{GAME} move 101 alice secret {move(server)}") == "done"
    assert board_row(server, GAME).move_count == 3
    server.new_mail()
    return after_one


def test_board_mails_carry_the_move_count(server: Server, players: tuple[str, str]) -> None:
    alice, bob = players
    [new] = board_mails(server, bob)
    token = re.fullmatch(r"pbm\+([a-z0-9]+)\.0@example\.org", new.mail.reply_to or "")
    assert token is not None, new.mail.reply_to
    assert re.fullmatch(rf"<pbm\.{token[1]}\.0\.[0-9a-f]+@example\.org>", new.mail.message_id or "")
    assert server.send(alice, f"{GAME} move 101 alice secret {move(server)}") == "done"
    after = board_mails(server, bob)[-1]
    assert after.mail.reply_to == f"pbm+{token[1]}.1@example.org"
    assert (after.mail.message_id or "").startswith(f"<pbm.{token[1]}.1.")


@pytest.mark.parametrize("via", ["reply-to", "threading"])
def test_a_move_answering_an_older_board_mail_is_refused(
    server: Server, players: tuple[str, str], via: str
) -> None:
    alice, bob = players
    old = play_to_three(server, alice, bob)
    now_legal = move(server)
    assert answer(server, old, bob, now_legal + "\n", via=via) == "done"
    assert board_row(server, GAME).move_count == 3
    [refusal] = server.new_mail()
    assert refusal.to == [bob]
    assert refusal.subject == "Quadrature Board 101 Error"
    flat = " ".join(refusal.body.split())
    assert f"{now_legal} was not played: it answers the board mail sent after move 1" in flat
    assert f"write {now_legal}#4 to play it as move 4" in flat
    # The board as it is now: three moves, bob to move.
    assert "Summary of Quadrature Board 101" in refusal.body
    assert "It is bob's turn." in refusal.body
    # The refusal is itself a board mail of move 3: answering it plays.
    assert (refusal.mail.reply_to or "").endswith(".3@example.org")
    assert answer(server, refusal, bob, now_legal + "\n") == "done"
    assert board_row(server, GAME).move_count == 4


def test_an_explicit_number_wins_over_the_mails(server: Server, players: tuple[str, str]) -> None:
    alice, bob = players
    old = play_to_three(server, alice, bob)
    assert answer(server, old, bob, move(server) + "#4\n") == "done"
    assert board_row(server, GAME).move_count == 4
    # ... also when it is the stale one: #n is what the player meant.
    newest = board_mails(server, alice)[-1]
    assert answer(server, newest, alice, move(server) + "#3\n") == "done"
    assert board_row(server, GAME).move_count == 4
    [refusal] = server.new_mail()[-1:]
    assert "it is numbered #3, but the next move\non this board is #5." in refusal.body


def test_other_replies_to_an_older_mail_still_work(
    server: Server, players: tuple[str, str]
) -> None:
    alice, bob = players
    old = play_to_three(server, alice, bob)
    assert answer(server, old, bob, "show\n") == "done"
    [shown] = server.new_mail()
    assert "Summary of Quadrature Board 101" in shown.body and "Error" not in shown.subject
    assert answer(server, old, bob, "resign\n") == "done"
    assert board_row(server, GAME).status != "active"


def _to_old_format(server: Server, mail: Sent) -> tuple[str, str]:
    """The Reply-To `pbm+TOKEN@` and Message-ID `<pbm.TOKEN.RANDOM@host>` of `mail` as
    pbm wrote them before the move count (the id so recorded in the outbox)."""
    token = (mail.mail.reply_to or "").split("+")[1].split(".")[0]
    old_id = f"<pbm.{token}.00112233445566778899@example.org>"
    with session_for(server.engine) as session:
        row = session.exec(select(OutboxMail).where(OutboxMail.id == mail.id)).one()
        row.message_id = old_id
        session.add(row)
        session.commit()
    return f"pbm+{token}@example.org", old_id


@pytest.mark.parametrize("via", ["reply-to", "threading"])
def test_old_format_tokens_still_play(server: Server, players: tuple[str, str], via: str) -> None:
    alice, _bob = players
    [new] = board_mails(server, alice)
    reply_to, old_id = _to_old_format(server, new)
    to = reply_to if via == "reply-to" else SERVER
    headers = {"In-Reply-To": old_id, "References": old_id}
    assert server.send(alice, "Re: " + new.subject, move(server), to=to, headers=headers) == "done"
    assert board_row(server, GAME).move_count == 1


def test_a_reply_to_another_players_address(server: Server, players: tuple[str, str]) -> None:
    alice, bob = players
    alices = board_mails(server, alice)[-1]
    token = (alices.mail.reply_to or "").split("+")[1].split(".")[0]
    assert answer(server, alices, bob, move(server) + "\n") == "done"
    assert board_row(server, GAME).move_count == 0
    [err] = server.new_mail()
    assert err.to == [bob]
    flat = " ".join(err.body.split())
    assert (
        "This mail answers alice's board mail on Quadrature Board 101. Its reply "
        "address takes commands only from alice's registered addresses; "
        "bob@players.example is not one of them, so nothing was done."
    ) in flat
    assert "You play this board as bob: answer a board mail pbm sent to you" in flat
    # Not "no command found", not a usage; the echoed command is what bob wrote.
    assert "Usage" not in err.body and "no command" not in err.subject.lower()
    assert f"(Your command: {move(server)})" in err.body
    # Nothing of alice's leaks: not her address, not her token, no token for bob either.
    assert alice not in err.raw.decode() and token not in err.raw.decode()
    assert err.mail.reply_to is None


def test_a_registered_non_player_and_a_stranger(server: Server, players: tuple[str, str]) -> None:
    alice, _bob = players
    carol = server.signup("carol")
    alices = board_mails(server, alice)[-1]
    assert answer(server, alices, carol, move(server) + "\n") == "done"
    [err] = server.new_mail()
    flat = " ".join(err.body.split())
    assert "alice's board mail on Quadrature Board 101" in flat
    assert "Your address is registered to carol" in flat
    assert "quadrature move 101 carol PASSWORD MOVE" in flat
    assert alice not in err.raw.decode()

    mallory = "mallory@evil.example"
    assert answer(server, alices, mallory, "resign\n") == "done"
    assert board_row(server, GAME).status == "active"
    [err] = server.new_mail()
    assert err.to == [mallory]
    flat = " ".join(err.body.split())
    assert "mallory@evil.example is not one of them, so nothing was done." in flat
    assert "If you are alice, write from a registered address" in flat
    assert alice not in err.raw.decode()


def test_a_full_command_in_a_reply_to_another_players_address_runs(
    server: Server, players: tuple[str, str]
) -> None:
    alice, bob = players
    alices = board_mails(server, alice)[-1]
    line = f"{GAME} move 101 alice secret {move(server)}"
    # bob's mail program answered alice's mail, but the command is complete.
    assert answer(server, alices, bob, line + "\n") == "done"
    assert board_row(server, GAME).move_count == 1


def test_confirm_alone_in_a_reply_plays_the_submitted_move(
    server: Server, players: tuple[str, str]
) -> None:
    """`confirm` is also the account command that takes a confirmation token: alone on
    a reply's first line it was answered "Usage: confirm token"."""
    alice, bob = players
    mail = board_mails(server, alice)[-1]
    first = move(server)
    assert answer(server, mail, alice, f"submit {first}\n") == "done"
    [preview] = server.new_mail()
    assert "It must be confirmed to take effect." in preview.body
    assert answer(server, mail, alice, "confirm\n") == "done"
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all(f"alice {first}" in m.body for m in mails)
    assert board_row(server, GAME).move_count == 1

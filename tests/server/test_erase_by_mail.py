"""`erase USERID PASSWORD` by mail (docs/privacy.md): a token to the confirmed address,
sent back, schedules the erasure `erasure_delay_days` later; a cancel mail stops it; the
periodic job (pbm.privacy_jobs) erases the account when it is due."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from pbm.errors import NotFoundError
from pbm.privacy_jobs import run_privacy
from pbm.services.accounts.users import find_user
from pbm.services.context import Context
from pbm.store.engine import session_for
from tests.server.conftest import Server, board_row, flat, legal_texts

DAY = timedelta(days=1)


def _token(body: str) -> str:
    found = re.search(r"erase \S+ PASSWORD confirm (\w+)", body)
    assert found, body
    return found.group(1)


def _players(server: Server) -> tuple[str, str]:
    """alice and bob, with a running Quarto board where both have moved."""
    alice, bob = server.signup("alice"), server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    for address, userid in ((alice, "alice"), (bob, "bob")):
        move = legal_texts(server, "quarto")[0]
        assert server.send(address, f"quarto move 101 {userid} secret {move}") == "done"
    server.new_mail()
    return alice, bob


def _exists(server: Server, userid: str) -> bool:
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        try:
            find_user(ctx, userid)
        except NotFoundError:  # any other error is the test's failure, not "gone"
            return False
        return True


def _jobs(server: Server) -> dict[str, int]:
    return run_privacy(server.engine, server.clock, server.config)


def _schedule(server: Server, address: str, userid: str) -> str:
    """Ask, confirm with the mailed token; returns the scheduling notice's body."""
    server.send(address, f"erase {userid} secret")
    [ask] = server.new_mail()
    assert ask.to == [address] and ask.subject == f"Erasing the account {userid}"
    server.send(address, f"erase {userid} secret confirm {_token(ask.body)}")
    [notice] = server.new_mail()
    assert notice.to == [address]
    return notice.body


def test_erasure_is_confirmed_then_done_after_the_delay(server: Server) -> None:
    alice, bob = _players(server)
    notice = _schedule(server, alice, "alice")
    due = (server.clock.now() + 7 * DAY).strftime("%Y-%m-%d %H:%M UTC")
    assert f"The account alice will be erased on {due}." in notice
    assert "No mail will say it is done" in flat(notice)
    server.clock.advance(7 * DAY - timedelta(minutes=1))
    assert _jobs(server)["erasures"] == 0 and _exists(server, "alice")
    server.clock.advance(timedelta(minutes=1))
    assert _jobs(server)["erasures"] == 1
    assert not _exists(server, "alice")
    row = board_row(server, "quarto")
    assert row.status == "finished" and not row.rated and "erased-" in (row.result_reason or "")
    # Every mail to alice went with her; bob has his board's end (erasure frees the
    # outbox ids of the deleted mails, so new_mail() would not see it).
    mails = server.outbox()
    assert mails and all(alice not in m.to for m in mails)
    assert any(m.to == [bob] and "erased-" in m.body and "resign" in m.body for m in mails)
    assert _jobs(server)["erasures"] == 0  # done once


def test_a_cancel_mail_keeps_the_account(server: Server) -> None:
    alice, _ = _players(server)
    _schedule(server, alice, "alice")
    server.clock.advance(3 * DAY)
    server.send(alice, "erase alice secret cancel")
    [cancelled] = server.new_mail()
    assert cancelled.to == [alice] and "is cancelled: the account stays" in cancelled.body
    server.clock.advance(10 * DAY)
    assert _jobs(server)["erasures"] == 0 and _exists(server, "alice")
    server.send(alice, "erase alice secret cancel")
    [nothing] = server.new_mail()
    assert "No erasure of alice is asked for or scheduled." in nothing.body


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ("confirm wrongtoken", "'wrongtoken' is not the token mailed for erasing alice"),
        ("now please", "'now please': after the password write nothing, 'confirm TOKEN'"),
    ],
)
def test_bad_words_are_refused_with_what_to_write(server: Server, words: str, said: str) -> None:
    alice, _ = _players(server)
    server.send(alice, "erase alice secret")
    server.new_mail()
    server.send(alice, f"erase alice secret {words}")
    [refused] = server.new_mail()
    assert said in flat(refused.body), refused.body
    server.clock.advance(30 * DAY)
    assert _jobs(server)["erasures"] == 0 and _exists(server, "alice")


def test_the_token_goes_to_the_confirmed_address_only_and_expires(server: Server) -> None:
    alice, _ = _players(server)
    server.send("thief@else.example", "erase alice secret")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, "thief@else.example"]
    [note] = [m for m in mails if m.to == ["thief@else.example"]]
    [ask] = [m for m in mails if m.to == [alice]]
    assert _token(ask.body) not in note.body and "confirmed address" in flat(note.body)
    server.clock.advance(8 * DAY)
    server.send(alice, f"erase alice secret confirm {_token(ask.body)}")
    [late] = server.new_mail()
    assert "The token for erasing alice is too old" in late.body
    assert _jobs(server)["erasure_asks_dropped"] == 1
    server.send(alice, f"erase alice secret confirm {_token(ask.body)}")
    assert "No erasure of alice was asked for" in server.new_mail()[0].body


def test_asking_again_while_scheduled_says_when(server: Server) -> None:
    alice, _ = _players(server)
    _schedule(server, alice, "alice")
    server.send(alice, "erase alice secret")
    [again] = server.new_mail()
    assert "already scheduled for" in again.body and "erase alice PASSWORD cancel" in again.body


def test_help_erase(server: Server) -> None:
    server.send("who@x.example", "help erase")
    [help_mail] = server.new_mail()
    assert "erase userid password [confirm TOKEN | cancel]" in help_mail.body
    assert "pseudonym" in help_mail.body


def test_a_reply_to_a_board_mail_cannot_ask_for_erasure(server: Server) -> None:
    """A board mail's reply token is no password: `erase` alone in a reply is refused."""
    alice, _ = _players(server)
    board_mail = [m for m in server.outbox() if m.to == [alice] and "Board 101" in m.subject][-1]
    assert board_mail.mail.reply_to
    headers = {"In-Reply-To": board_mail.mail.message_id or ""}
    reply_to = board_mail.mail.reply_to
    server.send(alice, "Re: " + board_mail.subject, "erase", to=reply_to, headers=headers)
    [refused] = server.new_mail()
    assert "Usage: erase userid password [confirm TOKEN | cancel]" in flat(refused.body)
    assert "PASSWORD confirm" not in refused.body

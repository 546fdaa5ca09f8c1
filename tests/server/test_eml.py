"""Real-looking messages from tests/data/server/ through the whole pipeline."""

from __future__ import annotations

import pytest

from tests.server.conftest import DATA, Sent, Server, board_row, legal_texts


def load(name: str, **values: str) -> bytes:
    text = (DATA / name).read_bytes().decode("utf-8")
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-8")


@pytest.fixture
def started(server: Server) -> Server:
    assert server.process(load("plain_signup.eml")) == "done"
    server.confirm("alice@players.example")
    server.signup("bob")
    assert server.process(load("alternative_challenge.eml")) == "done"
    return server


def _last_board_mail(server: Server, address: str) -> Sent:
    return [m for m in server.outbox() if m.to == [address] and "Board 101" in m.subject][-1]


def test_plain_signup_and_alternative_challenge(started: Server) -> None:
    mails = started.outbox()
    assert mails[0].subject == "Welcome to the PBeM Server, alice"
    new = [m for m in mails if m.subject.startswith("New Quadrature Board 101")]
    assert len(new) == 2
    # The text/plain alternative is the comment, not the HTML.
    assert "alice writes:\nGood luck, Bob!" in new[0].body and "<b>" not in new[0].body


@pytest.mark.parametrize(
    ("name", "comment"),
    [
        ("html_only_move.eml", "Take that, Bob."),
        ("qp_comment_move.eml", "Schöner Zug, nicht wahr?"),
        ("base64_comment_move.eml", "Voilà mon coup, Bob."),
    ],
)
def test_move_bodies_become_the_comment(started: Server, name: str, comment: str) -> None:
    move = legal_texts(started, "quadrature")[0]
    started.new_mail()
    assert started.process(load(name, MOVE=move)) == "done"
    mails = started.new_mail()
    assert len(mails) == 2 and board_row(started, "quadrature").move_count == 1
    assert comment in mails[0].body
    assert mails[0].subject == "Quadrature Board 101 bob **"


def test_rfc2047_subject(started: Server) -> None:
    started.new_mail()
    assert started.process(load("rfc2047_subject_show.eml")) == "done"
    [shown] = started.new_mail()
    assert shown.to == ["bob@players.example"]
    assert "Summary of Quadrature Board 101" in shown.body


def test_token_replies_with_quotes_signatures_and_top_posting(started: Server) -> None:
    alice_mail = _last_board_mail(started, "alice@players.example").mail
    assert alice_mail.reply_to is not None and alice_mail.message_id is not None
    token = alice_mail.reply_to.split("+", 1)[1].split("@", 1)[0]
    move = legal_texts(started, "quadrature")[0]
    raw = load(
        "thunderbird_token_reply.eml", TOKEN=token, REPLY_ID=alice_mail.message_id, MOVE=move
    )
    assert started.process(raw) == "done"
    row = board_row(started, "quadrature")
    assert row.move_count == 1 and row.comment == "Your turn, Bob."
    bob_mail = _last_board_mail(started, "bob@players.example").mail
    reply = bob_mail.message_id
    assert reply is not None
    move = legal_texts(started, "quadrature")[0]
    raw = load("outlook_topost_token_reply.eml", REPLY_ID=reply, MOVE=move)
    assert started.process(raw) == "done"
    row = board_row(started, "quadrature")
    assert row.move_count == 2 and row.comment is not None
    assert row.comment.startswith("Nice opening.") and "Original Message" not in row.comment


def test_autoreplies_and_bounces_are_ignored(started: Server) -> None:
    bob_mail = _last_board_mail(started, "bob@players.example").mail
    assert bob_mail.reply_to is not None and bob_mail.message_id is not None
    token = bob_mail.reply_to.split("+", 1)[1].split("@", 1)[0]
    started.new_mail()
    raw = load("vacation_autoreply.eml", TOKEN=token, REPLY_ID=bob_mail.message_id)
    assert started.process(raw) == "ignored"
    assert started.process(load("postfix_bounce.eml")) == "ignored"
    assert started.new_mail() == []
    assert board_row(started, "quadrature").status == "active"

"""The HTML part of every mail (issue 13): multipart/alternative with the text part as
before, boards drawn as inline PNGs named by cid:, nothing remote, and `set ... format
text` for the text alone. The outbox queues the text; the HTML part is made when the
daemon's sender takes the mail (pbm.mailstore.DbOutbox), so these tests read the mail
from there, as it leaves."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Sequence
from dataclasses import replace
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlmodel import col, select

from pbm.app import initialize
from pbm.config import PACKAGE_TEMPLATES
from pbm.games import GAMES, AnyGame
from pbm.games.base import State
from pbm.mail.html_text import html_to_text
from pbm.mail.inbound import parse_message
from pbm.mail.smtp_out import SendOutcome
from pbm.mailstore import DbOutbox
from pbm.services.mailing import mail_html
from pbm.services.play.boards import replay
from pbm.services.play.picture_words import picture_words
from pbm.store.engine import session_for
from pbm.store.models import Move, OutboxMail
from tests.server.conftest import Sent, Server, legal_texts
from tests.server.test_quadrupel_server import BLACK_SETUP

# Anything an HTML part could load from elsewhere: a URL scheme other than cid:, a
# protocol-relative address, a stylesheet link, an @import or a url() in CSS.
REMOTE = re.compile(r"(https?:|ftp:|//[a-z0-9]|<link\b|@import|url\(|<script\b|<iframe\b)", re.I)


def sent_mail(server: Server) -> list[Sent]:
    """The mail queued since the last read of the outbox, as the sender sends it (all
    due mail is then marked sent)."""
    after = server.seen
    outbox = DbOutbox(server.engine, server.clock)
    mails = sorted(asyncio.run(outbox.due(1000)), key=lambda m: m.id)
    asyncio.run(outbox.record([SendOutcome(m.id, "sent") for m in mails]))
    server.new_mail()  # the queued (text) copies, read past
    with session_for(server.engine) as session:
        subjects = {r.id: r.subject for r in session.exec(select(OutboxMail))}
    return [
        Sent(
            list(m.recipients),
            subjects[m.id],
            parse_message(m.raw).text,
            m.raw,
            parse_message(m.raw),
            m.id,
        )
        for m in mails
        if m.id > after
    ]


def parsed(sent: Sent) -> EmailMessage:
    msg = message_from_bytes(sent.raw, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    assert not msg.defects
    return msg


def html_of(msg: EmailMessage) -> str:
    part = msg.get_body(("html",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def check_html_mail(sent: Sent, pictures: int) -> EmailMessage:
    """A mail as every html reader gets it: the text part unchanged, then the HTML
    (with `pictures` boards in a multipart/related)."""
    msg = parsed(sent)
    assert msg.get_content_type() == "multipart/alternative"
    text, rich = list(msg.iter_parts())
    assert text.get_content_type() == "text/plain"
    assert text.get_content().replace("\r\n", "\n") == sent.body
    html = html_of(msg)
    assert not REMOTE.search(html), REMOTE.search(html)
    # The text is all there, word for word, as paragraphs, lists and boards.
    assert " ".join(sent.body.split()) in " ".join(html_to_text(html).split())
    if not pictures:
        assert rich.get_content_type() == "text/html"
        return msg
    assert rich.get_content_type() == "multipart/related"
    images = [p for p in rich.iter_parts() if p.get_content_type() == "image/png"]
    assert len(images) == pictures
    for image in images:
        cid = str(image["Content-ID"]).strip().strip("<>")
        assert f'src="cid:{cid}"' in html
        png = image.get_content()
        assert png.startswith(b"\x89PNG") and len(png) <= 40 * 1024
    assert html.count('alt="') == pictures
    assert html.count("<li>") >= pictures  # the position in words, for screen readers
    return msg


def _first_move(server: Server) -> str:
    """alice challenges bob at Quarto (its mails read) and makes the first move; returns
    her address."""
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    sent_mail(server)
    move = legal_texts(server, "quarto")[0]
    assert server.send(alice, f"quarto move 101 alice secret {move}") == "done"
    return alice


def test_board_mails_carry_the_drawn_board(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    for sent in sent_mail(server):
        check_html_mail(sent, pictures=1)
    move = legal_texts(server, "quarto")[0]
    assert server.send(alice, f"quarto move 101 alice secret {move}") == "done"
    mails = sent_mail(server)
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for sent in mails:
        html = html_of(check_html_mail(sent, pictures=1))
        assert 'alt="Quarto Board 101 after move 1' in html


def test_a_resigned_boards_picture_says_its_result_not_whose_turn(server: Server) -> None:
    """The rules of a resigned board still have a player to move: the picture of its
    last position says how it ended, as the text does; an earlier position's picture
    (show 101#1) still says who is to move in it."""
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    for userid, address in [("alice", alice), ("bob", bob)]:
        move = legal_texts(server, "quarto")[0]
        assert server.send(address, f"quarto move 101 {userid} secret {move}") == "done"
    sent_mail(server)
    assert server.send(alice, "quarto resign 101 alice secret") == "done"
    mails = sent_mail(server)
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for sent in mails:
        html = html_of(check_html_mail(sent, pictures=1))
        [alt] = re.findall(r'alt="([^"]*)"', html)
        assert alt.startswith("Quarto Board 101 after move 2: alice resigns. Game won by bob.")
        assert "to place" not in alt
    server.send(bob, "quarto show 101#1")
    [shown] = sent_mail(server)
    [alt] = re.findall(r'alt="([^"]*)"', html_of(check_html_mail(shown, pictures=1)))
    assert "bob to place" in alt


def test_the_senders_picture_says_the_templates_words(server: Server, tmp_path: Path) -> None:
    """The sender draws a queued mail's picture in the words of the templates in use: a
    reworded picture phrase is what the mail's picture says."""
    templates = tmp_path / "templates"
    shutil.copytree(PACKAGE_TEMPLATES, templates)
    phrases = templates / "phrases.toml"
    old = 'picture_alt_last_move = "$title: $status; last move: $echo"'
    text = phrases.read_text(encoding="utf-8")
    assert old in text
    phrases.write_text(text.replace(old, old.replace("last move", "zuletzt")), encoding="utf-8")
    _first_move(server)
    initialize(replace(server.config, templates_dir=templates))
    try:
        mails = sent_mail(server)
    finally:
        initialize(server.config)
    for sent in mails:
        [alt] = re.findall(r'alt="([^"]*)"', html_of(check_html_mail(sent, pictures=1)))
        assert "; zuletzt: alice " in alt and "last move" not in alt


def test_errors_and_help_have_an_html_part_without_pictures(server: Server) -> None:
    alice = server.signup("alice")
    server.send(alice, "help")
    (help_mail,) = sent_mail(server)
    check_html_mail(help_mail, pictures=0)
    server.send(alice, "quarto move 999 alice secret <b>&amp;")
    (error,) = sent_mail(server)
    html = html_of(check_html_mail(error, pictures=0))
    assert "<b>" not in html  # the player's words are text, never markup


def test_format_text_sends_the_text_alone(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "set alice secret format text")
    (answer,) = sent_mail(server)
    assert "plain text alone" in answer.body
    assert parsed(answer).get_content_type() == "text/plain"
    server.send(alice, "quarto challenge alice bob")
    mails = {m.to[0]: m for m in sent_mail(server)}
    assert parsed(mails[alice]).get_content_type() == "text/plain"
    check_html_mail(mails[bob], pictures=1)
    # An answer with no account named (help) follows the sender's address too.
    server.send(alice, "help")
    (help_mail,) = sent_mail(server)
    assert parsed(help_mail).get_content_type() == "text/plain"
    server.send(alice, "set alice secret format html")
    (answer,) = sent_mail(server)
    assert "HTML part" in answer.body
    check_html_mail(answer, pictures=0)


def test_set_refuses_what_it_does_not_know(server: Server) -> None:
    alice = server.signup("alice")
    # Each refusal says what was wrong, not the forms twice ("Write: ..." above "Usage:").
    for line, said in (
        ("set alice secret format rtf", "'rtf' is not one of html, text, words."),
        ("set alice secret colour blue", "'colour' is not a setting: write format, messages"),
        ("set alice secret mail junk off", "'junk' is not one of boards, reminders,"),
        ("set alice secret mail boards maybe", "'maybe' is not one of on, off."),
    ):
        server.send(alice, line)
        (error,) = sent_mail(server)
        assert said in error.body
        assert "set userid password format html|text|words" in error.body
        assert "Write:" not in error.body
    server.send(alice, "set alice secret format")
    (status,) = sent_mail(server)
    assert "HTML part" in status.body


def test_merged_answers_keep_each_board_picture(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    server.send(alice, "quadrature challenge alice bob")
    sent_mail(server)
    server.send(alice, "multiple", "quarto show 101\nquadrature show 101")
    (answer,) = sent_mail(server)
    html = html_of(check_html_mail(answer, pictures=2))
    assert html.index('alt="Quarto Board 101') < html.index('alt="Quadrature Board 101')


def png_of(sent: Sent) -> bytes:
    (image,) = [p for p in parsed(sent).walk() if p.get_content_type() == "image/png"]
    return bytes(image.get_content())


def test_a_hidden_setup_stays_hidden_in_the_picture(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    carol = server.signup("carol")
    server.send(alice, "quadrupel-points challenge alice bob")
    server.send(carol, "quadrupel subscribe 101 carol secret")
    sent_mail(server)
    assert server.send(alice, f"quadrupel move 101 alice secret {BLACK_SETUP}") == "done"
    mails = {m.to[0]: m for m in sent_mail(server)}
    assert set(mails) == {alice, bob, carol}
    # Bob and the observer see the same picture: the dots of alice's setup hidden;
    # alice sees her own setup.
    assert png_of(mails[bob]) == png_of(mails[carol]) != png_of(mails[alice])
    # The words for screen readers hide as much as the picture.
    assert "c3 (dots not shown yet)" in html_of(parsed(mails[bob]))
    assert "c3 (dots not shown yet)" in html_of(parsed(mails[carol]))
    assert "c3 (dots not shown yet)" not in html_of(parsed(mails[alice]))


def test_show_of_an_earlier_position_draws_that_position(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    move = legal_texts(server, "quarto")[0]
    assert server.send(alice, f"quarto move 101 alice secret {move}") == "done"
    sent_mail(server)
    server.send(alice, "quarto show 101#0")
    (shown,) = sent_mail(server)
    assert shown.subject == "Quarto Board 101 at the start"
    html = html_of(check_html_mail(shown, pictures=1))
    assert 'alt="Quarto Board 101 at the start' in html


def _set_last_order(server: Server, order: str) -> None:
    with session_for(server.engine) as session:
        row = session.exec(select(OutboxMail).order_by(col(OutboxMail.id).desc())).first()
        assert row is not None and row.html is not None
        row.html = order
        session.add(row)
        session.commit()


def test_a_mail_whose_picture_cannot_be_made_goes_as_text(server: Server) -> None:
    alice = _first_move(server)
    with session_for(server.engine) as session:
        stored = session.exec(select(Move)).one()
        stored.text = "not a quarto move"  # the replay for the picture fails
        session.add(stored)
        session.commit()
    server.send(alice, "help")
    _set_last_order(server, "not json")
    server.send(alice, "help")
    _set_last_order(server, '{"reader": null, "pictures": [[1, 0]]}')
    mails = sent_mail(server)
    assert len(mails) == 4  # two board mails, two answers to help
    for sent in mails:
        assert parsed(sent).get_content_type() == "text/plain", (sent.subject, sent.id)
        assert sent.body.strip()


def test_one_position_is_drawn_once_for_all_its_readers(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    pictures = mail_html.Pictures()
    monkeypatch.setattr(mail_html, "PICTURES", pictures)
    alice = server.signup("alice")
    server.signup("bob")
    carol = server.signup("carol")
    server.send(alice, "quarto challenge alice bob")
    server.send(carol, "quarto subscribe 101 carol secret")
    sent_mail(server)
    drawn = pictures.drawn
    move = legal_texts(server, "quarto")[0]
    assert server.send(alice, f"quarto move 101 alice secret {move}") == "done"
    mails = sent_mail(server)
    assert len(mails) == 3
    assert len({png_of(m) for m in mails}) == 1
    assert pictures.drawn == drawn + 1
    # A hidden setup is drawn for each seat that sees it differently.
    server.send(alice, "quadrupel-points challenge alice bob")
    server.send(carol, "quadrupel subscribe 101 carol secret")
    sent_mail(server)
    drawn = pictures.drawn
    assert server.send(alice, f"quadrupel move 101 alice secret {BLACK_SETUP}") == "done"
    assert len(sent_mail(server)) == 3
    assert pictures.drawn == drawn + 3  # alice's seat, bob's seat, and the observer's


def test_the_next_position_replays_one_move(monkeypatch: pytest.MonkeyPatch) -> None:
    game = GAMES["quadrature"]
    state, moves = game.new_state(), []
    for _ in range(6):
        move = game.legal_moves(state)[0]
        moves.append(game.format_move(state, move))
        state = game.apply(state, move)
    replayed: list[int] = []

    def counted(rules: AnyGame, options: dict[str, str], texts: Sequence[str]) -> State:
        replayed.append(len(texts))
        return replay(rules, options, texts)

    monkeypatch.setattr(mail_html, "replay", counted)
    pictures = mail_html.Pictures()
    for upto in (5, 6):
        drawing = mail_html.Drawing(
            game, (), tuple(moves[:upto]), None, "Board 101", picture_words()
        )
        assert pictures.picture(drawing).png.startswith(b"\x89PNG")
    assert replayed == [4]  # the position before move 5; move 6 starts from move 5's
    assert pictures.drawn == 2


def test_a_claim_reads_its_readers_formats_in_one_query(server: Server) -> None:
    """The sender reads the formats of every reader of the mails it claims at once with
    one query (it read them mail by mail, which cost it as much as reading the boards),
    and each reader still gets the format he chose, changed after the mail was queued."""
    players = [server.signup(name) for name in ("alice", "bob", "carol", "dave")]
    alice, bob, carol, dave = players
    server.send(alice, "quarto challenge alice bob")
    server.send(carol, "quarto challenge carol dave")
    sent_mail(server)
    server.send(bob, "set bob secret format text")
    sent_mail(server)
    for board, (first, name) in enumerate(((alice, "alice"), (carol, "carol")), 101):
        move = legal_texts(server, "quarto", str(board))[0]
        assert server.send(first, f"quarto move {board} {name} secret {move}") == "done"
    server.send(dave, "set dave secret format words")  # after his board mail was queued
    statements: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        statements.append(statement)

    event.listen(server.engine, "before_cursor_execute", seen)
    try:
        mails = {m.to[0]: m for m in sent_mail(server) if "Board" in m.subject}
    finally:
        event.remove(server.engine, "before_cursor_execute", seen)
    assert sorted(mails) == sorted(players)
    assert sum("FROM mail_preferences" in s for s in statements) == 1
    for who in (alice, carol):
        check_html_mail(mails[who], pictures=1)
    for who in (bob, dave):
        assert parsed(mails[who]).get_content_type() == "text/plain"

"""Boards in words and questions by mail (issue 26): `set ... format words` changes the
board mails, `ask` answers from the Subject and from a reply, and whole games are played
from `ask moves` answers alone (from the words board mails: test_words_games.py)."""

from __future__ import annotations

import random
import re
import time
from dataclasses import replace
from datetime import timedelta

import pytest

from pbm import jobs
from tests.server.conftest import Sent, Server, board_row, legal_texts, seat_to_move


def flat(mail: Sent) -> str:
    """The body as one line: the words are folded at 72 columns."""
    return " ".join(mail.body.split())


def newest_board_mail(server: Server, address: str) -> Sent:
    return [m for m in server.outbox() if address in m.to and "Board 101" in m.subject][-1]


def reply(server: Server, mail: Sent, sender: str, body: str) -> str:
    """`sender` answers `mail` as a mail program does, to its Reply-To."""
    assert mail.mail.reply_to is not None
    message_id = mail.mail.message_id or ""
    headers = {"In-Reply-To": message_id, "References": message_id}
    return server.send(sender, "Re: " + mail.subject, body, to=mail.mail.reply_to, headers=headers)


def test_format_words_writes_the_board_in_sentences(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "set alice secret format words")
    (answer,) = server.new_mail()
    assert "boards in words" in answer.body
    server.send(alice, "quarto challenge alice bob")
    mails = {m.to[0]: m for m in server.new_mail()}
    assert "Pieces on the board, 0: none." in mails[alice].body
    assert "Unused pieces (16):" in mails[alice].body
    assert "Pieces on the board" not in mails[bob].body  # bob's board is drawn
    assert "+---" in mails[bob].body or "|" in mails[bob].body


def test_a_refusal_shows_a_words_reader_his_board_in_words(server: Server) -> None:
    """The board under an error mail was drawn in characters for a player who asked
    for every board in sentences."""
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "set alice secret format words")
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    server.send(alice, "quarto move 101 alice secret zz")
    [err] = server.new_mail()
    assert err.subject == "Quarto Board 101 Error"
    assert "Pieces on the board, 0: none." in err.body
    assert "+---" not in err.body


def test_preview_reminder_and_digest_write_the_board_in_words_too(server: Server) -> None:
    """A submitted move's preview, the reminder and the daily digest drew the board in
    characters for a player who asked for every board in sentences."""
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(bob, "set bob secret format words")
    server.send(bob, "digest bob secret on")
    server.send(alice, "quarto challenge alice bob")
    server.send(alice, "quarto move 101 alice secret give SDQF")
    server.new_mail()
    server.send(bob, "quarto submit 101 bob secret a1 SDQH")
    [preview] = server.new_mail()
    assert preview.subject == "Submit of Quarto Board 101"
    server.clock.advance(timedelta(days=8))
    jobs.run_due(server.engine, server.clock, server.config)
    mails = {m.subject: m for m in server.to(bob, server.new_mail())}
    nag, digest = mails["Nag: Quarto Board 101 bob"], mails["Your move summary"]
    assert "Pieces on the board, 1: a1 SDQF" in flat(preview)
    for mail in (preview, nag, digest):
        assert "+---" not in mail.body, mail.subject
    assert "Pieces on the board, 0: none." in nag.body
    assert "Pieces on the board, 0: none." in digest.body


def test_ask_without_the_board_says_it_comes_first(server: Server) -> None:
    """`quarto ask threats` said only "Quarto board threats not found"."""
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    server.send(alice, "quarto ask threats")
    [err] = server.new_mail()
    said = flat(err)
    assert "Quarto board threats not found: the board number comes first, e.g." in said
    assert '"quarto ask 101 threats".' in said
    assert "Usage: quarto ask board QUESTION..." in said


def test_ask_from_the_subject_and_from_a_reply(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    assert server.send(alice, "quarto move 101 alice secret give TLRH") == "done"
    assert server.send("bob@players.example", "quarto move 101 bob secret c3 SDQF") == "done"
    server.new_mail()
    server.send(alice, "quarto ask 101 c3")
    (answer,) = server.new_mail()
    assert "c3: Pieces on the board, TLRH: tall, light, round, hollow." in flat(answer)
    server.send(alice, "quarto ask 101 a1")
    assert "a1 is empty." in server.new_mail()[0].body
    server.send(alice, "quarto ask 101 last 2")
    said = flat(server.new_mail()[0])
    assert "1 alice give TLRH" in said and "2 bob c3 SDQF" in said
    server.send(alice, "quarto ask 101 moves a1")
    said = flat(server.new_mail()[0])
    assert "alice to move has 14 moves with a1: a1 " in said
    # From a reply to a board mail: no board number, no password.
    mail = newest_board_mail(server, alice)
    assert reply(server, mail, alice, "ask where\n") == "done"
    (answer,) = server.new_mail()
    assert "Pieces on the board, 1: c3 TLRH" in flat(answer)
    assert board_row(server, "quarto").move_count == 2  # a question is no move


def test_ask_says_what_was_wrong(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    for question, said in (
        ("", "Ask a question after the board number"),
        ("colour", '"colour" is not a question I know'),
        ("last many", "Write the number of moves after last"),
        ("moves up", '"up" is not a square'),
        ("z9", "z9 is not on this board."),
    ):
        server.send(alice, f"quarto ask 101 {question}".rstrip())
        (answer,) = server.new_mail()
        assert said in flat(answer), (question, answer.body)


def test_quarto_threats_name_the_lines_and_pieces(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    # Three tall pieces on row 1, the fourth square empty.
    for who, text in (
        (alice, "give TLRH"),
        (bob, "a1 TLRF"),
        (alice, "b1 TLQH"),
        (bob, "c1 SDQF"),
    ):
        userid = who.partition("@")[0]
        assert server.send(who, f"quarto move 101 {userid} secret {text}") == "done"
    server.send(alice, "quarto ask 101 threats")
    said = flat(server.new_mail()[-1])
    assert "row 1 is one piece short at d1, all tall or all light" in said, said
    completing = said.partition("completed by: ")[2].partition(".")[0].split()
    assert completing and all(code[0] == "T" or code[1] == "L" for code in completing)
    assert "SDQF" not in completing  # the piece to place is short and dark: it does not


def test_quad_threats_by_mail_in_words_and_from_a_reply(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(bob, "set bob secret format words")
    server.send(alice, "quad challenge alice bob")
    for who, text in ((alice, "a1"), (bob, "h8"), (alice, "b1"), (bob, "h7"), (alice, "c1")):
        userid = who.partition("@")[0]
        assert server.send(who, f"quad move 101 {userid} secret {text}") == "done"
    server.new_mail()
    server.send(alice, "quad ask 101 threats")
    said = flat(server.new_mail()[-1])
    assert said.startswith("bob (Black) has no four in reach."), said
    assert "alice (White) makes a four with: d1." in said
    # bob, who reads boards in words, asks the same from a reply: the same sentences.
    assert reply(server, newest_board_mail(server, bob), bob, "ask threats\n") == "done"
    assert "alice (White) makes a four with: d1." in flat(server.new_mail()[-1])


def test_every_game_answers_every_question(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    addresses = {"alice": alice, "bob": bob}
    board = 101
    for game in ("quadrature", "quadrupel-points", "quad", "quarod"):
        server.clock.advance(timedelta(hours=2))  # a fresh hour's reply budget
        server.send(alice, f"{game} challenge alice bob")
        name = game.partition("-")[0]
        for _ in range(4):
            row = board_row(server, name, str(board))
            userid = ("alice", "bob")[seat_to_move(row)]
            move = legal_texts(server, name, str(board))[0]
            assert (
                server.send(addresses[userid], f"{name} move {board} {userid} secret {move}")
                == "done"
            )
        server.new_mail()
        for question, said in (
            ("where black", "Black"),
            ("moves", " to move has "),
            ("threats", "alice ("),
            ("last 3", "Moves: 2 "),
            ("a1", "a1"),
        ):
            server.send(alice, f"{name} ask {board} {question}")
            (answer,) = server.new_mail()
            text = flat(answer)
            assert said in text and "Usage:" not in text, (game, question, text)


PROOF_GAMES = {
    "quarto": "quarto challenge alice bob",
    "quarto-advanced": "quarto challenge -advanced=yes alice bob",
    "quadrature": "quadrature challenge alice bob",
    "quadrupel": "quadrupel challenge alice bob",
    "quadrupel-combination": "quadrupel-combination challenge alice bob",
    "quad": "quad challenge alice bob",
    "quarod": "quarod challenge alice bob",
}


@pytest.mark.parametrize("game", PROOF_GAMES)
def test_a_whole_game_from_the_ask_answers_alone(server: Server, game: str) -> None:
    """The player learns whose turn it is and the legal moves from `ask moves` answers
    alone, plays one of them at random, and the game reaches its end."""
    server.config = replace(
        server.config, replies_per_address_hour=100_000, player_replies_per_hour=100_000
    )
    addresses = {u: server.signup(u) for u in ("alice", "bob")}
    assert server.send(addresses["alice"], PROOF_GAMES[game]) == "done"
    name = game.partition("-")[0]
    server.new_mail()
    rng = random.Random(26)
    started = time.monotonic()  # a bound on a runaway loop, not a speed target
    for _ in range(500):
        assert time.monotonic() - started < 900, "the game ran away"
        server.send(addresses["alice"], f"{name} ask 101 moves")
        (answer,) = server.new_mail()
        text = flat(answer)
        if "The game is over" in text:
            break
        found = re.search(r"(\w+) to move has \d+ moves: (.*?)(?: and \d+ more)?\.$", text)
        assert found is not None, text
        mover, moves = found.group(1), found.group(2).split(", ")
        move = rng.choice(moves)
        said = server.send(addresses[mover], f"{name} move 101 {mover} secret {move}")
        assert said == "done", (move, said)
        server.new_mail()
    assert board_row(server, name).status == "finished"

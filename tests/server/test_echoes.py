"""Player input quoted back in a reply is cut to about 100 characters with "...", and
an answer to a board mail whose first line is no move is told where the move goes."""

from __future__ import annotations

import pytest

from pbm.texts import ECHO_MAX, echoed
from tests.server.conftest import Server
from tests.server.test_reply_moves import answer

LONG = " ".join(f"word{n}" for n in range(600))  # about 4,000 characters


def test_echoed_cuts_long_input_on_one_line() -> None:
    assert echoed("b2 SDQF") == "b2 SDQF"
    assert echoed("a\n b") == "a b"
    cut = echoed(LONG)
    assert cut.endswith("...") and len(cut) <= ECHO_MAX + 3
    assert cut.startswith("word0 word1 ")


def _players(server: Server) -> tuple[str, str]:
    alice, bob = server.signup("alice"), server.signup("bob")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    server.new_mail()
    return alice, bob


def test_a_long_comment_in_the_subject_is_not_echoed_in_full(server: Server) -> None:
    alice, _ = _players(server)
    assert server.send(alice, f"quarto move 101 alice secret b2 SDQF {LONG}") == "done"
    [reply] = server.new_mail()
    head = reply.body.split("Original message follows:")[0]
    assert "word599" not in head and "word300" not in head
    assert head.count("...") >= 2  # the refusal's quote and "(Your command: ...)"
    assert "How moves are written:" in head
    assert len(head) < 3000, len(head)


def test_a_long_unknown_word_is_cut(server: Server) -> None:
    alice, _ = _players(server)
    word = "x" * 3000
    assert server.send(alice, f"quarto {word} 101 alice secret") == "done"
    [reply] = server.new_mail()
    head = reply.body.split("Original message follows:")[0]
    assert "x" * 101 not in head
    assert "Unknown command 'quarto" in head


def test_a_reply_whose_first_line_is_no_move_says_where_the_move_goes(server: Server) -> None:
    alice, _ = _players(server)
    [board_mail] = [m for m in server.outbox() if alice in m.to and "Board 101" in m.subject]
    assert answer(server, board_mail, alice, "Hi bob, here is my move:\ngive TLRH\n") == "done"
    [reply] = server.new_mail()
    assert "'Hi bob, here is my move:' is not a move" in reply.body
    assert "read from its first line: write the move" in reply.body


def test_a_full_command_with_a_bad_move_gets_no_first_line_hint(server: Server) -> None:
    alice, _ = _players(server)
    assert server.send(alice, "quarto move 101 alice secret hello") == "done"
    [reply] = server.new_mail()
    assert "'hello' is not a move" in reply.body
    assert "first line" not in reply.body


@pytest.mark.parametrize(
    "subject",
    [
        "quarto move 101 {word} secret b2",  # an unknown userid
        "quarto show {word}",  # no such board or player
        "help {word}",
        "change {word} alice secret",
        "all show alice {word}",
        "quarto limit alice secret {word}",
        "signup carol secret {word}@x.example",
    ],
)
def test_a_long_word_is_cut_wherever_it_is_quoted(server: Server, subject: str) -> None:
    _players(server)
    word = "y" * 3000
    assert server.send("alice@players.example", subject.format(word=word)) == "done"
    [reply] = server.new_mail()
    head = reply.body.split("Original message follows:")[0]
    assert "y" * 101 not in head, head[:500]

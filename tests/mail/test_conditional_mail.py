"""Conditional moves through `pbm serve` on the real stack: bob answers his board mail
with an `if ... then ...` line (the reply token stands for board, userid and password),
alice moves, and both read the board with her move and bob's answer in their IMAP
mailboxes; only bob's copy says his answer was conditional."""

from __future__ import annotations

import email.message

import pytest

from .conftest import PbmServer, plain_text, sign_up

pytestmark = [pytest.mark.mailstack, pytest.mark.slow]

PBM = "pbm@example.test"


def test_a_tree_by_reply_mail_answers_the_opponent_at_once(pbm_server: PbmServer) -> None:
    pbm_server.start()
    stack = pbm_server.stack
    boxes = sign_up(pbm_server, "alice", "bob")
    stack.send("alice", PBM, "quarto challenge alice bob")
    [new] = boxes["bob"].wait_for(lambda m: str(m["Subject"]) == "New Quarto Board 101 alice")

    # bob answers the board mail: moves that hold spaces are told apart by if/then.
    stack.send(
        "bob", str(new["Reply-To"]), "Re: New Quarto Board 101 alice", "if give TLRH then b2 SDQF\n"
    )
    set_ = boxes["bob"].wait_for(lambda m: "Your conditional moves are set" in plain_text(m))
    assert set_, f"{boxes['bob'].subjects()}\n{pbm_server.log()}"
    assert "  1. give TLRH; b2 SDQF" in plain_text(set_[0])

    stack.send("alice", PBM, "quarto move 101 alice secret give TLRH")

    def both_moves(mail: email.message.EmailMessage) -> bool:
        body = plain_text(mail)
        return "1 give TLRH" in body and "2 b2 SDQF" in body

    for user, box in boxes.items():
        found = box.wait_for(both_moves)
        assert len(found) == 1, f"{user}: {box.subjects()}\n{pbm_server.log()}"
        [board] = found
        assert str(board["Subject"]) == "Quarto Board 101 alice"
        assert "It is alice's turn." in plain_text(board)
        played = "Your conditional move b2 SDQF was played (move 2), answering give TLRH."
        assert (played in plain_text(board)) == (user == "bob")
        if user == "alice":
            assert "onditional" not in plain_text(board)
    # alice's mailbox: the new board and the board of the two moves; bob's: those and
    # the answer to his conditional moves. Nothing else came.
    assert [str(m["Subject"]) for m in boxes["alice"].mail[1:]] == [
        "New Quarto Board 101 alice",
        "Quarto Board 101 alice",
    ]
    assert [str(m["Subject"]) for m in boxes["bob"].mail[1:]] == [
        "New Quarto Board 101 alice",
        "Quarto Board 101 alice",
        "Quarto Board 101 alice",
    ]

"""A reply to an older board mail, through `pbm serve` on the real stack: bob answers
the new-board mail after alice has already moved, and Postfix delivers his reply to
its `pbm+TOKEN.0@` address; pbm refuses the move with the board as it is now, and his
answer to the newest mail plays."""

from __future__ import annotations

import email.message

import pytest

from .conftest import PbmServer, plain_text, sign_up

pytestmark = [pytest.mark.mailstack, pytest.mark.slow]

PBM = "pbm@example.test"


def test_a_move_answering_an_older_board_mail_is_refused(pbm_server: PbmServer) -> None:
    pbm_server.start()
    stack = pbm_server.stack
    boxes = sign_up(pbm_server, "alice", "bob")
    stack.send("alice", PBM, "quarto challenge alice bob")
    [new] = boxes["bob"].wait_for(lambda m: str(m["Subject"]) == "New Quarto Board 101 alice")
    assert str(new["Reply-To"]).endswith(".0@example.test")
    stack.send("alice", PBM, "quarto move 101 alice secret give TLRH")
    [moved] = boxes["bob"].wait_for(lambda m: "1 give TLRH" in plain_text(m))
    assert str(moved["Reply-To"]).endswith(".1@example.test")

    def reply(to: email.message.EmailMessage) -> None:
        ident = str(to["Message-ID"])
        headers = {"In-Reply-To": ident, "References": ident}
        stack.send(
            "bob", str(to["Reply-To"]), "Re: " + str(to["Subject"]), "b2 SDQF\n", headers=headers
        )

    reply(new)
    found = boxes["bob"].wait_for(lambda m: "was not played" in plain_text(m))
    assert found, f"{boxes['bob'].subjects()}\n{pbm_server.log()}"
    [refusal] = found
    assert str(refusal["Subject"]) == "Quarto Board 101 Error"
    flat = " ".join(plain_text(refusal).split())
    assert "it answers the board mail sent when the board started" in flat
    assert "write b2 SDQF#2 to play it as move 2" in flat
    assert "Summary of Quarto Board 101" in flat and "1 give TLRH" in flat
    assert "2 b2 SDQF" not in flat

    reply(moved)
    for user, box in boxes.items():
        played = box.wait_for(lambda m: "2 b2 SDQF" in plain_text(m))
        assert len(played) == 1, f"{user}: {box.subjects()}\n{pbm_server.log()}"

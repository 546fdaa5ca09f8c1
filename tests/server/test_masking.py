"""Passwords in echoed commands are written ******, found from each command's usage."""

from __future__ import annotations

import logging

import pytest

from pbm.commands.masking import mask_line, mask_text
from tests.server.conftest import Server
from tests.server.test_reply_moves import answer


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        ("quarto move 101 alice sekret b1 TLQF", "quarto move 101 alice ****** b1 TLQF"),
        ("Quarto MOVE 101#3 alice sekret b1", "Quarto MOVE 101#3 alice ****** b1"),
        ("quadrupel-added mv 7 bob pw c3-c2", "quadrupel-added mv 7 bob ****** c3-c2"),
        ("quarto queue 101 alice pw b2 SDQF", "quarto queue 101 alice ****** b2 SDQF"),
        ("quarto resign 101 alice pw **", "quarto resign 101 alice ****** **"),
        ("signup alice secret alice@x.example", "signup alice ****** alice@x.example"),
        ("change password alice old new", "change password alice ****** ******"),
        ("change address alice pw a@x.example", "change address alice ****** a@x.example"),
        ("quarto subscribe 101 alice pw", "quarto subscribe 101 alice ******"),
        ("quarto subscribe alice pw 101 102", "quarto subscribe alice ****** 101 102"),
        ("quarto accept alice pw", "quarto accept alice ******"),
        ("quarto accept 101 alice pw", "quarto accept 101 alice ******"),
        (
            "tournament create alice pw spring quarto",
            "tournament create alice ****** spring quarto",
        ),
        ("tournament join spring alice pw", "tournament join spring alice ******"),
        ("vacation alice pw begin", "vacation alice ****** begin"),
        ("move 101 alice pw e4", "move 101 alice ****** e4"),  # the game left out
        ("chess move 101 alice pw e4", "chess move 101 alice ****** e4"),  # no such game
        ("quarto mvoe2 101 alice pw b2", "quarto mvoe2 101 alice ****** b2"),  # misspelt verb
        ("sigup alice pw", "sigup alice ******"),
        # an unknown verb after a game: the password where every game command puts it
        ("quarto plce 103 frank secret a1 SDQF", "quarto plce 103 frank ****** a1 SDQF"),
        ("quarto plc 101 alice pw b2", "quarto plc 101 alice ****** b2"),
        ("qarto plce 101 alice pw b2", "qarto plce 101 alice ****** b2"),
        ("quarto shw 101 alice pw", "quarto shw 101 alice ******"),
        ("quarto 101 alice pw b2", "quarto 101 alice ****** b2"),  # the verb left out
        ("mvo 101 alice pw b2", "mvo 101 alice ****** b2"),
        ("chnage password alice old new", "chnage password alice ****** ******"),
        # the words players write for propose, undo and reject, of one word or two
        ("quarto offer draw 101 alice secret", "quarto offer draw 101 alice ******"),
        ("quarto draw offer 101 alice secret", "quarto draw offer 101 alice ******"),
        ("quarto take back 101 alice secret", "quarto take back 101 alice ******"),
        ("quarto takeback 101 alice secret", "quarto takeback 101 alice ******"),
        ("quarto decline 101 alice secret", "quarto decline 101 alice ******"),
        ("offer draw 101 alice secret", "offer draw 101 alice ******"),
        ("take back 101 alice secret", "take back 101 alice ******"),
        # a board number mistyped or left out: the password is still found
        ("quarto move #101 alice pw b2 SDQF", "quarto move #101 alice ****** b2 SDQF"),
        ("quarto move 101. alice pw b2", "quarto move 101. alice ****** b2"),
        ("quarto resign alice pw", "quarto resign alice ******"),
        # ... a first word that could be the userid: both readings masked
        ("quarto move abc alice pw b2", "quarto move abc ****** ****** b2"),
        ("quarto move alice pw b2 SDQF", "quarto move alice ****** ****** SDQF"),
        # nothing secret
        ("quarto challenge -advanced=yes alice bob", "quarto challenge -advanced=yes alice bob"),
        ("quarto show 101 102", "quarto show 101 102"),
        ("help quarto move", "help quarto move"),
        # a command whose usage has an empty form (`help`): the mail failed, a bug
        ("quarto help x y z", "quarto help x y z"),
        ("** 103 help help help", "** 103 help help help"),
        ("quarto shw 101 102", "quarto shw 101 102"),
        # a misspelt verb whose own form the words fit: its places, even none
        ("quarto chalenge alice bob", "quarto chalenge alice bob"),
        ("chalenge -advanced=yes alice bob", "chalenge -advanced=yes alice bob"),
        ("quarto gmes alice bob", "quarto gmes alice bob"),
        ("quarto histroy alice bob", "quarto histroy alice bob"),
        # ... and one whose form they do not fit: where the scope puts the password
        ("quarto chalenge alice pw bob", "quarto chalenge alice ****** bob"),
        ("hello there friend", "hello there friend"),
        # moves and reply forms of every game: never a password in them
        ("b2 SDQF", "b2 SDQF"),
        ("give TLRH", "give TLRH"),
        ("move b2 SDQF", "move b2 SDQF"),
        ("setup c5=1 d4=2 d5=3 c3=4", "setup c5=1 d4=2 d5=3 c3=4"),
        ("move setup c4=1 d4=2 d5=3 c3=4", "move setup c4=1 d4=2 d5=3 c3=4"),
        ("d5-b5-b3", "d5-b5-b3"),
        ("Bc3+Wc4", "Bc3+Wc4"),
        ("c3<>c4", "c3<>c4"),
        ("d4-d5", "d4-d5"),
        ("swap", "swap"),
        ("resign", "resign"),
        ("", ""),
    ],
)
def test_mask_line(line: str, masked: str) -> None:
    assert mask_line(line) == masked


def test_mask_text_masks_the_subject_and_command_lines_of_a_quote() -> None:
    quote = (
        "From: alice@x.example\n"
        "Subject: Re: AW: quarto move 101 alice sekret b2\n"
        "Date: Sun, 22 Nov 2026 02:41:00 +0000\n"
        "\n"
        "quarto move 101 alice sekret b2\n"
        "  my comment: move fast, alice secret plans\n"
        "signup bob hunter2\n"
    )
    assert mask_text(quote) == (
        "From: alice@x.example\n"
        "Subject: Re: AW: quarto move 101 alice ****** b2\n"
        "Date: Sun, 22 Nov 2026 02:41:00 +0000\n"
        "\n"
        "quarto move 101 alice ****** b2\n"
        "  my comment: move fast, alice secret plans\n"
        "signup bob ******\n"
    )


def test_an_unknown_verb_is_masked_in_the_reply_the_quote_and_the_log(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    alice = server.signup("alice")
    with caplog.at_level(logging.INFO):
        assert server.send(alice, "quarto plce 103 frank hunter2 a1 SDQF") == "done"
    [reply] = server.new_mail()
    assert "(Your command: quarto plce 103 frank ****** a1 SDQF)" in reply.body
    assert "> Subject: quarto plce 103 frank ****** a1 SDQF" in reply.body
    assert "hunter2" not in reply.raw.decode()
    logged = [r.getMessage() for r in caplog.records]
    assert any("plce 103 frank ******" in line for line in logged)
    assert not any("hunter2" in line for line in logged)


def test_a_mistyped_board_number_does_not_echo_the_password(server: Server) -> None:
    """`quarto move #101 alice hunter2 ...` was refused with the password echoed as
    written in "(Your command: ...)" and the quoted Subject."""
    alice = server.signup("alice")
    assert server.send(alice, "quarto move #101 alice hunter2 give TLRH") == "done"
    [reply] = server.new_mail()
    assert "(Your command: quarto move #101 alice ****** give TLRH)" in reply.body
    assert "hunter2" not in reply.raw.decode()


def test_a_verb_of_two_words_is_masked_in_the_reply(server: Server) -> None:
    alice = server.signup("alice")
    assert server.send(alice, "quarto offer draw 101 alice hunter2") == "done"
    [reply] = server.new_mail()
    assert "(Your command: quarto offer draw 101 alice ******)" in reply.body
    assert "hunter2" not in reply.raw.decode()


def test_a_hidden_setup_answered_by_reply_is_echoed_as_written(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    assert server.send(alice, "quadrupel-points challenge alice bob") == "done"
    [board_mail] = [m for m in server.new_mail() if alice in m.to]
    # c5 is no square of alice's setup: refused, and the setup is shown as she wrote it.
    assert answer(server, board_mail, alice, "setup c5=1 d4=2 d5=3 c3=4\n") == "done"
    [reply] = server.new_mail()
    assert "(Your command: setup c5=1 d4=2 d5=3 c3=4)" in reply.body
    assert "******" not in reply.body

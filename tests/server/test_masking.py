"""Passwords in echoed commands are written ******, found from each command's usage."""

from __future__ import annotations

import pytest

from pbm.commands.masking import mask_line, mask_text


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
        # nothing secret
        ("quarto challenge -advanced=yes alice bob", "quarto challenge -advanced=yes alice bob"),
        ("quarto show 101 102", "quarto show 101 102"),
        ("help quarto move", "help quarto move"),
        ("b2 SDQF", "b2 SDQF"),
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

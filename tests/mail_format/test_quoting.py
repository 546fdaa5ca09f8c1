"""fresh_text: what counts as quoted text, reply headers and signatures."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.mail.quoting import fresh_text, quote_lines

BOARD_QUOTE = (
    ">      a b c d e f g h i j k\n"
    "> 11  . . . . , , , . . . .  11\n"
    "> 10  . . . . , , , . . . .  10\n"
    ">  6  , , , , . o . , , , ,   6\n"
)


def test_plain_text_is_kept_with_indentation_and_inner_blank_lines() -> None:
    text = "e3-e4\n  an indented comment\n\n\nsecond paragraph  \n"
    assert fresh_text(text) == "e3-e4\n  an indented comment\n\n\nsecond paragraph"


def test_quoted_board_does_not_leak() -> None:
    text = "f6-f5\n\n" + BOARD_QUOTE + "\nNice game.\n"
    assert fresh_text(text) == "f6-f5\n\nNice game."


def test_nested_and_unspaced_quotes_are_dropped() -> None:
    assert fresh_text(">> old\n>older\n> \nnew") == "new"


def test_indented_quote_marker_is_not_a_quote() -> None:
    # In `multiple` mails an indented line is a comment, whatever it starts with.
    assert fresh_text("show 101\n > not a quote") == "show 101\n > not a quote"


@pytest.mark.parametrize(
    "attribution",
    [
        "On Sun, 22 Nov 2026 at 04:12, Richard's PBeM Server <pbm@example.org> wrote:",
        "On 22/11/2026 04:12, Richard's PBeM Server wrote:",
        "On Sun, Nov 22, 2026 at 4:12 AM Richard's PBeM Server <\npbm@example.org> wrote:",
        "On Sun, Nov 22, 2026 at 4:12 AM\nRichard's PBeM Server\n<pbm@example.org> wrote:",
        "Am 22.11.2026 um 04:12 schrieb Richard's PBeM Server:",
        "Am So., 22. Nov. 2026 um 04:12 Uhr schrieb Richard's PBeM Server <\npbm@example.org>:",
        "Le dim. 22 nov. 2026 à 04:12, Richard's PBeM Server <pbm@example.org> a écrit :",
        "El dom, 22 nov 2026 a las 4:12, Richard (<pbm@example.org>) escribió:",
        "Il giorno dom 22 nov 2026 alle ore 04:12 Richard <pbm@example.org> ha scritto:",
        "Op zo 22 nov. 2026 om 04:12 schreef Richard <pbm@example.org>:",
        "Em dom., 22 de nov. de 2026 às 04:12, Richard <pbm@example.org> escreveu:",
        "Den sön 22 nov. 2026 kl 04:12 skrev Richard <pbm@example.org>:",
        "Richard's PBeM Server <pbm@example.org> wrote:",
        "вс, 22 нояб. 2026 г. в 04:12, Richard <pbm@example.org>:",
    ],
)
def test_attribution_lines_are_dropped(attribution: str) -> None:
    text = f"e3-e4\n\n{attribution}\n> Summary of Quadrature Board 101\n>\n{BOARD_QUOTE}"
    assert fresh_text(text) == "e3-e4"


def test_bottom_posting_keeps_the_answer_below_the_quote() -> None:
    text = (
        "On 22/11/2026 04:12, Richard's PBeM Server wrote:\n"
        "> It is bob's turn.\n" + BOARD_QUOTE + "\ng7-g6\n\nYour move.\n"
    )
    assert fresh_text(text) == "g7-g6\n\nYour move."


def test_interleaved_reply_keeps_each_answer_apart() -> None:
    text = "> question one?\nanswer one\n> question two?\n\n\n> more\nanswer two"
    assert fresh_text(text) == "answer one\n\nanswer two"


def test_attribution_without_following_quote_ends_fresh_text() -> None:
    # Some webmails put the original below the attribution without "> ".
    text = "e3-e4\n\nOn Sun, 22 Nov 2026 at 04:12, pbm <pbm@example.org> wrote:\nSummary of..."
    assert fresh_text(text) == "e3-e4"


def test_line_ending_in_colon_is_not_an_attribution_without_a_quote() -> None:
    text = "My plan at 10:30:\nattack the centre"
    assert fresh_text(text) == text


@pytest.mark.parametrize(
    "separator",
    [
        "-----Original Message-----",
        "----- Original Message -----",
        "-------- Original Message --------",
        "-----Ursprüngliche Nachricht-----",
        "-------- Message d'origine --------",
        "---------- Forwarded message ---------",
        "________________________________",
        "Begin forwarded message:",
    ],
)
def test_outlook_separators_end_fresh_text(separator: str) -> None:
    text = f"move c7-c6\n\nthanks\n\n{separator}\nFrom: pbm\nSummary of Quadrature Board 102\n"
    assert fresh_text(text) == "move c7-c6\n\nthanks"


@pytest.mark.parametrize(
    "block",
    [
        "From: Richard's PBeM Server <pbm@example.org>\nSent: Sunday, November 22, 2026 4:12 AM",
        "*From:* pbm <pbm@example.org>\n*Sent:* Sunday, November 22, 2026 4:12 AM",
        "From: pbm@example.org\nTo: erin@corp.example\nDate: Sun, 22 Nov 2026 04:12",
        "Von: pbm <pbm@example.org>\nGesendet: Sonntag, 22. November 2026 04:12",
        "De : pbm <pbm@example.org>\nEnvoyé : dimanche 22 novembre 2026 04:12",
    ],
)
def test_bare_outlook_header_block_ends_fresh_text(block: str) -> None:
    text = f"move c7-c6\n{block}\nSubject: Quadrature Board 102 erin\n\nSummary of ...\n"
    assert fresh_text(text) == "move c7-c6"


def test_from_line_without_sent_is_kept() -> None:
    text = "From: my side of the board it looks lost.\nresign"
    assert fresh_text(text) == text


@pytest.mark.parametrize("separator", ["-- ", "--", "__", "______"])
def test_signature_separators(separator: str) -> None:
    assert fresh_text(f"e3-e4\nnice\n{separator}\nAlice\nhttp://x") == "e3-e4\nnice"


def test_double_dash_inside_text_is_not_a_signature() -> None:
    assert fresh_text("e3-e4 -- a strong move\n---\nok") == "e3-e4 -- a strong move\n---\nok"


@pytest.mark.parametrize(
    "footer",
    [
        "Sent from my iPhone",
        "Sent from my Samsung Galaxy smartphone.",
        "Get Outlook for Android",
        "Sent with Proton Mail secure email.",
        "Sent from Mail for Windows",
        "Von meinem iPhone gesendet",
        "Envoyé de mon iPad",
        "Enviado desde mi iPhone",
    ],
)
def test_mobile_footers_end_fresh_text(footer: str) -> None:
    assert fresh_text(f"d4-d5\n\n{footer}\n\n> quoted") == "d4-d5"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("e3-e4\n\nCheers,\nAlice", "e3-e4"),
        ("e3-e4\n\nBest regards,\nAlice Example\nExample Corp", "e3-e4"),
        ("e3-e4\n\nViele Grüße\nBob", "e3-e4"),
        # A closing glued to the prose above it is part of that prose.
        ("Well played.\nThanks,\nAlice", "Well played.\nThanks,\nAlice"),
        # "Thanks!" with no name after it is a comment, not a closing.
        ("e3-e4\n\nThanks!", "e3-e4\n\nThanks!"),
        # A name line must look like a name, not a command with an address.
        (
            "Cheers,\nsignup alice pw alice@example.com",
            "Cheers,\nsignup alice pw alice@example.com",
        ),
    ],
)
def test_trailing_signoff(text: str, expected: str) -> None:
    assert fresh_text(text) == expected


def test_everything_quoted_gives_empty_text() -> None:
    assert fresh_text("> all\n> quoted\n") == ""


def test_quote_lines() -> None:
    assert quote_lines("From: a\r\n\r\nhi\n") == "> From: a\n>\n> hi"


def test_inline_pgp_signed_message_is_reduced_to_its_text() -> None:
    text = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
        "e3-e4\n- -- not a signature, dash-escaped\n"
        "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEE\n-----END PGP SIGNATURE-----\n"
    )
    assert fresh_text(text) == "e3-e4\n-- not a signature, dash-escaped"


@pytest.mark.parametrize(
    "attribution",
    [
        "On Sun, 22 Nov 2026 at 04:12, pbm wrote:",
        "pbm <pbm@example.org> wrote:",
        "Richard's PBeM Server <\npbm@example.org> wrote:",
        "вс, 22 нояб. 2026 г. в 04:12, Richard <\npbm@example.org>:",
    ],
)
def test_lines_right_above_an_attribution_are_kept(attribution: str) -> None:
    text = f"e3-e4\nnice move\n{attribution}\n> Summary of Quadrature Board 101\n"
    assert fresh_text(text) == "e3-e4\nnice move"


def test_ordinary_sent_sentences_are_kept() -> None:
    text = "e3-e4\nSent with love and a trap on f5.\nmore"
    assert fresh_text(text) == text


line_pool = st.sampled_from(
    [
        "e3-e4", "  indented comment", "", "> quoted", ">> deeper", "-- ", "Cheers,", "Alice",
        "On Sun, 22 Nov 2026 at 04:12, pbm wrote:", "From: pbm <pbm@example.org>",
        "Sent: Sunday", "-----Original Message-----", "Sent from my iPhone",
        "> 11  . . . . , , , . . . .  11", "pbm <", "pbm@example.org> wrote:", "x: y",
    ]
)  # fmt: skip


@given(st.lists(st.one_of(line_pool, st.text(max_size=30)), max_size=30))
def test_fresh_text_invariants(lines: list[str]) -> None:
    text = "\n".join(lines)
    fresh = fresh_text(text)
    out = fresh.split("\n") if fresh else []
    assert not any(line.startswith(">") for line in out)
    assert all(line == line.rstrip() for line in out)
    assert not out or (out[0].strip() and out[-1].strip())
    # Every line of the fresh text is a line of the input, in the same order.
    source = iter(line.rstrip() for line in text.split("\n"))
    assert all(any(line == candidate for candidate in source) for line in out if line)

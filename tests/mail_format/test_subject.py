"""Subjects: RFC 2047 decoding, whitespace folding, reply prefixes and tags."""

from __future__ import annotations

import pytest

from pbm.mail.inbound import parse_message, strip_subject_prefixes


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("Re: Quadrature Board 101 bob **", "Quadrature Board 101 bob **"),
        ("RE: Re: Fwd: quadrature show 101", "quadrature show 101"),
        ("AW: WG: Quadrature Board 101 bob", "Quadrature Board 101 bob"),
        ("SV: VS: Quarto Board 7 frank", "Quarto Board 7 frank"),
        ("Re[2]: Re(3): Re^4: Quarto Board 7 frank", "Quarto Board 7 frank"),
        ("[pbm] Re: [EXTERNAL] quadrature show 101", "quadrature show 101"),
        ("Réf : TR : quadrature show 101", "quadrature show 101"),
        ("quadrature show 101", "quadrature show 101"),
        (
            "Resign is a verb: quadrature resign 101 a b",
            "Resign is a verb: quadrature resign 101 a b",
        ),
        ("Re:", ""),
    ],
)
def test_strip_subject_prefixes(subject: str, expected: str) -> None:
    assert strip_subject_prefixes(subject) == expected


def test_folded_and_encoded_subject_is_one_line() -> None:
    raw = (
        b"From: a@example.com\n"
        b"Subject: Re: =?UTF-8?Q?Quadrature_Board_101_j=C3=B6rg?=\n"
        b"  =?ISO-8859-1?Q?_=E0_toi?=\t  now\n\nx\n"
    )
    mail = parse_message(raw)
    assert mail.subject == "Re: Quadrature Board 101 jörg à toi now"
    assert mail.command_subject == "Quadrature Board 101 jörg à toi now"


def test_unknown_charset_in_encoded_word_still_decodes() -> None:
    mail = parse_message(b"From: a@example.com\nSubject: =?x-unknown?Q?show_101?=\n\nx\n")
    assert mail.subject == "show 101"


def test_missing_subject() -> None:
    mail = parse_message(b"From: a@example.com\n\nquadrature show 101\n")
    assert mail.subject == "" and mail.command_subject == ""

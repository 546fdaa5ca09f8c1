"""Choosing and decoding the body: parts, attachments, charsets, format=flowed."""

from __future__ import annotations

from pbm.mail.body import unflow
from pbm.mail.inbound import parse_message

HEAD = "From: a@example.com\nSubject: x\nMIME-Version: 1.0\n"


def multipart(*parts: str, kind: str = "mixed") -> bytes:
    body = "".join(f"--b\n{part}\n" for part in parts)
    return f'{HEAD}Content-Type: multipart/{kind}; boundary="b"\n\n{body}--b--\n'.encode()


def test_flowed_soft_breaks_are_joined_and_quote_depth_kept() -> None:
    text = "one \ntwo\n> quoted \n> more\n>> deep\n-- \nsig"
    assert unflow(text, delsp=False) == "one two\n> quoted more\n>> deep\n-- \nsig"


def test_flowed_delsp_removes_the_break_space() -> None:
    assert unflow("exam\nple", delsp=True) == "exam\nple"
    assert unflow("exam \nple", delsp=True) == "example"


def test_flowed_space_stuffing_kept_on_unquoted_lines() -> None:
    assert unflow(" From here\n>  indented quote", delsp=False) == " From here\n>  indented quote"


def test_html_is_used_only_without_plain_text() -> None:
    raw = multipart(
        "Content-Type: text/html\n\n<p>html move</p>",
        "Content-Type: text/plain\n\nplain move",
        kind="alternative",
    )
    assert parse_message(raw).text == "plain move"


def test_empty_plain_alternative_falls_back_to_html() -> None:
    raw = multipart(
        "Content-Type: text/plain\n\n   ",
        "Content-Type: text/html\n\n<p>html move</p>",
        kind="alternative",
    )
    assert parse_message(raw).text == "html move"


def test_attachments_and_attached_messages_are_not_the_body() -> None:
    raw = multipart(
        'Content-Type: text/plain\nContent-Disposition: attachment; filename="a.txt"\n\nfile',
        "Content-Type: message/rfc822\n\nFrom: x@y.example\n\nforwarded text",
        "Content-Type: text/plain\n\nthe real body",
    )
    assert parse_message(raw).text == "the real body"


def test_missing_content_type_means_plain_ascii() -> None:
    assert parse_message(b"From: a@example.com\n\nshow 101\n").text == "show 101\n"


def test_rfc2231_charset_parameter_and_unknown_charset() -> None:
    raw = (
        HEAD + "Content-Type: text/plain; charset*=utf-8''utf-8\n"
        "Content-Transfer-Encoding: 8bit\n\ncaf\xc3\xa9\n"
    ).encode("latin-1")
    assert parse_message(raw).text == "café\n"


def test_broken_base64_and_quoted_printable_keep_what_decodes() -> None:
    for encoding, payload in (("base64", "c2hvdyAxMDE=!!"), ("quoted-printable", "show=ZZ 101=")):
        raw = f"{HEAD}Content-Transfer-Encoding: {encoding}\n\n{payload}\n".encode()
        assert parse_message(raw).text.startswith("show")

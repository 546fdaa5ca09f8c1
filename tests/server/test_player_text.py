"""Player text reaches other players without terminal controls or bidi overrides, and
an address holding one is refused with the reason (issue 21, point 7)."""

from __future__ import annotations

import json
import logging
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbm.logfmt import LogfmtFormatter
from tests.server.conftest import SERVER, Sent, Server, board_row, cli_ok

# Each character issue 21 found arriving verbatim, between two words.
CHARS = {
    "esc": "\x1b[2J\x1b[31m",
    "nul": "\x00",
    "bel": "\x07",
    "rlo": "\u202e",
    "lri": "\u2066",
    "rli": "\u2067",
    "fsi": "\u2068",
    "pdi": "\u2069",
    "zwsp": "\u200b",
    "line-separator": "\u2028",
    "paragraph-separator": "\u2029",
}
BARE = ("\x1b", "\x00", "\x07", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200b")
SEPARATORS = ("\u2028", "\u2029")


def _clean(mails: list[Sent]) -> None:
    assert mails
    for mail in mails:
        text = mail.raw.decode("utf-8", "replace") + mail.body + mail.subject
        for char in (*BARE, *SEPARATORS):
            assert char not in text, (repr(char), mail.subject)


@pytest.fixture
def players(server: Server) -> tuple[str, str]:
    alice, bob = server.signup("alice"), server.signup("bob")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    server.new_mail()
    return alice, bob


def _html_only(server: Server, sender: str, subject: str, html: str) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, SERVER, subject
    msg["Message-ID"] = f"<html.{next(server.counter)}@players.example>"
    msg.set_content(html, subtype="html")
    return msg.as_bytes()


@pytest.mark.parametrize("name", sorted(CHARS))
def test_comments_chat_and_messages_reach_others_without_controls(
    server: Server, players: tuple[str, str], name: str
) -> None:
    alice, bob = players
    char = CHARS[name]
    comment = f"good{char}luck"
    assert server.send(alice, "quarto move 101 alice secret give TLRH", comment) == "done"
    [to_bob] = server.to(bob, server.new_mail())
    _clean([to_bob])
    expected = "good\nluck" if char in SEPARATORS else "goodluck"
    assert expected in to_bob.body
    assert server.send(bob, "quarto chat 101 bob secret", f"chat{char}text") == "done"
    _clean(server.new_mail())
    assert server.send(alice, "message alice secret bob", f"private{char}note") == "done"
    _clean(server.new_mail())
    assert server.send(bob, "quarto move 101 bob secret b2 SDQF", comment) == "done"
    _clean(server.new_mail())
    # Stored without a NUL, which PostgreSQL cannot hold (the mail failed there).
    assert "\x00" not in (board_row(server, "quarto").comment or "")


@pytest.mark.parametrize("name", sorted(CHARS))
def test_an_html_only_body_brings_no_controls(
    server: Server, players: tuple[str, str], name: str
) -> None:
    alice, bob = players
    entity = "".join(f"&#x{ord(c):x};" for c in CHARS[name])  # as HTML can write them
    html = f"<html><body><p>html{entity}comment{CHARS[name]}end</p></body></html>"
    raw = _html_only(server, alice, "quarto move 101 alice secret give TLRH", html)
    assert server.process(raw) == "done"
    [to_bob] = server.to(bob, server.new_mail())
    _clean([to_bob])
    assert "html" in to_bob.body and "comment" in to_bob.body


def test_conditional_lines_are_echoed_without_controls(
    server: Server, players: tuple[str, str]
) -> None:
    alice, _ = players
    assert server.send(alice, "quarto move 101 alice secret give TLRH") == "done"
    server.new_mail()
    lines = "\n".join(f"b2 SDQF{c} c3 TLRH{c}" for c in BARE)
    assert server.send(alice, "quarto conditional 101 alice secret", lines) == "done"
    _clean(server.new_mail())


@pytest.mark.parametrize("char", BARE)
def test_an_address_holding_such_a_character_is_refused_with_the_reason(
    server: Server, char: str
) -> None:
    address = f"carol{char}@players.example"
    assert server.send("carol@players.example", f"signup carol secret {address}") == "done"
    [reply] = server.new_mail()
    assert f"U+{ord(char):04X}" in reply.body
    assert "Write the address without it." in " ".join(reply.body.split())
    _clean([reply])
    alice = server.signup("alice")
    assert server.send(alice, f"change address alice secret {address}") == "done"
    [reply] = server.new_mail()
    assert f"U+{ord(char):04X}" in reply.body
    assert server.send(alice, "list") == "done"


def test_the_log_shows_controls_escaped(
    server: Server, players: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    alice, _ = players
    with caplog.at_level(logging.INFO):
        # The refusal quotes the move, and the log line carries the refusal.
        server.send(alice, "quarto move 101 alice secret b2\x1b[2J\u202e\u200b")
    lines = [LogfmtFormatter().format(record) for record in caplog.records]
    assert any("b2\\u001b[2J\\u202e\\u200b" in line for line in lines), lines
    assert not any(c in line for line in lines for c in BARE)


def test_pbm_run_and_the_outbox_show_no_controls(cfg: Path) -> None:
    cli_ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    cli_ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    comment = "have\x1b[2J\u202e fun"
    out = cli_ok("run", "quarto challenge alice bob", "--as", "alice", "--body", comment)
    assert "have fun" in out
    queued = json.loads(cli_ok("mail", "outbox", "--json"))
    for text in [out, *(m["body"] for m in queued), *(m["raw"] for m in queued)]:
        assert "\x1b" not in text and "\u202e" not in text

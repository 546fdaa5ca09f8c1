"""pbm.trust: what a trusted Authentication-Results says of a mail's From, read once
per message, and the reply token it vouches for (or, forged, does not)."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from sqlmodel import func, select

from pbm import trust
from pbm.config import Config
from pbm.mail.authresults import SenderVerdict, sender_verdict
from pbm.mail.inbound import parse_message
from pbm.store.engine import session_for
from pbm.store.models import Move
from tests.server.conftest import Server, legal_texts

MX = "mx.example.org"
PACKAGE = Path(trust.__file__).resolve().parent


def _results(dmarc: str) -> str:
    return f"{MX}; dkim={dmarc} header.d=players.example; dmarc={dmarc} header.from=players.example"


@pytest.mark.parametrize(
    ("dmarc", "failed", "passed"), [("pass", False, True), ("fail", True, False)]
)
def test_sender_trust_reads_the_trusted_results(
    config: Config, dmarc: str, failed: bool, passed: bool
) -> None:
    raw = (
        f"From: alice@players.example\r\nTo: pbm@example.org\r\nSubject: help\r\n"
        f"Message-ID: <t1@players.example>\r\nAuthentication-Results: {_results(dmarc)}\r\n"
        "\r\nhelp\r\n"
    ).encode()
    mail = parse_message(raw)
    found = trust.sender_trust(mail, replace(config, authserv_ids=(MX,)))
    assert (found.verdict.failed, found.dmarc_pass) == (failed, passed)
    # A producer the server does not trust says nothing.
    assert trust.sender_trust(mail, replace(config, authserv_ids=())) == trust.SenderTrust(
        sender_verdict([], []), dmarc_pass=False
    )


def test_a_forged_token_reply_reads_the_results_once(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verdict that marks the sender unverified is the one that refuses the token."""
    server.config = replace(server.config, authserv_ids=(MX,))
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    board_mail = server.to(alice, server.new_mail())[0].mail
    move = legal_texts(server, "quarto")[0]
    calls: list[SenderVerdict] = []

    def counted(values: list[str], trusted: list[str]) -> SenderVerdict:
        calls.append(sender_verdict(values, trusted))
        return calls[-1]

    monkeypatch.setattr(trust, "sender_verdict", counted)
    headers = {"Authentication-Results": _results("fail")}
    server.send(alice, "Re: x", move, to=board_mail.reply_to, headers=headers)
    assert [c.failed for c in calls] == [True]
    with session_for(server.engine) as session:
        assert session.exec(select(func.count()).select_from(Move)).one() == 0
    (refusal,) = server.new_mail()
    assert MX in refusal.body


def test_only_pbm_trust_asks_for_the_verdict() -> None:
    """One reading per message: no other module calls sender_verdict (or dmarc_passed)."""
    callers = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", ""))
        in ("sender_verdict", "dmarc_passed")
    }
    # pbm.mail.authresults defines them (dmarc_passed reads the same headers).
    assert callers - {"mail/authresults.py"} == {"trust.py"}

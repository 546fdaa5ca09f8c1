"""Bounded output (docs/security.md): one answer per message, one board mail per board and
recipient, repeats answered once, a reply budget per address, tokens only where pbm put
them and only from their player, and a trusted sender check that can veto a token."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import select

from pbm.config import Config
from pbm.output_limits import ANSWER_MAX_BYTES
from pbm.store.engine import session_for
from pbm.store.models import BoardRow, Move
from tests.server.conftest import SERVER, Server, legal_texts

VICTIM = "victim@elsewhere.example"
ATTACKS = Path(__file__).resolve().parents[1] / "data" / "mail" / "attacks"


@pytest.fixture
def config(config: Config) -> Config:
    """The server tests' configuration with the shipped reply budget."""
    return replace(config, replies_per_address_hour=Config().replies_per_address_hour)


def _moves(server: Server) -> int:
    with session_for(server.engine) as session:
        return len(list(session.exec(select(Move))))


def test_help_words_repeated_give_one_mail(server: Server) -> None:
    subject = "help " + " ".join(["quarto"] * 2000)
    assert server.send(VICTIM, subject) == "done"
    mails = server.new_mail()
    assert len(mails) == 1
    assert mails[0].to == [VICTIM]
    assert len(mails[0].raw) < ANSWER_MAX_BYTES
    assert "Quarto" in mails[0].body


def test_many_distinct_help_words_count_against_max_commands(server: Server) -> None:
    words = [f"topic{i}" for i in range(120)]
    assert server.send(VICTIM, "help " + " ".join(words)) == "done"
    (mail,) = server.new_mail()
    # 50 topics answered, 70 listed as not run, all in one mail.
    assert mail.body.count("There is no help about") == server.config.max_commands
    assert "topic119" in mail.body
    assert "at most 50 commands" in mail.body


def test_multiple_of_repeated_reads_gives_one_mail(server: Server) -> None:
    server.signup("alice")
    server.signup("bob")
    server.send("alice@players.example", "quarto challenge alice bob")
    server.new_mail()
    body = "\n".join(["quarto show 101", "list quarto", "help quarto quarto"] * 400)
    assert server.send(VICTIM, "multiple", body) == "done"
    mails = server.new_mail()
    assert [m.to for m in mails] == [[VICTIM]]
    assert len(mails[0].raw) <= ANSWER_MAX_BYTES


def test_multiple_of_fifty_help_lines_gives_one_mail(server: Server) -> None:
    line = "help " + " ".join(["quarto", "quad", "quarod"] * 300)
    assert server.send(VICTIM, "multiple", "\n".join([line] * 50)) == "done"
    mails = server.new_mail()
    assert len(mails) == 1 and mails[0].to == [VICTIM]


def test_folded_huge_subject_is_bounded(server: Server) -> None:
    subject = "help " + " ".join("quarto" for _ in range(100_000))
    assert server.send(VICTIM, subject) == "done"
    mails = server.new_mail()
    assert len(mails) == 1
    assert len(mails[0].raw) <= ANSWER_MAX_BYTES


def test_error_replies_quote_at_most_4_kb(server: Server) -> None:
    body = ("x" * 70 + "\n") * 1500  # 106 KB
    assert server.send(VICTIM, "quarto move 101 nobody pw a1", body) == "done"
    (mail,) = server.new_mail()
    assert len(mail.raw) < 12_000


def test_reply_budget_stops_answers_to_one_address(server: Server) -> None:
    budget = server.config.replies_per_address_hour
    for _ in range(budget + 10):
        server.send(VICTIM, "help")
    mails = server.to(VICTIM, server.new_mail())
    # The budget's answers, then one notice saying when answers resume, then silence.
    assert len(mails) == budget + 1 and "not mailed until" in mails[-1].body
    server.clock.advance(timedelta(hours=1, seconds=1))
    server.send(VICTIM, "help")
    assert len(server.to(VICTIM, server.new_mail())) == 1


def test_auto_responder_without_robot_headers_gets_few_replies(server: Server) -> None:
    """A loop: every answer of ours makes the responder mail us again."""
    replies = 0
    subject = "help"
    for _ in range(20):
        server.send("responder@auto.example", subject)
        fresh = server.new_mail()
        replies += len(fresh)
        subject = f"Re: {fresh[0].subject}" if fresh else subject
    assert replies <= server.config.replies_per_address_hour + 1  # and the one notice


def test_board_mails_of_games_played_pass_the_budget(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    # A confirmed player's budget (generous, lowered here): spend it all, and its notice.
    server.config = Config(**{**server.config.__dict__, "player_replies_per_hour": 10})
    for _ in range(server.config.player_replies_per_hour + 1):
        server.send(bob, "help")
    server.new_mail()
    server.send(bob, "help")
    assert server.to(bob, server.new_mail()) == []  # the budget is spent...
    for turn in range(4):
        player, address = ("alice", alice) if turn % 2 == 0 else ("bob", bob)
        move = legal_texts(server, "quarto")[0]
        assert server.send(address, f"quarto move 101 {player} secret {move}") == "done"
        # ...yet every board mail of bob's own game reaches him.
        assert len(server.to(bob, server.new_mail())) == 1


def test_moves_on_boards_give_one_board_mail_per_board_and_reader(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    lines = []
    for board in ("101", "102"):
        move = legal_texts(server, "quarto", board)[0]
        lines += [f"quarto move {board} alice secret {move}", f"quarto chat {board} alice secret"]
        lines.append("  good luck")  # the chat's text, indented under it
    assert server.send(alice, "multiple", "\n".join(lines)) == "done"
    mails = server.new_mail()
    by_reader = sorted((m.to[0], m.subject) for m in mails)
    assert len(by_reader) == len(set(by_reader)) == 4, by_reader  # 2 boards x 2 readers


def test_token_only_in_a_message_id_pbm_issued(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    board_mail = server.to(alice, server.new_mail())[0].mail
    assert board_mail.reply_to is not None and board_mail.message_id is not None
    token = board_mail.reply_to.split("+", 1)[1].split("@", 1)[0]
    move = legal_texts(server, "quarto")[0]
    # Our shape and our host, but never issued: not a token.
    forged = f"<pbm.{token}.0123456789@example.org>"
    assert server.send(alice, "Re: x", move, headers={"In-Reply-To": forged}) == "done"
    assert _moves(server) == 0
    # Any other host: not a token.
    evil = f"<pbm.{token}.{board_mail.message_id[-12:-1]}@evil.host>"
    assert server.send(alice, "Re: x", move, headers={"In-Reply-To": evil}) == "done"
    assert _moves(server) == 0
    # The Message-ID of the board mail pbm sent her: her move.
    server.send(alice, "Re: x", move, headers={"In-Reply-To": board_mail.message_id})
    assert _moves(server) == 1
    assert server.to(bob, server.new_mail())  # bob got the board mail of the move


def test_token_from_another_address_plays_nothing(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    board_mail = server.to(alice, server.new_mail())[0].mail
    move = legal_texts(server, "quarto")[0]
    # Processed (not failed, which would play nothing too), and mallory alone is told.
    assert server.send("mallory@evil.example", "Re: x", move, to=board_mail.reply_to) == "done"
    assert _moves(server) == 0
    [refused] = server.new_mail()
    assert refused.to == ["mallory@evil.example"]
    assert "mallory@evil.example is not one of them" in " ".join(refused.body.split())


def _auth_results(result: str) -> dict[str, str]:
    return {
        "Authentication-Results": f"mx.example.org; spf=pass smtp.mailfrom=players.example; "
        f"dkim={result} header.d=players.example; dmarc={result} header.from=players.example"
    }


def _board_behind_a_trusted_mx(server: Server) -> tuple[str, str, str]:
    """alice's address, her first board mail's reply address and a legal move there, on
    a server that trusts the Authentication-Results of mx.example.org."""
    server.config = replace(server.config, authserv_ids=("mx.example.org",))
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    board_mail = server.to(alice, server.new_mail())[0].mail
    assert board_mail.reply_to is not None
    return alice, board_mail.reply_to, legal_texts(server, "quarto")[0]


def test_trusted_dmarc_fail_vetoes_a_token(server: Server) -> None:
    alice, reply_to, move = _board_behind_a_trusted_mx(server)
    server.send(alice, "Re: x", move, to=reply_to, headers=_auth_results("fail"))
    assert _moves(server) == 0
    (refusal,) = server.new_mail()
    assert "mx.example.org" in refusal.body and "password" in refusal.body
    # The password still works, whatever the check said.
    server.send(alice, f"quarto move 101 alice secret {move}", headers=_auth_results("fail"))
    assert _moves(server) == 1


def test_untrusted_authentication_results_are_ignored(server: Server) -> None:
    alice, reply_to, move = _board_behind_a_trusted_mx(server)
    forged = {
        "Authentication-Results": "evil.example; dmarc=fail header.from=players.example",
    }
    server.send(alice, "Re: x", move, to=reply_to, headers=forged)
    assert _moves(server) == 1


def test_unregistered_sender_cannot_open_boards(server: Server) -> None:
    server.signup("alice")
    server.signup("bob")
    body = "\n".join(["quarto challenge alice bob"] * 50)
    assert server.send("spammer@evil.example", "multiple", body) == "done"
    mails = server.new_mail()
    assert [m.to for m in mails] == [["spammer@evil.example"]]
    with session_for(server.engine) as session:
        assert list(session.exec(select(BoardRow))) == []


@pytest.mark.parametrize("name", sorted(p.name for p in ATTACKS.glob("*.eml")))
def test_attack_fixtures_make_no_amplification(server: Server, name: str) -> None:
    """Each crafted attack mail yields at most one mail, to a sender that parses."""
    server.signup("alice")
    server.process((ATTACKS / name).read_bytes())
    # Confirmation requests aside (issue 22: at most 3 a mailbox a day, tested there).
    mails = [m for m in server.new_mail() if "pbm mails this address nothing but" not in m.body]
    assert len(mails) <= 1
    for mail in mails:
        assert mail.to != [SERVER]

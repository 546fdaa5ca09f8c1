"""`pbm user rename OLD NEW` (docs/security.md): the account keeps its number, so its
boards, tournaments, ratings and bot settings follow; the userid held as text (a
board's comment author and result line, mailboxes' refusals, counted password
failures) is rewritten; NEW is checked as a signup's userid; the player is told by
mail at his confirmed address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import select

from pbm.cli import app
from pbm.store.engine import session_for
from pbm.store.models import AddressRefusal, BoardRow, RateEvent
from tests.server.conftest import Server, cli_ok, flat, legal_texts, operator_cli, runner


def _board(server: Server, game: str) -> BoardRow:
    with session_for(server.engine) as session:
        row = session.exec(
            select(BoardRow).where(BoardRow.game == game, BoardRow.board == "101")
        ).one()
        session.expunge(row)
        return row


def _installation(server: Server) -> dict[str, str]:
    """bob on a finished rated board (he resigned), on a running one he commented,
    in a tournament he made, with two password failures and a mailbox's "not me"."""
    people = {u: server.signup(u) for u in ("alice", "bob", "carol")}
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    assert server.send(alice, "quadrature challenge alice bob") == "done"
    for sender, userid in ((alice, "alice"), (bob, "bob")):
        text = legal_texts(server, "quadrature")[0]
        assert server.send(sender, f"quadrature move 101 {userid} secret {text}") == "done"
    assert server.send(bob, "quadrature resign 101 bob secret") == "done"
    assert server.send(carol, "quarto challenge carol bob") == "done"
    text = legal_texts(server, "quarto")[0]
    assert server.send(carol, f"quarto move 101 carol secret {text}") == "done"
    text = legal_texts(server, "quarto")[0]
    assert server.send(bob, f"quarto move 101 bob secret {text}", "good luck, carol") == "done"
    assert server.send(bob, "tournament create bob secret spring quarto") == "done"
    for sender, userid in ((alice, "alice"), (bob, "bob")):
        assert server.send(sender, f"tournament join spring {userid} secret") == "done"
    for _ in range(2):
        server.send(bob, "quarto resign 101 bob wrong")
    with session_for(server.engine) as session:
        session.add(
            AddressRefusal(
                mailbox="eve@players.example", userid_key="bob", refused_at=server.clock.now()
            )
        )
        session.commit()
    server.new_mail()
    return people


def _counted_on(server: Server, address: str) -> None:
    """Robert's two failures from `address` before the rename go on counting: a third
    one uses up the budget of 3, and the right password is refused unchecked."""
    server.send(address, "quarto resign 101 robert wrong")
    server.new_mail()
    server.send(address, "quarto resign 101 Robert secret")
    [locked] = server.new_mail()
    assert "Too many wrong passwords" in locked.body


def test_rename_keeps_the_account_whole(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    people = _installation(server)
    operator_cli(server, tmp_path, monkeypatch)
    assert cli_ok("user", "rename", "bob", "Robert") == (
        "renamed bob to Robert; told at bob@players.example\n"
    )
    # He is told, at his confirmed address, what to name from now on.
    [told] = server.new_mail()
    assert (told.to, told.subject) == (["bob@players.example"], "Your userid is now Robert")
    assert "\nX-PBM-Reason: confirmation\r\n" in told.raw.decode()  # an account notice
    body = flat(told.body)
    assert "userid is now Robert instead of bob." in body
    assert "Your boards, ratings and tournaments" in body
    assert "password is unchanged. Commands must now name Robert" in body
    assert cli_ok("user", "show", "robert").startswith("userid:    Robert\n")
    assert runner.invoke(app, ["user", "show", "bob"]).exit_code == 1
    games = {g["game"]: g["players"] for g in json.loads(cli_ok("game", "list", "--json"))}
    assert games == {"quadrature": ["alice", "Robert"], "quarto": ["carol", "Robert"]}
    finished, running = _board(server, "quadrature"), _board(server, "quarto")
    assert finished.result_reason == "Robert resigns."
    assert running.comment_by == "Robert"
    shown = cli_ok("tournament", "show", "spring")
    assert "\nentrants: alice, Robert\n" in shown
    assert "Robert" in cli_ok("ratings", "show", "quadrature")
    with session_for(server.engine) as session:
        refused = session.exec(select(AddressRefusal.userid_key)).all()
        failures = session.exec(
            select(RateEvent.key).where(RateEvent.kind.startswith("auth"))
        ).all()
    assert refused == ["robert"]
    assert failures and all(key.startswith("robert") for key in failures)
    bob = people["bob"]
    _counted_on(server, bob)
    # The old userid names nobody now; the new one plays.
    assert server.send(bob, "quarto resign 101 bob secret") == "done"
    [refusal] = server.new_mail()
    assert "Invalid userid entered: bob" in refusal.body
    assert _board(server, "quarto").status == "active"
    # and is free for a new signup
    server.signup("bob", address="newbob@players.example")
    assert "bob" in cli_ok("user", "list")


def test_rename_checks_new_as_a_signup_does(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("alice", "bob"):
        server.signup(name)
    operator_cli(server, tmp_path, monkeypatch)
    for new, error in (
        ("alice", "error: The userid alice is taken; choose another."),
        ("ALICE", "error: The userid ALICE is taken (by alice: case does not matter in"),
        ("101", "error: '101' cannot be a userid: it holds no letter"),
        ("b b", "error: 'b b' cannot be a userid:"),
        ("bob", "error: The userid is bob already: name another."),
    ):
        refused = runner.invoke(app, ["user", "rename", "bob", new])
        assert refused.exit_code == 1, new
        assert refused.output.startswith(error), refused.output
    address = runner.invoke(app, ["user", "rename", "bob", "Bob <bob@x.example>"])
    assert address.exit_code == 2
    unknown = runner.invoke(app, ["user", "rename", "nobody", "somebody"])
    assert (unknown.exit_code, unknown.output) == (1, "error: Userid not known here: nobody\n")
    # His own userid in another case is his to take.
    assert cli_ok("user", "rename", "bob", "Bob").startswith("renamed bob to Bob; told at ")
    assert cli_ok("user", "show", "bob").startswith("userid:    Bob\n")


def test_a_bot_is_renamed_with_its_settings(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    operator_cli(server, tmp_path, monkeypatch)
    cli_ok("bot", "add", "quartobot", "--games", "quarto", "--level", "2")
    cli_ok("user", "rename", "quartobot", "cubebot")
    shown = json.loads(cli_ok("bot", "show", "cubebot", "--json"))
    assert (shown["userid"], shown["games"], shown["level"]) == ("cubebot", ["quarto"], 2)


def test_an_unconfirmed_address_is_not_told(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pbm mails no address that did not confirm: the operator is asked to tell him."""
    operator_cli(server, tmp_path, monkeypatch)
    cli_ok("user", "add", "dave", "dave@players.example", "--password", "secret")
    assert len(server.new_mail()) == 1  # his confirmation request, and nothing more
    assert cli_ok("user", "rename", "dave", "David") == (
        "renamed dave to David; he has no confirmed address, so tell him yourself\n"
    )
    assert server.new_mail() == []


def test_failures_from_a_long_address_follow_the_rename(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A userid and address too long together for a rate_events key (255 characters)
    are counted under the userid key and the address's digest: the rename moves them."""
    long = "b" * 64 + "@" + ".".join(c * 59 for c in "pqr") + ".example"
    assert len(f"bob {long}") > 255
    alice = server.signup("alice")
    bob = server.signup("bob", address=long)
    assert server.send(alice, "quarto challenge alice bob") == "done"
    for _ in range(2):
        server.send(bob, "quarto resign 101 bob wrong")
    server.new_mail()
    operator_cli(server, tmp_path, monkeypatch)
    cli_ok("user", "rename", "bob", "Robert")
    with session_for(server.engine) as session:
        pairs = session.exec(select(RateEvent.key).where(RateEvent.kind == "auth-pair")).all()
    assert len(pairs) == 2 and all(key.startswith("robert #") for key in pairs), pairs
    server.new_mail()
    _counted_on(server, bob)


def test_a_long_result_line_names_the_new_userid(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result line near the 200 characters an adjudication takes grows past them with
    a longer userid: it is rewritten all the same (games.result_reason is text)."""
    alice, _ = server.signup("alice"), server.signup("bob")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    operator_cli(server, tmp_path, monkeypatch)
    reason = "bob and alice agreed on a tie; " * 6 + "so says bob."
    assert len(reason) <= 200 < len(reason.replace("bob", "Robert"))
    cli_ok("game", "adjudicate", "quarto", "101", "tie", "--reason", reason)
    assert _board(server, "quarto").result_reason == reason
    cli_ok("user", "rename", "bob", "Robert")
    assert _board(server, "quarto").result_reason == reason.replace("bob", "Robert")

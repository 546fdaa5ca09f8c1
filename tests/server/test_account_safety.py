"""Issue 11, points 4-6: password throttling that protects the owner instead of locking
her out, challenges only from the players they name, and userids that are names."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import Session, func, select

from pbm.config import load_config
from pbm.services.accounts import users
from pbm.services.accounts.passwords import hash_password, verify_password
from pbm.store import queries
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, RateEvent, User, UserAddress
from tests.server.conftest import START, Server, cli_ok, runner

EVIL = "mallory@evil.example"


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The passwords pbm actually checked (ran scrypt for), in order: the real
    verify_password, watched."""
    seen: list[str] = []

    def watch(password: str, stored: str) -> bool:
        seen.append(password)
        return verify_password(password, stored)

    monkeypatch.setattr(users, "verify_password", watch)
    yield seen


def flat(text: str) -> str:
    """Text with its line breaks and runs of spaces as single spaces (replies are
    refilled at 72 columns around what they quote)."""
    return " ".join(text.split())


def bodies(server: Server) -> str:
    """The new replies' bodies, flattened."""
    return flat("\n".join(m.body for m in server.new_mail()))


def narrow(body: str) -> bool:
    """Whether the reply's own text (before the command it quotes) fits 72 columns."""
    return all(len(line) <= 72 for line in body.split("(Your command")[0].splitlines())


def events(server: Server, kind: str) -> int:
    with session_for(server.engine) as session:
        query = select(func.count()).select_from(RateEvent).where(RateEvent.kind == kind)
        return int(session.exec(query).one())


def boards(server: Server) -> int:
    with session_for(server.engine) as session:
        return int(session.exec(select(func.count()).select_from(BoardRow)).one())


def start_board(server: Server) -> tuple[str, str]:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    return alice, bob


# -- 4. throttling that protects, not locks out -------------------------------------


def test_one_mail_tests_at_most_max_failures_passwords(
    server: Server, checked: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    start_board(server)
    assert server.config.max_failures == 3
    # Chat changes nothing, so every line runs even after the first one failed.
    lines = "\n".join(f"quarto chat 101 alice guess{n}" for n in range(50))
    with caplog.at_level(logging.WARNING):
        assert server.send(EVIL, "multiple", lines) == "done"
    assert checked == ["guess0", "guess1", "guess2"]
    text = bodies(server)
    # The three refusals read the same once their passwords are masked, and one mail
    # answers the same thing once (pbm.output_limits): the budget is counted below.
    assert text.count("Invalid password entered for alice") == 1
    assert "(Your command: quarto chat 101 alice ******)" in text and "guess" not in text
    assert "Too many wrong passwords (3 within 15 minutes) for alice from" in text
    assert "from mallory@evil.example. Passwords from this address for alice" in text
    assert "are not checked until 02:56 UTC (in 15 minutes); try again then." in text
    # Counted although each failing command's savepoint was rolled back, and stored.
    assert events(server, users.PAIR_FAILURE) == 3
    assert events(server, users.STRANGER_FAILURE) == 3
    assert sum("password budget used up" in r.getMessage() for r in caplog.records) == 1


def test_move_lines_in_one_mail_are_counted_too(server: Server, checked: list[str]) -> None:
    start_board(server)
    lines = "\n".join(f"quarto move 101 alice guess{n} a1 SDQF" for n in range(50))
    server.send(EVIL, "multiple", lines)
    assert len(checked) <= server.config.max_failures
    server.new_mail()
    # Across messages the count goes on: past max_failures nothing more is checked.
    for n in range(5):
        server.send(EVIL, f"quarto move 101 alice again{n} a1 SDQF")
    assert len(checked) == server.config.max_failures
    assert "Too many wrong passwords (3 within 15 minutes) for alice" in bodies(server)


def test_a_stranger_never_locks_the_owner_out(server: Server, checked: list[str]) -> None:
    alice, _ = start_board(server)
    for n in range(3):
        server.send(EVIL, f"quarto chat 101 alice guess{n}")
    server.new_mail()
    # Mallory's own address is refused, even with the right password, unchecked.
    server.send(EVIL, "quarto chat 101 alice secret")
    assert "for alice from mallory@evil.example. Passwords" in bodies(server)
    assert "secret" not in checked
    # Alice's address has its own budget: untouched.
    server.send(alice, "quarto chat 101 alice secret", "hello bob")
    assert "Too many" not in bodies(server)
    assert checked[-1] == "secret"


def test_strangers_share_one_budget_that_spares_registered_addresses(
    server: Server, checked: list[str]
) -> None:
    server.config = dataclasses.replace(server.config, stranger_max_failures=4)
    alice, _ = start_board(server)
    for n in range(4):  # four forged senders, one guess each: under each pair's limit
        server.send(f"forger{n}@evil.example", f"quarto chat 101 alice guess{n}")
    server.new_mail()
    assert len(checked) == 4
    server.send("forger9@evil.example", "quarto chat 101 alice secret")
    text = bodies(server)
    assert "(4 within 15 minutes) for alice from addresses that are not registered" in text
    assert "From an address registered to alice, passwords are checked as usual." in text
    assert len(checked) == 4  # refused unchecked
    # Her registered addresses go on working, and a typo of hers is checked and counted.
    server.send(alice, "quarto chat 101 alice typo")
    assert "Invalid password entered for alice" in bodies(server)
    server.send(alice, "quarto chat 101 alice secret", "hello")
    assert "Too many" not in bodies(server)
    assert checked[-2:] == ["typo", "secret"]
    # After the window, strangers' passwords are checked again.
    server.clock.advance(timedelta(minutes=16))
    server.send("forger9@evil.example", "quarto chat 101 alice nope")
    assert "Invalid password entered for alice" in bodies(server)
    assert checked[-1] == "nope"


def test_the_owners_lock_is_per_address_and_ends(server: Server, checked: list[str]) -> None:
    alice, _ = start_board(server)
    server.send(alice, "change address alice secret alice@players.example alice@work.example")
    server.new_mail()
    for n in range(3):
        server.send(alice, f"quarto limit alice wrong{n}")
    server.new_mail()
    server.clock.advance(timedelta(minutes=5))
    server.send(alice, "quarto limit alice secret")
    text = bodies(server)
    assert "for alice from alice@players.example. Passwords from this" in text
    assert "until 02:56 UTC (in 10 minutes)" in text
    assert checked[-1] == "wrong2"
    server.send("alice@work.example", "quarto limit alice secret")
    assert "accept any number" in bodies(server)
    server.clock.advance(timedelta(minutes=11))
    server.send(alice, "quarto limit alice secret")
    assert "accept any number" in bodies(server)


def test_unknown_userids_count_but_run_no_scrypt(server: Server, checked: list[str]) -> None:
    server.signup("alice")
    for n in range(4):
        server.send(EVIL, f"quarto limit ghost pw{n}")
    text = bodies(server)
    assert text.count("Invalid userid entered: ghost") == 3
    assert "Too many wrong passwords (3 within 15 minutes) for ghost" in text
    assert checked == []


# -- 5. challenges from players only ------------------------------------------------


def test_challenges_come_from_a_player_they_name(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    carol = server.signup("carol")
    server.send(EVIL, "quarto challenge alice bob")
    [refusal] = server.new_mail()
    assert refusal.to == [EVIL] and refusal.subject == "Invalid challenge"
    text = flat(refusal.body)
    assert "Challenges are taken only from the players they name" in text
    assert "mallory@evil.example is the address of none of them (alice, bob)." in text
    assert "\n    quarto challenge YOURID OPPONENT\n" in refusal.body
    assert narrow(refusal.body)
    server.send(carol, "quarto challenge alice bob")
    assert "carol@players.example is the address of none of them (alice, bob)" in bodies(server)
    assert boards(server) == 0
    # Either named player may send it, naming himself in any seat, in any case or width.
    server.send(bob, "quarto challenge alice bob")
    server.send(alice, "quadrature challenge bob ＡLICE")
    assert boards(server) == 2


def test_a_stranger_cannot_open_boards_in_bulk(server: Server) -> None:
    server.signup("alice")
    server.signup("bob")
    lines = "\n".join("quarto challenge alice bob" for _ in range(50))
    server.send(EVIL, "multiple", lines)
    assert boards(server) == 0
    mails = server.new_mail()
    assert mails and all(m.to == [EVIL] for m in mails)


def test_admin_game_new_still_pairs_anyone(cfg: Path) -> None:
    cli_ok("user", "add", "alice", "alice@x.example", "--password", "pw")
    cli_ok("user", "add", "bob", "bob@x.example", "--password", "pw")
    assert "started" in cli_ok("game", "new", "quarto", "bob", "alice")
    # `pbm run` with no sender is the operator too.
    cli_ok("run", "quadrature challenge alice bob")
    listed = json.loads(cli_ok("game", "list", "--json"))
    assert sorted(g["game"] for g in listed) == ["quadrature", "quarto"]


# -- 6. names that are names --------------------------------------------------------


@pytest.mark.parametrize(
    ("userid", "shown", "why"),
    [
        ("\x00carol", "<U+0000>carol", "it holds U+0000"),
        ("\u202eevil", "<U+202E>evil", "it holds U+202E RIGHT-TO-LEFT OVERRIDE."),
        ("a\u200bb", "a<U+200B>b", "it holds U+200B ZERO WIDTH SPACE."),
        ("a", "a", "its length is 1, not 2 to 20 characters."),  # not "1 characters long"
        ("abcdefghij0123456789k", "abcdefghij0123456789k", "its length is 21, not 2 to 20"),
        ("-size", "-size", "it begins with '-'"),
        ("2024", "2024", "it holds no letter"),
        # show and games read it as which boards: "quarto show Next" listed nobody's
        ("Next", "Next", "it is Next, a word show and games read after userids"),
        ("bad:name", "bad:name", "it holds ':' (U+003A)."),
    ],
)
def test_signup_refuses_userids_that_are_not_names(
    server: Server, userid: str, shown: str, why: str
) -> None:
    server.send("x@moo.example", f"signup {userid} pw")
    [err] = server.new_mail()
    assert f"'{shown}' cannot be a userid: {why}" in flat(err.body)
    assert "A userid is 2 to 20 letters (of any alphabet), digits" in flat(err.body)
    assert "is none of the words all, active, inactive and next" in flat(err.body)
    assert "\n    signup alice_b PASSWORD\n" in err.body
    assert "\x00" not in err.subject and "\u202e" not in err.subject
    assert narrow(err.body)
    with session_for(server.engine) as session:
        assert session.exec(select(User)).first() is None


@pytest.mark.parametrize("userid", ["ab", "Jörg.M", "张伟", "Ελένη_2", "x-y_z.w", "a" * 20])
def test_names_of_any_script_are_userids(server: Server, userid: str) -> None:
    server.send("x@moo.example", f"signup {userid} pw")
    [welcome] = server.new_mail()
    assert welcome.subject == f"Welcome to the PBeM Server, {userid}"


def test_userids_are_unique_by_case_folding_and_width(server: Server) -> None:
    server.send("a@moo.example", "signup Alice pw")
    server.new_mail()
    server.send("b@moo.example", "signup alice pw")
    assert "The userid alice is taken (by Alice: case does not matter" in bodies(server)
    server.send("c@moo.example", "signup Straße pw")
    server.new_mail()
    server.send("d@moo.example", "signup STRASSE pw")
    assert "The userid STRASSE is taken (by Straße" in bodies(server)
    # Full-width letters are stored in their NFKC form and found by it.
    server.send("e@moo.example", "signup Ｂob pw")
    [welcome] = server.new_mail()
    assert welcome.subject == "Welcome to the PBeM Server, Bob"
    server.send("a@moo.example", "quarto limit Ａlice pw 3")
    [ok] = server.new_mail()
    assert "limited to 3" in ok.body
    with session_for(server.engine) as session:
        keys = sorted(u.userid_key for u in session.exec(select(User)))
    assert keys == ["alice", "bob", "strasse"]


def test_passwords_refuse_control_and_invisible_characters(server: Server) -> None:
    for password in ("pa\x01ss", "pa\u200bss", "pa\u202ess"):
        server.send("x@moo.example", f"signup dave {password}")
        assert "colons and control or invisible characters" in bodies(server)
    alice = server.signup("alice")
    server.send(alice, "change password alice secret new\x7fpw")
    assert "colons and control or invisible characters" in bodies(server)
    server.send(alice, "quarto limit alice secret")
    assert "accept any number" in bodies(server)


def _old_row(session: Session, userid: str, key: str, address: str) -> None:
    """An account stored before the rules, as an older pbm wrote it (key: `lower()`)."""
    user = User(
        userid=userid, userid_key=key, password_hash=hash_password("secret", 4), created_at=START
    )
    session.add(user)
    session.flush()
    assert user.id is not None
    # Confirmed, as the migration to consent marks the addresses players wrote from.
    session.add(UserAddress(user_id=user.id, address=address, mailbox=address, confirmed_at=START))


def test_rows_from_before_the_rule_keep_working(server: Server) -> None:
    with session_for(server.engine) as session:
        _old_row(session, "a\u200bb", "a\u200bb", "ab@old.example")
        _old_row(session, "Straße", "straße", "strasse@old.example")
        session.commit()
    server.signup("bob")
    server.send("ab@old.example", "quarto limit a\u200bb secret 3")
    assert "limited to 3" in bodies(server)
    server.send("ab@old.example", "quarto challenge a\u200bb bob")
    assert boards(server) == 1
    # Found by the key it was stored with, whatever the typed case.
    server.send("strasse@old.example", "quarto limit STRAßE secret 2")
    assert "limited to 2" in bodies(server)
    with session_for(server.engine) as session:
        found = queries.user_by_userid(session, "straße")
        assert found is not None and found.userid == "Straße"


def test_user_list_invalid(cfg: Path) -> None:
    cli_ok("user", "add", "alice", "alice@x.example", "--password", "pw")
    engine = make_engine(load_config(cfg).database_url)
    with session_for(engine) as session:
        _old_row(session, "\x00carol", "\x00carol", "carol@x.example")
        _old_row(session, "\u202eevil", "\u202eevil", "evil@x.example")
        _old_row(session, "Straße", "straße", "strasse@x.example")
        session.commit()
    engine.dispose()
    text = cli_ok("user", "list", "--invalid")
    assert "alice" not in text
    assert "\x00" not in text and "\u202e" not in text
    assert "<U+0000>carol" in text and "<U+202E>evil" in text
    assert "U+0000" in text and "its stored key straße is not its case-folded form" in text
    listed = json.loads(cli_ok("user", "list", "--invalid", "--json"))
    by_id = {u["userid"]: u for u in listed}
    assert set(by_id) == {"\x00carol", "\u202eevil", "Straße"}
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in by_id["\u202eevil"]["reason"]
    assert by_id["\x00carol"]["shown"] == "<U+0000>carol"
    # The old rows are still accounts the admin can look up.
    assert "carol@x.example" in cli_ok("user", "show", "\x00carol")
    assert len(json.loads(cli_ok("user", "list", "--json"))) == 4


def test_admin_user_add_enforces_the_rule(cfg: Path) -> None:
    from pbm.cli import app

    result = runner.invoke(app, ["user", "add", "a\u200bb", "ab@x.example", "--password", "pw"])
    assert result.exit_code == 1
    assert "a<U+200B>b' cannot be a userid" in result.output
    result = runner.invoke(app, ["user", "add", "carol", "c@x.example", "--password", "p\x00w"])
    assert result.exit_code == 1
    assert "invisible characters" in result.output
    assert "added Zoë" in cli_ok("user", "add", "Zoë", "zoe@x.example", "--password", "pw")


def test_a_from_its_domain_disowns_counts_as_a_stranger(server: Server) -> None:
    """With `sender_unverified` set (a trusted Authentication-Results said dmarc=fail),
    a forger of alice's own address spends a budget of his own, not hers. The pipeline
    sets the flag; here the service is called as it would be."""
    from pbm.errors import AuthError
    from pbm.services.context import Context

    alice = server.signup("alice")
    for _ in range(5):
        with session_for(server.engine) as session:
            ctx = Context(session, server.clock, server.config, alice, sender_unverified=True)
            with pytest.raises(AuthError):
                users.authenticate(ctx, "alice", "guess")
            users.record_auth_failures(ctx)
            session.commit()
    assert events(server, users.STRANGER_FAILURE) == 3  # refused unchecked after 3
    with session_for(server.engine) as session:
        ctx = Context(session, server.clock, server.config, alice)
        assert users.authenticate(ctx, "alice", "secret").userid == "alice"

"""The one unit of work (pbm.work): every entry point runs through it, `pbm run` is
bounded like a mail, and failures come out in their two kinds."""

from __future__ import annotations

import ast
import json
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError
from sqlmodel import select

from pbm.errors import StoreUnavailable
from pbm.services.context import Context, Reply, ReplyKind
from pbm.store.engine import session_for
from pbm.store.failures import Failure, classify
from pbm.store.models import OutboxMail, User, UserAddress
from pbm.work import run_work
from tests.server.conftest import Server
from tests.server.conftest import cli_ok as ok

PACKAGE = Path(__file__).resolve().parents[2] / "pbm"


def test_pbm_run_is_bounded_like_a_mail(cfg: Path) -> None:
    # Repeated help words: a mail gets one answer; so does the same command run by hand.
    out = ok("run", "help " + " ".join(["quarto"] * 50), "--from", "carol@x.example")
    assert out.count("Subject: ") == 1
    queued = json.loads(ok("mail", "outbox", "--json"))
    assert [m["recipients"] for m in queued] == [["carol@x.example"]]


def test_only_the_unit_of_work_queues_replies() -> None:
    # Whoever queues mails outside pbm.work skips its bounds, its commit or its wake-up.
    callers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "queue_replies":
                callers.add(path.relative_to(PACKAGE).as_posix())
    assert callers == {"work.py"}


def _add_user(ctx: Context) -> str:
    user = User(userid="dora", userid_key="dora", password_hash="x", created_at=ctx.now())
    ctx.session.add(user)
    ctx.session.flush()
    # Confirmed, as the consent gate (pbm.services.accounts.consent) lets pbm mail no other.
    ctx.session.add(
        UserAddress(
            user_id=user.saved_id,
            address="dora@x.example",
            mailbox="dora@x.example",
            confirmed_at=ctx.now(),
        )
    )
    ctx.reply(Reply(["dora@x.example"], "Hello", "body", ReplyKind.ACCOUNT))
    return "added"


def test_work_commits_once_with_its_replies(server: Server) -> None:
    assert run_work(server.engine, _add_user, clock=server.clock, config=server.config) == "added"
    with session_for(server.engine) as session:
        assert [u.userid for u in session.exec(select(User))] == ["dora"]
        assert [m.subject for m in session.exec(select(OutboxMail))] == ["Hello"]


def test_a_bug_rolls_back_and_passes_with_its_traceback(server: Server) -> None:
    def buggy(ctx: Context) -> None:
        _add_user(ctx)
        raise ZeroDivisionError("a bug")

    with pytest.raises(ZeroDivisionError) as caught:
        run_work(server.engine, buggy, clock=server.clock, config=server.config)
    assert classify(caught.value) is Failure.BUG
    assert caught.value.__traceback__ is not None
    with session_for(server.engine) as session:
        assert list(session.exec(select(User))) == []
        assert list(session.exec(select(OutboxMail))) == []


def test_store_trouble_is_temporary(server: Server) -> None:
    def locked(ctx: Context) -> None:
        _add_user(ctx)
        busy = sqlite3.OperationalError("database is locked")
        busy.sqlite_errorcode = sqlite3.SQLITE_BUSY  # as the driver sets it
        raise OperationalError("INSERT", {}, busy)

    with pytest.raises(StoreUnavailable) as caught:
        run_work(server.engine, locked, clock=server.clock, config=server.config)
    assert caught.value.kind == "busy"
    assert classify(caught.value) is Failure.BUSY
    with session_for(server.engine) as session:
        assert list(session.exec(select(User))) == []

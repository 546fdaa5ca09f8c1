"""For any sequence of signups, address changes, confirmations, refusals, challenges,
tournament commands, messages and stray commands, from registered and forged senders:
no mail goes to an unconfirmed mailbox but its confirmation requests (at most 3 a day)
and answers to mail that came from it (within the strangers' budget), and a confirmed
player who writes is answered, or has had the one notice that answers are paused."""

from __future__ import annotations

import email
from collections import defaultdict
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import col, select

from pbm.jobs import run_due
from pbm.mail.identity import mailbox_key
from pbm.store.engine import session_for
from pbm.store.models import RateEvent, UserAddress
from tests.server.conftest import Sent, Server, fresh_server

# Two spellings of each mailbox: budgets and consent must not tell them apart.
ADDRESSES = [
    "ann@a.test",
    "Ann+chess@A.test",
    "bea@b.test",
    "bea+x@b.test",
    "victim@v.test",
    "VICTIM@v.test",
]
USERS = ["u0", "u1", "u2"]
REQUEST_MARK = "pbm mails this address nothing but"

senders = st.sampled_from(ADDRESSES)
users = st.sampled_from(USERS)
address_lists = st.lists(senders, max_size=4)
actions = st.one_of(
    st.tuples(st.just("signup"), senders, users, address_lists),
    st.tuples(st.just("reply"), senders, st.booleans()),
    st.tuples(st.just("change"), senders, users, address_lists),
    st.tuples(st.just("challenge"), senders, users, users),
    st.tuples(st.just("tournament"), senders, users, st.sampled_from(["create", "join", "start"])),
    st.tuples(st.just("message"), senders, users, st.lists(users, min_size=1, max_size=3)),
    st.tuples(st.just("stray"), senders, st.sampled_from(["help quarto", "quarto show 999"])),
    st.tuples(st.just("wait"), st.sampled_from([1, 20, 60, 60 * 8])),
)


def _raw(sender: str, subject: str, body: str, n: int, now: datetime, to: str = "") -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to or "pbm@example.org"
    msg["Subject"] = subject
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = f"<consent.{n}@players.example>"
    msg.set_content(body or "\n")
    return msg.as_bytes()


def _command(action: tuple[object, ...]) -> tuple[str, str] | None:
    """(sender, subject) of a command action."""
    kind = action[0]
    if kind == "signup":
        _, sender, userid, extra = action
        return str(sender), f"signup {userid} pw {' '.join(extra)}".strip()  # type: ignore[arg-type]
    if kind == "change":
        _, sender, userid, extra = action
        return str(sender), f"change address {userid} pw {' '.join(extra)}".strip()  # type: ignore[arg-type]
    if kind == "challenge":
        _, sender, a, b = action
        return str(sender), f"quarto challenge {a} {b}"
    if kind == "tournament":
        _, sender, userid, verb = action
        if verb == "create":
            return str(sender), f"tournament create {userid} pw cup quarto"
        return str(sender), f"tournament {verb} cup {userid} pw"
    if kind == "message":
        _, sender, userid, targets = action
        return str(sender), f"message {userid} pw {' '.join(targets)}"  # type: ignore[arg-type]
    if kind == "stray":
        _, sender, line = action
        return str(sender), str(line)
    return None


def _confirmed(server: Server) -> set[str]:
    with session_for(server.engine) as session:
        query = select(UserAddress.mailbox).where(col(UserAddress.confirmed_at).is_not(None))
        return set(session.exec(query))


def _noticed_since(server: Server, box: str, since: datetime) -> bool:
    with session_for(server.engine) as session:
        query = select(RateEvent.id).where(
            RateEvent.kind == "reply-notice", RateEvent.key == box, RateEvent.at >= since
        )
        return session.exec(query).first() is not None


def _reply(server: Server, address: str, refuse: bool, n: int) -> bytes | None:
    """A reply from `address` to the newest mail its mailbox got with a reply address."""
    box = mailbox_key(address)
    for sent in reversed(server.outbox()):
        if any(mailbox_key(a) == box for a in sent.to):
            reply_to = email.message_from_bytes(sent.raw)["Reply-To"]
            if reply_to:
                body = "not me\n" if refuse else "\n"
                return _raw(address, "Re: x", body, n, server.clock.now(), to=str(reply_to))
    return None


class Ledger:
    """Every mail queued, by mailbox, with when and whether it was a request."""

    def __init__(self) -> None:
        self.requests: dict[str, list[datetime]] = defaultdict(list)
        self.answers: dict[str, list[datetime]] = defaultdict(list)

    def check(self, server: Server, mails: list[Sent], sender: str | None) -> None:
        confirmed = _confirmed(server)
        now = server.clock.now()
        for mail in mails:
            for address in mail.to:
                box = mailbox_key(address)
                if box in confirmed:
                    continue
                if REQUEST_MARK in mail.body:
                    self.requests[box].append(now)
                    day = [t for t in self.requests[box] if t > now - timedelta(days=1)]
                    assert len(day) <= 3, (box, mail.subject)
                    continue
                # Anything else to an unconfirmed mailbox answers mail that came from it.
                assert sender is not None and mailbox_key(sender) == box, (box, mail.subject)
                self.answers[box].append(now)
                hour = [t for t in self.answers[box] if t > now - timedelta(hours=1)]
                assert len(hour) <= 10 + 1, (box, len(hour))  # the budget and its notice


# Each example builds its own database: slow by hypothesis's measure, and that is fine.
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(actions, min_size=1, max_size=24))
def test_no_mail_to_an_unconfirmed_mailbox_and_no_player_silenced(
    steps: list[tuple[object, ...]],
) -> None:
    # A low player budget, so that players meet it too.
    with fresh_server(player_replies_per_hour=6) as server:
        ledger = Ledger()
        # A player, and an account an attacker made at the victim's address.
        prelude: list[tuple[object, ...]] = [
            ("signup", "ann@a.test", "u0", []),
            ("reply", "ann@a.test", False),
            ("signup", "ann@a.test", "u1", ["victim@v.test"]),
        ]
        for n, action in enumerate(prelude + steps):
            if action[0] == "wait":
                server.clock.advance(timedelta(minutes=int(action[1])))  # type: ignore[call-overload]
                run_due(server.engine, server.clock, server.config)
                ledger.check(server, server.new_mail(), None)
                continue
            if action[0] == "reply":
                raw = _reply(server, str(action[1]), bool(action[2]), n)
                if raw is None:
                    continue
                sender = str(action[1])
            else:
                found = _command(action)
                assert found is not None
                sender, subject = found
                body = "hello\n" if action[0] == "message" else ""  # a message needs a text
                raw = _raw(sender, subject, body, n, server.clock.now())
            was_confirmed = mailbox_key(sender) in _confirmed(server)
            assert server.process(raw) == "done"
            mails = server.new_mail()
            ledger.check(server, mails, sender)
            if was_confirmed and action[0] != "reply":
                # A confirmed player's command is answered, or he was told answers pause
                # (an empty reply to an old mail is no command: once a day it gets help).
                box = mailbox_key(sender)
                heard = any(mailbox_key(a) == box for m in mails for a in m.to)
                since = server.clock.now() - timedelta(hours=1)
                assert heard or _noticed_since(server, box, since), (action, sender)

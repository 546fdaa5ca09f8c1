"""List hygiene under load (issue 23): 1,000 notification mails to 200 players over five
days, with 5 % of them bouncing hard, 2 % soft and 0.5 % reported as spam, each report a
real DSN (RFC 3464) or ARF (RFC 5965) mail taken in through the pipe intake (`pbm mail
process`'s path). Prints how many reports were attributed to their exact outbox mail and
how long that took, the scores and disabled mailboxes, and how many mails went to a
mailbox after it was disabled or complained (must be 0).

Each day every player is sent one notification (queued through the pipeline's own
queue_replies, sent by the outbox sender into memory); 10 players' mailboxes are gone
(their mail bounces hard every day: disabled on day 5), 4 are full (soft, every day)
and 5 complain about their first mail. A sixth day checks what the disabled get.

    .venv/bin/python benchmarks/deliverability.py
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlmodel import select

from pbm.app import initialize, register
from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.intake import process_message
from pbm.mail.smtp_out import OutboxSender, OutgoingMail
from pbm.mail.streams import MailReason
from pbm.mailstore import DbOutbox
from pbm.outgoing import queue_replies
from pbm.services.accounts import consent
from pbm.services.accounts.users import create_user
from pbm.services.context import Context, Reply
from pbm.store.engine import make_engine, session_for
from pbm.store.models_mail import BounceEvent, MailboxHealth
from pbm.store.schema import init_db
from tests.bounce_mails import arf, dsn

PLAYERS = 200
DAYS = 5  # one mail a day to each player: 1,000 mails
GONE, FULL, COMPLAIN = 10, 4, 5  # 50 hard (5 %), 20 soft (2 %), 5 complaints (0.5 %)
TIME_LIMIT = 300.0  # seconds; the run stops there whatever it has done
START = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)


class Capture:
    """The outbox sender's transport: keeps each mail (envelope and bytes) in memory."""

    lanes = 1

    def __init__(self) -> None:
        self.sent: list[OutgoingMail] = []

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        self.sent.append(mail)
        return {}

    async def close(self) -> None:
        return None


def address(n: int) -> str:
    return f"player{n}@players.example"


def main() -> int:
    began = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="pbm-deliverability-"))
    config = Config(
        data_dir=workdir,
        database_url=f"sqlite:///{workdir / 'pbm.sqlite3'}",
        server_address="pbm@example.org",
        password_cost=4,
        feedback_address="pbm-fbl@example.org",
    )
    initialize(config)
    engine = make_engine(config.database_url)
    init_db(engine)
    clock = FrozenClock(START)
    users: dict[int, int] = {}
    with session_for(engine) as session:
        ctx = Context(session=session, clock=clock, config=config, sender="")
        for n in range(PLAYERS):
            user, rows = create_user(ctx, f"player{n}", "secret", [address(n)])
            for row in rows:
                consent.confirm(ctx, row)  # players who answered their requests
            users[n] = user.saved_id
        session.commit()
    gone = set(range(GONE))
    full = set(range(GONE, GONE + FULL))
    complain = set(range(GONE + FULL, GONE + FULL + COMPLAIN))
    capture = Capture()
    sender = OutboxSender(DbOutbox(engine, clock), capture, rate=0)
    expected: dict[int, str] = {}  # outbox id -> kind of the report it gets
    cut_off: dict[str, int] = {}  # mailbox -> last outbox id before its disabling/complaint
    attributed_seconds = 0.0
    attempted = 0
    for day in range(DAYS + 1):
        if time.monotonic() - began > TIME_LIMIT:
            print(f"stopped by the time limit on day {day}")
            break
        with session_for(engine) as session:
            ctx = Context(session=session, clock=clock, config=config, sender="")
            replies = [
                Reply(
                    to=[address(n)],
                    subject=f"Day {day + 1}: news for player{n}",
                    body="Your opponent moved.\n",
                    kind="message",
                    user_id=users[n],
                    reason=MailReason.OPPONENT_MOVED,
                )
                for n in range(PLAYERS)
            ]
            attempted += len(replies) if day < DAYS else 0
            queue_replies(ctx, None, replies, inbound_id=None)
            session.commit()
        first = len(capture.sent)
        asyncio.run(sender.drain())
        if day == DAYS:
            print(f"day {day + 1} (a check): {len(capture.sent) - first} of {PLAYERS} sent")
            break
        reports: list[bytes] = []
        for mail in capture.sent[first:]:
            n = int(mail.recipients[0].split("@")[0].removeprefix("player"))
            kind = None
            if n in gone:
                kind = "5.1.1"
            elif n in full:
                kind = "4.2.2"
            elif n in complain and day == 0:
                kind = "complaint"
            if kind is None:
                continue
            expected[mail.id] = kind
            mid = f"<report.{mail.id}@mx.players.example>"
            if kind == "complaint":
                reports.append(
                    arf(
                        to=config.feedback_address,
                        recipient=mail.recipients[0],
                        raw=mail.raw,
                        now=clock.now(),
                        message_id=mid,
                    )
                )
            else:
                reports.append(
                    dsn(
                        envelope_from=mail.envelope_from,
                        mail_id=mail.id,
                        verp=None,  # the envelope already is the VERP address
                        recipient=mail.recipients[0],
                        raw=mail.raw,
                        status=kind,
                        now=clock.now(),
                        message_id=mid,
                    )
                )
            cut_off[mail.recipients[0]] = mail.id
        t0 = time.monotonic()
        for raw in reports:
            process_message(engine, raw, via="pipe", clock=clock, config=config)
        attributed_seconds += time.monotonic() - t0
        clock.advance(timedelta(days=1))

    with session_for(engine) as session:
        events = list(session.exec(select(BounceEvent)))
        health = list(session.exec(select(MailboxHealth)))
    right = sum(
        1
        for e in events
        if e.outbox_id in expected
        and (e.kind.value == "complaint") == (expected[e.outbox_id] == "complaint")
    )
    disabled = {h.mailbox for h in health if h.disabled_at is not None}
    complained = {h.mailbox for h in health if h.complained_at is not None}
    # A mailbox's last report is for the last mail it was sent before its event.
    after = [
        m
        for m in capture.sent
        if (m.recipients[0] in disabled and m.id > cut_off[m.recipients[0]])
        or (m.recipients[0] in complained and m.id > cut_off[m.recipients[0]])
    ]
    by_kind = {k: sum(1 for v in expected.values() if v == k) for k in set(expected.values())}
    sent = sum(1 for m in capture.sent if not m.raw.count(f"Day {DAYS + 1}:".encode()))
    print(
        f"players {PLAYERS}, days {DAYS}: notifications made {attempted}, "
        f"sent {sent} (withheld {attempted - sent})"
    )
    print(
        f"reports injected {len(expected)} (hard {by_kind.get('5.1.1', 0)}, "
        f"soft {by_kind.get('4.2.2', 0)}, complaints {by_kind.get('complaint', 0)})"
    )
    print(
        f"attributed to their exact mail: {right}/{len(expected)} "
        f"({100 * right / max(1, len(expected)):.1f} %) in {attributed_seconds:.2f} s"
    )
    scores = sorted({h.score for h in health})
    print(f"mailboxes with a score or complaint {len(health)}: scores {scores}")
    print(f"disabled {len(disabled)}, complained {len(complained)}")
    print(f"mails to a disabled or complaining mailbox after its event: {len(after)}")
    print(f"wall time {time.monotonic() - began:.1f} s")
    engine.dispose()
    shutil.rmtree(workdir, ignore_errors=True)
    ok = right == len(expected) and not after and attributed_seconds < 60
    return 0 if ok else 1


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    raise SystemExit(main())

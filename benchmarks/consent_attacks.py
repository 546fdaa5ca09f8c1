"""The attacks of issue 22, each on a fresh SQLite database through `process_message`
(the whole pipeline) and the periodic jobs, with the attack mails of
tests/data/mail/attacks: what pbm queues for the victims.

It uses only what every version of pbm has (Config, init_db, process_message, run_due,
the outbox table), so it measures the code of the tree it sits in: run the script of a
checkout of an older commit for the figures before.

Usage: .venv/bin/python benchmarks/consent_attacks.py [--json FILE]
"""

from __future__ import annotations

import argparse
import email
import json
import logging
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.policy import SMTPUTF8
from email.utils import format_datetime
from pathlib import Path

from sqlmodel import select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.intake import process_message
from pbm.jobs import run_due
from pbm.store.engine import make_engine, session_for
from pbm.store.models import OutboxMail
from pbm.store.schema import init_db

ATTACKS = Path(__file__).resolve().parent.parent / "tests" / "data" / "mail" / "attacks"
START = datetime(2026, 12, 7, 11, 0, tzinfo=UTC)
SERVER = "pbm@example.org"
VICTIM = "victim@victim.test"
# Bounds: hours of jobs after the tournament attack, one run every 5 minutes.
JOB_HOURS = 6
JOB_STEP = timedelta(minutes=5)


class Run:
    """One fresh server: a database, a frozen clock, a message counter."""

    def __init__(self, tmp: str) -> None:
        self.config = Config(
            data_dir=Path(tmp),
            database_url=f"sqlite:///{tmp}/pbm.sqlite3",
            server_address=SERVER,
            password_cost=1,
        )
        self.engine = make_engine(self.config.database_url)
        init_db(self.engine)
        self.clock = FrozenClock(START)
        self.n = 0

    def raw(self, sender: str, subject: str, body: str = "", to: str = SERVER) -> bytes:
        self.n += 1
        msg = EmailMessage(policy=SMTPUTF8)
        msg["From"], msg["To"], msg["Subject"] = sender, to, subject
        msg["Date"] = format_datetime(self.clock.now())
        msg["Message-ID"] = f"<bench.{self.n}@players.test>"
        msg.set_content(body or "\n")
        return msg.as_bytes()

    def send(self, sender: str, subject: str, body: str = "", to: str = SERVER) -> None:
        self.process(self.raw(sender, subject, body, to))

    def process(self, raw: bytes) -> None:
        process_message(self.engine, raw, via="cli", clock=self.clock, config=self.config)

    def attack(self, name: str) -> None:
        self.process((ATTACKS / name).read_bytes())

    def outbox(self) -> list[tuple[list[str], str, bytes]]:
        with session_for(self.engine) as session:
            rows = session.exec(select(OutboxMail).order_by(OutboxMail.id))  # type: ignore[arg-type]
            return [(json.loads(r.recipients), r.subject, r.raw) for r in rows]

    def to(self, predicate: object) -> list[tuple[list[str], str, bytes]]:
        return [m for m in self.outbox() if any(predicate(a) for a in m[0])]  # type: ignore[operator]

    def confirm_all(self) -> None:
        """Answer every mail that has a reply address from its recipient (what a player
        does with a confirmation request; harmless where there is none)."""
        for to, _subject, raw in self.outbox():
            reply_to = email.message_from_bytes(raw)["Reply-To"]
            if reply_to and len(to) == 1:
                self.send(to[0], "Re: welcome", "\n", to=str(reply_to))


@contextmanager
def fresh() -> Iterator[Run]:
    with tempfile.TemporaryDirectory() as tmp:
        run = Run(tmp)
        try:
            yield run
        finally:
            run.engine.dispose()


def signups_and_tournament() -> dict[str, object]:
    with fresh() as run:
        began = time.perf_counter()
        run.attack("consent_signups_at_victim.eml")
        run.attack("consent_tournament_for_victim.eml")
        first = len(run.to(lambda a: a.lower() == VICTIM))
        steps = int(timedelta(hours=JOB_HOURS) / JOB_STEP)
        for _ in range(steps):
            run.clock.advance(JOB_STEP)
            run_due(run.engine, run.clock, run.config)
        mails = run.to(lambda a: a.lower() == VICTIM)
        games = [m for m in mails if "Board" in m[1] or "Tournament" in m[1]]
        return {
            "mails to the victim at once": first,
            f"mails to the victim after {JOB_HOURS} h of jobs": len(mails),
            "of them board or tournament mails": len(games),
            "seconds": round(time.perf_counter() - began, 1),
        }


def message_500() -> dict[str, object]:
    with fresh() as run:
        run.send("att@players.test", "signup att pw")
        run.confirm_all()
        for start in range(0, 500, 50):
            lines = "\n".join(f"signup m{i} pw m{i}@third.test" for i in range(start, start + 50))
            run.send("maker@evil.test", "multiple", lines + "\n")
        before = len(run.outbox())
        raw = (ATTACKS / "consent_message_500.eml").read_bytes()
        run.process(raw.replace(b"From: attacker@evil.test", b"From: att@players.test"))
        after = run.outbox()[before:]
        relayed = [m for m in after if any(a.endswith("@third.test") for a in m[0])]
        return {
            "third parties mailed the attacker's text": sum(len(m[0]) for m in relayed),
            "most recipients of one mail": max((len(m[0]) for m in after), default=0),
        }


def signup_5000() -> dict[str, object]:
    with fresh() as run:
        run.attack("consent_signup_5000_addresses.eml")
        mails = run.outbox()
        victims = {a for m in mails for a in m[0] if a.endswith("@victims.test")}
        return {
            "victims mailed": len(victims),
            "most recipients of one mail": max((len(m[0]) for m in mails), default=0),
        }


def spellings() -> dict[str, object]:
    with fresh() as run:
        for n in range(30):
            run.send(f"victim+{n}@victim.test", "help quarto")
        tags = len(run.to(lambda a: a.lower().startswith("victim")))
    with fresh() as run:
        names = ["p@bücher.test", "p@xn--bcher-kva.test", "p@bu\u0308cher.test"]
        for n in range(36):
            run.send(names[n % 3], "help quarto")
        idn = len(run.to(lambda a: a.startswith("p@")))
    return {"answers to victim+0..29@ (30 mails)": tags, "answers to 3 IDN spellings (36)": idn}


def forged_lockout() -> dict[str, object]:
    with fresh() as run:
        run.send("alice@a.test", "signup alice secret")
        run.send("bob@players.test", "signup bob secret")
        run.confirm_all()
        run.send("alice@a.test", "quarto challenge alice bob")
        board = [m for m in run.outbox() if m[0] == ["alice@a.test"] and "Board 101" in m[1]]
        reply_to = str(email.message_from_bytes(board[-1][2])["Reply-To"])
        for n in range(5):
            raw = (ATTACKS / "consent_forged_wrong_password.eml").read_bytes()
            run.process(raw.replace(b"consent-forged.5@", f"consent-forged.{n}@".encode()))
        before = len(run.outbox())
        run.send("alice@a.test", "Re: board", "quarto resign 101 alice secret\n", to=reply_to)
        answer = " ".join(m[2].decode("utf-8", "replace") for m in run.outbox()[before:])
        return {"owner's token reply refused after 5 forged failures": "not checked" in answer}


def main() -> None:
    # The figures are the output: pbm's own warnings (budgets spent, ...) stay quiet.
    logging.getLogger("pbm").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    figures = {
        "50 signups at a victim + a tournament": signups_and_tournament(),
        "message to 500 accounts": message_500(),
        "signup naming 5,000 addresses": signup_5000(),
        "+tag and IDN spellings": spellings(),
        "5 forged-From wrong passwords": forged_lockout(),
    }
    for attack, result in figures.items():
        print(attack)
        for what, value in result.items():
            print(f"  {what:<52} {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()

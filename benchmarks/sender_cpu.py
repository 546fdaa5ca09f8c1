"""The sender's CPU per mail: claiming queued board mails, drawing and composing their
HTML part, handing them to the transport and recording them (issue 21, point 9).

benchmarks/mail_e2e.py measures the whole loop through real Postfix and Dovecot, which
on a shared machine swings with everyone else's load. This measures the sender alone,
in CPU time or in machine instructions, which a loaded machine changes much less: run
it on two trees to compare them. It builds a small copy of process.py's database (every
address confirmed), processes move commands (each queues a board mail to both players),
and then drains the outbox as the daemon's sender does (`DbOutbox` and `OutboxSender`)
into a transport that drops the mails. It does this twice: with the players' default
format (HTML part and pictures) and with every player set to `format text`. A first
round of moves is drained before the measured one, so imports and caches are warm as
in a running server; the measured moves are on other boards, so each position is
drawn once for its two readers, as in a running server. `--picture-worker` makes the
HTML parts in a worker process, as `pbm serve` does by default (pbm.html_parts): the
figures are then this process's, the sender's share of the daemon's CPU, without the
worker's, and the worker's resident memory after the drain is printed too.

    .venv/bin/python benchmarks/sender_cpu.py [--moves 150] [--rounds 3] [--format html]
                                              [--picture-worker]
    .venv/bin/python benchmarks/sender_cpu.py --instructions [--moves 40] [--format html]
                                              [--picture-worker]  (needs Debian's valgrind)

Prints, per format, the CPU milliseconds per mail of the whole drain (best and median
of `--rounds`), of the claim with the HTML part (`OutboxQueue.due`) and of recording
the outcome, and the mean size of a mail. `--instructions` instead counts the machine
instructions per mail of the drain under `valgrind --tool=callgrind` (two runs per
format, without and with the drain, whose difference is the drain; a few minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

# This tree's pbm, not the venv's, and tests.confirmed, shared with the tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import process  # benchmarks/process.py, beside this script: its set-up
from sqlmodel import select

from pbm.app import register
from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.html_parts import HtmlParts, InProcess, PictureWorker
from pbm.intake import process_message
from pbm.mail.identity import mailbox_key
from pbm.mail.smtp_out import OutboxSender, OutgoingMail, SendOutcome
from pbm.mailstore import DbOutbox
from pbm.services.mailing import mail_html
from pbm.services.mailing.mail_html import Pictures, set_format
from pbm.store.engine import make_engine, session_for
from pbm.store.models import User, UserAddress
from pbm.store.schema import init_db
from tests.confirmed import confirm_every_address

BOARDS = 400
USERS = 200
WARM_UP = 20


class DroppingTransport:
    """A transport that accepts every mail and keeps only its size."""

    lanes = 1

    def __init__(self) -> None:
        self.sizes: list[int] = []

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        self.sizes.append(len(mail.raw))
        return {}

    async def close(self) -> None:
        return None


class TimedQueue:
    """The daemon's queue, with the CPU time of its claims and records added up."""

    def __init__(self, queue: DbOutbox) -> None:
        self.queue = queue
        self.claim = 0.0
        self.record_cpu = 0.0

    async def due(self, limit: int, held: frozenset[int] = frozenset()) -> list[OutgoingMail]:
        began = time.process_time()
        found = self.queue._due(limit, held)  # in this thread, so that its CPU is counted
        self.claim += time.process_time() - began
        return found

    async def record(self, outcomes: Sequence[SendOutcome]) -> None:
        began = time.process_time()
        self.queue._record(outcomes)
        self.record_cpu += time.process_time() - began


def prepared(
    fmt: str, moves: int, worker: bool
) -> tuple[DbOutbox, FrozenClock, Config, list[bytes], Path]:
    """A database with the warm-up moves processed and `moves` more move commands to
    process, every player reading `fmt`, its HTML parts made in a worker process if
    `worker`."""
    rng = random.Random(5)
    path = Path(tempfile.mkdtemp(prefix="pbm-bench-sender-")) / "bench.sqlite3"
    config = Config(
        data_dir=path.parent, database_url=f"sqlite:///{path}", server_address="pbm@example.org"
    )
    engine = make_engine(config.database_url)
    init_db(engine)
    active = process.build(engine, BOARDS, 20, USERS, rng)
    with session_for(engine) as session:  # process.build's bulk insert leaves them blank
        for row in session.exec(select(UserAddress)).all():
            row.mailbox = mailbox_key(row.address)
        session.commit()
    confirm_every_address(engine, config)
    if fmt == "text":
        with session_for(engine) as session:
            for user in session.exec(select(User)).all():
                set_format(session, user, "text")
            session.commit()
    clock = FrozenClock(process.START + timedelta(days=1))
    messages = process.move_messages(engine, active, rng, WARM_UP + moves)
    here = InProcess(engine)
    html: HtmlParts = PictureWorker(config, here) if worker else here
    return DbOutbox(engine, clock, html=html), clock, config, messages, path


def ready(outbox: DbOutbox) -> None:
    """Wait until the picture worker, if any, is ready (its start is not measured)."""
    if isinstance(outbox.html, PictureWorker):
        assert outbox.html.wait_ready(120), "the picture worker did not start"


def process_all(outbox: DbOutbox, clock: FrozenClock, config: Config, raws: list[bytes]) -> None:
    done = [
        process_message(outbox.engine, raw, via="pipe", clock=clock, config=config) for raw in raws
    ]
    assert done.count("done") == len(done), done


def drain(outbox: DbOutbox) -> tuple[int, float, TimedQueue, DroppingTransport]:
    """Send everything queued; the mails sent and the CPU seconds it took."""
    queue, transport = TimedQueue(outbox), DroppingTransport()
    sender = OutboxSender(queue, transport)
    began = time.process_time()
    sent = asyncio.run(sender.drain())
    return sent, time.process_time() - began, queue, transport


@dataclass(frozen=True)
class Round:
    """One measured drain: the mails, the CPU seconds of the drain, of its claims and of
    its records, the mean size of a mail, and the CPU seconds per move command of the
    processing that queued them (the sender's share of a move, for comparison)."""

    sent: int
    cpu: float
    claim: float
    record: float
    size: float
    per_move: float
    worker_mb: float | None  # the picture worker's resident memory after the drain

    def ms(self, seconds: float) -> float:
        return seconds / self.sent * 1000


def one_round(fmt: str, moves: int, worker: bool) -> Round:
    mail_html.PICTURES = Pictures()  # the rounds draw the same positions: none kept
    outbox, clock, config, messages, path = prepared(fmt, moves, worker)
    process_all(outbox, clock, config, messages[:WARM_UP])
    drain(outbox)  # warm: imports, the pictures' fonts and pieces, the engine
    ready(outbox)
    began = time.process_time()
    process_all(outbox, clock, config, messages[WARM_UP:])
    per_move = (time.process_time() - began) / moves
    sent, cpu, queue, transport = drain(outbox)
    worker_mb = resident_mb(outbox.html.pid) if isinstance(outbox.html, PictureWorker) else None
    outbox.html.close()
    outbox.engine.dispose()
    shutil.rmtree(path.parent)
    assert sent, "nothing was queued"
    size = statistics.mean(transport.sizes)
    return Round(sent, cpu, queue.claim, queue.record_cpu, size, per_move, worker_mb)


def resident_mb(pid: int | None) -> float | None:
    """The resident memory of process `pid` in MB (/proc/PID/status), if it lives."""
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def cpu_report(moves: int, rounds: int, formats: Sequence[str], worker: bool) -> None:
    print(
        f"{'format':<6} {'mails':>5} {'best ms':>8} {'median':>7} {'claim+html':>10}"
        f" {'record':>7} {'bytes':>7} {'move ms':>8}"
    )
    for fmt in formats:
        runs = sorted(
            (one_round(fmt, moves, worker) for _ in range(rounds)), key=lambda r: r.ms(r.cpu)
        )
        best = runs[0]
        print(
            f"{fmt:<6} {best.sent:>5} {best.ms(best.cpu):>8.2f}"
            f" {statistics.median(r.ms(r.cpu) for r in runs):>7.2f}"
            f" {best.ms(best.claim):>10.2f} {best.ms(best.record):>7.2f} {best.size:>7.0f}"
            f" {best.per_move * 1000:>8.2f}",
            flush=True,
        )
        if best.worker_mb is not None:
            print(f"       the picture worker: {best.worker_mb:.0f} MB resident after the drain")
    print(
        "(CPU milliseconds per mail; claim+html: the claim with drawing and composing;"
        " move ms: the processing of one move command, which queued two of these mails)"
    )


def inner(fmt: str, moves: int, with_drain: bool, worker: bool) -> None:
    """Set up, process and, if `with_drain`, drain (run under Valgrind)."""
    outbox, clock, config, messages, path = prepared(fmt, moves, worker)
    process_all(outbox, clock, config, messages[:WARM_UP])
    drain(outbox)
    ready(outbox)
    process_all(outbox, clock, config, messages[WARM_UP:])
    if with_drain:
        sent = drain(outbox)[0]
        print(f"sent {sent}")
    outbox.html.close()
    outbox.engine.dispose()
    shutil.rmtree(path.parent)


def counted(fmt: str, moves: int, with_drain: bool, worker: bool) -> tuple[int, int]:
    """The instructions of this process alone (Valgrind follows no child: a picture
    worker's are not counted) and the mails sent."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    command += [__file__, "--inner", fmt, str(moves), "1" if with_drain else "0"]
    command += ["1" if worker else "0"]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", run.stderr)
    assert found, run.stderr[-2000:]
    sent = re.search(r"sent (\d+)", run.stdout)
    return int(found.group(1)), int(sent.group(1)) if sent else 0


def instructions_report(moves: int, formats: Sequence[str], worker: bool) -> None:
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: apt-get install valgrind")
    for fmt in formats:
        base, _ = counted(fmt, moves, False, worker)
        more, sent = counted(fmt, moves, True, worker)
        print(
            f"{fmt:<6} {(more - base) / sent / 1e6:.2f} million instructions per mail"
            f" ({sent} mails)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instructions", action="store_true", help="count with callgrind")
    parser.add_argument(
        "--format", choices=("html", "text"), action="append", help="only these (default both)"
    )
    for name, default, meaning in (
        ("--moves", 150, "measured move commands"),
        ("--rounds", 3, "runs per format"),
    ):
        parser.add_argument(name, type=int, default=default, help=meaning)
    parser.add_argument(
        "--picture-worker", action="store_true", help="HTML parts made in a worker process"
    )
    parser.add_argument("--inner", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    formats = args.format or ("html", "text")
    if args.inner:
        fmt, moves, with_drain, worker = args.inner
        inner(fmt, int(moves), with_drain == "1", worker == "1")
    elif args.instructions:
        instructions_report(min(args.moves, 40), formats, args.picture_worker)
    else:
        cpu_report(args.moves, args.rounds, formats, args.picture_worker)


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()

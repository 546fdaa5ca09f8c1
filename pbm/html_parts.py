"""The HTML parts of claimed mails: read what each needs, draw its boards and compose it,
in the daemon's own process (`InProcess`) or in a worker process beside it
(`PictureWorker`, `[mail] picture_worker`, on by default).

Why a worker: the daemon is one Python process, whose interpreter lock lets one of its
threads compute at a time, and the HTML part (the reads, the drawing, the composing) was
a third of its CPU per move (issue 21). In a process of its own it runs on another core
while the daemon takes in, processes and hands over mail. The worker reads through a
read-only engine of its own (pbm.store.readonly): what it reads, a board up to a move,
no longer changes once the mail is queued.

No mail ever waits for a worker. It is started at the first claim that has an HTML part
to make, and until it says it is ready (a fresh interpreter importing pbm takes seconds)
the daemon makes the parts itself, as without a worker. A worker that dies, hangs past
ANSWER_SECONDS or fails is stopped, the mails in hand are made in the daemon, and a
claim at least RESTART_SECONDS after its start starts a new one (a worker that cannot
live does not cost a start a claim). The store being unavailable is no failure of the
worker: it is raised as in the daemon (the mails stay claimed and are taken again).
"""

from __future__ import annotations

import enum
import logging
import multiprocessing
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Protocol

from sqlalchemy.engine import Engine

from pbm.app import initialize
from pbm.config import Config
from pbm.errors import StoreUnavailable
from pbm.logfmt import kv, setup_logging
from pbm.output_limits import ANSWER_MAX_BYTES
from pbm.services.mailing.mail_html import html_inputs, with_html_parts
from pbm.store.engine import session_for
from pbm.store.failures import unavailable_on_failure
from pbm.store.readonly import make_read_engine

log = logging.getLogger("pbm.daemon")

# The longest wait for a ready worker's answer to one claim: its ten pictures take a
# fraction of a second.
ANSWER_SECONDS = 30.0
RESTART_SECONDS = 60.0  # between the starts of two workers, at least
STOP_SECONDS = 5.0  # a ready worker's exit after its pipe closed, then a kill


class Said(enum.Enum):
    """What the worker says on its pipe: first READY (pbm is imported and put together),
    then for each claim MADE (the mails), UNAVAILABLE (the store's failure: its message
    and kind) or FAILED (what went wrong, logged by the worker)."""

    READY = "ready"
    MADE = "made"
    UNAVAILABLE = "unavailable"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Unfinished:
    """A claimed mail as it was queued: its bytes, the order for its HTML part (the
    outbox's `html` column; None: the mail goes as queued) and its recipients."""

    raw: bytes
    order: str | None
    recipients: tuple[str, ...]


class HtmlParts(Protocol):
    """Makes the claimed mails as they are sent (`finish`), in order."""

    def finish(self, mails: Sequence[Unfinished]) -> list[bytes]: ...

    def close(self) -> None: ...


def finish_with(reader: Engine, mails: Sequence[Unfinished]) -> list[bytes]:
    """The mails with their HTML parts, what they need read through `reader` (each board
    once for the mails of one claim) and drawn and composed after the read
    (pbm.services.mailing.mail_html)."""
    with unavailable_on_failure(), session_for(reader) as session:
        inputs = html_inputs(session, [(m.order, m.recipients) for m in mails])
    orders = [(m.raw, drawings) for m, drawings in zip(mails, inputs, strict=True)]
    return with_html_parts(orders, ANSWER_MAX_BYTES)


class InProcess:
    """The HTML parts made in this process, read through `reader`."""

    def __init__(self, reader: Engine) -> None:
        self.reader = reader

    def finish(self, mails: Sequence[Unfinished]) -> list[bytes]:
        return finish_with(self.reader, mails)

    def close(self) -> None:
        return None


def worker_main(config: Config, daemon: Connection, log_level: str) -> None:
    """The worker's life: pbm put together from the daemon's settings, READY said, then
    one answer for each claim the daemon sends, until the daemon's end of the pipe
    closes."""
    # Ctrl-C in a terminal reaches the whole process group: the daemon stops, and its
    # closed pipe ends the worker, which must not die first with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    initialize(config)
    setup_logging(log_level)
    reader = make_read_engine(config.database_url, config.busy_timeout_seconds)
    try:
        daemon.send((Said.READY, None))
        while True:
            daemon.send(_answer(reader, daemon.recv()))
    except (EOFError, OSError):  # the daemon closed its end: it stops, or gave up on us
        return
    finally:
        reader.dispose()


def _answer(reader: Engine, mails: Sequence[Unfinished]) -> tuple[Said, Any]:
    """The worker's answer for one claim (see `Said`)."""
    try:
        return (Said.MADE, finish_with(reader, mails))
    except StoreUnavailable as exc:
        return (Said.UNAVAILABLE, (str(exc), exc.kind))
    except Exception as exc:
        log.exception(kv("pictures_failed", error=repr(exc)))
        return (Said.FAILED, repr(exc))


class WorkerLost(Exception):
    """The worker did not answer: it died or hung past ANSWER_SECONDS."""


class PictureWorker:
    """The HTML parts made in a worker process once it is ready, by `fallback` until then
    and whenever the worker does not answer (see the module)."""

    def __init__(
        self,
        config: Config,
        fallback: InProcess,
        *,
        answer_seconds: float = ANSWER_SECONDS,
        restart_seconds: float = RESTART_SECONDS,
    ) -> None:
        self.config = config
        self.fallback = fallback
        self.answer_seconds = answer_seconds
        self.restart_seconds = restart_seconds
        self._lock = threading.Lock()  # one claim at a time on the pipe
        self._child: BaseProcess | None = None
        self._pipe: Connection | None = None
        self._ready = False
        self._started_at = float("-inf")  # time.monotonic() of the last start
        self.started = 0  # workers started, for tests and benchmarks
        self.answered = 0  # claims the worker made, for tests and benchmarks

    @property
    def pid(self) -> int | None:
        """The worker's process id, while one lives."""
        return self._child.pid if self._child is not None else None

    def finish(self, mails: Sequence[Unfinished]) -> list[bytes]:
        if all(m.order is None for m in mails):  # nothing to draw: no round trip
            return [m.raw for m in mails]
        with self._lock:
            answer = self._answer(list(mails)) if self._is_ready() else None
        if answer is None:
            return self.fallback.finish(mails)
        kind, value = answer
        if kind is Said.UNAVAILABLE:
            message, failure = value
            raise StoreUnavailable(message, failure)
        if kind is Said.FAILED:  # logged by the worker; made here, as without it
            return self.fallback.finish(mails)
        return list(value)

    def _is_ready(self) -> bool:
        """Whether a worker is ready for a claim; starts one where none lives (at most
        once in `restart_seconds`)."""
        if self._child is None or not self._child.is_alive():
            if self._child is not None:
                log.warning(kv("pictures_worker_lost", error="exited", code=self._child.exitcode))
                self._stop(kill=True)
            if time.monotonic() - self._started_at >= self.restart_seconds:
                try:
                    self._start()
                except OSError as exc:  # no process to be had (a limit): drawn here
                    log.warning(kv("pictures_worker_not_started", error=repr(exc)))
            return False
        if not self._ready:
            assert self._pipe is not None
            try:
                if self._pipe.poll(0):
                    self._ready = self._pipe.recv()[0] is Said.READY
            except (OSError, EOFError):  # died as it started: the next claim sees it
                return False
        return self._ready

    def wait_ready(self, seconds: float) -> bool:
        """Start a worker if none lives and wait at most `seconds` until it is ready:
        for tests and benchmarks, which measure the worker rather than its start."""
        deadline = time.monotonic() + seconds
        with self._lock:
            if self._child is None:
                self._start()
            while not self._is_ready() and time.monotonic() < deadline:
                time.sleep(0.05)
            return self._ready

    def _answer(self, mails: list[Unfinished]) -> tuple[Said, Any] | None:
        """The ready worker's answer for `mails`; None when it did not answer (then it is
        stopped)."""
        assert self._pipe is not None
        try:
            self._pipe.send(mails)
            if not self._pipe.poll(self.answer_seconds):
                raise WorkerLost(f"no answer in {self.answer_seconds:g} s")
            kind, value = self._pipe.recv()
        except (OSError, EOFError, WorkerLost) as exc:
            log.warning(kv("pictures_worker_lost", error=repr(exc)))
            self._stop(kill=True)  # a worker that hung would answer this claim late
            return None
        self.answered += 1
        return kind, value

    def _start(self) -> None:
        self._started_at = time.monotonic()  # a failed start waits its turn too
        ours, theirs = multiprocessing.Pipe()
        level = logging.getLevelName(logging.getLogger().getEffectiveLevel())
        # spawn: the daemon has threads, and a forked child would inherit their locks
        child = multiprocessing.get_context("spawn").Process(
            target=worker_main,
            args=(self.config, theirs, level),
            name="pbm-pictures",
            daemon=True,
        )
        try:
            child.start()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._child, self._pipe, self._ready = child, ours, False
        self.started += 1
        log.info(kv("pictures_worker", pid=self.pid))

    def _stop(self, *, kill: bool = False) -> None:
        """End the worker: a ready one closes its end of the pipe and exits (or is killed
        after STOP_SECONDS); one still starting, or `kill`ed, is killed at once."""
        child, pipe = self._child, self._pipe
        graceful = self._ready and not kill
        self._child = self._pipe = None
        self._ready = False
        if pipe is not None:
            pipe.close()
        if child is not None:
            if graceful:
                child.join(STOP_SECONDS)
            if child.is_alive():
                child.kill()
            child.join()

    def close(self) -> None:
        with self._lock:
            self._stop()

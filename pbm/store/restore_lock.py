"""The lock that keeps `pbm db restore` and the pipe intake (`pbm mail process`) apart
on a SQLite file: each pipe holds it shared while it opens and writes the database, the
restore exclusive while it puts a backup in the database's place. So no pipe writes into
a file being set aside, and no restore replaces a file a pipe is writing into. An OS lock
on a file beside the database (`pbm.sqlite3.restore-lock`), as the serve lock
(pbm.store.database_file): the kernel drops it when its holder dies, even by SIGKILL."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.exc import ArgumentError

from pbm.errors import StoreUnavailable
from pbm.store.database_file import open_lock_file
from pbm.store.engine import sqlite_file
from pbm.store.failures import file_failure

_POLL_SECONDS = 0.05


def restore_lock_path(live: Path) -> Path:
    return live.with_name(live.name + ".restore-lock")


@contextmanager
def held_by_intake(database_url: str) -> Iterator[None]:
    """Hold the lock of the database's SQLite file shared for the block (nothing for
    another database, or a file whose directory is not there: opening it fails anyway),
    or raise StoreUnavailable (busy) at once while a restore holds it: the MTA tries
    again."""
    try:
        live = sqlite_file(database_url)
    except ArgumentError:
        live = None  # no URL at all: making its engine says so, a configuration error
    if live is None or not live.parent.is_dir():
        yield
        return
    fd = _open(live)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreUnavailable(
                f"the database file {live} is being restored from a backup (pbm db "
                "restore); the message waits until it is done",
                "busy",
            ) from None
        yield
    finally:
        os.close(fd)  # drops the flock


@contextmanager
def held_for_restore(live: Path, wait_seconds: float) -> Iterator[None]:
    """Hold the lock of `live` exclusive for the block, once the pipe intakes writing
    now are done (each new one then waits, answering a temporary failure); raise
    StoreUnavailable (busy) when some still write after `wait_seconds`."""
    fd = _open(live)
    try:
        # Polled, not a blocking flock, so that the restore gives up after wait_seconds.
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreUnavailable(
                        f"pipe intakes (pbm mail process) are still writing into the "
                        f"database file {live} after {wait_seconds:g} s",
                        "busy",
                    ) from None
                time.sleep(_POLL_SECONDS)
        yield
    finally:
        os.close(fd)


def _open(live: Path) -> int:
    with file_failure():
        return open_lock_file(restore_lock_path(live), live, os.O_RDONLY)

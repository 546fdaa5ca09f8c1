"""`pbm db restore BACKUP`: a `pbm db backup` file put back in the SQLite database's
place (pbm.store.restore), never under a running `pbm serve` nor while a pipe intake
writes into it (pbm.store.restore_lock), the database there kept aside, after a
question (pbm.cli.questions)."""

from __future__ import annotations

from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from pbm.cli.common import EXIT_TEMPFAIL, EXIT_USAGE, config, fail, initialized
from pbm.cli.questions import Question, YesOption, confirm_or_refuse
from pbm.errors import SchemaNotReady, StoreUnavailable
from pbm.store.database_file import DatabaseFile
from pbm.store.engine import mark_created, sqlite_file
from pbm.store.restore import (
    RestoreRefused,
    Staged,
    put_in_place,
    remove_with_sides,
    set_aside,
    stage,
    take_mode_of,
)
from pbm.store.restore_lock import held_for_restore


def restore(
    cli: typer.Context,
    backup: Annotated[Path, typer.Argument(metavar="BACKUP", help="A file `pbm db backup` wrote.")],
    yes: YesOption = False,
) -> None:
    """Put a backup in the SQLite database's place: checked first (integrity, pbm's
    schema, upgraded when older); the database there is kept under a new name. Refused
    while pbm serve runs on the database; waits for the pipe intakes writing into it;
    asks first on a terminal, elsewhere it needs --yes."""
    cfg = config(cli)
    live = sqlite_file(cfg.database_url)
    if live is None:
        fail("restore puts back SQLite backups; for PostgreSQL use pg_restore or psql")
    live = live.absolute()
    if not backup.is_file():
        fail(f"no backup file at {backup}", EXIT_USAGE)
    if live.exists() and backup.resolve() == live.resolve():
        fail(f"{backup} is the database itself: name a backup file", EXIT_USAGE)
    initialized(cfg)  # the schema's migrations, for an older backup
    watch = DatabaseFile(live)
    try:
        watch.hold_for_serve()  # no daemon on the file now, and none starts meanwhile
    except StoreUnavailable as exc:
        if exc.kind != "busy":  # not a daemon: the lock's file cannot be made (PbmGroup)
            raise
        fail(f"{exc}; stop it first (systemctl stop pbm), then restore", EXIT_TEMPFAIL)
    try:
        _restore(backup, live, cfg.busy_timeout_seconds, yes)
    finally:
        watch.close()


def _restore(backup: Path, live: Path, busy_timeout: float, yes: bool) -> None:
    try:
        staged = stage(backup, live, busy_timeout)
    except (RestoreRefused, SchemaNotReady) as exc:  # SchemaNotReady: a newer pbm's
        fail(f"nothing restored: {exc}")
    try:
        if not yes:
            confirm_or_refuse(_question(backup, live, staged))
        with ExitStack() as pipes:
            try:  # the pipe intakes writing now finish first; later ones exit 75 meanwhile
                pipes.enter_context(held_for_restore(live, busy_timeout))
            except StoreUnavailable as exc:
                if exc.kind != "busy":
                    raise
                fail(f"nothing restored: {exc}; try again", EXIT_TEMPFAIL)
            take_mode_of(staged, live)
            kept = set_aside(live, datetime.now(UTC).strftime("%Y%m%d-%H%M%S"))
            put_in_place(staged, live)
            mark_created(live)
    finally:
        remove_with_sides(staged.path)  # a copy not put in place (a "no"), or its emptied log
    typer.echo(f"restored {backup} to {live} ({_contents(staged)})")
    if kept is not None:
        typer.echo(f"the database before the restore is kept as {kept}")


def _contents(staged: Staged) -> str:
    schema = f"schema {staged.schema}"
    if staged.schema != staged.schema_before:
        schema += f", upgraded from {staged.schema_before}"
    return f"{staged.users} accounts, {staged.boards} boards, {schema}"


def _question(backup: Path, live: Path, staged: Staged) -> Question:
    there = (
        f"the database there is kept as {live.name}.before-restore-DATE-TIME"
        if live.exists()
        else "there is no database there now"
    )
    return Question(
        doing=f"restoring {backup} over {live}",
        effects=f"{backup} ({_contents(staged)}) takes the place of {live}; {there}.",
        ask=f"Restore {backup}?",
        declined="nothing restored",
    )

"""`pbm mail process|retry|failed|outbox`: the message store from the shell.

`pbm mail process < message.eml` is what an MTA's pipe delivery runs (like pbmserv's
procmail setup): exit 0 when the message is stored (whatever its commands did), 75
(EX_TEMPFAIL) when the store is unavailable so the MTA keeps it and retries.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy.exc import OperationalError
from sqlmodel import select

from pbm.cli.common import (
    EXIT_TEMPFAIL,
    ConfigOption,
    JsonOption,
    config,
    emit,
    engine,
    fail,
    remember_config,
)
from pbm.clock import SystemClock
from pbm.errors import StoreUnavailable
from pbm.services.intake import process_message, retry_failed
from pbm.services.outbox import list_outbox, recipients_of
from pbm.store.db import session_for
from pbm.store.models import InboundMessage

mail_app = typer.Typer(help="Process mail and inspect the message store.", no_args_is_help=True)


@mail_app.callback()
def _options(config_file: ConfigOption = None) -> None:
    remember_config(config_file)


@mail_app.command("process")
def process(
    files: Annotated[
        list[Path] | None, typer.Argument(help="Message files (default: stdin).")
    ] = None,
    via: Annotated[str, typer.Option(help="How the message came in.")] = "pipe",
) -> None:
    """Store and process one message from stdin (or each file named)."""
    cfg = config()
    raws = [f.read_bytes() for f in files] if files else [sys.stdin.buffer.read()]
    try:
        eng = engine(cfg)
        for raw in raws:
            if not raw.strip():
                fail("empty message")
            status = process_message(eng, raw, via=via, clock=SystemClock(), config=cfg)
            typer.echo(status)
        eng.dispose()
    except (StoreUnavailable, OperationalError, OSError) as exc:
        typer.echo(f"error: the store is unavailable: {exc}", err=True)
        raise typer.Exit(EXIT_TEMPFAIL) from None


@mail_app.command("retry")
def retry(
    ids: Annotated[list[int] | None, typer.Argument(help="Message ids (default: all).")] = None,
) -> None:
    """Process failed messages again (after a fix)."""
    cfg = config()
    eng = engine(cfg)
    results = retry_failed(eng, clock=SystemClock(), config=cfg, ids=ids)
    eng.dispose()
    for inbound_id, status in results.items():
        typer.echo(f"{inbound_id} {status}")
    if not results:
        typer.echo("no failed messages")
    if any(s == "failed" for s in results.values()):
        raise typer.Exit(1)


@mail_app.command("failed")
def failed(as_json: JsonOption = False) -> None:
    """List messages whose processing crashed, with the last line of their traceback."""
    eng = engine()
    with session_for(eng) as session:
        rows = list(session.exec(select(InboundMessage).where(InboundMessage.status == "failed")))
    eng.dispose()
    data = [
        {
            "id": r.id,
            "message_id": r.message_id,
            "received_at": r.received_at.isoformat(),
            "error": r.error or "",
        }
        for r in rows
    ]
    last = [(d["error"].strip().splitlines() or [""])[-1] for d in data]
    emit(
        data,
        as_json,
        ["id", "received", "message-id", "error"],
        [
            [d["id"], d["received_at"][:19], d["message_id"], e]
            for d, e in zip(data, last, strict=True)
        ],
    )


@mail_app.command("outbox")
def outbox(
    status: Annotated[str, typer.Option(help="queued, sent, failed or all.")] = "queued",
    as_json: JsonOption = False,
) -> None:
    """List outgoing mail (with --json: recipients, subject and body of each)."""
    eng = engine()
    with session_for(eng) as session:
        rows = list_outbox(session, None if status == "all" else status)
    eng.dispose()
    data = [
        {
            "id": r.id,
            "status": r.status,
            "recipients": recipients_of(r),
            "subject": r.subject,
            "body": r.body,
            "message_id": r.message_id,
            "attempts": r.attempts,
            "created_at": r.created_at.isoformat(),
        }
        for r in rows
    ]
    emit(
        data,
        as_json,
        ["id", "status", "to", "subject"],
        [[d["id"], d["status"], ", ".join(d["recipients"]), d["subject"]] for d in data],
    )


__all__ = ["mail_app"]

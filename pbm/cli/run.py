"""`pbm run "quadrature show 101" --as alice`: any mail command as if mailed; the
replies are printed (and queued for the players, unless --dry-run)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from pbm.cli.common import config, engine, fail


def run(
    cli: typer.Context,
    command: Annotated[str, typer.Argument(help="The command, as a mail Subject would say it.")],
    as_user: Annotated[
        str | None, typer.Option("--as", help="Run as this userid (from his address).")
    ] = None,
    sender: Annotated[str | None, typer.Option("--from", help="Run as this address.")] = None,
    body: Annotated[str, typer.Option(help="The mail body (a comment, chat text...).")] = "",
    dry_run: Annotated[bool, typer.Option(help="Print the replies; change nothing.")] = False,
) -> None:
    """Run one mail command and print the replies it produces."""
    # loaded only here, so that `pbm --help` does not load them (pbm.cli.lazy)
    from email.message import EmailMessage
    from email.utils import format_datetime, make_msgid

    from pbm.clock import SystemClock
    from pbm.mail.inbound import parse_message
    from pbm.mail.visible import visible
    from pbm.pipeline import queue_replies, run_mail
    from pbm.services.context import Context
    from pbm.store import queries
    from pbm.store.engine import session_for

    cfg = config(cli)
    eng = engine(cfg)
    try:
        with session_for(eng) as session:
            address = sender or ""
            if as_user:
                user = queries.user_by_userid(session, as_user)
                if user is None:
                    fail(f"no userid {as_user}")
                found = queries.addresses_of(session, user.saved_id)
                if not found:
                    fail(f"{as_user} has no address")
                address = found[0]
            msg = EmailMessage()
            msg["From"] = address or "cli@localhost"
            msg["To"] = cfg.server_address
            msg["Subject"] = command
            msg["Date"] = format_datetime(datetime.now(UTC))
            msg["Message-ID"] = make_msgid(domain="cli.invalid")
            msg.set_content(body or "\n")
            mail = parse_message(msg.as_bytes())
            ctx = Context(session=session, clock=SystemClock(), config=cfg, sender=address)
            run_mail(ctx, mail)
            # Commit before printing: a reader that closes our output early (`| head`)
            # must not undo the command.
            if dry_run:
                session.rollback()
            else:
                queue_replies(ctx, mail, ctx.replies, inbound_id=None)
                session.commit()
    finally:
        eng.dispose()
    for reply in ctx.replies:
        # As the mails themselves: no player's control or bidi character on this terminal.
        typer.echo(f"To: {', '.join(reply.to) or '(nobody)'}")
        typer.echo(f"Subject: {visible(reply.subject)}")
        typer.echo("")
        typer.echo(visible(reply.body).rstrip("\n"))
        typer.echo("")
    if any(r.kind == "error" for r in ctx.replies):
        raise typer.Exit(1)

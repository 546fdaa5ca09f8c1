"""`pbm run "quadrature show 101" --as alice`: any mail command as if mailed; the
replies, bounded as a mail's, are printed (and queued for the players, unless
--dry-run)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from pbm.cli.common import EXIT_USAGE, config, engine, fail


def run(
    cli: typer.Context,
    command: Annotated[
        str, typer.Argument(metavar="COMMAND", help="The command, as a mail Subject would say it.")
    ],
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
    from pbm.pipeline import run_mail
    from pbm.services.context import Answering, ReplyKind
    from pbm.store import queries
    from pbm.work import unit_of_work

    if as_user and sender:  # --from was ignored: the mail came from his first address
        fail("--as runs from the player's first address: give --as or --from, not both", EXIT_USAGE)
    cfg = config(cli)
    eng = engine(cfg)
    try:
        # As a mail: the replies bounded like a mail's (pbm.output_limits), committed
        # before they are printed, so a reader that closes our output early (`| head`)
        # does not undo the command.
        with unit_of_work(
            eng, clock=SystemClock(), config=cfg, sender=sender or "", keep=not dry_run
        ) as unit:
            ctx = unit.ctx
            address = sender or ""
            if as_user:
                user = queries.user_by_userid(ctx.session, as_user)
                if user is None:
                    fail(f"no userid {as_user}")
                found = queries.addresses_of(ctx.session, user.saved_id)
                if not found:
                    fail(f"{as_user} has no address")
                address = found[0]
            ctx.sender = address
            msg = EmailMessage()
            msg["From"] = address or "cli@localhost"
            msg["To"] = cfg.server_address
            msg["Subject"] = command
            msg["Date"] = format_datetime(datetime.now(UTC))
            msg["Message-ID"] = make_msgid(domain="cli.invalid")
            msg.set_content(body or "\n")
            mail = parse_message(msg.as_bytes())
            ctx.answering = Answering(bounded=True, mail=mail)
            run_mail(ctx, mail)
    finally:
        eng.dispose()
    # With no sender the operator asked: his answers are mailed to nobody, so the
    # bound drops them, but they are what he ran the command for.
    unsent = [] if address else [r for r in ctx.replies if not any(r.to)]
    for reply in [*unit.replies, *unsent]:
        # As the mails themselves: no player's control or bidi character on this terminal.
        typer.echo(f"To: {', '.join(r for r in reply.to if r) or '(nobody: not mailed)'}")
        typer.echo(f"Subject: {visible(reply.subject)}")
        typer.echo("")
        typer.echo(visible(reply.body).rstrip("\n"))
        typer.echo("")
    if any(r.kind is ReplyKind.ERROR for r in ctx.replies):
        raise typer.Exit(1)

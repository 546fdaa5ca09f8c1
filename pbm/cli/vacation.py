"""`pbm vacation USERID [start|stop|status|grant DAYS]`: a player's vacation, by the
administrator."""

from __future__ import annotations

from typing import Annotated

import typer

from pbm.cli.common import EXIT_USAGE, admin_context, fail, not_an_address
from pbm.timecontrol import VACATION_CAP_DAYS

ACTIONS = ("start", "stop", "status", "grant")


def vacation(
    cli: typer.Context,
    userid: Annotated[
        str,
        typer.Argument(metavar="USERID", callback=not_an_address, help="The player's userid."),
    ],
    action: Annotated[
        str, typer.Argument(metavar="start|stop|status|grant", help="What to do.")
    ] = "status",
    days: Annotated[
        float | None, typer.Argument(metavar="DAYS", help="grant: the days to add.")
    ] = None,
) -> None:
    """Start or stop a player's vacation (it stops all his clocks), grant him days, or
    show his days."""
    if action not in ACTIONS:
        fail("the action is start, stop, status or grant DAYS", EXIT_USAGE)
    if (action == "grant") != (days is not None):
        fail(
            "grant takes a number of days (pbm vacation alice grant 5); nothing else does",
            EXIT_USAGE,
        )
    if days is not None and not 0 < days <= VACATION_CAP_DAYS:
        fail(f"grant more than 0 and at most {VACATION_CAP_DAYS:g} days, not {days:g}", EXIT_USAGE)
    # the services are loaded only here, so that `pbm --help` does not (pbm.cli.lazy)
    from pbm.services.accounts.users import find_user
    from pbm.services.correspondence import vacation as vacations

    with admin_context(cli) as ctx:
        user = find_user(ctx, userid)
        # a bot's vacation stopped its players' clocks for as long as the operator forgot
        # it; stop and status stay, to end one started before this refusal
        if user.bot and action in ("start", "grant"):
            fail(
                f"{user.userid} is a computer player: it takes no vacation "
                f"(pbm bot disable {user.userid} stops it)"
            )
        now = ctx.now()
        allowance = ctx.config.vacation_start_days
        if action == "start":
            vacations.start(ctx.session, user, now, allowance=allowance)
        elif action == "stop":
            vacations.stop(ctx.session, user, now, allowance=allowance)
        elif days is not None:
            vacations.grant(ctx.session, user, now, days, allowance=allowance)
        row = vacations.account(ctx.session, user, now, allowance=allowance)
        left = vacations.left_days(ctx.session, user, now, allowance=allowance)
        state = (
            f"on vacation since {row.started_at:%Y-%m-%d %H:%M}"
            if row.started_at
            else "not on vacation"
        )
        typer.echo(f"{user.userid}: {state}; {left:.1f} vacation days left")

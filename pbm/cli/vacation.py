"""`pbm vacation USERID [start|stop|status]`: a player's vacation, by the administrator."""

from __future__ import annotations

from typing import Annotated

import typer

from pbm.cli.common import admin_context, fail
from pbm.services import vacation as vacations
from pbm.services.accounts import find_user


def vacation(
    cli: typer.Context,
    userid: Annotated[str, typer.Argument(metavar="USERID")],
    action: Annotated[str, typer.Argument(metavar="start|stop|status")] = "status",
) -> None:
    """Start or stop a player's vacation (it stops all his clocks), or show his days."""
    if action not in ("start", "stop", "status"):
        fail("the action is start, stop or status", 2)
    with admin_context(cli) as ctx:
        user = find_user(ctx, userid)
        now = ctx.now()
        if action == "start":
            vacations.start(ctx.session, user, now)
        elif action == "stop":
            vacations.stop(ctx.session, user, now)
        row = vacations.account(ctx.session, user, now)
        left = vacations.left_days(ctx.session, user, now)
        state = (
            f"on vacation since {row.started_at:%Y-%m-%d %H:%M}"
            if row.started_at
            else "not on vacation"
        )
        typer.echo(f"{user.userid}: {state}; {left:.1f} vacation days left")

"""`pbm jobs run`: the periodic jobs once (reminders, timeouts, vacations, digests,
privacy) and the bots' due moves, for installations that run them from cron instead of
`pbm serve`."""

from __future__ import annotations

import json

import typer

from pbm.app import PERIODIC_JOBS
from pbm.cli.bot import require_engine_user
from pbm.cli.common import JsonOption, config, engine, folded
from pbm.clock import SystemClock
from pbm.jobs import did, play_bots


def run(cli: typer.Context, as_json: JsonOption = False) -> None:
    """Send due reminders and digests, forfeit boards whose time is up, end used-up
    vacations, carry out due erasures, mail due export parts, forget the text of old
    mail, play the bots' due moves. Safe to run as often as you like: nothing is ever
    done twice. Prints what it did, and nothing when nothing was due (cron mails any
    output)."""
    cfg = config(cli)
    require_engine_user(cfg)
    eng = engine(cfg)
    try:
        done: dict[str, int] = {}
        for job in PERIODIC_JOBS:  # the daemon's jobs, in the composition root's order
            done.update(job.run(eng, SystemClock(), cfg))
        done["bot_moves"] = play_bots(eng, SystemClock(), cfg)
    finally:
        eng.dispose()
    if as_json:
        typer.echo(json.dumps(done))
    elif counts := did(done):
        # the counts that happened only: from cron, a line of zeros every five minutes
        # is a mail every five minutes
        typer.echo(folded(" ".join(f"{k}={v}" for k, v in counts.items())))

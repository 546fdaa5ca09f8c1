"""`pbm jobs run`: the periodic jobs once (reminders, timeouts, vacations, digests), for
installations that run them from cron instead of `pbm serve`."""

from __future__ import annotations

import json

import typer

from pbm.cli.common import ConfigOption, JsonOption, config, engine, remember_config
from pbm.clock import SystemClock
from pbm.services.jobs import run_due

jobs_app = typer.Typer(help="Periodic jobs of correspondence play.")


@jobs_app.callback()
def _options(config_file: ConfigOption = None) -> None:
    remember_config(config_file)


@jobs_app.command("run")
def run(as_json: JsonOption = False) -> None:
    """Send due reminders and digests, forfeit boards whose time is up, end used-up
    vacations. Safe to run as often as you like: nothing is ever done twice."""
    cfg = config()
    eng = engine(cfg)
    done = run_due(eng, SystemClock(), cfg)
    eng.dispose()
    if as_json:
        typer.echo(json.dumps(done))
    else:
        typer.echo(" ".join(f"{k}={v}" for k, v in done.items()))

"""The `pbm` command line: one typer app with a sub-app per noun."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pbm.cli import records as _records  # noqa: F401  (adds game export|import|preview)
from pbm.cli.common import PbmGroup, State
from pbm.cli.db import db_app
from pbm.cli.game import game_app
from pbm.cli.helpcmd import help_command
from pbm.cli.jobs import jobs_app
from pbm.cli.mail import mail_app
from pbm.cli.ratings import ratings_app
from pbm.cli.rules import rules_app
from pbm.cli.run import run
from pbm.cli.serve import register as register_serve
from pbm.cli.tournament import tournament_app
from pbm.cli.user import user_app
from pbm.cli.vacation import vacation

app = typer.Typer(
    name="pbm",
    help="pbm: a play-by-email server for abstract board games.",
    no_args_is_help=True,
    add_completion=False,
    cls=PbmGroup,
)


@app.callback()
def _root(
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="Configuration file (default: $PBM_CONFIG, else the embedded defaults).",
        ),
    ] = None,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="Show the traceback of an operational error (database, config)."
        ),
    ] = False,
) -> None:
    """pbm: a play-by-email server for abstract board games."""
    # Every invocation starts here, so a path from an earlier one never lingers.
    State.config_path = config_file
    State.debug = debug


app.add_typer(rules_app, name="rules")
app.add_typer(db_app, name="db")
app.add_typer(user_app, name="user")
app.add_typer(game_app, name="game")
app.add_typer(mail_app, name="mail")
register_serve(app, mail_app)
app.add_typer(ratings_app, name="ratings")
app.add_typer(jobs_app, name="jobs")
app.add_typer(tournament_app, name="tournament")
app.command("run")(run)
app.command("vacation")(vacation)
app.command("help")(help_command)


def main() -> None:
    app()

"""`pbm help [TOPIC]`: the help a player gets by mail, printed from the same command
definitions (pbm.commands) that the mail `help` reply is generated from."""

from __future__ import annotations

from typing import Annotated

import typer

from pbm.cli.common import config, initialized


def help_command(
    cli: typer.Context,
    topic: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="TOPIC", help="A mail command, a game (or variant) name; none for the overview."
        ),
    ] = None,
) -> None:
    """Print the mailed help: the mail commands, a command's usage, or a game's rules."""
    # the mail commands are loaded only here, so that `pbm --help` does not (pbm.cli.lazy)
    from pbm.commands.helptext import general_help, topic_help

    cfg = config(cli)
    initialized(cfg)
    if not topic:
        typer.echo(general_help(cfg), nl=False)
        return
    for word in topic:
        typer.echo(topic_help(word, cfg), nl=False)

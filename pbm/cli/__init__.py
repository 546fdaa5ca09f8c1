"""The `pbm` command line: one typer app with a sub-app per noun.

Every command is listed here, in the order `pbm --help` lists them, by the module of
pbm.cli and the function that define it; a command's module is imported only when the
command is looked up (pbm.cli.lazy), so `pbm --help` and `pbm mail send` start at once.
The root callback puts the options of `pbm` itself, with the configuration, in the
context object (pbm.cli.common.CliState), which every command reads through its
`typer.Context`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pbm import ENV_CONFIG
from pbm.cli.common import CliState, PbmGroup
from pbm.cli.lazy import Entry, Group, LazyCommands, LazyGroup

COMMANDS: dict[str, Entry] = {
    "serve": "serve:serve_command",
    "web": "web:web_command",
    "run": "run:run",
    "vacation": "vacation:vacation",
    "help": "helpcmd:help_command",
    "rules": Group(
        "Play and inspect the games' rules locally.",
        {
            "list": "rules:list_games",
            "help": "rules:game_help",
            "play": "rules:play",
            "perft": "rules:perft_command",
        },
    ),
    "db": Group(
        "Create, upgrade, back up, restore and copy the database.",
        {
            "init": "db:init",
            "upgrade": "db:upgrade",
            "current": "db:current",
            "backup": "db:backup",
            "restore": "restore:restore",
            "copy": "db:copy_command",
        },
    ),
    "user": Group(
        "Manage player accounts.",
        {
            "add": "user:add",
            "list": "user:list_users",
            "confirm": "user:confirm",
            "show": "user:show",
            "passwd": "user:passwd",
            "disable": "user:disable",
            "enable": "user:enable",
            "rename": "user:rename",
            "delete": "user:delete",
            "export": "user:export",
            "erase": "user:erase",
        },
    ),
    "bot": Group(
        "Manage computer players (docs/bots.md).",
        {
            "add": "bot:add",
            "add-builtin": "bot:add_builtin",
            "list": "bot:list_bots",
            "show": "bot:show",
            "disable": "bot:disable",
            "enable": "bot:enable",
            "remove": "bot:remove",
        },
    ),
    "game": Group(
        "Inspect and manage boards.",
        {
            "list": "game:list_games",
            "show": "game:show",
            "new": "game:new",
            "abort": "game:abort",
            "adjudicate": "game:adjudicate",
            "undo": "game:undo",
            "replay": "game:replay_command",
            "export": "records:export",
            "preview": "records:preview",
            "import": "records:import_command",
        },
    ),
    "mail": Group(
        "Process mail and inspect the message store.",
        {
            "process": "mail:process",
            "retry": "mail:retry",
            "failed": "mail:failed",
            "outbox": "mail:outbox",
            "bounces": "mail:bounces_command",
            "send": "serve:send_command",
            "status": "serve:status_command",
            "dkim-key": "mail:dkim_key",
            "doctor": "mail:mail_doctor",
        },
    ),
    "ratings": Group(
        "Ratings per game type (pbmserv's and Glicko-2).",
        {
            "show": "ratings:show",
            "recompute": "ratings:recompute_command",
        },
    ),
    "jobs": Group("Periodic jobs of correspondence play.", {"run": "jobs:run"}),
    "tournament": Group(
        "Run tournaments.",
        {
            "create": "tournament:create",
            "list": "tournament:list_tournaments",
            "show": "tournament:show",
            "enter": "tournament:enter",
            "start": "tournament:start",
            "pairings": "tournament:pairings",
            "standings": "tournament:standings",
            "withdraw": "tournament:withdraw",
            "cancel": "tournament:cancel",
        },
    ),
}


class RootGroup(LazyGroup, PbmGroup):
    """`pbm` itself: the commands of COMMANDS, and PbmGroup's exit codes."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands(COMMANDS)


def root(
    cli: typer.Context,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            envvar=ENV_CONFIG,
            show_envvar=True,
            help="Configuration file (default: the embedded defaults).",
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
    cli.obj = CliState(config_file, debug)


# Plain help: typer's rich panels print a type after every flag (`--json <bool>`).
app = typer.Typer(
    name="pbm", add_completion=False, cls=RootGroup, rich_markup_mode=None, no_args_is_help=True
)
app.callback()(root)


def main() -> None:
    app()

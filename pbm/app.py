"""The composition root: what pbm is made of, registered in one place, in an order
written here, and handed to the daemon, the command line and the tests.

Importing any pbm module registers nothing (tests/test_app.py checks it in a fresh
interpreter); `register()` fills the registries (the games, the mail commands in their
help groups, the game-end handlers) and `initialize(config)` adds what a running pbm
needs besides: the configured templates (`pbm.texts`, set here and nowhere else) and
its periodic jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbm.commands import account, ask, correspondence, erase, export, lists, play, tournament
from pbm.commands.base import Command
from pbm.commands.registry import register as register_commands
from pbm.config import Config
from pbm.games import AnyGame, quad, quadrature, quadrupel, quarod, quarto, register_game
from pbm.jobs import JOB_SECONDS, PeriodicJob, run_due
from pbm.privacy_jobs import MAIL_TEXT_SECONDS, run_mail_text, run_privacy
from pbm.services.context import Context
from pbm.services.play import challenges, ratings
from pbm.services.play.endings import GameEnd, GameEndHandler, on_game_end
from pbm.services.tournaments import results as tournament_results
from pbm.texts import use_templates

# The games pbm plays, in the order lists name them.
GAMES: tuple[AnyGame, ...] = (quad.GAME, quadrature.GAME, quadrupel.GAME, quarod.GAME, quarto.GAME)

# The mail commands by help group (the phrase that titles it), in the order `help
# commands` lists them: account commands first, then the game commands.
HELP_GROUPS: tuple[tuple[str, tuple[Command, ...]], ...] = (
    ("help_group_account_account", account.COMMANDS),
    ("help_group_account_export", export.COMMANDS),
    ("help_group_account_erase", erase.COMMANDS),
    ("help_group_account_correspondence", correspondence.ACCOUNT_COMMANDS),
    ("help_group_account_tournament", tournament.COMMANDS),
    ("help_group_game_play", play.COMMANDS),
    ("help_group_game_lists", lists.COMMANDS),
    ("help_group_game_correspondence", correspondence.GAME_COMMANDS),
    ("help_group_game_ask", ask.COMMANDS),
)


def _rate(ctx: Context, end: GameEnd) -> None:
    if not end.removed:
        ratings.rate_finished(ctx, end.board)


def _continue_match(ctx: Context, end: GameEnd) -> None:
    if not end.removed:
        challenges.continue_match(ctx, end.board)


# What happens when a board ends, in this order: the board is rated, a tournament
# records it (and may start a round), a match starts its next game.
GAME_END_HANDLERS: tuple[GameEndHandler, ...] = (
    _rate,
    tournament_results.game_ended,
    _continue_match,
)

# Correspondence play's reminders, timeouts, vacations and digests; tournament rounds
# start from the game-end handlers, so they need no job of their own.
# Beside them, due erasures by mail and export parts, and hourly the text of old mail
# forgotten (docs/privacy.md).
PERIODIC_JOBS: tuple[PeriodicJob, ...] = (
    PeriodicJob("correspondence", JOB_SECONDS, run_due),
    PeriodicJob("privacy", JOB_SECONDS, run_privacy),
    PeriodicJob("mail_text", MAIL_TEXT_SECONDS, run_mail_text),
)


def register() -> None:
    """Fill the registries (again: nothing changes the second time); also what a
    spawned worker process runs first."""
    for game in GAMES:
        register_game(game)
    for group, commands in HELP_GROUPS:
        register_commands(group, *commands)
    for handler in GAME_END_HANDLERS:
        on_game_end(handler)


@dataclass(frozen=True)
class App:
    """A configured pbm: its configuration and its periodic jobs. Each entry point
    makes its engine from `config` (the daemon's watches its database file)."""

    config: Config
    jobs: tuple[PeriodicJob, ...] = PERIODIC_JOBS


def initialize(config: Config) -> App:
    """Everything registered, the words read from `config`'s templates, and the App for
    `config`: what the daemon, a command line that uses pbm and the tests run first."""
    register()
    use_templates(config.templates_dir)
    return App(config)

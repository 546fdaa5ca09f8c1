"""Use-cases shared by the mail commands and the CLI. No commits inside: callers own
transactions (the pipeline commits once per message).

What happens when a board ends is wired here, once, in this order: the board is rated,
a tournament records it (and may start a round), a match starts its next game. Python
runs this file before any module of the package, so every caller of a service (the
pipeline, the jobs, the CLI, the tests) gets the same handlers.
"""

from pbm.services import challenges, ratings, tournaments
from pbm.services.context import Context
from pbm.services.endings import GameEnd, on_game_end


def _rate(ctx: Context, end: GameEnd) -> None:
    if not end.removed:
        ratings.rate_finished(ctx, end.board)


def _continue_match(ctx: Context, end: GameEnd) -> None:
    if not end.removed:
        challenges.continue_match(ctx, end.board)


on_game_end(_rate)
on_game_end(tournaments.game_ended)
on_game_end(_continue_match)

"""The "maximum points" match of the Quadrupel point game (rule sheet, part 3), for the server.

The rules module plays one game at a time; a match links games. These helpers are pure:
they take the points of each finished game by *player* (the order players were named in
the challenge, not seats, since seats change between games) and say what happens next.

The rule sheet, part 3: "two consecutive games are played and the winner is the player
with the most points after scoring the first QUADRUPEL of each game. The loser of the
first game begins the second one. A third game will be played in case of a tie."
"""

from __future__ import annotations

from collections.abc import Sequence

GAMES_BEFORE_DECISION = 2


def match_result(game_points: Sequence[tuple[int, int]]) -> int | None:
    """The winning player (0 or 1) of a maximum-points match, or None if another game is
    needed. `game_points[i]` is (points of player 0, points of player 1) in game i, as in
    the finished games' Outcome scores mapped from seats to players.

    After two games the higher total wins; on a tie a further game is played, and the
    totals decide as soon as they differ (pbm's reading: a third game that is itself drawn
    leaves the tie, so yet another game follows).
    """
    if len(game_points) < GAMES_BEFORE_DECISION:
        return None
    total_0 = sum(points[0] for points in game_points)
    total_1 = sum(points[1] for points in game_points)
    if total_0 == total_1:
        return None
    return 0 if total_0 > total_1 else 1


def next_first_player(last_points: tuple[int, int], last_first: int) -> int:
    """The player (0 or 1) who moves first (takes Black) in the next game of the match.

    The loser of the last game begins (rule sheet, part 3). pbm's addition: after a drawn
    game (ply cap or repetition, both 0 points) the player who moved second in it begins.
    """
    if last_points[0] == last_points[1]:
        return 1 - last_first
    return 0 if last_points[0] < last_points[1] else 1

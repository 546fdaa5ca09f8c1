"""Matches of linked games: Quadrupel's maximum-points match (docs/games/quadrupel.md).

The Quadrupel rule sheet (Andreas Liebl-Wachsmuth 1986), part 3: "two consecutive games
are played and the winner is the player with the most points after scoring the first
QUADRUPEL of each game. The loser of the first game begins the second one. A third game
will be played in case of a tie." Each game of a match is a board of its own;
`Game.match_id` (the first game's id) and `Game.match_game` (1, 2, 3...) link them. When
a match game ends the next one is started (pbm.services.play.challenges.continue_match, which
creates boards), its first player in seat 0.

pbm's decisions where the rule sheet is silent: a game drawn without a QUADRUPEL (ply cap,
repetition, agreement) scores 0-0; a game won without points (resignation, forfeit on
time, the administrator's adjudication) decides the match for its winner; a removed game
ends the match without a result.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import col, select

from pbm.games import AnyGame as Rules
from pbm.games.quadrupel_match import match_result
from pbm.services.context import Context
from pbm.services.play.boards import Board
from pbm.store import queries
from pbm.store.models import BoardRow
from pbm.texts import phrase


def is_match(rules: Rules, options: dict[str, str]) -> bool:
    """Whether a game with these options is one game of a maximum-points match."""
    if rules.name != "quadrupel":
        return False
    resolved = rules.resolve_options(options)
    return bool(resolved.get("variant") == "points" and resolved.get("goal") == "maximum")


def link_first(ctx: Context, row: BoardRow, rules: Rules, options: dict[str, str]) -> None:
    """Make a new board the first game of a match when its options say it is one."""
    if row.match_id is None and is_match(rules, options):
        row.match_id = row.id
        row.match_game = 1
        ctx.session.add(row)


@dataclass
class MatchState:
    games: list[BoardRow]  # in match order
    userids: list[str]  # the players, in the first game's challenge order
    points: list[tuple[int, int]]  # each finished game's points, by those players
    winner: int | None  # index into userids once the match is decided
    over: bool  # decided, or ended without a result

    def totals(self) -> str:
        sums = [sum(p[i] for p in self.points) for i in range(2)]
        return ", ".join(f"{u} {s}" for u, s in zip(self.userids, sums, strict=True))


def match_state(ctx: Context, match_id: int) -> MatchState:
    games = list(
        ctx.session.exec(
            select(BoardRow).where(BoardRow.match_id == match_id).order_by(col(BoardRow.match_game))
        )
    )
    first = queries.players_of(ctx.session, match_id)
    users = [u.saved_id for _, u in first]
    userids = [u.userid for _, u in first]
    points: list[tuple[int, int]] = []
    for game in games:
        if game.status == "active":
            break
        if game.status == "removed":
            return MatchState(games, userids, points, None, True)
        by_position = [u.saved_id for _, u in queries.players_of(ctx.session, game.saved_id)]
        if game.winner is not None and game.scores is None:
            # Won without points (resignation, time, adjudication): the match is his.
            winner = users.index(by_position[game.winner])
            return MatchState(games, userids, points, winner, True)
        scores = game.scores if game.scores else [0, 0]
        mine = {by_position[i]: scores[i] for i in range(2)}
        points.append((mine[users[0]], mine[users[1]]))
    result = match_result(points) if len(points) == len(games) else None
    return MatchState(games, userids, points, result, result is not None)


def match_lines(ctx: Context, board: Board) -> list[str]:
    """The match block of a board mail: the game's number, the totals, what comes next."""
    row = board.row
    if row.match_id is None:
        return []
    state = match_state(ctx, row.match_id)
    lines = [phrase("match_game", number=row.match_game or 1, totals=state.totals())]
    if state.winner is not None:
        lines.append(phrase("match_won", userid=state.userids[state.winner]))
    elif board.active or state.over:
        return lines
    else:
        later = [g for g in state.games if (g.match_game or 0) > (row.match_game or 0)]
        if later:
            nxt = later[0]
            starter = queries.players_of(ctx.session, nxt.saved_id)[0][1].userid
            lines.append(
                phrase(
                    "match_next",
                    number=nxt.match_game,
                    label=f"{board.rules.title} Board {nxt.board}",
                    userid=starter,
                )
            )
    return lines

"""A board as the services see it: its row, its rules, its players and its position.

The move list is the source of truth: `replay` rebuilds a position from it, and the
cached `Game.position` (game.dump) must always equal that replay.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pbm.errors import BoardError, NotFoundError, PbmError
from pbm.games import GAMES, GameError, MoveError, find_game
from pbm.games import AnyGame as Rules
from pbm.games.base import State
from pbm.services.context import Context
from pbm.store import queries
from pbm.store.models import BoardRow, GamePlayer, User
from pbm.texts import echoed, phrase


def refusal(exc: GameError) -> str:
    """A rules engine's refusal as a reply says it: the move text it quotes is cut
    (pbm.texts.echoed), the reason stays whole."""
    if isinstance(exc, MoveError):
        exc.text = echoed(exc.text)
        return exc.message()
    return str(exc)


def game_over(board: Board) -> BoardError:
    """The refusal of an act on a finished board: pbmserv's words, then what to do."""
    words = phrase("game_over_next", game=board.rules.name, board=board.row.board)
    return BoardError(f"{phrase('game_over')}\n{words}", board.id)


def board_label(rules: Rules, board: str) -> str:
    """`Quarto Board 101`, as subjects, titles and pictures name a board."""
    return f"{rules.title} Board {board}"


@dataclass
class Board:
    row: BoardRow
    rules: Rules
    players: list[tuple[GamePlayer, User]]
    state: State

    @property
    def id(self) -> int:
        return self.row.saved_id

    @property
    def label(self) -> str:
        return board_label(self.rules, self.row.board)

    @property
    def userids(self) -> list[str]:
        return [u.userid for _, u in self.players]

    @property
    def labels(self) -> list[str]:
        """The players as board mails and lists name them: `pbmbot (bot)` for a bot."""
        return [
            phrase("bot_label", userid=u.userid) if u.bot else u.userid for _, u in self.players
        ]

    def index_of(self, user_id: int | None) -> int | None:
        for gp, user in self.players:
            if user.id == user_id:
                return gp.position
        return None

    def seat_of(self, index: int) -> int:
        return self.rules.player_seats(self.state)[index]

    def index_to_move(self) -> int | None:
        seat = self.rules.to_move(self.state)
        if seat is None:
            return None
        return list(self.rules.player_seats(self.state)).index(seat)

    def user_to_move(self) -> User | None:
        index = self.row.to_move
        return None if index is None else self.players[index][1]

    @property
    def active(self) -> bool:
        return self.row.status == "active"

    @property
    def options(self) -> dict[str, str]:
        return dict(self.row.options)


# What a command can name after the game: one word, no longer than BoardRow.board holds.
BOARD_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


def board_name(text: str) -> str:
    """`text` as a board's name (lower case); PbmError when a mail could not name it."""
    name = text.strip().lower()
    if not BOARD_NAME.fullmatch(name):
        raise PbmError(phrase("board_bad_name", board=echoed(text)))
    return name


def rules_for(name: str) -> Rules:
    """The rules a game word names (a name, an alias or a variant name)."""
    try:
        return find_game(name)[0]
    except GameError as exc:
        raise NotFoundError(str(exc)) from None


def absent_move_word(rules: Rules, text: str) -> str | None:
    """Why a move word of other games (pass, swap) is no move of `rules`, or None: read
    as this game's notation it failed obscurely ("PASS is not a piece")."""
    words = text.lower().split()
    word = words[0] if words else ""
    if word in rules.move_words:
        return None
    games = ", ".join(sorted(r.name for r in GAMES.values() if word in r.move_words))
    return phrase("move_word_absent", game=rules.title, word=word, games=games) if games else None


def replay(rules: Rules, options: dict[str, str], moves: Sequence[str]) -> State:
    """The position after `moves` (canonical texts) from the start position."""
    state = rules.new_state(**options)
    for text in moves:
        state = rules.apply(state, rules.parse_move(state, text))
    return state


def load_board(ctx: Context, rules: Rules, board: str) -> Board:
    found = queries.board_with_players(ctx.session, rules.name, board)
    if found is None:
        raise NotFoundError(phrase("unknown_board", game=rules.title, board=board))
    return board_from_row(ctx, found.row, rules, found.players)


def board_by_id(ctx: Context, game_id: int) -> Board:
    row = ctx.session.get(BoardRow, game_id)
    if row is None:
        raise NotFoundError(phrase("unknown_board", game="", board=str(game_id)))
    return board_from_row(ctx, row, rules_for(row.game))


def board_from_row(
    ctx: Context,
    row: BoardRow,
    rules: Rules | None = None,
    players: list[tuple[GamePlayer, User]] | None = None,
) -> Board:
    rules = rules or rules_for(row.game)
    if players is None:
        players = queries.players_of(ctx.session, row.saved_id)

    state = rules.load(row.position) if row.position else replay_row(ctx, row, rules)
    return Board(row=row, rules=rules, players=players, state=state)


def replay_row(ctx: Context, row: BoardRow, rules: Rules | None = None) -> State:
    rules = rules or rules_for(row.game)
    texts = [m.text for m in queries.moves_of(ctx.session, row.saved_id)]
    return replay(rules, row.options, texts)


def state_at(ctx: Context, board: Board, number: int) -> State:
    """The position after the first `number` moves (show board#n, preview board#n)."""
    texts = [m.text for m in queries.moves_of(ctx.session, board.id)[:number]]
    return replay(board.rules, board.options, texts)


def save_board(ctx: Context, board: Board) -> None:
    """The one way a changed board reaches its row: the cached position and whose turn it
    is, from `board.state`, with whatever else was set on the row and its players, are
    flushed together (the move list stays the source of truth: see docs/records.md)."""
    row = board.row
    position = board.rules.dump(board.state)
    to_move = board.index_to_move() if board.active else None
    # Assign only what differs: an ORM row assigned even its own value must be flushed.
    if row.position != position:
        row.position = position
    if row.to_move != to_move:
        row.to_move = to_move
    ctx.session.add(row)
    for gp, _user in board.players:
        ctx.session.add(gp)
    ctx.session.flush()


def player_writing_from(ctx: Context, board: Board, address: str) -> User | None:
    """The player of `board` whose addresses include `address`, if any: the reader a
    refusal about the board is written for."""
    for _gp, user in board.players:
        if address in queries.addresses_of(ctx.session, user.saved_id):
            return user
    return None


def board_exists(ctx: Context, rules: Rules, board: str) -> bool:
    """Whether `rules` has a board named `board` (row-locked like every board read)."""
    return queries.game_by_board(ctx.session, rules.name, board) is not None


def boards_of_type(ctx: Context, rules: Rules, statuses: Sequence[str] = ()) -> list[Board]:
    """The boards of one game, of the given statuses (none given: all of them)."""
    rows = queries.games_of_type(ctx.session, rules.name, statuses)
    return [board_from_row(ctx, row, rules) for row in rows]

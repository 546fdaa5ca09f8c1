"""`pbm game list|show|new|abort|adjudicate|undo|replay`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pbm.cli.common import EXIT_USAGE, JsonOption, admin_context, emit, fail, known_game
from pbm.cli.questions import Act, Question, YesOption, ask_first
from pbm.errors import BoardError
from pbm.games import GAMES, GameError, find_game
from pbm.games.base import parse_option_pairs
from pbm.services.accounts.users import find_user
from pbm.services.context import Context
from pbm.services.play import lists
from pbm.services.play import moves as play
from pbm.services.play.boards import (
    Board,
    board_from_row,
    load_board,
    replay_row,
    rules_for,
    save_board,
)
from pbm.services.play.challenges import NewBoard, create_game, merge_variant
from pbm.services.play.secrecy import hidden_moves, shown_text
from pbm.store import queries
from pbm.store.models import BoardRow, Move
from pbm.texts import phrase

GameArg = Annotated[
    str, typer.Argument(metavar="GAME", callback=known_game, help="Game name or alias.")
]
# BoardRow.status: a misspelt one would list nothing, as if there were no such boards.
BOARD_STATUSES = ("active", "finished", "removed")
BoardArg = Annotated[str, typer.Argument(metavar="BOARD", help="Board number or name.")]


def _game_names(game: str | None) -> list[str]:
    """The rules name `game` names, or every game's."""
    return [rules_for(game).name] if game else sorted(GAMES)


def list_games(
    cli: typer.Context,
    game: Annotated[
        str | None,
        typer.Argument(
            metavar="GAME", callback=known_game, help="Game name or alias (default: all)."
        ),
    ] = None,
    status: Annotated[str | None, typer.Option(help="active, finished or removed.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List boards (of one game, of one status)."""
    if status is not None and status not in BOARD_STATUSES:
        raise typer.BadParameter(
            f"{status!r}: write active, finished or removed", param_hint="--status"
        )
    with admin_context(cli) as ctx:
        names = _game_names(game)
        rows, data = [], []
        for name in names:
            for row in queries.games_of_type(ctx.session, name, (status,) if status else ()):
                board = board_from_row(ctx, row)
                rows.append(
                    [
                        board.rules.title,
                        row.board,
                        row.move_count,
                        " ".join(board.userids),
                        lists.status_text(board),
                    ]
                )
                data.append(
                    {
                        "game": row.game,
                        "board": row.board,
                        "moves": row.move_count,
                        "players": board.userids,
                        "status": row.status,
                        "summary": lists.status_text(board),
                    }
                )
    emit(data, as_json, ["game", "board", "moves", "players", "status"], rows)


def show(cli: typer.Context, game: GameArg, board: BoardArg, as_json: JsonOption = False) -> None:
    """Print a board's summary as an observer's mail shows it."""
    with admin_context(cli) as ctx:
        b = load_board(ctx, rules_for(game), board)
        if as_json:
            data = {
                "game": b.row.game,
                "board": b.row.board,
                "status": b.row.status,
                "players": b.userids,
                "position": b.row.position,
                "moves": _observer_moves(b, queries.moves_of(ctx.session, b.id)),
                "result": b.row.result,
                "winner": b.row.winner,
            }
            typer.echo(json.dumps(data, indent=2))
        else:
            typer.echo(lists.show_text(ctx, b, None), nl=False)


def _observer_moves(board: Board, moves: list[Move]) -> list[str]:
    """The move texts as an observer may see them (secret setups as "...")."""
    hidden = hidden_moves(board, moves, None)
    return [shown_text(m, hidden) for m in moves]


def new(
    cli: typer.Context,
    game: GameArg,
    userids: Annotated[
        list[str], typer.Argument(metavar="USERID", help="Players, the first moves first.")
    ],
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="Game option name=value.")
    ] = None,
    board: Annotated[str | None, typer.Option(help="Board name (tournaments).")] = None,
) -> None:
    """Start a board as a challenge would, and mail it to the players."""
    with admin_context(cli) as ctx:
        rules = rules_for(game)  # an unknown name fails here, with the games listed
        variant = find_game(game)[1]
        params = merge_variant(
            rules, {k: str(v) for k, v in variant.items()}, parse_option_pairs(option or []), game
        )
        b = create_game(ctx, NewBoard(rules, userids, params=params, board_name=board))
        typer.echo(f"started {b.label}")


# The sentence the players read about the board's end, as short as a signature line.
REASON_CHARACTERS = 200


def _reason(text: str) -> str:
    """`--reason` as the players read it: a sentence that fits where it is kept."""
    reason = " ".join(text.split())
    if not reason or len(reason) > REASON_CHARACTERS:
        fail(f"--reason: write one sentence of 1 to {REASON_CHARACTERS} characters", EXIT_USAGE)
    return reason


def abort(
    cli: typer.Context,
    game: GameArg,
    board: BoardArg,
    reason: Annotated[str, typer.Option(help="Told to the players.")] = "Aborted by the server.",
    yes: YesOption = False,
) -> None:
    """End a board unrated, without a result. Asks first on a terminal; elsewhere it
    needs --yes."""
    told = _reason(reason)
    ask_first(cli, yes, lambda ctx: _abort_question(load_board(ctx, rules_for(game), board), told))
    with admin_context(cli) as ctx:
        play.abort(ctx, load_board(ctx, rules_for(game), board), told)
    typer.echo(f"aborted {game} {board}")


ABORT = Act("abort", "aborting", "aborted")


def _abort_question(board: Board, told: str) -> Question:
    if not board.active:  # the service's own refusal, before the question
        raise BoardError(phrase("game_over"), board.id)
    return ABORT.question(
        board.label,
        f"{board.label} of {' and '.join(board.labels)} ends unrated, without a result; "
        f"the players are told: {told}",
    )


def adjudicate(
    cli: typer.Context,
    game: GameArg,
    board: BoardArg,
    winner: Annotated[str, typer.Argument(metavar="WINNER", help="The winner's userid, or 'tie'.")],
    reason: Annotated[str, typer.Option(help="Told to the players.")] = "Adjudicated.",
) -> None:
    """End a board with a result."""
    told = _reason(reason)
    with admin_context(cli) as ctx:
        b = load_board(ctx, rules_for(game), board)
        user = None if winner.lower() == "tie" else find_user(ctx, winner)
        play.adjudicate(ctx, b, user, told)
    typer.echo(f"adjudicated {game} {board}: {winner}")


def undo(cli: typer.Context, game: GameArg, board: BoardArg) -> None:
    """Take back a board's last move."""
    with admin_context(cli) as ctx:
        play.take_back(ctx, load_board(ctx, rules_for(game), board))
    typer.echo(f"took back the last move of {game} {board}")


def replay_command(
    cli: typer.Context,
    game: Annotated[
        str | None,
        typer.Argument(
            metavar="GAME", callback=known_game, help="Game name or alias (default: all)."
        ),
    ] = None,
    board: Annotated[
        str | None, typer.Argument(metavar="BOARD", help="Board number or name (default: all).")
    ] = None,
    fix: Annotated[bool, typer.Option(help="Rewrite cached positions that differ.")] = False,
) -> None:
    """Check that cached positions equal a replay of the move lists (exit 1 if not)."""
    bad = 0
    with admin_context(cli) as ctx:
        if game and board:
            rows = [load_board(ctx, rules_for(game), board).row]
        else:
            rows = [r for n in _game_names(game) for r in queries.games_of_type(ctx.session, n)]
        for row in rows:
            cached = _cached_board(ctx, row)
            if cached is not None and play.replay_check(cached, _move_texts(ctx, cached)):
                continue
            bad += 1
            typer.echo(f"{rules_for(row.game).title} {row.board}: cache differs from the replay")
            if fix:
                _rebuild(ctx, row, cached)
    typer.echo(f"{len(rows)} boards checked, {bad} differ" + (" (fixed)" if fix and bad else ""))
    if bad and not fix:
        fail(f"{bad} boards differ from their replay")


def _cached_board(ctx: Context, row: BoardRow) -> Board | None:
    """The board as its cached position has it; None when that position does not load
    (it differs from any replay, then)."""
    try:
        return board_from_row(ctx, row)
    except GameError:
        return None


def _move_texts(ctx: Context, board: Board) -> list[str]:
    return [m.text for m in queries.moves_of(ctx.session, board.id)]


def _rebuild(ctx: Context, row: BoardRow, cached: Board | None) -> None:
    """Give the board the position its move list replays to, through save_board."""
    rules = rules_for(row.game)
    state = replay_row(ctx, row, rules)
    if cached is None:  # only the row changes: its players need not be loaded
        cached = Board(row=row, rules=rules, players=[], state=state)
    cached.state = state
    save_board(ctx, cached)

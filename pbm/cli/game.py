"""`pbm game list|show|new|abort|adjudicate|undo|replay`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pbm.cli.common import ConfigOption, JsonOption, admin_context, emit, fail, remember_config
from pbm.games import find_game
from pbm.games.base import parse_option_pairs
from pbm.services import lists, play
from pbm.services.accounts import find_user
from pbm.services.boards import Board, board_from_row, load_board, replay, rules_for
from pbm.services.challenges import create_game, merge_variant
from pbm.services.secrecy import hidden_moves, shown_text
from pbm.store import queries
from pbm.store.models import Move

game_app = typer.Typer(help="Inspect and manage boards.", no_args_is_help=True)

GameArg = Annotated[str, typer.Argument(metavar="GAME", help="Game name or alias.")]
BoardArg = Annotated[str, typer.Argument(metavar="BOARD", help="Board number or name.")]


@game_app.callback()
def _options(config_file: ConfigOption = None) -> None:
    remember_config(config_file)


@game_app.command("list")
def list_games(
    game: Annotated[str | None, typer.Argument(metavar="[GAME]")] = None,
    status: Annotated[str | None, typer.Option(help="active, finished or removed.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List boards (of one game, of one status)."""
    with admin_context() as ctx:
        names = [rules_for(game).name] if game else sorted({*_all_game_names(ctx)})
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


def _all_game_names(ctx) -> list[str]:  # type: ignore[no-untyped-def]
    from sqlmodel import select

    from pbm.store.models import Game

    return list(ctx.session.exec(select(Game.game).distinct()))


@game_app.command("show")
def show(game: GameArg, board: BoardArg, as_json: JsonOption = False) -> None:
    """Print a board's summary as an observer's mail shows it."""
    with admin_context() as ctx:
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


@game_app.command("new")
def new(
    game: GameArg,
    userids: Annotated[list[str], typer.Argument(help="Players, the first moves first.")],
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="Game option name=value.")
    ] = None,
    board: Annotated[str | None, typer.Option(help="Board name (tournaments).")] = None,
) -> None:
    """Start a board as a challenge would, and mail it to the players."""
    with admin_context() as ctx:
        rules = rules_for(game)  # an unknown name fails here, with the games listed
        variant = find_game(game)[1]
        params = merge_variant(
            rules, {k: str(v) for k, v in variant.items()}, parse_option_pairs(option or []), game
        )
        b = create_game(ctx, rules, userids, params=params, board_name=board)
        typer.echo(f"started {b.label}")


@game_app.command("abort")
def abort(
    game: GameArg,
    board: BoardArg,
    reason: Annotated[str, typer.Option(help="Told to the players.")] = "Aborted by the server.",
) -> None:
    """End a board unrated, without a result."""
    with admin_context() as ctx:
        play.abort(ctx, load_board(ctx, rules_for(game), board), reason)
    typer.echo(f"aborted {game} {board}")


@game_app.command("adjudicate")
def adjudicate(
    game: GameArg,
    board: BoardArg,
    winner: Annotated[str, typer.Argument(help="The winner's userid, or 'tie'.")],
    reason: Annotated[str, typer.Option(help="Told to the players.")] = "Adjudicated.",
) -> None:
    """End a board with a result."""
    with admin_context() as ctx:
        b = load_board(ctx, rules_for(game), board)
        user = None if winner.lower() == "tie" else find_user(ctx, winner)
        play.adjudicate(ctx, b, user, reason)
    typer.echo(f"adjudicated {game} {board}: {winner}")


@game_app.command("undo")
def undo(game: GameArg, board: BoardArg) -> None:
    """Take back a board's last move."""
    with admin_context() as ctx:
        play.take_back(ctx, load_board(ctx, rules_for(game), board))
    typer.echo(f"took back the last move of {game} {board}")


@game_app.command("replay")
def replay_command(
    game: Annotated[str | None, typer.Argument(metavar="[GAME]")] = None,
    board: Annotated[str | None, typer.Argument(metavar="[BOARD]")] = None,
    fix: Annotated[bool, typer.Option(help="Rewrite cached positions that differ.")] = False,
) -> None:
    """Check that cached positions equal a replay of the move lists (exit 1 if not)."""
    bad = 0
    checked = 0
    with admin_context() as ctx:
        if game and board:
            rows = [load_board(ctx, rules_for(game), board).row]
        else:
            names = [rules_for(game).name] if game else _all_game_names(ctx)
            rows = [r for n in names for r in queries.games_of_type(ctx.session, n)]
        for row in rows:
            assert row.id is not None
            rules = rules_for(row.game)
            texts = [m.text for m in queries.moves_of(ctx.session, row.id)]
            position = rules.dump(replay(rules, json.loads(row.options), texts))
            checked += 1
            if position != row.position:
                bad += 1
                typer.echo(f"{rules.title} {row.board}: cache differs from the replay")
                if fix:
                    row.position = position
                    ctx.session.add(row)
    typer.echo(f"{checked} boards checked, {bad} differ" + (" (fixed)" if fix and bad else ""))
    if bad and not fix:
        fail(f"{bad} boards differ from their replay")

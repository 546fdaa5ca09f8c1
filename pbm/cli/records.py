"""`pbm game export|import|preview`: game records (docs/records.md) on the command line
(registered under `pbm game` in pbm.cli)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pbm.cli.common import EXIT_USAGE, admin_context, fail, known_game, registered
from pbm.errors import PbmError
from pbm.games import GameError
from pbm.services.accounts import bulk_export
from pbm.services.accounts.users import find_user
from pbm.services.play import record_formats, records
from pbm.services.play.boards import load_board, rules_for

FileArg = Annotated[
    Path,
    typer.Argument(metavar="FILE", help="A record file (pbm text, JSON or SGF), - for stdin."),
]


def _read(path: Path) -> records.Record:
    try:
        if str(path) == "-":
            text = typer.get_text_stream("stdin").read()
        else:
            text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        fail(f"{path} is no record: records are text in UTF-8", EXIT_USAGE)
    except OSError as exc:  # typer's own checks of a Path refuse "-" (stdin)
        fail(f"cannot read {path}: {exc.strerror}", EXIT_USAGE)
    try:
        return record_formats.read(text)
    except PbmError as exc:
        fail(str(exc))


def export(
    cli: typer.Context,
    game: Annotated[
        str | None, typer.Argument(metavar="GAME", callback=known_game, help="Game name or alias.")
    ] = None,
    board: Annotated[
        str | None, typer.Argument(metavar="BOARD", help="Board number or name.")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write.")] = None,
    form: Annotated[
        records.RecordFormat,
        typer.Option("--format", help="pbm text, JSON, or SGF for Quadrature (docs/records.md)."),
    ] = records.RecordFormat.PBM,
    player: Annotated[
        str | None,
        typer.Option("--player", help="Every board of this player (of GAME, if given)."),
    ] = None,
    finished: Annotated[bool, typer.Option("--finished", help="Finished boards only.")] = False,
) -> None:
    """Print (or write) the complete record of a board, or of every board of a player."""
    # Each of these was ignored without a word.
    if player is not None and board is not None:
        fail("--player exports all his boards: name no BOARD with it", EXIT_USAGE)
    if player is None and finished:
        fail("--finished goes with --player", EXIT_USAGE)
    with admin_context(cli) as ctx:
        try:
            if player is not None:
                which = bulk_export.Which.FINISHED if finished else bulk_export.Which.ALL
                name = rules_for(game).name if game else None
                request = bulk_export.ExportRequest(name, which)
                boards = bulk_export.boards_of(ctx, find_user(ctx, player), request)
                text = bulk_export.player_records(ctx, boards, form)
            elif game is None or board is None:
                fail("Name a GAME and a BOARD, or a player with --player.")
            else:
                text = record_formats.write(ctx, load_board(ctx, rules_for(game), board), form)
        except PbmError as exc:
            fail(str(exc))
    if player is not None and not text.strip():  # not an empty output, as if it had worked
        only = " (SGF holds Quadrature boards only)" if form is records.RecordFormat.SGF else ""
        typer.echo(f"{player} has no boards to export{only}", err=True)
        return
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}")
    typer.echo(f"wrote {output}")


def preview(path: FileArg) -> None:
    """Read a record, replay its moves under the game's rules, print the final board."""
    registered()
    record = _read(path)
    try:
        board = records.check(record)
    except (PbmError, GameError) as exc:
        fail(str(exc))
    typer.echo(
        f"{record.game} board {record.board}: {' '.join(record.players)}, "
        f"{len(record.moves)} moves, {record.status}"
    )
    typer.echo(board)


def import_command(
    cli: typer.Context,
    path: FileArg,
    board: Annotated[str | None, typer.Option("--board", help="Name for the new board.")] = None,
) -> None:
    """Store a record as a new board (its players must have accounts)."""
    record = _read(path)
    with admin_context(cli) as ctx:
        imported = records.import_record(ctx, record, board)
        typer.echo(f"imported {imported.label} ({imported.row.move_count} moves)")

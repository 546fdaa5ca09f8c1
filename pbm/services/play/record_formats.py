"""One door to every record format (docs/records.md): write a board in a chosen format,
read a record whatever its format (told by its first characters)."""

from __future__ import annotations

from pbm.services.context import Context
from pbm.services.play import records, records_json, records_sgf
from pbm.services.play.boards import Board
from pbm.services.play.records import RecordFormat


def write(ctx: Context, board: Board, form: RecordFormat) -> str:
    if form is RecordFormat.JSON:
        return records_json.dumps(ctx, board)
    if form is RecordFormat.SGF:
        return records_sgf.to_sgf(ctx, board)
    return records.export(ctx, board)


def read(text: str) -> records.Record:
    """A record in any format; checks its form, not its moves (see `records.check`)."""
    if records_json.looks_like_json(text):
        return records_json.from_json(text)
    if records_sgf.looks_like_sgf(text):
        return records_sgf.from_sgf(text)
    return records.parse(text)

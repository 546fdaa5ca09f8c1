"""A player's boards as records, all at once (docs/records.md, "Exporting all your
games"): the `export` mail command's zip and `pbm game export --player`."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pbm.clock import as_utc
from pbm.errors import PbmError
from pbm.services.context import Attachment, Context, Reply, ReplyKind
from pbm.services.play import record_formats, records_json
from pbm.services.play.boards import Board, board_from_row
from pbm.services.play.records import RecordFormat
from pbm.services.play.records_sgf import GAME as SGF_GAME
from pbm.services.play.secrecy import hidden_moves
from pbm.store import queries
from pbm.store.models import BoardRow, User
from pbm.texts import phrase

# Room in an export mail for its headers, its text and base64's 4/3 on the zip.
MAIL_OVERHEAD_BYTES = 16_384


class Which(StrEnum):
    """The boards an export takes."""

    ALL = "all"
    FINISHED = "finished"


@dataclass(frozen=True, order=True)
class BoardKey:
    """Where a board comes in an export: by its start, then its number in the table."""

    created_at: datetime
    game_id: int


@dataclass(frozen=True)
class ExportRequest:
    game: str | None = None  # a game's canonical name; None: every game
    which: Which = Which.ALL
    since: datetime | None = None  # boards started at or after it
    start: BoardKey | None = None  # a later part's first board (pbm.services.accounts.export_parts)


@dataclass(frozen=True)
class ExportZip:
    data: bytes
    boards: int
    # When the bound cut the export: the first board left out, where the next part
    # starts; None when every board is in.
    rest: BoardKey | None


def confirmed_address(ctx: Context, user: User) -> str | None:
    """The one address an export or a copy of a player's data may go to: his first
    confirmed address (`first_addresses` returns confirmed ones only; the consent gate
    in pbm.outgoing.queue_replies holds it again); None when he has none."""
    addresses = queries.first_addresses(ctx.session, [user.saved_id])
    return addresses.get(user.saved_id)


def key_of(row: BoardRow) -> BoardKey:
    return BoardKey(as_utc(row.created_at), row.saved_id)


def mail_to_confirmed(
    ctx: Context, user: User, subject: str, body: str, attachment: Attachment | None = None
) -> str:
    """Mail the player at his confirmed address only; returns it. PbmError when he has
    none."""
    address = confirmed_address(ctx, user)
    if address is None:
        raise PbmError(phrase("export_no_address", userid=user.userid))
    ctx.reply(
        Reply(
            [address],
            subject,
            body + "\n",
            ReplyKind.ACCOUNT,
            user_id=user.saved_id,
            attachment=attachment,
        )
    )
    return address


def boards_of(ctx: Context, user: User, request: ExportRequest) -> list[Board]:
    """His boards the request names, oldest first, leaving out a board while some of its
    moves are still secret to him (a record lists every move)."""
    statuses = ("finished",) if request.which is Which.FINISHED else ()
    rows = queries.games_of_user(ctx.session, user.saved_id, request.game, statuses)
    since = as_utc(request.since) if request.since is not None else None
    boards = []
    for row in sorted(rows, key=key_of):
        if since is not None and as_utc(row.created_at) < since:
            continue
        if request.start is not None and key_of(row) < request.start:
            continue
        board = board_from_row(ctx, row)
        seat = board.index_of(user.saved_id)
        if not hidden_moves(board, queries.moves_of(ctx.session, board.id), seat):
            boards.append(board)
    return boards


def board_files(ctx: Context, board: Board) -> list[tuple[str, str]]:
    """(name in the zip, text) of one board's records: pbm text and JSON, and SGF for
    Quadrature."""
    stem = f"{board.rules.name}/{board.rules.name}-{board.row.board}"
    forms = [RecordFormat.PBM, RecordFormat.JSON]
    if board.rules.name == SGF_GAME:
        forms.append(RecordFormat.SGF)
    suffix = {RecordFormat.PBM: "txt", RecordFormat.JSON: "json", RecordFormat.SGF: "sgf"}
    return [(f"{stem}.{suffix[f]}", record_formats.write(ctx, board, f)) for f in forms]


def _zip(files: list[tuple[str, str]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files:
            archive.writestr(name, text)
    return buffer.getvalue()


def _directory_bytes(names: list[str]) -> int:
    """What closing a zip adds: a central directory entry a file, then its end record."""
    return sum(46 + len(name.encode()) for name in names) + 22


def zip_bound(mail_bytes: int) -> int:
    """The largest zip a mail of `mail_bytes` carries (base64 makes 3 bytes 4)."""
    return max((mail_bytes - MAIL_OVERHEAD_BYTES) * 3 // 4, 0)


def player_zip(ctx: Context, boards: list[Board], limit: int) -> ExportZip:
    """The boards' records in one zip of at most `limit` bytes: the oldest boards that fit
    (at least one, so that an export always moves on)."""
    files: list[tuple[str, str]] = []
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for count, board in enumerate(boards):
            these = board_files(ctx, board)
            for name, text in these:
                archive.writestr(name, text)
            names = [name for name, _ in (*files, *these)]
            if buffer.tell() + _directory_bytes(names) > limit and count > 0:
                # Written once more without the board that went past the bound.
                return ExportZip(_zip(files), count, key_of(board.row))
            files += these
    return ExportZip(buffer.getvalue(), len(boards), None)


def player_records(ctx: Context, boards: list[Board], form: RecordFormat) -> str:
    """The boards in one text: JSON as an array, pbm text records one after the other,
    SGF as a collection (its boards of other games are left out)."""
    if form is RecordFormat.JSON:
        return json.dumps([records_json.to_json(ctx, b) for b in boards], indent=2) + "\n"
    if form is RecordFormat.SGF:
        boards = [b for b in boards if b.rules.name == SGF_GAME]
    return "".join(record_formats.write(ctx, b, form) for b in boards)

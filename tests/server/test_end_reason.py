"""How a board ended is an `EndReason` stored beside the sentence people read: each way
of ending stores its own, the result line reads it, and the migration gives boards
that ended before it the word their sentence was written for."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text
from sqlmodel import select

from pbm.errors import PbmError
from pbm.services.play import records
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, EndReason
from pbm.store.schema import alembic_config
from tests.server.conftest import Server, board_row, play_first_moves


def test_each_way_of_ending_stores_its_reason(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    server.send(alice, "quadrature challenge alice bob")
    assert board_row(server, "quadrature").end_reason is None
    play_first_moves(server, "quadrature", count=2)
    server.send(bob, "quadrature resign 101 bob secret")
    row = board_row(server, "quadrature")
    assert (row.end_reason, row.result_reason) == (EndReason.RESIGNED, "bob resigns.")
    server.send(alice, "quadrature challenge alice bob")
    server.send(bob, "quadrature resign 102 bob secret")
    row = board_row(server, "quadrature", "102")
    assert row.status == "removed" and row.end_reason is EndReason.DECLINED
    server.send(alice, "quadrature challenge alice bob")
    play_first_moves(server, "quadrature", "103", count=2)
    server.send(alice, "quadrature move 103 alice secret propose")
    server.send(bob, "quadrature move 103 bob secret accept")
    assert board_row(server, "quadrature", "103").end_reason is EndReason.DRAW_AGREED


def test_a_board_the_rules_ended_says_so_as_a_sentence(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, _ = pair
    server.send(alice, "quarto challenge alice bob")
    mails = play_first_moves(server, "quarto")
    row = board_row(server, "quarto")
    assert row.end_reason is EndReason.RULES
    assert row.result_reason is not None and row.result_reason.startswith("quarto: ")
    [line] = [x for x in mails[0].body.splitlines() if "Game won by" in x]
    assert line.startswith("Quarto: row 1 ")


def test_upgrading_reads_the_end_reason_from_the_stored_sentence(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    command.upgrade(alembic_config(engine), "0014")
    sentences = {
        "resigned": ("finished", "bob resigns."),
        "forfeit": ("finished", "bob has not moved for 7 days.\nbob forfeits on Quarto 2."),
        "withdrew": (
            "finished",
            "bob has withdrawn from tournament cup.\nbob forfeits on Quarto 3.",
        ),
        "draw-agreed": ("finished", "The players agreed to a draw."),
        "rules": ("finished", "quarto: row 1 all tall"),
        "declined": ("removed", "bob has decided not to play."),
        "aborted": ("removed", "Aborted by the server."),
    }
    with engine.begin() as conn:
        for number, (status, reason) in enumerate(sentences.values(), start=1):
            conn.execute(
                text(
                    "INSERT INTO games (game, board, status, options, server_options, position,"
                    " move_count, created_at, last_move_at, result_reason, rated) VALUES"
                    " ('quarto', :board, :status, '{}', '{}', '', 0, '2026-01-01 00:00:00',"
                    " '2026-01-01 00:00:00', :reason, 1)"
                ),
                {"board": str(number), "status": status, "reason": reason},
            )
        conn.execute(
            text(
                "INSERT INTO games (game, board, status, options, server_options, position,"
                " move_count, created_at, last_move_at, rated) VALUES ('quarto', '99',"
                " 'active', '{}', '{}', '', 0, '2026-01-01 00:00:00', '2026-01-01 00:00:00', 1)"
            )
        )
    command.upgrade(alembic_config(engine), "heads")
    with session_for(engine) as session:
        found = {row.board: row.end_reason for row in session.exec(select(BoardRow))}
    engine.dispose()
    expected = {str(n): EndReason(word) for n, word in enumerate(sentences, start=1)}
    assert found == expected | {"99": None}


RECORD = """pbm game record 1
Game: quarto
Board: 101
Started: 2026-11-22T02:41:00Z
Player: 1 alice
Player: 2 bob
Result: won alice
Ended-By: {end}
Reason: bob resigns.
Moves:
End
"""


def test_a_record_keeps_how_its_board_ended() -> None:
    assert records.parse(RECORD.format(end="resigned")).end is EndReason.RESIGNED
    with pytest.raises(PbmError) as refused:
        records.parse(RECORD.format(end="lost"))
    said = str(refused.value)
    assert "'Ended-By:' 'lost' should be one of: rules, resigned, forfeit" in " ".join(said.split())

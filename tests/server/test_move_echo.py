"""The move echo (what the rules said of a move, "g4-g5 converts c5") in every game:
stored with the move when it is played by mail, shown in the board mail's status block
and move list, and written in game records; views of an earlier position (`show
board#n`, `preview`) that say what they are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from pbm.services.context import Context
from pbm.services.play import records
from pbm.services.play.boards import load_board, rules_for
from pbm.store.engine import session_for
from pbm.store.models import Move
from tests.server.conftest import Server, board_row, legal_texts, seat_to_move

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

# (golden playthrough, challenge, the move number with an echo, that echo)
CASES = [
    ("quadrature-reduction", "quadrature challenge alice bob", 7, "f6-e7 converts c7"),
    ("quad-15-capture-four", "quad challenge -counters=15 alice bob", 31, "c2-c3 x c4"),
    ("quarto-win", "quarto challenge alice bob", 2, "b2 SDQF: places TLRH on b2, gives SDQF"),
    ("quadrupel-added-beating", "quadrupel-added challenge alice bob", 4, "d3-b3-b5"),
    (
        "quarod-5-tiebreak",
        "quarod challenge -size=5 alice bob",
        11,
        "d2<>e2 (c2 and e3 no longer engaged)",
    ),
]


def _play(server: Server, game: str, moves: list[str]) -> str:
    """Play `moves` by mail, each by the player to move; returns the last mover."""
    userid = ""
    for text in moves:
        userid = ("alice", "bob")[seat_to_move(board_row(server, game))]
        address = f"{userid}@players.example"
        assert server.send(address, f"{game} move 101 {userid} secret {text}") == "done"
    return userid


def _spec(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / f"{name}.moves").read_text())


def _export(server: Server, game: str) -> str:
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        return records.export(ctx, load_board(ctx, rules_for(game), "101"))


@pytest.mark.parametrize(("name", "challenge", "number", "echo"), CASES, ids=[c[0] for c in CASES])
def test_the_echo_is_mailed_listed_and_recorded(
    server: Server, pair: tuple[str, str], name: str, challenge: str, number: int, echo: str
) -> None:
    spec = _spec(name)
    game = spec["game"]
    assert server.send(pair[0], challenge) == "done"
    _play(server, game, spec["moves"][: number - 1])
    server.new_mail()
    text = spec["moves"][number - 1]
    mover = _play(server, game, [text])
    mails = server.new_mail()
    assert len(mails) == 2
    for mail in mails:
        # The status block names the last move with its echo ...
        assert f"\n{mover} {echo}\n" in mail.body
        # ... and the move list carries it when it fits a column, else the bare move.
        cell = f"{number} {echo}" if len(f"{number} {echo}") <= 32 else f"{number} {text}"
        assert f"   {cell}" in mail.body or f"  {cell}\n" in mail.body
        assert max(len(line) for line in mail.body.splitlines()) <= 72
    with session_for(server.engine) as session:
        stored = session.exec(select(Move).where(Move.number == number)).one()
        assert stored.echo == echo
        texts = [m.text for m in session.exec(select(Move).order_by(col(Move.number)))]
    # `show` lists every move with the same rule.
    server.send(pair[0], f"{game} show 101")
    [shown] = server.new_mail()
    assert f"\n{mover} {echo}\n" in shown.body
    # The record writes the echo after the move; reading it back ignores it.
    record = _export(server, game)
    line = next(x for x in record.splitlines() if x.startswith(f"{number} {mover} "))
    assert line.endswith(f" {text} # {echo}")
    assert [m.text for m in records.parse(record).moves] == texts


def test_moves_without_a_stored_echo_get_it_by_replay(
    server: Server, pair: tuple[str, str]
) -> None:
    """Moves played before the echo was kept (NULL) show and record the same echo."""
    spec = _spec("quad-15-capture-four")
    server.send(pair[0], "quad challenge -counters=15 alice bob")
    _play(server, "quad", spec["moves"][:31])
    before = _export(server, "quad")
    with session_for(server.engine) as session:
        for move in session.exec(select(Move)):
            move.echo = None
            session.add(move)
        session.commit()
    assert _export(server, "quad") == before
    server.new_mail()
    server.send(pair[1], "quad show 101")
    [shown] = server.new_mail()
    assert "31 c2-c3 x c4" in shown.body


def test_import_reads_old_and_new_records(server: Server, pair: tuple[str, str]) -> None:
    spec = _spec("quadrature-reduction")
    server.send(pair[0], "quadrature challenge alice bob")
    _play(server, "quadrature", spec["moves"][:8])
    new = _export(server, "quadrature")
    assert " # f6-e7 converts c7\n" in new
    old = "".join(line.partition(" # ")[0] + "\n" for line in new.splitlines())
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        for text in (new, old):
            imported = records.import_record(ctx, records.parse(text))
            again = records.export(ctx, imported)
            # The echoes come back from the rules, whether the record had them or not.
            assert again == new.replace("Board: 101", f"Board: {imported.row.board}")
        session.commit()


def test_a_hidden_setup_hides_its_echo(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    server.send(alice, "quadrupel-points challenge alice bob")
    server.new_mail()
    setup = legal_texts(server, "quadrupel")[0]
    _play(server, "quadrupel", [setup])
    mails = {m.to[0]: m.body for m in server.new_mail()}
    assert "\nalice setup (kept secret until both players have set up)\n" in mails[alice]
    assert "\nalice ...\n" in mails[bob]
    values = setup.split()[1:]
    assert not any(value in mails[bob] for value in values)
    # The second setup reveals both: its echo names them, to everyone.
    _play(server, "quadrupel", [legal_texts(server, "quadrupel")[0]])
    revealed = server.new_mail()
    assert sorted(m.to[0] for m in revealed) == [alice, bob]
    for body in (m.body for m in revealed):
        assert "\nbob setup done; Black " in body


def test_show_an_earlier_position_says_what_it_is(server: Server, pair: tuple[str, str]) -> None:
    spec = _spec("quarto-win")
    server.send(pair[0], "quarto challenge alice bob")
    _play(server, "quarto", spec["moves"])
    assert board_row(server, "quarto").status == "finished"
    server.new_mail()
    server.send(pair[0], "quarto show 101#3")
    [shown] = server.new_mail()
    body = shown.body
    assert body.startswith("Position after move 3 of 11 on Quarto Board 101\n")
    assert " to move in this position." in body
    for current in ("Game won", "rating", "Time used", "Game started", "It is ", "QUARTO"):
        assert current not in body, current
    # The move list stops at move 3, whose echo the status block gives.
    assert "\n4 " not in body and " 4 " not in body.split("\n\n")[2]


def test_show_an_earlier_position_of_an_active_board(server: Server, pair: tuple[str, str]) -> None:
    spec = _spec("quadrature-reduction")
    server.send(pair[0], "quadrature challenge alice bob")
    _play(server, "quadrature", spec["moves"][:9])
    server.new_mail()
    server.send(pair[1], "quadrature show 101#7")
    [shown] = server.new_mail()
    lines = shown.body.splitlines()
    assert lines[0] == "Position after move 7 of 9 on Quadrature Board 101"
    mover = ("alice", "bob")[0]  # moves alternate: move 7 is the first player's
    assert f"{mover} f6-e7 converts c7" in lines
    assert "bob to move in this position." in lines
    assert "White to move" in shown.body or "Black to move" in shown.body
    assert not any(line.startswith(("It is ", "Game started", "Time used")) for line in lines)


def test_preview_says_which_position_it_shows(server: Server, pair: tuple[str, str]) -> None:
    spec = _spec("quadrature-reduction")
    server.send(pair[0], "quadrature challenge alice bob")
    _play(server, "quadrature", spec["moves"][:7])
    server.new_mail()
    server.send(pair[1], f"quadrature preview 101#6 {spec['moves'][6]}")
    [preview] = server.new_mail()
    lines = preview.body.splitlines()
    assert "Position after move 6 of 7, then the moves previewed: f6-e7." in lines
    assert "alice f6-e7 converts c7" in lines  # the previewed move's echo
    assert "bob to move in this position." in lines
    assert not any(line.startswith(("It is ", "Game started")) for line in lines)


def test_views_of_the_start_position_say_so(server: Server, pair: tuple[str, str]) -> None:
    """A submit on a board with no move yet, a preview of it and show board#0 name the
    start position: "after move 0 of 0" said nothing."""
    server.send(pair[0], "quarto challenge alice bob")
    first = legal_texts(server, "quarto")[0]
    server.new_mail()
    server.send(pair[0], f"quarto submit 101 alice secret {first}")
    [submitted] = server.new_mail()
    assert f"The start position, then the moves previewed: {first}." in submitted.body
    assert "after move 0" not in submitted.body
    server.send(pair[0], "quarto preview 101")
    [kept] = server.new_mail()
    assert "The start position." in kept.body.splitlines()
    _play(server, "quarto", [first])
    server.new_mail()
    server.send(pair[1], "quarto show 101#0")
    [shown] = server.new_mail()
    assert shown.subject == "Quarto Board 101 at the start"
    assert shown.body.startswith("Start position on Quarto Board 101 (the board is at move 1)\n")

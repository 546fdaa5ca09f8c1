"""Ratings when games end (pbmserv's published sample numbers, Glicko-2 beside them),
the standings/ratings/history replies, recompute, and game records' round trip."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlmodel import select

from pbm.errors import PbmError
from pbm.ratings import pbmserv
from pbm.services.context import Context
from pbm.services.play import records
from pbm.services.play.boards import load_board, rules_for
from pbm.services.play.ratings import recompute, snapshot
from pbm.store.engine import session_for
from pbm.store.models import BoardRow, Move
from tests.server.conftest import Server, legal_texts

HOUR = timedelta(hours=1)


def play_two(server: Server, a: tuple[str, str], b: tuple[str, str], board: str) -> None:
    """One move each (so resigning is a loss, not declining), an hour apart."""
    for sender, userid in (a, b):
        server.clock.advance(HOUR)
        text = legal_texts(server, "quadrature", board)[0]
        assert server.send(sender, f"quadrature move {board} {userid} secret {text}") == "done"
    server.new_mail()


@pytest.fixture
def people(server: Server) -> dict[str, str]:
    return {u: server.signup(u) for u in ("alice", "bob", "carol")}


def test_pbmserv_sample_numbers_through_mail(server: Server, people: dict[str, str]) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    server.send(alice, "quadrature challenge alice bob")
    server.new_mail()
    play_two(server, (alice, "alice"), (bob, "bob"), "101")
    server.send(alice, "quadrature move 101 alice secret propose")
    server.send(bob, "quadrature move 101 bob secret accept")
    ended = server.new_mail()[-2:]
    for m in ended:
        assert "Game was a tie.\n\nalice's rating is 1624 (provisional).\n" in m.body
        assert "bob's rating is 1624 (provisional)." in m.body
    server.send(alice, "quadrature challenge alice carol")
    server.new_mail()
    play_two(server, (alice, "alice"), (carol, "carol"), "102")
    server.send(carol, "quadrature resign 102 carol secret")
    ended = server.new_mail()
    assert all("alice's rating is 1737 (provisional)." in m.body for m in ended)
    assert all("carol's rating is 1436 (provisional)." in m.body for m in ended)
    server.send(bob, "quadrature standings")
    [standings] = server.new_mail()
    assert standings.subject == "Quadrature Standings"
    lines = standings.body.splitlines()
    assert lines[:4] == [
        "                Provisionals",
        "                ============",
        "Rank Name             Rating  Won Lost Ties   Active/Limit  Seeking",
        "---- ---------------- ------ ---- ---- ----   ------------  -------",
    ]
    assert lines[4] == "  1  alice              1737    1    0    1"
    assert lines[5] == "  2  bob                1624    0    0    1"
    assert lines[6] == "  3  carol              1436    0    1    0"
    assert "  1P alice              1737    1    0    1" in lines
    server.send(bob, "quadrature ratings")
    [ratings] = server.new_mail()
    assert ratings.subject == "Quadrature Ratings"
    alice_line = next(line for line in ratings.body.splitlines() if " alice " in line)
    rank, name, rating, games, glicko, rd = alice_line.split()
    assert (rank, name, rating, games) == ("1", "alice", "1737P", "2")
    assert int(glicko) > 1500 and int(rd) < 350  # a win and a draw: up, and surer
    server.send(bob, "quadrature history alice")
    [history] = server.new_mail()
    assert history.subject == "Historical List of Quadrature games"
    table, _, ends = history.body.partition("The last move of each board:\n")
    rows = [line for line in table.splitlines() if line.strip()[:3] in ("101", "102")]
    assert [r.split()[0] for r in rows] == ["102", "101"]  # latest first
    assert "alice won" in rows[0] and rows[1].endswith("a tie")
    # Under pbmserv's table, each board's last move with what the rules said of it.
    last = ends.splitlines()
    assert [line.split(":")[0] for line in last] == ["102", "101"]
    for line in last:
        number, _, move = line.partition(": ")
        with session_for(server.engine) as session:
            game = session.exec(select(BoardRow).where(BoardRow.board == number)).one()
            final = session.exec(
                select(Move).where(Move.game_id == game.id, Move.number == game.move_count)
            ).one()
        assert move.endswith(final.text) or (final.echo is not None and final.echo in move)


def test_unrated_challenge(server: Server, people: dict[str, str]) -> None:
    alice, bob = people["alice"], people["bob"]
    server.send(alice, "quadrature challenge alice bob --unrated")
    server.new_mail()
    play_two(server, (alice, "alice"), (bob, "bob"), "101")
    server.send(bob, "quadrature resign 101 bob secret")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all("Game won by alice.\n\nThis game was not rated." in m.body for m in mails)
    server.send(bob, "quadrature ratings")
    assert "Nobody has a Quadrature rating yet." in server.new_mail()[0].body


def test_established_rating_goes_up_and_recompute_agrees(
    server: Server, people: dict[str, str]
) -> None:
    alice, bob = people["alice"], people["bob"]
    expected = (pbmserv.Rating(), pbmserv.Rating())
    for n in range(1, 22):
        board = str(100 + n)
        server.send(alice, "quadrature challenge alice bob")
        server.new_mail()
        play_two(server, (alice, "alice"), (bob, "bob"), board)
        server.send(bob, f"quadrature resign {board} bob secret")
        mails = server.new_mail()
        before = expected[0]
        expected = pbmserv.rate_game(expected[0], expected[1], 1.0)
    # The 21st game: alice was established (20 games), bob too.
    assert not before.provisional
    line = f"alice's rating went up from {before.shown} to {expected[0].shown}."
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all(line in m.body for m in mails)
    with session_for(server.engine) as session:
        first = snapshot(session)
        assert recompute(session) == 21
        assert snapshot(session) == first
        session.commit()
    assert [(r[1], r[2], round(r[3], 6)) for r in first] == [
        ("alice", 21, round(expected[0].value, 6)),
        ("bob", 21, round(expected[1].value, 6)),
    ]


def test_admin_undo_of_a_finished_game_forgets_its_rating(
    server: Server, people: dict[str, str]
) -> None:
    from pbm.services.play.moves import take_back

    alice, bob = people["alice"], people["bob"]
    server.send(alice, "quadrature challenge alice bob")
    play_two(server, (alice, "alice"), (bob, "bob"), "101")
    server.send(bob, "quadrature resign 101 bob secret")
    with session_for(server.engine) as session:
        assert [r[2] for r in snapshot(session)] == [1, 1]
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        take_back(ctx, load_board(ctx, rules_for("quadrature"), "101"))
        session.commit()
        assert snapshot(session) == []


def test_record_by_mail_reads_back_and_imports(server: Server, people: dict[str, str]) -> None:
    alice, bob = people["alice"], people["bob"]
    server.send(alice, "quadrature challenge alice bob --nagtime=3")
    server.new_mail()
    play_two(server, (alice, "alice"), (bob, "bob"), "101")
    play_two(server, (alice, "alice"), (bob, "bob"), "101")
    server.send(bob, "quadrature resign 101 bob secret")
    server.new_mail()
    server.send(carol := people["carol"], "quadrature record 101")
    [mail] = server.new_mail()
    assert mail.to == [carol] and mail.subject == "Record of Quadrature Board 101"
    text = mail.body
    assert text.startswith(records.MAGIC + "\nGame: quadrature\n")
    assert "Server-Options: nagtime=3\n" in text
    assert "Player: 1 alice 7200\nPlayer: 2 bob 7200\n" in text
    assert (
        "Result: won alice\nEnded-By: resigned\nReason: bob resigns.\nMoves:\n"
        "1 alice 2026-11-22T03:41:00Z "
    ) in text
    record = records.parse(text)
    assert record.players == ["alice", "bob"] and len(record.moves) == 4
    assert record.winner == 0 and record.status == "finished"
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        original = load_board(ctx, rules_for("quadrature"), "101")
        imported = records.import_record(ctx, record)
        session.commit()
        assert imported.row.board == "102"  # 101 is taken
        again = records.export(ctx, imported)
        assert again == text.replace("Board: 101", "Board: 102")
        assert imported.row.position == original.row.position
        # The rules of a resigned board still name a player to move: the preview ends
        # with the result instead, as the board mails do.
        headline = original.rules.render(original.state).rstrip("\n")
        final_board = original.rules.render(original.state, headline=False).rstrip("\n")
        assert "to move" in headline and "to move" not in final_board
        assert records.check(record) == final_board + "\n\nbob resigns. Game won by alice."
    # The mail `preview record` replays a record sent in the body and shows its board.
    server.send(carol, "quadrature preview record", text)
    [preview] = server.new_mail()
    assert preview.subject == "Preview of the record of Quadrature Board 101"
    assert final_board + "\n\nbob resigns. Game won by alice." in preview.body
    assert "to move" not in preview.body
    server.send(carol, "quadrature preview record", text.replace(records.MAGIC, "hello"))
    [refused] = server.new_mail()
    assert "first line" in refused.body


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda t: t.replace(records.MAGIC, "hello"), "first line"),
        (lambda t: t.replace("End\n", ""), "no 'End' line"),
        (lambda t: t.replace("\n2 bob", "\n3 bob"), "numbered"),
        (lambda t: t.replace("Player: 1 alice", "Player: 1 zed"), "should be"),
    ],
)
def test_damaged_records_are_refused(
    server: Server, people: dict[str, str], damage: Callable[[str], str], problem: str
) -> None:
    alice, bob = people["alice"], people["bob"]
    server.send(alice, "quadrature challenge alice bob")
    play_two(server, (alice, "alice"), (bob, "bob"), "101")
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        text = records.export(ctx, load_board(ctx, rules_for("quadrature"), "101"))
    with pytest.raises(PbmError, match=problem):
        records.parse(damage(text))


def test_an_illegal_move_in_a_record_is_refused(server: Server, people: dict[str, str]) -> None:
    alice, bob = people["alice"], people["bob"]
    server.send(alice, "quadrature challenge alice bob")
    play_two(server, (alice, "alice"), (bob, "bob"), "101")
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        record = records.parse(records.export(ctx, load_board(ctx, rules_for("quadrature"), "101")))
    record.moves[1].text = record.moves[0].text
    with pytest.raises(PbmError, match="not a pbm game record"):
        records.check(record)


def test_adjudicated_tie_is_rated(server: Server, people: dict[str, str]) -> None:
    from pbm.services.play.moves import adjudicate

    alice, bob = people["alice"], people["bob"]
    server.send(alice, "quadrature challenge alice bob")
    play_two(server, (alice, "alice"), (bob, "bob"), "101")
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        adjudicate(ctx, load_board(ctx, rules_for("quadrature"), "101"), None, "Adjudicated.")
        session.commit()
        assert [(r[1], r[2], round(r[3])) for r in snapshot(session)] == [
            ("alice", 1, 1624),
            ("bob", 1, 1624),
        ]


def test_no_record_while_a_move_is_secret(server: Server, people: dict[str, str]) -> None:
    # Quadrupel's setups stay secret until both are made (see test_quadrupel_server).
    alice, bob = people["alice"], people["bob"]
    server.send(alice, "quadrupel-points challenge alice bob")
    server.send(alice, "quadrupel move 101 alice secret setup c4=2 d4=1 d5=4 c3=3")
    server.new_mail()
    server.send(bob, "quadrupel record 101")
    [refused] = server.new_mail()
    assert refused.subject == "Quadrupel Board 101 Error"
    assert "still secret to you" in refused.body and "c4=2" not in refused.body
    server.send(alice, "quadrupel record 101")  # his own setup is no secret to him
    [record] = server.new_mail()
    assert record.subject == "Record of Quadrupel Board 101" and "c3=3" in record.body

"""Conditional moves (issue 15) in every game, through process_message on a frozen
clock: trees set by mail and by reply token, checked from the position, fired by the
opponent's moves in the same transaction as ordinary moves (clocks, game end,
tournaments), cleared by a deviation, skipped when illegal, and secret to their owner.

The lines are made from each game's own rules (a seeded walk over the legal moves), so
every test runs unchanged on every registered game."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.games import GAMES, MoveError, find_game
from pbm.games import Game as Rules
from pbm.games.base import State
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, GamePlayer, Move
from pbm.store.models_correspondence import ClockBank
from pbm.store.models_tournament import Tournament, TournamentPairing
from pbm.store.schema import init_db
from pbm.texts import wrap
from tests.server.conftest import SERVER, START, Sent, Server, board_row, cli_ok, seated

NAMES = sorted(GAMES)
GOLDEN = Path(__file__).resolve().parent.parent / "golden"
# A short recorded game of each game that ends on a move by the player who did not make
# the move before it (the golden playthroughs): the last two plies become a line.
ENDINGS = {
    "quad": "quad-12-drop-four",
    "quadrature": "quadrature-reduction",
    "quadrupel": "quadrupel-basic",
    "quarod": "quarod-5-tiebreak",
    "quarto": "quarto-win",
}
DAY = 86400.0


# -- a board and its three readers -------------------------------------------------------


@dataclass
class Table:
    """One board of `game` between alice (first) and bob, with carol subscribed."""

    server: Server
    game: str
    people: dict[str, str]
    board: str = "101"
    # The last board mail each reader got (its Reply-To carries his token).
    last: dict[str, Sent] = field(default_factory=dict)

    @property
    def rules(self) -> Rules:
        return find_game(self.game)[0]

    def state(self) -> State:
        row = board_row(self.server, self.game, self.board)
        assert row is not None
        return self.rules.load(row.position)

    def send(self, userid: str, subject: str, body: str = "", **kw: Any) -> dict[str, Sent]:
        """Mail as `userid`; the one mail each reader got in answer, by userid."""
        assert self.server.send(self.people[userid], subject, body, **kw) == "done"
        got: dict[str, Sent] = {}
        for mail in self.server.new_mail():
            [reader] = [u for u, a in self.people.items() if a in mail.to]
            assert reader not in got, (reader, mail.subject)  # one mail per reader
            got[reader] = mail
        self.last.update(got)
        return got

    def move(self, userid: str, text: str) -> dict[str, Sent]:
        return self.send(userid, f"{self.game} move {self.board} {userid} secret {text}")

    def conditional(
        self, userid: str, lines: Sequence[Sequence[str]], words: str = ""
    ) -> dict[str, Sent]:
        subject = f"{self.game} conditional {self.board} {userid} secret {words}".rstrip()
        return self.send(userid, subject, "\n".join(written(line) for line in lines))

    def moves(self) -> list[tuple[int, str, bool]]:
        """(player, text, auto) of the board's moves, in order."""
        row = board_row(self.server, self.game, self.board)
        with session_for(self.server.engine) as session:
            query = select(Move).where(Move.game_id == row.id).order_by(col(Move.number))
            return [(m.player, m.text, m.auto) for m in session.exec(query)]

    def player(self, index: int) -> GamePlayer:
        row = board_row(self.server, self.game, self.board)
        with session_for(self.server.engine) as session:
            query = select(GamePlayer).where(
                GamePlayer.game_id == row.id, GamePlayer.position == index
            )
            gp = session.exec(query).one()
            session.expunge(gp)
            return gp

    def bank(self, index: int) -> float:
        row = board_row(self.server, self.game, self.board)
        with session_for(self.server.engine) as session:
            query = select(ClockBank).where(
                ClockBank.game_id == row.id, ClockBank.position == index
            )
            return session.exec(query).one().bank_seconds


def open_table(server: Server, game: str, options: str = "") -> Table:
    people = {u: server.signup(u) for u in ("alice", "bob", "carol")}
    assert server.send(people["carol"], f"{game} subscribe carol secret all") == "done"
    server.new_mail()
    table = Table(server, game, people)
    table.send("alice", f"{game} challenge {options} alice bob")
    return table


def written(line: Sequence[str]) -> str:
    """A line as the documentation says to write it: `;` between moves with spaces."""
    return ("; " if any(" " in m for m in line) else " ").join(line)


# -- lines made from the rules --------------------------------------------------------------


def mover(rules: Rules, state: State) -> int:
    seat = rules.to_move(state)
    assert seat is not None
    return list(rules.player_seats(state)).index(seat)


def step(rules: Rules, state: State, rng: random.Random, avoid: Sequence[str] = ()) -> str:
    """A legal move that neither ends the game nor leaves the mover to move again."""
    moves = list(rules.legal_moves(state))
    rng.shuffle(moves)
    who = mover(rules, state)
    for move in moves:
        text = rules.format_move(state, move)
        after = rules.apply(state, move)
        if text in avoid or rules.outcome(after) is not None or mover(rules, after) == who:
            continue
        return text
    raise AssertionError("no quiet move")


def play(rules: Rules, state: State, texts: Sequence[str]) -> State:
    for text in texts:
        state = rules.apply(state, rules.parse_move(state, text))
    return state


def line(
    rules: Rules, state: State, plies: int, rng: random.Random, avoid: Sequence[str] = ()
) -> list[str]:
    """`plies` quiet moves on from `state`; the first is none of `avoid`."""
    texts: list[str] = []
    for _ in range(plies):
        texts.append(step(rules, state, rng, avoid if not texts else ()))
        state = play(rules, state, texts[-1:])
    return texts


def refusal(rules: Rules, state: State, rng: random.Random) -> tuple[str, str]:
    """A move of this game's notation that the rules refuse in `state`, and the refusal:
    a move legal elsewhere in a game (illegal here) when one is found, else no move."""
    probe = rules.new_state(**rules.state_options(state))
    for _ in range(60):
        if rules.outcome(probe) is not None:
            probe = rules.new_state(**rules.state_options(state))
        for move in list(rules.legal_moves(probe))[:40]:
            text = rules.format_move(probe, move)
            try:
                rules.parse_move(state, text)
            except MoveError as exc:
                return text, str(exc)
        probe = rules.apply(probe, rng.choice(list(rules.legal_moves(probe))))
    try:
        rules.parse_move(state, "zz99")
    except MoveError as exc:
        return "zz99", str(exc)
    raise AssertionError("no refused move")


def tree_of(table: Table, index: int) -> list[object] | None:
    stored = table.player(index).conditional
    return None if stored is None else json.loads(stored)


# -- a second server: the same game played by hand, to compare what others read -----------


@pytest.fixture
def twin(tmp_path: Path) -> Iterator[Server]:
    config = Config(
        data_dir=tmp_path / "twin",
        database_url=f"sqlite:///{tmp_path / 'twin.sqlite3'}",
        server_address=SERVER,
        server_name="PBeM Server",
        password_cost=4,
        max_failures=3,
    )
    engine = make_engine(config.database_url)
    init_db(engine)
    yield Server(engine=engine, config=config, clock=FrozenClock(START))
    engine.dispose()


def seen(mail: Sent) -> tuple[str, str]:
    return mail.subject, mail.body


def under(rules: Rules, state: State, move: str, by_hand: Sent) -> tuple[str, str]:
    """`by_hand` (the mail of bob's answer played by hand) with alice's `move` in `state`
    that brought it above the answer, as the one mail of a conditional answer shows both:
    each reader reads the whole exchange, in order."""
    echo = rules.describe_move(state, rules.parse_move(state, move))
    head, rest = by_hand.body.split("\n\n", 1)
    return by_hand.subject, f"{head}\n\n{wrap(f'alice {echo}')}\n{rest}"


# -- the Proof, in every game ----------------------------------------------------------------


@pytest.mark.parametrize("game", NAMES)
def test_a_tree_fires_twice_in_a_row_with_the_clocks_and_stays_secret(
    server: Server, twin: Server, game: str
) -> None:
    """bob's tree (two lines sharing their start, and a third) answers alice twice in a
    row, each answer a move at that instant (no time used, the Fischer increment added);
    alice and carol read exactly what they read when bob answers by hand at once, under
    alice's move that brought it (her own mail of it never came)."""
    fischer = "--fischer=2/1/5"
    table = open_table(server, game, fischer)
    hand = open_table(twin, game, fischer)
    rules = table.rules
    rng = random.Random(game)
    start = table.state()
    first = line(rules, start, 4, rng)  # a1 b1 a2 b2
    a1, b1, a2, b2 = first
    branch = [a1, b1, *line(rules, play(rules, start, [a1, b1]), 2, rng, avoid=[a2])]
    other = line(rules, start, 2, rng, avoid=[a1])
    for server_ in (server, twin):
        server_.clock.advance(timedelta(hours=1))

    told = table.conditional("bob", [first, branch, other])
    assert list(told) == ["bob"]
    assert "Your conditional moves are set (lines: 3, plies: 8)." in told["bob"].body
    listing = told["bob"].body.split("Your conditional moves (only you see them):\n")[1]
    assert listing.startswith(
        f"  1. {written(first)}\n  2. {written(branch)}\n  3. {written(other)}\n"
    )
    # While the tree waits, what alice and carol can ask for is what they get without it.
    for reader in ("alice", "carol"):
        for ask in (f"{game} show 101", f"{game} record 101"):
            got = table.send(reader, ask)[reader]
            assert seen(got) == seen(hand.send(reader, ask)[reader])
            assert "onditional" not in got.body
    shown = table.send("bob", f"{game} show 101")["bob"].body
    assert f"  1. {written(first)}" in shown

    for server_ in (server, twin):
        server_.clock.advance(timedelta(days=1))
    after_a1 = table.move("alice", a1)
    assert sorted(after_a1) == ["alice", "bob", "carol"]
    assert [(p, t) for p, t, _ in table.moves()] == [(0, a1), (1, b1)]
    note = f"Your conditional move {b1} was played (move 2)"
    assert note in after_a1["bob"].body
    assert f"  1. {written([a2, b2])}\n  2. {written(branch[2:])}\n" in after_a1["bob"].body
    assert table.player(1).seconds_used == 0.0
    assert table.bank(1) == 3 * DAY  # 2 days, none used, 1 added
    hand.move("alice", a1)
    by_hand = hand.move("bob", b1)
    for reader in ("alice", "carol"):
        assert seen(after_a1[reader]) == under(rules, start, a1, by_hand[reader])
    # bob reads alice's move too, then his answer, then what his tree did.
    both = after_a1["alice"].body.split("\n\n")[1].rsplit("\n", 1)[0]  # a1's line, b1's
    assert after_a1["bob"].body.split("\n\n")[1].startswith(f"{both}\n{note}")

    for server_ in (server, twin):
        server_.clock.advance(timedelta(hours=2))
    after_a2 = table.move("alice", a2)
    assert [t for _, t, _ in table.moves()] == [a1, b1, a2, b2]
    assert f"Your conditional move {b2} was played (move 4)" in after_a2["bob"].body
    assert "Your conditional moves (only you see them)" not in after_a2["bob"].body
    assert tree_of(table, 1) is None  # used up
    assert table.bank(1) == 4 * DAY
    hand.move("alice", a2)
    by_hand = hand.move("bob", b2)
    for reader in ("alice", "carol"):
        after_b1 = play(rules, start, [a1, b1])
        assert seen(after_a2[reader]) == under(rules, after_b1, a2, by_hand[reader])
    # The records are the same: a conditional answer is an ordinary move.
    for reader in ("alice", "bob", "carol"):
        ask = f"{game} record 101"
        assert seen(table.send(reader, ask)[reader]) == seen(hand.send(reader, ask)[reader])


@pytest.mark.parametrize("game", NAMES)
def test_a_deviation_clears_the_tree_and_a_queued_move_is_superseded(
    server: Server, game: str
) -> None:
    table = open_table(server, game)
    rules = table.rules
    rng = random.Random(game + "deviation")
    start = table.state()
    a1, b1 = line(rules, start, 2, rng)
    z = step(rules, start, rng, avoid=[a1])
    q = step(rules, play(rules, start, [z]), rng)
    table.conditional("bob", [[a1, b1]])
    queued = table.send("bob", f"{game} queue 101 bob secret {q}")["bob"].body
    assert f"You also have the move {q} queued" in queued
    # alice plays off the tree: it is cleared (bob is told), and his queued move plays.
    mails = table.move("alice", z)
    assert "on none of your conditional lines" in mails["bob"].body
    assert "onditional" not in mails["alice"].body + mails["carol"].body
    assert table.moves() == [(0, z, False), (1, q, True)]
    assert tree_of(table, 1) is None
    # A tree and a queued move again: the tree's answer is played, the queue dropped.
    now = table.state()
    a2, b2 = line(rules, now, 2, rng)
    q2 = step(rules, play(rules, now, [a2]), rng, avoid=[b2])
    table.send("bob", f"{game} queue 101 bob secret {q2}")
    told = table.conditional("bob", [[a2, b2]])["bob"].body
    assert f"You also have the move {q2} queued" in told
    mails = table.move("alice", a2)
    assert table.moves()[2:] == [(0, a2, False), (1, b2, False)]
    assert f"Your queued move {q2} was dropped" in mails["bob"].body
    assert table.player(1).queued_move is None
    assert "onditional" not in mails["alice"].body + mails["carol"].body


@pytest.mark.parametrize("game", NAMES)
def test_an_illegal_line_is_refused_with_its_ply_and_nothing_is_stored(
    server: Server, game: str
) -> None:
    table = open_table(server, game)
    rules = table.rules
    rng = random.Random(game + "illegal")
    start = table.state()
    good = line(rules, start, 2, rng)
    table.conditional("bob", [good])
    before = tree_of(table, 1)
    assert before is not None
    a1 = step(rules, start, rng, avoid=[good[0]])
    bad, reason = refusal(rules, play(rules, start, [a1]), rng)
    answer = table.conditional("bob", [line(rules, start, 4, rng), [a1, bad]])["bob"]
    assert answer.subject == f"{rules.title} Board 101 Error"
    # The rules' reason is folded at 72 columns like every line of an error mail.
    assert f"line 2, ply 2:\n  {written([a1, bad])}\n{wrap(reason)}\n" in answer.body
    assert "Nothing of this mail's conditional moves was stored." in answer.body
    assert tree_of(table, 1) == before  # the tree set before stands
    # A line that is no move at all says how moves are written.
    answer = table.conditional("bob", [[good[0], "zz99"]])["bob"]
    assert f"line 1, ply 2:\n  {written([good[0], 'zz99'])}\n'zz99' is not a move" in answer.body
    assert "How moves are written:" in answer.body
    assert tree_of(table, 1) == before


@pytest.mark.parametrize("game", NAMES)
def test_an_answer_made_illegal_is_skipped_and_the_tree_cleared(server: Server, game: str) -> None:
    """The tree was checked in one position; an undo and another move by bob change it,
    and alice's move that heads the line leaves bob's answer illegal: it is skipped
    ("Conditional move x was found but is illegal"), the tree is cleared, and it is
    bob's turn to move by hand."""
    table = open_table(server, game)
    rules = table.rules
    rng = random.Random(game + "undo")
    start = table.state()
    found = None
    for _ in range(200):
        a0, b0, a1, b1 = line(rules, start, 4, rng)
        p1 = play(rules, start, [a0])
        for move in list(rules.legal_moves(p1)):
            other = rules.format_move(p1, move)
            p2 = rules.apply(p1, move)
            if other == b0 or rules.outcome(p2) is not None:
                continue
            try:
                trigger = rules.parse_move(p2, a1)
            except MoveError:
                continue
            if rules.format_move(p2, trigger) != a1:
                continue
            p3 = rules.apply(p2, trigger)
            if rules.outcome(p3) is not None or mover(rules, p3) != 1:
                continue
            try:
                rules.parse_move(p3, b1)
            except MoveError as exc:
                found = (a0, b0, other, a1, b1, str(exc))
                break
        if found:
            break
    assert found, "no position found"
    a0, b0, other, a1, b1, reason = found
    table.move("alice", a0)
    table.move("bob", b0)
    table.conditional("bob", [[a1, b1]])
    table.move("alice", "undo")
    undone = table.move("bob", "accept")
    assert "Your conditional moves (only you see them)" in undone["bob"].body
    table.move("bob", other)
    assert tree_of(table, 1) is not None  # bob's own move is no move of his opponent
    mails = table.move("alice", a1)
    assert [t for _, t, _ in table.moves()] == [a0, other, a1]
    said = f'Conditional move "{b1}" was found but is illegal: {reason}'
    assert wrap(said) in mails["bob"].body  # folded at 72 columns, as every status line
    assert "It is bob's turn." in mails["bob"].body
    assert tree_of(table, 1) is None
    assert "onditional" not in mails["alice"].body + mails["carol"].body


@pytest.mark.parametrize("game", NAMES)
def test_an_answer_that_ends_the_game(server: Server, game: str) -> None:
    record = json.loads((GOLDEN / f"{ENDINGS[game]}.moves").read_text())
    options = " ".join(f"-{k}={v}" for k, v in record["options"].items())
    table = open_table(server, game, options)
    rules = table.rules
    texts = record["moves"]
    state = table.state()
    users = ["alice", "bob"]
    for text in texts[:-2]:
        table.move(users[mover(rules, state)], text)
        state = play(rules, state, [text])
    opponent, owner = mover(rules, state), 1 - mover(rules, state)
    last = play(rules, state, texts[-2:-1])
    assert mover(rules, last) == owner
    answer = rules.format_move(last, rules.parse_move(last, texts[-1]))
    table.conditional(users[owner], [texts[-2:]])
    mails = table.move(users[opponent], texts[-2])
    row = board_row(server, game)
    assert row.status == "finished"
    assert [t for _, t, _ in table.moves()][-1] == answer
    assert sorted(mails) == ["alice", "bob", "carol"]  # both players and the subscriber
    for reader, mail in mails.items():
        assert "Game ended......" in mail.body
        assert ("Game won by" in mail.body) or ("Game was a tie." in mail.body)
        assert ("Your conditional move" in mail.body) == (reader == users[owner])
    assert tree_of(table, owner) is None


@pytest.mark.parametrize("game", NAMES)
def test_a_conditional_answer_completes_a_tournament_round(server: Server, game: str) -> None:
    record = json.loads((GOLDEN / f"{ENDINGS[game]}.moves").read_text())
    options = " ".join(f"-{k}={v}" for k, v in record["options"].items())
    names = ["p1", "p2", "p3", "p4"]
    people = {n: server.signup(n) for n in names}
    server.send(people["p1"], f"tournament create p1 secret cup {game} type=knockout {options}")
    for userid, address in people.items():
        assert server.send(address, f"tournament join cup {userid} secret") == "done"
    server.send(people["p1"], "tournament start cup p1 secret")
    server.new_mail()
    boards = tournament_boards(server)
    assert len(boards) == 2
    (quick, quick_seats), (board, seats) = boards
    # The first board: a move each, then a resignation.
    first = Table(server, game, people, quick)
    rng = random.Random(game)
    for index in (0, 1):
        first.move(quick_seats[index], step(first.rules, first.state(), rng))
    assert server.send(people[quick_seats[1]], f"{game} resign {quick} {quick_seats[1]} secret")
    server.new_mail()
    # The second board ends on a conditional answer, and round 2 starts with it.
    table = Table(server, game, people, board)
    rules = table.rules
    state = table.state()
    for text in record["moves"][:-2]:
        table.move(seats[mover(rules, state)], text)
        state = play(rules, state, [text])
    owner = seats[1 - mover(rules, state)]
    table.conditional(owner, [record["moves"][-2:]])
    server.new_mail()
    trigger = record["moves"][-2]
    opponent = seats[mover(rules, state)]
    subject = f"{game} move {board} {opponent} secret {trigger}"
    assert server.send(people[opponent], subject) == "done"
    mails = server.new_mail()
    assert board_row(server, game, board).status == "finished"
    assert any(m.subject == "Tournament cup round 2" for m in mails)
    assert any(m.subject.startswith(f"New {rules.title} Board") for m in mails)
    with session_for(server.engine) as session:
        cup = session.exec(select(Tournament).where(Tournament.name == "cup")).one()
        assert cup.current_round == 2


def tournament_boards(server: Server) -> list[tuple[str, list[str]]]:
    """(board, userids in seat order) of the active tournament boards."""
    with session_for(server.engine) as session:
        query = select(BoardRow).join(
            TournamentPairing, col(TournamentPairing.game_id) == BoardRow.id
        )
        rows = session.exec(query.where(BoardRow.status == "active")).all()
        return seated(session, rows)


# -- how a tree is written: by reply token, in a multiple mail ----------------------------


@pytest.mark.parametrize("game", NAMES)
def test_if_then_lines_in_a_reply_to_a_board_mail(server: Server, game: str) -> None:
    table = open_table(server, game)
    rules = table.rules
    rng = random.Random(game + "reply")
    start = table.state()
    a1, b1, a2, b2 = line(rules, start, 4, rng)
    c1, d1 = line(rules, start, 2, rng, avoid=[a1])
    mail = table.last["bob"].mail
    body = f"if {a1} then {b1} if {a2} then {b2}\nIf {c1} Then {d1}\n"
    got = table.send("bob", "Re: " + mail.subject, body, to=mail.reply_to)
    assert list(got) == ["bob"]
    assert "Your conditional moves are set (lines: 2, plies: 6)." in got["bob"].body
    assert tree_of(table, 1) is not None
    table.move("alice", c1)
    assert [t for _, t, _ in table.moves()] == [c1, d1]
    assert tree_of(table, 1) is None


@pytest.mark.parametrize("game", NAMES)
def test_a_multiple_mail_makes_a_move_and_sets_the_conditions_after_it(
    server: Server, game: str
) -> None:
    table = open_table(server, game)
    rules = table.rules
    rng = random.Random(game + "multiple")
    a0 = step(rules, table.state(), rng)
    table.move("alice", a0)
    b0, a1, b1 = line(rules, table.state(), 3, rng)
    c1, d1 = line(rules, play(rules, table.state(), [b0]), 2, rng, avoid=[a1])
    body = (
        f"{game} move 101 bob secret {b0}\n"
        f"{game} conditional 101 bob secret\n"
        f"  {written([a1, b1])}\n"
        f"  {written([c1, d1])}\n"
    )
    got = table.send("bob", "multiple", body)
    assert "Your conditional moves are set (lines: 2, plies: 4)." in got["bob"].body
    assert "onditional" not in got["alice"].body + got["carol"].body
    table.move("alice", a1)
    assert [t for _, t, _ in table.moves()] == [a0, b0, a1, b1]


def test_conditions_across_secret_setups(server: Server) -> None:
    """Quadrupel's point game: setups stay secret until both are in. bob answers
    alice's setup with his own (which reveals both); later alice, who set up first,
    answers bob's setup. No note repeats a move that may be secret."""
    table = open_table(server, "quadrupel", "-variant=points")
    rules = table.rules
    rng = random.Random("setups")
    start = table.state()
    setup_a, setup_b, a1, b1 = line(rules, start, 4, rng)
    assert setup_a.startswith("setup") and setup_b.startswith("setup")
    table.conditional("bob", [[setup_a, setup_b, a1, b1]])
    mails = table.move("alice", setup_a)
    assert f"Your conditional move {setup_b} was played (move 2)." in mails["bob"].body
    assert setup_a in mails["carol"].body and setup_b in mails["carol"].body  # both in
    table.move("alice", a1)
    assert [t for _, t, _ in table.moves()] == [setup_a, setup_b, a1, b1]

    second = Table(server, "quadrupel", table.people, "102")
    second.send("alice", "quadrupel challenge -variant=points alice bob")
    setup_a, setup_b, a1 = line(rules, second.state(), 3, rng)
    second.move("alice", setup_a)
    second.conditional("alice", [[setup_b, a1]])  # alice sees her own setup
    mails = second.move("bob", setup_b)
    assert f"Your conditional move {a1} was played (move 3)." in mails["alice"].body
    assert [t for _, t, _ in second.moves()] == [setup_a, setup_b, a1]


# -- the command's other forms and its refusals ---------------------------------------------


def test_show_clear_preview_and_the_refusals(server: Server) -> None:
    game = "quadrature"
    table = open_table(server, game)
    rules = table.rules
    rng = random.Random("refusals")
    start = table.state()
    a1, b1, a2, b2 = line(rules, start, 4, rng)
    c1, d1 = line(rules, start, 2, rng, avoid=[a1])
    b1_other = step(rules, play(rules, start, [a1]), rng, avoid=[b1])

    def refused(userid: str, lines: list[list[str]], words: str = "") -> str:
        answer = table.conditional(userid, lines, words)[userid]
        assert answer.subject in (f"{rules.title} Board 101 Error", f"{rules.title} error")
        assert tree_of(table, 1) is None and tree_of(table, 0) is None
        return answer.body

    assert "It is your turn" in refused("alice", [[a1, b1]])
    assert "carol is NOT playing this game" in refused("carol", [[a1, b1]])
    assert (
        "Invalid password entered for bob"
        in table.send("bob", f"{game} conditional 101 bob wrong", a1)["bob"].body
    )
    body = refused("bob", [[a1, b1]], "#2")
    assert (
        "Conditional moves for move #2 were not stored: the next move on\n"
        "this board is #1. Write #1, or no number." in body
    )
    assert "mail you answered" not in body
    assert f"{b1}#3 would be move #2." in refused("bob", [[f"{a1}#1", f"{b1}#3"]])
    body = refused("bob", [[a1, b1], [a1, b1_other]])
    assert f"line 2, ply 2:\n  {a1} {b1_other}\nYou answer with {b1_other}, but line 1" in body
    body = refused("bob", [[a1, b1], [c1]])
    assert f"line 2, ply 1:\n  {c1}\nThe line ends with your opponent's move" in body
    assert "hold 42 plies in all; at most 40" in refused("bob", [[a1, b1]] * 21)

    told = table.conditional("bob", [[f"{a1}#1", f"{b1}#2", a2, b2], [c1, d1]], "#1")
    assert "(lines: 2, plies: 6)" in told["bob"].body
    # show: to bob, his tree; to alice, none of it.
    shown = table.send("bob", f"{game} conditional 101 bob secret show")["bob"].body
    assert f"  1. {a1} {b1} {a2} {b2}\n  2. {c1} {d1}\n" in shown
    shown = table.send("alice", f"{game} conditional 101 alice secret show")["alice"].body
    assert "You have no conditional moves on this board." in shown
    assert "Your conditional moves (only you see them)" not in shown
    # preview N: the position line N leads to, from bob's own numbering.
    preview = table.send("bob", f"{game} conditional 101 bob secret preview 2")["bob"]
    assert preview.subject == f"Preview of {rules.title} Board 101"
    assert f"1 {c1}" in preview.body and f"2 {d1}" in preview.body
    assert board_row(server, game).move_count == 0
    body = table.send("bob", f"{game} conditional 101 bob secret preview 3")["bob"].body
    assert "You have no conditional line 3 (you have 2)." in body
    # clear, then an empty body: nothing left.
    cleared = table.send("bob", f"{game} conditional 101 bob secret clear")["bob"].body
    assert "Your conditional moves on this board are cleared." in cleared
    assert tree_of(table, 1) is None
    # preview with no tree says so ("no conditional line 1 (you have 0)" before).
    body = table.send("bob", f"{game} conditional 101 bob secret preview 1")["bob"].body
    assert "You have no conditional moves on this board." in body
    assert "you have 0" not in body
    table.conditional("bob", [[a1, b1]])
    assert tree_of(table, 1) is not None
    table.conditional("bob", [])
    assert tree_of(table, 1) is None


def test_a_line_past_the_end_of_the_game_and_after_it(server: Server) -> None:
    record = json.loads((GOLDEN / f"{ENDINGS['quadrature']}.moves").read_text())
    table = open_table(server, "quadrature")
    rules = table.rules
    state = table.state()
    users = ["alice", "bob"]
    for text in record["moves"][:-2]:
        table.move(users[mover(rules, state)], text)
        state = play(rules, state, [text])
    owner = users[1 - mover(rules, state)]
    lines = [[*record["moves"][-2:], "a1-a2"]]
    body = table.conditional(owner, lines)[owner].body
    assert "line 1, ply 3:\n  " in body and "\nThe game is over before a1-a2.\n" in body
    table.move(users[mover(rules, state)], record["moves"][-2])
    table.move(owner, record["moves"][-1])
    assert "The game has ended" in table.conditional(owner, [record["moves"][:2]])[owner].body


def test_the_limit_is_a_setting(server: Server) -> None:
    server.config = dataclasses.replace(server.config, conditional_plies=3)
    table = open_table(server, "quarto")
    rng = random.Random("limit")
    plies = line(table.rules, table.state(), 4, rng)
    body = table.conditional("bob", [plies])["bob"].body
    assert "hold 4 plies in all; at most 3" in body
    assert "(lines: 1, plies: 2)" in table.conditional("bob", [plies[:2]])["bob"].body


def test_the_cli_runs_the_command_and_export_keeps_the_tree_out(cfg: Path) -> None:
    cli_ok("user", "add", "alice", "alice@x.example", "--password", "pw", "--confirmed")
    cli_ok("user", "add", "bob", "bob@x.example", "--password", "pw", "--confirmed")
    cli_ok("run", "quarto challenge alice bob", "--as", "alice")
    body = "give SDQF; a1 TLRH\ngive SDRF; a1 TLQH"
    out = cli_ok("run", "quarto conditional 101 bob pw", "--as", "bob", "--body", body)
    assert "Your conditional moves are set (lines: 2, plies: 4)." in out
    record = cli_ok("game", "export", "quarto", "101")
    assert "Moves:\nEnd" in record and "TLRH" not in record and "SDQF" not in record
    cli_ok("run", "quarto move 101 alice pw give sdqf", "--as", "alice")
    shown = json.loads(cli_ok("game", "show", "quarto", "101", "--json"))
    assert shown["moves"] == ["give SDQF", "a1 TLRH"]


def test_an_owner_in_digest_mode_hears_at_once_that_his_answer_was_played(
    server: Server,
) -> None:
    """Digest mode holds the mails of others' moves for the daily digest; a conditional
    answer is his own move, so its mail, with what it did, comes at once."""
    table = open_table(server, "quadrature")
    rules = table.rules
    rng = random.Random("digest")
    a1, b1 = line(rules, table.state(), 2, rng)
    table.conditional("bob", [[a1, b1]])
    assert server.send(table.people["bob"], "digest bob secret on") == "done"
    server.new_mail()
    mails = table.move("alice", a1)
    assert f"Your conditional move {b1} was played" in mails["bob"].body
    assert table.moves()[-2:] == [(0, a1, False), (1, b1, False)]
    # Without a conditional answer his copy waits for the digest, as before.
    a2 = step(rules, table.state(), rng)
    assert "bob" not in table.move("alice", a2)


def test_a_line_cut_at_every_space_says_how_to_separate_moves(server: Server) -> None:
    """Quarto's moves hold a space: written with spaces alone, `give SDQF` was read as
    the moves `give` and `SDQF`, and the refusal did not say why."""
    alice, bob = server.signup("alice"), server.signup("bob")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    server.new_mail()
    server.send(bob, "quarto conditional 101 bob secret", "give SDQF b2 TLRH\n")
    [err] = server.new_mail()
    assert "line 1, ply 1:\n  give SDQF b2 TLRH\n" in err.body
    assert "Each word of this line was read as a move." in err.body
    assert "separate the moves with ; or , (give TLRH; b2 SDQF)" in " ".join(err.body.split())
    server.send(bob, "quarto conditional 101 bob secret", "give SDQF; b2 TLRH\n")
    [done] = server.new_mail()
    assert "Your conditional moves are set (lines: 1, plies: 2)." in done.body


def test_a_refused_if_then_line_is_quoted_as_written(server: Server) -> None:
    """A refused reply line `if give SDQF then b2 SDQF` came back without its `if`."""
    alice, bob = server.signup("alice"), server.signup("bob")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    [mail] = [m for m in server.new_mail() if m.to == [bob]]
    body = "if give SDQF then b2 SDQF\n"
    server.send(bob, "Re: " + mail.subject, body, to=mail.mail.reply_to)
    [err] = server.new_mail()
    assert "line 1, ply 2:\n  if give SDQF then b2 SDQF\n" in err.body
    assert "SDQF is the piece you are placing" in err.body


def test_pass_in_a_line_of_a_game_without_it_says_so_as_a_move_does(server: Server) -> None:
    """`quarto move 101 alice secret pass` said Quarto has no pass, but a conditional
    line with `pass` got the notation's "PASS is not a piece"."""
    alice, bob = server.signup("alice"), server.signup("bob")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    server.new_mail()
    server.send(bob, "quarto conditional 101 bob secret", "give SDQF; pass\n")
    [err] = server.new_mail()
    assert "line 1, ply 2:\n  give SDQF; pass\n" in err.body
    assert "Quarto has no pass: it is a move of quadrature only." in err.body
    assert "not a piece" not in err.body
    assert "Nothing of this mail's conditional moves was stored." in err.body

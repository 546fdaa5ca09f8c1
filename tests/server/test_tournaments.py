"""Whole tournaments through process_message on a frozen clock: entries and the start
by mail, boards played with real Quarto moves, results decided by resignations, draws,
withdrawals and timeouts, rounds started by the server, and the final announcement."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from sqlmodel import col, select

from pbm.commands.tournament import SETTINGS, TournamentCommand
from pbm.jobs import run_due
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, User
from pbm.store.models_tournament import Tournament, TournamentEntry, TournamentPairing
from tests.server.conftest import Server, flat, legal_texts, seated

GAME = "quarto"


def signup_all(server: Server, names: list[str]) -> dict[str, str]:
    return {n: server.signup(n) for n in names}


def tournament(server: Server, name: str) -> Tournament:
    with session_for(server.engine) as session:
        row = session.exec(select(Tournament).where(Tournament.name == name)).one()
        session.expunge(row)
        return row


def active_boards(server: Server, name: str) -> list[tuple[str, list[str]]]:
    """(board name, userids in seat order) of the tournament's boards being played."""
    with session_for(server.engine) as session:
        t = session.exec(select(Tournament).where(Tournament.name == name)).one()
        query = select(BoardRow).join(
            TournamentPairing, col(TournamentPairing.game_id) == BoardRow.id
        )
        rows = session.exec(
            query.where(TournamentPairing.tournament_id == t.id, BoardRow.status == "active")
        ).all()
        return seated(session, rows)


def to_move(server: Server, board: str) -> int | None:
    with session_for(server.engine) as session:
        row = session.exec(
            select(BoardRow).where(BoardRow.game == GAME, BoardRow.board == board)
        ).one()
        return row.to_move


def move(server: Server, people: dict[str, str], board: str, userid: str, text: str) -> None:
    status = server.send(people[userid], f"{GAME} move {board} {userid} secret {text}")
    assert status == "done"


def play_board(
    server: Server, people: dict[str, str], board: str, seats: list[str], outcome: str
) -> None:
    """Two real moves each, then `outcome`: "first"/"second" wins (the other resigns), or
    "draw" (proposed and accepted)."""
    rng = random.Random(board)
    for _ in range(4):
        index = to_move(server, board)
        assert index is not None
        move(server, people, board, seats[index], rng.choice(legal_texts(server, GAME, board)))
    if outcome == "draw":
        move(server, people, board, seats[0], "propose")
        move(server, people, board, seats[1], "accept")
    else:
        loser = seats[1] if outcome == "first" else seats[0]
        assert server.send(people[loser], f"{GAME} resign {board} {loser} secret") == "done"


def results(server: Server, name: str) -> list[tuple[int, str, str | None, float | None, str]]:
    with session_for(server.engine) as session:
        t = session.exec(select(Tournament).where(Tournament.name == name)).one()
        names = {u.id: u.userid for u in session.exec(select(User))}
        rows = session.exec(
            select(TournamentPairing)
            .where(TournamentPairing.tournament_id == t.id)
            .order_by(
                col(TournamentPairing.round),
                col(TournamentPairing.slot),
                col(TournamentPairing.leg),
            )
        ).all()
        return [
            (p.round, names[p.first_id], names.get(p.second_id), p.score, p.how or "") for p in rows
        ]


def create_and_enter(server: Server, people: dict[str, str], name: str, settings: str) -> None:
    owner = next(iter(people))
    server.send(people[owner], f"tournament create {owner} secret {name} {GAME} {settings}")
    created = server.new_mail()
    assert len(created) == 1 and created[0].subject == f"Tournament {name}"
    assert f"tournament join {name} userid password" in created[0].body
    for userid, address in people.items():
        server.send(address, f"tournament join {name} {userid} secret")
        joined = server.new_mail()
        assert [m.subject for m in joined] == [f"Tournament {name}"]
        assert f"{userid} has entered tournament {name}" in joined[0].body


def test_double_round_robin_of_six(server: Server) -> None:
    names = ["ann", "ben", "cat", "dan", "eve", "fay"]
    people = signup_all(server, names)
    create_and_enter(server, people, "club", "type=double")
    server.send(people["ben"], "tournament start club ben secret")
    refused = server.new_mail()
    assert "Only the player who created tournament club may start it." in refused[0].body
    server.send(people["ann"], "tournament start club ann secret")
    mails = server.new_mail()
    new_boards = [m for m in mails if m.subject.startswith("New Quarto Board")]
    assert len(new_boards) == 30 * 2  # every game of both cycles starts at once, two mails each
    rounds = [m for m in mails if m.subject == "Tournament club round 1-10"]
    assert sorted(m.to[0] for m in rounds) == sorted(people.values())
    boards = active_boards(server, "club")
    assert [b for b, _ in boards][:3] == ["a101", "a102", "a103"]
    assert len(boards) == 30
    # Every pair meets twice, once with each colour.
    assert sorted((s[0], s[1]) for _, s in boards) == sorted(
        (a, b) for a in names for b in names if a != b
    )
    with session_for(server.engine) as session:
        row = session.exec(select(BoardRow).where(BoardRow.board == "a101")).one()
        assert row.server_options["forfeittime"] == "7" and row.server_options["nagtime"] == "1"
    # The earlier seed (all are unrated: the join order) wins; pairs of neighbours draw.
    seed = {n: i for i, n in enumerate(names)}
    for board, seats in boards:
        a, b = seats
        if abs(seed[a] - seed[b]) == 1:
            outcome = "draw"
        else:
            outcome = "first" if seed[a] < seed[b] else "second"
        server.clock.advance(timedelta(hours=3))
        play_board(server, people, board, seats, outcome)
    mails = server.new_mail()
    final = [m for m in mails if m.subject.startswith("Tournament club won by")]
    assert sorted(m.to[0] for m in final) == sorted(people.values())
    body = final[0].body
    assert final[0].subject == "Tournament club won by ann"
    # Two games against each: a neighbour's two draws make 1 point, a lower seed's two
    # wins make 2 (ben: 1 + 1 with ann and cat, 6 from dan, eve and fay).
    lines = [line.split() for line in body.splitlines() if line.strip()[:1].isdigit()]
    table = {cols[1]: float(cols[2]) for cols in lines}
    assert table == {"ann": 9, "ben": 8, "cat": 6, "dan": 4, "eve": 2, "fay": 1}
    assert [cols[1] for cols in lines] == names  # the table is in order
    assert tournament(server, "club").status == "finished"
    server.send(people["eve"], "tournament standings club")
    standing = server.new_mail()[0]
    assert standing.subject == "Tournament club standings"
    assert "Status: finished after 10 rounds." in standing.body


def test_swiss_of_nine_with_a_withdrawal(server: Server) -> None:
    names = [f"p{i}" for i in range(1, 10)]
    people = signup_all(server, names)
    create_and_enter(server, people, "open", "type=swiss rounds=4")
    server.send(people["p1"], "tournament start open p1 secret")
    mails = server.new_mail()
    assert len([m for m in mails if m.subject == "Tournament open round 1"]) == 9
    seed = {n: i for i, n in enumerate(names)}
    byes: list[str] = []
    for round_ in range(1, 5):
        t = tournament(server, "open")
        assert t.current_round == round_
        boards = active_boards(server, "open")
        field = 9 if round_ < 3 else 8
        assert len(boards) == field // 2
        pairs = [r for r in results(server, "open") if r[0] == round_]
        bye = [r[1] for r in pairs if r[2] is None]
        assert len(bye) == field % 2
        byes += bye
        if round_ == 2:
            # p5 withdraws in the middle of round 2: his board is forfeited at once.
            board, seats = next((b, s) for b, s in boards if "p5" in s)
            server.send(people["p5"], "tournament leave open p5 secret")
            told = server.new_mail()
            assert any("p5 has withdrawn from tournament open" in m.body for m in told)
            rec = next(r for r in results(server, "open") if r[0] == 2 and "p5" in r[1:3])
            assert rec[3] == (0.0 if rec[1] == "p5" else 1.0)
            boards = [(b, s) for b, s in boards if "p5" not in s]
        for board, seats in boards:
            server.clock.advance(timedelta(hours=5))
            a, b = seats
            play_board(server, people, board, seats, "first" if seed[a] < seed[b] else "second")
        mails = server.new_mail()
        if round_ == 2:
            # A restart between rounds: a new engine (a new process) on the same file.
            server.engine.dispose()
            server.engine = make_engine(server.config.database_url)
    final = [m for m in mails if m.subject.startswith("Tournament open won by")]
    assert sorted(m.to[0] for m in final) == sorted(people.values())  # p5 is told too
    assert "(withdrawn)" in next(line for line in final[0].body.splitlines() if " p5 " in line)
    res = results(server, "open")
    assert all(score is not None for *_, score, _how in res)
    met = [frozenset((a, b)) for _, a, b, *_ in res if b is not None]
    assert len(met) == len(set(met))  # no pairing repeated
    assert len(byes) == len(set(byes)) == 2  # one bye a player (rounds 1-2; 8 after)
    assert all(r[1] != "p5" and r[2] != "p5" for r in res if r[0] > 2)  # not paired again
    t = tournament(server, "open")
    assert t.status == "finished"
    server.send(people["p9"], "tournament pairings open 3")
    text = server.new_mail()[0].body
    assert "Round 3" in text and "Round 2" not in text


def test_knockout_of_eight_with_a_timeout_forfeit_and_a_restart(server: Server) -> None:
    names = [f"k{i}" for i in range(1, 9)]
    people = signup_all(server, names)
    create_and_enter(server, people, "cup", "type=knockout")
    server.send(people["k1"], "tournament start cup k1 secret")
    server.new_mail()
    boards = active_boards(server, "cup")
    assert [s for _, s in boards] == [["k1", "k8"], ["k4", "k5"], ["k2", "k7"], ["k3", "k6"]]
    # Match 1 is drawn: a replay with colours reversed, drawn again: the higher seed (k1)
    # goes through. Match 2: k5 wins. Match 3: k7 never moves and forfeits on time.
    play_board(server, people, boards[0][0], boards[0][1], "draw")
    replay = [b for b in active_boards(server, "cup") if b[1] == ["k8", "k1"]]
    assert len(replay) == 1
    play_board(server, people, replay[0][0], replay[0][1], "draw")
    play_board(server, people, boards[1][0], boards[1][1], "second")
    play_board(server, people, boards[3][0], boards[3][1], "first")
    server.new_mail()
    k2_board = boards[2][0]
    move(server, people, k2_board, "k2", legal_texts(server, GAME, k2_board)[0])
    server.new_mail()
    server.clock.advance(timedelta(days=1, minutes=1))
    run_due(server.engine, server.clock, server.config)
    nags = server.new_mail()
    assert [m.to[0] for m in nags if m.subject.startswith("Nag")] == [people["k7"]]
    # A restart: a new engine (a new process) on the same database file carries on.
    server.engine.dispose()
    server.engine = make_engine(server.config.database_url)
    server.clock.advance(timedelta(days=6))
    run_due(server.engine, server.clock, server.config)
    mails = server.new_mail()
    # k7 never moved: time running out declines the board, unrated, and the
    # tournament scores it as his loss.
    [removed] = [m for m in mails if m.to[0] == people["k2"] and "k7 let the time" in m.body]
    assert "in the tournament\ncup it counts as a game lost by k7 and won by k2." in removed.body
    semis = active_boards(server, "cup")
    assert [s for _, s in semis] == [["k1", "k5"], ["k2", "k3"]]
    assert [m.to[0] for m in mails if m.subject == "Tournament cup round 2"] == [
        people[n] for n in ("k1", "k2", "k3", "k5")
    ]
    for board, seats in semis:
        play_board(server, people, board, seats, "first")
    final = active_boards(server, "cup")
    assert [s for _, s in final] == [["k1", "k2"]]
    play_board(server, people, final[0][0], final[0][1], "second")
    mails = server.new_mail()
    won = [m for m in mails if m.subject == "Tournament cup won by k2"]
    assert sorted(m.to[0] for m in won) == sorted(people.values())
    with session_for(server.engine) as session:
        out = {e.user_id for e in session.exec(select(TournamentEntry)) if e.eliminated}
    assert len(out) == 7
    # Ranked by the round reached, not by points: k8 drew twice with k1 (a point, as
    # many as each semi-finalist) and is out in round 1 with the other first losers.
    ranks = {
        line.split()[1]: int(line.split()[0])
        for line in won[0].body.splitlines()
        if line[:4].strip().isdigit()
    }
    assert ranks == {"k2": 1, "k1": 2, "k3": 3, "k5": 3, "k4": 5, "k6": 5, "k7": 5, "k8": 5}


@pytest.mark.parametrize(
    "command",
    [
        "tournament create ann secret 1bad quarto",
        "tournament create ann secret x chess",
        "tournament create ann secret x quarto type=swiss",
    ],
)
def test_bad_creations_are_refused(server: Server, command: str) -> None:
    people = signup_all(server, ["ann"])
    server.send(people["ann"], command)
    reply = server.new_mail()
    assert len(reply) == 1 and "error" in reply[0].subject.lower()
    with session_for(server.engine) as session:
        assert session.exec(select(Tournament)).first() is None


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("tournament show spring", "'show' is no tournament command."),
        ("tournament standing spring", "Did you mean standings?"),
    ],
)
def test_an_unknown_tournament_action_says_which_there_are(
    server: Server, command: str, says: str
) -> None:
    people = signup_all(server, ["ann"])
    server.send(people["ann"], command)
    [reply] = server.new_mail()
    assert says in flat(reply.body)
    assert "one of these: create, join, leave, start, cancel, standings, pairings, list." in flat(
        reply.body
    )


def test_enter_and_withdraw_are_join_and_leave(server: Server) -> None:
    people = signup_all(server, ["ann", "bob"])
    server.send(people["ann"], f"tournament create ann secret spring {GAME}")
    server.new_mail()
    server.send(people["bob"], "tournament enter spring bob secret")
    [entered] = server.new_mail()
    assert "bob has entered tournament spring (entrants so far: 1)." in flat(entered.body)
    server.send(people["bob"], "tournament withdraw spring bob secret")
    [left] = server.new_mail()
    assert "bob has left tournament spring." in flat(left.body)


def test_decline_loses_abort_draws_and_a_withdrawn_bye_winner(server: Server) -> None:
    """Six in a knockout: k1 and k2 have byes; k6 resigns before moving (he loses the
    board), k4-k5 is aborted by the administrator (a draw: replayed), and k1 withdraws
    before round 2, so his opponent goes through without a game."""
    from pbm.services.context import Context, ReplyKind
    from pbm.services.play.boards import load_board, rules_for
    from pbm.services.play.moves import abort

    names = [f"k{i}" for i in range(1, 7)]
    people = signup_all(server, names)
    create_and_enter(server, people, "six", "type=knockout")
    server.send(people["k1"], "tournament start six k1 secret")
    server.new_mail()
    assert [r[1:4] for r in results(server, "six")] == [
        ("k1", None, 1.0),
        ("k4", "k5", None),
        ("k2", None, 1.0),
        ("k3", "k6", None),
    ]
    boards = dict((tuple(s), b) for b, s in active_boards(server, "six"))
    k3_board = boards[("k3", "k6")]
    move(server, people, k3_board, "k3", legal_texts(server, GAME, k3_board)[0])
    assert server.send(people["k6"], f"{GAME} resign {k3_board} k6 secret") == "done"
    removed = server.new_mail()
    assert any("has been removed" in m.subject for m in removed)
    # The removal says what the tournament makes of it (a loss), not just "not rated".
    declined = {" ".join(m.body.split()) for m in removed if "has been removed" in m.subject}
    assert declined == {
        "k6 has decided not to play. The board has been removed; it is not rated, but in "
        "the tournament six it counts as a game lost by k6 and won by k3."
    }
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        abort(ctx, load_board(ctx, rules_for(GAME), boards[("k4", "k5")]), "Aborted.")
        session.commit()
    aborted = [m for m in ctx.replies if m.kind is ReplyKind.REMOVED]
    assert aborted and all(
        "it counts as a drawn game (half a point each)." in " ".join(m.body.split())
        for m in aborted
    )
    replay = [s for _, s in active_boards(server, "six")]
    assert replay == [["k5", "k4"]]  # the aborted game counts as a draw: colours reversed
    server.send(people["k1"], "tournament leave six k1 secret")
    assert any("k1 has withdrawn" in m.body for m in server.new_mail())
    board, seats = active_boards(server, "six")[0]
    play_board(server, people, board, seats, "first")  # k5 beats k4
    res = results(server, "six")
    assert [r[1:5] for r in res if r[0] == 2] == [
        ("k1", "k5", 0.0, "withdrawal"),
        ("k2", "k3", None, ""),
    ]
    assert ("k3", "k6", 1.0, "game") in [r[1:5] for r in res]
    board, seats = active_boards(server, "six")[0]
    play_board(server, people, board, seats, "second")  # k3 beats k2
    board, seats = active_boards(server, "six")[0]
    assert seats == ["k5", "k3"]
    play_board(server, people, board, seats, "draw")
    board, seats = active_boards(server, "six")[0]
    assert seats == ["k3", "k5"]  # the final's replay
    play_board(server, people, board, seats, "draw")
    mails = server.new_mail()
    # Two draws: the higher seed goes through (k3 is seed 3, k5 seed 5).
    assert {m.subject for m in mails if m.subject.startswith("Tournament six won")} == {
        "Tournament six won by k3"
    }


def test_standings_keep_their_columns_and_width_with_long_userids(server: Server) -> None:
    """A userid may have 20 characters, the table's name column had 16: the numbers of
    a long name's row stood out of their columns, and a withdrawn one ran to 76."""
    long_name = "a" * 20
    people = signup_all(server, [long_name, "bob", "cat", "dan"])
    create_and_enter(server, people, "wide", "type=roundrobin")
    server.send(people[long_name], f"tournament start wide {long_name} secret")
    server.new_mail()
    server.send(people[long_name], f"tournament leave wide {long_name} secret")
    server.new_mail()
    server.send(people["bob"], "tournament standings wide")
    [table] = server.new_mail()
    lines = table.body.splitlines()
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("Rank"))
    points_end = lines[header].index("Points") + len("Points")
    rows = [line for line in lines[header + 1 :] if line[:4].strip().isdigit()]
    assert len(rows) == 4
    assert all(row[points_end - 1].isdigit() and row[points_end] == " " for row in rows), rows
    assert max(len(line) for line in lines) <= 72
    assert "(withdrawn)" in table.body


def test_swiss_standings_carry_the_tie_breaks(server: Server) -> None:
    """Four players, two rounds, results chosen so the tie-breaks are computed by hand.
    (Userids are two characters at least: ww stands for w, and so on.)"""
    names = ["ww", "xx", "yy", "zz"]
    people = signup_all(server, names)
    create_and_enter(server, people, "tb", "type=swiss rounds=2")
    server.send(people["ww"], "tournament start tb ww secret")
    server.new_mail()
    # Round 1 (seeds w x y z): w-y and x-z (top half against bottom half).
    r1 = active_boards(server, "tb")
    assert sorted(tuple(sorted(s)) for _, s in r1) == [("ww", "yy"), ("xx", "zz")]
    for board, seats in r1:
        play_board(
            server,
            people,
            board,
            seats,
            "draw" if "xx" in seats else ("first" if seats[0] == "ww" else "second"),
        )
    # After round 1: w 1, x 0.5, z 0.5, y 0. w floats down to x and z; w-x and z-y
    # would give w and x, then z and y, the same colour again, so round 2 is w-z, x-y.
    r2 = active_boards(server, "tb")
    assert sorted(tuple(sorted(s)) for _, s in r2) == [("ww", "zz"), ("xx", "yy")]
    for board, seats in r2:
        winner = "ww" if "ww" in seats else "yy"
        play_board(server, people, board, seats, "first" if seats[0] == winner else "second")
    final = [m for m in server.new_mail() if m.subject.startswith("Tournament tb won by")]
    assert final and final[0].subject == "Tournament tb won by ww"
    rows = {
        cols[1]: cols[2:5]
        for cols in (line.split() for line in final[0].body.splitlines())
        if cols and cols[0].isdigit()
    }
    # Points: w 2, y 1, x 0.5, z 0.5. w: beat y (1) and z (0.5) -> SB 1.5, Buchholz
    # 1 + 0.5. y: beat x (0.5) -> SB 0.5, Bh 2 + 0.5. x and z drew each other (0.5 x
    # 0.5) -> SB 0.25 each; Bh x 0.5 + 1 (y), z 0.5 + 2 (w), so z ranks above x.
    assert rows == {
        "ww": ["2", "1.5", "1.5"],
        "yy": ["1", "0.5", "2.5"],
        "zz": ["0.5", "0.25", "2.5"],
        "xx": ["0.5", "0.25", "1.5"],
    }


def test_a_full_players_limit_does_not_stop_his_tournament_boards(server: Server) -> None:
    people = signup_all(server, ["ann", "ben", "cat", "dan"])
    # ann caps her Quarto boards at one and already plays one outside the tournament.
    assert server.send(people["ann"], f"{GAME} limit ann secret 1") == "done"
    server.send(people["ben"], f"{GAME} challenge ann ben")
    server.new_mail()
    create_and_enter(server, people, "capped", "type=roundrobin")
    server.send(people["ann"], "tournament start capped ann secret")
    server.new_mail()
    boards = active_boards(server, "capped")
    # A round robin starts every game at once: ann gets all three despite her limit.
    assert sum("ann" in seats for _, seats in boards) == 3
    assert all(how != "refused" for *_, how in results(server, "capped"))


def test_the_usage_names_every_setting_create_takes() -> None:
    # `help tournament` left out nagtime= and forfeittime=, which create takes (and
    # docs/tournaments.md lists): every setting is in the usage, as NAME=.
    create = TournamentCommand.usage.split(" | ")[0]
    assert all(f"[{setting}=" in create for setting in SETTINGS), create


def test_a_boards_result_comes_before_the_round_and_the_end_it_causes(server: Server) -> None:
    """The forfeit or resignation that ends a round was mailed after the next round's
    boards and pairings, and the one that ends the tournament after the final standings
    that already counted it: each player read what came of a game before the game."""
    names = ["ann", "ben", "cat", "dan"]
    people = signup_all(server, names)
    create_and_enter(server, people, "order", "type=swiss rounds=2")
    server.send(people["ann"], "tournament start order ann secret")
    server.new_mail()
    for round_ in (1, 2):
        (board, seats), (last, last_seats) = active_boards(server, "order")
        play_board(server, people, board, seats, "first")
        server.new_mail()
        play_board(server, people, last, last_seats, "first")  # the second resigns
        mine = server.to(people[last_seats[1]], server.new_mail())
        subjects = [m.subject for m in mine]
        result = next(i for i, s in enumerate(subjects) if s == f"Quarto Board {last}")
        caused = "Tournament order round 2" if round_ == 1 else "Tournament order won by"
        assert any(s.startswith(caused) for s in subjects), subjects
        assert all(
            i > result
            for i, s in enumerate(subjects)
            if s.startswith(("New Quarto Board", "Tournament order"))
        ), subjects


@pytest.mark.parametrize("kind", ["roundrobin", "swiss rounds=2", "knockout"])
def test_a_rounds_pairings_come_before_its_boards(server: Server, kind: str) -> None:
    """The round's mail says "Each of your boards comes in its own mail", but came
    after them: a player met boards of a round he had not been told of."""
    people = signup_all(server, ["ann", "ben", "cat", "dan"])
    create_and_enter(server, people, "first", f"type={kind}")
    server.send(people["ann"], "tournament start first ann secret")
    mine = [m.subject for m in server.to(people["dan"], server.new_mail())]
    assert mine[0].startswith("Tournament first round 1"), mine
    assert len(mine) > 1 and all(s.startswith("New Quarto Board") for s in mine[1:]), mine


def test_a_knockout_replay_says_why_it_was_started(server: Server) -> None:
    """A drawn knockout game brought a new board that said only "Tournament duel,
    round 1.": its players were not told it replays the draw, nor what a second draw
    means."""
    people = signup_all(server, ["ann", "ben"])
    create_and_enter(server, people, "duel", "type=knockout")
    server.send(people["ann"], "tournament start duel ann secret")
    server.new_mail()
    [(board, seats)] = active_boards(server, "duel")
    play_board(server, people, board, seats, "draw")
    [(replay, _)] = active_boards(server, "duel")
    new = [m for m in server.new_mail() if m.subject.startswith(f"New Quarto Board {replay}")]
    assert len(new) == 2
    for mail in new:
        assert (
            f"Tournament duel, round 1: board {board} was drawn, so it is replayed with "
            "colours reversed. If this one is drawn too, ann goes through as the higher seed."
        ) in flat(mail.body)
        assert max(len(line) for line in mail.body.splitlines()) <= 72


def test_an_odd_round_robin_names_who_sits_out_each_round(server: Server) -> None:
    """Five players: each round's pairings left one of them out without a word, so a
    player looking for his name in round 1 could not tell whether he had been forgotten."""
    names = ["ann", "ben", "cat", "dan", "eve"]
    people = signup_all(server, names)
    create_and_enter(server, people, "odd", "type=roundrobin")
    server.send(people["ann"], "tournament start odd ann secret")
    [round_mail] = [
        m for m in server.to(people["ann"], server.new_mail()) if m.subject.endswith("1-5")
    ]
    blocks = round_mail.body.split("\nRound ")[1:]
    assert len(blocks) == 5
    out = []
    for block in blocks:
        rest = [line.split()[1] for line in block.splitlines() if line.endswith(" sits out")]
        assert len(rest) == 1, block
        out.append(rest[0])
    assert sorted(out) == names  # each sits out once
    server.send(people["ben"], "tournament pairings odd 2")
    [answer] = server.new_mail()
    assert f"  -      {out[1]:<16} sits out" in answer.body


def test_a_knocked_out_player_has_nothing_to_withdraw_from(server: Server) -> None:
    """A player knocked out could still withdraw: he was told his boards were forfeited
    (he had none) and the final table called him withdrawn instead of out."""
    people = signup_all(server, ["ann", "ben", "cat"])
    create_and_enter(server, people, "ko3", "type=knockout")
    server.send(people["ann"], "tournament start ko3 ann secret")
    server.new_mail()
    [(board, seats)] = active_boards(server, "ko3")
    play_board(server, people, board, seats, "first")
    loser = seats[1]
    server.new_mail()
    server.send(people[loser], f"tournament leave ko3 {loser} secret")
    [refused] = server.new_mail()
    assert "error" in refused.subject.lower()
    assert f"{loser} is already out of tournament ko3." in flat(refused.body)
    [(final, final_seats)] = active_boards(server, "ko3")
    play_board(server, people, final, final_seats, "first")
    won = next(m for m in server.new_mail() if m.subject.startswith("Tournament ko3 won"))
    assert "(out)" in next(line for line in won.body.splitlines() if f" {loser} " in line)


def test_a_withdrawal_that_ends_the_tournament_is_told_before_the_end(server: Server) -> None:
    """The last game's player withdrew: his one mail was subject "Tournament duel", the
    final standings first and his withdrawal under them, the winner's name nowhere in
    the subject. Now: his withdrawal, his board's end, then the tournament's, each its own."""
    people = signup_all(server, ["ann", "ben"])
    create_and_enter(server, people, "duel", "type=knockout")
    server.send(people["ann"], "tournament start duel ann secret")
    server.new_mail()
    server.send(people["ben"], "tournament leave duel ben secret")
    mine = server.to(people["ben"], server.new_mail())
    assert [m.subject for m in mine] == [
        "Tournament duel",
        "Quarto board a101 has been removed",  # nobody had moved (see below)
        "Tournament duel won by ann",
    ]
    assert flat(mine[0].body).startswith("ben has withdrawn from tournament duel: his boards")
    assert flat(mine[2].body).startswith("Tournament duel (knockout of Quarto) is over.")


def test_a_swiss_that_cannot_pair_its_next_round_says_why_it_ended(server: Server) -> None:
    """Told "Round 2 of 3", the players got the final standings after round 2 with no
    word of why the third round never came."""
    people = signup_all(server, ["ann", "ben", "cat", "dan"])
    create_and_enter(server, people, "short", "type=swiss rounds=3")
    server.send(people["ann"], "tournament start short ann secret")
    server.new_mail()
    (board, seats), (_, others) = active_boards(server, "short")
    play_board(server, people, board, seats, "first")
    for userid in others:  # both players of the other board withdraw
        server.send(people[userid], f"tournament leave short {userid} secret")
    final = [m for m in server.new_mail() if m.subject.startswith("Tournament short won by")]
    assert final
    assert (
        "No pairing for round 3 keeps the Swiss rules (no second game between two players, "
        "no second bye while someone has had none), so the tournament ends after 2 of its "
        "3 rounds."
    ) in flat(final[0].body)


def test_a_cancelled_tournaments_pairings_do_not_say_playing(server: Server) -> None:
    """After the cancellation removed its boards, the pairings still called each of
    them "playing"."""
    from pbm.services.context import Context
    from pbm.services.tournaments import results as tournament_results
    from pbm.work import run_work

    people = signup_all(server, ["ann", "ben"])
    create_and_enter(server, people, "gone", "type=roundrobin")
    server.send(people["ann"], "tournament start gone ann secret")

    def cancel(ctx: Context) -> None:  # as `pbm tournament cancel gone` does
        t = ctx.session.exec(select(Tournament).where(Tournament.name == "gone")).one()
        tournament_results.cancel(ctx, t)

    run_work(server.engine, cancel, clock=server.clock, config=server.config)
    server.new_mail()
    server.send(people["ben"], "tournament pairings gone")
    [answer] = server.new_mail()
    assert "playing" not in answer.body
    assert "  a101   ann              ben              cancelled" in answer.body


def test_tournament_list_says_who_has_entered_and_how_to_enter(server: Server) -> None:
    """`tournament list` gave bare rows ("club  Quarto  round robin  open"): no heading,
    no count of entrants, and nothing of how to enter the open one it listed."""
    people = signup_all(server, ["ann", "ben"])
    create_and_enter(server, people, "club", "type=roundrobin")
    server.send(people["ann"], f"tournament create ann secret later {GAME} type=knockout")
    longest = "a" + "b" * 31  # a name of 32: the row goes under it, within 72 columns
    server.send(people["ann"], f"tournament create ann secret {longest} {GAME} type=double")
    server.new_mail()
    server.send(people["ben"], "tournament list")
    [listed] = server.new_mail()
    lines = listed.body.splitlines()
    assert lines[0].split() == ["Tournament", "Game", "Type", "Status", "Entrants"]
    assert lines[1].split() == ["club", "Quarto", "round", "robin", "open", "2"]
    assert lines[2].split() == ["later", "Quarto", "knockout", "open", "0"]
    assert lines[3] == longest
    assert lines[4].split() == ["Quarto", "double", "round", "robin", "open", "0"]
    assert "Enter an open one with: tournament join NAME userid password" in flat(listed.body)
    assert max(len(line) for line in lines) <= 72


@pytest.mark.parametrize(
    ("word", "says"),
    [
        ("x", "'x' is no round number: write one like 2, as in 'tournament pairings cup 2'."),
        ("2.5", "'2.5' is no round number: write one like 2, as in"),
        ("0", "Tournament cup has no pairings for round 0."),
    ],
)
def test_pairings_of_a_round_that_is_no_number_say_so(server: Server, word: str, says: str) -> None:
    """`tournament pairings cup x` answered "Unknown tournament setting 'x'; the settings
    are type=, ..." with the whole create usage; `2.5` showed round 2, `0` every round."""
    people = signup_all(server, ["ann", "ben"])
    create_and_enter(server, people, "cup", "type=roundrobin")
    server.send(people["ann"], "tournament start cup ann secret")
    server.new_mail()
    server.send(people["ben"], f"tournament pairings cup {word}")
    [answer] = server.new_mail()
    said = flat(answer.body)
    assert "setting" not in said and "Round 1" not in said
    assert says in said


def test_a_round_robin_of_one_round_is_not_round_1_1(server: Server) -> None:
    """Two players play one round; its mail was subject "Tournament pair round 1-1" and
    said "All rounds start at once."."""
    people = signup_all(server, ["ann", "ben"])
    create_and_enter(server, people, "pair", "type=roundrobin")
    server.send(people["ann"], "tournament start pair ann secret")
    rounds = [m for m in server.new_mail() if m.subject.startswith("Tournament pair ")]
    assert {m.subject for m in rounds} == {"Tournament pair round 1"}
    assert all("Round 1 of 1." in m.body and "All rounds" not in m.body for m in rounds)


def test_a_long_bad_tournament_name_is_refused_in_even_lines(server: Server) -> None:
    """The refusal of a 40-letter name folded as "... is no tournament name: a letter,",
    "then up to 31 letters,", "digits, - or _.": the phrase's own line break kept."""
    people = signup_all(server, ["ann"])
    server.send(people["ann"], f"tournament create ann secret {'n' * 40} {GAME}")
    [refused] = server.new_mail()
    paragraph = refused.body.split("\n\n")[0].splitlines()
    assert "is no tournament name" in paragraph[0]
    assert all(50 <= len(line) <= 72 for line in paragraph[:-1]), paragraph


@pytest.mark.parametrize("kind", ["swiss rounds=2", "knockout"])
def test_the_player_with_the_bye_is_not_told_boards_are_coming(server: Server, kind: str) -> None:
    """Every round mail said "Each of your boards comes in its own mail.", also to the
    player with the bye, who then waited for a board that never came."""
    people = signup_all(server, ["ann", "ben", "cat"])
    create_and_enter(server, people, "three", f"type={kind}")
    server.send(people["ann"], "tournament start three ann secret")
    mails = [m for m in server.new_mail() if m.subject == "Tournament three round 1"]
    [bye] = [r[1] for r in results(server, "three") if r[2] is None]
    for mail in mails:
        said = flat(mail.body)
        if mail.to == [people[bye]]:
            assert (
                "You have a bye this round: "
                + (
                    "you go on to the next without a game."
                    if kind == "knockout"
                    else "a point, and no board to play."
                )
                in said
            )
            assert "Each of your boards" not in said
        else:
            assert "Each of your boards comes in its own mail." in said
    assert len(mails) == 3


def test_a_walkover_is_told_as_one_not_as_boards_to_come(server: Server) -> None:
    """The bye-winner withdrew before the final: his opponent's round mail said "Each of
    your boards comes in its own mail." of a final that was never played."""
    people = signup_all(server, ["ann", "ben", "cat"])
    create_and_enter(server, people, "walk", "type=knockout")
    server.send(people["ann"], "tournament start walk ann secret")
    server.new_mail()
    server.send(people["ann"], "tournament leave walk ann secret")  # ann had the bye
    [(board, seats)] = active_boards(server, "walk")
    play_board(server, people, board, seats, "first")
    winner = seats[0]
    [final_round] = [
        m
        for m in server.to(people[winner], server.new_mail())
        if m.subject == "Tournament walk round 2"
    ]
    said = flat(final_round.body)
    assert "Your opponent has withdrawn: you win this round without a game." in said
    assert "Each of your boards" not in said


def test_a_withdrawal_before_everyone_has_moved_is_unrated_as_a_resignation_is(
    server: Server,
) -> None:
    """A player who resigns before everyone has moved declines the board: removed,
    unrated. Withdrawing from the tournament then forfeited it instead, rated: his
    opponent gained rating for a game in which nobody (or only one of them) had moved."""
    from pbm.store.models_correspondence import RatingChange

    names = ["ann", "ben", "cat", "dan"]
    people = signup_all(server, names)
    create_and_enter(server, people, "club", "type=roundrobin")
    server.send(people["ann"], "tournament start club ann secret")
    server.new_mail()
    mine = sorted((b, seats) for b, seats in active_boards(server, "club") if "ben" in seats)
    assert len(mine) == 3
    # On the first both players have moved, on the second one of them, on the third none.
    (both, both_seats), (one, one_seats), (none, _) = mine
    for board, seats, count in ((both, both_seats, 2), (one, one_seats, 1)):
        for _ in range(count):
            index = to_move(server, board)
            assert index is not None
            move(server, people, board, seats[index], legal_texts(server, GAME, board)[0])
    server.new_mail()
    server.send(people["ben"], "tournament leave club ben secret")
    mails = server.new_mail()
    with session_for(server.engine) as session:
        rows = {r.board: r for r in session.exec(select(BoardRow)) if r.board in (both, one, none)}
        rated = {r.board for r in rows.values() if r.rated and r.status == "finished"}
        changed = {c.game_id for c in session.exec(select(RatingChange))}
    assert rated == {both} and {rows[both].id} == changed
    assert {rows[one].status, rows[none].status} == {"removed"}
    assert all(rows[b].end_reason == "withdrew" for b in (both, one, none))
    removed = [m for m in mails if m.subject.endswith("has been removed")]
    assert {m.subject for m in removed} == {
        f"Quarto board {one} has been removed",
        f"Quarto board {none} has been removed",
    }
    for mail in removed:
        said = flat(mail.body)
        assert said.startswith("ben has withdrawn from tournament club. The board has been")
        assert "it is not rated, but in the tournament club it counts as a game lost by ben" in said
    # The tournament scores each as ben's loss, as a forfeit.
    lost = [r for r in results(server, "club") if "ben" in r[1:3] and r[3] is not None]
    assert len(lost) == 3
    assert all(r[3] == (0.0 if r[1] == "ben" else 1.0) and r[4] == "game" for r in lost)

"""The organiser of a tournament by mail: each round's pairings mailed to him (once, when
he plays too), and his `tournament cancel`, refused to anyone else and shown by `help`."""

from __future__ import annotations

from pathlib import Path

from pbm.commands.masking import mask_line
from pbm.services.context import Context
from pbm.services.tournaments import lookup, rounds
from pbm.work import run_work
from tests.server.conftest import Server, cli_ok, flat
from tests.server.test_tournaments import (
    GAME,
    active_boards,
    create_and_enter,
    play_board,
    signup_all,
    tournament,
)


def organise(server: Server, people: dict[str, str], name: str, settings: str) -> None:
    """`org` creates the tournament and starts it; the others enter, he does not."""
    server.send(people["org"], f"tournament create org secret {name} {GAME} {settings}")
    for userid in people:
        if userid != "org":
            server.send(people[userid], f"tournament join {name} {userid} secret")
    server.new_mail()
    server.send(people["org"], f"tournament start {name} org secret")


def test_an_organiser_who_does_not_play_gets_every_rounds_pairings(server: Server) -> None:
    """He was told how his tournament ended, but of no round: not who meets whom, nor
    on which board."""
    people = signup_all(server, ["org", "ann", "ben", "cat", "dan"])
    organise(server, people, "club", "type=swiss rounds=2")
    mine = server.to(people["org"], server.new_mail())
    subjects = [m.subject for m in mine]
    assert "Tournament club round 1" in subjects, subjects
    body = next(m.body for m in mine if m.subject == "Tournament club round 1")
    boards = active_boards(server, "club")
    for board, (white, black) in boards:
        assert any(board in line and white in line and black in line for line in body.split("\n"))
    assert "You organise this tournament and play no board in this round" in flat(body)
    assert "Each of your boards" not in body
    for board, seats in boards:
        play_board(server, people, board, seats, "first")
    mine = server.to(people["org"], server.new_mail())
    assert [m.subject for m in mine if "round" in m.subject] == ["Tournament club round 2"]


def test_an_organiser_who_does_not_play_hears_how_it_ended(server: Server) -> None:
    """He made the tournament and started it, but was never told its result: only the
    entrants got the final standings."""
    people = signup_all(server, ["org", "ann", "ben"])
    organise(server, people, "club", "type=knockout")
    server.new_mail()
    [(board, seats)] = active_boards(server, "club")
    play_board(server, people, board, seats, "first")
    final = [m for m in server.new_mail() if m.subject.startswith("Tournament club won by")]
    assert sorted(m.to[0] for m in final) == sorted(people.values())


def test_a_playing_organiser_gets_one_round_mail_as_a_player(server: Server) -> None:
    people = signup_all(server, ["ann", "ben", "cat", "dan"])
    create_and_enter(server, people, "own", "type=knockout")
    server.send(people["ann"], "tournament start own ann secret")
    rounds = [m for m in server.to(people["ann"], server.new_mail()) if "round" in m.subject]
    assert len(rounds) == 1 and "Each of your boards comes in its own mail." in rounds[0].body
    # Knocked out, he still organises: round 2 comes to him as to an organiser.
    for board, seats in active_boards(server, "own"):
        play_board(server, people, board, seats, "second" if seats[0] == "ann" else "first")
    rounds = [m for m in server.to(people["ann"], server.new_mail()) if "round" in m.subject]
    assert [m.subject for m in rounds] == ["Tournament own round 2"]
    assert "You organise this tournament" in flat(rounds[0].body)
    assert tournament(server, "own").current_round == 2


def test_the_organiser_cancels_by_mail_and_everyone_is_told(server: Server) -> None:
    """Only `pbm tournament cancel` could stop a tournament: its organiser had no way."""
    people = signup_all(server, ["org", "ann", "ben", "cat"])
    organise(server, people, "club", "type=roundrobin")
    server.new_mail()
    assert len(active_boards(server, "club")) == 3
    server.send(people["ann"], "tournament cancel club ann secret")
    [refused] = server.new_mail()
    assert refused.to == [people["ann"]]
    assert "Only the player who created tournament club may cancel it." in flat(refused.body)
    assert tournament(server, "club").status == "running"
    server.send(people["org"], "tournament cancel club org wrong")
    [refused] = server.new_mail()
    assert tournament(server, "club").status == "running" and "password" in refused.body.lower()
    server.send(people["org"], "tournament cancel club org secret")
    mails = server.new_mail()
    told = [m for m in mails if m.subject == "Tournament club"]
    assert sorted(m.to[0] for m in told) == sorted(people.values())  # entrants and organiser
    assert all("Tournament club has been cancelled." in m.body for m in told)
    assert active_boards(server, "club") == []  # its boards removed, as the CLI's cancel
    assert tournament(server, "club").status == "cancelled"
    server.send(people["ann"], "tournament pairings club")
    assert "cancelled" in server.new_mail()[0].body
    server.send(people["org"], "tournament cancel club org secret")
    [again] = server.new_mail()
    assert "Tournament club is cancelled already: there is nothing left to cancel." in flat(
        again.body
    )
    server.send(people["org"], "tournament cancel nosuch org secret")
    [unknown] = server.new_mail()
    assert "There is no tournament called 'nosuch'." in unknown.body


def test_a_finished_tournament_cannot_be_cancelled(server: Server) -> None:
    people = signup_all(server, ["org", "ann", "ben"])
    organise(server, people, "done", "type=knockout")
    [(board, seats)] = active_boards(server, "done")
    play_board(server, people, board, seats, "first")
    server.new_mail()
    server.send(people["org"], "tournament cancel done org secret")
    [refused] = server.new_mail()
    assert "Tournament done is finished already: there is nothing left to cancel." in flat(
        refused.body
    )
    assert tournament(server, "done").status == "finished"


def test_help_shows_the_mailed_cancel(server: Server, cfg: Path) -> None:
    form = "tournament join|leave|start|cancel NAME userid password"
    server.send("new@x.example", "help tournament")
    [mailed] = server.new_mail()
    assert form in mailed.body
    assert form in cli_ok("help", "tournament")


def test_a_quoted_cancel_has_its_password_masked() -> None:
    assert mask_line("tournament cancel club org secret") == "tournament cancel club org ******"


def test_an_organiser_whose_address_is_not_confirmed_gets_no_round_mail(server: Server) -> None:
    people = signup_all(server, ["org", "ann", "ben"])
    server.send(people["org"], f"tournament create org secret club {GAME} type=knockout")
    for userid in ("ann", "ben"):
        server.send(people[userid], f"tournament join club {userid} secret")
    # His only address is now one he has not confirmed: the admin starts the tournament.
    server.send(people["org"], "change address org secret org@new.example")
    server.new_mail()

    def start(ctx: Context) -> None:  # as `pbm tournament start club` does
        rounds.start(ctx, lookup.find(ctx.session, "club"))

    run_work(server.engine, start, clock=server.clock, config=server.config)
    mails = server.new_mail()
    assert len([m for m in mails if m.subject == "Tournament club round 1"]) == 2
    assert not [m for m in mails if {people["org"], "org@new.example"} & set(m.to)]
    # Confirmed, the address gets the organiser's mail (here the end: one round only).
    server.confirm("org@new.example")
    [(board, seats)] = active_boards(server, "club")
    play_board(server, people, board, seats, "first")
    final = [m for m in server.new_mail() if m.subject.startswith("Tournament club won by")]
    assert ["org@new.example"] in [m.to for m in final]


def test_a_knockout_replay_is_mailed_to_its_players_and_the_organiser(server: Server) -> None:
    """A drawn knockout game got a new board and nothing else: no mail said a replay had
    been paired, and the organiser, told of every round, heard nothing of it."""
    people = signup_all(server, ["org", "ann", "ben", "cat", "dan"])
    organise(server, people, "cup", "type=knockout")
    server.new_mail()
    (board, seats), _ = active_boards(server, "cup")
    play_board(server, people, board, seats, "draw")
    [(replay, _)] = [b for b in active_boards(server, "cup") if b[1] == seats[::-1]]
    mails = server.new_mail()
    subject = f"Tournament cup round 1: board {board} replayed"
    told = [m for m in mails if m.subject == subject]
    assert sorted(m.to[0] for m in told) == sorted(people[u] for u in ("org", *seats))
    higher = "ann"  # the first seed: all are unrated, so the order of entry
    for mail in told:
        said = flat(mail.body)
        # The round's pairings: the drawn game and its replay.
        assert f"{board} {seats[0]} {seats[1]} 1/2-1/2" in said
        assert f"{replay} {seats[1]} {seats[0]} playing" in said
        assert f"If it is drawn too, {higher} goes through as the higher seed." in said
        if mail.to == [people["org"]]:
            assert (
                f"You organise this tournament. Board {board} was drawn, so {seats[1]} and "
                f"{seats[0]} replay it with colours reversed on board {replay}, mailed to them."
            ) in said
        else:
            assert (
                f"Your game on board {board} was drawn, so it is replayed with colours "
                f"reversed on board {replay}, which comes in its own mail."
            ) in said
        assert max(len(line) for line in mail.body.splitlines()) <= 72
    # Each player reads the drawn board's result, then the replay's mail, then its board.
    for userid in seats:
        subjects = [m.subject for m in server.to(people[userid], mails)]
        assert subjects.index(subject) > subjects.index(f"Quarto Board {board}"), subjects
        assert subjects.index(subject) < next(
            i for i, s in enumerate(subjects) if s.startswith(f"New Quarto Board {replay}")
        ), subjects


def second_address(server: Server, people: dict[str, str], userid: str) -> str:
    """A second confirmed address of `userid`'s, which he then writes from."""
    work = f"{userid}@work.example"
    server.send(people[userid], f"change address {userid} secret {people[userid]} {work}")
    server.confirm(work)
    server.new_mail()
    return work


def test_a_mailed_cancel_is_answered_where_it_came_from(server: Server) -> None:
    """The organiser mailed `tournament cancel` from his second address; its answer went
    to his first, as a notice, where every other command answers the sender."""
    people = signup_all(server, ["org", "ann", "ben"])
    organise(server, people, "club", "type=knockout")
    work = second_address(server, people, "org")
    server.send(work, "tournament cancel club org secret")
    mails = server.new_mail()
    told = [m for m in mails if m.subject == "Tournament club"]
    assert sorted(m.to[0] for m in told) == sorted([work, people["ann"], people["ben"]])
    [answer] = server.to(work, mails)
    assert "Tournament club has been cancelled." in answer.body
    assert not server.to(people["org"], mails)
    assert tournament(server, "club").status == "cancelled"


def test_a_mailed_withdrawal_is_answered_where_it_came_from(server: Server) -> None:
    """Ann mailed `tournament leave` from her second address after the start; the word
    that she withdrew went to her first, where every other command answers the sender."""
    people = signup_all(server, ["org", "ann", "ben", "cat"])
    organise(server, people, "club", "type=swiss rounds=2")
    work = second_address(server, people, "ann")
    server.send(work, "tournament leave club ann secret")
    mails = server.new_mail()
    [told] = [m for m in server.to(work, mails) if m.subject == "Tournament club"]
    assert "ann has withdrawn from tournament club" in flat(told.body), told.body
    assert not [m for m in server.to(people["ann"], mails) if m.subject == "Tournament club"]

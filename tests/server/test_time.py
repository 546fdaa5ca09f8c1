"""Correspondence time through whole games on a frozen clock: reminders and forfeits on
the days they are due, exactly once across restarts, custom and tournament timeouts,
Fischer, weekend-free and total-time clocks, vacation and digest mode."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from pbm import jobs
from pbm.config import Config
from pbm.store.engine import make_engine
from pbm.store.models import EndReason
from tests.server.conftest import Server, board_row, flat, legal_texts, seat_to_move

DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
# What a run of the jobs reports when nothing was due.
NOTHING_DUE = {
    "vacations_ended": 0,
    "forfeits": 0,
    "nags": 0,
    "vacation_notices": 0,
    "digests": 0,
    "unconfirmed": 0,
}


@pytest.fixture
def config(config: Config) -> Config:
    """Accounts start with no vacation days here: these tests count the accrual alone."""
    return dataclasses.replace(config, vacation_start_days=0.0)


def run_jobs(server: Server) -> dict[str, int]:
    return jobs.run_due(server.engine, server.clock, server.config)


def challenge(
    server: Server, options: str = "", member: timedelta = timedelta()
) -> tuple[str, str]:
    """Sign alice and bob up, let `member` pass (vacation accrues), start board 101."""
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.clock.advance(member)
    assert server.send(alice, f"quadrature challenge alice bob {options}".strip()) == "done"
    server.new_mail()
    return alice, bob


def move(server: Server, sender: str, userid: str, board: str = "101") -> None:
    text = legal_texts(server, "quadrature", board)[0]
    assert server.send(sender, f"quadrature move {board} {userid} secret {text}") == "done"


def opening(server: Server, alice: str, bob: str) -> None:
    """alice, bob and alice move: bob is to move, and everyone has moved once (before,
    time running out declines the board instead of forfeiting it)."""
    move(server, alice, "alice")
    move(server, bob, "bob")
    move(server, alice, "alice")
    server.new_mail()


def test_default_nag_at_7_days_forfeit_at_21_once_each(server: Server) -> None:
    alice, bob = challenge(server)
    opening(server, alice, bob)
    server.clock.advance(7 * DAY - HOUR)
    assert run_jobs(server)["nags"] == 0
    server.clock.advance(HOUR)
    assert run_jobs(server) == {**NOTHING_DUE, "nags": 1}
    [nag] = server.new_mail()
    assert nag.to == [bob]
    assert nag.subject == "Nag: Quadrature Board 101 bob"
    assert "It is your move on Quadrature board 101.  You have not moved in\n7 days." in nag.body
    assert "ages to 21 days, you will forfeit the game." in nag.body
    assert "Subject: Quadrature Board 101 bob" in nag.body
    assert "Nag of Quadrature Board 101" in nag.body
    assert "\n    vacation bob PASSWORD start\n" in nag.body  # a line to copy
    # The nag can be answered like a board mail: it carries bob's reply token.
    assert nag.mail.reply_to is not None and nag.mail.reply_to.startswith("pbm+")
    # Run again the same day and after a daemon restart: no second nag for this move.
    assert run_jobs(server)["nags"] == 0
    server.engine.dispose()
    server.engine = make_engine(server.config.database_url)
    server.clock.advance(DAY)
    assert run_jobs(server)["nags"] == 0
    assert server.new_mail() == []
    server.clock.advance(13 * DAY - HOUR)  # 20 days 23 hours idle
    assert run_jobs(server)["forfeits"] == 0
    server.clock.advance(HOUR)
    assert run_jobs(server)["forfeits"] == 1
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for m in mails:
        assert (
            "Player has not moved in 21 days, the forfeit time of this board.\n"
            "bob forfeits on Quadrature Board 101." in m.body
        )
        assert "Game won by alice." in m.body
        assert "alice's rating is 1824 (provisional)." in m.body
        assert "bob's rating is 1424 (provisional)." in m.body
        assert "Subscribers: bob" in m.body
    row = board_row(server, "quadrature")
    assert row.status == "finished" and row.winner == 0
    assert run_jobs(server) == NOTHING_DUE


def test_a_job_missed_while_down_runs_once(server: Server) -> None:
    alice, bob = challenge(server)
    opening(server, alice, bob)
    server.clock.advance(10 * DAY)  # the server was down at day 7: the nag comes now
    assert run_jobs(server)["nags"] == 1
    assert run_jobs(server)["nags"] == 0
    server.clock.advance(30 * DAY)  # down again past the forfeit: forfeit, no nag
    assert run_jobs(server) == {**NOTHING_DUE, "forfeits": 1}
    nag, *forfeits = server.new_mail()  # the nag of day 10 is read only now
    assert nag.subject.startswith("Nag:") and len(forfeits) == 2
    # It said "has not moved in 40 days", though the board's forfeit time is 21.
    for m in forfeits:
        assert (
            "Player has not moved in 21 days, the forfeit time of this board.\n"
            "The forfeit is applied late: the time ran out 19 days, 00:00 earlier.\n"
            "bob forfeits on Quadrature Board 101." in m.body
        )
    assert board_row(server, "quadrature").winner == 0


def test_a_move_after_the_deadline_forfeits_even_before_the_job(server: Server) -> None:
    alice, bob = challenge(server)
    opening(server, alice, bob)
    server.clock.advance(22 * DAY)
    move(server, bob, "bob")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all("bob forfeits on Quadrature Board 101." in m.body for m in mails)
    assert board_row(server, "quadrature").move_count == 3
    assert run_jobs(server)["forfeits"] == 0


def test_custom_timeouts_and_timing_block(server: Server) -> None:
    alice, _bob = challenge(server, "--nagtime=3 --forfeittime=10")
    server.clock.advance(2 * HOUR)
    move(server, alice, "alice")
    mails = server.new_mail()
    assert "Nag Timeout set to 3 days" in mails[0].body
    assert "Forfeit Timeout set to 10 days" in mails[0].body
    assert "alice:   0 days, 02:00:00" in mails[0].body
    assert "bob  :   0 days, 00:00:00" in mails[0].body
    assert "Total:   0 days, 02:00:00" in mails[0].body
    server.clock.advance(3 * DAY)
    run_jobs(server)
    [nag] = server.new_mail()
    assert "not moved in\n3 days." in nag.body and "ages to 10 days" in nag.body
    server.clock.advance(7 * DAY)
    assert run_jobs(server)["forfeits"] == 1


def test_bad_time_option_is_an_invalid_challenge(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quadrature challenge alice bob --nagtime=soon")
    [reply] = server.new_mail()
    assert reply.subject == "Invalid challenge"
    assert "--nagtime wants a number of days" in reply.body


def test_tournament_board_nags_after_1_and_forfeits_after_7(server: Server) -> None:
    from pbm.games import get_game
    from pbm.services.context import Context
    from pbm.services.play.challenges import NewBoard, create_game
    from pbm.store.engine import session_for

    alice = server.signup("alice")
    bob = server.signup("bob")
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        create_game(ctx, NewBoard(get_game("quadrature"), ["alice", "bob"], board_name="a101"))
        session.commit()
    move(server, alice, "alice", "a101")
    move(server, bob, "bob", "a101")
    server.clock.advance(DAY)
    assert run_jobs(server)["nags"] == 1
    [nag] = server.new_mail()[-1:]
    assert nag.subject == "Nag: Quadrature Board a101 alice"
    server.clock.advance(6 * DAY)
    assert run_jobs(server)["forfeits"] == 1
    assert board_row(server, "quadrature", "a101").winner == 1


def test_a_first_move_after_the_forfeit_time_finds_the_board_declined(server: Server) -> None:
    """The late move is not played: the board is declined at that moment, as the job
    would have declined it, and both players are told why."""
    alice, bob = challenge(server)
    move(server, alice, "alice")
    server.new_mail()
    server.clock.advance(22 * DAY)
    move(server, bob, "bob")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all("bob let the time run out on Quadrature Board 101" in m.body for m in mails)
    row = board_row(server, "quadrature")
    assert (row.status, row.move_count, row.end_reason) == ("removed", 1, EndReason.DECLINED)
    assert run_jobs(server)["forfeits"] == 0


@pytest.mark.parametrize("everyone_moved", [True, False])
def test_a_draw_offer_standing_at_the_forfeit_time_is_accepted_once_everyone_moved(
    server: Server, everyone_moved: bool
) -> None:
    """pbmserv: at the forfeit time the players who did not vote accept a pending draw;
    before every player has moved once, time running out declines the board instead, so
    no rating moves by a draw that the other never saw."""
    alice, bob = challenge(server)
    if everyone_moved:
        opening(server, alice, bob)
    else:
        move(server, alice, "alice")
    assert server.send(alice, "quadrature move 101 alice secret propose") == "done"
    server.new_mail()
    server.clock.advance(21 * DAY)
    assert run_jobs(server)["forfeits"] == 1
    [mail, _] = server.new_mail()
    row = board_row(server, "quadrature")
    if everyone_moved:
        assert "The players agreed to a draw." in mail.body
        assert (row.status, row.rated, row.end_reason) == ("finished", True, EndReason.DRAW_AGREED)
    else:
        assert "bob let the time run out on Quadrature Board 101" in mail.body
        assert (row.status, row.rated, row.end_reason) == ("removed", False, EndReason.DECLINED)


@pytest.mark.parametrize("first_moved", [False, True])
def test_time_running_out_before_everyone_moved_declines_the_board(
    server: Server, first_moved: bool
) -> None:
    """A challenge nobody answers, or answered by the challenger alone, ends as a
    resignation then would: removed, unrated (no rating is won from players away)."""
    alice, bob = challenge(server)
    if first_moved:
        move(server, alice, "alice")
        server.new_mail()
    silent = "bob" if first_moved else "alice"
    server.clock.advance(21 * DAY)
    assert run_jobs(server)["forfeits"] == 1
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for m in mails:
        assert m.subject == "Quadrature board 101 has been removed"
        assert (
            "Player has not moved in 21 days, the forfeit time of this board.\n"
            f"{silent} let the time run out on Quadrature Board 101\n"
            "before every player had moved once, which declines the board,\n"
            "as a resignation then would.\n"
            "The board has been removed; it is not rated." in m.body
        )
        assert "rating" not in m.body.replace("it is not rated", "")
    row = board_row(server, "quadrature")
    assert (row.status, row.rated, row.winner) == ("removed", False, None)
    assert row.end_reason is EndReason.DECLINED
    assert run_jobs(server) == NOTHING_DUE


def test_fischer_clock_banks_time_and_runs_out(server: Server) -> None:
    alice, bob = challenge(server, "--fischer=2/1/3")
    server.clock.advance(HOUR)
    move(server, alice, "alice")  # 2 days - 1 hour + 1 day = 2 days 23 hours
    server.clock.advance(HOUR)
    move(server, bob, "bob")
    mails = server.new_mail()
    assert "Fischer clock: 2 days, 1 day added per move, at most 3 days" in mails[0].body
    assert "Time left to alice: 2 days, 23:00" in mails[0].body
    server.clock.advance(2 * DAY + 22 * HOUR)
    assert run_jobs(server)["forfeits"] == 0
    server.clock.advance(HOUR)
    assert run_jobs(server)["forfeits"] == 1
    mails = server.new_mail()
    assert all("Player's clock has run out.\nalice forfeits" in m.body for m in mails)


def test_total_time_limit(server: Server) -> None:
    alice, bob = challenge(server, "--totaltime=2")
    server.clock.advance(DAY)
    move(server, alice, "alice")
    server.clock.advance(HOUR)
    move(server, bob, "bob")
    server.new_mail()
    server.clock.advance(DAY - HOUR)
    assert run_jobs(server)["forfeits"] == 0
    server.clock.advance(HOUR)
    assert run_jobs(server)["forfeits"] == 1
    assert "Player has used up his total time of 2 days." in server.new_mail()[0].body


def test_weekend_free_clock(server: Server) -> None:
    # START is Sunday 02:41: with weekends free the clock starts on Monday.
    challenge(server, "--weekendfree --nagtime=1")
    server.clock.advance(21 * HOUR)  # Sunday 23:41
    assert run_jobs(server)["nags"] == 0
    server.clock.advance(DAY)  # Monday 23:41: 23 h 41 min counted
    assert run_jobs(server)["nags"] == 0
    server.clock.advance(HOUR)
    assert run_jobs(server)["nags"] == 1


def test_the_nag_says_how_to_answer(server: Server) -> None:
    challenge(server)
    server.clock.advance(8 * DAY)
    assert run_jobs(server)["nags"] == 1
    [nag] = server.new_mail()
    assert nag.body.rstrip("\n").endswith("\nReply with your move, e.g. b3-b4 (help quadrature)")


def test_vacation_pauses_the_clocks(server: Server) -> None:
    alice, bob = challenge(server, member=360 * DAY)  # a year on, 30 vacation days
    move(server, alice, "alice")
    server.new_mail()
    server.clock.advance(5 * DAY)
    server.send(bob, "vacation bob secret start")
    [started] = server.new_mail()
    assert started.subject == "Vacation bob"
    assert "You have 30 days of vacation left" in started.body
    server.clock.advance(20 * DAY)
    assert run_jobs(server) == NOTHING_DUE | {"vacation_notices": 1}  # alice waits
    [told] = server.new_mail()
    assert told.to == [alice] and told.subject == "bob is on vacation"
    assert run_jobs(server) == NOTHING_DUE
    server.send(bob, "vacation bob secret status")
    assert "10 days of vacation left" in server.new_mail()[0].body
    server.send(bob, "vacation bob secret stop")
    [stopped] = server.new_mail()
    assert "after 20 days" in stopped.body and "10 days of vacation left" in stopped.body
    server.clock.advance(2 * DAY - HOUR)
    assert run_jobs(server)["nags"] == 0  # 6 days 23 hours counted
    server.clock.advance(HOUR)
    assert run_jobs(server)["nags"] == 1
    [nag] = server.new_mail()
    assert "You have 10.2 days of vacation" in nag.body  # two more days accrued
    server.clock.advance(14 * DAY)
    assert run_jobs(server)["forfeits"] == 1


def test_a_vacation_of_minutes_is_less_than_a_day(server: Server) -> None:
    """Stopped minutes after it started, a vacation "has ended after 0 days"."""
    alice = server.signup("alice")
    server.clock.advance(360 * DAY)  # 30 vacation days banked
    server.send(alice, "vacation alice secret start")
    server.new_mail()
    server.clock.advance(timedelta(minutes=5))
    server.send(alice, "vacation alice secret status")
    [status] = server.new_mail()
    assert "(less than a day so far)" in flat(status.body)
    server.send(alice, "vacation alice secret stop")
    [stopped] = server.new_mail()
    assert "Your vacation has ended after less than a day;" in flat(stopped.body)
    assert "0 days" not in stopped.body


def test_a_move_on_vacation_reminds_the_mover_that_it_runs_on(server: Server) -> None:
    """A player who moved while away was not told his vacation days were still
    running out; only his own copy says so."""
    alice, bob = challenge(server, member=30 * DAY)
    server.send(alice, "vacation alice secret start")
    server.new_mail()
    move(server, alice, "alice")
    mails = {m.to[0]: flat(m.body) for m in server.new_mail()}
    told = "You are on vacation: your clocks stay stopped and your vacation days run out"
    assert told in mails[alice] and "'vacation alice PASSWORD stop'" in mails[alice]
    assert told not in mails[bob]
    server.send(alice, "vacation alice secret stop")
    server.new_mail()
    move(server, bob, "bob")
    move(server, alice, "alice")
    after = server.new_mail()
    assert {m.to[0] for m in after} == {alice, bob}
    assert all(told not in flat(m.body) for m in after)


def test_vacation_ends_when_its_days_run_out(server: Server) -> None:
    alice, bob = challenge(server, member=365 * DAY / 3)  # 10 vacation days
    move(server, alice, "alice")
    server.send(bob, "vacation bob secret start")
    server.new_mail()
    server.clock.advance(15 * DAY)
    assert run_jobs(server)["vacations_ended"] == 1
    server.send(bob, "vacation bob secret status")
    # It ended 5 days ago, and 5 days accrue 0.4 vacation days again.
    assert "You are not on vacation; you have 0.4 days" in server.new_mail()[0].body
    # 10 days paused, 5 counted so far: the nag comes at 7 counted days.
    server.clock.advance(2 * DAY - HOUR)
    assert run_jobs(server)["nags"] == 0
    server.clock.advance(HOUR)
    assert run_jobs(server)["nags"] == 1


def test_vacation_needs_days(server: Server) -> None:
    alice = server.signup("alice")
    server.send(alice, "vacation alice secret start")
    [reply] = server.new_mail()
    # No allowance here (see `config`): none have accrued yet, none were used up.
    assert "You have no vacation days yet. Days accrue at 30 a year" in reply.body
    assert "days left" not in reply.body and "2026-12-04" in reply.body
    server.clock.advance(400 * DAY)
    server.send(alice, "vacation alice secret start")
    server.clock.advance(33 * DAY)  # 32.9 days accrued in 400: used up
    assert run_jobs(server)["vacations_ended"] == 1
    server.send(alice, "vacation alice secret start")
    [*_, again] = server.new_mail()
    assert "You have no vacation days left: you have taken them." in again.body


@pytest.mark.parametrize(
    ("command", "told"),
    [
        ("vacation alice secret begin", "'begin' is not start, stop or status."),
        ("digest alice secret yes", "'yes' is not on, off or status."),
    ],
)
def test_a_wrong_word_for_vacation_or_digest_is_named(
    server: Server, command: str, told: str
) -> None:
    """The refusal said "Write: X" above "Usage: X", the same line twice, and not what
    was wrong."""
    alice = server.signup("alice")
    server.send(alice, command)
    [err] = server.new_mail()
    refusal = err.body.split("\n\n")[0].splitlines()
    verb = command.split()[0]
    assert len(refusal) == 2 and refusal[0] == told
    assert refusal[1].startswith(f"Usage: {verb} userid password ")


def test_digest_mode_sends_one_mail_a_day(server: Server) -> None:
    alice, bob = challenge(server)
    server.send(bob, "digest bob secret on")
    assert "one mail a day" in server.new_mail()[0].body
    move(server, alice, "alice")
    assert [m.to for m in server.new_mail()] == [[alice]]  # bob's waits for the digest
    assert run_jobs(server)["digests"] == 1
    [digest] = server.new_mail()
    assert digest.to == [bob] and digest.subject == "Your move summary"
    assert "Quadrature Board 101: bob's turn" in digest.body
    assert "Summary of Quadrature Board 101" in digest.body
    assert run_jobs(server)["digests"] == 0  # once a day
    server.clock.advance(DAY)
    assert run_jobs(server)["digests"] == 1
    assert [m.subject for m in server.new_mail()] == ["Your move summary"]
    move(server, bob, "bob")  # his own move is answered at once, digest or not
    assert sorted(m.to[0] for m in server.new_mail()) == [alice, bob]
    move(server, alice, "alice")
    assert [m.to for m in server.new_mail()] == [[alice]]
    server.send(bob, "digest bob secret off")
    server.new_mail()
    move(server, bob, "bob")
    move(server, alice, "alice")
    assert sorted(m.to[0] for m in server.new_mail()) == [alice, alice, bob, bob]


def test_the_daemon_runs_the_job() -> None:
    from pbm.daemon import PERIODIC_JOBS

    [job] = [j for j in PERIODIC_JOBS if j.name == "correspondence"]
    assert job.run is jobs.run_due and job.every_seconds > 0


@pytest.mark.parametrize("option", ["--fischer=3/1/2", "--fischer=x", "--forfeittime=0"])
def test_bad_clock_options(server: Server, option: str) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, f"quadrature challenge alice bob {option}")
    assert server.new_mail()[0].subject == "Invalid challenge"


def test_a_whole_game_on_the_clock(server: Server) -> None:
    """Quarto to its end with the days between moves varied: reminders come exactly for
    the waits of 7 days or more, a vacation leaves its days out of bob's time, and the
    time used per player adds up to the counted waits."""
    import random

    alice = server.signup("alice")
    bob = server.signup("bob")
    server.clock.advance(365 * DAY)  # 30 vacation days
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    people = {"alice": alice, "bob": bob}
    rng = random.Random(7)
    used = {"alice": timedelta(), "bob": timedelta()}
    nags_expected = 0
    ply = 0
    while (row := board_row(server, "quarto")).status == "active":
        mover = ["alice", "bob"][seat_to_move(row)]
        wait = timedelta(days=rng.choice([0.5, 2, 8]))
        if mover == "bob" and ply == 1:
            server.send(bob, "vacation bob secret start")
            server.clock.advance(3 * DAY)  # not counted, no nag for these days
            server.send(bob, "vacation bob secret stop")
            server.new_mail()
        server.clock.advance(wait)
        done = run_jobs(server)
        nags_expected += wait >= 7 * DAY
        assert done["nags"] == (wait >= 7 * DAY) and done["forfeits"] == 0
        used[mover] += wait
        text = rng.choice(legal_texts(server, "quarto"))
        assert server.send(people[mover], f"quarto move 101 {mover} secret {text}") == "done"
        server.new_mail()
        ply += 1
    assert nags_expected > 0 and ply > 1  # reminders were due, the vacation was taken
    row = board_row(server, "quarto")
    assert row.status == "finished" and row.move_count == ply
    from pbm.store import queries
    from pbm.store.engine import session_for

    with session_for(server.engine) as session:
        players = queries.players_of(session, row.saved_id)
        got = {u.userid: timedelta(seconds=gp.seconds_used) for gp, u in players}
    assert got == used


def test_digest_on_says_what_still_comes_at_once_and_it_does(server: Server) -> None:
    """The answer to `digest ... on` named nags and game ends only: a player could not
    tell that a new board still comes at once."""
    alice, bob = server.signup("alice"), server.signup("bob")
    server.send(bob, "digest bob secret on")
    [answer] = server.new_mail()
    said = flat(answer.body)
    assert "New boards, reminders, the ends of games and the answers to your own" in said
    assert server.send(alice, "quadrature challenge alice bob") == "done"
    assert any(bob in m.to and m.subject.startswith("New Quadrature") for m in server.new_mail())
    move(server, alice, "alice")
    assert all(bob not in m.to for m in server.new_mail())  # a move waits for the digest

"""Bots in tournaments: only where the tournament takes them (`--bots`, `bots=yes`),
playing their boards through the same machinery as their challenges (`pbm jobs run`,
play_bots) until the tournament ends, and named `pbmbot1 (bot)` in every table."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from sqlmodel import Session, select
from typer.testing import CliRunner

from pbm.cli import app
from pbm.services.context import Context
from pbm.services.tournaments import entry, lookup
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, GamePlayer, User
from pbm.store.models_tournament import Tournament, TournamentPairing
from pbm.texts import phrase
from tests.bots.helpers import add_bot, play
from tests.server.conftest import Server, cli_ok, legal_texts

runner = CliRunner()
# A tournament table's line: rank, player, points, S-B, Buchholz, W, D, L, byes.
ROW = re.compile(
    r"^\s*(\d+)\s+(\S+(?: \(bot\))?)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)"
)


def table_rows(text: str) -> dict[str, tuple[float, int, int, int, int]]:
    """player label -> (points, wins, draws, losses, byes) of a standings table."""
    found = {}
    for line in text.strip().splitlines()[1:]:
        m = ROW.match(line)
        assert m is not None, line
        found[m[2]] = (float(m[3]), int(m[4]), int(m[5]), int(m[6]), int(m[7]))
    return found


def points_from_boards(session: Session, name: str) -> dict[str, float]:
    """Each entrant's points counted from the finished boards themselves (1 a win, 1/2 a
    tie, 1 a bye), to hold the standings against; keyed by userid."""
    points: dict[str, float] = {}
    t = session.exec(select(Tournament).where(Tournament.name == name)).one()
    names = {u.id: u.userid for u in session.exec(select(User))}
    query = select(TournamentPairing).where(TournamentPairing.tournament_id == t.id)
    for p in session.exec(query):
        first = names[p.first_id]
        points.setdefault(first, 0.0)
        if p.second_id is None:
            points[first] += 1.0
            continue
        second = names[p.second_id]
        points.setdefault(second, 0.0)
        row = session.get(BoardRow, p.game_id)
        assert row is not None and row.status == "finished"
        seats = {
            gp.position: names[gp.user_id]
            for gp in session.exec(select(GamePlayer).where(GamePlayer.game_id == row.id))
        }
        if row.result == "won":
            assert row.winner is not None
            points[seats[row.winner]] += 1.0
        else:
            points[first] += 0.5
            points[second] += 0.5
    return points


def shown(userid: str) -> str:
    return f"{userid} (bot)" if userid.startswith("pbmbot") else userid


def test_a_swiss_of_bots_runs_to_the_end_through_jobs_run(cfg: Path) -> None:
    for n in range(1, 5):
        cli_ok("bot", "add", f"pbmbot{n}", "--level", "1", "--games", "quarto")
    said = cli_ok(
        "tournament", "create", "cup", "quarto", "--type", "swiss", "--rounds", "3", "--bots"
    )
    assert said.strip() == "cup: Swiss of Quarto, open, bots may enter"
    cli_ok("tournament", "create", "closed", "quarto")
    refused = runner.invoke(app, ["tournament", "enter", "closed", "pbmbot1"])
    assert refused.exit_code == 1
    assert " ".join(phrase("bot_tournament", userid="pbmbot1", name="closed").split()) in " ".join(
        refused.output.split()
    )
    assert "bots not allowed" in cli_ok("tournament", "show", "closed")
    for n in range(1, 5):
        cli_ok("tournament", "enter", "cup", f"pbmbot{n}")
    # A bot enters only a tournament of a game it plays, as it takes only such challenges.
    cli_ok("bot", "add", "quadbot", "--level", "1", "--games", "quad")
    refused = runner.invoke(app, ["tournament", "enter", "cup", "quadbot"])
    assert refused.exit_code == 1 and "does not play Quarto" in refused.output
    listed = {t["name"]: t["bots"] for t in json.loads(cli_ok("tournament", "list", "--json"))}
    assert listed == {"cup": True, "closed": False}
    cli_ok("tournament", "start", "cup")
    done = json.loads(cli_ok("jobs", "run", "--json"))
    assert done["bot_moves"] >= 3 * 2 * 9  # 3 rounds of 2 Quarto games, 9 moves at least
    show = cli_ok("tournament", "show", "cup")
    assert "status finished" in show and "bots allowed" in show
    assert "entrants: pbmbot1 (bot), pbmbot2 (bot)" in show
    pairings = cli_ok("tournament", "pairings", "cup")
    assert "playing" not in pairings and pairings.count("pbmbot1 (bot)") == 3
    rows = table_rows(cli_ok("tournament", "standings", "cup"))
    engine = make_engine(f"sqlite:///{cfg.parent}/pbm.sqlite3")
    try:
        with session_for(engine) as session:
            expected = points_from_boards(session, "cup")
    finally:
        engine.dispose()
    assert {label: r[0] for label, r in rows.items()} == {shown(u): p for u, p in expected.items()}
    assert all(sum(r[1:]) == 3 for r in rows.values())  # W + D + L + byes
    assert sum(r[0] for r in rows.values()) == 6  # six games, one point each
    # The bots are rated like players, and the rating list names them as bots.
    ratings = cli_ok("ratings", "show", "quarto")
    assert "pbmbot1 (bot)" in ratings
    rated = json.loads(cli_ok("ratings", "show", "quarto", "--json"))
    assert {r["userid"] for r in rated} == {f"pbmbot{n}" for n in range(1, 5)}
    assert all(r["bot"] for r in rated)


def test_players_and_bots_finish_a_round_robin_by_mail(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    for n in (1, 2):
        add_bot(server, f"pbmbot{n}", level=1)
    server.send(alice, "tournament create alice secret closed quarto")
    server.send(alice, "tournament create alice secret mixed quarto bots=yes")
    server.send(bob, "tournament join mixed bob secret")
    server.send(alice, "tournament join mixed alice secret")
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        closed = lookup.find(session, "closed")
        mixed = lookup.find(session, "mixed")
        for n in (1, 2):
            bot = session.exec(select(User).where(User.userid == f"pbmbot{n}")).one()
            try:
                entry.join(ctx, closed, bot)
            except lookup.TournamentError as exc:
                assert str(exc) == phrase("bot_tournament", userid=bot.userid, name="closed")
            else:
                raise AssertionError("a bot entered a tournament without bots")
            entry.join(ctx, mixed, bot)
        session.commit()
    server.new_mail()
    server.send(alice, "tournament start mixed alice secret")
    rng = random.Random(14)
    people = {"alice": alice, "bob": bob}
    for _ in range(200):
        play(server)
        moved = False
        with session_for(server.engine) as session:
            waiting = [
                (row.board, user.userid)
                for row, gp, user in session.exec(
                    select(BoardRow, GamePlayer, User)
                    .where(BoardRow.status == "active", GamePlayer.game_id == BoardRow.id)
                    .where(GamePlayer.position == BoardRow.to_move, User.id == GamePlayer.user_id)
                )
                if not user.bot
            ]
        for board, userid in waiting:
            text = rng.choice(legal_texts(server, "quarto", board))
            status = server.send(people[userid], f"quarto move {board} {userid} secret {text}")
            assert status == "done"
            moved = True
        if not moved:
            break
    with session_for(server.engine) as session:
        t = lookup.find(session, "mixed")
        assert t.status == "finished"
        expected = points_from_boards(session, "mixed")
    mails = server.new_mail()
    final = [m for m in mails if m.subject.startswith("Tournament mixed won by")]
    assert sorted(m.to[0] for m in final) == sorted([alice, bob])  # nothing to the bots
    rows = table_rows(_table_in(final[0].body))
    assert {label: r[0] for label, r in rows.items()} == {shown(u): p for u, p in expected.items()}
    assert all(sum(r[1:]) == 3 for r in rows.values())  # W + D + L + byes
    # The game's rating list (`standings`) names the bots as bots too.
    server.send(alice, "quarto standings")
    (answer,) = server.new_mail()
    assert "pbmbot1 (bot)" in answer.body and "pbmbot2 (bot)" in answer.body
    server.send(alice, "quarto ratings")
    (answer,) = server.new_mail()
    assert "pbmbot1 (bot)" in answer.body


def _table_in(body: str) -> str:
    """The standings table of a tournament mail: from its `Rank` line to a blank one."""
    lines = body.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Rank"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return "\n".join(lines[start:end])

"""`pbm tournament ...`: an admin runs a small round robin of a variant from the CLI, with
a withdrawal and a cancelled tournament beside it."""

from __future__ import annotations

import json
from pathlib import Path

from pbm.cli import app
from tests.server.conftest import cli_ok as ok
from tests.server.conftest import runner


def test_admin_runs_a_round_robin_from_the_cli(cfg: Path) -> None:
    from pbm.games import GAMES, find_game

    # The first variant name any game declares (a name standing for a game and options).
    variant = next(name for g in GAMES.values() for name in g.variant_aliases)
    rules, variant_options = find_game(variant)
    for name in ("amy", "bo", "cy"):
        ok("user", "add", name, f"{name}@x.example", "--password", "pw")
    ok("tournament", "create", "spring", variant)
    ok("tournament", "create", "ko", "quarto", "--type", "knockout")
    for name in ("amy", "bo", "cy"):
        ok("tournament", "enter", "spring", name)
    refused = runner.invoke(app, ["tournament", "enter", "spring", "amy"])
    assert refused.exit_code == 1 and "already entered" in refused.output
    listed = json.loads(ok("tournament", "list", "--json"))
    assert [(t["name"], t["status"], t["entrants"], t["prefix"]) for t in listed] == [
        ("spring", "open", 3, "a"),
        ("ko", "open", 0, "b"),
    ]
    ok("tournament", "start", "spring")
    shown = ok("tournament", "show", "spring")
    assert "status running, all 3 rounds at once" in shown  # a round robin
    assert "a101" in shown and "a103" in shown and "a104" not in shown  # 3 players: 3 games
    from sqlmodel import select

    from pbm.store.engine import make_engine, session_for
    from pbm.store.models import BoardRow

    engine = make_engine(f"sqlite:///{cfg.parent}/pbm.sqlite3")
    with session_for(engine) as session:
        boards = list(session.exec(select(BoardRow)))
    engine.dispose()
    assert len(boards) == 3
    assert all((b.game, b.options) == (rules.name, variant_options) for b in boards)
    # withdraw and cancel said nothing at all: the operator could not tell what they did
    assert ok("tournament", "withdraw", "spring", "cy") == (
        "cy has withdrawn from tournament spring: his boards still\n"
        "being played are forfeited and he is not paired again.\n"
    )
    pairs = ok("tournament", "pairings", "spring")
    # A round it never has said "No pairings yet.", as if they were coming.
    for missing in ("9", "-1"):
        assert ok("tournament", "pairings", "spring", "--round", missing) == (
            f"Tournament spring has no pairings for round {missing}.\n"
        )
    assert ok("tournament", "pairings", "ko", "--round", "1") == "No pairings yet.\n"
    assert pairs.count("(withdrawal)") == 0  # forfeited boards are scored as games
    assert pairs.count("playing") == 1  # amy-bo goes on; cy's two boards were forfeited
    table = ok("tournament", "standings", "spring")
    cy_line = next(line for line in table.splitlines() if " cy " in f" {line} ")
    assert cy_line.split()[2] == "0" and "(withdrawn)" in cy_line
    assert ok("tournament", "cancel", "ko", "--yes") == "Tournament ko has been cancelled.\n"
    listed = json.loads(ok("tournament", "list", "--json"))
    assert [t["status"] for t in listed] == ["running", "cancelled"]
    again = runner.invoke(app, ["tournament", "cancel", "ko"])
    assert again.exit_code == 1


def test_create_names_its_own_options_for_rounds(cfg: Path) -> None:
    # A Swiss without --rounds was told to write "rounds=N" (the mail's setting), and
    # --rounds with another type (even --rounds -3) was dropped without a word.
    for args, error in (
        (["--type", "swiss"], "a Swiss tournament needs its number of rounds: --rounds N"),
        (["--type", "swiss", "--rounds", "-2"], "a Swiss tournament needs its number"),
        (["--rounds", "3"], "--rounds is for a Swiss tournament (--type swiss) only"),
    ):
        result = runner.invoke(app, ["tournament", "create", "cup", "quarto", *args])
        assert result.exit_code == 2 and result.output.startswith(f"error: {error}")
    assert json.loads(ok("tournament", "list", "--json")) == []


def test_withdraw_before_the_start_says_the_entry_is_gone(cfg: Path) -> None:
    ok("user", "add", "amy", "amy@x.example", "--password", "pw")
    ok("tournament", "create", "fall", "quarto")
    ok("tournament", "enter", "fall", "amy")
    assert ok("tournament", "withdraw", "fall", "amy") == "amy has left tournament fall.\n"
    assert "\nentrants: none\n\nNo pairings yet.\n" in ok("tournament", "show", "fall")
    # cancelled before its start: "No pairings yet." had it waiting for pairings to come
    ok("tournament", "cancel", "fall", "--yes")
    assert "\nNo pairings were made.\n" in ok("tournament", "show", "fall")
    assert ok("tournament", "pairings", "fall") == "No pairings were made.\n"


def test_enter_and_start_say_what_they_did_and_show_counts_rounds(cfg: Path) -> None:
    for name in ("amy", "bo", "cy", "di"):
        ok("user", "add", name, f"{name}@x.example", "--password", "pw")
    ok("tournament", "create", "sw", "quarto", "--type", "swiss", "--rounds", "3")
    said = [ok("tournament", "enter", "sw", name).strip() for name in ("amy", "bo", "cy", "di")]
    assert said[0] == "amy has entered tournament sw (entrants so far: 1)."
    assert said[3] == "di has entered tournament sw (entrants so far: 4)."
    assert "status open" in ok("tournament", "show", "sw")
    started = ok("tournament", "start", "sw")
    assert started.strip() == (
        "sw: Swiss of Quarto started with 4 players, 2 boards, running, round 1 of 3"
    )
    assert "status running, round 1 of 3\n" in ok("tournament", "show", "sw")


def test_start_of_a_running_tournament_says_it_has_started(cfg: Path) -> None:
    # It said "Tournament duo is running: entries are closed.", an answer to entering.
    for name in ("amy", "bo"):
        ok("user", "add", name, f"{name}@x.example", "--password", "pw")
    ok("tournament", "create", "duo", "quarto")
    for name in ("amy", "bo"):
        ok("tournament", "enter", "duo", name)
    ok("tournament", "start", "duo")
    again = runner.invoke(app, ["tournament", "start", "duo"])
    assert (again.exit_code, again.output) == (
        1,
        "error: Tournament duo has already started (it is running).\n",
    )

"""Outside engines over the line protocol (docs/engines.md): the example engine plays
whole games, and every kind of failure (crash, timeout, garbage, unparsable or illegal
moves, an engine that cannot start) is recorded and ends in the built-in engine's move."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from pbm.bots.engine import choose
from pbm.bots.external import CRASH, GARBAGE, ILLEGAL, START, TIMEOUT, ExternalEngine
from pbm.games import GAMES, find_game

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = [sys.executable, str(ROOT / "examples" / "random_engine.py")]
FAKE = [sys.executable, str(Path(__file__).with_name("fake_engine.py"))]
QUARTO = GAMES["quarto"]


def _fake(mode: str, *extra: str, **kwargs: Any) -> ExternalEngine:
    return ExternalEngine([*FAKE, mode, *extra], **kwargs)


def test_the_example_engine_plays_whole_games_through_the_protocol() -> None:
    with ExternalEngine([*EXAMPLE, "--seed", "1"]) as engine:
        for game_number in range(3):
            state = QUARTO.new_state()
            texts: list[str] = []
            while (seat := QUARTO.to_move(state)) is not None:
                if seat == game_number % 2:
                    reply = engine.choose(
                        QUARTO, state, seat, level=1, seconds=2.0, seed=1, moves=texts
                    )
                    assert not reply.fallback and reply.failures == ()
                    assert reply.engine_name == "random-quarto 1.0"
                    decision = reply.decision
                else:
                    decision = choose(QUARTO, state, seat, level=1, seed=len(texts))
                assert decision.move in QUARTO.legal_moves(state)
                texts.append(decision.text)
                state = QUARTO.apply(state, decision.move)
            assert QUARTO.outcome(state) is not None


def test_the_example_engine_resigns_games_it_does_not_know() -> None:
    game = GAMES["quad"]
    with ExternalEngine(EXAMPLE) as engine:
        reply = engine.choose(game, game.new_state(), 0, level=1, seconds=1.0, seed=0)
    assert reply.decision.resign and not reply.fallback


@pytest.mark.parametrize(
    ("mode", "kind"),
    [("crash", CRASH), ("garbage", GARBAGE), ("bad", GARBAGE), ("illegal", ILLEGAL)],
)
def test_a_broken_engine_falls_back_to_the_builtin_engine(mode: str, kind: str) -> None:
    state = QUARTO.new_state()
    with _fake(mode) as engine:
        reply = engine.choose(QUARTO, state, 0, level=2, seconds=1.0, seed=4, iterations=20)
    assert reply.fallback
    assert [f.kind for f in reply.failures] == [kind] * 3
    assert reply.decision.move in QUARTO.legal_moves(state)
    expected = choose(QUARTO, state, 0, level=2, seconds=1.0, seed=4, iterations=20)
    assert reply.decision.move == expected.move
    if mode == "crash":
        assert "status 3" in str(reply.failures[0])
        assert "giving up" in reply.failures[0].stderr
    if mode == "illegal":
        assert "a1 TLRH" in str(reply.failures[0])


def test_an_engine_that_does_not_answer_in_time_is_killed() -> None:
    state = QUARTO.new_state()
    with _fake("hang", tries=2) as engine:
        reply = engine.choose(QUARTO, state, 0, level=1, seconds=0.2, seed=0)
    assert reply.fallback and [f.kind for f in reply.failures] == [TIMEOUT, TIMEOUT]
    assert reply.decision.move in QUARTO.legal_moves(state)


def test_engines_that_cannot_start_fall_back() -> None:
    state = QUARTO.new_state()
    with ExternalEngine("/nonexistent/engine --fast") as engine:
        reply = engine.choose(QUARTO, state, 0, level=1, seconds=1.0, seed=0)
    assert reply.fallback and [f.kind for f in reply.failures] == [START] * 3
    with _fake("mute", start_seconds=0.3, tries=1) as engine:
        reply = engine.choose(QUARTO, state, 0, level=1, seconds=1.0, seed=0)
    assert reply.fallback and [f.kind for f in reply.failures] == [TIMEOUT]


def test_a_crashed_engine_is_restarted(tmp_path: Path) -> None:
    state = QUARTO.new_state()
    with _fake("flaky", str(tmp_path / "ran")) as engine:
        reply = engine.choose(QUARTO, state, 0, level=1, seconds=1.0, seed=0)
        assert not reply.fallback and [f.kind for f in reply.failures] == [CRASH]
        assert reply.decision.text == "give TLRH"
        # Kept running between moves: the next move meets no failure.
        again = engine.choose(QUARTO, state, 0, level=1, seconds=1.0, seed=0)
        assert again.failures == () and again.decision.text == "give TLRH"


def test_a_resignation_is_passed_on_with_its_verdict() -> None:
    with _fake("resign") as engine:
        reply = engine.choose(QUARTO, QUARTO.new_state(), 0, level=1, seconds=1.0, seed=0)
    assert reply.decision.resign and reply.decision.verdict == "lost"
    assert not reply.fallback


def test_the_engine_is_sent_the_position_and_no_hidden_move(tmp_path: Path) -> None:
    game, options = find_game("quadrupel-points")
    state = game.new_state(**options)
    black_setup = game.format_move(state, game.legal_moves(state)[7])
    state = game.apply(state, game.legal_moves(state)[7])
    log = tmp_path / "received"
    with _fake("record", str(log)) as engine:
        reply = engine.choose(game, state, 1, level=1, seconds=1.5, seed=0, moves=[black_setup])
    # The fake's answer is Quarto's, so the built-in engine plays the setup.
    assert reply.fallback and reply.failures[0].kind == GARBAGE
    lines = log.read_text().splitlines()
    start = lines.index("game quadrupel")
    request = lines[start : lines.index("go 1.500") + 1]
    assert request[1:6] == [
        "option variant=points",
        "option goal=minimum",
        "option threshold=20",
        "option zone2=placement",
        "option plycap=400",
    ]
    assert request[6] == "seat 1 White"
    assert request[7].startswith("position variant=points")
    assert "black=c3,c4,d4,d5" in request[7]  # the dots are not shown
    assert request[8:] == ["moves 1", "move ?", "go 1.500"]
    assert black_setup not in log.read_text()


def test_the_moves_so_far_are_sent_in_the_games_notation(tmp_path: Path) -> None:
    state = QUARTO.new_state()
    texts = []
    for text in ("give TLRH", "b2 SDQF", "c3 SLRH"):
        texts.append(text)
        state = QUARTO.apply(state, QUARTO.parse_move(state, text))
    log = tmp_path / "received"
    with _fake("record", str(log)) as engine:
        engine.choose(QUARTO, state, 1, level=1, seconds=1.0, seed=0, moves=texts)
    lines = log.read_text().splitlines()
    assert lines[0] == "pbm-engine 1"
    assert f"position {QUARTO.dump(state)}" in lines
    at = lines.index("moves 3")
    assert lines[at + 1 : at + 5] == ["move give TLRH", "move b2 SDQF", "move c3 SLRH", "go 1.000"]

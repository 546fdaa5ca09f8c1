"""One conformance suite, run over every registered game and its example option sets.

A game joins by being registered in `pbm.games`; nothing here names a game.
"""

from __future__ import annotations

import random

import pytest

from pbm.games import GAMES, Game, get_game
from pbm.games.base import AmbiguousMoveError, InvalidMoveError, MoveError

PLAYOUTS = 6
MAX_PLIES = 5000

CASES = [
    pytest.param(game, dict(options), id=f"{name}-{i}")
    for name, game in GAMES.items()
    for i, options in enumerate(game.example_options)
]


def _playouts(game: Game, options: dict, count: int = PLAYOUTS):
    """Yield every (state, legal moves) on `count` seeded random games, and each end."""
    for seed in range(count):
        rng = random.Random(seed)
        state = game.new_state(**options)
        for _ in range(MAX_PLIES):
            if game.to_move(state) is None:
                break
            moves = game.legal_moves(state)
            yield state, moves
            state = game.apply(state, rng.choice(moves))
        else:
            pytest.fail(f"{game.name} seed {seed}: random game did not end in {MAX_PLIES} plies")
        yield state, None


def test_every_game_is_registered_with_a_complete_description():
    assert GAMES, "no game is registered"
    for name, game in GAMES.items():
        assert name == game.name == name.lower()
        assert game.title and game.seats and game.summary.strip() and game.notation.strip()
        assert len(set(game.seats)) == len(game.seats)


@pytest.mark.parametrize(("game", "options"), CASES)
def test_format_parse_roundtrip(game: Game, options: dict):
    for state, moves in _playouts(game, options, 3):
        for move in moves or ():
            text = game.format_move(state, move)
            assert game.parse_move(state, text) == move, text
            assert game.parse_move(state, text.upper()) == move, text


@pytest.mark.parametrize(("game", "options"), CASES)
def test_dump_load_roundtrip_and_renders_fit(game: Game, options: dict):
    for state, _ in _playouts(game, options):
        text = game.dump(state)
        assert "\n" not in text
        assert game.load(text) == state
        assert game.dump(game.load(text)) == text
        for seat in (None, *range(len(game.seats))):
            board = game.render(state, seat)
            assert board.strip()
            widest = max(len(line) for line in board.splitlines())
            assert widest <= 72, f"{game.name}: a line of {widest} columns"


@pytest.mark.parametrize(("game", "options"), CASES)
def test_to_move_and_outcome_agree_and_running_games_have_moves(game: Game, options: dict):
    ended = 0
    for state, moves in _playouts(game, options):
        over = game.outcome(state) is not None
        assert (game.to_move(state) is None) == over
        if moves is not None:
            assert moves, "a running game must offer a legal move (a pass where forced)"
            assert len(set(moves)) == len(moves), "legal_moves lists a move twice"
        else:
            ended += 1
            result = game.outcome(state)
            assert result is not None
            assert result.reason
            assert result.winner is None or 0 <= result.winner < len(game.seats)
    assert ended == PLAYOUTS


@pytest.mark.parametrize(("game", "options"), CASES)
def test_status_gives_outcome_and_turn_as_values_and_render_draws_its_headline(
    game: Game, options: dict
):
    for state, _ in _playouts(game, options, 3):
        status = game.status(state)
        assert status.outcome == game.outcome(state)
        assert status.to_move == game.to_move(state)
        assert status.headline and all(line.strip() for line in status.headline)
        for seat in (None, *range(len(game.seats))):
            drawn = game.render(state, seat).splitlines()
            bare = game.render(state, seat, headline=False).splitlines()
            # The headline is a run of the drawing's lines, and all that headline=False drops.
            start = next(i for i, line in enumerate(drawn) if line not in bare)
            run = drawn[start : start + len(status.headline)]
            assert [line.strip() for line in run] == [line.strip() for line in status.headline]
            assert drawn[:start] + drawn[start + len(status.headline) :] == bare


@pytest.mark.parametrize(("game", "options"), CASES)
def test_apply_is_pure(game: Game, options: dict):
    for state, moves in _playouts(game, options, 2):
        before = game.dump(state)
        copy = game.load(before)
        for move in (moves or ())[:8]:
            game.apply(state, move)
        assert game.dump(state) == before
        assert state == copy


@pytest.mark.parametrize(("game", "options"), CASES)
def test_parse_errors_quote_the_input(game: Game, options: dict):
    state = game.new_state(**options)
    for text in ("zz99-zz98", "hello world", "", "?"):
        with pytest.raises(MoveError) as info:
            game.parse_move(state, text)
        assert f"'{text}'" in str(info.value)
        assert not isinstance(info.value, AmbiguousMoveError) or info.value.candidates


@pytest.mark.parametrize("game", list(GAMES.values()), ids=list(GAMES))
def test_bad_options_raise_a_clear_error(game: Game):
    from pbm.games import OptionError

    with pytest.raises(OptionError, match="no option 'no_such_option'"):
        game.new_state(no_such_option=1)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_answer_example_is_written_in_the_games_notation(name: str) -> None:
    """The example a board mail gives the player to move parses as a move (it may be
    illegal in the position, never unreadable), in the start position and on from it."""
    rules = get_game(name)
    for options in rules.example_options:
        state = rules.new_state(**options)
        for _ply in range(6):
            if rules.to_move(state) is None:
                break
            example = rules.answer_example(state)
            assert example and "\n" not in example
            try:
                rules.parse_move(state, example)
            except InvalidMoveError as exc:
                raise AssertionError(f"{name} {options}: {example!r} is unreadable") from exc
            except MoveError:
                pass  # readable, not legal here
            state = rules.apply(state, rules.legal_moves(state)[0])

"""Quadrupel through the server: variant names as game words, secret setups in every
mail, and maximum-points matches of linked games."""

from __future__ import annotations

import json

import pytest

from tests.server.conftest import Sent, Server, board_row, find_board
from tests.server.conftest import cli_ok as ok

BLACK_SETUP = "setup c4=2 d4=1 d5=4 c3=3"  # canonical: setup c3=3 c4=2 d4=1 d5=4
WHITE_SETUP = "setup c5=4 b4=3 e4=2 d3=1"


# -- variant names ------------------------------------------------------------------


def test_challenge_by_variant_name_sets_its_options(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    assert server.send(alice, "quadrupel-added challenge alice bob") == "done"
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all(m.subject == "New Quadrupel Board 101 alice" for m in mails)
    assert board_row(server, "quadrupel", "101").options == {"variant": "added"}


def test_variant_name_options_merge_with_the_challenge_options(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, _ = pair
    server.send(alice, "Quadrupel-Points challenge -goal=maximum alice bob")
    [*_] = server.new_mail()
    options = board_row(server, "quadrupel", "101").options
    assert options == {"variant": "points", "goal": "maximum"}
    # Repeating the option a name fixes, with the same value, is fine.
    server.send(alice, "quadrupel-zone2-ban challenge -zone2=ban alice bob")
    server.new_mail()
    options = board_row(server, "quadrupel", "102").options
    assert options == {"variant": "position", "zone2": "ban"}


def test_variant_name_conflicting_with_an_option_is_refused(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, _ = pair
    server.send(alice, "quadrupel-zone2-ban challenge -zone2=placement alice bob")
    [err] = server.new_mail()
    assert err.subject == "Invalid challenge"
    assert "quadrupel-zone2-ban means zone2=ban" in err.body
    assert "-zone2=placement" in err.body
    assert find_board(server, "quadrupel", "101") is None


def test_every_command_accepts_a_variant_name(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    server.send(alice, "quadrupel challenge alice bob")
    server.new_mail()
    server.send(bob, "quadrupel-combination show 101")
    [shown] = server.new_mail()
    assert (
        shown.subject.startswith("Quadrupel Board 101")
        and "Please start the game alice." in shown.body
    )
    server.send(bob, "quadrupel-added games alice")
    [games] = server.new_mail()
    assert "101" in games.body and "alice" in games.body
    server.send(bob, "help quadrupel-maximum")
    [helped] = server.new_mail()
    assert "QUADRUPEL" in helped.body and "Notation" in helped.body
    server.send(bob, "quadrupel-position help")
    [helped] = server.new_mail()
    assert "Notation" in helped.body
    assert server.send(alice, "quadrupel-basic move 101 alice secret c3-c2") == "done"
    assert board_row(server, "quadrupel", "101").move_count == 1


# -- secret setups ------------------------------------------------------------------


def test_setup_stays_secret_from_the_opponent_until_both_are_in(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, bob = pair
    server.send(alice, "quadrupel-points challenge alice bob")
    server.new_mail()
    assert server.send(alice, f"quadrupel move 101 alice secret {BLACK_SETUP}") == "done"
    mails = server.new_mail()
    [to_alice] = server.to(alice, mails)
    [to_bob] = server.to(bob, mails)
    assert "1 setup c3=3 c4=2 d4=1 d5=4" in to_alice.body
    assert "1 ..." in to_bob.body
    assert "c3=3" not in to_bob.body and "X-" in to_bob.body
    # Observers (show without being a player) and show board#n see no more than bob.
    server.signup("carol")
    server.send("carol@players.example", "quadrupel show 101 101#1")
    for shown in server.new_mail():
        assert "1 ..." in shown.body and "c3=3" not in shown.body
    server.send(bob, "quadrupel show 101")
    [shown] = server.new_mail()
    assert "1 ..." in shown.body and "c3=3" not in shown.body
    # A preview on top of the secret setup would show its values: refused.
    server.send(bob, f"quadrupel preview 101 {WHITE_SETUP},")
    [refused] = server.new_mail()
    assert "secret" in refused.body and "c3=3" not in refused.body
    server.send(bob, f"quadrupel submit 101 bob secret {WHITE_SETUP}")
    [refused] = server.new_mail()
    assert "c3=3" not in refused.body
    # Once both setups are in, everyone sees both.
    assert server.send(bob, f"quadrupel move 101 bob secret {WHITE_SETUP}") == "done"
    mails = server.new_mail()
    assert len(mails) == 2
    for m in mails:
        assert "1 setup c3=3 c4=2 d4=1 d5=4" in m.body
        assert "2 setup d3=1 b4=3 e4=2 c5=4" in m.body
        assert "X4" in m.body and "X3" in m.body


@pytest.mark.usefixtures("cfg")
def test_cli_game_new_and_show_by_variant_name_hide_the_setup() -> None:
    ok("user", "add", "alice", "alice@x.example", "--password", "pw")
    ok("user", "add", "bob", "bob@x.example", "--password", "pw")
    ok("game", "new", "quadrupel-points", "alice", "bob")
    ok("run", f"quadrupel move 101 alice pw {BLACK_SETUP}", "--as", "alice")
    shown = json.loads(ok("game", "show", "quadrupel-points", "101", "--json"))
    assert shown["moves"] == ["..."]
    text = ok("game", "show", "quadrupel", "101")
    assert "1 ..." in text and "c3=3" not in text
    ok("run", f"quadrupel move 101 bob pw {WHITE_SETUP}", "--as", "bob")
    shown = json.loads(ok("game", "show", "quadrupel", "101", "--json"))
    assert shown["moves"] == ["setup c3=3 c4=2 d4=1 d5=4", "setup d3=1 b4=3 e4=2 c5=4"]


# -- maximum-points matches -----------------------------------------------------------

# With these setups Black completes a Square worth 30 points in his third move while
# White steps d3-e3 (found by a search on the rules; every game below replays it).
MATCH_LINE = ["d5-b5", "d3-e3", "b5-d3"]


def _play_match_game(server: Server, board: str, black: str, white: str) -> list[Sent]:
    """Both setups and the 30-point Square for Black; returns the mails of the last move."""
    server.send(f"{black}@players.example", f"quadrupel move {board} {black} secret {BLACK_SETUP}")
    server.send(f"{white}@players.example", f"quadrupel move {board} {white} secret {WHITE_SETUP}")
    for i, move in enumerate(MATCH_LINE):
        mover = black if i % 2 == 0 else white
        server.new_mail()
        assert (
            server.send(f"{mover}@players.example", f"quadrupel move {board} {mover} secret {move}")
            == "done"
        )
    return server.new_mail()


def test_maximum_points_match_with_a_tie_and_a_third_game(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, bob = pair
    server.send(alice, "quadrupel-maximum challenge alice bob")
    server.new_mail()
    first = board_row(server, "quadrupel", "101")
    assert (first.match_id, first.match_game) == (first.id, 1)

    # Game 1: alice (Black) wins 30-0; bob, the loser, begins game 2 as Black.
    mails = _play_match_game(server, "101", "alice", "bob")
    ended = [m for m in mails if m.subject.startswith("Quadrupel Board 101")]
    started = [m for m in mails if m.subject.startswith("New Quadrupel Board 102")]
    assert sorted(m.to[0] for m in ended) == [alice, bob]
    assert sorted(m.to[0] for m in started) == [alice, bob]
    for m in ended:
        assert "Maximum-points match, game 1. Points so far: alice 30, bob 0." in m.body
        assert "game 2 is Quadrupel Board 102, and bob begins" in m.body
    assert all(m.subject == "New Quadrupel Board 102 bob **" for m in started)
    second = board_row(server, "quadrupel", "102")
    assert (second.match_id, second.match_game) == (first.id, 2)
    assert second.options == {"variant": "points", "goal": "maximum"}

    # Game 2: bob (Black) wins 30-0: the totals tie, so a third game follows, begun by
    # alice, the loser of game 2.
    mails = _play_match_game(server, "102", "bob", "alice")
    ended = [m for m in mails if m.subject.startswith("Quadrupel Board 102")]
    for m in ended:
        assert "Points so far: alice 30, bob 30." in m.body
        assert "game 3 is Quadrupel Board 103, and alice begins" in m.body
        assert "wins the match" not in m.body
    third = board_row(server, "quadrupel", "103")
    assert (third.match_id, third.match_game) == (first.id, 3)

    # Game 3: alice wins it, and the match, 60-30; no fourth game.
    mails = _play_match_game(server, "103", "alice", "bob")
    ended = [m for m in mails if m.subject.startswith("Quadrupel Board 103")]
    assert sorted(m.to[0] for m in ended) == [alice, bob]
    for m in ended:
        assert "Points so far: alice 60, bob 30." in m.body
        assert "alice wins the match." in m.body
    assert not any(m.subject.startswith("New ") for m in mails)
    assert find_board(server, "quadrupel", "104") is None


def test_resigning_a_match_game_gives_the_match(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    server.send(alice, "quadrupel-points challenge -goal=max alice bob")
    server.send(alice, f"quadrupel move 101 alice secret {BLACK_SETUP}")
    server.send(bob, f"quadrupel move 101 bob secret {WHITE_SETUP}")
    server.new_mail()
    server.send(alice, "quadrupel resign 101 alice secret")
    mails = server.new_mail()
    assert mails and all("bob wins the match." in m.body for m in mails)
    assert find_board(server, "quadrupel", "102") is None


def test_a_minimum_points_game_is_no_match(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    server.send(alice, "quadrupel-points challenge alice bob")
    row = board_row(server, "quadrupel", "101")
    assert row.match_id is None and row.match_game is None

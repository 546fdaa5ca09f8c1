"""Playing boards by mail: challenge, moves, errors, events, queued and submitted moves."""

from __future__ import annotations

import pytest

from tests.server.conftest import Server, board_row, flat, legal_texts, play_first_moves


@pytest.fixture
def pair(server: Server) -> tuple[str, str]:
    alice = server.signup("alice")
    bob = server.signup("bob")
    assert server.send(alice, "quadrature challenge alice bob", "Good luck, Bob!") == "done"
    server.new_mail()
    return alice, bob


def test_challenge_mails_each_player_his_copy(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "Quadr CHALLENGE alice bob", "Good luck, Bob!")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for m in mails:
        assert m.subject == "New Quadrature Board 101 alice **"
        assert "A new Quadrature board (101) has been started" in m.body
        assert "Please start the game alice." in m.body
        assert "alice writes:\nGood luck, Bob!" in m.body
        assert m.mail.reply_to is not None and m.mail.reply_to.startswith("pbm+")
        assert m.mail.message_id is not None and m.mail.message_id.startswith("<pbm.")
    # Each player has his own token.
    assert mails[0].mail.reply_to != mails[1].mail.reply_to


def test_move_by_password_reaches_both_players(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    move = legal_texts(server, "quadrature")[0]
    assert server.send(alice, f"quadrature move 101 alice secret {move}") == "done"
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for m in mails:
        assert m.subject == "Quadrature Board 101 bob"
        assert "It is bob's turn." in m.body
        assert f"1 {move}" in m.body
    row = board_row(server, "quadrature")
    assert row.move_count == 1 and row.to_move == 1


def test_move_with_number_guard(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    move = legal_texts(server, "quadrature")[0]
    server.send(alice, f"quadrature move 101 alice secret {move}#3")
    [err] = server.new_mail()
    assert err.subject == "Quadrature Board 101 Error"
    assert (
        f"Move {move}#3 was not played: it is numbered #3, but the next move\n"
        f"on this board is #1. Write it as {move}#1, or without a number." in err.body
    )
    assert "mail you answered" not in err.body  # it answered none
    assert "Original message follows:" in err.body
    assert f"> Subject: quadrature move 101 alice ****** {move}#3" in err.body  # masked
    assert server.send(alice, f"quadrature move 101 alice secret {move}#1") == "done"
    assert board_row(server, "quadrature").move_count == 1


def test_not_your_move(server: Server, pair: tuple[str, str]) -> None:
    _, bob = pair
    move = legal_texts(server, "quadrature")[0]
    server.send(bob, f"quadrature move 101 bob secret {move}")
    [err] = server.new_mail()
    assert err.to == [bob]
    # It said "It is not your move", without whose turn it is or a full stop.
    assert "It is not your move: it is alice's turn on Quadrature Board 101.\n" in err.body
    assert "Summary of Quadrature Board 101" in err.body
    assert board_row(server, "quadrature").move_count == 0


def test_illegal_move_names_the_rule_and_shows_the_board(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, _ = pair
    server.send(alice, "quadrature move 101 alice secret a1-h8")
    [err] = server.new_mail()
    assert err.subject == "Quadrature Board 101 Error"
    assert "'a1-h8'" in err.body
    assert "It is alice's turn" in err.body or "Please start the game alice." in err.body
    server.send(alice, "quadrature move 101 alice secret zz")
    [err] = server.new_mail()
    assert "is not a move" in err.body and "How moves are written" in err.body


def test_wrong_password_and_unknown_board(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    move = legal_texts(server, "quadrature")[0]
    server.send(alice, f"quadrature move 101 alice wrong {move}")
    [err] = server.new_mail()
    assert err.subject == "Quadrature error"
    # pbmserv's words first, then what to do.
    assert err.body.startswith(
        "Invalid password entered for alice\nForgot it? A reply to one of your board"
    )
    assert "the administrator of this server can set a new one." in flat(err.body)
    server.send(alice, f"quadrature move 999 alice secret {move}")
    [err] = server.new_mail()
    assert "Quadrature board 999 not found" in err.body
    # ... and how to find the number of his board.
    assert "Send 'quadrature games YOURID' for the numbers of your boards" in err.body
    server.send(alice, f"quadrature move 101 nobody secret {move}")
    [err] = server.new_mail()
    assert "Invalid userid entered: nobody" in err.body


def test_not_playing(server: Server, pair: tuple[str, str]) -> None:
    carol = server.signup("carol")
    move = legal_texts(server, "quadrature")[0]
    server.send(carol, f"quadrature move 101 carol secret {move}")
    [err] = server.new_mail()
    assert "carol is NOT playing this game" in err.body


def test_resign_before_everyone_moved_removes_the_board(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, bob = pair
    server.send(bob, "quadrature resign 101 bob secret")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all(m.subject == "Quadrature board 101 has been removed" for m in mails)
    assert "bob has decided not to play." in mails[0].body
    row = board_row(server, "quadrature")
    assert row.status == "removed" and not row.rated


def test_declining_a_board_passes_on_the_players_comment(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, bob = pair
    server.send(bob, "quadrature resign 101 bob secret", "Sorry, no time this month.")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for m in mails:
        assert m.body.endswith("not rated.\n\nbob writes:\nSorry, no time this month.\n")


def test_resign_after_moves_gives_the_win(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(bob, "quadrature move 101 bob secret resign")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all("Game won by alice." in m.body for m in mails)
    assert all(m.subject == "Quadrature Board 101" for m in mails)
    assert "Game ended......" in mails[0].body
    row = board_row(server, "quadrature")
    assert row.status == "finished" and row.winner == 0
    # A move on it: pbmserv's words first, then what to do, above the final position.
    server.send(alice, "quadrature move 101 alice secret a1-a2")
    [err] = server.new_mail()
    lines = err.body.splitlines()
    assert lines[:3] == [
        "The game has ended",
        "Its final position is below; send 'quadrature record 101' for the",
        "whole game, or 'quadrature challenge YOURID OPPONENT' to play a new one.",
    ]
    assert "Game won by alice." in err.body


def test_draw_proposal_and_acceptance(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(bob, "quadrature accept 101 bob secret")
    [err] = server.new_mail()
    assert "Nothing has been proposed" in err.body
    server.send(alice, "quadrature move 101 alice secret propose")
    mails = server.new_mail()
    assert all("alice has proposed a draw." in m.body and "\tbob" in m.body for m in mails)
    server.send(alice, "quadrature move 101 alice secret propose")
    [err] = server.new_mail()
    assert "already waiting" in err.body
    server.send(bob, "quadrature move 101 bob secret accept")
    mails = server.new_mail()
    assert all("Game was a tie." in m.body for m in mails)
    assert board_row(server, "quadrature").result == "tie"


def test_the_player_a_proposal_waits_for_is_told_how_to_answer_it(
    server: Server, pair: tuple[str, str]
) -> None:
    """bob, not to move, owes a vote on alice's draw offer: his board mail says how to
    give it; alice's, who made it, does not ask her."""
    alice, bob = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(alice, "quadrature move 101 alice secret propose")
    mails = {m.to[0]: m.body for m in server.new_mail()}
    ask = "Reply accept or reject to answer the draw proposal (help draw)"
    assert mails[bob].rstrip().endswith(ask)
    assert ask not in mails[alice]
    assert mails[alice].rstrip().endswith("(help quadrature)")  # she is to move
    # bob asks to take his last move back: alice, to move, owes the vote now.
    server.send(alice, "quadrature move 101 alice secret reject")
    server.send(bob, "quadrature move 101 bob secret undo")
    mails = {m.to[0]: m.body for m in server.new_mail()}
    assert "answer the undo proposal (help undo)" in mails[alice]
    assert "answer the undo proposal" not in mails[bob]


def test_a_move_ends_a_pending_proposal_and_says_so(server: Server, pair: tuple[str, str]) -> None:
    """pbmserv: a proposal stands "until one person rejects (or a move is made)"; the
    board mail of that move says it lapsed, so nobody answers a proposal long gone."""
    alice, bob = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(alice, "quadrature move 101 alice secret propose")
    server.new_mail()
    move = legal_texts(server, "quadrature")[0]
    server.send(alice, f"quadrature move 101 alice secret {move}")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all("The draw proposal lapsed with alice's move." in m.body for m in mails)
    assert board_row(server, "quadrature").proposal is None
    server.send(bob, "quadrature move 101 bob secret accept")
    [err] = server.new_mail()
    assert "Nothing has been proposed" in err.body
    # A move with nothing pending says nothing of proposals.
    move = legal_texts(server, "quadrature")[0]
    server.send(bob, f"quadrature move 101 bob secret {move}")
    assert not any("lapsed" in m.body for m in server.new_mail())


def test_undo_by_agreement(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(bob, "quadrature move 101 bob secret undo")
    server.send(alice, "quadrature move 101 alice secret reject")
    mails = server.new_mail()
    assert any("alice has rejected the undo." in m.body for m in mails)
    server.send(bob, "quadrature move 101 bob secret undo")
    server.send(alice, "quadrature move 101 alice secret accept")
    mails = server.new_mail()
    # The server signs its word once ("PBeM Server writes:" was doubled).
    assert "\nPBeM Server writes:\nUNDO Successful!\n" in mails[-1].body
    assert mails[-1].body.count("PBeM Server writes:") == 1
    row = board_row(server, "quadrature")
    assert row.move_count == 1 and row.to_move == 1


def test_an_accepted_undo_keeps_the_accepting_players_comment(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, bob = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(bob, "quadrature move 101 bob secret undo", "Sorry, my mouse slipped.")
    server.new_mail()
    server.send(alice, "quadrature move 101 alice secret accept", "No problem, take it back.")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for m in mails:
        assert "UNDO Successful!" in m.body
        assert "alice writes:\nNo problem, take it back." in m.body
    assert board_row(server, "quadrature").move_count == 1


def test_queued_move_is_played_when_the_turn_comes(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    first = legal_texts(server, "quadrature")[0]
    # bob queues a reply that will be legal after alice's move (replay to find one).
    from pbm.games import get_game

    rules = get_game("quadrature")
    state = rules.new_state()
    state = rules.apply(state, rules.parse_move(state, first))
    reply = rules.format_move(state, rules.legal_moves(state)[0])
    server.send(bob, f"quadrature queue 101 bob secret {reply}")
    [confirm] = server.new_mail()
    assert confirm.to == [bob]
    assert f"You have the following move queued: {reply}" in confirm.body
    server.send(alice, f"quadrature move 101 alice secret {first}")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all(f"2 {reply} (Auto)" in m.body for m in mails)
    # The move that brought bob's turn is echoed above his queued one: his mail said
    # only "bob ... (Auto)", and he never read what alice's move did.
    echoes = f"Summary of Quadrature Board 101\n\nalice {first}\nbob {reply} (Auto)\n"
    assert all(echoes in m.body for m in mails)
    assert board_row(server, "quadrature").move_count == 2


def test_submit_and_confirm(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    move = legal_texts(server, "quadrature")[0]
    server.send(alice, "quadrature confirm 101 alice secret")
    [err] = server.new_mail()
    assert "No submission to confirm" in err.body
    server.send(alice, f"quadrature submit 101 alice secret {move}")
    [preview] = server.new_mail()
    assert preview.to == [alice]
    assert preview.subject == "Submit of Quadrature Board 101"
    assert "It must be confirmed to take effect." in preview.body
    assert board_row(server, "quadrature").move_count == 0
    server.send(alice, "quadrature confirm 101 alice secret")
    assert len(server.new_mail()) == 2
    assert board_row(server, "quadrature").move_count == 1


def test_preview_changes_nothing(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    move = legal_texts(server, "quadrature")[0]
    server.send(alice, f"quadrature preview 101 {move}")
    [preview] = server.new_mail()
    assert preview.subject == "Preview of Quadrature Board 101"
    assert f"1 {move}" in preview.body
    server.send(alice, f"quadrature preview new {move}")
    [fresh] = server.new_mail()
    assert fresh.subject == "Preview of a new Quadrature board"
    assert board_row(server, "quadrature").move_count == 0


def test_chat_goes_to_players_and_subscribers(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    carol = server.signup("carol")
    server.send(carol, "quadrature subscribe 101 carol secret")
    [summary] = server.new_mail()
    assert summary.subject == "Subscription summary"
    server.send(alice, "quadrature chat 101 alice secret", "Nice weather.")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob, carol]
    assert all(m.subject == "Quadrature chat 101 alice" for m in mails)
    assert "Nice weather." in mails[0].body
    move = legal_texts(server, "quadrature")[0]
    server.send(alice, f"quadrature move 101 alice secret {move}")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob, carol]
    assert "Subscribers: carol" in mails[0].body
    server.send(carol, "quadrature unsubscribe 101 carol secret")
    server.new_mail()
    server.send(bob, f"quadrature move 101 bob secret {legal_texts(server, 'quadrature')[0]}")
    assert sorted(m.to[0] for m in server.new_mail()) == [alice, bob]


def test_show_games_history_standings(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    server.send(alice, "quadrature show 101")
    [shown] = server.new_mail()
    assert shown.subject == "Quadrature Board 101 alice **"
    assert "Summary of Quadrature Board 101" in shown.body
    assert "Game started.... Nov 22 02:41" in shown.body
    server.send(alice, "quadrature show bob next")
    [note] = server.new_mail()  # bob is not to move: no board, a summary note
    assert note.subject == "Show summary"
    # bob was found: his name under "not found" misled.
    assert note.body.startswith("bob: no Quadrature board waits for their move.")
    assert "not found" not in note.body
    server.signup("dave")
    server.send(alice, "quadrature show dave")
    [note] = server.new_mail()
    assert "dave: no active Quadrature boards (add all for the finished ones)." in note.body
    server.send(alice, "all show dave")
    [note] = server.new_mail()
    assert "dave: no active boards (add all for the finished ones)." in note.body
    server.send(alice, "quadrature show 101 555")
    [both] = server.new_mail()  # the board and the note, as one answer
    assert both.subject == "Quadrature Board 101 alice ** (and 1 more answers)"
    assert "== 2. Show summary ==" in both.body and "555" in both.body
    # A line names boards or players: a word of the other kind says how to ask for it.
    server.send(alice, "quadrature show 101 bob")
    [mixed] = server.new_mail()
    assert "bob is a player: a line quadrature show bob shows his boards" in flat(mixed.body)
    server.send(alice, "quadrature show bob 101#1 carol")
    [mixed] = server.new_mail()
    assert "101#1 is a board: a line quadrature show 101#1 shows it" in flat(mixed.body)
    assert "\tcarol" in mixed.body
    server.send(alice, "quadrature games")
    [games] = server.new_mail()
    assert games.subject == "List of Quadrature games"
    assert "101" in games.body and "alice to start" in games.body
    play_first_moves(server, "quadrature", count=2)
    server.send(bob, "quadrature resign 101 bob secret")
    server.new_mail()
    server.send(alice, "quadrature history")
    [history] = server.new_mail()
    assert history.subject == "Historical List of Quadrature games"
    assert "alice" in history.body and "101" in history.body
    server.send(alice, "quadrature standings")
    [table] = server.new_mail()
    assert table.subject == "Quadrature Standings"
    lines = table.body.splitlines()
    alice_line = next(line for line in lines if " alice " in line)
    # pbmserv's layout has a Rating column: a first win between new players is worth
    # (1600+1600)/2 + 200, pulled (1720-1600)/5 towards 1720: 1824.
    assert alice_line.split()[:6] == ["1", "alice", "1824", "1", "0", "0"]


def test_show_old_position(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(alice, "quadrature show 101#1")
    [shown] = server.new_mail()
    assert "   1 " in shown.body and "2 " not in shown.body.split("alice")[2][:40]


def test_show_past_the_last_move_says_how_far_the_board_is(
    server: Server, pair: tuple[str, str]
) -> None:
    """`show 101#5` on a board at move 2 was listed under "were not found", as if
    there were no board 101."""
    alice, _ = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(alice, "quadrature show 101#5")
    [err] = server.new_mail()
    assert "101#5: board 101 is at move 2 (show #0 to #2)" in err.body


def test_limit_and_seek(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(bob, "quarto limit bob secret 0")
    [note] = server.new_mail()
    assert "do not accept Quarto challenges" in note.body
    # Its subject said "Quarto challenges now limited", also when no limit was left.
    assert note.subject == "Your Quarto challenge limit"
    server.send(alice, "quarto challenge alice bob")
    [err] = server.new_mail()
    assert err.subject == "Invalid challenge"
    assert "not accepting Quarto challenges" in err.body and "bob" in err.body
    server.send(bob, "quarto accept bob secret")
    server.new_mail()
    server.send(bob, "quarto seek bob secret 2")
    [seek] = server.new_mail()
    assert seek.subject == "Now seeking 2 Quarto challenges"
    server.send(alice, "quarto challenge alice bob")
    assert len(server.new_mail()) == 2
    server.send(alice, "quarto standings")
    [table] = server.new_mail()
    bob_line = next(line for line in table.body.splitlines() if " bob " in line)
    assert bob_line.split()[-1] == "1"  # seeking went down from 2 to 1


def test_challenge_errors(server: Server) -> None:
    alice = server.signup("alice")
    server.send(alice, "quarto challenge alice ghost")
    [err] = server.new_mail()
    assert err.subject == "Invalid challenge"
    assert "Userid not known here:\n\tghost\n" in err.body
    server.send(alice, "quarto challenge alice")
    [err] = server.new_mail()
    assert "At least 2 players must play" in err.body
    server.signup("bob")
    server.send(alice, "quarto challenge -nosuch=1 alice bob")
    [err] = server.new_mail()
    assert err.subject == "Invalid challenge" and "nosuch" in err.body


@pytest.mark.parametrize(
    ("written", "told"),
    [
        ("draw", "'draw' is not a move: to offer a draw, write propose (help draw)."),
        ("offer", "'offer' is not a move: to offer a draw, write propose (help draw)."),
        ("offer draw", "'offer draw' is not a move: to offer a draw, write propose"),
        ("draw offer", "'draw offer' is not a move: to offer a draw, write propose"),
        ("takeback", "'takeback' is not a move: to ask to take back the last move, write undo"),
        ("take back", "'take back' is not a move: to ask to take back the last move, write undo"),
        ("decline", "'decline' is not a move: to turn down a draw or undo offer, write reject"),
    ],
)
def test_a_draw_or_undo_asked_in_other_words_is_told_the_word(
    server: Server, pair: tuple[str, str], written: str, told: str
) -> None:
    """bob, not to move, writes what he means in his own words: he learns pbm's word,
    not "It is not your move"."""
    _, bob = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(bob, f"quadrature move 101 bob secret {written}")
    [err] = server.new_mail()
    assert err.to == [bob]
    assert told in flat(err.body)
    assert "It is not your move" not in err.body
    assert board_row(server, "quadrature").proposal is None


def test_propose_and_undo_are_commands_like_accept_and_reject(
    server: Server, pair: tuple[str, str]
) -> None:
    """`quadrature accept 101 ...` worked but `quadrature propose 101 ...` was an
    unknown command: each proposal now has its command too."""
    alice, bob = pair
    play_first_moves(server, "quadrature", count=2)
    server.send(alice, "quadrature propose 101 alice secret", "A draw?")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all("alice has proposed a draw." in m.body for m in mails)
    assert all("alice writes:\nA draw?" in m.body for m in mails)
    server.send(bob, "quadrature reject 101 bob secret")
    server.send(bob, "quadrature undo 101 bob secret")
    mails = server.new_mail()
    assert any("bob has asked to undo the last move." in m.body for m in mails)
    server.send(alice, "quadrature accept 101 alice secret")
    assert any("UNDO Successful!" in m.body for m in server.new_mail())
    assert board_row(server, "quadrature").move_count == 1


def test_pass_or_swap_in_a_game_without_it_says_so(server: Server, pair: tuple[str, str]) -> None:
    """Read as a move, `quarto pass` was refused with "PASS is not a piece"."""
    alice, _ = pair
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    server.send(alice, "quarto pass 101 alice secret")
    [err] = server.new_mail()
    assert "Quarto has no pass: it is a move of quadrature only." in err.body
    assert "not a piece" not in err.body
    server.send(alice, "quadrature swap 101 alice secret")
    [err] = server.new_mail()
    assert "Quadrature has no swap: it is a move of quarod only." in err.body
    assert board_row(server, "quarto").move_count == 0


def test_a_player_named_twice_hears_each_reason_once(server: Server) -> None:
    """`quarto challenge carol carol` from an unconfirmed carol said twice that she has
    no confirmed address, then that nobody plays himself."""
    carol = "carol@players.example"
    assert server.send(carol, "signup carol secret") == "done"
    server.new_mail()
    server.send(carol, "quarto challenge carol carol")
    [err] = server.new_mail()
    assert err.subject == "Invalid challenge"
    refusal = err.body.split("(Your command")[0]
    assert refusal.count("carol has no confirmed address yet") == 1
    assert "A player cannot play against himself." in refusal


def test_a_queued_move_that_is_no_move_is_refused_and_the_queue_kept(
    server: Server, pair: tuple[str, str]
) -> None:
    """`queue ... zz` replaced bob's queued move with "zz" without a word; it failed
    only when his turn came, in front of everyone."""
    _, bob = pair
    server.send(bob, "quadrature queue 101 bob secret c9-c8")
    [kept] = server.new_mail()
    assert "You have the following move queued: c9-c8" in kept.body
    server.send(bob, "quadrature queue 101 bob secret zz")
    [err] = server.new_mail()
    assert err.subject == "Quadrature Board 101 Error"
    assert "'zz' is not a move" in err.body and "How moves are written:" in err.body
    assert "You have the following move queued: c9-c8" in err.body
    # A move that is only illegal now (a White man's step, Black to move) is kept: its
    # turn comes in another position.
    server.send(bob, "quadrature queue 101 bob secret d9-d8")
    [queued] = server.new_mail()
    assert "You have the following move queued: d9-d8" in queued.body


def test_the_proposer_accepting_is_told_and_rejecting_withdraws(
    server: Server, pair: tuple[str, str]
) -> None:
    """alice accepting her own draw offer mailed both players the same board again;
    her reject read "alice has rejected the draw"."""
    alice, bob = pair
    server.send(alice, "quadrature propose 101 alice secret")
    server.new_mail()
    server.send(alice, "quadrature accept 101 alice secret")
    [err] = server.new_mail()
    assert err.to == [alice]
    assert "You have accepted this draw proposal already" in err.body
    server.send(alice, "quadrature reject 101 alice secret")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all("alice has withdrawn the draw proposal." in m.body for m in mails)
    assert board_row(server, "quadrature").proposal is None


# Each game with the move word of another game that it lacks, and the game that has it.
ABSENT_WORDS = [
    ("quarto", "pass", "quadrature"),
    ("quarto", "swap", "quarod"),
    ("quad", "pass", "quadrature"),
    ("quad", "swap", "quarod"),
    ("quarod", "pass", "quadrature"),
    ("quadrature", "swap", "quarod"),
]


@pytest.mark.parametrize(("game", "word", "has"), ABSENT_WORDS)
def test_pass_or_swap_as_a_move_in_a_game_without_it_says_so(
    server: Server, pair: tuple[str, str], game: str, word: str, has: str
) -> None:
    """`quarto move 101 alice secret pass` was read as notation: "PASS is not a piece"."""
    alice, _ = pair
    if game != "quadrature":
        server.send(alice, f"{game} challenge alice bob")
        server.new_mail()
    title = game.capitalize()
    for verb in ("move", "queue", "submit"):
        server.send(alice, f"{game} {verb} 101 alice secret {word}")
        [err] = server.new_mail()
        assert f"{title} has no {word}: it is a move of {has} only." in err.body, verb
        assert "not a piece" not in err.body and "How moves are written" not in err.body
    assert board_row(server, game).move_count == 0

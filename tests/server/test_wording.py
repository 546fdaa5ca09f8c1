"""Replies that say the right thing: unknown games and misspelt commands, options
written without the dash, replies quoting pbm's own subjects, the end of a game said
once, "1 day", masked passwords, the Quarod board size."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from pbm.games import get_game
from tests.server.conftest import Server, board_row, legal_texts, play_first_moves

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def test_an_unknown_game_gets_the_games_played_here(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    assert server.send(alice, "chess challenge alice bob") == "done"
    [reply] = server.new_mail()
    assert "no command found" not in reply.subject
    assert "No game called 'chess' is played here." in reply.body
    assert "quad, quadrature, quadrupel, quarod, quarto" in " ".join(reply.body.split())
    server.send(alice, "quatro challenge alice bob")
    [near] = server.new_mail()
    assert "quarto" in near.body.split("(Your command")[0]


@pytest.mark.parametrize(
    "subject", ["move 101 alice secret b3-b4", "resign 101 alice secret", "show 101", "games"]
)
def test_a_command_without_its_game_is_told_to_name_it(
    server: Server, pair: tuple[str, str], subject: str
) -> None:
    """A game command with the game left out was answered at most once a day with "no
    command found", and not at all after that; each now says what is missing."""
    alice, _ = pair
    server.send(alice, "my move")  # the day's "no command found" note
    server.new_mail()
    for _ in range(2):
        server.send(alice, subject)
        [reply] = server.new_mail()
        verb = subject.split()[0]
        assert f"'{verb}' needs a game name first, e.g. 'quarto {verb} ...'." in reply.body
        assert "secret" not in reply.body


def test_list_of_an_unknown_game_is_worded_as_a_challenge_of_it(
    server: Server, pair: tuple[str, str]
) -> None:
    """`list chess` said "there is no game called 'chess'; the games are: ...", in other
    words than `chess challenge`, and without the closest name."""
    alice, _ = pair
    server.send(alice, "list chess")
    [reply] = server.new_mail()
    assert "No game called 'chess' is played here." in reply.body
    assert "Send 'list' for the games and their variant names" in " ".join(reply.body.split())
    server.send(alice, "list quatro")
    [near] = server.new_mail()
    assert "The closest names: quarto" in " ".join(near.body.split())


@pytest.mark.parametrize(
    ("verb", "meant"),
    [("decline", "reject"), ("draw", "propose"), ("offer", "propose"), ("takeback", "undo")],
)
def test_a_verb_in_other_words_suggests_pbms_word(
    server: Server, pair: tuple[str, str], verb: str, meant: str
) -> None:
    """`quarto decline 101 ...` was an unknown command with no suggestion."""
    alice, _ = pair
    server.send(alice, f"quarto {verb} 101 alice secret")
    [reply] = server.new_mail()
    assert f"Unknown command 'quarto {verb}'. Did you mean: quarto {meant}?" in reply.body
    assert "secret" not in reply.body


@pytest.mark.parametrize(
    ("written", "verb", "meant"),
    [
        ("offer draw", "offer", "propose"),
        ("draw offer", "draw", "propose"),
        ("take back", "take", "undo"),
    ],
)
def test_a_verb_of_two_words_suggests_pbms_word_for_the_first(
    server: Server, pair: tuple[str, str], written: str, verb: str, meant: str
) -> None:
    """The verb is the line's second word: `quarto take back 101 ...` is the unknown
    command `quarto take`, which suggests `undo` as `takeback` does."""
    alice, _ = pair
    server.send(alice, f"quarto {written} 101 alice secret")
    [reply] = server.new_mail()
    assert f"Unknown command 'quarto {verb}'. Did you mean: quarto {meant}?" in reply.body


def test_my_move_in_a_subject_is_no_command(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    server.send(alice, "my move")
    [note] = server.new_mail()
    assert note.subject == "PBeM Server: no command found"


def test_an_option_without_the_dash_is_read_as_one(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    assert server.send(alice, "quarod challenge size=10 nagtime=5 alice bob") == "done"
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    row = board_row(server, "quarod")
    assert row.options == {"size": "10"}
    assert row.server_options == {"nagtime": "5"}
    # Quarod mails name the board size, which the drawing alone does not tell.
    assert mails[0].body.startswith("A new Quarod board (101) has been started\nOptions: size=10\n")
    assert "Nag Timeout set to 5 days" in mails[0].body
    server.send(alice, "quarod challenge sise=10 alice bob")
    [err] = server.new_mail()
    assert "Quarod has no option 'sise' (options: size)" in err.body
    assert "players" not in err.body.split("(Your command")[0]


def test_a_quarod_board_of_the_default_size_says_it(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    server.send(alice, "quarod challenge alice bob")
    assert "\nOptions: size=8\n" in server.new_mail()[0].body
    server.send(alice, "quarto challenge alice bob")
    assert "Options:" not in server.new_mail()[0].body  # all defaults, nothing hidden


def test_did_you_mean_names_distinct_commands(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    server.send(alice, "quarto chlalenge alice bob")
    [err] = server.new_mail()
    assert "Did you mean: quarto challenge?" in err.body
    server.send(alice, "quadr chlalenge alice bob")
    folded = " ".join(server.new_mail()[0].body.split())  # folded at 72 columns
    assert "Did you mean: quadrature challenge?" in folded


def test_a_reply_quoting_a_board_subject_is_not_a_command(
    server: Server, pair: tuple[str, str]
) -> None:
    """carol answers a mail sent to alice (at alice's reply address): its Subject, the
    board's, is not read as `quad board 101 carol` (a move without a password)."""
    alice, _ = pair
    carol = server.signup("carol")
    server.send(alice, "quad challenge alice bob")
    board_mail = next(m for m in server.new_mail() if m.to == [alice]).mail
    assert board_mail.subject == "New Quad Board 101 alice"
    move = legal_texts(server, "quad")[0]
    server.send(carol, "Re: Quad Board 101 carol", f"{move}\n", to=board_mail.reply_to)
    [refused] = server.new_mail()  # what carol is told instead
    assert refused.to == [carol]
    assert "carol@players.example is not one of them" in " ".join(refused.body.split())
    assert "Missing arguments" not in refused.body and "Usage:" not in refused.body
    assert board_row(server, "quad").move_count == 0
    # A command in the body's first line is still found under such a subject.
    server.send(carol, "Re: Quad Board 101 carol", "quad show 101\n")
    [shown] = server.new_mail()
    assert "Summary of Quad Board 101" in shown.body


def test_passwords_are_masked_wherever_a_command_is_echoed(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, _ = pair
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    server.send(alice, "quarto move 101 alice sekret b1 TLQF")
    [err] = server.new_mail()
    assert "sekret" not in err.body
    assert "(Your command: quarto move 101 alice ****** b1 TLQF)" in err.body
    assert "> Subject: quarto move 101 alice ****** b1 TLQF" in err.body
    body = (
        "quarto move 101 alice wrong1 give TLQF\n"
        "quarto resign 101 alice wrong2\n"
        "change password alice wrong3 wrong4\n"
    )
    server.send(alice, "Re: multiple", body)
    [answer] = server.new_mail()
    assert not any(f"wrong{n}" in answer.raw.decode() for n in range(1, 5))
    assert "  quarto resign 101 alice ******\n" in answer.body  # the commands not run
    assert "> change password alice ****** ******" in answer.body  # the quoted original


def test_a_finished_board_says_its_result_once(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    body = play_first_moves(server, "quarto")[0].body
    assert "QUARTO!" not in body and "quarto:" not in body
    [line] = [x for x in body.splitlines() if "Game won by" in x]
    assert line.startswith("Quarto: row 1 ") and line.endswith(". Game won by alice.")
    assert "To give" not in body and "To place" not in body


def test_a_resigned_board_says_nobody_is_to_move(server: Server, pair: tuple[str, str]) -> None:
    alice, bob = pair
    server.send(alice, "quadrature challenge alice bob --nagtime=1")
    assert "Nag Timeout set to 1 day\n" in server.new_mail()[0].body
    for userid, address in (("alice", alice), ("bob", bob)):
        server.send(
            address, f"quadrature move 101 {userid} secret {legal_texts(server, 'quadrature')[0]}"
        )
    server.new_mail()
    server.send(alice, "quadrature resign 101 alice secret")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    for mail in mails:
        assert "alice resigns. Game won by bob.\n" in mail.body
        assert "to move" not in mail.body and "Game over" not in mail.body
        assert "\nalice:   0 days, 00:00:00\n" in mail.body and "()" not in mail.body


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.moves")), ids=lambda p: p.stem)
def test_a_finished_drawing_drops_only_the_status(path: Path) -> None:
    """On every golden game's last position and its first: the rules' headline ("to
    move", "Game over") goes, every line of the board itself stays."""
    spec = json.loads(path.read_text())
    rules = get_game(spec["game"])
    state = rules.load(spec["position"]) if spec.get("position") else None
    state = state if state is not None else rules.new_state(**spec.get("options", {}))
    first = state
    for text in spec["moves"]:
        state = rules.apply(state, rules.parse_move(state, text))
    for position in (first, state):
        drawn = rules.render(position).rstrip("\n")
        kept = rules.render(position, headline=False).rstrip("\n")
        gone = [line for line in drawn.split("\n") if line not in kept.split("\n")]
        assert [line.strip() for line in gone] == [
            line.strip() for line in rules.status(position).headline
        ]
        assert not any(
            w in kept for w in ("to move", "Game over", "QUARTO!", "To give", "To place")
        )
        # The board itself, Quarto's pieces left and its key stay.
        stays = [x for x in drawn.split("\n") if x[:3].strip().isdigit() or "Key:" in x]
        assert all(x in kept.split("\n") for x in stays)


def test_days_have_their_number(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    server.send(alice, "quarto challenge alice bob --nagtime=1 --forfeittime=2")
    body = server.new_mail()[0].body
    assert "Nag Timeout set to 1 day\n" in body and "Forfeit Timeout set to 2 days\n" in body


def test_no_help_reply_is_wider_than_72_columns(server: Server) -> None:
    server.send("who@x.example", "help move")
    [reply] = server.new_mail()
    assert all(len(line) <= 72 for line in reply.body.splitlines())


def test_a_subject_with_a_verb_second_is_no_command_unless_it_fits(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, _ = pair
    for subject in ("Re: Your move summary", "my move", "chess move tomorrow"):
        server.send(alice, subject)
        server.clock.advance(timedelta(hours=25))  # the no-command note: once a day
        [note] = server.new_mail()
        assert note.subject == "PBeM Server: no command found", subject
    server.send(alice, "chess move 101 alice pw e2-e4")
    [err] = server.new_mail()
    assert "No game called 'chess'" in err.body and "alice ******" in err.body


def test_a_fischer_board_names_no_forfeit_timeout(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    server.send(alice, "quarto challenge alice bob --fischer=2/1/3")
    body = server.new_mail()[0].body
    assert "Fischer clock: 2 days, 1 day added per move" in body
    assert "Nag Timeout set to 7 days" in body and "Forfeit Timeout" not in body


def test_help_on_an_unknown_topic_names_close_ones_only_when_there_are(server: Server) -> None:
    server.send("who@x.example", "help chess")
    [far] = server.new_mail()
    assert far.body.startswith("There is no help about 'chess'.\n")
    assert "Closest topics" not in far.body
    server.send("who2@x.example", "help quartoo")
    [near] = server.new_mail()
    assert "Closest topics: quarto" in near.body


@pytest.mark.parametrize(
    ("game", "listed", "unlisted"),
    [
        ("quarto", set(), {"swap", "pass"}),
        ("quarod", {"swap"}, {"pass"}),
        ("quadrature", {"pass"}, {"swap"}),
        ("quadrupel", set(), {"swap", "pass"}),
    ],
)
def test_help_game_lists_swap_and_pass_only_where_they_are_moves(
    server: Server, game: str, listed: set[str], unlisted: set[str]
) -> None:
    server.send("who@x.example", f"help {game}")
    [reply] = server.new_mail()
    verbs = {line.split()[1] for line in reply.body.splitlines() if line.startswith(f"  {game} ")}
    assert "move" in verbs and listed <= verbs and not unlisted & verbs


def test_the_board_mail_to_the_player_to_move_says_how_to_answer(
    server: Server, pair: tuple[str, str]
) -> None:
    alice, bob = pair
    server.send(alice, "quarto challenge alice bob")
    mails = {m.to[0]: m.body for m in server.new_mail()}
    assert mails[alice].endswith("\nReply with your move, e.g. give TLRH (help quarto)\n")
    assert "Reply with your move" not in mails[bob]  # not his turn
    server.send(alice, "quarto move 101 alice secret give SDQF")
    mails = {m.to[0]: m.body for m in server.new_mail()}
    # bob holds SDQF: "b2 SDQF" would give away the piece he places, and be refused.
    assert mails[bob].endswith("\nReply with your move, e.g. b2 TLRH (help quarto)\n")
    assert "Reply with your move" not in mails[alice]
    # `show` may answer for many boards in one mail: no reply there plays on one board.
    server.send(bob, "quarto show 101")
    [shown] = server.new_mail()
    assert "It is bob's turn." in shown.body and "Reply with your move" not in shown.body


@pytest.mark.parametrize(
    ("game", "first", "second"),
    [("quadrature", "b3-b4", "b9-b8"), ("quarto", "give TLRH", "b2 SDQF"), ("quad", "d4", "a1")],
)
def test_the_example_of_each_answer_may_be_sent_as_written(
    server: Server, pair: tuple[str, str], game: str, first: str, second: str
) -> None:
    """White was shown Black's `b3-b4`, a Quarto player `b2 SDQF` while placing SDQF,
    Quad's drop `d4` on a taken d4: each refused when copied."""
    alice, bob = pair
    server.send(alice, f"{game} challenge alice bob")
    [mail] = [m for m in server.new_mail() if m.to == [alice]]
    assert mail.body.endswith(f"e.g. {first} (help {game})\n")
    for player, example in (("alice", first), ("bob", second)):
        server.send(f"{player}@players.example", f"{game} move 101 {player} secret {example}")
        mails = server.new_mail()
        assert all("Error" not in m.subject for m in mails), mails[0].body
        if player == "alice":
            [mail] = [m for m in mails if m.to == [bob]]
            assert mail.body.endswith(f"e.g. {second} (help {game})\n")
    assert board_row(server, game).move_count == 2


def test_a_hidden_setup_mail_shows_a_setup(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    server.send(alice, "quadrupel-points challenge alice bob")
    [first] = [m for m in server.new_mail() if m.to == [alice]]
    last = first.body.rstrip("\n").splitlines()[-1]
    assert last == "Reply with your move, e.g. setup c3=1 c4=2 d4=3 d5=4 (help quadrupel)"
    assert len(last) <= 72


@pytest.mark.parametrize(
    ("variant", "black", "white"),
    [
        ("points", "setup c3=1 c4=2 d4=3 d5=4", "setup d3=1 b4=2 e4=3 c5=4"),
        ("position", "setup d4=1 d5=1", "setup e4=1 c5=1"),
    ],
)
def test_the_setup_example_is_one_the_player_may_send(
    server: Server, pair: tuple[str, str], variant: str, black: str, white: str
) -> None:
    """White was shown Black's squares, and in the position game four dots where two
    1-stones are asked: sent as written, the example was refused."""
    alice, bob = pair
    server.send(alice, f"quadrupel-{variant} challenge alice bob")
    [first] = [m for m in server.new_mail() if m.to == [alice]]
    assert first.body.rstrip("\n").endswith(f"e.g. {black} (help quadrupel)")
    server.send(alice, f"quadrupel move 101 alice secret {black}")
    [second] = [m for m in server.new_mail() if m.to == [bob]]
    assert second.body.rstrip("\n").endswith(f"e.g. {white} (help quadrupel)")
    server.send(bob, f"quadrupel move 101 bob secret {white}")
    assert all("Error" not in m.subject for m in server.new_mail())
    assert board_row(server, "quadrupel").move_count == 2


def test_a_new_account_has_its_vacation_allowance(server: Server, pair: tuple[str, str]) -> None:
    alice, _ = pair
    said = {}
    for word in ("status", "start"):
        server.send(alice, f"vacation alice secret {word}")
        said[word] = " ".join(server.new_mail()[0].body.split())
    assert "You are not on vacation; you have 7 days of vacation banked" in said["status"]
    assert said["start"].startswith("Your vacation has started")
    assert "You have 7 days of vacation left." in said["start"]


def test_a_last_vacation_day_is_said_in_english(server: Server, pair: tuple[str, str]) -> None:
    """Six days into a week's vacation the status said "You are on vacation since ...;
    1 day of vacation are left."""
    alice, _ = pair
    server.send(alice, "vacation alice secret start")
    server.new_mail()
    server.clock.advance(timedelta(days=6))
    server.send(alice, "vacation alice secret status")
    said = " ".join(server.new_mail()[0].body.split())
    assert said.startswith("You have been on vacation since Nov 22 02:41 (6 days so far);")
    assert "you have 1 day of vacation left." in said


def test_the_games_table_with_the_longest_names_fits_72_columns(server: Server) -> None:
    """Two userids of 20 letters: the board's status goes under the players."""
    first, second = "alexandra_the_great1", "bartholomew_simpson2"
    address = server.signup(first)
    server.signup(second)
    assert server.send(address, f"quarto challenge {first} {second}") == "done"
    server.new_mail()
    server.send(address, f"quarto games {first}")
    [table] = server.new_mail()
    lines = table.body.split("\n\n")[0].splitlines()
    assert [line for line in lines if len(line) > 72] == []
    row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("101 "))
    assert lines[row].split() == ["101", "0", first, second]
    assert lines[row + 1] == " " * 11 + f"{first} to start"

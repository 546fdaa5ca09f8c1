"""What a refused command says back, as players met it by mail: each refusal says what
was wrong and shows how to write it right, in words the player can copy."""

from __future__ import annotations

from tests.server.conftest import Server, flat


def test_a_usage_of_several_forms_lists_each_as_a_whole_command(server: Server) -> None:
    """`quarto subscribe` was answered "Usage: quarto subscribe board userid password |
    userid password board...|all", the second form without its game and verb and folded
    across lines, so that a player could not tell what to write."""
    alice = server.signup("alice")
    server.send(alice, "quarto subscribe")
    [refused] = server.new_mail()
    assert (
        "Missing arguments.\nUsage, one of:\n"
        "  quarto subscribe board userid password\n"
        "  quarto subscribe userid password board...|all\n"
    ) in refused.body
    server.send(alice, "tournament")
    [refused] = server.new_mail()
    assert "\n  tournament join|leave|start|cancel NAME userid password\n" in refused.body
    assert "\n  tournament list\n" in refused.body


def _reply(server: Server, sender: str, body: str) -> None:
    """`sender` answers the newest board mail he got, to its Reply-To."""
    [mail] = [m for m in server.outbox() if sender in m.to][-1:]
    assert mail.mail.reply_to is not None
    headers = {"In-Reply-To": mail.mail.message_id or ""}
    assert server.send(sender, "Re: " + mail.subject, body, to=mail.mail.reply_to, headers=headers)


def test_an_empty_answer_to_a_board_mail_says_how_to_write_the_move(server: Server) -> None:
    """An empty answer to a board mail was refused with "No move given." and "(Your
    command: )": nothing said what to write, and an empty command was echoed."""
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quadrature challenge alice bob")
    server.new_mail()
    _reply(server, alice, "\n")
    [refused] = server.new_mail()
    assert refused.subject == "Quadrature Board 101 Error"
    assert refused.body.startswith("No move given: write your move, e.g. b3-b4 (help quadrature).")
    assert "(Your command:" not in refused.body


def test_a_tournament_of_an_unknown_game_is_refused_as_a_challenge_is(server: Server) -> None:
    """`tournament create ... chess` was answered in the rules engine's words, lower
    case and with no way on ("there is no game called 'chess'; the games are: ...")."""
    alice = server.signup("alice")
    server.send(alice, "tournament create alice secret autumn chess")
    [refused] = server.new_mail()
    said = flat(refused.body)
    assert said.startswith("No game called 'chess' is played here.")
    assert "Send 'list' for the games and their variant names" in said
    server.send(alice, "tournament create alice secret autumn quadrupel-added")
    [created] = server.new_mail()
    assert "Tournament autumn (round robin of Quadrupel" in flat(created.body)


def test_a_preview_cut_into_words_says_how_to_separate_moves(server: Server) -> None:
    """`quarto preview new give TLRH` was refused with "'give' is illegal here: say
    which piece you give: give TLRH", the very words the player wrote: each word was read
    as a move, and nothing said that moves holding spaces are separated by ; or ,."""
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    server.new_mail()
    hint = "Each word was read as a move. If a move holds a space, separate the moves"
    for command in ("quarto preview new give TLRH", "quarto preview 101 give TLRH"):
        server.send(alice, command)
        [refused] = server.new_mail()
        assert hint in flat(refused.body), command
    server.send(alice, "quarto preview 101 give")  # one word: nothing was cut
    [refused] = server.new_mail()
    assert hint not in flat(refused.body)
    server.send(alice, "quarto preview new give TLRH; b2 SDQF")
    [shown] = server.new_mail()
    assert shown.subject == "Preview of a new Quarto board"
    server.send(alice, "help preview")
    [helped] = server.new_mail()
    assert "Separate moves that hold spaces with ; or , (give TLRH; b2 SDQF)." in flat(helped.body)


def test_preview_new_plays_the_variant_named_and_its_options(server: Server) -> None:
    """`quadrupel-points preview new setup ...;` was refused ("QUADRUPEL has no setup"):
    a new board's preview started from the basic game whatever variant was named, and
    `-option=value` words were read as moves."""
    alice = server.signup("alice")
    previews = {
        "quadrupel-points preview new setup c4=1 d4=2 d5=3 c3=4;": (
            "Quadrupel",
            "White (O) to set up his stones",
        ),
        "quarod preview new -size=6 Bc3+Wc4": ("Quarod", "\n6  .  .  .  .  .  .   6\n"),
    }
    for command, (title, seen) in previews.items():
        server.send(alice, command)
        [shown] = server.new_mail()
        assert shown.subject == f"Preview of a new {title} board", command
        assert seen in shown.body, command


def test_ask_about_a_board_that_is_not_there_says_so(server: Server) -> None:
    """`quarto ask 999 threats` was answered "Quarto board 999 not found: the board number
    comes first, e.g. "quarto ask 101 999"", though the board number did come first."""
    alice = server.signup("alice")
    server.send(alice, "quarto ask 999 threats")
    [refused] = server.new_mail()
    said = flat(refused.body)
    assert said.startswith("Quarto board 999 not found Send 'quarto games YOURID'")
    assert "comes first" not in said and "ask 101 999" not in said
    server.send(alice, "quarto ask c3")  # a square asked about, the board left out
    [refused] = server.new_mail()
    assert 'the board number comes first, e.g. "quarto ask 101 c3"' in flat(refused.body)


def test_words_after_the_password_that_are_no_addresses(server: Server) -> None:
    """`signup carol sec ret x` (a password with a space) was answered "Not a mail
    address: ret x", as if "ret x" were one address, and nothing said why addresses were
    looked for there."""
    server.send("carol@players.example", "signup carol sec ret x")
    [refused] = server.new_mail()
    assert flat(refused.body).startswith(
        "Not a mail address: ret, x. A userid and a password hold no spaces: the words after"
        " them are read as mail addresses."
    )


def test_show_and_preview_of_a_board_that_is_not_there_say_how_to_find_it(
    server: Server,
) -> None:
    """A move to a mistyped board says how to find the board numbers; `show 999` and
    `preview 999` said only that it was not found."""
    alice = server.signup("alice")
    for command in ("quarto show 999", "quarto preview 999 a1"):
        server.send(alice, command)
        [refused] = server.new_mail()
        said = flat(refused.body)
        assert "999" in said and "not found" in said, said
        assert "Send 'quarto games YOURID' for the numbers of your boards" in said, command
    server.send(alice, "quarto show alice")  # a player, not a board: no board hint
    assert "quarto games YOURID" not in flat(server.new_mail()[0].body)

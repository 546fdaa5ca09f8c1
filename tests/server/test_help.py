"""Help that fits and teaches: every help topic, every game's rules page, every phrase
and template within 72 columns; `help commands` from the command registry, by group;
`help tutorial` as a game really goes; `help GAME` and `list` with the variant names."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from string import Template

import pytest

from pbm.commands import registry
from pbm.commands.helptext import (
    PROPOSAL_TOPICS,
    TOPICS,
    closest_topics,
    commands_help,
    general_help,
    topic_help,
    usage_lines,
)
from pbm.config import PACKAGE_TEMPLATES, Config
from pbm.games import GAMES
from pbm.texts import phrase, wrap
from tests.server.conftest import SERVER, Server, cli_ok, legal_texts

WIDTH = 72
CONFIG = Config(server_address=SERVER)


def too_wide(text: str) -> list[str]:
    """Lines over 72 columns, but for a single word too long for any line (an address)."""
    return [line for line in text.splitlines() if len(line) > WIDTH and len(line.split()) > 1]


def every_topic() -> list[str]:
    words = [
        *TOPICS,
        *PROPOSAL_TOPICS,
        *registry.ACCOUNT_VERBS,
        *registry.GAME_VERBS,
        *registry.game_names(),
    ]
    return [*words, *(rules.title for rules in GAMES.values()), "nosuchtopic", "chalenge"]


@pytest.mark.parametrize("topic", every_topic())
def test_every_help_topic_fits_in_72_columns(topic: str) -> None:
    assert too_wide(topic_help(topic, CONFIG)) == []


def test_the_overview_fits_even_with_a_long_server_address() -> None:
    long = Config(server_address="play-by-email-server.games@boardgames.example.org")
    for text in (general_help(CONFIG), general_help(long), commands_help(long)):
        assert too_wide(text) == []
    assert "boardgames.example.org" in general_help(long)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_games_help_fits_and_names_notation_options_and_variants(name: str) -> None:
    rules = GAMES[name]
    text = rules.help_text()
    assert too_wide(text) == []
    assert "Notation:" in text and rules.notation.strip().splitlines()[0] in text
    for option in rules.options:
        assert f"  {option.name}=" in text  # each option, with its values and default
    for alias, options in rules.variant_aliases.items():
        settings = " ".join(f"-{k}={v}" for k, v in options.items())
        assert re.search(rf"^  {re.escape(alias)} +{re.escape(settings)}$", text, re.M), alias


def test_a_game_page_has_diagrams_of_the_board() -> None:
    # pbmserv's help pages show the rules in small boards: rows of points with ranks.
    for rules in GAMES.values():
        board_rows = re.findall(r"^ {0,3}\d{1,2} +[.#OX,*|]", rules.help_text(), re.M)
        assert board_rows, rules.name


SAMPLES = {
    "userid": "alice",
    "board": "101",
    "label": "Quadrature Board 101",
    "game": "Quadrature",
    "move": "b3-b4",
    "name": "spring",
    "server": SERVER,
}
NUMBERS = re.compile(
    r"count|number|days|limit|minutes|window|rounds|round|ply|plies|line|expected|points"
    r"|rating|old|new|minimum|maximum|more|length|threshold|nag|forfeit"
)


def sample(name: str) -> str:
    """A value of a typical length for a placeholder (a userid, a board, a count)."""
    if name in SAMPLES:
        return SAMPLES[name]
    return "12" if NUMBERS.search(name) else "x" * 8


def _filled(text: str) -> str:
    names = {m.group(1) or m.group(2) for m in re.finditer(r"\$(?:(\w+)|\{(\w+)\})", text)}
    return Template(text).substitute({n: sample(n) for n in names})


def test_every_phrase_fits_in_72_columns() -> None:
    """The error sentences and every other phrase a mail body holds (subjects are mail
    headers, folded by the mail format)."""
    phrases = tomllib.loads((PACKAGE_TEMPLATES / "phrases.toml").read_text(encoding="utf-8"))
    wide = {
        key: too_wide(_filled(text))
        for key, text in phrases.items()
        if not key.startswith("subject_")
    }
    assert {key: lines for key, lines in wide.items() if lines} == {}


@pytest.mark.parametrize("path", sorted(PACKAGE_TEMPLATES.glob("*.txt")), ids=lambda p: p.stem)
def test_every_template_fits_in_72_columns(path: Path) -> None:
    assert too_wide(_filled(path.read_text(encoding="utf-8"))) == []


# Said by `pbm game export`, to the operator, who has the repository's docs.
OPERATOR_PHRASES = {"record_no_sgf"}


def test_no_word_mailed_to_a_player_points_into_the_repository() -> None:
    """A player by mail cannot open docs/records.md: help topics, phrases and
    templates say what he needs, or name a `help` topic."""
    phrases = tomllib.loads((PACKAGE_TEMPLATES / "phrases.toml").read_text(encoding="utf-8"))
    pointing = [key for key, text in phrases.items() if "docs/" in text]
    assert sorted(pointing) == sorted(OPERATOR_PHRASES)
    pointing = [p.name for p in PACKAGE_TEMPLATES.glob("*.txt") if "docs/" in p.read_text()]
    assert pointing == []
    assert [t for t in every_topic() if "docs/" in topic_help(t, CONFIG)] == []


def test_wrap_folds_long_lines_and_keeps_long_words_whole() -> None:
    line = "  " + " ".join(["word"] * 30)
    folded = wrap(f"short\n{line}\n\n  next")
    assert folded.startswith("short\n  word word") and folded.endswith("\n\n  next")
    lines = [x for x in folded.splitlines() if x]
    assert all(len(x) <= WIDTH and x.startswith(("  ", "short")) for x in lines)
    address = "someone-with-a-very-long-name@a-very-long-domain-name.example.org" * 2
    assert wrap(f"Mail goes to: {address}") == f"Mail goes to:\n{address}"
    # reflow: the rest of the paragraph joins the folded line instead of a short tail
    prose = "Write to " + "x" * 60 + " with a command\nin the Subject.\n\nNext."
    assert wrap(prose, reflow=True) == (
        "Write to " + "x" * 60 + "\nwith a command in the Subject.\n\nNext."
    )


def test_help_commands_lists_every_command_with_its_usage_by_group() -> None:
    text = commands_help(CONFIG)
    grouped = [c for commands in registry.HELP_GROUPS.values() for c in commands]
    assert sorted(map(id, grouped)) == sorted(
        map(id, [*registry.ACCOUNT_COMMANDS, *registry.GAME_COMMANDS])
    )
    for key, commands in registry.HELP_GROUPS.items():
        heading = phrase(key)
        assert f"\n{heading}\n{'-' * len(heading)}\n" in text
        for command in commands:
            for line in usage_lines(command):
                assert line + "\n" in text, line
            # under the heading of its group
            assert text.index(heading) < text.index(usage_lines(command)[0] + "\n")


def test_a_usage_of_several_forms_has_a_line_each() -> None:
    change = registry.ACCOUNT_VERBS["change"]
    assert usage_lines(change, indent="") == [
        "change password userid current-password new-password",
        "change address userid password [address...]",
    ]
    # a choice inside brackets is one form, and is not folded apart
    conditional = registry.GAME_VERBS["conditional"]
    assert len(usage_lines(conditional)) == 1 and "[clear | show | preview N]" in " ".join(
        usage_lines(conditional)
    )


def test_did_you_mean_names_each_command_once() -> None:
    assert closest_topics("chalenge") == ["challenge", "change"]
    assert closest_topics("chll")[:1] == ["challenge"]  # not chal, chall, challenge
    assert "quadruple" not in closest_topics("quadrupl")  # an alias of quadrupel


def test_help_commands_and_tutorial_by_mail_and_from_the_cli(server: Server, cfg: Path) -> None:
    server.send("new@x.example", "help commands tutorial")
    [both] = server.new_mail()
    assert both.subject == "Help commands (and 1 more answers)"
    assert "== 1. Help commands ==" in both.body and "== 2. Help tutorial ==" in both.body
    assert "There is no help" not in both.body
    printed = cli_ok("help", "commands")
    assert printed == commands_help(Config(server_address="pbm@example.org"))


@pytest.mark.parametrize("topic", every_topic())
def test_every_help_topic_ends_its_last_line(topic: str) -> None:
    assert topic_help(topic, CONFIG).endswith("\n")


def test_pbm_help_prints_an_unknown_topic_on_lines_of_its_own(cfg: Path) -> None:
    # `pbm help chess quarto` printed "...what each command does.Quarto": the unknown
    # topic's text lacked the newline every other topic ends with.
    printed = cli_ok("help", "chess", "quarto")
    assert "what each command does.\nQuarto\n" in printed


def test_help_game_and_list_name_the_variants(server: Server) -> None:
    server.send("who@x.example", "help quadrupel")
    [page] = server.new_mail()
    assert too_wide(page.body) == []
    assert "quadrupel-added" in page.body and "-variant=added" in page.body
    assert "quadrupel move board userid password move[#n]" in page.body
    server.send("who@x.example", "list")
    [catalogue] = server.new_mail()
    for rules in GAMES.values():
        for alias in rules.variant_aliases:
            assert alias in catalogue.body
    assert too_wide(catalogue.body) == []


def test_the_tutorial_is_what_a_first_game_brings(server: Server) -> None:
    """Every Subject the tutorial shows is a command that works or a subject pbm sends,
    and the board it draws is the board of the new game's mail."""
    tutorial = topic_help("tutorial", CONFIG)
    assert too_wide(tutorial) == []
    subjects = re.findall(r"^ *Subject: (.+)$", tutorial, re.M)
    alice, bob = "alice@players.example", "bob@players.example"
    assert server.send(alice, "signup alice secret") == "done"
    assert server.new_mail()[0].subject in subjects  # the welcome
    server.confirm(alice)  # the tutorial's reply to it
    server.signup("bob", "hunter2")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    new = server.new_mail()
    assert {m.to[0] for m in new} == {alice, bob} and new[0].subject in subjects
    drawn = [line.strip() for line in tutorial.splitlines() if re.match(r" +\d \|", line)]
    assert drawn and all(line in {x.strip() for x in new[0].body.splitlines()} for line in drawn)
    assert (
        "Please start the game alice." in tutorial and "Please start the game alice." in new[0].body
    )
    # "give SDQF" as the reply's first line: the reply address is alice's and the board's
    mail = new[0].mail if new[0].to == [alice] else new[1].mail
    server.send(alice, "Re: " + mail.subject, "give SDQF\n", to=mail.reply_to)
    moved = server.new_mail()
    assert any(m.subject in subjects and "It is bob's turn." in m.body for m in moved)
    assert "b2 TLRH" in tutorial and "b2 TLRH" in legal_texts(server, "quarto")


def test_every_line_of_help_set_works_as_written(server: Server) -> None:
    """Each usage line of `help set` names the userid and password: copied with them
    filled in, every one is obeyed."""
    alice = server.signup("alice")
    server.send(alice, "help set")
    [page] = server.new_mail()
    lines = [line for line in page.body.splitlines() if line.startswith("set ")]
    assert len(lines) == 4
    choices = {"format": "text", "messages": "anyone", "mail": "reminders off", "profile": "shown"}
    for line in lines:
        assert line.startswith("set userid password "), line
        what = line.split()[3]
        server.send(alice, f"set alice secret {what} {choices[what]}")
        [done] = server.new_mail()
        assert "error" not in done.subject.lower(), done.body


@pytest.mark.parametrize("topic", ["draw", "propose", "undo", "takeback"])
def test_help_on_draws_and_undos_says_how_to_offer_and_answer(server: Server, topic: str) -> None:
    """A player who wants a draw or to take a move back asks help by that word."""
    server.send("new@x.example", f"help {topic}")
    [page] = server.new_mail()
    assert "There is no help" not in page.body
    assert "GAME propose board userid password\n" in page.body
    assert "GAME undo board userid password\n" in page.body
    assert "GAME accept board userid password\n" in page.body
    assert too_wide(page.body) == []
    assert "propose" in closest_topics("proposal")


def test_the_quarod_page_says_a_placement_needs_a_colour(server: Server) -> None:
    """It said "c3 c4" alone is a placement on empty squares; pbm refuses it there."""
    alice, bob = server.signup("alice"), server.signup("bob")
    server.send(alice, "help quarod")
    [page] = server.new_mail()
    said = " ".join(page.body.split())
    assert 'One colour is enough: "c3 Wc4".' in said
    assert "on two empty squares it is refused, as it could be either placement" in said
    assert server.send(alice, "quarod challenge alice bob") == "done"
    server.new_mail()
    server.send(alice, "quarod move 101 alice secret c3 c4")
    [err] = server.new_mail()
    assert "'c3 c4' is ambiguous: it could mean Bc3+Wc4 or Bc4+Wc3" in err.body
    server.send(alice, "quarod move 101 alice secret c3 Wc4")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == [alice, bob]
    assert all("alice Bc3+Wc4" in m.body for m in mails)


def test_the_tutorial_says_how_to_decline_a_challenge_and_it_works(server: Server) -> None:
    """A challenged player read nowhere in the tutorial that the board starts at once
    and how to decline it."""
    tutorial = " ".join(topic_help("tutorial", CONFIG).split())
    assert "There is nothing to accept: the board starts at once." in tutorial
    assert 'To decline it, answer "resign" before your first move' in tutorial
    assert '"quarto limit bob PASSWORD 0" refuses Quarto challenges.' in tutorial
    alice, bob = server.signup("alice"), server.signup("bob")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    [mail] = [m for m in server.new_mail() if m.to == [bob]]
    server.send(bob, "Re: " + mail.subject, "resign\n", to=mail.mail.reply_to)
    removed = server.new_mail()
    assert sorted(m.to[0] for m in removed) == [alice, bob]
    assert all("has been removed" in m.subject for m in removed)
    server.send(bob, "quarto limit bob secret 0")
    server.new_mail()
    server.send(alice, "quarto challenge alice bob")
    [refused] = server.new_mail()
    assert refused.subject == "Invalid challenge"


def test_help_tournament_names_every_setting_create_takes(server: Server) -> None:
    """`help tournament` left out nagtime= and forfeittime=, which create takes (and its
    refusal of an unknown setting names)."""
    alice = server.signup("alice")
    server.send(alice, "help tournament")
    [helped] = server.new_mail()
    for setting in ("type=", "rounds=", "nagtime=", "forfeittime=", "bots=yes"):
        assert setting in helped.body
    assert max(len(line) for line in helped.body.splitlines()) <= 72

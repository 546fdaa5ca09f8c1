"""`pbm rules ...` at the terminal, through typer's CliRunner."""

from typer.testing import CliRunner

from pbm.cli import app

runner = CliRunner()


def test_play_reads_moves_reports_errors_and_ends_the_game():
    # Quarto: First gives, then each places and gives; Second completes a tall row 1.
    moves = ["give TLRH", "a1 TLRF", "b1 TLQH", "c1 SDQF", "a2 TDRH", "zz9", "d1"]
    result = runner.invoke(app, ["rules", "play", "quarto"], input="\n".join(moves) + "\n")
    assert result.exit_code == 0, result.output
    assert "'zz9' is not a move" in result.output
    assert "Game over: Second wins" in result.output


def test_play_with_a_variant_name_and_an_option():
    result = runner.invoke(
        app, ["rules", "play", "quadrupel-points", "-o", "threshold=25"], input="dump\nquit\n"
    )
    assert result.exit_code == 0, result.output
    assert "points" in result.output and "25" in result.output


def test_bad_game_and_bad_option_exit_2_with_a_message():
    result = runner.invoke(app, ["rules", "play", "chess"])
    assert result.exit_code == 2 and "the games are:" in result.output
    result = runner.invoke(app, ["rules", "play", "quarto", "-o", "colour"])
    assert result.exit_code == 2 and "name=value" in result.output


def test_perft_prints_counts_by_depth():
    result = runner.invoke(app, ["rules", "perft", "quadrature", "2"])
    assert result.exit_code == 0
    assert result.output.split() == ["1", "29", "2", "841"]
    # depth 0 counted nothing, printed nothing and exited 0
    zero = runner.invoke(app, ["rules", "perft", "quadrature", "0"])
    assert zero.exit_code == 2 and "greater than or equal to 1" in zero.output


def test_list_and_help_show_options_and_variant_names():
    result = runner.invoke(app, ["rules", "list"])
    assert "quadrupel-added" in result.output and "plycap" in result.output
    # an option's description ran to 200 columns on one line: folded, hanging under it
    assert max(len(line) for line in result.output.splitlines()) <= 88
    assert "\n    repetition=threefold|any (default threefold): threefold: the third" in (
        result.output
    )
    assert "\n      position (men, markers, side to move) draws;" in result.output
    result = runner.invoke(app, ["rules", "help", "quadr"])
    assert result.exit_code == 0 and "Notation" in result.output


def test_help_takes_a_variant_name_as_the_mail_commands_do():
    """`pbm rules help quadrupel-added` said there is no game called 'quadrupel-added'."""
    result = runner.invoke(app, ["rules", "help", "quadrupel-added"])
    assert result.exit_code == 0, result.output
    assert result.output == runner.invoke(app, ["rules", "help", "quadrupel"]).output


def test_pbm_help_prints_the_mailed_help_from_the_command_definitions():
    from pbm.commands.helptext import topic_help
    from pbm.config import Config

    result = runner.invoke(app, ["help", "move"])
    assert result.exit_code == 0
    assert result.output == topic_help("move", Config())
    assert "move board userid password" in result.output


def _listed(game: str) -> list[str]:
    """The lines `moves` prints in `pbm rules play GAME` (between two prompts)."""
    result = runner.invoke(app, ["rules", "play", game], input="moves\nquit\n")
    assert result.exit_code == 0, result.output
    return result.output.split(" to move> ")[1].splitlines()[:-1]


def test_play_folds_the_moves_and_keeps_each_move_whole():
    """`moves` printed every legal move on one line (1800 columns in Quarod)."""
    listed = _listed("quarod")
    assert len(listed) > 10 and max(len(line) for line in listed) <= 88
    assert listed[0].startswith("Ba1+Wb1 Bb1+Wa1 ")
    assert all(line.startswith("  B") for line in listed[1:])
    assert _listed("quarto") == [
        "give SDQF give SDQH give SDRF give SDRH give SLQF give SLQH give SLRF give SLRH",
        "  give TDQF give TDQH give TDRF give TDRH give TLQF give TLQH give TLRF give TLRH",
    ]

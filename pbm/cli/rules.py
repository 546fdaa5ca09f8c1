"""`pbm rules ...`: the rules engines at the terminal, with no server behind them."""

from __future__ import annotations

from typing import Annotated

import typer

from pbm.cli.common import folded, known_game, registered
from pbm.games import GAMES, AnyGame, GameError, find_game
from pbm.games.base import State, parse_option_pairs
from pbm.games.playout import perft

OptionArg = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="A variant option as name=value; repeat for more."),
]
PositionArg = Annotated[
    str | None, typer.Option("--position", "-p", help="Start from this position text (dump).")
]


def _start(game_name: str, option: list[str] | None, position: str | None) -> tuple[AnyGame, State]:
    registered()
    try:
        game, options = find_game(game_name)
        if position:
            return game, game.load(position)
        return game, game.new_state(**options, **parse_option_pairs(option or []))
    except GameError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def list_games() -> None:
    """List the games with their aliases and options."""
    registered()
    for game in GAMES.values():
        aliases = ", ".join(game.aliases)
        typer.echo(f"{game.name:<12} {game.title}" + (f" (also: {aliases})" if aliases else ""))
        for opt in game.options:
            typer.echo(folded(opt.describe(), indent="    "))
        for alias, options in game.variant_aliases.items():
            settings = " ".join(f"{k}={v}" for k, v in options.items())
            typer.echo(f"    variant name {alias}: {settings}")


NO_BREAK = "\xa0"  # joins the words of one move while the list is folded


def _moves_text(game: AnyGame, state: State) -> str:
    """The legal moves, folded: a move that holds a space (Quarto's `give SDQF`) is
    never cut at a line's end."""
    texts = (game.format_move(state, m).replace(" ", NO_BREAK) for m in game.legal_moves(state))
    return folded(" ".join(texts)).replace(NO_BREAK, " ")


def game_help(
    game_name: Annotated[
        str, typer.Argument(metavar="GAME", callback=known_game, help="Game or variant name.")
    ],
) -> None:
    """Show a game's rules summary, notation and options."""
    registered()
    try:
        # find_game, as the mail commands read it: get_game refused a variant name
        typer.echo(find_game(game_name)[0].help_text(), nl=False)
    except GameError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def play(
    game_name: Annotated[
        str, typer.Argument(metavar="GAME", callback=known_game, help="Game or variant name.")
    ],
    option: OptionArg = None,
    position: PositionArg = None,
) -> None:
    """Play a game at the terminal, both sides, with the parser and boards players get.

    Type a move, or `moves` (list the legal moves), `dump` (the position text),
    `help` (notation), `quit`.
    """
    game, state = _start(game_name, option, position)
    typer.echo(game.render(state))
    while (seat := game.to_move(state)) is not None:
        try:
            text = input(f"{game.seat_name(seat)} to move> ")
        except EOFError:
            typer.echo("")
            return
        command = text.strip().lower()
        if command in ("quit", "exit"):
            return
        if command == "moves":
            typer.echo(_moves_text(game, state))
            continue
        if command == "dump":
            typer.echo(game.dump(state))
            continue
        if command == "help":
            typer.echo(game.notation.strip())
            continue
        if not command:
            continue
        try:
            move = game.parse_move(state, text)
        except GameError as exc:
            typer.echo(f"error: {exc}")
            continue
        typer.echo(f"{game.seat_name(seat)} plays {game.describe_move(state, move)}")
        state = game.apply(state, move)
        typer.echo(game.render(state))
    result = game.outcome(state)
    if result is not None:
        who = "Draw" if result.winner is None else f"{game.seat_name(result.winner)} wins"
        typer.echo(f"Game over: {who} ({result.reason}).")


def perft_command(
    game_name: Annotated[
        str, typer.Argument(metavar="GAME", callback=known_game, help="Game or variant name.")
    ],
    depth: Annotated[int, typer.Argument(metavar="DEPTH", min=1, max=8, help="Plies to count to.")],
    option: OptionArg = None,
    position: PositionArg = None,
) -> None:
    """Print the number of move sequences of each depth from 1 to DEPTH."""
    game, state = _start(game_name, option, position)
    for d in range(1, depth + 1):
        typer.echo(f"{d} {perft(game, state, d)}")

"""`pbm ratings show|recompute`: the rating lists, and rebuilding them from the records."""

from __future__ import annotations

from typing import Annotated

import typer

from pbm.cli.common import JsonOption, admin_context, emit, known_game
from pbm.services.play.boards import rules_for
from pbm.services.play.bots import label
from pbm.services.play.ratings import ratings_of_type, recompute, snapshot


def show(
    cli: typer.Context,
    game: Annotated[
        str, typer.Argument(metavar="GAME", callback=known_game, help="Game name or alias.")
    ],
    as_json: JsonOption = False,
) -> None:
    """The ratings of one game type, best first."""
    with admin_context(cli) as ctx:
        rules = rules_for(game)
        rows = ratings_of_type(ctx.session, rules.name)
        data = [
            {
                "userid": u.userid,
                "bot": u.bot,
                "rating": round(r.value, 2),
                "games": r.games,
                "won": r.won,
                "lost": r.lost,
                "ties": r.ties,
                "glicko": round(r.glicko, 2),
                "rd": round(r.glicko_rd, 2),
            }
            for r, u in rows
        ]
        emit(
            data,
            as_json,
            ["userid", "rating", "games", "W", "L", "T", "glicko-2", "RD"],
            [
                [
                    label(u),
                    d["rating"],
                    d["games"],
                    d["won"],
                    d["lost"],
                    d["ties"],
                    d["glicko"],
                    d["rd"],
                ]
                for d, (_, u) in zip(data, rows, strict=True)
            ],
        )


def recompute_command(
    cli: typer.Context,
    game: Annotated[
        str | None,
        typer.Argument(
            metavar="GAME", callback=known_game, help="Game name or alias (default: all)."
        ),
    ] = None,
) -> None:
    """Forget the ratings and rate every finished game again, in the order they ended."""
    with admin_context(cli) as ctx:
        before = snapshot(ctx.session)
        count = recompute(ctx.session, rules_for(game).name if game else None)
        after = snapshot(ctx.session)
        same = "unchanged" if before == after else "changed"
        games = "1 game" if count == 1 else f"{count} games"  # not "1 games"
        typer.echo(f"rated {games} again; ratings {same}")

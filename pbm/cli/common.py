"""What the admin sub-apps share: the configuration option, the engine, admin contexts,
tables and JSON output, and exit codes that mean something."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from sqlalchemy.engine import Engine

from pbm.clock import SystemClock
from pbm.config import Config, ConfigError, load_config
from pbm.errors import PbmError
from pbm.games import GameError
from pbm.services.context import Context
from pbm.store.db import make_engine, session_for
from pbm.texts import use_templates

EXIT_REFUSED = 1  # the request was understood and refused (unknown user, bad move...)
EXIT_USAGE = 2  # bad arguments (typer's own code for usage errors)
EXIT_TEMPFAIL = 75  # EX_TEMPFAIL: the MTA keeps the message and retries later

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Configuration file (default: $PBM_CONFIG, else ./var)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


class State:
    config_path: Path | None = None


def remember_config(path: Path | None) -> None:
    # The root `pbm --config` and a sub-command's own --config both land here; a
    # sub-command without one keeps the root's.
    if path is not None:
        State.config_path = path


def config() -> Config:
    try:
        cfg = load_config(State.config_path)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    use_templates(cfg.templates_dir)
    return cfg


def engine(cfg: Config | None = None) -> Engine:
    return make_engine((cfg or config()).database_url)


def fail(message: str, code: int = EXIT_REFUSED) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def admin_context(sender: str = "") -> Iterator[Context]:
    """A service context in one transaction: committed on success, rolled back on errors
    for people (printed, exit 1)."""
    cfg = config()
    eng = engine(cfg)
    with session_for(eng) as session:
        ctx = Context(session=session, clock=SystemClock(), config=cfg, sender=sender)
        try:
            yield ctx
            if ctx.replies:
                from pbm.pipeline import queue_replies

                queue_replies(ctx, None, ctx.replies, inbound_id=None)
            session.commit()
        except (PbmError, GameError) as exc:
            session.rollback()
            fail(str(exc))
    eng.dispose()


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def emit(data: Any, as_json: bool, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    if as_json:
        typer.echo(json.dumps(data, indent=2, default=str))
    else:
        typer.echo(table(headers, rows))

"""`pbm web`: the web pages alone (docs/web.md), and the `--web` of `pbm serve`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from pbm.cli.common import EXIT_CONFIG, EXIT_USAGE, config, fail

if TYPE_CHECKING:
    from pbm.config import Config

WebOption = Annotated[
    str | None,
    typer.Option(
        "--web",
        help="Serve the web pages on HOST:PORT ([web] listen), linked from the mails as "
        "http://HOST:PORT unless [web] base_url says otherwise.",
    ),
]


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _log_level(value: str) -> str:
    """`value` upper-cased, checked here: logging's own refusal was a traceback."""
    if value.upper() not in LOG_LEVELS:
        raise typer.BadParameter(f"{value!r}: write DEBUG, INFO, WARNING or ERROR")
    return value.upper()


LogLevelOption = Annotated[
    str, typer.Option(help="DEBUG, INFO, WARNING or ERROR.", callback=_log_level)
]


def with_web(cfg: Config, listen: str | None) -> Config:
    """`cfg` with the pages on `listen` (None: as configured)."""
    import dataclasses

    from pbm.config import parse_endpoint

    if listen is None:
        return cfg
    try:
        endpoint = parse_endpoint(listen)
    except ValueError as exc:
        fail(f"--web: {exc}", EXIT_USAGE)
    base = cfg.web_base_url or (f"http://{endpoint}" if endpoint else "")
    return dataclasses.replace(cfg, web_listen=endpoint, web_base_url=base)


def web_command(
    cli: typer.Context,
    listen: WebOption = None,
    log_level: LogLevelOption = "INFO",
) -> None:
    """Serve the web pages and metrics alone, without taking mail in, until SIGTERM."""
    from pbm.cli.common import engine
    from pbm.logfmt import setup_logging
    from pbm.web.server import CannotListen, run

    cfg = with_web(config(cli), listen)
    if cfg.web_listen is None and cfg.metrics_listen is None:
        fail("nothing to serve: set [web] listen (or give --web HOST:PORT)", EXIT_USAGE)
    engine(cfg).dispose()  # a database that cannot be used ends here, with its exit code
    setup_logging(log_level)
    try:
        run(cfg)
    except CannotListen as exc:
        fail(str(exc), EXIT_CONFIG)  # logged as web_cannot_listen too

"""What the commands share: the context object with the configuration, the engine,
admin contexts, tables and JSON output, and exit codes that mean something.

Exit codes (sysexits.h where one fits): 0 done; 1 refused (an unknown user, a bad
move: the request was understood and refused); 2 bad arguments (a GAME that names no
game too: known_game); and for operational
errors, one line `error: ...` on stderr and no traceback (`pbm --debug` shows it):
- 69 EX_UNAVAILABLE: the database cannot be used (unreachable, missing, not a database),
  or the server `pbm mail send` submits to does not answer;
- 75 EX_TEMPFAIL: try again later (locked or busy, disk full, an I/O error);
- 77 EX_NOPERM: permission denied (a read-only file or file system, a refused login);
- 78 EX_CONFIG: a bad configuration file, or a schema this pbm does not upgrade by
  itself (not SQLite): the line names `pbm db upgrade`.
`pbm mail process` exits 75 for all of these and for its usage errors, so the MTA keeps
the message.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parseaddr
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from pbm.errors import EX_CONFIG, EX_TEMPFAIL, EX_UNAVAILABLE, EXIT_OF_KIND, BoardError, PbmError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from pbm.config import Config
    from pbm.services.context import Context

# The configuration's models, the database, the services and the pipeline are imported
# by the functions that use them: `pbm --help` loads none of them (pbm.cli.lazy).

EXIT_REFUSED = 1  # the request was understood and refused (unknown user, bad move...)
EXIT_USAGE = 2  # bad arguments (typer's own code for usage errors)
EXIT_UNAVAILABLE = EX_UNAVAILABLE  # a service pbm needs does not answer
EXIT_TEMPFAIL = EX_TEMPFAIL  # the MTA keeps the message and retries later
EXIT_CONFIG = EX_CONFIG  # bad configuration, or a schema to upgrade

_PIPE_KEY = "pbm.pipes_mail"  # ctx.meta: this run is `pbm mail process` (PbmGroup)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


@dataclass
class CliState:
    """The context object (`ctx.obj`) the root callback makes for every command: the
    options of `pbm` itself, and the configuration, read once, when a command first asks
    for it (so `pbm rules` needs none, and `pbm mail process` answers a bad one with its
    own exit code)."""

    config_path: Path | None = None
    debug: bool = False  # `pbm --debug`: tracebacks instead of one-line errors

    @cached_property
    def config(self) -> Config:
        from pbm.config import load_config

        return load_config(self.config_path)


TERMINAL_WIDTH = 88  # columns of what pbm prints for a reader at a terminal


def folded(text: str, indent: str = "", hang: str = "  ") -> str:
    """`text` folded to TERMINAL_WIDTH, lines after the first indented by `hang` more:
    on one line it ran far past a terminal (`pbm rules list`, `pbm jobs run`)."""
    return textwrap.fill(
        text,
        TERMINAL_WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + hang,
        break_on_hyphens=False,
    )


def state(cli: typer.Context) -> CliState:
    """The context object of this invocation (a fresh one for a sub-app run alone)."""
    return cli.ensure_object(CliState)


def config(cli: typer.Context) -> Config:
    """The configuration `pbm` runs with: `pbm --config FILE`, else $PBM_CONFIG, else
    the defaults; a bad one ends the command (exit 78, see PbmGroup)."""
    return state(cli).config


def registered() -> None:
    """The registries filled by the composition root (pbm.app) for a command that plays
    the rules with no configuration (`pbm rules`, `pbm record preview`). Not at the
    root: `pbm --help` and `pbm mail send` need none of it."""
    from pbm.app import register

    register()


def known_game(name: str | None) -> str | None:
    """The callback of every GAME argument: a word that names no game is a usage error
    (exit 2, the games listed), the same from every command, before any database."""
    from pbm.games import UnknownGameError, find_game

    if name is not None:
        registered()
        try:
            find_game(name)
        except UnknownGameError as exc:
            fail(str(exc), EXIT_USAGE)
    return name


def known_games(text: str) -> str:
    """The callback of a comma-separated list of games (`pbm bot add --games`): each
    word as known_game."""
    for word in text.split(","):
        if word.strip():
            known_game(word.strip())
    return text


def bare_address(text: str) -> str | None:
    """The address in a display-name address (`Erin <erin@example.org>`), as a mail
    program copies it; None for anything else."""
    if "<" not in text:
        return None
    address = parseaddr(text)[1]
    return address if "@" in address else None


def bare_addresses(texts: list[str]) -> list[str]:
    """The callback of ADDRESS arguments: a display-name address is a usage error naming
    the bare address, not the refusal of its space that the account rules give."""
    for text in texts or ():
        address = bare_address(text)
        if address is not None:
            fail(f"{text!r} has a display name: give the bare address ({address})", EXIT_USAGE)
    return texts


def one_bare_address(text: str) -> str:
    """The callback of one ADDRESS argument: as bare_addresses."""
    return bare_addresses([text])[0]


def not_an_address(text: str) -> str:
    """The callback of USERID arguments: a display-name address given for a userid is
    named as one (else: "userid not recognized")."""
    address = bare_address(text)
    if address is not None:
        fail(
            f"{text!r} is a mail address, not a userid: give the userid whose address "
            f"{address} is (pbm user list shows it)",
            EXIT_USAGE,
        )
    return text


def initialized(cfg: Config) -> None:
    """pbm put together by its composition root for `cfg` (the registries and the
    configured templates), for a command that reads or writes games or mails words:
    every command with a database, and `pbm help`."""
    from pbm.app import initialize

    initialize(cfg)


def engine(cfg: Config, *, schema: bool = True, create: bool = False) -> Engine:
    """The configured database's engine, with its schema made current first: upgraded on
    SQLite, else checked (see pbm.store.schema.ensure_schema). A database that is not there
    is an error naming `pbm db init` (exit 69; 75 from `pbm mail process`), never a new
    empty one. `schema=False` only for `pbm db`, which handles the schema itself, and
    `create=True` only for `pbm db init`."""
    from pbm.store.engine import make_engine
    from pbm.store.schema import ensure_schema

    initialized(cfg)
    eng = make_engine(cfg.database_url, create=create, busy_timeout=cfg.busy_timeout_seconds)
    if schema:
        try:
            ensure_schema(eng)
        except BaseException:
            eng.dispose()
            raise
    return eng


def exit_code_for(exc: BaseException) -> int | None:
    """The sysexits code of an operational error (see the module docstring); None for
    anything else, which is a bug and keeps its traceback."""
    from pbm.config import ConfigError
    from pbm.store.failures import classify

    if isinstance(exc, ConfigError):
        return EXIT_CONFIG
    kind = classify(exc)
    return EXIT_OF_KIND.get(kind, EX_UNAVAILABLE) if kind.temporary else None


def error_line(exc: BaseException) -> str:
    """The one line an operational error prints."""
    from pbm.config import ConfigError
    from pbm.store.failures import Failure, classify, describe_failure

    if isinstance(exc, ConfigError):
        return str(exc)
    kind = classify(exc)
    text = describe_failure(exc)
    if kind is Failure.SCHEMA or text.startswith("the database") or _of_a_file(exc):
        return text  # says what it is about already
    return f"the database cannot be used ({kind}): {text}"


def _of_a_file(exc: BaseException) -> bool:
    """Whether `exc` is the store's OSError on a database file (it names its file)."""
    from pbm.errors import StoreUnavailable

    return isinstance(exc, StoreUnavailable) and isinstance(exc.__cause__, OSError)


ROOT_VALUED = ("-c", "--config")  # the options of `pbm` itself that take a value


def pipes_mail(args: Sequence[str]) -> bool:
    """Whether `args` (of `pbm` itself) run `pbm mail process`, what an MTA runs: the
    words `mail` and `process` after options, whatever those are (a typo among them is
    the MTA's pipe line too)."""
    words = [word for i, word in enumerate(args) if not _option_word(args, i)]
    return words[:2] == ["mail", "process"]


def _option_word(args: Sequence[str], i: int) -> bool:
    """Whether args[i] is an option, or the value of `pbm`'s own --config."""
    return args[i].startswith("-") or (i > 0 and args[i - 1] in ROOT_VALUED)


def pipe_usage_error(error: typer.TyperException) -> NoReturn:
    """End `pbm mail process` on a usage error (an unknown option, a bad FILE) with one
    line and 75: any other code makes Postfix bounce the message, 75 keeps it queued."""
    problem = error.format_message().rstrip(".")
    typer.echo(f"error: {problem}; see pbm mail process --help", err=True)
    raise typer.Exit(EX_TEMPFAIL)


class PbmGroup(TyperGroup):
    """The root command group: an operational error (pbm.store.failures.classify, a bad
    configuration) ends any command with one line and its sysexits code, unless
    `pbm --debug` asked for the traceback; a usage error of `pbm mail process` ends it
    with one line and 75 (pipe_usage_error)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[_PIPE_KEY] = pipes_mail(args)
        try:
            return super().parse_args(ctx, args)
        except BrokenPipeError:
            # `pbm --help` prints while its options are parsed, before invoke: click's
            # own handler of the closed pipe would exit 1.
            _drop_stdout()
            raise typer.Exit(0) from None
        except typer.TyperException as exc:
            if ctx.meta[_PIPE_KEY]:
                pipe_usage_error(exc)
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # The reader of the output is gone (`pbm mail status | head -3`): what it
            # wanted it has, so end quietly.
            _drop_stdout()
            raise typer.Exit(0) from None
        except typer.TyperException as exc:
            if ctx.meta.get(_PIPE_KEY):
                pipe_usage_error(exc)
            raise  # a usage error of another command: typer's own end, code 2
        except (typer.Exit, typer.Abort):
            raise  # typer's own ends (--help, `fail`): nothing to classify
        except OSError as exc:
            if exc.errno not in _DISK_FULL or (isinstance(ctx.obj, CliState) and ctx.obj.debug):
                raise
            # `pbm user export alice > /full/disk/alice.json` ended in a traceback: a full
            # disk is an operational error, and the output no longer wanted
            _drop_stdout()
            where = exc.filename or "the output"
            typer.echo(f"error: cannot write {where}: {exc.strerror}", err=True)
            raise typer.Exit(EX_TEMPFAIL) from None
        except Exception as exc:
            code = exit_code_for(exc)
            if code is None or (isinstance(ctx.obj, CliState) and ctx.obj.debug):
                raise
            typer.echo(f"error: {error_line(exc)}", err=True)
            raise typer.Exit(code) from None


_DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit does not meet the closed pipe
    again (and print "Exception ignored ... BrokenPipeError")."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a test runner's buffer)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def fail(message: str, code: int = EXIT_REFUSED) -> NoReturn:
    """End the command with `error: message` on stderr and `code`: one line, the first
    paragraph of `message` (see one_line)."""
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code)


def one_line(message: str) -> str:
    """The first paragraph of `message` on one line. A refusal made for mail keeps
    pbmserv's layout ("Userid not known here:", the userid on a tabbed line of its own)
    and may go on with advice for the mail's reader (how to write a userid, a `signup`
    example); the operator's error line says what is wrong in one line."""
    paragraph = message.strip().split("\n\n", 1)[0]
    return " ".join(part.strip() for part in paragraph.splitlines() if part.strip())


@contextmanager
def admin_context(cli: typer.Context, sender: str = "") -> Iterator[Context]:
    """An operator's command as one unit of work (pbm.work): committed on success (with
    the mail it queued), rolled back on errors for people (printed, exit 1)."""
    from pbm.clock import SystemClock
    from pbm.games import GameError
    from pbm.work import unit_of_work

    cfg = config(cli)
    eng = engine(cfg)
    try:
        with unit_of_work(eng, clock=SystemClock(), config=cfg, sender=sender) as unit:
            yield unit.ctx
    except (PbmError, GameError) as exc:
        fail(naming_the_board(eng, exc))
    finally:
        eng.dispose()


def naming_the_board(eng: Engine, exc: Exception) -> str:
    """The refusal, led by the board it is about when it is about one and does not name
    it: a player's reply shows the board below the refusal, an operator's one line
    must name it ("Quarto Board 101: The game has ended")."""
    from pbm.services.play.boards import board_label, rules_for
    from pbm.store.engine import session_for
    from pbm.store.models import BoardRow

    text = str(exc)
    if not isinstance(exc, BoardError):
        return text
    with session_for(eng) as session:
        row = session.get(BoardRow, exc.board_id)
        label = None if row is None else board_label(rules_for(row.game), row.board)
    return text if label is None or label in text else f"{label}: {text}"


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

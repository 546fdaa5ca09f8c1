"""Configuration: one TOML file, read whole into one validated model.

The file is the path given (`pbm --config FILE`), else $PBM_CONFIG; with neither, the
built-in defaults (data under ./var/). Every setting is a field of `Config` below, with
its one default; config/pbm.example.toml documents each (tests/test_example_config.py
keeps the two in step). A table or key that is no setting is an error that names it and
the file, so a typo cannot pass for a default.

Code reads the settings flat (`config.max_commands`). Each field records where the file
writes it (`In("limits", "max_commands")`) and the tables' models are derived from those
records, so a setting is declared once. The [mail.imap], [mail.relay] and [mail.dkim]
tables are models of their own, which the mail transport takes as they are
(pbm.mail.settings).
Relative paths are taken from the current directory (as the default ./var is), the way
a service's working directory sets them.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Self, get_args, get_type_hints

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic.dataclasses import dataclass as settings_dataclass
from pydantic_core import ErrorDetails

from pbm import ENV_CONFIG

PACKAGE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

# Every table of the file: a key that is no setting is an error, not a silent default.
TABLE = ConfigDict(extra="forbid", frozen=True)


class ConfigError(Exception):
    """A configuration file that cannot be read or holds a bad value."""


@dataclass(frozen=True)
class In:
    """Where the file writes a setting: its table (dotted for a sub-table) and key."""

    table: str
    key: str


@dataclass(frozen=True)
class Endpoint:
    """Where a listener listens."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_endpoint(text: str) -> Endpoint | None:
    """`host:port` -> Endpoint; an empty string means "off"."""
    text = text.strip()
    if not text:
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"{text!r} is not host:port")
    return Endpoint(host.strip("[]"), int(port))


def _endpoint(value: object) -> object:
    return parse_endpoint(value) if isinstance(value, str) else value


# A listener as the file writes it: "host:port", or "" for none.
Listener = Annotated[Endpoint | None, BeforeValidator(_endpoint)]
Lowercase = AfterValidator(lambda values: tuple(v.lower() for v in values))


def _mail_address(value: str) -> str:
    """`value` if it is a bare address, local@domain: a bad one of ours fails every mail."""
    local, _, domain = value.rpartition("@")
    if not local or not domain or any(c.isspace() or c in "<>" for c in value):
        raise ValueError(f"{value!r} is not a mail address: write it as pbm@example.org")
    return value


def _mail_addresses(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_mail_address(v) for v in values)


def _mail_address_or_none(value: str) -> str:
    return _mail_address(value) if value else value


# Our own addresses as the file writes them: bare, local@domain ("" for none, where allowed).
MailAddress = AfterValidator(_mail_address)


class Login(BaseModel):
    """What [mail.imap] and [mail.relay] share: a login whose password is written in the
    file, or read from the environment variable `password_env` when `pbm serve` starts
    (so the other commands run without it)."""

    model_config = TABLE

    password: str = ""
    password_env: str = ""

    def with_password(self) -> Self:
        """This table with `password` read from `password_env` if the file gives none;
        raises ValueError when that variable is not set."""
        if self.password or not self.password_env:
            return self
        value = os.environ.get(self.password_env)
        if value is None:
            raise ValueError(f"environment variable {self.password_env} is not set")
        return self.model_copy(update={"password": value})


class ImapSettings(Login):
    """[mail.imap]: the mailbox pbm takes its incoming mail from over IMAP."""

    host: Annotated[str, Field(min_length=1)]
    user: Annotated[str, Field(min_length=1)]
    ssl: bool = True  # implicit TLS
    starttls: bool = False
    port: int = Field(default_factory=lambda given: 993 if given.get("ssl") else 143)
    folder: str = "INBOX"
    # "" means: no folder, flag handled messages \Seen instead of moving them
    processed_folder: str = "Processed"
    # RFC 2177: servers may drop an IDLE after 30 minutes, so it is re-issued sooner
    idle_minutes: float = 25.0
    # used when the server has no IDLE, and as a safety net between IDLE wake-ups
    poll_seconds: float = 60.0
    timeout_seconds: float = 30.0
    batch: int = 50  # messages fetched per round trip
    reconnect_min_seconds: float = 1.0
    reconnect_max_seconds: float = 300.0

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.ssl and self.starttls:
            raise ValueError("ssl and starttls exclude each other")
        if not (self.password or self.password_env):
            raise ValueError("needs password or password_env")
        return self

    @property
    def idle_seconds(self) -> float:
        return self.idle_minutes * 60

    @property
    def timeout(self) -> float:
        return self.timeout_seconds


class RelaySettings(Login):
    """[mail.relay]: the SMTP server pbm hands its outgoing mail to."""

    host: Annotated[str, Field(min_length=1)]
    ssl: bool = False  # implicit TLS
    starttls: bool = Field(default_factory=lambda given: not given.get("ssl"))
    port: int = Field(default_factory=lambda given: 465 if given.get("ssl") else 587)
    user: str = ""  # none: the relay takes mail without AUTH
    # messages per second; 0 means no limit
    rate: float = 20.0
    # mails handed over at once, each on a connection of its own (a crash sends again
    # at most this many); one connection waits for each answer before the next mail
    connections: Annotated[int, Field(ge=1, le=20)] = 4
    timeout_seconds: float = 30.0
    # temporary failures are retried after base * 2**attempts seconds, capped at max
    retry_base_seconds: float = 60.0
    retry_max_seconds: float = 6 * 3600.0
    max_attempts: int = 12  # then the mail is marked failed

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.ssl and self.starttls:
            raise ValueError("ssl and starttls exclude each other")
        if self.user and not (self.password or self.password_env):
            raise ValueError("a user needs password or password_env")
        return self

    @property
    def timeout(self) -> float:
        return self.timeout_seconds


class DkimSettings(BaseModel):
    """[mail.dkim]: pbm signs its outgoing mail with this key (pbm.mail.dkim)."""

    model_config = TABLE

    domain: Annotated[str, Field(min_length=1)]  # the d= of the signature
    selector: Annotated[str, Field(min_length=1)]  # the key is at SELECTOR._domainkey.DOMAIN
    key_file: Path  # the RSA private key, PEM (`pbm mail dkim-key` makes one)


@settings_dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class Config:
    """Every setting, flat, with where the file writes it and its default."""

    # Where the database (by default) and the outbox Maildir live.
    data_dir: Annotated[Path, In("server", "data_dir")] = Path("./var")
    # Any SQLAlchemy URL; by default SQLite in data_dir.
    database_url: Annotated[str, In("store", "database_url")] = Field(
        default_factory=lambda given: f"sqlite:///{given.get('data_dir', '.')}/pbm.sqlite3"
    )
    # How long a SQLite transaction waits for another process's write lock before the
    # store counts as busy (the message then waits and is tried again).
    busy_timeout_seconds: Annotated[float, In("store", "busy_timeout_seconds")] = Field(
        default=10.0, ge=0
    )
    # The address players mail their commands to; replies come from it.
    server_address: Annotated[str, In("server", "address"), MailAddress] = "pbm@localhost"
    server_name: Annotated[str, In("server", "name")] = "PBeM Server"
    # Extra addresses that are ours (aliases); mail from any of them is never answered.
    server_aliases: Annotated[
        tuple[str, ...], In("server", "aliases"), AfterValidator(_mail_addresses)
    ] = ()
    templates_dir: Annotated[Path, In("server", "templates_dir")] = PACKAGE_TEMPLATES
    # Reply tokens are HMAC-derived with the secret read from this environment variable;
    # when it is unset, tokens are random (still stored, so they keep working).
    token_secret_env: Annotated[str, In("security", "token_secret_env")] = "PBM_TOKEN_SECRET"
    # Password throttling: after `max_failures` failures within `failure_window_minutes`
    # for one (userid, sender address) pair, that address's attempts on that userid are
    # refused unchecked for the window. Addresses not registered to the userid share a
    # second budget, `stranger_max_failures`, which never touches her own addresses.
    max_failures: Annotated[int, In("security", "max_failures")] = Field(default=5, ge=1)
    stranger_max_failures: Annotated[int, In("security", "stranger_max_failures")] = Field(
        default=20, ge=1
    )
    failure_window_minutes: Annotated[int, In("security", "failure_window_minutes")] = Field(
        default=15, ge=1
    )
    # scrypt cost: N = 2**password_cost (15 = 32 MiB of memory per hash).
    # Bounded by the hash itself: scrypt takes N >= 2 and under 2 GiB of memory.
    password_cost: Annotated[int, In("security", "password_cost")] = Field(default=15, ge=1, le=19)
    # Authentication-Results (RFC 8601) producers whose verdicts pbm trusts; see
    # docs/security.md. Empty: no header is trusted.
    authserv_ids: Annotated[tuple[str, ...], In("security", "authserv_ids"), Lowercase] = ()
    # Limits on what one message may ask. A larger message is refused by the listeners
    # and, taken in by pipe or IMAP, stored but not run.
    max_message_bytes: Annotated[int, In("limits", "max_message_bytes")] = Field(
        default=1_000_000, ge=1
    )
    max_commands: Annotated[int, In("limits", "max_commands")] = Field(default=50, ge=1)
    # Unknown senders without a command get at most this many help replies a day.
    stranger_help_per_day: Annotated[int, In("limits", "stranger_help_per_day")] = Field(
        default=1, ge=0
    )
    # Mails to one address per hour that are not board mails of a game it plays
    # (answers, refusals, help); past it pbm answers that address nothing more.
    replies_per_address_hour: Annotated[int, In("limits", "replies_per_address_hour")] = Field(
        default=10, ge=0
    )
    # Mails an hour to a confirmed player's mailbox about his own boards, tournaments and
    # account (answers, refusals); board, round and result mails never count.
    player_replies_per_hour: Annotated[int, In("limits", "player_replies_per_hour")] = Field(
        default=200, ge=0
    )
    # Players one `message` may go to.
    message_recipients: Annotated[int, In("limits", "message_recipients")] = Field(default=10, ge=0)
    # Floors of the reminder and forfeit times a challenge or tournament sets by mail,
    # and the reminder mails one board may send a day.
    min_nag_hours: Annotated[float, In("limits", "min_nag_hours")] = Field(default=12.0, ge=0)
    min_forfeit_days: Annotated[float, In("limits", "min_forfeit_days")] = Field(default=1.0, ge=0)
    reminders_per_board_day: Annotated[int, In("limits", "reminders_per_board_day")] = Field(
        default=2, ge=0
    )
    # Consent (docs/security.md): confirmation requests one mailbox gets a day, across
    # all accounts; addresses one signup may name; days an account may stay without a
    # confirmed address before the jobs remove it; refusals ("not me") for distinct
    # accounts after which a mailbox gets no confirmation request for any new account.
    confirmations_per_mailbox_day: Annotated[
        int, In("consent", "confirmations_per_mailbox_day")
    ] = Field(default=3, ge=0)
    addresses_per_signup: Annotated[int, In("consent", "addresses_per_signup")] = Field(
        default=3, ge=1
    )
    unconfirmed_days: Annotated[float, In("consent", "unconfirmed_days")] = Field(default=7.0, ge=0)
    refusals_block_mailbox: Annotated[int, In("consent", "refusals_block_mailbox")] = Field(
        default=2, ge=1
    )
    # Whether two accounts may both confirm one mailbox (a family sharing an address).
    shared_mailboxes: Annotated[bool, In("consent", "shared_mailboxes")] = False
    # Days between a confirmed `erase` by mail and the erasure, while a mail may cancel it.
    erasure_delay_days: Annotated[float, In("consent", "erasure_delay_days")] = Field(
        default=7.0, ge=0
    )
    # Days after which the text of mail pbm handled (a processed message's source, a
    # sent reply's text) is forgotten, its row kept (docs/privacy.md); 0 keeps it.
    mail_text_days: Annotated[float, In("privacy", "mail_text_days")] = Field(default=90.0, ge=0)
    # How many rows of the move list an ongoing-game mail shows (pbmserv's MoveHeight).
    move_rows: Annotated[int, In("limits", "move_rows")] = Field(default=4, ge=0)
    # Plies of conditional moves one player may set on one board, all lines together.
    conditional_plies: Annotated[int, In("limits", "conditional_plies")] = Field(default=40, ge=0)
    # The largest mail an export (`export`, docs/records.md) sends, its zip included;
    # ordinary answers stay under 256 KB (pbm.output_limits).
    export_bytes_per_mail: Annotated[int, In("limits", "export_bytes_per_mail")] = Field(
        default=5_000_000, ge=1
    )
    # Computer players (docs/bots.md): the worker processes `pbm serve` thinks in for
    # them, and the time a bot's move may take.
    bot_workers: Annotated[int, In("bots", "workers")] = Field(default=1, ge=1)
    bot_seconds: Annotated[float, In("bots", "seconds_per_move")] = Field(default=2.0, gt=0)
    # Active boards against bots one player may have; a challenge past it is refused.
    bot_games_per_player: Annotated[int, In("bots", "max_games_per_player")] = Field(
        default=5, ge=1
    )
    # Outside engines (docs/engines.md): the user they run as when pbm runs as root
    # ("" for pbm's own), and what one engine process may use.
    engine_user: Annotated[str, In("bots", "engine_user")] = ""
    engine_cpu_seconds: Annotated[int, In("bots", "engine_cpu_seconds")] = Field(default=60, ge=1)
    engine_memory_mb: Annotated[int, In("bots", "engine_memory_mb")] = Field(default=2048, ge=16)
    engine_open_files: Annotated[int, In("bots", "engine_open_files")] = Field(default=64, ge=8)
    engine_file_mb: Annotated[int, In("bots", "engine_file_mb")] = Field(default=16, ge=0)
    engine_stderr_kb: Annotated[int, In("bots", "engine_stderr_kb")] = Field(default=64, ge=1)
    # The vacation days a new account starts with (docs/correspondence.md); more accrue
    # at 30 a year, at most 60 banked.
    vacation_start_days: Annotated[float, In("vacation", "start_days")] = Field(
        default=7.0, ge=0, le=60
    )
    # The mail transport (pbm.mail.settings): the listeners, IMAP intake, the SMTP relay
    # (without one, outgoing mail goes into the Maildir outbox_maildir).
    smtp_listen: Annotated[Listener, In("mail.listen", "smtp")] = Endpoint("127.0.0.1", 2525)
    lmtp_listen: Annotated[Listener, In("mail.listen", "lmtp")] = None
    imap: Annotated[ImapSettings | None, In("mail", "imap")] = None
    relay: Annotated[RelaySettings | None, In("mail", "relay")] = None
    outbox_maildir: Annotated[Path, In("mail", "outbox_maildir")] = Field(
        default_factory=lambda given: Path(given.get("data_dir", ".")) / "outbox"
    )
    # One mailbox, one identity (pbm.mail.identity): the characters that start a
    # sub-address tag, and whether local parts ignore case.
    tag_separators: Annotated[str, In("mail", "tag_separators")] = "+"
    fold_local_case: Annotated[bool, In("mail", "fold_local_case")] = True
    # Whether `pbm serve` draws the pictures of the HTML parts in a worker process
    # beside its own (pbm.html_parts), where they take no CPU from the mail it handles.
    picture_worker: Annotated[bool, In("mail", "picture_worker")] = True
    # How often `pbm serve` logs its health line.
    health_seconds: Annotated[float, In("mail", "health_seconds")] = 60.0
    # DKIM signing of outgoing mail; none: pbm signs nothing (an MTA may sign).
    dkim: Annotated[DkimSettings | None, In("mail", "dkim")] = None
    # The DNS server `pbm mail doctor` asks ("IP" or "IP:PORT"); "": the system's.
    nameserver: Annotated[str, In("mail", "nameserver")] = ""
    # A second From for notifications the reader did not trigger by a command (board
    # moves of others, reminders, tournaments, digests); "" means the server address.
    notify_address: Annotated[
        str, In("server", "notify_address"), AfterValidator(_mail_address_or_none)
    ] = ""
    # Bounces and complaints (docs/bounces.md): the local part of the VERP envelope
    # sender (LOCAL+ID-CODE@host) and of the stop addresses (LOCAL+CODE@host).
    bounce_local_part: Annotated[str, In("bounces", "local_part")] = "pbm-bounces"
    stop_local_part: Annotated[str, In("bounces", "stop_local_part")] = "pbm-stop"
    # A mailbox's score (hard bounce 1, soft 0.5, at most one a day) at which pbm stops
    # mailing it, and the days without a bounce after which its score is forgotten.
    bounce_threshold: Annotated[float, In("bounces", "threshold")] = Field(default=5.0, gt=0)
    bounce_forget_days: Annotated[int, In("bounces", "forget_days")] = Field(default=7, ge=1)
    # The address registered with providers' feedback loops (ARF reports); "" for none.
    feedback_address: Annotated[str, In("bounces", "feedback_address")] = ""
    # The web pages (docs/web.md): where pbm serves them ("" = off), the https address
    # the world reaches them at (the links in mails; "" = no links), whether robots may
    # index boards and players, where /metrics and /healthz listen (loopback: the
    # operator's), and the requests one client address may make: a burst, then a rate.
    web_listen: Annotated[Listener, In("web", "listen")] = None
    web_base_url: Annotated[str, In("web", "base_url")] = ""
    web_public: Annotated[bool, In("web", "public")] = True
    metrics_listen: Annotated[Listener, In("web", "metrics_listen")] = Endpoint("127.0.0.1", 9108)
    web_burst: Annotated[int, In("web", "burst")] = Field(default=60, ge=1)
    web_requests_per_second: Annotated[float, In("web", "requests_per_second")] = Field(
        default=10.0, gt=0
    )
    # The niceness the pages run at (os.nice): `pbm serve` runs them in a process of its
    # own, so rendering pages never takes the CPU and the interpreter lock mail needs.
    web_nice: Annotated[int, In("web", "nice")] = Field(default=10, ge=0, le=19)

    @property
    def web_url(self) -> str:
        """The base of the links mails carry to the pages, without a final slash ("" for
        none)."""
        return self.web_base_url.rstrip("/")

    @property
    def server_host(self) -> str:
        return self.server_address.rpartition("@")[2] or "localhost"

    @property
    def own_addresses(self) -> tuple[str, ...]:
        return (self.server_address.lower(), *(a.lower() for a in self.server_aliases))

    def token_secret(self) -> bytes | None:
        value = os.environ.get(self.token_secret_env, "")
        return value.encode() if value else None


# Each field's type, with the annotations that say where the file writes it.
_HINTS = get_type_hints(Config, include_extras=True)

# Each setting's place in the file, by field name.
PLACES: dict[str, In] = {
    name: next(m for m in get_args(hint)[1:] if isinstance(m, In)) for name, hint in _HINTS.items()
}


def _is_table(hint: Any) -> bool:
    kinds = get_args(get_args(hint)[0])  # Annotated[ImapSettings | None, ...]
    return any(isinstance(t, type) and issubclass(t, BaseModel) for t in kinds)


# The settings that are tables of their own ([mail.imap], [mail.relay]).
TABLE_SETTINGS = frozenset(name for name, hint in _HINTS.items() if _is_table(hint))


def _file_model() -> type[BaseModel]:
    """The file's shape: one model per table, holding its settings and sub-tables and
    forbidding any other key. Values are checked by Config itself."""
    keys: dict[str, set[str]] = {}
    for place in PLACES.values():
        parts = place.table.split(".")
        for depth in range(1, len(parts)):
            keys.setdefault(".".join(parts[:depth]), set())
        keys.setdefault(place.table, set()).add(place.key)
    models: dict[str, type[BaseModel]] = {}
    for table in sorted(keys, key=lambda t: -t.count(".")):  # sub-tables first
        fields: dict[str, Any] = {key: (Any, None) for key in keys[table]}
        for sub, model in models.items():
            parent, _, name = sub.rpartition(".")
            if parent == table:
                fields[name] = (model, None)
        models[table] = create_model(f"Table[{table}]", __config__=TABLE, **fields)
    tops: dict[str, Any] = {t: (model, None) for t, model in models.items() if "." not in t}
    return create_model("ConfigFile", __config__=TABLE, **tops)


ConfigFile = _file_model()


def load_config(path: str | Path | None = None) -> Config:
    """Read the configuration from `path`, else $PBM_CONFIG, else the defaults."""
    if path is None:
        env = os.environ.get(ENV_CONFIG)
        path = Path(env) if env else None
    if path is None:
        return Config()
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read configuration {path}: {exc}") from exc
    return config_from_table(raw, str(path))


def config_from_table(raw: dict[str, Any], source: str = "configuration") -> Config:
    """Build a Config from a parsed TOML document; ConfigError names every problem (the
    table, the key, what is wrong) after `source`, on one line."""
    try:
        ConfigFile.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_report(source, [_file_problem(e) for e in exc.errors()])) from None
    given: dict[str, Any] = {}
    for name, place in PLACES.items():
        table = raw
        for part in place.table.split("."):
            table = table.get(part, {})
        if place.key in table:
            given[name] = table[place.key]
    try:
        return Config(**given)
    except ValidationError as exc:
        # A default computed from other settings is not computed once one of them is bad:
        # that is no problem of its own.
        errors = [e for e in exc.errors() if e["type"] != "default_factory_not_called"]
        raise ConfigError(_report(source, [_setting_problem(e) for e in errors])) from None


def _report(source: str, problems: list[str]) -> str:
    return f"{source}: {'; '.join(problems)}"


# pydantic's error types for "this should have been a table"
NOT_A_TABLE = frozenset({"model_type", "model_attributes_type", "dict_type", "dataclass_type"})


def _file_problem(error: ErrorDetails) -> str:
    """A problem with the file's tables and keys (ConfigFile's errors)."""
    path = [str(part) for part in error["loc"]]
    if error["type"] in NOT_A_TABLE:
        return _problem(".".join(path), None, error)
    return _problem(".".join(path[:-1]), path[-1], error)


def _setting_problem(error: ErrorDetails) -> str:
    """A problem with a setting's value (Config's errors, located by the field's place)."""
    name, *rest = (str(part) for part in error["loc"])
    place = PLACES[name]
    if name in TABLE_SETTINGS:  # the problem is in [mail.imap] (a key of it, or the whole)
        return _problem(f"{place.table}.{place.key}", rest[0] if rest else None, error)
    return _problem(place.table, place.key, error)


# pydantic's words for a TOML value of the wrong type that name Python's types instead.
TOML_TYPES = {
    "path_type": 'input should be a path in quotes, e.g. "./var"',
    "tuple_type": 'input should be a list, e.g. ["one", "two"]',
}


def _problem(table: str, key: str | None, error: ErrorDetails) -> str:
    message = TOML_TYPES.get(error["type"], error["msg"]).removeprefix("Value error, ")
    message = message[:1].lower() + message[1:]
    if key is None:
        if error["type"] in NOT_A_TABLE:
            return f"[{table}] must be a table"
        return f"[{table}] {message}"
    where = f"[{table}] " if table else ""
    if error["type"] == "extra_forbidden":
        if isinstance(error["input"], dict):
            return f"unknown table [{f'{table}.' if table else ''}{key}]"
        return f"{where}unknown setting '{key}'"
    if error["type"] == "missing":
        return f"{where}missing setting '{key}'"
    return f"{where}{key}: {message}"

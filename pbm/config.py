"""Configuration: a TOML file (path, else $PBM_CONFIG, else built-in defaults).

With no configuration pbm keeps its data under ./var/. Every setting is documented in
config/pbm.example.toml. Other parts read their own sections from `Config.raw`.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV_CONFIG = "PBM_CONFIG"
PACKAGE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


class ConfigError(Exception):
    """A configuration file that cannot be read or holds a bad value."""


@dataclass(frozen=True)
class Config:
    data_dir: Path = Path("./var")
    database_url: str = "sqlite:///./var/pbm.sqlite3"
    server_address: str = "pbm@localhost"
    server_name: str = "PBeM Server"
    # Extra addresses that are ours (aliases); mail from any of them is never answered.
    server_aliases: tuple[str, ...] = ()
    templates_dir: Path = PACKAGE_TEMPLATES
    # Reply tokens are HMAC-derived with the secret read from this environment variable;
    # when it is unset, tokens are random (still stored, so they keep working).
    token_secret_env: str = "PBM_TOKEN_SECRET"
    # Password throttling: after `max_failures` failures within `failure_window_minutes`
    # for one (userid, sender address) pair, that address's attempts on that userid are
    # refused unchecked for the window. Addresses not registered to the userid share a
    # second budget, `stranger_max_failures`, which never touches her own addresses.
    max_failures: int = 5
    stranger_max_failures: int = 20
    # scrypt cost: N = 2**password_cost (15 = 32 MiB of memory per hash).
    password_cost: int = 15
    failure_window_minutes: int = 15
    # Limits on what one message may ask.
    max_message_bytes: int = 1_000_000
    max_commands: int = 50
    # Unknown senders without a command get at most this many help replies a day.
    stranger_help_per_day: int = 1
    # Mails to one address per hour that are not board mails of a game it plays
    # (answers, refusals, help); past it pbm answers that address nothing more.
    replies_per_address_hour: int = 10
    # Authentication-Results (RFC 8601) producers whose verdicts pbm trusts; see
    # docs/security.md. Empty: no header is trusted.
    authserv_ids: tuple[str, ...] = ()
    # How many rows of the move list an ongoing-game mail shows (pbmserv's MoveHeight).
    move_rows: int = 4
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def server_host(self) -> str:
        return self.server_address.rpartition("@")[2] or "localhost"

    @property
    def own_addresses(self) -> tuple[str, ...]:
        return (self.server_address.lower(), *(a.lower() for a in self.server_aliases))

    def token_secret(self) -> bytes | None:
        value = os.environ.get(self.token_secret_env, "")
        return value.encode() if value else None


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
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read configuration {path}: {exc}") from exc
    return config_from_table(raw)


def config_from_table(raw: dict[str, Any]) -> Config:
    """Build a Config from a parsed TOML table; relative paths are from the current directory
    (as the default ./var is), the way a service's working directory sets them."""
    server = raw.get("server", {})
    store = raw.get("store", {})
    limits = raw.get("limits", {})
    security = raw.get("security", {})
    defaults = Config()
    data_dir = _path(server.get("data_dir"), defaults.data_dir)
    url = store.get("database_url") or f"sqlite:///{data_dir / 'pbm.sqlite3'}"
    try:
        return Config(
            data_dir=data_dir,
            database_url=str(url),
            server_address=str(server.get("address", defaults.server_address)),
            server_name=str(server.get("name", defaults.server_name)),
            server_aliases=tuple(str(a) for a in server.get("aliases", ())),
            templates_dir=_path(server.get("templates_dir"), defaults.templates_dir),
            token_secret_env=str(security.get("token_secret_env", defaults.token_secret_env)),
            max_failures=int(security.get("max_failures", defaults.max_failures)),
            stranger_max_failures=int(
                security.get("stranger_max_failures", defaults.stranger_max_failures)
            ),
            authserv_ids=tuple(str(a).lower() for a in security.get("authserv_ids", ())),
            password_cost=int(security.get("password_cost", defaults.password_cost)),
            failure_window_minutes=int(
                security.get("failure_window_minutes", defaults.failure_window_minutes)
            ),
            max_message_bytes=int(limits.get("max_message_bytes", defaults.max_message_bytes)),
            max_commands=int(limits.get("max_commands", defaults.max_commands)),
            stranger_help_per_day=int(
                limits.get("stranger_help_per_day", defaults.stranger_help_per_day)
            ),
            move_rows=int(limits.get("move_rows", defaults.move_rows)),
            replies_per_address_hour=int(
                limits.get("replies_per_address_hour", defaults.replies_per_address_hour)
            ),
            raw=raw,
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad configuration value: {exc}") from exc


def _path(value: Any, default: Path) -> Path:
    return Path(str(value)) if value else default

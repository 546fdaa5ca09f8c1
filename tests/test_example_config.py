"""config/pbm.example.toml and the configuration model (pbm.config) say the same: every
key of the example, the commented-out ones too, is a setting; every setting is in the
example; and the example's values are the defaults, except those it shows as examples."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any, get_args, get_type_hints

from pbm.config import PLACES, TABLE_SETTINGS, Config, config_from_table, load_config
from pbm.mail.settings import mail_settings

EXAMPLE = Path(__file__).resolve().parents[1] / "config" / "pbm.example.toml"

# The example's values that are not defaults (its comments say so), and why.
EXAMPLE_VALUES = {
    ("server", "address"): "a real address; the default is pbm@localhost",
    ("server", "templates_dir"): "the default is the directory shipped with pbm",
    ("store", "database_url"): "PostgreSQL; the default is SQLite in data_dir",
    ("mail.listen", "lmtp"): "the default is no LMTP listener",
    ("mail.imap", "host"): "required",
    ("mail.imap", "user"): "required",
    ("mail.imap", "password_env"): "a password is required",
    ("mail.imap", "password"): "a password is required",
    ("mail.relay", "host"): "required",
    ("mail.relay", "user"): "a relay may need no AUTH",
    ("mail.relay", "password_env"): "goes with the user",
    ("mail.relay", "password"): "goes with the user",
    ("mail.dkim", "domain"): "required",
    ("mail.dkim", "selector"): "required",
    ("mail.dkim", "key_file"): "required",
}


def uncommented(text: str) -> str:
    """The example with its commented-out tables and settings (`# key = value` lines,
    not the indented examples inside prose) taken in."""
    return re.sub(r"^# (?=\[|[a-z_]+ = )", "", text, flags=re.MULTILINE)


def settings_in(document: dict[str, Any], table: str = "") -> set[tuple[str, str]]:
    """(table, key) of every setting a parsed TOML document writes."""
    found: set[tuple[str, str]] = set()
    for key, value in document.items():
        if isinstance(value, dict):
            found |= settings_in(value, f"{table}.{key}" if table else key)
        else:
            found.add((table, key))
    return found


def model_settings() -> set[tuple[str, str]]:
    """(table, key) of every setting of the model."""
    found: set[tuple[str, str]] = set()
    for name, place in PLACES.items():
        if name in TABLE_SETTINGS:
            model = get_args(get_type_hints(Config)[name])[0]
            found |= {(f"{place.table}.{place.key}", key) for key in model.model_fields}
        else:
            found.add((place.table, place.key))
    return found


def only(document: dict[str, Any], keep: set[tuple[str, str]], table: str = "") -> dict[str, Any]:
    """`document` with only the settings in `keep`."""
    kept: dict[str, Any] = {}
    for key, value in document.items():
        if isinstance(value, dict):
            kept[key] = only(value, keep, f"{table}.{key}" if table else key)
        elif (table, key) in keep:
            kept[key] = value
    return kept


def test_every_setting_is_in_the_example_and_every_key_of_it_is_a_setting() -> None:
    document = tomllib.loads(uncommented(EXAMPLE.read_text(encoding="utf-8")))
    assert settings_in(document) == model_settings()
    assert set(EXAMPLE_VALUES) <= model_settings()


def test_the_example_shows_the_defaults_except_its_examples() -> None:
    document = tomllib.loads(uncommented(EXAMPLE.read_text(encoding="utf-8")))
    examples_only = config_from_table(only(document, set(EXAMPLE_VALUES)))
    assert config_from_table(document) == examples_only


def test_the_example_as_shipped_is_the_defaults_with_an_address() -> None:
    config = load_config(EXAMPLE)
    assert config == dataclasses.replace(Config(), server_address="pbm@example.org")
    settings = mail_settings(config)
    assert str(settings.smtp_listen) == "127.0.0.1:2525"
    assert settings.relay is None and settings.imap is None  # Maildir outbox, no IMAP
    assert settings.outbox_maildir == Path("var/outbox")
    # one limit for the listeners and the pipeline alike
    assert settings.max_message_bytes == config.max_message_bytes == 1_000_000

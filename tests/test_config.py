"""The configuration model (pbm.config): a file is read whole, a table or key that is no
setting is an error naming it, the table and the file, and each setting has one default."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pydantic import ValidationError

from pbm.config import Config, ConfigError, Endpoint, load_config
from pbm.mail.settings import mail_settings


def load(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "pbm.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def problem(tmp_path: Path, text: str) -> str:
    """The error a file with `text` gives, without the file name in front."""
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    prefix = f"{tmp_path / 'pbm.toml'}: "
    assert str(caught.value).startswith(prefix)
    return str(caught.value).removeprefix(prefix)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[security]\npasword_cost = 4\n", "[security] unknown setting 'pasword_cost'"),
        ("[sever]\naddress = 'pbm@example.org'\n", "unknown table [sever]"),
        ("[mail.lisen]\nsmtp = ''\n", "unknown table [mail.lisen]"),
        (
            "[mail.imap]\nhost = 'h'\nuser = 'u'\npassword = 'p'\nfodler = 'x'\n",
            ("[mail.imap] unknown setting 'fodler'"),
        ),
        ("address = 'pbm@example.org'\n", "unknown setting 'address'"),
        # one limit for the listeners and the pipeline: [limits], not [mail]
        ("[mail]\nmax_message_bytes = 5\n", "[mail] unknown setting 'max_message_bytes'"),
    ],
)
def test_a_typo_is_an_error_naming_the_key_and_the_table(
    tmp_path: Path, text: str, error: str
) -> None:
    assert problem(tmp_path, text) == error


def test_every_problem_of_a_file_is_named_on_one_line(tmp_path: Path) -> None:
    text = "[security]\npasword_cost = 4\n[sever]\nx = 1\n"
    assert problem(tmp_path, text) == (
        "[security] unknown setting 'pasword_cost'; unknown table [sever]"
    )
    text = "[limits]\nmax_commands = 'many'\n[server]\naliases = [1]\n"
    assert problem(tmp_path, text) == (
        "[server] aliases: input should be a valid string; "
        "[limits] max_commands: input should be a valid integer, "
        "unable to parse string as an integer"
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("server = 'pbm@example.org'\n", "[server] must be a table"),
        ("[mail]\nimap = 'imap.example.org'\n", "[mail.imap] must be a table"),
        ("[mail.listen]\nsmtp = '2525'\n", "[mail.listen] smtp: '2525' is not host:port"),
        ("[mail.imap]\nhost = 'h'\npassword = 'p'\n", "[mail.imap] missing setting 'user'"),
        ("[mail.imap]\nhost = 'h'\nuser = 'u'\n", "[mail.imap] needs password or password_env"),
        (
            "[mail.imap]\nhost = 'h'\nuser = 'u'\npassword = 'p'\nstarttls = true\n",
            "[mail.imap] ssl and starttls exclude each other",
        ),
        ("[mail.relay]\nhost = ''\n", "[mail.relay] host: string should have at least 1 character"),
        (
            "[mail.relay]\nhost = 'h'\nuser = 'u'\n",
            "[mail.relay] a user needs password or password_env",
        ),
        # our own addresses: a bad one made every message fail with a traceback
        (
            "[server]\naddress = 'pbm'\n",
            "[server] address: 'pbm' is not a mail address: write it as pbm@example.org",
        ),
        (
            "[server]\naddress = 'PBeM <pbm@example.org>'\n",
            "[server] address: 'PBeM <pbm@example.org>' is not a mail address: "
            "write it as pbm@example.org",
        ),
        (
            "[server]\nnotify_address = 'games'\n",
            "[server] notify_address: 'games' is not a mail address: write it as pbm@example.org",
        ),
        (
            "[server]\naliases = ['old@example.org', 'old']\n",
            "[server] aliases: 'old' is not a mail address: write it as pbm@example.org",
        ),
        # a count below what makes sense: "one mail may run at most -5 commands"
        (
            "[limits]\nmax_commands = 0\n",
            "[limits] max_commands: input should be greater than or equal to 1",
        ),
        (
            "[limits]\nreplies_per_address_hour = -1\n",
            "[limits] replies_per_address_hour: input should be greater than or equal to 0",
        ),
        (
            "[consent]\nunconfirmed_days = -7.0\n",
            "[consent] unconfirmed_days: input should be greater than or equal to 0",
        ),
        # Python's types named for TOML's ("for <class 'pathlib.Path'>", "a valid tuple")
        (
            "[server]\ndata_dir = 5\n",
            '[server] data_dir: input should be a path in quotes, e.g. "./var"',
        ),
        (
            "[server]\naliases = 'old@example.org'\n",
            '[server] aliases: input should be a list, e.g. ["one", "two"]',
        ),
        # past what scrypt takes: every signup and passwd failed with a traceback
        (
            "[security]\npassword_cost = 20\n",
            "[security] password_cost: input should be less than or equal to 19",
        ),
        (
            "[security]\npassword_cost = 0\n",
            "[security] password_cost: input should be greater than or equal to 1",
        ),
    ],
)
def test_a_bad_value_names_its_setting(tmp_path: Path, text: str, error: str) -> None:
    assert problem(tmp_path, text) == error


def test_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^cannot read configuration .*pbm\.toml: "):
        load(tmp_path, "[store\n")
    with pytest.raises(ConfigError, match=r"^cannot read configuration .*missing\.toml: "):
        load_config(tmp_path / "missing.toml")


def test_defaults_that_follow_the_data_directory(tmp_path: Path) -> None:
    config = load(tmp_path, f"[server]\ndata_dir = '{tmp_path}'\n")
    assert config.database_url == f"sqlite:///{tmp_path}/pbm.sqlite3"
    assert config.outbox_maildir == tmp_path / "outbox"
    assert Config(data_dir=tmp_path).database_url == config.database_url
    assert Config().database_url == "sqlite:///var/pbm.sqlite3"


def test_the_file_fills_the_flat_settings(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        "[server]\naddress = 'pbm@example.org'\naliases = ['PBM@old.example.org']\n"
        "[security]\npassword_cost = 4\nauthserv_ids = ['MX.example.org']\n"
        "[limits]\nmax_commands = 7\n"
        "[mail.listen]\nsmtp = ''\nlmtp = '127.0.0.1:8024'\n",
    )
    assert (config.server_address, config.server_host) == ("pbm@example.org", "example.org")
    assert config.own_addresses == ("pbm@example.org", "pbm@old.example.org")
    assert (config.password_cost, config.max_commands) == (4, 7)
    assert config.authserv_ids == ("mx.example.org",)
    assert (config.smtp_listen, config.lmtp_listen) == (None, Endpoint("127.0.0.1", 8024))
    assert config.max_failures == Config().max_failures  # the rest keep their defaults


def test_settings_in_code_are_checked_too() -> None:
    config = Config(server_address="pbm@example.org", password_cost=4, max_failures=3)
    assert dataclasses.replace(config, max_failures=4).max_failures == 4
    with pytest.raises(ValidationError):
        Config(pasword_cost=4)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Config(max_commands="many")  # type: ignore[arg-type]


def test_ports_and_tls_follow_each_other(tmp_path: Path) -> None:
    login = "user = 'pbm'\npassword = 'p'\n"
    config = load(tmp_path, f"[mail.imap]\nhost = 'h'\n{login}[mail.relay]\nhost = 'h'\n")
    assert config.imap is not None and config.relay is not None
    assert (config.imap.port, config.imap.ssl) == (993, True)
    assert (config.relay.port, config.relay.starttls, config.relay.ssl) == (587, True, False)
    config = load(
        tmp_path, f"[mail.imap]\nhost='h'\nssl=false\n{login}[mail.relay]\nhost='h'\nssl=true\n"
    )
    assert config.imap is not None and config.relay is not None
    assert (config.imap.port, config.relay.port, config.relay.starttls) == (143, 465, False)


def test_a_password_from_the_environment_is_read_when_the_transport_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PBM_TEST_IMAP_PASSWORD", raising=False)
    config = load(
        tmp_path,
        "[mail.imap]\nhost = 'h'\nuser = 'u'\npassword_env = 'PBM_TEST_IMAP_PASSWORD'\n",
    )
    # loading needs no password: the admin commands run without it
    with pytest.raises(ConfigError) as caught:
        mail_settings(config)
    assert str(caught.value) == (
        "[mail.imap] password_env: environment variable PBM_TEST_IMAP_PASSWORD is not set"
    )
    monkeypatch.setenv("PBM_TEST_IMAP_PASSWORD", "s3cret")
    settings = mail_settings(config)
    assert settings.imap is not None and settings.imap.password == "s3cret"


def test_one_message_size_limit_for_the_listeners_and_the_pipeline(tmp_path: Path) -> None:
    config = load(tmp_path, "[limits]\nmax_message_bytes = 2000\n")
    assert mail_settings(config).max_message_bytes == config.max_message_bytes == 2000
    assert mail_settings(Config()).max_message_bytes == 1_000_000

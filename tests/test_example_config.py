"""The shipped example configuration is valid and every section is read by pbm."""

import tomllib
from pathlib import Path

from pbm.config import load_config
from pbm.mail.settings import mail_settings

EXAMPLE = Path(__file__).resolve().parents[1] / "config" / "pbm.example.toml"


def test_example_config_loads_with_its_documented_values():
    cfg = load_config(EXAMPLE)
    raw = tomllib.loads(EXAMPLE.read_text())
    assert cfg.server_address == raw["server"]["address"]
    assert cfg.database_url == raw["store"]["database_url"]
    settings = mail_settings(cfg)
    host, port = raw["mail"]["listen"]["smtp"].rsplit(":", 1)
    assert (settings.smtp_listen.host, settings.smtp_listen.port) == (host, int(port))
    assert settings.relay is None  # the example's relay is commented out: Maildir outbox

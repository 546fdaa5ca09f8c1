#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: lint, format check, types and dead
# code (scripts/check.sh), pytest.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
# The PostgreSQL tests (tests/pg) start a private cluster from Debian's postgresql
# package; the mail tests install Postfix and Dovecot themselves (.ci/mailstack.sh).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
# The browser tests (tests/server/test_mail_browser.py) look at the HTML part of mails
# in headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# The deliverability tests (tests/deliverability) check pbm's mail with the receivers'
# own tools: dnsmasq serves a test DNS zone on loopback (dnsmasq-base: the program
# without the system service), OpenDKIM verifies the signatures, SpamAssassin scores
# the mails (local tests only).
if ! [ -x /usr/sbin/dnsmasq ] || ! [ -x /usr/sbin/opendkim ] \
  || ! command -v spamassassin >/dev/null 2>&1; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    dnsmasq-base opendkim opendkim-tools spamassassin >/dev/null
fi
# The accessibility audit (tests/server/test_mail_axe.py) runs axe-core, from the npm
# registry, inside Chromium: Debian's npm installs it into .cache/axe once.
if ! [ -f .cache/axe/node_modules/axe-core/axe.min.js ]; then
  if ! command -v npm >/dev/null 2>&1; then
      as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  mkdir -p .cache/axe
  npm install --silent --no-audit --no-fund --prefix .cache/axe axe-core@4
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# mypy (pbm and tests; strict on games, ratings, tournaments, store, services), vulture.
bash scripts/check.sh
# The PostgreSQL tests fail, not skip, when PostgreSQL cannot start (tests/pg_cluster.py),
# and so does a test whose tool (Chromium, axe-core, Postfix and Dovecot, dnsmasq,
# OpenDKIM, SpamAssassin, openssl) is missing after the installs above (tests/tools.py).
export PBM_TEST_POSTGRES="${PBM_TEST_POSTGRES:-required}"
export PBM_TEST_TOOLS="${PBM_TEST_TOOLS:-required}"
if [ "$#" -gt 0 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
.venv/bin/python -m pytest
# The server suite once more on PostgreSQL (tests/server/conftest.py's database_url):
# SQL that SQLite lets pass fails there (a column compared with a value of another type,
# a NUL in text, the order of a GROUP BY). The slow tests and those about SQLite itself
# (marked `sqlite`) run once, above.
PBM_TEST_POSTGRES=1 exec .venv/bin/python -m pytest tests/server -q -m "not slow and not sqlite"

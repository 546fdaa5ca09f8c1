#!/usr/bin/env bash
# Sets everything up and runs the pbm server on its embedded defaults: SQLite under
# ./var/, an SMTP intake on 127.0.0.1:2525, replies written to the Maildir
# ./var/outbox/ and the web pages on http://127.0.0.1:8080/ (docs/web.md). Extra
# arguments go to `pbm serve` (e.g. --log-level DEBUG); to run on a configuration file
# (whose [web] table then decides): PBM_CONFIG=config/pbm.toml bash scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ -z "${PBM_CONFIG:-}" ]; then
  exec .venv/bin/pbm serve --web 127.0.0.1:8080 "$@"
fi
exec .venv/bin/pbm serve "$@"

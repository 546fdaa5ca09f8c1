#!/usr/bin/env bash
# Sets everything up and runs the pbm server on its embedded defaults: SQLite under
# ./var/, an SMTP intake on 127.0.0.1:2525 and replies written to the Maildir
# ./var/outbox/. Extra arguments go to `pbm serve` (e.g. --log-level DEBUG); to run on
# a configuration file: PBM_CONFIG=config/pbm.toml bash scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/pbm serve "$@"

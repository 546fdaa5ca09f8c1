#!/usr/bin/env bash
# Sets everything up and runs the pbm server on its embedded defaults: SQLite under
# ./var/, an SMTP intake on 127.0.0.1:2525 and replies written to the Maildir
# ./var/outbox/. Extra arguments go to `pbm serve` (e.g. --config config/pbm.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/pbm serve "$@"

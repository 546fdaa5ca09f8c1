#!/usr/bin/env bash
# Sets everything up and runs pbm's main job on its embedded defaults.
# Until the mail server lands this is a game of Quarto at the terminal.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/pbm rules play quarto "$@"

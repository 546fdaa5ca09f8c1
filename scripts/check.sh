#!/usr/bin/env bash
# Static checks: mypy (configured by [tool.mypy] in pyproject.toml: plain checking of
# pbm and tests/, the bodies of unannotated functions included, strict for the pbm modules
# listed there) and vulture (dead code in pbm, with the framework hooks of
# scripts/vulture_whitelist.py). Runs both; fails if either fails.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
.venv/bin/mypy || status=1
# The command functions pbm/cli/__init__.py names as "module:function" (pbm.cli.lazy
# imports one when its command runs): vulture sees them used through this list.
commands=$(mktemp --suffix=.py)
trap 'rm -f "$commands"' EXIT
.venv/bin/python - >"$commands" <<'EOF'
from pbm.cli import COMMANDS
from pbm.cli.lazy import Group

for entry in COMMANDS.values():
    for where in entry.commands.values() if isinstance(entry, Group) else [entry]:
        print(f"_.{where.partition(':')[2]}")
EOF
# Typer (@app.command, @app.callback) and pydantic (@model_validator, @field_validator)
# call the functions they decorate.
.venv/bin/vulture pbm scripts/vulture_whitelist.py "$commands" \
  --ignore-decorators "@*.command,@*.callback,@model_validator,@field_validator" || status=1
exit "$status"

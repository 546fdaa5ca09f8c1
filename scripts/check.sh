#!/usr/bin/env bash
# Static checks: mypy (configured by [tool.mypy] in pyproject.toml: plain checking of
# pbm, strict for the modules listed there) and vulture (dead code in pbm, with the
# framework hooks of scripts/vulture_whitelist.py). Runs both; fails if either fails.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
.venv/bin/mypy || status=1
# Typer (@app.command, @app.callback) and pydantic (@model_validator, @field_validator)
# call the functions they decorate.
.venv/bin/vulture pbm scripts/vulture_whitelist.py \
  --ignore-decorators "@*.command,@*.callback,@model_validator,@field_validator" || status=1
exit "$status"

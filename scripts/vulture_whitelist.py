"""Names vulture cannot see used: called by a framework or by code outside pbm/.

scripts/check.sh passes this file to vulture with pbm/; it is read, never run. Functions
under Typer's and pydantic's decorators are left out by check.sh's --ignore-decorators
instead. Add a name here only when something outside pbm calls it.
"""

# ruff: noqa: B018, F821

# The game protocol (docs/protocol.md): the conformance suite, the golden files and
# benchmarks/rules.py read every game's `example_options`; `state_options` is the
# protocol's inverse of `new_state(**options)`.
_.example_options
_.state_options

# The injected clock that tests and benchmarks/process.py freeze and move on.
_.FrozenClock
_.advance

# How many wait for pbm.fair_lock.FairLock: its tests queue waiters one by one with it.
_.waiting

# The picture worker's start, awaited by its tests and benchmarks/sender_cpu.py, which
# measure the worker rather than its start (pbm/html_parts.py).
_.wait_ready

# pydantic reads a model's settings from `model_config` (pbm/config.py).
_.model_config

# click asks a group for its commands' names (pbm/cli/lazy.py).
_.list_commands

# logging.Formatter hooks (pbm/logfmt.py).
_.converter
_.format

# html.parser.HTMLParser callbacks (pbm/mail/html_text.py).
_.handle_startendtag
_.handle_data

# aioimaplib: the client factory pbm overrides and the task it must set (imap_in.py).
_.create_client
_._client_task

# aiosmtpd handler hook (pbm/mail/lmtp_in.py).
_.handle_DATA

# SQLAlchemy TypeDecorator hooks (pbm/store/types.py); sqlite3's connection attribute
# (pbm/store/engine.py).
_.impl
_.cache_ok
_.process_bind_param
_.process_result_value
_.isolation_level

# Columns pbm writes for the record and nothing in pbm reads back by attribute: when
# a mail went out, the Glicko ratings around a rated game, when an entrant joined.
_.sent_at
_.glicko_before
_.glicko_after
_.joined_at

# Read by the tests: whether a trusted Authentication-Results was present at all
# (pbm/mail/authresults.py), and how many IDLE rounds the IMAP intake made (imap_in.py).
_.checked
_.idle_cycles

# Alembic reads these from every migration in pbm/store/migrations/versions.
_.revision
_.down_revision
_.branch_labels
_.depends_on
_.downgrade

# pbm/bots: the name an outside engine gives itself (its protocol's `name` answer); only
# tests/bots/test_external.py reads it so far (`pbm bot show` does not print it yet).
_.engine_name

# The finder of the first command line, tested on its own by tests/mail_format (it was
# public through pbm.mail's __init__, which now imports nothing).
_.first_command_line

# The web pages (pbm/web/): Jinja2 reads these in templates/web/, prometheus_client
# calls a collector's `collect`, and uvicorn's server stops when `should_exit` is set.
_.stopped
_.pages
_.running_paged
_.finished_paged
_.tournaments_paged
_.ratings_paged
_.collect
_.should_exit

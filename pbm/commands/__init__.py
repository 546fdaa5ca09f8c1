"""The mail command language (pbmserv's): a finder that turns a message into command
lines, and one declarative command class per verb (name, usage, summary, run).

Importing this package registers every command: each module below calls
pbm.commands.registry.register for its own. The order of the imports is the order
`help` lists the commands in (account commands: account, correspondence, tournament;
game commands: play, lists, correspondence), hence no sorting here.
"""

# isort: off
from pbm.commands import account, export, erase, play, lists, correspondence, tournament, ask

# isort: on

__all__ = ["account", "ask", "correspondence", "erase", "export", "lists", "play", "tournament"]

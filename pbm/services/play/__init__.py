"""Playing boards: challenges, moves and server events, conditional moves, how a board
ends, what a board says (summaries, words, threats, questions), records, ratings and
bots as players.

This `__init__` imports nothing: callers import the module they need."""

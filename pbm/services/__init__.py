"""Use-cases shared by the mail commands and the CLI. No commits inside: callers own
transactions (the unit of work, pbm.work, commits once).

Importing this package runs nothing: what happens when a board ends is wired by the
composition root (pbm.app), once, in the order it lists.
"""

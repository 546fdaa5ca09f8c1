"""Tournaments on the stored boards, one module per job: `entry` (creating and
entering), `rounds` (seeding, pairing rounds into boards, advancing), `results` (the
game-end handler, withdrawals, cancelling), `notices` (the mails to entrants and the
organiser), `lookup` (the rows read back) and `describe` (a tournament in words and tables).

Pairing itself is pure (pbm.tournaments). The rules players read are in
docs/tournaments.md. This `__init__` imports nothing: callers import the module they
need, so no import of one module runs the others.
"""

"""What pbm mails and to whom: board mails and their HTML part, the outbox, reply tokens
and budgets, streams and one-click stops, bounces and complaints.

This `__init__` imports nothing: callers import the module they need."""

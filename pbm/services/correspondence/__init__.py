"""The time rules of correspondence play: clocks, deadlines (reminders and forfeits),
vacation and the daily digest.

This `__init__` imports nothing: callers import the module they need."""

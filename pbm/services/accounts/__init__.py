"""Players' accounts: signup and passwords, confirmed addresses (consent), settings and
profile, and their data (copies, exports, erasure).

This `__init__` imports nothing: callers import the module they need."""

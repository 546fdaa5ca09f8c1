"""Tournament pairing and standings as pure functions over player ids and results.

The services store tournaments and games; these modules only decide who plays whom
and how the table stands, so they are tested (and benchmarked) without a database.
"""

"""Rating systems: pbmserv's provisional/Elo rating and Glicko-2, as pure functions.

Nothing here knows of games, mail or the database: the services feed results in
chronological order, so `pbm ratings recompute` and the live updates agree.
"""

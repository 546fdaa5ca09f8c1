"""Computer players: the built-in engine for every game (`choose`, in pbm.bots.engine)
and outside engines over a line protocol (`pbm.bots.external`). A pure layer: it knows
only `pbm.games`. Importing this package runs nothing."""

"""The daemon's workers, each a small class with start and stop: the intake listeners,
the processor, the sender, the periodic jobs, the bots and the heartbeat. pbm.daemon
puts them together and owns their lifecycle. Importing this package runs nothing."""

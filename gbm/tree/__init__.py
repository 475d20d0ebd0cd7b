"""Growing one tree: the fitted tree's flat arrays (``structure``), the grower, the
lockstep growth of a round's trees, row and column sampling, constraints, gradient
quantisation, and the threads that grow a round's output groups."""

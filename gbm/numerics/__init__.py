"""Arithmetic with the same bits everywhere: exact float sums over any split of the rows
(``exact``) and ``exp`` / ``log`` over arrays that do not depend on the CPU
(``elementwise``)."""

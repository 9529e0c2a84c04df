"""`armbench try`: one task tried in place, on the run's trial sources and checks.

May import `benchmark.trials` only."""

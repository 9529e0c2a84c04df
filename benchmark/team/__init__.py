"""The team's inputs: pull and the suite cache, review, and a plan's inputs (team files, suites).

Imports no other room of `benchmark/`."""

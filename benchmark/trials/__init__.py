"""One trial's work: its sources and work folder, its setup and checks, a tool step's room and the
processes it leaves behind.

Imports no other room of `benchmark/`."""

"""Benchmarks that time armbench against the floor of what its tools can do."""

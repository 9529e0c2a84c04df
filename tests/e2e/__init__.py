"""End-to-end tests through the installed armbench command, on real git repos."""

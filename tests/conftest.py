"""Shared test set-up: git identity for commits the tests make, and armbench's home in tmp."""

from __future__ import annotations

import os

os.environ.setdefault("GIT_AUTHOR_NAME", "armbench tests")
os.environ.setdefault("GIT_AUTHOR_EMAIL", "tests@armbench.invalid")
os.environ.setdefault("GIT_COMMITTER_NAME", "armbench tests")
os.environ.setdefault("GIT_COMMITTER_EMAIL", "tests@armbench.invalid")

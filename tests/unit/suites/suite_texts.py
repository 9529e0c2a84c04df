"""Valid suite and task texts for the suites tests, and small helpers to vary them."""

from __future__ import annotations

from armbench.suites.diagnostics import Diagnostic, render

SUITE_FILE = "benchmarks/auth-fixes/suite.yaml"
TASK_FILE = "benchmarks/auth-fixes/tasks/expired-token.yaml"
START = "3f2c9a7d1e0b4c6a8f5d2e1b0c9a8f7e6d5c4b3a"
FIX = "9a1d4e7c2b8f0a3d6e5c1b9f8a7d2e4c6b0a1f3e"

SUITE = """\
schemaVersion: v1alpha1
name: auth-fixes
description: Bugs from the auth module, fixed by the implementer role
repo: https://github.com/acme/api
defaults: { tool: claude, model: strong }
arms:
  - name: baseline
  - name: codex
    tool: codex
  - name: fast
    model: fast
repetitions: 3
timeout: 6h
parallel: 2
setup: npm ci
scorers: [diff-quality]
trial: { timeout: 8m }
"""

TASK = f"""\
schemaVersion: v1alpha1
title: Reject expired refresh tokens
prompt: |
  Refresh tokens past their expiry are still accepted. Fix it.
startingCommit: {START}
check:
  run: npx vitest run test/auth/refresh.test.ts
  protect: ['test/**', 'vitest.config.ts', 'package.json', 'package-lock.json']
  add: [test/auth/refresh.test.ts]
source: {{ platform: claude-code, sessionId: 4b1e, fix: {FIX} }}
"""


def rendered(diagnostics: list[Diagnostic]) -> list[str]:
    """Each diagnostic as `render` prints it."""
    return [render(d) for d in diagnostics]


def codes(diagnostics: list[Diagnostic]) -> list[str]:
    """Each diagnostic's code, in order."""
    return [d.code for d in diagnostics]


def replace_line(text: str, old: str, new: str) -> str:
    """`text` with the one line equal to `old` replaced by `new` (which may hold several lines)."""
    lines = text.splitlines()
    assert lines.count(old) == 1, f"{old!r} is not exactly one line of the text"
    return "\n".join(new if line == old else line for line in lines) + "\n"

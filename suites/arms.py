"""A suite's arms as they run: defaults applied, the matrix crossed, in file order."""

from __future__ import annotations

import itertools
import math
import re
from typing import Literal

from msgspec import Struct

from armbench.suites.model import MATRIX_ARMS_MAX, Arm, Matrix, Suite, TeamChoice, TeamWithout

__all__ = ["ARM_KEYS", "BUILT_IN_TOOLS", "MATRIX_KEYS", "ResolvedArm", "matrix_size", "resolve_arms",
           "same_team", "team_kind"]

ARM_KEYS = ("tool", "model", "effort", "team", "workflow")
BUILT_IN_TOOLS = ("claude", "codex", "gemini", "opencode")
"""The agent CLIs armbench runs itself (`benchmark.agents`' adapters); any other tool is a team's
`tools/<name>/tool.yaml`."""
MATRIX_KEYS = ("tool", "model", "team", "workflow")
TeamKind = Literal["pulled", "none", "ref", "without"]


class ResolvedArm(Struct, frozen=True, kw_only=True):
    """One arm with the suite's defaults applied."""

    name: str
    """The arm's name; a matrix arm's is its values joined by `-`."""
    tool: str
    """The agent CLI."""
    model: str | None
    """The model alias or name as written (aliases resolve at plan), or None for the tool's default."""
    effort: str | None
    """The effort as written, or None for the tool's default."""
    team: TeamChoice
    """`pulled`, `none`, a team ref, or the pulled revision without some paths."""
    workflow: str | None
    """The team workflow its trials run, or None for the single prompt."""
    changes: tuple[str, ...]
    """The defaults keys whose values this arm changes, in `ARM_KEYS` order."""
    origin: Literal["arms", "matrix"]
    """Whether the arm was written under `arms` or derived from `matrix`."""
    path: str
    """Where it was written: `$.arms[2]`, or `$.matrix` for a derived arm."""


def team_kind(team: TeamChoice) -> TeamKind:
    """Which of the four team choices `team` is."""
    if isinstance(team, TeamWithout):
        return "without"
    return team if team in ("pulled", "none") else "ref"  # type: ignore[return-value]


def same_team(a: TeamChoice, b: TeamChoice) -> bool:
    """Whether two team choices deliver the same assets (a `without` list in any order)."""
    if isinstance(a, TeamWithout) and isinstance(b, TeamWithout):
        return sorted(a.without) == sorted(b.without)
    return a == b


def matrix_size(matrix: Matrix) -> int:
    """How many arms the matrix crosses into (0 when it lists no values)."""
    lists = [getattr(matrix, key) for key in MATRIX_KEYS if getattr(matrix, key) is not None]
    return math.prod(len(values) for values in lists) if lists else 0


def resolve_arms(suite: Suite) -> list[ResolvedArm]:
    """The `arms` in file order, then the matrix's arms (first key outermost); at most 12 from a matrix."""
    arms = [_resolve(suite, arm.name, _written(arm), "arms", f"$.arms[{index}]")
            for index, arm in enumerate(suite.arms)]
    if suite.matrix is None:
        return arms
    if matrix_size(suite.matrix) > MATRIX_ARMS_MAX:
        raise ValueError(f"the matrix crosses into {matrix_size(suite.matrix)} arms, over {MATRIX_ARMS_MAX}")
    keys = [key for key in MATRIX_KEYS if getattr(suite.matrix, key)]
    for combo in itertools.product(*(getattr(suite.matrix, key) for key in keys)):
        name = "-".join(_label(value) for value in combo)
        arms.append(_resolve(suite, name, dict(zip(keys, combo, strict=True)), "matrix", "$.matrix"))
    return arms


def _written(arm: Arm) -> dict[str, object]:
    return {key: getattr(arm, key) for key in ARM_KEYS if getattr(arm, key) is not None}


def _resolve(suite: Suite, name: str, values: dict[str, object], origin: Literal["arms", "matrix"],
             path: str) -> ResolvedArm:
    defaults = {key: getattr(suite.defaults, key) for key in ARM_KEYS}
    defaults["team"] = defaults["team"] or "pulled"
    merged = {**defaults, **values}
    changes = tuple(key for key in ARM_KEYS if key in values and not _same(key, values[key], defaults[key]))
    return ResolvedArm(name=name, changes=changes, origin=origin, path=path, **merged)


def _same(key: str, a: object, b: object) -> bool:
    return same_team(a, b) if key == "team" else a == b  # type: ignore[arg-type]


def _label(value: object) -> str:
    text = "without-" + "-".join(value.without) if isinstance(value, TeamWithout) else str(value)
    return re.sub(r"[^A-Za-z0-9_]+", "-", text).strip("-") or "x"

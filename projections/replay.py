"""What changed between a stored record and the record the code rebuilds now."""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["RESULTS", "diff_records"]

RESULTS = ("passed", "failed", "error", "unscored", "not_run")


def _trials(record: dict[str, Any]) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {(t["task"], t["arm"], t["repetition"]): t for t in record.get("trials", [])}


def _figures(record: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per arm: trials planned and the count of each result."""
    counts: dict[str, Counter[str]] = {arm["name"]: Counter() for arm in record.get("arms", [])}
    for t in record.get("trials", []):
        if t["arm"] in counts:
            counts[t["arm"]][t["result"]] += 1
    return {arm: {"planned": c.total(), **{r: c[r] for r in RESULTS}} for arm, c in counts.items()}


def _trial_change(key: tuple[str, str, int], a: dict[str, Any] | None,
                  b: dict[str, Any] | None) -> str:
    task, arm, rep = key
    if a is None or b is None or a["result"] != b["result"]:
        old = a["result"] if a else "absent"
        new = b["result"] if b else "absent"
        return f"trial r{rep}.{task}.{arm}: {old} -> {new}"
    fields = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    return (f"trial r{rep}.{task}.{arm}: {b['result']}, but "
            + ", ".join(f"{k} {a.get(k)!r} -> {b.get(k)!r}" for k in fields))


def _arm_changes(arm: str, old: dict[str, int] | None, new: dict[str, int] | None) -> str | None:
    if old == new:
        return None
    if old is None or new is None:
        return f"arm {arm}: {'added' if old is None else 'removed'}"
    moved = [f"{k} {old[k]} -> {new[k]}" for k in ("planned", *RESULTS) if old[k] != new[k]]
    rate = f"{old['passed']}/{old['planned']} -> {new['passed']}/{new['planned']}"
    same_rate = (old["passed"], old["planned"]) == (new["passed"], new["planned"])
    return f"arm {arm}: {', '.join(moved)}; pass rate {'unchanged' if same_rate else rate}"


def diff_records(stored: dict[str, Any], rebuilt: dict[str, Any]) -> list[str]:
    """Sentences naming each trial that moved and each figure that changed; [] when equal."""
    lines = []
    old, new = _trials(stored), _trials(rebuilt)
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a != b:
            lines.append(_trial_change(key, a, b))
    old_arms, new_arms = _figures(stored), _figures(rebuilt)
    for arm in [*old_arms, *(a for a in new_arms if a not in old_arms)]:
        line = _arm_changes(arm, old_arms.get(arm), new_arms.get(arm))
        if line:
            lines.append(line)
    for field in sorted(stored.keys() | rebuilt.keys()):
        if field in ("trials",):
            continue
        if stored.get(field) != rebuilt.get(field):
            lines.append(f"field {field}: {stored.get(field)!r} -> {rebuilt.get(field)!r}")
    return lines

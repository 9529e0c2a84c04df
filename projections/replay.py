"""What changed between a stored record and the record the code rebuilds now."""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["RESULTS", "diff_records"]

RESULTS = ("passed", "failed", "error", "unscored", "not_run")


def _trials(record: dict[str, Any]) -> dict[tuple[str, str, int], str]:
    return {(t["task"], t["arm"], t["repetition"]): t["result"] for t in record.get("trials", [])}


def _figures(record: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per arm: trials planned and the count of each result."""
    out = {}
    for arm in record.get("arms", []):
        trials = [t for t in record.get("trials", []) if t["arm"] == arm["name"]]
        counts = Counter(t["result"] for t in trials)
        out[arm["name"]] = {"planned": len(trials), **{r: counts[r] for r in RESULTS}}
    return out


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
            task, arm, rep = key
            lines.append(f"trial r{rep}.{task}.{arm}: {a or 'absent'} -> {b or 'absent'}")
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

"""What changed between a stored record and the record the code rebuilds now."""

from __future__ import annotations

from typing import Any

__all__ = ["diff_records"]


def _trials(record: dict[str, Any]) -> dict[tuple[str, str, int], str]:
    return {(t["task"], t["arm"], t["repetition"]): t["result"] for t in record.get("trials", [])}


def _rates(record: dict[str, Any]) -> dict[str, str]:
    out = {}
    for arm in record.get("arms", []):
        trials = [t for t in record.get("trials", []) if t["arm"] == arm["name"]]
        passed = sum(t["result"] == "passed" for t in trials)
        out[arm["name"]] = f"{passed}/{len(trials)}"
    return out


def diff_records(stored: dict[str, Any], rebuilt: dict[str, Any]) -> list[str]:
    """Sentences naming each trial that moved and each figure that changed; [] when equal."""
    lines = []
    old, new = _trials(stored), _trials(rebuilt)
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a != b:
            task, arm, rep = key
            lines.append(f"trial r{rep}.{task}.{arm}: {a or 'absent'} -> {b or 'absent'}")
    old_rates, new_rates = _rates(stored), _rates(rebuilt)
    for arm in sorted(old_rates.keys() | new_rates.keys()):
        if old_rates.get(arm) != new_rates.get(arm):
            lines.append(f"arm {arm}: passed {old_rates.get(arm, 'absent')} -> "
                         f"{new_rates.get(arm, 'absent')}")
    for field in sorted(stored.keys() | rebuilt.keys()):
        if field in ("trials",):
            continue
        if stored.get(field) != rebuilt.get(field):
            lines.append(f"field {field}: {stored.get(field)!r} -> {rebuilt.get(field)!r}")
    return lines
